/**
 * @file futoin/async.h
 * @brief The C runtime API of libfutoin_async: create an AsyncTool (event
 *        loop), create root AsyncSteps on it, run, free.
 *
 * Threading: a tool and every flow on it belong to one thread, the "loop
 * thread" (the thread that created the tool, or the one that last entered
 * futoin_tool_run()). Functions marked "any thread" may be called from other
 * threads; all the others must be called on the loop thread, and most of
 * them refuse a call from another thread and report it as misuse (each
 * declaration says which). See futoin/ftn12.h for the rules of the FTN12
 * table itself.
 *
 * Typical use:
 * @code
 *   futoin_tool *tool;
 *   futoin_tool_new(&tool, NULL);
 *   FutoInAsyncSteps *as = futoin_root_new(tool);
 *   as->api->add(as, NULL, my_step, my_errors);
 *   as->api->execute(as, NULL, on_unhandled);
 *   futoin_tool_run(tool);      // until no flow, immediate or timer is left
 *   as->api->free(as);
 *   futoin_tool_free(tool);
 * @endcode
 *
 * @since 0.1.0
 */
#ifndef FUTOIN_ASYNC_H
#define FUTOIN_ASYNC_H

#include <futoin/errors.h>
#include <futoin/export.h>
#include <futoin/ftn12.h>

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Return codes of the C runtime API (0 is success). */
#define FUTOIN_OK 0
#define FUTOIN_EINVAL (-22) /**< bad argument */
#define FUTOIN_ENOMEM (-12) /**< out of memory */
#define FUTOIN_EBUSY (-16)  /**< object still in use (e.g. roots alive) */
#define FUTOIN_EVERSION (-95) /**< unknown structure / table version */

#define FUTOIN_VERSION_MAJOR 0
#define FUTOIN_VERSION_MINOR 3
#define FUTOIN_VERSION_PATCH 0
#define FUTOIN_VERSION_STRING "0.3.0"
/** Version as one number: major * 10000 + minor * 100 + patch. */
#define FUTOIN_VERSION_NUMBER                                                  \
    (FUTOIN_VERSION_MAJOR * 10000 + FUTOIN_VERSION_MINOR * 100                 \
     + FUTOIN_VERSION_PATCH)

/** The library's version string, e.g. "0.1.0". Static storage. Threads: any thread. */
FUTOIN_API const char* futoin_async_version(void);
/** The library's version as FUTOIN_VERSION_NUMBER would compute it. Threads: any thread. */
FUTOIN_API int futoin_async_version_number(void);

/** An AsyncTool: one event loop (libuv), one thread. Opaque. */
typedef struct futoin_tool futoin_tool;

/**
 * Called for API misuse that cannot be reported into a flow as
 * InternalError, e.g. success() through the handle of a step that already
 * finished. `code` is FUTOIN_ERR_INTERNAL_ERROR, `message` says what was
 * misused; both are valid during the call only. Runs on the thread that
 * misused the API.
 */
typedef void (*futoin_misuse_cb)(
        void* data, const char* code, const char* message);

/**
 * Options of futoin_tool_new(). Versioned: see FUTOIN_TOOL_OPTIONS_INIT.
 * Fields are only ever added at the end, each with the version that added
 * it; the library reads no field past those of the `version` the caller
 * set, and gives the later ones their defaults.
 */
typedef struct futoin_tool_options
{
    unsigned version;      /**< FUTOIN_TOOL_OPTIONS_VERSION */
    void* uv_loop;         /**< attach to this `uv_loop_t*`; NULL = own one */
    futoin_misuse_cb misuse; /**< NULL = print to stderr */
    void* misuse_data;
    /**
     * Trimming on idle: once the loop has run none of the tool's callbacks
     * for this many milliseconds after its memory grew (record pools, the
     * immediate queue, timer storage), it gives memory back as
     * futoin_tool_trim() does, from a libuv timer that never keeps the loop
     * alive. Trimming comes between one and two such periods after the last
     * callback, and only while something runs the loop (futoin_tool_run()
     * waiting for an event, or the owner of an attached loop); a loop that
     * is not run trims nothing. 0 = off. Default
     * FUTOIN_TOOL_TRIM_IDLE_MS_DEFAULT, also for callers of version 1.
     * @since 0.3.0 (version 2)
     */
    uint32_t trim_idle_ms;
    /**
     * Virtual time, for tests: the tool never waits on the wall clock. Its
     * clock starts at 0 and moves only when futoin_tool_advance() moves it;
     * every timer of the tool follows it (futoin_tool_deferred(),
     * sched_deferred(), step timeouts, the periods of Throttle and
     * Limiter). futoin_tool_run() runs what is due now and returns instead
     * of waiting for the next timer. Immediates, calls posted from other
     * threads and I/O work as on a real clock.
     *
     * Two things stay on the wall clock because they are about the
     * machine, not about the flows: the time slice that bounds a burst of
     * busy work (where a flow that never waits yields to due timers and
     * I/O), and trimming on idle (`trim_idle_ms`). A test on a virtual
     * tool should therefore not depend on where a burst of busy work is
     * cut: a timer due now may fire inside a long chain of steps that
     * never waits, as on a real clock.
     *
     * Needs the tool's own loop: with `uv_loop` set, futoin_tool_new()
     * refuses it (FUTOIN_EINVAL), since the loop's owner runs that loop
     * and its own timers on the wall clock. false = the wall clock
     * (libuv's loop time). Default false, also for callers of versions 1
     * and 2.
     * @since 0.3.0 (version 3)
     */
    bool virtual_time;
} futoin_tool_options;

