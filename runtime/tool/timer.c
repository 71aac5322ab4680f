/*
 * Timers: pooled entries in a binary min-heap ordered by (due, seq), behind
 * one uv_timer_t armed for the earliest entry. On a virtual-time tool the
 * uv timer is never armed: the heap alone orders the due times, and
 * clock.c fires them as futoin_tool_advance() moves the clock. Entries are only freed with
 * the tool or by a trim that finds their whole block free, and a handle's
 * entry is looked up in the live blocks before it is read, so a stale
 * handle is detected by its generation, never dereferenced blindly.
 */
#include "tool/internal.h"

#include <stdlib.h>

/* Pool blocks double up to a cap, so a handle's entry pointer can be
 * checked against the few blocks before it is dereferenced. */
static size_t timer_block_len(size_t i)
{
    return (size_t)32 << (i < 10 ? i : 10);
}

static FUTOIN__NOINLINE bool timer_pool_grow(futoin_tool* tool)
{
    /* A slot that futoin__tool_trim_loop() emptied is filled first. */
    size_t at = 0;
    size_t n;
    futoin__timer* blk;
    while (at < tool->timer_nblocks && tool->timer_blocks[at]) {
        ++at;
    }
    if (at == tool->timer_nblocks) {
        void** blocks = realloc(tool->timer_blocks,
                                (tool->timer_nblocks + 1) * sizeof(void*));
        if (!blocks) {
            return false;
        }
        tool->timer_blocks = blocks;
        tool->timer_blocks[tool->timer_nblocks++] = NULL;
    }
    n = timer_block_len(at);
    blk = calloc(n, sizeof(*blk));
    if (!blk) {
        return false;
    }
    tool->timer_blocks[at] = blk;
    for (size_t i = n; i-- > 0;) {
        blk[i].heap_idx = FUTOIN__TIMER_IDLE;
        blk[i].next_free = tool->timer_free;
        tool->timer_free = &blk[i];
    }
    futoin__tool_grew(tool);
    return true;
}

/* The index of the pool block holding `p`, or -1 (a given-back block, or
 * not a timer entry of ours). */
static ptrdiff_t timer_block_of(const futoin_tool* tool, const void* p)
{
    uintptr_t a = (uintptr_t)p;
    for (size_t i = 0; i < tool->timer_nblocks; ++i) {
        uintptr_t base = (uintptr_t)tool->timer_blocks[i];
        uintptr_t len = timer_block_len(i) * sizeof(futoin__timer);
        if (base && a >= base && a - base < len) {
            return (a - base) % sizeof(futoin__timer) == 0 ? (ptrdiff_t)i : -1;
        }
    }
    return -1;
}

static bool timer_is_ours(const futoin_tool* tool, const void* p)
{
    return timer_block_of(tool, p) >= 0;
}

