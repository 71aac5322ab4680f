/*
 * Limiter (§2.5, §1.11.7): a Mutex(concurrent, max_queue) around a
 * Throttle(rate, period_ms, burst), in one object. A flow first takes a
 * concurrency slot (waiting in the first queue if need be), then, holding
 * it, an entry of the current period (waiting in the second queue, the
 * burst). The slot is what the flow holds: re-entrance is judged by it and
 * unlock releases it; rate entries are only counted, as in Throttle.
 */
#include "sync/sync.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct futoin__limiter
{
    FutoInSync sync; /* must be first */
    futoin__sync_queue slot_q;  /* waiting for a concurrency slot */
    futoin__sync_holders holders;
    size_t concurrent;
    futoin__sync_queue rate_q;  /* holding a slot, waiting for the rate */
    futoin__sync_rate rate;
    size_t entries;
    size_t allocations;
} futoin__limiter;

static enum futoin__sync_enter slot_try_enter(futoin__sync_queue* q,
                                              uintptr_t key)
{
    futoin__limiter* l = q->owner;
    if (l->holders.len >= l->concurrent) {
        return FUTOIN__SYNC_FULL;
    }
    return futoin__holders_add(&l->holders, key, &l->allocations)
                   ? FUTOIN__SYNC_IN
                   : FUTOIN__SYNC_NOMEM;
}

static enum futoin__sync_enter rate_try_enter(futoin__sync_queue* q,
                                              uintptr_t key)
{
    futoin__limiter* l = q->owner;
    enum futoin__sync_enter r = futoin__sync_rate_take(&l->rate);
    (void)key;
    if (r == FUTOIN__SYNC_IN) {
        ++l->entries;
    }
    return r;
}

static void limiter_lock(FutoInAsyncSteps* bsi, FutoInSync* sync)
{
    futoin__limiter* l = (futoin__limiter*)sync;
    uintptr_t key = futoin__sync_key(bsi);
    futoin__sync_hold* h = futoin__holders_find(&l->holders, key);
    if (h) {
        ++h->count; /* already admitted: neither limit applies again */
        return;
    }
    switch (futoin__sync_acquire(&l->slot_q, bsi, key)) {
    case FUTOIN__SYNC_ENTERED:
        futoin__sync_acquire(&l->rate_q, bsi, key);
        break;
    case FUTOIN__SYNC_WAITS:
        /* The rate may be tried only once the slot is ours: after the
         * slot's wait step, in a step of its own. */
        futoin__sync_defer(&l->rate_q, bsi);
        break;
    default:
        break;
    }
}

/* Releases the slot whether or not the flow got past the rate: a flow
 * rejected by the burst limit, or cancelled while waiting for the rate,
 * gives its slot back here. */
static void limiter_unlock(FutoInAsyncSteps* bsi, FutoInSync* sync)
{
    futoin__limiter* l = (futoin__limiter*)sync;
    futoin__sync_hold* h = futoin__holders_find(&l->holders,
                                                futoin__sync_key(bsi));
    if (!h || --h->count > 0) {
        return;
    }
    futoin__holders_remove(&l->holders, h);
    futoin__sync_wake(&l->slot_q);
}

const FutoInSyncAPI futoin__limiter_api = {{{
        .lock = limiter_lock,
        .unlock = limiter_unlock,
}}};

FUTOIN_API int futoin_limiter_options_init(
        futoin_limiter_options* opts, unsigned version)
{
    static const futoin_limiter_options defaults = FUTOIN_LIMITER_OPTIONS_INIT;
    if (!opts) {
        return FUTOIN_EINVAL;
    }
    if (version != FUTOIN_LIMITER_OPTIONS_VERSION) {
        return FUTOIN_EVERSION;
    }
    *opts = defaults;
    return FUTOIN_OK;
}

FUTOIN_API FutoInSync* futoin_limiter_new(
        futoin_tool* tool, const futoin_limiter_options* opts)
{
    static const futoin_limiter_options defaults = FUTOIN_LIMITER_OPTIONS_INIT;
    futoin__limiter* l;
    if (!opts) {
        opts = &defaults;
    }
    if (!tool || opts->version != FUTOIN_LIMITER_OPTIONS_VERSION
        || opts->concurrent == 0 || opts->rate == 0 || opts->period_ms == 0) {
        return NULL;
    }
    l = calloc(1, sizeof(*l));
    if (!l) {
        return NULL;
    }
    *(const FutoInSyncAPI**)&l->sync = &futoin__limiter_api;
    l->allocations = 1;
    l->concurrent = opts->concurrent;
    futoin__sync_queue_init(&l->slot_q, opts->max_queue, slot_try_enter, l,
                            &l->allocations);
    snprintf(l->slot_q.reject_info, sizeof(l->slot_q.reject_info),
             "Limiter: queue limit %zu reached (concurrent %zu)",
             opts->max_queue, opts->concurrent);
    futoin__sync_queue_init(&l->rate_q, opts->burst, rate_try_enter, l,
                            &l->allocations);
    snprintf(l->rate_q.reject_info, sizeof(l->rate_q.reject_info),
             "Limiter: burst limit %zu reached (rate %zu per %u ms)",
             opts->burst, opts->rate, (unsigned)opts->period_ms);
    l->rate.tool = tool;
    l->rate.max = opts->rate;
    l->rate.period_ms = opts->period_ms;
    l->rate.q = &l->rate_q;
    return &l->sync;
}

FUTOIN_API int futoin_limiter_free(FutoInSync* sync)
{
    futoin__limiter* l = (futoin__limiter*)sync;
    if (!sync) {
        return FUTOIN_OK;
    }
    if (sync->api != &futoin__limiter_api) {
        return FUTOIN_EINVAL;
    }
    if (l->holders.len || l->slot_q.len || l->rate_q.len) {
        futoin__sync_busy(l->rate.tool,
                          "futoin_limiter_free(): the Limiter is in use "
                          "(flows inside or queued)");
        return FUTOIN_EBUSY;
    }
    futoin__sync_rate_stop(&l->rate);
    futoin__sync_queue_free(&l->slot_q);
    futoin__sync_queue_free(&l->rate_q);
    futoin__holders_free(&l->holders);
    free(l);
    return FUTOIN_OK;
}

int futoin__limiter_stats(FutoInSync* sync, futoin_sync_stats* out)
{
    futoin__limiter* l = (futoin__limiter*)sync;
    out->inside = l->holders.len;
    out->queued = l->slot_q.len + l->rate_q.len;
    out->period_entries = l->rate.current;
    out->timer_active = l->rate.timer != NULL;
    out->periods = l->rate.periods;
    out->timer_starts = l->rate.timer_starts;
    out->entries = l->entries;
    out->rejected = l->slot_q.rejected + l->rate_q.rejected;
    out->allocations = l->allocations;
    return FUTOIN_OK;
}
