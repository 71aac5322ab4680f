/*
 * Step engine internals (not installed).
 *
 * A root owns a main flow; every parallel() branch runs as a flow of its
 * own. A flow is a stack of frames, linked through `parent`: the top frame
 * is the step that runs (or waits) now, each frame below it waits for the
 * sub-steps of the frame above to finish. One record type, futoin__step,
 * serves as a queued step and, once it runs, as its frame, so a step costs
 * one pooled record and no copy. Execution is iterative (flow.c): neither a
 * long chain nor deep nesting grows the C stack.
 *
 * The handle given to a callback is the step record itself (its first
 * member is the FTN12 `FutoInAsyncSteps`), so every call is checked against
 * the step's state. Records are recycled FIFO with a quarantine
 * (FUTOIN__STEP_QUARANTINE), so a call through the handle of a finished
 * step finds a FREE record and is reported, not executed.
 */
#ifndef FUTOIN_RUNTIME_ENGINE_H
#define FUTOIN_RUNTIME_ENGINE_H

#include "engine/engine_tool.h"
#include "engine/recpool.h"

#include <futoin/sys/hooks.h>
#include <futoin/sys/host.h>
#include "tool/tool.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Checks of the engine's invariants in debug builds (unoptimized: the
 * ASan+UBSan suites build with buildtype=debug), never in an optimized
 * build, whose instruction counts they would move (bench/callgrind.sh). */
#if !defined(NDEBUG) && !defined(__OPTIMIZE__)
#include <assert.h>
#define FUTOIN__DEBUG_ASSERT(x) assert(x)
#else
#define FUTOIN__DEBUG_ASSERT(x) ((void)0)
#endif

typedef struct futoin__step futoin__step;
typedef struct futoin__flow futoin__flow;
typedef struct futoin__root futoin__root;
typedef struct futoin__alloc futoin__alloc;

/* Step records retired since a handle's step finished before its memory
 * is reused. Documented in futoin/async.h. */
#define FUTOIN__STEP_QUARANTINE 1024
/* Steps run in one go before a flow yields to others on the tool. */
#define FUTOIN__FLOW_BUDGET 256
/* Loop iterations run in place on one frame before the flow yields. */
#define FUTOIN__LOOP_INPLACE 4096

enum futoin__kind
{
    FUTOIN__K_STEP = 0, /* add() */
    FUTOIN__K_PARALLEL, /* parallel() */
    FUTOIN__K_LOOP,     /* loop() / repeat() frame */
    FUTOIN__K_BODY,     /* one iteration of a loop */
    FUTOIN__K_SYNC,     /* addSync() guard frame */
    FUTOIN__K_UNLOCK    /* addSync(): unlock, pass results on */
};

enum futoin__state
{
    FUTOIN__S_FREE = 0, /* in the pool */
    FUTOIN__S_QUEUED,   /* added, not started */
    FUTOIN__S_EXEC,     /* its execute callback runs now */
    FUTOIN__S_SUBS,     /* waits for its sub-steps */
    FUTOIN__S_WAIT,     /* waits for an external event */
    FUTOIN__S_ERRH,     /* its error handler runs now */
    FUTOIN__S_DONE      /* finished, outcome recorded, not yet popped */
};

enum futoin__flag
{
    FUTOIN__F_SUCCESS = 1u << 0,  /* success() called */
    FUTOIN__F_ERROR = 1u << 1,    /* handle_error() called */
    FUTOIN__F_ADDED = 1u << 2,    /* add()/parallel()/loop() called */
    FUTOIN__F_WAITEXT = 1u << 3,  /* waitExternal() */
    FUTOIN__F_TIMEOUT = 1u << 4,  /* setTimeout() armed */
    FUTOIN__F_CANCEL = 1u << 5,   /* setCancel() set */
    FUTOIN__F_VAL1 = 1u << 6,     /* DONE: holds its one value (futoin__val1) */
    FUTOIN__F_REPEAT = 1u << 7,   /* K_LOOP: repeat() (bounded, passes i) */
    FUTOIN__F_LOCKED = 1u << 8,   /* K_SYNC: lock() was called */
    FUTOIN__F_NOEH = 1u << 9,     /* error handler dropped (§1.2.1) */
    FUTOIN__F_STASH = 1u << 10,   /* takes its values from parent K_SYNC */
    FUTOIN__F_OWNARGS = 1u << 11, /* `data` is a pooled FutoInArgs it owns */
    FUTOIN__F_CLASS = 1u << 12,   /* rel.cls (not rel.release) describes data */
    FUTOIN__F_HELD = 1u << 13     /* K_SYNC: the guarded step started (in) */
};

/*
 * Who may still complete a step: futoin__step.xs, the one field other
 * threads touch (atomically). It holds the low 29 bits of the step's
 * generation (futoin__step_gen: their only copy) above one of these
 * states:
 *  - OPEN: the step runs or waits; one completion may claim it;
 *  - CLAIMED: a completion claimed it (from any thread) and is on its way
 *    to the loop thread; its timeout and cancel handler stand down;
 *  - ABORTED: it ended by its timeout, a cancel or an error unwinding
 *    past it: a completion arriving now lost a race, which is normal and
 *    is dropped quietly (counted in the tool's stats);
 *  - NONE: not started, or completed normally: a completion now is misuse.
 * The loop thread opens it when the step starts and closes it when the
 * step ends; the claim is a compare-and-swap, so a completion and a
 * timeout can never both win.
 *
 * Three bits for four states: ABORTED has a bit of its own, so retiring a
 * record (futoin__step_retire_to), which moves the generation on, keeps
 * ABORTED and turns every other state into NONE with one add and one mask.
 */
enum futoin__xs
{
    FUTOIN__XS_NONE = 0,
    FUTOIN__XS_OPEN = 1,
    FUTOIN__XS_CLAIMED = 3,
    FUTOIN__XS_ABORTED = 4
};
#define FUTOIN__XS_BITS 3
#define FUTOIN__XS_MASK 7u
#define FUTOIN__XS_STATE(w) ((uint32_t)(w) & FUTOIN__XS_MASK)
#define FUTOIN__XS_WORD(gen, st)                                               \
    (((uint32_t)(gen) << FUTOIN__XS_BITS) | (uint32_t)(st))
/* One in the generation field of an xs word: it moves on each time a
 * record is retired (futoin__step_retire_to) or carved (pool.c). */
#define FUTOIN__XS_GEN_ONE (1u << FUTOIN__XS_BITS)

