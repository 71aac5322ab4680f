/*
 * The operations of AsyncSteps that add to a flow: add(), await_(),
 * parallel(), loop(), repeat(), sync() and add_foreign(). Each hands its
 * callables to the adapter layer (futoin/sys/wrap.h) with a trampoline
 * (py_trampolines.c), so the same code drives our handles and any other
 * FTN12 implementation's, and records that the step added (FPY_DID_ADD).
 */
#include "futoin_py.h"

PyObject* fpy_add(fpy_steps* s, PyObject* fn, PyObject* eh)
{
    fpy_rec* r;
    eh = fpy_none_to_null(eh);
    if (!fpy_in_own_step(s, "add()", 1)
        || fpy_check_callables("add(step, onerror=None)", fn, eh) < 0) {
        return NULL;
    }
    if (!eh) {
        const futoin_async_ext_table* x = fpy_ext(s->bsi);
        fpy_check_begin();
        if (x) {
            x->add_classed(s->bsi, Py_NewRef(fn), fpy_tr_fn, NULL, &fpy_fn_class);
        } else {
            futoin_wrap_add_classed(s->bsi, Py_NewRef(fn), fpy_tr_fn, NULL,
                                    &fpy_fn_class);
        }
    } else {
        if (!(r = fpy_rec_new(fn, eh))) {
            return NULL;
        }
        fpy_check_begin();
        futoin_wrap_add_classed(s->bsi, r, fpy_tr_step, fpy_tr_error, &fpy_rec_class);
    }
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}

PyObject* fpy_await(fpy_steps* s, PyObject* awaitable)
{
    if (!fpy_in_own_step(s, "await_()", 1)) {
        return NULL;
    }
    fpy_check_begin();
    /* classed: its frame is the awaitable's (a coroutine: where it waits) */
    futoin_wrap_add_classed(s->bsi, Py_NewRef(awaitable), fpy_tr_await, NULL,
                            &fpy_fn_class);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}

PyObject* fpy_parallel(fpy_steps* s, PyObject* eh)
{
    fpy_rec* r = NULL;
    FutoInAsyncSteps* p;
    PyObject* o;
    eh = fpy_none_to_null(eh);
    if (!fpy_in_own_step(s, "parallel()", 1)
        || fpy_check_callables("parallel(onerror=None)", NULL, eh) < 0) {
        return NULL;
    }
    if (eh && !(r = fpy_rec_new(NULL, eh))) {
        return NULL;
    }
    fpy_check_begin();
    p = futoin_wrap_parallel(s->bsi, r, r ? fpy_tr_error : NULL,
                             r ? fpy_rec_release : NULL);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    if (!p) {
        return fpy_invalid_state("parallel() was refused");
    }
    s->did |= FPY_DID_ADD;
    o = fpy_steps_for(&fpy_steps_type, p, FPY_BORROWED);
    if (o) {
        fpy_steps_keep((fpy_steps*)o); /* the caller keeps it by design */
    }
    return o;
}

PyObject* fpy_loop(fpy_steps* s, PyObject* fn, PyObject* label)
{
    const char* l;
    if (!fpy_in_own_step(s, "loop()", 1)
        || fpy_check_callables("loop(body, label=None)", fn, NULL) < 0
        || fpy_label_arg(label, &l) < 0) {
        return NULL;
    }
    fpy_check_begin();
    futoin_wrap_loop(s->bsi, Py_NewRef(fn), fpy_tr_loop, l, fpy_obj_release);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}

PyObject* fpy_repeat(fpy_steps* s, PyObject* count, PyObject* fn,
                     PyObject* label)
{
    const char* l;
    size_t c;
    if (!fpy_in_own_step(s, "repeat()", 1)
        || fpy_check_callables("repeat(count, body, label=None)", fn, NULL) < 0) {
        return NULL;
    }
    if (!PyLong_Check(count)) {
        PyErr_Format(PyExc_TypeError, "repeat(count, ...): int expected, not %.80s",
                     Py_TYPE(count)->tp_name);
        return NULL;
    }
    c = PyLong_AsSize_t(count);
    if (c == (size_t)-1 && PyErr_Occurred()) {
        PyErr_SetString(PyExc_ValueError, "repeat(count, ...): count must be >= 0");
        return NULL;
    }
    if (fpy_label_arg(label, &l) < 0) {
        return NULL;
    }
    fpy_check_begin();
    futoin_wrap_repeat(s->bsi, Py_NewRef(fn), c, fpy_tr_repeat, l, fpy_obj_release);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}

PyObject* fpy_sync(fpy_steps* s, PyObject* obj, PyObject* fn, PyObject* eh)
{
    FutoInSync* so;
    PyObject* p;
    fpy_rec* r;
    eh = fpy_none_to_null(eh);
    if (!fpy_in_own_step(s, "sync()", 1)
        || fpy_check_callables("sync(obj, step, onerror=None)", fn, eh) < 0) {
        return NULL;
    }
    p = PyObject_GetAttrString(obj, "ptr");
    if (!p) {
        PyErr_Format(PyExc_TypeError, "sync(obj, ...): Mutex, Throttle or "
                     "Limiter expected, not %.80s", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    so = PyLong_AsVoidPtr(p);
    Py_DECREF(p);
    if (!so) {
        if (!PyErr_Occurred()) {
            fpy_invalid_state("sync(): the object is closed");
        }
        return NULL;
    }
    if (!eh) {
        fpy_check_begin();
        /* classed as add() is: the section's frame (async stacks, the
         * dump's section= line) is the Python function's */
        futoin_wrap_add_sync_classed(s->bsi, so, Py_NewRef(fn), fpy_tr_fn, NULL,
                                     &fpy_fn_class);
    } else {
        if (!(r = fpy_rec_new(fn, eh))) {
            return NULL;
        }
        fpy_check_begin();
        futoin_wrap_add_sync_classed(s->bsi, so, r, fpy_tr_step, fpy_tr_error,
                                     &fpy_rec_class);
    }
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}

/* add_foreign(language, module, function): a step written in another
 * language. What cannot be had (no host, no module, no function) is a step
 * that fails with InvalidRequest, its error_info saying why. */
PyObject* fpy_add_foreign(fpy_steps* s, PyObject* language, PyObject* module,
                          PyObject* function)
{
    const char *l, *m, *f;
    if (!fpy_in_own_step(s, "add_foreign()", 1)
        || fpy_str_arg(language, "add_foreign(): language", &l) < 0
        || fpy_str_arg(module, "add_foreign(): module", &m) < 0
        || fpy_str_arg(function, "add_foreign(): function", &f) < 0) {
        return NULL;
    }
    fpy_check_begin();
    (void)futoin_host_add(s->bsi, l, m, f);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}
