/*
 * The flow's State, a dict of the Python layer's class State:
 *
 *  - the dict itself, which a root keeps as its state variable
 *    "python.state", made on first use; values assigned to it where no
 *    handle reached the shared store are published before a step is
 *    completed from outside;
 *  - the shared state store (futoin_state_set/get) behind it, where the
 *    flow's steps of every language see what State holds, and the
 *    predefined state of FTN12 1.7 (error_info, last_exception,
 *    async_stack), read live.
 */
#include "futoin_py.h"

#include <string.h>

/* ---- the State dict ----------------------------------------------------- */

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

/* ---- the shared state store --------------------------------------------- */

/* The live handle of our runtime behind the weak reference `name` of
 * State `st` (a root, or a step used outside its own callback) whose
 * flow's state `st` is, or NULL. Refused (err) off the loop thread. */
static FutoInAsyncSteps* state_ref(PyObject* st, PyObject* name, int* err)
{
    PyObject* ref = PyObject_GetAttr(st, name);
    PyObject* r;
    fpy_steps* s;
    futoin_tool* t;
    if (!ref) {
        PyErr_Clear();
        return NULL;
    }
    r = PyWeakref_Check(ref) ? PyWeakref_GetObject(ref) : NULL; /* borrowed */
    s = r ? fpy_obj_steps(r) : NULL;
    Py_DECREF(ref);
    if (!s || !s->bsi || !futoin_wrap_is_ours(s->bsi)) {
        return NULL;
    }
    t = futoin_async_tool(s->bsi);
    if (t && !futoin_tool_is_same_thread(t)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "state: shared values are read and written on "
                        "the flow's loop thread");
        *err = 1;
        return NULL;
    }
    if (s->kind != FPY_ROOT
        && (!s->bsi->api->isValid(s->bsi) || fpy_state_peek(s->bsi) != st)) {
        return NULL; /* the step ended (or the object serves another one) */
    }
    return s->bsi;
}

/* The handle through which State `st` reaches its root: the step whose
 * callback runs now if `st` is its flow's state, else the step or the
 * Python root the state was last read through outside the flow's steps
 * (weak references), else NULL. */
static FutoInAsyncSteps* state_handle(PyObject* st, int* err)
{
    static PyObject *s_rootref, *s_stepref;
    FutoInAsyncSteps* cur = fpy_T.cur;
    FutoInAsyncSteps* h;
    *err = 0;
    if (cur && fpy_state_peek(cur) == st) {
        return cur;
    }
    if (!s_rootref && (!(s_rootref = PyUnicode_InternFromString("_rootref"))
                       || !(s_stepref = PyUnicode_InternFromString("_stepref")))) {
        PyErr_Clear();
        return NULL;
    }
    h = state_ref(st, s_stepref, err);
    if (!h && !*err) {
        h = state_ref(st, s_rootref, err);
    }
    return h;
}

/* The UTF-8 of a state name that can be shared (a non-empty str), or
 * NULL; -1 (ValueError) for a str with NUL, refused wherever it is used
 * (rule 5), whether or not a handle reaches the store. */
static int key_of(PyObject* key, const char** out)
{
    Py_ssize_t n;
    const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, &n) : NULL;
    *out = NULL;
    if (!k) {
        PyErr_Clear();
        return 0;
    }
    if (strlen(k) != (size_t)n) {
        PyErr_SetString(PyExc_ValueError,
                        "state: a name must not contain NUL characters");
        return -1;
    }
    *out = *k ? k : NULL;
    return 0;
}

PyObject* fpy_state_get(PyObject* st, PyObject* key, PyObject* missing)
{
    int err;
    FutoInAsyncSteps* h;
    const FutoInBinaryValue* v;
    const char* k;
    if (key_of(key, &k) < 0) {
        return NULL;
    }
    h = state_handle(st, &err);
    if (err) {
        return NULL;
    }
    if (!h || !k) {
        return Py_NewRef(missing);
    }
    v = futoin_state_get(h, k);
    if (!v || !v->type) {
        return Py_NewRef(missing);
    }
    return futoin_py_from_binval(v);
}

PyObject* fpy_state_put(PyObject* st, PyObject* key, PyObject* value,
                        PyObject* missing, PyObject* unreachable)
{
    int err, rc;
    FutoInAsyncSteps* h;
    FutoInBinaryValue bv;
    const FutoInBinaryValue* g;
    const char* k;
    if (key_of(key, &k) < 0) {
        return NULL;
    }
    h = state_handle(st, &err);
    if (err) {
        return NULL;
    }
    if (!h) {
        return Py_NewRef(unreachable);
    }
    if (!k) {
        return Py_NewRef(missing);
    }
    memset(&bv, 0, sizeof(bv));
    if (value && value != missing) {
        if (futoin_py_to_binval(value, &bv) < 0) {
            return NULL;
        }
        if (fpy_custom_of(&bv)) {
            /* a Python object: it stays in the Python state only, and
             * nothing older of that name is left to shadow it */
            futoin_reset_binval(&bv);
        }
    }
    rc = futoin_state_set(h, k, bv.type ? &bv : NULL);
    futoin_reset_binval(&bv);
    if (rc != FUTOIN_OK || !(g = futoin_state_get(h, k)) || !g->type) {
        return Py_NewRef(missing);
    }
    return futoin_py_from_binval(g); /* what the other languages see */
}

PyObject* fpy_state_reachable(PyObject* st)
{
    int err;
    FutoInAsyncSteps* h = state_handle(st, &err);
    if (err) {
        return NULL;
    }
    return PyBool_FromLong(h != NULL);
}

/* The predefined state of §1.7 is the flow's own: read live, as the
 * accessors read it, never a copy that could go stale. */
PyObject* fpy_state_error(PyObject* st, PyObject* key)
{
    int err;
    FutoInAsyncSteps* h = state_handle(st, &err);
    const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    if (err || !k) {
        return NULL;
    }
    if (!h) {
        Py_RETURN_NONE;
    }
    if (strcmp(k, "error_info") == 0) {
        return fpy_error_info_of(h);
    }
    if (strcmp(k, "last_exception") == 0) {
        return fpy_last_exception_of(h);
    }
    if (strcmp(k, "async_stack") == 0) {
        return fpy_async_stack_of(h);
    }
    PyErr_Format(PyExc_KeyError, "%R", key);
    return NULL;
}
