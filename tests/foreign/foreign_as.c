/*
 * A deliberately foreign, minimal FTN12 implementation (see foreign_as.h).
 *
 * Nothing here comes from libfutoin_async: only <futoin/ftn12.h> is shared.
 * The engine is written for clarity, not speed: every "go on with the next
 * step" is a task on the loop (a trampoline, so long chains never grow the C
 * stack), and every task is a malloc.
 *
 * Memory lifetime. A frame (one executing step, loop, parallel or the
 * root-level container) is retired when it finishes, fails past itself or
 * is cancelled: its timer and queued task are cancelled, its stack()
 * allocations cleaned up, and it is moved to the root's quarantine. It is
 * freed only later, and only while no user callback of its root is on the C
 * stack (root->depth == 0), so engine code that still holds a frame pointer
 * after a callback returns can always test `dead` safely.
 */
#include "foreign_as.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOREIGN_SLOTS 25
#define QUARANTINE 64

_Static_assert(sizeof(FutoInAsyncStepsAPI) == sizeof(void*) * FOREIGN_SLOTS,
               "the foreign table is exactly the spec's 25 slots");

/* ---- the event loop ------------------------------------------------------ */

typedef struct ftask ftask;
struct ftask
{
    ftask* next;
    uint64_t id; /* unique per loop, never 0: what handles refer to */
    uint64_t due; /* timers only */
    void (*cb)(void* data);
    void* data;
};

struct foreign_loop
{
    ftask* imm_head;
    ftask* imm_tail;
    ftask* timers; /* sorted by due time, then by id */
    uint64_t now;
    uint64_t next_id;
    ptrdiff_t next_root_id;
    size_t roots;
    size_t misuse;
    pthread_t thread;
    FutoInAsyncStepsAPI* api; /* malloc(sizeof(void*) * 25) */
};

static void misuse(foreign_loop* L, const char* what)
{
    ++L->misuse;
    fprintf(stderr, "foreign_as: misuse: %s\n", what);
}

static ftask* task_new(foreign_loop* L, void (*cb)(void*), void* data)
{
    ftask* t = calloc(1, sizeof(*t));
    if (!t) {
        abort(); /* a test helper: out of memory is fatal */
    }
    t->id = ++L->next_id;
    t->cb = cb;
    t->data = data;
    return t;
}

static uint64_t loop_post(foreign_loop* L, void (*cb)(void*), void* data)
{
    ftask* t = task_new(L, cb, data);
    if (L->imm_tail) {
        L->imm_tail->next = t;
    } else {
        L->imm_head = t;
    }
    L->imm_tail = t;
    return t->id;
}

static uint64_t loop_timer(foreign_loop* L, uint32_t delay_ms,
                           void (*cb)(void*), void* data)
{
    ftask* t = task_new(L, cb, data);
    ftask** pp = &L->timers;
    t->due = L->now + delay_ms;
    while (*pp && (*pp)->due <= t->due) {
        pp = &(*pp)->next;
    }
    t->next = *pp;
    *pp = t;
    return t->id;
}

/* Remove task `id` if still queued. Only ids are compared, so a stale or
 * forged handle is never dereferenced. */
static int loop_cancel(foreign_loop* L, uint64_t id)
{
    ftask** pp;
    ftask* prev = NULL;
    if (!id) {
        return 0;
    }
    for (pp = &L->imm_head; *pp; prev = *pp, pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            ftask* t = *pp;
            *pp = t->next;
            if (L->imm_tail == t) {
                L->imm_tail = prev;
            }
            free(t);
            return 1;
        }
    }
    for (pp = &L->timers; *pp; pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            ftask* t = *pp;
            *pp = t->next;
            free(t);
            return 1;
        }
    }
    return 0;
}

static int loop_has(const foreign_loop* L, uint64_t id)
{
    const ftask* t;
    if (!id) {
        return 0;
    }
    for (t = L->imm_head; t; t = t->next) {
        if (t->id == id) {
            return 1;
        }
    }
    for (t = L->timers; t; t = t->next) {
        if (t->id == id) {
            return 1;
        }
    }
    return 0;
}

void foreign_run(foreign_loop* L)
{
    for (;;) {
        ftask* t;
        void (*cb)(void*);
        void* data;
        if (L->imm_head) {
            t = L->imm_head;
            L->imm_head = t->next;
            if (!L->imm_head) {
                L->imm_tail = NULL;
            }
        } else if (L->timers) {
            /* Virtual clock: nothing else to do, so time jumps. */
            t = L->timers;
            L->timers = t->next;
            if (t->due > L->now) {
                L->now = t->due;
            }
        } else {
            break;
        }
        cb = t->cb;
        data = t->data;
        free(t);
        cb(data);
    }
}

/* ---- the step engine: types ---------------------------------------------- */

enum
{
    TAG_ROOT = 0x524f4f54,
    TAG_FRAME = 0x4652414d
};

