/*
 * Polyglot flows (futoin/sys/host.h) from Node.js:
 *
 *  - steps of other languages added by name (hostAdd: futoin_host_add),
 *    the values a JavaScript step passes on made FTN12 values first
 *    (successStepFtn: JavaScript values crossing into another language);
 *  - the state shared between languages (stateGet/stateSet over
 *    futoin_state_get/futoin_state_set);
 *  - the async stack of a flow's last error (asyncStack), whose JavaScript
 *    frames name the step function and its file:line: every JavaScript
 *    step's data has the class fn_js_class, whose origin asks the
 *    JavaScript layer the function's name (FN_ORIGIN) when a stack is
 *    recorded and its file:line (FN_WHERE) only when the stack is read;
 *  - the language host "javascript", registered when the addon is loaded:
 *    steps of JavaScript by name (require(module)[function]) in flows of
 *    this process, added from any language (FN_RESOLVE).
 */
#include "futoin_node.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- interned strings: the origins' names and files ---------------------- */

/* An origin's strings must outlive the capture of a stack (the runtime
 * copies them after asking every frame); functions and files are few, so
 * each distinct string is kept once for the process. */
typedef struct fn_interned
{
    struct fn_interned* next;
    char s[];
} fn_interned;

#define FN_INTERN_BUCKETS 512u
static fn_interned* g_intern[FN_INTERN_BUCKETS];
static pthread_mutex_t g_intern_mu = PTHREAD_MUTEX_INITIALIZER;

static const char* intern(const char* s)
{
    uint32_t h = 5381;
    const char* r = NULL;
    fn_interned* it;
    size_t n;
    for (const char* p = s; *p; ++p) {
        h = h * 33u + (unsigned char)*p;
    }
    h %= FN_INTERN_BUCKETS;
    pthread_mutex_lock(&g_intern_mu);
    for (it = g_intern[h]; it; it = it->next) {
        if (strcmp(it->s, s) == 0) {
            r = it->s;
            break;
        }
    }
    if (!r) {
        n = strlen(s) + 1;
        it = malloc(sizeof *it + n);
        if (it) {
            memcpy(it->s, s, n);
            it->next = g_intern[h];
            g_intern[h] = it;
            r = it->s;
        }
    }
    pthread_mutex_unlock(&g_intern_mu);
    return r;
}

/* A string property of a JavaScript value, interned, or NULL. */
static const char* interned_string(napi_env env, napi_value v)
{
    char buf[1024];
    napi_valuetype t = napi_undefined;
    if (napi_typeof(env, v, &t) != napi_ok || t != napi_string) {
        return NULL;
    }
    napi_get_value_string_utf8(env, v, buf, sizeof buf, NULL);
    return intern(buf);
}

/* ---- the class of JavaScript steps ------------------------------------------ */

/* A frame from what JavaScript answered, [function, file, line] (a
 * function as `file`: where it was written is not known yet; given back,
 * the caller asks later). */
static napi_value origin_from(napi_env env, napi_value r, futoin_frame_origin* out)
{
    napi_value x, later = NULL;
    napi_valuetype t = napi_undefined;
    bool is = false;
    double line = 0;
    if (napi_is_array(env, r, &is) != napi_ok || !is) {
        return NULL;
    }
    if (napi_get_element(env, r, 0, &x) == napi_ok) {
        const char* f = interned_string(env, x);
        if (f) {
            out->function = f;
        }
    }
    if (napi_get_element(env, r, 1, &x) == napi_ok && napi_typeof(env, x, &t) == napi_ok) {
        if (t == napi_function) {
            later = x;
        } else {
            out->file = interned_string(env, x);
        }
    }
    if (napi_get_element(env, r, 2, &x) == napi_ok
        && napi_get_value_double(env, x, &line) == napi_ok && line > 0 && line < 4e9) {
        out->line = (uint32_t)line;
    }
    return later;
}

/* The frame of a JavaScript step, asked of JavaScript (FN_ORIGIN): with
 * `defer`, a function whose file:line is not known yet comes back as
 * a reference to it (the token of origin_defer), else NULL. */
