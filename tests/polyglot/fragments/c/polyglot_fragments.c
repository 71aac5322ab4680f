/*
 * The polyglot fragments in C (module "polyglot_fragments" of every
 * language, see tests/polyglot/README.md): FTN12 step functions that the
 * built-in C host finds by their bare names in this shared object, e.g.
 *   futoin_host_add(as, "c", "/path/libpolyglot_fragments.so", "echo").
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strdup, however this file is compiled */
#endif
#include <futoin/errors.h>
#include <futoin/steps.h>
#include <futoin/sys/host.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAGMENT FUTOIN_API void

FRAGMENT echo(FutoInAsyncSteps* as, void* d, const FutoInArgs* in);
FRAGMENT describe(FutoInAsyncSteps* as, void* d, const FutoInArgs* in);
FRAGMENT fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* in);
FRAGMENT wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* in);
FRAGMENT read_state(FutoInAsyncSteps* as, void* d, const FutoInArgs* in);
FRAGMENT write_state(FutoInAsyncSteps* as, void* d, const FutoInArgs* in);
FRAGMENT catch(FutoInAsyncSteps* as, void* d, const FutoInArgs* in);

/* ---- values ------------------------------------------------------------- */

static void free_p(FutoInBinaryValue* v)
{
    free((void*)v->p);
}

static size_t elem_size(unsigned base)
{
    switch (base) {
    case FTN_TYPE_BOOL: return sizeof(bool);
    case FTN_TYPE_INT8: case FTN_TYPE_UINT8: return 1;
    case FTN_TYPE_INT16: case FTN_TYPE_UINT16: return 2;
    case FTN_TYPE_INT32: case FTN_TYPE_UINT32: case FTN_TYPE_FLOAT: return 4;
    case FTN_TYPE_INT64: case FTN_TYPE_UINT64: case FTN_TYPE_DOUBLE: return 8;
    default: return 0;
    }
}

/* A copy of `v` that this side owns (the callback's values are the
 * runtime's): types with a cleanup of our own, by flags. */
static const FutoInType* owned_type(uint8_t flags)
{
    static const FutoInType types[32] = {
            {0x00, NULL}, {0x01, NULL}, {0x02, free_p}, {0x03, NULL},
            {0x04, NULL}, {0x05, NULL}, {0x06, NULL}, {0x07, NULL},
            {0x08, NULL}, {0x09, NULL}, {0x0a, NULL}, {0x0b, NULL},
            {0x0c, NULL}, {0x0d, NULL}, {0x0e, NULL}, {0x0f, NULL},
            {0x10, free_p}, {0x11, free_p}, {0x12, free_p}, {0x13, free_p},
            {0x14, free_p}, {0x15, free_p}, {0x16, free_p}, {0x17, free_p},
            {0x18, free_p}, {0x19, free_p}, {0x1a, free_p}, {0x1b, free_p},
            {0x1c, free_p}, {0x1d, free_p}, {0x1e, free_p}, {0x1f, free_p}};
    return &types[flags & 0x1F];
}

static bool copy_value(FutoInBinaryValue* dst, const FutoInBinaryValue* src)
{
    unsigned flags = src->type->flags, base = flags & FTN_BASE_TYPE_MASK;
    memset(dst, 0, sizeof(*dst));
    if (flags & FTN_TYPE_ARRAY) {
        size_t n = src->length * elem_size(base);
        void* mem = malloc(n ? n : 1);
        if (!mem || !elem_size(base)) {
            free(mem);
            return false;
        }
        memcpy(mem, src->p, n);
        dst->type = owned_type((uint8_t)flags);
        dst->p = mem;
        dst->length = src->length;
        return true;
    }
    if (base == FTN_TYPE_STRING) {
        size_t n = src->length ? src->length : strlen(src->cstr);
        char* s = malloc(n + 1);
        if (!s) {
            return false;
        }
        memcpy(s, src->cstr, n);
        s[n] = 0;
        dst->type = owned_type((uint8_t)flags);
        dst->cstr = s;
        dst->length = (uint32_t)n;
        return true;
    }
    if (base == FTN_TYPE_CUSTOM_OBJECT || base == FTN_TYPE_STRING16
        || base == FTN_TYPE_STRING32) {
        return false;
    }
    *dst = *src;
    dst->type = owned_type((uint8_t)flags);
    return true;
}

