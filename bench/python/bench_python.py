#!/usr/bin/python3
"""futoin_async (Python) side by side with plain asyncio, in one run.

  /usr/bin/python3 bench/python/bench_python.py [--quick] [--only WORD]

Needs the futoin_async package importable (install the wheel into a venv,
see bindings/python/README.md). Each case runs 7 times alternating with
its asyncio peer (the shared VM changes speed between runs); the table
shows both medians and the median of the per-run ratios futoin / peer
(lower is better). --only WORD runs the cases whose name has WORD
(e.g. `--only asyncio`: the flow driven from asyncio alone, for runs of
two builds side by side).

  step             ns per step of a root of N steps `lambda asi: None`
                   vs `await coro()` N times (a coroutine call, no loop turn)
  repeat body      ns per repeat(N) body vs the same awaited coroutine
  chain success(v) ns per step of N steps `asi.success(v + 1)` vs
                   `v = await step(v)` with `async def step(v): return v + 1`
  chain return v   the same chain with steps that `return v + 1`
  asyncio-driven   us per flow: F flows, each `await_(fut)` + `await root`
                   from a coroutine, vs `await fut` (the same plain asyncio
                   future, resolved by call_soon) from the same coroutine
  from threads     us per flow: F flows waiting externally, completed by a
                   worker thread with asi.success(v), vs F asyncio futures
                   completed by the worker with call_soon_threadsafe()
  sleep(0)         ns per `await asyncio.sleep(0)` (one asyncio loop turn),
                   for scale
"""
import asyncio
import statistics
import sys
import threading
import time

from futoin_async import AsyncSteps, Tool

QUICK = "--quick" in sys.argv
ONLY = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
N = 20_000 if QUICK else 100_000     # steps per chain
F = 2_000 if QUICK else 10_000       # flows
RUNS = 7

tool = Tool()


def paired(ours, peer, n):
    """RUNS runs of each, alternating (the VM's speed changes between
    runs): medians of both and the median of the per-run ratios."""
    o, p, r = [], [], []
    for _ in range(RUNS):
        try:
            a = ours(n)
        except Exception as e:  # an older package without the feature
            print(f"{ours.__name__}: n/a ({type(e).__name__}: {e})", file=sys.stderr)
            a = float("nan")
        b = peer(n)
        o.append(a)
        p.append(b)
        r.append(a / b)
    return statistics.median(o), statistics.median(p), statistics.median(r)


# -- steps ----------------------------------------------------------------------

def fa_add(n):
    root = AsyncSteps(tool)
    f = lambda asi: None
    for _ in range(n):
        root.add(f)
    t = time.perf_counter()
    root.run()
    return (time.perf_counter() - t) / n * 1e9


def fa_repeat(n):
    root = AsyncSteps(tool)
    root.repeat(n, lambda asi, i: None)
    t = time.perf_counter()
    root.run()
    return (time.perf_counter() - t) / n * 1e9


def fa_success(n):
    root = AsyncSteps(tool)
    root.add(lambda asi: asi.success(0))
    f = lambda asi, v: asi.success(v + 1)
    for _ in range(n - 1):
        root.add(f)
    t = time.perf_counter()
    r = root.run()
    d = time.perf_counter() - t
    assert r == n - 1, r
    return d / n * 1e9


def fa_return(n):
    root = AsyncSteps(tool)
    root.add(lambda asi: 0)
    f = lambda asi, v: v + 1
    for _ in range(n - 1):
        root.add(f)
    t = time.perf_counter()
    r = root.run()
    d = time.perf_counter() - t
    assert r == n - 1, r
    return d / n * 1e9


def aio_await(n):
    async def step():
        return None

    async def chain():
        for _ in range(n):
            await step()
    loop = asyncio.new_event_loop()
    t = time.perf_counter()
    loop.run_until_complete(chain())
    d = time.perf_counter() - t
    loop.close()
    return d / n * 1e9


def aio_chain(n):
    async def step(v):
        return v + 1

    async def chain():
        v = 0
        for _ in range(n - 1):
            v = await step(v)
        return v
    loop = asyncio.new_event_loop()
    t = time.perf_counter()
    r = loop.run_until_complete(chain())
    d = time.perf_counter() - t
    loop.close()
    assert r == n - 1
    return d / n * 1e9


