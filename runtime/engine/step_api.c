/*
 * The FTN12 table of step handles: what a callback's `bsi` can do.
 *
 * Each entry checks the step's state first. Misuse inside a live flow
 * becomes InternalError in that flow, as §2.1 asks; misuse that has no flow
 * to go to (a handle of a finished step) is reported through the tool's
 * misuse callback and otherwise ignored. Nothing is ever undefined
 * behaviour as long as the tool is alive: step records are pooled and
 * quarantined (engine.h).
 */
#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Out of line, as the error paths below: its message buffer would give
 * every gate that inlines it a stack protector's canary (issue 22). */
static FUTOIN__NOINLINE void misuse(futoin__step* s, const char* what)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "%s through the handle of a finished step", what);
    futoin__tool_misuse(futoin_async_tool(&s->bsi), msg);
}

/* Values passed to success() belong to us from the call on: a rejected
 * call still has to clean them up and reset the caller's copy. */
static void drop_values(FutoInArgs* args)
{
    if (args) {
        futoin__args_clear(args);
    }
}

/* Error paths keep their message buffers in functions of their own: a
 * char array makes the stack protector guard the whole function, and the
 * gates below run on every call. */
static FUTOIN__NOINLINE void not_in_callback(futoin__step* s, const char* what)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "%s outside of the step's own callback", what);
    futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR, msg);
}

/* Common gate of the calls that only a running callback may make.
 * Returns true if the call may go on. */
static bool gate_exec(futoin__step* s, const char* what, bool in_errh)
{
    if (!futoin__on_loop(s, what)) {
        return false;
    }
    if (s->state == FUTOIN__S_EXEC || (in_errh && s->state == FUTOIN__S_ERRH)) {
        return true;
    }
    if (s->state == FUTOIN__S_FREE) {
        misuse(s, what);
        return false;
    }
    not_in_callback(s, what);
    return false;
}

/* A call after success() (a second success(), error(), add() ...): the
 * step already completed, so, as in the reference implementation, its own
 * error handler is out of the picture and the InternalError is raised one
 * level up, at its parent's handler. */
static FUTOIN__NOINLINE void misuse_after_success(futoin__step* s,
                                                  const char* what)
{
    char msg[96];
    snprintf(msg, sizeof(msg), "%s after success()", what);
    s->flags |= FUTOIN__F_NOEH;
    futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR, msg);
}

/* Steps may only be added while nothing decided the step's outcome. */
static bool gate_add(futoin__step* s, const char* what)
{
    if (!gate_exec(s, what, true)) {
        return false;
    }
    if (s->flags & FUTOIN__F_ERROR) {
        return false; /* already failing; the error wins */
    }
    if (s->flags & FUTOIN__F_SUCCESS) {
        misuse_after_success(s, what);
        return false;
    }
    return true;
}

static futoin__step* new_sub(futoin__step* s, uint8_t kind)
{
    futoin__step* n = futoin__step_new(s->flow, kind);
    if (!n) {
        futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR, "out of memory");
        return NULL;
    }
    futoin__sub_append(s, n);
    s->flags |= FUTOIN__F_ADDED;
    return n;
}

/* add() as it was before its fast path (step_add): every check, and a
 * record carved when the free list holds no more than its quarantine. */
static FUTOIN__NOINLINE void step_add_slow(FutoInAsyncSteps* bsi, void* data,
                                           FutoInAsyncSteps_execute_callback f,
                                           FutoInAsyncSteps_error_callback eh)
{
    futoin__step* s = futoin__as_step(bsi);
    futoin__step* n;
    if (!gate_add(s, "add()")) {
        return;
    }
    if (!f) {
        futoin__step_error(s, FUTOIN_ERR_INVALID_REQUEST,
                           "add(): the execute callback is NULL");
        return;
    }
    n = futoin__step_new_plain(s->flow, f, eh, data);
    if (!n) {
        futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR, "out of memory");
        return;
    }
    s->flags |= FUTOIN__F_ADDED;
    futoin__sub_append(s, n); /* as new_sub(), last: nothing to keep */
}