typedef enum
{
    K_TOP,  /* the root-level container */
    K_STEP, /* add() */
    K_BODY, /* one iteration of a loop */
    K_PAR,  /* parallel(): its subs are the branches */
    K_LOOP  /* loop() / repeat(): its sub is the current body */
} fkind;

typedef enum
{
    S_PENDING, /* queued, not started */
    S_CB,      /* its execute callback runs */
    S_WAIT,    /* waits for an external success()/handle_error() */
    S_SUBS,    /* runs its sub-steps (or branches, or iterations) */
    S_EH,      /* its error handler runs */
    S_DONE     /* retired, or its cancel handler runs */
} fstate;

typedef enum
{
    O_NONE,
    O_OK,
    O_ERR,   /* out_code: the error code */
    O_BREAK, /* out_code: the label or NULL */
    O_CONT   /* out_code: the label or NULL */
} foutcome;

typedef struct falloc falloc;
struct falloc
{
    falloc* next;
    void (*cleanup)(void* value);
    max_align_t payload[];
};

typedef struct fvar fvar;
struct fvar
{
    fvar* next;
    void* value;
    void* data;
    void (*cleanup)(void* data, void* value);
    char name[];
};

/* Roots and frames start alike, so a handle tells what it is. */
typedef struct
{
    FutoInAsyncSteps as;
    unsigned tag;
} fhdr;

typedef struct froot froot;
typedef struct fframe fframe;

struct fframe
{
    fhdr h;
    froot* root;
    fframe* parent;
    fframe* next;      /* sibling in parent's subs */
    fframe* subs_head; /* sub-steps in order; the head runs (sequential) */
    fframe* subs_tail;
    fframe* q_next; /* quarantine */
    fkind kind;
    fstate state;
    bool dead;
    bool eh_used;
    bool wait;
    void* data;
    FutoInAsyncSteps_execute_callback f;
    FutoInAsyncSteps_error_callback eh;
    /* loops */
    void (*loop_f)(FutoInAsyncSteps* bsi, void* data);
    void (*repeat_f)(FutoInAsyncSteps* bsi, void* data, size_t i);
    size_t count; /* K_LOOP of repeat() */
    size_t iter;  /* K_LOOP: next index; K_BODY: its index */
    char* label;
    size_t running; /* K_PAR: branches not finished yet */
    /* waiting */
    FutoInAsyncSteps_cancel_callback cancel_cb;
    void* cancel_data;
    uint64_t timer_id;
    uint64_t kick_id;
    /* outcome of the callback running now or of an external call */
    foutcome outcome;
    char* out_code;
    FutoInArgs out;   /* O_OK values (moved in by success()) */
    FutoInArgs carry; /* values for the next sub-step */
    falloc* allocs;
};

typedef enum
{
    R_IDLE,
    R_RUNNING
} rstate;

struct froot
{
    fhdr h;
    foreign_loop* loop;
    ptrdiff_t id;
    fframe* top;
    rstate state;
    FutoInAsyncSteps_error_callback unhandled;
    void* unhandled_data;
    int depth; /* engine entries of this root on the C stack */
    bool cancel_pending;
    bool free_pending;
    char* error_info;
    char* last_error;
    fvar* vars;
    falloc* allocs; /* stack() through the root handle */
    fframe* q_head;
    fframe* q_tail;
    size_t q_len;
};

static froot* as_root(FutoInAsyncSteps* bsi)
{
    fhdr* h = (fhdr*)bsi;
    return h->tag == TAG_ROOT ? (froot*)(void*)h : NULL;
}

static fframe* as_frame(FutoInAsyncSteps* bsi)
{
    fhdr* h = (fhdr*)bsi;
    return h->tag == TAG_FRAME ? (fframe*)(void*)h : NULL;
}

static froot* root_any(FutoInAsyncSteps* bsi)
{
    froot* r = as_root(bsi);
    return r ? r : as_frame(bsi)->root;
}

static void set_api(FutoInAsyncSteps* as, const FutoInAsyncStepsAPI* api)
{
    /* `api` is a const member: written once, right after calloc. */
    memcpy((void*)&as->api, &api, sizeof(api));
}

static char* dup_str(const char* s)
{
    size_t n;
    char* d;
    if (!s) {
        return NULL;
    }
    n = strlen(s) + 1;
    d = malloc(n);
    if (!d) {
        abort();
    }
    memcpy(d, s, n);
    return d;
}

static void args_reset(FutoInArgs* a)
{
    for (int i = 0; i < 4; ++i) {
        futoin_reset_binval(&a->args[i]);
    }
}

static void args_move(FutoInArgs* dst, FutoInArgs* src)
{
    args_reset(dst);
    *dst = *src;
    memset(src, 0, sizeof(*src));
}

static void allocs_free(falloc** list)
{
    falloc* a;
    while ((a = *list) != NULL) {
        *list = a->next;
        if (a->cleanup) {
            a->cleanup(a->payload);
        }
        free(a);
    }
}

