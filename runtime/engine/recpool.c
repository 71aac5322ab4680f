/*
 * Record pools: aligned blocks, FIFO free list with quarantine, trimming
 * onto a copy-on-write template (see recpool.h for why).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include "engine/recpool.h"

#include "tool/tool.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BLOCK FUTOIN__RECPOOL_BLOCK
#define LINK(p, rec) (*(void**)((char*)(rec) + (p)->link_off))

/* What a block header holds besides the tool: the block's index, so trim
 * finds a record's block without a search. A trimmed (template) block
 * says NO_INDEX; it has no record on the free list. */
typedef struct block_hdr
{
    futoin__recpool_hdr pub;
    uint32_t index;
} block_hdr;

#define NO_INDEX UINT32_MAX

static block_hdr* hdr_of(const void* rec)
{
    return (block_hdr*)((uintptr_t)rec & ~(uintptr_t)(BLOCK - 1));
}

void futoin__recpool_init(futoin__recpool* p, struct futoin_tool* tool,
                          size_t size, size_t link_off, size_t quarantine,
                          const void* tmpl)
{
    memset(p, 0, sizeof(*p));
    p->size = size;
    p->link_off = link_off;
    p->quarantine = quarantine;
    p->tool = tool;
    p->tmpl = tmpl;
    p->tmpl_fd = -1;
    /* Records start after the header, at a multiple of 64 bytes (a whole
     * cache line) or of their own size if that is smaller. */
    p->first = (sizeof(block_hdr) + 63) & ~(size_t)63;
    if (size < p->first && size >= sizeof(block_hdr)) {
        p->first = size;
    }
    p->per_block = (BLOCK - p->first) / size;
    p->cur = 0; /* == nblocks: no block yet */
}

/* A fresh BLOCK-aligned anonymous mapping, or NULL. */
static char* map_aligned(void)
{
    char* raw = mmap(NULL, 2 * BLOCK, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uintptr_t a, end;
    if (raw == MAP_FAILED) {
        return NULL;
    }
    a = ((uintptr_t)raw + BLOCK - 1) & ~(uintptr_t)(BLOCK - 1);
    end = (uintptr_t)raw + 2 * BLOCK;
    if (a > (uintptr_t)raw) {
        munmap(raw, a - (uintptr_t)raw);
    }
    if (end > a + BLOCK) {
        munmap((void*)(a + BLOCK), end - (a + BLOCK));
    }
    return (char*)a;
}

/* Make a block to carve from: a trimmed one again if there is one (its
 * address space is kept for stale handles anyway), else a new mapping. */
static bool next_block(futoin__recpool* p)
{
    futoin__recpool_block* b;
    block_hdr* h;
    /* memory grows (or a trimmed block is taken back): trim it on idle */
    futoin__tool_grew(p->tool);
    for (size_t i = 0; i < p->nblocks; ++i) {
        if (p->blocks[i].trimmed) {
            b = &p->blocks[i];
            b->trimmed = false;
            b->carved = 0;
            /* The template header says NO_INDEX; this write makes the
             * header page private again (copy on write). */
            ((block_hdr*)b->base)->index = (uint32_t)i;
            p->cur = i;
            return true;
        }
    }
    if (p->nblocks == p->cap_blocks) {
        size_t ncap = p->cap_blocks ? p->cap_blocks * 2 : 4;
        futoin__recpool_block* nb = realloc(p->blocks, ncap * sizeof(*nb));
        if (!nb) {
            return false;
        }
        p->blocks = nb;
        p->cap_blocks = ncap;
    }
    b = &p->blocks[p->nblocks];
    memset(b, 0, sizeof(*b));
    b->base = map_aligned();
    if (!b->base) {
        return false;
    }
    h = (block_hdr*)b->base;
    h->pub.tool = p->tool;
    h->pub.pool = p;
    h->index = (uint32_t)p->nblocks;
    p->cur = p->nblocks++;
    return true;
}

static void* pop_free(futoin__recpool* p)
{
    void* rec = p->head;
    p->head = LINK(p, rec);
    if (!p->head) {
        p->tail = NULL;
    }
    --p->count;
    return rec;
}

void* futoin__recpool_carve(futoin__recpool* p)
{
    futoin__recpool_block* b = p->cur < p->nblocks ? &p->blocks[p->cur] : NULL;
    if (!b || b->carved == p->per_block) {
        if (!next_block(p)) {
            /* Out of memory: cutting the quarantine short beats failing. */
            return p->count ? pop_free(p) : NULL;
        }
        b = &p->blocks[p->cur];
    }
    ++p->held;
    return b->base + p->first + (size_t)b->carved++ * p->size;
}

void futoin__recpool_close(futoin__recpool* p)
{
    for (size_t i = 0; i < p->nblocks; ++i) {
        munmap(p->blocks[i].base, BLOCK);
    }
    free(p->blocks);
    if (p->tmpl_fd >= 0) {
        close(p->tmpl_fd);
    }
    memset(p, 0, sizeof(*p));
    p->tmpl_fd = -1;
}

size_t futoin__recpool_mapped(const futoin__recpool* p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nblocks; ++i) {
        n += p->blocks[i].trimmed ? 0 : BLOCK;
    }
    return n;
}

