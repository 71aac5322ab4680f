#!/usr/bin/python3
"""What a flow driven from asyncio costs beyond a plain asyncio future:
the parts named in bench/RESULTS.md (Python binding, second pass).

  /usr/bin/python3 bench/python/asyncio_breakdown.py
"""
import asyncio
import statistics
import time

from futoin_async import AsyncSteps, Tool

tool = Tool()
N = 20000


def med(fn, reps=7):
    return statistics.median(fn() for _ in range(reps))


async def handle_cost():
    """One more loop.call_soon callback per loop turn."""
    loop = asyncio.get_running_loop()
    f = lambda: None
    t = time.perf_counter()
    for _ in range(N):
        loop.call_soon(f)
        await asyncio.sleep(0)   # one turn: runs f and resumes us
    d1 = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(N):
        await asyncio.sleep(0)
    d0 = time.perf_counter() - t
    return (d1 - d0) / N * 1e6


def root_setup():
    t = time.perf_counter()
    for _ in range(N):
        AsyncSteps(tool).add(int)
    return (time.perf_counter() - t) / N * 1e6


def exec_pass():
    roots = [AsyncSteps(tool).add(lambda asi: None) for _ in range(N)]
    t = time.perf_counter()
    for r in roots:
        r.execute()
        tool.run_nowait()
    return (time.perf_counter() - t) / N * 1e6


def idle_pass():
    t = time.perf_counter()
    for _ in range(N):
        tool.run_nowait()
    return (time.perf_counter() - t) / N * 1e6


print(f"one more asyncio callback per turn:      "
      f"{statistics.median(asyncio.run(handle_cost()) for _ in range(5)):.2f} us")
print(f"AsyncSteps(tool).add():                  {med(root_setup):.2f} us")
print(f"execute() + a libuv pass of a 1-step flow: {med(exec_pass):.2f} us")
print(f"idle libuv pass:                         {med(idle_pass):.2f} us")