static void* allocs_push(falloc** list, size_t size, void (*cleanup)(void*))
{
    falloc* a = calloc(1, sizeof(*a) + size);
    if (!a) {
        return NULL;
    }
    a->cleanup = cleanup;
    a->next = *list;
    *list = a;
    return a->payload;
}

static void root_set_error(froot* r, const char* code, const char* info)
{
    free(r->error_info);
    r->error_info = dup_str(info);
    free(r->last_error);
    r->last_error = dup_str(code);
}

/* ---- frames -------------------------------------------------------------- */

static fframe* frame_new(froot* r, fframe* parent, fkind kind)
{
    fframe* f = calloc(1, sizeof(*f));
    if (!f) {
        abort();
    }
    set_api(&f->h.as, r->loop->api);
    f->h.tag = TAG_FRAME;
    f->root = r;
    f->parent = parent;
    f->kind = kind;
    f->state = S_PENDING;
    if (parent) {
        if (parent->subs_tail) {
            parent->subs_tail->next = f;
        } else {
            parent->subs_head = f;
        }
        parent->subs_tail = f;
    }
    return f;
}

static void unlink_child(fframe* p, fframe* c)
{
    fframe* prev = NULL;
    for (fframe* x = p->subs_head; x; prev = x, x = x->next) {
        if (x == c) {
            if (prev) {
                prev->next = c->next;
            } else {
                p->subs_head = c->next;
            }
            if (p->subs_tail == c) {
                p->subs_tail = prev;
            }
            c->next = NULL;
            return;
        }
    }
}

static void stop_timer(fframe* f)
{
    if (f->timer_id) {
        loop_cancel(f->root->loop, f->timer_id);
        f->timer_id = 0;
    }
}

/* Retire a frame (and, first, whatever is left of its sub-steps): no more
 * tasks or timers, stack() cleaned up, out of its parent's list, into the
 * quarantine. Cancel handlers are NOT called here (see cancel_tree). */
static void retire(fframe* f)
{
    froot* r = f->root;
    if (f->dead) {
        return;
    }
    f->dead = true;
    f->state = S_DONE;
    while (f->subs_head) {
        retire(f->subs_head);
    }
    stop_timer(f);
    loop_cancel(r->loop, f->kick_id);
    f->kick_id = 0;
    f->cancel_cb = NULL;
    allocs_free(&f->allocs);
    args_reset(&f->out);
    args_reset(&f->carry);
    free(f->out_code);
    f->out_code = NULL;
    free(f->label);
    f->label = NULL;
    if (f->parent) {
        unlink_child(f->parent, f);
    }
    f->q_next = NULL;
    if (r->q_tail) {
        r->q_tail->q_next = f;
    } else {
        r->q_head = f;
    }
    r->q_tail = f;
    ++r->q_len;
}

static void task_advance(void* p);
static void task_settle(void* p);

/* Schedule `fn(f)` on the loop; at most one per frame. */
static void kick(fframe* f, void (*fn)(void*))
{
    if (!f->kick_id && !f->dead) {
        f->kick_id = loop_post(f->root->loop, fn, f);
    }
}

static bool parallel_mode(const fframe* f)
{
    return f->kind == K_PAR && !f->eh_used;
}

/* Cancel a frame and everything under it: children first (innermost
 * first, in add order), then its own cancel handler; no error handlers. */
static void cancel_tree(fframe* f)
{
    FutoInAsyncSteps_cancel_callback cb;
    if (f->state == S_PENDING) {
        retire(f);
        return;
    }
    while (f->subs_head && !f->dead) {
        cancel_tree(f->subs_head);
    }
    stop_timer(f);
    cb = f->cancel_cb;
    f->cancel_cb = NULL;
    f->state = S_DONE; /* API calls from the cancel handler are misuse */
    if (cb) {
        cb(&f->h.as, f->cancel_data);
    }
    retire(f);
}

static void cancel_children(fframe* f)
{
    while (f->subs_head && !f->dead) {
        cancel_tree(f->subs_head);
    }
}

/* ---- running steps -------------------------------------------------------- */

static void done_ok(fframe* c);
static void unwind(fframe* x, foutcome kind, char* code);

static void start_iteration(fframe* L)
{
    fframe* b;
    if (L->repeat_f && L->iter >= L->count) {
        done_ok(L);
        return;
    }
    b = frame_new(L->root, L, K_BODY);
    b->iter = L->iter++;
    kick(L, task_advance);
}

static void root_finished(froot* r)
{
    /* The top container is never retired: drop its queued task here. */
    loop_cancel(r->loop, r->top->kick_id);
    r->top->kick_id = 0;
    r->state = R_IDLE;
    r->top->state = S_PENDING;
    args_reset(&r->top->carry);
}

/* A container ran out of sub-steps. */
static void container_done(fframe* f)
{
    switch (f->kind) {
    case K_TOP:
        root_finished(f->root);
        break;
    case K_LOOP:
        start_iteration(f);
        break;
    default:
        args_move(&f->out, &f->carry); /* the last sub-step's values */
        done_ok(f);
        break;
    }
}

