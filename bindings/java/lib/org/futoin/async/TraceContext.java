package org.futoin.async;

/**
 * A flow's W3C trace context as one step sees it ({@link AsyncSteps#trace()}):
 * ids in lowercase hex. {@code traceparent} names the step's own span: send
 * it on to a service the step calls. Through a root's own handle
 * {@code spanId} is the span the flow continues and {@code parentSpanId}
 * is null.
 *
 * @param traceId      the trace id (32 hex digits)
 * @param spanId       the step's span id (16 hex digits)
 * @param parentSpanId the span the step runs under, or null
 * @param flags        the trace flags (bit 0: sampled)
 * @param traceparent  {@code "00-<traceId>-<spanId>-<flags>"}
 */
public record TraceContext(String traceId, String spanId, String parentSpanId, int flags,
        String traceparent) {
}
