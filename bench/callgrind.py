#!/usr/bin/python3
"""Instructions per operation, counted by callgrind: the stable measure on a
shared, noisy machine (bench/README.md, "Instructions per op").

usage: bench/callgrind.sh [BUILD_DIR] [--only a,b] [--python PY]
                          [--lua-tree TREE] [--java-jar JAR]
                          [--build-bindings] [--no-build] [--csv FILE]

Every op runs in two processes under `valgrind --tool=callgrind`, one doing
it N times and one 2N times; instructions per op = (I(2N) - I(N)) / N, so
start-up, set-up, warm-up and teardown cancel. One line per op:

    name: X instr/op

Only Debian's python3 standard library is needed.
"""

import argparse
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
SRC_DIR = os.path.dirname(BENCH_DIR)
REPORT_DIR = os.path.join(BENCH_DIR, "report")

# Targets of issue 22, in instructions per op (T2 in bytes per flow).
TARGETS = {"t1": 450, "t3": 900, "lua_success": 1500, "python_success": 1600}
T2_BYTES_TARGET = 256


class Op:
    """One operation: `argv(n)` runs it n times (n in the op's own unit);
    ops are read back from the process's output (BENCH ... ops=N, or OPS N),
    so a unit of n that covers many ops (a T2 batch) divides right."""

    def __init__(self, name, group, what, argv, n, env=None, reps=1,
                 seed_pad=False):
        self.name, self.group, self.what = name, group, what
        self.argv, self.n, self.env, self.reps = argv, n, env, reps
        self.seed_pad = seed_pad  # each rep under its own seed (Lua, below)


def c_ops(build, env=None):
    """The C ops; `env` (the held clock, below) for futoin_bench's."""
    fb = os.path.join(build, "bench", "futoin_bench")
    fl = os.path.join(build, "bench", "peers", "libuv_floor")
    fib = os.path.join(build, "bench", "peers", "fiber_bench")

    def bench(test):
        return lambda n: [fb, "--test", test, "--n", str(n)]

    def floor(impl, path, test):
        # the floors take --scale only: n is in units of 1/100,000 of the
        # default count (10,000,000 callbacks; 1,000,000 fibers for T1)
        return lambda n: [path, "--impl", impl, "--test", test,
                          "--scale", repr(n / 100000)]

    ops = [
        Op("t1", "C", "root + one empty step + run + free", bench("t1"), 20000),
        Op("t2", "C", "one waiting flow: root, 2 steps, waitExternal, "
           "success(1), free (steady batch of 30,000)", bench("t2"), 1),
        Op("t3", "C", "wake of a looping flow (30,000 flows)", bench("t3"),
           60000),
        Op("loop_iter", "C", "repeat() iteration, C body through the vtable",
           bench("loop_iter"), 100000),
        Op("immediate", "C", "futoin_tool_immediate() that posts the next",
           bench("immediate"), 100000),
        Op("add128", "C", "step of a root of 128 queued steps (add + run)",
           bench("add128"), 100),
    ]
    # A binding's steps (ext add_classed with a release, a trampoline):
    # chained with ext chain(), and through the core's own loop. Only a
    # bench that has them.
    if os.access(fb, os.X_OK) and "chain_ext" in sh([fb, "--list"]).stdout:
        ops += [
            Op("chain_ext", "C", "step of a root of 128 ext add_classed() "
               "steps, each chained by the one before (ext chain())",
               bench("chain_ext"), 100),
            Op("ext_steps", "C", "the same steps run by the core's loop "
               "(no chain())", bench("ext_steps"), 100),
        ]
    # The same with a counting hook set on the tool (futoin/sys/hooks.h):
    # what watching the flows costs. Only a bench that knows --hooks.
    if os.access(fb, os.X_OK) and not sh([fb, "--hooks", "none",
                                           "--list"]).returncode:
        def hooked(test):
            return lambda n: [fb, "--test", test, "--n", str(n), "--hooks",
                              "count"]
        ops += [
            Op("t1_hooks", "hooks", "T1 with a counting hook set",
               hooked("t1"), 20000),
            Op("t3_hooks", "hooks", "T3 with a counting hook set",
               hooked("t3"), 60000),
            Op("loop_iter_hooks", "hooks", "loop_iter with a counting hook "
               "set", hooked("loop_iter"), 100000),
            Op("immediate_hooks", "hooks", "immediate with a counting hook "
               "set", hooked("immediate"), 100000),
        ]
    for o in ops:  # futoin_bench's, so far
        o.env = env
    if os.access(fl, os.X_OK):
        ops += [
            Op("floor_libuv_ring", "floor", "libuv ring: pop + indirect call "
               "+ push", floor("libuv_ring", fl, "callbacks"), 1000),
            Op("floor_indirect_call", "floor", "call through a volatile "
               "pointer", floor("indirect_call", fl, "callbacks"), 1000),
        ]
    if os.access(fib, os.X_OK):
        ops.append(Op("fiber_pooled_t1", "floor", "Boost.Fiber: launch + "
                      "join an empty fiber (pooled 16 KiB stacks)",
                      floor("fiber_pooled", fib, "t1"), 2000))
    return ops


