"""Python steps in flows hosted by Lua and Java programs (issue 23): an
`async def` step awaiting asyncio.sleep() passes its values on, a step's
timer of the hosting loop (asi.tool) completes it, and cancelling the flow
raises CancelledError inside the coroutine, and after 1,000 async flows the
plug-in's counters are back at baseline (fragments async_echo, timer_echo,
async_wait, async_seen, host_counters of tests/polyglot/fragments/python).
Issue 18: a Python step raising SystemExit or KeyboardInterrupt fails with
InternalError that the host's error handler sees (system_exit,
keyboard_interrupt; an `async def` step's too, printing nothing:
async_system_exit, async_keyboard_interrupt), and a CPython that cannot
start (a broken PYTHONHOME) fails the Python steps with InvalidRequest,
never the host process.
Run by `bash bindings/python/polyglot.sh test` with the environment
tests/polyglot/run.sh exports (LUA_PATH/LUA_CPATH of the Lua rock,
FUTOIN_JAVA_POLYGLOT_OUT of the Java build, PYTHONPATH: the package,
through which the library finds the Python plug-in, and the fragments);
a host whose build is not there is skipped."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

LUA_HOST = r"""
local fa = require "futoin_async"
local tool = fa.Tool()
local function python(fn, ...)
    local root = fa.AsyncSteps(tool)
    local values = table.pack(...)
    if values.n > 0 then
        root:add(function(asi) return table.unpack(values, 1, values.n) end)
    end
    root:add_foreign("python", "polyglot_fragments", fn)
    return root:run()
end
print("async_echo", python("async_echo", 20, "x"))
print("timer_echo", python("timer_echo", 21))
local root = fa.AsyncSteps(tool)
root:add_foreign("python", "polyglot_fragments", "async_wait")
local ended = false
root:execute(nil, function() ended = true end)
local function poll() -- until the coroutine runs: the loop's order, no deadline
    if root:state().started then root:cancel()
    elseif not ended then tool:deferred(1, poll) end
end
tool:deferred(1, poll)
tool:run()
print("cancel", python("async_seen"))
-- 1,000 async flows: the plug-in's counters come back, Python keeps no
-- block per flow (measured after the flows above filled the caches)
local before = python("host_counters")
for _ = 1, 1000 do assert(select(2, python("async_echo", 1, "y")) == "y") end
print("counters", before, python("host_counters"))
"""

JAVA_HOST = r"""
import org.futoin.async.*;

public class PyAsyncHost {
    static Object python(Tool tool, String fn, Object... values) {
        AsyncSteps root = new AsyncSteps(tool);
        if (values.length > 0) {
            root.successStep(values);
        }
        root.addForeign("python", "polyglot_fragments", fn);
        Object r = root.run();
        root.close();
        return r;
    }

    static String show(Object r) {
        if (r instanceof Object[]) {
            return java.util.Arrays.toString((Object[]) r);
        }
        return String.valueOf(r);
    }

