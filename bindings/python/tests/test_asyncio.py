"""asyncio: await a flow from a coroutine; await an awaitable inside a flow.
Our libuv loop is driven from asyncio on the same thread (asyncio watches
libuv's backend fd and next timer and runs non-blocking passes)."""
import asyncio

import pytest

from futoin_async import AsyncSteps, FutoInError, Tool


def test_await_flow_result_and_error():
    async def main():
        tool = Tool()
        assert await AsyncSteps(tool).add(lambda asi: asi.success(42)) == 42
        with pytest.raises(FutoInError) as ei:
            await AsyncSteps(tool).add(lambda asi: asi.error("MyError", "info"))
        assert ei.value.code == "MyError" and ei.value.info == "info"
        def wait(asi):
            asi.set_timeout(5)
            asi.wait_external()
        with pytest.raises(FutoInError) as ei:
            await AsyncSteps(tool).add(wait)
        assert ei.value.code == "Timeout"
        # a flow and asyncio timers interleave on one thread
        order = []
        async def ticker():
            for i in range(3):
                order.append(f"tick{i}")
                await asyncio.sleep(0.002)
        def slow(asi):
            asi.wait_external()
            tool.deferred(3, lambda: (order.append("flow"), asi.success("done")))
        r, _ = await asyncio.gather(AsyncSteps(tool).add(slow).promise(), ticker())
        assert r == "done" and "flow" in order and "tick2" in order
    asyncio.run(main())


def test_await_inside_flow():
    async def main():
        tool = Tool()
        async def coro(v):
            await asyncio.sleep(0.001)
            return v
        r = await AsyncSteps(tool).await_(coro(7)).add(lambda asi, v: asi.success(v + 1))
        assert r == 8
        async def bad():
            raise ValueError("nope")
        codes = []
        with pytest.raises(FutoInError):
            await AsyncSteps(tool).add(
                lambda asi: asi.await_(bad()),
                lambda asi, c: codes.append((c, asi.state.error_info)))
        assert codes == [("InternalError", "nope")]
    asyncio.run(main())


def test_cancel_flow_cancels_future():
    async def main():
        tool = Tool()
        fut = asyncio.get_running_loop().create_future()
        root = AsyncSteps(tool).await_(fut)
        p = root.promise()
        await asyncio.sleep(0.005)
        p.cancel()
        await asyncio.sleep(0.005)
        assert fut.cancelled()
    asyncio.run(main())
