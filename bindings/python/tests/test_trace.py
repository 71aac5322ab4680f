"""Trace context (futoin/trace.h) from Python: AsyncSteps.set_trace() and
AsyncSteps.trace over the library's per-root context."""
import pytest

from futoin_async import AsyncSteps, InvalidStateError, TraceContext

TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"


def test_set_in_a_step_seen_by_the_next_steps_with_spans_under_their_frames(tool):
    seen = {}

    def setter(asi):
        assert asi.trace is None
        asi.set_trace(TP)
        seen["setter"] = asi.trace

    def outer(asi):
        seen["outer"] = asi.trace
        asi.add(lambda a: seen.__setitem__("inner", a.trace))

    def starter(asi):
        child = asi.new_instance()
        seen["child-root"] = child.trace
        child.add(lambda a: seen.__setitem__("child", a.trace))
        child.execute()
        seen["child-handle"] = child

    root = AsyncSteps(tool).add(setter).add(outer).add(starter)
    root.run()
    s, o, i, c = seen["setter"], seen["outer"], seen["inner"], seen["child"]
    assert isinstance(s, TraceContext)
    assert s.trace_id == TRACE_ID and s.flags == 1
    assert s.parent_span_id == PARENT and o.parent_span_id == PARENT
    assert i.trace_id == TRACE_ID and i.parent_span_id == o.span_id
    assert len({s.span_id, o.span_id, i.span_id, c.span_id}) == 4
    assert i.traceparent == f"00-{TRACE_ID}-{i.span_id}-01"
    # new_instance(): the same trace under the starting step's span
    assert c.trace_id == TRACE_ID
    assert seen["child-root"].parent_span_id is None
    assert c.parent_span_id == seen["child-root"].span_id
    # the root's own handle: the span the flow continues
    assert root.trace.span_id == PARENT and root.trace.parent_span_id is None
    root.free()
    seen["child-handle"].free()


@pytest.mark.parametrize("bad", [
    "", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
    "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
    "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
    "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    TP + "\0",  # a NUL would end the C string: never cut to a valid value
])
def test_a_bad_value_raises_and_leaves_the_context(tool, bad):
    root = AsyncSteps(tool)
    root.set_trace(TP)
    with pytest.raises(ValueError, match="traceparent"):
        root.set_trace(bad)
    assert root.trace.traceparent == TP
    with pytest.raises(TypeError):
        root.set_trace(42)
    root.free()


def test_cleared_and_parallel_branches(tool):
    seen = {}

    def par(asi):
        seen["holder"] = asi.trace
        p = asi.parallel()
        p.add(lambda a: seen.__setitem__("b1", a.trace))
        p.add(lambda a: seen.__setitem__("b2", a.trace))

    def clear(asi):
        asi.set_trace(None)
        seen["cleared"] = asi.trace

    root = AsyncSteps(tool)
    root.set_trace(TP)
    root.add(par).add(clear).run()
    b1, b2 = seen["b1"], seen["b2"]
    # branches run under the step that called parallel()
    assert b1.parent_span_id == b2.parent_span_id == seen["holder"].span_id
    assert b1.span_id != b2.span_id
    assert seen["cleared"] is None and root.trace is None
    root.free()
    with pytest.raises(InvalidStateError):
        root.trace