# Binding ops run N = 20,000 and 2N; both runs first warm up with WARM ops
# (pools and the language's heap grown to the larger run), so the warm-up
# cancels in the difference.
BINDING_N = 20000
WARM = 2 * BINDING_N
# A flow driven from asyncio is ~40,000 instructions (an asyncio loop turn
# each): fewer of them.
AIO_N = 2000
AIO_WARM = 2 * AIO_N


def python_ops(py, preload=None):
    """`preload` (the held clock, below) for the steps: their counts moved
    by up to 30 between runs of one build with the clock running (the
    time slice, as for Lua); the asyncio ops keep the clock asyncio
    schedules by."""
    script = os.path.join(BENCH_DIR, "python", "callgrind_ops.py")
    env = {"PYTHONHASHSEED": "0"}
    held = {**env, "LD_PRELOAD": preload} if preload else env

    def run(kind, warm=WARM):
        return lambda n: [py, script, kind, str(n), str(warm)]
    return [
        Op("python_step", "Python", "step `lambda asi: None` (add + run)",
           run("step"), BINDING_N, held),
        Op("python_success", "Python", "step `asi.success(v + 1)`",
           run("success"), BINDING_N, held),
        Op("python_floor_await", "Python", "floor: `await coro()`",
           run("await"), BINDING_N, env),
        Op("python_aioflow", "Python",
           "flow driven from asyncio: `await AsyncSteps(tool).await_(fut)`",
           run("aioflow", AIO_WARM), AIO_N, env),
        Op("python_floor_aiofut", "Python", "floor: `await fut` (call_soon'd)",
           run("aiofut", AIO_WARM), AIO_N, env),
    ]


# Lua seeds its string hashes with time(NULL) and with addresses, one of
# them on the C stack (lstate.c luai_makeseed): table layouts, and so the
# counts, move with the seed (by up to 4 % with the time; with the time
# fixed, by ~1.5 % with the size of the environment, which moves the
# stack). And the runtime's time slice (tool/tool.h: 1 ms of busy work per
# loop turn, the clock read about every 100 us of it) ends, and is read,
# some 50 times as often per step under callgrind as at native speed, each
# end sending a chained run through its slow path (~250 instructions):
# 10-40 instructions per Lua step under callgrind, following the wall
# clock and the load, where at native speed it is well under one. So Lua
# runs with a time() and a clock_gettime() that return a constant
# (LD_PRELOAD, built here with cc; the stride of clock reads then grows to
# its maximum, 4,096 steps, and these ops set no timers), and each op is
# the median of LUA_REPS pairs,
# each pair under its own seed: an environment variable FUTOIN_CG_SEED_PAD
# of 16 * rep bytes moves the stack. One seed alone could land on a lucky
# (or unlucky) table layout. Without cc, the clock runs and the median
# still holds.
LUA_REPS = 5
FIXED_TIME_C = ("#include <time.h>\n"
                "time_t time(time_t* t) { if (t) *t = 1; return 1; }\n"
                "int clock_gettime(clockid_t c, struct timespec* ts)\n"
                "{ (void)c; ts->tv_sec = 1; ts->tv_nsec = 0; return 0; }\n")


