/*
 * The Tool of the Python binding: one futoin_tool (one libuv loop), run()
 * with the GIL released, Python timers and calls posted from any thread,
 * close(). The live tools (made by Python, and borrowed ones:
 * py_borrowed.c) are listed for fpy_tool_find(). Prompt KeyboardInterrupt
 * while run() waits: py_signals.c.
 */
#include "futoin_py.h"

#include <stdlib.h>
#include <unistd.h>

static void drop_done(fpy_tool* t, PyObject* key, PyObject* token);

typedef struct fpy_timer
{
    fpy_tool* tool;
    FutoInHandle h;
} fpy_timer;

/* The live tools, made by Python and borrowed (GIL held for every change
 * and lookup; few of them). */
static fpy_tool* live_tools;

static fpy_tool* find(futoin_tool* ft, int borrowed)
{
    for (fpy_tool* t = live_tools; ft && t; t = t->next_live) {
        if (t->tool == ft && t->borrowed == borrowed) {
            return t;
        }
    }
    return NULL;
}

fpy_tool* fpy_tool_find(futoin_tool* ft)
{
    return find(ft, 0);
}

fpy_tool* fpy_tool_find_borrowed(futoin_tool* ft)
{
    return find(ft, 1);
}

void fpy_tool_list(fpy_tool* t)
{
    t->next_live = live_tools;
    live_tools = t;
}

void fpy_tool_unlist(fpy_tool* t)
{
    for (fpy_tool** p = &live_tools; *p; p = &(*p)->next_live) {
        if (*p == t) {
            *p = t->next_live;
            t->next_live = NULL;
            return;
        }
    }
}

static void on_prepare(uv_prepare_t* p)
{
    fpy_loop_prepare();
}

static void on_prepare_closed(uv_handle_t* h)
{
    free(h);
}

int fpy_tool_init(fpy_tool* t, unsigned long long uv_loop, int virtual_time)
{
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    if (t->tool) {
        PyErr_SetString(PyExc_RuntimeError, "Tool.__init__() called twice");
        return -1;
    }
    if (virtual_time && uv_loop) {
        /* the loop's owner runs it, and its own timers, on the wall clock */
        PyErr_SetString(PyExc_ValueError,
                        "Tool(virtual_time=True) needs a loop of its own: not "
                        "with uv_loop");
        return -1;
    }
    o.uv_loop = (void*)(uintptr_t)uv_loop;
    o.virtual_time = virtual_time != 0;
    o.misuse = fpy_misuse_cb;
    t->afd = -1;
    t->owned = uv_loop == 0;
    if (!t->flows && !(t->flows = PyDict_New())) {
        return -1;
    }
    if (!t->timers && !(t->timers = PyDict_New())) {
        return -1;
    }
    if (futoin_tool_new(&t->tool, &o) != FUTOIN_OK) {
        t->tool = NULL;
        PyErr_SetString(PyExc_RuntimeError, "futoin_tool_new() failed");
        return -1;
    }
    t->prep = malloc(sizeof(*t->prep));
    if (!t->prep || uv_prepare_init(futoin_tool_uv_loop(t->tool), t->prep) != 0) {
        free(t->prep);
        t->prep = NULL;
        futoin_tool_free(t->tool);
        t->tool = NULL;
        PyErr_NoMemory();
        return -1;
    }
    uv_prepare_start(t->prep, on_prepare);
    uv_unref((uv_handle_t*)t->prep); /* never keeps the loop alive */
    fpy_tool_list(t);
    return 0;
}

static void drop_timers(fpy_tool* t)
{
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    if (!t->timers) {
        return;
    }
    while (PyDict_Next(t->timers, &pos, &k, &v)) {
        fpy_timer* tm = PyLong_AsVoidPtr(k);
        futoin_tool_cancel(t->tool, &tm->h);
        PyMem_Free(tm);
    }
    PyDict_Clear(t->timers);
}