bool futoin__recpool_at_rest(const futoin__recpool* p)
{
    size_t keep = (p->quarantine + p->per_block - 1) / p->per_block + 1;
    return futoin__recpool_mapped(p) <= keep * BLOCK;
}

/* ---- trimming ------------------------------------------------------------ */

/* The image every trimmed block shows: this pool's header and free
 * template records. Made once, in a memfd, the first time it is needed. */
static bool make_template(futoin__recpool* p)
{
    char* img;
    block_hdr* h;
    int fd;
    if (p->tmpl_fd >= 0) {
        return true;
    }
    fd = memfd_create("futoin-recpool", MFD_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    if (ftruncate(fd, (off_t)BLOCK) != 0) {
        close(fd);
        return false;
    }
    img = mmap(NULL, BLOCK, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (img == MAP_FAILED) {
        close(fd);
        return false;
    }
    h = (block_hdr*)img;
    h->pub.tool = p->tool;
    h->pub.pool = p;
    h->index = NO_INDEX;
    if (p->tmpl) {
        for (size_t i = 0; i < p->per_block; ++i) {
            memcpy(img + p->first + i * p->size, p->tmpl, p->size);
        }
    }
    munmap(img, BLOCK);
    p->tmpl_fd = fd;
    return true;
}

size_t futoin__recpool_trim(futoin__recpool* p)
{
    size_t eligible, given = 0;
    void* rec;
    void* keep_head = NULL;
    void* keep_tail = NULL;
    size_t kept = 0;

    if (p->count <= p->quarantine || !make_template(p)) {
        return 0;
    }
    /* Count, per block, the free records that left the quarantine: the
     * first count - quarantine entries of the FIFO. */
    for (size_t i = 0; i < p->nblocks; ++i) {
        p->blocks[i].scratch = 0;
    }
    eligible = p->count - p->quarantine;
    rec = p->head;
    for (size_t n = 0; n < eligible; ++n) {
        ++p->blocks[hdr_of(rec)->index].scratch;
        rec = LINK(p, rec);
    }
    /* A block whose carved records are all among them can go. */
    for (size_t i = 0; i < p->nblocks; ++i) {
        futoin__recpool_block* b = &p->blocks[i];
        if (!b->trimmed && b->carved != 0 && b->scratch == b->carved) {
            b->trimmed = true;
        }
    }
    /* Unlink their records, keeping the order of the others. */
    rec = p->head;
    while (rec) {
        void* next = LINK(p, rec);
        if (!p->blocks[hdr_of(rec)->index].trimmed) {
            LINK(p, rec) = NULL;
            if (keep_tail) {
                LINK(p, keep_tail) = rec;
            } else {
                keep_head = rec;
            }
            keep_tail = rec;
            ++kept;
        }
        rec = next;
    }
    p->head = keep_head;
    p->tail = keep_tail;
    p->held -= p->count - kept; /* the unlinked ones are held no more */
    p->count = kept;
    /* Swap their pages for the template image: nothing stays resident,
     * and every byte still reads as a free record of this pool. */
    for (size_t i = 0; i < p->nblocks; ++i) {
        futoin__recpool_block* b = &p->blocks[i];
        if (!b->trimmed || b->scratch == 0) {
            continue;
        }
        b->scratch = 0; /* trimmed in an earlier call: skip next time */
        if (mmap(b->base, BLOCK, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_FIXED, p->tmpl_fd, 0)
            == MAP_FAILED) {
            /* Still our private memory: zero it instead, then the header
             * back (records then read as all-zero free records). */
            madvise(b->base, BLOCK, MADV_DONTNEED);
            ((block_hdr*)b->base)->pub.tool = p->tool;
            ((block_hdr*)b->base)->pub.pool = p;
            ((block_hdr*)b->base)->index = NO_INDEX;
        }
        given += BLOCK;
        if (p->cur == i) {
            p->cur = p->nblocks; /* carve a new block next time */
        }
    }
    return given;
}
