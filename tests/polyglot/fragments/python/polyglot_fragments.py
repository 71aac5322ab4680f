"""Polyglot fragments written in Python (module "polyglot_fragments"): the
same functions in every language, run by the host tests of the others
(tests/polyglot/, bindings/*/polyglot.sh). Each is a step: (asi, *values)."""

LANG = "python"


def echo(asi, *values):
    """success() with exactly the values received."""
    asi.success(*values)


def _describe(v):
    if isinstance(v, bool):
        return "bool:" + ("true" if v else "false")
    if isinstance(v, int):
        return f"int:{v}"
    if isinstance(v, float):
        return f"float:{v!r}"
    if isinstance(v, str):
        return f"str:{v}"
    if isinstance(v, (bytes, bytearray)):
        return "bytes:" + bytes(v).hex()
    if isinstance(v, list) and all(type(e) is int for e in v):
        return "ints:" + "|".join(str(e) for e in v)
    if isinstance(v, list) and all(type(e) is float for e in v):
        return "floats:" + "|".join(repr(e) for e in v)
    return f"other:{type(v).__name__}"


def describe(asi, *values):
    """One string describing the values received."""
    asi.success(",".join(_describe(v) for v in values) if values else "none")


def fail(asi, *values):
    asi.error("FragmentError", LANG)


def wait(asi, *values):
    """Waits until cancelled; the cancel handler records it in shared state."""
    def on_cancel(asi):
        asi.state["cancelled_" + LANG] = True
    asi.set_cancel(on_cancel)
    asi.wait_external()


def read_state(asi, *values):
    asi.success(asi.state["key"])


def write_state(asi, *values):
    asi.state["from_" + LANG] = LANG
    asi.success()


def catch(asi, language, module, function, *values):
    """Add language:module.function with an error handler written here."""
    def handler(asi, code):
        asi.success(f"caught {code} in {LANG}")
    asi.add_foreign(language, module, function, onerror=handler)


# ---- Python only: steps that reach the hosting loop (issue 23), for any host

_async_seen = []


async def async_echo(asi, *values):
    """An `async def` step: awaits asyncio.sleep() in the event loop of the
    flow's Tool (the host's loop), then passes its values on."""
    import asyncio
    await asyncio.sleep(0.01)
    return values


def timer_echo(asi, *values):
    """Completes from a timer of the hosting loop (asi.tool)."""
    asi.wait_external()
    asi.tool.call_later(0.01, asi.success, *values)


async def async_wait(asi, *values):
    """Sets the shared state "started", then waits; cancelling the flow is
    a CancelledError in here (see async_seen)."""
    import asyncio
    asi.state["started"] = True
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError as e:
        _async_seen.append(type(e).__name__)
        raise


def async_seen(asi, *values):
    """What async_wait saw, joined by ","."""
    return ",".join(_async_seen)


def host_counters(asi, *values):
    """For leak checks under any host: the Python plug-in's counters (its
    start()s, stop()s, and the step data the library holds: this step's
    own included) and sys.getallocatedblocks() after a collection, as one
    string "starts stops live blocks"."""
    import ctypes
    import gc
    import os
    import sys
    path = None
    with open("/proc/self/maps") as maps:
        for line in maps:
            if line.rstrip().endswith("/libfutoin_host_python.so") or \
                    "/libfutoin_host_python" in line:
                path = line.split(None, 5)[5].strip()
                break
    if path is None:
        raise RuntimeError("the Python plug-in is not mapped in this process")
    plugin = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_NOW)
    s, p, live = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    plugin.python_host_counters(ctypes.byref(s), ctypes.byref(p), ctypes.byref(live))
    gc.collect()
    return f"{s.value} {p.value} {live.value} {sys.getallocatedblocks()}"


# ---- Python only: what only a Python run() re-raises (issue 18), for any host

def system_exit(asi, *values):
    """sys.exit(3): in a flow another language hosts, no Python run() is
    there to re-raise it, so the step fails with InternalError
    "SystemExit: 3" for the host to handle (never a success)."""
    import sys
    sys.exit(3)


def keyboard_interrupt(asi, *values):
    """As system_exit: InternalError "KeyboardInterrupt"."""
    raise KeyboardInterrupt


async def async_system_exit(asi, *values):
    """As system_exit, from an `async def` step, straight away: InternalError
    "SystemExit: 3", and nothing printed (the task keeps the exception for
    the step; before: "Exception ignored in: <_Soon Task…>" on stderr)."""
    import sys
    sys.exit(3)


async def async_keyboard_interrupt(asi, *values):
    """As async_system_exit, after an await (a timer of the hosting loop
    wakes the task): InternalError "KeyboardInterrupt"."""
    import asyncio
    await asyncio.sleep(0.001)
    raise KeyboardInterrupt


def trace_nest(asi, *values):
    """The C host's trace chain C -> Python -> Lua -> Java: records the
    trace context it sees in shared state "trace_python" ("<trace id>
    <span id> <parent span id>", or "none"), then adds Lua's trace_nest
    under itself."""
    t = asi.trace
    asi.state["trace_" + LANG] = (f"{t.trace_id} {t.span_id} {t.parent_span_id}"
                                  if t else "none")
    asi.add_foreign("lua", "polyglot_fragments", "trace_nest")
