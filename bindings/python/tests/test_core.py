"""Core FTN12 behaviour through the Python API."""
import gc
import sys
import threading

import pytest

from conftest import drive
from futoin_async import (AsyncSteps, DefenseRejected, Errors, FutoInError,
                          Limiter, Mutex, State, Throttle, Tool, _core, version)


def test_version():
    assert version() == "0.3.0"
    assert Errors.Timeout == "Timeout" and Errors.InternalError == "InternalError"


def test_values_roundtrip(tool):
    got = []
    AsyncSteps(tool).add(lambda asi: asi.success(1, -2.5, "héllo", b"\x00\x01")) \
        .add(lambda asi, *a: got.append(a)).run()
    assert got == [(1, -2.5, "héllo", b"\x00\x01")]
    obj = object()
    r = AsyncSteps(tool).add(lambda asi: asi.success(True, [1, 2, 3], [1.5, 2], obj)).run()
    assert r[0] is True and r[1] == [1, 2, 3] and r[2] == [1.5, 2.0] and r[3] is obj
    r = AsyncSteps(tool).add(lambda asi: asi.success(None, 2**64 - 1, 2**80, {"a": 1})).run()
    assert r == (None, 2**64 - 1, 2**80, {"a": 1})
    with pytest.raises(FutoInError) as ei:
        AsyncSteps(tool).add(lambda asi: asi.success(1, 2, 3, 4, 5)).run()
    assert ei.value.code == "InternalError"
    assert isinstance(ei.value.__cause__, TypeError)


def test_binary_types():
    assert _core._roundtrip(7) == (7, 0x09)
    assert _core._roundtrip(1.5) == (1.5, 0x0F)
    assert _core._roundtrip(False) == (False, 0x05)
    assert _core._roundtrip("x") == ("x", 0x02)
    assert _core._roundtrip(b"x") == (b"x", 0x1A)
    assert _core._roundtrip([1, 2]) == ([1, 2], 0x19)
    assert _core._roundtrip([1, 2.0]) == ([1.0, 2.0], 0x1F)
    assert _core._roundtrip(None) == (None, 0x01)


def test_add_success_chain(tool, trace):
    def s1(asi):
        trace("s1")
        asi.add(lambda asi: asi.success("a", 1))
    def s2(asi, a, b):
        trace("s2", a, b)
    AsyncSteps(tool).add(s1).add(s2).run()
    assert trace == ["s1", "s2 a 1"]


def test_implicit_success_and_result(tool):
    assert AsyncSteps(tool).add(lambda asi: None).run() is None
    assert AsyncSteps(tool).add(lambda asi: asi.success(5)).run() == 5


def test_error_raises_and_handler(tool, trace):
    def step(asi):
        try:
            asi.error("MyError", "my info")
        except FutoInError as e:  # not a FutoInError in the step: the unwind
            trace("caught", e.code)
        finally:
            trace("left the step")
        trace("not reached")
    def onerror(asi, code):
        trace("onerror", code, asi.state.error_info, asi.state["error_info"])
        assert isinstance(asi.state.last_exception, FutoInError)
        assert asi.state.last_exception.info == "my info"
        asi.success("recovered")
    assert AsyncSteps(tool).add(step, onerror).run() == "recovered"
    assert trace == ["left the step", "onerror MyError my info my info"]


def test_raise_futoin_error_directly(tool):
    with pytest.raises(FutoInError) as ei:
        AsyncSteps(tool).add(lambda asi: (_ for _ in ()).throw(FutoInError("Unauthorized", "no"))).run()
    assert ei.value.code == "Unauthorized" and ei.value.info == "no"


def test_python_exception_is_internal_error(tool):
    seen = {}
    def step(asi):
        raise ValueError("bad value")
    def onerror(asi, code):
        seen["code"] = code
        seen["info"] = asi.state.error_info
        seen["exc"] = asi.last_exception
    with pytest.raises(FutoInError) as ei:
        AsyncSteps(tool).add(step, onerror).run()
    # error_info: the exception's text, then its traceback as Python prints
    # it, for every language to read (issue 23)
    assert seen["code"] == "InternalError" and seen["info"].splitlines()[:2] == [
        "bad value", "Traceback (most recent call last):"]
    assert 'raise ValueError("bad value")' in seen["info"]
    assert seen["info"].endswith("ValueError: bad value")
    assert isinstance(seen["exc"], ValueError)
    assert ei.value.code == "InternalError" and ei.value.info == seen["info"]
    assert isinstance(ei.value.__cause__, ValueError)
    assert str(ei.value) == "InternalError: bad value"  # the cause shows the traceback