/* A stack() allocation; the user's memory follows the header. */
struct futoin__alloc
{
    futoin__alloc* next;
    void (*cleanup)(void* value);
    max_align_t payload[];
};

/*
 * What few steps use: stack() memory, a cancel handler (setCancel), a
 * timeout (setTimeout). A record of its own, taken on first use
 * (futoin__step_rare_get) and given back with the step, so that a plain
 * step is 80 bytes (issue 22: a waiting flow holds two steps). Loop
 * thread only; nothing but its step points to it.
 */
typedef struct futoin__step_rare
{
    futoin__alloc* allocs; /* first: the pool's free-list link */
    FutoInAsyncSteps_cancel_callback cancel;
    void* cancel_data;
    void (*cancel_release)(void* data);
    futoin__timer* timer;
    uint32_t timer_gen; /* generation of `timer` */
} futoin__step_rare;

/*
 * Two record sizes: a step, a loop body and addSync()'s unlock step (the
 * kinds that run a callback of their own) end at `u` (80 bytes, pool
 * `steps`); a loop, parallel() or addSync() frame has `u` too (112 bytes,
 * pool `frames`). A record never changes its size class: its kind is
 * known when it is taken (futoin__step_new). Code must not touch `u` of a
 * small one.
 *
 * Two words serve two purposes each, by state (issue 22: a waiting flow
 * holds two steps, so every word of a step is two words of T2's bytes):
 *  - `next` / `parent`: a record on a queue (QUEUED) or on its pool's
 *    free list (FREE) is linked through `next`; a frame (EXEC, SUBS, WAIT,
 *    ERRH, DONE) is on no queue and points to the frame below it through
 *    `parent`. A step turns from one into the other only where it leaves
 *    its queue and becomes the top frame (push_frame in flow.c and the
 *    copies of it there: level0_run, chain), and back only when its record
 *    is retired (futoin__step_retire_to). So no code may read `parent` of
 *    a queued step nor `next` of a frame.
 *  - `sub_head` / `wait_since`: a step or loop body that waits for an
 *    external event (WAIT) has no sub-steps (a step that added any goes to
 *    SUBS, not WAIT: after_callback in flow.c), so its `sub_head` holds the
 *    time its wait began, for the dump. Whatever ends the wait (resolve,
 *    wake, an error or a timeout, all of which make it DONE) clears it
 *    again; the two places that drop a frame in any state (pop_frame and
 *    unwind_error) do not read it as a queue while the frame is WAIT. A
 *    parallel() frame waits for its branches as WAIT too, with no time:
 *    its `sub_head` stays NULL.
 */
struct futoin__step
{
    FutoInAsyncSteps bsi; /* must be first: the handle is the record */
    /* Word 1, beside `api`: what success() and the run loop test first
     * (state, kind, flags, xs) shares the handle's cache line whatever
     * the record's place in its 64-byte lines (records are 16-byte
     * aligned; issue 22, T3: a wake reads them on a cold record). */
    uint16_t flags;
    uint8_t kind;
    uint8_t state;
    /* enum futoin__xs, the only cross-thread field, and above it the
     * step's generation (futoin__step_gen): its one copy (issue 22: a
     * step of 80 bytes, not 88). */
    _Atomic(uint32_t) xs;
    union
    {
        futoin__step* next;   /* QUEUED: queue link; FREE: free-list link */
        futoin__step* parent; /* a frame: the frame below, NULL at level 0 */
    };
    futoin__flow* flow;   /* flow it is queued in or executing in */
    union
    {
        /* queue of sub-steps; its tail: futoin__sub_tail */
        futoin__step* sub_head;
        /* WAIT (a step or body): the tool's time (ms) the wait began, for
         * the dump */
        uint64_t wait_since;
        /* DONE with F_VAL1: the bits of its value (futoin__val1) */
        uint64_t val_bits;
    };
    union /* ext: what to do with `data` when the record goes */
    {
        void (*release)(void* data);    /* runs once */
        const futoin_step_class* cls;   /* F_CLASS: release + origin */
        const FutoInType* val_type;     /* DONE with F_VAL1 (futoin__val1) */
    } rel;
    futoin__step_rare* rare; /* NULL until a rare part is first set */
    /* the callbacks and their data, in the record's second half: a wake
     * (success() of a waiting step, then the pop) reads the words above
     * (issue 22, T3) */
    FutoInAsyncSteps_execute_callback f;
    FutoInAsyncSteps_error_callback eh;
    void* data;
    union /* frames (futoin__step_big) only */
    {
        struct /* K_LOOP */
        {
            union
            {
                void (*loop)(FutoInAsyncSteps* bsi, void* data);
                void (*repeat)(FutoInAsyncSteps* bsi, void* data, size_t i);
            } fn;
            char* label; /* owned copy, or NULL */
            size_t count;
            /* iterations started; kept for repeat() only: an iteration
             * of loop() never reads its loop frame (futoin__body_init) */
            size_t i;
        } l;
        struct /* K_PARALLEL */
        {
            futoin__step* br_head; /* branches not started yet */
            futoin__step* br_tail;
            futoin__flow* flows;   /* running branch flows, in add() order */
            futoin__flow* flows_tail;
        } p;
        struct /* K_SYNC */
        {
            FutoInSync* sync;
            FutoInArgs* stash; /* incoming values for the guarded step */
        } y;
    } u;
};

/* The size of a step record of the small class, and whether `kind` is
 * of the large one. */
#define FUTOIN__STEP_SMALL offsetof(futoin__step, u)
static inline bool futoin__step_big(uint8_t kind)
{
    return kind == FUTOIN__K_LOOP || kind == FUTOIN__K_PARALLEL
           || kind == FUTOIN__K_SYNC;
}

/*
 * A step's generation is the upper 29 bits of `xs`, the only place it is
 * kept. The loop thread is the only writer of those bits: it moves them on
 * when a record is retired (so the next step of the record has the next
 * one) and every other state it stores keeps them, as a worker's claim
 * does. So a relaxed load on the loop thread reads the step's own
 * generation.
 */
static inline uint32_t futoin__step_gen(const futoin__step* s)
{
    return atomic_load_explicit(&((futoin__step*)s)->xs, memory_order_relaxed)
           >> FUTOIN__XS_BITS;
}
/* The xs word of step `s` in state `st` (enum futoin__xs). */
static inline uint32_t futoin__step_xs(const futoin__step* s, uint32_t st)
{
    return (atomic_load_explicit(&((futoin__step*)s)->xs, memory_order_relaxed)
            & ~FUTOIN__XS_MASK)
           | st;
}

