/*
 * Mutex (§2.3): at most `max` flows inside at once, the others wait in
 * FIFO order. Ownership passes at unlock: the flow that leaves lets the
 * head of the queue in before anyone else can take the room, so a newcomer
 * never overtakes a waiter. No tool is needed; the next flow is resumed
 * from the unlock of the previous one.
 */
#include "sync/sync.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct futoin__mutex
{
    FutoInSync sync; /* must be first: the handle is the object */
    futoin__sync_queue q;
    futoin__sync_holders holders;
    size_t max;
    size_t entries;
    size_t allocations;
} futoin__mutex;

static enum futoin__sync_enter mutex_try_enter(futoin__sync_queue* q,
                                               uintptr_t key)
{
    futoin__mutex* m = q->owner;
    if (m->holders.len >= m->max) {
        return FUTOIN__SYNC_FULL;
    }
    if (!futoin__holders_add(&m->holders, key, &m->allocations)) {
        return FUTOIN__SYNC_NOMEM;
    }
    ++m->entries;
    return FUTOIN__SYNC_IN;
}

static void mutex_lock(FutoInAsyncSteps* bsi, FutoInSync* sync)
{
    futoin__mutex* m = (futoin__mutex*)sync;
    uintptr_t key = futoin__sync_key(bsi);
    futoin__sync_hold* h = futoin__holders_find(&m->holders, key);
    if (h) {
        ++h->count; /* §1.11.4: the same flow again */
        return;
    }
    futoin__sync_acquire(&m->q, bsi, key);
}

/* Called for every guard frame, also when its flow never got in (it was
 * rejected, or cancelled while queued): then there is nothing to release,
 * and the queue was already left by the wait step's cancel handler. */
static void mutex_unlock(FutoInAsyncSteps* bsi, FutoInSync* sync)
{
    futoin__mutex* m = (futoin__mutex*)sync;
    futoin__sync_hold* h = futoin__holders_find(&m->holders,
                                                futoin__sync_key(bsi));
    if (!h || --h->count > 0) {
        return;
    }
    futoin__holders_remove(&m->holders, h);
    futoin__sync_wake(&m->q);
}

const FutoInSyncAPI futoin__mutex_api = {{{
        .lock = mutex_lock,
        .unlock = mutex_unlock,
}}};

FUTOIN_API FutoInSync* futoin_mutex_new(size_t max, size_t max_queue)
{
    futoin__mutex* m;
    if (max == 0) {
        return NULL;
    }
    m = calloc(1, sizeof(*m));
    if (!m) {
        return NULL;
    }
    /* `api` is const in the spec's struct; the memory is ours. */
    *(const FutoInSyncAPI**)&m->sync = &futoin__mutex_api;
    m->max = max;
    m->allocations = 1;
    futoin__sync_queue_init(&m->q, max_queue, mutex_try_enter, m,
                            &m->allocations);
    snprintf(m->q.reject_info, sizeof(m->q.reject_info),
             "Mutex: queue limit %zu reached", max_queue);
    return &m->sync;
}

FUTOIN_API int futoin_mutex_free(FutoInSync* sync)
{
    futoin__mutex* m = (futoin__mutex*)sync;
    if (!sync) {
        return FUTOIN_OK;
    }
    if (sync->api != &futoin__mutex_api) {
        return FUTOIN_EINVAL;
    }
    if (m->holders.len || m->q.len) {
        futoin__sync_busy(NULL, "futoin_mutex_free(): the Mutex is in use "
                                "(flows inside or queued)");
        return FUTOIN_EBUSY;
    }
    futoin__sync_queue_free(&m->q);
    futoin__holders_free(&m->holders);
    free(m);
    return FUTOIN_OK;
}

int futoin__mutex_stats(FutoInSync* sync, futoin_sync_stats* out)
{
    futoin__mutex* m = (futoin__mutex*)sync;
    out->inside = m->holders.len;
    out->queued = m->q.len;
    out->period_entries = 0;
    out->timer_active = 0;
    out->periods = 0;
    out->timer_starts = 0;
    out->entries = m->entries;
    out->rejected = m->q.rejected;
    out->allocations = m->allocations;
    return FUTOIN_OK;
}
