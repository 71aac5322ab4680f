"""asyncio under uvloop's event loop: a Tool's own libuv loop is driven
from uvloop exactly as from the default asyncio loop (asyncio watches
libuv's backend fd and next timeout and runs non-blocking passes).

Sharing uvloop's own uv_loop_t instead was prototyped and not shipped:
uvloop has no public accessor, so the address must be read from its
private Cython object layout (see the Python binding README)."""
import asyncio

import pytest

uvloop = pytest.importorskip("uvloop")

from futoin_async import AsyncSteps, Errors, FutoInError, Tool  # noqa: E402


@pytest.fixture
def uvloop_policy():
    old = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    try:
        yield
    finally:
        asyncio.set_event_loop_policy(old)

def test_await_flow_under_uvloop_policy(uvloop_policy):
    async def main():
        assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
        tool = Tool()
        assert await AsyncSteps(tool).add(lambda asi: asi.success(42)) == 42
        with pytest.raises(FutoInError) as ei:
            await AsyncSteps(tool).add(lambda asi: asi.error("MyError", "info"))
        assert (ei.value.code, ei.value.info) == ("MyError", "info")

        def wait(asi):
            asi.set_timeout(5)
            asi.wait_external()
        with pytest.raises(FutoInError) as ei:
            await AsyncSteps(tool).add(wait)
        assert ei.value.code == Errors.Timeout
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


def test_await_inside_flow_under_uvloop_policy(uvloop_policy):
    async def main():
        assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
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


def test_cancel_awaiting_task_cancels_flow_under_uvloop_policy(uvloop_policy):
    async def main():
        assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
        tool = Tool()
        fut = asyncio.get_running_loop().create_future()
        cancelled = []

        def step(asi):
            asi.set_cancel(lambda asi: cancelled.append("flow"))
            asi.add(lambda asi: asi.await_(fut))
        root = AsyncSteps(tool).add(step)

        async def waiter():
            return await root
        task = asyncio.create_task(waiter())
        await asyncio.sleep(0.005)
        assert not task.done() and not fut.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.005)
        assert fut.cancelled()
        assert cancelled == ["flow"]
    asyncio.run(main())



def test_await_after_a_step_that_passed_values(uvloop_policy):
    async def main():
        async def double(v):
            await asyncio.sleep(0)
            return v * 2
        tool = Tool()
        root = AsyncSteps(tool)
        root.add(lambda asi: asi.success(1, "ignored"))
        root.await_(double(21))
        assert await root == 42
    asyncio.run(main())