/*
 * add() in the step's own callback (not its error handler), nothing
 * decided yet, a record on the free list: what step_add_slow() would do,
 * with no call, so no register is saved around one (issue 22: two of
 * these per wake of a looping flow, T3). Anything else goes there.
 */
static void step_add(FutoInAsyncSteps* bsi, void* data,
                     FutoInAsyncSteps_execute_callback f,
                     FutoInAsyncSteps_error_callback eh)
{
    futoin__step* s = futoin__as_step(bsi);
    struct futoin__engine_tool* e;
    futoin__step* n;
    futoin_tool* tool;
    if (FUTOIN__UNLIKELY(!s || !f)) {
        goto slow;
    }
    tool = futoin__recpool_tool(s);
    if (FUTOIN__UNLIKELY(!futoin__tool_on_thread(tool))
        || s->state != FUTOIN__S_EXEC
        || (s->flags & (FUTOIN__F_ERROR | FUTOIN__F_SUCCESS))) {
        goto slow;
    }
    e = futoin__eng(tool);
    n = futoin__step_take_plain(e, s->flow, f, eh, data);
    if (FUTOIN__UNLIKELY(!n)) {
        goto slow;
    }
    s->flags |= FUTOIN__F_ADDED;
    futoin__sub_append_in(e, s, n);
    return;
slow:
    step_add_slow(bsi, data, f, eh);
}

static FutoInAsyncSteps* step_parallel(FutoInAsyncSteps* bsi, void* data,
                                       FutoInAsyncSteps_error_callback eh)
{
    futoin__step* s = futoin__as_step(bsi);
    futoin__step* p;
    if (!gate_add(s, "parallel()")) {
        return NULL;
    }
    p = new_sub(s, FUTOIN__K_PARALLEL);
    if (!p) {
        return NULL;
    }
    futoin__set_api(&p->bsi, &futoin__par_api);
    p->eh = eh;
    p->data = data;
    return &p->bsi;
}

static void* step_state_variable(FutoInAsyncSteps* bsi, void* data,
                                 const char* name,
                                 void* (*allocate)(void* data),
                                 void (*cleanup)(void* data, void* value))
{
    futoin__step* s = futoin__as_step(bsi);
    if (!futoin__on_loop(s, "stateVariable()")) {
        return NULL;
    }
    if (s->state == FUTOIN__S_FREE) {
        misuse(s, "stateVariable()");
        return NULL;
    }
    return futoin__state_variable(s->flow->root, data, name, allocate, cleanup);
}

static void* step_stack(FutoInAsyncSteps* bsi, size_t size,
                        void (*cleanup)(void* value))
{
    futoin__step* s = futoin__as_step(bsi);
    if (!futoin__on_loop(s, "stack()")) {
        return NULL;
    }
    if (s->state == FUTOIN__S_FREE) {
        misuse(s, "stack()");
        return NULL;
    }
    if (!futoin__step_rare_get(s)) {
        return NULL;
    }
    return futoin__alloc_push(&s->rare->allocs, size, cleanup);
}

/* ---- completion ---------------------------------------------------------- */

/* A claimed completion of a step that waits (or has sub-steps). Loop
 * thread. */
void futoin__step_apply(futoin__step* s, FutoInArgs* args, const char* code,
                        const char* info)
{
    if (code) {
        futoin__step_error(s, code, info);
    } else if (s->state == FUTOIN__S_WAIT) {
        futoin__flow_set_vals(s->flow, args);
        s->flags |= FUTOIN__F_SUCCESS;
        futoin__step_resolve(s);
    } else {
        drop_values(args);
        futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR,
                           "success() on a step that has sub-steps");
    }
}

