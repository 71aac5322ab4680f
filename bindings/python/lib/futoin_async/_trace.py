"""Trace context of a flow (futoin/trace.h): AsyncSteps.set_trace() and
AsyncSteps.trace, thin over the library's futoin_trace_set/get; the
context lives in the flow's root and every language's steps see it."""

from __future__ import annotations

from typing import NamedTuple, Optional

from . import _core
from ._errors import InvalidStateError
from ._steps import AsyncSteps


class TraceContext(NamedTuple):
    """The W3C trace context as one step sees it: ids in lowercase hex;
    ``traceparent`` names this step's own span (send it on to a service
    the step calls)."""
    trace_id: str
    span_id: str
    parent_span_id: Optional[str]
    flags: int
    traceparent: str


def set_trace(self: AsyncSteps, traceparent: Optional[str]) -> None:
    """Make ``traceparent`` (a W3C ``traceparent`` header value) the trace
    context of this flow's root, from now on, for the steps of every
    language and for flows started with new_instance(); None clears it.
    A bad value raises ValueError saying what is wrong and leaves the
    context as it was."""
    if traceparent is not None:
        if not isinstance(traceparent, str):
            raise TypeError("set_trace(): traceparent must be a str or None, "
                            f"not {type(traceparent).__name__}")
        # a NUL would end the C string early: check the whole value here
        why = ("traceparent contains a NUL character" if "\0" in traceparent
               else _core.futoin_bind_trace_check(traceparent))
        if why is not None:
            raise ValueError(f"set_trace({traceparent!r}): {why}")
    rc = _core.futoin_bind_trace_set(self.binary(), traceparent)
    if rc != 0:
        raise InvalidStateError(
            f"set_trace(): refused ({rc}): not a live handle of this library "
            "on its loop thread")


def _trace(self: AsyncSteps) -> Optional[TraceContext]:
    text = _core.futoin_bind_trace_get(self.binary())
    if text is None:
        raise InvalidStateError(
            "trace: not a live handle of this library on its loop thread")
    if not text:
        return None
    tp, _, parent = text.partition(" ")
    return TraceContext(tp[3:35], tp[36:52], parent or None, int(tp[53:55], 16), tp)


_trace.__doc__ = """The flow's trace context as this step sees it
(TraceContext: trace id, this step's span id and the span it runs under),
or None when the flow has none. Through a root's own handle span_id is the
span the flow continues and parent_span_id is None."""

_core._extend(AsyncSteps, {"set_trace": set_trace, "trace": property(_trace)})
set_trace.__qualname__ = "AsyncSteps.set_trace"
set_trace.__module__ = __package__
del set_trace
