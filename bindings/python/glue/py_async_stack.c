/*
 * Where a Python step came from and the async stack of an error: a step's
 * origin (futoin_frame_origin: language, function, file, line) is computed
 * only when an async stack is recorded, from the callable the step holds
 * (the step classes of py_trampolines.c point here); the stack of a flow's
 * last error, frames of every language, reaches Python as the Python
 * layer's AsyncStack (its hook make_stack).
 *
 * fpy_origin_of() is called by the library from any language's code on
 * the loop thread, with or without the GIL: it takes it as the trampolines
 * do (fpy_gil_enter).
 */
#include "futoin_py.h"

#include <string.h>

/* ---- origins ------------------------------------------------------------ */

/* The Python layer's frame_of(fn): (module.function, file, line), whose
 * strings it keeps while `fn` lives (so while the step's data does). 1 if
 * `out` is filled, else 0 (no error set). */
static int frame_of(PyObject* fn, futoin_frame_origin* out)
{
    PyObject *hook = fpy_H.all ? PyDict_GetItemString(fpy_H.all, "frame_of") : NULL;
    PyObject *r, *name, *file;
    long line;
    if (!hook || !(r = PyObject_CallOneArg(hook, fn))) {
        PyErr_Clear();
        return 0;
    }
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 3) {
        Py_DECREF(r);
        return 0;
    }
    name = PyTuple_GET_ITEM(r, 0);
    file = PyTuple_GET_ITEM(r, 1);
    line = PyLong_AsLong(PyTuple_GET_ITEM(r, 2));
    /* UTF-8 cached in the str objects, which frame_of's cache keeps */
    out->function = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    out->file = PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : NULL;
    out->line = line > 0 ? (uint32_t)line : 0;
    PyErr_Clear();
    Py_DECREF(r);
    return 1;
}

void fpy_origin_of(PyObject* fn, futoin_frame_origin* out)
{
    fpy_gil g;
    PyObject *et, *ev, *etb;
    PyObject* f = fn;
    out->language = "python";
    out->function = NULL;
    out->file = NULL;
    out->line = 0;
    fpy_gil_enter(&g);
    PyErr_Fetch(&et, &ev, &etb); /* an exception on its way: keep it */
    if (frame_of(fn, out)) {
        PyErr_Restore(et, ev, etb);
        fpy_gil_leave(&g);
        return;
    }
    /* before the Python layer is there: the bare callable */
    if (PyMethod_Check(f)) {
        f = PyMethod_GET_FUNCTION(f); /* held by the bound method */
    }
    if (PyFunction_Check(f)) {
        PyFunctionObject* fo = (PyFunctionObject*)f;
        PyCodeObject* co = (PyCodeObject*)fo->func_code;
        /* UTF-8 cached in the str objects, which the function keeps */
        if (fo->func_qualname && PyUnicode_Check(fo->func_qualname)) {
            out->function = PyUnicode_AsUTF8(fo->func_qualname);
        }
        if (co && co->co_filename && PyUnicode_Check(co->co_filename)) {
            out->file = PyUnicode_AsUTF8(co->co_filename);
        }
        out->line = co && co->co_firstlineno > 0 ? (uint32_t)co->co_firstlineno : 0;
    } else {
        out->function = Py_TYPE(f)->tp_name; /* a callable object */
    }
    PyErr_Clear();
    PyErr_Restore(et, ev, etb);
    fpy_gil_leave(&g);
}

void fpy_origin_fn(void* data, futoin_frame_origin* out)
{
    fpy_origin_of((PyObject*)data, out);
}

/* ---- the async stack ---------------------------------------------------- */

static PyObject* str_or_none(const char* s)
{
    if (!s) {
        Py_RETURN_NONE;
    }
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

PyObject* fpy_async_stack_of(FutoInAsyncSteps* bsi)
{
    const futoin_async_stack* st = futoin_wrap_async_stack(bsi);
    PyObject *frames, *mk, *res;
    if (!st) {
        Py_RETURN_NONE;
    }
    mk = fpy_hook("make_stack");
    if (!mk) {
        return NULL;
    }
    frames = PyList_New(st->count);
    if (!frames) {
        return NULL;
    }
    for (uint32_t i = 0; i < st->count; ++i) {
        const futoin_frame_origin* o = &st->frames[i];
        PyObject* t = Py_BuildValue("(NNNI)", str_or_none(o->language),
                                    str_or_none(o->function),
                                    str_or_none(o->file), (unsigned)o->line);
        if (!t) {
            Py_DECREF(frames);
            return NULL;
        }
        PyList_SET_ITEM(frames, i, t);
    }
    res = PyObject_CallFunction(mk, "NsII", frames, st->code ? st->code : "",
                                (unsigned)st->elided, (unsigned)st->elided_after);
    return res;
}