static void* js_frame(void* data, futoin_frame_origin* out, bool defer)
{
    napi_handle_scope scope;
    napi_env env;
    napi_value r, a, later;
    void* tok = NULL;
    out->language = "javascript";
    out->function = NULL;
    out->file = NULL;
    out->line = 0;
    env = fn_dispatch_open(&scope);
    if (!env) {
        return NULL;
    }
    napi_get_boolean(env, defer, &a);
    r = fn_dispatch_invoke(FN_ORIGIN, data, 1, &a);
    later = origin_from(env, r, out);
    if (later) {
        tok = fn_new_ref(env, later);
    }
    napi_close_handle_scope(env, scope);
    return tok;
}

/* A core without origin_defer asks here, while the error unwinds. */
static void js_origin(void* data, futoin_frame_origin* out)
{
    (void)js_frame(data, out, false);
}

/* When a stack is recorded: the function's name now, its file:line (an
 * inspector round trip for a function not seen yet, lib/polyglot.js)
 * when someone reads the stack. Idiomatic flows make their steps of
 * fresh closures, so an error would pay it every time. */
static void* js_origin_defer(void* data, futoin_frame_origin* out)
{
    return js_frame(data, out, true);
}

/* The stack is read (`out`: the frame to complete, FN_WHERE) or freed
 * unread (`out` NULL); `tok` is the function's reference. */
static void js_origin_resolve(void* tok, futoin_frame_origin* out)
{
    napi_handle_scope scope;
    napi_env env;
    if (out && (env = fn_dispatch_open(&scope)) != NULL) {
        futoin_frame_origin o = *out;
        (void)origin_from(env, fn_dispatch_invoke(FN_WHERE, tok, 0, NULL), &o);
        napi_close_handle_scope(env, scope);
        *out = o;
    }
    fn_release_ref(tok);
}

const futoin_step_class fn_js_class = {sizeof(futoin_step_class),
                                       fn_release_ref,
                                       js_origin,
                                       {NULL, NULL, NULL, 0},
                                       js_origin_defer,
                                       js_origin_resolve};

/* ---- the language host "javascript" ----------------------------------------- */

static int js_start(futoin_tool* tool, char* err, size_t errlen)
{
    (void)tool;
    if (!fn_cur || fn_cur->closing) {
        snprintf(err, errlen,
                 "javascript: steps of JavaScript run only on the thread of a Node.js "
                 "process that loaded futoin-async (a Node host program); another host "
                 "program cannot start Node (bindings/node/README.md, \"JavaScript steps "
                 "in other hosts\")");
        return FUTOIN_EINVAL;
    }
    return FUTOIN_OK;
}

static int js_resolve(const char* module, const char* function, futoin_host_step* out,
                      char* err, size_t errlen)
{
    napi_handle_scope scope;
    napi_env env = fn_dispatch_open(&scope);
    napi_value a[2], r;
    napi_valuetype t = napi_undefined;
    int rc = FUTOIN_OK;
    if (!env) {
        snprintf(err, errlen, "javascript: no Node.js environment on this thread");
        return FUTOIN_EINVAL;
    }
    napi_create_string_utf8(env, module, NAPI_AUTO_LENGTH, &a[0]);
    napi_create_string_utf8(env, function, NAPI_AUTO_LENGTH, &a[1]);
    r = fn_dispatch_invoke(FN_RESOLVE, NULL, 2, a);
    napi_typeof(env, r, &t);
    if (t == napi_object) {
        out->execute = fn_t_step;
        out->error = NULL;
        out->data = fn_new_ref(env, r);
        out->cls = &fn_js_class;
    } else {
        char msg[768] = "javascript: cannot resolve the step";
        if (t == napi_string) {
            napi_get_value_string_utf8(env, r, msg, sizeof msg, NULL);
        }
        snprintf(err, errlen, "%s", msg);
        rc = FUTOIN_EINVAL;
    }
    napi_close_handle_scope(env, scope);
    return rc;
}

static void js_stop(void)
{
}

static const futoin_host_api js_host = {
    sizeof(futoin_host_api), FUTOIN_HOST_VERSION_1, "javascript",
    js_start, js_resolve, js_stop,
};

/* The host table, for the plug-in libfutoin_host_javascript.so
 * (host/node_host_plugin.cc) that embeds Node in another host program and
 * forwards to it once this addon is loaded there. */
__attribute__((visibility("default"))) const futoin_host_api* futoin_node_host_api(void);
const futoin_host_api* futoin_node_host_api(void)
{
    return &js_host;
}

