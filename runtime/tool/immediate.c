/*
 * Immediates: a power-of-two ring addressed by monotonic sequence numbers.
 * One uv_idle_t is active while the ring holds entries; its callback runs
 * them in bursts, and entries added during a burst run in the same burst,
 * so a continuation costs a few ns instead of a loop turn. A handle carries
 * its entry's sequence number, which stays valid while the ring grows.
 */
#include "tool/internal.h"

#include <stdlib.h>

/* Doubling keeps every pending sequence number in its own slot: entries are
 * re-placed by sequence number, so ring[seq & mask] stays right and handles
 * (which carry the sequence number) survive the growth. */
static FUTOIN__NOINLINE bool imm_grow(futoin_tool* tool)
{
    size_t cap = tool->ring_mask + 1;
    size_t ncap = cap * 2;
    struct futoin__imm* nring;
    if (ncap < cap || ncap > SIZE_MAX / sizeof(*nring)) {
        futoin__tool_misuse(tool, "immediate queue: too many entries");
        return false;
    }
    nring = malloc(ncap * sizeof(*nring));
    if (!nring) {
        futoin__tool_misuse(tool, "immediate queue: out of memory");
        return false;
    }
    for (uint64_t s = tool->ring_head; s != tool->ring_tail; ++s) {
        nring[s & (ncap - 1)] = tool->ring[s & tool->ring_mask];
    }
    free(tool->ring);
    tool->ring = nring;
    tool->ring_mask = ncap - 1;
    futoin__tool_grew(tool);
    return true;
}

FUTOIN__NOINLINE void futoin__tool_idle_start(futoin_tool* tool)
{
    uv_idle_start(&tool->idle, futoin__tool_idle_cb);
    tool->idle_active = true;
    tool->imm_eager = false;
}

/* The hot path: a bounds check, a store, an increment. */
static inline bool imm_push(futoin_tool* tool, futoin__cb cb, void* data)
{
    uint64_t seq = tool->ring_tail;
    struct futoin__imm* slot;
    if (FUTOIN__UNLIKELY(seq - tool->ring_head > tool->ring_mask)
        && !imm_grow(tool)) {
        return false;
    }
    slot = &tool->ring[seq & tool->ring_mask];
    slot->cb = cb;
    slot->data = data;
    tool->ring_tail = seq + 1;
    /* On our own loop the idle handle is started lazily, at the next sync
     * point (futoin__tool_sync): a root that runs to its end inside
     * futoin_tool_run's fast path then never touches it. */
    if (FUTOIN__UNLIKELY(tool->imm_eager)) {
        futoin__tool_idle_start(tool);
    }
    return true;
}

void futoin__tool_imm_slow(futoin_tool* tool, futoin__cb cb, void* data)
{
    imm_push(tool, cb, data);
}

bool futoin__tool_imm_push(futoin_tool* tool, futoin__cb cb, void* data)
{
    return imm_push(tool, cb, data);
}

/* A new batch whose slot needs the ring grown or the idle handle started.
 * If the ring cannot grow (reported), `node` stays out of every batch, as
 * an immediate that could not be queued. */
void futoin__tool_rq_slow(futoin_tool* tool, struct futoin__rq_node* node)
{
    if (imm_push(tool, NULL, node)) {
        node->next = FUTOIN__RQ_LAST;
        tool->rq_end = tool->ring_tail;
        tool->rq_last = node;
    }
}

/* The idle handle's callback: one burst (futoin__tool_burst). */
void futoin__tool_idle_cb(uv_idle_t* handle)
{
    futoin__tool_burst(handle->data, false);
}

/* Recover the sequence number of an immediate handle; false if it is not
 * pending. data3 is seq + 1, so the all-zero handle is never pending. */
