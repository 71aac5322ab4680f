/*
 * Root AsyncSteps: the object a user creates, fills with level-0 steps,
 * executes, cancels and frees. Its table allows only what makes sense on a
 * root; execution-only calls are reported as misuse.
 *
 * cancel() and free() may be called from inside one of the root's own
 * callbacks. Doing the work there would pull frames out from under the
 * running callback, so it is deferred (root->pending) until the engine is
 * back in control and no user callback of this root is on the C stack
 * (futoin__root_settle).
 */
#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lookup -------------------------------------------------------------- */

static bool is_root(FutoInAsyncSteps* bsi)
{
    return bsi->api == &futoin__root_api;
}

/* The live root behind any of our handles, or NULL if it is stale. */
futoin__root* futoin__root_of(FutoInAsyncSteps* bsi)
{
    if (is_root(bsi)) {
        futoin__root* r = futoin__as_root(bsi);
        return r->state != FUTOIN__R_FREED ? r : NULL;
    }
    futoin__step* s = futoin__as_step(bsi);
    if (s->state == FUTOIN__S_FREE || !s->flow) {
        return NULL;
    }
    return s->flow->root;
}

futoin__flow* futoin__flow_of(FutoInAsyncSteps* bsi)
{
    futoin__step* s;
    if (!bsi || (bsi->api != &futoin__step_api && bsi->api != &futoin__par_api)) {
        return NULL;
    }
    s = futoin__as_step(bsi);
    if (s->state == FUTOIN__S_FREE || s->state == FUTOIN__S_QUEUED) {
        return NULL;
    }
    return s->flow;
}

/* The tool of any of our handles, even a stale one: every record lives in
 * a block of its tool's pools whose header names the tool (recpool.h).
 * Safe from any thread. */
static futoin_tool* tool_of(FutoInAsyncSteps* bsi)
{
    return bsi ? futoin__recpool_tool(bsi) : NULL;
}

/* futoin__tool_misuse() prints to stderr when no tool is known. */
static void report(FutoInAsyncSteps* bsi, const char* msg)
{
    if (!bsi) {
        futoin__misuse_null(msg);
        return;
    }
    futoin__tool_misuse(tool_of(bsi), msg);
}

FUTOIN_API futoin_tool* futoin_async_tool(FutoInAsyncSteps* bsi)
{
    if (!bsi || !bsi->api) {
        return NULL;
    }
    if (bsi->api != &futoin__root_api && bsi->api != &futoin__step_api
        && bsi->api != &futoin__par_api) {
        return NULL;
    }
    return tool_of(bsi);
}

/* ---- slots shared by every table ----------------------------------------- */

ptrdiff_t futoin__common_root_id(FutoInAsyncSteps* bsi)
{
    futoin__root* r;
    if (!futoin__on_loop(bsi, "rootId()")) {
        return 0;
    }
    r = futoin__root_of(bsi);
    if (!r) {
        report(bsi, "rootId() through a stale handle");
        return 0;
    }
    return atomic_load_explicit(&r->id, memory_order_relaxed);
}

FutoInAsyncSteps* futoin__common_new_instance(FutoInAsyncSteps* bsi)
{
    futoin_tool* tool;
    if (!futoin__on_loop(bsi, "newInstance()")) {
        return NULL;
    }
    futoin__root* r;
    FutoInAsyncSteps* n;
    tool = tool_of(bsi);
    if (!(r = futoin__root_of(bsi))) {
        report(bsi, "newInstance() through a stale handle");
        return NULL;
    }
    n = futoin_root_new(tool);
    if (n && FUTOIN__UNLIKELY(FUTOIN__TRACED(r))) {
        futoin__trace_inherit(futoin__as_root(n), bsi, r);
    }
    return n;
}

FutoInHandle futoin__common_sched_immediate(FutoInAsyncSteps* bsi, void* data,
                                            void (*cb)(void* data))
{
    FutoInHandle none = {0, 0, 0};
    futoin_tool* tool = tool_of(bsi);
    if (!bsi) {
        futoin__misuse_null("sched_immediate()");
        return none;
    }
    if (!tool || !cb) {
        report(bsi, "sched_immediate(): stale handle or NULL callback");
        return none;
    }
    return futoin_tool_immediate(tool, cb, data);
}

