/*
 * Python glue of libfutoin_async: the AsyncSteps / Tool types and the
 * value conversion. Included by the SWIG interface (futoin_python.i).
 */
#ifndef FUTOIN_PY_H
#define FUTOIN_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <futoin/async.h>
#include <futoin/sys/wrap.h>

/** Add AsyncStepsBase, ToolBase and helpers to module `m`. 0 or -1. */
int futoin_py_init(PyObject* m);
/** Python -> FutoInBinaryValue (the value owns what it points to). */
int futoin_py_to_binval(PyObject* o, FutoInBinaryValue* v);
/** FutoInBinaryValue -> new Python reference. */
PyObject* futoin_py_from_binval(const FutoInBinaryValue* v);

#endif
