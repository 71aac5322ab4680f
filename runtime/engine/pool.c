/*
 * The step engine's records: steps, flows, pooled FutoInArgs and roots,
 * each kind in a record pool (recpool.h). Steady-state execution allocates
 * nothing: records come back through the free lists, and blocks are only
 * added when more records are live at once than ever before.
 */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(futoin__step) % 8 == 0, "word-sized records");
_Static_assert(sizeof(futoin__root) % 8 == 0, "word-sized records");

/* What a record of a trimmed block reads as (recpool.h): a free step (a
 * late completion through it is dropped as a lost race, the outcome it
 * most likely is) and a freed root. */
static const futoin__step step_template = {
        .bsi = {&futoin__step_api},
        .state = FUTOIN__S_FREE,
        .xs = FUTOIN__XS_ABORTED,
};
static const futoin__root root_template = {
        .bsi = {&futoin__root_api},
        .state = FUTOIN__R_FREED,
};

void futoin__engine_tool_init(futoin_tool* tool)
{
    struct futoin__engine_tool* e = futoin__eng(tool);
    memset(e, 0, sizeof(*e));
    futoin__recpool_init(&e->steps, tool, FUTOIN__STEP_SMALL,
                         offsetof(futoin__step, next), FUTOIN__STEP_QUARANTINE,
                         &step_template);
    futoin__recpool_init(&e->frames, tool, sizeof(futoin__step),
                         offsetof(futoin__step, next), FUTOIN__STEP_QUARANTINE,
                         &step_template);
    futoin__recpool_init(&e->step_rares, tool, sizeof(futoin__step_rare),
                         offsetof(futoin__step_rare, allocs), 0, NULL);
    futoin__recpool_init(&e->flows, tool, sizeof(futoin__flow),
                         offsetof(futoin__flow, next), 0, NULL);
    futoin__recpool_init(&e->args, tool, sizeof(FutoInArgs), 0, 0, NULL);
    /* Roots are quarantined too: a call through a freed root is caught. */
    futoin__recpool_init(&e->roots, tool, sizeof(futoin__root),
                         offsetof(futoin__root, main.top), 256,
                         &root_template);
    futoin__recpool_init(&e->rares, tool, sizeof(futoin__root_rare),
                         offsetof(futoin__root_rare, vars), 0, NULL);
    futoin__recpool_init(&e->raises, tool, sizeof(futoin__raise_rec),
                         offsetof(futoin__raise_rec, code), 0, NULL);
    e->next_root_id = 1;
}

void futoin__engine_tool_close(futoin_tool* tool)
{
    struct futoin__engine_tool* e = futoin__eng(tool);
    futoin__args_clear(&e->args_in);
    futoin__recpool_close(&e->steps);
    futoin__recpool_close(&e->frames);
    futoin__recpool_close(&e->step_rares);
    futoin__recpool_close(&e->flows);
    futoin__recpool_close(&e->args);
    futoin__recpool_close(&e->roots);
    futoin__recpool_close(&e->rares);
    futoin__recpool_close(&e->raises);
    {
        futoin__tool_upper* up = atomic_load_explicit(&e->upper, memory_order_acquire);
        if (up) {
            up->release(up);
        }
    }
}

/* Records are cleared with plain word stores: for these small fixed sizes
 * GCC turned memset() into `rep stos`, whose start-up cost was a fifth of
 * a whole T1 root. The pattern must not be turned back into memset.
 * GCC applies an `optimize` attribute to the body of the function that
 * carries it, and zero_words() is always inlined: on zero_words() itself
 * it was lost (the loop became `rep stos` again in futoin__root_alloc,
 * issue 22). So every function that inlines zero_words() carries it:
 * NO_MEMSET_PATTERN. */
