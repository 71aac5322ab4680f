/*
 * The loop thread's GIL discipline, deferred releases, and the
 * KeyboardInterrupt/SystemExit bookkeeping of the Python binding.
 *
 * GIL. Tool.run() releases the GIL with PyEval_SaveThread() and keeps the
 * thread state in a thread-local (T.ts). A trampoline on that thread
 * restores exactly that state: one thread state per loop thread (a fresh
 * PyGILState per callback costs ~8x). It does not save it again when it
 * returns: the GIL stays with the loop thread (T.held) across a burst of
 * callbacks, and a prepare handle of the tool's loop, which libuv runs
 * right before it polls (the only place the loop blocks), releases it
 * (fpy_loop_prepare). Other threads still get the GIL while Python code
 * runs (the interpreter's switch interval) and whenever the loop waits.
 * Callbacks reached while Python already holds the GIL on this thread
 * (cancel handlers run from asi.cancel(), release hooks run from
 * root.free(), run_nowait() from asyncio) call straight through; any other
 * thread, or a loop run by someone else (uvloop), takes PyGILState_Ensure().
 *
 * Releases. Every callable given to C is referenced by a record that the
 * runtime releases exactly once through futoin_wrap_* release hooks, and
 * custom values are released through their type's cleanup. Those run on
 * the loop thread, usually with the GIL released; instead of taking the
 * GIL for each, they are queued (thread-local, so no lock: loop thread
 * only) and dropped by the next trampoline or when run() returns.
 */
#include "futoin_py.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Thread_local fpy_tls fpy_T __attribute__((tls_model("initial-exec")));
#define T fpy_T

void fpy_drain(void)
{
    while (T.n) {
        fpy_pending e = T.pend[--T.n];
        if (e.free_fn) {
            e.free_fn(e.p);
        } else {
            Py_DECREF((PyObject*)e.p);
        }
    }
}

size_t fpy_pending_releases(void)
{
    return T.n;
}

void fpy_release(void (*free_fn)(void*), void* p)
{
    if (!p) {
        return;
    }
    if (T.held) {
        /* run()'s loop thread between callbacks: the GIL is ours */
        free_fn ? free_fn(p) : Py_DECREF((PyObject*)p);
        return;
    }
    if (T.ts) {
        /* the loop thread inside run(): defer to the next GIL holder */
        if (T.n == T.cap) {
            size_t cap = T.cap ? T.cap * 2 : 256;
            fpy_pending* np = realloc(T.pend, cap * sizeof(*np));
            if (!np) {
                return; /* out of memory: leak it, never crash */
            }
            T.pend = np;
            T.cap = cap;
        }
        T.pend[T.n].free_fn = free_fn;
        T.pend[T.n].p = p;
        ++T.n;
        return;
    }
    if (PyGILState_Check()) {
        free_fn ? free_fn(p) : Py_DECREF((PyObject*)p);
    } else {
        PyGILState_STATE st = PyGILState_Ensure();
        free_fn ? free_fn(p) : Py_DECREF((PyObject*)p);
        PyGILState_Release(st);
    }
}

void fpy_release_obj(PyObject* o)
{
    if (T.held && o) {
        Py_DECREF(o); /* the usual case (fpy_release's first) */
        return;
    }
    fpy_release(NULL, o);
}

void fpy_gil_enter(fpy_gil* g)
{
    PyThreadState* ts;
    g->st = PyGILState_UNLOCKED;
    if (T.held) {
        g->how = 3; /* still ours since the previous callback */
        if (T.n) {
            fpy_drain();
        }
        return;
    }
    ts = T.ts;
    if (ts) {
        T.ts = NULL;
        PyEval_RestoreThread(ts);
        /* ours from now on, also for the releases the callback causes
         * (a run of chained steps pops each step before it returns) */
        T.held = 1;
        g->how = 1;
        if (T.n) {
            fpy_drain();
        }
    } else if (PyGILState_Check()) {
        g->how = 0;
    } else {
        g->st = PyGILState_Ensure();
        g->how = 2;
    }
}

void fpy_gil_leave(fpy_gil* g)
{
    if (g->how == 1) {
        /* Keep the GIL for the next callback: a burst of steps would
         * otherwise hand it over and take it back for every step. It is
         * released before the loop can block (fpy_loop_prepare). T.held
         * is set again: a nested run_end() may have cleared it. */
        T.held = 1;
    } else if (g->how == 2) {
        PyGILState_Release(g->st);
    }
}

void fpy_loop_prepare(void)
{
    if (T.held == 1) { /* (2: a pass from Python, which holds it) */
        T.held = 0;
        T.ts = PyEval_SaveThread();
    }
}

int fpy_run_begin(void)
{
    if (T.in_run) {
        PyErr_SetString(PyExc_RuntimeError, "run(): already running on this thread");
        return -1;
    }
    T.in_run = 1;
    T.held = 0;
    T.ts = PyEval_SaveThread();
    return 0;
}

void fpy_run_end(void)
{
    PyThreadState* ts = T.ts;
    T.ts = NULL;
    T.in_run = 0;
    if (T.held) {
        T.held = 0; /* the last callback kept it */
    } else {
        PyEval_RestoreThread(ts);
    }
    fpy_drain();
}

void fpy_store_fatal(void)
{
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    if (T.fatal_t) {
        /* the first one wins; a second Ctrl-C while unwinding is dropped */
        Py_XDECREF(t);
        Py_XDECREF(v);
        Py_XDECREF(tb);
        return;
    }
    T.fatal_t = t;
    T.fatal_v = v;
    T.fatal_tb = tb;
}

int fpy_in_run(void)
{
    return T.in_run;
}

int fpy_is_fatal(void)
{
    return PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)
           || PyErr_ExceptionMatches(PyExc_SystemExit);
}

int fpy_raise_fatal(void)
{
    if (!T.fatal_t) {
        return 0;
    }
    PyErr_Restore(T.fatal_t, T.fatal_v, T.fatal_tb);
    T.fatal_t = T.fatal_v = T.fatal_tb = NULL;
    return -1;
}

/* ---- misuse reported by the library ------------------------------------- */

void fpy_misuse_cb(void* data, const char* code, const char* message)
{
    (void)data;
    if (T.expect > 0) {
        if (!T.misused) { /* the first report says what went wrong */
            free(T.misuse);
            T.misuse = strdup(message ? message : code);
            T.misused = 1;
        }
        return;
    }
    fprintf(stderr, "futoin: %s: %s\n", code, message);
}

int fpy_check_report(void)
{
    T.misused = 0;
    fpy_invalid_state("%s", T.misuse ? T.misuse : "API misuse");
    return -1;
}