int fpy_tool_drop_all(fpy_tool* t)
{
    if (t->flows && PyDict_GET_SIZE(t->flows)) {
        PyObject* old = t->flows;
        t->flows = PyDict_New();
        Py_DECREF(old);
        if (!t->flows) {
            return -1;
        }
    }
    drop_timers(t);
    fpy_tool_unpoll(t);
    /* the tool's roots still referenced from Python are freed (closed):
     * like a file's, their handles are dead with the tool */
    while (t->roots) {
        fpy_steps* s = t->roots;
        Py_INCREF(s);
        fpy_steps_free_root(s);
        Py_DECREF(s);
    }
    fpy_drain();
    return 0;
}

/* Free the loop: the executing roots are dropped (which cancels them),
 * timers too. Returns 0, or -1 (RuntimeError) while roots of other owners
 * still live on it; the tool is then kept. */
int fpy_tool_close(fpy_tool* t)
{
    fpy_tool_undrive(t);
    if (!t->tool) {
        return 0;
    }
    if (t->borrowed) {
        return fpy_borrowed_close(t);
    }
    t->closing = 1;
    if (fpy_tool_drop_all(t) < 0) {
        return -1;
    }
    fpy_tool_unwatch_signals(t);
    if (t->prep) {
        uv_close((uv_handle_t*)t->prep, on_prepare_closed);
        t->prep = NULL;
    }
    /* EBUSY: a root of another owner still lives; the tool is kept rather
     * than freed under it */
    if (futoin_tool_free(t->tool) != FUTOIN_OK) {
        t->closing = 0;
        PyErr_SetString(PyExc_RuntimeError,
                        "Tool.close(): roots made on this tool are still alive");
        return -1;
    }
    t->tool = NULL;
    fpy_tool_unlist(t);
    fpy_drain();
    return 0;
}

void fpy_tool_idle(fpy_tool* t)
{
    if (t->flows && PyDict_GET_SIZE(t->flows)) {
        PyObject* old = t->flows;
        t->flows = PyDict_New();
        Py_DECREF(old);
        if (!t->flows) {
            PyErr_Clear();
        }
    }
    fpy_drain();
}

void fpy_tool_fail(fpy_tool* t, PyObject* exc)
{
    if (t->failure) {
        /* run() raises the first; the others are not lost either */
        PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
        PyErr_WriteUnraisable(NULL);
        return;
    }
    t->failure = Py_NewRef(exc);
    if (t->tool && fpy_in_run() && futoin_tool_is_same_thread(t->tool)) {
        uv_stop(futoin_tool_uv_loop(t->tool));
    }
}

/* The first unhandled error of a root executed without a callback. */
static int raise_failure(fpy_tool* t)
{
    PyObject* exc = t->failure;
    if (!exc) {
        return 0;
    }
    t->failure = NULL;
    PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return -1;
}

static int closed(fpy_tool* t)
{
    if (!t->tool) {
        fpy_invalid_state("the Tool is closed");
        return 1;
    }
    return 0;
}

/* run()/run_nowait() of a borrowed tool: its program runs the loop. */
static int refuse_borrowed(fpy_tool* t, const char* what)
{
    if (t->borrowed && t->tool) {
        fpy_invalid_state("%s: this Tool is the loop of the program that hosts "
                          "the flow (borrowed): that program runs it", what);
        return 1;
    }
    return 0;
}

/* run(), or advance(ms) of the virtual clock (advance >= 0): the GIL is
 * released while the loop runs, as for any run of it. */
