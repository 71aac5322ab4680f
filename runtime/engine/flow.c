/*
 * The dispatch loop of a flow: runs steps, completes frames, unwinds errors
 * and cancels. Everything here is iterative: a frame is a heap record and
 * the loop walks `fl->top`, so neither a million sequential steps nor a
 * hundred thousand nested levels touch the C stack beyond one frame of
 * flow_run(). The only recursion is through nested parallel() frames on
 * cancel, which is bounded by how the user nested them.
 *
 * A flow runs from the tool's run queue (futoin__flow_run_cb) for at most
 * FUTOIN__FLOW_BUDGET steps, then yields so that other flows get their
 * turn; a continuation costs a place in the queue (a link in the flow,
 * tool/tool.h), not a libuv loop turn. Every
 * step and every batch of in-place loop iterations also counts against the
 * tool's time slice (futoin__tool_busy, tool/tool.h): once it is used up,
 * the flow yields at once and the ring waits for libuv's next turn, so
 * timers, I/O and posts from other threads get a turn about once per
 * millisecond of busy work, however the bursts nest.
 *
 * Events that come from outside the running callback (external success or
 * error, a timeout, a branch finishing) only record the outcome on the
 * frame or flow and schedule the flow: user callbacks of two flows never
 * nest, which is what lets one per-tool FutoInArgs scratch serve as the
 * callback arguments.
 */
#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the flow's pending raise (engine.h, futoin__flow.raise) --------- */

/* The flow's raise record, or NULL: none, or a bare raise. */
static inline futoin__raise_rec* raise_rec(const futoin__flow* fl)
{
    return (fl->raise & FUTOIN__RAISE_BARE) ? NULL
                                            : (futoin__raise_rec*)fl->raise;
}

/* The frame a raise is pending at, or NULL. */
static futoin__step* raise_at(const futoin__flow* fl)
{
    futoin__raise_rec* x = raise_rec(fl);
    if (x) {
        return x->at;
    }
    return (futoin__step*)(fl->raise
                           & ~(FUTOIN__RAISE_BARE | FUTOIN__RAISE_TOP));
}

/* Whether a raise at whatever is on top is pending. */
static bool raise_top(const futoin__flow* fl)
{
    futoin__raise_rec* x = raise_rec(fl);
    return x ? x->top != 0 : (fl->raise & FUTOIN__RAISE_TOP) != 0;
}

/* The code being raised, or NULL. */
static const char* raise_code(const futoin__flow* fl)
{
    futoin__raise_rec* x = raise_rec(fl);
    if (x) {
        return x->code;
    }
    return fl->raise ? futoin_error_name(FUTOIN_ERROR_INTERNAL_ERROR) : NULL;
}

/* The loop frame of a pending break/continue, or NULL. */
static futoin__step* raise_ctl(const futoin__flow* fl)
{
    futoin__raise_rec* x = raise_rec(fl);
    return x ? x->ctl : NULL;
}

/*
 * The flow's raise record, taken (cleared) if it has none: off the tool's
 * pool, else the tool's spare (engine_tool.h). NULL when the raise is bare:
 * it was already, or no record could be had, and then it becomes one with
 * nothing pending (its code reads as InternalError). A raise never fails
 * for lack of memory; it only loses its code and its break target.
 */
static futoin__raise_rec* raise_get(futoin__flow* fl)
{
    struct futoin__engine_tool* e;
    futoin__raise_rec* x;
    if (fl->raise) {
        return raise_rec(fl);
    }
    e = futoin__eng(futoin__flow_tool(fl));
    x = futoin__recpool_get(&e->raises);
    if (!x && !e->raise_spare_busy) {
        e->raise_spare_busy = 1;
        x = &e->raise_spare;
    }
    if (!x) {
        fl->raise = FUTOIN__RAISE_BARE;
        return NULL;
    }
    x->code = NULL;
    x->at = NULL;
    x->ctl = NULL;
    x->top = 0;
    x->cont = 0;
    x->owned = 0;
    fl->raise = (uintptr_t)x;
    return x;
}

static void raise_put(futoin__flow* fl, futoin__raise_rec* x)
{
    struct futoin__engine_tool* e = futoin__eng(futoin__flow_tool(fl));
    if (x == &e->raise_spare) {
        e->raise_spare_busy = 0;
    } else {
        futoin__recpool_put(&e->raises, x);
    }
    fl->raise = 0;
}

/* The record goes back once it holds nothing: no code, nothing pending,
 * no break/continue target. */
static void raise_tidy(futoin__flow* fl)
{
    futoin__raise_rec* x = raise_rec(fl);
    if (x && !x->code && !x->at && !x->top && !x->ctl) {
        raise_put(fl, x);
    }
}

void futoin__flow_drop_raise(futoin__flow* fl)
{
    futoin__raise_rec* x = raise_rec(fl);
    if (x) {
        if (x->owned) {
            free((char*)x->code);
        }
        raise_put(fl, x);
    }
    fl->raise = 0;
}

/* Store `code` as the flow's pending error code. Standard codes are kept as
 * their static string; others are copied (errors are not a hot path). */
static void flow_set_code(futoin__flow* fl, const char* code)
{
    futoin__raise_rec* x = raise_get(fl);
    const char* keep;
    bool owned = false;
    if (!x) {
        return; /* bare: the code reads as InternalError */
    }
    keep = futoin__static_code(code);
    if (!keep) {
        char* copy = strdup(code ? code : "");
        if (copy) {
            keep = copy;
            owned = true;
        } else {
            keep = futoin_error_name(FUTOIN_ERROR_INTERNAL_ERROR);
        }
    }
    if (x->owned) {
        free((char*)x->code);
    }
    x->code = keep;
    x->owned = owned;
}

static void flow_clear_code(futoin__flow* fl)
{
    futoin__raise_rec* x = raise_rec(fl);
    if (x) {
        if (x->owned) {
            free((char*)x->code);
        }
        x->code = NULL;
        x->owned = 0;
        raise_tidy(fl);
    } else if (fl->raise == FUTOIN__RAISE_BARE) {
        fl->raise = 0; /* a bare code, nothing pending */
    }
}

/* The unwinding ended at a handler (success() or add() there): the code
 * and any break/continue target are forgotten. */
static void raise_handled(futoin__flow* fl)
{
    futoin__raise_rec* x = raise_rec(fl);
    if (x) {
        x->ctl = NULL; /* a break ends here */
    }
    flow_clear_code(fl);
}

/* No raise is pending at a frame any more (the code stays). */
static void raise_clear_at(futoin__flow* fl)
{
    futoin__raise_rec* x = raise_rec(fl);
    if (x) {
        x->at = NULL;
    } else {
        fl->raise &= FUTOIN__RAISE_BARE | FUTOIN__RAISE_TOP;
    }
}

/* The frame a pending raise is raised at when the flow acts on it: its
 * frame, else (pending at the top) the top frame or NULL. The raise at the
 * top is no longer pending; unwind_error() clears the frame. */
static FUTOIN__NOINLINE futoin__step* raise_start(futoin__flow* fl)
{
    futoin__raise_rec* x = raise_rec(fl);
    futoin__step* at = raise_at(fl);
    if (x) {
        x->top = 0;
    } else {
        fl->raise &= ~FUTOIN__RAISE_TOP;
    }
    return at ? at : fl->top;
}

/* Whether a raise is pending (at a frame or at the top), not only a code
 * being unwound. */
static bool raise_pending(const futoin__flow* fl)
{
    return raise_at(fl) || raise_top(fl);
}

/* Frame `s` of `fl` is popped: a raise pending at it, or a break aimed at
 * it, goes with it (the code stays). */
static FUTOIN__NOINLINE void raise_popped(futoin__flow* fl, futoin__step* s)
{
    futoin__raise_rec* x = raise_rec(fl);
    if (x) {
        if (x->at == s) {
            x->at = NULL;
        }
        if (x->ctl == s) {
            x->ctl = NULL;
        }
        raise_tidy(fl);
    } else if (raise_at(fl) == s) {
        fl->raise &= FUTOIN__RAISE_BARE | FUTOIN__RAISE_TOP;
    }
}

void futoin__flow_set_ctl(futoin__flow* fl, futoin__step* l, bool cont)
{
    futoin__raise_rec* x = raise_get(fl);
    if (x) {
        x->ctl = l;
        x->cont = cont ? 1 : 0;
    }
}

void futoin__flow_pass_ctl(futoin__flow* bf, futoin__flow* fl)
{
    futoin__raise_rec* b = raise_rec(bf);
    if (b && b->ctl) {
        futoin__flow_set_ctl(fl, b->ctl, b->cont != 0);
    }
}

/* ---- scheduling ---------------------------------------------------------- */

static void flow_run(futoin__flow* fl);

_Static_assert(offsetof(futoin__flow, rq) == 0, "the run queue's node is the flow");

void futoin__flow_run_cb(void* data)
{
    futoin__flow* fl = data;
    /* The flow may have finished, been cancelled or even recycled since it
     * was queued: records stay valid while the tool lives, and only a flow
     * that is still SCHED has work to do. */
    if (fl->state == FUTOIN__FL_SCHED) {
        flow_run(fl);
    }
}

/* Scheduled flows queue on the tool's run queue (tool/tool.h): flows
 * scheduled one after another share a ring slot. A flow that is still in
 * a batch (it was cancelled or freed there, then started again) keeps its
 * place, where its old slot would have run it. */
void futoin__flow_schedule(futoin__flow* fl)
{
    futoin__flow_schedule_in(futoin__flow_tool(fl), fl);
}

