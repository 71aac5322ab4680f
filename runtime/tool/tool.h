/*
 * Internal AsyncTool interface (not installed). The tool is one libuv loop
 * and one thread. It gives the step engine three cheap services:
 *  - immediates: a ring of callbacks drained in bursts by one uv_idle_t, so
 *    a continuation costs a few ns instead of one libuv loop turn; records
 *    queued often (flows) share one slot of it per batch (the run queue);
 *  - timers: a binary min-heap of pooled entries behind one uv_timer_t,
 *    on libuv's loop time or on a virtual clock (clock.c), which the
 *    layers above never see;
 *  - remote posts: a lock-free MPSC stack any thread can push to, drained on
 *    the loop thread after a uv_async_send(), in time slices.
 */
#ifndef FUTOIN_RUNTIME_TOOL_H
#define FUTOIN_RUNTIME_TOOL_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include <futoin/async.h>


#if defined(__GNUC__)
#define FUTOIN__NOINLINE __attribute__((noinline))
#define FUTOIN__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define FUTOIN__NOINLINE
#define FUTOIN__UNLIKELY(x) (x)
#endif

typedef void (*futoin__cb)(void* data);

/* One ring slot. cb == NULL marks a cancelled immediate. */
struct futoin__imm
{
    futoin__cb cb;
    void* data;
};

/*
 * A link of the run queue (futoin__tool_rq): a record that is queued
 * often, and at most once at a time (a flow of the step engine), carries
 * one, so that records queued one after another share one ring slot, a
 * batch, instead of taking a slot each. `next` is NULL while the record
 * is in no batch, FUTOIN__RQ_LAST while it is the last of one.
 */
struct futoin__rq_node
{
    struct futoin__rq_node* next;
};
#define FUTOIN__RQ_LAST ((struct futoin__rq_node*)(uintptr_t)1)

/*
 * A timer entry. Entries are pooled and only freed with the tool, so a
 * FutoInHandle may keep a pointer to one: `gen` changes every time the
 * entry fires, is cancelled or is reused, which makes stale handles
 * detectable without ever touching freed memory.
 */
typedef struct futoin__timer
{
    uint64_t due; /* the tool's clock (futoin__tool_clock), ms */
    uint64_t seq; /* FIFO order among equal `due` */
    futoin__cb cb;
    void* data;
    uint32_t heap_idx; /* FUTOIN__TIMER_IDLE when not scheduled */
    uint32_t gen;
    struct futoin__timer* next_free;
} futoin__timer;

#define FUTOIN__TIMER_IDLE UINT32_MAX

/*
 * A node posted from any thread. The producer allocates it (malloc) and
 * fills `run`; the loop thread calls run(node, false) exactly once, in FIFO
 * order of posting, and `run` owns (frees) the node. When the tool is freed
 * with nodes still queued, each gets run(node, true): free it, do nothing.
 */
typedef struct futoin__remote
{
    struct futoin__remote* next;
    void (*run)(struct futoin__remote* self, bool dropped);
} futoin__remote;

struct futoin_tool
{
    uv_loop_t* loop;
    uv_loop_t own_loop;
    bool owns_loop;
    bool closing;
    /* owns_loop, on the wall clock and not closing: futoin_tool_run() may
     * take its fast path (tool.c). */
    bool run_plain;
    uv_idle_t idle;   /* active only while the ring is not empty */
    uv_timer_t timer; /* armed for the earliest heap entry */
    uv_async_t async; /* wakes the loop for remote posts */
    uv_prepare_t prepare; /* owned loop: applies lazy handle state */
    uv_timer_t trim_timer; /* trimming on idle; never referenced */
    bool lazy;        /* owned loop: libuv handle state is applied lazily */
    /* futoin_tool_uv_loop() has handed the loop out: others may have
     * handles or requests on it (set by any thread, never cleared). */
    _Atomic(bool) loop_shared;
    bool async_refd;  /* whether `async` is currently uv_ref'd */
    /* The loop thread (futoin__thread_key()); read by any thread. */
    _Atomic(uintptr_t) thread;

