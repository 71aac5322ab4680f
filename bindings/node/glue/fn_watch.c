/*
 * Watching a tool's flows from JavaScript: its hooks (futoin/sys/hooks.h)
 * and the live dump (futoin_tool_dump()), for tool.setHooks() and
 * tool.dump(); and the trace context of a flow (futoin/trace.h), for
 * as.setTrace() and as.trace(). Thin, as in the other bindings: every
 * event goes to the dispatcher (FN_HOOK) as one object, which the
 * JavaScript layer hands to the tool's listener; the dump is the C report
 * as a string; the trace context is the library's, per root. Which
 * events, in which order, what a hook may do: the library's.
 */
#include "futoin_node.h"

#include <futoin/sys/hooks.h>
#include <futoin/trace.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_str(napi_env env, napi_value o, const char* name, const char* s)
{
    napi_value v;
    if (s) {
        napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v);
    } else {
        napi_get_null(env, &v);
    }
    napi_set_named_property(env, o, name, v);
}

static void set_num(napi_env env, napi_value o, const char* name, double n)
{
    napi_value v;
    napi_create_double(env, n, &v);
    napi_set_named_property(env, o, name, v);
}

/* Every hook, on the loop thread: dispatcher(FN_HOOK, undefined, tool,
 * event) with the event's fields as in Java's HookEvent (null / 0 for the
 * ones it has not). */
static void on_event(void* data, const futoin_hook_event* ev)
{
    napi_handle_scope scope;
    napi_env env = fn_dispatch_open(&scope);
    const futoin_frame_origin* o = ev->origin;
    const char* name = futoin_hook_name((int)ev->type);
    napi_value argv[2], obj;
    if (!env) {
        return;
    }
    napi_create_object(env, &obj);
    set_str(env, obj, "event", name ? name : "?");
    set_num(env, obj, "rootId", (double)ev->root_id);
    set_num(env, obj, "now", (double)ev->now);
    set_str(env, obj, "language", o ? o->language : NULL);
    set_str(env, obj, "function", o ? o->function : NULL);
    set_str(env, obj, "file", o ? o->file : NULL);
    set_num(env, obj, "line", o ? (double)o->line : 0);
    set_str(env, obj, "code", ev->code);
    set_str(env, obj, "info", ev->info);
    set_str(env, obj, "outcome",
            ev->type == FUTOIN_HOOK_FLOW_FINISHED ? futoin_hook_outcome_name(ev->outcome)
                                                  : NULL);
    set_str(env, obj, "waitKind",
            ev->wait != FUTOIN_WAIT_NONE ? futoin_wait_kind_name(ev->wait) : NULL);
    set_num(env, obj, "due", (double)ev->due);
    set_str(env, obj, "waitLanguage", ev->language);
    set_num(env, obj, "sync", (double)(uintptr_t)ev->sync);
    argv[0] = fn_ptr(env, data);
    argv[1] = obj;
    fn_dispatch_call(scope, FN_HOOK, NULL, 2, argv);
}

/* toolSetHooks(tool, on) -> the runtime's code: on, every event goes to
 * the dispatcher (the listener sees every event); off, cleared. */
FN_FUNC(tool_set_hooks)
{
    FN_ARGS(2);
    futoin_tool* t = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    bool on = false;
    futoin_hooks h = FUTOIN_HOOKS_INIT;
    if (!t) {
        return fn_int(env, FUTOIN_EINVAL);
    }
    if (argc > 1) {
        napi_get_value_bool(env, argv[1], &on);
    }
    if (!on) {
        return fn_int(env, futoin_tool_set_hooks(t, NULL));
    }
    h.data = t;
    h.flow_started = h.flow_finished = h.step_entered = h.step_left = on_event;
    h.error_raised = h.error_handled = h.cancel = on_event;
    h.wait_begun = h.wait_ended = h.sync_acquired = h.sync_released = on_event;
    return fn_int(env, futoin_tool_set_hooks(t, &h));
}