void futoin__flow_start(futoin__flow* fl)
{
    fl->state = FUTOIN__FL_IDLE;
    futoin__flow_schedule(fl);
}

/* Ask for `code` to be raised at frame `at` when the flow runs next. If an
 * error is already pending at a lower frame, that one wins: unwinding to it
 * covers `at` too. */
static void request_raise(futoin__flow* fl, futoin__step* at, const char* code)
{
    futoin__step* cur = raise_at(fl);
    futoin__raise_rec* x;
    if (cur) {
        /* keep a pending raise at `at` itself or below it */
        for (futoin__step* f = at; f; f = f->parent) {
            if (f == cur) {
                return;
            }
        }
    }
    x = raise_get(fl);
    if (x) {
        x->at = at;
    } else {
        fl->raise = (fl->raise & FUTOIN__RAISE_TOP) | FUTOIN__RAISE_BARE
                    | (uintptr_t)at;
    }
    flow_set_code(fl, code);
    futoin__flow_schedule(fl);
}

void futoin__raise(futoin__flow* fl, futoin__step* at, const char* code)
{
    request_raise(fl, at, code);
}

/* Raise `code` at the innermost frame when the flow runs next: what a
 * timeout does, so that the handlers of the steps it covers see the
 * Timeout first, innermost first (as the reference implementation does). */
void futoin__raise_top(futoin__flow* fl, const char* code)
{
    futoin__raise_rec* x;
    if (raise_at(fl) || raise_top(fl)) {
        return; /* an error is already on its way down */
    }
    futoin__stack_capture(fl, NULL, code);
    x = raise_get(fl);
    if (x) {
        x->top = 1;
    } else {
        fl->raise |= FUTOIN__RAISE_TOP;
    }
    flow_set_code(fl, code);
    futoin__flow_schedule(fl);
}

/* Record an error raised by (or on behalf of) step `s`. In the step's own
 * callback it is acted on when the callback returns; otherwise the flow is
 * scheduled to unwind to `s`. */
void futoin__step_error(futoin__step* s, const char* code, const char* info)
{
    futoin__flow* fl = s->flow;
    if (s->flags & FUTOIN__F_ERROR) {
        return; /* the first error of a callback wins */
    }
    futoin__root_set_error(fl->root, code, info);
    futoin__stack_capture(fl, s, code);
    s->flags |= FUTOIN__F_ERROR;
    if (futoin__hooked(futoin__flow_tool(fl))) {
        if (s->state == FUTOIN__S_WAIT) {
            futoin__hook_wait(s, FUTOIN_HOOK_WAIT_ENDED);
        }
        futoin__hook_error(fl->root, s, FUTOIN_HOOK_ERROR_RAISED, code, info);
    }
    if (s->state == FUTOIN__S_EXEC || s->state == FUTOIN__S_ERRH) {
        flow_set_code(fl, code);
        return;
    }
    if (s->state == FUTOIN__S_WAIT) {
        s->state = FUTOIN__S_DONE;
        s->sub_head = NULL; /* it held wait_since (engine.h) */
    }
    request_raise(fl, s, code);
}

/* ---- frames -------------------------------------------------------------- */

static void stop_timer(futoin_tool* tool, futoin__step* s)
{
    if ((s->flags & FUTOIN__F_TIMEOUT) && FUTOIN__RARE(s, timer)) {
        futoin__tool_timer_stop(tool, s->rare->timer, s->rare->timer_gen);
        s->rare->timer = NULL;
    }
    s->flags &= (uint16_t)~FUTOIN__F_TIMEOUT;
}

/* Release a queue of steps that never ran (and what hangs off them). */
void futoin__queue_free(futoin_tool* tool, futoin__step* head)
{
    while (head) {
        futoin__step* next = head->next;
        FUTOIN__DEBUG_ASSERT(head->state == FUTOIN__S_QUEUED);
        switch (head->kind) {
        case FUTOIN__K_PARALLEL:
            futoin__queue_free(tool, head->u.p.br_head);
            break;
        case FUTOIN__K_LOOP:
            free(head->u.l.label);
            break;
        default:
            break;
        }
        if (FUTOIN__RARE(head, allocs)) {
            FUTOIN__USER(head->flow->root,
                         futoin__alloc_free_all(&head->rare->allocs));
        }
        futoin__step_release(tool, head);
        head = next;
    }
}

static void release_stash(futoin_tool* tool, futoin__step* y)
{
    if (y->u.y.stash) {
        futoin__args_release(tool, y->u.y.stash);
        y->u.y.stash = NULL;
    }
}

/* A step frame leaves abnormally (cancel, timeout, an error unwinding past
 * it, an external error): close its `xs` so a completion arriving from now
 * on is known to have lost a race (engine.h), and run its cancel handler,
 * once, to abort whatever external operation it waits for. (An external
 * success that was applied already cleared the handler: futoin__step_resolve.) */
static void run_cancel_handler(futoin__root* r, futoin__step* s)
{
    atomic_exchange_explicit(&s->xs, futoin__step_xs(s, FUTOIN__XS_ABORTED),
                             memory_order_acq_rel);
    if ((s->flags & FUTOIN__F_CANCEL) && FUTOIN__RARE(s, cancel)) {
        FutoInAsyncSteps_cancel_callback ch = s->rare->cancel;
        s->rare->cancel = NULL;
        s->flags &= (uint16_t)~FUTOIN__F_CANCEL;
        FUTOIN__USER(r, ch(&s->bsi, s->rare->cancel_data));
    }
}

/* The value a DONE step holds (futoin__val1) is dropped: its type's
 * cleanup runs, as for values in a pooled container. Never inlined: its
 * local value, whose address the cleanup gets, would give the run loop a
 * stack-protector check on every call (-fstack-protector-strong). */
static FUTOIN__NOINLINE void drop_val1(futoin__step* s)
{
    FutoInBinaryValue v;
    futoin__val1_read(s, &v);
    futoin__val1_clear(s);
    futoin_reset_binval(&v);
}

/* ... or taken as the flow's pending values (futoin__flow_set_vals_n) as
 * the flow pops step `s`. Out of memory, it is dropped. */
static inline __attribute__((always_inline)) void take_val1(
        futoin__flow* fl, futoin__step* s, futoin_tool* tool)
{
    FutoInArgs* a;
    if (FUTOIN__UNLIKELY(fl->args != NULL)) {
        futoin__flow_drop_vals(fl); /* none are pending, as a rule */
    }
    a = futoin__vals_get(tool);
    if (FUTOIN__UNLIKELY(!a)) {
        drop_val1(s);
        return;
    }
    futoin__val1_read(s, &a->args[0]);
    futoin__val1_clear(s);
    fl->args = a;
    fl->nvals = 1;
}

/* Pop the top frame `s` of `fl`. With `cancel`, the frame leaves abnormally:
 * its cancel handler (if any) runs, exactly once; a parallel frame cancels
 * its branches first (innermost first); a sync frame releases its lock. */
static void pop_frame(futoin__flow* fl, futoin__step* s, bool cancel)
{
    futoin__root* r = fl->root;
    futoin_tool* tool = futoin__root_tool(r);

    if (futoin__hooked(tool)) {
        futoin__hook_pop(s, cancel);
    }
    switch (s->kind) {
    case FUTOIN__K_PARALLEL:
        futoin__parallel_cancel(s);
        futoin__queue_free(tool, s->u.p.br_head);
        s->u.p.br_head = s->u.p.br_tail = NULL;
        break;
    case FUTOIN__K_LOOP:
        free(s->u.l.label);
        s->u.l.label = NULL;
        break;
    case FUTOIN__K_SYNC:
        release_stash(tool, s);
        if (s->flags & FUTOIN__F_LOCKED) {
            FutoInSync* sync = s->u.y.sync;
            s->flags &= (uint16_t)~FUTOIN__F_LOCKED;
            FUTOIN__USER(r, sync->api->unlock(&s->bsi, sync));
        }
        break;
    default:
        stop_timer(tool, s);
        if (cancel) {
            run_cancel_handler(r, s);
        }
        break;
    }
    if (s->state == FUTOIN__S_WAIT) {
        s->sub_head = NULL; /* it held wait_since (engine.h) */
    } else if (FUTOIN__UNLIKELY(s->flags & FUTOIN__F_VAL1)) {
        drop_val1(s); /* it held the value's bits; `rel` its type */
    } else if (s->sub_head) {
        futoin__queue_free(tool, s->sub_head);
        s->sub_head = NULL;
    }
    if (FUTOIN__RARE(s, allocs)) {
        FUTOIN__USER(r, futoin__alloc_free_all(&s->rare->allocs));
    }
    if (fl->raise) {
        raise_popped(fl, s);
    }
    fl->top = s->parent;
    futoin__step_release(tool, s);
}

/* Queued step `s`, off its queue, becomes the top frame: its `next` turns
 * into `parent` (engine.h). Its `flow` is `fl` since it was queued there
 * (futoin__step_new; a parallel() branch's first step gets its flow's as
 * the branch starts, futoin__parallel_start). */
static void push_frame(futoin__flow* fl, futoin__step* s, futoin__step* parent)
{
    FUTOIN__DEBUG_ASSERT(s->state == FUTOIN__S_QUEUED && s->flow == fl);
    s->parent = parent;
    fl->top = s;
}

/* The first step of a queue, taken off it; push_frame() is next (it sets
 * the word `next` shares with `parent`). */
static futoin__step* pop_queue(futoin__step** head)
{
    futoin__step* s = *head;
    if (s) {
        *head = s->next;
    }
    return s;
}

