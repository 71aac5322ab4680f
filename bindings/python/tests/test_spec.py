"""The spec's examples (FTN12 §1.1, §1.2, §1.2.1, §1.4, §1.8, §3.1–§3.5) in
Python, compared whole with the reference traces in tests/expected/."""
import pytest

from futoin_async import AsyncSteps, FutoInError


def run(tool, root):
    # The traces end where the spec's examples do; an error left unhandled
    # is not part of them (Tool.run() would raise it).
    root.execute(lambda code, info, last: None)
    tool.run()


def ext_error(asi, code):
    try:
        asi.error(code)
    except FutoInError:
        pass


def test_s1_1_levels(tool, trace):
    root = AsyncSteps(tool)
    # Level 0's own add #1 is the root step itself
    def l0(asi):
        trace("Level 0 add #1")
        def l1(asi):
            trace("Level 1 add #1")
            def l2(asi):
                trace("Level 2 add #1")
            asi.add(l2)
            asi.parallel().add(lambda asi: trace("Level 2 parallel #2"))
            asi.add(lambda asi: trace("Level 2 add #3"))
        asi.add(l1)
        asi.parallel().add(lambda asi: trace("Level 1 parallel #2"))
        asi.add(lambda asi: trace("Level 1 add #3"))
    root.add(l0)
    root.parallel().add(lambda asi: trace("Level 0 parallel #2"))
    root.add(lambda asi: trace("Level 0 add #3"))
    run(tool, root)
    trace.expect("s1_1_levels")


def test_s1_2(tool, trace):
    root = AsyncSteps(tool)
    def func(asi):
        trace("Level 0 func")
        def l1(asi):
            trace("Level 1 func")
            asi.error("myerror")
        def l1_err(asi, err):
            trace("Level 1 onerror: " + err)
            asi.error("newerror")
        asi.add(l1, l1_err)
    def onerror(asi, err):
        trace("Level 0 onerror: " + err)
        asi.success("Prm")
    root.add(func, onerror)
    root.add(lambda asi, prm: trace("Level 0 func2: " + prm))
    run(tool, root)
    trace.expect("s1_2")


def test_s1_2_1(tool, trace):
    root = AsyncSteps(tool)
    def func(asi):
        trace("Level 0 func")
        def l1(asi):
            trace("Level 1 func")
            asi.error("first")
        def l1_err(asi, err):
            trace("Level 1 onerror: " + err)
            def l2(asi):
                trace("Level 2 func")
                asi.error("second")
            asi.add(l2, lambda asi, e: trace("Level 2 onerror: " + e))
        asi.add(l1, l1_err)
    root.add(func, lambda asi, e: trace("Level 0 onerror: " + e))
    run(tool, root)
    trace.expect("s1_2_1")


@pytest.mark.parametrize("mode", ["abort", "onerror", "recover"])
def test_s1_4(tool, trace, mode):
    root = AsyncSteps(tool)
    onerror = None
    if mode in ("onerror", "recover"):
        def onerror(asi, err):
            trace("parallel onerror: " + err)
            if mode == "recover":
                asi.success()
    b1err = (lambda asi, err: trace("branch 1 onerror: " + err)) if mode == "onerror" else None
    def b1(asi):
        trace("branch 1 start")
        asi.set_cancel(lambda asi: trace("branch 1 cancel"))
        asi.state.result1 = "r1"
    def b2(asi):
        trace("branch 2 start")
        asi.set_cancel(lambda asi: trace("branch 2 cancel"))
        asi.state.result2 = "r2"
    def b3(asi):
        trace("branch 3 start")
        asi.wait_external()
        def later():
            trace("branch 3 raises Some Error")
            ext_error(asi, "Some Error")
        tool.immediate(later)
    root.parallel(onerror).add(b1, b1err).add(b2).add(b3)
    root.add(lambda asi: trace(f"final step: {asi.state.result1} {asi.state.result2}"))
    run(tool, root)
    trace.expect({"abort": "s1_4_abort", "onerror": "s1_4_abort_onerror",
                  "recover": "s1_4_abort_recover"}[mode])


def test_s1_8_loop_break(tool, trace):
    n = [0]
    def call_some_library(asi):
        def s(asi):
            n[0] += 1
            trace(f"call_some_library {n[0]}")
            asi.success(n[0] < 3)
        asi.add(s)
    def body(asi):
        call_some_library(asi)
        def check(asi, result):
            trace("result " + str(result).lower())
            if not result:
                asi.break_loop()
        asi.add(check)
    root = AsyncSteps(tool)
    root.add(lambda asi: asi.loop(body))
    root.add(lambda asi, *args: trace("after loop " + fmt(args)))
    run(tool, root)
    trace.expect("s1_8_loop_break")


def fmt(args):
    return "[" + ",".join(str(a) for a in args) + "]"


