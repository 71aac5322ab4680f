/*
 * Internal interface of the Python binding's C support code.
 *
 * SWIG generates the module _core from
 * bindings/python/interface/futoin_python.i (the interface shared by every
 * binding plus a few private helpers). The types AsyncSteps and ToolBase
 * over the C structs below are written by hand (py_types.c: why there);
 * their methods unpack their arguments and call the functions declared
 * here: the trampolines that run Python callables as steps, the GIL
 * discipline of the loop thread, deferred releases and the
 * FutoInBinaryValue <-> Python conversion.
 *
 * Files: py_asyncsteps_type.c, py_toolbase_type.c (the types), py_types.c
 * (what they share, the module's part), py_hooks.c (the Python layer's
 * classes and hooks), py_gil.c (thread state, releases,
 * KeyboardInterrupt/SystemExit bookkeeping, misuse reports), py_values.c
 * (conversion), py_handles.c (the objects of handles, roots),
 * py_trampolines.c (Python callables run as steps), py_exceptions.c (their
 * exceptions), py_checks.c (checks at the call site), py_add.c /
 * py_complete.c (the AsyncSteps operations that add steps / complete or
 * suspend one), py_execute.c (execute(), cancel()), py_state.c (the flow's
 * State), py_tool.c (the Tool, its timers), py_signals.c (Ctrl-C in
 * run()), py_borrowed.c (the Tool of a flow another language hosts),
 * py_poll.c (fds watched for the Tool's event loop), py_asyncio.c
 * (asyncio), py_async_stack.c (origins of steps, async stacks),
 * py_policy.c (the load policy);
 * host/py_host.c (the language host "python").
 *
 * Conventions: functions returning PyObject* return a new reference, or
 * NULL with a Python exception set. Everything runs with the GIL held
 * unless a comment says otherwise.
 */
#ifndef FUTOIN_PY_H
#define FUTOIN_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <futoin/async.h>
#include <futoin/sys/host.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/wrap.h>
#include <uv.h>

/* ---- the C structs behind the Python types ------------------------------ */

enum { FPY_STEP = 0, FPY_ROOT = 1, FPY_BORROWED = 2 };

/* What step code did through one step object (fpy_steps.did), so that a
 * step that also returns a value can be told apart from one that does not. */
enum {
    FPY_DID_COMPLETE = 1u << 0, /* success()/error() (accepted) */
    FPY_DID_ADD = 1u << 1,      /* add()/parallel()/loop()/repeat()/sync() */
    FPY_DID_WAIT = 1u << 2      /* wait_external()/set_timeout()/set_cancel() */
};

struct fpy_exec;

/** AsyncSteps: one FTN12 handle of any implementation. */
typedef struct fpy_steps
{
    PyObject_HEAD
    FutoInAsyncSteps* bsi;  /* NULL once closed (or its step ended) */
    void** keep;            /* a handle kept past its callback: the slot of a
                               stack() allocation of its step that points
                               back here (py_handles.c: fpy_steps_keep) */
    PyObject* tool_obj;     /* roots of our Tool, and kept step handles of
                               one: the Tool object (owned) */
    struct fpy_tool* tool;  /* ... and its C struct (borrowed from tool_obj) */
    struct fpy_exec* exec;  /* roots: the execution in progress, or NULL */
    PyObject* weakrefs;     /* weakref support */
    unsigned long exec_gen; /* roots: counts execute() calls */
    struct fpy_steps *next_root, *prev_root; /* roots of our Tool: its list */
    unsigned short kind;    /* FPY_STEP, FPY_ROOT (freed with us), FPY_BORROWED */
    unsigned short did;     /* FPY_DID_* during the current callback (a
                               kept handle: since its callback started) */
    unsigned short ended;   /* a kept handle whose step ended (bsi NULL) */
    unsigned short kept;    /* roots: maybe in its tool's flows (set when
                               put there; cleared when found gone) */
} fpy_steps;