/* toolDump(tool) -> string (futoin_tool_dump()), or throws. */
FN_FUNC(tool_dump)
{
    FN_ARGS(1);
    futoin_tool* t = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    char* buf = NULL;
    size_t len = 0;
    FILE* f;
    int n;
    napi_value s;
    if (!t) {
        return fn_throw(env, "dump(): not a tool");
    }
    f = open_memstream(&buf, &len);
    if (!f) {
        return fn_throw(env, "dump(): out of memory");
    }
    n = futoin_tool_dump(t, f);
    if (fclose(f) != 0 || n < 0) {
        free(buf);
        return fn_throw(env, "dump(): refused by the runtime");
    }
    napi_create_string_utf8(env, buf ? buf : "", len, &s);
    free(buf);
    return s;
}

/* A JavaScript string as a malloc'd C string (the whole of it), or NULL. */
static char* dup_string(napi_env env, napi_value v)
{
    size_t len = 0;
    char* s;
    if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) {
        return NULL;
    }
    s = malloc(len + 1);
    if (s) {
        napi_get_value_string_utf8(env, v, s, len + 1, &len);
    }
    return s;
}

/* traceCheck(traceparent) -> why it is not a valid W3C traceparent, or
 * null (a NUL inside is caught by the JavaScript layer first: the C
 * string would end there). */
FN_FUNC(trace_check)
{
    FN_ARGS(1);
    char* tp = argc ? dup_string(env, argv[0]) : NULL;
    const char* why;
    napi_value v;
    if (!tp) {
        return fn_throw(env, "traceCheck(string)");
    }
    why = futoin_trace_check(tp);
    free(tp);
    if (!why) {
        napi_get_null(env, &v);
        return v;
    }
    napi_create_string_utf8(env, why, NAPI_AUTO_LENGTH, &v);
    return v;
}

/* traceSet(bsi, traceparent|null) -> the runtime's code. */
FN_FUNC(trace_set)
{
    FN_ARGS(2);
    FutoInAsyncSteps* bsi = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    napi_valuetype t = napi_null;
    char* tp;
    int rc;
    if (!bsi) {
        return fn_int(env, FUTOIN_EINVAL);
    }
    if (argc > 1) {
        napi_typeof(env, argv[1], &t);
    }
    if (t != napi_string) {
        return fn_int(env, futoin_trace_set(bsi, NULL));
    }
    tp = dup_string(env, argv[1]);
    if (!tp) {
        return fn_int(env, FUTOIN_ENOMEM);
    }
    rc = futoin_trace_set(bsi, tp);
    free(tp);
    return fn_int(env, rc);
}

/* traceGet(bsi) -> "<traceparent> <parent span id>" ("" for none, the
 * parent empty through a root's own handle), or null when the runtime
 * refuses the handle (misuse, reported). */
FN_FUNC(trace_get)
{
    FN_ARGS(1);
    FutoInAsyncSteps* bsi = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    futoin_trace_info ti = FUTOIN_TRACE_INFO_INIT;
    char buf[FUTOIN_TRACEPARENT_LEN + 18];
    int rc;
    napi_value v;
    rc = bsi ? futoin_trace_get(bsi, &ti) : FUTOIN_EINVAL;
    if (rc < 0) {
        napi_get_null(env, &v);
        return v;
    }
    if (rc == 0) {
        buf[0] = '\0';
    } else {
        snprintf(buf, sizeof(buf), "%s %s", ti.traceparent, ti.parent_span_id);
    }
    napi_create_string_utf8(env, buf, NAPI_AUTO_LENGTH, &v);
    return v;
}

void fn_watch_init(napi_env env, napi_value exports)
{
    FN_EXPORT(exports, "toolSetHooks", tool_set_hooks);
    FN_EXPORT(exports, "toolDump", tool_dump);
    FN_EXPORT(exports, "traceCheck", trace_check);
    FN_EXPORT(exports, "traceSet", trace_set);
    FN_EXPORT(exports, "traceGet", trace_get);
}