static PyObject* drive(fpy_tool* t, const char* what, long long advance)
{
    int rc, fatal;
    if (refuse_borrowed(t, what) || closed(t)) {
        return NULL;
    }
    if (advance >= 0) {
        if (!futoin_tool_is_virtual(t->tool)) {
            return fpy_invalid_state("%s: this Tool runs on the wall clock; make "
                                     "it with Tool(virtual_time=True)", what);
        }
        if (!futoin_tool_is_same_thread(t->tool)) {
            PyErr_Format(PyExc_RuntimeError, "%s: on the tool's loop thread only",
                         what);
            return NULL;
        }
        if (fpy_in_run() || t->passing || t->in_cb) {
            return fpy_invalid_state("%s: not from inside the loop (a step, a "
                                     "callback, or while run() runs)", what);
        }
        if ((uint64_t)advance > UINT64_MAX - futoin_tool_now(t->tool)) {
            PyErr_SetString(PyExc_ValueError, "advance(): too far for the clock");
            return NULL;
        }
    }
    if (fpy_run_begin() < 0) {
        return NULL;
    }
    rc = advance >= 0 ? futoin_tool_advance(t->tool, (uint64_t)advance)
                      : futoin_tool_run(t->tool);
    fpy_run_end();
    fatal = fpy_raise_fatal() < 0;
    if (fatal || !uv_loop_alive(futoin_tool_uv_loop(t->tool))) {
        /* idle, or Ctrl-C (the executing roots were cancelled); a loop
         * stopped by an unhandled error goes on at the next run() */
        PyObject *et, *ev, *etb;
        PyErr_Fetch(&et, &ev, &etb);
        fpy_tool_idle(t);
        PyErr_Restore(et, ev, etb);
    }
    if (fatal) {
        return NULL;
    }
    if (raise_failure(t) < 0) {
        return NULL;
    }
    if (rc != FUTOIN_OK) {
        /* advance() was checked above; the library refuses it only from
         * inside a callback of another language's code on this loop */
        PyErr_SetString(PyExc_RuntimeError,
                        advance >= 0
                                ? "advance(): refused (called while the loop runs)"
                                : "run(): refused (the loop is attached: its owner runs it)");
        return NULL;
    }
    Py_RETURN_NONE;
}

PyObject* fpy_tool_drive(fpy_tool* t)
{
    return drive(t, "run()", -1);
}

PyObject* fpy_tool_advance(fpy_tool* t, long long ms)
{
    return drive(t, "advance()", ms);
}

/* ---- the tool's clock ----------------------------------------------------- */

PyObject* fpy_tool_next_due(fpy_tool* t)
{
    uint64_t ms = 0;
    int rc;
    if (!fpy_tool_use(t, "next_due()")) {
        return NULL;
    }
    if (!futoin_tool_is_same_thread(t->tool)) {
        PyErr_SetString(PyExc_RuntimeError, "next_due(): on the tool's loop thread only");
        return NULL;
    }
    rc = futoin_tool_next_due(t->tool, &ms);
    if (rc == 0) {
        Py_RETURN_NONE;
    }
    return PyLong_FromUnsignedLongLong(ms);
}

