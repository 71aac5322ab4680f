/*
 * Async stacks (futoin/sys/host.h): when an error is raised, the chain of
 * steps from the failing one down to the root's level is recorded in the
 * root, innermost first, across parallel() branches into the flow that
 * runs them. The frames are gone once the error has unwound, so the
 * record is taken at once; it is one allocation, and everything that can
 * wait does: a C step with no recorded origin is named (from its object's
 * symbols and debug info, base/codeinfo.c) only when someone reads the
 * stack, since errors in C-only flows can be frequent and nobody may ever
 * look; so is the rest of a frame whose class defers its origin
 * (origin_defer: a JavaScript function's file:line costs a debugger round
 * trip).
 */
#include "engine/engine.h"

#include "base/codeinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* [futoin__stack][futoin_async_stack + frames][fns][later][names][strings] */
struct futoin__stack
{
    futoin_async_stack* pub;
    void** fns;           /* per frame: C function still to be named */
    struct frame_later* later; /* per frame: a deferred origin's token */
    char (*names)[24];    /* per frame: room for "+0x..." of a C frame */
    uint32_t unresolved;  /* how many fns and later tokens are set */
};

/* The rest of a frame whose class deferred it (origin_defer). */
typedef struct frame_later
{
    const futoin_step_class* cls;
    void* tok;
} frame_later;

/* What a frame will show: its class's origin, or its C function. */
typedef struct frame_src
{
    futoin_frame_origin o;
    void* fn;
    frame_later later;
} frame_src;

bool futoin__frame_shown(const futoin__step* s)
{
    /* user code: steps (also the one a sync object guards) and loop
     * bodies; the engine's own frames (loop, parallel, sync, unlock) are
     * not */
    return s->kind == FUTOIN__K_STEP || s->kind == FUTOIN__K_BODY;
}

/* The frame below `s`: its parent, or past the bottom of a branch flow,
 * the parallel() frame of the flow that runs it. */
futoin__step* futoin__frame_below(const futoin__step* s)
{
    /* a frame: a queued or free record's word is `next` (engine.h) */
    FUTOIN__DEBUG_ASSERT(s->state != FUTOIN__S_QUEUED
                         && s->state != FUTOIN__S_FREE);
    if (s->parent) {
        return s->parent;
    }
    return s->flow ? futoin__flow_par(s->flow) : NULL;
}

/* POSIX lets dladdr() take a function's address as void*; ISO C has no
 * conversion for it, so it goes through a union. */
static void* code_address(void (*fn)(void))
{
    union
    {
        void (*fn)(void);
        void* p;
    } u;
    u.fn = fn;
    return u.p;
}

/* Whether class `cls` was built with a `frame` (futoin/sys/host.h). */
static bool has_frame(const futoin_step_class* cls)
{
    return cls->size >= offsetof(futoin_step_class, frame) + sizeof(cls->frame)
           && cls->frame.language;
}

/* Whether class `cls` can defer its origin (futoin/sys/host.h). */
static bool has_defer(const futoin_step_class* cls)
{
    return cls->size >= offsetof(futoin_step_class, origin_resolve)
                                + sizeof(cls->origin_resolve)
           && cls->origin_defer && cls->origin_resolve;
}

static void source_of(futoin__step* s, frame_src* out)
{
    /* A loop body shows its loop's function and class; the step an
     * addSync() guards, its guard's (which holds the class). */
    futoin__step* owner = s->kind == FUTOIN__K_BODY || (s->flags & FUTOIN__F_STASH)
                                  ? s->parent
                                  : s;
    const futoin_step_class* cls = (owner->flags & FUTOIN__F_CLASS) ? owner->rel.cls
                                                                   : NULL;
    memset(out, 0, sizeof(*out));
    out->o.language = "c";
    if (cls && (cls->origin || has_frame(cls) || has_defer(cls))) {
        if (has_frame(cls)) {
            out->o = cls->frame;
        }
        if (has_defer(cls)) {
            out->later.tok = cls->origin_defer(owner->data, &out->o);
            out->later.cls = out->later.tok ? cls : NULL;
        } else if (cls->origin) {
            cls->origin(owner->data, &out->o);
        }
        if (!out->o.language) {
            out->o.language = "?";
        }
    } else if (s->kind == FUTOIN__K_BODY) {
        out->fn = code_address((void (*)(void))owner->u.l.fn.loop);
    } else {
        out->fn = code_address((void (*)(void))s->f);
    }
}

void futoin__step_origin(futoin__step* s, futoin_frame_origin* out)
{
    frame_src src;
    source_of(s, &src);
    *out = src.o;
    if (src.later.tok) {
        src.later.cls->origin_resolve(src.later.tok, out);
    }
    if (src.fn) {
        futoin__codeinfo ci;
        futoin__codeinfo_get(src.fn, &ci);
        out->function = ci.function;
        out->file = ci.file ? ci.file : ci.object;
        out->line = ci.file ? ci.line : 0;
    }
}

static size_t str_size(const char* s)
{
    return s ? strlen(s) + 1 : 0;
}

static const char* str_copy(char** at, const char* s)
{
    char* d;
    size_t n;
    if (!s) {
        return NULL;
    }
    n = strlen(s) + 1;
    d = memcpy(*at, s, n);
    *at += n;
    return d;
}

void futoin__stack_free(futoin__root* r)
{
    struct futoin__stack* st = r->rare ? r->rare->stack : NULL;
    if (st) {
        /* deferred origins nobody read: their tokens released */
        for (uint32_t i = 0; st->unresolved && i < st->pub->count; ++i) {
            if (st->later[i].tok) {
                st->later[i].cls->origin_resolve(st->later[i].tok, NULL);
            }
        }
        free(st);
        r->rare->stack = NULL;
    }
}