_Static_assert(FUTOIN__XS_ABORTED == 4 && FUTOIN__XS_NONE == 0
                       && FUTOIN__XS_OPEN < 4 && FUTOIN__XS_CLAIMED < 4,
               "retiring masks off the two low bits: ABORTED is bit 2");

enum futoin__flow_state
{
    FUTOIN__FL_IDLE = 0,  /* nothing scheduled: waiting or not started */
    FUTOIN__FL_SCHED,     /* flow_run() queued on the tool */
    FUTOIN__FL_RUNNING,   /* flow_run() on the C stack */
    FUTOIN__FL_DONE
};

/*
 * futoin__flow.raise: 0 while nothing is raised; else the flow's
 * futoin__raise_rec record; or, when no record could be had (out of memory),
 * a bare word that keeps the raise itself: the frame to raise at (or none)
 * with FUTOIN__RAISE_BARE, and FUTOIN__RAISE_TOP for "at whatever is on
 * top". A bare raise's code reads as InternalError (as a code that cannot
 * be copied does) and it carries no break/continue target. So a raise never
 * fails for lack of memory, and the hot paths test one word.
 */
#define FUTOIN__RAISE_BARE ((uintptr_t)1)
#define FUTOIN__RAISE_TOP ((uintptr_t)2)

struct futoin__flow
{
    /* Its place in the tool's run queue while it is scheduled (and, if it
     * was cancelled or freed meanwhile, until its batch passed it):
     * futoin__flow_schedule, tool/tool.h futoin__tool_rq. It replaces the
     * ring slot each scheduled flow took (issue 22: 16 B of ring per
     * waiting flow at T2's peak, for 8 B here). Never cleared but by the
     * run queue: a record taken again from its pool keeps it (pool.c).
     * First: the run queue hands its callback this field, which is then
     * the flow itself, no offset to take off. */
    struct futoin__rq_node rq;
    futoin__root* root;
    futoin__step* top;   /* deepest frame, NULL between level-0 steps */
    /* Level-0 queue. No tail: a root's queue grows only while the root
     * is not running (root.c root_append, through the tool's cursor), a
     * branch flow's is its one step (parallel.c). */
    futoin__step* head;
    uintptr_t raise;     /* the pending raise, above; 0: none */
    uint8_t state;
    uint8_t nvals;       /* args->args[nvals..3] are empty */
    /* A root's main flow: the root's own state, pending and in_cb
     * (futoin__root) live in these bytes; a branch flow leaves them alone.
     * Fields rather than padding, so that no store to the flow's other
     * fields may rewrite them. */
    uint8_t root_state_;
    uint8_t root_pending_;
    uint32_t root_in_cb_;
    /* Pending success values, or NULL (then nvals is 0): the tool's hot
     * buffer when it was free (a chain of steps passing values on only
     * ever uses that one), else a pooled FutoInArgs. A pointer, not an
     * inline FutoInArgs: every root and branch holds a flow, and 128 more
     * bytes each would break the bytes-per-waiting-flow budget (T2). */
    FutoInArgs* args;
    /* Branch flows only, last: a root's main flow ends before them (its
     * root keeps two fields of its own there, futoin__root); read them
     * through futoin__flow_par(). */
    futoin__step* par;   /* the parallel frame, or NULL once it is done */
    futoin__flow* next;  /* sibling branch flows / pool link */
};
/* The part of a flow a root's main flow has. */
#define FUTOIN__FLOW_MAIN_SIZE offsetof(futoin__flow, par)

enum futoin__root_state
{
    FUTOIN__R_NEW = 0,   /* steps may be added; execute() allowed */
    FUTOIN__R_RUNNING,
    FUTOIN__R_DONE,      /* finished, failed or cancelled */
    FUTOIN__R_FREED      /* back in the pool: a stale handle */
};

enum futoin__root_pending
{
    FUTOIN__P_CANCEL = 1u << 0,
    FUTOIN__P_FREE = 1u << 1
};

typedef struct futoin__statevar futoin__statevar;
struct futoin__statevar
{
    futoin__statevar* next;
    void* value;
    void (*cleanup)(void* data, void* value);
    void* data;
    char name[];
};

/*
 * The parts of a root that most roots never use: a record of their own,
 * taken from its pool on first use (futoin__root_rare_get) and given back
 * with the root (issue 22: every waiting flow holds a root, and these
 * 11 words made it 200 bytes instead of 128). Loop thread only; nothing
 * keeps a pointer to it but its root, so it needs no quarantine.
 */
typedef struct futoin__root_rare
{
    futoin__statevar* vars;  /* first: the pool's free-list link */
    futoin__alloc* allocs;   /* stack() on the root: lives with the root */
    char* error_info;        /* owned copy, or NULL */
    const char* error_code;  /* the last error code, or NULL (error_owned) */
    FutoInAsyncSteps_error_callback unhandled;
    void* unhandled_data;
    void (*unhandled_release)(void* data);
    FutoInBinaryValue* last_exc; /* ext: a binding's exception object */
    struct futoin__stack* stack; /* async stack of the last error, or NULL */
    struct futoin__trace* trace; /* trace context (trace.c), or NULL */
    uint8_t error_owned; /* error_code is a malloc'd copy */
    /* last_exc was attached before the error it belongs to was raised
     * (futoin__root_attach_exception): the next error keeps it. */
    uint8_t exc_pending;
} futoin__root_rare;

struct futoin__root
{
    FutoInAsyncSteps bsi; /* must be first */
    /* The main flow (main.top: the root pool's free-list link) without
     * the branch fields (futoin__flow.par, next): the root's own two
     * fields take their place, and its small ones live in the bytes the
     * main flow keeps for them (issue 22, bytes per waiting flow). The
     * root's tool is not kept: its block header names it
     * (futoin__root_tool), for a freed root too. */
    union
    {
        futoin__flow main;
        struct /* in main.root_state_, root_pending_, root_in_cb_ */
        {
            char main_head_[offsetof(futoin__flow, root_state_)];
            uint8_t state;
            uint8_t pending; /* futoin__root_pending, acted on at in_cb 0 */
            uint32_t in_cb;  /* user callbacks of this root on the C stack */
        };
        struct
        {
            char main_part_[FUTOIN__FLOW_MAIN_SIZE];
            futoin__root_rare* rare; /* NULL until a rare part is set */
            /* The root's id while it lives; its negation once freed. Other
             * threads read it when they post execute/cancel/free
             * (remote.c), so a call that was posted before a free on the
             * loop thread is told apart from one made after it, and never
             * lands on the record's next owner. */
            _Atomic(ptrdiff_t) id;
        };
    };
};
_Static_assert(offsetof(futoin__root, state)
                               == offsetof(futoin__root, main.root_state_)
                       && offsetof(futoin__root, pending)
                                  == offsetof(futoin__root, main.root_pending_)
                       && offsetof(futoin__root, in_cb)
                                  == offsetof(futoin__root, main.root_in_cb_),
               "a root's small fields are the bytes its main flow keeps");

