#!/usr/bin/python3
"""One kind of Python op, N times, for bench/callgrind.sh (instructions per
op: the runner runs this under callgrind with N and 2N and divides the
difference by N, so start-up, imports and the warm-up cancel).

  PYTHON bench/python/callgrind_ops.py KIND N WARM

KIND:
  step      a root of N steps `lambda asi: None`: add + execute + run per step
  success   a root of N steps `lambda asi, v: asi.success(v + 1)` (the value
            passed on from step to step)
  await     the language's own primitive: `await step()` N times in one
            coroutine on a plain asyncio loop
  aioflow   N flows driven from asyncio, each `await AsyncSteps(tool).await_(fut)`
            in one coroutine, `fut` a plain asyncio future resolved by
            `loop.call_soon(fut.set_result, i)` (bench_python.py's case)
  aiofut    its floor: the same loop with `await fut`

Each kind first runs once with WARM (the warm-up: pools, free lists and
caches grown to the largest run; the runner passes the same WARM >= 2N to
both runs, so it cancels), then with N; the last line is `OPS N`.
"""
import asyncio
import sys

from futoin_async import AsyncSteps, Tool

tool = Tool()


def step(n):
    root = AsyncSteps(tool)
    f = lambda asi: None  # noqa: E731
    for _ in range(n):
        root.add(f)
    root.run()


def success(n):
    root = AsyncSteps(tool)
    root.add(lambda asi: asi.success(0))
    f = lambda asi, v: asi.success(v + 1)  # noqa: E731
    for _ in range(n - 1):
        root.add(f)
    r = root.run()
    if r != n - 1:
        raise SystemExit(f"success: got {r}, expected {n - 1}")


def await_(n):
    async def one():
        return None

    async def chain():
        for _ in range(n):
            await one()
    loop = asyncio.new_event_loop()
    loop.run_until_complete(chain())
    loop.close()


def _aio(n, flow):
    async def main():
        loop = asyncio.get_running_loop()
        total = 0
        for i in range(n):
            fut = loop.create_future()
            loop.call_soon(fut.set_result, i)
            if flow:
                total += await AsyncSteps(tool).await_(fut)
            else:
                total += await fut
        if total != n * (n - 1) // 2:
            raise SystemExit(f"aio: got {total}")
    loop = asyncio.new_event_loop()
    loop.run_until_complete(main())
    loop.close()


def aioflow(n):
    _aio(n, True)


def aiofut(n):
    _aio(n, False)


KINDS = {"step": step, "success": success, "await": await_,
         "aioflow": aioflow, "aiofut": aiofut}


def main():
    if (len(sys.argv) != 4 or sys.argv[1] not in KINDS
            or int(sys.argv[2]) < 1 or int(sys.argv[3]) < 1):
        raise SystemExit("usage: callgrind_ops.py step|success|await|aioflow|aiofut N WARM")
    fn, n, warm = KINDS[sys.argv[1]], int(sys.argv[2]), int(sys.argv[3])
    fn(warm)
    fn(n)
    print(f"OPS {n}")


if __name__ == "__main__":
    main()
