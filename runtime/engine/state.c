/*
 * Root state (§1.7, stateVariable) and stack() allocations (§1.14).
 *
 * State variables are a short list per root: flows hold a handful of named
 * values, so a linear scan beats a hash table in both speed and memory.
 * Reserved names give the predefined state of §1.7:
 *   "error_info"     -> const char*: info of the last error, or NULL;
 *   "last_exception" -> const char*: code of the last error, or NULL.
 */
#include "engine/engine.h"

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
    while ((v = r->vars) != NULL) {
        r->vars = v->next;
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
        futoin__tool_misuse(r->owner, "stateVariable(): the name is NULL");
        return NULL;
    }
    if (strcmp(name, "error_info") == 0) {
        return r->error_info;
    }
    if (strcmp(name, "last_exception") == 0) {
        return (void*)r->error_code;
    }
    for (v = r->vars; v; v = v->next) {
        if (strcmp(v->name, name) == 0) {
            return v->value;
        }
    }
    if (!allocate) {
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
    v->next = r->vars;
    r->vars = v;
    return v->value;
}