def test_keyboard_interrupt_cancels_and_reraises(tool, trace):
    def step(asi):
        asi.set_cancel(lambda asi: trace("cancelled"))
        asi.add(lambda asi: (_ for _ in ()).throw(KeyboardInterrupt()), lambda asi, c: trace("eh", c))
    root = AsyncSteps(tool).add(step).add(lambda asi: trace("next"))
    with pytest.raises(KeyboardInterrupt):
        root.run()
    assert "next" not in trace and not any(t.startswith("eh") for t in trace)
    assert "cancelled" in trace
    # the tool stays usable
    assert AsyncSteps(tool).add(lambda asi: asi.success(1)).run() == 1


def test_system_exit_reraised(tool):
    def step(asi):
        sys.exit(3)
    with pytest.raises(SystemExit):
        AsyncSteps(tool).add(step).run()


@pytest.mark.parametrize("clock", ["wall", "virtual"])
@pytest.mark.parametrize("when", ["before the loop turns", "after a timer"])
@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
def test_fatal_exception_stops_only_its_own_run(clock, when, exc):
    # run() stops its loop for KeyboardInterrupt/SystemExit in a step; a
    # step that raises before the loop's first turn (run() runs what is
    # queued first) once left that stop request behind, and the next
    # run() returned before its timer fired ("the flow did not finish").
    def fatal(asi):
        raise exc
    def after_a_timer(asi, *values):
        asi.wait_external()
        asi.tool.call_later(0, asi.success, *values)
    with Tool(virtual_time=clock == "virtual") as tool:
        root = AsyncSteps(tool)
        if when == "after a timer":
            root.add(after_a_timer)
        with pytest.raises(exc):
            root.add(fatal).run()
        assert AsyncSteps(tool).add(lambda asi: after_a_timer(asi, 5)).run() == 5
        assert AsyncSteps(tool).add(lambda asi: after_a_timer(asi, 6)).run() == 6


def test_state_mapping(tool):
    root = AsyncSteps(tool)
    def s1(asi):
        asi.state["a"] = 1
        asi.state.b = 2
    def s2(asi):
        assert isinstance(asi.state, State)
        asi.success(asi.state.a + asi.state["b"])
    assert root.add(s1).add(s2).run() == 3
    assert root.state["a"] == 1


def test_parallel(tool, trace):
    def step(asi):
        p = asi.parallel()
        for i in range(3):
            p.add(lambda asi, i=i: (trace("branch", i), asi.state.__setitem__(f"r{i}", i)))
    def after(asi, *a):
        trace("after", a, sorted(k for k in asi.state if k.startswith("r")))
    AsyncSteps(tool).add(step).add(after).run()
    assert trace[:3] == ["branch 0", "branch 1", "branch 2"]
    assert trace[3] == "after () ['r0', 'r1', 'r2']"


def test_parallel_error(tool, trace):
    def step(asi):
        p = asi.parallel(lambda asi, code: trace("par onerror", code))
        def b1(asi):
            asi.set_cancel(lambda asi: trace("b1 cancel"))
            asi.wait_external()
        p.add(b1)
        p.add(lambda asi: asi.error("Fail"))
    with pytest.raises(FutoInError):
        AsyncSteps(tool).add(step).run()
    assert trace == ["b1 cancel", "par onerror Fail"]


def test_timeout(vtool, trace):
    def step(asi):
        asi.set_timeout(10)
        asi.set_cancel(lambda asi: trace("cancel"))
        asi.wait_external()
    def onerror(asi, code):
        trace("onerror", code)
    with pytest.raises(FutoInError) as ei:
        AsyncSteps(vtool).add(step, onerror).run()
    assert ei.value.code == "Timeout"
    assert trace == ["cancel", "onerror Timeout"]
    assert vtool.time() == 0.01


def test_wait_external_with_deferred(vtool):
    def step(asi):
        asi.wait_external()
        vtool.deferred(5, lambda: asi.success("late"))
    assert AsyncSteps(vtool).add(step).run() == "late"
    assert vtool.time() == 0.005


def test_cancel_root(tool, trace):
    root = AsyncSteps(tool)
    def step(asi):
        asi.set_cancel(lambda asi: trace("cancelled"))
        asi.wait_external()
        tool.immediate(lambda: root.cancel())
    root.add(step).add(lambda asi: trace("never"))
    root.execute()
    tool.run()
    assert trace == ["cancelled"]


