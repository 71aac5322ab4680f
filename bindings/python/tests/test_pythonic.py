"""Issue 11, "Feels like Python": docstrings and signatures, no SWIG
internals, stubs checked by mypy's stubtest, NoReturn typing, asyncio's
units for asyncio's names, steps that return values, context managers,
and the README's block for a fresh Debian 12."""
import asyncio
import inspect
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

from conftest import drive
import futoin_async
import futoin_async as fa
from futoin_async import AsyncSteps, FutoInError, Tool

REPO = pathlib.Path(__file__).resolve().parents[3]
PUBLIC_CLASSES = ["AsyncSteps", "Tool", "State", "FutoInError", "Mutex",
                  "Throttle", "Limiter", "Errors", "TimerHandle",
                  "CancelledError", "InvalidStateError", "Timeout"]


def public_methods(cls):
    for name, _ in inspect.getmembers(cls):
        if name.startswith("_") and name not in ("__init__", "__enter__", "__exit__"):
            continue
        attr = inspect.getattr_static(cls, name, None)
        for klass in cls.__mro__:
            if name in vars(klass):
                attr = vars(klass)[name]
                break
        if klass in (object, dict, Exception, BaseException):
            continue  # inherited from Python itself
        yield name, getattr(cls, name)


def test_every_public_class_and_method_has_a_docstring_and_signature():
    missing_doc, missing_sig = [], []
    for cname in PUBLIC_CLASSES:
        cls = getattr(fa, cname, None)
        if cls is None:
            missing_doc.append(cname)
            continue
        if not (cls.__doc__ or "").strip():
            missing_doc.append(cname)
        for name, fn in public_methods(cls):
            if not callable(fn) or isinstance(fn, type):
                continue
            if not name.startswith("__") and not (fn.__doc__ or "").strip():
                missing_doc.append(f"{cname}.{name}")
            try:
                inspect.signature(fn)
            except (ValueError, TypeError):
                missing_sig.append(f"{cname}.{name}")
    for fname in ("default_tool", "version"):
        assert getattr(fa, fname).__doc__
    assert missing_doc == [] and missing_sig == []
    sig = inspect.signature(AsyncSteps.add)
    assert list(sig.parameters) == ["self", "step", "onerror"]
    assert sig.parameters["onerror"].default is None
    assert "values" in inspect.signature(AsyncSteps.success).parameters
    assert list(inspect.signature(Tool.deferred).parameters) == ["self", "delay_ms", "fn"]


def test_keyword_arguments_work(tool):
    codes = []
    r = AsyncSteps(tool).add(step=lambda asi: asi.error(code="E1"),
                             onerror=lambda asi, c: codes.append(c) or asi.success())
    r.repeat(count=2, body=lambda asi, i: codes.append(i), label="L")
    assert r.run() is None and codes == ["E1", 0, 1]


def test_no_swig_internals_leak(tool):
    swig = {"own", "disown", "next", "append", "this", "thisown", "acquire"}
    assert swig & set(dir(AsyncSteps)) == set()
    assert swig & set(dir(Tool)) == set()
    # no SWIG shadow module shipped
    pkg = pathlib.Path(futoin_async.__file__).parent
    assert not (pkg / "core.py").exists()
    with pytest.raises(ImportError):
        __import__("futoin_async.core")
    # error messages speak Python, not SWIG wrapper names or C types
    root = AsyncSteps(tool)
    messages = []
    for call in (lambda: root.add(), lambda: root.success(1, 2, 3, 4, 5),
                 lambda: root.add(lambda asi: None, lambda asi, c: None, 3),
                 lambda: root.repeat("x", lambda asi, i: None),
                 lambda: root.repeat(-1, lambda asi, i: None),
                 lambda: root.add(lambda asi: None, bogus=1),
                 lambda: tool.deferred(-5, lambda: None),
                 lambda: tool.deferred("5", lambda: None),
                 lambda: fa.Mutex(-1), lambda: fa.Mutex("x"),
                 lambda: fa.Throttle(-1), lambda: fa.Limiter(rate=-2),
                 lambda: fa.Throttle(1, period_ms=2**40),
                 lambda: AsyncSteps.wrap(-5), lambda: Tool(uv_loop=-1),
                 lambda: Tool("x")):
        with pytest.raises((TypeError, ValueError)) as ei:
            call()
        messages.append(str(ei.value))
    for m in messages:
        assert "AsyncStepsBase" not in m and "ToolBase" not in m, m
        assert not re.search(r"\b(size_t|uint\d+_t|int64_t|unsigned)\b", m), m
        assert "_wrap" not in m and "Swig" not in m and "futoin_bind" not in m, m
        assert "in method" not in m, m
    assert messages[1] == "success() takes at most 4 values (FTN12), 5 given"
    assert messages[0].startswith("add()")


