/*
 * A Tool's libuv loop driven from asyncio on the same thread, and
 * root.promise() / `await root`.
 *
 * asyncio watches libuv's backend (epoll) fd and libuv's next timer, and
 * runs one non-blocking libuv pass (Tool._pump) when either is due, or
 * right after something was queued from Python (Tool._kick: one
 * loop.call_soon per burst, however many flows were queued).
 *
 * This was Python code; it is C because it runs for every flow awaited
 * from asyncio, and each Python-level call here cost a tenth of the whole
 * flow (bench/python: "asyncio-driven flow").
 */
#include "futoin_py.h"

static PyObject *s_call_soon, *s_call_later, *s_add_reader, *s_remove_reader,
    *s_cancel, *s_is_closed, *s_done, *s_set_result, *s_set_exception,
    *s_create_future, *s_add_done_callback, *s_remove_done_callback,
    *s_cancelled, *s_get_loop;

/* Interned method names, made once. */
static int names(void)
{
    static int ready;
    if (ready) {
        return 0;
    }
#define N(v, t)                                                                \
    if (!(v = PyUnicode_InternFromString(t))) {                                \
        return -1;                                                             \
    }
    N(s_call_soon, "call_soon");
    N(s_call_later, "call_later");
    N(s_add_reader, "add_reader");
    N(s_remove_reader, "remove_reader");
    N(s_cancel, "cancel");
    N(s_is_closed, "is_closed");
    N(s_done, "done");
    N(s_set_result, "set_result");
    N(s_set_exception, "set_exception");
    N(s_create_future, "create_future");
    N(s_add_done_callback, "add_done_callback");
    N(s_remove_done_callback, "remove_done_callback");
    N(s_cancelled, "cancelled");
    N(s_get_loop, "get_loop");
#undef N
    ready = 1;
    return 0;
}

/* The callable asyncio calls: refers to the tool weakly, so that the tool
 * does not keep itself alive through the loop's reader and handles. */
static PyObject* pump_entry(PyObject* ref, PyObject* unused)
{
    PyObject* t = PyWeakref_GetObject(ref);
    if (!t || t == Py_None) {
        Py_RETURN_NONE;
    }
    Py_INCREF(t);
    PyObject* r = fpy_tool_apump((fpy_tool*)t);
    Py_DECREF(t);
    return r;
}

static PyMethodDef pump_def = {"_pump", pump_entry, METH_NOARGS,
                               PyDoc_STR("One libuv pass of a Tool driven by asyncio.")};

static PyObject* pump_callable(fpy_tool* t)
{
    PyObject* ref = PyWeakref_NewRef((PyObject*)t, NULL);
    PyObject* f = ref ? PyCFunction_New(&pump_def, ref) : NULL;
    Py_XDECREF(ref);
    return f;
}

/* Stop being driven by t->aloop (loop closed, tool closed, another loop). */
void fpy_tool_undrive(fpy_tool* t)
{
    PyObject* loop = t->aloop;
    if (!loop) {
        return;
    }
    t->aloop = NULL;
    if (t->atimer) {
        PyObject* r = PyObject_CallMethodNoArgs(t->atimer, s_cancel);
        Py_XDECREF(r);
        Py_CLEAR(t->atimer);
    }
    if (t->afd >= 0) {
        PyObject* closed = PyObject_CallMethodNoArgs(loop, s_is_closed);
        if (closed == Py_False) {
            PyObject* fd = PyLong_FromLong(t->afd);
            PyObject* r = fd ? PyObject_CallMethodOneArg(loop, s_remove_reader, fd) : NULL;
            Py_XDECREF(r);
            Py_XDECREF(fd);
        }
        Py_XDECREF(closed);
        t->afd = -1;
    }
    PyErr_Clear();
    t->ascheduled = 0;
    Py_DECREF(loop);
}

