/*
 * What the Java binding (libfutoin_java.so) hands to its host plug-in
 * (libfutoin_host_java.so, host/host_plugin.c): the "java" language host
 * table plus counters for leak checks. The plug-in starts or finds the
 * JVM, then asks org.futoin.async.Polyglot.hostTable() for the address of
 * this struct and forwards the library's calls to it, so the same code
 * serves a Java host program (the binding registers `api` itself) and a
 * JVM started inside a C, Python or Lua program.
 */
#ifndef FJ_HOST_H
#define FJ_HOST_H

#include <futoin/sys/host.h>
#include <stdint.h>

typedef struct fj_host_counters
{
    int64_t global_refs;  /* JNI global references the binding holds */
    int64_t named_steps;  /* steps made by resolve() not yet released */
    int64_t starts;       /* start() calls */
    int64_t stops;        /* stop() calls */
    int64_t attached;     /* native threads attached to the JVM */
    int64_t detached;     /* ... and detached when they ended */
} fj_host_counters;

typedef struct fj_host_table
{
    uint32_t size; /* sizeof(fj_host_table) */
    const futoin_host_api* api;
    void (*counters)(fj_host_counters* out);
} fj_host_table;

#endif