/** ToolBase: one futoin_tool (one libuv loop). */
typedef struct fpy_tool
{
    PyObject_HEAD
    futoin_tool* tool;
    PyObject* flows;   /* executing roots, kept alive: {key: (root,)}, a
                          fresh 1-tuple per execute() (its token); the key:
                          fpy_flow_key() */
    PyObject* timers;  /* int(address of a timer record) -> callable */
    PyObject* failure; /* first unhandled error of a root executed without
                          an unhandled callback, for run() to raise */
    uv_poll_t* sig;    /* watches Python's signal wakeup fd, or NULL */
    uv_prepare_t* prep; /* releases the GIL before the loop polls */
    PyObject* done;    /* during a pass: the tokens of roots that finished
                          (a list, empty between passes) */
    int passing;       /* run_nowait() is on the stack */
    Py_ssize_t awaited; /* executing roots that `await root` runs itself
                           and keeps alive (not in flows): counted in
                           Tool.executing */
    int closing;       /* close() drops the executing roots */
    int owned;         /* the tool owns its loop (not attached) */
    fpy_steps* roots;  /* every live root made on this tool (borrowed) */
    struct fpy_tool* next_live; /* the live tools, for fpy_tool_find() */
    /* driven from asyncio (py_asyncio.c) */
    PyObject* aloop;   /* the asyncio loop, or NULL */
    PyObject* apump;   /* the callable it calls for a pass */
    PyObject* atimer;  /* its TimerHandle for libuv's next timer, or NULL */
    uint64_t adue;     /* ... when it is due (libuv's loop time, ms) */
    int afd;           /* libuv's backend fd it watches, or -1 */
    int ascheduled;    /* a pass is queued with call_soon */
    size_t late;       /* late completions through kept handles whose step
                          had ended, which the binding decided itself */
    PyObject* tloop;   /* its asyncio event loop (ToolEventLoop), or NULL */
    /* a borrowed tool: the tool of a flow another language hosts
     * (py_borrowed.c) */
    int borrowed;
    int in_cb;         /* callbacks of its timers running now */
    int holds;         /* _hold()s not yet undone (fd watchers, workers) */
    FutoInAsyncSteps* anchor; /* an idle root of the tool while timers or
                                 holds pend: its program cannot free it */
    struct fpy_fdwatch* fdw;  /* fds watched for its event loop (py_poll.c) */
    PyObject* hooks;   /* {event name: callable} of set_hooks(), or NULL
                          (py_watch.c) */
} fpy_tool;

/* ---- py_types.c, py_asyncsteps_type.c, py_toolbase_type.c: the types -- */

extern PyTypeObject fpy_steps_type;
extern PyTypeObject fpy_tool_type;
/** _core._extend(type, attrs): the Python layer's methods. */
PyObject* fpy_extend(PyObject* type, PyObject* attrs);
/** Add the types to module `m` (from the SWIG module's init). */
int fpy_types_init(PyObject* m);
/** A new object of `type` (AsyncSteps or a subclass), all fields 0. */
fpy_steps* fpy_steps_alloc(PyTypeObject* type);
/** The fpy_steps behind `o`, or NULL (no exception set). */
static inline fpy_steps* fpy_obj_steps(PyObject* o)
{
    return PyObject_TypeCheck(o, &fpy_steps_type) ? (fpy_steps*)o : NULL;
}

/* ---- py_hooks.c: the Python layer's classes and hooks ------------------- */

/* What _core._set_types() was given (owned); NULL before. */
typedef struct fpy_hooks
{
    PyObject* all;            /* every hook, by name */
    PyObject* state_type;     /* State(dict) */
    PyObject* make_error;     /* make_error(code, info) -> FutoInError */
    PyObject* flow_error;     /* flow_error(code, info, last, stack) -> exception */
    PyObject* cancelled_type; /* CancelledError */
    PyObject* unwind_type;    /* the private exception error(),
                                 break_loop(), continue_loop() raise */
    PyObject* error_type;     /* FutoInError */
    PyObject* await_step;     /* await_step(asi, awaitable) */
    PyObject* invalid_state;  /* InvalidStateError */
    PyObject* future_type;    /* asyncio.Future */
} fpy_hooks;

extern fpy_hooks fpy_H;
/** The Python layer's classes and hooks, from _core._set_types(). */
int fpy_set_types(PyObject* state_cls, PyObject* hooks);
/** A hook of the Python layer (borrowed), or NULL before _set_types(). */
PyObject* fpy_hook(const char* name);
/** Raise InvalidStateError(msg) (the Python layer's class). */
PyObject* fpy_invalid_state(const char* fmt, ...);