def fixed_time_preload(tmp):
    """Path of a shared object whose time() and clock_gettime() return a
    constant, or None."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    src, so = os.path.join(tmp, "fixed_time.c"), os.path.join(tmp,
                                                             "fixed_time.so")
    with open(src, "w") as f:
        f.write(FIXED_TIME_C)
    if sh([cc, "-shared", "-fPIC", "-O2", "-o", so, src]).returncode:
        return None
    return so


def lua_ops(lua_env, tmp):
    script = os.path.join(BENCH_DIR, "lua", "callgrind_ops.lua")
    reps = LUA_REPS
    preload = fixed_time_preload(tmp)
    if preload:
        lua_env = {**lua_env, "LD_PRELOAD": preload}

    def run(kind):
        return lambda n: ["lua5.4", script, kind, str(n), str(WARM)]
    return [
        Op("lua_step", "Lua", "step `function(asi) end` (add + run)",
           run("step"), BINDING_N, lua_env, reps, seed_pad=True),
        Op("lua_success", "Lua", "step `asi:success(v + 1)`", run("success"),
           BINDING_N, lua_env, reps, seed_pad=True),
        Op("lua_floor_coroutine", "Lua", "floor: coroutine resume/yield "
           "passing a value", run("coroutine"), BINDING_N, lua_env, reps,
           seed_pad=True),
    ]


# Java: N = 50,000 (the JIT needs a longer warm-up: WARM = 100,000 steps
# before the counted run). -Xbatch compiles in the foreground and the serial
# GC has no threads of its own, so what runs when no longer depends on how
# valgrind schedules the JVM's threads: two runs of the same N differ by
# ~0.06 % (without these flags by ~3 %, as much as N steps cost). Compiled
# code that relies on a SIGSEGV for a null check (C2's implicit null checks)
# kills the JVM under valgrind: explicit null checks instead.
JAVA_N = 50000
JAVA_FLAGS = ["-Xbatch", "-XX:+UseSerialGC", "-XX:-UsePerfData", "-Xms256m",
              "-XX:+UnlockDiagnosticVMOptions", "-XX:-ImplicitNullChecks"]


def java_ops(java, cp):
    def run(kind):
        return lambda n: [java] + JAVA_FLAGS + ["-cp", cp, "CallgrindOps",
                                                kind, str(n), str(2 * JAVA_N)]
    return [
        Op("java_step", "Java", "step `asi -> {}` (add + run)", run("step"),
           JAVA_N),
        Op("java_success", "Java", "step `asi.success(v + 1)`",
           run("success"), JAVA_N),
        Op("java_floor_thenApply", "Java", "floor: CompletableFuture "
           "`thenApply(v -> v + 1)`", run("thenApply"), JAVA_N),
        Op("java_floor_thenApplyDone", "Java", "floor, cheapest: "
           "`thenApply(v -> v + 1)` on a completed future", run("thenApplyDone"),
           JAVA_N),
        Op("java_peer_thenCompose", "Java", "fair peer: `thenCompose(v -> "
           "completedFuture(v + 1))`", run("thenCompose"), JAVA_N),
    ]


def sh(cmd, **kw):
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def build_core(build, no_build):
    if no_build:
        return
    if not os.path.exists(os.path.join(build, "build.ninja")):
        r = sh(["meson", "setup", build, "--buildtype=release"], cwd=SRC_DIR)
        if r.returncode:
            sys.exit("callgrind: meson setup failed:\n" + r.stdout + r.stderr)
    r = sh(["ninja", "-C", build])
    if r.returncode:
        sys.exit("callgrind: ninja failed:\n" + r.stdout[-3000:] + r.stderr)


def find_python(arg, build_bindings):
    """A python that imports futoin_async: --python, $FUTOIN_PY, the venv of
    bindings/python/test.sh (build/python/venv), Debian's python3, or (with
    --build-bindings) a venv built here from this checkout."""
    cands = [arg, os.environ.get("FUTOIN_PY"),
             os.path.join(SRC_DIR, "build", "python", "venv", "bin", "python"),
             os.path.join(REPORT_DIR, "python", "venv", "bin", "python"),
             "/usr/bin/python3"]
    for c in cands:
        if c and os.access(c, os.X_OK) and not sh(
                [c, "-c", "import futoin_async"]).returncode:
            return c, None
    if not build_bindings:
        return None, ("futoin_async not importable: run `bash "
                      "bindings/python/test.sh` or pass --python PY or "
                      "--build-bindings")
    out = os.path.join(REPORT_DIR, "python")
    r = sh(["bash", os.path.join(SRC_DIR, "bindings", "python", "build.sh"),
            out])
    whl = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    if r.returncode or not whl.endswith(".whl"):
        return None, "bindings/python/build.sh failed (see %s/build.log)" % out
    venv = os.path.join(out, "venv")
    shutil.rmtree(venv, ignore_errors=True)
    r = sh(["/usr/bin/python3", "-m", "venv", venv])
    py = os.path.join(venv, "bin", "python")
    if r.returncode or sh([os.path.join(venv, "bin", "pip"), "install", "-q",
                           "--no-index", "--no-deps", whl]).returncode:
        return None, "installing %s into %s failed" % (whl, venv)
    return py, None


def lua_tree_env(tree):
    r = sh(["luarocks", "--lua-version=5.4", "--tree", tree, "path"])
    env = {}
    for m in re.finditer(r"export (LUA_PATH|LUA_CPATH)='([^']*)'", r.stdout):
        env[m.group(1)] = m.group(2)
    return env


def find_lua(arg, build_bindings):
    """LUA_PATH/LUA_CPATH that find the futoin_async rock: --lua-tree, the
    tree of bindings/lua/build.sh (build/lua/tree), lua5.4's own paths, or
    (with --build-bindings) a tree built here from this checkout."""
    if not shutil.which("lua5.4"):
        return None, "no lua5.4"
    built = os.path.join(REPORT_DIR, "lua")
    for tree in [arg, os.path.join(SRC_DIR, "build", "lua", "tree"),
                 os.path.join(built, "tree"), ""]:
        if tree is None or (tree and not os.path.isdir(tree)):
            continue
        env = lua_tree_env(tree) if tree else {}
        if not sh(["lua5.4", "-e", 'require "futoin_async"'],
                  env={**os.environ, **env}).returncode:
            return env, None
    if not build_bindings:
        return None, ("the futoin_async rock is not found: run `bash "
                      "bindings/lua/build.sh` or pass --lua-tree TREE or "
                      "--build-bindings")
    r = sh(["bash", os.path.join(SRC_DIR, "bindings", "lua", "build.sh"),
            built])
    if r.returncode:
        return None, "bindings/lua/build.sh failed (see %s/make.log)" % built
    return lua_tree_env(os.path.join(built, "tree")), None


def find_java(build, arg, build_bindings, tmp):
    """(java, classpath) with the jar and CallgrindOps compiled: --java-jar,
    the jar of bindings/java/build.sh (build/java), the one bench/java/run.sh
    builds (BUILD_DIR/java), or (with --build-bindings) built here into
    BUILD_DIR/java against BUILD_DIR's core."""
    home = os.environ.get("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")
    java, javac = (os.path.join(home, "bin", x) for x in ("java", "javac"))
    if not (os.access(java, os.X_OK) and os.access(javac, os.X_OK)):
        return None, "no JDK 17 at %s (set JAVA_HOME)" % home
    jar = None
    for c in [arg, os.path.join(SRC_DIR, "build", "java", "futoin-async.jar"),
              os.path.join(build, "java", "futoin-async.jar")]:
        if c and os.path.isfile(c):
            jar = c
            break
    if jar is None:
        if not build_bindings:
            return None, ("no futoin-async.jar: run `bash "
                          "bindings/java/build.sh` or pass --java-jar JAR or "
                          "--build-bindings")
        out = os.path.join(build, "java")
        r = sh(["bash", os.path.join(SRC_DIR, "bindings", "java",
                                     "build.sh"), build, out])
        jar = os.path.join(out, "futoin-async.jar")
        if r.returncode or not os.path.isfile(jar):
            return None, "bindings/java/build.sh failed:\n" + r.stderr[-600:]
    classes = os.path.join(tmp, "java")
    r = sh([javac, "-encoding", "UTF-8", "--release", "17", "-d", classes,
            "-cp", jar, os.path.join(BENCH_DIR, "java", "CallgrindOps.java")])
    if r.returncode:
        return None, "javac CallgrindOps.java failed:\n" + r.stderr[-600:]
    return (java, jar + os.pathsep + classes), None