/* The step's own callback (or error handler) decides its outcome. */
static int complete_own(futoin__step* s, FutoInArgs* args, const char* code,
                        const char* info)
{
    if (s->flags & FUTOIN__F_ERROR) {
        drop_values(args); /* already failing: the first error wins */
        return 0;
    }
    if (code) {
        if (s->state == FUTOIN__S_EXEC && (s->flags & FUTOIN__F_SUCCESS)) {
            misuse_after_success(s, "error()");
            return FUTOIN_EINVAL;
        }
        if (s->state == FUTOIN__S_EXEC && (s->flags & FUTOIN__F_ADDED)) {
            /* §2.1: as for success() after add(); the sub-steps it added
             * are dropped by the unwinding */
            futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR, "error() after add()");
            return FUTOIN_EINVAL;
        }
        s->flags &= (uint16_t)~FUTOIN__F_SUCCESS;
        futoin__step_error(s, code, info);
        return 1;
    }
    if (s->flags & FUTOIN__F_SUCCESS) {
        drop_values(args);
        misuse_after_success(s, "success()");
        return FUTOIN_EINVAL;
    }
    if (s->flags & FUTOIN__F_ADDED) {
        drop_values(args);
        futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR, "success() after add()");
        return FUTOIN_EINVAL;
    }
    futoin__flow_set_vals(s->flow, args);
    s->flags |= FUTOIN__F_SUCCESS;
    return 1;
}

static int step_complete(futoin__step* s, FutoInArgs* args, const char* code,
                         const char* info);

/* Values that would crash whoever reads them are refused where they enter;
 * the completion goes on as an InvalidRequest error that names them. */
static FUTOIN__NOINLINE int complete_bad_values(futoin__step* s,
                                               FutoInArgs* args)
{
    char bad[160];
    futoin__args_check(args, "success()", bad, sizeof(bad));
    drop_values(args);
    return step_complete(s, NULL, FUTOIN_ERR_INVALID_REQUEST, bad);
}

/* How many slots of `a` are in use (the last non-empty one + 1), or -1 if
 * one holds a value that futoin__args_check() could refuse: only scalars
 * (booleans, numbers), which point at nothing, are known to be fine. */
static inline int args_plain_count(const FutoInArgs* a)
{
    int n = 0;
    for (int i = 0; i < 4; ++i) {
        const FutoInType* t = a->args[i].type;
        if (t) {
            if ((t->flags & FTN_COMPLEX_TYPE_MASK)
                || (t->flags & FTN_BASE_TYPE_MASK) < FTN_TYPE_BOOL) {
                return -1;
            }
            n = i + 1;
        }
    }
    return n;
}

/* futoin__step_complete() but for its fast path. */
static FUTOIN__NOINLINE int step_complete_checked(futoin__step* s,
                                                 FutoInArgs* args,
                                                 const char* code,
                                                 const char* info)
{
    if (!s) {
        drop_values(args);
        futoin__misuse_null(code ? "handle_error()" : "success()");
        return FUTOIN_EINVAL;
    }
    int n = !code && args ? args_plain_count(args) : 0;
    if (!code && n >= 0) {
        /* The usual one first: the step's own callback succeeds with
         * scalars, on the loop thread, having done nothing else (what
         * complete_own() would decide, without the way there). */
        /* The thread first: another thread must not read the step beyond
         * its `xs` word (step_complete), or it races with the loop. */
        if (futoin__tool_on_thread(futoin__recpool_tool(s))) {
            if (s->state == FUTOIN__S_EXEC
                && !(s->flags
                     & (FUTOIN__F_SUCCESS | FUTOIN__F_ERROR | FUTOIN__F_ADDED))) {
                futoin__flow_set_vals_n(s->flow, args, (unsigned)n);
                s->flags |= FUTOIN__F_SUCCESS;
                return 1;
            }
            if (s->state == FUTOIN__S_WAIT) {
                /* The other usual one: a loop-thread event completes a
                 * waiting step (what step_complete() and
                 * futoin__step_apply() would do, with `n` counted once). */
                uint32_t w = atomic_load_explicit(&s->xs, memory_order_acquire);
                if (FUTOIN__XS_STATE(w) != FUTOIN__XS_OPEN
                    || !atomic_compare_exchange_strong_explicit(
                            &s->xs, &w, (w & ~FUTOIN__XS_MASK) | FUTOIN__XS_CLAIMED,
                            memory_order_acq_rel, memory_order_acquire)) {
                    /* lost a race or misuse: as futoin__xs_claim decides */
                    int claim = futoin__xs_claim(s, "success()");
                    if (claim != 1) {
                        drop_values(args);
                        return claim;
                    }
                }
                futoin__flow_set_vals_n(s->flow, args, (unsigned)n);
                s->flags |= FUTOIN__F_SUCCESS;
                futoin__step_resolve(s);
                return 1;
            }
        }
    } else if (args && !code
               && FUTOIN__UNLIKELY(!futoin__args_check(args, NULL, NULL, 0))) {
        return complete_bad_values(s, args);
    }
    return step_complete(s, args, code, info);
}