/* Be driven by `loop` from now on. */
int fpy_tool_drive_with(fpy_tool* t, PyObject* loop)
{
    PyObject *fd, *r;
    if (t->aloop == loop || (loop == t->tloop && t->tloop)) {
        return 0; /* its own event loop: the tool runs itself */
    }
    if (names() < 0) {
        return -1;
    }
    if (t->borrowed) {
        fpy_invalid_state("asyncio: this Tool is the loop of the program that "
                          "hosts the flow (borrowed): that program runs it; await "
                          "its flows in its own event loop (Tool.event_loop())");
        return -1;
    }
    fpy_tool_undrive(t);
    if (!t->tool) {
        fpy_invalid_state("the Tool is closed");
        return -1;
    }
    if (!t->apump && !(t->apump = pump_callable(t))) {
        return -1;
    }
    t->afd = uv_backend_fd(futoin_tool_uv_loop(t->tool));
    fd = PyLong_FromLong(t->afd);
    r = fd ? PyObject_CallMethodObjArgs(loop, s_add_reader, fd, t->apump, NULL) : NULL;
    Py_XDECREF(fd);
    if (!r) {
        t->afd = -1;
        return -1;
    }
    Py_DECREF(r);
    t->aloop = Py_NewRef(loop);
    return 0;
}

int fpy_tool_kick(fpy_tool* t)
{
    PyObject* r;
    if (t->ascheduled || !t->aloop) {
        return 0;
    }
    r = PyObject_CallMethodOneArg(t->aloop, s_call_soon, t->apump);
    if (!r) {
        return -1;
    }
    Py_DECREF(r);
    t->ascheduled = 1;
    return 0;
}

/* Ask asyncio for the next pass: now if libuv has work due, when its next
 * timer is due, or never (asyncio's reader on the backend fd covers I/O
 * and cross-thread posts). */
static int schedule_next(fpy_tool* t)
{
    int timeout;
    if (!t->tool || !t->aloop) {
        return 0;
    }
    timeout = uv_backend_timeout(futoin_tool_uv_loop(t->tool));
    if (timeout == 0) {
        return fpy_tool_kick(t);
    }
    if (timeout > 0 && !t->ascheduled) {
        uint64_t due = uv_now(futoin_tool_uv_loop(t->tool)) + (uint64_t)timeout;
        PyObject* delay;
        if (t->atimer && t->adue <= due) {
            /* the timer asked for already comes first (a flow awaited from
             * asyncio asks again at each pass): its pass asks again */
            return 0;
        }
        delay = PyFloat_FromDouble(timeout / 1000.0);
        t->adue = due;
        if (t->atimer) {
            PyObject* r = PyObject_CallMethodNoArgs(t->atimer, s_cancel);
            Py_XDECREF(r);
            Py_CLEAR(t->atimer);
        }
        t->atimer = delay ? PyObject_CallMethodObjArgs(t->aloop, s_call_later, delay,
                                                       t->apump, NULL)
                          : NULL;
        Py_XDECREF(delay);
        if (!t->atimer) {
            return -1;
        }
    }
    return 0;
}