/* Whether root `r` has a trace context (trace.c): the test of the hot paths
 * (flow.c, root.c) reads one field of a root with no rare record, as every
 * root that never set one has. */
#define FUTOIN__TRACED(r) ((r)->rare && (r)->rare->trace)

/* A rare part of root `r` for reading: its value, or 0/NULL when the root
 * has no rare record. */
#define FUTOIN__RARE(r, field) ((r)->rare ? (r)->rare->field : 0)

/* pool.c: the rare record of `r`, taken (cleared) if it has none; NULL
 * when out of memory. */
futoin__root_rare* futoin__root_rare_get(futoin__root* r);

extern const FutoInAsyncStepsAPI futoin__step_api;
extern const FutoInAsyncStepsAPI futoin__root_api;
extern const FutoInAsyncStepsAPI futoin__par_api;
/* add() of a root (root_api.add) on the loop thread (the caller checked
 * futoin__on_loop) returning the step it queued, or NULL if it refused
 * (reported as add() reports). */
futoin__step* futoin__root_add(FutoInAsyncSteps* bsi, void* data,
                               FutoInAsyncSteps_execute_callback f,
                               FutoInAsyncSteps_error_callback eh);
/* ext add_classed() of a root on the loop thread (the caller checked
 * both): add() whose step gets `cls` (NULL: none), or cls->release(data)
 * at once when add() refused. */
void futoin__root_add_classed(FutoInAsyncSteps* bsi, void* data,
                              FutoInAsyncSteps_execute_callback f,
                              FutoInAsyncSteps_error_callback eh,
                              const futoin_step_class* cls);

static inline futoin__step* futoin__as_step(FutoInAsyncSteps* bsi)
{
    return (futoin__step*)bsi;
}
static inline futoin__root* futoin__as_root(FutoInAsyncSteps* bsi)
{
    return (futoin__root*)bsi;
}
/* The parallel() frame of branch flow `fl`; NULL for a root's main flow
 * (which has no `par`: futoin__root) and for a branch that is done. */
static inline futoin__step* futoin__flow_par(const futoin__flow* fl)
{
    return fl == &fl->root->main ? NULL : fl->par;
}
/* The tool of a step, flow or root: its record's block header names it
 * (recpool.h), one mask and one load away. A root's main flow lives in
 * the root's record, a branch flow in one of its own. */
static inline futoin_tool* futoin__step_tool(const futoin__step* s)
{
    return futoin__recpool_tool(s);
}
static inline futoin_tool* futoin__flow_tool(const futoin__flow* fl)
{
    return futoin__recpool_tool(fl);
}
static inline futoin_tool* futoin__root_tool(const futoin__root* r)
{
    return futoin__recpool_tool(r);
}
/*
 * The last step of the level-0 queue of root `r` (e: the engine state of
 * r's tool), or NULL. The flow keeps no tail (engine.h): the tool's cursor
 * names the last root appended to and its last step. While r's queue is
 * not empty, the cursor, if it names r, names its last step: a root's
 * queue grows only while the root is not running, by root.c root_append(), which
 * sets the cursor each time; steps leave it from its head only, and a
 * queue emptied by running or cancel has a NULL head. Roots appended to in
 * turn walk their queue instead, as futoin__sub_append() does for
 * sub-steps.
 */
static inline __attribute__((always_inline)) futoin__step* futoin__root_tail_in(
        const struct futoin__engine_tool* e, const futoin__root* r)
{
    futoin__step* t = r->main.head;
    if (t) {
        if (e->l0_flow == &r->main) {
            return e->l0_tail;
        }
        while (t->next) {
            t = t->next;
        }
    }
    return t;
}

static inline futoin__step* futoin__root_tail(const futoin__root* r)
{
    return futoin__root_tail_in(futoin__eng(futoin__root_tool(r)), r);
}

static inline void futoin__set_api(FutoInAsyncSteps* bsi,
                                   const FutoInAsyncStepsAPI* api)
{
    /* `api` is const in the spec's struct; we own the memory. */
    *(const FutoInAsyncStepsAPI**)bsi = api;
}

/* Calls user code on behalf of root `r`: while it runs, cancel() and
 * free() of `r` are deferred (see root.c). */
#define FUTOIN__USER(r, call)                                                  \
    do {                                                                       \
        ++(r)->in_cb;                                                          \
        call;                                                                  \
        --(r)->in_cb;                                                          \
    } while (0)

/*
 * Sub-steps are appended only while their step's own callback runs, one
 * callback at a time per tool, so the tail of the queue being appended to
 * is kept per tool instead of in every record (which keeps a step at 80
 * bytes). futoin__sub_append() is the only way to append.
 */
void futoin__sub_append(futoin__step* s, futoin__step* n);
futoin__step* futoin__sub_tail(futoin__step* s);

/* futoin__sub_append() inline, for a caller that has the engine's state
 * `e` of the step's tool at hand (a fast path that calls nothing). */
static inline __attribute__((always_inline)) void futoin__sub_append_in(
        struct futoin__engine_tool* e, futoin__step* s, futoin__step* n)
{
    futoin__step* t;
    uint32_t gen = futoin__step_gen(s);
    if (e->app_step == s && e->app_gen == gen) {
        t = e->app_tail;
    } else {
        t = s->sub_head;
        while (t && t->next) {
            t = t->next;
        }
        e->app_step = s;
        e->app_gen = gen;
    }
    /* sub-steps go to a step whose callback runs (not WAIT: engine.h) */
    FUTOIN__DEBUG_ASSERT(s->state == FUTOIN__S_EXEC
                         || s->state == FUTOIN__S_ERRH);
    FUTOIN__DEBUG_ASSERT(!t || t->state == FUTOIN__S_QUEUED);
    n->next = NULL;
    if (t) {
        t->next = n;
    } else {
        s->sub_head = n;
    }
    e->app_tail = n;
}

/* pool.c */
/* The rare record of step `s`, taken (cleared) if it has none; NULL when
 * out of memory. */