#define NO_MEMSET_PATTERN FUTOIN__NO_MEMSET_PATTERN /* engine.h */
static inline __attribute__((always_inline)) void zero_words(void* rec,
                                                             size_t from,
                                                             size_t to)
{
    typedef uint64_t __attribute__((may_alias)) word;
    word* w = rec;
    /* Straight-line stores at -O2 too (the binding packages' builds): there
     * GCC kept a loop of vector stores, more instructions than rep stos. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 32
#endif
    for (size_t i = from; i < to; ++i) {
        w[i] = 0;
    }
}

/*
 * Word 0 of a step or root is its `api` pointer, which another thread may
 * read at any time through a stale handle (a late completion, a late
 * cancel): it is never cleared, and rewritten only when it changes, so
 * such a reader always finds one of our tables. The word of a step that
 * holds `xs` is cleared field by field: `xs` is atomic and keeps telling
 * a late completion how the previous owner ended until the new one starts.
 */
_Static_assert(offsetof(futoin__step, bsi) == 0, "api pointer in word 0");
_Static_assert(offsetof(futoin__step, flags) == 8
                       && offsetof(futoin__step, xs) == 12,
               "flags, kind, state and xs share word 1");
_Static_assert(sizeof(futoin__step) == 112, "a frame is 14 words");
/* Every waiting flow holds two steps (bench T2): grow it knowingly. */
_Static_assert(FUTOIN__STEP_SMALL == 80, "a step is 10 words");
/* One word each (engine.h): a queued step's link is a frame's parent, a
 * waiting step's start time is where its sub-steps would be. */
_Static_assert(offsetof(futoin__step, next) == offsetof(futoin__step, parent)
                       && offsetof(futoin__step, sub_head)
                                  == offsetof(futoin__step, wait_since),
               "next/parent and sub_head/wait_since share a word each");
_Static_assert(sizeof(futoin__step_rare) % 8 == 0, "word-sized records");
/* Every root and parallel branch holds a flow: its size is part of the
 * bytes-per-waiting-flow budget (bench T2 <= 512 B). Grow it knowingly. */
_Static_assert(sizeof(futoin__flow) <= 72, "a flow is at most 9 words");
_Static_assert(offsetof(futoin__root, bsi) == 0, "api pointer in word 0");
/* Every waiting flow holds a root: 10 words, its rare parts aside
 * (engine.h futoin__root_rare) and its pending raise (futoin__raise_rec).
 * Grow it knowingly (bench T2). */
_Static_assert(sizeof(futoin__root) <= 80, "a root is at most 10 words");
_Static_assert(offsetof(futoin__root, rare) == offsetof(futoin__root, main.par)
                       && offsetof(futoin__root, id)
                                  == offsetof(futoin__root, main.next),
               "a root's own fields take the place of its main flow's par, next");
_Static_assert(sizeof(futoin__root_rare) % 8 == 0, "word-sized records");

/* A record fresh from the pool, cleared (but for api and xs, see above);
 * the union only in a frame (`big`): a small record has none. */
static inline __attribute__((always_inline)) void step_clear(futoin__step* s,
                                                             bool big)
{
    s->flags = 0;
    s->kind = 0;
    s->state = FUTOIN__S_FREE;
    zero_words(s, 2, 10);
    if (big) {
        zero_words(s, 10, 14);
    }
    atomic_store_explicit(&s->xs,
                          atomic_load_explicit(&s->xs, memory_order_relaxed)
                                  + FUTOIN__XS_GEN_ONE,
                          memory_order_relaxed);
}

/* The pool of records of `kind`. */
static inline futoin__recpool* step_pool(futoin_tool* tool, uint8_t kind)
{
    struct futoin__engine_tool* e = futoin__eng(tool);
    return futoin__step_big(kind) ? &e->frames : &e->steps;
}

/* A cleared record becomes a queued step of `kind` in `fl`. */
static inline __attribute__((always_inline)) void step_queue_init(
        futoin__step* s, futoin__flow* fl, uint8_t kind)
{
    if (s->bsi.api != &futoin__step_api) {
        futoin__set_api(&s->bsi, &futoin__step_api);
    }
    s->kind = kind;
    s->state = FUTOIN__S_QUEUED;
    s->flow = fl;
}

/* futoin__step_new() when the free list is within its quarantine: a
 * record carved fresh (rare, and a call, out of the way of the others). */
static FUTOIN__NOINLINE NO_MEMSET_PATTERN futoin__step* step_new_carved(
        futoin__flow* fl, uint8_t kind)
{
    futoin__step* s = futoin__recpool_carve(step_pool(futoin__flow_tool(fl), kind));
    if (s) {
        step_clear(s, futoin__step_big(kind));
        step_queue_init(s, fl, kind);
    }
    return s;
}

/* The usual record comes off the free list with no call, so nothing is
 * kept in saved registers (step_new_carved() takes the rest). */
futoin__step* futoin__step_new_small(futoin__flow* fl,
                                                       uint8_t kind)
{
    futoin__step* s = futoin__step_take_small(futoin__eng(futoin__flow_tool(fl)), fl,
                                              kind);
    if (FUTOIN__UNLIKELY(!s)) {
        return step_new_carved(fl, kind);
    }
    return s;
}

NO_MEMSET_PATTERN futoin__step* futoin__step_new_frame(futoin__flow* fl,
                                                       uint8_t kind)
{
    futoin__step* s = futoin__recpool_take(&futoin__eng(futoin__flow_tool(fl))->frames);
    if (FUTOIN__UNLIKELY(!s)) {
        return step_new_carved(fl, kind);
    }
    step_clear(s, true);
    step_queue_init(s, fl, kind);
    return s;
}

FUTOIN__NOINLINE futoin__step* futoin__step_new_plain_carved(
        futoin__flow* fl, FutoInAsyncSteps_execute_callback f,
        FutoInAsyncSteps_error_callback eh, void* data)
{
    futoin__step* s = step_new_carved(fl, FUTOIN__K_STEP);
    if (s) {
        s->f = f;
        s->eh = eh;
        s->data = data;
    }
    return s;
}

futoin__step* futoin__step_new_plain(futoin__flow* fl,
                                     FutoInAsyncSteps_execute_callback f,
                                     FutoInAsyncSteps_error_callback eh,
                                     void* data)
{
    return futoin__step_new_plain_in(futoin__eng(futoin__flow_tool(fl)), fl, f,
                                     eh, data);
}

void futoin__step_release_slow(futoin_tool* tool, futoin__step* s)
{
    if (s->flags & FUTOIN__F_OWNARGS) {
        /* successStep() values that were never consumed */
        s->flags &= (uint16_t)~FUTOIN__F_OWNARGS;
        FUTOIN__USER(s->flow->root, futoin__args_release(tool, s->data));
    }
    if (s->rel.release) {
        void (*rel)(void*) = (s->flags & FUTOIN__F_CLASS) ? s->rel.cls->release
                                                         : s->rel.release;
        s->rel.release = NULL;
        s->flags &= (uint16_t)~FUTOIN__F_CLASS;
        if (rel) {
            FUTOIN__USER(s->flow->root, rel(s->data));
        }
    }
    if (s->rare) {
        futoin__step_rare* x = s->rare;
        if (x->cancel_release) {
            void (*rel)(void*) = x->cancel_release;
            x->cancel_release = NULL;
            FUTOIN__USER(s->flow->root, rel(x->cancel_data));
        }
        if (x->allocs) { /* freed with the frame already, as a rule */
            FUTOIN__USER(s->flow->root, futoin__alloc_free_all(&x->allocs));
        }
        /* its timer was stopped when the step left (flow.c stop_timer) */
        s->rare = NULL;
        futoin__recpool_put(&futoin__eng(tool)->step_rares, x);
    }
    futoin__step_retire(tool, s);
}

NO_MEMSET_PATTERN futoin__step_rare* futoin__step_rare_get(futoin__step* s)
{
    futoin__step_rare* x = s->rare;
    if (x) {
        return x;
    }
    x = futoin__recpool_get(&futoin__eng(futoin__recpool_tool(s))->step_rares);
    if (x) {
        zero_words(x, 0, sizeof(*x) / 8);
        s->rare = x;
    }
    return x;
}

futoin__step* futoin__sub_tail(futoin__step* s)
{
    struct futoin__engine_tool* e = futoin__eng(futoin__step_tool(s));
    futoin__step* t;
    uint32_t gen = futoin__step_gen(s);
    if (e->app_step == s && e->app_gen == gen) {
        return e->app_tail;
    }
    t = s->sub_head;
    while (t && t->next) {
        t = t->next;
    }
    e->app_step = s;
    e->app_gen = gen;
    e->app_tail = t;
    return t;
}

void futoin__sub_append(futoin__step* s, futoin__step* n)
{
    futoin__sub_append_in(futoin__eng(futoin__step_tool(s)), s, n);
}

/* memset() of these two compiled to `rep stos` too (issue 22): word stores. */
_Static_assert(sizeof(futoin__flow) % 8 == 0, "a flow is whole words");
_Static_assert(sizeof(FutoInArgs) % 8 == 0, "FutoInArgs is whole words");

NO_MEMSET_PATTERN futoin__flow* futoin__flow_alloc(futoin_tool* tool)
{
    futoin__flow* fl = futoin__recpool_get(&futoin__eng(tool)->flows);
    if (fl) {
        /* all but `rq`: the record may still be in a batch of the run
         * queue, which its previous owner joined (engine.h) */
        _Static_assert(offsetof(futoin__flow, rq) == 0, "rq is word 0");
        zero_words(fl, 1, sizeof(*fl) / 8);
    }
    return fl;
}

void futoin__flow_release(futoin_tool* tool, futoin__flow* fl)
{
    futoin__recpool_put(&futoin__eng(tool)->flows, fl);
}

NO_MEMSET_PATTERN FutoInArgs* futoin__args_alloc(futoin_tool* tool)
{
    FutoInArgs* a = futoin__recpool_get(&futoin__eng(tool)->args);
    if (a) {
        zero_words(a, 0, sizeof(*a) / 8);
    }
    return a;
}

void futoin__args_release(futoin_tool* tool, FutoInArgs* a)
{
    futoin__args_clear(a);
    futoin__recpool_put(&futoin__eng(tool)->args, a);
}

/* Words 2 and 9 of a root are set, not cleared, by futoin__root_alloc(),
 * and word 1, its main flow's place in the run queue, is kept (engine.h:
 * the record may still be in a batch its previous owner joined). */
_Static_assert(offsetof(futoin__root, main.rq) == 8
                       && offsetof(futoin__root, main.root) == 16
                       && offsetof(futoin__root, id) == 72
                       && sizeof(futoin__root) == 80,
               "root: main.rq word 1, main.root word 2, id word 9 of 10");
_Static_assert(FUTOIN__FL_IDLE == 0 && FUTOIN__R_NEW == 0,
               "a cleared root is new, its main flow idle");

/* A root record off its pool becomes a new root of `tool`. */
static inline __attribute__((always_inline)) FutoInAsyncSteps* root_init(
        futoin_tool* tool, futoin__root* r)
{
    if (r->bsi.api != &futoin__root_api) {
        futoin__set_api(&r->bsi, &futoin__root_api); /* see above */
    }
    r->main.root = r;
    zero_words(r, 3, 9);
    atomic_store_explicit(&r->id, futoin__eng(tool)->next_root_id++,
                          memory_order_relaxed);
    return &r->bsi;
}

/* futoin__root_alloc() while the free list is within its quarantine. */
static FUTOIN__NOINLINE NO_MEMSET_PATTERN FutoInAsyncSteps* root_alloc_carved(
        futoin_tool* tool)
{
    futoin__root* r = futoin__recpool_carve(&futoin__eng(tool)->roots);
    return r ? root_init(tool, r) : NULL;
}

/* futoin_root_new() past its checks (issue 22, T1): a root as it is
 * handed out (cleared, its api, id and main flow set), or NULL when
 * out of memory. The usual record comes off the free list with no call,
 * so nothing is saved around one. */
NO_MEMSET_PATTERN FutoInAsyncSteps* futoin__root_alloc(futoin_tool* tool)
{
    futoin__root* r = futoin__recpool_take(&futoin__eng(tool)->roots);
    if (FUTOIN__UNLIKELY(!r)) {
        return root_alloc_carved(tool);
    }
    return root_init(tool, r);
}

/* Out of line: the first rare part a root gets. */
NO_MEMSET_PATTERN futoin__root_rare* futoin__root_rare_get(futoin__root* r)
{
    futoin__root_rare* x = r->rare;
    if (x) {
        return x;
    }
    x = futoin__recpool_get(&futoin__eng(futoin__root_tool(r))->rares);
    if (x) {
        zero_words(x, 0, sizeof(*x) / 8);
        r->rare = x;
    }
    return x;
}

void futoin__root_release(futoin_tool* tool, futoin__root* r)
{
    /* A freed root is marked so stale calls are recognised. Its rare
     * record (its parts were released by now) goes back with it. */
    r->state = FUTOIN__R_FREED;
    if (r->rare) {
        futoin__recpool_put(&futoin__eng(tool)->rares, r->rare);
        r->rare = NULL;
    }
    futoin__recpool_put(&futoin__eng(tool)->roots, r);
}