static inline void drop_args(futoin__flow* fl)
{
    if (fl->args) {
        futoin__flow_drop_vals(fl);
    }
}

/* ---- the end of a flow --------------------------------------------------- */

static void root_finish(futoin__root* r)
{
    if (r->state == FUTOIN__R_RUNNING) {
        r->state = FUTOIN__R_DONE;
        futoin__tool_unref(futoin__root_tool(r));
    }
}

/* The flow ran out of steps (code == NULL) or an error left its bottom
 * frame unhandled. Returns with `fl` possibly released. Inlined: a flow's
 * end is on every root's way (T1), and a call here costs more than the
 * branch of the flow_finished hook did when GCC stopped inlining it. */
static inline __attribute__((always_inline)) void flow_end(futoin__flow* fl,
                                                           const char* code)
{
    futoin__root* r = fl->root;
    drop_args(fl);
    fl->state = FUTOIN__FL_DONE;
    if (futoin__flow_par(fl)) {
        futoin__parallel_branch_done(fl, code);
        return;
    }
    root_finish(r);
    if (futoin__hooked(futoin__root_tool(r))) {
        futoin__hook_root(r, FUTOIN_HOOK_FLOW_FINISHED,
                          code ? FUTOIN_HOOK_ERROR : FUTOIN_HOOK_SUCCESS, code);
    }
    if (code) {
        /* An error no handler took ends the flow, as a cancel does: the
         * steps it did not run are dropped, so executing the root again
         * runs only what is added since (as the reference does,
         * tests/ref_js/q14_unhandled_rerun.js). Before the callback, which
         * may add steps and execute the root again. */
        futoin__queue_free(futoin__root_tool(r), fl->head);
        fl->head = NULL;
    }
    if (code && FUTOIN__RARE(r, unhandled)) {
        FUTOIN__USER(r, r->rare->unhandled(&r->bsi, r->rare->unhandled_data,
                                           code));
    } else if (code) {
        const char* info = FUTOIN__RARE(r, error_info);
        fprintf(stderr, "futoin: unhandled error in root %td: %s (%s)\n",
                atomic_load_explicit(&r->id, memory_order_relaxed), code,
                info ? info : "");
    }
    if (fl->raise) {
        flow_clear_code(fl);
    }
}

void futoin__flow_cancel(futoin__flow* fl)
{
    /* Nothing pending is acted on any more; what a cancel handler raises
     * on the way goes with the rest. */
    futoin__flow_drop_raise(fl);
    while (fl->top) {
        pop_frame(fl, fl->top, true);
    }
    futoin__queue_free(futoin__flow_tool(fl), fl->head);
    fl->head = NULL;
    drop_args(fl);
    futoin__flow_drop_raise(fl);
    fl->state = FUTOIN__FL_DONE;
}

/* ---- running one step ---------------------------------------------------- */

/* What after_callback() and exec_frame() tell their caller: the flow must
 * not be touched any more (AC_OUT), it goes on (AC_ON), it goes on and
 * its top step has just begun to wait for an external event, with no hook
 * to call and no raise pending (AC_WAITS: flow_run() ends the run there,
 * bench T2 and T3, as the next turn would find it), or the step completed
 * and was popped with no code but ours run since the callback's end and
 * the root's pending cancel or free checked after it (AC_DONE: the frame
 * below goes on in this turn). Callers that return bool see the last
 * three as true. */
enum
{
    AC_OUT = 0,
    AC_ON = 1,
    AC_WAITS = 2,
    AC_DONE = 3
};

static inline __attribute__((always_inline)) int after_callback(
        futoin__flow* fl, futoin__step* s, futoin_tool* tool);
static bool unwind_error(futoin__flow* fl, futoin__step* at);

/* Move the flow's pending values into the per-tool callback scratch (all
 * empty between callbacks); returns how many slots may hold one. */
static inline unsigned take_args_in(futoin__flow* fl, FutoInArgs* in,
                                    futoin_tool* tool)
{
    FutoInArgs* a = fl->args;
    unsigned n = fl->nvals;
    if (!a) {
        return 0;
    }
    futoin__move_slots(in, a, n);
    fl->args = NULL;
    fl->nvals = 0;
    futoin__vals_put(tool, a);
    return n;
}
static inline unsigned take_args(futoin__flow* fl, FutoInArgs* in)
{
    return take_args_in(fl, in, futoin__flow_tool(fl));
}

/* The same from a parked (pooled) FutoInArgs, released. */
static void take_stash(futoin__flow* fl, FutoInArgs* in, FutoInArgs** src)
{
    if (*src) {
        futoin__args_move(in, *src);
        futoin__args_release(futoin__flow_tool(fl), *src);
        *src = NULL;
    }
}

/* The in-place iterations of loop `l`'s body `s` (see exec_frame) after
 * its first one, which exec_body() ran and which completed at once. Each
 * caller passes `rep` as a constant, so loop() and repeat() get a loop of
 * their own with nothing in it but the indirect call and the exit tests
 * (GCC stopped unswitching it by itself once the burst grew a time-slice
 * bound). */
static inline __attribute__((always_inline)) void loop_burst(
        futoin__flow* fl, futoin__step* s, futoin__step* l, futoin_tool* tool,
        const bool rep)
{
    futoin__root* r = fl->root;
    /* repeat(): u.l.i counts iterations started, this one included; it
     * lives in a local during the burst and is stored back before anything
     * else can look at it. The burst's own count is i - i0 (loop() keeps
     * no count: `i` starts at 1). */
    size_t i = rep ? l->u.l.i : 1;
    const size_t i0 = i;
    const size_t last = rep ? l->u.l.count : SIZE_MAX;
    void* const ldata = s->data; /* futoin__body_init() */
    const futoin__loop_fn fn = rep ? NULL : futoin__body_loop_fn(s);
    unsigned n, counted = 0, left, limit;
    size_t bound;
    /* The time slice's next clock read falls on iteration `limit`, folded
     * with the repeat() count into the one bound the burst compares with,
     * so the check costs nothing per iteration (`counted` iterations were
     * reported to the slice already). */
    left = tool->slice_units < tool->slice_stride
                   ? tool->slice_stride - tool->slice_units
                   : 1;
    limit = left - 1 < FUTOIN__LOOP_INPLACE ? left - 1 : FUTOIN__LOOP_INPLACE;
    /* A traced root gives every iteration a frame, hence a span id, of its
     * own (trace.c): one iteration, then the general path. */
    if (FUTOIN__UNLIKELY(FUTOIN__TRACED(r))) {
        limit = 0;
    }
    bound = i0 + limit < last ? i0 + limit : last;
    for (;;) {
        if (FUTOIN__UNLIKELY(s->flags != 0)) {
            if (s->flags != FUTOIN__F_SUCCESS) {
                break;
            }
            s->flags = 0; /* success(): values of a body are dropped */
            drop_args(fl);
        }
        if (FUTOIN__UNLIKELY(s->rare || r->pending || fl->raise
                             || i >= bound)) {
            bool over;
            n = (unsigned)(i - i0);
            if (n < limit || n >= FUTOIN__LOOP_INPLACE || s->rare
                || r->pending || fl->raise || i >= last
                || FUTOIN__TRACED(r)) {
                break; /* a reason other than the clock read */
            }
            over = futoin__tool_busy(tool, n + 1 - counted);
            counted = n + 1;
            if (over) {
                break;
            }
            limit = n + tool->slice_stride;
            if (limit > FUTOIN__LOOP_INPLACE) {
                limit = FUTOIN__LOOP_INPLACE;
            }
            bound = i0 + limit < last ? i0 + limit : last;
        }
        ++i;
        if (rep) {
            l->u.l.fn.repeat(&s->bsi, ldata, i - 1);
        } else {
            fn(&s->bsi, ldata);
        }
    }
    /* uncounted iterations: the next futoin__tool_busy() sees them */
    n = (unsigned)(i - i0);
    tool->slice_units += n + 1 - counted;
    if (rep) {
        l->u.l.i = i;
    }
}

/* loop_burst() of a loop() and of a repeat() body: out of exec_body(),
 * whose usual iteration (one that adds steps or waits, bench T3) then
 * keeps few registers (issue 22). */
static FUTOIN__NOINLINE void burst_loop(futoin__flow* fl, futoin__step* s,
                                        futoin__step* l, futoin_tool* tool)
{
    loop_burst(fl, s, l, tool, false);
}
static FUTOIN__NOINLINE void burst_repeat(futoin__flow* fl, futoin__step* s,
                                          futoin__step* l, futoin_tool* tool)
{
    loop_burst(fl, s, l, tool, true);
}

static FUTOIN__NOINLINE bool exec_body_rest(futoin__step* s);

/* drop_args() out of line, for exec_body() (values pending as a body
 * starts are rare: a body's success() values are dropped in the burst). */
static FUTOIN__NOINLINE void drop_args_out(futoin__flow* fl)
{
    futoin__flow_drop_vals(fl);
}

/* exec_frame() of a loop body `s` while the tool has no hooks: the
 * iterations its loop runs in place (loop_burst). `r` and `tool` are the
 * flow's root and tool. Inlined into flow_run(), which calls it directly
 * (without exec_frame_other()'s switch) and holds both in registers that
 * live across calls anyway (issue 22, T3: out of line, it found the tool
 * again twice from the block header); exec_body() for the other caller. */
