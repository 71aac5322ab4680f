"""Issue 11, "Errors are Python exceptions": standard codes as exception
classes, cancellation, unhandled errors of execute(), misuse raised at the
call site, NUL in codes."""
import asyncio

import pytest

import futoin_async
import futoin_async as fa
from futoin_async import AsyncSteps, FutoInError

# Names new in issue 11 are looked up at test time (fa.X), so that each
# test fails on its own against an older package.


def fail_with(tool, code, info=None):
    return AsyncSteps(tool).add(lambda asi: asi.error(code, info)).run()


def test_standard_codes_are_exception_classes(tool):
    with pytest.raises(TimeoutError) as ei:  # except TimeoutError works
        fail_with(tool, "Timeout", "slow")
    assert type(ei.value) is fa.Timeout and isinstance(ei.value, FutoInError)
    assert ei.value.code == "Timeout" and ei.value.info == "slow"

    with pytest.raises(fa.DefenseRejected):
        fail_with(tool, "DefenseRejected")
    with pytest.raises(ValueError) as ei:
        fail_with(tool, "InvalidRequest", "bad id")
    assert type(ei.value) is fa.InvalidRequest
    with pytest.raises(NotImplementedError) as ei:
        fail_with(tool, "NotImplemented")
    assert type(ei.value) is futoin_async.NotImplemented
    with pytest.raises(fa.InternalError):
        AsyncSteps(tool).add(lambda asi: 1 / 0).run()
    # an unknown code stays FutoInError
    with pytest.raises(FutoInError) as ei:
        fail_with(tool, "MyOwnCode", "x")
    assert type(ei.value) is FutoInError and ei.value.code == "MyOwnCode"
    # every standard code has its class, and the class keeps the code
    for code in dir(futoin_async.Errors):
        if not code.startswith("_"):
            cls = getattr(futoin_async, code)
            assert issubclass(cls, FutoInError) and cls().code == code


def test_a_real_timeout_is_a_timeout_error(tool):
    def wait(asi):
        asi.set_timeout(5)
    with pytest.raises(TimeoutError):
        AsyncSteps(tool).add(wait).run()


def test_error_raises_the_code_class_inside_the_step(tool):
    seen = []

    def step(asi):
        try:
            asi.error("Timeout", "in step")
        except TimeoutError as e:
            seen.append(type(e))
            raise
    with pytest.raises(fa.Timeout):
        AsyncSteps(tool).add(step).run()
    assert seen == [fa.Timeout]


def test_raising_a_code_class_in_a_step(tool):
    def step(asi):
        raise fa.InvalidRequest("bad id")
    codes = []
    with pytest.raises(fa.InvalidRequest) as ei:
        AsyncSteps(tool).add(step, lambda asi, c: codes.append(c)).run()
    assert codes == ["InvalidRequest"] and ei.value.info == "bad id"


def test_cancelled_flow_raises_cancellation(tool):
    root = AsyncSteps(tool)

    def step(asi):
        asi.set_cancel(lambda asi: None)
        asi.wait_external()
        tool.immediate(root.cancel)
    root.add(step)
    with pytest.raises(fa.CancelledError) as ei:
        root.run()
    assert isinstance(ei.value, asyncio.CancelledError)


def test_cancelled_flow_awaited_raises_cancellation():
    async def main():
        tool = futoin_async.Tool()
        root = AsyncSteps(tool)

        def step(asi):
            asi.wait_external()
            tool.immediate(root.cancel)
        root.add(step)
        with pytest.raises(asyncio.CancelledError) as ei:
            await asyncio.wait_for(root.promise(), 10)  # (never hangs)
        assert isinstance(ei.value, fa.CancelledError)
        return "done"
    assert asyncio.run(main()) == "done"


def test_execute_without_callback_raises_from_run(tool):
    got = []

    def slow(asi):
        asi.wait_external()
        tool.deferred(20, lambda: asi.success("slow done"))
    other = AsyncSteps(tool).add(slow).add(lambda asi, v: got.append(v))
    other.execute()
    bad = AsyncSteps(tool).add(lambda asi: asi.error("InvalidRequest", "oops"))
    bad.execute()
    with pytest.raises(FutoInError) as ei:
        tool.run()
    assert ei.value.code == "InvalidRequest" and ei.value.info == "oops"
    tool.run()  # the other flow was not dropped: it goes on
    assert got == ["slow done"]