def test_loops(tool, trace):
    n = [0]
    def body(asi):
        n[0] += 1
        if n[0] == 3:
            asi.break_loop()
        trace("iter", n[0])
    def step(asi):
        asi.loop(body)
        asi.repeat(2, lambda asi, i: trace("rep", i))
        asi.for_each({"k": "v"}, lambda asi, k, v: trace("fe", k, v))
        asi.for_each(["x"], lambda asi, k, v: trace("fe", k, v))
    AsyncSteps(tool).add(step).run()
    assert trace == ["iter 1", "iter 2", "rep 0", "rep 1", "fe k v", "fe 0 x"]


def test_for_each_by_its_ftn12_name(tool, trace):
    # asi.forEach() raised NameError: it called a module global that was
    # deleted once the method was on the type
    def step(asi):
        asi.forEach({"k": "v"}, lambda asi, k, v: trace("fe", k, v))
        asi.forEach(["x", "y"], lambda asi, k, v: trace("fe", k, v), "L")
    AsyncSteps(tool).add(step).run()
    assert trace == ["fe k v", "fe 0 x", "fe 1 y"]


def test_loop_labels_continue(tool, trace):
    def step(asi):
        def outer(asi, i):
            def inner(asi, j):
                if j == 1:
                    asi.continue_loop("OUTER")
                if i == 2:
                    asi.break_loop("OUTER")
                trace(i, j)
            asi.repeat(3, inner, "INNER")
        asi.repeat(5, outer, "OUTER")
    AsyncSteps(tool).add(step).run()
    assert trace == ["0 0", "1 0"]


def test_unknown_label_is_internal_error(tool):
    with pytest.raises(FutoInError) as ei:
        AsyncSteps(tool).add(lambda asi: asi.loop(lambda asi: asi.break_loop("NOPE"))).run()
    assert ei.value.code == "InternalError"


def test_success_step(tool):
    assert AsyncSteps(tool).add(lambda asi: asi.success_step(4, "x")).run() == (4, "x")


def test_new_instance(tool):
    seen = []
    def step(asi):
        other = asi.new_instance()
        seen.append(other)
    AsyncSteps(tool).add(step).run()
    assert seen[0].add(lambda asi: asi.success(9)).run() == 9


def test_binary_and_wrap_ours(tool):
    root = AsyncSteps(tool)
    ptr = root.binary()
    w = AsyncSteps.wrap(ptr)
    assert w.is_ours() and w.binary() == ptr
    w.add(lambda asi: asi.success("via wrap"))
    assert root.run() == "via wrap"


def test_mutex(vtool, trace):
    tool = vtool
    mtx = Mutex(1)
    def section(name):
        def s(asi):
            trace(name, "in at", tool.time())
            asi.wait_external()
            tool.deferred(2, lambda: (trace(name, "out at", tool.time()), asi.success()))
        return s
    roots = []
    for name in ("a", "b"):
        r = AsyncSteps(tool).add(lambda asi, name=name: asi.sync(mtx, section(name)))
        r.execute()
        roots.append(r)
    drive(tool)
    assert trace == ["a in at 0.0", "a out at 0.002", "b in at 0.002", "b out at 0.004"]
    del roots
    mtx.close()


def test_mutex_queue_limit(tool):
    mtx = Mutex(1, 0)
    codes = []
    def hold(asi):
        asi.wait_external()
        tool.deferred(2, lambda: asi.success())
    r1 = AsyncSteps(tool).add(lambda asi: asi.sync(mtx, hold))
    r2 = AsyncSteps(tool).add(lambda asi: asi.sync(mtx, hold),
                              lambda asi, c: codes.append((c, asi.state.error_info)))
    r1.execute(); r2.execute()
    with pytest.raises(DefenseRejected):  # r2's error: no handler recovered
        tool.run()
    tool.run()  # r1 goes on
    assert codes and codes[0][0] == "DefenseRejected"
    del r1, r2
    mtx.close()


def test_throttle_and_limiter(vtool):
    tool = vtool
    thr = Throttle(10, 100, tool=tool)
    lim = Limiter(concurrent=2, max_queue=10, rate=10, period_ms=100, tool=tool)
    assert AsyncSteps(tool).add(lambda asi: asi.sync(thr, lambda asi: asi.success(1))) \
        .add(lambda asi, v: asi.add_sync(lim, lambda asi: asi.success(v + 1))).run() == 2
    thr.close()
    lim.close()


