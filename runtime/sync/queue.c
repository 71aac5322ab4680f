/*
 * The waiting room shared by Mutex, Throttle and Limiter (see sync.h for
 * how a lock goes through it), the identity of a flow, and the entry
 * points every sync object shares.
 */
#include "sync/sync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- who is asking ------------------------------------------------------- */

uintptr_t futoin__sync_key(FutoInAsyncSteps* bsi)
{
    futoin__flow* fl = futoin__flow_of(bsi);
    if (fl) {
        return (uintptr_t)fl;
    }
    /* Not our handle: the only identity FTN12 offers is the root's. */
    return ((uintptr_t)bsi->api->rootId(bsi) << 1) | 1u;
}

/* ---- nodes ----------------------------------------------------------------- */

typedef struct node_block
{
    struct node_block* next;
    futoin__sync_node nodes[];
} node_block;

#define FIRST_BLOCK 8
#define MAX_BLOCK 1024

void futoin__sync_queue_init(futoin__sync_queue* q, size_t max_len,
                             enum futoin__sync_enter (*try_enter)(
                                     futoin__sync_queue* q, uintptr_t key),
                             void* owner, size_t* allocations)
{
    memset(q, 0, sizeof(*q));
    q->max_len = max_len;
    q->block_len = FIRST_BLOCK;
    q->try_enter = try_enter;
    q->owner = owner;
    q->allocations = allocations;
}

void futoin__sync_queue_free(futoin__sync_queue* q)
{
    node_block* b = q->blocks;
    while (b) {
        node_block* next = b->next;
        free(b);
        b = next;
    }
    q->blocks = NULL;
    q->free = NULL;
}

/* Nodes are never returned to the heap before the object is freed: a
 * cancel handler may still look at a node after it was recycled (see
 * wait_cancel), so its memory must stay ours. */
static futoin__sync_node* node_get(futoin__sync_queue* q)
{
    futoin__sync_node* n = q->free;
    if (!n) {
        size_t len = q->block_len;
        node_block* b = malloc(sizeof(*b) + len * sizeof(b->nodes[0]));
        if (!b) {
            return NULL;
        }
        ++*q->allocations;
        b->next = q->blocks;
        q->blocks = b;
        for (size_t i = len; i-- > 0;) {
            b->nodes[i].waiting = false;
            b->nodes[i].step = NULL;
            b->nodes[i].next = q->free;
            q->free = &b->nodes[i];
        }
        if (q->block_len < MAX_BLOCK) {
            q->block_len *= 2;
        }
        n = q->free;
    }
    q->free = n->next;
    return n;
}

static void node_unlink(futoin__sync_queue* q, futoin__sync_node* n)
{
    if (n->prev) {
        n->prev->next = n->next;
    } else {
        q->head = n->next;
    }
    if (n->next) {
        n->next->prev = n->prev;
    } else {
        q->tail = n->prev;
    }
    --q->len;
    n->waiting = false;
    n->prev = NULL;
    n->next = q->free;
    q->free = n;
}

/* ---- waiting ---------------------------------------------------------------- */

static void reject(futoin__sync_queue* q, FutoInAsyncSteps* bsi)
{
    ++q->rejected;
    bsi->api->handle_error(bsi, FUTOIN_ERR_DEFENSE_REJECTED, q->reject_info);
}

static void no_memory(FutoInAsyncSteps* bsi)
{
    bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR,
                           "addSync(): out of memory");
}

/* The wait step's flow leaves abnormally (cancelled, an error or timeout
 * around it). Its node may already have been recycled: a flow that was let
 * in and then cancelled before it ran again still gets here, after its
 * node went back to the free list and perhaps to another waiter. The node
 * is this step's only while it waits for this very step, and a step's
 * handle cannot be reused while its own cancel handler runs. */
static void wait_cancel(FutoInAsyncSteps* bsi, void* data)
{
    futoin__sync_node* n = data;
    if (n->waiting && n->step == bsi) {
        node_unlink(n->q, n);
    }
}