def test_misuse_raises_at_the_call_site(tool, capfd):
    # RuntimeError here: InvalidStateError is one (test below)
    root = AsyncSteps(tool)
    with pytest.raises(RuntimeError):
        root.success()
    with pytest.raises(RuntimeError):  # RuntimeError is a RuntimeError
        root.set_timeout(10)
    with pytest.raises(RuntimeError):
        root.break_loop()
    with pytest.raises(RuntimeError):
        root.continue_loop()
    with pytest.raises(RuntimeError):
        root.wait_external()

    kept = []
    seen = []

    def step(asi):
        kept.append(asi)
        try:
            root.add(lambda asi: None)  # the root runs this very step
        except RuntimeError as e:
            seen.append("add")
        try:
            root.execute()
        except RuntimeError:
            seen.append("execute twice")
    root.add(step)
    assert root.run() is None
    assert seen == ["add", "execute twice"]
    finished = kept[0]
    with pytest.raises(RuntimeError):
        finished.add(lambda asi: None)
    with pytest.raises(RuntimeError):
        finished.set_timeout(5)
    with pytest.raises(RuntimeError):
        finished.break_loop()
    with pytest.raises(RuntimeError):  # it completed normally: not a lost race
        finished.success(1)
    assert capfd.readouterr().err == ""  # raised, not printed


def test_execute_twice_from_outside(tool):
    root = AsyncSteps(tool).add(lambda asi: asi.wait_external())
    root.execute(lambda *a: None)
    with pytest.raises(RuntimeError):
        root.execute()
    root.cancel()
    tool.run()


def test_invalid_state_error_class(tool):
    assert issubclass(fa.InvalidStateError, RuntimeError)
    assert issubclass(fa.InvalidStateError, asyncio.InvalidStateError)
    with pytest.raises(fa.InvalidStateError):
        AsyncSteps(tool).success()


def test_loop_control_never_reaches_user_code(tool):
    caught = []

    def body(asi):
        try:
            asi.break_loop()
        except Exception as e:  # LoopBreak must not be seen here
            caught.append(repr(e))
    AsyncSteps(tool).add(lambda asi: asi.loop(body)).run()
    assert caught == []
    assert "LoopBreak" not in repr(futoin_async.__dict__.keys())


def test_nul_in_error_code_is_a_value_error(tool):
    seen = []

    def step(asi):
        try:
            asi.error("Bad\0Code", "info")
        except ValueError as e:
            seen.append(str(e))
        try:
            asi.loop(lambda asi: None, "LA\0BEL")
        except ValueError:
            seen.append("label")
    assert AsyncSteps(tool).add(step).run() is None  # neither call took effect
    assert len(seen) == 2 and "NUL" in seen[0]

    def raise_it(asi):
        raise FutoInError("Bad\0Code")
    with pytest.raises(fa.InternalError):  # not a truncated "Bad" error
        AsyncSteps(tool).add(raise_it).run()


def test_await_cause_keeps_the_original_exception():
    async def boom():
        await asyncio.sleep(0)
        raise KeyError("original")

    async def main():
        root = AsyncSteps(futoin_async.Tool()).await_(boom())
        with pytest.raises(FutoInError) as ei:
            await root
        return ei.value
    err = asyncio.run(main())
    assert err.code == "InternalError"
    cause = err.__cause__
    assert isinstance(cause, KeyError) and cause.args == ("original",)
    tb = cause.__traceback__
    names = []
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert "boom" in names


def test_await_futoin_error_keeps_its_code():
    async def refuse():
        raise fa.DefenseRejected("busy")

    async def main():
        with pytest.raises(fa.DefenseRejected) as ei:
            await AsyncSteps(futoin_async.Tool()).await_(refuse())
        return ei.value.info
    assert asyncio.run(main()) == "busy"


def test_errors_survive_their_root_and_tool_dying_on_the_way_up():
    # Nothing but the expression keeps the root and its Tool alive: both
    # are freed while the exception propagates, which must not swallow it.
    with pytest.raises(FutoInError) as ei:
        AsyncSteps(futoin_async.Tool()).add(lambda asi: asi.error("Gone", "x")).run()
    assert ei.value.code == "Gone"

    async def refuse():
        raise fa.DefenseRejected("busy")

    async def main():
        with pytest.raises(fa.DefenseRejected):
            await AsyncSteps(futoin_async.Tool()).await_(refuse())
        return "ok"
    assert asyncio.run(main()) == "ok"
