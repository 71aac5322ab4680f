"""asyncio: await a flow from a coroutine; await an awaitable inside a flow.
Our libuv loop is driven from asyncio on the same thread (asyncio watches
libuv's backend fd and next timer and runs non-blocking passes).

Every test runs under the default asyncio loop and under uvloop's (when
python3-uvloop is installed). Sharing uvloop's own uv_loop_t instead was
prototyped and not shipped: uvloop has no public accessor, so the address
must be read from its private Cython object layout (see the Python
binding README)."""
import asyncio

import pytest

from futoin_async import AsyncSteps, Errors, FutoInError, Tool


@pytest.fixture(params=["asyncio", "uvloop"])
def loop_class(request):
    """Installs the event loop policy; returns the class of loop that
    asyncio.run() must then create."""
    if request.param == "asyncio":
        policy = asyncio.DefaultEventLoopPolicy()
        expected = asyncio.SelectorEventLoop
    else:
        uvloop = pytest.importorskip("uvloop")
        policy = uvloop.EventLoopPolicy()
        expected = uvloop.Loop
    old = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(policy)
    try:
        yield expected
    finally:
        asyncio.set_event_loop_policy(old)


def test_await_flow_result_and_error(loop_class):
    async def main():
        assert isinstance(asyncio.get_running_loop(), loop_class)
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
        assert ei.value.code == Errors.Timeout
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


def test_await_inside_flow(loop_class):
    async def main():
        assert isinstance(asyncio.get_running_loop(), loop_class)
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
        # error_info: the exception's text, then its traceback (issue 23)
        ((code, info),) = codes
        assert code == "InternalError" and info.splitlines()[0] == "nope"
        assert 'raise ValueError("nope")' in info
    asyncio.run(main())


def test_await_after_a_step_that_passed_values(loop_class):
    async def main():
        assert isinstance(asyncio.get_running_loop(), loop_class)

        async def double(v):
            await asyncio.sleep(0)
            return v * 2
        root = AsyncSteps(Tool())
        root.add(lambda asi: asi.success(1, "ignored"))
        root.await_(double(21))
        assert await root == 42
    asyncio.run(main())


def test_cancel_flow_cancels_future(loop_class):
    async def main():
        loop = asyncio.get_running_loop()
        assert isinstance(loop, loop_class)
        tool = Tool()
        fut, reached = loop.create_future(), loop.create_future()
        root = AsyncSteps(tool).add(lambda asi: reached.set_result(None)).await_(fut)
        p = root.promise()
        await reached  # the flow runs: the await_() step takes `fut` next
        p.cancel()
        with pytest.raises(asyncio.CancelledError):
            await fut  # the event itself, no sleep-then-check
        assert fut.cancelled() and p.cancelled()
    asyncio.run(main())


def test_cancel_awaiting_task_cancels_flow(loop_class):
    async def main():
        assert isinstance(asyncio.get_running_loop(), loop_class)
        tool = Tool()
        fut = asyncio.get_running_loop().create_future()
        cancelled = []

        reached = asyncio.get_running_loop().create_future()

        def step(asi):
            asi.set_cancel(lambda asi: cancelled.append("flow"))
            asi.add(lambda asi: (reached.set_result(None), asi.await_(fut))[1])
        root = AsyncSteps(tool).add(step)

        async def waiter():
            return await root
        task = asyncio.create_task(waiter())
        await reached  # the flow waits for `fut` now
        assert not task.done() and not fut.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(asyncio.CancelledError):
            await fut  # the event itself, no sleep-then-check
        assert cancelled == ["flow"]
    asyncio.run(main())