/* After a callback returned (or an external call was posted): act on it. */
static void settle(fframe* c)
{
    foutcome o = c->outcome;
    if (c->dead) {
        return;
    }
    if (o == O_ERR || o == O_BREAK || o == O_CONT) {
        char* code = c->out_code;
        c->out_code = NULL;
        c->outcome = O_NONE;
        unwind(c, o, code);
    } else if (o == O_OK) {
        done_ok(c);
    } else if (c->subs_head) {
        c->state = S_SUBS;
        kick(c, task_advance);
    } else if (c->wait || c->cancel_cb || c->timer_id) {
        c->state = S_WAIT;
    } else {
        done_ok(c); /* implicit success: no values */
    }
}

static void run_step(fframe* c, const FutoInArgs* in)
{
    static const FutoInArgs none;
    fframe* p = c->parent;
    switch (c->kind) {
    case K_PAR:
        c->state = S_SUBS;
        c->running = 0;
        for (fframe* b = c->subs_head; b; b = b->next) {
            ++c->running;
        }
        if (c->running) {
            kick(c, task_advance);
        } else {
            done_ok(c);
        }
        return;
    case K_LOOP:
        c->state = S_SUBS;
        start_iteration(c);
        return;
    case K_BODY:
        c->state = S_CB;
        if (p->loop_f) {
            p->loop_f(&c->h.as, p->data);
        } else {
            p->repeat_f(&c->h.as, p->data, c->iter);
        }
        break;
    default:
        c->state = S_CB;
        c->f(&c->h.as, c->data, in ? in : &none);
        break;
    }
    if (c->dead || c->root->cancel_pending) {
        return;
    }
    settle(c);
}

/* The next thing a container does: start its next sub-step (sequential),
 * or its next branch (parallel), or finish. */
static void advance(fframe* f)
{
    fframe* c;
    if (f->dead || f->root->cancel_pending) {
        return;
    }
    if (parallel_mode(f)) {
        /* Start every branch now, in add order. A branch may finish or fail
         * synchronously, which can retire the parallel or turn it into a
         * sequential container (its handler added steps): re-check each
         * time. */
        for (;;) {
            if (f->dead || f->root->cancel_pending || !parallel_mode(f)) {
                return;
            }
            for (c = f->subs_head; c && c->state != S_PENDING; c = c->next) {
            }
            if (!c) {
                return;
            }
            run_step(c, NULL);
        }
    }
    c = f->subs_head;
    if (!c) {
        container_done(f);
        return;
    }
    if (c->state != S_PENDING) {
        return;
    }
    {
        FutoInArgs in;
        memset(&in, 0, sizeof(in));
        args_move(&in, &f->carry);
        if (f->kind == K_LOOP) {
            args_reset(&in); /* loop bodies get no values */
        }
        run_step(c, &in);
        args_reset(&in); /* the callback's args die with the call */
    }
}

/* A frame finished with success; its values are in c->out. */
static void done_ok(fframe* c)
{
    fframe* p = c->parent;
    FutoInArgs res;
    memset(&res, 0, sizeof(res));
    args_move(&res, &c->out);
    retire(c);
    if (parallel_mode(p)) {
        args_reset(&res); /* parallel() success has no values */
        if (p->running && --p->running == 0) {
            done_ok(p);
        }
    } else if (p->kind == K_LOOP) {
        args_reset(&res); /* iterations pass nothing on */
        kick(p, task_advance);
    } else {
        args_move(&p->carry, &res);
        kick(p, task_advance);
    }
}

static bool label_matches(const fframe* L, const char* label)
{
    return !label || (L->label && strcmp(L->label, label) == 0);
}

static void root_fail(froot* r, char* code)
{
    fframe* top = r->top;
    cancel_children(top);
    root_finished(r);
    if (r->unhandled) {
        r->unhandled(&r->h.as, r->unhandled_data,
                     code ? code : "InternalError");
    }
    free(code);
}

/* Unwind from frame x outwards with an error (or a loop break/continue,
 * where `code` is the label). `code` is owned. */