FutoInHandle futoin__common_sched_deferred(FutoInAsyncSteps* bsi,
                                           uint32_t delay_ms, void* data,
                                           void (*cb)(void* data))
{
    FutoInHandle none = {0, 0, 0};
    futoin_tool* tool;
    if (!futoin__on_loop(bsi, "sched_deferred()")) {
        return none;
    }
    tool = tool_of(bsi);
    if (!tool || !cb) {
        report(bsi, "sched_deferred(): stale handle or NULL callback");
        return none;
    }
    return futoin_tool_deferred(tool, delay_ms, cb, data);
}

void futoin__common_sched_cancel(FutoInAsyncSteps* bsi, FutoInHandle* h)
{
    futoin_tool* tool = tool_of(bsi);
    if (futoin__on_loop(bsi, "sched_cancel()") && h) {
        futoin_tool_cancel(tool, h);
    }
}

int futoin__common_sched_is_valid(FutoInAsyncSteps* bsi, FutoInHandle* h)
{
    futoin_tool* tool = tool_of(bsi);
    return (futoin__on_loop(bsi, "sched_is_valid()") && h)
                   ? futoin_tool_is_valid(tool, h)
                   : 0;
}

int futoin__common_is_same_thread(FutoInAsyncSteps* bsi)
{
    futoin_tool* tool = tool_of(bsi);
    if (!bsi) {
        futoin__misuse_null("is_same_thread()");
        return 0;
    }
    return tool ? futoin_tool_is_same_thread(tool) : 0;
}

/* ---- life cycle ---------------------------------------------------------- */

FUTOIN_API FutoInAsyncSteps* futoin_root_new(futoin_tool* tool)
{
    if (!tool) {
        return NULL;
    }
    if (!futoin__tool_on_thread(tool)) {
        futoin__misuse_thread(tool, "futoin_root_new()");
        return NULL;
    }
    return futoin__root_alloc(tool); /* pool.c: a jump */
}

/* Release what execute() was given (ext: execute with a release hook). */
void futoin__root_drop_unhandled(futoin__root* r)
{
    futoin__root_rare* x = r->rare;
    void (*rel)(void*);
    if (!x) {
        return;
    }
    rel = x->unhandled_release;
    x->unhandled_release = NULL;
    x->unhandled = NULL;
    if (rel) {
        FUTOIN__USER(r, rel(x->unhandled_data));
    }
    x->unhandled_data = NULL;
}

/* Replace the root's exception object (moves `v`; NULL just clears). */
void futoin__root_set_exception(futoin__root* r, FutoInBinaryValue* v)
{
    futoin__root_rare* x = r->rare;
    if (x && x->last_exc) {
        FUTOIN__USER(r, futoin_reset_binval(x->last_exc));
        free(x->last_exc);
        x->last_exc = NULL;
    }
    if (v && v->type) {
        x = futoin__root_rare_get(r);
        if (x && (x->last_exc = malloc(sizeof(*x->last_exc))) != NULL) {
            *x->last_exc = *v;
        } else {
            futoin_reset_binval(v);
        }
        memset(v, 0, sizeof(*v));
    }
}

void futoin__root_attach_exception(futoin__root* r, FutoInAsyncSteps* bsi,
                                   FutoInBinaryValue* v)
{
    /* A binding attaches its exception right before handle_error() (the
     * error is still to come) or right after a completion it made with
     * try_error() (the step has raised it). */
    bool raised = !is_root(bsi)
                  && (futoin__as_step(bsi)->flags & FUTOIN__F_ERROR) != 0;
    futoin__root_set_exception(r, v);
    if (r->rare) {
        r->rare->exc_pending = r->rare->last_exc != NULL && !raised;
    }
}

/* Cancel a running root now: every flow unwinds innermost first. */
static void root_do_cancel(futoin__root* r)
{
    r->pending &= (uint8_t)~FUTOIN__P_CANCEL;
    if (r->state != FUTOIN__R_RUNNING) {
        return;
    }
    futoin__tool_active(futoin__root_tool(r)); /* frees records: trimming on idle */
    ++r->in_cb; /* cancel handlers may call cancel()/free() again */
    if (futoin__hooked(futoin__root_tool(r))) {
        futoin__hook_root(r, FUTOIN_HOOK_CANCEL, 0, NULL);
    }
    futoin__flow_cancel(&r->main);
    if (futoin__hooked(futoin__root_tool(r))) {
        futoin__hook_root(r, FUTOIN_HOOK_FLOW_FINISHED, FUTOIN_HOOK_CANCELLED,
                          NULL);
    }
    --r->in_cb;
    r->state = FUTOIN__R_DONE;
    futoin__tool_unref(futoin__root_tool(r));
}

