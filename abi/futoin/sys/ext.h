/**
 * @file futoin/sys/ext.h
 * @brief For bindings and other implementations: libfutoin_async's
 *        extension table and the versioned API table for dlopen consumers.
 *
 * The FTN12 table (futoin/ftn12.h) has no way to say when callback `data`
 * may be dropped, and no way to read error_info / last_exception as values.
 * This table adds both for handles of OUR implementation. It is reached by
 * futoin_async_ext(bsi), which recognises our FTN12 tables by pointer
 * identity and returns NULL for any other implementation's handle; it never
 * reads past slot 24 of a table it did not create.
 *
 * Tables only grow at the end. Each slot says the version that added it;
 * check `version` (or `size`) before using a slot newer than the one you
 * were built for. The layout is frozen by static assertions below.
 *
 * @since 0.1.0
 */
#ifndef FUTOIN_SYS_EXT_H
#define FUTOIN_SYS_EXT_H

#include <futoin/async.h>
#include <futoin/sync.h>
#include <futoin/sys/host.h>
#include <futoin/sys/hooks.h>
#include <futoin/trace.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Called exactly once when the runtime no longer needs `data`: the step (or
 * cancel handler, or root) it was given with ran and finished, was
 * cancelled, was dropped unrun, or its root was freed. Runs on the loop
 * thread. It must not call back into the flow that is being torn down.
 */
typedef void (*futoin_release_cb)(void* data);

/** Extension table version 1 (library 0.1.0). */
#define FUTOIN_EXT_VERSION_1 1u
/** Extension table version 2 (library 0.2.0): try_success, try_error. */
#define FUTOIN_EXT_VERSION_2 2u
/** Extension table version 3 (library 0.3.0): add_classed, async_stack. */
#define FUTOIN_EXT_VERSION_3 3u
/** Extension table version 4 (library 0.3.0, later): chain. */
#define FUTOIN_EXT_VERSION_4 4u
/** Extension table version 5 (library 0.3.0, later): loop_classed,
 *  repeat_classed, addSync_classed; futoin_step_class.frame. */
#define FUTOIN_EXT_VERSION_5 5u
/** Extension table version 6 (library 0.3.0, later): set_hooks
 *  (futoin/sys/hooks.h). */
#define FUTOIN_EXT_VERSION_6 6u
/** Extension table version 7 (library 0.3.0, later): trace_set,
 *  trace_get (futoin/trace.h). */
#define FUTOIN_EXT_VERSION_7 7u
/** Extension table version 8 (library 0.3.0, later): chain_kept. */
#define FUTOIN_EXT_VERSION_8 8u
#define FUTOIN_EXT_VERSION FUTOIN_EXT_VERSION_8