static void unwind(fframe* x, foutcome kind, char* code)
{
    froot* r = x->root;
    for (;;) {
        fframe* p;
        FutoInAsyncSteps_cancel_callback cb;
        if (r->cancel_pending) {
            free(code);
            return;
        }
        if (x->kind == K_TOP) {
            if (kind != O_ERR) {
                free(code); /* breakLoop validated its loop: not reached */
                code = dup_str("InternalError");
            }
            root_fail(r, code);
            return;
        }
        if (x->kind == K_LOOP && kind != O_ERR && label_matches(x, code)) {
            free(code);
            cancel_children(x);
            if (kind == O_BREAK) {
                done_ok(x); /* the step after the loop gets no values */
            } else {
                start_iteration(x);
            }
            return;
        }
        cancel_children(x);
        stop_timer(x);
        cb = x->cancel_cb;
        x->cancel_cb = NULL;
        if (cb) {
            x->state = S_DONE;
            cb(&x->h.as, x->cancel_data);
            if (x->dead || r->cancel_pending) {
                free(code);
                return;
            }
        }
        if (kind == O_ERR && x->eh && !x->eh_used) {
            x->eh_used = true;
            x->state = S_EH;
            x->outcome = O_NONE;
            x->wait = false;
            args_reset(&x->out);
            x->eh(&x->h.as, x->data, code);
            if (x->dead || r->cancel_pending) {
                free(code);
                return;
            }
            switch (x->outcome) {
            case O_OK:
                free(code);
                done_ok(x);
                return;
            case O_ERR:
            case O_BREAK:
            case O_CONT:
                free(code);
                kind = x->outcome;
                code = x->out_code;
                x->out_code = NULL;
                x->outcome = O_NONE;
                break;
            case O_NONE:
                if (x->subs_head) {
                    /* Steps added by the handler run in place of the failed
                     * step; the handler is not called again. */
                    free(code);
                    x->state = S_SUBS;
                    kick(x, task_advance);
                    return;
                }
                break; /* silent: go on unwinding with the same error */
            }
        }
        p = x->parent;
        retire(x);
        x = p;
    }
}

/* ---- engine entry points (loop tasks, root calls) ------------------------ */

static void root_destroy(froot* r);

static void root_enter(froot* r)
{
    ++r->depth;
}

/* Leaving the engine: deferred cancel()/free() happen here, when no
 * callback of this root is on the C stack any more. */
static void root_leave(froot* r)
{
    if (r->depth > 1) {
        --r->depth;
        return;
    }
    while (r->cancel_pending) {
        r->cancel_pending = false;
        cancel_children(r->top);
        root_finished(r);
    }
    r->depth = 0;
    if (r->free_pending) {
        root_destroy(r);
        return;
    }
    while (r->q_len > QUARANTINE) {
        fframe* f = r->q_head;
        r->q_head = f->q_next;
        if (!r->q_head) {
            r->q_tail = NULL;
        }
        --r->q_len;
        free(f);
    }
}

static void task_advance(void* p)
{
    fframe* f = p;
    froot* r = f->root;
    f->kick_id = 0;
    root_enter(r);
    advance(f);
    root_leave(r);
}

static void task_settle(void* p)
{
    fframe* f = p;
    froot* r = f->root;
    f->kick_id = 0;
    root_enter(r);
    settle(f);
    root_leave(r);
}

static void task_timeout(void* p)
{
    fframe* f = p;
    froot* r = f->root;
    fframe* x = f;
    f->timer_id = 0;
    root_enter(r);
    /* Timeout is raised where execution is: the innermost active frame
     * under the step that set the timer (a parallel stops the descent). */
    while (!parallel_mode(x) && x->subs_head
           && x->subs_head->state != S_PENDING) {
        x = x->subs_head;
    }
    x->outcome = O_NONE;
    loop_cancel(r->loop, x->kick_id);
    x->kick_id = 0;
    root_set_error(r, "Timeout", NULL);
    unwind(x, O_ERR, dup_str("Timeout"));
    root_leave(r);
}

/* ---- the table ----------------------------------------------------------- */

/* The frame a call made through `bsi` may act on as "the current step":
 * inside its callback or error handler, or waiting (external calls). */
static fframe* live_step(FutoInAsyncSteps* bsi, const char* what,
                         bool allow_wait)
{
    fframe* f = as_frame(bsi);
    froot* r = root_any(bsi);
    if (!f || f->dead
        || !(f->state == S_CB || f->state == S_EH
             || (allow_wait && f->state == S_WAIT))) {
        misuse(r->loop, what);
        return NULL;
    }
    return f;
}

/* Misuse inside a live callback becomes InternalError in the flow. */
static void internal_error(fframe* f, const char* info)
{
    args_reset(&f->out);
    free(f->out_code);
    f->out_code = dup_str("InternalError");
    f->outcome = O_ERR;
    root_set_error(f->root, "InternalError", info);
}

/* Where add()/parallel()/loop()/repeat() through `bsi` put the new step. */
static fframe* container_for_add(FutoInAsyncSteps* bsi)
{
    froot* r = as_root(bsi);
    fframe* f;
    if (r) {
        if (r->state == R_RUNNING) {
            misuse(r->loop, "root add() while the root runs");
            return NULL;
        }
        return r->top;
    }
    f = as_frame(bsi);
    if (f->dead) {
        misuse(f->root->loop, "add() through a retired step");
        return NULL;
    }
    if (f->kind == K_PAR && f->state == S_PENDING) {
        return f; /* a new branch */
    }
    if (f->state == S_CB || f->state == S_EH) {
        if (f->outcome == O_OK) {
            internal_error(f, "add() after success()");
            return NULL;
        }
        return f->outcome == O_NONE ? f : NULL;
    }
    misuse(f->root->loop, "add() outside the step's callback");
    return NULL;
}