    /* Immediate ring; capacity is a power of two, grows by doubling.
     * Slot of sequence number s is ring[s & ring_mask]. */
    struct futoin__imm* ring;
    size_t ring_mask;
    uint64_t ring_head; /* next sequence number to run */
    uint64_t ring_tail; /* next sequence number to assign */
    /* The run queue's last batch (futoin__tool_rq): the ring_tail just
     * after its slot was pushed, and its last record. It takes more
     * records while its slot is the ring's last and has not run out. */
    uint64_t rq_end;
    struct futoin__rq_node* rq_last;
    /* What the burst calls for each record of a batch, with the record
     * (set by the layer above, whose records they are). */
    futoin__cb rq_run;

    /* Timer heap. */
    futoin__timer** heap;
    uint32_t heap_len;
    uint32_t heap_cap;
    futoin__timer* timer_free;
    void** timer_blocks; /* pool blocks, freed with the tool */
    size_t timer_nblocks;
    uint64_t timer_seq;

    /* Remote MPSC (Treiber stack, reversed on drain for FIFO). */
    _Atomic(futoin__remote*) remote_head;
    /* Posts taken from it and not run yet, in posting order (loop thread):
     * a flood of posts is run in time slices like everything else. */
    futoin__remote* posts_first;
    futoin__remote* posts_last;
    bool posts_turn; /* a turn for them is queued in the immediate ring */

    /* Keep-alive: while > 0 the async handle is referenced so uv_run()
     * waits for remote completions instead of returning. */
    size_t active_refs;

    bool time_stale; /* uv_now() may be old: refresh before starting a timer */
    /* Virtual time (clock.c): the clock is `vnow`, moved only by
     * futoin_tool_advance(); the uv timer is never armed. */
    bool virtual_time;
    uint64_t vnow;
    /* &vnow, or &loop->time (what uv_now() reads): the clock as last read,
     * in one load (futoin__tool_time_cached). */
    const uint64_t* time_src;

    /* Time slice of the current burst (futoin__tool_busy). */
    uint32_t slice_units;  /* work since the clock was last read */
    uint32_t slice_stride; /* units until the next clock read */
    uint32_t slice_learned; /* the stride the last measured rate gave */
    bool slice_over;       /* used up: every burst level yields to libuv */
    uint64_t slice_end;    /* uv_hrtime() deadline; 0 = not started yet */
    uint64_t slice_last;   /* uv_hrtime() of the last read */
    futoin_misuse_cb misuse;
    void* misuse_data;
    size_t misuse_count;

    /* Trimming on idle (futoin__tool_grew). */
    uint32_t trim_idle_ms;    /* 0: off */
    bool trim_armed;          /* trim_timer started */
    /* Not armed, and the last trim left memory in use that may come back
     * once freed: the next activity arms the timer again (one test in
     * futoin__tool_active). */
    bool trim_rearm;
    uint64_t turns;           /* libuv callbacks of ours so far (activity) */
    uint64_t trim_seen;       /* `turns` at the last tick */
    /* The whole trim of every layer (what futoin_tool_trim does), set by
     * the layer above, whose pools it covers as well as this layer's
     * storage. Returns true if memory in use is left that a later trim
     * may give back once it is freed (more than the pools keep at rest). */
    bool (*trim_idle)(futoin_tool* tool);

    /* Private to the loop layer (tool/internal.h). */
    bool idle_active;         /* `idle` started */
    /* !lazy && !idle_active: a push must start the idle handle at once
     * (one test on the push's fast path, futoin__tool_imm). */
    bool imm_eager;
    bool timer_armed;         /* `timer` started, for timer_armed_due */
    bool timer_firing;        /* inside the uv timer callback */
    bool timer_unrefd;        /* armed but unreferenced: heap is empty */
    uint64_t timer_armed_due;
    unsigned cb_depth;        /* inside one of our libuv callbacks */
    unsigned in_run;          /* inside futoin_tool_run / _run_nowait */
    unsigned handles_closed;  /* close callbacks seen by futoin_tool_free */
    unsigned handles_closing; /* ... out of this many */
    bool free_on_close;       /* attached loop: last close callback frees */

    /* Storage of the layer above (the step engine's per-tool state,
     * engine/engine_tool.h), sized by futoin__tool_create(). The loop layer
     * never looks inside: arrows point down. */
    _Alignas(max_align_t) unsigned char upper[];
};

