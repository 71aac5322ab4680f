/*
 * Steps: the trampolines through which the core calls JavaScript step
 * functions, error handlers, cancel handlers and loop bodies, and the
 * FTN12 calls JavaScript makes through a step's handle. Every JavaScript
 * object given to the core as callback data is a napi reference released
 * exactly once by the core's release hook (fn_release_ref); the
 * dispatcher (lib/native.js) catches what JavaScript throws, so nothing
 * unwinds through the core's frames.
 */
#include "futoin_node.h"

#include <futoin/sys/ext.h>

#include <stdlib.h>
#include <string.h>

/* ---- trampolines ------------------------------------------------------- */

static napi_value str_or_undef(napi_env env, const char* s)
{
    napi_value v;
    if (s) {
        napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v);
    } else {
        napi_get_undefined(env, &v);
    }
    return v;
}

void fn_t_step(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    napi_handle_scope scope;
    napi_env env = fn_dispatch_open(&scope);
    napi_value a[2];
    if (!env) {
        return;
    }
    a[0] = fn_ptr(env, bsi);
    a[1] = fn_args_to_values(env, args);
    fn_dispatch_call(scope, FN_STEP, data, 2, a);
}

/* An error handler's call, or a root's unhandled error: (bsi, code, info). */
static void t_error_call(enum fn_kind kind, FutoInAsyncSteps* bsi, void* data, const char* code)
{
    napi_handle_scope scope;
    napi_env env = fn_dispatch_open(&scope);
    napi_value a[3];
    if (!env) {
        return;
    }
    a[0] = fn_ptr(env, bsi);
    a[1] = str_or_undef(env, code ? code : FUTOIN_ERR_INTERNAL_ERROR);
    a[2] = str_or_undef(env, futoin_wrap_error_info(bsi));
    fn_dispatch_call(scope, kind, data, 3, a);
}

void fn_t_error(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    t_error_call(FN_ERROR, bsi, data, code);
}

static void t_unhandled(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    t_error_call(FN_UNHANDLED, bsi, data, code);
}

/* A cancel handler's or a loop body's call: (bsi) only. */
static void t_bsi_call(enum fn_kind kind, FutoInAsyncSteps* bsi, void* data)
{
    napi_handle_scope scope;
    napi_env env = fn_dispatch_open(&scope);
    napi_value a[1];
    if (!env) {
        return;
    }
    a[0] = fn_ptr(env, bsi);
    fn_dispatch_call(scope, kind, data, 1, a);
}

static void t_cancel(FutoInAsyncSteps* bsi, void* data)
{
    t_bsi_call(FN_CANCEL, bsi, data);
}

static void t_loop(FutoInAsyncSteps* bsi, void* data)
{
    t_bsi_call(FN_LOOP, bsi, data);
}

static void t_repeat(FutoInAsyncSteps* bsi, void* data, size_t i)
{
    napi_handle_scope scope;
    napi_env env = fn_dispatch_open(&scope);
    napi_value a[2];
    if (!env) {
        return;
    }
    a[0] = fn_ptr(env, bsi);
    napi_create_double(env, (double)i, &a[1]);
    fn_dispatch_call(scope, FN_REPEAT, data, 2, a);
}

/* The last step of every execution: it does nothing, and its release
 * (after it ran, or when an error or a cancel dropped it) says that the
 * execution ended. The root is freed by an immediate, never from inside
 * its own teardown. */
typedef struct fn_root_end
{
    napi_ref rec;
    FutoInAsyncSteps* root;
    futoin_tool* tool;
} fn_root_end;

static void t_end_step(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    (void)bsi;
    (void)data;
    (void)args;
}

static void root_free_cb(void* data)
{
    FutoInAsyncSteps* root = data;
    root->api->free(root);
}

static void root_end_release(void* data)
{
    fn_root_end* re = data;
    napi_handle_scope scope;
    if (fn_dispatch_open(&scope)) {
        fn_dispatch_call(scope, FN_ROOT_END, re->rec, 0, NULL);
    }
    fn_release_ref(re->rec);
    if (fn_cur && !fn_cur->closing) {
        futoin_tool_immediate(re->tool, root_free_cb, re->root);
    }
    free(re);
}