static void f_add(FutoInAsyncSteps* bsi, void* data,
                  FutoInAsyncSteps_execute_callback f,
                  FutoInAsyncSteps_error_callback eh)
{
    fframe* p = container_for_add(bsi);
    fframe* c;
    if (!p) {
        return;
    }
    c = frame_new(p->root, p, K_STEP);
    c->data = data;
    c->f = f;
    c->eh = eh;
}

static FutoInAsyncSteps* f_parallel(FutoInAsyncSteps* bsi, void* data,
                                    FutoInAsyncSteps_error_callback eh)
{
    fframe* p = container_for_add(bsi);
    fframe* c;
    if (!p) {
        return NULL;
    }
    c = frame_new(p->root, p, K_PAR);
    c->data = data;
    c->eh = eh;
    return &c->h.as;
}

static void* f_state_variable(FutoInAsyncSteps* bsi, void* data,
                              const char* name, void* (*allocate)(void*),
                              void (*cleanup)(void*, void*))
{
    froot* r = root_any(bsi);
    fvar* v;
    size_t n;
    if (!name) {
        return NULL;
    }
    if (strcmp(name, "error_info") == 0) {
        return r->error_info;
    }
    if (strcmp(name, "last_exception") == 0) {
        return r->last_error;
    }
    for (v = r->vars; v; v = v->next) {
        if (strcmp(v->name, name) == 0) {
            return v->value;
        }
    }
    if (!allocate) {
        return NULL;
    }
    n = strlen(name) + 1;
    v = calloc(1, sizeof(*v) + n);
    if (!v) {
        return NULL;
    }
    memcpy(v->name, name, n);
    v->data = data;
    v->cleanup = cleanup;
    v->value = allocate(data);
    if (!v->value) {
        free(v);
        return NULL;
    }
    v->next = r->vars;
    r->vars = v;
    return v->value;
}

static void* f_stack(FutoInAsyncSteps* bsi, size_t size,
                     void (*cleanup)(void*))
{
    froot* r = as_root(bsi);
    fframe* f;
    if (r) {
        return allocs_push(&r->allocs, size, cleanup); /* lives with root */
    }
    f = as_frame(bsi);
    if (f->dead) {
        misuse(f->root->loop, "stack() through a retired step");
        return NULL;
    }
    return allocs_push(&f->allocs, size, cleanup);
}

static void f_success(FutoInAsyncSteps* bsi, FutoInArgs* args)
{
    fframe* f;
    FutoInArgs mine;
    memset(&mine, 0, sizeof(mine));
    if (args) {
        args_move(&mine, args); /* the values are ours whatever happens */
    }
    if (as_root(bsi)) {
        misuse(as_root(bsi)->loop, "success() on a root");
        args_reset(&mine);
        return;
    }
    f = live_step(bsi, "success() outside a step", true);
    if (!f) {
        args_reset(&mine);
        return;
    }
    if (f->outcome != O_NONE || f->subs_head) {
        if (f->state == S_WAIT) {
            misuse(f->root->loop, "success() twice on a waiting step");
        } else if (f->outcome != O_ERR) {
            internal_error(f, f->subs_head ? "success() after add()"
                                           : "success() twice");
        }
        args_reset(&mine);
        return;
    }
    args_move(&f->out, &mine);
    f->outcome = O_OK;
    if (f->state == S_WAIT) {
        stop_timer(f);
        kick(f, task_settle);
    }
}

static void f_handle_error(FutoInAsyncSteps* bsi, const char* code,
                           const char* info)
{
    fframe* f;
    if (as_root(bsi)) {
        misuse(as_root(bsi)->loop, "handle_error() on a root");
        return;
    }
    f = live_step(bsi, "handle_error() outside a step", true);
    if (!f) {
        return;
    }
    if (f->outcome != O_NONE) {
        if (f->state == S_WAIT) {
            misuse(f->root->loop, "handle_error() after completion");
        } else if (f->outcome == O_OK) {
            internal_error(f, "handle_error() after success()");
        }
        return;
    }
    if (f->subs_head && f->state == S_CB) {
        internal_error(f, "handle_error() after add()");
        return;
    }
    if (!code) {
        code = "InternalError";
    }
    root_set_error(f->root, code, info);
    f->out_code = dup_str(code);
    f->outcome = O_ERR;
    if (f->state == S_WAIT) {
        stop_timer(f);
        kick(f, task_settle);
    }
}

static void f_set_timeout(FutoInAsyncSteps* bsi, uint32_t timeout_ms)
{
    fframe* f = live_step(bsi, "setTimeout() outside a step callback", false);
    if (!f || f->state != S_CB) {
        if (f) {
            internal_error(f, "setTimeout() in an error handler");
        }
        return;
    }
    stop_timer(f); /* a second setTimeout replaces the first */
    f->timer_id = loop_timer(f->root->loop, timeout_ms, task_timeout, f);
}

