package org.futoin.async;

/**
 * The trace context of a flow ({@link AsyncSteps#setTrace},
 * {@link AsyncSteps#trace}): thin over the library's futoin_trace_set/get
 * (futoin/trace.h), where the context lives, per root, for the steps of
 * every language.
 */
final class Traces {
    private Traces() {
    }

    static void set(AsyncSteps a, String traceparent) {
        long b = a.check("setTrace()");
        if (traceparent != null) {
            /* a NUL would end the C string: refused here, by name */
            String why = traceparent.indexOf('\0') >= 0 ? "traceparent contains a NUL character"
                    : FutoInNative.futoin_bind_trace_check(traceparent);
            if (why != null) {
                throw new IllegalArgumentException("setTrace(\"" + traceparent + "\"): " + why);
            }
        }
        int rc = FutoInNative.futoin_bind_trace_set(b, traceparent);
        if (rc != 0) {
            throw new IllegalStateException("setTrace(): refused (" + rc
                    + "): not a live handle of this library on its loop thread");
        }
    }

    static TraceContext get(AsyncSteps a) {
        return parse(FutoInNative.futoin_bind_trace_get(a.check("trace()")));
    }

    /** The traceparent of handle {@code b} ("" for none), for newInstance(). */
    static String traceparentOf(long b) {
        String text = FutoInNative.futoin_bind_trace_get(b);
        return text == null || text.isEmpty() ? null : text.substring(0, 55);
    }

    private static TraceContext parse(String text) {
        if (text == null) {
            throw new IllegalStateException("trace(): not a live handle of this library on its loop thread");
        }
        if (text.isEmpty()) {
            return null;
        }
        String parent = text.substring(56);
        return new TraceContext(text.substring(3, 35), text.substring(36, 52),
                parent.isEmpty() ? null : parent, Integer.parseInt(text.substring(53, 55), 16),
                text.substring(0, 55));
    }
}