/*
 * Life cycle, for the layer above (engine/engine_tool.c implements the
 * public futoin_tool_new()/futoin_tool_free() on top of these):
 *  - futoin__tool_create(): a tool with `upper_size` zeroed bytes of
 *    storage for the layer above at tool->upper; FUTOIN_OK or an error
 *    code of futoin_tool_new();
 *  - futoin__tool_check_free(): FUTOIN_OK if the loop layer may be torn
 *    down now, else FUTOIN_EBUSY (reported as misuse);
 *  - futoin__tool_destroy(): close the handles and free the tool; after
 *    a successful check only. Returns what futoin_tool_free() returns.
 */
int futoin__tool_create(futoin_tool** out, const futoin_tool_options* opts,
                        size_t upper_size);
int futoin__tool_check_free(futoin_tool* tool);
int futoin__tool_destroy(futoin_tool* tool);
/* Loop thread: shrink the immediate ring, the timer heap and the timer
 * pool after a peak (futoin_tool_trim). Returns bytes given back. */
size_t futoin__tool_trim_loop(futoin_tool* tool);

/*
 * Trimming on idle. Every slow path that grows memory (a new pool block,
 * a bigger immediate ring or timer heap) calls futoin__tool_grew(): it
 * starts an unreferenced repeating libuv timer of trim_idle_ms, unless it
 * runs already. Each tick compares `turns` (one per libuv callback of
 * ours, not per step) with the last tick's; a whole period without any
 * runs tool->trim_idle and stops the timer. If that trim left memory in
 * use that may come back once freed (waiting flows, say), the next
 * callback of ours starts the timer again (its freeing is activity);
 * otherwise only the next growth does. Steps pay nothing, an idle loop is
 * not woken once the trim is done, and the timer never keeps the loop
 * alive. Loop thread.
 */
void futoin__tool_grew(futoin_tool* tool);
void futoin__tool_trim_arm(futoin_tool* tool);

/* Loop thread: activity. Each libuv callback of ours calls it, and so do
 * calls that free a flow's memory, which may come from outside them (a
 * root cancelled or freed from main code or a foreign loop's callback). */
static inline void futoin__tool_active(futoin_tool* tool)
{
    ++tool->turns;
    if (FUTOIN__UNLIKELY(tool->trim_rearm)) {
        futoin__tool_trim_arm(tool);
    }
}
/* Whether this layer's storage is as small as a trim can make it. */
bool futoin__tool_loop_at_rest(const futoin_tool* tool);

/*
 * Fairness. Work done between two libuv turns is bounded by time, not only
 * by counts: nested count limits (immediates per burst x steps per flow
 * run x loop iterations in place) multiply, so a loop that never waits
 * would otherwise hold the loop for billions of iterations while timers,
 * I/O, cross-thread posts and other flows starve.
 *
 * Every burst level reports its work with futoin__tool_busy(tool, units)
 * (a step, a loop iteration or a callback posted from another thread is
 * one unit) and stops as soon as it returns true. The clock is read only once `slice_stride` units have
 * accumulated. A slice starts with the first read, which comes after the
 * stride the last measured rate gave, but at most FUTOIN__SLICE_FIRST
 * units, since this burst's units may be slower than the last ones (a
 * callback of a few units never reads the clock at all); the second read
 * comes one unit later, to learn this burst's rate. Every later read
 * measures the rate and sets the stride so that reads come about
 * FUTOIN__SLICE_READ_NS apart: cheap steps pay a clock
 * read per thousands of units (well under a nanosecond each), and a loop
 * body or callback that does real work is checked after every one. Once
 * FUTOIN__SLICE_NS have passed, the slice is over and stays over until the
 * next libuv callback of ours starts a new one (futoin__tool_slice_reset).
 * A virtual-time tool slices by the wall clock too: busy work takes real
 * time whatever its clock says (clock.c).
 */
#define FUTOIN__SLICE_NS 1000000u /* 1 ms of busy work per libuv turn */
#define FUTOIN__SLICE_READ_NS 100000u
#define FUTOIN__SLICE_FIRST 64u
#define FUTOIN__SLICE_STRIDE_MAX 4096u

/* Loop thread: read the clock, end the slice if its time is up. */
bool futoin__tool_slice_check(futoin_tool* tool);