/* A waiting step's anchor: its stack() memory holds the reference of the
 * JavaScript handle; the cleanup, when the step's frame ends however it
 * ends, tells the handle that it is over. */
static void anchor_cleanup(void* value)
{
    napi_ref rec = *(napi_ref*)value;
    napi_handle_scope scope;
    if (fn_dispatch_open(&scope)) {
        fn_dispatch_call(scope, FN_ENDED, rec, 0, NULL);
    }
    fn_release_ref(rec);
}

/* ---- calls ---------------------------------------------------------------- */

static FutoInAsyncSteps* arg_bsi(napi_env env, size_t argc, napi_value* argv)
{
    return argc > 0 ? fn_arg_ptr(env, argv[0]) : NULL;
}

/* The prologue of a call on a step's handle: up to n arguments, the
 * first the handle (`bsi`, NULL when it is none). */
#define FN_BSI_ARGS(n)                                                         \
    FN_ARGS(n);                                                                \
    FutoInAsyncSteps* bsi = arg_bsi(env, argc, argv)

#define new_ref fn_new_ref

static int truthy(napi_env env, napi_value v)
{
    bool b = false;
    napi_value c;
    if (napi_coerce_to_bool(env, v, &c) == napi_ok) {
        napi_get_value_bool(env, c, &b);
    }
    return b;
}

/* A string argument (an error code or info, a loop label) of any length:
 * a malloc()ed copy the caller frees, or NULL when argv[i] is no string.
 * A string with an embedded NUL sets *refused (a C string would end
 * there, silently naming another code or label): the lib refuses those
 * before they get here, so this only keeps the glue from truncating. */
static char* arg_string(napi_env env, size_t argc, napi_value* argv, size_t i,
                        int* refused)
{
    napi_valuetype t;
    size_t len = 0;
    char* s;
    if (argc <= i || napi_typeof(env, argv[i], &t) != napi_ok || t != napi_string
        || napi_get_value_string_utf8(env, argv[i], NULL, 0, &len) != napi_ok) {
        return NULL;
    }
    s = malloc(len + 1);
    if (!s) {
        *refused = 1;
        return NULL;
    }
    napi_get_value_string_utf8(env, argv[i], s, len + 1, NULL);
    if (strlen(s) != len) {
        free(s);
        *refused = 1;
        return NULL;
    }
    return s;
}

static napi_value refuse_string(napi_env env, const char* what)
{
    napi_throw_type_error(env, NULL, what);
    return NULL;
}

/* A loop label argument: 0 with *label set (NULL: none given, else a
 * copy the caller frees), or -1 with a TypeError thrown. */
static int arg_label(napi_env env, size_t argc, napi_value* argv, size_t i,
                     const char* what, char** label)
{
    int refused = 0;
    *label = arg_string(env, argc, argv, i, &refused);
    if (refused) {
        refuse_string(env, what);
        return -1;
    }
    return 0;
}

FN_FUNC(root_new)
{
    FN_ARGS(1);
    futoin_tool* t = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    FutoInAsyncSteps* root = t ? futoin_root_new(t) : NULL;
    if (!root) {
        return fn_throw(env, "rootNew: no tool, another thread or out of memory");
    }
    return fn_ptr(env, root);
}

/* execute(root, rec): the end step, then execute() whose unhandled
 * error goes to rec too. */
FN_FUNC(execute)
{
    FN_ARGS(2);
    FutoInAsyncSteps* root = arg_bsi(env, argc, argv);
    fn_root_end* re;
    if (!root || argc < 2) {
        return fn_throw(env, "execute(root, rec)");
    }
    re = calloc(1, sizeof *re);
    if (!re) {
        return fn_throw(env, "execute: out of memory");
    }
    re->rec = new_ref(env, argv[1]);
    re->root = root;
    re->tool = futoin_async_tool(root);
    futoin_wrap_add(root, re, t_end_step, NULL, root_end_release);
    futoin_wrap_execute(root, new_ref(env, argv[1]), t_unhandled, fn_release_ref);
    return NULL;
}