bool futoin__tool_imm_seq_of(const futoin_tool* tool, const FutoInHandle* h,
                             uint64_t* out)
{
    uint64_t raw = (uint64_t)(uintptr_t)h->data3;
    if (raw == 0) {
        return false;
    }
    raw -= 1;
    if (sizeof(ptrdiff_t) < sizeof(uint64_t)) {
        /* A narrow ptrdiff_t holds the low bits only; the pending window
         * [head, tail) is far narrower, so the high bits follow from it. */
        uint64_t wmask = UINT64_MAX >> (64 - 8 * sizeof(ptrdiff_t));
        raw = tool->ring_head + ((raw - tool->ring_head) & wmask);
    }
    if (raw < tool->ring_head || raw >= tool->ring_tail
        || !tool->ring[raw & tool->ring_mask].cb) {
        return false;
    }
    *out = raw;
    return true;
}

void futoin__tool_imm_cancel(futoin_tool* tool, uint64_t seq)
{
    tool->ring[seq & tool->ring_mask].cb = NULL;
    tool->ring[seq & tool->ring_mask].data = NULL;
    /* Skip cancelled entries at the head at once, so a ring that holds only
     * cancelled entries releases the loop instead of spinning it once more. */
    if (seq == tool->ring_head) {
        /* a batch of the run queue has no callback either, but data */
        while (tool->ring_head != tool->ring_tail
               && !tool->ring[tool->ring_head & tool->ring_mask].cb
               && !tool->ring[tool->ring_head & tool->ring_mask].data) {
            ++tool->ring_head;
        }
        if (tool->ring_head == tool->ring_tail) {
            futoin__tool_idle_stop(tool);
        }
    }
}

size_t futoin__tool_imm_trim(futoin_tool* tool)
{
    size_t given = 0;

    /* The immediate ring, once empty: no pending handle refers into it. */
    if (tool->ring_head == tool->ring_tail
        && tool->ring_mask + 1 > FUTOIN__IMM_INITIAL_CAP) {
        struct futoin__imm* small =
                calloc(FUTOIN__IMM_INITIAL_CAP, sizeof(*small));
        if (small) {
            given += (tool->ring_mask + 1 - FUTOIN__IMM_INITIAL_CAP)
                     * sizeof(*small);
            free(tool->ring);
            tool->ring = small;
            tool->ring_mask = FUTOIN__IMM_INITIAL_CAP - 1;
        }
    }
    return given;
}

bool futoin__tool_imm_at_rest(const futoin_tool* tool)
{
    return tool->ring_mask + 1 <= FUTOIN__IMM_INITIAL_CAP;
}

FUTOIN_API FutoInHandle futoin_tool_immediate(
        futoin_tool* tool, void (*cb)(void* data), void* data)
{
    FutoInHandle h = not_queued;
    uint64_t seq;
    if (!tool) {
        return h;
    }
    if (!cb) {
        futoin__tool_misuse(tool, "futoin_tool_immediate(): NULL callback");
        return h;
    }
    if (!futoin__tool_on_thread(tool)) {
        if (!futoin__tool_post_imm(tool, cb, data)) {
            futoin__tool_misuse(tool, "futoin_tool_immediate(): out of memory");
            return h;
        }
        return inert_handle; /* queued; a remote post cannot be cancelled */
    }
    if (tool->closing) {
        futoin__tool_misuse(tool, "futoin_tool_immediate(): tool is closing");
        return h;
    }
    seq = tool->ring_tail;
    if (FUTOIN__UNLIKELY(seq - tool->ring_head > tool->ring_mask)
        || FUTOIN__UNLIKELY(tool->imm_eager)) {
        if (!imm_push(tool, cb, data)) {
            return h;
        }
    } else { /* imm_push() with nothing to grow or start */
        struct futoin__imm* slot = &tool->ring[seq & tool->ring_mask];
        slot->cb = cb;
        slot->data = data;
        tool->ring_tail = seq + 1;
    }
    h.data1 = tool;
    h.data3 = (ptrdiff_t)(uintptr_t)(seq + 1);
    return h;
}
