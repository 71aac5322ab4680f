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
    *s_cancelled;

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
    if (t->aloop == loop) {
        return 0;
    }
    if (names() < 0) {
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

/* Tool._pump(): one pass, then ask asyncio for the next one. */
PyObject* fpy_tool_apump(fpy_tool* t)
{
    PyObject* more;
    int timeout;
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
    timeout = uv_backend_timeout(futoin_tool_uv_loop(t->tool));
    if (timeout == 0) {
        if (fpy_tool_kick(t) < 0) {
            return NULL;
        }
    } else if (timeout > 0 && t->aloop) {
        PyObject* delay = PyFloat_FromDouble(timeout / 1000.0);
        t->atimer = delay ? PyObject_CallMethodObjArgs(t->aloop, s_call_later, delay,
                                                       t->apump, NULL)
                          : NULL;
        Py_XDECREF(delay);
        if (!t->atimer) {
            return NULL;
        }
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