/** The default of futoin_tool_options.trim_idle_ms: 10 s, as jemalloc's
 *  default decay of unused pages. @since 0.3.0 */
#define FUTOIN_TOOL_TRIM_IDLE_MS_DEFAULT 10000u

/** Version 1: version, uv_loop, misuse, misuse_data. Version 2 (0.3.0):
 *  trim_idle_ms. Version 3 (0.3.0): virtual_time. */
#define FUTOIN_TOOL_OPTIONS_VERSION 3
#define FUTOIN_TOOL_OPTIONS_INIT                                               \
    {                                                                          \
        FUTOIN_TOOL_OPTIONS_VERSION, NULL, NULL, NULL,                         \
                FUTOIN_TOOL_TRIM_IDLE_MS_DEFAULT, false                        \
    }

/**
 * Initialise `opts` to the defaults of `version`, as FUTOIN_TOOL_OPTIONS_INIT
 * does for the current one. Only the fields of that version are written:
 * a caller built against version 1 passes the smaller struct.
 * @return FUTOIN_OK, or FUTOIN_EVERSION for a version this library lacks.
 * Threads: any thread.
 */
FUTOIN_API int futoin_tool_options_init(
        futoin_tool_options* opts, unsigned version);

/**
 * Create a tool. With `opts->uv_loop` set, the tool attaches to that loop
 * (whoever runs it, e.g. luv or uvloop, drives our flows too); otherwise it
 * owns a private loop that futoin_tool_run() drives.
 * @param[out] out the new tool; set only on success.
 * @param opts NULL for defaults.
 * @return FUTOIN_OK, FUTOIN_EINVAL, FUTOIN_EVERSION or FUTOIN_ENOMEM.
 * Threads: any thread; the calling thread becomes the loop thread.
 */
FUTOIN_API int futoin_tool_new(
        futoin_tool** out, const futoin_tool_options* opts);

/**
 * Free a tool. Refused with FUTOIN_EBUSY (and nothing freed) while roots
 * created on it are still alive. Pending immediates and timers are dropped
 * without being called. An attached loop is left open and is never run
 * from here (so this may be called from the loop owner's own callbacks):
 * our handles are closed, and the tool's memory is released by their close
 * callbacks when the owner next runs the loop, as for any libuv handle.
 * Threads: the loop thread, or any thread once no futoin_tool_run() is on any stack.
 */
FUTOIN_API int futoin_tool_free(futoin_tool* tool);

/**
 * Run the loop until nothing is left to do: no executing flow, immediate or
 * timer. A flow waiting for an external event (waitExternal, setTimeout)
 * keeps it running. The calling thread becomes the loop thread.
 *
 * On a virtual-time tool (futoin_tool_options.virtual_time) it never
 * waits: it runs what is due now (immediates, timers due at the virtual
 * clock's time, calls already posted from other threads, I/O that is
 * ready) until nothing is, and returns, however many flows still wait for
 * a timer or an event. futoin_tool_advance() moves the clock; to wait for
 * another thread, join it (or wait for its signal) and run again.
 *
 * A uv_stop() of the tool's loop from one of its callbacks ends this run
 * early, and only this one (the request is consumed, as uv_run() does,
 * also when the callback ran before the loop's first turn): the next run
 * goes on with what is left.
 * @return FUTOIN_OK, or FUTOIN_EINVAL for an attached (not owned) loop.
 * Threads: any thread, one at a time; the calling thread becomes the loop thread.
 */
