package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.After;
import org.junit.Test;

/**
 * Trace context (futoin/trace.h) from Java: {@link AsyncSteps#setTrace} and
 * {@link AsyncSteps#trace} over the library's per-root context.
 */
public class TraceTest extends ToolFixture {
    static final String TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    static final String PARENT = "00f067aa0ba902b7";

    @After
    public void noMisuse() {
        assertEquals("misuse reports", 0, tool.misuseCount());
    }

    @Test
    public void seenByTheNextStepsEachASpanUnderItsFrame() {
        Map<String, TraceContext> seen = new HashMap<>();
        AsyncSteps[] child = new AsyncSteps[1];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            assertNull(asi.trace());
            asi.setTrace(TP);
            seen.put("setter", asi.trace());
        });
        root.add(asi -> {
            seen.put("outer", asi.trace());
            asi.add(a -> seen.put("inner", a.trace()));
        });
        root.add(asi -> {
            seen.put("holder", asi.trace());
            Parallel p = asi.parallel();
            p.add(a -> seen.put("b1", a.trace()));
            p.add(a -> seen.put("b2", a.trace()));
        });
        root.add(asi -> {
            child[0] = asi.newInstance();
            seen.put("childRoot", child[0].trace());
            child[0].add(a -> seen.put("child", a.trace()));
            child[0].execute();
        });
        root.run();
        TraceContext s = seen.get("setter"), o = seen.get("outer"), i = seen.get("inner");
        assertEquals(TRACE_ID, s.traceId());
        assertEquals(1, s.flags());
        assertEquals(PARENT, s.parentSpanId());
        assertEquals(PARENT, o.parentSpanId());
        assertEquals(o.spanId(), i.parentSpanId());
        assertEquals("00-" + TRACE_ID + "-" + i.spanId() + "-01", i.traceparent());
        /* branches run under the step that called parallel() */
        assertEquals(seen.get("holder").spanId(), seen.get("b1").parentSpanId());
        assertEquals(seen.get("b1").parentSpanId(), seen.get("b2").parentSpanId());
        assertNotEquals(seen.get("b1").spanId(), seen.get("b2").spanId());
        /* newInstance(): the same trace under the starting step's span */
        assertEquals(TRACE_ID, seen.get("child").traceId());
        assertNull(seen.get("childRoot").parentSpanId());
        assertEquals(seen.get("childRoot").spanId(), seen.get("child").parentSpanId());
        Set<String> spans = new HashSet<>();
        for (String k : List.of("setter", "outer", "inner", "b1", "b2", "child")) {
            assertTrue(k, spans.add(seen.get(k).spanId()));
        }
        assertEquals(PARENT, root.trace().spanId());
        child[0].close();
        root.close();
    }

    @Test
    public void aBadValueIsRefusedAndKeepsTheContextNullClears() {
        AsyncSteps root = new AsyncSteps(tool);
        root.setTrace(TP);
        for (String bad : List.of("", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", TP + "\0")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> root.setTrace(bad));
            assertTrue(e.getMessage(), e.getMessage().contains("traceparent"));
        }
        assertEquals(TP, root.trace().traceparent());
        root.setTrace(null);
        assertNull(root.trace());
        root.close();
    }
}
