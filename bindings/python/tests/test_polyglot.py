"""Python in polyglot flows (issue 14), within this suite: steps of other
languages by name (add_foreign), the python host itself, the origins of
Python steps and the async stack of an error, the shared state store, and
the host plug-in the wheel ships. The full matrix with Lua and Java is
bindings/python/polyglot.sh test (tests/polyglot/run.sh)."""
import ctypes
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import traceback

import pytest

import futoin_async as fa
from futoin_async import AsyncSteps, _core

ROOT = pathlib.Path(__file__).resolve().parents[3]
PKG = pathlib.Path(fa.__file__).resolve().parent
C_FRAGMENTS = ROOT / "tests" / "polyglot" / "fragments" / "c" / "polyglot_fragments.c"
PLUGIN = PKG / "futoin-hosts" / "libfutoin_host_python.so"


@pytest.fixture
def pymod(tmp_path, monkeypatch):
    """Write a module into a folder on sys.path; returns its name."""
    monkeypatch.syspath_prepend(str(tmp_path))
    made = []

    def make(name, source):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        made.append(name)
        return name

    yield make
    for name in made:
        sys.modules.pop(name, None)


@pytest.fixture(scope="module")
def cfrag(tmp_path_factory):
    """The C fragments of the matrix, linked to the package's library (the
    one loaded here: the same soname)."""
    if not C_FRAGMENTS.exists() or not shutil.which("cc"):
        pytest.skip("the C fragments or a C compiler are missing")
    so = tmp_path_factory.mktemp("cfrag") / "libpolyglot_fragments.so"
    subprocess.run(["cc", "-std=c11", "-O1", "-shared", "-fPIC",
                    "-fvisibility=hidden", "-DFUTOIN_BUILDING_LIBRARY",
                    "-I", str(ROOT / "abi"), "-o", str(so), str(C_FRAGMENTS),
                    str(PKG / "libfutoin_async.so.0")], check=True)
    return str(so)


def run_flow(tool, *steps):
    root = AsyncSteps(tool)
    for s in steps:
        if isinstance(s, tuple):
            root.add_foreign(*s)
        else:
            root.add(s)
    return root.run()


# ---- steps by name --------------------------------------------------------------

def test_a_python_function_by_name(tool, pymod):
    mod = pymod("pg_named", """
        def double(asi, v):
            asi.success(v * 2)

        class Box:
            @staticmethod
            def inc(asi, v):
                return v + 1
    """)
    assert run_flow(tool, lambda asi: 20, ("python", mod, "double"),
                    ("python", mod, "Box.inc")) == 41


def test_a_c_function_by_name_through_libffi(tool):
    assert run_flow(tool, lambda asi: (3.0, 4.0),
                    ("c", "libm.so.6", "double hypot(double, double)")) == 5.0


def test_values_cross_to_c_and_back(tool, cfrag):
    values = (42, 2.5, True, "h\u00e9llo")
    assert run_flow(tool, lambda asi: values, ("c", cfrag, "echo")) == values
    assert run_flow(tool, lambda asi: (b"\x00\x01\xff", [1, 2, 3], [0.5, 1.5]),
                    ("c", cfrag, "describe")) == "bytes:0001ff,ints:1|2|3,floats:0.5|1.5"


@pytest.mark.parametrize("language, module, function, says", [
    ("python", "pg_no_such_module", "f",
     "python: cannot import module 'pg_no_such_module' (for pg_no_such_module.f): "
     "ModuleNotFoundError: No module named 'pg_no_such_module'"),
    ("python", "os", "no_such_function", "python: module 'os' has no function 'no_such_function'"),
    ("python", "os", "sep", "python: os.sep is not a function (str)"),
    ("c", "libm.so.6", "double no_such(double)", "c: module 'libm.so.6' has no function 'no_such'"),
    ("cobol", "payroll", "run",
     "no host for language 'cobol': no plug-in libfutoin_host_cobol.so found"),
])
def test_what_cannot_be_had_fails_the_flow_with_invalid_request(tool, language, module,
                                                                function, says):
    root = AsyncSteps(tool)
    root.add_foreign(language, module, function)
    root.add(lambda asi: pytest.fail("must not run"))
    with pytest.raises(fa.InvalidRequest) as ei:
        root.run()
    assert says in ei.value.info


