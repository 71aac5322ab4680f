/**
 * @file futoin/sync.h
 * @brief FTN12 §1.11, §2.3–2.5: Mutex, Throttle and Limiter, the
 *        synchronisation objects for `addSync()`.
 *
 * Each constructor returns a `FutoInSync*` (spec §2.7.3): pass it to the
 * `addSync` slot of any step handle, or of a root before execute():
 * @code
 *   FutoInSync *mtx = futoin_mutex_new(1, FUTOIN_UNLIMITED);
 *   as->api->add(as, NULL, produce, NULL);          // success(a, b)
 *   as->api->addSync(as, mtx, NULL, section, on_error); // gets (a, b)
 *   as->api->add(as, NULL, consume, NULL);          // gets section's values
 *   ...
 *   futoin_mutex_free(mtx);   // once no flow uses it any more
 * @endcode
 *
 * **What addSync() guarantees** (for every object in this header):
 *  - The values that came into the addSync() step reach the critical
 *    section step; the values the section succeeds with reach the step
 *    after it, exactly as if there were no lock (§1.11.3).
 *  - The object is locked before the section step runs and unlocked after
 *    it (and everything it added) completes, fails or is cancelled, and on
 *    a timeout of any outer step. A flow that is still queued when it is
 *    cancelled or times out leaves the queue. Nothing is ever leaked.
 *  - Errors raised by the object itself are raised at the addSync() step
 *    *before* the section starts: the section's own error handler is not
 *    called for them, the handlers of the enclosing steps are. They are
 *    DefenseRejected for a full queue (see each constructor for its
 *    error_info) and InternalError, "addSync(): out of memory", when a
 *    pool could not grow.
 *
 * **Flows and re-entrance** (§1.11.4): the unit that holds a lock is the
 * flow: a root's sequence of steps, or one branch of a parallel(). A flow
 * that already holds an object and enters it again (a nested addSync() on
 * the same object) is let through at once and counted; the object is
 * released when its outermost section ends. Parallel branches are separate
 * flows and do not inherit their parent's lock: a branch that locks an
 * object its parent holds competes for it like any other flow (so a branch
 * waiting for a Mutex(1) that its own parent holds waits forever — that is
 * a deadlock in the program, and no detection is attempted, §1.11.5).
 *
 * **Other implementations**: the objects work with any FTN12 AsyncSteps
 * implementation, not only this library's: they use nothing but the
 * binary interface of the handle they get. For a handle that is not ours
 * the flow is identified by `rootId()`, so for such handles all parallel
 * branches of one root count as one flow.
 *
 * **Queueing**: a flow that cannot enter waits in a FIFO queue; the queue
 * never lets a newcomer overtake it. When a queue limit is set and the
 * queue is full, the newcomer gets `DefenseRejected` (§1.11.6) with an
 * `error_info` that names the object and the limit, e.g.
 * "Mutex: queue limit 3 reached".
 *
 * **Memory**: queue records and the table of flows inside come from a
 * per-object pool that only grows, to the peak number of flows queued and
 * inside at once. Locking and unlocking allocate nothing in steady state.
 *
 * **Threads**: an object is not thread-safe. Every flow that uses it, and
 * every call of this header on it, must be on one thread: the loop thread
 * of the tool(s) whose flows use it. Flows are resumed from that thread
 * (by the unlock of another flow, or by the period timer) through the
 * FTN12 success() of their waiting step. Throttle and Limiter take a tool
 * for their timer; flows of other tools on the same thread may use them
 * too, as long as the timer's tool is run.
 *
 * **Lifetime**: the caller owns the object. Free it only after every flow
 * that used it finished, was cancelled or freed (a free function refuses
 * with FUTOIN_EBUSY while any flow is inside or queued, which catches most
 * mistakes, but a flow that has just reached its addSync() step is not
 * seen). Free Throttle and Limiter before their tool.
 *
 * @since 0.1.0
 */
#ifndef FUTOIN_SYNC_H
#define FUTOIN_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include <futoin/async.h>