void futoin__stack_capture(futoin__flow* fl, futoin__step* at,
                           const char* code)
{
    enum { MAX = FUTOIN_ASYNC_STACK_INNER + FUTOIN_ASYNC_STACK_OUTER };
    futoin__root* r = fl->root;
    frame_src src[MAX];
    uint32_t total = 0, n = 0, elided = 0;
    size_t strings = str_size(code), bytes;
    struct futoin__stack* st;
    char* text;

    if (futoin__is_loop_code(code)) {
        return; /* a break or continue, not an error */
    }
    if (!at) {
        at = fl->top;
    }
    for (futoin__step* s = at; s; s = futoin__frame_below(s)) {
        total += futoin__frame_shown(s);
    }
    if (total > MAX) {
        elided = total - MAX;
    }
    /* the innermost INNER frames, then the outermost OUTER ones */
    {
        uint32_t i = 0;
        for (futoin__step* s = at; s; s = futoin__frame_below(s)) {
            if (!futoin__frame_shown(s)) {
                continue;
            }
            if (i < FUTOIN_ASYNC_STACK_INNER || i >= FUTOIN_ASYNC_STACK_INNER + elided) {
                source_of(s, &src[n]);
                strings += str_size(src[n].o.language) + str_size(src[n].o.function)
                           + str_size(src[n].o.file);
                ++n;
            }
            ++i;
        }
    }
    bytes = sizeof(*st) + sizeof(futoin_async_stack)
            + n * sizeof(futoin_frame_origin) + n * sizeof(void*)
            + n * sizeof(frame_later) + n * sizeof(*st->names) + strings;
    futoin__stack_free(r);
    if (!futoin__root_rare_get(r) || !(st = malloc(bytes))) {
        for (uint32_t i = 0; i < n; ++i) {
            if (src[i].later.tok) {
                src[i].later.cls->origin_resolve(src[i].later.tok, NULL);
            }
        }
        return; /* no stack for this error: it still unwinds */
    }
    st->pub = (futoin_async_stack*)(st + 1);
    st->fns = (void**)&st->pub->frames[n];
    st->later = (frame_later*)&st->fns[n];
    st->names = (char (*)[24])&st->later[n];
    st->unresolved = 0;
    text = (char*)&st->names[n];
    st->pub->code = str_copy(&text, code);
    st->pub->count = n;
    st->pub->elided = elided;
    st->pub->elided_after = elided ? FUTOIN_ASYNC_STACK_INNER : n;
    for (uint32_t i = 0; i < n; ++i) {
        futoin_frame_origin* o = &st->pub->frames[i];
        o->language = str_copy(&text, src[i].o.language);
        o->function = str_copy(&text, src[i].o.function);
        o->file = str_copy(&text, src[i].o.file);
        o->line = src[i].o.line;
        st->fns[i] = src[i].fn;
        st->later[i] = src[i].later;
        st->unresolved += src[i].fn != NULL || src[i].later.tok != NULL;
    }
    r->rare->stack = st;
}

const futoin_async_stack* futoin__stack_get(futoin__root* r)
{
    struct futoin__stack* st = FUTOIN__RARE(r, stack);
    if (!st) {
        return NULL;
    }
    if (st->unresolved) {
        /* C frames without a recorded origin: named from the object's
         * symbols and debug info (base/codeinfo.c; strings kept for the
         * process, so they outlive the stack). A function with no name
         * there shows as its offset in the object, and no line: the
         * object's path stands in for the file. A deferred origin: its
         * class completes the frame. */
        for (uint32_t i = 0; i < st->pub->count; ++i) {
            futoin__codeinfo ci;
            futoin_frame_origin* o = &st->pub->frames[i];
            if (st->later[i].tok) {
                frame_later l = st->later[i];
                st->later[i].tok = NULL;
                l.cls->origin_resolve(l.tok, o);
            }
            if (!st->fns[i]) {
                continue;
            }
            futoin__codeinfo_get(st->fns[i], &ci);
            if (ci.function) {
                o->function = ci.function;
            } else if (ci.object) {
                snprintf(st->names[i], sizeof(st->names[i]), "+0x%lx",
                         (unsigned long)ci.offset);
                o->function = st->names[i];
            }
            o->file = ci.file ? ci.file : ci.object;
            o->line = ci.file ? ci.line : 0;
            st->fns[i] = NULL;
        }
        st->unresolved = 0;
    }
    return st->pub;
}

FUTOIN_API int futoin_async_stack_format(const futoin_async_stack* stack,
                                         char* buf, size_t len)
{
    size_t used = 0;
    if (!stack) {
        return -1;
    }
    if (!buf) {
        len = 0;
    } else if (len) {
        buf[0] = 0;
    }
    for (uint32_t i = 0; i < stack->count; ++i) {
        const futoin_frame_origin* o = &stack->frames[i];
        char line[32] = "";
        int n;
        if (o->line) {
            snprintf(line, sizeof(line), ":%u", (unsigned)o->line);
        }
        n = snprintf(used < len ? buf + used : NULL, used < len ? len - used : 0,
                     "  at %s %s%s%s%s%s\n", o->language,
                     o->function ? o->function : "<anonymous>",
                     o->file ? " (" : "", o->file ? o->file : "", line,
                     o->file ? ")" : "");
        if (n < 0) {
            return -1;
        }
        used += (size_t)n;
        if (stack->elided && i + 1 == stack->elided_after) {
            n = snprintf(used < len ? buf + used : NULL,
                         used < len ? len - used : 0,
                         "  ... %u more frames ...\n", (unsigned)stack->elided);
            if (n < 0) {
                return -1;
            }
            used += (size_t)n;
        }
    }
    if (len && used >= len) {
        buf[len - 1] = 0;
    }
    return (int)used;
}