FUTOIN_API int futoin_tool_run(futoin_tool* tool);

/**
 * One non-blocking pass of the loop (UV_RUN_NOWAIT).
 * @return 1 if more work is pending, 0 if idle, FUTOIN_EINVAL on misuse.
 * Threads: the loop thread.
 */
FUTOIN_API int futoin_tool_run_nowait(futoin_tool* tool);

/**
 * Virtual time: move the clock of a virtual-time tool `ms` milliseconds on
 * and run everything that falls due up to that point, in due-time order:
 * first what is due now (as futoin_tool_run()), then, timer by timer, the
 * clock jumps to the next due time and runs what is due then (the timers
 * due at that time, in the order they were started, then the immediates
 * and steps they made ready), including timers that those callbacks start
 * while it advances, if they fall due by the end. The clock then stands at
 * the old time + `ms`. advance(0) is futoin_tool_run(). As with
 * futoin_tool_run(), a uv_stop() of the tool's loop from a callback ends it
 * early; the clock then stays at the due time it had reached, and the next
 * call goes on from there.
 *
 * Nothing here waits on the wall clock: a flow that times out after a
 * minute of virtual time does so in microseconds.
 * @return FUTOIN_OK; FUTOIN_EINVAL (reported as misuse) for a tool on the
 *         wall clock, a call from inside one of the tool's callbacks or
 *         while futoin_tool_run() runs, another thread than the loop
 *         thread, or a clock that would pass UINT64_MAX.
 * Threads: the loop thread; never from inside a callback of the tool.
 * @since 0.3.0
 */
FUTOIN_API int futoin_tool_advance(futoin_tool* tool, uint64_t ms);

/**
 * When the tool's next timer is due: `*ms` is set to the milliseconds from
 * now (the tool's clock, futoin_tool_now()) until it, 0 when it is due
 * already, so `futoin_tool_advance(tool, ms)` reaches it exactly. Timers
 * of every kind count (futoin_tool_deferred(), sched_deferred(), step
 * timeouts, Throttle and Limiter periods). Meant for virtual-time tools;
 * on a wall-clock tool it answers for the wall clock.
 * @return 1 with `*ms` set when a timer is pending; 0 when none is (`*ms`
 *         is left as it was); FUTOIN_EINVAL for NULL arguments or another
 *         thread (reported as misuse).
 * Threads: the loop thread.
 * @since 0.3.0
 */
FUTOIN_API int futoin_tool_next_due(futoin_tool* tool, uint64_t* ms);

/**
 * The tool's clock, in milliseconds: what every timer of the tool is
 * measured against. A virtual-time tool's clock starts at 0 and moves only
 * with futoin_tool_advance(); a wall-clock tool's is libuv's loop time
 * (uv_now(): monotonic, from an arbitrary point, refreshed at every loop
 * turn). Code that needs "the time" next to the tool's timers (a deadline,
 * an elapsed time in a log) reads this, so that it follows a virtual clock
 * in tests. 0 for a NULL tool or from another thread (reported as misuse).
 * Threads: the loop thread.
 * @since 0.3.0
 */
FUTOIN_API uint64_t futoin_tool_now(futoin_tool* tool);

/** 1 if the tool runs on virtual time (futoin_tool_options.virtual_time),
 *  0 if on the wall clock or NULL. Threads: any thread. @since 0.3.0 */
FUTOIN_API int futoin_tool_is_virtual(futoin_tool* tool);

/** The tool's `uv_loop_t*` (owned or attached). Threads: any thread (libuv itself is loop-thread only). */
FUTOIN_API void* futoin_tool_uv_loop(futoin_tool* tool);

/**
 * Schedule `cb(data)` on the loop thread, after the current callback.
 * Any thread; never blocks. From the loop thread the handle can be
 * cancelled; from other threads the returned handle is inert (is_valid = 0)
 * and the callback cannot be cancelled. Callbacks posted from other
 * threads run in the order each thread posted them, within the loop's
 * time slices like any other work: a flood of them takes turns with the
 * loop's immediates, timers and I/O instead of holding the loop (since
 * 0.3.0). Those still queued when the tool is freed are dropped.
 *
 * When nothing was queued (a NULL tool or `cb`, the tool closing, out of
 * memory, from any thread), `cb` will never run and the returned handle's
 * data3 is FUTOIN_HANDLE_NOT_QUEUED (since 0.3.0): test it with
 * FUTOIN_HANDLE_QUEUED(). Each of these but a NULL tool is also reported
 * as misuse. Such a handle is inert.
 */