/* ---- py_gil.c ----------------------------------------------------------- */

typedef struct fpy_gil
{
    int how;
    PyGILState_STATE st;
} fpy_gil;

/* Something to release once the GIL is held: free_fn(p), or Py_DECREF(p)
 * when free_fn is NULL. */
typedef struct fpy_pending
{
    void (*free_fn)(void*);
    void* p;
} fpy_pending;

/* Per thread (so no locks): the loop thread's saved thread state, releases
 * waiting for the GIL, what run() must re-raise, the step whose own
 * callback runs now, and the misuse reports of the call being checked. */
typedef struct fpy_tls
{
    PyThreadState* ts; /* set while run() has the GIL released */
    int in_run;
    int held;          /* the GIL is this thread's: 1 run()'s loop (a
                          callback took it and keeps it until the loop
                          polls), 2 a pass run from Python (run_nowait()) */
    fpy_pending* pend; /* releases waiting for the GIL */
    size_t n, cap;
    PyObject *fatal_t, *fatal_v, *fatal_tb; /* for run() to re-raise */
    FutoInAsyncSteps* cur;  /* the handle whose own callback runs now */
    int expect;             /* > 0: a checked call is on the stack */
    int misused;            /* a misuse was reported during it */
    char* misuse;           /* ... with this text (malloc'd) */
    PyObject* awaiter;      /* `await root` runs a pass of its flow now */
    /* A success() kept in Python (py_trampolines.c, ext chain()): */
    FutoInAsyncSteps* chain_bsi; /* the step of ours whose own callback runs
                                    now and may keep its success(), or NULL */
    int kept;                    /* 1 + the number of values kept; 0: none */
    PyObject* kept_v[4];         /* the values (owned) */
} fpy_tls;

/* initial-exec: a plain %fs-relative access instead of a __tls_get_addr
 * call on every use (the struct is small; glibc reserves static TLS for
 * modules loaded later). */
extern _Thread_local fpy_tls fpy_T __attribute__((tls_model("initial-exec")));

/** Take the GIL in a trampoline (see py_gil.c for the three cases). */
void fpy_gil_enter(fpy_gil* g);
void fpy_gil_leave(fpy_gil* g);
/** Before the loop polls (a uv_prepare_t): release a GIL kept by callbacks. */
void fpy_loop_prepare(void);
/** run(): release the GIL for the blocking call; 0, or -1 if nested. */
int fpy_run_begin(void);
void fpy_run_end(void);
/** Release `o` (a new reference handed over) now or at the next GIL holder. */
void fpy_release_obj(PyObject* o);
/** Run free_fn(p) with the GIL held: now, or at the next GIL holder. */
void fpy_release(void (*free_fn)(void*), void* p);
/** Drop whatever was queued for release; GIL held. */
void fpy_drain(void);
size_t fpy_pending_releases(void);
/** Keep the current KeyboardInterrupt/SystemExit (or signal handler's
 * exception) for run() to re-raise; clears the error indicator. */
void fpy_store_fatal(void);
/** Re-raise what fpy_store_fatal kept: returns -1 with it set, or 0. */
int fpy_raise_fatal(void);
/** Is the current exception KeyboardInterrupt or SystemExit? */
int fpy_is_fatal(void);
/** Is Tool.run() on this thread's stack? */
int fpy_in_run(void);

/** The misuse callback of every Tool made by Python: inside a checked call
 * the report is kept for the call site to raise; otherwise it is printed
 * as the library does by default. Any thread, no GIL needed. */
void fpy_misuse_cb(void* data, const char* code, const char* message);

/* Checked calls: fpy_check_begin(); <call into the library>;
 * if (fpy_check_end() < 0) -> InvalidStateError is set. */
static inline void fpy_check_begin(void)
{
    ++fpy_T.expect;
}
int fpy_check_report(void);
static inline int fpy_check_end(void)
{
    --fpy_T.expect;
    return fpy_T.misused ? fpy_check_report() : 0;
}

/* ---- py_values.c -------------------------------------------------------- */

