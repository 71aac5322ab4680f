"""Virtual time: Tool(virtual_time=True) never waits on the wall clock.
Its clock (time(), seconds from 0) moves only with advance(seconds), which
runs every timer that falls due on the way in due-time order; next_due()
says when the next one is; run() runs what is due now; root.run() advances
from timer to timer until the root ends. Assertions are on the virtual
clock and on traces, never on the wall clock."""
import asyncio
import math
import threading

import pytest

from conftest import Trace
from futoin_async import (AsyncSteps, FutoInError, InvalidStateError, Limiter,
                          Throttle, Timeout, Tool)


@pytest.fixture
def vtool():
    with Tool(virtual_time=True) as t:
        yield t


def at(tool, trace, name):
    """A callback that traces its name and the tool's clock (ms)."""
    return lambda *a: trace(name, "at", round(tool.time() * 1000))


def test_the_clock_starts_at_zero_and_moves_only_with_advance(vtool):
    assert vtool.virtual_time and not Tool().virtual_time
    assert vtool.time() == 0
    vtool.run()
    assert vtool.time() == 0
    assert vtool.next_due() is None
    vtool.advance(1.5)
    assert vtool.time() == 1.5
    vtool.advance(0)
    vtool.advance(2)  # int seconds
    assert vtool.time() == 3.5


def test_timers_fire_in_due_order_and_fifo_among_equals(vtool, trace):
    vtool.call_later(0.03, at(vtool, trace, "c"))
    vtool.call_later(0.01, at(vtool, trace, "a1"))
    vtool.deferred(20, at(vtool, trace, "b"))  # FTN12 milliseconds
    vtool.call_later(0.01, at(vtool, trace, "a2"))
    assert vtool.next_due() == 0.01
    vtool.run()
    assert trace == []
    vtool.advance(0.025)
    assert trace == ["a1 at 10", "a2 at 10", "b at 20"]
    assert vtool.next_due() == 0.005
    vtool.advance(0.005)
    assert trace == ["a1 at 10", "a2 at 10", "b at 20", "c at 30"]
    assert vtool.next_due() is None


def test_timers_started_during_an_advance_fire_in_their_turn(vtool, trace):
    def start_more():
        at(vtool, trace, "start")()
        vtool.call_soon(at(vtool, trace, "soon"))
        vtool.call_later(0, at(vtool, trace, "zero"))
        vtool.call_later(0.005, at(vtool, trace, "five"))
        vtool.call_later(0.1, at(vtool, trace, "hundred"))
    vtool.call_later(0.01, start_more)
    vtool.call_later(0.012, at(vtool, trace, "twelve"))
    vtool.advance(0.02)
    assert trace == ["start at 10", "soon at 10", "zero at 10", "twelve at 12",
                     "five at 15"]
    assert vtool.next_due() == pytest.approx(0.09)
    vtool.advance(vtool.next_due())
    assert trace[-1] == "hundred at 110"
    assert vtool.next_due() is None


def test_a_minute_timeout_completed_after_thirty_seconds(vtool, trace):
    """The issue's scenario (bench/python/vtime_bench.py measures its wall
    time): the same trace as on the wall clock, where it takes 30 s."""
    def wait(asi):
        trace("wait at", vtool.time())
        asi.set_cancel(lambda asi: trace("cancelled"))
        asi.set_timeout(60000)
        vtool.call_later(30, lambda: (trace("complete at", vtool.time()),
                                      asi.success("done")))
    root = AsyncSteps(vtool).add(wait).add(lambda asi, v: trace("after", v, "at",
                                                                vtool.time()))
    done = []
    root.execute(on_success=lambda *v: done.append(v))
    vtool.run()
    assert trace == ["wait at 0.0"]
    assert vtool.next_due() == 30
    vtool.advance(30)
    assert trace == ["wait at 0.0", "complete at 30.0", "after done at 30.0"]
    assert done == [()]
    assert vtool.next_due() is None  # the step's timeout went with the wait


def test_the_half_timeout_flow_has_the_same_trace_on_both_clocks():
    """On the wall clock scaled down to 60 ms / 30 ms: both timers sit in
    one heap, so even a stalled loop fires the completion first."""
    def flow(tool, unit):
        trace = Trace()

        def wait(asi):
            trace("wait")
            asi.set_timeout(2 * unit)
            tool.deferred(unit, lambda: (trace("complete"), asi.success("done")))
        root = AsyncSteps(tool).add(wait).add(lambda asi, v: trace("after", v))
        assert root.run() is None
        return list(trace)
    with Tool() as wall, Tool(virtual_time=True) as virtual:
        assert flow(wall, 30) == ["wait", "complete", "after done"]
        assert flow(virtual, 30000) == flow(wall, 30)
        assert virtual.time() == 30


def test_root_run_advances_from_timer_to_timer(vtool, trace):
    def wait(asi):
        asi.set_timeout(60000)
        vtool.call_later(10, lambda: trace("tick at", vtool.time()))
    with pytest.raises(Timeout):
        AsyncSteps(vtool).add(wait).run()
    assert trace == ["tick at 10.0"]
    assert vtool.time() == 60
    assert vtool.next_due() is None


