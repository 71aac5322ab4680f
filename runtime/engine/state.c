/*
 * Root state (§1.7, stateVariable) and stack() allocations (§1.14).
 *
 * State variables are a short list per root: flows hold a handful of named
 * values, so a linear scan beats a hash table in both speed and memory.
 * Reserved names give the predefined state of §1.7:
 *   "error_info"     -> const char*: info of the last error, or NULL;
 *   "last_exception" -> const char*: code of the last error, or NULL;
 *   "async_stack"    -> const futoin_async_stack*: where the last error was
 *                       raised, from the failing step down (host.h), or NULL.
 */
#include "engine/engine.h"

#include <futoin/sys/ext.h>

#include <stdlib.h>
#include <string.h>

void* futoin__alloc_push(futoin__alloc** list, size_t size,
                         void (*cleanup)(void* value))
{
    futoin__alloc* a;
    if (size > SIZE_MAX - sizeof(*a)) {
        return NULL;
    }
    a = calloc(1, sizeof(*a) + size);
    if (!a) {
        return NULL;
    }
    a->cleanup = cleanup;
    a->next = *list;
    *list = a;
    return a->payload;
}

/* Newest first, like destructors of a C++ scope. */
void futoin__alloc_free_all(futoin__alloc** list)
{
    futoin__alloc* a;
    while ((a = *list) != NULL) {
        *list = a->next;
        if (a->cleanup) {
            a->cleanup(a->payload);
        }
        free(a);
    }
}

void futoin__vars_free(futoin__root* r)
{
    futoin__statevar* v;
    while ((v = r->rare->vars) != NULL) {
        r->rare->vars = v->next;
        if (v->cleanup) {
            FUTOIN__USER(r, v->cleanup(v->data, v->value));
        }
        free(v);
    }
}

void* futoin__state_variable(futoin__root* r, void* data, const char* name,
                             void* (*allocate)(void* data),
                             void (*cleanup)(void* data, void* value))
{
    futoin__statevar* v;
    size_t len;

    if (!name) {
        futoin__tool_misuse(futoin__root_tool(r), "stateVariable(): the name is NULL");
        return NULL;
    }
    if (strcmp(name, "error_info") == 0) {
        return FUTOIN__RARE(r, error_info);
    }
    if (strcmp(name, "last_exception") == 0) {
        return (void*)FUTOIN__RARE(r, error_code);
    }
    if (strcmp(name, "async_stack") == 0) {
        return (void*)futoin__stack_get(r);
    }
    for (v = FUTOIN__RARE(r, vars); v; v = v->next) {
        if (strcmp(v->name, name) == 0) {
            return v->value;
        }
    }
    if (!allocate || !futoin__root_rare_get(r)) {
        return NULL;
    }
    len = strlen(name);
    v = malloc(sizeof(*v) + len + 1);
    if (!v) {
        return NULL;
    }
    memcpy(v->name, name, len + 1);
    v->value = NULL;
    v->cleanup = cleanup;
    v->data = data;
    FUTOIN__USER(r, v->value = allocate(data));
    if (!v->value) {
        free(v);
        return NULL;
    }
    v->next = r->rare->vars;
    r->rare->vars = v;
    return v->value;
}

/* ---- state shared between languages (futoin/sys/host.h) ------------------ */

/* A shared variable's value is a FutoInBinaryValue the runtime owns; it is
 * told apart from the stateVariable() kind by its cleanup function. */
static void shared_cleanup(void* data, void* value)
{
    FutoInBinaryValue* v = value;
    futoin_reset_binval(v);
    free(v);
}

static void free_copy(FutoInBinaryValue* v)
{
    free((void*)v->p);
}