FN_FUNC(cancel)
{
    FN_BSI_ARGS(1);
    if (bsi) {
        bsi->api->cancel(bsi);
    }
    return NULL;
}

/* add(bsi, rec, hasErrorHandler) */
FN_FUNC(add)
{
    FN_BSI_ARGS(3);
    if (!bsi || argc < 3) {
        return fn_throw(env, "add(bsi, rec, eh)");
    }
    futoin_wrap_add_classed(bsi, fn_data_of(env, argv[1]), fn_t_step,
                            truthy(env, argv[2]) ? fn_t_error : NULL, &fn_js_class);
    return NULL;
}

/* parallel(bsi, rec|undefined) -> the parallel's handle */
FN_FUNC(parallel)
{
    FN_BSI_ARGS(2);
    FutoInAsyncSteps* p;
    if (!bsi) {
        return fn_throw(env, "parallel(bsi, rec)");
    }
    napi_valuetype t = napi_undefined;
    if (argc > 1) {
        napi_typeof(env, argv[1], &t);
    }
    if (t != napi_undefined && t != napi_null) { /* a record, or its id (0 too) */
        p = futoin_wrap_parallel(bsi, fn_data_of(env, argv[1]), fn_t_error, fn_release_ref);
    } else {
        p = futoin_wrap_parallel(bsi, NULL, NULL, NULL);
    }
    if (!p) {
        return fn_throw(env, "parallel: refused");
    }
    return fn_ptr(env, p);
}

/* success(bsi, values|undefined) -> 1 taken, 0 late, < 0 misuse */
FN_FUNC(success)
{
    FN_BSI_ARGS(2);
    FutoInArgs a;
    napi_valuetype t = napi_undefined;
    if (!bsi) {
        return fn_int(env, FUTOIN_EINVAL);
    }
    if (argc > 1) {
        napi_typeof(env, argv[1], &t);
    }
    if (t == napi_object) {
        fn_values_to_args(env, argv[1], &a);
        return fn_int(env, futoin_wrap_try_success(bsi, &a));
    }
    return fn_int(env, futoin_wrap_try_success(bsi, NULL));
}

/* error(bsi, code, info|undefined) -> as success() */
FN_FUNC(error)
{
    FN_BSI_ARGS(3);
    int refused = 0;
    char* code;
    char* inf;
    int rc;
    if (!bsi || argc < 2) {
        return fn_int(env, FUTOIN_EINVAL);
    }
    code = arg_string(env, argc, argv, 1, &refused);
    inf = arg_string(env, argc, argv, 2, &refused);
    if (refused || (code && !*code)) {
        free(code);
        free(inf);
        return refuse_string(env, "error(): code must be a non-empty string without NUL");
    }
    rc = futoin_wrap_try_error(bsi, code ? code : FUTOIN_ERR_INTERNAL_ERROR, inf);
    free(code);
    free(inf);
    return fn_int(env, rc);
}

FN_FUNC(set_timeout)
{
    FN_BSI_ARGS(2);
    double ms = 0;
    if (bsi && argc > 1) {
        napi_get_value_double(env, argv[1], &ms);
        bsi->api->setTimeout(bsi, ms < 0 ? 0 : ms > 4e9 ? 4000000000u : (uint32_t)ms);
    }
    return NULL;
}

FN_FUNC(set_cancel)
{
    FN_BSI_ARGS(2);
    if (bsi && argc > 1) {
        futoin_wrap_set_cancel(bsi, fn_data_of(env, argv[1]), t_cancel, fn_release_ref);
    }
    return NULL;
}

FN_FUNC(wait_external)
{
    FN_BSI_ARGS(1);
    if (bsi) {
        bsi->api->waitExternal(bsi);
    }
    return NULL;
}

/* anchor(bsi, handleObject): dispatcher(FN_ENDED, handleObject) when the
 * step ends. */
