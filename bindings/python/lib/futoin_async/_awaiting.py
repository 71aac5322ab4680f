"""await_(): a step that waits for an asyncio awaitable."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Optional

from . import _core
from ._errors import InvalidStateError

if TYPE_CHECKING:
    from ._steps import AsyncSteps
    from ._tool import Tool


_FUTURES = frozenset((asyncio.Future, asyncio.Task))
_get_running_loop = asyncio.events._get_running_loop


def _future_of(awaitable: Any, tool: Optional[Tool] = None) -> asyncio.Future:
    """The asyncio future of an await_()ed awaitable (a coroutine becomes
    a Task). Its event loop: asyncio's running loop when it drives the
    flow (``await root``, ``root.promise()``); otherwise the loop of the
    flow's Tool itself, ``tool.event_loop()`` (Tool.run(), or a program in
    another language that hosts the flow)."""
    loop = _get_running_loop()
    if tool is not None and not tool.closed and (
            loop is None or _core._in_run() or not (
                tool._aloop is loop or _core._awaited())):
        loop = tool.event_loop()
    if loop is None:
        if asyncio.iscoroutine(awaitable):
            awaitable.close()  # never awaited: no warning about it
        raise InvalidStateError(
            "await_(): no event loop: the step's handle is not of this "
            "library's Tool and asyncio does not drive the flow") from None
    if type(awaitable) in _FUTURES or asyncio.isfuture(awaitable):
        return awaitable
    return asyncio.ensure_future(awaitable, loop=loop)


def _await_step(asi: AsyncSteps, fut: asyncio.Future) -> Any:
    """An await_() step whose future is pending and not taken by an
    `await root` of its flow: the future's result completes the step, when
    it is done (waiting externally until then)."""
    loop = fut.get_loop()
    if fut.done() and not fut.cancelled():
        exc = fut.exception()
        if exc is not None:
            raise exc
        r = fut.result()
        if r is not None:
            if isinstance(r, tuple):
                asi.success(*r)
            else:
                asi.success(r)
        return None
    fut.add_done_callback(_AwaitDone(asi, loop, asi.tool))
    asi.set_cancel(lambda _asi: fut.cancel())
    asi.wait_external()
    return None


class _AwaitDone:
    """await_(): the awaited future's outcome completes the waiting step,
    and the flow goes on at once (no extra asyncio loop turn)."""

    __slots__ = ("asi", "loop", "tool")

    def __init__(self, asi: AsyncSteps, loop: asyncio.AbstractEventLoop,
                 tool: Optional[Tool]) -> None:
        self.asi = asi
        self.loop = loop
        self.tool = tool

    def __call__(self, f: asyncio.Future) -> None:
        if f.cancelled():
            return  # the flow cancelled it
        asi = self.asi
        exc = f.exception()
        if exc is None:
            r = f.result()
            if r is None:
                asi.success()
            elif isinstance(r, tuple):
                asi.success(*r)
            else:
                asi.success(r)
        else:
            asi._fail(exc)
        tool = self.tool
        if tool is not None and tool._aloop is self.loop:
            tool._pump()  # the flow goes on now, not one loop turn later