def test_stubtest_passes():
    pytest.importorskip("mypy")  # python3-mypy (listed in .ci/setup)
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "futoin_async"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_noreturn_and_result_typing(tmp_path):
    pytest.importorskip("mypy")
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""
        from futoin_async import AsyncSteps

        def check(asi: AsyncSteps, n: int) -> int:
            if n > 0:
                return n
            asi.error("InvalidRequest")  # NoReturn: no "missing return"

        def body(asi: AsyncSteps) -> int:
            asi.break_loop()

        def cont(asi: AsyncSteps) -> int:
            asi.continue_loop("L")

        root: AsyncSteps = AsyncSteps().add(lambda asi: None).repeat(2, lambda asi, i: None)
        ok: bool | None = root.success()
        cancelled: bool = root.cancel()
    """))
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                        "--cache-dir", str(tmp_path / "cache"), str(prog)],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_call_later_takes_seconds_as_asyncio(vtool):
    """On virtual time: the order is the timers' due order, and the clock
    shows each delay was read in its unit."""
    tool = vtool
    order = []
    stamp = lambda what: order.append((what, tool.time()))
    h = tool.call_later(0.03, stamp, "later")     # 30 ms, as asyncio
    tool.deferred(5, lambda: stamp("deferred 5 ms"))  # FTN12: ms
    tool.call_soon(stamp, "soon")
    dropped = tool.call_later(0.01, stamp, "cancelled")
    dropped.cancel()
    assert dropped.cancelled() and not h.cancelled()
    drive(tool)
    assert order == [("soon", 0.0), ("deferred 5 ms", 0.005), ("later", 0.03)]
    # same meaning as asyncio's call_later(delay, callback, *args)
    assert list(inspect.signature(Tool.call_later).parameters)[:3] == [
        "self", "delay", "callback"]


def test_step_return_value_is_its_result(tool):
    got = []
    r = AsyncSteps(tool).add(lambda asi: 41).add(lambda asi, v: v + 1)
    r.add(lambda asi, v: (v, "two")).add(lambda asi, a, b: got.append((a, b)))
    r.add(lambda asi: "last")
    assert r.run() == "last" and got == [(42, "two")]
    # chaining returns (add() gives self back) are not values
    assert AsyncSteps(tool).add(lambda asi: asi.add(lambda asi: asi.success(7))).run() == 7


def test_step_returning_a_value_and_completing_is_an_error(tool):
    def both(asi):
        asi.success(1)
        return 2
    with pytest.raises(FutoInError) as ei:
        AsyncSteps(tool).add(both).run()
    assert ei.value.code == "InternalError"
    assert isinstance(ei.value.__cause__, TypeError)

    def wait_and_return(asi):
        asi.wait_external()
        return 3
    with pytest.raises(FutoInError) as ei:
        AsyncSteps(tool).add(wait_and_return).run()
    assert isinstance(ei.value.__cause__, TypeError)

    # set_timeout()/set_cancel() alone make the step wait too (rule 1, §1.3)
    for wait in (lambda asi: asi.set_timeout(1000),
                 lambda asi: asi.set_cancel(lambda asi: None)):
        def waits_and_returns(asi, wait=wait):
            wait(asi)
            return 4
        with pytest.raises(FutoInError) as ei:
            AsyncSteps(tool).add(waits_and_returns).run()
        assert ei.value.code == "InternalError"
        assert isinstance(ei.value.__cause__, TypeError)
        assert "set_timeout()/set_cancel()" in str(ei.value.__cause__)


def test_async_def_step_is_awaited():
    async def fetch(asi, v):
        await asyncio.sleep(0)
        return v * 2

    async def main():
        root = AsyncSteps(Tool()).add(lambda asi: 21).add(fetch)
        return await root
    assert asyncio.run(main()) == 42


def test_tool_and_root_are_context_managers():
    log = []
    with Tool() as tool:
        with AsyncSteps(tool) as root:
            def step(asi):
                asi.set_cancel(lambda asi: log.append("cancelled"))
                asi.wait_external()
            root.add(step).execute()
            tool.run_nowait()
        assert not root.is_valid() and log == ["cancelled"]
        assert AsyncSteps(tool).add(lambda asi: 5).run() == 5
        kept = AsyncSteps(tool)  # still referenced when the tool closes
        kept.add(lambda asi: 6)
    assert tool.closed and not kept.is_valid()
    with pytest.raises(RuntimeError):
        kept.add(lambda asi: 7)
    with pytest.raises(RuntimeError):
        AsyncSteps(tool)
    with fa.Mutex() as mtx:
        assert mtx.ptr
    assert mtx.ptr == 0


def test_readme_block_for_a_fresh_debian_12():
    readme = (REPO / "bindings" / "python" / "README.md").read_text()
    m = re.search(r"#+ [^\n]*fresh Debian 12[^\n]*\n.*?```sh\n(.*?)```", readme, re.S)
    assert m, "no ```sh block after a 'fresh Debian 12' heading"
    block = m.group(1)
    for needed in ("apt-get install", "python3 -m venv", "--system-site-packages",
                   "python3 -m build --no-isolation", "pytest"):
        assert needed in block, needed
    assert re.search(r'/pip"? install --no-index', block)
    # what it installs is what a fresh machine gets from .ci/setup
    setup = (REPO / ".ci" / "setup").read_text()
    apt = re.search(r"apt-get install -y ([^\n]*)", block).group(1).split()
    assert [p for p in apt if not p.startswith("-") and p not in setup] == []
    # every command line in the block is one a shell can run as-is
    assert "..." not in block and "/path/to" not in block