futoin__step_rare* futoin__step_rare_get(futoin__step* s);
/* A queued step of `kind` for flow `fl` with the step table, or NULL:
 * futoin__step_new() below, for a kind of each size class. */
futoin__step* futoin__step_new_small(futoin__flow* fl, uint8_t kind);
futoin__step* futoin__step_new_frame(futoin__flow* fl, uint8_t kind);
/* Inline, so that a constant `kind` picks its pool with no test. */
static inline futoin__step* futoin__step_new(futoin__flow* fl, uint8_t kind)
{
    return futoin__step_big(kind) ? futoin__step_new_frame(fl, kind)
                                  : futoin__step_new_small(fl, kind);
}
/* The same for an add(): a K_STEP with its callbacks and data set (the
 * caller keeps nothing live across the call). */
futoin__step* futoin__step_new_plain(futoin__flow* fl,
                                     FutoInAsyncSteps_execute_callback f,
                                     FutoInAsyncSteps_error_callback eh,
                                     void* data);
/* A record off the free list of the `steps` pool becomes a queued step of
 * `kind` (one of the small class) of `fl` with these callbacks and data:
 * what futoin__step_new_small() and futoin__step_new_plain() make of it.
 * Field by field, no loop: nothing for GCC to turn into `rep stos`. `xs`
 * is left alone (the previous owner's outcome, for late completions:
 * pool.c; its generation moved on when that owner was retired). What a
 * record given back holds already (futoin__step_retire_to: the step table,
 * no sub-steps, rare record or release hook) is not written again. */
static inline __attribute__((always_inline)) void futoin__step_init_small(
        futoin__step* s, futoin__flow* fl, uint8_t kind,
        FutoInAsyncSteps_execute_callback f, FutoInAsyncSteps_error_callback eh,
        void* data)
{
    s->next = NULL; /* and `parent` (engine.h: one word) */
    s->flow = fl;
    s->f = f;
    s->eh = eh;
    s->data = data;
    s->flags = 0;
    s->kind = kind;
    s->state = FUTOIN__S_QUEUED;
}

/* futoin__step_new_small() with no call: NULL while the free list of
 * `e->steps` is within its quarantine (the caller then calls it, and it
 * carves a record). */
static inline __attribute__((always_inline)) futoin__step* futoin__step_take_small(
        struct futoin__engine_tool* e, futoin__flow* fl, uint8_t kind)
{
    futoin__step* s = futoin__recpool_take_at(&e->steps,
                                              offsetof(futoin__step, next));
    if (s) {
        futoin__step_init_small(s, fl, kind, NULL, NULL, NULL);
    }
    return s;
}

/* futoin__step_new_plain() with no call: NULL while the free list of
 * `e->steps` is within its quarantine (the caller then takes the way
 * through futoin__step_new_plain(), or, having tried this,
 * futoin__step_new_plain_carved(), which carves a record). */
futoin__step* futoin__step_new_plain_carved(futoin__flow* fl,
                                            FutoInAsyncSteps_execute_callback f,
                                            FutoInAsyncSteps_error_callback eh,
                                            void* data);
static inline __attribute__((always_inline)) futoin__step* futoin__step_take_plain(
        struct futoin__engine_tool* e, futoin__flow* fl,
        FutoInAsyncSteps_execute_callback f, FutoInAsyncSteps_error_callback eh,
        void* data)
{
    futoin__step* s = futoin__recpool_take_at(&e->steps,
                                              offsetof(futoin__step, next));
    if (s) {
        futoin__step_init_small(s, fl, FUTOIN__K_STEP, f, eh, data);
    }
    return s;
}

/* futoin__step_new_plain() where the caller holds the engine state `e`
 * of fl's tool: a record off the free list, else a carved one (a call). */
static inline __attribute__((always_inline)) futoin__step* futoin__step_new_plain_in(
        struct futoin__engine_tool* e, futoin__flow* fl,
        FutoInAsyncSteps_execute_callback f, FutoInAsyncSteps_error_callback eh,
        void* data)
{
    futoin__step* s = futoin__step_take_plain(e, fl, f, eh, data);
    if (FUTOIN__UNLIKELY(!s)) {
        return futoin__step_new_plain_carved(fl, f, eh, data);
    }
    return s;
}

/* futoin__step_release() of a step that holds something to release. */
void futoin__step_release_slow(futoin_tool* tool, futoin__step* s);

/* The end of every release: the record goes back to its pool `p` (steps
 * or frames, both linked through `next`). It holds nothing any more: its
 * api is the step table (a record of the steps pool never has another),
 * and sub_head, rare and rel are NULL (its queue was freed, its rare
 * record and release hook released), which futoin__step_init_small()
 * relies on. */
/* The next generation (futoin__step_gen) for the record's next step:
 * ABORTED kept, any other state NONE. Loop thread; nothing but a misusing
 * thread can race with this store. */
static inline __attribute__((always_inline)) void futoin__step_next_gen(
        futoin__step* s)
{
    uint32_t w = atomic_load_explicit(&s->xs, memory_order_relaxed);
    atomic_store_explicit(&s->xs, (w + FUTOIN__XS_GEN_ONE) & ~3u,
                          memory_order_relaxed);
}

static inline __attribute__((always_inline)) void futoin__step_retire_to(
        futoin__recpool* p, futoin__step* s)
{
    /* A step that ended normally takes no completion any more (misuse); one
     * that was aborted keeps saying so, for completions that lost the race
     * (above). Either way the record's next step gets the next generation:
     * it moves on here, not when the record is taken, so taking one (every
     * add) stores nothing to `xs`. */
    futoin__step_next_gen(s);
    s->state = FUTOIN__S_FREE;
    futoin__recpool_put_at(p, s, offsetof(futoin__step, next));
}

/* The same, the pool named in the record's block header. */
static inline void futoin__step_retire(futoin_tool* tool, futoin__step* s)
{
    (void)tool;
    futoin__step_retire_to(futoin__recpool_of(s), s);
}

/* Give a step record back: what it still holds (successStep() values, a
 * release hook of its data, its rare record) is released first, out of
 * line; a plain step (the usual one) goes straight to the pool. */
