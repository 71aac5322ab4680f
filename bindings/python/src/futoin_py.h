/*
 * Internal interface of the Python binding's C support code.
 *
 * SWIG generates the module from bindings/python/futoin_python.i: the
 * Python types AsyncStepsBase and ToolBase (SWIG -builtin types over the C
 * structs below), their methods, argument unpacking and checks. The
 * methods' bodies call the functions declared here, which hold what SWIG
 * cannot generate: the trampolines that run Python callables as steps,
 * the GIL discipline of the loop thread, deferred releases and the
 * FutoInBinaryValue <-> Python conversion.
 *
 * Files: py_gil.c (thread state, releases, KeyboardInterrupt/SystemExit
 * bookkeeping), py_values.c (conversion), py_steps.c (trampolines and the
 * AsyncSteps operations), py_tool.c (the Tool, its timers and signals).
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
#include <futoin/sys/wrap.h>
#include <uv.h>

/* ---- the C structs behind the SWIG types -------------------------------- */

enum { FPY_STEP = 0, FPY_ROOT = 1, FPY_BORROWED = 2 };

/** Behind AsyncStepsBase: one FTN12 handle of any implementation. */
typedef struct fpy_steps
{
    FutoInAsyncSteps* bsi;  /* NULL once closed */
    FutoInAsyncSteps* root; /* our root handle (to cancel on Ctrl-C), or NULL */
    PyObject* tool_obj;     /* roots of our Tool: the Tool object (owned) */
    struct fpy_tool* tool;  /* ... and its C struct (borrowed from tool_obj) */
    int kind;               /* FPY_STEP, FPY_ROOT (freed with us), FPY_BORROWED */
} fpy_steps;

/** Behind ToolBase: one futoin_tool (one libuv loop). */
typedef struct fpy_tool
{
    futoin_tool* tool;
    PyObject* flows;  /* executing roots, kept alive: {address of fpy_steps:
                         (root,)}, a fresh 1-tuple per execute() */
    PyObject* timers; /* int(address of a timer record) -> callable */
    uv_poll_t* sig;   /* watches Python's signal wakeup fd, or NULL */
} fpy_tool;

/* ---- provided by the SWIG module (futoin_python.i) ---------------------- */

/** A new object of `type` (AsyncStepsBase or a subclass) owning `s`. */
PyObject* fpy_obj_new(PyTypeObject* type, fpy_steps* s);
/** The fpy_steps behind an object made by fpy_obj_new. */
fpy_steps* fpy_obj_steps(PyObject* o);

/* ---- py_gil.c ----------------------------------------------------------- */

typedef struct fpy_gil
{
    int how;
    PyGILState_STATE st;
} fpy_gil;

/** Take the GIL in a trampoline (see py_gil.c for the three cases). */
void fpy_gil_enter(fpy_gil* g);
void fpy_gil_leave(fpy_gil* g);
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

/* ---- py_steps.c --------------------------------------------------------- */

/** Types registered by the Python layer (AsyncSteps, State, FutoInError). */
int fpy_set_types(PyTypeObject* base, PyObject* steps_cls,
                  PyObject* state_cls, PyObject* error_cls);

fpy_steps* fpy_steps_new_root(PyObject* tool_obj, fpy_tool* tool);
void fpy_steps_destroy(fpy_steps* s);
PyObject* fpy_steps_wrap(PyObject* cls, PyObject* address, PyObject* owned,
                         PyObject* tool);

PyObject* fpy_add(fpy_steps* s, PyObject* self, PyObject* fn, PyObject* eh);
PyObject* fpy_parallel(fpy_steps* s, PyObject* eh);
PyObject* fpy_success(fpy_steps* s, PyObject* const* v, Py_ssize_t n);
PyObject* fpy_success_step(fpy_steps* s, PyObject* self, PyObject* const* v,
                           Py_ssize_t n);
PyObject* fpy_error(fpy_steps* s, PyObject* code, PyObject* info);
PyObject* fpy_set_timeout(fpy_steps* s, PyObject* ms);
PyObject* fpy_set_cancel(fpy_steps* s, PyObject* fn);
PyObject* fpy_wait_external(fpy_steps* s);
PyObject* fpy_loop(fpy_steps* s, PyObject* self, PyObject* fn, PyObject* label);
PyObject* fpy_repeat(fpy_steps* s, PyObject* self, PyObject* count,
                     PyObject* fn, PyObject* label);
PyObject* fpy_break(fpy_steps* s, PyObject* label);
PyObject* fpy_continue(fpy_steps* s, PyObject* label);
PyObject* fpy_sync(fpy_steps* s, PyObject* self, PyObject* obj, PyObject* fn,
                   PyObject* eh);
PyObject* fpy_execute(fpy_steps* s, PyObject* self, PyObject* fn);
PyObject* fpy_cancel(fpy_steps* s);
PyObject* fpy_new_instance(fpy_steps* s);
PyObject* fpy_free(fpy_steps* s);
PyObject* fpy_state(fpy_steps* s);
PyObject* fpy_error_info(fpy_steps* s);
PyObject* fpy_last_exception(fpy_steps* s);
PyObject* fpy_root_id(fpy_steps* s);
PyObject* fpy_is_valid(fpy_steps* s);
PyObject* fpy_is_same_thread(fpy_steps* s);
PyObject* fpy_binary(fpy_steps* s);
PyObject* fpy_is_ours(fpy_steps* s);
PyObject* fpy_tool_ptr_of(fpy_steps* s);
PyObject* fpy_tool_of(fpy_steps* s);

/* ---- py_tool.c ---------------------------------------------------------- */

fpy_tool* fpy_tool_new(unsigned long long uv_loop);
void fpy_tool_destroy(fpy_tool* t);
/** Drop the executing roots once the loop is idle. */
void fpy_tool_idle(fpy_tool* t);
/** Stop keeping root `s` alive, from the next loop pass on. */
void fpy_tool_root_done(fpy_steps* s);
PyObject* fpy_tool_drive(fpy_tool* t);
PyObject* fpy_tool_pass(fpy_tool* t);
PyObject* fpy_tool_schedule(fpy_tool* t, PyObject* delay_ms, PyObject* fn);
PyObject* fpy_tool_cancel_timer(fpy_tool* t, PyObject* key);
PyObject* fpy_tool_watch_signals(fpy_tool* t, int fd, int wfd);

#endif
