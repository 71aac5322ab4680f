"""A user's Python steps, installed into the venv with pip (pyproject.toml
beside this file) as a user installs their own package: every program that
has the venv activated runs them, Python or not.

    append(trail, n) -> (trail + ">python", n + 1), an `async def` step
    fail()           -> error UserError, error_info "python"
"""
import asyncio


async def append(asi, trail, n):
    """An `async def` step: awaits asyncio.sleep() in the event loop of the
    flow's Tool (the host program's loop), then passes its values on."""
    await asyncio.sleep(0.01)
    return trail + ">python", n + 1


async def fail(asi, *values):
    """Fails from a coroutine, after a sleep of the hosting loop."""
    await asyncio.sleep(0.01)
    asi.error("UserError", "python")
