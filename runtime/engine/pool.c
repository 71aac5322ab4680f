/*
 * Fixed-size record pools for the step engine. Steady-state execution
 * allocates nothing: records come back through the free lists, and blocks
 * are only added when more records are live at once than ever before.
 */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(futoin__step) % 8 == 0, "word-sized records");
_Static_assert(sizeof(futoin__root) % 8 == 0, "word-sized records");

#define LINK(pool, rec) (*(void**)((char*)(rec) + (pool)->link_off))

static void pool_init(futoin__pool* p, size_t size, size_t link_off,
                      size_t per_block, size_t quarantine)
{
    memset(p, 0, sizeof(*p));
    p->size = size;
    p->link_off = link_off;
    p->per_block = per_block;
    p->quarantine = quarantine;
}

static int pool_grow(futoin__pool* p)
{
    if (p->nblocks == p->cap_blocks) {
        size_t ncap = p->cap_blocks ? p->cap_blocks * 2 : 8;
        void** nb = realloc(p->blocks, ncap * sizeof(void*));
        if (!nb) {
            return -1;
        }
        p->blocks = nb;
        p->cap_blocks = ncap;
    }
    char* blk = calloc(p->per_block, p->size);
    if (!blk) {
        return -1;
    }
    p->blocks[p->nblocks++] = blk;
    /* New records go to the FRONT so they are used first: fresh memory
     * does not shorten the quarantine of records already retired. */
    for (size_t i = p->per_block; i-- > 0;) {
        void* rec = blk + i * p->size;
        LINK(p, rec) = p->head;
        p->head = rec;
        if (!p->tail) {
            p->tail = rec;
        }
        ++p->count;
    }
    return 0;
}

static void* pool_get(futoin__pool* p)
{
    if (p->count <= p->quarantine && pool_grow(p) != 0) {
        return NULL;
    }
    void* rec = p->head;
    p->head = LINK(p, rec);
    if (!p->head) {
        p->tail = NULL;
    }
    --p->count;
    ++p->live;
    return rec;
}

static void pool_put(futoin__pool* p, void* rec)
{
    LINK(p, rec) = NULL;
    if (p->tail) {
        LINK(p, p->tail) = rec;
    } else {
        p->head = rec;
    }
    p->tail = rec;
    ++p->count;
    --p->live;
}

static void pool_close(futoin__pool* p)
{
    for (size_t i = 0; i < p->nblocks; ++i) {
        free(p->blocks[i]);
    }
    free(p->blocks);
    memset(p, 0, sizeof(*p));
}

void futoin__engine_tool_init(futoin_tool* tool)
{
    struct futoin__engine_tool* e = futoin__eng(tool);
    memset(e, 0, sizeof(*e));
    pool_init(&e->steps, sizeof(futoin__step), offsetof(futoin__step, next),
              FUTOIN__STEPS_PER_BLOCK, FUTOIN__STEP_QUARANTINE);
    pool_init(&e->flows, sizeof(futoin__flow), offsetof(futoin__flow, next),
              64, 0);
    pool_init(&e->args, sizeof(FutoInArgs), 0, 64, 0);
    /* Roots are quarantined too: a call through a freed root is caught. */
    pool_init(&e->roots, sizeof(futoin__root), offsetof(futoin__root, vars),
              128, 256);
    e->next_root_id = 1;
}

void futoin__engine_tool_close(futoin_tool* tool)
{
    struct futoin__engine_tool* e = futoin__eng(tool);
    futoin__args_clear(&e->args_in);
    pool_close(&e->steps);
    pool_close(&e->flows);
    pool_close(&e->args);
    pool_close(&e->roots);
}

