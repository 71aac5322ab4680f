/*
 * An example span exporter: writes the spans of traced flows as JSON lines,
 * one span a line, built only on the public hooks (futoin/sys/hooks.h:
 * step_entered, step_left, error_raised) and the trace context
 * (futoin/trace.h). It adds no instrumentation of its own: each span is a
 * step the hooks report, named by the origin they give.
 *
 *   {"trace_id":"4bf9...","span_id":"...","parent_span_id":"...",
 *    "name":"trace_nest","origin":{"language":"python",
 *    "function":"trace_nest","file":".../polyglot_fragments.py","line":61},
 *    "start":0,"end":0,"status":"ok"}
 *
 * start and end are tool time in ms (futoin_tool_now(): exact on a
 * virtual-time tool); status is "ok" or "error:<code>" when the step
 * raised an error (its own or its timeout). Only steps of a root that has
 * a trace context when the step is left are written.
 *
 * The tool holds one hook table: this exporter takes it while it runs.
 * Loop thread of the tool.
 */
#ifndef FUTOIN_TRACE_JSONL_H
#define FUTOIN_TRACE_JSONL_H

#include <futoin/async.h>

#include <stdio.h>

typedef struct futoin_trace_jsonl futoin_trace_jsonl;

/* Start exporting the spans of `tool`'s flows to `out` (kept, not closed).
 * NULL when the hooks could not be set or out of memory. */
futoin_trace_jsonl* futoin_trace_jsonl_start(futoin_tool* tool, FILE* out);

/* Stop: clear the tool's hooks and free the exporter. Returns the number
 * of spans written. */
size_t futoin_trace_jsonl_stop(futoin_trace_jsonl* x);

#endif