def test_root_run_refuses_to_wait_for_another_thread(vtool):
    root = AsyncSteps(vtool).add(lambda asi: asi.wait_external())
    with pytest.raises(InvalidStateError, match="no timer"):
        root.run()
    root.cancel()


def test_an_async_step_sleeps_on_the_virtual_clock(vtool):
    async def nap(asi):
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await asyncio.sleep(3600)
        return loop.time() - t0
    assert AsyncSteps(vtool).add(nap).run() == 3600
    assert vtool.time() == 3600


def test_posts_and_completions_from_another_thread_run(vtool, trace):
    held = []

    def wait(asi):
        asi.set_timeout(60000)
        asi.wait_external()
        held.append(asi)
    root = AsyncSteps(vtool).add(wait).add(lambda asi, v: trace("after", v))
    root.execute()
    vtool.run()
    vtool.advance(0.1)

    def worker():
        vtool.call_soon_threadsafe(lambda: trace("posted at", vtool.time()))
        assert held[0].success("from thread") is True
    th = threading.Thread(target=worker)
    th.start()
    th.join()  # the loop never waits for it: run() below takes what it posted
    assert trace == []
    vtool.run()
    assert trace == ["posted at 0.1", "after from thread"]
    assert vtool.next_due() is None


def test_throttle_and_limiter_periods_follow_the_virtual_clock(vtool, trace):
    thr = Throttle(1, 1000, tool=vtool)
    lim = Limiter(concurrent=3, max_queue=3, rate=2, period_ms=500, burst=1,
                  tool=vtool)

    def enter(obj, name):
        root = AsyncSteps(vtool).add(
            lambda asi: asi.sync(obj, lambda asi: trace(name, "in at",
                                                        round(vtool.time() * 1000))))
        root.execute()
        return root
    roots = [enter(thr, n) for n in ("a", "b", "c")]
    vtool.run()
    assert trace == ["a in at 0"]
    vtool.advance(0.999)
    assert trace == ["a in at 0"]
    vtool.advance(0.001)
    vtool.advance(5)
    assert trace == ["a in at 0", "b in at 1000", "c in at 2000"]
    assert vtool.next_due() is None
    trace.clear()
    roots += [enter(lim, n) for n in ("d", "e", "f")]
    vtool.run()
    vtool.advance(0.499)
    assert trace == ["d in at 6000", "e in at 6000"]
    vtool.advance(0.001)
    assert trace == ["d in at 6000", "e in at 6000", "f in at 6500"]
    del roots
    thr.close()
    lim.close()


def test_an_unhandled_error_stops_the_advance_where_it_came(vtool, trace):
    def fail(asi):
        asi.set_timeout(10000)
    vtool.call_later(20, lambda: trace("later at", vtool.time()))
    AsyncSteps(vtool).add(fail).execute()
    with pytest.raises(Timeout):
        vtool.advance(100)
    assert vtool.time() == 10
    vtool.advance(90)
    assert trace == ["later at 20.0"]
    assert vtool.time() == 100


def test_bad_input_is_refused(vtool):
    for bad in (-1, -0.001, -math.inf):
        with pytest.raises(ValueError, match="forward|finite"):
            vtool.advance(bad)
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="finite"):
            vtool.advance(bad)
    for bad in ("1", None, True, [1]):
        with pytest.raises(TypeError, match="seconds"):
            vtool.advance(bad)
    with pytest.raises(ValueError, match="too far"):
        vtool.advance(2**70)
    assert vtool.time() == 0

    with Tool() as wall:
        with pytest.raises(InvalidStateError, match="wall clock"):
            wall.advance(1)
    with pytest.raises(ValueError, match="own"):
        Tool(uv_loop=Tool().uv_loop(), virtual_time=True)

    # not from inside the loop, nor from another thread
    seen = []

    def step(asi):
        with pytest.raises(InvalidStateError, match="inside the loop"):
            vtool.advance(1)
        seen.append("refused in a step")
    AsyncSteps(vtool).add(step).run()
    errors = []

    def elsewhere():
        try:
            vtool.advance(1)
        except RuntimeError as e:
            errors.append(str(e))
    th = threading.Thread(target=elsewhere)
    th.start()
    th.join()
    assert seen == ["refused in a step"]
    assert errors and "loop thread" in errors[0]
    assert vtool.time() == 0

    closed = Tool(virtual_time=True)
    closed.close()
    with pytest.raises(InvalidStateError, match="closed"):
        closed.advance(1)
    with pytest.raises(InvalidStateError, match="closed"):
        closed.next_due()


def test_a_virtual_tool_takes_a_load_policy_too():
    """Virtual time and a load policy together: both are taken (the policy
    is set once, so a second one is refused)."""
    with Tool(virtual_time=True, allow_languages=("python",)) as t:
        assert t.virtual_time
        with pytest.raises(InvalidStateError, match="has a load policy already"):
            t.set_load_policy()
        got = []
        t.call_later(1, lambda: got.append(t.time()))
        t.advance(1)
        assert got == [1.0]
