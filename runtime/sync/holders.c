/*
 * The table of flows inside a sync object: flow key -> number of nested
 * sections. Lock and unlock look a flow up here, so it must be cheap with
 * one holder (a Mutex(1)) and with thousands (a wide Throttle): open
 * addressing with linear probing, kept at most half full, and deletion by
 * backward shift so that no tombstones build up over millions of
 * lock/unlock pairs. The table grows to the peak number of holders and
 * never shrinks, so a steady state allocates nothing.
 */
#include "sync/sync.h"

#include <stdlib.h>

static size_t slot_of(const futoin__sync_holders* h, uintptr_t key)
{
    /* Keys are aligned pointers (or small tagged ids): mix the bits so
     * that neighbouring records do not cluster. */
    uint64_t x = (uint64_t)key;
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    return (size_t)x & h->mask;
}

futoin__sync_hold* futoin__holders_find(futoin__sync_holders* h,
                                        uintptr_t key)
{
    size_t i;
    if (h->len == 0) {
        return NULL;
    }
    for (i = slot_of(h, key);; i = (i + 1) & h->mask) {
        futoin__sync_hold* e = &h->slots[i];
        if (e->key == key) {
            return e;
        }
        if (e->key == 0) {
            return NULL;
        }
    }
}

static void put(futoin__sync_holders* h, uintptr_t key, size_t count)
{
    size_t i = slot_of(h, key);
    while (h->slots[i].key != 0) {
        i = (i + 1) & h->mask;
    }
    h->slots[i].key = key;
    h->slots[i].count = count;
}

static bool grow(futoin__sync_holders* h, size_t* allocations)
{
    size_t cap = h->slots ? (h->mask + 1) * 2 : 8;
    futoin__sync_hold* old = h->slots;
    size_t old_cap = old ? h->mask + 1 : 0;
    if (cap > SIZE_MAX / sizeof(*old)) {
        return false;
    }
    h->slots = calloc(cap, sizeof(*old));
    if (!h->slots) {
        h->slots = old;
        return false;
    }
    ++*allocations;
    h->mask = cap - 1;
    for (size_t i = 0; i < old_cap; ++i) {
        if (old[i].key != 0) {
            put(h, old[i].key, old[i].count);
        }
    }
    free(old);
    return true;
}

bool futoin__holders_add(futoin__sync_holders* h, uintptr_t key,
                         size_t* allocations)
{
    if ((!h->slots || (h->len + 1) * 2 > h->mask + 1)
        && !grow(h, allocations)) {
        return false;
    }
    put(h, key, 1);
    ++h->len;
    return true;
}

void futoin__holders_remove(futoin__sync_holders* h, futoin__sync_hold* e)
{
    size_t hole = (size_t)(e - h->slots);
    size_t j = hole;
    /* Pull later members of the same probe run back into the hole, so a
     * lookup never stops early at an empty slot that used to be taken. */
    for (;;) {
        j = (j + 1) & h->mask;
        uintptr_t k = h->slots[j].key;
        if (k == 0) {
            break;
        }
        size_t home = slot_of(h, k);
        /* Movable unless its home lies cyclically in (hole, j]. */
        bool stays = hole <= j ? (home > hole && home <= j)
                               : (home > hole || home <= j);
        if (!stays) {
            h->slots[hole] = h->slots[j];
            hole = j;
        }
    }
    h->slots[hole].key = 0;
    h->slots[hole].count = 0;
    --h->len;
}

void futoin__holders_free(futoin__sync_holders* h)
{
    free(h->slots);
    h->slots = NULL;
    h->mask = 0;
    h->len = 0;
}