PyObject* fpy_tool_now(fpy_tool* t)
{
    if (!fpy_tool_use(t, "time()")) {
        return NULL;
    }
    if (!futoin_tool_is_same_thread(t->tool)) {
        PyErr_SetString(PyExc_RuntimeError, "time(): on the tool's loop thread only");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(futoin_tool_now(t->tool));
}

/* One non-blocking pass. The GIL stays held (nothing here blocks). Called
 * again from inside the pass (a flow awaited from a step), it does nothing
 * and reports work left: the outer pass goes on. */
static PyObject* pass(fpy_tool* t, int ready_only);

PyObject* fpy_tool_pass(fpy_tool* t)
{
    return pass(t, 0);
}

/* Only what is queued (flows made ready by a completion, immediates), no
 * libuv poll: futoin_tool_run() runs its queue before it enters libuv, and
 * a uv_stop() made first has uv_run() return at once. Timers and I/O wait
 * for the next full pass (the caller asks asyncio for it). An owned loop
 * only; otherwise a full pass. */
PyObject* fpy_tool_pass_ready(fpy_tool* t)
{
    return pass(t, t->owned);
}

static PyObject* pass(fpy_tool* t, int ready_only)
{
    int rc, held = fpy_T.held;
    if (refuse_borrowed(t, "run_nowait()") || closed(t)) {
        return NULL;
    }
    if (t->passing) {
        Py_RETURN_TRUE;
    }
    t->passing = 1;
    /* The GIL is ours for the whole pass: its callbacks and releases need
     * not ask (2: not the loop's to hand over before it polls) */
    if (!held) {
        fpy_T.held = 2;
    }
    if (ready_only) {
        uv_loop_t* loop = futoin_tool_uv_loop(t->tool);
        uv_stop(loop);
        rc = futoin_tool_run(t->tool);
        /* futoin_tool_run() skips uv_run() when nothing is alive: the stop
         * request must not outlive this pass (stop_flag is public) */
        loop->stop_flag = 0;
        rc = rc < 0 ? rc : uv_loop_alive(loop) != 0;
    } else {
        rc = futoin_tool_run_nowait(t->tool);
    }
    fpy_T.held = held; /* (a run() nested in the pass ended holding it too) */
    t->passing = 0;
    if (t->done && PyList_GET_SIZE(t->done)) {
        /* roots that finished during the pass: no longer inside their
         * callbacks, so they may be dropped now (no extra loop pass); the
         * tokens of their executions, (root,). The list is kept for the
         * next pass, and taken meanwhile: a drop may run code that ends
         * another root. */
        PyObject* done = t->done;
        t->done = NULL;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(done); ++i) {
            PyObject* token = PyList_GET_ITEM(done, i);
            PyObject* key = fpy_flow_key((fpy_steps*)PyTuple_GET_ITEM(token, 0));
            if (key) {
                drop_done(t, key, token);
                Py_DECREF(key);
            } else {
                PyErr_Clear(); /* out of memory: dropped when the loop idles */
            }
        }
        if (!t->done && PyList_SetSlice(done, 0, PyList_GET_SIZE(done), NULL) == 0) {
            t->done = done;
        } else {
            PyErr_Clear();
            Py_DECREF(done);
        }
    }
    fpy_drain();
    if (fpy_raise_fatal() < 0 || raise_failure(t) < 0) {
        return NULL;
    }
    if (rc < 0) {
        PyErr_SetString(PyExc_RuntimeError, "run_nowait(): refused");
        return NULL;
    }
    if (rc == 0) {
        fpy_tool_idle(t);
    }
    return PyBool_FromLong(rc);
}

/* A root finished (last step, unhandled error, or cancel from Python):
 * stop keeping it alive. Deferred to an immediate, because dropping the
 * last reference frees the root, which must not happen inside its own
 * callback. Without this, a tool attached to a loop that someone else
 * runs would keep every root it ever executed: only run()/run_nowait()
 * reach fpy_tool_idle(). */
typedef struct fpy_done
{
    fpy_tool* tool;
    PyObject* key;
    PyObject* token; /* the execution that finished (a root run again gets
                        a new token, which this must not drop) */
} fpy_done;

static void drop_done(fpy_tool* t, PyObject* key, PyObject* token)
{
    if (t->flows && PyDict_GetItem(t->flows, key) == token) {
        if (PyDict_DelItem(t->flows, key) < 0) {
            PyErr_Clear();
        }
    }
}

static void tr_root_done(void* data)
{
    fpy_done* d = data;
    fpy_gil g;
    fpy_gil_enter(&g);
    drop_done(d->tool, d->key, d->token);
    Py_DECREF(d->key);
    Py_DECREF(d->token);
    PyMem_Free(d);
    fpy_gil_leave(&g);
}