static bool timer_less(const futoin__timer* a, const futoin__timer* b)
{
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_set(futoin_tool* tool, uint32_t idx, futoin__timer* t)
{
    tool->heap[idx] = t;
    t->heap_idx = idx;
}

static void heap_up(futoin_tool* tool, uint32_t idx)
{
    futoin__timer* t = tool->heap[idx];
    while (idx > 0) {
        uint32_t parent = (idx - 1) / 2;
        if (!timer_less(t, tool->heap[parent])) {
            break;
        }
        heap_set(tool, idx, tool->heap[parent]);
        idx = parent;
    }
    heap_set(tool, idx, t);
}

static void heap_down(futoin_tool* tool, uint32_t idx)
{
    futoin__timer* t = tool->heap[idx];
    uint32_t len = tool->heap_len;
    for (;;) {
        uint32_t child = 2 * idx + 1;
        if (child >= len) {
            break;
        }
        if (child + 1 < len
            && timer_less(tool->heap[child + 1], tool->heap[child])) {
            ++child;
        }
        if (!timer_less(tool->heap[child], t)) {
            break;
        }
        heap_set(tool, idx, tool->heap[child]);
        idx = child;
    }
    heap_set(tool, idx, t);
}

static void heap_remove(futoin_tool* tool, futoin__timer* t)
{
    uint32_t idx = t->heap_idx;
    futoin__timer* last = tool->heap[--tool->heap_len];
    t->heap_idx = FUTOIN__TIMER_IDLE;
    if (last != t) {
        heap_set(tool, idx, last);
        if (idx > 0 && timer_less(last, tool->heap[(idx - 1) / 2])) {
            heap_up(tool, idx);
        } else {
            heap_down(tool, idx);
        }
    }
}

/* Unschedule and return to the pool. The new generation makes every handle
 * to the entry stale before it can be reused. */
static void timer_retire(futoin_tool* tool, futoin__timer* t)
{
    heap_remove(tool, t);
    ++t->gen;
    t->cb = NULL;
    t->data = NULL;
    t->next_free = tool->timer_free;
    tool->timer_free = t;
}

static void timer_cb(uv_timer_t* handle);

/*
 * Keep the uv timer armed no later than the earliest entry. When the
 * earliest entry goes away the timer is left as it is (it fires early once
 * and re-arms). An empty heap only unreferences it, so the loop can finish
 * while a stop/start pair - a step timeout set and cleared - costs no libuv
 * timer operation at all.
 */
static void timer_ref(futoin_tool* tool, bool ref)
{
    if (tool->timer_unrefd == ref) {
        if (ref) {
            uv_ref((uv_handle_t*)&tool->timer);
        } else {
            uv_unref((uv_handle_t*)&tool->timer);
        }
        tool->timer_unrefd = !ref;
    }
}

static void timer_arm(futoin_tool* tool)
{
    uint64_t due;
    uint64_t now;
    if (tool->virtual_time) {
        return; /* no wall-clock timer: the virtual clock fires entries */
    }
    if (tool->timer_firing) {
        return; /* timer_cb arms once when it is done */
    }
    if (tool->heap_len == 0) {
        if (tool->timer_armed) {
            timer_ref(tool, false);
        }
        return;
    }
    timer_ref(tool, true);
    due = tool->heap[0]->due;
    if (tool->timer_armed && tool->timer_armed_due <= due) {
        return;
    }
    now = uv_now(tool->loop);
    uv_timer_start(&tool->timer, timer_cb, due > now ? due - now : 0, 0);
    tool->timer_armed = true;
    tool->timer_armed_due = due;
}

static void timer_arm_cb(void* data)
{
    timer_arm(data);
}

/*
 * Fire every entry that is due. Entries started by the callbacks themselves
 * (seq >= limit) wait for a later loop turn even with a zero delay, so a
 * self-rescheduling timer cannot monopolise the loop.
 */
void futoin__tool_timers_fire(futoin_tool* tool, uint64_t now)
{
    uint64_t limit = tool->timer_seq;
    while (tool->heap_len != 0) {
        futoin__timer* t = tool->heap[0];
        futoin__cb cb = t->cb;
        void* data = t->data;
        if (t->due > now || t->seq >= limit) {
            break;
        }
        timer_retire(tool, t);
        cb(data);
    }
}

/*
 * The uv timer fired: uv_now() was refreshed by libuv just before timers
 * run. Arming the uv timer with a zero timeout from inside its own callback
 * is not enough to let a zero-delay entry wait for a later turn: libuv
 * before 1.45 runs such a timer again in the same pass, forever. So when
 * the earliest entry is already due, arming is left to an immediate, which
 * runs after the timers phase; the poll of that turn does not block and
 * the next turn fires the entry.
 */
static void timer_cb(uv_timer_t* handle)
{
    futoin_tool* tool = handle->data;
    uint64_t now = uv_now(tool->loop);

    tool->timer_armed = false; /* a fired one-shot uv timer is inactive */
    futoin__tool_active(tool); /* for trimming on idle */
    timer_ref(tool, true);
    tool->timer_firing = true;
    ++tool->cb_depth;
    futoin__tool_slice_reset(tool);
    futoin__tool_timers_fire(tool, now);
    --tool->cb_depth;
    tool->timer_firing = false;
    /* against the loop's time as it is now: a callback that started a
     * timer may have refreshed it (futoin__tool_clock), and timer_arm()
     * would then arm a zero timeout that libuv < 1.45 runs in this pass */
    if (tool->heap_len != 0 && tool->heap[0]->due <= uv_now(tool->loop)
        && futoin__tool_imm_push(tool, timer_arm_cb, tool)) {
        futoin__tool_sync(tool);
        return;
    }
    timer_arm(tool);
    futoin__tool_sync(tool);
}

futoin__timer* futoin__tool_timer_start(
        futoin_tool* tool, uint32_t delay_ms, futoin__cb cb, void* data)
{
    futoin__timer* t;
    if (FUTOIN__UNLIKELY(tool->heap_len == tool->heap_cap)) {
        uint32_t ncap = tool->heap_cap ? tool->heap_cap * 2 : 64;
        futoin__timer** nheap;
        if (ncap <= tool->heap_cap || ncap == FUTOIN__TIMER_IDLE) {
            return NULL;
        }
        nheap = realloc(tool->heap, ncap * sizeof(*nheap));
        if (!nheap) {
            return NULL;
        }
        tool->heap = nheap;
        tool->heap_cap = ncap;
        futoin__tool_grew(tool);
    }
    if (FUTOIN__UNLIKELY(!tool->timer_free) && !timer_pool_grow(tool)) {
        return NULL;
    }
    t = tool->timer_free;
    tool->timer_free = t->next_free;
    t->next_free = NULL;
    /* libuv's cached time may be old (a call from a loop that is not
     * ours, or between two runs): the clock refreshes it then, and
     * timer_arm() counts from the same reading. */
    t->due = futoin__tool_clock(tool) + delay_ms;
    t->seq = tool->timer_seq++;
    t->cb = cb;
    t->data = data;
    tool->heap[tool->heap_len] = t;
    heap_up(tool, tool->heap_len++);
    if (t->heap_idx == 0) {
        timer_arm(tool);
    }
    return t;
}

void futoin__tool_timer_stop(futoin_tool* tool, futoin__timer* t, uint32_t gen)
{
    if (!t || t->gen != gen || t->heap_idx == FUTOIN__TIMER_IDLE) {
        return;
    }
    timer_retire(tool, t);
    if (tool->heap_len == 0) {
        timer_arm(tool);
    }
}

/* The pending timer entry a handle refers to, or NULL. The pointer is
 * checked against our pool blocks before it is read, so even a handle of a
 * long-gone entry or a garbage pointer is never dereferenced blindly. */
futoin__timer* futoin__tool_timer_of(const futoin_tool* tool,
                                     const FutoInHandle* h)
{
    futoin__timer* t = h->data2;
    if (!timer_is_ours(tool, t) || t->heap_idx == FUTOIN__TIMER_IDLE
        || t->gen != (uint32_t)(uintptr_t)h->data3) {
        return NULL;
    }
    return t;
}

/* Give back what a peak of timers left: the heap array, down to twice
 * what it holds, and the pool blocks whose entries are all free. Returns
 * bytes given back. */
size_t futoin__tool_timer_trim(futoin_tool* tool)
{
    size_t given = 0;
    size_t* nfree;

    /* The heap array, down to twice what it holds. */
    if (tool->heap_cap > 64 && tool->heap_len < tool->heap_cap / 4) {
        uint32_t ncap = tool->heap_len * 2 > 64 ? tool->heap_len * 2 : 64;
        futoin__timer** nheap = realloc(tool->heap, ncap * sizeof(*nheap));
        if (nheap) {
            given += (tool->heap_cap - ncap) * sizeof(*nheap);
            tool->heap = nheap;
            tool->heap_cap = ncap;
        }
    }
    /* Timer blocks whose entries are all free. A handle never dereferences
     * an entry before finding it in a live block (futoin__tool_timer_of),
     * so a handle into a block given back is simply stale. */
    if (tool->timer_nblocks == 0) {
        return given;
    }
    nfree = calloc(tool->timer_nblocks, sizeof(*nfree));
    if (!nfree) {
        return given;
    }
    for (futoin__timer* t = tool->timer_free; t; t = t->next_free) {
        ptrdiff_t b = timer_block_of(tool, t);
        if (b >= 0) {
            ++nfree[b];
        }
    }
    for (size_t i = 0; i < tool->timer_nblocks; ++i) {
        if (tool->timer_blocks[i] && nfree[i] != timer_block_len(i)) {
            nfree[i] = 0; /* keep it */
        }
    }
    {
        futoin__timer** pp = &tool->timer_free;
        while (*pp) {
            ptrdiff_t b = timer_block_of(tool, *pp);
            if (b >= 0 && nfree[b]) {
                *pp = (*pp)->next_free;
            } else {
                pp = &(*pp)->next_free;
            }
        }
    }
    for (size_t i = 0; i < tool->timer_nblocks; ++i) {
        if (tool->timer_blocks[i] && nfree[i]) {
            free(tool->timer_blocks[i]);
            tool->timer_blocks[i] = NULL;
            given += timer_block_len(i) * sizeof(futoin__timer);
        }
    }
    free(nfree);
    return given;
}

bool futoin__tool_timer_at_rest(const futoin_tool* tool)
{
    size_t blocks = 0;
    for (size_t i = 0; i < tool->timer_nblocks; ++i) {
        blocks += tool->timer_blocks[i] != NULL;
    }
    return tool->heap_cap <= 64 && blocks <= 1;
}

FUTOIN_API FutoInHandle futoin_tool_deferred(
        futoin_tool* tool,
        uint32_t delay_ms,
        void (*cb)(void* data),
        void* data)
{
    FutoInHandle h = not_queued;
    futoin__timer* t;
    if (!tool) {
        return h;
    }
    if (!futoin__tool_check_thread(
                tool, "futoin_tool_deferred(): not the loop thread")) {
        return h;
    }
    if (!cb) {
        futoin__tool_misuse(tool, "futoin_tool_deferred(): NULL callback");
        return h;
    }
    if (tool->closing) {
        futoin__tool_misuse(tool, "futoin_tool_deferred(): tool is closing");
        return h;
    }
    t = futoin__tool_timer_start(tool, delay_ms, cb, data);
    if (!t) {
        futoin__tool_misuse(tool, "futoin_tool_deferred(): out of memory");
        return h;
    }
    h.data1 = tool;
    h.data2 = t;
    h.data3 = (ptrdiff_t)t->gen;
    return h;
}