FN_FUNC(anchor)
{
    FN_BSI_ARGS(2);
    napi_ref* slot;
    if (!bsi || argc < 2) {
        return fn_throw(env, "anchor(bsi, obj)");
    }
    slot = bsi->api->stack(bsi, sizeof(napi_ref), anchor_cleanup);
    if (!slot) {
        return fn_throw(env, "anchor: refused");
    }
    *slot = new_ref(env, argv[1]);
    return NULL;
}

/* loop(bsi, rec, label) */
FN_FUNC(loop)
{
    FN_BSI_ARGS(3);
    char* label;
    if (!bsi || argc < 2) {
        return fn_throw(env, "loop(bsi, rec, label)");
    }
    if (arg_label(env, argc, argv, 2, "loop(): label must be a string without NUL", &label)) {
        return NULL;
    }
    futoin_wrap_loop_classed(bsi, fn_data_of(env, argv[1]), t_loop, label, &fn_js_class);
    free(label);
    return NULL;
}

/* repeat(bsi, rec, count, label) */
FN_FUNC(repeat)
{
    FN_BSI_ARGS(4);
    char* label;
    double n = 0;
    if (!bsi || argc < 3) {
        return fn_throw(env, "repeat(bsi, rec, count, label)");
    }
    if (arg_label(env, argc, argv, 3, "repeat(): label must be a string without NUL", &label)) {
        return NULL;
    }
    napi_get_value_double(env, argv[2], &n);
    futoin_wrap_repeat_classed(bsi, fn_data_of(env, argv[1]), n > 0 ? (size_t)n : 0, t_repeat,
                               label, &fn_js_class);
    free(label);
    return NULL;
}

/* breakLoop(bsi, label) and continueLoop(bsi, label): the same but for
 * the core call. */
static napi_value loop_jump(napi_env env, napi_callback_info info, int is_continue,
                            const char* what)
{
    FN_BSI_ARGS(2);
    char* label;
    if (arg_label(env, argc, argv, 1, what, &label)) {
        return NULL;
    }
    if (bsi && is_continue) {
        bsi->api->continueLoop(bsi, label);
    } else if (bsi) {
        bsi->api->breakLoop(bsi, label);
    }
    free(label);
    return NULL;
}

FN_FUNC(break_loop)
{
    return loop_jump(env, info, 0,
                     "break(): label must be a string without NUL");
}

FN_FUNC(continue_loop)
{
    return loop_jump(env, info, 1,
                     "continue(): label must be a string without NUL");
}

/* addSync(bsi, sync, rec, hasErrorHandler) */
FN_FUNC(add_sync)
{
    FN_BSI_ARGS(4);
    FutoInSync* s = argc > 1 ? fn_arg_ptr(env, argv[1]) : NULL;
    if (!bsi || !s || argc < 4) {
        return fn_throw(env, "addSync(bsi, sync, rec, eh)");
    }
    futoin_wrap_add_sync_classed(bsi, s, fn_data_of(env, argv[2]), fn_t_step,
                                 truthy(env, argv[3]) ? fn_t_error : NULL, &fn_js_class);
    return NULL;
}

/* JavaScript's consecutive steps in one call from the core (ext chain(),
 * version 4). chainInit(Float64Array(1)) once: the buffer where chain()
 * leaves the next step's handle. chain(bsi) -> the next step's record (its
 * id, or the object), its handle in the buffer; undefined when nothing was
 * done. Inside the callback of step `bsi`, which kept its success() (or
 * completes with no values): complete it and start the next step if it is
 * a JavaScript step of add(); its values never leave JavaScript. */
static _Thread_local double* g_chain_slot;
static _Thread_local napi_ref g_chain_buf;

FN_FUNC(chain_init)
{
    FN_ARGS(1);
    napi_typedarray_type tt;
    size_t len = 0, off;
    void* data = NULL;
    napi_value ab;
    if (argc < 1 || napi_get_typedarray_info(env, argv[0], &tt, &len, &data, &ab, &off) != napi_ok
        || tt != napi_float64_array || len < 1) {
        return fn_throw(env, "chainInit(Float64Array)");
    }
    if (g_chain_buf) {
        napi_delete_reference(env, g_chain_buf);
    }
    napi_create_reference(env, argv[0], 1, &g_chain_buf);
    g_chain_slot = data;
    return NULL;
}