#ifdef __cplusplus
extern "C" {
#endif

/** "No limit" for the queue limits below (the spec's `null`). */
#define FUTOIN_UNLIMITED ((size_t)-1)

/* ---- Mutex (§2.3) ------------------------------------------------------- */

/**
 * Create a Mutex: at most `max` flows are inside its sections at once.
 * @param max flows inside at once, >= 1 (the spec's default is 1).
 * @param max_queue flows allowed to wait; FUTOIN_UNLIMITED (the spec's
 *        default) for no limit, 0 to reject every flow that cannot enter at
 *        once. Over the limit, a flow gets DefenseRejected with error_info
 *        "Mutex: queue limit <max_queue> reached".
 * @return the object, owned by the caller (free it with futoin_mutex_free());
 *         NULL if `max` is 0 or memory is short.
 * A Mutex needs no tool: it wakes the next flow from the unlock of the
 * previous one. Any thread, but see the threading rule above.
 */
FUTOIN_API FutoInSync* futoin_mutex_new(size_t max, size_t max_queue);

/**
 * Free a Mutex created by futoin_mutex_new(). NULL is ignored.
 * @return FUTOIN_OK; FUTOIN_EBUSY (nothing freed, and a message on stderr)
 *         while a flow is inside or queued; FUTOIN_EINVAL if `mutex` is not
 *         a Mutex of this library.
 * Threads: the loop thread of the flows that use it (see above).
 */
FUTOIN_API int futoin_mutex_free(FutoInSync* mutex);

/* ---- Throttle (§2.4) ---------------------------------------------------- */

/**
 * Create a Throttle: at most `max` flows enter its sections per period of
 * `period_ms`. A flow that entered stays inside until its section ends
 * (re-entering then is free, as for a Mutex), but how many are inside at
 * once is not limited: only entries are counted.
 *
 * The period starts with the first entry after an idle spell: a timer of
 * `tool` then fires every `period_ms`, starts a new period and lets up to
 * `max` queued flows in. It stops at the end of a period in which nobody
 * entered, so an idle Throttle keeps neither the loop alive nor the CPU
 * busy; the next entry starts it again.
 *
 * @param tool the tool whose loop runs the timer; it must outlive the
 *        object. The object is used on that tool's loop thread.
 * @param max entries per period, >= 1.
 * @param period_ms the period, >= 1 (the spec's default is 1000).
 * @param max_queue flows allowed to wait; FUTOIN_UNLIMITED (default) for no
 *        limit. Over it: DefenseRejected, "Throttle: queue limit N reached".
 * @return the object, owned by the caller (futoin_throttle_free()); NULL for
 *         a NULL tool, `max` or `period_ms` of 0, or out of memory.
 * Threads: the loop thread of `tool`.
 */
FUTOIN_API FutoInSync* futoin_throttle_new(
        futoin_tool* tool, size_t max, uint32_t period_ms, size_t max_queue);

/**
 * Free a Throttle. Its timer is stopped. NULL is ignored. Loop thread.
 * @return FUTOIN_OK; FUTOIN_EBUSY (nothing freed; reported through the
 *         tool's misuse callback) while a flow is inside or queued;
 *         FUTOIN_EINVAL if `throttle` is not a Throttle of this library.
 * Threads: the loop thread of its tool.
 */
FUTOIN_API int futoin_throttle_free(FutoInSync* throttle);

/* ---- Limiter (§2.5) ----------------------------------------------------- */

/** Options of futoin_limiter_new(). Versioned: see FUTOIN_LIMITER_OPTIONS_INIT. */
typedef struct futoin_limiter_options
{
    unsigned version;  /**< FUTOIN_LIMITER_OPTIONS_VERSION */
    size_t concurrent; /**< flows inside at once, >= 1; default 1 */
    size_t max_queue;  /**< flows waiting for `concurrent`; default 0 */
    size_t rate;       /**< entries per period, >= 1; default 1 */
    uint32_t period_ms; /**< the rate's period, >= 1; default 1000 */
    size_t burst;      /**< flows waiting for `rate`; default 0 */
} futoin_limiter_options;

#define FUTOIN_LIMITER_OPTIONS_VERSION 1
#define FUTOIN_LIMITER_OPTIONS_INIT                                            \
    {                                                                          \
        FUTOIN_LIMITER_OPTIONS_VERSION, 1, 0, 1, 1000, 0                       \
    }

/**
 * Initialise `opts` to the defaults of `version`, as
 * FUTOIN_LIMITER_OPTIONS_INIT does (the spec's defaults).
 * @return FUTOIN_OK; FUTOIN_EVERSION for a version this library lacks;
 *         FUTOIN_EINVAL for a NULL `opts`.
 * Threads: any thread.
 */
FUTOIN_API int futoin_limiter_options_init(
        futoin_limiter_options* opts, unsigned version);

/**
 * Create a Limiter: a Mutex(concurrent, max_queue) wrapping a
 * Throttle(rate, period_ms, burst), as in §1.11.7. A flow first waits for
 * a concurrency slot, then (holding it) for the rate; it is inside once it
 * has both, and leaves both when its section ends. Re-entering is free.
 *
 * Errors, raised at the addSync() step:
 *  - DefenseRejected, "Limiter: queue limit N reached (concurrent C)" when
 *    all C slots are taken and N flows already wait for one;
 *  - DefenseRejected, "Limiter: burst limit B reached (rate R per P ms)"
 *    when R flows entered in this period and B already wait for the next.
 *
 * @param tool the tool whose loop runs the rate timer; must outlive it.
 * @param opts NULL for the defaults; copied, not kept.
 * @return the object, owned by the caller (futoin_limiter_free()); NULL for
 *         a NULL tool, an unknown `opts->version`, a `concurrent`, `rate` or
 *         `period_ms` of 0, or out of memory.
 * Threads: the loop thread of `tool`.
 */
FUTOIN_API FutoInSync* futoin_limiter_new(
        futoin_tool* tool, const futoin_limiter_options* opts);

/**
 * Free a Limiter. Its timer is stopped. NULL is ignored. Loop thread.
 * @return FUTOIN_OK; FUTOIN_EBUSY (nothing freed; reported through the
 *         tool's misuse callback) while a flow is inside or queued;
 *         FUTOIN_EINVAL if `limiter` is not a Limiter of this library.
 * Threads: the loop thread of its tool.
 */
FUTOIN_API int futoin_limiter_free(FutoInSync* limiter);

/* ---- Introspection ------------------------------------------------------ */

/** Counters of a sync object. Versioned: set `version` before the call. */
typedef struct futoin_sync_stats
{
    unsigned version;    /**< in: FUTOIN_SYNC_STATS_VERSION */
    size_t inside;       /**< flows inside now (re-entries not counted);
                              Limiter: flows holding a concurrency slot,
                              those still waiting for the rate included */
    size_t queued;       /**< flows waiting now (Limiter: both queues) */
    size_t period_entries; /**< Throttle, Limiter: entries this period */
    int timer_active;    /**< Throttle, Limiter: 1 while the timer runs */
    size_t periods;      /**< Throttle, Limiter: periods ended (timer ticks) */
    size_t timer_starts; /**< Throttle, Limiter: times the timer started */
    size_t entries;      /**< flows let in so far (re-entries not counted) */
    size_t rejected;     /**< DefenseRejected raised so far */
    size_t allocations;  /**< heap blocks taken so far, the object included;
                              constant in steady state */
} futoin_sync_stats;

#define FUTOIN_SYNC_STATS_VERSION 1
/** A zeroed futoin_sync_stats of the current version, ready for the call. */
#define FUTOIN_SYNC_STATS_INIT                                                 \
    {                                                                          \
        FUTOIN_SYNC_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0                   \
    }

/**
 * Read the counters of a Mutex, Throttle or Limiter of this library.
 * @param sync the object.
 * @param[in,out] out `out->version` says which fields the caller knows; the
 *        others are left alone.
 * @return FUTOIN_OK; FUTOIN_EINVAL for NULL or an object that is not ours;
 *         FUTOIN_EVERSION for an unknown `out->version`.
 * Threads: the loop thread of the flows that use it.
 */
FUTOIN_API int futoin_sync_get_stats(FutoInSync* sync, futoin_sync_stats* out);

#ifdef __cplusplus
}
#endif

#endif /* FUTOIN_SYNC_H */