static FUTOIN__NOINLINE void root_do_free_all(futoin__root* r)
{
    futoin_tool* tool = futoin__root_tool(r);
    futoin__tool_active(tool); /* frees records: trimming on idle */
    root_do_cancel(r);
    /* Each part is released only if it is there: a root that ran its
     * steps to the end without state, stack() memory, an error or an
     * execute() release hook (the common case) calls nothing here. */
    futoin__root_rare* x = r->rare;
    if (r->main.head || (x && (x->vars || x->allocs))) {
        ++r->in_cb;
        futoin__queue_free(tool, r->main.head);
        if (x && x->vars) {
            futoin__vars_free(r);
        }
        if (x && x->allocs) {
            futoin__alloc_free_all(&x->allocs);
        }
        --r->in_cb;
    }
    r->main.head = NULL;
    /* The rare record of a root is kept as long as the root: no callback
     * above frees it (root_release() does, below). */
    if (x) {
        if (x->unhandled_release || x->unhandled || x->unhandled_data) {
            futoin__root_drop_unhandled(r);
        }
        if (x->last_exc) {
            futoin__root_set_exception(r, NULL);
        }
        if (x->stack) {
            futoin__stack_free(r);
        }
        if (x->error_code || x->error_info) {
            futoin__root_clear_error(r);
        }
        if (x->trace) {
            futoin__trace_free(r);
        }
    }
    r->main.state = FUTOIN__FL_DONE;
    /* Calls other threads posted before this free are dropped when they
     * arrive; calls made after it are misuse (futoin__root_op_run). */
    atomic_store_explicit(
            &r->id, -atomic_load_explicit(&r->id, memory_order_relaxed),
            memory_order_release);
    futoin__root_release(tool, r);
}

/* The usual root at its free ran to its end (or never ran) and holds
 * nothing: no queued steps, state, stack() memory, execute() hook,
 * exception, async stack, error or trace context. What root_do_free_all()
 * does for it comes down to these stores, with no call but a rare last one
 * (arming the idle trim), so no register needs saving. */
static inline __attribute__((always_inline)) void root_free_plain(
        futoin_tool* tool, futoin__root* r)
{
    r->pending &= (uint8_t)~FUTOIN__P_CANCEL; /* as root_do_cancel() */
    r->main.state = FUTOIN__FL_DONE;
    atomic_store_explicit(
            &r->id, -atomic_load_explicit(&r->id, memory_order_relaxed),
            memory_order_release);
    r->state = FUTOIN__R_FREED; /* futoin__root_release() */
    futoin__recpool_put_at(&futoin__eng(tool)->roots, r,
                           offsetof(futoin__root, main.top)); /* pool.c */
    futoin__tool_active(tool); /* frees records: trimming on idle */
}

static void root_do_free(futoin__root* r)
{
    if (r->state == FUTOIN__R_RUNNING || r->main.head || r->rare) {
        root_do_free_all(r);
        return;
    }
    root_free_plain(futoin__root_tool(r), r);
}

void futoin__root_settle(futoin__root* r)
{
    if (r->pending & FUTOIN__P_FREE) {
        root_do_free(r);
    } else if (r->pending & FUTOIN__P_CANCEL) {
        root_do_cancel(r);
        if (r->pending & FUTOIN__P_FREE) {
            root_do_free(r);
        }
    }
}

/* ---- the root table ------------------------------------------------------ */

/* The root behind `bsi` unless it was freed (reported). On the loop thread
 * only: live_root() checks that first; execute/cancel/free, which may come
 * from any thread, checked it while deciding whether to post. */
static FUTOIN__NOINLINE void report_freed(FutoInAsyncSteps* bsi,
                                          const char* what)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "%s on a root that was freed", what);
    report(bsi, msg);
}

static futoin__root* not_freed(FutoInAsyncSteps* bsi, const char* what)
{
    futoin__root* r = futoin__as_root(bsi);
    if (FUTOIN__UNLIKELY(r->state == FUTOIN__R_FREED)) {
        report_freed(bsi, what);
        return NULL;
    }
    return r;
}

static futoin__root* live_root(FutoInAsyncSteps* bsi, const char* what)
{
    return futoin__on_loop(bsi, what) ? not_freed(bsi, what) : NULL;
}

