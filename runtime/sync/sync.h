/*
 * Shared machinery of the sync objects (not installed): who a flow is, the
 * table of flows inside an object, and the FIFO waiting room.
 *
 * How a lock works. The engine calls lock(bsi) with the handle of the
 * addSync() guard frame, and later unlock(bsi) with the same frame, whether
 * the section succeeded, failed or was cancelled (flow.c). lock() either
 * lets the flow in at once, or raises DefenseRejected on `bsi`, or adds one
 * "wait" step in front of the section. The wait step runs next in the same
 * flow: it tries again, and failing that puts itself in the queue and waits
 * (waitExternal + setCancel). Whoever frees room later (an unlock, a period
 * tick) lets the head of the queue in and resumes its wait step with
 * success(); the section follows. A wait step that is cancelled (the flow
 * was cancelled, failed or timed out around it) leaves the queue from its
 * cancel handler. Either way the guard frame's unlock() comes last and
 * releases whatever the flow holds, or nothing if it never got in.
 */
#ifndef FUTOIN_RUNTIME_SYNC_H
#define FUTOIN_RUNTIME_SYNC_H

#include "engine/engine.h"

#include <futoin/sync.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The flow `bsi` acts in: our flow record, or for a handle that is not ours
 * its rootId() tagged with the low bit (flow records are aligned, so the
 * two kinds never collide). Never 0. */
uintptr_t futoin__sync_key(FutoInAsyncSteps* bsi);

/* ---- flows inside: key -> hold count ------------------------------------- */

typedef struct futoin__sync_hold
{
    uintptr_t key; /* 0 = empty slot */
    size_t count;  /* nested sections of this flow */
} futoin__sync_hold;

/* Open addressing, linear probing, at most half full; grows, never
 * shrinks, so a steady state allocates nothing. */
typedef struct futoin__sync_holders
{
    futoin__sync_hold* slots;
    size_t mask; /* capacity - 1; capacity 0 while slots == NULL */
    size_t len;
} futoin__sync_holders;

futoin__sync_hold* futoin__holders_find(futoin__sync_holders* h,
                                        uintptr_t key);
/* Insert `key` (not present) with count 1. false: out of memory. */
bool futoin__holders_add(futoin__sync_holders* h, uintptr_t key,
                         size_t* allocations);
void futoin__holders_remove(futoin__sync_holders* h, futoin__sync_hold* e);
void futoin__holders_free(futoin__sync_holders* h);

/* ---- the waiting room ----------------------------------------------------- */

typedef struct futoin__sync_node futoin__sync_node;
typedef struct futoin__sync_queue futoin__sync_queue;

struct futoin__sync_node
{
    futoin__sync_node* next; /* queue order, or free list */
    futoin__sync_node* prev;
    futoin__sync_queue* q;
    FutoInAsyncSteps* step;  /* the waiting step */
    uintptr_t key;
    bool waiting;            /* in the queue (else on the free list) */
};

enum futoin__sync_enter
{
    FUTOIN__SYNC_IN = 0, /* let in, and recorded by the owner */
    FUTOIN__SYNC_FULL,   /* no room now */
    FUTOIN__SYNC_NOMEM
};

struct futoin__sync_queue
{
    futoin__sync_node* head;
    futoin__sync_node* tail;
    futoin__sync_node* free;
    void* blocks;      /* node blocks, linked through their first word */
    size_t len;
    size_t max_len;    /* FUTOIN_UNLIMITED or a limit */
    size_t block_len;  /* nodes in the next block */
    /* The owner's rule: may `key` come in now? On FUTOIN__SYNC_IN the
     * owner has counted the entry. */
    enum futoin__sync_enter (*try_enter)(futoin__sync_queue* q, uintptr_t key);
    void* owner;
    size_t* allocations; /* the owner's counter */
    size_t rejected;
    char reject_info[96]; /* error_info of DefenseRejected, built once */
};

void futoin__sync_queue_init(futoin__sync_queue* q, size_t max_len,
                             enum futoin__sync_enter (*try_enter)(
                                     futoin__sync_queue* q, uintptr_t key),
                             void* owner, size_t* allocations);
void futoin__sync_queue_free(futoin__sync_queue* q);

enum futoin__sync_acquire
{
    FUTOIN__SYNC_ENTERED = 0, /* in now */
    FUTOIN__SYNC_WAITS,       /* a wait step was added to `bsi` */
    FUTOIN__SYNC_FAILED       /* an error was raised on `bsi` */
};

/* lock() on behalf of flow `key` through frame `bsi`: let in at once if
 * nobody waits and the owner has room; otherwise reject when the queue is
 * full, or add a wait step. */
enum futoin__sync_acquire futoin__sync_acquire(futoin__sync_queue* q,
                                               FutoInAsyncSteps* bsi,
                                               uintptr_t key);
/* Add a wait step for `q` unconditionally: for the second stage of a
 * Limiter, which may only be tried once the first stage let the flow in. */
void futoin__sync_defer(futoin__sync_queue* q, FutoInAsyncSteps* bsi);
/* Let in queued flows, head first, while the owner has room. */
void futoin__sync_wake(futoin__sync_queue* q);

/* ---- the period of Throttle and Limiter ---------------------------------- */

typedef struct futoin__sync_rate
{
    futoin_tool* tool;
    futoin__timer* timer; /* NULL while idle */
    uint32_t timer_gen;
    uint32_t period_ms;
    size_t max;           /* entries per period */
    size_t current;       /* entries in this period */
    size_t periods;
    size_t timer_starts;
    futoin__sync_queue* q; /* woken at every tick */
} futoin__sync_rate;

/* Count one entry if the period has room; starts the timer if idle. */
enum futoin__sync_enter futoin__sync_rate_take(futoin__sync_rate* r);
void futoin__sync_rate_stop(futoin__sync_rate* r);

/* ---- the objects ----------------------------------------------------------- */

extern const FutoInSyncAPI futoin__mutex_api;
extern const FutoInSyncAPI futoin__throttle_api;
extern const FutoInSyncAPI futoin__limiter_api;

int futoin__mutex_stats(FutoInSync* sync, futoin_sync_stats* out);
int futoin__throttle_stats(FutoInSync* sync, futoin_sync_stats* out);
int futoin__limiter_stats(FutoInSync* sync, futoin_sync_stats* out);

/* ---- for the live dump (inspect/dump.c) ---------------------------------- */

/* "Mutex", "Throttle" or "Limiter" for our objects, else NULL. */
const char* futoin__sync_name(const FutoInSync* sync);
/* If `step` is a wait step of our sync objects queued now (its cancel
 * handler `ch` with data `ch_data` as wait_step() set them), its 1-based
 * place in that queue and the queue's length; else false. */
bool futoin__sync_wait_place(FutoInAsyncSteps* step,
                             FutoInAsyncSteps_cancel_callback ch,
                             void* ch_data, size_t* place, size_t* len);

/* Say why a free was refused: through the tool when there is one. */
void futoin__sync_busy(futoin_tool* tool, const char* what);

#endif /* FUTOIN_RUNTIME_SYNC_H */
