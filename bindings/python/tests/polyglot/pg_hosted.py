"""Python steps for hosted_c.c (a C program hosting Python steps through
the plug-in): the hosting loop's Tool, its timers and `async def` steps,
beyond the polyglot fragments (tests/polyglot/fragments/python: async_echo,
timer_echo, async_wait, async_seen). Each is a step (asi, *values)."""
import asyncio
import sys

import futoin_async


def tool_info(asi):
    """The Tool of a flow a C program hosts: borrowed, usable in its step."""
    tool = asi.tool
    return ("borrowed" if tool.borrowed else "owned") + (" usable" if tool.usable else "")


def soon_double(asi, v):
    """An immediate that schedules another from inside a timer callback."""
    asi.wait_external()
    tool = asi.tool
    tool.call_soon(lambda: tool.immediate(lambda: asi.success(v * 2)))


async def async_mix(asi, v):
    """gather, wait_for (timing out), run_in_executor, a nested task."""
    a, b = await asyncio.gather(asyncio.sleep(0.001, v), asyncio.sleep(0.002, 1))
    try:
        await asyncio.wait_for(asyncio.sleep(3600), 0.001)
        return -1
    except asyncio.TimeoutError:
        pass
    c = await asyncio.get_running_loop().run_in_executor(None, lambda: 40 + 2)
    d = await asyncio.create_task(asyncio.sleep(0, 0))
    return a + b + c + d


def tasks_left(asi):
    """Tasks of the hosting loop's event loop that are not done."""
    return len([t for t in asyncio.all_tasks(asi.tool.event_loop()) if not t.done()])


def interp_info(asi):
    """What the embedded interpreter runs as: sys.prefix and the package."""
    return f"{sys.prefix}|{futoin_async.__file__}"
