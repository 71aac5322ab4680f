/*
 * Private to the loop layer (the files of runtime/tool/): what they share
 * with each other and the layer above never sees. tool.h is the interface
 * for the step engine; this header adds the pieces of one concern that
 * another concern of the loop layer calls (the life cycle starts the
 * handles whose callbacks live with their concern, trimming shrinks the
 * storage of each).
 */
#ifndef FUTOIN_RUNTIME_TOOL_INTERNAL_H
#define FUTOIN_RUNTIME_TOOL_INTERNAL_H

#include "tool/tool.h"

/* What the tool's calls return when they give no live handle: the handle
 * of a post from another thread, and what futoin_tool_cancel() leaves. */
static const FutoInHandle inert_handle = {NULL, NULL, 0};
/* What futoin_tool_immediate() and futoin_tool_deferred() return when they
 * queued nothing (futoin/async.h). Inert too: it names no tool. */
static const FutoInHandle not_queued = {NULL, NULL, FUTOIN_HANDLE_NOT_QUEUED};

/* Loop-thread-only public entry points check their thread: a call from
 * elsewhere would race with the loop, so it is refused and reported. */
static inline bool futoin__tool_check_thread(futoin_tool* tool,
                                             const char* message)
{
    if (FUTOIN__UNLIKELY(!futoin__tool_on_thread(tool))) {
        futoin__tool_misuse(tool, message);
        return false;
    }
    return true;
}

/* ---- immediates (immediate.c) ---- */

/* The ring's first and smallest size; a trim shrinks it back to this. */
#define FUTOIN__IMM_INITIAL_CAP 256u

/* Immediates run per burst before the loop gets a turn for I/O and
 * timers. Large enough to amortise the loop turn; the time slice
 * (futoin__tool_busy) ends a burst earlier when its callbacks are slow. */
#define FUTOIN__IMM_BURST_BUDGET 4096u

/* The callback of the tool's uv_idle_t: runs the ring in a burst
 * (futoin__tool_burst). */
void futoin__tool_idle_cb(uv_idle_t* handle);
/* Loop thread: start the idle handle (the ring has entries). */
void futoin__tool_idle_start(futoin_tool* tool);
/* Loop thread: futoin__tool_imm() that says whether it queued (false: the
 * ring could not grow, reported as misuse). */
bool futoin__tool_imm_push(futoin_tool* tool, futoin__cb cb, void* data);

/* Loop thread: stop the idle handle if it runs (the ring is empty). */
static inline void futoin__tool_idle_stop(futoin_tool* tool)
{
    if (tool->idle_active) {
        uv_idle_stop(&tool->idle);
        tool->idle_active = false;
        tool->imm_eager = !tool->lazy;
    }
}

/* Recover the sequence number of an immediate handle; false if it is not
 * pending. */
bool futoin__tool_imm_seq_of(const futoin_tool* tool, const FutoInHandle* h,
                             uint64_t* out);
/* Loop thread: cancel the pending immediate `seq`. */
void futoin__tool_imm_cancel(futoin_tool* tool, uint64_t seq);
/* Loop thread: shrink an empty ring back to its first size. Returns bytes
 * given back. */
size_t futoin__tool_imm_trim(futoin_tool* tool);
/* Whether the ring is as small as a trim can make it. */
bool futoin__tool_imm_at_rest(const futoin_tool* tool);

/* ---- posts from other threads (post.c) ---- */

/* Posts waiting for the loop thread: pushed and not taken yet, or taken
 * and not run yet. */
static inline bool futoin__tool_posts_pending(const futoin_tool* tool)
{
    return tool->posts_first
           || atomic_load_explicit(&tool->remote_head, memory_order_relaxed);
}

/* Loop thread: run posts in posting order until the time slice is over;
 * what is left gets a turn at the end of the immediate ring. */
void futoin__tool_posts_run(futoin_tool* tool);
/* Loop thread, the tool being freed: every post still queued is dropped
 * (its node freed, nothing called). */
void futoin__tool_posts_drop(futoin_tool* tool);
/* Loop thread: run what other threads posted, as one of our callbacks. */
void futoin__tool_take_posts(futoin_tool* tool);
/* The callback of the tool's uv_async_t. */
void futoin__tool_async_cb(uv_async_t* handle);
/* Any thread: post cb(data) to the loop thread; false when out of memory
 * (nothing was queued). */