    public static void main(String[] args) {
        try (Tool tool = new Tool()) {
            System.out.println("async_echo " + show(python(tool, "async_echo", 20L, "x")));
            System.out.println("timer_echo " + show(python(tool, "timer_echo", 21L)));
            AsyncSteps root = new AsyncSteps(tool);
            root.addForeign("python", "polyglot_fragments", "async_wait");
            boolean[] ended = {false};
            root.execute(e -> ended[0] = true);
            Runnable[] poll = new Runnable[1];
            poll[0] = () -> { // until the coroutine runs: the loop's order, no deadline
                if (Boolean.TRUE.equals(root.state().get("started"))) {
                    root.cancel();
                } else if (!ended[0]) {
                    tool.deferred(1, poll[0]);
                }
            };
            tool.deferred(1, poll[0]);
            tool.run();
            System.out.println("cancel " + show(python(tool, "async_seen")));
            root.close();
            // 1,000 async flows: the plug-in's counters come back, Python
            // keeps no block per flow (after the flows above filled the caches)
            Object before = python(tool, "host_counters");
            for (int i = 0; i < 1000; ++i) {
                if (!"[1, y]".equals(show(python(tool, "async_echo", 1L, "y")))) {
                    throw new AssertionError("flow " + i);
                }
            }
            System.out.println("counters " + before + " " + python(tool, "host_counters"));
        }
    }
}
"""


# For each Python function named on the command line: a flow of 20 -> that
# function of polyglot_fragments, whose error handler passes on "error", the
# code and error_info's first line; prints the name and what the flow gave,
# tab-separated, then "exit" (the host goes on and ends its normal way).
LUA_ERROR_HOST = r"""
local fa = require "futoin_async"
local tool = fa.Tool()
for _, fn in ipairs(arg) do
    local root = fa.AsyncSteps(tool)
    root:add(function(asi) return 20 end)
    root:add_foreign("python", "polyglot_fragments", fn, function(asi, code)
        asi:success("error", code, asi:state().error_info:match("[^\n]*"))
    end)
    print(fn, root:run())
end
print("exit")
"""

JAVA_ERROR_HOST = r"""
import java.util.Collections;
import java.util.List;
import org.futoin.async.*;

