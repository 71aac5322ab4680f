/* Shared test fixtures: a tool with a misuse counter, a trace buffer whose
 * whole content is compared, and typed values for FutoInArgs. */
#ifndef FUTOIN_TESTS_COMMON_H
#define FUTOIN_TESTS_COMMON_H

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <futoin/async.h>

#define TRACE_MAX (1 << 16)
static char trace_buf[TRACE_MAX];
static size_t trace_len;
static futoin_tool* T;
static size_t misuse_seen;
static char misuse_last[256];

__attribute__((format(printf, 1, 2))) static inline void tr(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(trace_buf + trace_len, TRACE_MAX - trace_len - 1, fmt, ap);
    va_end(ap);
    if (n > 0) {
        trace_len += (size_t)n;
        if (trace_len > TRACE_MAX - 2) {
            trace_len = TRACE_MAX - 2;
        }
    }
    trace_buf[trace_len++] = '\n';
    trace_buf[trace_len] = 0;
}

/* Misuse is reported on the thread that misused the API: keep the
 * fixture safe for tests that misuse it from several threads at once. */
static pthread_mutex_t misuse_mx = PTHREAD_MUTEX_INITIALIZER;
static inline void on_misuse(void* data, const char* code, const char* msg)
{
    (void)data;
    pthread_mutex_lock(&misuse_mx);
    ++misuse_seen;
    snprintf(misuse_last, sizeof(misuse_last), "%s: %s", code, msg);
    pthread_mutex_unlock(&misuse_mx);
}

static inline void fx_setup_clock(bool virtual_time)
{
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    o.misuse = on_misuse;
    o.virtual_time = virtual_time;
    trace_len = 0;
    trace_buf[0] = 0;
    misuse_seen = 0;
    misuse_last[0] = 0;
    cr_assert_eq(futoin_tool_new(&T, &o), FUTOIN_OK);
}

static inline void fx_setup(void)
{
    fx_setup_clock(false);
}

/* The same on a virtual-time tool (futoin_tool_options.virtual_time):
 * suites whose tests are about timers use it, so that no stall of a loaded
 * machine can decide an order, and the clock can be asserted exactly. */
static inline void fx_setup_virtual(void)
{
    fx_setup_clock(true);
}

/* Every test frees its tool: a leaked root or handle fails here. */
static inline void fx_teardown(void)
{
    cr_assert_eq(futoin_tool_free(T), FUTOIN_OK, "tool not freed: roots alive?");
    T = NULL;
}

static inline void run(void)
{
    cr_assert_eq(futoin_tool_run(T), FUTOIN_OK);
}

/* Virtual time: run what is due now, then timer by timer (the clock jumps
 * to each due time) until no timer is left. */
static inline void drive(void)
{
    uint64_t ms;
    run();
    while (futoin_tool_next_due(T, &ms) == 1) {
        cr_assert_eq(futoin_tool_advance(T, ms), FUTOIN_OK);
    }
}

#define assert_trace(expected)                                                 \
    cr_assert_str_eq(trace_buf, expected, "trace was:\n%s", trace_buf)

/* Typed values without cleanup (plain scalars, static strings). */
static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};
static const FutoInType ty_dbl = {FTN_TYPE_DOUBLE, NULL};
static const FutoInType ty_str = {FTN_TYPE_STRING, NULL};

static inline void set_i64(FutoInArgs* a, int i, int64_t v)
{
    a->args[i].type = &ty_i64;
    a->args[i].i64 = v;
}
static inline void set_str(FutoInArgs* a, int i, const char* v)
{
    a->args[i].type = &ty_str;
    a->args[i].cstr = v;
    a->args[i].length = (uint32_t)strlen(v);
}

#define API(as) ((as)->api)
#define SUCCESS0(as) API(as)->success((as), NULL)
#define ERROR(as, code) API(as)->handle_error((as), (code), NULL)

static inline void succeed_i64(FutoInAsyncSteps* as, int n, int64_t a,
                               int64_t b)
{
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    if (n > 0) set_i64(&args, 0, a);
    if (n > 1) set_i64(&args, 1, b);
    API(as)->success(as, &args);
}

static inline void on_unhandled(FutoInAsyncSteps* as, void* data,
                                const char* code)
{
    (void)as;
    (void)data;
    tr("unhandled %s", code);
}

#endif