static inline bool futoin__tool_busy(futoin_tool* tool, uint32_t units)
{
    tool->slice_units += units;
    /* An ended slice has a stride of 0, so this is false until then. */
    if (tool->slice_units < tool->slice_stride) {
        return false;
    }
    return futoin__tool_slice_check(tool);
}

/* Loop thread: a new libuv callback of ours starts; so does a new slice. */
static inline void futoin__tool_slice_reset(futoin_tool* tool)
{
    /* A callback too short to read the clock started no slice: its units
     * count on toward the first read of a later one, and nothing needs
     * resetting (the common case, e.g. a root that runs to its end). */
    if (tool->slice_end != 0) {
        tool->slice_units = 0;
        tool->slice_stride = tool->slice_learned < FUTOIN__SLICE_FIRST
                                     ? tool->slice_learned
                                     : FUTOIN__SLICE_FIRST;
        tool->slice_over = false;
        tool->slice_end = 0;
    }
}

/* The tool's clock as it last read it (ms): the virtual clock, or libuv's
 * loop time of this turn, without refreshing it. For bookkeeping that
 * must cost no clock read (when a step began to wait). */
static inline uint64_t futoin__tool_time_cached(const futoin_tool* tool)
{
    return *tool->time_src;
}

/* Loop thread only: schedule cb(data) with no handle. The hot path: the
 * ring push inline, a full ring or an idle handle to start in
 * immediate.c. */
void futoin__tool_imm_slow(futoin_tool* tool, futoin__cb cb, void* data);
/* Whether futoin__tool_imm() is three stores now (the ring has room and
 * no idle handle needs starting). A fast path that must call nothing
 * tests this with its other conditions, and then queues with
 * futoin__tool_imm_put(). */
static inline bool futoin__tool_imm_ready(const futoin_tool* tool)
{
    return !FUTOIN__UNLIKELY(tool->ring_tail - tool->ring_head > tool->ring_mask)
           && !FUTOIN__UNLIKELY(tool->imm_eager);
}
/* After futoin__tool_imm_ready() said so. */
static inline void futoin__tool_imm_put(futoin_tool* tool, futoin__cb cb,
                                        void* data)
{
    uint64_t seq = tool->ring_tail;
    struct futoin__imm* slot = &tool->ring[seq & tool->ring_mask];
    slot->cb = cb;
    slot->data = data;
    tool->ring_tail = seq + 1;
}
static inline void futoin__tool_imm(futoin_tool* tool, futoin__cb cb, void* data)
{
    if (!futoin__tool_imm_ready(tool)) {
        futoin__tool_imm_slow(tool, cb, data);
        return;
    }
    futoin__tool_imm_put(tool, cb, data);
}

/*
 * The run queue. futoin__tool_rq(tool, node) queues rq_run(node) as an
 * immediate would, after everything queued so far, but when the ring's
 * last slot is a batch of the run queue that has not run out, `node` is
 * appended to it instead of taking a slot: a burst of 30,000 flows
 * scheduled one after another takes one slot, not 30,000 (issue 22:
 * bytes per waiting flow, a ring kept at its peak). Records and
 * immediates run in the order they were queued, as if each had a slot.
 *
 * A batch's slot has no callback and its first record as data (a
 * cancelled immediate has neither). The burst (internal.h) takes one
 * record off it per callback and leaves the slot at the ring's head while
 * records follow, so each record is one callback of the burst: the burst
 * budget and the time slice count records, not batches, exactly as with a
 * slot each.
 *
 * A record is in at most one batch: queueing one whose `next` is not
 * NULL does nothing (it keeps its place; the layer above queues a record
 * again only after it ran, or after it was cancelled or freed and
 * restarted, when its old place is the place today's order gives it, the
 * one a slot of its own would have had). A record must stay readable
 * until its batch passed it: the layer above never gives back the memory
 * of a record while the ring holds entries (engine_tool.c's trim), and a
 * record freed and taken again keeps its link (pool.c).
 */
/* Whether the ring's last slot is a batch that takes more records: it
 * is the last slot pushed and has not run out. */
static inline bool futoin__tool_rq_open(const futoin_tool* tool)
{
    return tool->ring_head != tool->ring_tail
           && tool->rq_end == tool->ring_tail;
}
/* Put `node` (in no batch) in a new batch: a slot pushed as
 * futoin__tool_imm_put() does (after futoin__tool_imm_ready() said so). */