public class PyErrorHost {
    public static void main(String[] args) {
        try (Tool tool = new Tool()) {
            for (String fn : args) {
                try (AsyncSteps root = new AsyncSteps(tool)) {
                    root.add(asi -> {
                        asi.successStep(20L);
                        asi.addForeign("python", "polyglot_fragments", fn);
                    }, (asi, code) -> asi.success("error", code,
                                                  asi.errorInfo().split("\n", 2)[0]));
                    Object r = root.run();
                    StringBuilder line = new StringBuilder(fn);
                    List<?> values = r instanceof List ? (List<?>) r : Collections.singletonList(r);
                    for (Object v : values) {
                        line.append('\t').append(v);
                    }
                    System.out.println(line);
                }
            }
        }
        System.out.println("exit");
    }
}
"""


def run_lua(tmp_path, source, *args, **env):
    """lua5.4 running `source` with `args` (and `env` added), or a skip
    when there is no lua5.4 or no Lua rock."""
    lua = shutil.which("lua5.4")
    if not lua or not os.environ.get("LUA_CPATH"):
        pytest.skip("no lua5.4 or no Lua rock (LUA_PATH/LUA_CPATH of tests/polyglot/run.sh)")
    (tmp_path / "host.lua").write_text(source)
    return subprocess.run([lua, str(tmp_path / "host.lua"), *args], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, **env))


def run_java(tmp_path, source, *args, **env):
    """The Java program `source` (its class first) run from source with the
    jar, or a skip when there is no Java build."""
    out = os.environ.get("FUTOIN_JAVA_POLYGLOT_OUT")
    java_home = os.environ.get("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")
    java = pathlib.Path(java_home, "bin", "java")
    if not out or not (pathlib.Path(out) / "futoin-async.jar").is_file() or not java.is_file():
        pytest.skip("no Java build (FUTOIN_JAVA_POLYGLOT_OUT of tests/polyglot/run.sh)")
    src = tmp_path / "Host.java"
    src.write_text(source)
    return subprocess.run([str(java), "-Xrs", "-cp", str(pathlib.Path(out) / "futoin-async.jar"),
                           str(src), *args], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **env))


ERROR_HOSTS = {"lua": (run_lua, LUA_ERROR_HOST), "java": (run_java, JAVA_ERROR_HOST)}


def assert_back_at_baseline(line, flows=1000):
    """`line`: "counters S P L B S' P' L' B'" (host_counters before and
    after `flows` async flows): starts, stops and live step data equal,
    and allocated blocks grew by less than half a block per flow (a leaked
    object per flow would be `flows` blocks or more)."""
    word, *nums = line.split()
    assert word == "counters" and len(nums) == 8, line
    before, after = [int(n) for n in nums[:4]], [int(n) for n in nums[4:]]
    assert after[:3] == before[:3], f"starts, stops, live: {before[:3]} -> {after[:3]}"
    assert after[3] - before[3] < flows // 2, f"allocated blocks {before[3]} -> {after[3]}"


def test_a_lua_host_runs_python_async_and_timer_steps(tmp_path):
    r = run_lua(tmp_path, LUA_HOST)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[:3] == ["async_echo\t20\tx", "timer_echo\t21",
                         "cancel\tCancelledError"], r.stdout + r.stderr
    assert_back_at_baseline(lines[3].replace("\t", " "))


def test_a_java_host_runs_python_async_and_timer_steps(tmp_path):
    r = run_java(tmp_path, JAVA_HOST)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[:3] == ["async_echo [20, x]", "timer_echo 21",
                         "cancel CancelledError"], r.stdout + r.stderr
    assert_back_at_baseline(lines[3])


@pytest.mark.parametrize("host", sorted(ERROR_HOSTS))
def test_system_exit_or_interrupt_in_a_lua_or_java_host_fails_the_step(tmp_path, host):
    """No Python run() is there to re-raise them: the step fails with
    InternalError naming the exception, which the host's error handler
    sees (before the fix: a success); the host goes on (Python too) and
    exits 0."""
    run, source = ERROR_HOSTS[host]
    r = run(tmp_path, source, "system_exit", "keyboard_interrupt", "echo")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "system_exit\terror\tInternalError\tSystemExit: 3",
        "keyboard_interrupt\terror\tInternalError\tKeyboardInterrupt",
        "echo\t20",
        "exit"], r.stdout + r.stderr


@pytest.mark.parametrize("host", sorted(ERROR_HOSTS))
def test_system_exit_or_interrupt_in_an_async_step_of_a_lua_or_java_host_prints_nothing(
        tmp_path, host):
    """An `async def` step raising them, straight away or after an await:
    the step fails as a plain step's does, and the exception is not printed
    too (before: "Exception ignored in: <_Soon Task…>" and its traceback on
    the host's stderr, from the Tool's event loop)."""
    run, source = ERROR_HOSTS[host]
    r = run(tmp_path, source, "async_system_exit", "async_keyboard_interrupt", "echo")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "async_system_exit\terror\tInternalError\tSystemExit: 3",
        "async_keyboard_interrupt\terror\tInternalError\tKeyboardInterrupt",
        "echo\t20",
        "exit"], r.stdout + r.stderr
    assert "Exception ignored" not in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("host", sorted(ERROR_HOSTS))
def test_cpython_that_cannot_start_fails_the_step_of_a_lua_or_java_host(tmp_path, host):
    """A broken PYTHONHOME: Py_InitializeEx() would exit the host process
    with status 1. The Python steps fail with InvalidRequest naming why,
    now and later; the host handles it, goes on and exits 0."""
    run, source = ERROR_HOSTS[host]
    r = run(tmp_path, source, "echo", "echo", PYTHONHOME=str(tmp_path / "no-such-home"))
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-2000:])
    lines = r.stdout.splitlines()
    assert len(lines) == 3 and lines[2] == "exit", lines
    fn, error, code, info = lines[0].split("\t")
    assert (fn, error, code) == ("echo", "error", "InvalidRequest"), lines
    why = "python: cannot start CPython: "
    if sys.version_info[:2] == (3, 11):  # CPython's own words differ by version
        why += ("init_fs_encoding: failed to get the Python codec of the "
                "filesystem encoding")
    assert info.startswith(why) and "(adding polyglot_fragments.echo)" in info, info
    assert "(check PYTHONHOME and PYTHONPATH)" in info, info
    assert lines[1] == lines[0], lines  # the same, later too