static inline __attribute__((always_inline)) bool exec_body_in(
        futoin__flow* fl, futoin__step* s, futoin__root* r, futoin_tool* tool)
{
    if (FUTOIN__UNLIKELY(fl->args != NULL)) {
        drop_args_out(fl);
    }
    /* sub-steps were consumed since the last callback: forget the cursor */
    futoin__eng(tool)->app_step = NULL;
    s->state = FUTOIN__S_EXEC;
    /* a body may wait and be completed from another thread */
    atomic_store_explicit(&s->xs, futoin__step_xs(s, FUTOIN__XS_OPEN),
                          memory_order_relaxed);
    ++r->in_cb; /* user code runs between here and the decrement */
    /* The first iteration runs here. */
    if (futoin__body_repeats(s)) {
        futoin__step* l = s->parent;
        l->u.l.fn.repeat(&s->bsi, s->data, l->u.l.i - 1);
    } else {
        futoin__body_loop_fn(s)(&s->bsi, s->data);
    }
    /* A body that added steps (the usual asynchronous loop) needs no
     * burst, and after_callback() would only set SUBS: done here. */
    if (s->flags == FUTOIN__F_ADDED) {
        ++tool->slice_units; /* a burst of n = 0 */
        --r->in_cb;
        if (r->pending && !r->in_cb) {
            futoin__root_settle(r);
            return false;
        }
        s->state = FUTOIN__S_SUBS;
        return true;
    }
    return exec_body_rest(s);
}

static FUTOIN__NOINLINE bool exec_body(futoin__flow* fl, futoin__step* s)
{
    futoin__root* r = s->flow->root;
    return exec_body_in(fl, s, r, futoin__root_tool(r));
}

/* exec_body() after the first iteration of body `s`, which did not (only)
 * add steps: the in-place burst if it completed at once, then what its
 * callback asked for. An iteration that completes at once (nothing added,
 * nothing to wait for, no stack() memory, no error or loop control) leaves
 * nothing to unwind: the next iteration runs on the same frame, which
 * makes a C loop body cost little more than the indirect call. Anything
 * else takes the general path (after_callback). The number of in-place
 * iterations is bounded so other flows get their turn, and the burst ends
 * early once the time slice is used up. */
static FUTOIN__NOINLINE bool exec_body_rest(futoin__step* s)
{
    futoin__flow* fl = s->flow;
    futoin__root* r = fl->root;
    futoin_tool* tool = futoin__root_tool(r);
    futoin__step* l = s->parent;
    if (FUTOIN__UNLIKELY(s->flags != 0) && s->flags != FUTOIN__F_SUCCESS) {
        ++tool->slice_units; /* as the end of a burst with n = 0 */
    } else if (futoin__body_repeats(s)) {
        burst_repeat(fl, s, l, tool);
    } else {
        burst_loop(fl, s, l, tool);
    }
    --r->in_cb;
    if (r->pending && !r->in_cb) {
        futoin__root_settle(r);
        return false;
    }
    return after_callback(fl, s, tool);
}

/* exec_frame() of any frame but a plain step. */
static FUTOIN__NOINLINE int exec_frame_other(futoin__flow* fl, futoin__step* s)
{
    futoin__root* r = fl->root;
    futoin_tool* tool = futoin__root_tool(r);
    FutoInArgs* in = &futoin__eng(tool)->args_in;

    /* sub-steps were consumed since the last callback: forget the cursor */
    futoin__eng(tool)->app_step = NULL;
    switch (s->kind) {
    case FUTOIN__K_PARALLEL:
        drop_args(fl);
        futoin__parallel_start(s);
        return true;
    case FUTOIN__K_LOOP:
        drop_args(fl);
        s->state = FUTOIN__S_SUBS;
        futoin__loop_iterate(s);
        return true;
    case FUTOIN__K_UNLOCK: {
        /* The guarded step's results pass through untouched. */
        futoin__step* y = s->parent;
        s->state = FUTOIN__S_EXEC;
        if (y->flags & FUTOIN__F_LOCKED) {
            FutoInSync* sync = y->u.y.sync;
            if (futoin__hooked(tool)) {
                futoin__hook_unlock(y);
            }
            y->flags &= (uint16_t)~FUTOIN__F_LOCKED;
            FUTOIN__USER(r, sync->api->unlock(&y->bsi, sync));
        }
        s->flags |= FUTOIN__F_SUCCESS;
        break;
    }
    case FUTOIN__K_SYNC: {
        FutoInSync* sync = s->u.y.sync;
        futoin__step* u;
        /* Park the incoming values: lock() may queue steps of its own
         * before the guarded step, and those must not consume them. */
        s->state = FUTOIN__S_EXEC;
        s->u.y.stash = NULL;
        if (fl->args) {
            FutoInArgs* st = futoin__args_alloc(tool);
            if (!st) {
                drop_args(fl);
                futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR,
                                   "addSync(): out of memory");
                break;
            }
            take_args(fl, st);
            s->u.y.stash = st;
        }
        s->flags |= FUTOIN__F_LOCKED;
        FUTOIN__USER(r, sync->api->lock(&s->bsi, sync));
        if (s->flags & FUTOIN__F_ERROR) {
            break;
        }
        u = futoin__step_new(fl, FUTOIN__K_STEP);
        futoin__step* z = u ? futoin__step_new(fl, FUTOIN__K_UNLOCK) : NULL;
        if (!z) {
            if (u) {
                futoin__step_release(tool, u);
            }
            futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR,
                               "addSync(): out of memory");
            break;
        }
        u->flags = FUTOIN__F_STASH;
        u->f = s->f;
        u->eh = s->eh;
        u->data = s->data;
        futoin__sub_append(s, u);
        futoin__sub_append(s, z);
        s->flags |= FUTOIN__F_ADDED;
        break;
    }
    case FUTOIN__K_BODY:
        return exec_body(fl, s);
    default: {
        unsigned n;
        if (s->flags & FUTOIN__F_STASH) {
            drop_args(fl);
            take_stash(fl, in, &s->parent->u.y.stash);
            n = 4;
        } else {
            n = take_args(fl, in);
        }
        s->state = FUTOIN__S_EXEC;
        /* From here until the step ends, one completion may claim it, from
         * any thread (remote.c). A plain store: nobody else can hold the
         * handle before its callback runs. */
        atomic_store_explicit(&s->xs, futoin__step_xs(s, FUTOIN__XS_OPEN),
                              memory_order_relaxed);
        if (futoin__hooked(tool)) {
            futoin__hook_enter(s);
        }
        FUTOIN__USER(r, s->f(&s->bsi, s->data, in));
        for (unsigned i = 0; i < n; ++i) {
            if (in->args[i].type) {
                futoin_reset_binval(&in->args[i]);
            }
        }
        if (FUTOIN__UNLIKELY(fl->top != s)) {
            s = fl->top; /* the callback chained on (futoin__step_chain) */
        }
        break;
    }
    }
    if (r->pending && !r->in_cb) {
        futoin__root_settle(r);
        return false;
    }
    return after_callback(fl, s, tool);
}

/* exec_frame() of a loop body `s` when the tool has hooks: every
 * iteration is a frame of its own, entered and left, with no burst of
 * iterations in place. Out of exec_frame() so that its burst keeps the
 * registers it had before hooks existed (flow_run() picks this one). */
static FUTOIN__NOINLINE bool hooked_exec_body(futoin__flow* fl, futoin__step* s)
{
    futoin__root* r = fl->root;
    futoin__step* l = s->parent;
    futoin__eng(futoin__root_tool(r))->app_step = NULL;
    drop_args(fl);
    s->state = FUTOIN__S_EXEC;
    atomic_store_explicit(&s->xs, futoin__step_xs(s, FUTOIN__XS_OPEN),
                          memory_order_relaxed);
    futoin__hook_enter(s);
    if (l->flags & FUTOIN__F_REPEAT) {
        FUTOIN__USER(r, l->u.l.fn.repeat(&s->bsi, l->data, l->u.l.i - 1));
    } else {
        FUTOIN__USER(r, l->u.l.fn.loop(&s->bsi, l->data));
    }
    ++futoin__root_tool(r)->slice_units;
    if (r->pending && !r->in_cb) {
        futoin__root_settle(r);
        return false;
    }
    return after_callback(fl, s, futoin__root_tool(r));
}

/* Run the callback of frame `s` (top of `fl`). Returns AC_OUT when the flow
 * must not be touched any more (its root was cancelled or freed from the
 * callback, or the flow ended), else AC_ON or AC_WAITS (after_callback). A
 * plain step, the usual frame, is run here (as exec_frame_other() would),
 * the rest there. `r` and `tool` are the flow's root and its tool, which
 * the caller holds (not read again). `placed` is 1 when the caller has put
 * the step's one value in the callback scratch (woken_value), else 0. */
static inline __attribute__((always_inline)) int exec_frame(
        futoin__flow* fl, futoin__step* s, futoin__root* r, futoin_tool* tool,
        unsigned placed)
{
    FutoInArgs* in;
    unsigned n;
    /* woken_value() checked all three for a step it `placed` a value for:
     * that call's copy (a constant 1) has no test */
    if (!placed
        && (s->kind != FUTOIN__K_STEP || (s->flags & FUTOIN__F_STASH)
            || futoin__hooked(tool))) {
        return exec_frame_other(fl, s); /* with hooks: step_entered there */
    }
    in = &futoin__eng(tool)->args_in;
    /* sub-steps were consumed since the last callback: forget the cursor */
    futoin__eng(tool)->app_step = NULL;
    /* `placed`: the caller put the one value in slot 0 itself, and the
     * flow holds none (woken_value) */
    n = take_args_in(fl, in, tool) | placed;
    s->state = FUTOIN__S_EXEC;
    /* completions may claim it from now on (see exec_frame_other) */
    atomic_store_explicit(&s->xs, futoin__step_xs(s, FUTOIN__XS_OPEN),
                          memory_order_relaxed);
    FUTOIN__USER(r, s->f(&s->bsi, s->data, in));
    for (unsigned i = 0; i < n; ++i) {
        if (in->args[i].type) {
            futoin_reset_binval(&in->args[i]);
        }
    }
    if (FUTOIN__UNLIKELY(fl->top != s)) {
        s = fl->top; /* the callback chained on (futoin__step_chain) */
    }
    if (r->pending && !r->in_cb) {
        futoin__root_settle(r);
        return false;
    }
    return after_callback(fl, s, tool);
}