static void wait_step(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    futoin__sync_queue* q = data;
    uintptr_t key = futoin__sync_key(bsi);
    futoin__sync_node* n;
    (void)args; /* the guard frame keeps the section's values aside */

    if (!q->head) {
        switch (q->try_enter(q, key)) {
        case FUTOIN__SYNC_IN:
            return; /* implicit success: the section runs next */
        case FUTOIN__SYNC_NOMEM:
            no_memory(bsi);
            return;
        default:
            break;
        }
    }
    if (q->len >= q->max_len) {
        reject(q, bsi);
        return;
    }
    n = node_get(q);
    if (!n) {
        no_memory(bsi);
        return;
    }
    n->q = q;
    n->step = bsi;
    n->key = key;
    n->waiting = true;
    n->next = NULL;
    n->prev = q->tail;
    if (q->tail) {
        q->tail->next = n;
    } else {
        q->head = n;
    }
    q->tail = n;
    ++q->len;
    bsi->api->waitExternal(bsi);
    bsi->api->setCancel(bsi, n, wait_cancel);
}

enum futoin__sync_acquire futoin__sync_acquire(futoin__sync_queue* q,
                                               FutoInAsyncSteps* bsi,
                                               uintptr_t key)
{
    /* Nobody overtakes a queued flow, even when room appears meanwhile. */
    if (!q->head) {
        switch (q->try_enter(q, key)) {
        case FUTOIN__SYNC_IN:
            return FUTOIN__SYNC_ENTERED;
        case FUTOIN__SYNC_NOMEM:
            no_memory(bsi);
            return FUTOIN__SYNC_FAILED;
        default:
            break;
        }
    }
    if (q->len >= q->max_len) {
        reject(q, bsi);
        return FUTOIN__SYNC_FAILED;
    }
    /* Queue from a step of the flow's own: only a step can wait, and the
     * guard frame must stay free to run the section after it. */
    bsi->api->add(bsi, q, wait_step, NULL);
    return FUTOIN__SYNC_WAITS;
}

void futoin__sync_defer(futoin__sync_queue* q, FutoInAsyncSteps* bsi)
{
    bsi->api->add(bsi, q, wait_step, NULL);
}

void futoin__sync_wake(futoin__sync_queue* q)
{
    while (q->head) {
        futoin__sync_node* n = q->head;
        FutoInAsyncSteps* step = n->step;
        enum futoin__sync_enter r = q->try_enter(q, n->key);
        if (r == FUTOIN__SYNC_FULL) {
            return;
        }
        /* Unlink first: success() of a foreign implementation may run
         * code that comes back to this object. */
        node_unlink(q, n);
        if (r == FUTOIN__SYNC_IN) {
            step->api->success(step, NULL);
        } else {
            no_memory(step);
        }
    }
}

/* ---- for the live dump ------------------------------------------------------ */

const char* futoin__sync_name(const FutoInSync* sync)
{
    if (sync->api == &futoin__mutex_api) {
        return "Mutex";
    }
    if (sync->api == &futoin__throttle_api) {
        return "Throttle";
    }
    if (sync->api == &futoin__limiter_api) {
        return "Limiter";
    }
    return NULL;
}

bool futoin__sync_wait_place(FutoInAsyncSteps* step,
                             FutoInAsyncSteps_cancel_callback ch,
                             void* ch_data, size_t* place, size_t* len)
{
    futoin__sync_node* n = ch_data;
    size_t k = 1;
    if (ch != wait_cancel || !n || !n->waiting || n->step != step) {
        return false;
    }
    for (futoin__sync_node* i = n->q->head; i && i != n; i = i->next) {
        ++k;
    }
    *place = k;
    *len = n->q->len;
    return true;
}

/* ---- shared entry points -------------------------------------------------- */

void futoin__sync_busy(futoin_tool* tool, const char* what)
{
    if (tool) {
        futoin__tool_misuse(tool, what);
    } else {
        fprintf(stderr, "futoin: %s: %s\n", FUTOIN_ERR_INTERNAL_ERROR, what);
    }
}

FUTOIN_API int futoin_sync_get_stats(FutoInSync* sync, futoin_sync_stats* out)
{
    if (!sync || !out) {
        return FUTOIN_EINVAL;
    }
    if (out->version != FUTOIN_SYNC_STATS_VERSION) {
        return FUTOIN_EVERSION;
    }
    if (sync->api == &futoin__mutex_api) {
        return futoin__mutex_stats(sync, out);
    }
    if (sync->api == &futoin__throttle_api) {
        return futoin__throttle_stats(sync, out);
    }
    if (sync->api == &futoin__limiter_api) {
        return futoin__limiter_stats(sync, out);
    }
    return FUTOIN_EINVAL;
}
