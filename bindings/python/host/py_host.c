/*
 * The language host "python" (futoin/sys/host.h): a named function of an
 * importable module becomes a step that runs through the binding's normal
 * trampoline. _core registers it when it is imported (the program is a
 * Python program, or the plug-in libfutoin_host_python.so started CPython
 * and imported us: host_plugin.c forwards to this table, which it gets from
 * the capsule _core._host_api).
 *
 * The host's functions are called by the library from any language's
 * code on the loop thread, with or without the GIL: they take it as the
 * trampolines do (fpy_gil_enter).
 */
#include "futoin_py.h"
#include "py_host_export.h"

#include <futoin/sys/host.h>

#include <stdio.h>
#include <string.h>

static int h_starts, h_stops, h_live;

static void host_release(void* data)
{
    __atomic_fetch_sub(&h_live, 1, __ATOMIC_RELAXED);
    fpy_release_obj((PyObject*)data);
}

static const futoin_step_class host_class = {sizeof(futoin_step_class),
                                             host_release, fpy_origin_fn};

static int host_start(futoin_tool* tool, char* err, size_t errlen)
{
    (void)tool;
    if (!Py_IsInitialized()) {
        snprintf(err, errlen, "python: the interpreter is not running");
        return FUTOIN_EINVAL;
    }
    if (!PyGILState_GetThisThreadState()) {
        /* A loop thread Python does not know: give it a thread state for
         * good, so that each callback only takes the GIL (a fresh thread
         * state per callback costs several times more). */
        (void)PyGILState_Ensure();
        (void)PyEval_SaveThread();
    }
    __atomic_fetch_add(&h_starts, 1, __ATOMIC_RELAXED);
    return FUTOIN_OK;
}

static void host_stop(void)
{
    __atomic_fetch_add(&h_stops, 1, __ATOMIC_RELAXED);
}

/* "<prefix><ExceptionType>: <text>" of the current exception into err. */
static void describe_exception(char* err, size_t errlen, const char* prefix)
{
    PyObject *t, *v, *tb, *s = NULL;
    const char* text = NULL;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (v) {
        s = PyObject_Str(v);
        text = s ? PyUnicode_AsUTF8(s) : NULL;
    }
    snprintf(err, errlen, "%s%s%s%s", prefix,
             t ? ((PyTypeObject*)t)->tp_name : "error", text && *text ? ": " : "",
             text ? text : "");
    PyErr_Clear();
    Py_XDECREF(s);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
}

static int host_resolve(const char* module, const char* function,
                        futoin_host_step* out, char* err, size_t errlen)
{
    fpy_gil g;
    PyObject *et, *ev, *etb;
    PyObject *o = NULL, *m;
    const char* p;
    char prefix[512];
    int rc = FUTOIN_EINVAL;

    fpy_gil_enter(&g);
    PyErr_Fetch(&et, &ev, &etb);
    m = PyImport_ImportModule(module);
    if (!m) {
        snprintf(prefix, sizeof(prefix),
                 "python: cannot import module '%s' (for %s.%s): ", module,
                 module, function);
        describe_exception(err, errlen, prefix);
        goto out;
    }
    /* the function, or a dotted path below the module ("Class.method") */
    o = m;
    for (p = function; o && *p;) {
        const char* dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        PyObject* name = PyUnicode_FromStringAndSize(p, (Py_ssize_t)n);
        PyObject* next = name ? PyObject_GetAttr(o, name) : NULL;
        Py_XDECREF(name);
        Py_DECREF(o);
        o = next;
        if (!o) {
            if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
                PyErr_Clear();
                snprintf(err, errlen, "python: module '%s' has no function '%s'",
                         module, function);
            } else {
                snprintf(prefix, sizeof(prefix), "python: %s.%s: ", module,
                         function);
                describe_exception(err, errlen, prefix);
            }
            goto out;
        }
        p = dot ? dot + 1 : p + n;
    }
    if (!*function || !PyCallable_Check(o)) {
        snprintf(err, errlen, "python: %s.%s is not a function (%.80s)", module,
                 function, Py_TYPE(o)->tp_name);
        Py_CLEAR(o);
        goto out;
    }
    out->execute = fpy_tr_fn;
    out->error = NULL;
    out->data = o; /* the reference goes to the runtime: host_release */
    out->cls = &host_class;
    __atomic_fetch_add(&h_live, 1, __ATOMIC_RELAXED);
    rc = FUTOIN_OK;
out:
    PyErr_Restore(et, ev, etb);
    fpy_gil_leave(&g);
    return rc;
}

static const futoin_host_api host_api = {
        sizeof(futoin_host_api), FUTOIN_HOST_VERSION_1, "python",
        host_start, host_resolve, host_stop,
};

static void host_counters(int* starts, int* stops, int* live)
{
    *starts = __atomic_load_n(&h_starts, __ATOMIC_RELAXED);
    *stops = __atomic_load_n(&h_stops, __ATOMIC_RELAXED);
    *live = __atomic_load_n(&h_live, __ATOMIC_RELAXED);
}

static const fpy_host_export host_export = {sizeof(fpy_host_export), &host_api,
                                            host_counters};

PyObject* fpy_host_counters(void)
{
    int s, p, l;
    host_counters(&s, &p, &l);
    return Py_BuildValue("(iii)", s, p, l);
}

int fpy_host_init(PyObject* m)
{
    PyObject* cap = PyCapsule_New((void*)&host_export, FPY_HOST_CAPSULE, NULL);
    int rc;
    if (!cap || PyModule_AddObject(m, "_host_api", cap) < 0) {
        Py_XDECREF(cap);
        return -1;
    }
    /* EBUSY: the plug-in is the registered host (it started us); it
     * forwards to this very table */
    rc = futoin_host_register(&host_api);
    if (rc != FUTOIN_OK && rc != FUTOIN_EBUSY) {
        PyErr_Format(PyExc_ImportError,
                     "futoin_async: cannot register the python host (%d)", rc);
        return -1;
    }
    return 0;
}
