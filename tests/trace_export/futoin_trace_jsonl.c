/*
 * An example span exporter over the hooks (see futoin_trace_jsonl.h).
 *
 * step_entered records when a step began, keyed by its handle; step_left
 * reads the trace context through the same handle (the record is still the
 * step's during the event), so a step that set the context itself is a
 * span too. Steps of parallel branches interleave, so the open steps are a
 * small table searched from its end, not a stack.
 */
#include "futoin_trace_jsonl.h"

#include <futoin/sys/hooks.h>
#include <futoin/trace.h>

#include <stdlib.h>
#include <string.h>

typedef struct open_span
{
    FutoInAsyncSteps* step;
    uint64_t start;
    char status[72];
} open_span;

struct futoin_trace_jsonl
{
    futoin_tool* tool;
    FILE* out;
    size_t written;
    open_span* open;
    size_t n, cap;
};

static open_span* find(futoin_trace_jsonl* x, FutoInAsyncSteps* step)
{
    for (size_t i = x->n; i-- > 0;) {
        if (x->open[i].step == step) {
            return &x->open[i];
        }
    }
    return NULL;
}

static void on_entered(void* data, const futoin_hook_event* ev)
{
    futoin_trace_jsonl* x = data;
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        open_span* o = realloc(x->open, cap * sizeof(*o));
        if (!o) {
            return; /* this span is not exported */
        }
        x->open = o;
        x->cap = cap;
    }
    x->open[x->n].step = ev->step;
    x->open[x->n].start = ev->now;
    strcpy(x->open[x->n].status, "ok");
    ++x->n;
}

static void on_error(void* data, const futoin_hook_event* ev)
{
    open_span* o = find(data, ev->step);
    if (o && ev->code) {
        snprintf(o->status, sizeof(o->status), "error:%s", ev->code);
    }
}

/* A JSON string (or null). */
static void json_str(FILE* f, const char* s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char* p = (const unsigned char*)s; *p; ++p) {
        if (*p == '"' || *p == '\\') {
            fputc('\\', f);
            fputc(*p, f);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void on_left(void* data, const futoin_hook_event* ev)
{
    futoin_trace_jsonl* x = data;
    futoin_trace_info t = FUTOIN_TRACE_INFO_INIT;
    open_span* o = find(x, ev->step);
    uint64_t start = o ? o->start : ev->now;
    const futoin_frame_origin* org = ev->origin;
    if (futoin_trace_get(ev->step, &t) == 1) {
        FILE* f = x->out;
        fprintf(f, "{\"trace_id\":\"%s\",\"span_id\":\"%s\",\"parent_span_id\":",
                t.trace_id, t.span_id);
        json_str(f, t.parent_span_id[0] ? t.parent_span_id : NULL);
        fputs(",\"name\":", f);
        json_str(f, org && org->function ? org->function : "step");
        fputs(",\"origin\":{\"language\":", f);
        json_str(f, org ? org->language : NULL);
        fputs(",\"function\":", f);
        json_str(f, org ? org->function : NULL);
        fputs(",\"file\":", f);
        json_str(f, org ? org->file : NULL);
        fprintf(f, ",\"line\":%u},\"start\":%llu,\"end\":%llu,\"status\":",
                org ? (unsigned)org->line : 0u, (unsigned long long)start,
                (unsigned long long)ev->now);
        json_str(f, o ? o->status : "ok");
        fputs("}\n", f);
        ++x->written;
    }
    if (o) {
        *o = x->open[--x->n];
    }
}

futoin_trace_jsonl* futoin_trace_jsonl_start(futoin_tool* tool, FILE* out)
{
    futoin_hooks h = FUTOIN_HOOKS_INIT;
    futoin_trace_jsonl* x = calloc(1, sizeof(*x));
    if (!x) {
        return NULL;
    }
    x->tool = tool;
    x->out = out;
    h.data = x;
    h.step_entered = on_entered;
    h.step_left = on_left;
    h.error_raised = on_error;
    if (futoin_tool_set_hooks(tool, &h) != FUTOIN_OK) {
        free(x);
        return NULL;
    }
    return x;
}

size_t futoin_trace_jsonl_stop(futoin_trace_jsonl* x)
{
    size_t n;
    if (!x) {
        return 0;
    }
    futoin_tool_set_hooks(x->tool, NULL);
    fflush(x->out);
    n = x->written;
    free(x->open);
    free(x);
    return n;
}