static inline void futoin__step_release(futoin_tool* tool, futoin__step* s)
{
    if (FUTOIN__UNLIKELY((s->flags & FUTOIN__F_OWNARGS) || s->rel.release
                         || s->rare)) {
        futoin__step_release_slow(tool, s);
        return;
    }
    futoin__step_retire(tool, s);
}
futoin__flow* futoin__flow_alloc(futoin_tool* tool);
void futoin__flow_release(futoin_tool* tool, futoin__flow* fl);
FutoInArgs* futoin__args_alloc(futoin_tool* tool);
void futoin__args_release(futoin_tool* tool, FutoInArgs* a);
/* A new root of `tool` as futoin_root_new() returns it, or NULL. */
FutoInAsyncSteps* futoin__root_alloc(futoin_tool* tool);
void futoin__root_release(futoin_tool* tool, futoin__root* r);

/* flow.c */
/* What the tool's run queue calls for a scheduled flow (data: the flow,
 * whose `rq` is its node); root.c's execute() queues it itself. */
void futoin__flow_run_cb(void* data);
void futoin__flow_schedule(futoin__flow* fl);
/* futoin__flow_schedule() of a flow of `tool`, inline (a wake: bench T3) */
static inline __attribute__((always_inline)) void futoin__flow_schedule_in(
        futoin_tool* tool, futoin__flow* fl)
{
    if (fl->state == FUTOIN__FL_IDLE) {
        fl->state = FUTOIN__FL_SCHED;
        futoin__tool_rq(tool, &fl->rq);
    }
}
void futoin__flow_start(futoin__flow* fl);
void futoin__flow_cancel(futoin__flow* fl);
void futoin__queue_free(futoin_tool* tool, futoin__step* head);
void futoin__raise(futoin__flow* fl, futoin__step* at, const char* code);
void futoin__raise_top(futoin__flow* fl, const char* code);
/* breakLoop()/continueLoop() (loop.c): the loop code that `fl` raises next
 * ends (or, `cont`, continues) loop frame `l`. */
void futoin__flow_set_ctl(futoin__flow* fl, futoin__step* l, bool cont);
/* Branch flow `bf` ended with a loop code (parallel.c): its break or
 * continue target, if it has one, becomes that of flow `fl`. */
void futoin__flow_pass_ctl(futoin__flow* bf, futoin__flow* fl);
/* Drop what is left of `fl`'s raise (its record goes back to the pool). */
void futoin__flow_drop_raise(futoin__flow* fl);
void futoin__complete(futoin__flow* fl, futoin__step* s);
void futoin__step_resolve(futoin__step* s);
/* The same for a step with no timer, claimed, while the tool has no hooks;
 * returns 1. */
int futoin__step_wake(futoin__step* s);
void futoin__step_error(
        futoin__step* s, const char* code, const char* info);

/* args.c */
void futoin__args_clear(FutoInArgs* a);
/* Move all four values of `src` into `dst` (ownership moves, nothing is
 * cleaned up), leaving `src` empty. */
void futoin__args_move(FutoInArgs* dst, FutoInArgs* src);

/* GCC turns a loop of zero stores into memset(), and memset() of these
 * small fixed sizes into `rep stos`, whose start-up cost dominates at this
 * size (issue 22). An `optimize` attribute applies to the body of the
 * function that carries it, not to what it inlines: every function that
 * clears records with such a loop, directly or inlined, carries this. */
#if defined(__GNUC__) && !defined(__clang__)
#define FUTOIN__NO_MEMSET_PATTERN                                              \
    __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define FUTOIN__NO_MEMSET_PATTERN
#endif

/* Move the first `n` values of `src` into `dst`, leaving them empty in
 * `src` (ownership moves; nothing is cleaned up). */
static inline void futoin__move_slots(FutoInArgs* dst, FutoInArgs* src,
                                      unsigned n)
{
    for (unsigned i = 0; i < n; ++i) {
        dst->args[i] = src->args[i];
        memset(&src->args[i], 0, sizeof(src->args[i]));
    }
}

/*
 * A container for a flow's pending values: the tool's hot buffer if free,
 * else a pooled one; NULL when out of memory. Only its first fl->nvals
 * slots are ever read (they are moved in by futoin__flow_set_vals_n and
 * moved or reset out again), so a pooled one is neither cleared when taken
 * nor scanned when given back: its other slots may hold anything, e.g. the
 * pool's free-list link in slot 0 (a pooled record meant for any other use
 * comes from futoin__args_alloc, which clears it).
 */
static inline FutoInArgs* futoin__vals_get(futoin_tool* tool)
{
    struct futoin__engine_tool* e = futoin__eng(tool);
    if (!e->hot_busy) {
        e->hot_busy = 1;
        return &e->hot_args;
    }
    return futoin__recpool_get(&e->args);
}

/* Give back a container from futoin__vals_get() whose first slots (those
 * that held values) are empty. */
static inline void futoin__vals_put(futoin_tool* tool, FutoInArgs* a)
{
    struct futoin__engine_tool* e = futoin__eng(tool);
    if (a == &e->hot_args) {
        e->hot_busy = 0;
    } else {
        futoin__recpool_put(&e->args, a);
    }
}

/* Drop the flow's pending values (running their cleanup). */
static inline void futoin__flow_drop_vals(futoin__flow* fl)
{
    FutoInArgs* a = fl->args;
    unsigned n = fl->nvals;
    fl->args = NULL;
    fl->nvals = 0;
    if (a) {
        for (unsigned i = 0; i < n; ++i) {
            futoin_reset_binval(&a->args[i]);
        }
        futoin__vals_put(futoin__flow_tool(fl), a);
    }
}

/* Move the first `n` slots of `args` (the rest are empty) in as the flow's
 * pending values, dropping the previous ones; the caller's copy is reset.
 * Out of memory, the values are dropped (their cleanup runs). */
static inline __attribute__((always_inline)) void futoin__flow_set_vals_n(
        futoin__flow* fl, FutoInArgs* args, unsigned n)
{
    FutoInArgs* a;
    if (fl->args) {
        futoin__flow_drop_vals(fl);
    }
    if (!n) {
        return;
    }
    a = futoin__vals_get(futoin__flow_tool(fl));
    if (!a) {
        futoin__args_clear(args);
        return;
    }
    futoin__move_slots(a, args, n);
    fl->args = a;
    fl->nvals = (uint8_t)n;
}

/*
 * A waiting step completed from outside with one plain value (a scalar
 * with no custom_data or length) and no release hook keeps that value in
 * itself, F_VAL1, until its flow runs: the type in `rel`, the bits in
 * `sub_head` (words a DONE step does not use otherwise). So a wake needs no
 * pooled FutoInArgs, cold by the time the flow runs when many flows wait
 * (issue 22, T3: 30,000 flows woken in turn). The flow takes the value as
 * it pops the step (flow.c take_val1), into the tool's hot buffer as a
 * rule; a step popped otherwise (cancel, an error) drops it: its type's
 * cleanup runs, as it would in a pooled container.
 */