def test_flows_awaited_from_asyncio_leak_nothing(loop_class):
    import gc
    import sys

    async def flows(tool, n, probe):
        loop = asyncio.get_running_loop()
        for i in range(n):
            fut = loop.create_future()
            loop.call_soon(fut.set_result, probe)
            assert await AsyncSteps(tool).await_(fut).add(lambda asi, p: p) is probe
            later = loop.create_future()
            loop.call_later(0, later.set_result, i)
            assert await AsyncSteps(tool).add(lambda asi: asi.await_(later)) == i
            with pytest.raises(FutoInError):
                await AsyncSteps(tool).add(lambda asi: asi.error("E"))

    async def main():
        assert isinstance(asyncio.get_running_loop(), loop_class)
        tool = Tool()
        probe = object()
        await flows(tool, 200, probe)  # warm caches
        gc.collect()
        before = len(gc.get_objects())
        rc = sys.getrefcount(probe)
        await flows(tool, 2000, probe)
        gc.collect()
        assert sys.getrefcount(probe) == rc
        grown = len(gc.get_objects()) - before
        assert grown < 50, f"{grown} objects accumulated over 2,000 awaited flows"
        assert tool.executing == 0
    asyncio.run(main())


def test_closing_the_tool_cancels_an_awaited_flow(loop_class):
    async def main():
        assert isinstance(asyncio.get_running_loop(), loop_class)
        tool = Tool()
        root = AsyncSteps(tool).add(lambda asi: asi.wait_external())
        fut = root.promise()
        await asyncio.sleep(0.001)
        tool.close()  # the root still referenced here is freed too
        assert not root.is_valid()
        with pytest.raises(asyncio.CancelledError):
            await fut
    asyncio.run(main())


def test_await_root_paths(loop_class):
    """`await root` runs the flow in the awaiting task: a step future is
    yielded to it directly; anything else goes through the flow's end."""
    import threading

    async def main():
        assert isinstance(asyncio.get_running_loop(), loop_class)
        loop = asyncio.get_running_loop()
        tool = Tool()

        # a timeout of the parent step ends an await_() whose future never
        # completes: the future is cancelled, the flow sees Timeout
        never = loop.create_future()

        def bounded(asi):
            asi.set_timeout(10)
            asi.await_(never)
        with pytest.raises(FutoInError) as ei:
            await AsyncSteps(tool).add(bounded)
        assert ei.value.code == "Timeout" and never.cancelled()

        # a worker thread completes a step, then a future does, then a timer
        def worker_step(asi):
            asi.set_timeout(60_000)       # a guard against a hang only
            threading.Thread(target=lambda: asi.success(1), daemon=True).start()

        def timer_step(asi, v):
            asi.wait_external()
            tool.deferred(2, lambda: asi.success(v + 1))
        later = loop.create_future()
        loop.call_later(0.002, later.set_result, 10)
        root = AsyncSteps(tool).add(worker_step).add(timer_step)
        root.add(lambda asi, v: asi.await_(later)).add(lambda asi, w: w + 5)
        assert await root == 15

        # two branches await two futures: one is yielded to the task, the
        # other completes through a callback
        f1, f2 = loop.create_future(), loop.create_future()
        loop.call_later(0.001, f1.set_result, "a")
        loop.call_later(0.003, f2.set_result, "b")
        got = []

        def par(asi):
            p = asi.parallel()
            p.add(lambda asi: asi.await_(f1).add(lambda asi, v: got.append(v)))
            p.add(lambda asi: asi.await_(f2).add(lambda asi, v: got.append(v)))
        await AsyncSteps(tool).add(par)
        assert sorted(got) == ["a", "b"]

        # someone else cancels the awaited future: the step fails with it
        other = loop.create_future()
        loop.call_later(0.001, other.cancel)
        with pytest.raises(FutoInError) as ei:
            await AsyncSteps(tool).await_(other)
        assert isinstance(ei.value.__cause__, asyncio.CancelledError)
        assert tool.executing == 0
    asyncio.run(main())


