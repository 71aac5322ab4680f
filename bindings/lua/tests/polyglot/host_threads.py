"""Lua steps under a Python host program, on two loop threads at once.

Each Python thread has its own Tool and runs flows that add Lua steps by
name (bindings/lua/tests/polyglot/host_steps.lua): every thread gets a Lua
state of its own (a global one thread sets is not seen by the other),
asi:tool() in Lua is that thread's Tool with working timers (an
immediate, then a deferred callback) and new roots (gone once the flow
ended: the thread closes its Tool after), and a Lua error
reaches Python as InternalError with its message and the Lua traceback in
error_info. At the end the process holds one libfutoin_async and one
libuv (/proc/self/maps). Run by bindings/lua/polyglot.sh test twice: with
the environment of tests/polyglot/run.sh (PYTHONPATH: the wheel; LUA_PATH,
LUA_CPATH), and under `env -i` with the rock installed in a tree of its
own (PATH, PYTHONPATH, what `luarocks path` sets); the library finds the
Lua plug-in through LUA_CPATH. Last line: "lua-under-python: N passed, M
failed".
"""
import sys
import threading

from futoin_async import AsyncSteps, Tool

passed = 0
failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL [lua under python] {what}", file=sys.stderr)


def lua_step(tool, give, fn):
    """A flow on `tool`: a Python step giving `give`, then host_steps.<fn>.
    Returns its result, or ("error", code, error_info)."""
    seen = []
    root = AsyncSteps(tool)

    def outer(asi):
        asi.add(lambda a: a.success(give))
        asi.add_foreign("lua", "host_steps", fn)

    def handler(asi, code):
        seen.append(("error", code, asi.error_info))
        asi.success()

    root.add(outer, handler)
    got = root.run()
    return seen[0] if seen else got


def loop_thread(name, ready, out):
    try:
        tool = Tool()
        ready.wait()
        out["first"] = lua_step(tool, name, "mark")
        out["second"] = lua_step(tool, name + "-again", "mark")
        out["timers"] = lua_step(tool, 20, "timers")
        out["fail"] = lua_step(tool, name, "fail")
        tool.close()  # no root Lua made on it is left
        out["closed"] = True
    except BaseException as e:  # reported by the main thread
        out["exception"] = repr(e)


def mapped(needle):
    """The distinct files of /proc/self/maps whose name holds `needle`."""
    with open("/proc/self/maps") as f:
        return sorted({line.split(None, 5)[5].strip() for line in f
                       if len(line.split(None, 5)) == 6 and needle in line.split(None, 5)[5]})


def main():
    ready = threading.Barrier(2)
    outs = {"left": {}, "right": {}}
    threads = [threading.Thread(target=loop_thread, args=(n, ready, outs[n])) for n in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name, out in outs.items():
        check("exception" not in out and out.get("closed"),
              f"{name}: {out.get('exception')} (closing its Tool)")
        check(out.get("first") == "none" and out.get("second") == name,
              f"{name}: the Lua globals are not this thread's own: "
              f"{out.get('first')!r}, {out.get('second')!r}")
        check(out.get("timers") == (40, "immediate,deferred,root"),
              f"{name}: asi:tool() timers and new_instance(): {out.get('timers')!r}")
        fail = out.get("fail") or ("", "", "")
        check(fail[0] == "error" and fail[1] == "InternalError"
              and f"lua failed on {name}" in (fail[2] or "")
              and "stack traceback:" in (fail[2] or ""),
              f"{name}: a Lua error in Python: {fail!r}")
    # one libfutoin_async (the wheel's; the rock's core.so bound to it by
    # soname) and one libuv (luv's is the system one, as the runtime's)
    for lib in ("libfutoin_async.so", "libuv.so"):
        paths = mapped(lib)
        check(len(paths) == 1, f"{lib} mapped {len(paths)} times: {paths}")
    print(f"lua-under-python: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