/** Python -> FutoInBinaryValue (the value owns what it points to). */
int futoin_py_to_binval(PyObject* o, FutoInBinaryValue* v);
/** FutoInBinaryValue -> new Python reference. */
PyObject* futoin_py_from_binval(const FutoInBinaryValue* v);
/** Wrap `o` as a custom value of Python (takes a new reference). */
void fpy_set_custom(FutoInBinaryValue* v, PyObject* o);
/** The PyObject of a custom value of Python, or NULL for other values. */
PyObject* fpy_custom_of(const FutoInBinaryValue* v);
/** Up to 4 objects (NULL-terminated early) -> FutoInArgs. */
int fpy_args_from(PyObject* const* items, Py_ssize_t n, FutoInArgs* a);
void fpy_args_reset(FutoInArgs* a);
/** (value, type flags) after a round trip, for the tests. */
PyObject* fpy_roundtrip(PyObject* o);

/* ---- py_handles.c: the objects of handles, roots ------------------------ */

/** A new object of `type` (AsyncSteps or a subclass) for `bsi`, of `kind`. */
PyObject* fpy_steps_for(PyTypeObject* type, FutoInAsyncSteps* bsi, int kind);
/** `s` is kept past its callback: anchor it to its step, which closes it
 * when it ends (no-op for a foreign, ended or already anchored handle). */
void fpy_steps_keep(fpy_steps* s);
/** Make `s` a new root on the Tool `tool_obj` (AsyncSteps.__init__). */
int fpy_steps_init_root(fpy_steps* s, PyObject* tool_obj);
/** Dealloc of a kept step handle: its step must not point back to it. */
void fpy_steps_unkeep(fpy_steps* s);
/** Free the FTN12 root of `s` now (cancelling its flow); `s` is closed. */
void fpy_steps_free_root(fpy_steps* s);
void fpy_steps_clear(fpy_steps* s);
PyObject* fpy_steps_wrap(PyObject* cls, PyObject* address, int owned,
                         PyObject* tool);
PyObject* fpy_new_instance(fpy_steps* s);
PyObject* fpy_free(fpy_steps* s);
/** error_info, last_exception of the last error of `bsi`'s root (the
 * accessors' values). */
PyObject* fpy_error_info_of(FutoInAsyncSteps* bsi);
PyObject* fpy_last_exception_of(FutoInAsyncSteps* bsi);
PyObject* fpy_error_info(fpy_steps* s);
PyObject* fpy_last_exception(fpy_steps* s);
PyObject* fpy_async_stack(fpy_steps* s);
PyObject* fpy_root_id(fpy_steps* s);
PyObject* fpy_is_valid(fpy_steps* s);
PyObject* fpy_is_same_thread(fpy_steps* s);
PyObject* fpy_binary(fpy_steps* s);
PyObject* fpy_is_ours(fpy_steps* s);
PyObject* fpy_tool_ptr_of(fpy_steps* s);
PyObject* fpy_tool_of(fpy_steps* s);
PyObject* fpy_is_executing(fpy_steps* s);

/** The extension table of a handle of ours (version 4 or later: chain()),
 * else NULL: futoin_async_ext() remembered per FTN12 table (a root's, a
 * step's, a parallel()'s), so the usual handle needs no call to tell. */
extern const FutoInAsyncStepsAPI* fpy_ext_apis[4];
extern const futoin_async_ext_table* fpy_ext_tab;
const futoin_async_ext_table* fpy_ext_slow(FutoInAsyncSteps* bsi);
static inline const futoin_async_ext_table* fpy_ext(FutoInAsyncSteps* bsi)
{
    const FutoInAsyncStepsAPI* api = bsi->api;
    if (api == fpy_ext_apis[0] || api == fpy_ext_apis[1] || api == fpy_ext_apis[2]
        || api == fpy_ext_apis[3]) {
        return fpy_ext_tab;
    }
    return fpy_ext_slow(bsi);
}

/* ---- py_trampolines.c: Python callables run as steps -------------------- */