/* The types of copies the runtime made: by flags, freeing what it copied. */
static const FutoInType* copy_type(uint8_t flags)
{
#define T(f) {f, free_copy}
#define S(f) {f, NULL}
    static const FutoInType types[32] = {
            S(0), S(0), T(FTN_TYPE_STRING), T(FTN_TYPE_STRING16),
            T(FTN_TYPE_STRING32), S(FTN_TYPE_BOOL), S(FTN_TYPE_INT8),
            S(FTN_TYPE_INT16), S(FTN_TYPE_INT32), S(FTN_TYPE_INT64),
            S(FTN_TYPE_UINT8), S(FTN_TYPE_UINT16), S(FTN_TYPE_UINT32),
            S(FTN_TYPE_UINT64), S(FTN_TYPE_FLOAT), S(FTN_TYPE_DOUBLE),
            S(0), S(0), S(0), S(0), S(0),
            T(FTN_TYPE_ARRAY | FTN_TYPE_BOOL), T(FTN_TYPE_ARRAY | FTN_TYPE_INT8),
            T(FTN_TYPE_ARRAY | FTN_TYPE_INT16), T(FTN_TYPE_ARRAY | FTN_TYPE_INT32),
            T(FTN_TYPE_ARRAY | FTN_TYPE_INT64), T(FTN_TYPE_ARRAY | FTN_TYPE_UINT8),
            T(FTN_TYPE_ARRAY | FTN_TYPE_UINT16),
            T(FTN_TYPE_ARRAY | FTN_TYPE_UINT32),
            T(FTN_TYPE_ARRAY | FTN_TYPE_UINT64), T(FTN_TYPE_ARRAY | FTN_TYPE_FLOAT),
            T(FTN_TYPE_ARRAY | FTN_TYPE_DOUBLE)};
#undef T
#undef S
    return &types[flags & 0x1F];
}

static size_t elem_size(unsigned base)
{
    switch (base) {
    case FTN_TYPE_BOOL: return sizeof(bool);
    case FTN_TYPE_INT8: case FTN_TYPE_UINT8: return 1;
    case FTN_TYPE_INT16: case FTN_TYPE_UINT16: case FTN_TYPE_STRING16: return 2;
    case FTN_TYPE_INT32: case FTN_TYPE_UINT32: case FTN_TYPE_FLOAT:
    case FTN_TYPE_STRING32: return 4;
    case FTN_TYPE_INT64: case FTN_TYPE_UINT64: case FTN_TYPE_DOUBLE: return 8;
    case FTN_TYPE_STRING: return 1;
    default: return 0;
    }
}

/* *dst = a runtime-owned copy of the `n` units of `es` bytes at src->p,
 * followed by `extra` zeroed units (a string's terminator). */
static int copy_block(FutoInBinaryValue* dst, const FutoInBinaryValue* src,
                      size_t n, size_t es, size_t extra)
{
    void* mem = calloc(n + extra != 0 ? n + extra : 1, es != 0 ? es : 1);
    if (!mem) {
        return FUTOIN_ENOMEM;
    }
    if (n) {
        memcpy(mem, src->p, n * es);
    }
    dst->type = copy_type(src->type->flags);
    dst->p = mem;
    dst->length = (uint32_t)n;
    return FUTOIN_OK;
}

/* Into *dst, what the runtime keeps of *src: a copy, or (custom objects)
 * the value itself, moved. */
static int keep_value(FutoInBinaryValue* dst, FutoInBinaryValue* src)
{
    unsigned flags = src->type->flags, base = flags & FTN_BASE_TYPE_MASK;
    bool string = base == FTN_TYPE_STRING || base == FTN_TYPE_STRING16
                  || base == FTN_TYPE_STRING32;
    size_t n;
    memset(dst, 0, sizeof(*dst));
    if (base == FTN_TYPE_CUSTOM_OBJECT) {
        if (flags & FTN_TYPE_ARRAY) {
            return FUTOIN_EINVAL;
        }
        *dst = *src;
        memset(src, 0, sizeof(*src));
        return FUTOIN_OK;
    }
    if (flags & FTN_TYPE_ARRAY) {
        if (string) {
            return FUTOIN_EINVAL;
        }
        return copy_block(dst, src, src->length, elem_size(base), 0);
    }
    if (string) {
        n = src->length;
        if (!n && src->p) {
            if (base == FTN_TYPE_STRING) {
                n = strlen(src->cstr);
            } else if (base == FTN_TYPE_STRING16) {
                while (src->cstr16[n]) {
                    ++n;
                }
            } else {
                while (src->cstr32[n]) {
                    ++n;
                }
            }
        }
        return copy_block(dst, src, n, elem_size(base), 1);
    }
    *dst = *src;
    dst->type = copy_type((uint8_t)flags);
    dst->custom_data = NULL;
    return FUTOIN_OK;
}