/* Records are cleared with plain word stores: for these small fixed sizes
 * GCC turned memset() into `rep stos`, whose start-up cost was a fifth of
 * a whole T1 root. The pattern must not be turned back into memset. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static inline void zero_record(void* rec, size_t size)
{
    typedef uint64_t __attribute__((may_alias)) word;
    word* w = rec;
    for (size_t i = 0; i < size / sizeof(word); ++i) {
        w[i] = 0;
    }
}

futoin__step* futoin__step_alloc(futoin_tool* tool)
{
    futoin__step* s = pool_get(&futoin__eng(tool)->steps);
    if (s) {
        uint32_t gen = s->gen + 1;
        zero_record(s, sizeof(*s));
        s->gen = gen;
    }
    return s;
}

futoin__step* futoin__step_new(futoin__flow* fl, uint8_t kind)
{
    futoin__step* s = futoin__step_alloc(fl->root->owner);
    if (s) {
        futoin__set_api(&s->bsi, &futoin__step_api);
        s->kind = kind;
        s->state = FUTOIN__S_QUEUED;
        s->flow = fl;
    }
    return s;
}

void futoin__step_release(futoin_tool* tool, futoin__step* s)
{
    if (s->flags & FUTOIN__F_OWNARGS) {
        /* successStep() values that were never consumed */
        s->flags &= (uint16_t)~FUTOIN__F_OWNARGS;
        FUTOIN__USER(s->flow->root, futoin__args_release(tool, s->data));
    }
    if (s->release) {
        void (*rel)(void*) = s->release;
        s->release = NULL;
        FUTOIN__USER(s->flow->root, rel(s->data));
    }
    if ((s->kind == FUTOIN__K_STEP || s->kind == FUTOIN__K_BODY)
        && s->u.s.cancel_release) {
        void (*rel)(void*) = s->u.s.cancel_release;
        s->u.s.cancel_release = NULL;
        FUTOIN__USER(s->flow->root, rel(s->u.s.cancel_data));
    }
    /* `flow` is kept: records are pooled per tool, so even a stale handle
     * leads back to the right tool for the misuse report. */
    s->state = FUTOIN__S_FREE;
    pool_put(&futoin__eng(tool)->steps, s);
}

futoin__step* futoin__sub_tail(futoin__step* s)
{
    struct futoin__engine_tool* e = futoin__eng(futoin__step_tool(s));
    futoin__step* t;
    if (e->app_step == s && e->app_gen == s->gen) {
        return e->app_tail;
    }
    t = s->sub_head;
    while (t && t->next) {
        t = t->next;
    }
    e->app_step = s;
    e->app_gen = s->gen;
    e->app_tail = t;
    return t;
}

void futoin__sub_append(futoin__step* s, futoin__step* n)
{
    struct futoin__engine_tool* e = futoin__eng(futoin__step_tool(s));
    futoin__step* t = futoin__sub_tail(s);
    n->next = NULL;
    if (t) {
        t->next = n;
    } else {
        s->sub_head = n;
    }
    e->app_tail = n;
}

futoin__flow* futoin__flow_alloc(futoin_tool* tool)
{
    futoin__flow* fl = pool_get(&futoin__eng(tool)->flows);
    if (fl) {
        memset(fl, 0, sizeof(*fl));
    }
    return fl;
}

void futoin__flow_release(futoin_tool* tool, futoin__flow* fl)
{
    pool_put(&futoin__eng(tool)->flows, fl);
}

FutoInArgs* futoin__args_alloc(futoin_tool* tool)
{
    FutoInArgs* a = pool_get(&futoin__eng(tool)->args);
    if (a) {
        memset(a, 0, sizeof(*a));
    }
    return a;
}

void futoin__args_release(futoin_tool* tool, FutoInArgs* a)
{
    futoin__args_clear(a);
    pool_put(&futoin__eng(tool)->args, a);
}

futoin__root* futoin__root_alloc(futoin_tool* tool)
{
    futoin__root* r = pool_get(&futoin__eng(tool)->roots);
    if (r) {
        zero_record(r, sizeof(*r));
    }
    return r;
}

void futoin__root_release(futoin_tool* tool, futoin__root* r)
{
    /* A freed root is marked so stale calls are recognised. */
    r->state = FUTOIN__R_FREED;
    pool_put(&futoin__eng(tool)->roots, r);
}
