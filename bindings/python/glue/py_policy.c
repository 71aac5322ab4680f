/*
 * The load policy (futoin/sys/host.h, futoin_host_policy_set()) from
 * Python: Tool(allow_languages=..., allow_modules=...),
 * Tool.set_load_policy() and futoin_async.set_load_policy(). The Python
 * layer (lib/futoin_async/_policy.py) checks the lists and words the
 * errors; this only hands them to the library as C strings.
 */
#include "futoin_py.h"

#include <stdlib.h>

/* The strings of `seq` (a tuple of str, or None: NULL) as a NULL-terminated
 * array pointing into the str objects, which `seq` keeps alive for as long
 * as the caller holds it. 0, or -1 raised. */
static int c_list(PyObject* seq, const char* what, const char*** out)
{
    Py_ssize_t n;
    *out = NULL;
    if (seq == Py_None) {
        return 0;
    }
    if (!PyTuple_Check(seq)) {
        PyErr_Format(PyExc_TypeError, "%s: a tuple of str, not %.80s", what,
                     Py_TYPE(seq)->tp_name);
        return -1;
    }
    n = PyTuple_GET_SIZE(seq);
    *out = PyMem_Calloc((size_t)n + 1, sizeof(**out));
    if (!*out) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        if (fpy_str_arg(PyTuple_GET_ITEM(seq, i), what, &(*out)[i]) < 0) {
            PyMem_Free(*out);
            *out = NULL;
            return -1;
        }
    }
    return 0;
}

PyObject* fpy_policy_set(PyObject* tool, PyObject* languages, PyObject* modules)
{
    futoin_host_policy p = FUTOIN_HOST_POLICY_INIT;
    futoin_tool* ft = NULL;
    const char** langs = NULL;
    const char** mods = NULL;
    int rc;
    if (tool != Py_None) {
        if (!PyObject_TypeCheck(tool, &fpy_tool_type)) {
            PyErr_Format(PyExc_TypeError, "a Tool or None, not %.80s",
                         Py_TYPE(tool)->tp_name);
            return NULL;
        }
        if (((fpy_tool*)tool)->borrowed) {
            /* code of a flow must not set the policy of its host program */
            return fpy_invalid_state(
                    "set_load_policy(): this Tool is the loop of the program "
                    "that hosts the flow; that program sets its load policy");
        }
        if (!(ft = ((fpy_tool*)tool)->tool)) {
            return fpy_invalid_state("set_load_policy(): the Tool is closed");
        }
    }
    if (c_list(languages, "allow_languages", &langs) < 0
        || c_list(modules, "allow_modules", &mods) < 0) {
        PyMem_Free(langs);
        return NULL;
    }
    p.languages = langs;
    p.modules = mods;
    /* copied by the library; thread-safe, quick: the GIL stays held */
    rc = futoin_host_policy_set(ft, &p);
    PyMem_Free(langs);
    PyMem_Free(mods);
    return PyLong_FromLong(rc);
}
