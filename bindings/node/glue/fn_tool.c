/*
 * Tools: the one attached to Node's own loop (napi_get_uv_event_loop(), no
 * second loop, no polling thread), made on first use per JavaScript
 * thread, and virtual-time tools with loops of their own that
 * AsyncToolTest drives by hand. Timers of JavaScript (callLater) on
 * either.
 */
#include "futoin_node.h"

#include <stdlib.h>

/* A callLater(): freed when it runs or is cancelled. */
typedef struct fn_timer
{
    napi_ref rec;
    futoin_tool* tool;
    FutoInHandle h;
} fn_timer;

static futoin_tool* main_tool(napi_env env)
{
    fn_env* e = fn_cur;
    if (!e) {
        return NULL;
    }
    if (!e->main_tool) {
        struct uv_loop_s* loop = NULL;
        futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
        if (napi_get_uv_event_loop(env, &loop) != napi_ok || !loop) {
            return NULL;
        }
        o.uv_loop = loop;
        o.misuse = fn_misuse;
        o.misuse_data = e;
        if (futoin_tool_new(&e->main_tool, &o) != FUTOIN_OK) {
            e->main_tool = NULL;
        }
    }
    return e->main_tool;
}

FN_FUNC(tool_main)
{
    (void)info;
    futoin_tool* t = main_tool(env);
    if (!t) {
        return fn_throw(env, "futoin_async: no tool on Node's loop");
    }
    return fn_ptr(env, t);
}

FN_FUNC(tool_new_virtual)
{
    (void)info;
    futoin_tool* t = NULL;
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    o.virtual_time = true;
    o.misuse = fn_misuse;
    o.misuse_data = fn_cur;
    if (futoin_tool_new(&t, &o) != FUTOIN_OK) {
        return fn_throw(env, "futoin_async: cannot make a virtual-time tool");
    }
    return fn_ptr(env, t);
}

/* toolFree(tool), toolRun(tool), toolRunNowait(tool) -> the runtime's
 * code: the same but for the call. */
static napi_value tool_call(napi_env env, napi_callback_info info, int (*call)(futoin_tool*))
{
    FN_ARGS(1);
    futoin_tool* t = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    return fn_int(env, t ? call(t) : FUTOIN_EINVAL);
}

FN_FUNC(tool_free)
{
    return tool_call(env, info, futoin_tool_free);
}

FN_FUNC(tool_run)
{
    return tool_call(env, info, futoin_tool_run);
}

FN_FUNC(tool_run_nowait)
{
    return tool_call(env, info, futoin_tool_run_nowait);
}

FN_FUNC(tool_advance)
{
    FN_ARGS(2);
    double ms = 0;
    futoin_tool* t = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    if (argc > 1) {
        napi_get_value_double(env, argv[1], &ms);
    }
    if (!t || ms < 0) {
        return fn_int(env, FUTOIN_EINVAL);
    }
    return fn_int(env, futoin_tool_advance(t, (uint64_t)ms));
}

/* nextDue(tool): ms until the next timer, or -1 when none is pending. */
FN_FUNC(tool_next_due)
{
    FN_ARGS(1);
    uint64_t ms = 0;
    futoin_tool* t = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    if (!t || futoin_tool_next_due(t, &ms) != 1) {
        return fn_int(env, -1);
    }
    return fn_int(env, (int64_t)ms);
}

FN_FUNC(tool_now)
{
    FN_ARGS(1);
    futoin_tool* t = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    return fn_int(env, t ? (int64_t)futoin_tool_now(t) : 0);
}

FN_FUNC(tool_stats)
{
    FN_ARGS(1);
    futoin_tool* t = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    futoin_tool_stats s = FUTOIN_TOOL_STATS_INIT;
    napi_value o;
    if (!t || futoin_tool_get_stats(t, &s) != FUTOIN_OK) {
        return fn_throw(env, "toolStats: not a tool");
    }
    napi_create_object(env, &o);
    napi_set_named_property(env, o, "misuse", fn_int(env, (int64_t)s.misuse));
    napi_set_named_property(env, o, "lateCompletions",
                            fn_int(env, (int64_t)s.late_completions));
    napi_set_named_property(env, o, "liveRoots", fn_int(env, (int64_t)s.live_roots));
    napi_set_named_property(env, o, "liveSteps", fn_int(env, (int64_t)s.live_steps));
    return o;
}

static void timer_cb(void* data)
{
    fn_timer* tm = data;
    napi_handle_scope scope;
    if (fn_dispatch_open(&scope)) {
        fn_dispatch_call(scope, FN_TIMER, tm->rec, 0, NULL);
    }
    fn_release_ref(tm->rec);
    free(tm);
}

/* callLater(tool, ms, rec) -> id: dispatcher(FN_TIMER, rec) after `ms`
 * (0: an immediate). The id is valid until the timer ran (the JavaScript
 * layer knows: its rec is told) or cancelCall(tool, id). */
FN_FUNC(call_later)
{
    FN_ARGS(3);
    double ms = 0;
    futoin_tool* t = argc > 0 ? fn_arg_ptr(env, argv[0]) : NULL;
    fn_timer* tm;
    if (!t || argc < 3) {
        return fn_throw(env, "callLater(tool, ms, rec)");
    }
    napi_get_value_double(env, argv[1], &ms);
    tm = calloc(1, sizeof *tm);
    if (!tm) {
        return fn_throw(env, "callLater: out of memory");
    }
    tm->tool = t;
    tm->rec = fn_new_ref(env, argv[2]);
    if (ms >= 1) {
        tm->h = futoin_tool_deferred(t, ms > 4e9 ? 4000000000u : (uint32_t)ms,
                                     timer_cb, tm);
    } else {
        tm->h = futoin_tool_immediate(t, timer_cb, tm);
    }
    if (!FUTOIN_HANDLE_QUEUED(tm->h)) {
        fn_release_ref(tm->rec);
        free(tm);
        return fn_throw(env, "callLater: not queued (wrong thread or closing)");
    }
    return fn_ptr(env, tm);
}

FN_FUNC(cancel_call)
{
    FN_ARGS(1);
    fn_timer* tm = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    if (tm) {
        futoin_tool_cancel(tm->tool, &tm->h);
        fn_release_ref(tm->rec);
        free(tm);
    }
    return NULL;
}

void fn_tool_init(napi_env env, napi_value exports)
{
    FN_EXPORT(exports, "toolMain", tool_main);
    FN_EXPORT(exports, "toolNewVirtual", tool_new_virtual);
    FN_EXPORT(exports, "toolFree", tool_free);
    FN_EXPORT(exports, "toolRun", tool_run);
    FN_EXPORT(exports, "toolRunNowait", tool_run_nowait);
    FN_EXPORT(exports, "toolAdvance", tool_advance);
    FN_EXPORT(exports, "toolNextDue", tool_next_due);
    FN_EXPORT(exports, "toolNow", tool_now);
    FN_EXPORT(exports, "toolStats", tool_stats);
    FN_EXPORT(exports, "callLater", call_later);
    FN_EXPORT(exports, "cancelCall", cancel_call);
}