FUTOIN_API FutoInHandle futoin_tool_immediate(
        futoin_tool* tool, void (*cb)(void* data), void* data);

/**
 * data3 of a handle that futoin_tool_immediate() or futoin_tool_deferred()
 * returned without queueing its callback, which will then never run.
 * Cancelling such a handle is a no-op and is_valid() says 0, as for the
 * all-zero handle. @since 0.3.0
 */
#define FUTOIN_HANDLE_NOT_QUEUED ((ptrdiff_t)-1)
/** Whether the futoin_tool_immediate() or futoin_tool_deferred() call that
 *  returned `handle` queued its callback (from another thread: whether the
 *  post was queued; it runs unless the tool is freed first). Meaningful for
 *  the returned value only, not after futoin_tool_cancel() reset it.
 *  @since 0.3.0 */
#define FUTOIN_HANDLE_QUEUED(handle)                                           \
    ((handle).data3 != FUTOIN_HANDLE_NOT_QUEUED)

/** Schedule `cb(data)` after `delay_ms` on the loop thread. Loop thread
 *  (elsewhere: refused, reported as misuse). When nothing was queued the
 *  handle's data3 is FUTOIN_HANDLE_NOT_QUEUED, as for
 *  futoin_tool_immediate(). */
FUTOIN_API FutoInHandle futoin_tool_deferred(
        futoin_tool* tool,
        uint32_t delay_ms,
        void (*cb)(void* data),
        void* data);

/**
 * Cancel a scheduled callback. A handle that already ran, was cancelled,
 * is zeroed or is stale (generation mismatch) is ignored: never an error.
 * The handle is reset to an inert value. Loop thread.
 */
FUTOIN_API void futoin_tool_cancel(futoin_tool* tool, FutoInHandle* handle);

/** 1 if the handle still refers to a scheduled callback, else 0. Threads: loop thread (elsewhere: refused and reported as misuse). */
FUTOIN_API int futoin_tool_is_valid(
        futoin_tool* tool, const FutoInHandle* handle);

/** 1 if called on the tool's loop thread. Any thread. */
FUTOIN_API int futoin_tool_is_same_thread(futoin_tool* tool);

/** How many misuses were reported through the misuse callback so far.
 *  Any thread. */
FUTOIN_API size_t futoin_tool_misuse_count(futoin_tool* tool);

/** What a tool did and holds. Versioned: see FUTOIN_TOOL_STATS_INIT.
 *  @since 0.2.0 */
typedef struct futoin_tool_stats
{
    unsigned version;        /**< FUTOIN_TOOL_STATS_VERSION */
    size_t misuse;           /**< calls refused and reported as misuse */
    /** Completions (success()/handle_error() of a waiting step, from any
     *  thread) dropped because the step had already ended by its timeout,
     *  a cancel or an error unwinding past it: a lost race, not misuse. */
    size_t late_completions;
    size_t live_roots;       /**< roots created and not freed */
    size_t live_steps;       /**< step records in use (queued or running) */
    size_t pool_bytes;       /**< memory of the record pools now mapped */
    size_t trimmed_bytes;    /**< given back so far, by futoin_tool_trim()
                                  and by trimming on idle */
} futoin_tool_stats;

#define FUTOIN_TOOL_STATS_VERSION 1
#define FUTOIN_TOOL_STATS_INIT                                                 \
    {                                                                          \
        FUTOIN_TOOL_STATS_VERSION, 0, 0, 0, 0, 0, 0                            \
    }

/**
 * Fill `out` (whose `version` the caller set, e.g. by FUTOIN_TOOL_STATS_INIT).
 * Loop thread.
 * @return FUTOIN_OK; FUTOIN_EINVAL for NULL arguments or another thread;
 *         FUTOIN_EVERSION for a version this library lacks.
 * @since 0.2.0
 */
FUTOIN_API int futoin_tool_get_stats(futoin_tool* tool, futoin_tool_stats* out);

/**
 * Give memory back to the system: record-pool blocks whose records are all
 * free, an immediate queue or timer storage grown for a peak that passed,
 * and (with glibc) the C heap's free tail. Steady-state execution still
 * allocates nothing; a later peak takes the memory again. The tool also
 * does this by itself once its loop has been idle for a while
 * (futoin_tool_options.trim_idle_ms). Handles of
 * finished steps stay safe to call through (they read as finished: a late
 * completion is still dropped as a lost race). Loop thread, at any time
 * (also from inside a callback).
 * @return bytes given back (approximate), or 0.
 * @since 0.2.0
 */