/*
 * The two usual completions with no call (so no register is saved): on
 * the loop thread, success() with scalars (or nothing), no values pending
 * in the flow and a container for them at hand (futoin__vals_get()), either
 *  - in the step's own callback, nothing decided yet (T1, every binding's
 *    success(v)); or
 *  - of a waiting step with no timeout, no hooks set (T2, T3: the wake of
 *    a waiting flow): claimed here, then futoin__step_wake() resumes it.
 * Anything else goes to step_complete_checked(), as before.
 */
int futoin__step_complete(futoin__step* s, FutoInArgs* args, const char* code,
                          const char* info)
{
    struct futoin__engine_tool* e;
    futoin__flow* fl;
    futoin_tool* tool;
    bool wait;
    int n;
    if (FUTOIN__UNLIKELY(!s || code)) {
        goto slow;
    }
    n = args ? args_plain_count(args) : 0;
    tool = futoin__recpool_tool(s);
    /* the thread first: another thread must not read the step beyond its
     * `xs` word (step_complete) */
    if (FUTOIN__UNLIKELY(n < 0 || !futoin__tool_on_thread(tool))) {
        goto slow;
    }
    /* the state before the flow: a finished step's record may have none
     * (a trimmed block's records read as free ones with no flow) */
    wait = s->state == FUTOIN__S_WAIT;
    if (FUTOIN__UNLIKELY(!wait && s->state != FUTOIN__S_EXEC)) {
        goto slow;
    }
    e = futoin__eng(tool);
    fl = s->flow;
    /* a container for the values: the hot buffer, or one off the pool's
     * free list (futoin__vals_get() with no call) */
    if (FUTOIN__UNLIKELY(fl->args
                         || (n && e->hot_busy
                             && e->args.count <= e->args.quarantine))) {
        goto slow;
    }
    if (wait) {
        uint32_t w = atomic_load_explicit(&s->xs, memory_order_acquire);
        if ((s->flags & FUTOIN__F_TIMEOUT) || futoin__hooked(tool)
            || FUTOIN__XS_STATE(w) != FUTOIN__XS_OPEN
            || !atomic_compare_exchange_strong_explicit(
                    &s->xs, &w, (w & ~FUTOIN__XS_MASK) | FUTOIN__XS_CLAIMED,
                    memory_order_acq_rel, memory_order_acquire)) {
            goto slow; /* a claim that failed is decided there again */
        }
    } else if (s->flags
               & (FUTOIN__F_SUCCESS | FUTOIN__F_ERROR | FUTOIN__F_ADDED)) {
        goto slow;
    }
    /* a waiting step's one plain value stays in the step (futoin__val1):
     * futoin__step_wake() but for `sub_head`, which holds its bits */
    if (wait && n == 1 && futoin__val1_fits(s, &args->arg0)) {
        s->rel.val_type = args->arg0.type;
        s->val_bits = args->arg0.u64;
        memset(&args->arg0, 0, sizeof(args->arg0));
        s->flags = (uint16_t)((s->flags & ~FUTOIN__F_CANCEL) | FUTOIN__F_SUCCESS
                              | FUTOIN__F_VAL1);
        s->state = FUTOIN__S_DONE;
        futoin__flow_schedule_in(tool, fl); /* inline: the tool is at hand */
        return 1;
    }
    /* futoin__flow_set_vals_n() with no values pending */
    if (n) {
        FutoInArgs* a;
        if (!e->hot_busy) {
            e->hot_busy = 1;
            a = &e->hot_args;
        } else {
            a = futoin__recpool_take(&e->args);
        }
        futoin__move_slots(a, args, (unsigned)n);
        fl->args = a;
        fl->nvals = (uint8_t)n;
    }
    s->flags |= FUTOIN__F_SUCCESS;
    if (wait) {
        return futoin__step_wake(s);
    }
    return 1;
slow:
    return step_complete_checked(s, args, code, info);
}