static void set_string(FutoInBinaryValue* v, const char* s)
{
    v->type = owned_type(FTN_TYPE_STRING);
    v->cstr = strdup(s);
    v->length = (uint32_t)strlen(s);
}

static bool is_int(unsigned base)
{
    return base >= FTN_TYPE_INT8 && base <= FTN_TYPE_UINT64;
}

static int64_t int_at(const FutoInBinaryValue* v, const void* p, unsigned base)
{
    switch (base) {
    case FTN_TYPE_INT8: return *(const int8_t*)p;
    case FTN_TYPE_INT16: return *(const int16_t*)p;
    case FTN_TYPE_INT32: return *(const int32_t*)p;
    case FTN_TYPE_INT64: return *(const int64_t*)p;
    case FTN_TYPE_UINT8: return *(const uint8_t*)p;
    case FTN_TYPE_UINT16: return *(const uint16_t*)p;
    case FTN_TYPE_UINT32: return *(const uint32_t*)p;
    default: return (int64_t) * (const uint64_t*)p;
    }
}

/* Shortest text that reads back as the same double. */
static void put_float(char* out, size_t len, double d)
{
    for (int prec = 1; prec <= 17; ++prec) {
        snprintf(out, len, "%.*g", prec, d);
        if (strtod(out, NULL) == d) {
            return;
        }
    }
}

static void describe_value(const FutoInBinaryValue* v, char* out, size_t len)
{
    unsigned flags = v->type->flags, base = flags & FTN_BASE_TYPE_MASK;
    size_t used;
    if (flags & FTN_TYPE_ARRAY) {
        size_t es = elem_size(base);
        if (base == FTN_TYPE_UINT8) {
            used = (size_t)snprintf(out, len, "bytes:");
            for (uint32_t i = 0; i < v->length && used + 3 < len; ++i) {
                used += (size_t)snprintf(out + used, len - used, "%02x",
                                         ((const uint8_t*)v->p)[i]);
            }
            return;
        }
        used = (size_t)snprintf(out, len, is_int(base) ? "ints:" : "floats:");
        for (uint32_t i = 0; i < v->length && used + 24 < len; ++i) {
            const void* p = (const char*)v->p + i * es;
            char num[32];
            if (is_int(base)) {
                snprintf(num, sizeof(num), "%" PRId64, int_at(v, p, base));
            } else {
                put_float(num, sizeof(num), base == FTN_TYPE_FLOAT
                                                    ? *(const float*)p
                                                    : *(const double*)p);
            }
            used += (size_t)snprintf(out + used, len - used, "%s%s",
                                     i ? "|" : "", num);
        }
        return;
    }
    if (is_int(base)) {
        snprintf(out, len, "int:%" PRId64, int_at(v, &v->i64, base));
    } else if (base == FTN_TYPE_FLOAT || base == FTN_TYPE_DOUBLE) {
        char num[32];
        put_float(num, sizeof(num), base == FTN_TYPE_FLOAT ? v->f : v->d);
        snprintf(out, len, "float:%s", num);
    } else if (base == FTN_TYPE_BOOL) {
        snprintf(out, len, "bool:%s", v->b ? "true" : "false");
    } else if (base == FTN_TYPE_STRING) {
        snprintf(out, len, "str:%.*s",
                 (int)(v->length ? v->length : strlen(v->cstr)), v->cstr);
    } else {
        snprintf(out, len, "other");
    }
}

/* ---- the fragments ------------------------------------------------------ */

FRAGMENT echo(FutoInAsyncSteps* as, void* d, const FutoInArgs* in)
{
    FutoInArgs out;
    memset(&out, 0, sizeof(out));
    for (int i = 0; i < 4; ++i) {
        if (in->args[i].type && !copy_value(&out.args[i], &in->args[i])) {
            as->api->handle_error(as, FUTOIN_ERR_INVALID_REQUEST,
                                  "c echo: a value it cannot copy");
            return;
        }
    }
    as->api->success(as, &out);
}

