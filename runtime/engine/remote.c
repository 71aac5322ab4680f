/*
 * Calls from other threads, and completions that race with the loop.
 *
 * Only a few calls make sense from a thread other than the loop thread:
 * completing a step that waits (success / handle_error), and starting,
 * cancelling or freeing a root. They are posted to the loop thread
 * (futoin__tool_post_remote: lock-free, never blocks) and run there, so
 * every handler runs on the loop thread. Every other call through one of
 * our handles from another thread is refused and reported as misuse
 * (futoin__on_loop), because it would race with the loop.
 *
 * A completion may lose a race against its own step's timeout or cancel:
 * the worker calls success() while, on the loop thread, the timeout fires.
 * The step's `xs` word decides who wins (engine.h): the worker claims it
 * with a compare-and-swap before posting, the timeout and the cancel paths
 * close it with one. The loser of the race is not misuse: a completion
 * that finds the step aborted is dropped quietly and counted in the
 * tool's stats (late_completions); a timeout that finds the step claimed
 * stands down and lets the completion through.
 */
#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- misuse from a foreign thread --------------------------------------- */

void futoin__misuse_thread(futoin_tool* tool, const char* what)
{
    char msg[160];
    snprintf(msg, sizeof(msg),
             "%s called from a thread that is not the loop thread "
             "(refused: only completions and root execute/cancel/free may "
             "come from other threads)",
             what);
    futoin__tool_misuse(tool, msg);
}

void futoin__misuse_null(const char* what)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "%s called through a NULL handle", what);
    futoin__tool_misuse(NULL, msg);
}

/* ---- the claim --------------------------------------------------------- */

void futoin__count_late(futoin_tool* tool)
{
    atomic_fetch_add_explicit(&futoin__eng(tool)->late_completions, 1,
                              memory_order_relaxed);
}

/* A completion that cannot be taken: quiet if the step ended abnormally
 * (a lost race), misuse otherwise. Any thread. Returns 0 or FUTOIN_EINVAL. */
int futoin__xs_refuse(futoin_tool* tool, uint32_t w, const char* what)
{
    char msg[160];
    if (FUTOIN__XS_STATE(w) == FUTOIN__XS_ABORTED) {
        futoin__count_late(tool);
        return 0;
    }
    snprintf(msg, sizeof(msg), "%s on a step that %s", what,
             FUTOIN__XS_STATE(w) == FUTOIN__XS_CLAIMED
                     ? "another completion already claimed"
                     : "already completed (or is not waiting)");
    futoin__tool_misuse(tool, msg);
    return FUTOIN_EINVAL;
}

int futoin__xs_claim(futoin__step* s, const char* what)
{
    uint32_t w = atomic_load_explicit(&s->xs, memory_order_acquire);
    while (FUTOIN__XS_STATE(w) == FUTOIN__XS_OPEN) {
        if (atomic_compare_exchange_weak_explicit(
                    &s->xs, &w, (w & ~FUTOIN__XS_MASK) | FUTOIN__XS_CLAIMED,
                    memory_order_acq_rel, memory_order_acquire)) {
            return 1;
        }
    }
    return futoin__xs_refuse(futoin__recpool_tool(s), w, what);
}

/* ---- completions from other threads ------------------------------------- */

typedef struct completion
{
    futoin__remote node; /* first: the node pointer is the record pointer */
    futoin__step* s;
    uint32_t gen;        /* the generation the claim saw (29 bits) */
    FutoInArgs args;     /* success values (moved in) */
    char* code;          /* error code, or NULL for success */
    char* info;          /* error info, or NULL */
    char text[];         /* storage of code and info */
} completion;

