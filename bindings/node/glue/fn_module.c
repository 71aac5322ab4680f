/*
 * The addon's module: one fn_env per JavaScript thread (the main thread,
 * each Worker), the dispatcher through which the core calls JavaScript,
 * the release hook of every JavaScript reference given to the core, and
 * the numbers that stand for C pointers.
 */
#include "futoin_node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Thread_local fn_env* fn_cur;

napi_value fn_throw(napi_env env, const char* msg)
{
    napi_throw_error(env, FUTOIN_ERR_INTERNAL_ERROR, msg);
    return NULL;
}

napi_value fn_ptr(napi_env env, const void* p)
{
    napi_value v;
    napi_create_double(env, (double)(uintptr_t)p, &v);
    return v;
}

napi_value fn_int(napi_env env, int64_t n)
{
    napi_value v;
    napi_create_int64(env, n, &v);
    return v;
}

void* fn_arg_ptr(napi_env env, napi_value v)
{
    double d = 0;
    if (napi_get_value_double(env, v, &d) != napi_ok || d <= 0) {
        return NULL;
    }
    return (void*)(uintptr_t)d;
}

void fn_release_ref(void* data)
{
    fn_env* e = fn_cur;
    /* A reference outliving its environment (a root freed at exit) is
     * gone with it: nothing to delete. */
    if (!data || !e || e->closing) {
        return;
    }
    --e->live_refs;
    if (FN_IS_ID(data)) {
        if (e->n_released == e->cap_released) {
            size_t cap = e->cap_released ? e->cap_released * 2 : 1024;
            uint32_t* r = realloc(e->released, cap * sizeof *r);
            if (!r) {
                return; /* the slot stays taken: a leak of one slot, never a reuse too early */
            }
            e->released = r;
            e->cap_released = cap;
        }
        e->released[e->n_released++] = FN_ID_OF(data);
        return;
    }
    napi_delete_reference(e->env, (napi_ref)data);
}

void* fn_data_of(napi_env env, napi_value v)
{
    napi_valuetype t = napi_undefined;
    uint32_t id = 0;
    napi_typeof(env, v, &t);
    if (t == napi_number && napi_get_value_uint32(env, v, &id) == napi_ok
        && id < (UINT32_MAX >> 1)) {
        if (fn_cur) {
            ++fn_cur->live_refs;
        }
        return (void*)(((uintptr_t)id << 1) | 1u);
    }
    return fn_new_ref(env, v);
}

napi_value fn_data_value(napi_env env, void* data)
{
    napi_value v;
    if (FN_IS_ID(data)) {
        napi_create_uint32(env, FN_ID_OF(data), &v);
    } else if (!data || napi_get_reference_value(env, (napi_ref)data, &v) != napi_ok || !v) {
        napi_get_undefined(env, &v);
    }
    return v;
}

/* releasedIds(buffer: Uint32Array) -> n: the ids the core released since
 * the last call, at most the buffer's length (the rest next time). */
FN_FUNC(released_ids)
{
    FN_ARGS(1);
    fn_env* e = fn_cur;
    napi_typedarray_type tt;
    size_t len = 0, n, off;
    void* data = NULL;
    napi_value ab;
    if (!e || argc < 1
        || napi_get_typedarray_info(env, argv[0], &tt, &len, &data, &ab, &off) != napi_ok
        || tt != napi_uint32_array) {
        return fn_throw(env, "releasedIds(Uint32Array)");
    }
    n = e->n_released < len ? e->n_released : len;
    e->n_released -= n;
    memcpy(data, e->released + e->n_released, n * sizeof(uint32_t));
    napi_value r;
    napi_create_uint32(env, (uint32_t)n, &r);
    return r;
}

napi_ref fn_new_ref(napi_env env, napi_value v)
{
    napi_ref r = NULL;
    if (napi_create_reference(env, v, 1, &r) == napi_ok && fn_cur) {
        ++fn_cur->live_refs;
    }
    return r;
}

void fn_misuse(void* data, const char* code, const char* message)
{
    fn_env* e = data;
    (void)code;
    if (e) {
        snprintf(e->misuse, sizeof e->misuse, "%s", message ? message : "");
        ++e->misuse_seen;
    }
}

napi_env fn_dispatch_open(napi_handle_scope* scope)
{
    fn_env* e = fn_cur;
    if (!e || e->closing || !e->dispatch) {
        return NULL;
    }
    if (napi_open_handle_scope(e->env, scope) != napi_ok) {
        return NULL;
    }
    return e->env;
}

void fn_dispatch_call(napi_handle_scope scope, enum fn_kind kind, void* rec,
                      size_t argc, napi_value* argv)
{
    fn_dispatch_invoke(kind, rec, argc, argv);
    napi_close_handle_scope(fn_cur->env, scope);
}