typedef struct futoin_async_ext_table
{
    /** sizeof(futoin_async_ext_table) of the library that made the table */
    uint32_t size;
    /** newest FUTOIN_EXT_VERSION_* whose slots are present */
    uint32_t version;

    /* ---- version 1 ---- */

    /** add() whose `data` is released by `release` (NULL: none). Threads: loop thread. @since 1 */
    void (*add)(FutoInAsyncSteps* bsi,
                void* data,
                FutoInAsyncSteps_execute_callback f,
                FutoInAsyncSteps_error_callback eh,
                futoin_release_cb release);
    /** parallel() whose `data` (of `eh`) is released. Threads: loop thread. @since 1 */
    FutoInAsyncSteps* (*parallel)(FutoInAsyncSteps* bsi,
                                  void* data,
                                  FutoInAsyncSteps_error_callback eh,
                                  futoin_release_cb release);
    /** setCancel() whose `data` is released with the step (or when a
     *  later setCancel() replaces it). Threads: loop thread. @since 1 */
    void (*setCancel)(FutoInAsyncSteps* bsi,
                      void* data,
                      FutoInAsyncSteps_cancel_callback ch,
                      futoin_release_cb release);
    /** loop() whose `data` is released when the loop ends. Threads: loop thread. @since 1 */
    void (*loop)(FutoInAsyncSteps* bsi,
                 void* data,
                 void (*f)(FutoInAsyncSteps* bsi, void* data),
                 const char* label,
                 futoin_release_cb release);
    /** repeat() whose `data` is released when the loop ends. Threads: loop thread. @since 1 */
    void (*repeat)(FutoInAsyncSteps* bsi,
                   void* data,
                   size_t count,
                   void (*f)(FutoInAsyncSteps* bsi, void* data, size_t i),
                   const char* label,
                   futoin_release_cb release);
    /** addSync() whose `data` is released. Threads: loop thread. @since 1 */
    void (*addSync)(FutoInAsyncSteps* bsi,
                    FutoInSync* sync,
                    void* data,
                    FutoInAsyncSteps_execute_callback f,
                    FutoInAsyncSteps_error_callback eh,
                    futoin_release_cb release);
    /** execute() whose `data` (of `unhandled`) is released when the root
     *  is freed or executed again. Threads: any thread (posted to the loop thread). @since 1 */
    void (*execute)(FutoInAsyncSteps* bsi,
                    void* data,
                    FutoInAsyncSteps_error_callback unhandled,
                    futoin_release_cb release);
    /** error_info of the root: the info of the last error, or NULL. Valid
     *  until the next error of that root. Threads: loop thread. @since 1 */
    const char* (*error_info)(FutoInAsyncSteps* bsi);
    /** Code of the root's last error ("last_exception"), or NULL. Threads: loop thread. @since 1 */
    const char* (*error_code)(FutoInAsyncSteps* bsi);
    /** Attach a language exception object to the root as last_exception.
     *  MOVES `value` (the caller's copy is reset); the previous one is
     *  cleaned up. It belongs to one error: a binding calls it through the
     *  handle of the failing step, right before the handle_error() that
     *  raises that error, or right after a try_error() that returned 1.
     *  The root's next error replaces it: an error raised with no
     *  exception attached (a Timeout, a C step's error) leaves
     *  last_exception NULL, never the exception of an error handled
     *  before (since 0.3.0). Threads: loop thread. @since 1 */
    void (*set_last_exception)(FutoInAsyncSteps* bsi, FutoInBinaryValue* value);
    /** The exception object set above, or NULL. Borrowed: valid until the
     *  next set_last_exception(), the root's next error, or the root is
     *  freed. Threads: loop thread. @since 1 */
    const FutoInBinaryValue* (*last_exception)(FutoInAsyncSteps* bsi);
    /** successStep(): a step that only calls success(args) — MOVES
     *  `args`. Threads: loop thread. @since 1 */
    void (*successStep)(FutoInAsyncSteps* bsi, FutoInArgs* args);
    /** The tool the handle belongs to. Threads: any thread, for a live handle. @since 1 */
    futoin_tool* (*tool)(FutoInAsyncSteps* bsi);

    /* ---- version 2 ---- */

    /**
     * success(args) that says whether it was taken. Any thread: from
     * another thread the completion is posted to the loop thread, never
     * blocking. MOVES `args` (dropped and cleaned up when not taken).
     * @return 1 when this call decides the step's outcome (its flow may
     *         still be cancelled as a whole before the values are used);
     *         0 when the step already ended by its timeout, a cancel or an
     *         error unwinding past it: the completion lost a race, which is
     *         normal, and is dropped quietly and counted
     *         (futoin_tool_stats.late_completions); FUTOIN_EINVAL for
     *         misuse (a step that completed normally or was claimed by
     *         another completion), also reported to the misuse callback.
     * @since 2 */
    int (*try_success)(FutoInAsyncSteps* bsi, FutoInArgs* args);
    /** handle_error(code, info) that says whether it was taken, as
     *  try_success. Any thread; copies `code` and `info`. @since 2 */
    int (*try_error)(FutoInAsyncSteps* bsi, const char* code, const char* info);

    /* ---- version 3 ---- */

    /** add() whose `data` has a class (futoin/sys/host.h): cls->release
     *  runs exactly once (at once when the call is refused), and
     *  cls->origin says where the step came from when an async stack is
     *  recorded. `cls` is kept (static storage); NULL: as add(). Threads:
     *  loop thread. @since 3 */
    void (*add_classed)(FutoInAsyncSteps* bsi,
                        void* data,
                        FutoInAsyncSteps_execute_callback f,
                        FutoInAsyncSteps_error_callback eh,
                        const futoin_step_class* cls);
    /** The async stack recorded for the last error of the root of `bsi`,
     *  or NULL (futoin/sys/host.h). Threads: loop thread. @since 3 */
    const futoin_async_stack* (*async_stack)(FutoInAsyncSteps* bsi);

    /* ---- version 4 ---- */

    /**
     * For bindings: run a language's consecutive steps without a crossing
     * each. Call it inside the execute callback of step `bsi`, in place of
     * success() with no values, when the values to pass on stay in the
     * binding. If the step that runs next is a plain add() step whose
     * execute callback is one of `fns[0..nfns)` and nothing else stands
     * in the way (another outcome or sub-steps or waiting asked for, a
     * cancel or free pending, an error being raised, the tool's time
     * slice used up), `bsi` is completed and popped (its data released),
     * that step is started, and its handle is returned with its `data` in
     * `*data`: the caller runs its body now, as the callback of that
     * step, and everything about the step (success(), errors, waiting,
     * chain() again) goes through the returned handle; no values are
     * passed to it by the runtime. Otherwise it returns NULL having done
     * nothing: complete `bsi` the usual way. Never reported as misuse.
     * Threads: loop thread. @since 4
     */
    FutoInAsyncSteps* (*chain)(FutoInAsyncSteps* bsi,
                               const FutoInAsyncSteps_execute_callback* fns,
                               size_t nfns,
                               void** data);

    /* ---- version 5 ---- */

    /** loop() whose `data` has a class, as add_classed(): cls->release
     *  runs exactly once (when the loop ends, or at once when the call is
     *  refused), and every iteration's frame in an async stack is the
     *  class's. NULL `cls`: as loop() without release. Threads: loop
     *  thread. @since 5 */
    void (*loop_classed)(FutoInAsyncSteps* bsi,
                         void* data,
                         void (*f)(FutoInAsyncSteps* bsi, void* data),
                         const char* label,
                         const futoin_step_class* cls);
    /** repeat() whose `data` has a class, as loop_classed(). Threads:
     *  loop thread. @since 5 */
    void (*repeat_classed)(FutoInAsyncSteps* bsi,
                           void* data,
                           size_t count,
                           void (*f)(FutoInAsyncSteps* bsi, void* data, size_t i),
                           const char* label,
                           const futoin_step_class* cls);
    /** addSync() whose `data` has a class, as add_classed(): the guarded
     *  step's frame is the class's. Threads: loop thread. @since 5 */
    void (*addSync_classed)(FutoInAsyncSteps* bsi,
                            FutoInSync* sync,
                            void* data,
                            FutoInAsyncSteps_execute_callback f,
                            FutoInAsyncSteps_error_callback eh,
                            const futoin_step_class* cls);

    /* ---- version 6 ---- */

    /** futoin_tool_set_hooks() on the tool of `bsi` (any live handle of
     *  ours: root, step or parallel): set its hooks (a copy is kept), or
     *  clear them (NULL). Returns as futoin_tool_set_hooks();
     *  FUTOIN_EINVAL for a NULL or stale handle. Threads: loop thread,
     *  from inside a hook too (futoin/sys/hooks.h). @since 6 */
    int (*set_hooks)(FutoInAsyncSteps* bsi, const futoin_hooks* hooks);

    /* ---- version 7 ---- */

    /** futoin_trace_set() (futoin/trace.h): the trace context of the root
     *  of `bsi` from a W3C traceparent; NULL clears. Threads: loop thread.
     *  @since 7 */
    int (*trace_set)(FutoInAsyncSteps* bsi, const char* traceparent);
    /** futoin_trace_get() (futoin/trace.h): the context as step `bsi`
     *  sees it. Threads: loop thread. @since 7 */
    int (*trace_get)(FutoInAsyncSteps* bsi, futoin_trace_info* out);

    /* ---- version 8 ---- */

    /**
     * chain() for a binding that releases the data of its own steps
     * itself: the same, but when it returns a handle, the step of `bsi`
     * was completed and popped WITHOUT running the release hook its data
     * came with (add()'s `release`, add_classed()'s cls->release): that
     * data is the caller's again, to release itself (before it runs the
     * returned step, as chain() would have). When it returns NULL nothing
     * changed, as with chain(). Saves the hook's call per chained step
     * where the caller can release inline. Threads: loop thread. @since 8
     */
    FutoInAsyncSteps* (*chain_kept)(FutoInAsyncSteps* bsi,
                                    const FutoInAsyncSteps_execute_callback* fns,
                                    size_t nfns,
                                    void** data);
} futoin_async_ext_table;