FRAGMENT describe(FutoInAsyncSteps* as, void* d, const FutoInArgs* in)
{
    char text[1024] = "";
    size_t used = 0;
    FutoInArgs out;
    for (int i = 0; i < 4; ++i) {
        char one[512];
        if (!in->args[i].type) {
            continue;
        }
        describe_value(&in->args[i], one, sizeof(one));
        used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s",
                                 used ? "," : "", one);
    }
    memset(&out, 0, sizeof(out));
    set_string(&out.arg0, used ? text : "none");
    as->api->success(as, &out);
}

FRAGMENT fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* in)
{
    as->api->handle_error(as, "FragmentError", "c");
}

static const FutoInType ty_bool = {FTN_TYPE_BOOL, NULL};

static void on_cancel(FutoInAsyncSteps* as, void* d)
{
    FutoInBinaryValue yes;
    memset(&yes, 0, sizeof(yes));
    yes.type = &ty_bool;
    yes.b = true;
    futoin_state_set(as, "cancelled_c", &yes);
}

FRAGMENT wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* in)
{
    as->api->setCancel(as, NULL, on_cancel);
    as->api->waitExternal(as);
}

FRAGMENT read_state(FutoInAsyncSteps* as, void* d, const FutoInArgs* in)
{
    const FutoInBinaryValue* v = futoin_state_get(as, "key");
    FutoInArgs out;
    memset(&out, 0, sizeof(out));
    if (v && !copy_value(&out.arg0, v)) {
        as->api->handle_error(as, FUTOIN_ERR_INVALID_REQUEST,
                              "c read_state: a value it cannot copy");
        return;
    }
    as->api->success(as, &out);
}

FRAGMENT write_state(FutoInAsyncSteps* as, void* d, const FutoInArgs* in)
{
    FutoInBinaryValue v;
    memset(&v, 0, sizeof(v));
    set_string(&v, "c");
    futoin_state_set(as, "from_c", &v); /* copied */
    futoin_reset_binval(&v);
    as->api->success(as, NULL);
}

/* catch: add the named step (language, module, function) under a step of
 * ours whose error handler, written in C, turns its error into a value. */
typedef struct named
{
    char language[32];
    char module[512];
    char function[256];
} named;

static void add_named(FutoInAsyncSteps* as, void* d, const FutoInArgs* in)
{
    named* n = d;
    FUTOIN_HOST_ADD(as, n->language, n->module, n->function);
}

static void caught(FutoInAsyncSteps* as, void* d, const char* code)
{
    char text[128];
    FutoInArgs out;
    snprintf(text, sizeof(text), "caught %s in c", code);
    memset(&out, 0, sizeof(out));
    set_string(&out.arg0, text);
    as->api->success(as, &out);
}

static const char* str_arg(const FutoInArgs* in, int i)
{
    const FutoInBinaryValue* v = &in->args[i];
    return v->type && (v->type->flags & 0x1F) == FTN_TYPE_STRING && v->cstr ? v->cstr
                                                                           : NULL;
}

FRAGMENT catch(FutoInAsyncSteps* as, void* d, const FutoInArgs* in)
{
    const char* lang = str_arg(in, 0);
    const char* mod = str_arg(in, 1);
    const char* fn = str_arg(in, 2);
    named* n;
    if (!lang || !mod || !fn) {
        as->api->handle_error(as, FUTOIN_ERR_INVALID_REQUEST,
                              "c catch: three strings expected");
        return;
    }
    /* lives as long as this step's frame, which outlives the sub-step */
    n = as->api->stack(as, sizeof(*n), NULL);
    snprintf(n->language, sizeof(n->language), "%s", lang);
    snprintf(n->module, sizeof(n->module), "%s", mod);
    snprintf(n->function, sizeof(n->function), "%s", fn);
    FUTOIN_ADD(as, n, add_named, caught);
}