/* Steps are added to a root before execute(), or again once its flow has
 * finished or was cancelled (the root can then be executed again). While
 * it runs, a top-level add would race with its own flow: it is reported and
 * raised as InternalError into the flow, as the reference does. */
static FUTOIN__NOINLINE void add_while_running(FutoInAsyncSteps* bsi,
                                               futoin__root* r,
                                               const char* what)
{
    char msg[128];
    futoin__step* top = r->main.top;
    snprintf(msg, sizeof(msg), "%s on a root while it runs", what);
    report(bsi, msg);
    /* From inside the callback of the root's own running step: that step
     * fails, as add() throwing InternalError out of it does in the
     * reference. Raised "at whatever is on top" instead, the error would
     * find no frame once a level-0 step returned and popped itself, and the
     * flow would go on as if nothing had happened. */
    if (top && top->kind == FUTOIN__K_STEP && top->state == FUTOIN__S_EXEC
        && r->main.state == FUTOIN__FL_RUNNING) {
        futoin__step_error(top, FUTOIN_ERR_INTERNAL_ERROR, msg);
        return;
    }
    futoin__root_set_error(r, FUTOIN_ERR_INTERNAL_ERROR, msg);
    if (futoin__hooked(futoin__root_tool(r))) {
        futoin__hook_error(r, NULL, FUTOIN_HOOK_ERROR_RAISED,
                           FUTOIN_ERR_INTERNAL_ERROR, msg);
    }
    futoin__raise_top(&r->main, FUTOIN_ERR_INTERNAL_ERROR);
}

/* Append step `s` to the level-0 queue of root `r`, which is not running
 * (futoin__root_tail_in: the cursor; e: the engine state of r's tool). */
static inline __attribute__((always_inline)) void root_append(
        struct futoin__engine_tool* e, futoin__root* r, futoin__step* s)
{
    if (e->l0_flow == &r->main && r->main.head) {
        e->l0_tail->next = s; /* the usual: the root added to just before */
    } else {
        futoin__step* t = futoin__root_tail_in(e, r);
        if (t) {
            t->next = s;
        } else {
            r->main.head = s;
        }
        e->l0_flow = &r->main;
    }
    e->l0_tail = s;
}

/* Queue a new step of `kind` on live root `r` (on its loop thread). */
static inline futoin__step* root_queue_step(FutoInAsyncSteps* bsi,
                                            futoin__root* r, const char* what,
                                            uint8_t kind)
{
    futoin__step* s;
    if (FUTOIN__UNLIKELY(r->state == FUTOIN__R_RUNNING)) {
        add_while_running(bsi, r, what);
        return NULL;
    }
    r->state = FUTOIN__R_NEW;
    s = futoin__step_new(&r->main, kind);
    if (!s) {
        report(bsi, "out of memory");
        return NULL;
    }
    root_append(futoin__eng(futoin__root_tool(r)), r, s);
    return s;
}

static futoin__step* root_new_step(FutoInAsyncSteps* bsi, const char* what,
                                   uint8_t kind)
{
    futoin__root* r = live_root(bsi, what);
    return r ? root_queue_step(bsi, r, what, kind) : NULL;
}

/* add() once `bsi` and `f` were checked (on the loop thread). */
static inline __attribute__((always_inline)) futoin__step* root_add_step(
        FutoInAsyncSteps* bsi, void* data, FutoInAsyncSteps_execute_callback f,
        FutoInAsyncSteps_error_callback eh)
{
    futoin__root* r = not_freed(bsi, "add()");
    futoin__step* s = r ? root_queue_step(bsi, r, "add()", FUTOIN__K_STEP)
                        : NULL;
    if (s) {
        s->f = f;
        s->eh = eh;
        s->data = data;
    }
    return s;
}

futoin__step* futoin__root_add(FutoInAsyncSteps* bsi, void* data,
                               FutoInAsyncSteps_execute_callback f,
                               FutoInAsyncSteps_error_callback eh)
{
    if (!f) {
        report(bsi, "add(): the execute callback is NULL");
        return NULL;
    }
    return root_add_step(bsi, data, f, eh);
}

/* The release of a classed step's data that was refused. */
static FUTOIN__NOINLINE void release_refused(void* data,
                                             const futoin_step_class* cls)
{
    if (cls && cls->release) {
        cls->release(data);
    }
}