/**
 * The extension table of one of our handles (root, step or parallel), or
 * NULL for NULL, a foreign implementation's handle or a handle whose
 * `api` is NULL. Only `bsi->api` is read to decide. Any thread.
 */
FUTOIN_API const futoin_async_ext_table* futoin_async_ext(FutoInAsyncSteps* bsi);

/* ---- Versioned API table for dlopen consumers ---------------------------- */

/** API table version 1 (library 0.1.0). */
#define FUTOIN_API_VERSION_1 1u
/** API table version 2 (library 0.2.0): tool_get_stats, tool_trim. */
#define FUTOIN_API_VERSION_2 2u
#define FUTOIN_API_VERSION FUTOIN_API_VERSION_2

/**
 * Everything a consumer that dlopen()s the library needs, in one table, so
 * it resolves a single symbol (futoin_async_get_api). Slots mirror the
 * functions of futoin/async.h and futoin/errors.h of the same names.
 */
typedef struct futoin_async_api
{
    uint32_t size;    /**< sizeof(futoin_async_api) of the library */
    uint32_t version; /**< the newest FUTOIN_API_VERSION_* it has */
    /* ---- version 1 ---- */
    const char* (*version_string)(void);
    int (*version_number)(void);
    int (*tool_options_init)(futoin_tool_options* opts, unsigned version);
    int (*tool_new)(futoin_tool** out, const futoin_tool_options* opts);
    int (*tool_free)(futoin_tool* tool);
    int (*tool_run)(futoin_tool* tool);
    int (*tool_run_nowait)(futoin_tool* tool);
    void* (*tool_uv_loop)(futoin_tool* tool);
    FutoInHandle (*tool_immediate)(futoin_tool* tool,
                                   void (*cb)(void* data), void* data);
    FutoInHandle (*tool_deferred)(futoin_tool* tool, uint32_t delay_ms,
                                  void (*cb)(void* data), void* data);
    void (*tool_cancel)(futoin_tool* tool, FutoInHandle* handle);
    int (*tool_is_valid)(futoin_tool* tool, const FutoInHandle* handle);
    int (*tool_is_same_thread)(futoin_tool* tool);
    size_t (*tool_misuse_count)(futoin_tool* tool);
    FutoInAsyncSteps* (*root_new)(futoin_tool* tool);
    futoin_tool* (*async_tool)(FutoInAsyncSteps* bsi);
    const futoin_async_ext_table* (*ext)(FutoInAsyncSteps* bsi);
    const char* (*error_name)(futoin_error e);
    int (*error_lookup)(const char* code);
    FutoInSync* (*mutex_new)(size_t max, size_t max_queue);
    int (*mutex_free)(FutoInSync* mutex);
    FutoInSync* (*throttle_new)(futoin_tool* tool, size_t max,
                                uint32_t period_ms, size_t max_queue);
    int (*throttle_free)(FutoInSync* throttle);
    int (*limiter_options_init)(futoin_limiter_options* opts, unsigned version);
    FutoInSync* (*limiter_new)(futoin_tool* tool,
                               const futoin_limiter_options* opts);
    int (*limiter_free)(FutoInSync* limiter);
    /* ---- version 2 ---- */
    int (*tool_get_stats)(futoin_tool* tool, futoin_tool_stats* out);
    size_t (*tool_trim)(futoin_tool* tool);
} futoin_async_api;

