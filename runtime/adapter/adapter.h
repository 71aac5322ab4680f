/* Internal interface of the adapter layer (not installed). */
#ifndef FUTOIN_RUNTIME_ADAPTER_H
#define FUTOIN_RUNTIME_ADAPTER_H

#include <futoin/ffi.h>
#include <futoin/sys/host.h>

#include <pthread.h>
#include <stdbool.h>

/* ffi.c: the body of a libffi step: call `p` with the values `in` and
 * complete `bsi` with its result (or InvalidRequest naming a value of the
 * wrong type). Used by futoin_ffi_add() and the C language host. */
void futoin__ffi_run(FutoInAsyncSteps* bsi, const futoin_ffi_fn* p,
                     const FutoInArgs* in);

/* host_c.c: the built-in host of language "c" (static storage). */
extern const futoin_host_api futoin__host_c;

/* host.c: the registry of language hosts. One entry per language, kept
 * for the life of the process. */
typedef struct futoin__host_entry
{
    const futoin_host_api* api;
    void* dl;    /* the plug-in, when we loaded it */
    /* The fields below are read and written under the registry's lock. */
    int started;       /* start()s made by futoin_host_add() */
    bool starting;     /* a start() runs now, on thread `starter` */
    pthread_t starter;
} futoin__host_entry;

/* Whether `h` is a host table the registry can use. */
bool futoin__host_table_ok(const futoin_host_api* h);
/* The entry of `language`: registered, built in or loaded now. FUTOIN_OK,
 * or an error with `err` saying why. Thread-safe. */
int futoin__host_find_entry(const char* language, futoin__host_entry** out,
                            char* err, size_t errlen);
/* Start the host of `e` on `tool`'s loop thread on first use, once however
 * many threads ask at the same time (the others wait for that start()).
 * FUTOIN_OK if it runs; else start()'s error, with its message in `err`. */
int futoin__host_start(futoin__host_entry* e, futoin_tool* tool, char* err,
                       size_t errlen);

/* host_plugin.c: find and load the plug-in of `language` (a safe name);
 * FUTOIN_OK with its table and dlopen() handle, or FUTOIN_EINVAL with
 * `err` naming the places searched. Called with the registry's lock held. */
int futoin__host_load_plugin(const char* language,
                             const futoin_host_api** api_out, void** dl_out,
                             char* err, size_t errlen);

#endif
