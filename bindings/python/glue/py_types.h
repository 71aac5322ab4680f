/*
 * What the files of the two types (py_asyncsteps_type.c,
 * py_toolbase_type.c) share: argument unpacking for METH_FASTCALL methods
 * with keywords, and the method table's shorthand. Private to them.
 */
#ifndef FUTOIN_PY_TYPES_H
#define FUTOIN_PY_TYPES_H

#include "futoin_py.h"

/* Unpack positional and keyword arguments of `fname` into out[0..nmax);
 * absent optional ones stay NULL. `names` has nmax entries. 0, or -1 with
 * TypeError set. */
int fpy_parse(const char* fname, PyObject* const* args, Py_ssize_t nargs,
              PyObject* kwnames, const char* const* names, int nreq, int nmax,
              PyObject** out);

/* In a method (self, args, nargs, kwnames): a_[i] is the i-th of the named
 * arguments, the first `nreq` required; returns NULL on a bad call. The
 * usual call, positional arguments only, is unpacked here. */
#define PARSE(fname, nreq, ...)                                                \
    static const char* const names_[] = {__VA_ARGS__};                         \
    enum { n_ = sizeof(names_) / sizeof(names_[0]) };                          \
    PyObject* a_[n_];                                                          \
    if (!kwnames && nargs >= (nreq) && nargs <= n_) {                          \
        for (Py_ssize_t i_ = 0; i_ < n_; ++i_) {                               \
            a_[i_] = i_ < nargs ? args[i_] : NULL;                             \
        }                                                                      \
    } else if (fpy_parse(fname, args, nargs, kwnames, names_, nreq, n_, a_)   \
               < 0) {                                                          \
        return NULL;                                                           \
    }

/* First in a method that reaches the runtime: a success() kept in Python
 * (py_trampolines.c) is sent before it, so the runtime sees every call in
 * order. AsyncSteps' success() sees to it itself; ToolBase's methods that
 * run or read flows do it too. */
#define FLUSH()                                                                \
    if (fpy_kept_flush() < 0) {                                                \
        return NULL;                                                           \
    }

#define FC (METH_FASTCALL | METH_KEYWORDS)
#define M(name, fn, flags, doc) {name, (PyCFunction)(void (*)(void))fn, flags, PyDoc_STR(doc)}

#endif