def test_await_root_outcomes_and_executing(loop_class):
    """What `await root` gives back (the awaiter returns it through
    am_send, or a StopIteration for send()/__next__), and the awaited
    flow counts in Tool.executing while it runs, kept alive by the await
    itself."""
    async def main():
        assert isinstance(asyncio.get_running_loop(), loop_class)
        loop = asyncio.get_running_loop()
        tool = Tool()
        seen = []

        def probe(asi, *v):
            seen.append(tool.executing)
            return v if len(v) > 1 else (v[0] if v else None)

        for values, expected in (((), None), ((7,), 7), ((1, "a"), (1, "a")),
                                 ((0,), 0), ((False,), False)):
            fut = loop.create_future()
            loop.call_soon(fut.set_result, values if len(values) > 1
                           else (values[0] if values else None))
            got = await AsyncSteps(tool).await_(fut).add(probe)
            assert got == expected and type(got) is type(expected), (values, got)
        assert seen == [1] * 5 and tool.executing == 0

        # an error, and a cancelled future, end the await with an exception
        with pytest.raises(FutoInError) as ei:
            await AsyncSteps(tool).add(lambda asi: asi.error("Nope", "x"))
        assert ei.value.code == "Nope"
        assert tool.executing == 0

        # the awaiter driven by hand: send() ends with StopIteration(value)
        root = AsyncSteps(tool).add(lambda asi: asi.success(3, 4))
        it = root.__await__()
        with pytest.raises(StopIteration) as si:
            it.send(None)
        assert si.value.value == (3, 4)
        assert tool.executing == 0

        # the task awaiting a flow is cancelled: the flow is, and no longer
        # counted
        pending = loop.create_future()
        task = asyncio.ensure_future(AsyncSteps(tool).await_(pending).promise())
        await asyncio.sleep(0)
        assert tool.executing == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0)
        assert pending.cancelled()

        async def awaits(root):
            return await root
        task = asyncio.ensure_future(awaits(AsyncSteps(tool).await_(loop.create_future())))
        await asyncio.sleep(0)
        assert tool.executing == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert tool.executing == 0

        # AsyncSteps(tool) has a fast path: the other calls still work
        assert AsyncSteps(tool=tool).tool is tool

        class Sub(AsyncSteps):
            def __init__(self, tool, tag):
                super().__init__(tool)
                self.tag = tag
        sub = Sub(tool, "t")
        assert type(sub) is Sub and sub.tag == "t"
        assert await sub.add(lambda asi: 5) == 5
        with pytest.raises(TypeError):
            AsyncSteps(tool, 1)
        with pytest.raises(TypeError):
            AsyncSteps(object())
    asyncio.run(main())


def test_an_earlier_timer_of_the_tool_is_not_missed(loop_class):
    """asyncio keeps one timer for the tool's next libuv timer, asked for
    again at every pass: a timer due earlier than the one asked for
    before replaces it, a later one leaves it. (Reads the timer heap of
    asyncio's own loop: not under uvloop.)"""
    if loop_class is not asyncio.SelectorEventLoop:
        pytest.skip("reads asyncio's timer heap (BaseEventLoop._scheduled)")

    async def main():
        loop = asyncio.get_running_loop()
        tool = Tool()
        order = []

        def waiting(name, ms):
            def step(asi):
                asi.set_timeout(ms)
                asi.wait_external()

            def timed_out(asi, code):
                order.append(name)
                asi.success()
            return AsyncSteps(tool).add(step, timed_out)

        async def turns():
            for _ in range(5):
                await asyncio.sleep(0)

        def first_due():
            """seconds until the first timer asyncio holds"""
            return min(h.when() for h in loop._scheduled
                       if not h.cancelled()) - loop.time()
        async def awaited(root):          # `await root`: runs in this task
            return await root
        # Seconds, not milliseconds, so that a stall of the machine cannot
        # fire the fast one before first_due() reads it (with 5 ms, one
        # could). The tool's own next timer is its 10 s trim on idle, so
        # the first reading is ~10 s and the fast one must be due well
        # before: 3 s against a 6 s line, which only stalls of seconds
        # between the readings could cross.
        slow = asyncio.ensure_future(awaited(waiting("slow", 600_000)))
        await turns()
        due = [first_due()]               # the trim's (or the slow one's)
        fast = asyncio.ensure_future(awaited(waiting("fast", 3_000)))
        await turns()
        due.append(first_due())           # replaced by the fast one's
        fast.cancel()
        with pytest.raises(asyncio.CancelledError):
            await fast
        await waiting("fast again", 5)    # fires: asyncio asked again
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
        return order, due
    order, due = asyncio.run(main())
    assert order == ["fast again"]
    assert due[0] > 6 and due[1] < 6, due