/** Name of the negotiation symbol, for dlsym(). */
#define FUTOIN_GET_API_SYMBOL "futoin_async_get_api"

/**
 * Negotiate: ask for the table of the API version you were built for.
 * @param version FUTOIN_API_VERSION as the consumer knows it.
 * @param[out] out set to a static table (never freed) whose first
 *        `version`-level slots have the layout the consumer expects; the
 *        table may be newer (check out->version / out->size).
 * @return FUTOIN_OK; FUTOIN_EVERSION (and *out = NULL) for version 0 or a
 *         version newer than this library: refused, not guessed;
 *         FUTOIN_EINVAL for out == NULL.
 * Threads: any thread.
 */
FUTOIN_API int futoin_async_get_api(uint32_t version,
                                    const futoin_async_api** out);

typedef int (*futoin_async_get_api_fn)(uint32_t version,
                                       const futoin_async_api** out);

/* ---- Frozen layout ------------------------------------------------------- */

#define FUTOIN__EXT_SLOT(n, f)                                                 \
    FUTOIN__SASSERT(offsetof(futoin_async_ext_table, f)                              \
                            == 8 + (n) * sizeof(void*),                        \
                    "ext slot " #n " (" #f ") moved")
FUTOIN__EXT_SLOT(0, add);
FUTOIN__EXT_SLOT(1, parallel);
FUTOIN__EXT_SLOT(2, setCancel);
FUTOIN__EXT_SLOT(3, loop);
FUTOIN__EXT_SLOT(4, repeat);
FUTOIN__EXT_SLOT(5, addSync);
FUTOIN__EXT_SLOT(6, execute);
FUTOIN__EXT_SLOT(7, error_info);
FUTOIN__EXT_SLOT(8, error_code);
FUTOIN__EXT_SLOT(9, set_last_exception);
FUTOIN__EXT_SLOT(10, last_exception);
FUTOIN__EXT_SLOT(11, successStep);
FUTOIN__EXT_SLOT(12, tool);
FUTOIN__EXT_SLOT(13, try_success);
FUTOIN__EXT_SLOT(14, try_error);
FUTOIN__EXT_SLOT(15, add_classed);
FUTOIN__EXT_SLOT(16, async_stack);
FUTOIN__EXT_SLOT(17, chain);
FUTOIN__EXT_SLOT(18, loop_classed);
FUTOIN__EXT_SLOT(19, repeat_classed);
FUTOIN__EXT_SLOT(20, addSync_classed);
FUTOIN__EXT_SLOT(21, set_hooks);
FUTOIN__EXT_SLOT(22, trace_set);
FUTOIN__EXT_SLOT(23, trace_get);
FUTOIN__EXT_SLOT(24, chain_kept);
FUTOIN__SASSERT(sizeof(futoin_async_ext_table) == 8 + 25 * sizeof(void*),
                "ext v8 size");

#define FUTOIN__API_SLOT(n, f)                                                 \
    FUTOIN__SASSERT(offsetof(futoin_async_api, f)                              \
                            == 8 + (n) * sizeof(void*),                        \
                    "api slot " #n " (" #f ") moved")
FUTOIN__API_SLOT(0, version_string);
FUTOIN__API_SLOT(1, version_number);
FUTOIN__API_SLOT(2, tool_options_init);
FUTOIN__API_SLOT(3, tool_new);
FUTOIN__API_SLOT(4, tool_free);
FUTOIN__API_SLOT(5, tool_run);
FUTOIN__API_SLOT(6, tool_run_nowait);
FUTOIN__API_SLOT(7, tool_uv_loop);
FUTOIN__API_SLOT(8, tool_immediate);
FUTOIN__API_SLOT(9, tool_deferred);
FUTOIN__API_SLOT(10, tool_cancel);
FUTOIN__API_SLOT(11, tool_is_valid);
FUTOIN__API_SLOT(12, tool_is_same_thread);
FUTOIN__API_SLOT(13, tool_misuse_count);
FUTOIN__API_SLOT(14, root_new);
FUTOIN__API_SLOT(15, async_tool);
FUTOIN__API_SLOT(16, ext);
FUTOIN__API_SLOT(17, error_name);
FUTOIN__API_SLOT(18, error_lookup);
FUTOIN__API_SLOT(19, mutex_new);
FUTOIN__API_SLOT(20, mutex_free);
FUTOIN__API_SLOT(21, throttle_new);
FUTOIN__API_SLOT(22, throttle_free);
FUTOIN__API_SLOT(23, limiter_options_init);
FUTOIN__API_SLOT(24, limiter_new);
FUTOIN__API_SLOT(25, limiter_free);
FUTOIN__API_SLOT(26, tool_get_stats);
FUTOIN__API_SLOT(27, tool_trim);
FUTOIN__SASSERT(sizeof(futoin_async_api) == 8 + 28 * sizeof(void*),
                "api v2 size");

#ifdef __cplusplus
}
#endif

#endif /* FUTOIN_SYS_EXT_H */
