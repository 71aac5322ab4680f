/*
 * Watching a Tool's flows: its hooks (futoin/sys/hooks.h) and the live dump
 * (futoin_tool_dump()), for Tool.set_hooks() and Tool.dump(). Thin: every
 * event becomes a dict handed to the callable set for its name; the dump is
 * the C report as a str. The behaviour (which events, in which order, what
 * a hook may do) is the library's.
 */
#include "futoin_py.h"

#include <futoin/sys/hooks.h>

#include <stdio.h>
#include <stdlib.h>

static int put(PyObject* d, const char* key, PyObject* v)
{
    int rc = v ? PyDict_SetItemString(d, key, v) : -1;
    Py_XDECREF(v);
    return rc;
}

static int put_str(PyObject* d, const char* key, const char* s)
{
    return s ? put(d, key, PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s),
                                                "replace"))
             : 0;
}

/* The event as a dict: "event", "root_id", "now" (tool ms) always; the
 * rest when the event has them. */
static PyObject* event_dict(const futoin_hook_event* ev)
{
    const char* wait = ev->wait != FUTOIN_WAIT_NONE ? futoin_wait_kind_name(ev->wait) : NULL;
    PyObject* d = PyDict_New();
    if (!d) {
        return NULL;
    }
    if (put_str(d, "event", futoin_hook_name((int)ev->type)) < 0
        || put(d, "root_id", PyLong_FromSsize_t(ev->root_id)) < 0
        || put(d, "now", PyLong_FromUnsignedLongLong(ev->now)) < 0) {
        goto fail;
    }
    if (ev->origin
        && (put_str(d, "language", ev->origin->language) < 0
            || put_str(d, "function", ev->origin->function) < 0
            || put_str(d, "file", ev->origin->file) < 0
            || put(d, "line", PyLong_FromUnsignedLong(ev->origin->line)) < 0)) {
        goto fail;
    }
    if (put_str(d, "code", ev->code) < 0 || put_str(d, "info", ev->info) < 0) {
        goto fail;
    }
    if (ev->type == FUTOIN_HOOK_FLOW_FINISHED
        && put_str(d, "outcome", futoin_hook_outcome_name(ev->outcome)) < 0) {
        goto fail;
    }
    if (wait
        && (put_str(d, "wait", wait) < 0
            || put(d, "due", ev->due ? PyLong_FromUnsignedLongLong(ev->due)
                                     : Py_NewRef(Py_None)) < 0)) {
        goto fail;
    }
    if (ev->sync && put(d, "sync", PyLong_FromVoidPtr(ev->sync)) < 0) {
        goto fail;
    }
    if (ev->type == FUTOIN_HOOK_WAIT_BEGUN || ev->type == FUTOIN_HOOK_WAIT_ENDED) {
        if (put_str(d, "wait_language", ev->language) < 0) {
            goto fail;
        }
    }
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

/* Every hook: the loop thread, with or without the GIL. An exception in a
 * hook cannot go anywhere (the engine is mid-event): it is reported as
 * unraisable. */
static void on_event(void* data, const futoin_hook_event* ev)
{
    fpy_tool* t = data;
    fpy_gil g;
    PyObject* fn;
    const char* name = futoin_hook_name((int)ev->type);
    fpy_gil_enter(&g);
    fn = t->hooks && name ? PyDict_GetItemString(t->hooks, name) : NULL;
    if (fn) {
        PyObject* d;
        PyObject* res;
        PyObject *et, *evl, *etb;
        Py_INCREF(fn); /* the hook may replace the table */
        PyErr_Fetch(&et, &evl, &etb);
        d = event_dict(ev);
        res = d ? PyObject_CallOneArg(fn, d) : NULL;
        if (res) {
            Py_DECREF(res);
        } else {
            PyErr_WriteUnraisable(fn);
        }
        Py_XDECREF(d);
        PyErr_Restore(et, evl, etb);
        Py_DECREF(fn);
    }
    fpy_gil_leave(&g);
}

PyObject* fpy_tool_set_hooks(fpy_tool* t, PyObject* table)
{
    futoin_hooks h = FUTOIN_HOOKS_INIT;
    int rc;
    if (!fpy_tool_use(t, "set_hooks()")) {
        return NULL;
    }
    if (t->borrowed) {
        PyErr_SetString(PyExc_RuntimeError,
                        "set_hooks(): this Tool is the loop of the program "
                        "that hosts this interpreter: that program sets its hooks");
        return NULL;
    }
    if (!futoin_tool_is_same_thread(t->tool)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "set_hooks(): not on the tool's loop thread");
        return NULL;
    }
    if (table != Py_None && !PyDict_Check(table)) {
        PyErr_SetString(PyExc_TypeError, "_set_hooks(): a dict or None");
        return NULL;
    }
    h.data = t;
    if (table != Py_None) {
        for (int i = FUTOIN_HOOK_FLOW_STARTED; i <= FUTOIN_HOOK_SYNC_RELEASED; ++i) {
            if (PyDict_GetItemString(table, futoin_hook_name(i))) {
                *futoin_hooks_member(&h, i) = on_event;
            }
        }
    }
    /* the new callables first: an event during the call finds them */
    Py_XSETREF(t->hooks, table == Py_None ? NULL : Py_NewRef(table));
    rc = futoin_tool_set_hooks(t->tool, table == Py_None ? NULL : &h);
    if (rc != FUTOIN_OK) {
        Py_CLEAR(t->hooks);
        futoin_tool_set_hooks(t->tool, NULL);
        if (rc == FUTOIN_ENOMEM) {
            return PyErr_NoMemory();
        }
        PyErr_Format(PyExc_RuntimeError, "set_hooks(): refused (%d)", rc);
        return NULL;
    }
    Py_RETURN_NONE;
}

PyObject* fpy_tool_dump(fpy_tool* t)
{
    char* buf = NULL;
    size_t len = 0;
    FILE* f;
    int n;
    PyObject* s;
    if (!fpy_tool_use(t, "dump()")) {
        return NULL;
    }
    if (!futoin_tool_is_same_thread(t->tool)) {
        PyErr_SetString(PyExc_RuntimeError, "dump(): not on the tool's loop thread");
        return NULL;
    }
    f = open_memstream(&buf, &len);
    if (!f) {
        return PyErr_NoMemory();
    }
    n = futoin_tool_dump(t->tool, f);
    if (fclose(f) != 0 || n < 0) {
        free(buf);
        if (n == FUTOIN_ENOMEM || n >= 0) {
            return PyErr_NoMemory();
        }
        PyErr_Format(PyExc_RuntimeError, "dump(): refused (%d)", n);
        return NULL;
    }
    s = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace");
    free(buf);
    return s;
}