FUTOIN_API size_t futoin_tool_trim(futoin_tool* tool);

/**
 * Create a root AsyncSteps on `tool`. Add steps through `as->api`, then
 * `execute`; release it with `as->api->free(as)` (which cancels a running
 * flow first). Loop thread.
 * @return the root, or NULL on out-of-memory / NULL tool.
 * Threads: loop thread (elsewhere: refused and reported as misuse).
 */
FUTOIN_API FutoInAsyncSteps* futoin_root_new(futoin_tool* tool);

/** The tool a root or step handle of ours belongs to; NULL if not ours. Threads: any thread, for a live handle. */
FUTOIN_API futoin_tool* futoin_async_tool(FutoInAsyncSteps* bsi);

/**
 * A live dump: write to `out` a text report of every live root of `tool`
 * (created and not freed), what each of its flows waits on, for how long,
 * where (its async stack), and the root's state variables. For a hung
 * program: call it from a step, a timer or a signal-handling callback on
 * the loop thread. Nothing is changed.
 *
 * The format is line-oriented and stable (fields are only added at the
 * end of a line; new line kinds may appear): every line but the first and
 * the last starts with `root=<id>`, so `grep '^root=7 '` shows one root;
 * fields are `name=value` with no spaces in a value, except the frame of
 * an `at=` or `section=` line, which runs to the end of the line. Times are the tool's
 * (futoin_tool_now(): virtual on a virtual-time tool), in ms. Roots come in
 * the order of their ids; a root's flows depth first (the main flow is
 * 0, a parallel() branch names its parallel's flow in `parent=`):
 *
 *     futoin-dump version=1 now=<ms> roots=<n>
 *     root=<id> state=<new|running|done> flows=<n> keys=<n>
 *     root=<id> flow=<f> [parent=<f>] state=<s>
 *     root=<id> flow=<f> wait=<kind> since=<ms> waited=<ms> [due=<ms>] ...
 *     root=<id> flow=<f> at=<i> <language> <function> [(<file>[:<line>])]
 *     root=<id> flow=<f> section=<language> <function> [(<file>[:<line>])]
 *     root=<id> flow=<f> elided=<n>
 *     root=<id> key=<name>
 *     end roots=<n>
 *
 * A flow's state: `waiting` (its top step waits: a `wait=` line follows),
 * `ready` (scheduled to run), `running` (on the C stack now: the dump was
 * called from it), `branches` (a parallel() waits for the branch flows
 * listed after it), `idle` (not started, or finished). The `wait=` kinds
 * (futoin_wait_kind, futoin/sys/hooks.h):
 *  - `timer due=<ms>`: only its own setTimeout() (any language);
 *  - `external [due=<ms>]`: a C step's waitExternal() or cancel handler,
 *    a timeout bounding it when `due` is there;
 *  - `sync object=<Mutex|Throttle|Limiter|sync> [place=<k> queued=<n>]`:
 *    queued on a sync object (an addSync()); `place` is its 1-based place
 *    in that object's queue of `queued` flows (our objects only). The
 *    waiting step is the object's own; a `section=` line after the wait
 *    line names the step the object guards (the addSync() call's);
 *  - `foreign language=<name> [due=<ms>]`: the same wait by a step of
 *    another language (its origin's language is not "c": a binding's or
 *    a hosted language's step), which that language's runtime completes.
 * `since` is when the wait began; `waited` = now - since. The `at=` lines
 * are the flow's async stack from its top step down, the frames an error
 * there would record (futoin/sys/host.h, futoin_async_stack_format()):
 * innermost first, the innermost FUTOIN_ASYNC_STACK_INNER and the
 * outermost FUTOIN_ASYNC_STACK_OUTER frames, an `elided=` line for the
 * ones in between. `key=` lines list the names of the root's state
 * variables (FTN12 §1.7 stateVariable(), futoin_state_set()), sorted.
 *
 * @return the number of roots listed (>= 0); FUTOIN_EINVAL for a NULL tool
 *         or `out`, or a call from another thread (reported as misuse);
 *         FUTOIN_ENOMEM (nothing written). Write errors are left in `out`
 *         (ferror()).
 * Threads: the loop thread.
 * @since 0.3.0
 */
FUTOIN_API int futoin_tool_dump(futoin_tool* tool, FILE* out);

#ifdef __cplusplus
}
#endif

#endif /* FUTOIN_ASYNC_H */