/** A step callable with its error handler, handed to C as one record. */
typedef struct fpy_rec fpy_rec;
fpy_rec* fpy_rec_new(PyObject* fn, PyObject* eh);
/** The release hooks of a record and of a callable handed over as itself. */
void fpy_rec_release(void* data);
void fpy_obj_release(void* data);
/** The step classes (release, origin) of both. */
extern const futoin_step_class fpy_fn_class;
extern const futoin_step_class fpy_rec_class;
/** The trampoline of a step without an error handler (data: the callable). */
void fpy_tr_fn(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args);
/** A step with an error handler, and the handler (data: fpy_rec). */
void fpy_tr_step(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args);
void fpy_tr_error(FutoInAsyncSteps* bsi, void* data, const char* code);
/** await_() (data: the awaitable). */
void fpy_tr_await(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args);
/** Cancel handlers, loop and repeat bodies (data: the callable). */
void fpy_tr_cancel(FutoInAsyncSteps* bsi, void* data);
void fpy_tr_loop(FutoInAsyncSteps* bsi, void* data);
void fpy_tr_repeat(FutoInAsyncSteps* bsi, void* data, size_t i);
/** A success() of fpy_T.chain_bsi kept in Python goes to the runtime now:
 * called before anything else reaches the runtime, so that it sees every
 * call in order. 0, or -1 raised (the runtime refused it: misuse). */
int fpy_kept_apply(void);
static inline int fpy_kept_flush(void)
{
    return fpy_T.kept ? fpy_kept_apply() : 0;
}
/** A value whose trip through the runtime gives back an equal object of
 * its type (int, float, bool, bytes, an ASCII str), or the object itself
 * (anything py_values.c makes a custom value): not a non-ASCII str (it may
 * fail to encode: lone surrogates) nor a list (numbers come back as a new
 * list). */
static inline int fpy_keepable(PyObject* o)
{
    PyTypeObject* t = Py_TYPE(o);
    if (t == &PyUnicode_Type) {
        return PyUnicode_IS_ASCII(o);
    }
    return t != &PyList_Type || PyList_GET_SIZE(o) == 0;
}
/** success(*v) (n <= 4) of fpy_T.chain_bsi in its own callback, nothing
 * kept yet: kept if every value is keepable (1), else 0 (send it). */
static inline int fpy_kept_keep(PyObject* const* v, Py_ssize_t n)
{
    Py_ssize_t i;
    if (n == 1) { /* the usual one, without the loops */
        if (!fpy_keepable(v[0])) {
            return 0;
        }
        fpy_T.kept_v[0] = Py_NewRef(v[0]);
        fpy_T.kept = 2;
        return 1;
    }
    for (i = 0; i < n; ++i) {
        if (!fpy_keepable(v[i])) {
            return 0;
        }
    }
    for (i = 0; i < n; ++i) {
        fpy_T.kept_v[i] = Py_NewRef(v[i]);
    }
    fpy_T.kept = (int)n + 1;
    return 1;
}
/** Complete the waiting step `bsi` with a done asyncio future's outcome. */
void fpy_step_complete_with(FutoInAsyncSteps* bsi, PyObject* fut);

/* ---- py_exceptions.c ---------------------------------------------------- */

/** A Python exception (set) escaped a step, loop body or error handler of
 * `bsi`: it becomes the flow's error. Clears it. */
void fpy_on_exception(FutoInAsyncSteps* bsi);
/** ... escaped `fn` where no flow can take it (a cancel handler, an
 * unhandled-error callback): KeyboardInterrupt/SystemExit are kept for
 * run(), others printed. Clears it. */
void fpy_on_callback_exception(FutoInAsyncSteps* bsi, PyObject* fn);

/* ---- py_checks.c: checks at the call site ------------------------------- */

/** `s` still refers to a handle: 1, else 0 raised (InvalidStateError). */
int fpy_live(fpy_steps* s);
/** On the loop thread of the handle's tool (foreign: its own answer)? */
int fpy_same_thread(fpy_steps* s);
/** `what` is called on the loop thread: 1, else 0 raised (RuntimeError). */
int fpy_not_other_thread(fpy_steps* s, const char* what);
/** `what` is a call only a step's own callback (or a root before it
 * executes, if root_ok, or a parallel() handle) may make: 1 if so, else 0
 * raised. */