static void f_set_cancel(FutoInAsyncSteps* bsi, void* data,
                         FutoInAsyncSteps_cancel_callback ch)
{
    fframe* f = live_step(bsi, "setCancel() outside a step callback", false);
    if (!f) {
        return;
    }
    f->cancel_cb = ch;
    f->cancel_data = data;
}

static void f_wait_external(FutoInAsyncSteps* bsi)
{
    fframe* f = live_step(bsi, "waitExternal() outside a step callback", false);
    if (f) {
        f->wait = true;
    }
}

static fframe* add_loop(FutoInAsyncSteps* bsi, void* data, const char* label)
{
    fframe* p = container_for_add(bsi);
    fframe* c;
    if (!p) {
        return NULL;
    }
    c = frame_new(p->root, p, K_LOOP);
    c->data = data;
    c->label = dup_str(label);
    return c;
}

static void f_loop(FutoInAsyncSteps* bsi, void* data,
                   void (*f)(FutoInAsyncSteps*, void*), const char* label)
{
    fframe* c = add_loop(bsi, data, label);
    if (c) {
        c->loop_f = f;
    }
}

static void f_repeat(FutoInAsyncSteps* bsi, void* data, size_t count,
                     void (*f)(FutoInAsyncSteps*, void*, size_t),
                     const char* label)
{
    fframe* c = add_loop(bsi, data, label);
    if (c) {
        c->repeat_f = f;
        c->count = count;
    }
}

static void loop_control(FutoInAsyncSteps* bsi, const char* label,
                         foutcome kind)
{
    fframe* f = live_step(bsi, "breakLoop()/continueLoop() outside a step",
                          true);
    fframe* p;
    if (!f) {
        return;
    }
    if (f->outcome != O_NONE) {
        return;
    }
    for (p = f->parent; p; p = p->parent) {
        if (p->kind == K_LOOP && label_matches(p, label)) {
            break;
        }
    }
    if (!p) {
        internal_error(f, kind == O_BREAK
                                  ? "breakLoop(): no enclosing loop by that label"
                                  : "continueLoop(): no enclosing loop by that label");
    } else {
        f->outcome = kind;
        f->out_code = dup_str(label);
    }
    if (f->state == S_WAIT) {
        stop_timer(f);
        kick(f, task_settle);
    }
}

static void f_break_loop(FutoInAsyncSteps* bsi, const char* label)
{
    loop_control(bsi, label, O_BREAK);
}

static void f_continue_loop(FutoInAsyncSteps* bsi, const char* label)
{
    loop_control(bsi, label, O_CONT);
}

static void f_execute(FutoInAsyncSteps* bsi, void* data,
                      FutoInAsyncSteps_error_callback unhandled_error)
{
    froot* r = as_root(bsi);
    if (!r) {
        misuse(root_any(bsi)->loop, "execute() on a step");
        return;
    }
    if (r->state == R_RUNNING) {
        misuse(r->loop, "execute() while running");
        return;
    }
    r->state = R_RUNNING;
    r->unhandled = unhandled_error;
    r->unhandled_data = data;
    r->top->state = S_SUBS;
    kick(r->top, task_advance);
}

static void f_cancel(FutoInAsyncSteps* bsi)
{
    froot* r = as_root(bsi);
    if (!r) {
        misuse(root_any(bsi)->loop, "cancel() on a step");
        return;
    }
    r->cancel_pending = true; /* also drops steps of an idle root */
    root_enter(r);
    root_leave(r); /* runs it now, or when the running callback returns */
}

static void f_add_sync(FutoInAsyncSteps* bsi, FutoInSync* sync, void* data,
                       FutoInAsyncSteps_execute_callback f,
                       FutoInAsyncSteps_error_callback eh)
{
    fframe* fr = as_frame(bsi);
    if (fr && !fr->dead && (fr->state == S_CB || fr->state == S_EH)) {
        f_handle_error(bsi, "NotImplemented",
                       "addSync() is not supported by the foreign "
                       "implementation");
        return;
    }
    misuse(root_any(bsi)->loop, "addSync() is not supported");
}

static ptrdiff_t f_root_id(FutoInAsyncSteps* bsi)
{
    return root_any(bsi)->id;
}

static int f_is_valid(FutoInAsyncSteps* bsi)
{
    froot* r = as_root(bsi);
    if (r) {
        return !r->free_pending;
    }
    return !as_frame(bsi)->dead;
}

static FutoInAsyncSteps* f_new_instance(FutoInAsyncSteps* bsi)
{
    return foreign_root_new(root_any(bsi)->loop);
}

static void f_free(FutoInAsyncSteps* bsi)
{
    froot* r = as_root(bsi);
    if (!r) {
        misuse(root_any(bsi)->loop, "free() on a step");
        return;
    }
    if (r->free_pending) {
        misuse(r->loop, "free() twice");
        return;
    }
    r->cancel_pending = true;
    r->free_pending = true;
    root_enter(r);
    root_leave(r); /* frees now, or when the running callback returns */
}

static FutoInHandle make_handle(foreign_loop* L, uint64_t id)
{
    FutoInHandle h;
    h.data1 = L;
    h.data2 = NULL;
    h.data3 = (ptrdiff_t)id;
    return h;
}