def test_a_module_that_fails_to_import_is_named_with_its_error(tool, pymod):
    mod = pymod("pg_broken", "def f(asi:\n")
    root = AsyncSteps(tool)
    root.add_foreign("python", mod, "f")
    with pytest.raises(fa.InvalidRequest) as ei:
        root.run()
    assert ei.value.info.startswith(
        "python: cannot import module 'pg_broken' (for pg_broken.f): SyntaxError")


def test_add_foreign_checks_its_arguments_at_the_call_site(tool):
    root = AsyncSteps(tool)
    with pytest.raises(TypeError):
        root.add_foreign("python", b"os", "getcwd")
    with pytest.raises(ValueError):
        root.add_foreign("python", "o\0s", "getcwd")
    root.add(lambda asi: None)
    root.execute()
    with pytest.raises(fa.InvalidStateError):
        root.add_foreign("python", "os", "getcwd")  # on a root while it runs
    tool.run()


def test_onerror_of_add_foreign_is_python(tool, cfrag):
    seen = []

    def handler(asi, code):
        seen.append((code, asi.error_info))
        asi.success("caught")

    root = AsyncSteps(tool)
    root.add_foreign("c", cfrag, "fail", onerror=handler)
    assert root.run() == "caught"
    assert seen == [("FragmentError", "c")]


def test_an_error_of_a_c_step_is_caught_by_its_code_class(tool, cfrag):
    with pytest.raises(fa.errors.FragmentError) as ei:
        run_flow(tool, ("c", cfrag, "fail"))
    assert ei.value.code == "FragmentError" and ei.value.info == "c"


def test_a_python_error_is_caught_by_a_c_handler(tool, cfrag, pymod):
    mod = pymod("pg_fail", """
        def fail(asi):
            raise ValueError("bad")
    """)
    root = AsyncSteps(tool)
    root.add(lambda asi: asi.success("python", mod, "fail"))
    root.add_foreign("c", cfrag, "catch")
    assert root.run() == "caught InternalError in c"


def test_the_host_releases_what_it_resolved(tool, pymod):
    mod = pymod("pg_count", "def f(asi):\n    pass\n")
    live0 = _core._host_counters()[2]
    for _ in range(100):
        run_flow(tool, ("python", mod, "f"))
        root = AsyncSteps(tool)
        root.add_foreign("python", mod, "f")
        root.free()  # dropped unrun
    assert _core._host_counters()[2] == live0 == 0
    assert _core._pending_releases() == 0


# ---- origins and the async stack ----------------------------------------------

def failing_step(asi):
    asi.error("Deep", "inner")


class Stepper:
    def method(self, asi):
        asi.add(failing_step)

    def __call__(self, asi):
        asi.add(self.method)


def test_the_async_stack_names_python_steps_where_they_were_written(tool):
    stacks = []

    def outer(asi):
        asi.add(Stepper())

    def handler(asi, code):
        stacks.append(asi.async_stack)
        asi.success()

    run_flow(tool, lambda asi: asi.add(outer, handler))
    (st,) = stacks
    assert isinstance(st, fa.AsyncStack) and st.code == "Deep"
    # every frame: module.function (qualified), file:line (issue 23)
    mod = failing_step.__module__
    assert [(f.language, f.function) for f in st[:4]] == [
        ("python", f"{mod}.failing_step"), ("python", f"{mod}.Stepper.method"),
        ("python", f"{mod}.Stepper.__call__"),  # a callable object: its __call__
        ("python", f"{mod}.{outer.__qualname__}")]
    assert st[0].file == __file__ and st[0].line == failing_step.__code__.co_firstlineno
    assert st[1].line == Stepper.method.__code__.co_firstlineno
    assert st[2].file == __file__ and st[2].line == Stepper.__call__.__code__.co_firstlineno
    assert st[3].line == outer.__code__.co_firstlineno
    assert st[-1].function.endswith("<lambda>") and st[-1].file == __file__
    text = st.format()
    assert text.splitlines()[0] == "Async stack of Deep (most recent step last):"
    assert text.splitlines()[-1] == (
        f'  [python] File "{__file__}", line {st[0].line}, in {mod}.failing_step')


def test_the_frame_of_add_foreign_with_onerror_is_the_users_call(tool, cfrag):
    """Before: the binding's own file (_steps.py) and its guard's name."""
    frames = []

    def handler(asi, code):
        frames.extend(asi.async_stack)
        asi.success()

    def python_step(asi):
        asi.add_foreign("c", cfrag, "fail", onerror=handler)

    run_flow(tool, python_step)
    mod = python_step.__module__
    assert frames[0].language == "c" and frames[0].function == "fail"
    assert (frames[1].language, frames[1].function, frames[1].file, frames[1].line) == (
        "python", f"{mod}.{python_step.__qualname__}", __file__,
        python_step.__code__.co_firstlineno + 1)  # the add_foreign() line
    assert (frames[2].function, frames[2].line) == (
        f"{mod}.{python_step.__qualname__}", python_step.__code__.co_firstlineno)


