/*
 * The flow's State: the dict (of the Python layer's class State) a root
 * keeps as its state variable "python.state", made on first use; and the
 * values assigned to it where no handle reached the shared store, published
 * before a step is completed from outside.
 */
#include "futoin_py.h"

static void* st_alloc(void* data)
{
    PyObject* d = PyObject_CallNoArgs(fpy_H.state_type ? fpy_H.state_type
                                                       : (PyObject*)&PyDict_Type);
    if (!d) {
        PyErr_Clear();
    }
    return d;
}

static void st_cleanup(void* data, void* value)
{
    fpy_release_obj(value);
}

static PyObject* state_dict(FutoInAsyncSteps* bsi)
{
    return bsi->api->stateVariable(bsi, NULL, "python.state", st_alloc,
                                   st_cleanup);
}

PyObject* fpy_state_peek(FutoInAsyncSteps* bsi)
{
    if (!futoin_wrap_is_ours(bsi)) {
        return NULL;
    }
    return bsi->api->stateVariable(bsi, NULL, "python.state", NULL, NULL);
}

/* Values assigned to the flow's State where no handle reached the shared
 * store (a State kept from a step, written from a timer) are published
 * through `bsi`, a handle of the flow, before it completes. Loop thread. */
void fpy_flush_state(FutoInAsyncSteps* bsi)
{
    static PyObject *s_pending, *s_flush;
    PyObject *d, *pending, *r;
    FutoInAsyncSteps* prev;
    if (!s_pending && (!(s_pending = PyUnicode_InternFromString("_pending"))
                       || !(s_flush = PyUnicode_InternFromString("_flush")))) {
        PyErr_Clear();
        return;
    }
    d = fpy_state_peek(bsi);
    pending = d ? PyObject_GetAttr(d, s_pending) : NULL;
    if (!pending) {
        PyErr_Clear();
        return;
    }
    if (PyObject_IsTrue(pending) == 1) {
        prev = fpy_T.cur;
        fpy_T.cur = bsi; /* State reaches the store through this handle */
        r = PyObject_CallMethodNoArgs(d, s_flush);
        fpy_T.cur = prev;
        if (!r) {
            PyErr_WriteUnraisable(d);
        }
        Py_XDECREF(r);
    }
    Py_DECREF(pending);
    PyErr_Clear();
}

PyObject* fpy_state(fpy_steps* s)
{
    PyObject* d;
    if (!fpy_live(s) || !fpy_not_other_thread(s, "state")) {
        return NULL;
    }
    fpy_check_begin();
    d = state_dict(s->bsi);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    if (!d) {
        if (!PyErr_Occurred()) {
            fpy_invalid_state("state is not available");
        }
        return NULL;
    }
    if (s->kind == FPY_ROOT || s->bsi != fpy_T.cur) {
        /* Outside the flow's steps (a root, or a step's handle used from
         * a timer) State reaches the shared store through this handle */
        static PyObject *s_rootref, *s_stepref;
        PyObject *name, *ref;
        if (!s_rootref && (!(s_rootref = PyUnicode_InternFromString("_rootref"))
                           || !(s_stepref = PyUnicode_InternFromString("_stepref")))) {
            return NULL;
        }
        name = s->kind == FPY_ROOT ? s_rootref : s_stepref;
        ref = PyObject_GetAttr(d, name);
        if (!ref) {
            PyErr_Clear();
        } else if (!PyWeakref_Check(ref) || PyWeakref_GetObject(ref) != (PyObject*)s) {
            PyObject* w = PyWeakref_NewRef((PyObject*)s, NULL);
            if (!w || PyObject_GenericSetAttr(d, name, w) < 0) {
                PyErr_Clear();
            }
            Py_XDECREF(w);
        }
        Py_XDECREF(ref);
    }
    return Py_NewRef(d); /* the dict is owned by the root */
}
