/**
 * @file futoin/ffi.h
 * @brief Run an unmodified plain C function as a step (libffi).
 *
 * A prepared call describes a function such as `double hypot(double,
 * double)` by its return and argument types. futoin_ffi_add() adds a step
 * that takes the function's arguments from the values the previous step
 * passed to success(), converts them to the declared types, calls the
 * function through libffi, and passes its return value on with success().
 *
 * Conversions are exact or widening only: any integer value to a declared
 * integer type if it fits, float to double, an integer to double if it is
 * exactly representable, a string to `const char*`. A missing value or one
 * that cannot be converted raises InvalidRequest with error_info naming the
 * argument, the declared type and the type it got. Never a crash.
 *
 * @since 0.1.0
 */
#ifndef FUTOIN_FFI_H
#define FUTOIN_FFI_H

#include <futoin/async.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Declared C types of a prepared call. */
typedef enum futoin_ffi_type
{
    FUTOIN_FFI_VOID = 0, /**< return type only */
    FUTOIN_FFI_INT32,
    FUTOIN_FFI_INT64,
    FUTOIN_FFI_UINT32,
    FUTOIN_FFI_UINT64,
    FUTOIN_FFI_FLOAT,
    FUTOIN_FFI_DOUBLE,
    FUTOIN_FFI_BOOL,     /**< C `bool` */
    FUTOIN_FFI_CSTRING   /**< `const char*`: borrowed as argument; as a
                              return value it is copied (the function keeps
                              ownership of what it returned) */
} futoin_ffi_type;

/** At most this many arguments: the binary interface passes 4 values. */
#define FUTOIN_FFI_MAX_ARGS 4

/** A prepared call (opaque). */
typedef struct futoin_ffi_fn futoin_ffi_fn;

/**
 * Prepare a call of `fn` (cast to `void (*)(void)`).
 * @return the prepared call, or NULL for NULL `fn`, nargs > 4, a VOID
 *         argument, an unknown type or out of memory.
 * The caller owns it; free it with futoin_ffi_free() after every step
 * that uses it has finished.
 * Threads: any thread.
 */
FUTOIN_API futoin_ffi_fn* futoin_ffi_prepare(void (*fn)(void),
                                             futoin_ffi_type ret,
                                             size_t nargs,
                                             const futoin_ffi_type* args);

/** Free a prepared call. NULL is ignored. Threads: any thread, once no step uses it. */
FUTOIN_API void futoin_ffi_free(futoin_ffi_fn* fn);

/**
 * Add a step (to a root before execute(), or as a sub-step from a running
 * step) that calls `fn` with the previous step's values and passes the
 * return value on (none for VOID). `eh` is the step's error handler.
 * `fn` is borrowed: it must outlive the step.
 * Threads: loop thread (elsewhere: refused and reported as misuse).
 */
FUTOIN_API void futoin_ffi_add(FutoInAsyncSteps* bsi,
                               const futoin_ffi_fn* fn,
                               FutoInAsyncSteps_error_callback eh);

#ifdef __cplusplus
}
#endif

#endif /* FUTOIN_FFI_H */
