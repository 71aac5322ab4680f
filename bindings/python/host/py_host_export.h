/*
 * What _core hands to the plug-in libfutoin_host_python.so (a PyCapsule
 * named FPY_HOST_CAPSULE, attribute _host_api of futoin_async._core).
 *
 * The plug-in never links libpython: it starts CPython (or finds it
 * running), imports futoin_async, and forwards the host table's calls to
 * the table _core implements (py_host.c). Versioned by `size`.
 */
#ifndef FUTOIN_PY_HOST_EXPORT_H
#define FUTOIN_PY_HOST_EXPORT_H

#include <futoin/sys/host.h>

#define FPY_HOST_CAPSULE "futoin_async._core._host_api"

typedef struct fpy_host_export
{
    uint32_t size; /* sizeof(fpy_host_export) of _core */
    /* language "python": start (attach), resolve, stop; callable without
     * the GIL (they take it) */
    const futoin_host_api* api;
    /* start()s, stop()s and step data made by resolve() not yet released;
     * any thread */
    void (*counters)(int* starts, int* stops, int* live);
} fpy_host_export;

#endif