static int step_complete(futoin__step* s, FutoInArgs* args, const char* code,
                         const char* info)
{
    futoin_tool* tool = futoin__recpool_tool(s);
    const char* what = code ? "handle_error()" : "success()";
    int claim;

    /* Another thread never looks at the step beyond its `xs` word: the
     * claim decides, the loop thread applies. */
    if (!futoin__tool_on_thread(tool)) {
        return futoin__remote_complete(tool, s, args, code, info);
    }
    switch (s->state) {
    case FUTOIN__S_EXEC:
    case FUTOIN__S_ERRH:
        return complete_own(s, args, code, info);
    case FUTOIN__S_WAIT:
        /* A loop-thread event (a luv callback, a sync object) completes
         * it: claim it as a worker would, so exactly one outcome wins. */
        claim = futoin__xs_claim(s, what);
        if (claim != 1) {
            drop_values(args);
            return claim;
        }
        futoin__step_apply(s, args, code, info);
        return 1;
    case FUTOIN__S_SUBS:
        /* not waiting for anything external: nothing to race with */
        futoin__step_apply(s, args, code, info);
        return code ? 1 : FUTOIN_EINVAL;
    default: /* DONE, FREE or a record that went on to another step */
        drop_values(args);
        return futoin__xs_refuse(
                tool, atomic_load_explicit(&s->xs, memory_order_acquire), what);
    }
}

static void step_success(FutoInAsyncSteps* bsi, FutoInArgs* args)
{
    futoin__step_complete(futoin__as_step(bsi), args, NULL, NULL);
}

static void step_handle_error(FutoInAsyncSteps* bsi, const char* code,
                              const char* info)
{
    futoin__step_complete(futoin__as_step(bsi), NULL,
                          code ? code : FUTOIN_ERR_INTERNAL_ERROR, info);
}

/* ---- waiting ------------------------------------------------------------- */

static void timeout_cb(void* data)
{
    futoin__step* s = data;
    futoin__flow* fl = s->flow;
    bool hooked = futoin__hooked(futoin__flow_tool(fl));
    if (s->state == FUTOIN__S_WAIT) {
        /* The timeout and a completion race for the step: whoever closes
         * `xs` first wins. A completion that claimed it is on its way to
         * this thread: the timeout stands down. */
        uint32_t open = futoin__step_xs(s, FUTOIN__XS_OPEN);
        if (!atomic_compare_exchange_strong_explicit(
                    &s->xs, &open, futoin__step_xs(s, FUTOIN__XS_ABORTED),
                    memory_order_acq_rel, memory_order_acquire)) {
            s->rare->timer = NULL;
            s->flags &= (uint16_t)~FUTOIN__F_TIMEOUT;
            return;
        }
        if (hooked) {
            /* before the timer is forgotten: the wait shows as one */
            futoin__hook_wait(s, FUTOIN_HOOK_WAIT_ENDED);
        }
        /* a completion arriving from now on lost the race: dropped */
        s->state = FUTOIN__S_DONE;
        s->sub_head = NULL; /* it held wait_since (engine.h) */
        s->flags |= FUTOIN__F_ERROR;
    }
    s->rare->timer = NULL;
    s->flags &= (uint16_t)~FUTOIN__F_TIMEOUT;
    futoin__root_set_error(fl->root, FUTOIN_ERR_TIMEOUT, NULL);
    if (hooked) {
        futoin__hook_error(fl->root, s, FUTOIN_HOOK_ERROR_RAISED,
                           FUTOIN_ERR_TIMEOUT, NULL);
    }
    futoin__raise_top(fl, FUTOIN_ERR_TIMEOUT);
}