def aio_sleep0(n):
    async def chain():
        for _ in range(n):
            await asyncio.sleep(0)
    loop = asyncio.new_event_loop()
    t = time.perf_counter()
    loop.run_until_complete(chain())
    d = time.perf_counter() - t
    loop.close()
    return d / n * 1e9


# -- flows driven from asyncio --------------------------------------------------

def fa_asyncio_driven(f):
    async def main():
        loop = asyncio.get_running_loop()
        t0 = time.perf_counter()
        total = 0
        for i in range(f):
            fut = loop.create_future()
            loop.call_soon(fut.set_result, i)
            total += await AsyncSteps(tool).await_(fut)
        d = time.perf_counter() - t0
        assert total == f * (f - 1) // 2
        return d
    return asyncio.run(main()) / f * 1e6


def aio_futures(f):
    async def main():
        loop = asyncio.get_running_loop()
        t0 = time.perf_counter()
        total = 0
        for i in range(f):
            fut = loop.create_future()
            loop.call_soon(fut.set_result, i)
            total += await fut
        d = time.perf_counter() - t0
        assert total == f * (f - 1) // 2
        return d
    return asyncio.run(main()) / f * 1e6


# -- flows completed from a worker thread ---------------------------------------

def fa_threads(f):
    waiting = []
    cv = threading.Condition()
    done = []

    def step(asi):
        asi.wait_external()
        with cv:
            waiting.append(asi)
            cv.notify()

    def worker():
        n = 0
        while n < f:
            with cv:
                while not waiting:
                    cv.wait()
                batch = waiting[:]
                del waiting[:]
            for asi in batch:
                asi.success(n)
                n += 1

    roots = []
    for _ in range(f):
        r = AsyncSteps(tool).add(step).add(lambda asi, v: done.append(v))
        roots.append(r)
    th = threading.Thread(target=worker)
    t0 = time.perf_counter()
    th.start()
    for r in roots:
        r.execute()
    tool.run()
    th.join()
    d = time.perf_counter() - t0
    assert len(done) == f
    return d / f * 1e6


def aio_threads(f):
    async def main():
        loop = asyncio.get_running_loop()
        futs = []
        cv = threading.Condition()

        def worker():
            n = 0
            while n < f:
                with cv:
                    while len(futs) <= n:
                        cv.wait()
                    batch = futs[n:]
                for fut in batch:
                    loop.call_soon_threadsafe(fut.set_result, n)
                    n += 1

        async def one():
            fut = loop.create_future()
            with cv:
                futs.append(fut)
                cv.notify()
            return await fut
        th = threading.Thread(target=worker)
        t0 = time.perf_counter()
        th.start()
        r = await asyncio.gather(*(one() for _ in range(f)))
        th.join()
        d = time.perf_counter() - t0
        assert len(r) == f
        return d
    return asyncio.run(main()) / f * 1e6


def main():
    cases = [
        ("step (add)", "ns", fa_add, aio_await, N, "await coro()"),
        ("repeat body", "ns", fa_repeat, aio_await, N, "await coro()"),
        ("chain success(v)", "ns", fa_success, aio_chain, N, "v = await step(v)"),
        ("chain return v", "ns", fa_return, aio_chain, N, "v = await step(v)"),
        ("asyncio-driven flow", "us", fa_asyncio_driven, aio_futures, F, "await fut"),
        ("flow done from thread", "us", fa_threads, aio_threads, F,
         "call_soon_threadsafe"),
    ]
    print(f"python {sys.version.split()[0]}, N={N} steps, F={F} flows, "
          f"{RUNS} alternating runs, medians")
    print("| case | futoin | asyncio peer | ratio (median of per-run ratios) |")
    print("|---|---|---|---|")
    for name, unit, ours, peer, n, what in cases:
        if ONLY and ONLY not in name:
            continue
        o, p, r = paired(ours, peer, n)
        print(f"| {name} | {o:,.1f} {unit} | {p:,.1f} {unit} ({what}) | {r:.2f}x |")
    if not ONLY:
        s0 = statistics.median(aio_sleep0(N) for _ in range(3))
        print(f"| asyncio sleep(0), for scale | | {s0:,.1f} ns | |")


if __name__ == "__main__":
    main()