bool futoin__tool_post_imm(futoin_tool* tool, futoin__cb cb, void* data);

/* ---- timers (timer.c) ---- */

/* The pending timer entry a handle refers to, or NULL. */
futoin__timer* futoin__tool_timer_of(const futoin_tool* tool,
                                     const FutoInHandle* h);
/* Loop thread: shrink the timer heap and give back free pool blocks after
 * a peak. Returns bytes given back. */
size_t futoin__tool_timer_trim(futoin_tool* tool);
/* Whether the timers' storage is as small as a trim can make it. */
bool futoin__tool_timer_at_rest(const futoin_tool* tool);

/* Loop thread: fire every entry due at `now` that was started before
 * this call, in (due, start) order. The caller is one of our callbacks
 * (cb_depth, slice) and arms what is left. */
void futoin__tool_timers_fire(futoin_tool* tool, uint64_t now);
/* Whether an entry is due at `now`. */
static inline bool futoin__tool_timer_due(const futoin_tool* tool,
                                          uint64_t now)
{
    return tool->heap_len != 0 && tool->heap[0]->due <= now;
}

/* ---- the clock (clock.c) ---- */

/* Loop thread: the tool's clock in ms, which every timer is measured
 * against: the virtual clock, or libuv's loop time, refreshed first when
 * it may be old. libuv caches the time at the start of each turn; once
 * one of our callbacks or runs has returned (futoin__tool_sync marks the
 * time stale), the next call may come after a long callback on a loop
 * that is not ours (Node.js, an embedder's) or after the program worked
 * between two runs, and a timer counted from the cached time would fire
 * early by that long. The first timer started after that reads the clock
 * (a vDSO call); the ones after it in the same callback share its time,
 * so timers started together keep their order, as libuv's do. */
static inline uint64_t futoin__tool_clock(futoin_tool* tool)
{
    if (tool->virtual_time) {
        return tool->vnow;
    }
    if (tool->time_stale) {
        uv_update_time(tool->loop);
        tool->time_stale = false;
    }
    return uv_now(tool->loop);
}

/* Loop thread, inside futoin_tool_run() on a virtual-time tool: run what
 * is due now until nothing is. */
void futoin__tool_vt_run(futoin_tool* tool);
/* The same, one pass only (futoin_tool_run_nowait): returns whether work
 * is left (ready now, a timer pending, or a handle alive). */
int futoin__tool_vt_pass(futoin_tool* tool);

/* ---- keeping the loop alive (keepalive.c) ---- */

/* Reference the async handle while flows execute (active_refs). */
static inline void futoin__tool_sync_ref(futoin_tool* tool)
{
    bool want = tool->active_refs != 0;
    if (want != tool->async_refd) {
        if (want) {
            uv_ref((uv_handle_t*)&tool->async);
        } else {
            uv_unref((uv_handle_t*)&tool->async);
        }
        tool->async_refd = want;
    }
}

/*
 * Apply the handle state the counters ask for: the idle handle runs while
 * the ring has entries, the async handle is referenced while flows execute.
 * On an owned loop this happens here only — at the end of each of our
 * callbacks, before every poll (prepare_cb) and in futoin_tool_run — so a
 * short root does not pay four libuv calls for a start/stop and ref/unref
 * that cancel out. On an attached loop, whose owner may run it without us,
 * ref/unref and idle start are applied at once instead.
 */
static inline void futoin__tool_sync(futoin_tool* tool)
{
    /* control goes back to code that is not ours: see futoin__tool_clock */
    tool->time_stale = true;
    /* Posts left over by a slice normally wait in the ring (posts_run);
     * `posts_first` keeps the loop turning if that turn could not be
     * queued. */
    if (tool->ring_head != tool->ring_tail || tool->posts_first) {
        if (!tool->idle_active) {
            futoin__tool_idle_start(tool);
        }
    } else {
        futoin__tool_idle_stop(tool);
    }
    futoin__tool_sync_ref(tool);
}