static inline __attribute__((always_inline)) bool futoin__val1_fits(
        const futoin__step* s, const FutoInBinaryValue* v)
{
    return !v->custom_data && !v->length && !s->rel.release;
}
static inline __attribute__((always_inline)) void futoin__val1_read(
        const futoin__step* s, FutoInBinaryValue* v)
{
    v->type = s->rel.val_type;
    v->u64 = s->val_bits;
    v->custom_data = NULL;
    v->length = 0;
}
static inline __attribute__((always_inline)) void futoin__val1_clear(
        futoin__step* s)
{
    s->flags &= (uint16_t)~FUTOIN__F_VAL1;
    s->rel.release = NULL;
    s->sub_head = NULL;
}

/* The same for `args` (may be NULL) with any number of values. */
static inline void futoin__flow_set_vals(futoin__flow* fl, FutoInArgs* args)
{
    unsigned n = 4;
    if (!args) {
        n = 0;
    } else {
        while (n && !args->args[n - 1].type) {
            --n;
        }
    }
    futoin__flow_set_vals_n(fl, args, n);
}
/* args.c: false (and `msg`, unless NULL, says which value of `what` and
 * why) for a value whose type flags are unknown or a string/array with a
 * NULL pointer. */
bool futoin__args_check(const FutoInArgs* a, const char* what, char* msg,
                        size_t len);

/* error.c */
void futoin__root_set_error(
        futoin__root* r, const char* code, const char* info);
/* Forget the last error (error_info / last_exception read as NULL). */
void futoin__root_clear_error(futoin__root* r);
/* The static string of a standard or loop-control code, else NULL. */
const char* futoin__static_code(const char* code);
/* The one copy of each loop-control code (error.c): pending codes are
 * recognised by address. */
extern const char futoin__code_loop_break[];
extern const char futoin__code_loop_cont[];
static inline bool futoin__is_loop_code(const char* code)
{
    return code == futoin__code_loop_break || code == futoin__code_loop_cont;
}
void futoin__root_settle(futoin__root* r);

/* parallel.c */
void futoin__parallel_start(futoin__step* p);
void futoin__parallel_branch_done(futoin__flow* fl, const char* code);
void futoin__parallel_cancel(futoin__step* p);

/* loop.c */
void futoin__loop_iterate(futoin__step* l);

/*
 * A body frame keeps what its iterations call: the loop's `data` in its own
 * `data` and, for loop(), the loop's function in its `f` (NULL for
 * repeat(), which also needs the loop's count). So an iteration of loop()
 * reads its body frame and never the loop frame, whose fields span two
 * cache lines (issue 22, T3: a looping flow's wake touches one record less).
 * A body has no callback of its own, and `f` of a body is read nowhere else
 * (its origin is the loop's, stack.c).
 */
typedef void (*futoin__loop_fn)(FutoInAsyncSteps* bsi, void* data);
static inline void futoin__body_init(futoin__step* b, const futoin__step* l)
{
    b->data = l->data;
    b->f = (l->flags & FUTOIN__F_REPEAT)
                   ? NULL
                   : (FutoInAsyncSteps_execute_callback)(void (*)(void))
                             l->u.l.fn.loop;
}
static inline bool futoin__body_repeats(const futoin__step* b)
{
    return !b->f;
}
static inline futoin__loop_fn futoin__body_loop_fn(const futoin__step* b)
{
    return (futoin__loop_fn)(void (*)(void))b->f;
}

/* ---- async stacks (stack.c) ---- */

/* Record the async stack of an error `code` raised at frame `at` of `fl`
 * (NULL: the flow's top frame) into the root, replacing the previous one.
 * Loop-control codes are not errors: nothing is recorded for them. */
void futoin__stack_capture(futoin__flow* fl, futoin__step* at,
                           const char* code);
/* The root's recorded stack in its public form (C frames' names resolved
 * on first use), or NULL. */
const futoin_async_stack* futoin__stack_get(futoin__root* r);
void futoin__stack_free(futoin__root* r);

/* ---- threads (remote.c) ---- */

/* Report a call `what` made off the loop thread (refused). */
void futoin__misuse_thread(futoin_tool* tool, const char* what);
/* Report a call `what` made through a NULL handle (no tool to tell). */
void futoin__misuse_null(const char* what);

/* The gate of every call that only the loop thread may make: true on the
 * loop thread; elsewhere the call is reported and must do nothing. The
 * tool comes from the record's block header: no racy read. */
static inline bool futoin__on_loop(const void* handle, const char* what)
{
    futoin_tool* tool;
    if (FUTOIN__UNLIKELY(!handle)) {
        futoin__misuse_null(what);
        return false;
    }
    tool = futoin__recpool_tool(handle);
    if (FUTOIN__UNLIKELY(!futoin__tool_on_thread(tool))) {
        futoin__misuse_thread(tool, what);
        return false;
    }
    return true;
}

/* Loop thread: claim a waiting step for a completion. 1 = claimed; 0 =
 * the step was aborted (a lost race: counted, not reported);
 * FUTOIN_EINVAL = misuse (reported). */
int futoin__xs_claim(futoin__step* s, const char* what);
/* A completion that could not claim `w`: 0 (counted) or FUTOIN_EINVAL. */
int futoin__xs_refuse(futoin_tool* tool, uint32_t w, const char* what);
void futoin__count_late(futoin_tool* tool);
/* Any thread but the loop thread: claim `s` and post the completion
 * (args moved; code NULL = success). Returns as futoin__xs_claim. */
int futoin__remote_complete(futoin_tool* tool, futoin__step* s,
                            FutoInArgs* args, const char* code,
                            const char* info);

/* flow.c: ext chain() (futoin/sys/ext.h), the table's slot itself: NULL
 * for anything but a step handle of ours. */
FutoInAsyncSteps* futoin__step_chain(FutoInAsyncSteps* bsi,
                                     const FutoInAsyncSteps_execute_callback* fns,
                                     size_t nfns, void** data);
/* flow.c: ext chain_kept(), the same slot's way for a binding that
 * releases the data of the step chained over itself. */
FutoInAsyncSteps* futoin__step_chain_kept(FutoInAsyncSteps* bsi,
                                          const FutoInAsyncSteps_execute_callback* fns,
                                          size_t nfns, void** data);

