/*
 * Throttle (§2.4): at most `max` entries per period; and the period clock
 * that Limiter shares.
 *
 * The clock is a pooled one-shot timer of the tool, started by the first
 * entry after an idle spell. Every tick opens a new period and lets queued
 * flows in; the first of them starts the timer again. A tick that finds
 * nobody waiting leaves it stopped, so the timer runs for exactly one
 * period after the last entry and an idle Throttle keeps neither the loop
 * alive nor the CPU busy.
 */
#include "sync/sync.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- the period clock ------------------------------------------------------- */

static void rate_tick(void* data)
{
    futoin__sync_rate* r = data;
    r->timer = NULL;
    r->current = 0;
    ++r->periods;
    futoin__sync_wake(r->q);
}

enum futoin__sync_enter futoin__sync_rate_take(futoin__sync_rate* r)
{
    if (r->current >= r->max) {
        return FUTOIN__SYNC_FULL;
    }
    if (!r->timer) {
        r->timer = futoin__tool_timer_start(r->tool, r->period_ms, rate_tick, r);
        if (!r->timer) {
            return FUTOIN__SYNC_NOMEM;
        }
        r->timer_gen = r->timer->gen;
        ++r->timer_starts;
    }
    ++r->current;
    return FUTOIN__SYNC_IN;
}

void futoin__sync_rate_stop(futoin__sync_rate* r)
{
    if (r->timer) {
        futoin__tool_timer_stop(r->tool, r->timer, r->timer_gen);
        r->timer = NULL;
    }
}

/* ---- Throttle ------------------------------------------------------------- */

typedef struct futoin__throttle
{
    FutoInSync sync; /* must be first */
    futoin__sync_queue q;
    /* Flows inside: only for re-entrance (§1.11.4) and to refuse a free
     * while in use. Their number is not limited. */
    futoin__sync_holders holders;
    futoin__sync_rate rate;
    size_t entries;
    size_t allocations;
} futoin__throttle;

static enum futoin__sync_enter throttle_try_enter(futoin__sync_queue* q,
                                                  uintptr_t key)
{
    futoin__throttle* t = q->owner;
    enum futoin__sync_enter r = futoin__sync_rate_take(&t->rate);
    if (r != FUTOIN__SYNC_IN) {
        return r;
    }
    if (!futoin__holders_add(&t->holders, key, &t->allocations)) {
        --t->rate.current; /* the timer, if started, stops at its tick */
        return FUTOIN__SYNC_NOMEM;
    }
    ++t->entries;
    return FUTOIN__SYNC_IN;
}

static void throttle_lock(FutoInAsyncSteps* bsi, FutoInSync* sync)
{
    futoin__throttle* t = (futoin__throttle*)sync;
    uintptr_t key = futoin__sync_key(bsi);
    futoin__sync_hold* h = futoin__holders_find(&t->holders, key);
    if (h) {
        ++h->count;
        return;
    }
    futoin__sync_acquire(&t->q, bsi, key);
}

/* Leaving frees no room (only the clock does), so nobody is woken here. */
static void throttle_unlock(FutoInAsyncSteps* bsi, FutoInSync* sync)
{
    futoin__throttle* t = (futoin__throttle*)sync;
    futoin__sync_hold* h = futoin__holders_find(&t->holders,
                                                futoin__sync_key(bsi));
    if (h && --h->count == 0) {
        futoin__holders_remove(&t->holders, h);
    }
}

const FutoInSyncAPI futoin__throttle_api = {{{
        .lock = throttle_lock,
        .unlock = throttle_unlock,
}}};

FUTOIN_API FutoInSync* futoin_throttle_new(
        futoin_tool* tool, size_t max, uint32_t period_ms, size_t max_queue)
{
    futoin__throttle* t;
    if (!tool || max == 0 || period_ms == 0) {
        return NULL;
    }
    t = calloc(1, sizeof(*t));
    if (!t) {
        return NULL;
    }
    *(const FutoInSyncAPI**)&t->sync = &futoin__throttle_api;
    t->allocations = 1;
    futoin__sync_queue_init(&t->q, max_queue, throttle_try_enter, t,
                            &t->allocations);
    snprintf(t->q.reject_info, sizeof(t->q.reject_info),
             "Throttle: queue limit %zu reached", max_queue);
    t->rate.tool = tool;
    t->rate.max = max;
    t->rate.period_ms = period_ms;
    t->rate.q = &t->q;
    return &t->sync;
}

FUTOIN_API int futoin_throttle_free(FutoInSync* sync)
{
    futoin__throttle* t = (futoin__throttle*)sync;
    if (!sync) {
        return FUTOIN_OK;
    }
    if (sync->api != &futoin__throttle_api) {
        return FUTOIN_EINVAL;
    }
    if (t->holders.len || t->q.len) {
        futoin__sync_busy(t->rate.tool,
                          "futoin_throttle_free(): the Throttle is in use "
                          "(flows inside or queued)");
        return FUTOIN_EBUSY;
    }
    futoin__sync_rate_stop(&t->rate);
    futoin__sync_queue_free(&t->q);
    futoin__holders_free(&t->holders);
    free(t);
    return FUTOIN_OK;
}

int futoin__throttle_stats(FutoInSync* sync, futoin_sync_stats* out)
{
    futoin__throttle* t = (futoin__throttle*)sync;
    out->inside = t->holders.len;
    out->queued = t->q.len;
    out->period_entries = t->rate.current;
    out->timer_active = t->rate.timer != NULL;
    out->periods = t->rate.periods;
    out->timer_starts = t->rate.timer_starts;
    out->entries = t->entries;
    out->rejected = t->q.rejected;
    out->allocations = t->allocations;
    return FUTOIN_OK;
}