/* ---- a run of plain level-0 steps --------------------------------------- */

/* What level0_run() tells flow_run(): leave it (the flow must not be
 * touched), run the next turn from its top (the next step is not plain),
 * a turn ended the way exec_frame()'s callers see it, or yield. */
enum level0_end
{
    L0_OUT = 0,
    L0_NEXT,
    L0_DONE,
    L0_YIELD
};

_Static_assert(offsetof(futoin__step, kind) == offsetof(futoin__step, flags) + 2
                       && offsetof(futoin__step, state)
                                  == offsetof(futoin__step, flags) + 3,
               "flags, kind and state share one 32-bit word");

/* A queued step that level0_run() may run: a K_STEP with no flags but
 * F_CLASS (no successStep() values, no stash), read as the one word its
 * flags, kind and state share. */
static inline __attribute__((always_inline)) bool level0_plain(
        const futoin__step* s)
{
    uint32_t w;
    memcpy(&w, &s->flags, sizeof(w));
    return (w & ~(uint32_t)FUTOIN__F_CLASS)
           == ((uint32_t)FUTOIN__S_QUEUED << 24 | (uint32_t)FUTOIN__K_STEP << 16);
}

/*
 * The steps of a flow's level-0 queue (a root's own steps, issue 22 "add128")
 * after one that completed, while each is plain (level0_plain), no values
 * are pending, no error is being raised and the tool has no hooks
 * (step_entered and step_left come from the general path; the caller
 * checked the first turn): each is popped, run and given back with what
 * flow_run(), exec_frame() and futoin__complete() would do for it, in a
 * loop of its own, so that flow_run() holds none of its registers across
 * these callbacks. A step whose callback did anything but return or call
 * success() with no values on its own frame (values, sub-steps, waiting,
 * an error, stack() memory, chain(), a pending cancel or free, hooks set)
 * leaves the loop and ends its turn as exec_frame() ends it. The flow's
 * budget is e->chain_budget (the count chain() takes from), as the
 * caller's turn left it; the loop starts with that turn's end.
 */
static FUTOIN__NOINLINE enum level0_end level0_run(futoin__flow* fl)
{
    futoin__root* r = fl->root;
    futoin_tool* tool = futoin__root_tool(r);
    struct futoin__engine_tool* e = futoin__eng(tool);
    /* The steps that complete here go back to the steps pool in one
     * splice when the loop ends (each is FREE, and its `xs` closed, as it
     * completes: a stale handle is reported at once), linked again, the
     * last one first: a step's queue link is its `parent` once it runs
     * (engine.h), so each is linked to the one that completed before it.
     * The first to complete is the queue's head as the loop starts (steps
     * run in order, and the first that does not complete ends the loop). */
    futoin__step* const first = fl->head;
    futoin__step* last = NULL;
    size_t n = 0;
    futoin__step* s;
    enum level0_end end;
    /* The callbacks run as FUTOIN__USER() runs them, with r->in_cb counted
     * once for the whole loop: between them only this loop runs, and any
     * pending cancel() or free() (r->pending) ends it. */
    /* Turn ends that pass flow_run()'s checks (--budget != 0, and
     * futoin__tool_busy(tool, 1) false with no clock read) with only the
     * two counts moved; at 0, the checks themselves run. Only chain()
     * moves the counts inside a callback, and a step that chained leaves
     * the loop. */
    uint32_t left = 0;
    ++r->in_cb;
    for (;;) {
        /* the end of flow_run()'s turn: --budget, the time slice */
        if (FUTOIN__UNLIKELY(left == 0)) {
            if (e->chain_budget == 0 || futoin__tool_busy(tool, 1)) {
                end = L0_YIELD;
                break;
            }
            --e->chain_budget;
            left = tool->slice_units + 1 < tool->slice_stride
                           ? tool->slice_stride - tool->slice_units - 1
                           : 0;
            if (left > e->chain_budget) {
                left = e->chain_budget;
            }
        } else {
            --left;
            --e->chain_budget;
            ++tool->slice_units;
        }
        s = fl->head;
        if (!s || !level0_plain(s) || fl->args) {
            end = L0_NEXT;
            break;
        }
        /* pop_queue() and push_frame(): a step of fl's queue has `flow`
         * set to fl since it was queued; its `next` (the rest of the
         * queue) becomes its `parent`, NULL at level 0 */
        fl->head = s->next;
        s->parent = NULL;
        fl->top = s;
        /* app_step needs no reset: nothing was ever appended to this
         * step (its generation is new), and the cursor names a step by
         * record and generation */
        s->state = FUTOIN__S_EXEC;
        atomic_store_explicit(&s->xs, futoin__step_xs(s, FUTOIN__XS_OPEN),
                              memory_order_relaxed);
        s->f(&s->bsi, s->data, &e->args_in);
        if (FUTOIN__UNLIKELY(fl->top != s
                             || (s->flags
                                 & (uint16_t)~(FUTOIN__F_SUCCESS | FUTOIN__F_CLASS))
                             || s->rare || r->pending || futoin__hooked(tool))) {
            goto slow;
        }
        /* No raise can be pending: the caller found none, and nothing
         * requests one at fl while its only frame runs its callback (an
         * error of the step itself is F_ERROR; add() to a running root
         * from here fails this step; timers and posts run from the loop,
         * not inside a callback). */
        /* futoin__complete() of a step that holds nothing but maybe a
         * release hook of its data (a binding's step), which runs first,
         * as futoin__step_release_slow() runs it */
        fl->top = NULL;
        if (s->rel.release) {
            void (*rel)(void*) = (s->flags & FUTOIN__F_CLASS)
                                         ? s->rel.cls->release
                                         : s->rel.release;
            s->rel.release = NULL;
            if (rel) {
                rel(s->data); /* in_cb counted (above) */
            }
        }
        /* it ended normally, so no completion may claim it any more
         * (futoin__step_retire_to; only a misusing thread races here, and
         * nothing here aborts a step) */
        atomic_store_explicit(
                &s->xs,
                (atomic_load_explicit(&s->xs, memory_order_relaxed)
                 + FUTOIN__XS_GEN_ONE)
                        & ~3u, /* the next generation, NONE */
                memory_order_relaxed);
        s->state = FUTOIN__S_FREE;
        FUTOIN__DEBUG_ASSERT(last || s == first);
        s->next = last;
        last = s;
        ++n;
    }
    --r->in_cb;
    if (last) {
        futoin__recpool_put_chain_at(&e->steps, last, first, n,
                                     offsetof(futoin__step, next));
    }
    return end;
slow:
    --r->in_cb;
    if (last) {
        futoin__recpool_put_chain_at(&e->steps, last, first, n,
                                     offsetof(futoin__step, next));
    }
    /* the end of exec_frame() */
    if (FUTOIN__UNLIKELY(fl->top != s)) {
        /* the callback chained on (futoin__step_chain): chain() gave `s`
         * back already */
        s = fl->top;
    }
    if (r->pending && !r->in_cb) {
        futoin__root_settle(r);
        return L0_OUT;
    }
    return after_callback(fl, s, tool) ? L0_DONE : L0_OUT;
}

/*
 * ext chain(): inside the execute callback of step `bsi`, complete it as
 * success() with no values would, and start the step that runs next, if
 * that is a plain step whose callback is one of `fns` (a binding's own
 * trampolines): the binding runs it itself, without returning here, so a
 * run of steps in one language costs no crossing into it per step. What
 * flow_run() and exec_frame() would check between the two steps is checked
 * here, and anything unusual (another outcome already chosen, sub-steps,
 * waiting, a pending cancel or free, an error being raised, the flow's
 * budget or the time slice used up, a next step of another kind) returns
 * NULL having done nothing:
 * the caller then completes the step the usual way. exec_frame() picks the
 * chained step up from fl->top when the first callback returns.
 */