/* ---- calls ------------------------------------------------------------------- */

/* A name (language, module, function, state name): a string without NUL,
 * malloc'ed; NULL with a TypeError thrown otherwise. */
static char* arg_name(napi_env env, size_t argc, napi_value* argv, size_t i, const char* what)
{
    napi_valuetype t = napi_undefined;
    size_t len = 0;
    char* s;
    char msg[160];
    if (argc <= i || napi_typeof(env, argv[i], &t) != napi_ok || t != napi_string) {
        snprintf(msg, sizeof msg, "%s must be a string", what);
        napi_throw_type_error(env, NULL, msg);
        return NULL;
    }
    napi_get_value_string_utf8(env, argv[i], NULL, 0, &len);
    s = malloc(len + 1);
    if (!s) {
        napi_throw_error(env, NULL, "out of memory");
        return NULL;
    }
    napi_get_value_string_utf8(env, argv[i], s, len + 1, &len);
    if (strlen(s) != len) {
        free(s);
        snprintf(msg, sizeof msg, "%s must not contain a NUL character", what);
        napi_throw_type_error(env, NULL, msg);
        return NULL;
    }
    return s;
}

/* hostAdd(bsi, language, module, function) -> FUTOIN_OK or FUTOIN_E* (a
 * failing step was added all the same) */
FN_FUNC(host_add)
{
    FN_ARGS(4);
    FutoInAsyncSteps* bsi = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    char *lang = NULL, *mod = NULL, *fn = NULL;
    napi_value r = NULL;
    if (!bsi) {
        return fn_throw(env, "hostAdd(bsi, language, module, function)");
    }
    if ((lang = arg_name(env, argc, argv, 1, "addForeign(): language"))
        && (mod = arg_name(env, argc, argv, 2, "addForeign(): module"))
        && (fn = arg_name(env, argc, argv, 3, "addForeign(): function"))) {
        r = fn_int(env, futoin_host_add(bsi, lang, mod, fn));
    }
    free(lang);
    free(mod);
    free(fn);
    return r;
}

/* The values of a successFtn() or successStepFtn() (a JavaScript array,
 * or NULL for none) as FTN12 values in *a: their count, or -1 with a
 * RangeError thrown for more than 4. */
static int values_to_ftn(napi_env env, napi_value arr, FutoInArgs* a)
{
    uint32_t n = 0, i;
    memset(a, 0, sizeof *a);
    if (arr) {
        napi_get_array_length(env, arr, &n);
    }
    if (n > 4) {
        napi_throw_range_error(env, NULL,
                               "at most 4 values cross into another language's step");
        return -1;
    }
    for (i = 0; i < n; ++i) {
        napi_value x;
        napi_get_element(env, arr, i, &x);
        fn_js_to_ftn(env, x, &a->args[i]);
    }
    return (int)n;
}

/* successStepFtn(bsi, values): a step that passes `values` (at most 4) on
 * as FTN12 values, for a step of another language. */
FN_FUNC(success_step_ftn)
{
    FN_ARGS(2);
    FutoInAsyncSteps* bsi = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    FutoInArgs a;
    bool is = false;
    if (!bsi || argc < 2 || napi_is_array(env, argv[1], &is) != napi_ok || !is) {
        return fn_throw(env, "successStepFtn(bsi, values)");
    }
    if (values_to_ftn(env, argv[1], &a) < 0) {
        return NULL;
    }
    futoin_wrap_success_step(bsi, &a);
    return NULL;
}

/* successFtn(bsi, values) -> as success(): the values (at most 4) as FTN12
 * values, for whatever language's step comes next (the steps of JavaScript
 * added by name in another language's flow). */
FN_FUNC(success_ftn)
{
    FN_ARGS(2);
    FutoInAsyncSteps* bsi = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    FutoInArgs a;
    int n;
    bool is = false;
    if (!bsi) {
        return fn_int(env, FUTOIN_EINVAL);
    }
    n = values_to_ftn(env, argc > 1 && napi_is_array(env, argv[1], &is) == napi_ok && is
                                   ? argv[1] : NULL,
                      &a);
    if (n < 0) {
        return NULL;
    }
    return fn_int(env, futoin_wrap_try_success(bsi, n ? &a : NULL));
}