def run_contenders(tool, obj, n=3):
    """n flows enter `obj` at once, each holding it until a timer; the
    codes of the ones refused."""
    codes = []

    def hold(asi):
        asi.wait_external()
        tool.deferred(1, asi.success)

    def refused(asi, code):
        codes.append(code)
        asi.success()
    roots = [AsyncSteps(tool).add(lambda asi: asi.sync(obj, hold), refused)
             for _ in range(n)]
    for r in roots:
        r.execute()
    drive(tool)
    obj.close()
    return codes


def test_none_means_no_limit_or_the_default_in_sync_objects(vtool, monkeypatch):
    """Queue limits (max_queue, burst) take None for no limit; concurrent,
    max, rate and period_ms take None for their default (before:
    Limiter(burst=None) and most others were TypeError). On virtual time:
    no period of 1 ms can end between the contenders' entries."""
    tool = vtool
    fast = dict(concurrent=5, rate=1, period_ms=1, tool=tool)
    assert run_contenders(tool, Limiter(max_queue=0, **dict(fast, concurrent=1))) \
        == ["DefenseRejected"] * 2
    assert run_contenders(tool, Limiter(max_queue=None, **dict(fast, concurrent=1))) == []
    # burst: flows waiting for the rate (1 per ms here)
    assert run_contenders(tool, Limiter(max_queue=None, burst=0, **fast)) \
        == ["DefenseRejected"] * 2
    assert run_contenders(tool, Limiter(max_queue=None, burst=None, **fast)) == []
    assert run_contenders(tool, Mutex(max_queue=0)) == ["DefenseRejected"] * 2
    assert run_contenders(tool, Mutex(max_queue=None)) == []
    assert run_contenders(tool, Throttle(1, 1, max_queue=0, tool=tool)) == ["DefenseRejected"] * 2
    assert run_contenders(tool, Throttle(1, 1, max_queue=None, tool=tool)) == []
    # the others: None gives the library exactly what the default gives
    made = []
    for name in ("mutex", "throttle", "limiter"):
        real = getattr(_core, f"futoin_bind_{name}_new")
        monkeypatch.setattr(_core, f"futoin_bind_{name}_new",
                            lambda *a, real=real: (made.append(a), real(*a))[1])
    for default, with_none in (
            (lambda: Mutex(), lambda: Mutex(None)),
            (lambda: Throttle(3, tool=tool), lambda: Throttle(3, None, tool=tool)),
            (lambda: Limiter(tool=tool), lambda: Limiter(None, 0, None, None, 0, tool=tool))):
        default().close()
        with_none().close()
        assert made[-1] == made[-2]
    for bad in (-1, 1.5, "1"):
        with pytest.raises((TypeError, ValueError)):
            Limiter(burst=bad, tool=tool)


def test_loop_on_other_thread_no_deadlock():
    tool = Tool()
    holder = []
    ready = threading.Event()
    def step(asi):
        holder.append(asi)
        asi.wait_external()
        ready.set()
    root = AsyncSteps(tool).add(step).add(lambda asi, v: holder.append(v))
    root.execute()
    t = threading.Thread(target=tool.run)
    t.start()
    ready.wait()  # events and joins without deadlines: order only
    holder[0].success("from main")  # completes from another thread
    t.join()
    assert holder[1] == "from main"


def _flows(tool, n, kind):
    root_ref = None
    for i in range(n):
        root = AsyncSteps(tool)
        payload = [object()]
        if kind == "success":
            root.add(lambda asi, p=payload: asi.success(p, "s", 1.5)) \
                .add(lambda asi, p, s, f: asi.state.__setitem__("p", p))
        elif kind == "error":
            root.add(lambda asi, p=payload: asi.error("E", "info"),
                     lambda asi, code, p=payload: asi.success(p))
            root.add(lambda asi, p: (_ for _ in ()).throw(ValueError("x")))
        else:
            def step(asi, p=payload):
                asi.set_cancel(lambda asi, p=p: None)
                asi.wait_external()
                tool.immediate(lambda: root_ref.cancel())
            root_ref = root
            root.add(step)
        root.execute(lambda code, info, last: None)
        tool.run()
        root = root_ref = None
    gc.collect()


@pytest.mark.parametrize("kind", ["success", "error", "cancel"])
def test_no_leaks_10000_flows(kind):
    tool = Tool()
    _flows(tool, 200, kind)  # warm caches
    gc.collect()
    before_objs = len(gc.get_objects())
    before_total = sys.gettotalrefcount() if hasattr(sys, "gettotalrefcount") else None
    probe = object()
    rc = sys.getrefcount(probe)
    _flows(tool, 10000, kind)
    gc.collect()
    assert sys.getrefcount(probe) == rc
    grown = len(gc.get_objects()) - before_objs
    assert grown < 50, f"{grown} objects accumulated over 10,000 {kind} flows"
    assert _core._pending_releases() == 0
    assert tool.executing == 0