def test_an_awaited_coroutine_is_framed_where_it_waits(tool):
    """await_(coroutine): before, the binding's C trampoline in _core."""
    import asyncio
    frames = []

    async def waits_forever():
        await asyncio.sleep(3600)

    def outer(asi):
        asi.set_timeout(5)
        asi.await_(waits_forever())

    def handler(asi, code):
        frames.extend(asi.async_stack)
        asi.success(code)

    assert AsyncSteps(tool).add(outer, handler).run() == "Timeout"
    mod = outer.__module__
    coro = [f for f in frames if f.function.endswith("waits_forever")]
    assert coro, frames
    assert (coro[0].language, coro[0].function, coro[0].file, coro[0].line) == (
        "python", f"{mod}.{waits_forever.__qualname__}", __file__,
        waits_forever.__code__.co_firstlineno + 1)  # the line it waits at


def test_an_async_step_that_fails_is_framed_at_its_definition(tool):
    import asyncio
    frames = []

    async def fails(asi):
        await asyncio.sleep(0)
        raise KeyError("k")

    def handler(asi, code):
        frames.extend(asi.async_stack)
        asi.success(asi.error_info)

    info = AsyncSteps(tool).add(fails, handler).run()
    assert (frames[0].function, frames[0].file, frames[0].line) == (
        f"{fails.__module__}.{fails.__qualname__}", __file__, fails.__code__.co_firstlineno)
    assert info.splitlines()[0] == "'k'" and 'raise KeyError("k")' in info


def test_the_exception_from_run_carries_the_stack_in_its_traceback(tool, cfrag):
    def python_outer(asi):
        asi.add_foreign("c", cfrag, "fail")

    root = AsyncSteps(tool)
    root.add(python_outer)
    with pytest.raises(fa.FutoInError) as ei:
        root.run()
    st = ei.value.async_stack
    assert st[0].language == "c" and st[0].function == "fail" and st[0].file == cfrag
    assert st[1].function.endswith("python_outer")
    shown = "".join(traceback.format_exception(ei.value))
    assert f'[c] File "{cfrag}", in fail' in shown
    assert "in " + st[1].function in shown


def test_no_stack_before_an_error(tool):
    seen = []
    run_flow(tool, lambda asi: seen.append(asi.async_stack))
    assert seen == [None]


# ---- shared state -------------------------------------------------------------

def test_state_is_shared_with_c_both_ways(tool, cfrag):
    seen = []
    root = AsyncSteps(tool)
    root.add(lambda asi: asi.state.__setitem__("key", 42))
    root.add_foreign("c", cfrag, "read_state")
    root.add(lambda asi, v: seen.append(v))
    root.add_foreign("c", cfrag, "write_state")
    root.add(lambda asi: seen.append((asi.state["from_c"], "from_c" in asi.state,
                                      asi.state.from_c, asi.state.get("from_c"))))
    root.run()
    assert seen == [42, ("c", True, "c", "c")]
    assert root.state["from_c"] == "c"  # through the root, after the flow


def test_state_values_that_do_not_cross_stay_python(tool, cfrag):
    marker = object()
    root = AsyncSteps(tool)
    root.state["key"] = 1
    root.state["key"] = marker  # replaces the shared 1: C must not see it
    root.add_foreign("c", cfrag, "read_state")
    assert root.run() is None
    assert root.state["key"] is marker


def test_a_list_keeps_its_python_identity_and_changes(tool, cfrag):
    root = AsyncSteps(tool)
    items = [1, 2]
    root.state["key"] = items
    root.add(lambda asi: asi.state["key"].append(3))
    root.add(lambda asi: asi.state["key"])
    assert root.run() == [1, 2, 3]
    assert root.state["key"] is items


def test_a_value_another_language_wrote_wins(tool, cfrag):
    root = AsyncSteps(tool)
    root.state["from_c"] = "python's"
    root.add_foreign("c", cfrag, "write_state")
    root.add(lambda asi: asi.state["from_c"])
    assert root.run() == "c"
    del root.state["from_c"]
    assert "from_c" not in root.state
    root.state.setdefault("from_c", "again")
    assert root.state.pop("from_c") == "again"
    assert root.state.get("from_c", 7) == 7