static FUTOIN__NOINLINE FutoInAsyncSteps* chain_slow(
        FutoInAsyncSteps* bsi, const FutoInAsyncSteps_execute_callback* fns,
        size_t nfns, void** data, bool keep)
{
    futoin__step* s = futoin__as_step(bsi);
    futoin__step* parent;
    futoin__step* next;
    futoin__flow* fl;
    futoin__root* r;
    size_t i;
    if (!futoin__tool_on_thread(futoin__recpool_tool(s))
        || s->state != FUTOIN__S_EXEC || s->kind != FUTOIN__K_STEP
        || (s->flags
            & (FUTOIN__F_SUCCESS | FUTOIN__F_ERROR | FUTOIN__F_ADDED
               | FUTOIN__F_WAITEXT | FUTOIN__F_TIMEOUT | FUTOIN__F_CANCEL
               | FUTOIN__F_STASH))) {
        return NULL;
    }
    fl = s->flow;
    r = fl->root;
    if (fl->top != s || r->in_cb != 1 || r->pending || fl->args
        || fl->raise) {
        return NULL;
    }
    parent = s->parent;
    if (parent && parent->state != FUTOIN__S_SUBS) {
        return NULL;
    }
    next = parent ? parent->sub_head : fl->head;
    if (!next || next->kind != FUTOIN__K_STEP
        || (next->flags & FUTOIN__F_STASH)) {
        return NULL;
    }
    for (i = 0; i < nfns && next->f != fns[i]; ++i) {
    }
    /* With hooks, each step is entered and left the usual way. */
    if (i == nfns || futoin__eng(futoin__root_tool(r))->chain_budget == 0
        || futoin__hooked(futoin__root_tool(r)) || futoin__tool_busy(futoin__root_tool(r), 1)) {
        return NULL;
    }
    --futoin__eng(futoin__root_tool(r))->chain_budget;
    if (keep) { /* chain_kept(): the data is the caller's again */
        s->rel.release = NULL;
        s->flags &= (uint16_t)~FUTOIN__F_CLASS;
    }
    pop_frame(fl, s, false); /* what futoin__complete() does for a step */
    if (parent) {
        parent->sub_head = next->next;
    } else {
        pop_queue(&fl->head);
    }
    push_frame(fl, next, parent);
    futoin__eng(futoin__root_tool(r))->app_step = NULL;
    next->state = FUTOIN__S_EXEC;
    atomic_store_explicit(&next->xs,
                          futoin__step_xs(next, FUTOIN__XS_OPEN),
                          memory_order_relaxed);
    *data = next->data;
    return &next->bsi;
}

/* The usual chain(): a plain step (nothing but its data's release hook to
 * give back: no timer, cancel handler, stack() memory, sub-steps,
 * successStep() values, outcome or wait asked for) of a root's or a
 * frame's queue, the next one plain too and one of `fns`, no hooks, the
 * flow's budget and the time slice not used up without a clock read.
 * Then what chain_slow() does (pop_frame() and futoin__step_release() of
 * such a step, the dequeue and start of the next) comes down to the
 * stores below, and the one call is the release hook, at the point where
 * pop_frame() made it. Everything else, hooks set included, goes to
 * chain_slow() as before, which checks it all again. */
static inline __attribute__((always_inline)) FutoInAsyncSteps* step_chain(
        FutoInAsyncSteps* bsi, const FutoInAsyncSteps_execute_callback* fns,
        size_t nfns, void** data, bool keep)
{
    futoin__step* s = futoin__as_step(bsi);
    futoin_tool* tool;
    struct futoin__engine_tool* e;
    futoin__step* parent;
    futoin__step* next;
    futoin__flow* fl;
    futoin__root* r;
    void (*rel)(void*);
    size_t i;
    /* the ext table's slot: any handle may come, or none */
    if (FUTOIN__UNLIKELY(!bsi || bsi->api != &futoin__step_api || !fns
                         || !data)) {
        return NULL;
    }
    tool = futoin__recpool_tool(s);
    if (FUTOIN__UNLIKELY(!futoin__tool_on_thread(tool))) {
        return NULL;
    }
    if (s->state != FUTOIN__S_EXEC || s->kind != FUTOIN__K_STEP
        || (s->flags & (uint16_t)~FUTOIN__F_CLASS) || s->rare
        || s->sub_head) {
        goto slow;
    }
    fl = s->flow;
    r = fl->root;
    if (fl->top != s || r->in_cb != 1 || r->pending || fl->args
        || fl->raise) {
        goto slow;
    }
    parent = s->parent;
    if (parent) {
        if (parent->state != FUTOIN__S_SUBS) {
            goto slow;
        }
        next = parent->sub_head;
    } else {
        next = fl->head;
    }
    if (!next || next->kind != FUTOIN__K_STEP
        || (next->flags & FUTOIN__F_STASH)) {
        goto slow;
    }
    for (i = 0; i < nfns && next->f != fns[i]; ++i) {
    }
    e = futoin__eng(tool);
    /* futoin__tool_busy(tool, 1) that would read no clock */
    if (i == nfns || e->chain_budget == 0 || e->hooks
        || tool->slice_units + 1 >= tool->slice_stride) {
        goto slow;
    }
    --e->chain_budget;
    ++tool->slice_units;
    /* pop_frame(fl, s, false) and futoin__step_release(tool, s) */
    fl->top = parent;
    /* chain_kept(): the data is the caller's again, no hook runs */
    rel = keep ? NULL
               : (s->flags & FUTOIN__F_CLASS) ? s->rel.cls->release : s->rel.release;
    s->rel.release = NULL;
    s->flags = 0;
    if (rel) {
        FUTOIN__USER(r, rel(s->data));
    }
    futoin__step_retire_to(futoin__recpool_of(s), s); /* inline in both */
    /* the next step leaves its queue and starts (push_frame) */
    if (parent) {
        parent->sub_head = next->next;
    } else {
        fl->head = next->next;
    }
    push_frame(fl, next, parent);
    e->app_step = NULL;
    next->state = FUTOIN__S_EXEC;
    atomic_store_explicit(&next->xs,
                          futoin__step_xs(next, FUTOIN__XS_OPEN),
                          memory_order_relaxed);
    *data = next->data;
    return &next->bsi;
slow:
    return chain_slow(bsi, fns, nfns, data, keep);
}

FutoInAsyncSteps* futoin__step_chain(FutoInAsyncSteps* bsi,
                                     const FutoInAsyncSteps_execute_callback* fns,
                                     size_t nfns, void** data)
{
    return step_chain(bsi, fns, nfns, data, false);
}

/* ext chain_kept(): chain() that hands the data of the step chained over
 * back to the caller instead of calling its release hook, so that the
 * binding that runs the steps releases it inline. */
FutoInAsyncSteps* futoin__step_chain_kept(FutoInAsyncSteps* bsi,
                                          const FutoInAsyncSteps_execute_callback* fns,
                                          size_t nfns, void** data)
{
    return step_chain(bsi, fns, nfns, data, true);
}

/* Complete top frame `s` with success: its values stay in fl->args for the
 * next step. */
static FUTOIN__NOINLINE void complete_frame(futoin__flow* fl, futoin__step* s)
{
    /* No values come out of parallel() or a loop, unless its error handler
     * (or steps that handler added) supplied them. */
    if ((s->kind == FUTOIN__K_PARALLEL || s->kind == FUTOIN__K_LOOP)
        && s->state != FUTOIN__S_ERRH && !(s->flags & FUTOIN__F_NOEH)) {
        drop_args(fl);
    }
    pop_frame(fl, s, false);
}

/* futoin__complete() of the usual frame that has a release hook (the
 * bindings' steps): the same pop, then the hook (futoin__step_release). */
static FUTOIN__NOINLINE void complete_released(futoin__flow* fl,
                                               futoin__step* s)
{
    fl->top = s->parent;
    futoin__step_release_slow(futoin__flow_tool(fl), s);
}

/* futoin__complete() of a frame of `tool`, inline where the caller holds
 * the tool already (the run loop: issue 22, T3 completes two steps per
 * wake). Returns true when it ran no code but ours (no release hook, no
 * pop_frame()): the flow and its root are as they were, but for the
 * popped frame. */
static inline __attribute__((always_inline)) bool complete_in(
        futoin__flow* fl, futoin__step* s, futoin_tool* tool)
{
    /* The usual frame, a step or loop body that holds nothing (no timer,
     * sub-steps, stack() memory, pending raise or loop control aimed at
     * it, nothing to release): what pop_frame() and futoin__step_release()
     * would do comes down to this, with no call, so no register needs
     * saving; one whose data has a release hook (a binding's step) only
     * adds that (complete_released). Anything else takes the general
     * path. */
    if ((s->kind == FUTOIN__K_STEP || s->kind == FUTOIN__K_BODY)
        && !(s->flags & (FUTOIN__F_TIMEOUT | FUTOIN__F_OWNARGS))
        && !s->sub_head && !s->rare
        && !fl->raise
        && !futoin__hooked(tool)) { /* hooks: step_left there */
        if (s->rel.release) {
            complete_released(fl, s);
            return false;
        }
        fl->top = s->parent;
        /* a step or body: a record of the small class */
        futoin__step_retire_to(&futoin__eng(tool)->steps, s);
        return true;
    }
    complete_frame(fl, s);
    return false;
}

void futoin__complete(futoin__flow* fl, futoin__step* s)
{
    (void)complete_in(fl, s, futoin__flow_tool(fl));
}

/* The unwinding of LoopBreak / LoopCont reached its target loop `l` (the
 * top frame): the loop ends, or runs its next iteration. The break was
 * handled, so the flow's last error is forgotten, as in the reference
 * (last_exception and error_info read as null after the loop). */
static void loop_control(futoin__flow* fl, futoin__step* l)
{
    futoin__root* r = fl->root;
    bool cont = raise_rec(fl)->cont != 0; /* ctl is set: a record */
    raise_handled(fl);
    futoin__root_clear_error(r);
    futoin__root_set_exception(r, NULL);
    drop_args(fl);
    futoin__queue_free(futoin__root_tool(r), l->sub_head);
    l->sub_head = NULL;
    if (cont) {
        futoin__loop_iterate(l);
    } else {
        futoin__complete(fl, l);
    }
}

/* Decide what a frame's callback asked for. Inlined into exec_frame(), as
 * it was before a second caller (hooked_exec_body) came. */