void fpy_tool_root_done(fpy_steps* s)
{
    fpy_tool* t = s->tool;
    fpy_done* d;
    PyObject *key, *token;
    FutoInHandle h;
    if (!s->kept) {
        return; /* never put into t->flows (an awaited flow), or gone */
    }
    if (!t || !t->tool || !futoin_tool_is_same_thread(t->tool)) {
        return; /* dropped when the loop idles */
    }
    /* its token, (root,): what the root's key in t->flows holds now */
    if (!t->flows || !(key = fpy_flow_key(s))) {
        PyErr_Clear(); /* out of memory: dropped when the loop idles */
        return;
    }
    token = PyDict_GetItem(t->flows, key);
    if (!token) {
        Py_DECREF(key);
        s->kept = 0;
        return; /* not kept alive (any more) */
    }
    if (t->passing) {
        if ((t->done || (t->done = PyList_New(0)))
            && PyList_Append(t->done, token) == 0) {
            Py_DECREF(key);
            return;
        }
        PyErr_Clear(); /* out of memory: the immediate below */
    }
    d = PyMem_Malloc(sizeof(*d));
    if (!d) {
        Py_DECREF(key);
        PyErr_Clear(); /* out of memory: dropped when the loop idles */
        return;
    }
    d->key = key;
    d->token = Py_NewRef(token);
    d->tool = t;
    h = futoin_tool_immediate(t->tool, tr_root_done, d);
    if (!futoin_tool_is_valid(t->tool, &h)) {
        Py_DECREF(d->key);
        Py_DECREF(d->token);
        PyMem_Free(d);
    }
}

/* ---- timers ------------------------------------------------------------- */

static void tr_timer(void* data)
{
    fpy_timer* tm = data;
    fpy_tool* t = tm->tool;
    fpy_gil g;
    PyObject *key, *fn, *res;
    fpy_gil_enter(&g);
    Py_INCREF(t); /* the callback may close or drop the tool */
    ++t->in_cb;
    key = PyLong_FromVoidPtr(tm);
    fn = key ? PyDict_GetItemWithError(t->timers, key) : NULL;
    if (fn) {
        Py_INCREF(fn);
        PyDict_DelItem(t->timers, key);
        PyMem_Free(tm);
        res = PyObject_CallNoArgs(fn);
        if (res) {
            Py_DECREF(res);
        } else if (fpy_is_fatal() && (!t->borrowed || fpy_in_run())) {
            fpy_store_fatal();
        } else {
            /* no run() of ours re-raises it in another language's program */
            PyErr_WriteUnraisable(fn);
        }
        Py_DECREF(fn);
    }
    PyErr_Clear();
    Py_XDECREF(key);
    --t->in_cb;
    fpy_borrowed_sync(t);
    Py_DECREF(t);
    fpy_gil_leave(&g);
}

/* delay_ms None: an immediate; else a deferred call. Returns the key for
 * cancel(). */
PyObject* fpy_tool_schedule(fpy_tool* t, PyObject* delay_ms, PyObject* fn)
{
    unsigned long ms = 0;
    fpy_timer* tm;
    PyObject* key;
    if (!fpy_tool_use(t, delay_ms ? "deferred()" : "immediate()")) {
        return NULL;
    }
    if (!futoin_tool_is_same_thread(t->tool)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "immediate()/deferred() from another thread: use "
                        "call_soon_threadsafe()");
        return NULL;
    }
    if (delay_ms) {
        if (!PyLong_Check(delay_ms)) {
            PyErr_Format(PyExc_TypeError, "deferred(delay_ms, fn): int "
                         "milliseconds expected, not %.80s",
                         Py_TYPE(delay_ms)->tp_name);
            return NULL;
        }
        ms = PyLong_AsUnsignedLong(delay_ms);
        if (ms == (unsigned long)-1 && PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "deferred(delay_ms, fn): delay_ms must be >= 0");
            return NULL;
        }
        if (ms > UINT32_MAX) {
            ms = UINT32_MAX;
        }
    }
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "callable expected, not %.80s",
                     Py_TYPE(fn)->tp_name);
        return NULL;
    }
    tm = PyMem_Malloc(sizeof(*tm));
    if (!tm) {
        return PyErr_NoMemory();
    }
    tm->tool = t;
    key = PyLong_FromVoidPtr(tm);
    if (!key || PyDict_SetItem(t->timers, key, fn) < 0) {
        Py_XDECREF(key);
        PyMem_Free(tm);
        return NULL;
    }
    if (delay_ms) {
        tm->h = futoin_tool_deferred(t->tool, (uint32_t)ms, tr_timer, tm);
    } else {
        tm->h = futoin_tool_immediate(t->tool, tr_timer, tm);
    }
    fpy_borrowed_sync(t); /* the caller holds t */
    return key;
}