void futoin__root_add_classed(FutoInAsyncSteps* bsi, void* data,
                              FutoInAsyncSteps_execute_callback f,
                              FutoInAsyncSteps_error_callback eh,
                              const futoin_step_class* cls)
{
    futoin__root* r = futoin__as_root(bsi);
    futoin__step* s;
    /* The usual case: a root being filled (new, or finished and filled
     * again) and a callback; the record comes with f, eh and data set
     * (futoin__step_new_plain) and is appended last. What is refused is
     * reported by futoin__root_add(), as add() reports it. */
    if (FUTOIN__UNLIKELY(!f || r->state == FUTOIN__R_FREED
                         || r->state == FUTOIN__R_RUNNING)) {
        s = futoin__root_add(bsi, data, f, eh);
    } else {
        struct futoin__engine_tool* e = futoin__eng(futoin__root_tool(r));
        r->state = FUTOIN__R_NEW;
        s = futoin__step_new_plain_in(e, &r->main, f, eh, data);
        if (FUTOIN__UNLIKELY(!s)) {
            report(bsi, "out of memory");
        } else {
            root_append(e, r, s);
        }
    }
    if (FUTOIN__UNLIKELY(!s)) {
        release_refused(data, cls);
    } else if (cls) {
        s->rel.cls = cls;
        s->flags |= FUTOIN__F_CLASS;
    }
}

/* add() as it was before its fast path (root_add): every check, and a
 * record carved when the free list holds no more than its quarantine. */
static FUTOIN__NOINLINE void root_add_slow(FutoInAsyncSteps* bsi, void* data,
                                           FutoInAsyncSteps_execute_callback f,
                                           FutoInAsyncSteps_error_callback eh)
{
    if (!bsi) {
        futoin__misuse_null("add()");
        return;
    }
    if (!f) {
        report(bsi, "add(): the execute callback is NULL");
        return;
    }
    if (futoin__on_loop(bsi, "add()")) {
        root_add_step(bsi, data, f, eh);
    }
}

/*
 * add() of a new or finished root on its loop thread, a record on the
 * free list: what root_add_slow() would do, with no call, so no register
 * is saved around one (issue 22: a root of 128 queued steps pays this 128
 * times). Anything else goes there.
 */
static void root_add(FutoInAsyncSteps* bsi, void* data,
                     FutoInAsyncSteps_execute_callback f,
                     FutoInAsyncSteps_error_callback eh)
{
    futoin__root* r = futoin__as_root(bsi);
    futoin_tool* tool;
    futoin__step* s;
    if (FUTOIN__UNLIKELY(!bsi || !f)) {
        goto slow;
    }
    tool = futoin__recpool_tool(bsi);
    if (FUTOIN__UNLIKELY(!futoin__tool_on_thread(tool))
        || (r->state != FUTOIN__R_NEW && r->state != FUTOIN__R_DONE)) {
        goto slow;
    }
    s = futoin__step_take_plain(futoin__eng(tool), &r->main, f, eh, data);
    if (FUTOIN__UNLIKELY(!s)) {
        goto slow;
    }
    r->state = FUTOIN__R_NEW;
    root_append(futoin__eng(tool), r, s);
    return;
slow:
    root_add_slow(bsi, data, f, eh);
}

static FutoInAsyncSteps* root_parallel(FutoInAsyncSteps* bsi, void* data,
                                       FutoInAsyncSteps_error_callback eh)
{
    futoin__step* p = root_new_step(bsi, "parallel()", FUTOIN__K_PARALLEL);
    if (!p) {
        return NULL;
    }
    futoin__set_api(&p->bsi, &futoin__par_api);
    p->eh = eh;
    p->data = data;
    return &p->bsi;
}

static void root_loop(FutoInAsyncSteps* bsi, void* data,
                      void (*f)(FutoInAsyncSteps* bsi, void* data),
                      const char* label)
{
    futoin__step* l;
    if (!bsi) {
        futoin__misuse_null("loop()");
        return;
    }
    if (!f) {
        report(bsi, "loop(): the body callback is NULL");
        return;
    }
    l = root_new_step(bsi, "loop()", FUTOIN__K_LOOP);
    if (l) {
        if (!futoin__loop_add(l, data, label)) {
            report(bsi, "out of memory");
        }
        l->u.l.fn.loop = f;
    }
}

