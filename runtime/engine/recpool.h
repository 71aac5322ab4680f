/*
 * Record pools of the step engine (not installed): fixed-size records
 * carved from large aligned blocks that stay mapped as long as the tool.
 *
 * Why blocks are aligned. The handle a callback gets is the step record
 * itself, and a worker thread may call success() through it at any time,
 * even long after the step ended (a completion that lost the race against
 * the step's timeout). Such a call must never touch memory the loop thread
 * is rewriting, nor unmapped memory. Every block starts with a header that
 * names the tool and never changes, so the tool of any record, live or
 * stale, is one mask away (futoin__recpool_tool) with no racy read.
 *
 * Why blocks are never unmapped. Memory is given back to the system by
 * futoin__recpool_trim(), which remaps a block whose records are all free
 * onto a copy-on-write image of a "template" block: every record of it
 * reads as a free record (the caller's template), the header still names
 * the tool, and no page of it is resident until someone reads it. A stale
 * handle into a trimmed block therefore keeps reading a free record
 * instead of faulting, and the block is carved again, page by page, when
 * the pool grows.
 *
 * The free list is FIFO with a quarantine: a record is reused only once
 * `quarantine` others were freed after it, so a stale handle keeps finding
 * its record free for a while instead of a new owner (engine.h). Fresh
 * records are carved from the current block when the free list holds no
 * more than the quarantine. Loop thread only, except futoin__recpool_tool.
 */
#ifndef FUTOIN_RUNTIME_ENGINE_RECPOOL_H
#define FUTOIN_RUNTIME_ENGINE_RECPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct futoin_tool;

/* 256 KiB: few enough blocks (and mappings: ~1,300 at a peak of a
 * million waiting flows) that mapping one is rare, small enough that the
 * few blocks a trim must keep (they hold the quarantine) cost little. */
#define FUTOIN__RECPOOL_BLOCK ((size_t)1 << 18)

/* The first bytes of every block; identical in all blocks of a pool. */
typedef struct futoin__recpool_hdr
{
    struct futoin_tool* tool;
    struct futoin__recpool* pool;
} futoin__recpool_hdr;

typedef struct futoin__recpool_block
{
    char* base;        /* FUTOIN__RECPOOL_BLOCK-aligned mapping */
    uint32_t carved;   /* records carved from it since it was (re)started */
    uint32_t scratch;  /* futoin__recpool_trim(): free records counted */
    bool trimmed;      /* remapped onto the template: nothing resident */
} futoin__recpool_block;

typedef struct futoin__recpool
{
    void* head; /* FIFO free list */
    void* tail;
    size_t count;      /* records on the free list */
    size_t quarantine; /* keep at least this many before reusing */
    size_t size;       /* record size, a multiple of 8 */
    size_t link_off;   /* offset of the free-list link in the record */
    size_t first;      /* offset of the first record in a block */
    size_t per_block;
    /* records carved and not trimmed since: those handed out are
     * held - count (futoin__recpool_live), so neither take nor put
     * keeps a count of its own (issue 22: two of each per T3 wake) */
    size_t held;
    struct futoin_tool* tool;
    futoin__recpool_block* blocks; /* every block ever mapped, by index */
    size_t nblocks;
    size_t cap_blocks;
    size_t cur;        /* index of the block being carved; nblocks = none */
    /* What a free record of a trimmed block reads as (NULL: all zero). */
    const void* tmpl;
    int tmpl_fd;       /* memfd with the template block image, or -1 */
} futoin__recpool;

/* Set up an empty pool (maps nothing yet). `tmpl` (size bytes, or NULL)
 * must outlive the pool. */
void futoin__recpool_init(futoin__recpool* p, struct futoin_tool* tool,
                          size_t size, size_t link_off, size_t quarantine,
                          const void* tmpl);
/* Unmap everything. Records must not be used any more. */
void futoin__recpool_close(futoin__recpool* p);

/* The slow path of futoin__recpool_get() below. */
void* futoin__recpool_carve(futoin__recpool* p);

/* futoin__recpool_take() of a pool whose link offset the caller knows
 * (a constant: one load less). */
static inline __attribute__((always_inline)) void* futoin__recpool_take_at(
        futoin__recpool* p, size_t link_off)
{
    void* rec;
    if (p->count <= p->quarantine) {
        return NULL;
    }
    rec = p->head;
    p->head = *(void**)((char*)rec + link_off);
    if (!p->head) {
        p->tail = NULL;
    }
    --p->count;
    return rec;
}

/* A record off the free list (contents unspecified), or NULL while it
 * holds no more than the quarantine: then futoin__recpool_carve(). No call,
 * so a caller's fast path need not save registers. */
static inline void* futoin__recpool_take(futoin__recpool* p)
{
    return futoin__recpool_take_at(p, p->link_off);
}

/* A record (contents unspecified: the caller initialises it), or NULL.
 * Taken from the free list once it holds more than the quarantine, else
 * carved fresh. Inline: a step costs two of these. */
static inline void* futoin__recpool_get(futoin__recpool* p)
{
    void* rec = futoin__recpool_take(p);
    return rec ? rec : futoin__recpool_carve(p);
}

/* futoin__recpool_put() with the link offset known to the caller. */
static inline __attribute__((always_inline)) void futoin__recpool_put_at(
        futoin__recpool* p, void* rec, size_t link_off)
{
    *(void**)((char*)rec + link_off) = NULL;
    if (p->tail) {
        *(void**)((char*)p->tail + link_off) = rec;
    } else {
        p->head = rec;
    }
    p->tail = rec;
    ++p->count;
}

/* futoin__recpool_put_at() of `n` records at once, already linked from
 * `first` to `last` through the link at `link_off` (last's link is set
 * here). */
static inline __attribute__((always_inline)) void futoin__recpool_put_chain_at(
        futoin__recpool* p, void* first, void* last, size_t n, size_t link_off)
{
    *(void**)((char*)last + link_off) = NULL;
    if (p->tail) {
        *(void**)((char*)p->tail + link_off) = first;
    } else {
        p->head = first;
    }
    p->tail = last;
    p->count += n;
}

static inline void futoin__recpool_put(futoin__recpool* p, void* rec)
{
    futoin__recpool_put_at(p, rec, p->link_off);
}

/* Records handed out (taken or carved, not put back). */
static inline size_t futoin__recpool_live(const futoin__recpool* p)
{
    return p->held - p->count;
}

/* Give back the memory of blocks whose records are all free and out of
 * the quarantine. Returns the number of bytes given back. */
size_t futoin__recpool_trim(futoin__recpool* p);

/* Bytes of blocks currently carved from (not trimmed). */
size_t futoin__recpool_mapped(const futoin__recpool* p);

/* Whether the pool maps no more blocks than it keeps when every record is
 * free and trimmed (the quarantine's blocks and the one carved from). */
bool futoin__recpool_at_rest(const futoin__recpool* p);

/* The tool of any record of any pool, live, free or trimmed. Any thread:
 * the header is written once, before any record of the block exists. */
static inline struct futoin_tool* futoin__recpool_tool(const void* rec)
{
    uintptr_t b = (uintptr_t)rec & ~(uintptr_t)(FUTOIN__RECPOOL_BLOCK - 1);
    return ((const futoin__recpool_hdr*)b)->tool;
}

/* The pool of a live record (its block's header names it). */
static inline struct futoin__recpool* futoin__recpool_of(const void* rec)
{
    uintptr_t b = (uintptr_t)rec & ~(uintptr_t)(FUTOIN__RECPOOL_BLOCK - 1);
    return ((const futoin__recpool_hdr*)b)->pool;
}

#endif