static bool reserved(const char* name)
{
    return strcmp(name, "error_info") == 0 || strcmp(name, "last_exception") == 0
           || strcmp(name, "async_stack") == 0;
}

FUTOIN_API int futoin_state_set(FutoInAsyncSteps* bsi, const char* name,
                                FutoInBinaryValue* value)
{
    futoin__root* r;
    futoin__statevar** pv;
    futoin__statevar* v;
    FutoInBinaryValue* kept = NULL;
    char bad[8];
    size_t len;
    int rc;

    if (!futoin_async_ext(bsi) || !futoin__on_loop(bsi, "futoin_state_set()")) {
        return FUTOIN_EINVAL;
    }
    r = futoin__root_of(bsi);
    if (!r || !name || reserved(name)) {
        return FUTOIN_EINVAL;
    }
    if (value && !value->type) {
        /* no value: only NULL removes, a mistake must not erase a name */
        return FUTOIN_EINVAL;
    }
    if (value) {
        FutoInArgs one;
        memset(&one, 0, sizeof(one));
        one.arg0 = *value;
        if (!futoin__args_check(&one, "", bad, 0)) {
            return FUTOIN_EINVAL;
        }
        kept = malloc(sizeof(*kept));
        if (!kept) {
            return FUTOIN_ENOMEM;
        }
        rc = keep_value(kept, value);
        if (rc != FUTOIN_OK) {
            free(kept);
            return rc;
        }
    }
    if (!futoin__root_rare_get(r)) {
        if (kept) {
            shared_cleanup(NULL, kept);
        }
        return FUTOIN_ENOMEM;
    }
    for (pv = &r->rare->vars; *pv; pv = &(*pv)->next) {
        if (strcmp((*pv)->name, name) == 0) {
            break;
        }
    }
    v = *pv;
    if (v && v->cleanup != shared_cleanup) {
        if (kept) {
            shared_cleanup(NULL, kept);
        }
        return FUTOIN_EBUSY;
    }
    if (v) {
        /* replace (or remove) the old value */
        FUTOIN__USER(r, shared_cleanup(NULL, v->value));
        if (kept) {
            v->value = kept;
            return FUTOIN_OK;
        }
        *pv = v->next;
        free(v);
        return FUTOIN_OK;
    }
    if (!kept) {
        return FUTOIN_OK; /* removing what is not there */
    }
    len = strlen(name);
    v = malloc(sizeof(*v) + len + 1);
    if (!v) {
        shared_cleanup(NULL, kept);
        return FUTOIN_ENOMEM;
    }
    memcpy(v->name, name, len + 1);
    v->value = kept;
    v->cleanup = shared_cleanup;
    v->data = NULL;
    v->next = r->rare->vars;
    r->rare->vars = v;
    return FUTOIN_OK;
}

FUTOIN_API const FutoInBinaryValue* futoin_state_get(FutoInAsyncSteps* bsi,
                                                     const char* name)
{
    futoin__root* r;
    if (!futoin_async_ext(bsi) || !futoin__on_loop(bsi, "futoin_state_get()")) {
        return NULL;
    }
    r = futoin__root_of(bsi);
    if (!r || !name) {
        return NULL;
    }
    for (futoin__statevar* v = FUTOIN__RARE(r, vars); v; v = v->next) {
        if (strcmp(v->name, name) == 0) {
            return v->cleanup == shared_cleanup ? v->value : NULL;
        }
    }
    return NULL;
}