/* step_api.c: complete step `s` (WAIT or SUBS) that was claimed. */
void futoin__step_apply(futoin__step* s, FutoInArgs* args, const char* code,
                        const char* info);
/* step_api.c: success (code NULL) or error from any thread; 1/0/EINVAL. */
int futoin__step_complete(futoin__step* s, FutoInArgs* args, const char* code,
                          const char* info);

enum futoin__root_op
{
    FUTOIN__OP_EXECUTE,
    FUTOIN__OP_CANCEL,
    FUTOIN__OP_FREE
};
/* Other threads: post a root call to the loop thread. `id` is the root's
 * id as the caller saw it (futoin__root.id), checked again when it runs. */
void futoin__root_post(futoin_tool* tool, futoin__root* r, ptrdiff_t id,
                       enum futoin__root_op op, void* data,
                       FutoInAsyncSteps_error_callback unhandled,
                       void (*release)(void* data));
/* root.c: execute() with a release hook for `data` (runs exactly once,
 * at once when refused); from another thread it is posted. */
bool futoin__root_execute(FutoInAsyncSteps* bsi, void* data,
                          FutoInAsyncSteps_error_callback unhandled,
                          void (*release)(void* data));
/* root.c, loop thread: run a posted root call. */
void futoin__root_op_run(futoin__root* r, ptrdiff_t id,
                         enum futoin__root_op op, void* data,
                         FutoInAsyncSteps_error_callback unhandled,
                         void (*release)(void* data));

/* adapter/ext.c: our extension table (for the wrap layer). */
struct futoin_async_ext_table;
const struct futoin_async_ext_table* futoin__ext_table(void);
/* The same table, for callers in the library (no call). */
extern const struct futoin_async_ext_table futoin__ext_tab;

/* root.c: the flow a handle of ours acts in (the identity sync objects use:
 * parallel branches are separate flows, §1.11.4); NULL for a root, a stale
 * handle, or a handle that is not ours. */
futoin__flow* futoin__flow_of(FutoInAsyncSteps* bsi);

void futoin__root_drop_unhandled(futoin__root* r);
void futoin__root_set_exception(futoin__root* r, FutoInBinaryValue* v);
/* ext set_last_exception() through `bsi` (a handle of root `r`): attach a
 * binding's exception object to the error `bsi`'s step raised just now, or
 * else to the next error (see futoin__root_set_error). Moves `v`. */
void futoin__root_attach_exception(futoin__root* r, FutoInAsyncSteps* bsi,
                                   FutoInBinaryValue* v);

/* root.c: slots every table shares */
futoin__root* futoin__root_of(FutoInAsyncSteps* bsi);
ptrdiff_t futoin__common_root_id(FutoInAsyncSteps* bsi);
FutoInAsyncSteps* futoin__common_new_instance(FutoInAsyncSteps* bsi);
FutoInHandle futoin__common_sched_immediate(FutoInAsyncSteps* bsi, void* data,
                                            void (*cb)(void* data));
FutoInHandle futoin__common_sched_deferred(FutoInAsyncSteps* bsi,
                                           uint32_t delay_ms, void* data,
                                           void (*cb)(void* data));
void futoin__common_sched_cancel(FutoInAsyncSteps* bsi, FutoInHandle* h);
int futoin__common_sched_is_valid(FutoInAsyncSteps* bsi, FutoInHandle* h);
int futoin__common_is_same_thread(FutoInAsyncSteps* bsi);

/* trace.c: root `nr`, made by newInstance() through `from` (a handle of
 * traced root `r`), continues the trace under the span of `from`. */
void futoin__trace_inherit(futoin__root* nr, FutoInAsyncSteps* from,
                           const futoin__root* r);
void futoin__trace_free(futoin__root* r);

/* loop.c */
futoin__step* futoin__loop_add(futoin__step* l, void* data, const char* label);
void futoin__loop_control(futoin__step* s, const char* label, bool cont);

/* state.c */
void* futoin__alloc_push(futoin__alloc** list, size_t size,
                         void (*cleanup)(void* value));
void futoin__alloc_free_all(futoin__alloc** list);
void futoin__vars_free(futoin__root* r);
void* futoin__state_variable(futoin__root* r, void* data, const char* name,
                             void* (*allocate)(void* data),
                             void (*cleanup)(void* data, void* value));

/* ---- hooks (hooks.c; futoin/sys/hooks.h) ---- */

/* The one test of every event: whether `tool` has hooks. The events
 * themselves are out of line, called only when it does. */
static inline bool futoin__hooked(futoin_tool* tool)
{
    return FUTOIN__UNLIKELY(futoin__eng(tool)->hooks != NULL);
}
/* The tool goes: its hook tables are freed (engine_tool.c). */
void futoin__hooks_close(futoin_tool* tool);
/* flow_started, cancel; flow_finished with `outcome` and `code`. */
void futoin__hook_root(futoin__root* r, uint32_t type, int outcome,
                       const char* code);
/* step_entered (with sync_acquired first for the step an addSync()
 * guards). */
void futoin__hook_enter(futoin__step* s);
/* Frame `s` leaves (pop_frame): wait_ended when it is cancelled while
 * waiting, sync_released for a guard that let its flow in, step_left. */
void futoin__hook_pop(futoin__step* s, bool cancel);
/* wait_begun / wait_ended of step `s`. */
void futoin__hook_wait(futoin__step* s, uint32_t type);
/* error_raised / error_handled (`s` may be NULL: a root-level error). */
void futoin__hook_error(futoin__root* r, futoin__step* s, uint32_t type,
                        const char* code, const char* info);
/* sync_released by guard frame `y` (K_UNLOCK ran). */
void futoin__hook_unlock(futoin__step* y);
/* What waiting step `s` waits for (FUTOIN_WAIT_*), its object or language
 * and its timeout's due time (0: none); `origin` is filled as
 * futoin__step_origin() does. Shared by the hooks and the dump. */
int futoin__wait_kind(futoin__step* s, futoin_frame_origin* origin,
                      FutoInSync** sync, const char** language,
                      uint64_t* due);
/* stack.c: where step `s` came from, as its async stack frame would show
 * it (a C function resolved by name; strings live as long as the step's
 * class data, or the process). */
void futoin__step_origin(futoin__step* s, futoin_frame_origin* out);
/* stack.c: whether frame `s` shows in an async stack, and the frame below
 * it there (across a branch flow into its parallel() frame). */
bool futoin__frame_shown(const futoin__step* s);
futoin__step* futoin__frame_below(const futoin__step* s);

#endif /* FUTOIN_RUNTIME_ENGINE_H */