def count(op, n, tmp, rep=0):
    """(ops, instructions) of one run of `op` with n under callgrind (rep:
    which of op.reps, for the seed of an op with seed_pad)."""
    out = os.path.join(tmp, "%s.%d.cg" % (op.name, n))
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
           "--dump-instr=no"] + op.argv(n)
    # in tmp: a JVM that dies leaves its hs_err_pid*.log in the cwd
    env = {**os.environ, **(op.env or {})}
    if op.seed_pad:
        env["FUTOIN_CG_SEED_PAD"] = "x" * (16 * rep)
    r = sh(cmd, env=env, cwd=tmp)
    m = (re.search(r"^BENCH .*\bops=(\d+)", r.stdout, re.M)
         or re.search(r"^OPS (\d+)", r.stdout, re.M))
    if r.returncode or not m or not os.path.exists(out):
        raise RuntimeError("exit %d: %s" % (r.returncode,
                                            (r.stderr or r.stdout)[-600:]))
    with open(out) as f:
        tot = re.search(r"^totals:\s+(\d+)", f.read(), re.M)
    if not tot:
        raise RuntimeError("no totals in " + out)
    return int(m.group(1)), int(tot.group(1))


def t2_bytes(build):
    """Bytes per waiting flow (RSS growth while 30,000 flows wait), native:
    one batch is enough and takes milliseconds."""
    r = sh([os.path.join(build, "bench", "futoin_bench"), "--test", "t2",
            "--n", "1"])
    m = re.search(r"bytes_per_flow=([\d.]+)", r.stdout)
    return float(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser(
        description="instructions per op under callgrind (N vs 2N)")
    ap.add_argument("build", nargs="?",
                    default=os.path.join(BENCH_DIR, "build"))
    ap.add_argument("--only", help="comma-separated op names or groups "
                    "(C, floor, Python, Lua, Java)")
    ap.add_argument("--python", help="a python that imports futoin_async")
    ap.add_argument("--lua-tree", help="a luarocks tree with futoin_async")
    ap.add_argument("--java-jar", help="futoin-async.jar (bindings/java)")
    ap.add_argument("--build-bindings", action="store_true",
                    help="build the Python wheel, the Lua rock (into "
                    "bench/report/) and the jar (into BUILD_DIR/java) from "
                    "this checkout when none is found")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--csv", default=os.path.join(REPORT_DIR,
                                                  "callgrind.csv"))
    a = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("callgrind: valgrind not found (.ci/setup installs it)")
    build = os.path.abspath(a.build)
    only = set(a.only.split(",")) if a.only else None

    def wanted(name, group):
        return only is None or name in only or group in only

    rows = []
    with tempfile.TemporaryDirectory(prefix="futoin-cg-") as tmp:
        build_core(build, a.no_build)
        # The C ops run with the clock held too (as Lua's, below): the time
        # slice ending every few dozen steps under callgrind moved T3 by
        # up to 20 instructions per wake between runs of one build.
        preload = fixed_time_preload(tmp)
        ops = [o for o in c_ops(build,
                                {"LD_PRELOAD": preload} if preload else None)
               if wanted(o.name, o.group)]
        skipped = []
        if any(wanted(n, "Python") for n in ("python_step", "python_success",
                                              "python_floor_await", "python_aioflow",
                                              "python_floor_aiofut")):
            py, why = find_python(a.python, a.build_bindings)
            if py:
                print("# python: %s" % py)
                ops += [o for o in python_ops(py, preload)
                        if wanted(o.name, o.group)]
            else:
                skipped.append(("python_*", why))
        if any(wanted(n, "Lua") for n in ("lua_step", "lua_success",
                                           "lua_floor_coroutine")):
            env, why = find_lua(a.lua_tree, a.build_bindings)
            if env is not None:
                print("# lua: LUA_CPATH=%s"
                      % env.get("LUA_CPATH", "(lua5.4's)"))
                ops += [o for o in lua_ops(env, tmp)
                        if wanted(o.name, o.group)]
            else:
                skipped.append(("lua_*", why))
        if any(wanted(n, "Java") for n in ("java_step", "java_success",
                                            "java_floor_thenApply",
                                            "java_floor_thenApplyDone",
                                            "java_peer_thenCompose")):
            jc, why = find_java(build, a.java_jar, a.build_bindings, tmp)
            if jc:
                print("# java: %s" % jc[1].split(os.pathsep)[0])
                ops += [o for o in java_ops(*jc) if wanted(o.name, o.group)]
            else:
                skipped.append(("java_*", why))
        for op in ops:
            try:
                pers = []
                for rep in range(op.reps):
                    o1, i1 = count(op, op.n, tmp, rep)
                    o2, i2 = count(op, 2 * op.n, tmp, rep)
                    if o2 <= o1:
                        raise RuntimeError("ops did not grow: %d, %d"
                                           % (o1, o2))
                    pers.append((i2 - i1) / (o2 - o1))
                per = statistics.median(pers)
            except RuntimeError as e:
                print("%s: error %s" % (op.name, e))
                rows.append([op.name, op.group, "", "", "error", op.what])
                continue
            tgt = TARGETS.get(op.name)
            note = ""
            if tgt:
                note = "  (target <= %d: %s)" % (tgt, "met" if per <= tgt
                                                 else "not met")
            if op.reps > 1:
                note += "  (median of %d: %.0f-%.0f)" % (op.reps, min(pers),
                                                         max(pers))
            print("%s: %.0f instr/op%s" % (op.name, per, note), flush=True)
            rows.append([op.name, op.group, "%.1f" % per, o2 - o1, tgt or "",
                         op.what])
    if wanted("t2", "C"):
        b = t2_bytes(build)
        if b is not None:
            print("t2_bytes_per_flow: %.0f B  (target <= %d: %s)"
                  % (b, T2_BYTES_TARGET, "met" if b <= T2_BYTES_TARGET
                     else "not met"))
            rows.append(["t2_bytes_per_flow", "C", "%.1f" % b, 30000,
                         T2_BYTES_TARGET, "RSS growth per waiting flow (B)"])
    for name, why in skipped:
        print("%s: %s" % (name, why))
    os.makedirs(os.path.dirname(os.path.abspath(a.csv)), exist_ok=True)
    with open(a.csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["op", "group", "instr_per_op", "ops_counted", "target",
                    "what"])
        w.writerows(rows)
    return 1 if any(r[4] == "error" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