def test_a_state_write_from_a_timer_reaches_the_next_c_step(tool, cfrag):
    def wait(asi):
        st = asi.state  # kept: no handle reaches the store from the timer
        st["key"] = 1
        asi.wait_external()

        def later():
            st["key"] = 7
            asi.success()
        tool.call_soon(later)
    assert run_flow(tool, wait, ("c", cfrag, "read_state")) == 7


def test_state_off_the_loop_thread_is_refused(tool):
    import threading
    root = AsyncSteps(tool)
    st = root.state
    errors = []

    def other():
        try:
            st["x"] = 1
        except RuntimeError as e:
            errors.append(e)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert len(errors) == 1


# ---- the plug-in --------------------------------------------------------------

def test_the_wheel_ships_the_plugin_without_libpython():
    assert PLUGIN.is_file()
    assert fa.host_path() == str(PLUGIN.parent)
    out = subprocess.run([sys.executable, "-m", "futoin_async", "--host-path"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(PLUGIN.parent)
    if shutil.which("readelf"):
        dyn = subprocess.run(["readelf", "-d", str(PLUGIN)], capture_output=True,
                             text=True, check=True).stdout
        assert "libpython" not in dyn and "libfutoin_async" not in dyn
        syms = subprocess.run(["readelf", "--dyn-syms", "-W", str(PLUGIN)],
                              capture_output=True, text=True, check=True).stdout
        exported = {line.split()[-1] for line in syms.splitlines()
                    if " UND " not in line and "GLOBAL" in line}
        assert exported == {"futoin_host_get", "python_host_counters"}


class HostStep(ctypes.Structure):
    _fields_ = [("execute", ctypes.c_void_p), ("error", ctypes.c_void_p),
                ("data", ctypes.c_void_p), ("cls", ctypes.c_void_p)]


START = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t)
RESOLVE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                           ctypes.POINTER(HostStep), ctypes.c_char_p, ctypes.c_size_t)
STOP = ctypes.CFUNCTYPE(None)


class HostApi(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("version", ctypes.c_uint32),
                ("language", ctypes.c_char_p), ("start", START),
                ("resolve", RESOLVE), ("stop", STOP)]


class StepClass(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32),
                ("release", ctypes.CFUNCTYPE(None, ctypes.c_void_p)),
                ("origin", ctypes.c_void_p)]


def test_the_plugin_attaches_to_this_interpreter_and_forwards(pymod, tool):
    """What a host program of another language gets, tried from here: the
    plug-in finds CPython running, imports futoin_async and resolves through
    _core (plain ctypes calls: the GIL is released around them)."""
    mod = pymod("pg_plugin", "def f(asi):\n    pass\n")
    lib = ctypes.CDLL(str(PLUGIN))
    api = ctypes.POINTER(HostApi)()
    assert lib.futoin_host_get(1, ctypes.byref(api)) == 0
    h = api.contents
    assert h.language == b"python" and h.version >= 1
    counters = [ctypes.c_int() for _ in range(3)]
    err = ctypes.create_string_buffer(512)
    assert h.start(tool.ptr, err, 512) == 0, err.value
    st = HostStep()
    assert h.resolve(b"pg_plugin", b"nope", ctypes.byref(st), err, 512) != 0
    assert err.value == b"python: module 'pg_plugin' has no function 'nope'"
    assert h.resolve(mod.encode(), b"f", ctypes.byref(st), err, 512) == 0, err.value
    lib.python_host_counters(*[ctypes.byref(c) for c in counters])
    assert counters[2].value == 1  # the step's data, until released
    cls = ctypes.cast(st.cls, ctypes.POINTER(StepClass)).contents
    cls.release(st.data)
    lib.python_host_counters(*[ctypes.byref(c) for c in counters])
    assert counters[2].value == 0
    h.stop()


C_HOST = r"""
#include <futoin/async.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>
#include <stdio.h>
#include <string.h>

static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};
static void give(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs o;
    memset(&o, 0, sizeof(o));
    o.arg0.type = &ty_i64;
    o.arg0.i64 = 20;
    as->api->success(as, &o);
}
static void show(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("value %lld\n", a->arg0.type ? (long long)a->arg0.i64 : -1LL);
}
static void on_error(FutoInAsyncSteps* as, void* d, const char* code)
{
    char text[2048] = "";
    futoin_async_stack_format(futoin_async_ext(as)->async_stack(as), text, sizeof(text));
    printf("error %s: %s\n%s", code, futoin_async_ext(as)->error_info(as), text);
}
int main(int argc, char** argv)
{
    futoin_tool* tool;
    FutoInAsyncSteps* as;
    futoin_tool_new(&tool, NULL);
    as = futoin_root_new(tool);
    as->api->add(as, NULL, give, NULL);
    futoin_host_add(as, "python", argv[1], argv[2]);
    as->api->add(as, NULL, show, NULL);
    as->api->execute(as, NULL, on_error);
    futoin_tool_run(tool);
    as->api->free(as);
    futoin_host_shutdown();
    return futoin_tool_free(tool);
}
"""


