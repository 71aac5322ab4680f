#!/usr/bin/python3
"""Run the libfutoin_async benchmark suite and its peers, print a table,
check the target ratios and write bench/report/{results.csv,runs.csv,
report.md,chart.png}.

usage: bench/run.sh [BUILD_DIR] [--runs N] [--scale F] [--tests a,b]
                    [--impls a,b] [--pin CPU] [--no-build] [--timeout S]

Every (impl, test) pair runs --runs times, each run in its own process; runs
are interleaved (run 1 of every pair, then run 2, ...) so drift of the
machine hits every implementation alike. Only Debian's python3 standard
library is needed; the chart needs python3-matplotlib (apt).
"""

import argparse
import csv
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import textwrap

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
SRC_DIR = os.path.dirname(BENCH_DIR)
REPORT_DIR = os.path.join(BENCH_DIR, "report")

# Display order; tests/impls not listed here are appended in discovery order.
TEST_ORDER = ["t1", "t2", "t3", "chain1m", "loop_iter", "immediate", "add128",
              "callbacks", "callbacks_check", "callbacks_async"]
TEST_TITLES = {
    "t1": "T1 simple",
    "t2": "T2 parallel",
    "t3": "T3 wait loop",
    "chain1m": "1M-step chain",
    "loop_iter": "loop iteration",
    "immediate": "AsyncTool immediate",
    "add128": "add+run 128 steps",
    "callbacks": "N callbacks",
    "callbacks_check": "uv_check turn",
    "callbacks_async": "uv_async per cb",
}
IMPL_ORDER = ["futoin", "fiber_pooled", "fiber_protected", "libuv_ring",
              "libuv_turn", "indirect_call"]
IMPL_COLORS = {
    "futoin": "#d62728",
    "fiber_pooled": "#1f77b4",
    "fiber_protected": "#aec7e8",
    "libuv_ring": "#2ca02c",
    "libuv_turn": "#98df8a",
    "indirect_call": "#7f7f7f",
}


class Binary:
    """One bench executable and the impls it provides."""

    def __init__(self, name, relpath, impls, impl_flag, expected_tests):
        self.name = name
        self.relpath = relpath          # inside BUILD_DIR
        self.impls = impls              # list of impl names
        self.impl_flag = impl_flag      # pass --impl X ?
        self.expected = expected_tests  # impl -> tests, used if missing
        self.path = None


def binaries():
    return [
        Binary("futoin_bench", os.path.join("bench", "futoin_bench"),
               ["futoin"], False,
               {"futoin": ["t1", "t2", "t3", "chain1m", "loop_iter",
                           "immediate", "add128"]}),
        Binary("fiber_bench", os.path.join("bench", "peers", "fiber_bench"),
               ["fiber_pooled", "fiber_protected"], True,
               {"fiber_pooled": ["t1", "t2", "t3"],
                "fiber_protected": ["t1", "t2", "t3"]}),
        Binary("libuv_floor", os.path.join("bench", "peers", "libuv_floor"),
               ["libuv_ring", "libuv_turn", "indirect_call"], True,
               {"libuv_ring": ["callbacks"],
                "libuv_turn": ["callbacks", "callbacks_check",
                               "callbacks_async"],
                "indirect_call": ["callbacks"]}),
    ]


# Target ratios from the issue. kind "speedup": peer/futoin >= thr;
# "ratio_max": futoin/peer <= thr; "abs_max": futoin value <= thr.
TARGETS = [
    dict(name="T1 futoin vs fiber_pooled", kind="speedup", test="t1",
         peer=("fiber_pooled", "t1"), thr=4.5, field="ns"),
    dict(name="T3 futoin vs fiber_pooled", kind="speedup", test="t3",
         peer=("fiber_pooled", "t3"), thr=3.0, field="ns"),
    dict(name="T2 futoin bytes per waiting flow", kind="abs_max", test="t2",
         peer=None, thr=512.0, field="bpf"),
    dict(name="loop_iter futoin vs indirect_call", kind="ratio_max",
         test="loop_iter", peer=("indirect_call", "callbacks"), thr=3.0,
         field="ns"),
]

BENCH_RE = re.compile(r"^BENCH\s+(.*)$")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


# ---------------------------------------------------------------- build

