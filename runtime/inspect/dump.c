/*
 * The live dump (futoin_tool_dump(), futoin/async.h): a text report of every
 * live root of a tool. It reads the step engine's records and the sync
 * objects' queues and changes nothing, so it sits above both layers.
 *
 * The tool keeps no list of its live roots (a list would cost every root
 * two pointer updates): the dump walks the root record pool instead, whose
 * blocks stay mapped while the tool lives (engine/recpool.h). A carved
 * record is live unless it is marked freed.
 */
#include "engine/engine.h"
#include "sync/sync.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int by_id(const void* a, const void* b)
{
    ptrdiff_t x = atomic_load_explicit(&(*(futoin__root* const*)a)->id,
                                       memory_order_relaxed);
    ptrdiff_t y = atomic_load_explicit(&(*(futoin__root* const*)b)->id,
                                       memory_order_relaxed);
    return (x > y) - (x < y);
}

static int by_name(const void* a, const void* b)
{
    return strcmp((*(futoin__statevar* const*)a)->name,
                  (*(futoin__statevar* const*)b)->name);
}

/* The live roots of the pool, in id order (malloc'd; NULL when none or out
 * of memory, *n then says which: 0 or the count). */
static futoin__root** live_roots(futoin__recpool* p, size_t* n)
{
    size_t cap = 0, len = 0;
    futoin__root** all = NULL;
    for (size_t b = 0; b < p->nblocks; ++b) {
        const futoin__recpool_block* blk = &p->blocks[b];
        if (blk->trimmed) {
            continue;
        }
        for (uint32_t i = 0; i < blk->carved; ++i) {
            futoin__root* r = (futoin__root*)(void*)(blk->base + p->first
                                                     + (size_t)i * p->size);
            if (r->state == FUTOIN__R_FREED) {
                continue;
            }
            if (len == cap) {
                size_t ncap = cap ? cap * 2 : 16;
                futoin__root** na = realloc(all, ncap * sizeof(*na));
                if (!na) {
                    free(all);
                    *n = len + 1;
                    return NULL;
                }
                all = na;
                cap = ncap;
            }
            all[len++] = r;
        }
    }
    if (len) {
        qsort(all, len, sizeof(*all), by_id);
    }
    *n = len;
    return all;
}

typedef struct dump_ctx
{
    FILE* out;
    uint64_t now;
    ptrdiff_t id;
    unsigned next_flow; /* the number the next flow listed gets */
} dump_ctx;

/* "<language> <function> [(<file>[:<line>])]" and the line's end. */
static void print_origin(dump_ctx* c, const futoin_frame_origin* o)
{
    fprintf(c->out, "%s %s", o->language ? o->language : "?",
            o->function ? o->function : "<anonymous>");
    if (o->file && o->line) {
        fprintf(c->out, " (%s:%" PRIu32 ")", o->file, o->line);
    } else if (o->file) {
        fprintf(c->out, " (%s)", o->file);
    }
    fputc('\n', c->out);
}

static void print_frame(dump_ctx* c, unsigned flow, unsigned i, futoin__step* s)
{
    futoin_frame_origin o;
    futoin__step_origin(s, &o);
    fprintf(c->out, "root=%td flow=%u at=%u ", c->id, flow, i);
    print_origin(c, &o);
}

/* The async stack from `top` down, as an error there would record it. */
static void print_stack(dump_ctx* c, unsigned flow, futoin__step* top)
{
    enum { INNER = FUTOIN_ASYNC_STACK_INNER, OUTER = FUTOIN_ASYNC_STACK_OUTER };
    unsigned total = 0, i = 0;
    for (futoin__step* s = top; s; s = futoin__frame_below(s)) {
        total += futoin__frame_shown(s);
    }
    for (futoin__step* s = top; s; s = futoin__frame_below(s)) {
        if (!futoin__frame_shown(s)) {
            continue;
        }
        if (total <= INNER + OUTER || i < INNER || i >= total - OUTER) {
            print_frame(c, flow, i, s);
        } else if (i == INNER) {
            fprintf(c->out, "root=%td flow=%u elided=%u\n", c->id, flow,
                    total - INNER - OUTER);
        }
        ++i;
    }
}