int fpy_in_own_step_slow(fpy_steps* s, const char* what, int root_ok);
static inline int fpy_in_own_step(fpy_steps* s, const char* what, int root_ok)
{
    if (s->bsi && s->bsi == fpy_T.cur) {
        return 1; /* its own callback runs on this thread now */
    }
    return fpy_in_own_step_slow(s, what, root_ok);
}
/** fn and eh (either NULL) are callable: 0, else -1 raised. */
int fpy_bad_callables(const char* what, PyObject* fn, PyObject* eh);
static inline int fpy_check_callables(const char* what, PyObject* fn, PyObject* eh)
{
    /* PyCallable_Check(), inline */
    if ((fn && !Py_TYPE(fn)->tp_call) || (eh && !Py_TYPE(eh)->tp_call)) {
        return fpy_bad_callables(what, fn, eh);
    }
    return 0;
}
/** A str without NUL (UTF-8 borrowed from `o`), a non-empty one (an error
 * code), a loop label (None: NULL): 0, else -1 raised. */
int fpy_str_arg(PyObject* o, const char* what, const char** out);
int fpy_code_arg(PyObject* o, const char* what, const char** out);
int fpy_label_arg(PyObject* o, const char** out);
/** An optional argument: None is not given. */
static inline PyObject* fpy_none_to_null(PyObject* o)
{
    return (o == Py_None) ? NULL : o;
}

/* ---- py_add.c, py_complete.c: the operations behind AsyncSteps' methods - */

/* Arguments already unpacked by py_types.c; NULL = not given. */
PyObject* fpy_add(fpy_steps* s, PyObject* fn, PyObject* eh);
PyObject* fpy_parallel(fpy_steps* s, PyObject* eh);
PyObject* fpy_await(fpy_steps* s, PyObject* awaitable);
PyObject* fpy_loop(fpy_steps* s, PyObject* fn, PyObject* label);
PyObject* fpy_repeat(fpy_steps* s, PyObject* count, PyObject* fn,
                     PyObject* label);
PyObject* fpy_sync(fpy_steps* s, PyObject* obj, PyObject* fn, PyObject* eh);
/** add_foreign(language, module, function): futoin_host_add(). */
PyObject* fpy_add_foreign(fpy_steps* s, PyObject* language, PyObject* module,
                          PyObject* function);
PyObject* fpy_success(fpy_steps* s, PyObject* const* v, Py_ssize_t n);
PyObject* fpy_success_step(fpy_steps* s, PyObject* const* v, Py_ssize_t n);
PyObject* fpy_error(fpy_steps* s, PyObject* code, PyObject* info);
PyObject* fpy_set_timeout(fpy_steps* s, PyObject* ms);
PyObject* fpy_set_cancel(fpy_steps* s, PyObject* fn);
PyObject* fpy_wait_external(fpy_steps* s);
PyObject* fpy_break(fpy_steps* s, PyObject* label, int is_continue);
PyObject* fpy_fail(fpy_steps* s, PyObject* exc);

/* ---- py_execute.c: one execution of a root ------------------------------ */

PyObject* fpy_execute(fpy_steps* s, PyObject* unhandled, PyObject* on_result);
/** execute(unhandled=None, on_success=None): on_success(*values) gets the
 * root's final values when the flow succeeds. */
PyObject* fpy_execute_with(fpy_steps* s, PyObject* unhandled, PyObject* on_success);
/** execute(); the outcome goes into the asyncio future `fut`, whose done
 * callback `cb` is removed first. */
int fpy_execute_into(fpy_steps* s, PyObject* fut, PyObject* cb);
/** execute(); the outcome goes to `await root`'s awaiter (py_asyncio.c). */
int fpy_execute_awaited(fpy_steps* s, PyObject* awaiter, int keep);
PyObject* fpy_cancel(fpy_steps* s);
/** The root object `s` lets go of its execution (freed, or cancelled). */
void fpy_exec_detach(fpy_steps* s);

/* ---- py_state.c: the flow's State, the shared state store -------------- */

PyObject* fpy_state(fpy_steps* s);
/** The State of the flow of `bsi` if it exists (borrowed), else NULL;
 * never creates it. Loop thread. */
PyObject* fpy_state_peek(FutoInAsyncSteps* bsi);
/** Publish what was assigned to the flow's State where no handle reached
 * the shared store, through `bsi`, a handle of the flow. Loop thread. */
void fpy_flush_state(FutoInAsyncSteps* bsi);
/** The shared state of State `st` (futoin_state_get/set); `missing` when
 * there is none or no handle reaches the root. */
PyObject* fpy_state_get(PyObject* st, PyObject* key, PyObject* missing);
/** Publish `value` (NULL or `missing`: remove); returns what the other
 * languages now see (a fresh object), `missing` when they see nothing, or
 * `unreachable` when no handle reaches the root (nothing published). */