static inline __attribute__((always_inline)) int after_callback(
        futoin__flow* fl, futoin__step* s, futoin_tool* tool)
{
    uint16_t f = s->flags;
    if (!(f & (FUTOIN__F_ERROR | FUTOIN__F_ADDED | FUTOIN__F_TIMEOUT
               | FUTOIN__F_CANCEL | FUTOIN__F_WAITEXT))) {
        /* the usual outcome, success() or none, in one test: as below */
        return complete_in(fl, s, tool) ? AC_DONE : AC_ON;
    }
    if (f == FUTOIN__F_WAITEXT) {
        goto wait; /* the next usual outcome (T2, T3): one test, not five */
    }
    if (f & FUTOIN__F_ERROR) {
        return unwind_error(fl, s);
    }
    if (f & FUTOIN__F_ADDED) {
        s->state = FUTOIN__S_SUBS;
        return AC_ON;
    }
    if (f & FUTOIN__F_SUCCESS) {
        futoin__complete(fl, s);
        return AC_ON;
    }
    if (f & (FUTOIN__F_TIMEOUT | FUTOIN__F_CANCEL | FUTOIN__F_WAITEXT)) {
    wait:
        s->state = FUTOIN__S_WAIT;
        /* no sub-steps (F_ADDED went to SUBS): `sub_head` holds the time
         * (engine.h) until the wait ends */
        FUTOIN__DEBUG_ASSERT(!s->sub_head);
        s->wait_since = futoin__tool_time_cached(tool);
        if (futoin__hooked(tool)) {
            futoin__hook_wait(s, FUTOIN_HOOK_WAIT_BEGUN);
            return AC_ON;
        }
        return fl->raise ? AC_ON : AC_WAITS;
    }
    /* §1.6 implicit success: nothing added, nothing to wait for. */
    futoin__complete(fl, s);
    return AC_ON;
}

/*
 * Unwind an error from frame `at` (frames above it leave as cancelled),
 * offering the flow's code to each frame from `at` down (§1.2). A frame that
 * had set a cancel handler gets it called first (it will not complete the
 * way it was waiting for), then its error handler runs:
 *  - success() in the handler: continue after that frame;
 *  - add() in the handler: the added steps replace the handler on the same
 *    level (§1.2.1), and the handler is not called again;
 *  - a new error(): unwinding continues with the new code;
 *  - a silent return: unwinding continues.
 */
static bool unwind_error(futoin__flow* fl, futoin__step* at)
{
    futoin__root* r = fl->root;

    while (fl->top && fl->top != at) {
        pop_frame(fl, fl->top, true);
    }
    drop_args(fl);
    if (fl->top && (fl->top->flags & FUTOIN__F_VAL1)) {
        drop_val1(fl->top); /* a DONE step the error starts from: its value
                             * goes as the flow's would (futoin__val1) */
    }
    raise_clear_at(fl);

    for (;;) {
        futoin__step* s = fl->top;
        FutoInAsyncSteps_error_callback eh;
        if (!s) {
            /* The code must outlive the flow for a branch flow. */
            futoin__raise_rec* x = raise_rec(fl);
            const char* code = raise_code(fl);
            bool owned = x && x->owned;
            if (x) {
                x->code = NULL;
                x->owned = 0;
                raise_tidy(fl); /* a branch's break target stays */
            } else if (fl->raise == FUTOIN__RAISE_BARE) {
                fl->raise = 0;
            }
            flow_end(fl, code ? code : FUTOIN_ERR_INTERNAL_ERROR);
            if (owned) {
                free((char*)code);
            }
            return false;
        }
        if (s == raise_ctl(fl) && futoin__is_loop_code(raise_code(fl))) {
            loop_control(fl, s);
            return true;
        }
        if (s->state != FUTOIN__S_WAIT) { /* WAIT: wait_since (engine.h) */
            futoin__queue_free(futoin__root_tool(r), s->sub_head);
        }
        s->sub_head = NULL;
        eh = (s->flags & FUTOIN__F_NOEH) ? NULL : s->eh;
        if (s->kind == FUTOIN__K_SYNC || s->kind == FUTOIN__K_LOOP
            || s->kind == FUTOIN__K_BODY || s->kind == FUTOIN__K_UNLOCK) {
            /* Internal frames: the user's handler of a guarded step sits
             * on the step itself; loops have none. */
            eh = NULL;
        }
        if (s->kind == FUTOIN__K_PARALLEL) {
            futoin__parallel_cancel(s);
        } else if (s->kind != FUTOIN__K_LOOP && s->kind != FUTOIN__K_SYNC) {
            stop_timer(futoin__root_tool(r), s);
            run_cancel_handler(r, s);
            if (r->pending && !r->in_cb) {
                futoin__root_settle(r);
                return false;
            }
        }
        if (eh) {
            futoin__eng(futoin__root_tool(r))->app_step = NULL;
            s->state = FUTOIN__S_ERRH;
            s->flags &= (uint16_t) ~(FUTOIN__F_SUCCESS | FUTOIN__F_ERROR
                                     | FUTOIN__F_ADDED | FUTOIN__F_WAITEXT);
            FUTOIN__USER(r, eh(&s->bsi, s->data, raise_code(fl)));
            if (r->pending && !r->in_cb) {
                futoin__root_settle(r);
                return false;
            }
            if (s->flags & FUTOIN__F_ERROR) {
                /* a new code (maybe a break of its own) was stored by
                 * flow_set_code(); unwinding goes on with it */
            } else if (s->flags & FUTOIN__F_ADDED) {
                if (futoin__hooked(futoin__root_tool(r))) {
                    futoin__hook_error(r, s, FUTOIN_HOOK_ERROR_HANDLED,
                                       raise_code(fl), NULL);
                }
                raise_handled(fl); /* a break ends here */
                s->flags |= FUTOIN__F_NOEH;
                s->state = FUTOIN__S_SUBS;
                return true;
            } else if (s->flags & FUTOIN__F_SUCCESS) {
                if (futoin__hooked(futoin__root_tool(r))) {
                    futoin__hook_error(r, s, FUTOIN_HOOK_ERROR_HANDLED,
                                       raise_code(fl), NULL);
                }
                raise_handled(fl);
                futoin__complete(fl, s);
                return true;
            }
        }
        pop_frame(fl, s, false);
        drop_args(fl);
    }
}

/* ---- the loop ------------------------------------------------------------ */

/* futoin__loop_iterate() of loop frame `l` (the top of `fl`, with no
 * sub-steps left) returning the body frame it queued, or NULL. The usual
 * case, a body record off the free list, is inline: no call. */
static inline __attribute__((always_inline)) futoin__step* loop_next(
        futoin__flow* fl, futoin__step* l, futoin_tool* tool)
{
    futoin__step* b;
    if (!(l->flags & FUTOIN__F_REPEAT) || l->u.l.i < l->u.l.count) {
        b = futoin__step_take_small(futoin__eng(tool), fl, FUTOIN__K_BODY);
        if (b) {
            futoin__body_init(b, l);
            l->sub_head = b;
            ++l->u.l.i;
            return b;
        }
    }
    futoin__loop_iterate(l);
    return NULL;
}

/*
 * Whether body frame `b` (the top of `fl`, its sub-steps all done) may run
 * its loop's next iteration itself, instead of being popped and given back
 * while a fresh record is taken for the next one: what the in-place burst
 * does for an iteration that completes at once (loop_burst), extended to
 * one whose sub-steps ran (issue 22, T3: the usual asynchronous loop). The
 * frame must hold nothing a pop would release or report (only F_ADDED
 * set: no timeout, cancel handler, values it owns; no rare record: no
 * stack() memory, whose cleanup tells a binding the step ended; no
 * release hook), no error or loop control may be pending, no hooks or
 * trace may expect a frame per iteration, and the loop must go on. Then
 * it becomes the next iteration here: its flags cleared, its generation
 * moved on (as a retired record's), the loop's count taken. A call through
 * its handle after the iteration ended is misuse either way (README, "A
 * step's handle ends with its step"): here it reaches the next iteration
 * at once, as it did already after an iteration of the burst.
 */
static inline __attribute__((always_inline)) bool body_again(
        futoin__flow* fl, futoin__step* b, futoin_tool* tool)
{
    futoin__step* l = b->parent;
    const bool rep = futoin__body_repeats(b);
    if (b->flags != FUTOIN__F_ADDED || b->rare || b->rel.release || fl->raise
        || futoin__hooked(tool) || FUTOIN__TRACED(fl->root)
        || (rep && l->u.l.i >= l->u.l.count)) {
        return false;
    }
    b->flags = 0;
    b->state = FUTOIN__S_QUEUED;
    futoin__step_next_gen(b);
    if (rep) {
        ++l->u.l.i; /* loop()'s frame is not read (futoin__body_init) */
    }
    return true;
}

/* A DONE step `s` that holds its value (F_VAL1), popped the usual way
 * (complete_in()'s first branch: no code but ours runs) to a frame whose
 * next sub-step is a plain step, which exec_frame() runs itself: then the
 * value goes straight into the callback scratch, not through the flow's
 * pending values (take_val1 into the hot buffer, then take_args_in out of
 * it: issue 22, T3, a copy and two clears per wake). Returns that next
 * step, with `s` popped and its value in slot 0 of the scratch; NULL, with
 * nothing done, when any of it does not hold. */
