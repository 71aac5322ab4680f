/*
 * A deliberately foreign, minimal FTN12 AsyncSteps implementation, for tests.
 *
 * It shares nothing with libfutoin_async but the spec's binary interface
 * (<futoin/ftn12.h>): its own event loop, its own step engine, its own
 * 25-slot function table. Tests use it to prove that code written against
 * the spec's table (the library's adapter layer, futoin_async_tool() and
 * friends) works over an implementation it did not create, and never reads
 * past slot 24 of that table.
 *
 * The table is heap-allocated by foreign_loop_new() with exactly
 * `sizeof(void*) * 25` bytes (one table per loop), so that a read past
 * slot 24 lands in an ASan redzone or past the end of a malloc block that
 * valgrind memcheck watches. (A static table would be seen by ASan only:
 * memcheck does not check globals.) Every root and step handle of a loop
 * points at that one table: recognise it by pointer identity, through
 * foreign_api().
 *
 * Scope: one thread (the one that created the loop); no cross-thread
 * calls. The event loop is a FIFO of immediate callbacks plus timers on a
 * virtual clock: foreign_run() runs callbacks until none is left, and when
 * only timers are left it jumps the clock to the earliest one. A step that
 * waits for an external event which nothing has scheduled does not keep
 * foreign_run() going.
 *
 * Semantics (FTN12 v1.14 as observed on the JS reference, simplified):
 *  - steps run one per loop turn; sub-steps form a new level; the last
 *    sub-step's success values become the step's result; implicit success
 *    passes no values; success() MOVES the values (the caller's copy is
 *    reset); args given to a callback are cleaned up after it returns;
 *  - error unwinding goes from the innermost frame outwards, per frame:
 *    cancel its running children (innermost first, in add order), stop its
 *    timer, call its cancel handler, then its error handler (once per
 *    frame); the handler may succeed (continue after the failed step), raise
 *    a new error, return silently, or add steps (they run in place of the
 *    failed step);
 *  - an error nobody recovers calls execute()'s `unhandled_error` callback;
 *  - setTimeout raises Timeout at the innermost active frame under the step
 *    (a parallel step stops the descent); a second setTimeout replaces the
 *    first;
 *  - breakLoop/continueLoop unwind like errors (cancel handlers run, error
 *    handlers do not) to the innermost loop with the label (NULL = the
 *    innermost loop); without such a loop they raise InternalError;
 *  - parallel branches all start in one loop turn, in add order; a branch
 *    error cancels the other branches in add order, then the parallel's
 *    error handler runs; the step after a parallel gets no values;
 *  - root cancel() and free() called from inside one of the root's own
 *    callbacks are deferred until the engine regains control;
 *  - a finished or cancelled root can take new steps and run again;
 *  - addSync() raises NotImplemented;
 *  - stateVariable("error_info") / ("last_exception") return `const char*`
 *    (info / code of the last error, or NULL).
 * Misuse that cannot become an InternalError inside the flow is printed to
 * stderr and counted (foreign_misuse_count()). Retired step records are
 * kept in a small quarantine (64 per root) so that a recently stale handle
 * is detected (isValid() == 0); older stale handles are undefined.
 */
#ifndef FOREIGN_AS_H
#define FOREIGN_AS_H

#include <futoin/ftn12.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct foreign_loop foreign_loop;

/** A new loop (and its table), bound to the calling thread. */
foreign_loop* foreign_loop_new(void);
/** Free the loop; pending callbacks are dropped. Free its roots first. */
void foreign_loop_free(foreign_loop* loop);
/** Run callbacks and timers until nothing is left. */
void foreign_run(foreign_loop* loop);
/** A new root AsyncSteps on `loop`; release it with `as->api->free(as)`. */
FutoInAsyncSteps* foreign_root_new(foreign_loop* loop);

/* ---- test helpers (not part of the brief's minimal API) ---------------- */

/** The loop's table: every handle of this loop has `api == foreign_api()`. */
const FutoInAsyncStepsAPI* foreign_api(const foreign_loop* loop);
/** The virtual clock in milliseconds (starts at 0). */
uint64_t foreign_now(const foreign_loop* loop);
/** Roots created and not yet freed. */
size_t foreign_live_roots(const foreign_loop* loop);
/** Misuses reported to stderr so far. */
size_t foreign_misuse_count(const foreign_loop* loop);

#ifdef __cplusplus
}
#endif

#endif /* FOREIGN_AS_H */