static void root_repeat(FutoInAsyncSteps* bsi, void* data, size_t count,
                        void (*f)(FutoInAsyncSteps* bsi, void* data, size_t i),
                        const char* label)
{
    futoin__step* l;
    if (!bsi) {
        futoin__misuse_null("repeat()");
        return;
    }
    if (!f) {
        report(bsi, "repeat(): the body callback is NULL");
        return;
    }
    l = root_new_step(bsi, "repeat()", FUTOIN__K_LOOP);
    if (l) {
        if (!futoin__loop_add(l, data, label)) {
            report(bsi, "out of memory");
        }
        l->u.l.fn.repeat = f;
        l->u.l.count = count;
        l->flags |= FUTOIN__F_REPEAT;
    }
}

static void root_add_sync(FutoInAsyncSteps* bsi, FutoInSync* sync, void* data,
                          FutoInAsyncSteps_execute_callback f,
                          FutoInAsyncSteps_error_callback eh)
{
    futoin__step* y;
    if (!bsi) {
        futoin__misuse_null("addSync()");
        return;
    }
    if (!f || !sync || !sync->api || !sync->api->lock || !sync->api->unlock) {
        report(bsi, "addSync(): NULL callback or invalid sync object");
        return;
    }
    y = root_new_step(bsi, "addSync()", FUTOIN__K_SYNC);
    if (y) {
        y->u.y.sync = sync;
        y->f = f;
        y->eh = eh;
        y->data = data;
    }
}

static void* root_state_variable(FutoInAsyncSteps* bsi, void* data,
                                 const char* name,
                                 void* (*allocate)(void* data),
                                 void (*cleanup)(void* data, void* value))
{
    futoin__root* r = live_root(bsi, "stateVariable()");
    return r ? futoin__state_variable(r, data, name, allocate, cleanup) : NULL;
}

static void* root_stack(FutoInAsyncSteps* bsi, size_t size,
                        void (*cleanup)(void* value))
{
    futoin__root* r = live_root(bsi, "stack()");
    futoin__root_rare* x = r ? futoin__root_rare_get(r) : NULL;
    return x ? futoin__alloc_push(&x->allocs, size, cleanup) : NULL;
}

static void root_not_in_step(FutoInAsyncSteps* bsi, const char* what)
{
    char msg[128];
    if (live_root(bsi, what)) {
        snprintf(msg, sizeof(msg),
                 "%s is for a step's own handle, not a root", what);
        report(bsi, msg);
    }
}

static void root_success(FutoInAsyncSteps* bsi, FutoInArgs* args)
{
    if (args) {
        futoin__args_clear(args);
    }
    root_not_in_step(bsi, "success()");
}

static void root_handle_error(FutoInAsyncSteps* bsi, const char* code,
                              const char* info)
{
    root_not_in_step(bsi, "handle_error()");
}

static void root_set_timeout(FutoInAsyncSteps* bsi, uint32_t ms)
{
    root_not_in_step(bsi, "setTimeout()");
}

static void root_set_cancel(FutoInAsyncSteps* bsi, void* data,
                            FutoInAsyncSteps_cancel_callback ch)
{
    root_not_in_step(bsi, "setCancel()");
}

static void root_wait_external(FutoInAsyncSteps* bsi)
{
    root_not_in_step(bsi, "waitExternal()");
}

static void root_break(FutoInAsyncSteps* bsi, const char* label)
{
    root_not_in_step(bsi, "breakLoop()");
}

static void root_continue(FutoInAsyncSteps* bsi, const char* label)
{
    root_not_in_step(bsi, "continueLoop()");
}

/* execute(), cancel() and free() may come from any thread: from another
 * one they are posted to the loop thread (remote.c) and run there. */
static bool posted(FutoInAsyncSteps* bsi, enum futoin__root_op op, void* data,
                   FutoInAsyncSteps_error_callback unhandled,
                   void (*release)(void* data))
{
    futoin_tool* tool = tool_of(bsi);
    if (FUTOIN__UNLIKELY(!futoin__tool_on_thread(tool))) {
        futoin__root* r = futoin__as_root(bsi);
        futoin__root_post(tool, r,
                          atomic_load_explicit(&r->id, memory_order_acquire),
                          op, data, unhandled, release);
        return true;
    }
    return false;
}

