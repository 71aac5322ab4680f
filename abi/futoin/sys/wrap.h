/**
 * @file futoin/sys/wrap.h
 * @brief The wrap/binary adapter layer: the same operations over ANY
 *        `FutoInAsyncSteps*`, ours or another implementation's.
 *
 * Bindings (Python, Lua, Java) call these and never the raw vtable:
 *  - for our handles (futoin_async_ext() != NULL) every call goes to the
 *    extension table: callback data is released exactly once by the
 *    runtime, error state is read as values;
 *  - for a foreign handle only the 25 spec slots are used: the data of an
 *    added callback is anchored to the step that adds it with
 *    `stack(bsi, ..., cleanup)`, so it is released when that step's
 *    frame is destroyed, i.e. after everything it added has finished (or
 *    was cancelled). Nothing past slot 24 of a foreign table is read.
 *
 * No call allocates on our side; on the foreign path the anchor is the
 * foreign implementation's stack() memory.
 *
 * Threading: as the underlying calls (loop thread). `release` runs on the
 * loop thread, exactly once, possibly before the call returns when the call
 * was refused.
 *
 * @since 0.1.0
 */
#ifndef FUTOIN_SYS_WRAP_H
#define FUTOIN_SYS_WRAP_H

#include <futoin/sys/ext.h>