static inline void futoin__tool_rq_new(futoin_tool* tool,
                                       struct futoin__rq_node* node)
{
    node->next = FUTOIN__RQ_LAST;
    futoin__tool_imm_put(tool, NULL, node);
    tool->rq_end = tool->ring_tail;
    tool->rq_last = node;
}
/* Append `node` (in no batch) to the open batch (futoin__tool_rq_open). */
static inline void futoin__tool_rq_append(futoin_tool* tool,
                                          struct futoin__rq_node* node)
{
    node->next = FUTOIN__RQ_LAST;
    tool->rq_last->next = node;
    tool->rq_last = node;
}
/* The same as a slot pushed with a ring to grow or an idle handle to
 * start (immediate.c). */
void futoin__tool_rq_slow(futoin_tool* tool, struct futoin__rq_node* node);
/* Loop thread: queue rq_run(node) on the run queue, unless `node` is in a
 * batch already. */
static inline void futoin__tool_rq(futoin_tool* tool,
                                   struct futoin__rq_node* node)
{
    if (FUTOIN__UNLIKELY(node->next != NULL)) {
        return;
    }
    if (futoin__tool_rq_open(tool)) {
        futoin__tool_rq_append(tool, node);
    } else if (futoin__tool_imm_ready(tool)) {
        futoin__tool_rq_new(tool, node);
    } else {
        futoin__tool_rq_slow(tool, node);
    }
}

/* Loop thread only: start a one-shot timer; returns the pooled entry, or
 * NULL on out-of-memory. Stop it with futoin__tool_timer_stop(). */
futoin__timer* futoin__tool_timer_start(
        futoin_tool* tool, uint32_t delay_ms, futoin__cb cb, void* data);
/* Loop thread only: stop a started timer; a fired one is ignored
 * when `gen` no longer matches. */
void futoin__tool_timer_stop(futoin_tool* tool, futoin__timer* t, uint32_t gen);

/* Any thread, lock-free: queue `node` for the loop thread and wake it. */
void futoin__tool_post_remote(futoin_tool* tool, futoin__remote* node);

/* Loop thread: flows executing on the tool keep the loop alive. Only the
 * first ref and the last unref change what keeps it alive, and on an owned
 * loop that is applied lazily (futoin__tool_sync): there each is a counter
 * update inline; the rest, and misuse, in keepalive.c. */
void futoin__tool_ref_slow(futoin_tool* tool);
void futoin__tool_unref_slow(futoin_tool* tool);
/* Whether futoin__tool_ref() is a counter update now (for a fast path
 * that must call nothing, as futoin__tool_imm_ready()). */
static inline bool futoin__tool_ref_ready(const futoin_tool* tool)
{
    return tool->lazy || tool->active_refs != 0;
}
static inline void futoin__tool_ref(futoin_tool* tool)
{
    if (!futoin__tool_ref_ready(tool)) {
        futoin__tool_ref_slow(tool);
        return;
    }
    ++tool->active_refs;
}
static inline void futoin__tool_unref(futoin_tool* tool)
{
    size_t n = tool->active_refs;
    /* owned loop: only an unbalanced unref; else the last one too */
    if (FUTOIN__UNLIKELY(tool->lazy ? n == 0 : n <= 1)) {
        futoin__tool_unref_slow(tool);
        return;
    }
    tool->active_refs = n - 1;
}

/* Report misuse that cannot go into a flow (see futoin_misuse_cb). */
void futoin__tool_misuse(futoin_tool* tool, const char* message);

/* A number that identifies the calling thread among live threads. Where
 * the compiler offers it, the thread pointer (one `mov %fs:0` on x86-64):
 * every call through a handle checks its thread, so this must cost next
 * to nothing; elsewhere pthread_self(). */
static inline uintptr_t futoin__thread_key(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__aarch64__))       \
        && (defined(__clang__) || __GNUC__ >= 11)
    return (uintptr_t)__builtin_thread_pointer();
#else
    return (uintptr_t)pthread_self();
#endif
}

/* Any thread: is the caller on the tool's loop thread? */
static inline bool futoin__tool_on_thread(futoin_tool* tool)
{
    return atomic_load_explicit(&tool->thread, memory_order_relaxed)
           == futoin__thread_key();
}

#endif /* FUTOIN_RUNTIME_TOOL_H */
