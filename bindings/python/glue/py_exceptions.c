/*
 * Python exceptions that escape Python code run by the flow. From a step,
 * loop body or error handler one becomes the flow's error: its FutoInError
 * code, or InternalError with its text in error_info, and the exception
 * itself as last_exception. The private Unwind that error(), break_loop()
 * and continue_loop() raise (a BaseException that `except Exception` and
 * `except FutoInError` in step code do not stop) is dropped: the runtime
 * knows already. KeyboardInterrupt and SystemExit cancel the root and are
 * re-raised from run() (py_gil.c keeps them); in a flow hosted by another
 * language they fail the step. Where no flow can take an exception (cancel
 * handlers, unhandled-error callbacks) it is printed.
 */
#include "futoin_py.h"

#include <string.h>

/* KeyboardInterrupt / SystemExit: keep it for run(), cancel the executing
 * roots of the tool (what Ctrl-C in run() does too), and stop the loop if
 * our run() is driving it (never a loop run by others). */
static void on_fatal(FutoInAsyncSteps* bsi)
{
    futoin_tool* tool = futoin_async_tool(bsi);
    fpy_tool* t = fpy_tool_find(tool);
    fpy_store_fatal();
    if (t) {
        fpy_tool_cancel_executing(t);
    }
    if (tool && fpy_in_run()) {
        uv_stop(futoin_tool_uv_loop(tool));
    }
}

/* A flow that no Python run() drives, on a tool Python did not make: a
 * program in another language hosts it (the plug-in), and no run() is
 * there to re-raise KeyboardInterrupt/SystemExit. */
static int hosted_elsewhere(FutoInAsyncSteps* bsi)
{
    return !fpy_in_run() && !fpy_tool_find(futoin_async_tool(bsi));
}

/* error_info of exception `v` that fails a step with InternalError: its
 * text, then its traceback (the Python layer's error_text()); NULL with no
 * error set if that fails (the caller falls back to its text). */
static PyObject* error_text(PyObject* v)
{
    PyObject* hook = fpy_H.all ? PyDict_GetItemString(fpy_H.all, "error_text") : NULL;
    PyObject* r = hook && v ? PyObject_CallOneArg(hook, v) : NULL;
    if (r && !PyUnicode_Check(r)) {
        Py_CLEAR(r);
    }
    PyErr_Clear();
    return r;
}

/* KeyboardInterrupt / SystemExit in a step of a flow hosted by another
 * language: the step fails with InternalError, its info naming the
 * exception ("SystemExit: 3", "KeyboardInterrupt") and the exception as
 * last_exception. Neither the process nor the flow is ended here: what an
 * interrupt means is the host program's to decide. */
static void fail_fatal(FutoInAsyncSteps* bsi)
{
    PyObject *t, *v, *tb, *text = NULL, *info;
    FutoInBinaryValue ex;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (tb && v) {
        PyException_SetTraceback(v, tb);
    }
    text = v ? PyObject_Str(v) : NULL;
    if (text && PyUnicode_GET_LENGTH(text) > 0) {
        info = PyUnicode_FromFormat("%s: %U", ((PyTypeObject*)t)->tp_name, text);
    } else {
        info = PyUnicode_FromString(((PyTypeObject*)t)->tp_name);
    }
    PyErr_Clear();
    if (info) { /* then the traceback, as for any other exception */
        PyObject* tb_text = error_text(v);
        Py_ssize_t n = tb_text ? PyUnicode_GET_LENGTH(tb_text) : 0;
        Py_ssize_t nl = tb_text ? PyUnicode_FindChar(tb_text, '\n', 0, n, 1) : -1;
        PyObject* rest = nl >= 0 ? PyUnicode_Substring(tb_text, nl, n) : NULL;
        PyObject* full = rest ? PyUnicode_Concat(info, rest) : NULL;
        if (full) {
            Py_SETREF(info, full);
        }
        Py_XDECREF(rest);
        Py_XDECREF(tb_text);
        PyErr_Clear();
    }
    if (v) {
        fpy_set_custom(&ex, v);
        futoin_wrap_set_last_exception(bsi, &ex);
    }
    bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR,
                           info ? PyUnicode_AsUTF8(info) : "KeyboardInterrupt or SystemExit");
    PyErr_Clear();
    Py_XDECREF(info);
    Py_XDECREF(text);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
}

/* A str without NUL as UTF-8 (borrowed from `o`), or NULL. */
static const char* c_str(PyObject* o)
{
    Py_ssize_t n;
    const char* c = PyUnicode_AsUTF8AndSize(o, &n);
    if (c && strlen(c) != (size_t)n) {
        return NULL;
    }
    return c;
}

/* A Python exception escaped a step, loop body or error handler: the flow
 * gets its code (FutoInError) or InternalError, and the exception object
 * as last_exception. */
void fpy_on_exception(FutoInAsyncSteps* bsi)
{
    PyObject *t, *v, *tb, *code = NULL, *info = NULL, *s = NULL;
    FutoInBinaryValue ex;
    const char* ccode = FUTOIN_ERR_INTERNAL_ERROR;
    const char* cinfo = NULL;

    if (fpy_is_fatal()) {
        if (hosted_elsewhere(bsi)) {
            fail_fatal(bsi);
        } else {
            on_fatal(bsi);
        }
        return;
    }
    if (fpy_H.unwind_type && PyErr_ExceptionMatches(fpy_H.unwind_type)) {
        PyErr_Clear(); /* error()/break_loop()/continue_loop(): the runtime knows */
        return;
    }
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (tb && v) {
        PyException_SetTraceback(v, tb);
    }
    if (v && fpy_H.error_type && PyObject_TypeCheck(v, (PyTypeObject*)fpy_H.error_type)) {
        code = PyObject_GetAttrString(v, "code");
        info = PyObject_GetAttrString(v, "info");
        PyErr_Clear();
        if (code && PyUnicode_Check(code)) {
            const char* c = c_str(code);
            if (c && *c) {
                ccode = c;
            }
        }
        if (info && PyUnicode_Check(info)) {
            cinfo = PyUnicode_AsUTF8(info);
        }
    } else {
        /* its text, then its traceback, for every language to read */
        s = error_text(v);
        if (!s && v) {
            s = PyObject_Str(v);
        }
        if (s) {
            cinfo = PyUnicode_AsUTF8(s);
        }
        if (!cinfo || !*cinfo) {
            cinfo = t ? ((PyTypeObject*)t)->tp_name : "exception";
        }
    }
    PyErr_Clear();
    if (v) {
        fpy_set_custom(&ex, v);
        futoin_wrap_set_last_exception(bsi, &ex);
    }
    bsi->api->handle_error(bsi, ccode, cinfo);
    PyErr_Clear();
    Py_XDECREF(code);
    Py_XDECREF(info);
    Py_XDECREF(s);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
}

/* Exceptions where no flow can take them (cancel handlers, unhandled-error
 * callbacks): fatal ones are kept for run(), others printed. */
void fpy_on_callback_exception(FutoInAsyncSteps* bsi, PyObject* fn)
{
    if (fpy_is_fatal() && !hosted_elsewhere(bsi)) {
        on_fatal(bsi);
    } else if (fpy_H.unwind_type && PyErr_ExceptionMatches(fpy_H.unwind_type)) {
        PyErr_Clear(); /* error() there: the runtime has it (or refused it) */
    } else {
        PyErr_WriteUnraisable(fn);
    }
}
