/*
 * SWIG interface of libfutoin_async shared by every language binding
 * (Python now; Lua and Java later). Language-neutral: version, standard
 * error codes, and the sync objects (Mutex, Throttle, Limiter) as opaque
 * addresses. Each language's own .i (bindings/<lang>/) includes this file
 * and adds its typemaps and its step trampolines over futoin/sys/wrap.h.
 */
%{
#include <futoin/async.h>
#include <futoin/errors.h>
#include <futoin/sync.h>
#include <futoin/sys/wrap.h>
#include <futoin/trace.h>
#include <stdint.h>
#include <stdio.h>
%}

%include <stdint.i>

/* ---- version ---- */
const char* futoin_async_version(void);
int futoin_async_version_number(void);

/* ---- standard error codes (one X-macro list in futoin/errors.h) ---- */
%inline %{
static int futoin_error_count(void) { return FUTOIN_ERROR_COUNT; }
static const char* futoin_error_code_at(int i)
{
    return futoin_error_name((futoin_error)i);
}
static const char* futoin_error_description_at(int i)
{
    return futoin_error_description((futoin_error)i);
}
%}

/* ---- sync objects, as addresses (uintptr_t) ---- */
%inline %{
static uintptr_t futoin_bind_mutex_new(uint64_t max, uint64_t max_queue)
{
    return (uintptr_t)futoin_mutex_new((size_t)max, (size_t)max_queue);
}
static int futoin_bind_mutex_free(uintptr_t p)
{
    return futoin_mutex_free((FutoInSync*)p);
}
static uintptr_t futoin_bind_throttle_new(uintptr_t tool, uint64_t max,
                                          uint32_t period_ms, uint64_t max_queue)
{
    return (uintptr_t)futoin_throttle_new((futoin_tool*)tool, (size_t)max,
                                          period_ms, (size_t)max_queue);
}
static int futoin_bind_throttle_free(uintptr_t p)
{
    return futoin_throttle_free((FutoInSync*)p);
}
static uintptr_t futoin_bind_limiter_new(uintptr_t tool, uint64_t concurrent,
                                         uint64_t max_queue, uint64_t rate,
                                         uint32_t period_ms, uint64_t burst)
{
    futoin_limiter_options o = FUTOIN_LIMITER_OPTIONS_INIT;
    o.concurrent = (size_t)concurrent;
    o.max_queue = (size_t)max_queue;
    o.rate = (size_t)rate;
    o.period_ms = period_ms;
    o.burst = (size_t)burst;
    return (uintptr_t)futoin_limiter_new((futoin_tool*)tool, &o);
}
static int futoin_bind_limiter_free(uintptr_t p)
{
    return futoin_limiter_free((FutoInSync*)p);
}
static uint64_t futoin_bind_unlimited(void) { return (uint64_t)FUTOIN_UNLIMITED; }
static int futoin_bind_is_ours(uintptr_t bsi)
{
    return futoin_wrap_is_ours((FutoInAsyncSteps*)bsi);
}
%}

/* ---- trace context (futoin/trace.h), handles as addresses ---- */
%inline %{
/* futoin_trace_set(): `traceparent` NULL clears; FUTOIN_OK or a negative
 * code. */
static int futoin_bind_trace_set(uintptr_t bsi, const char* traceparent)
{
    return futoin_trace_set((FutoInAsyncSteps*)bsi, traceparent);
}
/* Why `traceparent` is not a valid W3C traceparent, or NULL. */
static const char* futoin_bind_trace_check(const char* traceparent)
{
    return futoin_trace_check(traceparent);
}
/* The context step `bsi` sees as one string, "<traceparent> <parent span
 * id>" (the traceparent names the step's own span; the parent is empty
 * through a root's own handle); "" when the flow has none; NULL when the
 * handle is refused (misuse, reported). The text lives until the thread's
 * next call: each binding copies it at once. */
static const char* futoin_bind_trace_get(uintptr_t bsi)
{
    static _Thread_local char buf[FUTOIN_TRACEPARENT_LEN + 18];
    futoin_trace_info info = FUTOIN_TRACE_INFO_INIT;
    int rc = futoin_trace_get((FutoInAsyncSteps*)bsi, &info);
    if (rc < 0) {
        return NULL;
    }
    if (rc == 0) {
        return "";
    }
    snprintf(buf, sizeof(buf), "%s %s", info.traceparent, info.parent_span_id);
    return buf;
}
%}