PyObject* fpy_state_put(PyObject* st, PyObject* key, PyObject* value,
                        PyObject* missing, PyObject* unreachable);
/** True if a handle reaches the root of State `st` now. */
PyObject* fpy_state_reachable(PyObject* st);
/** error_info / last_exception / async_stack of the flow of State `st`,
 * read through its handle as the accessors read them; None when no handle
 * reaches the root. */
PyObject* fpy_state_error(PyObject* st, PyObject* key);

/* ---- py_asyncio.c ------------------------------------------------------- */

int fpy_tool_drive_with(fpy_tool* t, PyObject* loop);
void fpy_tool_undrive(fpy_tool* t);
int fpy_tool_kick(fpy_tool* t);
PyObject* fpy_tool_apump(fpy_tool* t);
PyObject* fpy_promise(fpy_steps* s);
int fpy_future_settle(PyObject* fut, PyObject* cb, PyObject* exc, PyObject* value);
/** `await root`: the object am_await returns. */
PyObject* fpy_awaiter_new(fpy_steps* s);
/** The flow's outcome to its awaiter. */
int fpy_awaiter_settle(PyObject* awaiter, PyObject* exc, PyObject* value);
/** From an await_() step of a flow that `await root` drives: the awaiter
 * waits for `fut` on the step's behalf (1), or declines (0). `pending`:
 * the caller has just seen fut.done() say False. */
int fpy_awaiter_take(FutoInAsyncSteps* bsi, PyObject* fut, int pending);

/* ---- py_tool.c ---------------------------------------------------------- */

int fpy_tool_init(fpy_tool* t, unsigned long long uv_loop, int virtual_time);
/** The Tool object of a futoin_tool made by Python (borrowed), or NULL. */
fpy_tool* fpy_tool_find(futoin_tool* ft);
/** ... of a futoin_tool of another language's program (a borrowed Tool). */
fpy_tool* fpy_tool_find_borrowed(futoin_tool* ft);
/** Add `t` to the live tools (fpy_tool_unlist() takes it off). */
void fpy_tool_list(fpy_tool* t);
/** close(): drop the executing roots, timers, fd watchers, and free the
 * roots made on the tool; 0, or -1 raised (out of memory). */
int fpy_tool_drop_all(fpy_tool* t);
void fpy_tool_unlist(fpy_tool* t);
/** Cancel every root the tool keeps alive while it executes (Ctrl-C). */
void fpy_tool_cancel_executing(fpy_tool* t);
/** Free the loop (close()/dealloc); roots still alive keep it (EBUSY). */
int fpy_tool_close(fpy_tool* t);
/** Drop the executing roots once the loop is idle. */
void fpy_tool_idle(fpy_tool* t);
/** The key of root `s` in its tool's flows (new reference, or NULL
 * raised): the root itself (an AsyncSteps is hashed by identity), or the
 * address of an object of a subclass (its own __eq__/__hash__ must not
 * matter). */
static inline PyObject* fpy_flow_key(fpy_steps* s)
{
    return Py_TYPE(s) == &fpy_steps_type ? Py_NewRef((PyObject*)s)
                                         : PyLong_FromVoidPtr(s);
}
/** Stop keeping root `s` alive, from the next loop pass on. */
void fpy_tool_root_done(fpy_steps* s);
/** An unhandled error of a root executed without a callback: kept for
 * run() to raise (the first one), and the loop stops if run() drives it. */
void fpy_tool_fail(fpy_tool* t, PyObject* exc);
PyObject* fpy_tool_drive(fpy_tool* t);
/** Virtual time: advance the clock `ms` (>= 0, checked by the caller) and
 * run what falls due, as run() does (GIL released, first unhandled error
 * raised). */
PyObject* fpy_tool_advance(fpy_tool* t, long long ms);
/** Milliseconds until the tool's next timer (int), or None. */
PyObject* fpy_tool_next_due(fpy_tool* t);
/** The tool's clock in milliseconds (int). */
PyObject* fpy_tool_now(fpy_tool* t);
PyObject* fpy_tool_pass(fpy_tool* t);
/** A pass of what is queued only, without polling (owned loops). */
PyObject* fpy_tool_pass_ready(fpy_tool* t);
PyObject* fpy_tool_schedule(fpy_tool* t, PyObject* delay_ms, PyObject* fn);
PyObject* fpy_tool_cancel_timer(fpy_tool* t, PyObject* key);
/** py_signals.c: watch Python's signal wakeup socket (fd, wfd owned);
 * close() stops it. */
