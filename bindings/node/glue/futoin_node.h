/*
 * The Node.js binding's C glue: an N-API addon (NAPI_VERSION 8) over the
 * adapter layer (futoin/sys/wrap.h). The JavaScript layer (lib/) holds
 * everything that is JavaScript (the step functions, the values, the
 * state); the core holds the flows. One addon instance per JavaScript
 * thread (the main thread, each Worker): its globals are thread-local.
 *
 * JavaScript never sees a C pointer but as a number: a step's handle
 * (`FutoInAsyncSteps*`), a root, a tool or a sync object is passed as a
 * double (x86-64 user pointers fit in 53 bits). The JavaScript layer keeps
 * each number only while the object it names is alive: a step's handle
 * until the step's callback returns, or, for a step that waits, until the
 * anchor that fn_anchor() puts on it says the step ended.
 */
#ifndef FUTOIN_NODE_H
#define FUTOIN_NODE_H

#define NAPI_VERSION 8
#include <node_api.h>

#include <futoin/async.h>
#include <futoin/sync.h>
#include <futoin/sys/host.h>
#include <futoin/sys/wrap.h>

/* What a call from the core into JavaScript is about: the first argument
 * of the dispatcher function the JavaScript layer registered. */
enum fn_kind
{
    FN_STEP = 0,      /* (rec, bsi, values|undefined) */
    FN_ERROR = 1,     /* (rec, bsi, code) */
    FN_CANCEL = 2,    /* (rec, bsi) */
    FN_LOOP = 3,      /* (rec, bsi) */
    FN_REPEAT = 4,    /* (rec, bsi, i) */
    FN_UNHANDLED = 5, /* (rec, bsi, code) */
    FN_TIMER = 6,     /* (rec) */
    FN_ENDED = 7,     /* (rec): a waiting step's handle ended */
    FN_ROOT_END = 8,  /* (rec): a root's execution ended */
    FN_ORIGIN = 9,    /* (rec, defer) -> [function, file, line]: a frame's
                       * origin; with defer, [function, fn] while fn's
                       * file:line is not known yet */
    FN_RESOLVE = 10,  /* (undefined, module, function) -> rec | message */
    FN_HOOK = 11,     /* (undefined, tool, event): a hook of tool.setHooks() */
    FN_WHERE = 12,    /* (function) -> [function, file, line]: where it was written */
};

/* Per JavaScript thread. */
typedef struct fn_env
{
    napi_env env;
    napi_ref dispatch;     /* the JavaScript dispatcher */
    napi_async_context actx;
    int js_depth;          /* > 0 while a native call from JavaScript runs */
    int closing;           /* the environment is being torn down */
    futoin_tool* main_tool; /* attached to Node's loop, made on first use */
    char misuse[256];      /* the last misuse the core reported */
    size_t misuse_seen;
    long live_refs;        /* references given to the core, not yet released */
    /* ids of JavaScript records the core released, for JavaScript to drain
     * (releasedIds()): its table slots are then free for new records */
    uint32_t* released;
    size_t n_released, cap_released;
} fn_env;

/* The data of a step is either a napi_ref (aligned: low bit 0) or the id
 * of a record in the JavaScript layer's table (lib/AsyncSteps.js), tagged
 * with the low bit: a step costs no V8 persistent handle (the garbage
 * collector visits every one of those at each scavenge). */
#define FN_IS_ID(data) (((uintptr_t)(data)&1u) != 0)
#define FN_ID_OF(data) ((uint32_t)((uintptr_t)(data) >> 1))
/* A record given from JavaScript: a number is a table id, anything else
 * gets a reference. Released by fn_release_ref. */
void* fn_data_of(napi_env env, napi_value v);
/* The JavaScript value of step data: the id as a number, or the object. */
napi_value fn_data_value(napi_env env, void* data);

extern _Thread_local fn_env* fn_cur;

/* Call the dispatcher: fn_dispatch_open() opens a handle scope and gives
 * the env (NULL: no JavaScript to call, the environment is gone), the
 * caller makes the argument values, fn_dispatch_call() calls
 * dispatcher(kind, rec, argv...) and closes the scope. */
napi_env fn_dispatch_open(napi_handle_scope* scope);
void fn_dispatch_call(napi_handle_scope scope, enum fn_kind kind, void* rec,
                      size_t argc, napi_value* argv);