bool futoin__root_execute(FutoInAsyncSteps* bsi, void* data,
                          FutoInAsyncSteps_error_callback unhandled,
                          void (*release)(void* data))
{
    futoin__root* r;
    if (!bsi) {
        futoin__misuse_null("execute()");
        if (release) {
            release(data);
        }
        return false;
    }
    if (posted(bsi, FUTOIN__OP_EXECUTE, data, unhandled, release)) {
        return true;
    }
    r = not_freed(bsi, "execute()");
    if (!r || r->state == FUTOIN__R_RUNNING) {
        if (r) {
            report(bsi, "execute() called twice");
        }
        if (release) {
            release(data); /* refused: the runtime holds nothing */
        }
        return false;
    }
    if (r->rare) {
        futoin__root_drop_unhandled(r);
        if (r->rare->stack) {
            futoin__stack_free(r); /* it belonged to the previous run */
        }
    }
    if (unhandled || data || release) {
        futoin__root_rare* x = futoin__root_rare_get(r);
        if (FUTOIN__UNLIKELY(!x)) {
            report(bsi, "execute(): out of memory");
            if (release) {
                release(data); /* refused: the runtime holds nothing */
            }
            return false;
        }
        x->unhandled = unhandled;
        x->unhandled_data = data;
        x->unhandled_release = release;
    }
    r->state = FUTOIN__R_RUNNING;
    futoin__tool_ref(futoin__root_tool(r));
    if (futoin__hooked(futoin__root_tool(r))) {
        futoin__hook_root(r, FUTOIN_HOOK_FLOW_STARTED, 0, NULL);
    }
    futoin__flow_start(&r->main);
    return true;
}

/* Out of line, so that root_execute()'s fast path saves no register. */
static FUTOIN__NOINLINE void root_execute_slow(
        FutoInAsyncSteps* bsi, void* data,
        FutoInAsyncSteps_error_callback unhandled)
{
    futoin__root_execute(bsi, data, unhandled, NULL);
}

/*
 * execute() with no unhandled-error callback nor data, of a new or
 * finished root that has no rare record (nothing of a previous run to
 * release: an execute() release hook, stack() memory), from its loop
 * thread, no hooks set, and its flow's entry in the run queue and the
 * keep-alive ref a few stores (its flow is in no batch, and the open
 * batch takes it or the immediate ring has room and needs no idle handle
 * started; the loop is owned, or flows already keep it alive): what
 * futoin__root_execute() would do, with no call, so nothing to save
 * around one. Anything else goes there.
 */
static void root_execute(FutoInAsyncSteps* bsi, void* data,
                         FutoInAsyncSteps_error_callback unhandled)
{
    futoin__root* r = futoin__as_root(bsi);
    futoin_tool* tool;
    if (FUTOIN__UNLIKELY(!bsi)) {
        goto slow;
    }
    tool = futoin__recpool_tool(bsi);
    if (FUTOIN__UNLIKELY(!futoin__tool_on_thread(tool))
        || FUTOIN__UNLIKELY(r->state != FUTOIN__R_NEW
                            && r->state != FUTOIN__R_DONE)
        || r->rare || unhandled || data || futoin__hooked(tool)
        || r->main.rq.next || !futoin__tool_ref_ready(tool)) {
        goto slow;
    }
    /* futoin__tool_rq(): a root run alone (T1) finds the ring empty */
    if (tool->ring_head == tool->ring_tail) {
        if (FUTOIN__UNLIKELY(tool->imm_eager)) {
            goto slow;
        }
        futoin__tool_rq_new(tool, &r->main.rq);
    } else if (tool->rq_end == tool->ring_tail) {
        futoin__tool_rq_append(tool, &r->main.rq);
    } else if (futoin__tool_imm_ready(tool)) {
        futoin__tool_rq_new(tool, &r->main.rq);
    } else {
        goto slow;
    }
    r->state = FUTOIN__R_RUNNING;
    ++tool->active_refs;              /* futoin__tool_ref() */
    r->main.state = FUTOIN__FL_SCHED; /* futoin__flow_start() */
    return;
slow:
    root_execute_slow(bsi, data, unhandled);
}

static void root_cancel(FutoInAsyncSteps* bsi)
{
    futoin__root* r;
    if (!bsi) {
        futoin__misuse_null("cancel()");
        return;
    }
    if (posted(bsi, FUTOIN__OP_CANCEL, NULL, NULL, NULL)) {
        return;
    }
    r = not_freed(bsi, "cancel()");
    if (!r) {
        return;
    }
    if (r->in_cb) {
        r->pending |= FUTOIN__P_CANCEL;
        return;
    }
    root_do_cancel(r);
    if (r->pending & FUTOIN__P_FREE) {
        root_do_free(r);
    }
}