PyObject* fpy_tool_watch_signals(fpy_tool* t, int fd, int wfd);
void fpy_tool_unwatch_signals(fpy_tool* t);
/** Call fn() on the loop thread; from any thread. */
PyObject* fpy_tool_post(fpy_tool* t, PyObject* fn);

/* ---- py_borrowed.c: the tool of a flow another language hosts ---------- */

/** The Tool object of `ft` (new reference): the Tool made by Python, else
 * a borrowed Tool (made on first use, then the same object while it
 * lives), or None for NULL. */
PyObject* fpy_tool_obj_of(futoin_tool* ft);
/** ToolBase._borrow_init(ptr): make `t` a borrowed Tool of `ft`. */
int fpy_borrowed_init(fpy_tool* t, futoin_tool* ft);
/** close() of a borrowed Tool: only lets go (its timers, holds and the
 * roots made on it go; the tool stays its program's). */
int fpy_borrowed_close(fpy_tool* t);
/** Can `t` be used now? An owned tool: until closed. A borrowed one: while
 * a Python callback of a flow or timer of it runs, or roots made on it
 * from Python, its pending timers or holds keep it. */
int fpy_tool_usable(fpy_tool* t);
/** t->tool if usable, else NULL with InvalidStateError naming `what`. */
futoin_tool* fpy_tool_use(fpy_tool* t, const char* what);
/* py_watch.c: Tool._set_hooks(dict or None), Tool._dump() -> str. */
PyObject* fpy_tool_set_hooks(fpy_tool* t, PyObject* table);
PyObject* fpy_tool_dump(fpy_tool* t);
/** A borrowed tool keeps an idle root of its tool (and itself) while its
 * timers or holds pend, and lets go when they are done. May drop the last
 * reference to `t`: call it last. Loop thread, GIL held. */
void fpy_borrowed_sync(fpy_tool* t);
/** _hold() / _unhold(): keep a borrowed tool while something of ours waits
 * on its loop (no-op for an owned tool). */
PyObject* fpy_tool_hold(fpy_tool* t, int delta);
/** The tool's asyncio event loop (ToolEventLoop, made on first use;
 * borrowed reference), or NULL raised. */
PyObject* fpy_tool_event_loop(fpy_tool* t);

/* ---- py_poll.c: file descriptors watched on a tool's loop --------------- */

/** ToolBase._poll(fd, events, callback): watch `fd` for `events` (1 read,
 * 2 write; 0 stops), callback(fd, events) on the loop thread. */
PyObject* fpy_tool_poll(fpy_tool* t, int fd, int events, PyObject* cb);
/** Stop every watcher of `t` (close()). */
void fpy_tool_unpoll(fpy_tool* t);

/* ---- py_policy.c: the load policy --------------------------------------- */

/** futoin_host_policy_set() of `tool` (a Tool; None: the process) with
 * `languages` and `modules` (tuples of str, or None: all), checked by the
 * Python layer; returns the library's result code (int), or NULL raised
 * (a borrowed or closed Tool, a list that is not a tuple of str). */
PyObject* fpy_policy_set(PyObject* tool, PyObject* languages, PyObject* modules);

/* ---- host/py_host.c: the language host "python" ------------------------ */

/** Capsule _host_api and futoin_host_register() of language "python". */
int fpy_host_init(PyObject* m);
/** (starts, stops, live step data) of the python host. */
PyObject* fpy_host_counters(void);

/* ---- py_async_stack.c: origins of steps, async stacks ------------------- */

/** Where the Python callable `fn` was written (takes the GIL itself). */
void fpy_origin_of(PyObject* fn, futoin_frame_origin* out);
/** futoin_step_class.origin of data that is the callable itself. */
void fpy_origin_fn(void* data, futoin_frame_origin* out);
/** The async stack of the last error of the flow of `bsi` (the Python
 * layer's AsyncStack), or None. */
PyObject* fpy_async_stack_of(FutoInAsyncSteps* bsi);

#endif
