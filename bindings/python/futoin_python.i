/*
 * The Python module futoin_async._core: the shared interface
 * (bindings/futoin_async.i) plus the Python-specific part. The step
 * trampolines, the AsyncSteps / Tool types and the value conversion are
 * C glue in src/futoin_py.c, added to the module by %init: a SWIG proxy
 * object per step would cost several times the step itself.
 */
%module(package="futoin_async") core

%{
#include "futoin_py.h"
%}

%include "../futoin_async.i"

%init %{
    if (futoin_py_init(m) < 0) {
        return NULL;
    }
%}