static FUTOIN__NOINLINE void root_free_slow(FutoInAsyncSteps* bsi)
{
    futoin__root* r;
    if (!bsi) {
        futoin__misuse_null("free()");
        return;
    }
    if (posted(bsi, FUTOIN__OP_FREE, NULL, NULL, NULL)) {
        return;
    }
    r = not_freed(bsi, "free()");
    if (!r) {
        return;
    }
    if (r->in_cb) {
        r->pending |= FUTOIN__P_FREE;
        return;
    }
    root_do_free(r);
}

_Static_assert(FUTOIN__R_RUNNING == 1 && FUTOIN__R_FREED == 3
                       && FUTOIN__R_NEW == 0 && FUTOIN__R_DONE == 2,
               "root_free(): (state & 1) is RUNNING or FREED");

/* free() of a new or finished root that holds nothing, on its loop thread
 * and outside its callbacks: what root_free_slow() would do (root_do_free's
 * stores), with the state tested once. Anything else goes there. */
static void root_free(FutoInAsyncSteps* bsi)
{
    futoin__root* r = futoin__as_root(bsi);
    futoin_tool* tool;
    if (FUTOIN__UNLIKELY(!bsi)) {
        goto slow;
    }
    tool = futoin__recpool_tool(bsi);
    if (FUTOIN__UNLIKELY(!futoin__tool_on_thread(tool))
        || FUTOIN__UNLIKELY(r->state & 1) || r->in_cb || r->main.head
        || r->rare) {
        goto slow;
    }
    root_free_plain(tool, r);
    return;
slow:
    root_free_slow(bsi);
}

/*
 * A posted call meets the root as it is now, which may not be the root it
 * was made on. `id` (what the caller saw) tells:
 *  - id <= 0: the root was already freed when the call was made: misuse,
 *    reported without touching the record (it may have a new owner);
 *  - the root's id changed since: the loop thread freed it after the call
 *    was posted and before it arrived. The free won; the call is dropped
 *    quietly (an execute()'s data is released), except a second free(),
 *    which is a double free whatever the order;
 *  - otherwise the call runs as if made on the loop thread.
 */
void futoin__root_op_run(futoin__root* r, ptrdiff_t id,
                         enum futoin__root_op op, void* data,
                         FutoInAsyncSteps_error_callback unhandled,
                         void (*release)(void* data))
{
    static const char* const names[] = {"execute()", "cancel()", "free()"};
    ptrdiff_t now = atomic_load_explicit(&r->id, memory_order_relaxed);
    if (FUTOIN__UNLIKELY(id <= 0 || now != id)) {
        if (id <= 0 || op == FUTOIN__OP_FREE) {
            report_freed(&r->bsi, names[op]);
        }
        if (release) {
            release(data); /* refused: the runtime holds nothing */
        }
        return;
    }
    switch (op) {
    case FUTOIN__OP_EXECUTE:
        futoin__root_execute(&r->bsi, data, unhandled, release);
        break;
    case FUTOIN__OP_CANCEL:
        root_cancel(&r->bsi);
        break;
    case FUTOIN__OP_FREE:
        root_free(&r->bsi);
        break;
    }
}

static int root_is_valid(FutoInAsyncSteps* bsi)
{
    futoin__root* r = futoin__as_root(bsi);
    if (!futoin__on_loop(bsi, "isValid()")) {
        return 0;
    }
    return r->state != FUTOIN__R_FREED && !(r->pending & FUTOIN__P_FREE);
}

const FutoInAsyncStepsAPI futoin__root_api = {{{
        .add = root_add,
        .parallel = root_parallel,
        .stateVariable = root_state_variable,
        .stack = root_stack,
        .success = root_success,
        .handle_error = root_handle_error,
        .setTimeout = root_set_timeout,
        .setCancel = root_set_cancel,
        .waitExternal = root_wait_external,
        .loop = root_loop,
        .repeat = root_repeat,
        .breakLoop = root_break,
        .continueLoop = root_continue,
        .execute = root_execute,
        .cancel = root_cancel,
        .addSync = root_add_sync,
        .rootId = futoin__common_root_id,
        .isValid = root_is_valid,
        .newInstance = futoin__common_new_instance,
        .free = root_free,
        .sched_immediate = futoin__common_sched_immediate,
        .sched_deferred = futoin__common_sched_deferred,
        .sched_cancel = futoin__common_sched_cancel,
        .sched_is_valid = futoin__common_sched_is_valid,
        .is_same_thread = futoin__common_is_same_thread,
}}};