def build(build_dir, no_build):
    if no_build:
        return
    if not os.path.exists(os.path.join(build_dir, "build.ninja")):
        log(f"== meson setup {build_dir} --buildtype=release")
        r = subprocess.run(["meson", "setup", build_dir, "--buildtype=release"],
                           cwd=SRC_DIR, stdout=sys.stderr)
        if r.returncode != 0:
            log("!! meson setup failed; running whatever binaries exist")
            return
    log(f"== ninja -C {build_dir}")
    r = subprocess.run(["ninja", "-C", build_dir], stdout=sys.stderr)
    if r.returncode == 0:
        return
    # Part of the project failed to build (e.g. the library is mid-change):
    # still try each bench binary on its own.
    log("!! full build failed; trying the bench targets one by one")
    for b in binaries():
        rr = sh(["ninja", "-C", build_dir, b.relpath])
        log(f"   {b.relpath}: {'ok' if rr.returncode == 0 else 'not built'}")


def build_options(build_dir):
    try:
        r = sh(["meson", "introspect", build_dir, "--buildoptions"])
        opts = {o["name"]: o["value"] for o in json.loads(r.stdout)}
        return f"buildtype={opts.get('buildtype')} " \
               f"optimization={opts.get('optimization')} " \
               f"b_ndebug={opts.get('b_ndebug')}"
    except Exception:  # noqa: BLE001 - informational only
        return "unknown"


# ---------------------------------------------------------------- machine

def first_line(cmd):
    try:
        r = sh(cmd)
        return r.stdout.strip().splitlines()[0] if r.stdout.strip() else "?"
    except OSError:
        return "?"