/* stateGet(bsi, name) -> the shared value, or undefined */
FN_FUNC(state_get)
{
    FN_ARGS(2);
    FutoInAsyncSteps* bsi = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    char name[256];
    const FutoInBinaryValue* v;
    napi_value r;
    size_t len = 0;
    napi_get_undefined(env, &r);
    if (!bsi || argc < 2
        || napi_get_value_string_utf8(env, argv[1], name, sizeof name, &len) != napi_ok
        || len + 1 >= sizeof name) {
        return r;
    }
    v = futoin_state_get(bsi, name);
    if (v && v->type) {
        r = fn_ftn_to_js(env, v);
    }
    return r;
}

/* stateSet(bsi, name, value|undefined) -> FUTOIN_OK or FUTOIN_E*; a value
 * that is no number, string or boolean, or undefined, removes the shared
 * variable (it stays JavaScript's alone). */
FN_FUNC(state_set)
{
    FN_ARGS(3);
    FutoInAsyncSteps* bsi = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    char name[256];
    size_t len = 0;
    int rc;
    if (!bsi || argc < 2
        || napi_get_value_string_utf8(env, argv[1], name, sizeof name, &len) != napi_ok
        || len + 1 >= sizeof name || strlen(name) != len) {
        return fn_int(env, FUTOIN_EINVAL);
    }
    if (argc > 2 && fn_js_is_scalar(env, argv[2])) {
        FutoInBinaryValue v;
        fn_js_to_ftn(env, argv[2], &v);
        rc = futoin_state_set(bsi, name, &v);
        futoin_reset_binval(&v);
    } else if (futoin_state_get(bsi, name)) {
        rc = futoin_state_set(bsi, name, NULL);
    } else {
        rc = FUTOIN_OK;
    }
    return fn_int(env, rc);
}

static napi_value str_or_null(napi_env env, const char* s)
{
    napi_value v;
    if (s) {
        napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v);
    } else {
        napi_get_null(env, &v);
    }
    return v;
}

/* asyncStack(bsi) -> [{language, function, file, line}...] innermost
 * first, or null */
FN_FUNC(async_stack)
{
    FN_ARGS(1);
    FutoInAsyncSteps* bsi = argc ? fn_arg_ptr(env, argv[0]) : NULL;
    const futoin_async_stack* st = bsi ? futoin_wrap_async_stack(bsi) : NULL;
    napi_value arr;
    uint32_t i;
    if (!st) {
        napi_get_null(env, &arr);
        return arr;
    }
    napi_create_array_with_length(env, st->count, &arr);
    for (i = 0; i < st->count; ++i) {
        const futoin_frame_origin* o = &st->frames[i];
        napi_value f, line;
        napi_create_object(env, &f);
        napi_set_named_property(env, f, "language", str_or_null(env, o->language));
        napi_set_named_property(env, f, "function", str_or_null(env, o->function));
        napi_set_named_property(env, f, "file", str_or_null(env, o->file));
        napi_create_uint32(env, o->line, &line);
        napi_set_named_property(env, f, "line", line);
        napi_set_element(env, arr, i, f);
    }
    if (st->elided) {
        napi_value n;
        napi_create_uint32(env, st->elided, &n);
        napi_set_named_property(env, arr, "elided", n);
        napi_create_uint32(env, st->elided_after, &n);
        napi_set_named_property(env, arr, "elidedAfter", n);
    }
    return arr;
}

/* liveRefs(): references of JavaScript objects the core holds now */
FN_FUNC(live_refs)
{
    (void)info;
    return fn_int(env, fn_cur ? fn_cur->live_refs : 0);
}

void fn_host_init(napi_env env, napi_value exports)
{
    /* EBUSY when another thread's addon registered it first: the same
     * table, which serves every thread from its own environment */
    (void)futoin_host_register(&js_host);
    FN_EXPORT(exports, "hostAdd", host_add);
    FN_EXPORT(exports, "successStepFtn", success_step_ftn);
    FN_EXPORT(exports, "successFtn", success_ftn);
    FN_EXPORT(exports, "stateGet", state_get);
    FN_EXPORT(exports, "stateSet", state_set);
    FN_EXPORT(exports, "asyncStack", async_stack);
    FN_EXPORT(exports, "liveRefs", live_refs);
}