/* The same without closing the scope: the dispatcher's result (undefined
 * when it threw), valid until the caller closes `scope`. */
napi_value fn_dispatch_invoke(enum fn_kind kind, void* rec, size_t argc,
                              napi_value* argv);
/* A reference the core will release through fn_release_ref (counted). */
napi_ref fn_new_ref(napi_env env, napi_value v);
/* The release hook of step data: napi_delete_reference() of a napi_ref,
 * or the id noted as released. */
void fn_release_ref(void* data);
/* The misuse callback of every tool we make. */
void fn_misuse(void* data, const char* code, const char* message);

/* Numbers for pointers. */
napi_value fn_ptr(napi_env env, const void* p);
void* fn_arg_ptr(napi_env env, napi_value v);
/* A JavaScript number of an integer (a runtime code, a count, ms). */
napi_value fn_int(napi_env env, int64_t n);

/* Values: a JavaScript array of a step's results, carried through the core
 * as one custom FTN12 value (the array's reference), and back. */
void fn_values_to_args(napi_env env, napi_value arr, FutoInArgs* out);
napi_value fn_args_to_values(napi_env env, const FutoInArgs* args);

/* Registration of each part's functions on the exports object. */
void fn_tool_init(napi_env env, napi_value exports);
void fn_steps_init(napi_env env, napi_value exports);
void fn_sync_init(napi_env env, napi_value exports);
void fn_host_init(napi_env env, napi_value exports);
void fn_watch_init(napi_env env, napi_value exports);

/* The class of every JavaScript step's data (a napi_ref to its record):
 * released by fn_release_ref, its origin (function, file:line) asked of
 * JavaScript when an async stack is recorded, the file:line of a function
 * not seen yet only when the stack is read (fn_host.c). */
extern const futoin_step_class fn_js_class;
/* The trampolines of fn_steps.c, for the steps of the host "javascript". */
void fn_t_step(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args);
void fn_t_error(FutoInAsyncSteps* bsi, void* data, const char* code);
/* One JavaScript value as an FTN12 value (fn_values.c): numbers (INT64
 * when integral, else DOUBLE), strings, booleans, bigints, Buffers and
 * Uint8Arrays (ARRAY|UINT8), non-empty arrays of numbers (ARRAY|INT64 or
 * ARRAY|DOUBLE); anything else a custom value holding its reference. */
void fn_js_to_ftn(napi_env env, napi_value v, FutoInBinaryValue* out);
/* Whether the value is one fn_js_to_ftn() makes a plain FTN12 value of,
 * for the state shared with other languages: numbers, strings, booleans. */
int fn_js_is_scalar(napi_env env, napi_value v);
napi_value fn_ftn_to_js(napi_env env, const FutoInBinaryValue* v);

/* Every exported function is wrapped so that the core knows whether
 * JavaScript is on the stack (js_depth): a call into JavaScript from a
 * libuv callback of Node's loop goes through napi_make_callback(), which
 * then runs the microtasks a plain call would leave waiting. */
#define FN_FUNC(name)                                                          \
    static napi_value name##_body(napi_env env, napi_callback_info info);      \
    static napi_value name(napi_env env, napi_callback_info info)              \
    {                                                                          \
        fn_env* e_ = fn_cur;                                                   \
        if (e_) {                                                              \
            ++e_->js_depth;                                                    \
        }                                                                      \
        napi_value r_ = name##_body(env, info);                                \
        if (e_) {                                                              \
            --e_->js_depth;                                                    \
        }                                                                      \
        return r_;                                                             \
    }                                                                          \
    static napi_value name##_body(napi_env env, napi_callback_info info)

#define FN_EXPORT(exports, name, fn)                                           \
    do {                                                                       \
        napi_value f_;                                                         \
        napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, NULL, &f_);      \
        napi_set_named_property(env, exports, name, f_);                       \
    } while (0)

/* Up to this many arguments of an exported function are read. */
#define FN_ARGS(n)                                                             \
    size_t argc = (n);                                                         \
    napi_value argv[(n) > 0 ? (n) : 1];                                        \
    napi_get_cb_info(env, info, &argc, argv, NULL, NULL)

napi_value fn_throw(napi_env env, const char* msg);

#endif