@pytest.fixture(scope="module")
def c_host(tmp_path_factory):
    """A C program (no Python in it) that adds a Python step by name."""
    if not shutil.which("cc"):
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("chost")
    (d / "host.c").write_text(C_HOST)
    exe = d / "host"
    subprocess.run(["cc", "-std=c11", "-O1", "-I", str(ROOT / "abi"), "-o", str(exe),
                    str(d / "host.c"), str(PKG / "libfutoin_async.so.0"),
                    f"-Wl,-rpath,{PKG}"], check=True)
    return exe


def run_c_host(exe, tmp_path, module, function, source=None, **env):
    if source is not None:
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
    e = dict(os.environ, PYTHONPATH=str(tmp_path), FUTOIN_HOST_PATH=str(PLUGIN.parent), **env)
    return subprocess.run([str(exe), module, function], capture_output=True, text=True,
                          env=e)


def test_a_c_program_runs_a_python_step_through_the_plugin(c_host, tmp_path):
    """The plug-in starts CPython in a process that has none (dlopen of
    libpython, Py_InitializeEx(0)), imports futoin_async from the folder it
    ships in (PYTHONPATH names only the user's module) and runs the step;
    what it printed is flushed by the last stop()."""
    r = run_c_host(c_host, tmp_path, "pg_c_host", "double", """
        import sys, futoin_async
        def double(asi, v):
            print("python", sys.version_info[:2], futoin_async.__file__.startswith(%r))
            asi.success(v * 2)
    """ % str(PKG))
    assert r.returncode == 0, r.stderr
    mine = f"python {tuple(sys.version_info[:2])} True"  # this CPython, this package
    assert sorted(r.stdout.splitlines()) == sorted(["value 40", mine])


def test_a_missing_libpython_is_a_clear_error_in_the_flow(c_host, tmp_path):
    r = run_c_host(c_host, tmp_path, "pg_c_host2", "f", "def f(asi, v):\n    pass\n",
                   FUTOIN_LIBPYTHON="libpython-no-such.so.1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("error InvalidRequest: python: cannot start CPython: "
                               "libpython-no-such.so.1: cannot open shared object file")
    assert "(adding pg_c_host2.f)" in r.stdout, r.stdout  # the step that wanted it