def test_release_exactly_once_refcount(tool):
    class Fn:
        def __call__(self, asi, *a):
            pass
    fn = Fn()
    base = sys.getrefcount(fn)
    for _ in range(1000):
        AsyncSteps(tool).add(fn, lambda asi, c: None).run()
        r = AsyncSteps(tool).add(fn).add(lambda asi: asi.wait_external())
        r.execute(); r.cancel(); del r
    gc.collect()
    assert sys.getrefcount(fn) == base


def test_types_are_plain_c_types(tool):
    # AsyncSteps and ToolBase are C types of _core (not SWIG's: no
    # SwigPyObject base). AsyncSteps is the public class itself (methods
    # written in Python are added to it); Tool subclasses ToolBase. Step
    # code receives exactly AsyncSteps.
    assert type(_core.AsyncSteps) is type and type(_core.ToolBase) is type
    assert AsyncSteps is _core.AsyncSteps
    assert AsyncSteps.__mro__ == (AsyncSteps, object)
    assert isinstance(tool, _core.ToolBase)
    seen = []
    root = AsyncSteps(tool)
    root.add(lambda asi: seen.append(type(asi)))
    root.parallel().add(lambda asi: seen.append(type(asi)))
    root.run()
    assert seen == [AsyncSteps, AsyncSteps]


def test_bad_arguments_are_clear_errors(tool):
    root = AsyncSteps(tool)
    with pytest.raises(TypeError, match="at most 4"):
        root.success(1, 2, 3, 4, 5)
    with pytest.raises(TypeError, match="callable"):
        root.add(42)
    with pytest.raises(TypeError, match="callable"):
        root.add(lambda asi: None, "not callable")
    with pytest.raises(TypeError):
        root.add()
    with pytest.raises(TypeError, match="label"):
        root.loop(lambda asi: None, 7)
    with pytest.raises(TypeError, match="a Tool is required"):
        AsyncSteps(5)
    with pytest.raises(TypeError):
        AsyncSteps.add(tool, lambda asi: None)
    with pytest.raises(ValueError):
        root.repeat(-1, lambda asi, i: None)
    # nothing was queued by the refused calls
    assert root.run() is None


def test_finished_roots_are_released_before_the_loop_idles(tool):
    import weakref
    done = []
    quick = AsyncSteps(tool).add(lambda asi: done.append("quick"))
    quick.execute()
    ref = weakref.ref(quick)
    del quick

    waiting = []

    def wait(asi):
        asi.wait_external()  # until completed below: no deadline
        waiting.append(asi)
    slow = AsyncSteps(tool).add(wait)
    slow.execute()
    assert tool.executing == 2
    while ref() is not None:
        assert tool.run_nowait()  # the slow root keeps the loop busy
    assert done == ["quick"] and tool.executing == 1
    assert waiting[0].success() is True
    tool.run()
    assert tool.executing == 0


def test_cancelled_root_run_again_is_kept_alive(tool):
    got = []

    def wait(asi):
        asi.set_timeout(10000)
    root = AsyncSteps(tool).add(wait)
    root.execute()
    tool.run_nowait()
    root.cancel()
    root.add(lambda asi: asi.success(7)).add(lambda asi, v: got.append(v))
    root.execute()
    del root  # only the tool keeps it alive now
    tool.run()
    assert got == [7] and tool.executing == 0


def test_tool_attached_to_another_tools_loop():
    # B lives on A's libuv loop; A.run() drives B's flows. B's roots are
    # released when they finish although B itself never runs or idles.
    a = Tool()
    b = Tool(uv_loop=a.uv_loop())
    got = []
    for i in range(100):
        r = AsyncSteps(b)
        r.add(lambda asi, i=i: tool_step(asi, b, i))
        r.add(lambda asi, v: got.append(v))
        r.execute()
    del r

    def tool_step(asi, t, i):
        asi.wait_external()
        t.deferred(1, lambda: asi.success(i))
    a.run()
    assert sorted(got) == list(range(100))
    assert b.executing == 0
    with pytest.raises(RuntimeError):
        b.run()  # the loop's owner runs it, not B
    del b
    gc.collect()
    a.run()  # the loop's next pass releases B's handles
