"""await_(): a step that waits for an asyncio awaitable."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Optional

from ._errors import InvalidStateError

if TYPE_CHECKING:
    from ._steps import AsyncSteps
    from ._tool import Tool


_FUTURES = frozenset((asyncio.Future, asyncio.Task))


def _future_of(awaitable: Any) -> asyncio.Future:
    """The asyncio future of an await_()ed awaitable (a coroutine becomes
    a Task of the running loop)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        if asyncio.iscoroutine(awaitable):
            awaitable.close()  # never awaited: no warning about it
        raise InvalidStateError(
            "await_(): the flow must be driven by asyncio "
            "(await root / root.promise()), not Tool.run()") from None
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