#ifdef __cplusplus
extern "C" {
#endif

/** 1 if `bsi` is a handle of this library (extension table available). Threads: any thread. */
FUTOIN_API int futoin_wrap_is_ours(FutoInAsyncSteps* bsi);

/** add(); `data` is released by `release` (may be NULL) exactly once. Threads: loop thread (elsewhere: refused and reported as misuse). */
FUTOIN_API void futoin_wrap_add(FutoInAsyncSteps* bsi,
                                void* data,
                                FutoInAsyncSteps_execute_callback f,
                                FutoInAsyncSteps_error_callback eh,
                                futoin_release_cb release);

/** parallel(); `data` of `eh` released exactly once. Threads: loop thread (elsewhere: refused and reported as misuse). */
FUTOIN_API FutoInAsyncSteps* futoin_wrap_parallel(
        FutoInAsyncSteps* bsi,
        void* data,
        FutoInAsyncSteps_error_callback eh,
        futoin_release_cb release);

/** setCancel(); `data` released exactly once. Threads: loop thread (elsewhere: refused and reported as misuse). */
FUTOIN_API void futoin_wrap_set_cancel(FutoInAsyncSteps* bsi,
                                       void* data,
                                       FutoInAsyncSteps_cancel_callback ch,
                                       futoin_release_cb release);

/** loop(); `data` released exactly once. Threads: loop thread (elsewhere: refused and reported as misuse). */
FUTOIN_API void futoin_wrap_loop(FutoInAsyncSteps* bsi,
                                 void* data,
                                 void (*f)(FutoInAsyncSteps* bsi, void* data),
                                 const char* label,
                                 futoin_release_cb release);

/** repeat(); `data` released exactly once. Threads: loop thread (elsewhere: refused and reported as misuse). */
FUTOIN_API void futoin_wrap_repeat(
        FutoInAsyncSteps* bsi,
        void* data,
        size_t count,
        void (*f)(FutoInAsyncSteps* bsi, void* data, size_t i),
        const char* label,
        futoin_release_cb release);

/** addSync(); `data` released exactly once. Threads: loop thread (elsewhere: refused and reported as misuse). */
FUTOIN_API void futoin_wrap_add_sync(FutoInAsyncSteps* bsi,
                                     FutoInSync* sync,
                                     void* data,
                                     FutoInAsyncSteps_execute_callback f,
                                     FutoInAsyncSteps_error_callback eh,
                                     futoin_release_cb release);

/** execute() of a root; `data` of `unhandled` released exactly once (ours:
 *  when the root is freed or executed again; foreign: with the root's
 *  stack() memory). * Threads: any thread (posted to the loop thread; over a foreign handle, as that implementation allows).
 *  stack() memory). */
FUTOIN_API void futoin_wrap_execute(FutoInAsyncSteps* bsi,
                                    void* data,
                                    FutoInAsyncSteps_error_callback unhandled,
                                    futoin_release_cb release);

/** successStep(): add a step that calls success(args). MOVES `args`. Threads: loop thread (elsewhere: refused and reported as misuse). */
FUTOIN_API void futoin_wrap_success_step(FutoInAsyncSteps* bsi,
                                         FutoInArgs* args);

/** error_info of the flow (ours: ext; foreign: stateVariable("error_info")
 *  read as `const char*`, which is this library's convention — NULL if
 *  the foreign implementation keeps it differently). * Threads: loop thread (elsewhere: refused and reported as misuse).
 *  the foreign implementation keeps it differently). */
FUTOIN_API const char* futoin_wrap_error_info(FutoInAsyncSteps* bsi);

/** Code of the last error (ours: ext; foreign: stateVariable
 *  ("last_exception") as `const char*`, NULL if unknown). * Threads: loop thread (elsewhere: refused and reported as misuse).
 *  ("last_exception") as `const char*`, NULL if unknown). */
FUTOIN_API const char* futoin_wrap_error_code(FutoInAsyncSteps* bsi);

/** success(args) that says whether it was taken (see
 *  futoin_async_ext_table.try_success): 1 taken, 0 lost a race to the
 *  step's timeout or cancel (dropped quietly), FUTOIN_EINVAL misuse.
 *  Any thread. MOVES `args`. Over a foreign handle: the spec's success()
 *  slot, returning 1 (the foreign implementation cannot tell). @since 0.2.0 */
FUTOIN_API int futoin_wrap_try_success(FutoInAsyncSteps* bsi, FutoInArgs* args);

/** handle_error() that says whether it was taken, as
 *  futoin_wrap_try_success. Any thread. @since 0.2.0 */
FUTOIN_API int futoin_wrap_try_error(FutoInAsyncSteps* bsi,
                                     const char* code,
                                     const char* info);

/** add() whose data has a class (futoin/sys/host.h): release and origin.
 *  Over a foreign handle the data is released as futoin_wrap_add() does;
 *  the origin is not recorded there. Threads: loop thread. @since 0.3.0 */
FUTOIN_API void futoin_wrap_add_classed(FutoInAsyncSteps* bsi,
                                        void* data,
                                        FutoInAsyncSteps_execute_callback f,
                                        FutoInAsyncSteps_error_callback eh,
                                        const futoin_step_class* cls);

/** loop() whose data has a class (release and origin, as
 *  futoin_wrap_add_classed()). Threads: loop thread. @since 0.3.0 */
FUTOIN_API void futoin_wrap_loop_classed(
        FutoInAsyncSteps* bsi,
        void* data,
        void (*f)(FutoInAsyncSteps* bsi, void* data),
        const char* label,
        const futoin_step_class* cls);

/** repeat() whose data has a class, as futoin_wrap_loop_classed().
 *  Threads: loop thread. @since 0.3.0 */
FUTOIN_API void futoin_wrap_repeat_classed(
        FutoInAsyncSteps* bsi,
        void* data,
        size_t count,
        void (*f)(FutoInAsyncSteps* bsi, void* data, size_t i),
        const char* label,
        const futoin_step_class* cls);

/** addSync() whose data has a class, as futoin_wrap_add_classed().
 *  Threads: loop thread. @since 0.3.0 */
FUTOIN_API void futoin_wrap_add_sync_classed(
        FutoInAsyncSteps* bsi,
        FutoInSync* sync,
        void* data,
        FutoInAsyncSteps_execute_callback f,
        FutoInAsyncSteps_error_callback eh,
        const futoin_step_class* cls);

/** The async stack of the last error of the flow of `bsi`, or NULL (and
 *  always NULL over a foreign handle). Threads: loop thread. @since 0.3.0 */
FUTOIN_API const futoin_async_stack* futoin_wrap_async_stack(
        FutoInAsyncSteps* bsi);

/** Attach a language exception object as last_exception (MOVES `value`).
 *  On a foreign handle the value is cleaned up at once and 0 returned. * Threads: loop thread (elsewhere: refused and reported as misuse).
 *  On a foreign handle the value is cleaned up at once and 0 returned. */
FUTOIN_API int futoin_wrap_set_last_exception(FutoInAsyncSteps* bsi,
                                              FutoInBinaryValue* value);

/** The language exception object attached above, or NULL. Threads: loop thread (elsewhere: refused and reported as misuse). */
FUTOIN_API const FutoInBinaryValue* futoin_wrap_last_exception(
        FutoInAsyncSteps* bsi);

#ifdef __cplusplus
}
#endif

#endif /* FUTOIN_SYS_WRAP_H */