/* Tool._pump(): one pass, then ask asyncio for the next one. */
PyObject* fpy_tool_apump(fpy_tool* t)
{
    PyObject* more;
    t->ascheduled = 0;
    if (t->atimer) {
        PyObject* r = PyObject_CallMethodNoArgs(t->atimer, s_cancel);
        Py_XDECREF(r);
        Py_CLEAR(t->atimer);
        PyErr_Clear();
    }
    if (!t->tool || !t->aloop) {
        fpy_tool_undrive(t);
        Py_RETURN_NONE;
    }
    more = fpy_tool_pass(t);
    if (!more) {
        return NULL; /* asyncio's exception handler reports it */
    }
    if (more == Py_False || !t->tool) {
        Py_DECREF(more);
        Py_RETURN_NONE;
    }
    Py_DECREF(more);
    if (schedule_next(t) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ---- promise() ----------------------------------------------------------- */

/* promise()'s future is a plain asyncio future (a Task awaits those on its
 * fast path; a Python subclass would take the slow one). A done callback
 * tells us when the awaiting task cancelled it; it is removed before the
 * flow settles the future, so that a normal end costs no extra callback. */
static PyObject* on_future_done(PyObject* flow, PyObject* fut)
{
    /* flow = (weakref to the root, tool) */
    PyObject* c = PyObject_CallMethodNoArgs(fut, s_cancelled);
    if (c == Py_True) {
        PyObject* root = PyWeakref_GetObject(PyTuple_GET_ITEM(flow, 0));
        fpy_tool* t = (fpy_tool*)PyTuple_GET_ITEM(flow, 1);
        if (root && root != Py_None && ((fpy_steps*)root)->exec) {
            PyObject* r = fpy_cancel((fpy_steps*)root);
            Py_XDECREF(r);
            if (r) {
                fpy_tool_kick(t);
            }
        }
    }
    Py_XDECREF(c);
    if (PyErr_Occurred()) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef on_future_done_def = {
    "_cancel_flow", on_future_done, METH_O,
    PyDoc_STR("promise(): the awaiting side cancelled the future.")};

/* The flow's outcome into promise()'s future (once; a cancelled future
 * stays cancelled). `cb` is the done callback to take off first. */
int fpy_future_settle(PyObject* fut, PyObject* cb, PyObject* exc, PyObject* value)
{
    PyObject* d = PyObject_CallMethodNoArgs(fut, s_done);
    PyObject* r;
    if (!d) {
        return -1;
    }
    if (d == Py_True) {
        Py_DECREF(d);
        return 0;
    }
    Py_DECREF(d);
    if (cb) {
        r = PyObject_CallMethodOneArg(fut, s_remove_done_callback, cb);
        if (!r) {
            return -1;
        }
        Py_DECREF(r);
    }
    r = exc ? PyObject_CallMethodOneArg(fut, s_set_exception, exc)
            : PyObject_CallMethodOneArg(fut, s_set_result, value ? value : Py_None);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* root.promise(): execute, driven by the running asyncio loop. */
PyObject* fpy_promise(fpy_steps* s)
{
    PyObject *get_loop, *loop, *fut = NULL, *ref = NULL, *flow = NULL, *cb = NULL, *r;
    fpy_tool* t = s->tool;
    if (names() < 0) {
        return NULL;
    }
    if (!t || s->kind != FPY_ROOT) {
        return fpy_invalid_state("promise(): not a root of this library's Tool");
    }
    if (!s->bsi || !t->tool) {
        return fpy_invalid_state("promise(): the root is closed (freed, or its "
                                 "Tool closed)");
    }
    if (!(get_loop = fpy_hook("get_running_loop"))) {
        return NULL;
    }
    loop = PyObject_CallNoArgs(get_loop);
    if (!loop) {
        return NULL;
    }
    if (fpy_tool_drive_with(t, loop) < 0
        || !(fut = PyObject_CallMethodNoArgs(loop, s_create_future))) {
        goto out;
    }
    ref = PyWeakref_NewRef((PyObject*)s, NULL);
    flow = ref ? PyTuple_Pack(2, ref, (PyObject*)t) : NULL;
    cb = flow ? PyCFunction_New(&on_future_done_def, flow) : NULL;
    if (!cb || fpy_execute_into(s, fut, cb) < 0) {
        Py_CLEAR(fut);
        goto out;
    }
    r = PyObject_CallMethodOneArg(fut, s_add_done_callback, cb);
    if (!r || fpy_tool_kick(t) < 0) {
        Py_XDECREF(r);
        Py_CLEAR(fut);
        goto out;
    }
    Py_DECREF(r);
out:
    Py_XDECREF(ref);
    Py_XDECREF(flow);
    Py_XDECREF(cb);
    Py_DECREF(loop);
    return fut;
}

/* ---- await root ------------------------------------------------------------ */

/*
 * `await root` runs the flow inside the awaiting Task: each resumption of
 * the Task runs a libuv pass of the tool right there, and when the flow
 * then waits for an asyncio future of one of its await_() steps, that very
 * future is yielded to the Task. The Task wakes up when the future is done
 * and resumes us, and we complete the step and run the flow on, all in one
 * callback: the flow costs no loop callback or turn beyond what the same
 * `await` of the future would. When the flow waits for anything else (a
 * timer, a worker thread, several futures at once), a future of ours is
 * yielded instead, which the flow's end settles, and the tool is driven by
 * asyncio as for promise().
 */
typedef struct fpy_awaiter
{
    PyObject_HEAD
    fpy_steps* root;         /* the root awaited (strong) */
    PyObject* loop;          /* the running asyncio loop (strong) */
    ptrdiff_t root_id;
    int started, settled;
    int yielded;             /* AW_NONE, AW_STEP (step_fut), AW_OWN (own_fut) */
    int step_cancelled;      /* the flow itself cancelled step_fut */
    fpy_tool* counted;       /* the tool whose `awaited` counts our flow */
    PyObject *exc, *value;   /* the flow's outcome once settled */
    PyObject* step_fut;      /* the future an await_() step left to us */
    FutoInAsyncSteps* step;  /* ... and that step */
    PyObject* own_fut;       /* our future, when the flow waits for more */
} fpy_awaiter;

enum { AW_NONE, AW_STEP, AW_OWN };

static PyTypeObject awaiter_type;
static PyObject* s_blocking;

static int aw_yieldable(PyObject* fut)
{
    /* the setter of an immutable type's property (asyncio's C Future),
     * once looked up: a generic setattr costs more than the rest of the
     * yield */
    static PyTypeObject* tp;
    static setter set;
    static void* closure;
    PyTypeObject* t = Py_TYPE(fut);
    PyObject* d;
    if (t == tp) {
        return set(fut, Py_True, closure); /* as Future.__await__ */
    }
    if (!s_blocking && !(s_blocking = PyUnicode_InternFromString("_asyncio_future_blocking"))) {
        return -1;
    }
    d = (t->tp_flags & Py_TPFLAGS_IMMUTABLETYPE) ? _PyType_Lookup(t, s_blocking) : NULL;
    if (d && Py_IS_TYPE(d, &PyGetSetDescr_Type)
        && ((PyGetSetDescrObject*)d)->d_getset->set) {
        set = ((PyGetSetDescrObject*)d)->d_getset->set;
        closure = ((PyGetSetDescrObject*)d)->d_getset->closure;
        tp = t;
        return set(fut, Py_True, closure);
    }
    return PyObject_SetAttr(fut, s_blocking, Py_True);
}

PyObject* fpy_awaiter_new(fpy_steps* s)
{
    fpy_awaiter* w;
    if (names() < 0) {
        return NULL;
    }
    if (!s->tool || s->kind != FPY_ROOT) {
        return fpy_invalid_state("await: not a root of this library's Tool");
    }
    if (PyType_Ready(&awaiter_type) < 0 || !(w = PyObject_New(fpy_awaiter, &awaiter_type))) {
        return NULL;
    }
    w->root = (fpy_steps*)Py_NewRef((PyObject*)s);
    w->loop = NULL; /* asked for when needed: the call costs a getpid() */
    w->root_id = 0;
    w->started = w->settled = w->yielded = w->step_cancelled = 0;
    w->exc = w->value = w->step_fut = w->own_fut = NULL;
    w->step = NULL;
    w->counted = NULL;
    return (PyObject*)w;
}

/* Our flow no longer counts as executing on its tool (settled, or we go). */
static void aw_uncount(fpy_awaiter* w)
{
    if (w->counted) {
        --w->counted->awaited;
        w->counted = NULL;
    }
}

int fpy_awaiter_settle(PyObject* o, PyObject* exc, PyObject* value)
{
    fpy_awaiter* w = (fpy_awaiter*)o;
    if (w->settled) {
        return 0;
    }
    w->settled = 1;
    aw_uncount(w);
    w->exc = Py_XNewRef(exc);
    w->value = Py_XNewRef(value);
    if (w->own_fut && w->yielded == AW_OWN) {
        return fpy_future_settle(w->own_fut, NULL, exc, value); /* wakes the Task */
    }
    return 0;
}

/* The flow cancelled the step whose future we wait for (its timeout, an
 * error, the root's cancel): cancel the future; the Task then throws
 * CancelledError into us, which is not for it (step_cancelled). */
static void tr_step_cancelled(FutoInAsyncSteps* bsi, void* data)
{
    fpy_awaiter* w = data;
    fpy_gil g;
    fpy_gil_enter(&g);
    if (w->step_fut && w->step == bsi) {
        PyObject* r;
        w->step_cancelled = 1;
        r = PyObject_CallMethodNoArgs(w->step_fut, s_cancel);
        Py_XDECREF(r);
        PyErr_Clear();
    }
    fpy_gil_leave(&g);
}

int fpy_awaiter_take(FutoInAsyncSteps* bsi, PyObject* fut, int pending)
{
    fpy_awaiter* w = (fpy_awaiter*)fpy_T.awaiter;
    PyObject* d;
    if (!w || w->step_fut || !w->root->bsi) {
        return 0;
    }
    if (bsi->api->rootId(bsi) != w->root_id) {
        return 0; /* a step of another flow that runs in the same pass */
    }
    if (!pending) { /* (the caller asked done() just now: it said no) */
        d = PyObject_CallMethodNoArgs(fut, s_done);
        Py_XDECREF(d);
        if (d != Py_False) {
            PyErr_Clear();
            return 0;
        }
    }
    w->step_fut = Py_NewRef(fut);
    w->step = bsi;
    w->step_cancelled = 0;
    Py_INCREF(w);
    futoin_wrap_set_cancel(bsi, w, tr_step_cancelled, (futoin_release_cb)fpy_release_obj);
    bsi->api->waitExternal(bsi);
    return 1;
}

/* The flow's outcome as the end of the `await`: NULL with an exception
 * (StopIteration carrying the value, for callers of __next__/send()), or
 * through am_send the value itself (*ret, PYGEN_RETURN): no StopIteration
 * made and fetched again per flow. */
static PySendResult aw_outcome(fpy_awaiter* w, PyObject** ret)
{
    if (w->exc) {
        PyErr_SetObject((PyObject*)Py_TYPE(w->exc), w->exc);
        *ret = NULL;
        return PYGEN_ERROR;
    }
    *ret = Py_NewRef(w->value ? w->value : Py_None);
    return PYGEN_RETURN;
}

static PyObject* aw_finish(fpy_awaiter* w)
{
    PyObject* v;
    if (aw_outcome(w, &v) == PYGEN_ERROR) {
        return NULL;
    }
    if (v != Py_None) {
        if (PyTuple_Check(v) || PyExceptionInstance_Check(v)) {
            PyObject* e = PyObject_CallOneArg(PyExc_StopIteration, v);
            if (e) {
                PyErr_SetObject(PyExc_StopIteration, e);
                Py_DECREF(e);
            }
        } else {
            /* unnormalised: the coroutine takes the value as it is */
            PyErr_SetObject(PyExc_StopIteration, v);
        }
    }
    Py_DECREF(v);
    return NULL; /* StopIteration: the value of `await root` */
}

static PyObject* aw_loop(fpy_awaiter* w)
{
    PyObject* get_loop;
    if (w->loop) {
        return w->loop;
    }
    if (w->step_fut) { /* the loop of the future we are about to yield */
        w->loop = PyObject_CallMethodNoArgs(w->step_fut, s_get_loop);
    } else if ((get_loop = fpy_hook("get_running_loop"))) {
        w->loop = PyObject_CallNoArgs(get_loop);
    }
    return w->loop;
}

/* Run passes until the flow ends or waits; yield what to wait for
 * (NULL once settled, without an exception set: the caller ends the
 * `await` with the outcome; NULL with one: raised). */
static PyObject* aw_run(fpy_awaiter* w)
{
    fpy_tool* t = w->root->tool;
    for (;;) {
        PyObject *prev, *r;
        int more;
        if (w->settled) {
            return NULL;
        }
        if (!t->tool) {
            return fpy_invalid_state("await: the Tool was closed");
        }
        if (t->tloop && !aw_loop(w)) {
            return NULL;
        }
        if (t->tloop && w->loop == t->tloop) {
            /* awaited in the tool's own event loop (an `async def` step of
             * a flow on the same tool): the tool runs the flow itself; the
             * flow's end settles our future */
            if (!w->own_fut && !(w->own_fut = PyObject_CallMethodNoArgs(w->loop, s_create_future))) {
                return NULL;
            }
            if (aw_yieldable(w->own_fut) < 0) {
                return NULL;
            }
            w->yielded = AW_OWN;
            return Py_NewRef(w->own_fut);
        }
        prev = fpy_T.awaiter;
        fpy_T.awaiter = (PyObject*)w;
        r = fpy_tool_pass_ready(t); /* timers and I/O: the driver's passes */
        fpy_T.awaiter = prev;
        if (!r) {
            return NULL;
        }
        more = r == Py_True;
        Py_DECREF(r);
        if (w->settled) {
            continue;
        }
        /* asyncio drives the tool meanwhile: its timers, I/O, posts, and
         * the other flows on it */
        if (more && (!aw_loop(w) || fpy_tool_drive_with(t, w->loop) < 0
                     || schedule_next(t) < 0)) {
            return NULL;
        }
        if (w->step_fut) {
            if (aw_yieldable(w->step_fut) < 0) {
                return NULL;
            }
            w->yielded = AW_STEP;
            return Py_NewRef(w->step_fut);
        }
        if (!w->own_fut
            && (!aw_loop(w) || !(w->own_fut = PyObject_CallMethodNoArgs(w->loop, s_create_future)))) {
            return NULL;
        }
        if (aw_yieldable(w->own_fut) < 0) {
            return NULL;
        }
        w->yielded = AW_OWN;
        return Py_NewRef(w->own_fut);
    }
}

static void aw_cancel_flow(fpy_awaiter* w)
{
    if (w->root->exec && !w->settled) {
        PyObject* r = fpy_cancel(w->root);
        Py_XDECREF(r);
        PyErr_Clear();
        fpy_tool_kick(w->root->tool);
        PyErr_Clear();
    }
}

/* One resumption by the Task: what to yield, or NULL (see aw_run()). */
static PyObject* aw_step(PyObject* self)
{
    fpy_awaiter* w = (fpy_awaiter*)self;
    if (!w->started) {
        fpy_tool* t = w->root->tool;
        /* awaited in the tool's own event loop, the tool runs the flow
         * (aw_run()) and keeps its root alive as any it runs; otherwise
         * the flow runs in here, and we hold the root */
        int keep = t && t->tloop && (!aw_loop(w) || w->loop == t->tloop);
        PyErr_Clear();
        w->started = 1;
        if (fpy_execute_awaited(w->root, self, keep) < 0) {
            w->settled = 1;
            return NULL;
        }
        if (!keep && t && !w->settled) {
            w->counted = t; /* (the root holds the tool object) */
            ++t->awaited;
        }
        w->root_id = w->root->bsi->api->rootId(w->root->bsi);
        return aw_run(w);
    }
    if (w->yielded == AW_STEP) {
        PyObject* fut = w->step_fut;
        FutoInAsyncSteps* step = w->step;
        w->step_fut = NULL;
        w->step = NULL;
        w->yielded = AW_NONE;
        if (!w->step_cancelled) {
            fpy_step_complete_with(step, fut); /* the Task woke us: it is done */
        }
        Py_DECREF(fut);
        return aw_run(w);
    }
    w->yielded = AW_NONE;
    return aw_run(w);
}

static PyObject* aw_next(PyObject* self)
{
    PyObject* r = aw_step(self);
    return r || PyErr_Occurred() ? r : aw_finish((fpy_awaiter*)self);
}

static PyObject* aw_send(PyObject* self, PyObject* value)
{
    return aw_next(self);
}

/* What a coroutine's `await` (SEND) and the Task call first: the value is
 * returned as it is, not through a StopIteration. */
static PySendResult aw_am_send(PyObject* self, PyObject* value, PyObject** ret)
{
    PyObject* r = aw_step(self);
    if (r) {
        *ret = r;
        return PYGEN_NEXT;
    }
    if (PyErr_Occurred()) {
        *ret = NULL;
        return PYGEN_ERROR;
    }
    return aw_outcome((fpy_awaiter*)self, ret);
}

/* Is the Task that awaits us being cancelled (Task.cancel())? */
static int task_cancelling(void)
{
    PyObject *ct = fpy_hook("current_task"), *task, *n;
    long c = 0;
    if (!ct || !(task = PyObject_CallNoArgs(ct))) {
        PyErr_Clear();
        return 0;
    }
    if (task != Py_None && (n = PyObject_CallMethod(task, "cancelling", NULL))) {
        c = PyLong_AsLong(n);
        Py_DECREF(n);
    }
    Py_DECREF(task);
    PyErr_Clear();
    return c > 0;
}

/* throw(): the Task resumes us with an exception. While we yield a step's
 * future, that is the future's outcome (it failed, or was cancelled by the
 * flow or by someone else): the step's, and the flow goes on. Otherwise,
 * or when the Task itself is being cancelled, the flow is cancelled and
 * the exception goes on up. */
static PyObject* aw_throw(PyObject* self, PyObject* args)
{
    fpy_awaiter* w = (fpy_awaiter*)self;
    PyObject *typ, *val = NULL, *tb = NULL;
    if (!PyArg_ParseTuple(args, "O|OO:throw", &typ, &val, &tb)) {
        return NULL;
    }
    if (w->yielded == AW_STEP && (w->step_cancelled || !task_cancelling())) {
        PyObject* fut = w->step_fut;
        FutoInAsyncSteps* step = w->step;
        int flow_did_it = w->step_cancelled;
        w->step_fut = NULL;
        w->step = NULL;
        w->yielded = AW_NONE;
        if (!flow_did_it) {
            fpy_step_complete_with(step, fut);
        }
        Py_DECREF(fut);
        fut = aw_run(w);
        return fut || PyErr_Occurred() ? fut : aw_finish(w);
    }
    aw_cancel_flow(w);
    w->yielded = AW_NONE;
    if (PyExceptionInstance_Check(typ)) {
        PyErr_SetObject((PyObject*)Py_TYPE(typ), typ);
    } else {
        PyErr_Restore(Py_NewRef(typ), Py_XNewRef(val == Py_None ? NULL : val),
                      Py_XNewRef(tb == Py_None ? NULL : tb));
    }
    return NULL;
}

static PyObject* aw_close(PyObject* self, PyObject* unused)
{
    aw_cancel_flow((fpy_awaiter*)self);
    Py_RETURN_NONE;
}

static void aw_dealloc(PyObject* self)
{
    fpy_awaiter* w = (fpy_awaiter*)self;
    if (w->started && w->root->exec && !w->settled) {
        /* the cancel clears errors: the exception being raised while we
         * go is kept aside meanwhile (see steps_dealloc(), which does the
         * same for the root's own release hooks below) */
        PyObject *et, *ev, *etb;
        PyErr_Fetch(&et, &ev, &etb);
        aw_cancel_flow(w);
        PyErr_Restore(et, ev, etb);
    }
    aw_uncount(w);
    Py_CLEAR(w->root);
    Py_CLEAR(w->loop);
    Py_CLEAR(w->exc);
    Py_CLEAR(w->value);
    Py_CLEAR(w->step_fut);
    Py_CLEAR(w->own_fut);
    PyObject_Free(self);
}

static PyMethodDef awaiter_methods[] = {
    {"send", aw_send, METH_O, PyDoc_STR("Resume the flow.")},
    {"throw", aw_throw, METH_VARARGS, PyDoc_STR("The awaiting Task was cancelled.")},
    {"close", aw_close, METH_NOARGS, PyDoc_STR("Cancel the flow.")},
    {NULL, NULL, 0, NULL}};

static PyAsyncMethods awaiter_as_async = {.am_send = aw_am_send};

static PyTypeObject awaiter_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "futoin_async._core.FlowAwaiter",
    .tp_basicsize = sizeof(fpy_awaiter),
    .tp_dealloc = aw_dealloc,
    .tp_as_async = &awaiter_as_async,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = PyDoc_STR("What `await root` iterates: runs the flow in the awaiting Task."),
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = aw_next,
    .tp_methods = awaiter_methods,
};
