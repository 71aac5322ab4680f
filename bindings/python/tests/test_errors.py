"""Issue 11, "Errors are Python exceptions": standard codes as exception
classes, cancellation, unhandled errors of execute(), misuse raised at the
call site, NUL in codes."""
import asyncio
import pickle

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
    # any other code has its own class too (futoin_async.errors)
    with pytest.raises(FutoInError) as ei:
        fail_with(tool, "MyOwnCode", "x")
    assert type(ei.value) is futoin_async.errors.MyOwnCode
    assert ei.value.code == "MyOwnCode" and ei.value.info == "x"
    # every standard code has its class, and the class keeps the code
    for code in dir(futoin_async.Errors):
        if not code.startswith("_"):
            cls = getattr(futoin_async, code)
            assert issubclass(cls, FutoInError) and cls().code == code


def test_any_code_has_a_class_by_name():
    errors = futoin_async.errors
    assert errors.NotFound is errors.NotFound  # made on first use, kept
    assert issubclass(errors.NotFound, FutoInError)
    assert errors.NotFound.__name__ == "NotFound" and errors.NotFound().code == "NotFound"
    assert errors.NotFound.__module__ == "futoin_async.errors"
    # the standard codes keep their classes and builtin bases
    assert errors.Timeout is fa.Timeout and issubclass(errors.Timeout, TimeoutError)
    assert errors.InvalidRequest is fa.InvalidRequest
    assert issubclass(errors.InvalidRequest, ValueError)
    from futoin_async.errors import NotFound, Conflict
    assert NotFound is errors.NotFound and Conflict is errors.Conflict
    assert getattr(errors, "Some Error") is getattr(errors, "Some Error")
    # however an error is made, it is an instance of its code's class
    e = FutoInError("NotFound", "x")
    assert type(e) is errors.NotFound and (e.code, e.info) == ("NotFound", "x")
    assert type(FutoInError("Timeout", info="slow")) is fa.Timeout
    assert type(fa._make_error("NotFound")) is errors.NotFound
    back = pickle.loads(pickle.dumps(errors.NotFound("y")))
    assert type(back) is errors.NotFound and back.info == "y"
    with pytest.raises(AttributeError):
        errors.__path__  # the module protocol is not an error code


def test_a_flow_error_of_any_code_is_caught_by_name(tool):
    codes = []

    def step(asi):
        raise futoin_async.errors.Conflict("taken")
    with pytest.raises(futoin_async.errors.Conflict) as ei:
        AsyncSteps(tool).add(step, lambda asi, c: codes.append(c)).run()
    assert codes == ["Conflict"] and ei.value.info == "taken"
    # a code the program never named before the flow failed with it
    with pytest.raises(FutoInError) as ei:
        AsyncSteps(tool).add(lambda asi: asi.error("FirstSeenInAFlow", "i")).run()
    assert type(ei.value) is futoin_async.errors.FirstSeenInAFlow
    try:
        AsyncSteps(tool).add(lambda asi: asi.error("FirstSeenInAFlow")).run()
    except futoin_async.errors.FirstSeenInAFlow as e:
        assert e.code == "FirstSeenInAFlow"


def test_a_real_timeout_is_a_timeout_error(vtool):
    def wait(asi):
        asi.set_timeout(5)
    with pytest.raises(TimeoutError):
        AsyncSteps(vtool).add(wait).run()
    assert vtool.time() == 0.005


def test_error_leaves_the_step_past_except_exception(tool):
    """asi.error() reports the error, then leaves the step with a private
    BaseException: `except Exception`/`except FutoInError` in step code do
    not swallow it (before: a FutoInError, which they did, and the step
    went on after an error already reported); `finally` runs. The
    handlers, last_exception and run() get the code's class."""
    seen = []

    def step(asi):
        try:
            asi.error("Timeout", "in step")
        except Exception as e:  # noqa: B902 - what ordinary code writes
            seen.append(("caught", type(e)))
        finally:
            seen.append("finally")
        seen.append("not reached")

    def helper(asi):
        asi.error("NotFound", "no id")

    def step2(asi):
        try:
            helper(asi)
        except FutoInError as e:
            seen.append(("caught", type(e)))

    def handler(asi, code):
        seen.append((code, type(asi.last_exception)))
    with pytest.raises(fa.Timeout) as ei:
        AsyncSteps(tool).add(step, handler).run()
    assert ei.value.info == "in step"
    assert seen == ["finally", ("Timeout", fa.Timeout)]
    seen.clear()
    with pytest.raises(futoin_async.errors.NotFound):
        AsyncSteps(tool).add(step2, handler).run()
    assert seen == [("NotFound", futoin_async.errors.NotFound)]


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


def test_root_cancel_returns_whether_it_cancelled_and_run_raises_cancellation(tool):
    """Rule 2: cancel() is a bool (True only when the root was executing
    and is now cancelled); run() of a cancelled root raises the binding's
    cancellation error; the root can run again."""
    root = AsyncSteps(tool)
    assert root.cancel() is False  # nothing executes yet
    said = []

    def step(asi):
        asi.set_cancel(lambda asi: said.append("cancel handler"))
        tool.immediate(lambda: said.append(root.cancel()))
    root.add(step)
    with pytest.raises(fa.CancelledError) as ei:
        root.run()
    assert isinstance(ei.value, asyncio.CancelledError)
    assert not isinstance(ei.value, Exception)  # as asyncio's, since 3.8
    assert said == ["cancel handler", True]
    assert root.cancel() is False  # no longer executing
    assert root.add(lambda asi: asi.success("again")).run() == "again"
    assert root.cancel() is False  # finished
    root.free()
    assert root.cancel() is False  # freed