static void step_set_timeout(FutoInAsyncSteps* bsi, uint32_t timeout_ms)
{
    futoin__step* s = futoin__as_step(bsi);
    futoin__step_rare* x;
    futoin_tool* tool;
    if (!gate_exec(s, "setTimeout()", false)) {
        return;
    }
    tool = futoin__step_tool(s);
    x = futoin__step_rare_get(s);
    if (!x) {
        futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR,
                           "setTimeout(): out of memory");
        return;
    }
    if ((s->flags & FUTOIN__F_TIMEOUT) && x->timer) {
        /* §1.9: a repeated call overrides the previous limit */
        futoin__tool_timer_stop(tool, x->timer, x->timer_gen);
    }
    x->timer = futoin__tool_timer_start(tool, timeout_ms, timeout_cb, s);
    if (!x->timer) {
        s->flags &= (uint16_t)~FUTOIN__F_TIMEOUT;
        futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR,
                           "setTimeout(): out of memory");
        return;
    }
    x->timer_gen = x->timer->gen;
    s->flags |= FUTOIN__F_TIMEOUT;
}

static void step_set_cancel(FutoInAsyncSteps* bsi, void* data,
                            FutoInAsyncSteps_cancel_callback ch)
{
    futoin__step* s = futoin__as_step(bsi);
    if (!gate_exec(s, "setCancel()", false)) {
        return;
    }
    if (FUTOIN__RARE(s, cancel_release)) {
        /* a later setCancel() replaces the handler and its data */
        void (*rel)(void*) = s->rare->cancel_release;
        s->rare->cancel_release = NULL;
        FUTOIN__USER(s->flow->root, rel(s->rare->cancel_data));
    }
    if (!s->rare && !ch) {
        s->flags &= (uint16_t)~FUTOIN__F_CANCEL;
        return; /* nothing set, nothing to clear */
    }
    if (!futoin__step_rare_get(s)) {
        futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR,
                           "setCancel(): out of memory");
        return;
    }
    s->rare->cancel = ch;
    s->rare->cancel_data = data;
    if (ch) {
        s->flags |= FUTOIN__F_CANCEL;
    } else {
        s->flags &= (uint16_t)~FUTOIN__F_CANCEL;
    }
}

static void step_wait_external(FutoInAsyncSteps* bsi)
{
    futoin__step* s = futoin__as_step(bsi);
    if (!gate_exec(s, "waitExternal()", false)) {
        return;
    }
    s->flags |= FUTOIN__F_WAITEXT;
}

/* ---- loops --------------------------------------------------------------- */


static futoin__step* add_loop(futoin__step* s, void* data, const char* label,
                              const char* what)
{
    futoin__step* l;
    if (!gate_add(s, what)) {
        return NULL;
    }
    l = new_sub(s, FUTOIN__K_LOOP);
    if (l && !futoin__loop_add(l, data, label)) {
        futoin__step_error(s, FUTOIN_ERR_INTERNAL_ERROR, "out of memory");
        return NULL;
    }
    return l;
}

static void step_loop(FutoInAsyncSteps* bsi, void* data,
                      void (*f)(FutoInAsyncSteps* bsi, void* data),
                      const char* label)
{
    futoin__step* s = futoin__as_step(bsi);
    futoin__step* l;
    if (!f) {
        if (gate_add(s, "loop()")) {
            futoin__step_error(s, FUTOIN_ERR_INVALID_REQUEST,
                               "loop(): the body callback is NULL");
        }
        return;
    }
    l = add_loop(s, data, label, "loop()");
    if (l) {
        l->u.l.fn.loop = f;
    }
}

static void step_repeat(FutoInAsyncSteps* bsi, void* data, size_t count,
                        void (*f)(FutoInAsyncSteps* bsi, void* data, size_t i),
                        const char* label)
{
    futoin__step* s = futoin__as_step(bsi);
    futoin__step* l;
    if (!f) {
        if (gate_add(s, "repeat()")) {
            futoin__step_error(s, FUTOIN_ERR_INVALID_REQUEST,
                               "repeat(): the body callback is NULL");
        }
        return;
    }
    l = add_loop(s, data, label, "repeat()");
    if (l) {
        l->u.l.fn.repeat = f;
        l->u.l.count = count;
        l->flags |= FUTOIN__F_REPEAT;
    }
}