napi_value fn_dispatch_invoke(enum fn_kind kind, void* rec, size_t argc,
                              napi_value* argv)
{
    fn_env* e = fn_cur;
    napi_env env = e->env;
    napi_value all[6], fn, recv, result = NULL;
    napi_status st;
    size_t i;

    napi_create_int32(env, (int32_t)kind, &all[0]);
    all[1] = fn_data_value(env, rec);
    for (i = 0; i < argc && i < 4; ++i) {
        all[2 + i] = argv[i];
    }
    napi_get_reference_value(env, e->dispatch, &fn);
    napi_get_global(env, &recv);
    /* From a libuv callback of Node's loop nothing of JavaScript is on the
     * stack: napi_make_callback() enters it as Node's own callbacks do and
     * runs the microtasks (resolved promises) after. Inside a call from
     * JavaScript a plain call is right. */
    if (e->js_depth > 0) {
        ++e->js_depth;
        st = napi_call_function(env, recv, fn, 2 + i, all, &result);
        --e->js_depth;
    } else {
        ++e->js_depth;
        st = napi_make_callback(env, e->actx, recv, fn, 2 + i, all, &result);
        --e->js_depth;
    }
    if (st != napi_ok) {
        bool pending = false;
        napi_is_exception_pending(env, &pending);
        if (pending) {
            /* The dispatcher catches what steps throw; what reaches here
             * is a bug of the JavaScript layer: say it, never unwind
             * through the core's frames. */
            napi_value ex, str;
            char buf[512] = "";
            napi_get_and_clear_last_exception(env, &ex);
            napi_valuetype t = napi_undefined;
            napi_typeof(env, ex, &t);
            if (t == napi_object) {
                napi_value stack;
                if (napi_get_named_property(env, ex, "stack", &stack) == napi_ok) {
                    ex = stack;
                }
            }
            if (napi_coerce_to_string(env, ex, &str) == napi_ok) {
                napi_get_value_string_utf8(env, str, buf, sizeof buf, NULL);
            }
            fprintf(stderr, "futoin_async (node): uncaught in dispatch: %s\n", buf);
        }
        result = NULL;
    }
    if (!result) {
        napi_get_undefined(env, &result);
    }
    return result;
}

/* setDispatcher(fn): the JavaScript function every call from the core goes
 * through (lib/native.js). */
FN_FUNC(set_dispatcher)
{
    FN_ARGS(1);
    fn_env* e = fn_cur;
    if (argc < 1 || !e) {
        return fn_throw(env, "setDispatcher(fn)");
    }
    if (e->dispatch) {
        napi_delete_reference(env, e->dispatch);
    }
    napi_create_reference(env, argv[0], 1, &e->dispatch);
    return NULL;
}

/* lastMisuse(): [count, message] of what the core refused last. */
FN_FUNC(last_misuse)
{
    (void)info;
    napi_value arr, n, s;
    fn_env* e = fn_cur;
    napi_create_array_with_length(env, 2, &arr);
    napi_create_double(env, e ? (double)e->misuse_seen : 0, &n);
    napi_create_string_utf8(env, e ? e->misuse : "", NAPI_AUTO_LENGTH, &s);
    napi_set_element(env, arr, 0, n);
    napi_set_element(env, arr, 1, s);
    return arr;
}

static void env_cleanup(void* arg)
{
    fn_env* e = arg;
    e->closing = 1;
    if (e->main_tool) {
        /* Refused (EBUSY) while roots live; at exit they die with the
         * process. A Worker's flows have ended when its loop did. */
        futoin_tool_free(e->main_tool);
        e->main_tool = NULL;
    }
    if (fn_cur == e) {
        fn_cur = NULL;
    }
    free(e->released);
    free(e);
}

NAPI_MODULE_INIT()
{
    napi_value name, resource, v;
    fn_env* e = calloc(1, sizeof *e);
    if (!e) {
        return fn_throw(env, "futoin_async: out of memory");
    }
    e->env = env;
    napi_create_string_utf8(env, "futoin_async", NAPI_AUTO_LENGTH, &name);
    napi_create_object(env, &resource);
    napi_async_init(env, resource, name, &e->actx);
    fn_cur = e;
    napi_add_env_cleanup_hook(env, env_cleanup, e);

    FN_EXPORT(exports, "setDispatcher", set_dispatcher);
    FN_EXPORT(exports, "lastMisuse", last_misuse);
    FN_EXPORT(exports, "releasedIds", released_ids);
    napi_create_string_utf8(env, futoin_async_version(), NAPI_AUTO_LENGTH, &v);
    napi_set_named_property(env, exports, "version", v);
    fn_tool_init(env, exports);
    fn_steps_init(env, exports);
    fn_sync_init(env, exports);
    fn_host_init(env, exports);
    fn_watch_init(env, exports);
    return exports;
}
