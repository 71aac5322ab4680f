/*
 * Hooks (futoin/sys/hooks.h): a tool's table of callbacks for the events of
 * its flows. The engine tests one field per event (futoin__hooked(),
 * engine.h) and calls the functions here only when a table is set, so a
 * tool without hooks pays a predictable branch and nothing else.
 *
 * The tool keeps its own copy of the table. A hook may replace or clear it
 * while it runs; the copy it was called from is then still in use (the
 * caller reads nothing of it after the call, but a nested event might), so
 * it is retired, not freed, until no hook is on the C stack.
 */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

typedef struct futoin__hooks_copy
{
    futoin_hooks h; /* first: the tool's `hooks` points here */
    struct futoin__hooks_copy* next_retired;
} futoin__hooks_copy;

/* The size of version 1 of the table: anything smaller is refused. */
#define HOOKS_V1_SIZE (offsetof(futoin_hooks, sync_released) + sizeof(futoin_hook_cb))

static void free_retired(struct futoin__engine_tool* e)
{
    while (e->hooks_retired) {
        futoin__hooks_copy* c = e->hooks_retired;
        e->hooks_retired = c->next_retired;
        free(c);
    }
}

static bool any_hook(const futoin_hooks* h)
{
    return h->flow_started || h->flow_finished || h->step_entered
           || h->step_left || h->error_raised || h->error_handled || h->cancel
           || h->wait_begun || h->wait_ended || h->sync_acquired
           || h->sync_released;
}

FUTOIN_API int futoin_tool_set_hooks(futoin_tool* tool, const futoin_hooks* hooks)
{
    struct futoin__engine_tool* e;
    futoin__hooks_copy* c = NULL;
    futoin__hooks_copy* old;
    if (!tool) {
        return FUTOIN_EINVAL;
    }
    if (!futoin__tool_on_thread(tool)) {
        futoin__misuse_thread(tool, "futoin_tool_set_hooks()");
        return FUTOIN_EINVAL;
    }
    if (hooks && (hooks->size < HOOKS_V1_SIZE || hooks->version == 0)) {
        return FUTOIN_EVERSION;
    }
    if (hooks) {
        c = calloc(1, sizeof(*c));
        if (!c) {
            return FUTOIN_ENOMEM;
        }
        /* a newer caller's table: the members this library knows */
        memcpy(&c->h, hooks,
               hooks->size < sizeof(c->h) ? hooks->size : sizeof(c->h));
        c->h.size = sizeof(c->h);
        if (!any_hook(&c->h)) {
            free(c); /* nothing to call: as cheap as no table */
            c = NULL;
        }
    }
    e = futoin__eng(tool);
    old = (futoin__hooks_copy*)(void*)e->hooks;
    e->hooks = c ? &c->h : NULL;
    if (old) {
        if (e->hooks_depth) {
            old->next_retired = e->hooks_retired;
            e->hooks_retired = old;
        } else {
            free(old);
        }
    }
    return FUTOIN_OK;
}

/* engine_tool.c: the tool goes. */
void futoin__hooks_close(futoin_tool* tool)
{
    struct futoin__engine_tool* e = futoin__eng(tool);
    free((futoin__hooks_copy*)(void*)e->hooks);
    e->hooks = NULL;
    free_retired(e);
}

/* ---- delivering an event ------------------------------------------------ */

static futoin_hook_cb pick(const futoin_hooks* h, uint32_t type)
{
    /* read only: the member is never written through */
    futoin_hook_cb* m = futoin_hooks_member((futoin_hooks*)h, (int)type);
    return m ? *m : NULL;
}

/* An event record for root `r` with the fields every event has. */
static void event_init(futoin_hook_event* ev, uint32_t type, futoin__root* r)
{
    memset(ev, 0, sizeof(*ev));
    ev->size = sizeof(*ev);
    ev->type = type;
    ev->root = &r->bsi;
    ev->root_id = atomic_load_explicit(&r->id, memory_order_relaxed);
    ev->now = futoin_tool_now(futoin__root_tool(r));
}

/* Call the hook of `ev->type`, if the table (as it is now) has one. The
 * root is held (in_cb) so that nothing a hook does can free it under us. */
static void deliver(futoin__root* r, futoin_hook_event* ev)
{
    struct futoin__engine_tool* e = futoin__eng(futoin__root_tool(r));
    const futoin_hooks* h = e->hooks;
    futoin_hook_cb cb = h ? pick(h, ev->type) : NULL;
    if (!cb) {
        return;
    }
    ++e->hooks_depth;
    FUTOIN__USER(r, cb(h->data, ev));
    if (--e->hooks_depth == 0 && e->hooks_retired) {
        free_retired(e);
    }
}

static bool wanted(futoin_tool* tool, uint32_t type)
{
    const futoin_hooks* h = futoin__eng(tool)->hooks;
    return h && pick(h, type);
}

/* ---- the events ------------------------------------------------------------ */