FN_FUNC(chain)
{
    static const FutoInAsyncSteps_execute_callback fns[] = {fn_t_step};
    FN_BSI_ARGS(1);
    const futoin_async_ext_table* x = bsi ? futoin_async_ext(bsi) : NULL;
    FutoInAsyncSteps* next;
    void* data = NULL;
    if (!x || x->version < FUTOIN_EXT_VERSION_4 || !g_chain_slot) {
        return NULL;
    }
    next = x->chain(bsi, fns, 1, &data);
    if (!next) {
        return NULL;
    }
    *g_chain_slot = (double)(uintptr_t)next;
    return fn_data_value(env, data);
}

/* addMany(bsi, ids: Uint32Array, n, ehBits: Uint8Array): add() of n
 * records by id in one call (execute() hands a root's queued steps over);
 * ehBits[i] says whether record ids[i] has an error handler. */
FN_FUNC(add_many)
{
    FN_BSI_ARGS(4);
    napi_typedarray_type tt, tt2;
    size_t len = 0, len2 = 0, off;
    void *ids = NULL, *ehs = NULL;
    napi_value ab;
    uint32_t n = 0, i;
    if (!bsi || argc < 4
        || napi_get_typedarray_info(env, argv[1], &tt, &len, &ids, &ab, &off) != napi_ok
        || tt != napi_uint32_array || napi_get_value_uint32(env, argv[2], &n) != napi_ok
        || napi_get_typedarray_info(env, argv[3], &tt2, &len2, &ehs, &ab, &off) != napi_ok
        || tt2 != napi_uint8_array || n > len || n > len2) {
        return fn_throw(env, "addMany(bsi, ids, n, ehBits)");
    }
    for (i = 0; i < n; ++i) {
        uint32_t id = ((const uint32_t*)ids)[i];
        if (fn_cur) {
            ++fn_cur->live_refs;
        }
        futoin_wrap_add_classed(bsi, (void*)(((uintptr_t)id << 1) | 1u), fn_t_step,
                                ((const uint8_t*)ehs)[i] ? fn_t_error : NULL, &fn_js_class);
    }
    return NULL;
}

/* errorCode(bsi) -> the flow's last error code (the core's accessor), or
 * undefined when there is none: the lib asks after a break() or
 * continue(), whose loop forgets the last error. */
FN_FUNC(error_code)
{
    FN_BSI_ARGS(1);
    return str_or_undef(env, bsi ? futoin_wrap_error_code(bsi) : NULL);
}

FN_FUNC(tool_of)
{
    FN_BSI_ARGS(1);
    return fn_ptr(env, bsi ? futoin_async_tool(bsi) : NULL);
}

void fn_steps_init(napi_env env, napi_value exports)
{
    FN_EXPORT(exports, "rootNew", root_new);
    FN_EXPORT(exports, "execute", execute);
    FN_EXPORT(exports, "cancel", cancel);
    FN_EXPORT(exports, "add", add);
    FN_EXPORT(exports, "parallel", parallel);
    FN_EXPORT(exports, "success", success);
    FN_EXPORT(exports, "error", error);
    FN_EXPORT(exports, "setTimeout", set_timeout);
    FN_EXPORT(exports, "setCancel", set_cancel);
    FN_EXPORT(exports, "waitExternal", wait_external);
    FN_EXPORT(exports, "anchor", anchor);
    FN_EXPORT(exports, "loop", loop);
    FN_EXPORT(exports, "repeat", repeat);
    FN_EXPORT(exports, "breakLoop", break_loop);
    FN_EXPORT(exports, "continueLoop", continue_loop);
    FN_EXPORT(exports, "addSync", add_sync);
    FN_EXPORT(exports, "toolOf", tool_of);
    FN_EXPORT(exports, "chain", chain);
    FN_EXPORT(exports, "chainInit", chain_init);
    FN_EXPORT(exports, "addMany", add_many);
    FN_EXPORT(exports, "errorCode", error_code);
}
