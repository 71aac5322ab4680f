/*
 * The operations of AsyncSteps that complete a step or make it wait:
 * success(), success_step() and error() (in the step's own callback, or
 * completing a waiting step from a timer, another flow or another thread),
 * set_timeout(), set_cancel(), wait_external(), break_loop(),
 * continue_loop() and _fail().
 *
 * "error() raises": asi.error() calls handle_error (the code's exception
 * as last_exception), then leaves the calling code with the private
 * Unwind, which the trampoline drops (py_exceptions.c); break_loop() and
 * continue_loop() raise it the same way.
 */
#include "futoin_py.h"

/* success()/error() through a kept handle whose step ended (bsi NULL): a
 * late completion if the step waited and this handle had not completed it
 * (its timeout, a cancel of its flow, or close() of its tool won: False,
 * counted, from any thread); misuse otherwise (a second completion, or a
 * step that completed by returning or ran sub-steps). */
static PyObject* complete_ended(fpy_steps* s, const char* what)
{
    if (s->ended && (s->did & FPY_DID_WAIT) && !(s->did & FPY_DID_COMPLETE)) {
        if (s->tool_obj && PyObject_TypeCheck(s->tool_obj, &fpy_tool_type)) {
            ++((fpy_tool*)s->tool_obj)->late;
        }
        Py_RETURN_FALSE;
    }
    if (s->ended) {
        return fpy_invalid_state("%s on a step that already %s", what,
                                 (s->did & FPY_DID_COMPLETE)
                                         ? "completed through this handle"
                                         : "completed (or is not waiting)");
    }
    fpy_live(s);
    return NULL;
}

/* Completing a step from outside its own callback: a waiting step, from a
 * timer, another flow or another thread. True if this call completed it,
 * False if the step had already ended (its timeout, a cancel, an error
 * unwinding past it) - a lost race, not an error. */
static PyObject* complete_external(fpy_steps* s, FutoInArgs* fa,
                                   PyObject* code, PyObject* info)
{
    const char* ccode = NULL;
    const char* cinfo = NULL;
    int rc;
    if (s->kind == FPY_ROOT) {
        if (fa) {
            fpy_args_reset(fa);
        }
        return fpy_invalid_state("%s is for a step's own handle, not a root",
                                 code ? "error()" : "success()");
    }
    if (code) {
        if (fpy_code_arg(code, "error(): code", &ccode) < 0
            || (info && info != Py_None
                && fpy_str_arg(info, "error(): info", &cinfo) < 0)) {
            return NULL;
        }
    }
    if (fpy_same_thread(s) && futoin_wrap_is_ours(s->bsi) && s->bsi->api->isValid(s->bsi)) {
        fpy_flush_state(s->bsi);
    }
    /* The library decides at once, from any thread (a claim on the step):
     * 1 taken, 0 the step had already ended (a lost race, dropped
     * quietly), < 0 misuse (reported; raised here). From another thread
     * the completion is posted to the loop thread. */
    fpy_check_begin();
    if (code) {
        rc = futoin_wrap_try_error(s->bsi, ccode, cinfo);
    } else {
        rc = futoin_wrap_try_success(s->bsi, fa);
    }
    if (fa) {
        fpy_args_reset(fa); /* no-op after a move */
    }
    if (fpy_check_end() < 0) {
        return NULL;
    }
    if (rc < 0) {
        return fpy_invalid_state("%s refused: the step is not waiting",
                                 code ? "error()" : "success()");
    }
    if (rc > 0) {
        s->did |= FPY_DID_COMPLETE;
    }
    return PyBool_FromLong(rc > 0);
}

PyObject* fpy_success(fpy_steps* s, PyObject* const* v, Py_ssize_t n)
{
    FutoInArgs fa;
    /* (a success() that may be kept was kept by the method: m_success) */
    if (fpy_kept_flush() < 0) { /* a second success() finds the first sent */
        return NULL;
    }
    if (!s->bsi) {
        return complete_ended(s, "success()");
    }
    if (n > 4) {
        PyErr_Format(PyExc_TypeError,
                     "success() takes at most 4 values (FTN12), %zd given", n);
        return NULL;
    }
    if (n && fpy_args_from(v, n, &fa) < 0) {
        return NULL;
    }
    if (s->bsi != fpy_T.cur) {
        return complete_external(s, n ? &fa : NULL, NULL, NULL);
    }
    fpy_check_begin();
    s->bsi->api->success(s->bsi, n ? &fa : NULL);
    if (n) {
        fpy_args_reset(&fa); /* no-op after a move; frees if refused */
    }
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_COMPLETE;
    Py_RETURN_NONE;
}

PyObject* fpy_success_step(fpy_steps* s, PyObject* const* v, Py_ssize_t n)
{
    FutoInArgs fa;
    if (!fpy_in_own_step(s, "success_step()", 1)) {
        return NULL;
    }
    if (n > 4) {
        PyErr_Format(PyExc_TypeError,
                     "success_step() takes at most 4 values (FTN12), %zd given", n);
        return NULL;
    }
    if (fpy_args_from(v, n, &fa) < 0) {
        return NULL;
    }
    fpy_check_begin();
    futoin_wrap_success_step(s->bsi, &fa);
    fpy_args_reset(&fa);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}