/*
 * Owned loop, after futoin__tool_sync(): whether uv_run() would find it
 * alive. While the loop was never handed out (futoin_tool_uv_loop), only
 * the tool's handles are on it, besides libuv's internal ones, which are
 * never referenced: the idle handle, the async handle while referenced,
 * the uv timer while armed and referenced (the prepare and trim handles
 * never are). None of ours leaves a request, a pending I/O callback or a
 * closing handle before the tool is freed. So the answer is known
 * without asking libuv; once the loop is shared, libuv is asked.
 */
static inline bool futoin__tool_own_loop_alive(futoin_tool* tool)
{
    if (FUTOIN__UNLIKELY(
                atomic_load_explicit(&tool->loop_shared, memory_order_relaxed))) {
        return uv_loop_alive(tool->loop) != 0;
    }
    return tool->idle_active || tool->async_refd
           || (tool->timer_armed && !tool->timer_unrefd);
}

/* The callback of the tool's uv_prepare_t (owned loop): futoin__tool_sync()
 * before every poll. */
void futoin__tool_prepare_cb(uv_prepare_t* handle);

/* ---- the burst (immediate.c, and futoin_tool_run's fast path) ---- */

/*
 * Run the ring in a burst, as one callback of ours. The head is advanced
 * before each callback (but for a batch of the run queue that has records
 * left, tool.h), so the running entry is no longer valid
 * (cancelling it is a no-op), and the ring fields are re-read after each
 * callback because it may have pushed (and grown the ring) or cancelled
 * entries. Callbacks never nest: one returns before the next starts, so
 * long chains do not grow the C stack. Always inline: the idle handle's
 * callback is one copy, futoin_tool_run() (tool.c) the other, which so
 * runs a short root with no call of its own around its steps.
 */
static inline __attribute__((always_inline)) void futoin__tool_burst(
        futoin_tool* tool, bool seen_ready)
{
    unsigned budget = FUTOIN__IMM_BURST_BUDGET;

    ++tool->cb_depth;
    futoin__tool_slice_reset(tool);
    futoin__tool_active(tool); /* for trimming on idle */
    /* New posts run first, as long as no turn of theirs is queued in the
     * ring: then they wait for it, behind the immediates queued before.
     * A caller that has just seen immediates queued and no post waiting
     * passes `seen_ready` and skips both tests: a post that comes in
     * between came a moment later, and waits for the next burst as it
     * would have a moment later. */
    if (!seen_ready && !tool->posts_turn
        && futoin__tool_posts_pending(tool)) {
        futoin__tool_posts_run(tool);
    }
    if (seen_ready || tool->ring_head != tool->ring_tail) {
        do {
            struct futoin__imm* slot =
                    &tool->ring[tool->ring_head & tool->ring_mask];
            futoin__cb cb = slot->cb;
            void* data = slot->data;
            ++tool->ring_head;
            if (cb) {
                cb(data);
            } else if (data) {
                /* A batch of the run queue (tool.h): its records leave it
                 * one by one, each counted as an entry; while others
                 * follow, the slot stays at the head (nothing was pushed
                 * since it was passed), and the next one runs here,
                 * without the ring's tests (issue 22, T3). The ring may
                 * have grown (moved) in a record's run: the slot is
                 * found again. */
                struct futoin__rq_node* node = data;
                struct futoin__rq_node* next = node->next;
                node->next = NULL;
                if (next != FUTOIN__RQ_LAST) {
                    --tool->ring_head;
                    for (;;) {
                        slot->data = next;
                        tool->rq_run(node);
                        if (futoin__tool_busy(tool, 1) || --budget == 0) {
                            goto out; /* the rest: after libuv's next turn */
                        }
                        slot = &tool->ring[tool->ring_head & tool->ring_mask];
                        node = next;
                        next = node->next;
                        node->next = NULL;
                        if (next == FUTOIN__RQ_LAST) {
                            ++tool->ring_head;
                            break;
                        }
                    }
                }
                tool->rq_run(node);
            }
            if (futoin__tool_busy(tool, 1)) {
                break; /* the rest runs after libuv's next turn */
            }
        } while (tool->ring_head != tool->ring_tail && --budget != 0);
    out:;
    }
    --tool->cb_depth;
    futoin__tool_sync(tool);
}

#endif /* FUTOIN_RUNTIME_TOOL_INTERNAL_H */