void futoin__hook_root(futoin__root* r, uint32_t type, int outcome,
                       const char* code)
{
    futoin_hook_event ev;
    if (!wanted(futoin__root_tool(r), type)) {
        return;
    }
    event_init(&ev, type, r);
    ev.outcome = outcome;
    ev.code = code;
    deliver(r, &ev);
}

static void step_event(futoin__step* s, uint32_t type)
{
    futoin_hook_event ev;
    futoin_frame_origin o;
    futoin__root* r = s->flow->root;
    if (!wanted(futoin__root_tool(r), type)) {
        return;
    }
    event_init(&ev, type, r);
    ev.step = &s->bsi;
    futoin__step_origin(s, &o);
    ev.origin = &o;
    deliver(r, &ev);
}

static void sync_event(futoin__step* y, futoin__step* s, uint32_t type)
{
    futoin_hook_event ev;
    futoin__root* r = y->flow->root;
    if (!wanted(futoin__root_tool(r), type)) {
        return;
    }
    event_init(&ev, type, r);
    ev.step = &(s ? s : y)->bsi;
    ev.sync = y->u.y.sync;
    deliver(r, &ev);
}

void futoin__hook_enter(futoin__step* s)
{
    if ((s->flags & FUTOIN__F_STASH) && s->parent
        && s->parent->kind == FUTOIN__K_SYNC) {
        s->parent->flags |= FUTOIN__F_HELD;
        sync_event(s->parent, s, FUTOIN_HOOK_SYNC_ACQUIRED);
    }
    if (futoin__frame_shown(s)) {
        step_event(s, FUTOIN_HOOK_STEP_ENTERED);
    }
}

void futoin__hook_pop(futoin__step* s, bool cancel)
{
    /* a parallel() frame "waits" for its branches: not a wait of its own */
    if (cancel && s->state == FUTOIN__S_WAIT && s->kind != FUTOIN__K_PARALLEL) {
        futoin__hook_wait(s, FUTOIN_HOOK_WAIT_ENDED);
    }
    if (s->kind == FUTOIN__K_SYNC && (s->flags & FUTOIN__F_LOCKED)
        && (s->flags & FUTOIN__F_HELD)) {
        sync_event(s, NULL, FUTOIN_HOOK_SYNC_RELEASED);
    }
    if (futoin__frame_shown(s)) {
        step_event(s, FUTOIN_HOOK_STEP_LEFT);
    }
}

void futoin__hook_unlock(futoin__step* y)
{
    if (y->flags & FUTOIN__F_HELD) {
        sync_event(y, NULL, FUTOIN_HOOK_SYNC_RELEASED);
    }
}

int futoin__wait_kind(futoin__step* s, futoin_frame_origin* origin,
                      FutoInSync** sync, const char** language, uint64_t* due)
{
    futoin__step* p = s->parent;
    futoin__step_origin(s, origin);
    *sync = NULL;
    *language = NULL;
    *due = 0;
    if ((s->flags & FUTOIN__F_TIMEOUT) && FUTOIN__RARE(s, timer)) {
        *due = s->rare->timer->due;
    }
    /* A step a sync object's lock() added in front of the guarded one:
     * its queue (sync/queue.c); the guarded step itself is F_STASH. */
    if (s->kind == FUTOIN__K_STEP && p && p->kind == FUTOIN__K_SYNC
        && !(s->flags & FUTOIN__F_STASH)) {
        *sync = p->u.y.sync;
        return FUTOIN_WAIT_SYNC;
    }
    /* only its own timeout can end it, whatever its language */
    if ((s->flags & FUTOIN__F_TIMEOUT)
        && !(s->flags & (FUTOIN__F_WAITEXT | FUTOIN__F_CANCEL))) {
        return FUTOIN_WAIT_TIMER;
    }
    /* a step of another language waits for that language's runtime */
    if (origin->language && strcmp(origin->language, "c") != 0) {
        *language = origin->language;
        return FUTOIN_WAIT_FOREIGN;
    }
    return FUTOIN_WAIT_EXTERNAL;
}

void futoin__hook_wait(futoin__step* s, uint32_t type)
{
    futoin_hook_event ev;
    futoin_frame_origin o;
    FutoInSync* sync;
    const char* language;
    uint64_t due;
    futoin__root* r = s->flow->root;
    if (!wanted(futoin__root_tool(r), type)) {
        return;
    }
    event_init(&ev, type, r);
    ev.step = &s->bsi;
    ev.wait = futoin__wait_kind(s, &o, &sync, &language, &due);
    ev.origin = &o;
    ev.sync = sync;
    ev.language = language;
    ev.due = due;
    deliver(r, &ev);
}

void futoin__hook_error(futoin__root* r, futoin__step* s, uint32_t type,
                        const char* code, const char* info)
{
    futoin_hook_event ev;
    if (futoin__is_loop_code(futoin__static_code(code))
        || !wanted(futoin__root_tool(r), type)) {
        return; /* a break or continue is not an error */
    }
    event_init(&ev, type, r);
    ev.step = s ? &s->bsi : NULL;
    ev.code = code;
    ev.info = info;
    deliver(r, &ev);
}