/* error(code, info=None): handle_error with the code's exception as
 * last_exception, then leave the calling code with the private Unwind (a
 * BaseException: `except Exception`/`except FutoInError` in step code do
 * not stop it), which the trampoline drops. Completing a waiting step
 * from elsewhere returns True/False instead. */
PyObject* fpy_error(fpy_steps* s, PyObject* code, PyObject* info)
{
    const char* ccode;
    const char* cinfo = NULL;
    FutoInBinaryValue ex;
    PyObject* exc;
    if (!s->bsi) {
        return complete_ended(s, "error()");
    }
    if (!info) {
        info = Py_None;
    }
    if (s->bsi != fpy_T.cur) {
        return complete_external(s, NULL, code, info);
    }
    if (fpy_code_arg(code, "error(): code", &ccode) < 0) {
        return NULL;
    }
    if (info != Py_None && fpy_str_arg(info, "error(): info", &cinfo) < 0) {
        return NULL;
    }
    exc = PyObject_CallFunctionObjArgs(fpy_H.make_error, code, info, NULL);
    if (!exc) {
        return NULL;
    }
    fpy_check_begin();
    fpy_set_custom(&ex, exc);
    futoin_wrap_set_last_exception(s->bsi, &ex);
    s->bsi->api->handle_error(s->bsi, ccode, cinfo);
    if (fpy_check_end() < 0) {
        Py_DECREF(exc);
        return NULL;
    }
    s->did |= FPY_DID_COMPLETE;
    PyErr_SetObject(fpy_H.unwind_type, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject* fpy_set_timeout(fpy_steps* s, PyObject* arg)
{
    unsigned long ms;
    if (!fpy_in_own_step(s, "set_timeout()", 0)) {
        return NULL;
    }
    if (PyFloat_Check(arg)) {
        double d = PyFloat_AsDouble(arg);
        if (d != d) {
            PyErr_SetString(PyExc_ValueError, "set_timeout(): NaN");
            return NULL;
        }
        ms = d < 0 ? 0 : (d > (double)UINT32_MAX ? UINT32_MAX : (unsigned long)d);
    } else if (PyLong_Check(arg)) {
        ms = PyLong_AsUnsignedLong(arg);
        if (PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError,
                            "set_timeout(timeout_ms): a non-negative number of "
                            "milliseconds");
            return NULL;
        }
    } else {
        PyErr_Format(PyExc_TypeError,
                     "set_timeout(timeout_ms): int or float milliseconds, not %.80s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    fpy_check_begin();
    s->bsi->api->setTimeout(s->bsi, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_WAIT;
    Py_RETURN_NONE;
}

PyObject* fpy_set_cancel(fpy_steps* s, PyObject* fn)
{
    if (!fpy_in_own_step(s, "set_cancel()", 0)
        || fpy_check_callables("set_cancel(handler)", fn, NULL) < 0) {
        return NULL;
    }
    fpy_check_begin();
    futoin_wrap_set_cancel(s->bsi, Py_NewRef(fn), fpy_tr_cancel, fpy_obj_release);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_WAIT;
    Py_RETURN_NONE;
}

PyObject* fpy_wait_external(fpy_steps* s)
{
    if (!fpy_in_own_step(s, "wait_external()", 0)) {
        return NULL;
    }
    fpy_check_begin();
    s->bsi->api->waitExternal(s->bsi);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_WAIT;
    Py_RETURN_NONE;
}

/* break_loop()/continue_loop() leave the calling Python code as the JS
 * reference's break()/continue() do: the runtime is told first, then the
 * private Unwind (a BaseException, so `except Exception` does not catch
 * it) unwinds to the trampoline, which drops it. */
PyObject* fpy_break(fpy_steps* s, PyObject* label, int is_continue)
{
    const char* what = is_continue ? "continue_loop()" : "break_loop()";
    const char* l;
    if (!fpy_live(s)) {
        return NULL;
    }
    if (s->bsi != fpy_T.cur) {
        if (!fpy_not_other_thread(s, what)) {
            return NULL;
        }
        return fpy_invalid_state("%s outside a loop body's own callback", what);
    }
    if (fpy_label_arg(label, &l) < 0) {
        return NULL;
    }
    fpy_check_begin();
    if (is_continue) {
        s->bsi->api->continueLoop(s->bsi, l);
    } else {
        s->bsi->api->breakLoop(s->bsi, l);
    }
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_COMPLETE;
    PyErr_SetNone(fpy_H.unwind_type);
    return NULL;
}

/* _fail(exc): fail a waiting step with a Python exception, as if its code
 * had raised it (await_: the awaited future's exception). Loop thread. */
PyObject* fpy_fail(fpy_steps* s, PyObject* exc)
{
    if (!fpy_live(s) || !fpy_not_other_thread(s, "_fail()")) {
        return NULL;
    }
    if (!PyExceptionInstance_Check(exc)) {
        PyErr_SetString(PyExc_TypeError, "_fail(exc): an exception instance");
        return NULL;
    }
    PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
    fpy_check_begin();
    fpy_on_exception(s->bsi);
    --fpy_T.expect;
    fpy_T.misused = 0; /* the step had ended already: a lost race */
    Py_RETURN_NONE;
}