def test_s1_8_nested(tool, trace):
    o = [0]
    def outer(asi):
        oi = o[0]
        o[0] += 1
        i = [0]
        trace(f"outer {oi}")
        if oi == 3:
            asi.break_loop()
        def inner(asi):
            def s(asi):
                ii = i[0]
                i[0] += 1
                trace(f"call_some_library {oi}.{ii}")
                asi.success(ii < 2)
            asi.add(s)
            def r(asi, result):
                trace("result " + str(result).lower())
                if not result:
                    asi.continue_loop("OUTER")
                asi.success(result)
            asi.add(r)
        asi.loop(inner)
        def use(asi, result):
            trace(f"use {result}")
            asi.success()
        asi.add(use)
    root = AsyncSteps(tool)
    root.add(lambda asi: asi.loop(outer, "OUTER"))
    root.add(lambda asi, *args: trace("after loop " + fmt(args)))
    run(tool, root)
    trace.expect("s1_8_nested")


def test_s1_8_repeat(tool, trace):
    root = AsyncSteps(tool)
    root.add(lambda asi: asi.repeat(3, lambda asi, i: trace(f"Iteration: {i}")))
    run(tool, root)
    trace.expect("s1_8_repeat")


def test_s1_8_foreach(tool, trace):
    root = AsyncSteps(tool)
    root.add(lambda asi: asi.for_each(["apple", "banana"],
                                      lambda asi, k, v: trace(f"{k} = {v}")))
    run(tool, root)
    trace.expect("s1_8_foreach")


@pytest.mark.parametrize("something", [True, False])
def test_s3_1(tool, trace, something):
    root = AsyncSteps(tool)
    def s1(asi):
        def inner(asi):
            if something:
                asi.success(1, 2)
            else:
                asi.error("NotImplemented")
        asi.add(inner)
    root.add(s1, lambda asi, e: trace("externalError " + e))
    root.add(lambda asi, a, b: trace(f"externalSuccess {a} {b}"))
    run(tool, root)
    trace.expect("s3_1_ok" if something else "s3_1_err")


@pytest.mark.parametrize("something", [True, False])
def test_s3_2(tool, trace, something):
    root = AsyncSteps(tool)
    def s1(asi):
        def inner(asi):
            if something:
                asi.success(1, 2)
            else:
                asi.error("NotImplemented")
        asi.add(inner, lambda asi, e: trace("Spotted error " + e))
    root.add(s1, lambda asi, e: trace("externalError " + e))
    root.add(lambda asi, a, b: trace(f"externalSuccess {a} {b}"))
    run(tool, root)
    trace.expect("s3_2_ok" if something else "s3_2_err")


@pytest.mark.parametrize("fail", [0, 1, 2])
def test_s3_3(tool, trace, fail):
    root = AsyncSteps(tool)
    def fail_later(asi):
        asi.wait_external()
        tool.immediate(lambda: ext_error(asi, "NotImplemented"))
    def p1(asi):
        if fail == 1:
            return fail_later(asi)
        asi.state.parallel_1 = 1
    def p2(asi):
        if fail == 2:
            return fail_later(asi)
        asi.state.parallel_2 = 2
    def p2_err(asi, e):
        trace("parallel_2 onerror " + e)
        asi.state.parallel_2 = 0
    def s(asi):
        asi.parallel().add(p1, lambda asi, e: trace("Spotted error " + e)).add(p2, p2_err)
    root.add(s, lambda asi, e: trace("externalError " + e))
    root.add(lambda asi, *a: trace(
        f"externalSuccess {root.state.parallel_1} {root.state.parallel_2}"))
    run(tool, root)
    trace.expect({0: "s3_3_ok", 1: "s3_3_err1", 2: "s3_3_err2"}[fail])


@pytest.mark.parametrize("with_state", [False, True])
def test_s3_4(tool, trace, with_state):
    root = AsyncSteps(tool)
    if with_state:
        root.state.x = "X"
        root.state.y = "Y"
    def s(asi):
        asi.repeat(3, lambda asi, i: trace(i))
        asi.for_each([1, 3, 3], lambda asi, k, v: trace(f"{k}={v}"))
        asi.for_each(asi.state, lambda asi, k, v: trace(f"{k}={v}"))
    root.add(s)
    run(tool, root)
    trace.expect("s3_4_state" if with_state else "s3_4")


@pytest.mark.parametrize("via", ["immediate", "timer"])
@pytest.mark.parametrize("case", ["ok", "err", "err_onerror"])
def test_s3_5(tool, trace, via, case):
    err = None if case == "ok" else "ExtError"
    def call_some_external(cb):
        trace("callSomeExternal")
        if via == "immediate":
            tool.immediate(lambda: cb(err))
        else:
            tool.deferred(5, lambda: cb(err))
    root = AsyncSteps(tool)
    def step1(asi):
        trace("step 1")
        asi.wait_external()
        def cb(e):
            if e:
                trace("external callback err=" + e)
                try:
                    asi.error(e)
                except FutoInError:
                    pass
            else:
                trace("external callback ok")
                asi.success()
        call_some_external(cb)
    onerror = (lambda asi, e: trace("step 1 onerror: " + e)) if case == "err_onerror" else None
    root.add(step1, onerror)
    root.add(lambda asi, *a: trace("step 2 args=" + fmt(a)))
    run(tool, root)
    trace.expect(f"s3_5_{case}_{via}")
