/* Internal interface of the adapter layer (not installed). */
#ifndef FUTOIN_RUNTIME_ADAPTER_H
#define FUTOIN_RUNTIME_ADAPTER_H

#include <futoin/ffi.h>
#include <futoin/sys/host.h>

/* ffi.c: the body of a libffi step: call `p` with the values `in` and
 * complete `bsi` with its result (or InvalidRequest naming a value of the
 * wrong type). Used by futoin_ffi_add() and the C language host. */
void futoin__ffi_run(FutoInAsyncSteps* bsi, const futoin_ffi_fn* p,
                     const FutoInArgs* in);

/* host_c.c: the built-in host of language "c" (static storage). */
extern const futoin_host_api futoin__host_c;

#endif
