"""Consecutive Python steps run in one call from the core (ext chain()), and
a step's success() is kept in Python for the next step (py_trampolines.c).
Nothing of this may show: every value, error and misuse is what it is when
each step goes through the runtime (each case here passes against the
binding before the change too)."""
import pytest

from futoin_async import AsyncSteps, FutoInError, InvalidStateError


def run_values(tool, *values):
    """values through success() of one step to the next Python step."""
    got = []
    AsyncSteps(tool).add(lambda asi: asi.success(*values)) \
        .add(lambda asi, *a: got.append(a)).run()
    return got[0]


def test_values_keep_types_and_identity_as_through_the_runtime(tool):
    obj, empty, big = object(), [], 2**80
    got = run_values(tool, 1, -2.5, True, "ascii")
    assert got == (1, -2.5, True, "ascii")
    assert [type(v) for v in got] == [int, float, bool, str]
    assert run_values(tool, "h\u00e9llo", b"\x00\x01", 2**64 - 1, big) \
        == ("h\u00e9llo", b"\x00\x01", 2**64 - 1, big)
    got = run_values(tool, None, obj, empty, {"a": 1})
    assert got[0] is None and got[1] is obj and got[2] is empty
    assert got[3] == {"a": 1}
    nums = [1, 2.5]
    got = run_values(tool, nums, [1, 2])
    assert got == ([1.0, 2.5], [1, 2])  # lists of numbers are FTN12 arrays
    assert got[0] is not nums and type(got[0][0]) is float
    assert run_values(tool) == ()


def test_a_lone_surrogate_still_fails_at_success(tool):
    seen = []

    def step(asi):
        try:
            asi.success("\ud800")
        except UnicodeError:
            seen.append("raised")
            raise
    with pytest.raises(FutoInError) as ei:
        AsyncSteps(tool).add(step).add(lambda asi, v: seen.append(v)).run()
    assert seen == ["raised"]
    assert isinstance(ei.value.__cause__, UnicodeError)


def test_returned_values_pass_on_as_success_values(tool):
    r = AsyncSteps(tool).add(lambda asi: (1, "a")) \
        .add(lambda asi, v, s: v + 1).add(lambda asi, v: asi.success(v, [2])) \
        .add(lambda asi, v, l: (v, l)).run()
    assert r == (2, [2])


def test_a_long_chain(tool):
    root = AsyncSteps(tool).add(lambda asi: asi.success(0))
    for _ in range(10000):
        root.add(lambda asi, v: asi.success(v + 1))
    assert root.run() == 10000


@pytest.mark.parametrize("then", ["success", "error", "raise", "add",
                                  "success_step", "wait_external",
                                  "set_timeout"])
def test_a_call_after_success_meets_it(tool, then):
    """What comes after success() in the same step meets the success(), as
    when success() reached the runtime at once: the same errors, at the
    same points."""
    seen = []

    def step(asi):
        asi.success(1)
        try:
            if then == "success":
                asi.success(2)
            elif then == "error":
                asi.error("Custom")
            elif then == "raise":
                raise ValueError("after success")
            elif then == "add":
                asi.add(lambda asi: seen.append("added ran"))
            elif then == "success_step":
                asi.success_step(3)
            elif then == "wait_external":
                asi.wait_external()
            else:
                asi.set_timeout(10)
            seen.append("returned")
        except InvalidStateError:
            seen.append("InvalidStateError")
    root = AsyncSteps(tool).add(step, lambda asi, code: seen.append("eh " + code)) \
        .add(lambda asi, v=None: seen.append(f"next {v}"))
    try:
        seen.append(f"result {root.run()}")
    except FutoInError as e:
        seen.append(f"failed {e.code}: {e.info}: {type(e.__cause__).__name__}")
    assert seen == AFTER_SUCCESS[then]


# What each call after success() does (the binding before the kept
# success() does the same).
AFTER_SUCCESS = {
    "success": ["returned",
                "failed InternalError: success() after success(): NoneType"],
    "error": ["failed InternalError: error() after success(): Custom"],
    "raise": ["failed InternalError: error() after success(): ValueError"],
    "add": ["returned", "failed InternalError: add() after success(): NoneType"],
    "success_step": ["returned",
                     "failed InternalError: add() after success(): NoneType"],
    "wait_external": ["returned", "next 1", "result None"],
    "set_timeout": ["returned", "next 1", "result None"],
}


def test_success_then_return_a_value_is_a_type_error(tool):
    with pytest.raises(FutoInError) as ei:
        AsyncSteps(tool).add(lambda asi: (asi.success(1), 2)[1]) \
            .add(lambda asi, v: v).run()
    assert ei.value.code == "InternalError"
    assert isinstance(ei.value.__cause__, TypeError)


def test_the_handle_of_a_chained_step_goes_stale(tool):
    kept, seen = [], []

    def first(asi):
        kept.append(asi)
        asi.success(1)

    def second(asi, v):
        seen.append(kept[0].is_valid())
        seen.append(asi is kept[0])
        try:
            kept[0].success(2)
        except InvalidStateError:
            seen.append("stale")
        kept.append(asi)
    AsyncSteps(tool).add(first).add(second).add(lambda asi: None).run()
    assert seen == [False, False, "stale"]
    assert not kept[1].is_valid()


def test_error_handlers_of_chained_steps(tool):
    seen = []

    def fail(asi, v):
        seen.append(v)
        asi.error("Custom", "info")
    r = AsyncSteps(tool).add(lambda asi: asi.success(5)) \
        .add(fail, lambda asi, code: asi.success(code)) \
        .add(lambda asi, code: f"handled {code}").run()
    assert seen == [5] and r == "handled Custom"


def test_each_step_is_entered_while_hooks_are_set(vtool):
    entered = []
    vtool.set_hooks(step_entered=lambda ev: entered.append(ev["root_id"]))
    root = AsyncSteps(vtool).add(lambda asi: asi.success(0))
    for _ in range(5):
        root.add(lambda asi, v: asi.success(v + 1))
    assert root.run() == 5
    assert len(entered) == 7  # as many as before the chain: every step entered


def test_state_written_after_success_is_seen_by_the_next_step(tool):
    def first(asi):
        asi.success(1)
        asi.state["k"] = "v"
    r = AsyncSteps(tool).add(first).add(lambda asi, v: (v, asi.state["k"])).run()
    assert r == (1, "v")