def test_a_python_error_in_a_c_program_carries_the_python_frame(c_host, tmp_path):
    r = run_c_host(c_host, tmp_path, "pg_c_host3", "fails", """
        def fails(asi, v):
            raise KeyError(v)
    """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # error_info: the text, then the Python traceback (issue 23)
    assert lines[:2] == ["error InternalError: 20", "Traceback (most recent call last):"]
    assert f'  File "{tmp_path / "pg_c_host3.py"}", line 3, in fails' in lines
    assert "    raise KeyError(v)" in lines and "KeyError: 20" in lines
    frames = [line for line in lines if line.startswith("  at ")]
    assert frames[0] == f"  at python pg_c_host3.fails ({tmp_path / 'pg_c_host3.py'}:2)"


@pytest.mark.parametrize("raise_it, info", [
    ("raise SystemExit(3)", "SystemExit: 3"),
    ("sys.exit('bye')", "SystemExit: bye"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
])
def test_system_exit_or_interrupt_in_a_c_program_fails_the_step(c_host, tmp_path, raise_it,
                                                               info):
    """No Python run() is there to re-raise them: the step fails with
    InternalError naming the exception (before: counted as a success), and
    the C program decides what to do (here: it goes on and exits 0)."""
    r = run_c_host(c_host, tmp_path, "pg_c_host_exit", "leave", f"""
        import sys
        def leave(asi, v):
            {raise_it}
    """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"error InternalError: {info}", r.stdout
    assert "value" not in r.stdout


@pytest.mark.parametrize("body, info", [
    ("sys.exit(3)", "SystemExit: 3"),
    ("await asyncio.sleep(0)\n    raise KeyboardInterrupt", "KeyboardInterrupt"),
    ("await asyncio.sleep(0.001)\n    sys.exit('bye')", "SystemExit: bye"),
])
def test_system_exit_or_interrupt_in_an_async_step_of_a_c_program_prints_nothing(
        c_host, tmp_path, body, info):
    """An `async def` step raising them (straight away, after an await)
    fails as a plain step's does, and the exception is not printed too
    (before: "Exception ignored in: <_Soon Task…>" and its traceback on the
    C program's stderr, from the Tool's event loop)."""
    (tmp_path / "pg_c_host_aexit.py").write_text(
        f"import asyncio, sys\nasync def leave(asi, v):\n    {body}\n")
    r = run_c_host(c_host, tmp_path, "pg_c_host_aexit", "leave")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"error InternalError: {info}", r.stdout
    assert "value" not in r.stdout
    assert "Exception ignored" not in r.stderr and "Traceback" not in r.stderr, r.stderr


C_HOST_MIXED = r"""
#include <futoin/async.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>
#include <stdio.h>
#include <string.h>

static const FutoInType ty_double = {FTN_TYPE_DOUBLE, NULL};
static void give(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs o;
    memset(&o, 0, sizeof(o));
    o.arg0.type = o.arg1.type = &ty_double;
    o.arg0.d = 3.0;
    o.arg1.d = 4.0;
    as->api->success(as, &o);
}
static void show(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("%s value %g\n", (const char*)d, a->arg0.type ? a->arg0.d : -1.0);
}
static void on_error(FutoInAsyncSteps* as, void* d, const char* code)
{
    printf("error %s: %s\n", code, futoin_async_ext(as)->error_info(as));
}
/* One flow: a step of `language` by name, then print what it gave. */
static void flow(futoin_tool* tool, const char* language, const char* module,
                 const char* function)
{
    FutoInAsyncSteps* as = futoin_root_new(tool);
    as->api->add(as, NULL, give, NULL);
    futoin_host_add(as, language, module, function);
    as->api->add(as, (void*)language, show, NULL);
    as->api->execute(as, NULL, on_error);
    futoin_tool_run(tool);
    as->api->free(as);
}
int main(int argc, char** argv)
{
    futoin_tool* tool;
    futoin_tool_new(&tool, NULL);
    flow(tool, "python", argv[1], argv[2]);
    flow(tool, "c", "libm.so.6", "double hypot(double, double)");
    flow(tool, "python", argv[1], argv[2]);
    futoin_host_shutdown();
    printf("exit\n");
    return futoin_tool_free(tool);
}
"""


def test_cpython_that_cannot_start_fails_the_step_not_the_program(tmp_path):
    """A broken PYTHONHOME: Py_InitializeEx() would exit the C program with
    status 1 (it did). The Python steps fail with InvalidRequest naming
    why, now and later; the program's other steps go on."""
    if not shutil.which("cc"):
        pytest.skip("no C compiler")
    (tmp_path / "mixed.c").write_text(C_HOST_MIXED)
    exe = tmp_path / "mixed"
    subprocess.run(["cc", "-std=c11", "-O1", "-I", str(ROOT / "abi"), "-o", str(exe),
                    str(tmp_path / "mixed.c"), str(PKG / "libfutoin_async.so.0"),
                    f"-Wl,-rpath,{PKG}"], check=True)
    (tmp_path / "pg_mixed.py").write_text("def half(asi, a, b):\n    return a / 2\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path), FUTOIN_HOST_PATH=str(PLUGIN.parent))
    ok = subprocess.run([str(exe), "pg_mixed", "half"], capture_output=True, text=True,
                        env=env)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines() == ["python value 1.5", "c value 5", "python value 1.5",
                                      "exit"]
    r = subprocess.run([str(exe), "pg_mixed", "half"], capture_output=True, text=True,
                       env=dict(env, PYTHONHOME=str(tmp_path / "no-such-home")))
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    lines = r.stdout.splitlines()
    why = "error InvalidRequest: python: cannot start CPython: "
    if sys.version_info[:2] == (3, 11):  # CPython's own words differ by version
        why += ("init_fs_encoding: failed to get the Python codec of the "
                "filesystem encoding")
    assert lines[0].startswith(why) and "(adding pg_mixed.half)" in lines[0], lines
    assert "(check PYTHONHOME and PYTHONPATH)" in lines[0]
    assert lines[1:] == ["c value 5", lines[0], "exit"], lines  # the same, later too