static void completion_run(futoin__remote* node, bool dropped)
{
    completion* c = (completion*)node;
    futoin__step* s = c->s;
    if (!dropped) {
        futoin_tool* tool = futoin__recpool_tool(s);
        uint32_t w = atomic_load_explicit(&s->xs, memory_order_acquire);
        /* The generation is part of the word (futoin__step_gen). */
        bool mine = w == FUTOIN__XS_WORD(c->gen, FUTOIN__XS_CLAIMED);
        if (mine
            && (s->state == FUTOIN__S_WAIT || s->state == FUTOIN__S_SUBS)) {
            futoin__step_apply(s, &c->args, c->code, c->info);
        } else if (w == FUTOIN__XS_WORD(c->gen + 1, FUTOIN__XS_NONE)) {
            /* It was claimed while its callback ran, but the callback
             * neither waited (waitExternal, setTimeout, setCancel) nor
             * failed: the step completed by itself (and was retired,
             * which moved the generation on). */
            futoin__tool_misuse(
                    tool, c->code ? "handle_error() from another thread on "
                                    "a step that completed without waiting"
                                  : "success() from another thread on a "
                                    "step that completed without waiting");
        } else {
            /* Its flow was cancelled or failed after the claim. */
            futoin__count_late(tool);
        }
    }
    futoin__args_clear(&c->args);
    free(c);
}

int futoin__remote_complete(futoin_tool* tool, futoin__step* s,
                            FutoInArgs* args, const char* code,
                            const char* info)
{
    size_t lc = code ? strlen(code) + 1 : 0;
    size_t li = info ? strlen(info) + 1 : 0;
    /* Allocated before the claim: a claim must always be delivered, or the
     * step would wait forever with its timeout standing down. */
    completion* c = malloc(sizeof(*c) + lc + li);
    uint32_t w;
    if (!c) {
        if (args) {
            futoin__args_clear(args);
        }
        futoin__tool_misuse(tool, "completion from another thread: out of memory");
        return FUTOIN_ENOMEM;
    }
    w = atomic_load_explicit(&s->xs, memory_order_acquire);
    for (;;) {
        if (FUTOIN__XS_STATE(w) != FUTOIN__XS_OPEN) {
            free(c);
            if (args) {
                futoin__args_clear(args);
            }
            return futoin__xs_refuse(tool, w,
                                     code ? "handle_error() from another thread"
                                          : "success() from another thread");
        }
        if (atomic_compare_exchange_weak_explicit(
                    &s->xs, &w, (w & ~FUTOIN__XS_MASK) | FUTOIN__XS_CLAIMED,
                    memory_order_acq_rel, memory_order_acquire)) {
            break;
        }
    }
    c->node.run = completion_run;
    c->s = s;
    c->gen = w >> FUTOIN__XS_BITS;
    if (args) {
        futoin__args_move(&c->args, args);
    } else {
        memset(&c->args, 0, sizeof(c->args));
    }
    c->code = NULL;
    c->info = NULL;
    if (code) {
        c->code = memcpy(c->text, code, lc);
    }
    if (info) {
        c->info = memcpy(c->text + lc, info, li);
    }
    futoin__tool_post_remote(tool, &c->node);
    return 1;
}

/* ---- root control from other threads ----------------------------------- */

typedef struct root_op
{
    futoin__remote node;
    futoin__root* r;
    ptrdiff_t id; /* the root's id when the call was made */
    enum futoin__root_op op;
    void* data;
    FutoInAsyncSteps_error_callback unhandled;
    void (*release)(void* data);
} root_op;

static void root_op_run(futoin__remote* node, bool dropped)
{
    root_op* o = (root_op*)node;
    if (dropped) {
        /* The tool is being freed: nothing will run; the data of an
         * execute() is released all the same (exactly once). */
        if (o->release) {
            o->release(o->data);
        }
    } else {
        futoin__root_op_run(o->r, o->id, o->op, o->data, o->unhandled,
                            o->release);
    }
    free(o);
}

void futoin__root_post(futoin_tool* tool, futoin__root* r, ptrdiff_t id,
                       enum futoin__root_op op, void* data,
                       FutoInAsyncSteps_error_callback unhandled,
                       void (*release)(void* data))
{
    root_op* o = malloc(sizeof(*o));
    if (!o) {
        if (release) {
            release(data);
        }
        futoin__tool_misuse(tool, "root call from another thread: out of memory");
        return;
    }
    o->node.run = root_op_run;
    o->r = r;
    o->id = id;
    o->op = op;
    o->data = data;
    o->unhandled = unhandled;
    o->release = release;
    futoin__tool_post_remote(tool, &o->node);
}