PyObject* fpy_tool_cancel_timer(fpy_tool* t, PyObject* key)
{
    fpy_timer* tm;
    PyObject* fn;
    if (!t->tool) {
        Py_RETURN_FALSE; /* close() dropped every pending call */
    }
    fn = PyDict_GetItemWithError(t->timers, key);
    if (!fn) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_FALSE;
    }
    tm = PyLong_AsVoidPtr(key);
    futoin_tool_cancel(t->tool, &tm->h);
    PyMem_Free(tm);
    if (PyDict_DelItem(t->timers, key) < 0) {
        return NULL;
    }
    fpy_borrowed_sync(t); /* the caller holds t */
    Py_RETURN_TRUE;
}

/* ---- calls posted from any thread ------------------------------------- */

typedef struct fpy_posted
{
    PyObject* fn;
    fpy_tool* tool; /* alive when it runs: a closed or freed tool drops it */
} fpy_posted;

static void tr_post(void* data)
{
    fpy_posted* p = data;
    fpy_tool* t = p->tool;
    fpy_gil g;
    PyObject* res;
    fpy_gil_enter(&g);
    Py_INCREF(t); /* the callback may let go of the tool */
    ++t->in_cb;
    res = PyObject_CallNoArgs(p->fn);
    if (res) {
        Py_DECREF(res);
    } else if (fpy_is_fatal() && (!t->borrowed || fpy_in_run())) {
        fpy_store_fatal();
    } else {
        PyErr_WriteUnraisable(p->fn);
    }
    Py_DECREF(p->fn);
    PyMem_Free(p);
    --t->in_cb;
    fpy_borrowed_sync(t);
    Py_DECREF(t);
    fpy_gil_leave(&g);
}

PyObject* fpy_tool_post(fpy_tool* t, PyObject* fn)
{
    fpy_posted* p;
    FutoInHandle h;
    if (closed(t)) {
        return NULL;
    }
    if (t->borrowed && !futoin_tool_is_same_thread(t->tool)
        && !__atomic_load_n(&t->anchor, __ATOMIC_ACQUIRE)) {
        /* from another thread only while a hold proves the tool alive */
        return fpy_invalid_state("call_soon_threadsafe(): this Tool is the loop "
                                 "of the program that hosts the flow (borrowed): "
                                 "from another thread only while its event "
                                 "loop waits for that thread (run_in_executor())");
    }
    if (t->borrowed && futoin_tool_is_same_thread(t->tool)
        && !fpy_tool_use(t, "call_soon_threadsafe()")) {
        return NULL;
    }
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "callable expected, not %.80s",
                     Py_TYPE(fn)->tp_name);
        return NULL;
    }
    p = PyMem_Malloc(sizeof(*p));
    if (!p) {
        return PyErr_NoMemory();
    }
    p->fn = Py_NewRef(fn);
    p->tool = t;
    h = futoin_tool_immediate(t->tool, tr_post, p);
    if (futoin_tool_is_same_thread(t->tool) && !futoin_tool_is_valid(t->tool, &h)) {
        Py_DECREF(p->fn);
        PyMem_Free(p);
        return fpy_invalid_state("call_soon_threadsafe(): refused (the tool is closing)");
    }
    Py_RETURN_NONE;
}