static void print_wait(dump_ctx* c, unsigned flow, futoin__step* s)
{
    futoin_frame_origin o;
    FutoInSync* sync;
    const char* language;
    uint64_t due;
    int kind = futoin__wait_kind(s, &o, &sync, &language, &due);
    uint64_t since = s->wait_since;
    fprintf(c->out, "root=%td flow=%u wait=%s since=%" PRIu64 " waited=%" PRIu64,
            c->id, flow, futoin_wait_kind_name(kind), since, c->now > since ? c->now - since : 0);
    if (due) {
        fprintf(c->out, " due=%" PRIu64, due);
    }
    if (kind == FUTOIN_WAIT_SYNC) {
        const char* name = futoin__sync_name(sync);
        size_t place, len;
        fprintf(c->out, " object=%s", name ? name : "sync");
        if (futoin__sync_wait_place(&s->bsi, FUTOIN__RARE(s, cancel),
                                    FUTOIN__RARE(s, cancel_data),
                                    &place, &len)) {
            fprintf(c->out, " place=%zu queued=%zu", place, len);
        }
    } else if (kind == FUTOIN_WAIT_FOREIGN) {
        fprintf(c->out, " language=%s", language);
    }
    fputc('\n', c->out);
    if (kind == FUTOIN_WAIT_SYNC) {
        /* the step the object guards: the guard frame holds its class and
         * function (engine/stack.c) */
        futoin__step_origin(s->parent, &o);
        fprintf(c->out, "root=%td flow=%u section=", c->id, flow);
        print_origin(c, &o);
    }
}

static unsigned count_flows(futoin__flow* fl)
{
    unsigned n = 1;
    futoin__step* top = fl->top;
    if (top && top->kind == FUTOIN__K_PARALLEL) {
        for (futoin__flow* b = top->u.p.flows; b; b = b->next) {
            n += count_flows(b);
        }
    }
    return n;
}

/* Flow `fl` (number c->next_flow) and its running branches, depth first. */
static void print_flow(dump_ctx* c, futoin__flow* fl, int parent)
{
    unsigned me = c->next_flow++;
    futoin__step* top = fl->top;
    const char* state;
    /* a parallel() frame waits (S_WAIT) for its branch flows */
    bool branches = top && top->kind == FUTOIN__K_PARALLEL
                    && top->state == FUTOIN__S_WAIT;
    bool waits = top && top->state == FUTOIN__S_WAIT && !branches;
    switch (fl->state) {
    case FUTOIN__FL_RUNNING:
        state = "running";
        break;
    case FUTOIN__FL_SCHED:
        state = "ready";
        break;
    case FUTOIN__FL_DONE:
        state = "idle";
        break;
    default:
        state = waits ? "waiting" : branches ? "branches" : "idle";
        break;
    }
    fprintf(c->out, "root=%td flow=%u", c->id, me);
    if (parent >= 0) {
        fprintf(c->out, " parent=%d", parent);
    }
    fprintf(c->out, " state=%s\n", state);
    if (fl->state == FUTOIN__FL_IDLE && waits) {
        print_wait(c, me, top);
    }
    if (top && fl->state != FUTOIN__FL_DONE) {
        print_stack(c, me, top);
    }
    if (branches) {
        for (futoin__flow* b = top->u.p.flows; b; b = b->next) {
            print_flow(c, b, (int)me);
        }
    }
}

static void print_root(dump_ctx* c, futoin__root* r)
{
    static const char* const states[] = {"new", "running", "done", "freed"};
    size_t nkeys = 0;
    futoin__statevar** keys;
    c->id = atomic_load_explicit(&r->id, memory_order_relaxed);
    c->next_flow = 0;
    for (futoin__statevar* v = FUTOIN__RARE(r, vars); v; v = v->next) {
        ++nkeys;
    }
    fprintf(c->out, "root=%td state=%s flows=%u keys=%zu\n", c->id,
            states[r->state], count_flows(&r->main), nkeys);
    print_flow(c, &r->main, -1);
    keys = nkeys ? malloc(nkeys * sizeof(*keys)) : NULL;
    if (keys) {
        size_t i = 0;
        for (futoin__statevar* v = FUTOIN__RARE(r, vars); v; v = v->next) {
            keys[i++] = v;
        }
        qsort(keys, nkeys, sizeof(*keys), by_name);
        for (i = 0; i < nkeys; ++i) {
            fprintf(c->out, "root=%td key=%s\n", c->id, keys[i]->name);
        }
        free(keys);
    }
}

FUTOIN_API int futoin_tool_dump(futoin_tool* tool, FILE* out)
{
    dump_ctx c;
    futoin__root** roots;
    size_t n;
    if (!tool || !out) {
        return FUTOIN_EINVAL;
    }
    if (!futoin__tool_on_thread(tool)) {
        futoin__misuse_thread(tool, "futoin_tool_dump()");
        return FUTOIN_EINVAL;
    }
    roots = live_roots(&futoin__eng(tool)->roots, &n);
    if (!roots && n) {
        return FUTOIN_ENOMEM;
    }
    c.out = out;
    c.now = futoin_tool_now(tool);
    fprintf(out, "futoin-dump version=1 now=%" PRIu64 " roots=%zu\n", c.now, n);
    for (size_t i = 0; i < n; ++i) {
        print_root(&c, roots[i]);
    }
    fprintf(out, "end roots=%zu\n", n);
    free(roots);
    return (int)n;
}