static FutoInHandle f_sched_immediate(FutoInAsyncSteps* bsi, void* data,
                                      void (*cb)(void*))
{
    foreign_loop* L = root_any(bsi)->loop;
    return make_handle(L, loop_post(L, cb, data));
}

static FutoInHandle f_sched_deferred(FutoInAsyncSteps* bsi, uint32_t delay_ms,
                                     void* data, void (*cb)(void*))
{
    foreign_loop* L = root_any(bsi)->loop;
    return make_handle(L, loop_timer(L, delay_ms, cb, data));
}

static void f_sched_cancel(FutoInAsyncSteps* bsi, FutoInHandle* handle)
{
    foreign_loop* L = root_any(bsi)->loop;
    if (handle && handle->data1 == L) {
        loop_cancel(L, (uint64_t)handle->data3);
    }
    if (handle) {
        memset(handle, 0, sizeof(*handle));
    }
}

static int f_sched_is_valid(FutoInAsyncSteps* bsi, FutoInHandle* handle)
{
    foreign_loop* L = root_any(bsi)->loop;
    return handle && handle->data1 == L && loop_has(L, (uint64_t)handle->data3);
}

static int f_is_same_thread(FutoInAsyncSteps* bsi)
{
    return pthread_equal(pthread_self(), root_any(bsi)->loop->thread) != 0;
}

static const FutoInAsyncStepsAPI foreign_template = {{{
        .add = f_add,
        .parallel = f_parallel,
        .stateVariable = f_state_variable,
        .stack = f_stack,
        .success = f_success,
        .handle_error = f_handle_error,
        .setTimeout = f_set_timeout,
        .setCancel = f_set_cancel,
        .waitExternal = f_wait_external,
        .loop = f_loop,
        .repeat = f_repeat,
        .breakLoop = f_break_loop,
        .continueLoop = f_continue_loop,
        .execute = f_execute,
        .cancel = f_cancel,
        .addSync = f_add_sync,
        .rootId = f_root_id,
        .isValid = f_is_valid,
        .newInstance = f_new_instance,
        .free = f_free,
        .sched_immediate = f_sched_immediate,
        .sched_deferred = f_sched_deferred,
        .sched_cancel = f_sched_cancel,
        .sched_is_valid = f_sched_is_valid,
        .is_same_thread = f_is_same_thread,
}}};

/* ---- public functions ----------------------------------------------------- */

foreign_loop* foreign_loop_new(void)
{
    foreign_loop* L = calloc(1, sizeof(*L));
    if (!L) {
        return NULL;
    }
    /* Exactly 25 slots on the heap: a read of slot 25 is out of bounds for
     * ASan and valgrind alike. */
    L->api = malloc(sizeof(void*) * FOREIGN_SLOTS);
    if (!L->api) {
        free(L);
        return NULL;
    }
    memcpy(L->api, &foreign_template, sizeof(void*) * FOREIGN_SLOTS);
    L->thread = pthread_self();
    return L;
}

void foreign_loop_free(foreign_loop* L)
{
    ftask* t;
    if (!L) {
        return;
    }
    if (L->roots) {
        fprintf(stderr, "foreign_as: loop freed with %zu live root(s)\n",
                L->roots);
    }
    while ((t = L->imm_head) != NULL) {
        L->imm_head = t->next;
        free(t);
    }
    while ((t = L->timers) != NULL) {
        L->timers = t->next;
        free(t);
    }
    free(L->api);
    free(L);
}

FutoInAsyncSteps* foreign_root_new(foreign_loop* L)
{
    froot* r;
    if (!L) {
        return NULL;
    }
    r = calloc(1, sizeof(*r));
    if (!r) {
        return NULL;
    }
    set_api(&r->h.as, L->api);
    r->h.tag = TAG_ROOT;
    r->loop = L;
    r->id = ++L->next_root_id;
    r->top = frame_new(r, NULL, K_TOP);
    ++L->roots;
    return &r->h.as;
}

static void root_destroy(froot* r)
{
    fvar* v;
    fframe* f;
    while ((v = r->vars) != NULL) {
        r->vars = v->next;
        if (v->cleanup) {
            v->cleanup(v->data, v->value);
        }
        free(v);
    }
    allocs_free(&r->allocs);
    while ((f = r->q_head) != NULL) {
        r->q_head = f->q_next;
        free(f);
    }
    args_reset(&r->top->carry);
    free(r->top);
    free(r->error_info);
    free(r->last_error);
    --r->loop->roots;
    free(r);
}

const FutoInAsyncStepsAPI* foreign_api(const foreign_loop* L)
{
    return L->api;
}

uint64_t foreign_now(const foreign_loop* L)
{
    return L->now;
}

size_t foreign_live_roots(const foreign_loop* L)
{
    return L->roots;
}

size_t foreign_misuse_count(const foreign_loop* L)
{
    return L->misuse;
}
