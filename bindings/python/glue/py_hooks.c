/*
 * The Python layer's classes and hooks. lib/futoin_async/__init__.py hands
 * them over once, with _core._set_types(State, hooks): State, make_error,
 * flow_error, CancelledError, the private Unwind, FutoInError, await_step,
 * InvalidStateError, asyncio.Future and more by name (default_tool,
 * future_of, ...). The C code reaches the classes through fpy_H and the
 * rest through fpy_hook().
 */
#include "futoin_py.h"

#include <stdarg.h>

fpy_hooks fpy_H;

static PyObject* hook(PyObject* hooks, const char* name)
{
    PyObject* o = PyDict_GetItemString(hooks, name);
    if (!o) {
        PyErr_Format(PyExc_KeyError, "_set_types(): hook %s is missing", name);
        return NULL;
    }
    return Py_NewRef(o);
}

int fpy_set_types(PyObject* state_cls, PyObject* hooks)
{
    if (!PyDict_Check(hooks)) {
        PyErr_SetString(PyExc_TypeError, "_set_types(state_cls, hooks: dict)");
        return -1;
    }
    PyObject* me = hook(hooks, "make_error");
    PyObject* fe = hook(hooks, "flow_error");
    PyObject* ct = hook(hooks, "CancelledError");
    PyObject* lc = hook(hooks, "Unwind");
    PyObject* fe2 = hook(hooks, "FutoInError");
    PyObject* aw = hook(hooks, "await_step");
    PyObject* is = hook(hooks, "InvalidStateError");
    PyObject* ft = hook(hooks, "Future");
    if (!me || !fe || !ct || !lc || !aw || !is || !ft || !fe2) {
        Py_XDECREF(fe2);
        Py_XDECREF(ft);
        Py_XDECREF(me);
        Py_XDECREF(fe);
        Py_XDECREF(ct);
        Py_XDECREF(lc);
        Py_XDECREF(aw);
        Py_XDECREF(is);
        return -1;
    }
    Py_XSETREF(fpy_H.all, Py_NewRef(hooks));
    Py_XSETREF(fpy_H.state_type, Py_NewRef(state_cls));
    Py_XSETREF(fpy_H.make_error, me);
    Py_XSETREF(fpy_H.flow_error, fe);
    Py_XSETREF(fpy_H.cancelled_type, ct);
    Py_XSETREF(fpy_H.unwind_type, lc);
    Py_XSETREF(fpy_H.await_step, aw);
    Py_XSETREF(fpy_H.invalid_state, is);
    Py_XSETREF(fpy_H.future_type, ft);
    Py_XSETREF(fpy_H.error_type, fe2);
    return 0;
}

PyObject* fpy_hook(const char* name)
{
    PyObject* o = fpy_H.all ? PyDict_GetItemString(fpy_H.all, name) : NULL;
    if (!o) {
        PyErr_Format(PyExc_RuntimeError, "futoin_async is not initialised (%s)", name);
    }
    return o;
}

PyObject* fpy_invalid_state(const char* fmt, ...)
{
    va_list ap;
    PyObject* msg;
    va_start(ap, fmt);
    msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (msg) {
        PyErr_SetObject(fpy_H.invalid_state ? fpy_H.invalid_state : PyExc_RuntimeError,
                        msg);
        Py_DECREF(msg);
    }
    return NULL;
}