def read_file(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return "?"


def machine_info():
    info = {}
    model, cpus, tpc = "?", "?", "?"
    try:
        out = sh(["lscpu"]).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            v = v.strip()
            if k == "Model name" and model == "?":
                model = v
            elif k == "CPU(s)":
                cpus = v
            elif k == "Thread(s) per core":
                tpc = v
    except OSError:
        pass
    info["cpu"] = f"{model}, {cpus} logical CPUs ({tpc} thread(s) per core)"
    u = platform.uname()
    info["kernel"] = f"{u.system} {u.release} {u.machine}"
    info["os"] = "Debian " + read_file("/etc/debian_version")
    info["cc"] = first_line(["cc", "--version"])
    info["cxx"] = first_line(["c++", "--version"])
    info["libuv"] = first_line(["pkg-config", "--modversion", "libuv"])
    boost = "?"
    m = re.search(r'#define BOOST_LIB_VERSION "([^"]+)"',
                  read_file("/usr/include/boost/version.hpp"))
    if m:
        boost = m.group(1).replace("_", ".")
    info["boost"] = boost
    info["thp"] = read_file("/sys/kernel/mm/transparent_hugepage/enabled")
    info["clocksource"] = read_file(
        "/sys/devices/system/clocksource/clocksource0/current_clocksource")
    return info


# ---------------------------------------------------------------- running

def discover(build_dir, want_impls, want_tests):
    """Returns a list of cases: dict(impl, test, bin, argv|None)."""
    cases = []
    for b in binaries():
        env_path = os.environ.get(b.name.upper())  # e.g. FUTOIN_BENCH=/path
        path = env_path or os.path.join(build_dir, b.relpath)
        ok = os.path.isfile(path) and os.access(path, os.X_OK)
        b.path = path if ok else None
        for impl in b.impls:
            if want_impls and impl not in want_impls:
                continue
            base = [path] + (["--impl", impl] if b.impl_flag else [])
            tests = list(b.expected.get(impl, []))
            if ok:
                r = sh(base + ["--list"])
                listed = [t.strip() for t in r.stdout.splitlines() if t.strip()]
                if r.returncode == 0 and listed:
                    tests = listed
                else:
                    log(f"!! {b.name} --list failed; using the default tests")
            for t in tests:
                if want_tests and t not in want_tests:
                    continue
                cases.append(dict(impl=impl, test=t, bin=b.name,
                                  argv=(base + ["--test", t]) if ok else None))
    return cases


def parse_bench_line(out):
    for line in out.splitlines():
        m = BENCH_RE.match(line.strip())
        if m:
            kv = {}
            for tok in m.group(1).split():
                k, _, v = tok.partition("=")
                kv[k] = v
            return kv
    return None


def run_one(case, scale, pin, timeout):
    argv = list(case["argv"])
    if scale != 1.0:
        argv += ["--scale", repr(scale)]
    if pin is not None:
        argv = ["taskset", "-c", str(pin)] + argv
    try:
        r = sh(argv, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(status=f"timeout {timeout}s")
    kv = parse_bench_line(r.stdout)
    if r.returncode != 0 or kv is None:
        tail = (r.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        return dict(status=f"error rc={r.returncode}: {tail}")
    if kv.get("impl") != case["impl"] or kv.get("test") != case["test"]:
        return dict(status=f"error: got impl={kv.get('impl')} test={kv.get('test')}")
    try:
        res = dict(status="ok",
                   ops=int(kv["ops"]),
                   ns=float(kv["ns_per_op"]),
                   rss=int(kv["peak_rss_kb"]))
        if "bytes_per_flow" in kv:
            res["bpf"] = float(kv["bytes_per_flow"])
        return res
    except (KeyError, ValueError) as e:
        return dict(status=f"error: bad BENCH line ({e})")


def aggregate(case):
    ok = [r for r in case["runs"] if r["status"] == "ok"]
    agg = dict(impl=case["impl"], test=case["test"], n=len(ok))
    if case["argv"] is None:
        agg["status"] = "not available"
        return agg
    if not ok:
        agg["status"] = case["runs"][-1]["status"] if case["runs"] else "not run"
        return agg
    agg["status"] = "ok" if len(ok) == len(case["runs"]) else \
        f"{len(case['runs']) - len(ok)} run(s) failed"
    ns = [r["ns"] for r in ok]
    agg["ns_med"] = statistics.median(ns)
    agg["ns_min"] = min(ns)
    agg["ns_max"] = max(ns)
    agg["ops"] = ok[-1]["ops"]
    agg["rss_med"] = statistics.median(r["rss"] for r in ok)
    bpf = [r["bpf"] for r in ok if "bpf" in r]
    if bpf:
        agg["bpf_med"] = statistics.median(bpf)
        agg["bpf_min"] = min(bpf)
        agg["bpf_max"] = max(bpf)
    return agg


# ---------------------------------------------------------------- output

def fmt_ns(v):
    if v is None:
        return "-"
    if v < 10:
        return f"{v:.2f}"
    if v < 100:
        return f"{v:.1f}"
    return f"{v:,.0f}"


def fmt_rss(kb):
    if kb is None:
        return "-"
    return f"{kb / 1024:.1f} MiB"


def sort_key(a):
    t = TEST_ORDER.index(a["test"]) if a["test"] in TEST_ORDER else len(TEST_ORDER)
    i = IMPL_ORDER.index(a["impl"]) if a["impl"] in IMPL_ORDER else len(IMPL_ORDER)
    return (t, a["test"], i, a["impl"])


def table_rows(aggs):
    rows = []
    for a in aggs:
        if "ns_med" in a:
            bpf = f"{a['bpf_med']:,.0f}" if "bpf_med" in a else ""
            rows.append([a["test"], a["impl"], fmt_ns(a["ns_med"]),
                         f"{fmt_ns(a['ns_min'])}–{fmt_ns(a['ns_max'])}",
                         f"{a['ops']:,}", fmt_rss(a["rss_med"]), bpf,
                         "" if a["status"] == "ok" else a["status"]])
        else:
            rows.append([a["test"], a["impl"], a["status"], "", "", "", "", ""])
    return rows


HEADER = ["test", "impl", "median ns/op", "min–max", "ops", "peak RSS",
          "bytes/flow", "note"]


def text_table(header, rows):
    keep = [j for j in range(len(header))
            if j < len(header) - 1 or any(r[j] for r in rows)]
    header = [header[j] for j in keep]
    rows = [[r[j] for j in keep] for r in rows]
    w = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    right = {2, 3, 4, 5, 6}
    def line(r):
        return "  ".join(str(c).rjust(w[j]) if j in right else str(c).ljust(w[j])
                         for j, c in enumerate(r)).rstrip()
    out = [line(header), "  ".join("-" * x for x in w)]
    prev = None
    for r in rows:
        if prev is not None and r[0] != prev:
            out.append("")
        prev = r[0]
        out.append(line(r))
    return "\n".join(out)


def md_table(header, rows):
    keep = [j for j in range(len(header))
            if j < len(header) - 1 or any(r[j] for r in rows)]
    out = ["| " + " | ".join(header[j] for j in keep) + " |",
           "|" + "|".join("---" if j < 2 or j == 7 else "---:" for j in keep) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(r[j]) for j in keep) + " |")
    return "\n".join(out)


def evaluate_targets(by_key):
    res = []
    for tg in TARGETS:
        fut = by_key.get(("futoin", tg["test"]))
        peer = by_key.get(tg["peer"]) if tg["peer"] else None
        row = dict(name=tg["name"], verdict="n/a", value="-", detail="")
        if tg["kind"] == "speedup":
            row["goal"] = f">= {tg['thr']}x"
        elif tg["kind"] == "ratio_max":
            row["goal"] = f"<= {tg['thr']}x"
        else:
            row["goal"] = f"<= {tg['thr']:.0f} B"
        if not fut or "ns_med" not in fut:
            row["detail"] = "futoin: " + (fut["status"] if fut else "not run")
            res.append(row)
            continue
        if tg["kind"] == "abs_max":
            if "bpf_med" not in fut:
                row["detail"] = "futoin t2 printed no bytes_per_flow"
            else:
                v = fut["bpf_med"]
                row["value"] = f"{v:,.0f} B"
                row["detail"] = f"min–max {fut['bpf_min']:,.0f}–{fut['bpf_max']:,.0f} B"
                row["verdict"] = "PASS" if v <= tg["thr"] else "FAIL"
            res.append(row)
            continue
        if not peer or "ns_med" not in peer:
            row["detail"] = f"{tg['peer'][0]}: " + (peer["status"] if peer else "not run")
            res.append(row)
            continue
        if tg["kind"] == "speedup":
            v = peer["ns_med"] / fut["ns_med"]
            worst = peer["ns_min"] / fut["ns_max"]
            best = peer["ns_max"] / fut["ns_min"]
            ok = v >= tg["thr"]
            row["detail"] = (f"{tg['peer'][0]} {fmt_ns(peer['ns_med'])} ns / futoin "
                             f"{fmt_ns(fut['ns_med'])} ns; range {worst:.2f}–{best:.2f}x")
        else:
            v = fut["ns_med"] / peer["ns_med"]
            best = fut["ns_min"] / peer["ns_max"]
            worst = fut["ns_max"] / peer["ns_min"]
            ok = v <= tg["thr"]
            row["detail"] = (f"futoin {fmt_ns(fut['ns_med'])} ns / {tg['peer'][0]} "
                             f"{fmt_ns(peer['ns_med'])} ns; range {best:.2f}–{worst:.2f}x")
        row["value"] = f"{v:.2f}x"
        row["verdict"] = "PASS" if ok else "FAIL"
        res.append(row)
    return res


def chart(aggs, path, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        log("!! matplotlib not available (apt-get install python3-matplotlib);"
            " no chart written")
        return False

    data = [a for a in aggs if "ns_med" in a]
    if not data:
        log("!! no results; no chart written")
        return False
    tests = []
    for a in data:
        if a["test"] not in tests:
            tests.append(a["test"])
    bpf = [a for a in data if "bpf_med" in a]

    fig = plt.figure(figsize=(15, 6.5))
    gs = fig.add_gridspec(1, 2, width_ratios=[5, 1] if bpf else [1, 0.0001],
                          wspace=0.18)
    ax = fig.add_subplot(gs[0])
    x = 0.0
    ticks, labels, impls_seen = [], [], []
    for t in tests:
        group = [a for a in data if a["test"] == t]
        x += max(0.0, (2 - len(group)) / 2)   # give 1-bar groups room
        start = x
        for a in group:
            med = a["ns_med"]
            err = [[med - a["ns_min"]], [a["ns_max"] - med]]
            c = IMPL_COLORS.get(a["impl"], "#bcbd22")
            ax.bar(x, med, width=0.8, color=c, edgecolor="black", linewidth=0.4,
                   yerr=err, capsize=2, error_kw=dict(linewidth=0.7))
            ax.text(x, a["ns_max"] * 1.12, fmt_ns(med), ha="center",
                    va="bottom", fontsize=7, rotation=90)
            if a["impl"] not in impls_seen:
                impls_seen.append(a["impl"])
            x += 1
        ticks.append((start + x - 1) / 2)
        labels.append(t + "\n" + "\n".join(textwrap.wrap(TEST_TITLES.get(t, ""), 12)))
        x += max(0.0, (2 - len(group)) / 2) + 0.8
    ax.set_yscale("log")
    ymin = min(a["ns_min"] for a in data)
    ymax = max(a["ns_max"] for a in data)
    ax.set_ylim(ymin / 2.5, ymax * 12)
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("ns per op (log scale; lower is better)")
    ax.set_xlim(-0.8, x - 0.5)
    ax.grid(axis="y", which="major", alpha=0.35)
    ax.grid(axis="y", which="minor", alpha=0.12)
    ax.set_axisbelow(True)
    order = sorted(impls_seen, key=lambda i: IMPL_ORDER.index(i)
                   if i in IMPL_ORDER else 99)
    ax.legend(handles=[Patch(facecolor=IMPL_COLORS.get(i, "#bcbd22"),
                             edgecolor="black", label=i) for i in order],
              loc="upper right", fontsize=8, ncol=len(order))
    ax.set_title("time per op: median of runs, whiskers = min–max", fontsize=10)

    if bpf:
        ax2 = fig.add_subplot(gs[1])
        for j, a in enumerate(bpf):
            c = IMPL_COLORS.get(a["impl"], "#bcbd22")
            med = a["bpf_med"]
            ax2.bar(j, med, width=0.7, color=c, edgecolor="black", linewidth=0.4)
            ax2.text(j, med * 1.1, f"{med:,.0f}", ha="center", va="bottom",
                     fontsize=7)
        ax2.axhline(512, color="#d62728", linestyle="--", linewidth=1,
                    label="target 512 B")
        ax2.legend(loc="upper right", fontsize=7)
        ax2.set_yscale("log")
        ax2.set_ylim(min(64, min(a["bpf_med"] for a in bpf) / 2),
                     max(a["bpf_med"] for a in bpf) * 4)
        ax2.set_xlim(-0.6, max(len(bpf), 3) - 0.4)
        ax2.set_xticks(range(len(bpf)))
        ax2.set_xticklabels([a["impl"] for a in bpf], rotation=35, ha="right",
                            fontsize=8)
        ax2.set_ylabel("bytes per waiting flow (log)")
        ax2.set_title("T2 memory", fontsize=10)
        ax2.grid(axis="y", alpha=0.35)
        ax2.set_axisbelow(True)

    fig.suptitle(title, fontsize=11)
    fig.subplots_adjust(left=0.05, right=0.99, top=0.88, bottom=0.16)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(
        description="Run the libfutoin_async benchmarks and peers side by side.")
    ap.add_argument("build_dir", nargs="?",
                    default=os.path.join(BENCH_DIR, "build"),
                    help="meson build dir (default: bench/build; set up with "
                         "--buildtype=release if missing)")
    ap.add_argument("--runs", type=int, default=3,
                    help="processes per (impl, test); median reported (default 3)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="iteration-count multiplier passed to every binary "
                         "(default 1.0; 0.01 for a smoke run)")
    ap.add_argument("--tests", default="", help="comma list of tests to run")
    ap.add_argument("--impls", default="", help="comma list of impls to run")
    ap.add_argument("--pin", type=int, default=None,
                    help="run every process pinned to this CPU (taskset)")
    ap.add_argument("--no-build", action="store_true",
                    help="do not run meson/ninja")
    ap.add_argument("--timeout", type=float, default=900,
                    help="seconds per process (default 900)")
    args = ap.parse_args()
    if args.runs < 1 or args.scale <= 0:
        ap.error("--runs must be >= 1 and --scale > 0")
    if args.pin is not None and not shutil.which("taskset"):
        ap.error("--pin needs taskset (util-linux)")

    build_dir = os.path.abspath(args.build_dir)
    build(build_dir, args.no_build)

    want_tests = {t for t in args.tests.split(",") if t}
    want_impls = {i for i in args.impls.split(",") if i}
    cases = discover(build_dir, want_impls, want_tests)
    if not cases:
        log("!! nothing to run")
        return 1
    for c in cases:
        c["runs"] = []
    runnable = [c for c in cases if c["argv"]]
    missing = sorted({c["bin"] for c in cases if not c["argv"]})
    if missing:
        log("!! not available: " + ", ".join(missing))

    started = datetime.datetime.now().astimezone()
    load_start = os.getloadavg()
    for r in range(args.runs):
        for c in runnable:
            res = run_one(c, args.scale, args.pin, args.timeout)
            c["runs"].append(res)
            shown = (f"{fmt_ns(res['ns'])} ns/op" if res["status"] == "ok"
                     else res["status"])
            log(f"[run {r + 1}/{args.runs}] {c['impl']:>16} {c['test']:<16} {shown}")

    load_end = os.getloadavg()
    aggs = sorted((aggregate(c) for c in cases), key=sort_key)
    by_key = {(a["impl"], a["test"]): a for a in aggs}
    rows = table_rows(aggs)
    targets = evaluate_targets(by_key)
    minfo = machine_info()
    bopts = build_options(build_dir)

    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(encoding="utf-8", errors="replace")
    print()
    print(f"runs={args.runs} scale={args.scale} build: {bopts}")
    print(text_table(HEADER, rows))
    print()
    print("targets (same run, medians):")
    tw = max(len(t["name"]) for t in targets)
    for t in targets:
        print(f"  {t['verdict']:<4}  {t['name']:<{tw}}  {t['value']:>9}  "
              f"(goal {t['goal']})  {t['detail']}")

    os.makedirs(REPORT_DIR, exist_ok=True)
    with open(os.path.join(REPORT_DIR, "results.csv"), "w", newline="",
              encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["test", "impl", "status", "runs_ok", "ops", "ns_per_op_median",
                    "ns_per_op_min", "ns_per_op_max", "peak_rss_kb_median",
                    "bytes_per_flow_median", "bytes_per_flow_min",
                    "bytes_per_flow_max"])
        for a in aggs:
            w.writerow([a["test"], a["impl"], a["status"], a["n"], a.get("ops", ""),
                        a.get("ns_med", ""), a.get("ns_min", ""), a.get("ns_max", ""),
                        a.get("rss_med", ""), a.get("bpf_med", ""),
                        a.get("bpf_min", ""), a.get("bpf_max", "")])
    with open(os.path.join(REPORT_DIR, "runs.csv"), "w", newline="",
              encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["test", "impl", "run", "status", "ops", "ns_per_op",
                    "peak_rss_kb", "bytes_per_flow"])
        for c in sorted(cases, key=sort_key):
            for j, r in enumerate(c["runs"]):
                w.writerow([c["test"], c["impl"], j + 1, r["status"],
                            r.get("ops", ""), r.get("ns", ""), r.get("rss", ""),
                            r.get("bpf", "")])

    title = (f"libfutoin_async vs peers — {minfo['cpu'].split(',')[0]}, "
             f"{started:%Y-%m-%d}, median of {args.runs} run(s)"
             + (f", scale {args.scale}" if args.scale != 1.0 else ""))
    chart_path = os.path.join(REPORT_DIR, "chart.png")
    if os.path.exists(chart_path):
        os.remove(chart_path)  # never leave a stale chart next to a new report
    have_chart = chart(aggs, chart_path, title)

    md = [f"# Benchmark report ({started:%Y-%m-%d %H:%M %Z})", "",
          f"- CPU: {minfo['cpu']}",
          f"- OS: {minfo['os']}, kernel {minfo['kernel']}",
          f"- Compilers: {minfo['cc']}; {minfo['cxx']}",
          f"- libuv {minfo['libuv']}, Boost {minfo['boost']}",
          f"- THP: {minfo['thp']}; clocksource: {minfo['clocksource']}",
          f"- Build: {bopts}",
          f"- Load average (1/5/15 min) at start: "
          f"{' / '.join(f'{x:.2f}' for x in load_start)}; at end: "
          f"{' / '.join(f'{x:.2f}' for x in load_end)} (other busy processes"
          f" skew results; the suite itself keeps ~1 CPU busy)",
          f"- Runs: {args.runs} per (impl, test), each in its own process,"
          f" interleaved; scale {args.scale}"
          + (f"; pinned to CPU {args.pin}" if args.pin is not None else ""),
          "", md_table(HEADER, rows), "", "## Targets", "",
          "| target | value | goal | verdict | detail |",
          "|---|---:|---|---|---|"]
    for t in targets:
        md.append(f"| {t['name']} | {t['value']} | {t['goal']} | {t['verdict']} "
                  f"| {t['detail']} |")
    if have_chart:
        md += ["", "![chart](chart.png)"]
    with open(os.path.join(REPORT_DIR, "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    print()
    print(f"wrote {os.path.relpath(REPORT_DIR, os.getcwd())}/"
          f"{{results.csv,runs.csv,report.md{',chart.png' if have_chart else ''}}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