def test_root_values_without_run(tool):
    """Rule 2: the root's final values reach execute()'s on_success
    callback (as a step's arguments); it does not run for an error or a
    cancel."""
    got = []
    for values in ((), (1,), ("a", 2.5, True)):
        root = AsyncSteps(tool).add(lambda asi, values=values: asi.success(*values))
        root.execute(on_success=lambda *v: got.append(v))
        tool.run()
    assert got == [(), (1,), ("a", 2.5, True)]
    errors = []
    root = AsyncSteps(tool).add(lambda asi: asi.error("Nope"))
    root.execute(lambda code, info, last: errors.append(code),
                 on_success=lambda *v: got.append(("error!", v)))
    tool.run()
    root = AsyncSteps(tool).add(lambda asi: asi.wait_external())
    root.execute(on_success=lambda *v: got.append(("cancel!", v)))
    tool.immediate(root.cancel)
    tool.run()
    assert errors == ["Nope"] and len(got) == 3
    with pytest.raises(TypeError):
        AsyncSteps(tool).execute(on_success=42)


def test_cancelled_flow_awaited_raises_cancellation():
    async def main():
        tool = futoin_async.Tool()
        root = AsyncSteps(tool)

        def step(asi):
            asi.wait_external()
            tool.immediate(root.cancel)
        root.add(step)
        with pytest.raises(asyncio.CancelledError) as ei:
            await root.promise()
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


def nul_calls_in_a_step(kind, tool):
    """(what, call(asi)) of every string argument of rule 5 of `kind`, made
    in a step's own callback."""
    noop = lambda asi, *a: None  # noqa: E731
    return {
        "error code": [
            ("error()", lambda asi: asi.error("Bad\0Code", "info")),
            ("FutoInError()", lambda asi: FutoInError("Bad\0Code")),
            ("errors.<code>", lambda asi: getattr(futoin_async.errors, "Bad\0Code")),
        ],
        "loop label": [
            ("loop()", lambda asi: asi.loop(noop, "LA\0BEL")),
            ("repeat()", lambda asi: asi.repeat(1, noop, "LA\0BEL")),
            ("for_each()", lambda asi: asi.for_each([1], noop, "LA\0BEL")),
            ("break_loop()", lambda asi: asi.break_loop("LA\0BEL")),
            ("continue_loop()", lambda asi: asi.continue_loop("LA\0BEL")),
        ],
        "state name": [
            ("state[k] = v", lambda asi: asi.state.__setitem__("na\0me", 1)),
            ("state[k]", lambda asi: asi.state["na\0me"]),
            ("k in state", lambda asi: "na\0me" in asi.state),
            ("del state[k]", lambda asi: asi.state.__delitem__("na\0me")),
            ("setattr(state)", lambda asi: setattr(asi.state, "na\0me", 1)),
        ],
        "language, module, function": [
            ("language", lambda asi: asi.add_foreign("pyth\0on", "os", "getcwd")),
            ("module", lambda asi: asi.add_foreign("python", "o\0s", "getcwd")),
            ("function", lambda asi: asi.add_foreign("python", "os", "get\0cwd")),
        ],
    }[kind]


@pytest.mark.parametrize("kind", ["error code", "loop label", "state name",
                                  "language, module, function"])
def test_a_nul_in_a_name_is_a_value_error(tool, kind):
    """Rule 5: refused at the call site with ValueError, never cut. (Sync
    objects have no names in Python.)"""
    seen = []

    def step(asi):
        for what, call in nul_calls_in_a_step(kind, tool):
            try:
                call(asi)
                seen.append((what, "accepted"))
            except ValueError as e:
                seen.append((what, "NUL" in str(e)))
        assert "na\0me" not in dict(asi.state)  # nothing was stored
    assert AsyncSteps(tool).add(step).run() is None  # no call took effect
    assert seen == [(what, True) for what, _ in nul_calls_in_a_step(kind, tool)]


def test_a_nul_in_an_error_code_from_outside_the_step_is_a_value_error(tool):
    seen = []

    def step(asi):
        st = asi.state
        asi.wait_external()

        def later():
            for call in (lambda: asi.error("Bad\0Code"), lambda: st.__setitem__("a\0b", 1),
                         lambda: st["a\0b"]):
                try:
                    call()
                    seen.append("accepted")
                except ValueError:
                    seen.append("refused")
                except Exception as e:  # noqa: B902 - reported below
                    seen.append(repr(e))
            asi.success("done")  # whatever happened: the test must not hang
        tool.call_soon(later)
    assert AsyncSteps(tool).add(step).run() == "done"
    assert seen == ["refused"] * 3


def test_an_empty_error_code_is_a_value_error(tool):
    def step(asi):
        with pytest.raises(ValueError):
            asi.error("")
        with pytest.raises(ValueError):
            FutoInError("")
    AsyncSteps(tool).add(step).run()


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
