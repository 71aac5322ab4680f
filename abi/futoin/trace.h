/**
 * @file futoin/trace.h
 * @brief Trace context of a flow (W3C Trace Context `traceparent`), seen by
 *        the steps of every language in the flow and by the flows it starts.
 *
 * **Where it lives.** The context belongs to a root (the flow and all its
 * parallel() branches), in a field of the root, not in a state variable:
 * no state name is reserved for it, a step's stateVariable()/state() keys
 * stay the user's, the hooks and exporters read it without a lookup, and
 * a flow with no context pays nothing but one pointer. It holds a trace id,
 * the trace flags and the *parent span* of the flow: the span the flow
 * continues (the parent-id of the `traceparent` it was given, or the span
 * of the step that started it with newInstance()).
 *
 * **Spans.** While a root has a context, every step of it is a span: its
 * span id is fixed when the step is entered (whether the context was set
 * before or during that step) and is never reused within the trace. The
 * spans are the frames async stacks and the hooks (futoin/sys/hooks.h:
 * step_entered/step_left) show: steps, the step an addSync() guards, and
 * every iteration of a loop. A step's parent span is the span of the
 * nearest of those below it: the step whose sub-step it is, also through
 * parallel() (a branch's steps run under the step that called parallel())
 * and loops (an iteration runs under the step that called loop()), else
 * the flow's parent span. So an exporter built on the hooks meets no
 * parent it was not told of. Through a parallel() handle, the span is
 * the one that parallel() runs in.
 * Span ids are a keyed mix of the step record and its generation, with a
 * random key per root: stable for a step's whole life, unique within the
 * trace, and telling nothing about addresses.
 *
 * **Setting it** in one step (any language) makes it the context of the
 * whole root from that moment: the step itself, the steps after it, the
 * ones running in other branches of the same root, and the handlers. A
 * new context replaces the old one (span ids stay). Clearing it (NULL)
 * ends tracing for the root. A root made with newInstance() through a
 * handle of a traced root starts with the same trace id and flags, its
 * parent span being the span of that handle's step (through the root's own
 * handle: the root's parent span).
 *
 * Threads: loop thread of the handle's tool; a call from another thread is
 * reported as misuse and refused.
 * @since 0.3.0
 */
#ifndef FUTOIN_TRACE_H
#define FUTOIN_TRACE_H

#include <futoin/async.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Length of a version-00 `traceparent`: "00-" 32 hex "-" 16 hex "-" 2 hex. */
#define FUTOIN_TRACEPARENT_LEN 55

/**
 * The trace context as a step sees it, every id lowercase hex and
 * NUL-terminated. Versioned by `size`: set it before the call
 * (FUTOIN_TRACE_INFO_INIT); fields are only added at the end.
 * @since 0.3.0
 */
typedef struct futoin_trace_info
{
    /** sizeof(futoin_trace_info) the caller was built with */
    uint32_t size;
    /** trace-flags (bit 0: sampled) */
    uint8_t flags;
    /** 32 hex digits, never all zero */
    char trace_id[33];
    /** the span of the step of the handle (through a root's own handle:
     *  the flow's parent span) */
    char span_id[17];
    /** the span it runs under; "" through a root's own handle */
    char parent_span_id[17];
    /** "00-<trace_id>-<span_id>-<flags>": what this step sends on to a
     *  service it calls, whose spans are then its children */
    char traceparent[FUTOIN_TRACEPARENT_LEN + 1];
} futoin_trace_info;

#define FUTOIN_TRACE_INFO_INIT {sizeof(futoin_trace_info), 0, "", "", "", ""}

/**
 * Why `traceparent` is not a valid W3C `traceparent`, or NULL if it is
 * one. Valid: "VV-TTTT…-PPPP…-FF", lowercase hex: version VV not "ff";
 * trace id 32 digits, not all zero; parent id 16 digits, not all zero;
 * flags FF. Version 00 is exactly 55 characters; a higher version may go on
 * after the flags, with a '-' first (its further fields are ignored, as
 * the W3C text says). The reason is a static string. Any thread.
 * @since 0.3.0
 */
FUTOIN_API const char* futoin_trace_check(const char* traceparent);

/**
 * Set the trace context of the root of `bsi` (a root, a running step or
 * parallel() step of ours) from a W3C `traceparent` (see
 * futoin_trace_check()); NULL clears it. Nothing else reads the string
 * after the call. Loop thread.
 * @return FUTOIN_OK; FUTOIN_EINVAL for a value futoin_trace_check()
 *         rejects (the context is left as it was; not reported as misuse:
 *         it is data), or for a NULL, foreign, stale or not yet started
 *         handle, or another thread (those reported as misuse);
 *         FUTOIN_ENOMEM.
 * @since 0.3.0
 */
FUTOIN_API int futoin_trace_set(FutoInAsyncSteps* bsi, const char* traceparent);

/**
 * The trace context as step `bsi` sees it (see futoin_trace_info). Loop
 * thread.
 * @return 1 with `*out` filled when the root has a context; 0 when it has
 *         none (the strings of `*out` are "", flags 0); FUTOIN_EINVAL for
 *         `out` NULL or `out->size` too small (nothing written), or a
 *         NULL, foreign, stale or not yet started handle, or another
 *         thread (reported as misuse).
 * @since 0.3.0
 */
FUTOIN_API int futoin_trace_get(FutoInAsyncSteps* bsi, futoin_trace_info* out);

#ifdef __cplusplus
}
#endif

#endif /* FUTOIN_TRACE_H */