static void step_break(FutoInAsyncSteps* bsi, const char* label)
{
    futoin__step* s = futoin__as_step(bsi);
    if (gate_exec(s, "breakLoop()", true)) {
        futoin__loop_control(s, label, false);
    }
}

static void step_continue(FutoInAsyncSteps* bsi, const char* label)
{
    futoin__step* s = futoin__as_step(bsi);
    if (gate_exec(s, "continueLoop()", true)) {
        futoin__loop_control(s, label, true);
    }
}

/* ---- root-only calls ----------------------------------------------------- */

/* execute(), cancel(), free(): a root's calls, misused on a step. */
static void root_only(FutoInAsyncSteps* bsi, const char* what)
{
    futoin__step* s = futoin__as_step(bsi);
    char msg[96];
    if (!futoin__on_loop(s, what)) {
        return;
    }
    if (s->state == FUTOIN__S_FREE) {
        misuse(s, what);
        return;
    }
    snprintf(msg, sizeof(msg), "%s is for root AsyncSteps, not a step", what);
    futoin__tool_misuse(futoin__recpool_tool(s), msg);
}

static void step_execute(FutoInAsyncSteps* bsi, void* data,
                         FutoInAsyncSteps_error_callback unhandled)
{
    root_only(bsi, "execute()");
}

static void step_cancel(FutoInAsyncSteps* bsi)
{
    root_only(bsi, "cancel()");
}

static void step_free(FutoInAsyncSteps* bsi)
{
    root_only(bsi, "free()");
}

static void step_add_sync(FutoInAsyncSteps* bsi, FutoInSync* sync, void* data,
                          FutoInAsyncSteps_execute_callback f,
                          FutoInAsyncSteps_error_callback eh)
{
    futoin__step* s = futoin__as_step(bsi);
    futoin__step* y;
    if (!gate_add(s, "addSync()")) {
        return;
    }
    if (!f || !sync || !sync->api || !sync->api->lock || !sync->api->unlock) {
        futoin__step_error(s, FUTOIN_ERR_INVALID_REQUEST,
                           "addSync(): NULL callback or invalid sync object");
        return;
    }
    y = new_sub(s, FUTOIN__K_SYNC);
    if (y) {
        y->u.y.sync = sync;
        y->f = f;
        y->eh = eh;
        y->data = data;
    }
}

/* ---- shared slots -------------------------------------------------------- */


static int step_is_valid(FutoInAsyncSteps* bsi)
{
    futoin__step* s = futoin__as_step(bsi);
    if (!futoin__on_loop(s, "isValid()")) {
        return 0;
    }
    return s->state != FUTOIN__S_FREE && s->state != FUTOIN__S_DONE
           && s->flow->state != FUTOIN__FL_DONE;
}

const FutoInAsyncStepsAPI futoin__step_api = {{{
        .add = step_add,
        .parallel = step_parallel,
        .stateVariable = step_state_variable,
        .stack = step_stack,
        .success = step_success,
        .handle_error = step_handle_error,
        .setTimeout = step_set_timeout,
        .setCancel = step_set_cancel,
        .waitExternal = step_wait_external,
        .loop = step_loop,
        .repeat = step_repeat,
        .breakLoop = step_break,
        .continueLoop = step_continue,
        .execute = step_execute,
        .cancel = step_cancel,
        .addSync = step_add_sync,
        .rootId = futoin__common_root_id,
        .isValid = step_is_valid,
        .newInstance = futoin__common_new_instance,
        .free = step_free,
        .sched_immediate = futoin__common_sched_immediate,
        .sched_deferred = futoin__common_sched_deferred,
        .sched_cancel = futoin__common_sched_cancel,
        .sched_is_valid = futoin__common_sched_is_valid,
        .is_same_thread = futoin__common_is_same_thread,
}}};
