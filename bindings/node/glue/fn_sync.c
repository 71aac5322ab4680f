/*
 * Mutex, Throttle and Limiter of the core, for lib/sync.js. A Throttle or
 * a Limiter runs its period's timer on one tool: the JavaScript layer
 * makes the C object on first use, on the tool of the flow that uses it.
 */
#include "futoin_node.h"

static size_t arg_size(napi_env env, size_t argc, napi_value* argv, size_t i, size_t dflt)
{
    double d;
    napi_valuetype t;
    if (argc <= i || napi_typeof(env, argv[i], &t) != napi_ok || t != napi_number
        || napi_get_value_double(env, argv[i], &d) != napi_ok || d < 0) {
        return dflt;
    }
    return d >= 1e15 ? FUTOIN_UNLIMITED : (size_t)d;
}

/* mutexNew(max, maxQueue|undefined) */
FN_FUNC(mutex_new)
{
    FN_ARGS(2);
    FutoInSync* s = futoin_mutex_new(arg_size(env, argc, argv, 0, 1),
                                     arg_size(env, argc, argv, 1, FUTOIN_UNLIMITED));
    if (!s) {
        return fn_throw(env, "Mutex: bad arguments");
    }
    return fn_ptr(env, s);
}

/* throttleNew(tool, max, periodMs, maxQueue|undefined) */
FN_FUNC(throttle_new)
{
    FN_ARGS(4);
    futoin_tool* t = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    FutoInSync* s = futoin_throttle_new(t, arg_size(env, argc, argv, 1, 1),
                                        (uint32_t)arg_size(env, argc, argv, 2, 1000),
                                        arg_size(env, argc, argv, 3, FUTOIN_UNLIMITED));
    if (!s) {
        return fn_throw(env, "Throttle: bad arguments");
    }
    return fn_ptr(env, s);
}

/* limiterNew(tool, concurrent, maxQueue, rate, periodMs, burst) */
FN_FUNC(limiter_new)
{
    FN_ARGS(6);
    futoin_tool* t = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    futoin_limiter_options o = FUTOIN_LIMITER_OPTIONS_INIT;
    FutoInSync* s;
    o.concurrent = arg_size(env, argc, argv, 1, 1);
    o.max_queue = arg_size(env, argc, argv, 2, 0);
    o.rate = arg_size(env, argc, argv, 3, 1);
    o.period_ms = (uint32_t)arg_size(env, argc, argv, 4, 1000);
    o.burst = arg_size(env, argc, argv, 5, 0);
    s = futoin_limiter_new(t, &o);
    if (!s) {
        return fn_throw(env, "Limiter: bad arguments");
    }
    return fn_ptr(env, s);
}

/* syncFree(kind, ptr): kind 0 Mutex, 1 Throttle, 2 Limiter -> rc */
FN_FUNC(sync_free)
{
    FN_ARGS(2);
    int32_t kind = -1;
    FutoInSync* s = argc > 1 ? fn_arg_ptr(env, argv[1]) : NULL;
    napi_value r;
    int rc = FUTOIN_EINVAL;
    if (argc > 0) {
        napi_get_value_int32(env, argv[0], &kind);
    }
    if (s) {
        rc = kind == 0 ? futoin_mutex_free(s)
           : kind == 1 ? futoin_throttle_free(s)
           : kind == 2 ? futoin_limiter_free(s) : FUTOIN_EINVAL;
    }
    napi_create_int32(env, rc, &r);
    return r;
}

void fn_sync_init(napi_env env, napi_value exports)
{
    FN_EXPORT(exports, "mutexNew", mutex_new);
    FN_EXPORT(exports, "throttleNew", throttle_new);
    FN_EXPORT(exports, "limiterNew", limiter_new);
    FN_EXPORT(exports, "syncFree", sync_free);
}