static inline __attribute__((always_inline)) futoin__step* woken_value(
        futoin__flow* fl, futoin__step* s, futoin_tool* tool)
{
    futoin__step* p = s->parent;
    futoin__step* next;
    /* a root's own step (T2) leaves at the first test */
    if (!p || p->state != FUTOIN__S_SUBS || !(next = p->sub_head)
        || next->kind != FUTOIN__K_STEP || (next->flags & FUTOIN__F_STASH)
        || s->kind != FUTOIN__K_STEP
        || (s->flags & (FUTOIN__F_TIMEOUT | FUTOIN__F_OWNARGS)) || s->rare
        || fl->raise || fl->args || futoin__hooked(tool)) {
        return NULL;
    }
    futoin__val1_read(s, &futoin__eng(tool)->args_in.args[0]);
    futoin__val1_clear(s); /* a fresh record has no sub_head, no rel */
    fl->top = p;
    futoin__step_retire_to(&futoin__eng(tool)->steps, s);
    return next;
}

static void flow_run(futoin__flow* fl)
{
    futoin__root* r = fl->root;
    futoin_tool* tool = futoin__root_tool(r);
    unsigned budget = FUTOIN__FLOW_BUDGET;

    fl->state = FUTOIN__FL_RUNNING;
    ++futoin__eng(tool)->running;
    /* `budget` counts this iteration's step too: at most
     * FUTOIN__FLOW_BUDGET steps run. The slice is checked between steps
     * (a `continue` goes to the test), not before the first one: a flow
     * whose turn comes runs at least one step, so it never falls behind
     * immediates queued after it. */
    do {
        futoin__step* top;
    turn:
        if (FUTOIN__UNLIKELY(fl->raise) && raise_pending(fl)) {
            /* A raise at the top with no frame (raised between level-0
             * steps, or before the first): unwind_error(fl, NULL) ends the
             * flow with the error, unhandled; it must not be dropped. */
            if (!unwind_error(fl, raise_start(fl))) {
                goto out;
            }
            continue;
        }
        top = fl->top;
        if (!top) {
            futoin__step* next = pop_queue(&fl->head);
            if (!next) {
                flow_end(fl, NULL);
                goto out;
            }
            push_frame(fl, next, NULL);
            futoin__eng(tool)->chain_budget = budget - 1;
            int rc = exec_frame(fl, next, r, tool, 0);
            if (rc == AC_OUT) {
                goto out;
            }
            if (rc == AC_WAITS) {
                fl->state = FUTOIN__FL_IDLE;
                goto out;
            }
            /* More level-0 steps after one that completed: a run of plain
             * ones goes to level0_run(), which starts with this turn's end
             * (a root of one step, T1, or one that waits, T2, never
             * enters it). */
            if (!fl->top && fl->head && level0_plain(fl->head) && !fl->args
                && !fl->raise && !futoin__hooked(tool)) {
                switch (level0_run(fl)) {
                case L0_OUT:
                    goto out;
                case L0_YIELD:
                    goto yield;
                case L0_NEXT:
                    budget = futoin__eng(tool)->chain_budget + 1;
                    goto turn;
                default:
                    break;
                }
            }
            budget = futoin__eng(tool)->chain_budget + 1;
            continue;
        }
        switch (top->state) {
        case FUTOIN__S_SUBS:
        subs: {
            futoin__step* next = top->sub_head;
            if (!next && top->kind == FUTOIN__K_BODY
                && body_again(fl, top, tool)) {
                /* The iteration's sub-steps are done and its frame holds
                 * nothing: the same frame runs the next iteration
                 * (body_again), with this turn's end checks as below. */
                next = top;
                top = top->parent;
                /* no slice check: the turn that ran its last sub-step
                 * ended with one, and no code but ours ran since */
                if (--budget == 0) {
                    /* queued under the loop, as loop_next() leaves it */
                    next->next = NULL;
                    top->sub_head = next;
                    fl->top = top;
                    goto yield;
                }
                goto run_body_unhooked; /* body_again() saw no hooks */
            }
            if (!next && top->kind == FUTOIN__K_LOOP) {
                /* The loop's next iteration. Its body frame comes off the
                 * free list with no call (futoin__loop_iterate() else) and
                 * runs at once: what the next turn would do, with the
                 * checks of this turn's end (nothing else can have
                 * changed: no user code ran). */
                next = loop_next(fl, top, tool);
                if (!next) {
                    break;
                }
                if (--budget == 0 || futoin__tool_busy(tool, 1)) {
                    goto yield;
                }
            }
            if (next) {
                top->sub_head = next->next; /* push_frame() sets parent */
            }
            if (next) {
                push_frame(fl, next, top);
                if (next->kind == FUTOIN__K_BODY) {
                    /* no chain() from a body (futoin__step_chain): its
                     * budget is not handed over */
                    if (futoin__hooked(tool)) {
                        if (!hooked_exec_body(fl, next)) {
                            goto out;
                        }
                        break;
                    }
                run_body_unhooked:
                    if (!exec_body_in(fl, next, r, tool)) {
                        goto out;
                    }
                    /* A body that only added steps, the usual
                     * asynchronous loop: its first sub-step next. The
                     * root's pending cancel or free was checked after the
                     * body's callback, no code but ours ran since (it
                     * would have set other flags: an error, a burst's
                     * outcome), and nothing has moved the top frame; the
                     * next turn would find this frame and go to `subs`
                     * after the budget and slice checks, as here. */
                    if (next->flags == FUTOIN__F_ADDED
                        && next->state == FUTOIN__S_SUBS && !fl->raise) {
                        FUTOIN__DEBUG_ASSERT(fl->top == next);
                        if (--budget == 0 || futoin__tool_busy(tool, 1)) {
                            goto yield;
                        }
                        top = next;
                        goto subs;
                    }
                } else {
                    futoin__eng(tool)->chain_budget = budget - 1;
                    int rc = exec_frame(fl, next, r, tool, 0);
                    if (rc == AC_OUT) {
                        goto out;
                    }
                    budget = futoin__eng(tool)->chain_budget + 1;
                    if (rc == AC_WAITS) {
                        fl->state = FUTOIN__FL_IDLE;
                        goto out;
                    }
                    if (rc == AC_DONE) {
                        goto popped;
                    }
                }
            } else {
                futoin__complete(fl, top);
            }
            break;
        }
        case FUTOIN__S_DONE:
            /* A step completed from outside (a wake, T2/T3): once it is
             * popped with no code but ours run, the frame below goes on
             * in this turn (nothing the turn's end checks can have
             * changed). Its value, if it holds one, is the flow's now. */
            if (top->flags & FUTOIN__F_VAL1) {
                futoin__step* next = woken_value(fl, top, tool);
                if (next) {
                    /* popped, its value in the scratch: the next step */
                    int rc;
                    top = fl->top;
                    top->sub_head = next->next;
                    push_frame(fl, next, top);
                    futoin__eng(tool)->chain_budget = budget - 1;
                    rc = exec_frame(fl, next, r, tool, 1);
                    if (rc == AC_OUT) {
                        goto out;
                    }
                    budget = futoin__eng(tool)->chain_budget + 1;
                    if (rc == AC_WAITS) {
                        fl->state = FUTOIN__FL_IDLE;
                        goto out;
                    }
                    if (rc == AC_DONE) {
                    popped:
                        /* the step is popped (AC_DONE): the frame below
                         * goes on after the checks of this turn's end, as
                         * the next turn would (no raise: complete_in()
                         * took its first branch) */
                        top = fl->top;
                        if (top && top->state == FUTOIN__S_SUBS) {
                            if (--budget == 0 || futoin__tool_busy(tool, 1)) {
                                goto yield;
                            }
                            goto subs;
                        }
                    }
                    break;
                }
                take_val1(fl, top, tool);
            }
            if (complete_in(fl, top, tool) && (top = fl->top) != NULL
                && top->state == FUTOIN__S_SUBS) {
                goto subs;
            }
            break;
        default: /* WAIT: an external event will schedule us */
            fl->state = FUTOIN__FL_IDLE;
            goto out;
        }
        if (r->pending && !r->in_cb) {
            futoin__root_settle(r);
            goto out;
        }
        /* the slice used up: libuv gets its turn */
    } while (--budget != 0 && !futoin__tool_busy(tool, 1));
yield:
    /* Budget or slice used up: yield to the other flows on this tool. */
    fl->state = FUTOIN__FL_IDLE;
    futoin__flow_schedule(fl);
out:
    --futoin__eng(tool)->running;
}

/* ---- calls from outside a callback --------------------------------------- */

/* futoin__step_resolve() of a step with no timer while the tool has no
 * hooks (futoin__step_complete's fast path, which claimed it and set its
 * values). Returns 1, that call's result, so that the call is a jump. */
int futoin__step_wake(futoin__step* s)
{
    s->flags &= (uint16_t)~FUTOIN__F_CANCEL;
    s->state = FUTOIN__S_DONE;
    s->sub_head = NULL; /* it held wait_since (engine.h) */
    futoin__flow_schedule(s->flow);
    return 1;
}

/* External success() of a waiting step (state WAIT). */
void futoin__step_resolve(futoin__step* s)
{
    futoin__flow* fl = s->flow;
    if (futoin__hooked(futoin__flow_tool(fl))) {
        futoin__hook_wait(s, FUTOIN_HOOK_WAIT_ENDED);
    }
    stop_timer(futoin__flow_tool(fl), s);
    /* the external operation finished: nothing is left to cancel, even if
     * the root is cancelled before the flow resumes */
    s->flags &= (uint16_t)~FUTOIN__F_CANCEL;
    s->state = FUTOIN__S_DONE;
    s->sub_head = NULL; /* it held wait_since (engine.h) */
    futoin__flow_schedule(fl);
}
