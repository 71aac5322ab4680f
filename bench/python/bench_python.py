#!/usr/bin/python3
"""Cost of one Python step of futoin_async next to asyncio await chains.

  /usr/bin/python3 bench/python/bench_python.py [N]

Needs the futoin_async package importable (install the wheel into a venv,
see bindings/python/README.md). Prints ns per step, median of 5 runs:
  - futoin add():   a root with N steps `lambda asi: None` (implicit success)
  - futoin repeat(): one repeat(N) whose body is a Python callable
  - futoin success(v): N steps passing one int on
  - asyncio await:  `await step()` N times (a coroutine call, no loop turn)
  - asyncio sleep(0): `await asyncio.sleep(0)` N times (one loop turn each)
"""
import asyncio
import statistics
import sys
import time

from futoin_async import AsyncSteps, Tool


def med(fn, n, runs=5):
    out = []
    for _ in range(runs):
        out.append(fn(n) / n * 1e9)
    return statistics.median(out)


tool = Tool()


def fa_add(n):
    root = AsyncSteps(tool)
    f = lambda asi: None
    for _ in range(n):
        root.add(f)
    t = time.perf_counter()
    root.execute()
    tool.run()
    return time.perf_counter() - t


def fa_repeat(n):
    root = AsyncSteps(tool)
    root.repeat(n, lambda asi, i: None)
    t = time.perf_counter()
    root.execute()
    tool.run()
    return time.perf_counter() - t


def fa_success(n):
    root = AsyncSteps(tool)
    f = lambda asi, v=0: asi.success(v + 1)
    for _ in range(n):
        root.add(f)
    t = time.perf_counter()
    root.execute()
    tool.run()
    return time.perf_counter() - t


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
    return d


def aio_sleep0(n):
    async def chain():
        for _ in range(n):
            await asyncio.sleep(0)

    loop = asyncio.new_event_loop()
    t = time.perf_counter()
    loop.run_until_complete(chain())
    d = time.perf_counter() - t
    loop.close()
    return d


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    rows = [
        ("futoin add() step", med(fa_add, n)),
        ("futoin repeat() body", med(fa_repeat, n)),
        ("futoin step + success(v)", med(fa_success, n)),
        ("asyncio await coroutine", med(aio_await, n)),
        ("asyncio await sleep(0)", med(aio_sleep0, n)),
    ]
    print(f"python {sys.version.split()[0]}, N={n}, median of 5 runs")
    base = rows[0][1]
    for name, ns in rows:
        print(f"{name:28s} {ns:9.1f} ns/step   ratio vs futoin add(): {ns / base:5.2f}")
    print(f"target: <= 250 ns per Python step -> {'MET' if base <= 250 else 'NOT MET'}"
          f" ({base:.0f} ns)")


if __name__ == "__main__":
    main()
