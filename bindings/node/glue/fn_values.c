/*
 * Values between steps. A JavaScript step's results stay JavaScript: the
 * array of them crosses the core as ONE custom FTN12 value, the array's
 * reference, whose cleanup deletes the reference (so a value the core
 * drops, a step that never runs, releases it exactly once). What another
 * language's step passes on (numbers, strings, bools) becomes JavaScript
 * values here.
 */
#include "futoin_node.h"

#include <stdlib.h>
#include <string.h>

static void js_values_cleanup(FutoInBinaryValue* v)
{
    fn_release_ref(v->custom_data);
    v->custom_data = NULL;
}

static const FutoInType js_values_type = {FTN_TYPE_CUSTOM_OBJECT, js_values_cleanup};
/* One JavaScript value that has no FTN12 form of its own (an object, a
 * function, null, undefined): its reference, for another language to pass
 * on; it comes back to JavaScript as the very value. */
static const FutoInType js_one_type = {FTN_TYPE_CUSTOM_OBJECT, js_values_cleanup};

void fn_values_to_args(napi_env env, napi_value arr, FutoInArgs* out)
{
    napi_ref ref;
    memset(out, 0, sizeof *out);
    ref = fn_new_ref(env, arr);
    if (ref) {
        out->arg0.type = &js_values_type;
        out->arg0.custom_data = ref;
    }
}

napi_value fn_ftn_to_js(napi_env env, const FutoInBinaryValue* v)
{
    napi_value r;
    unsigned base = v->type->flags & FTN_BASE_TYPE_MASK;
    if (v->type == &js_one_type) {
        if (napi_get_reference_value(env, (napi_ref)v->custom_data, &r) != napi_ok || !r) {
            napi_get_undefined(env, &r);
        }
        return r;
    }
    if (v->type->flags & FTN_TYPE_ARRAY) {
        uint32_t i;
        if (base == FTN_TYPE_UINT8 || base == FTN_TYPE_INT8) {
            /* bytes: a Buffer */
            void* d = NULL;
            napi_create_buffer_copy(env, v->length, v->p, &d, &r);
            return r;
        }
        if (base == FTN_TYPE_BOOL) {
            napi_create_array_with_length(env, v->length, &r);
            for (i = 0; i < v->length; ++i) {
                napi_value x;
                napi_get_boolean(env, ((const bool*)v->p)[i], &x);
                napi_set_element(env, r, i, x);
            }
            return r;
        }
        if (base == FTN_TYPE_STRING || base == FTN_TYPE_CUSTOM_OBJECT) {
            napi_get_null(env, &r); /* another language's layout */
            return r;
        }
        napi_create_array_with_length(env, v->length, &r);
        for (i = 0; i < v->length; ++i) {
            napi_value x;
            double d = 0;
            switch (base) {
            case FTN_TYPE_INT8: d = ((const int8_t*)v->p)[i]; break;
            case FTN_TYPE_INT16: d = ((const int16_t*)v->p)[i]; break;
            case FTN_TYPE_INT32: d = ((const int32_t*)v->p)[i]; break;
            case FTN_TYPE_INT64: d = (double)((const int64_t*)v->p)[i]; break;
            case FTN_TYPE_UINT8: d = ((const uint8_t*)v->p)[i]; break;
            case FTN_TYPE_UINT16: d = ((const uint16_t*)v->p)[i]; break;
            case FTN_TYPE_UINT32: d = ((const uint32_t*)v->p)[i]; break;
            case FTN_TYPE_UINT64: d = (double)((const uint64_t*)v->p)[i]; break;
            case FTN_TYPE_FLOAT: d = ((const float*)v->p)[i]; break;
            case FTN_TYPE_DOUBLE: d = ((const double*)v->p)[i]; break;
            default: break;
            }
            napi_create_double(env, d, &x);
            napi_set_element(env, r, i, x);
        }
        return r;
    }
    switch (base) {
    case FTN_TYPE_STRING:
        napi_create_string_utf8(env, v->cstr ? v->cstr : "",
                                v->length ? v->length : NAPI_AUTO_LENGTH, &r);
        return r;
    case FTN_TYPE_BOOL: napi_get_boolean(env, v->b, &r); return r;
    case FTN_TYPE_INT8: napi_create_int32(env, v->i8, &r); return r;
    case FTN_TYPE_INT16: napi_create_int32(env, v->i16, &r); return r;
    case FTN_TYPE_INT32: napi_create_int32(env, v->i32, &r); return r;
    case FTN_TYPE_INT64: napi_create_int64(env, v->i64, &r); return r;
    case FTN_TYPE_UINT8: napi_create_uint32(env, v->u8, &r); return r;
    case FTN_TYPE_UINT16: napi_create_uint32(env, v->u16, &r); return r;
    case FTN_TYPE_UINT32: napi_create_uint32(env, v->u32, &r); return r;
    case FTN_TYPE_UINT64: napi_create_double(env, (double)v->u64, &r); return r;
    case FTN_TYPE_FLOAT: napi_create_double(env, v->f, &r); return r;
    case FTN_TYPE_DOUBLE: napi_create_double(env, v->d, &r); return r;
    default: napi_get_null(env, &r); return r; /* another language's object */
    }
}

napi_value fn_args_to_values(napi_env env, const FutoInArgs* args)
{
    napi_value r;
    int i, n = 0;
    if (!args || !args->arg0.type) {
        napi_get_undefined(env, &r);
        return r;
    }
    if (args->arg0.type == &js_values_type) {
        if (napi_get_reference_value(env, (napi_ref)args->arg0.custom_data, &r) != napi_ok
            || !r) {
            napi_get_undefined(env, &r);
        }
        return r;
    }
    while (n < 4 && args->args[n].type) {
        ++n;
    }
    napi_create_array_with_length(env, (size_t)n, &r);
    for (i = 0; i < n; ++i) {
        napi_set_element(env, r, (uint32_t)i, fn_ftn_to_js(env, &args->args[i]));
    }
    return r;
}

/* ---- JavaScript values as FTN12 values (what crosses into other languages) -- */

static void free_p(FutoInBinaryValue* v)
{
    free((void*)v->p);
    v->p = NULL;
}

static const FutoInType ty_bool = {FTN_TYPE_BOOL, NULL};
static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};
static const FutoInType ty_double = {FTN_TYPE_DOUBLE, NULL};
static const FutoInType ty_str = {FTN_TYPE_STRING, free_p};
static const FutoInType ty_bytes = {FTN_TYPE_ARRAY | FTN_TYPE_UINT8, free_p};
static const FutoInType ty_i64arr = {FTN_TYPE_ARRAY | FTN_TYPE_INT64, free_p};
static const FutoInType ty_darr = {FTN_TYPE_ARRAY | FTN_TYPE_DOUBLE, free_p};

/* 2^53: beyond it a double is no exact integer of JavaScript's */
#define FN_SAFE_INT 9007199254740992.0

static int integral(double d)
{
    return d == d && d >= -FN_SAFE_INT && d <= FN_SAFE_INT && (double)(int64_t)d == d;
}

static void set_custom(napi_env env, napi_value v, FutoInBinaryValue* out)
{
    out->type = &js_one_type;
    out->custom_data = fn_new_ref(env, v);
    out->length = 0;
}

/* A non-empty array of numbers only: ARRAY|INT64 or ARRAY|DOUBLE. */
static int number_array(napi_env env, napi_value v, FutoInBinaryValue* out)
{
    uint32_t n = 0, i;
    int all_int = 1;
    double* d;
    if (napi_get_array_length(env, v, &n) != napi_ok || n == 0 || n > (1u << 24)) {
        return 0;
    }
    d = malloc(sizeof(double) * n);
    if (!d) {
        return 0;
    }
    for (i = 0; i < n; ++i) {
        napi_value x;
        napi_valuetype t = napi_undefined;
        if (napi_get_element(env, v, i, &x) != napi_ok || napi_typeof(env, x, &t) != napi_ok
            || t != napi_number) {
            free(d);
            return 0;
        }
        napi_get_value_double(env, x, &d[i]);
        all_int &= integral(d[i]);
    }
    if (all_int) {
        int64_t* q = (int64_t*)d; /* same size: converted in place */
        for (i = 0; i < n; ++i) {
            q[i] = (int64_t)d[i];
        }
        out->type = &ty_i64arr;
    } else {
        out->type = &ty_darr;
    }
    out->p = d;
    out->length = n;
    return 1;
}

/* A Buffer or a Uint8Array: its bytes. */
static int bytes_of(napi_env env, napi_value v, void** data, size_t* len)
{
    bool is = false;
    napi_typedarray_type tt;
    napi_value ab;
    size_t off;
    if (napi_is_buffer(env, v, &is) == napi_ok && is) {
        return napi_get_buffer_info(env, v, data, len) == napi_ok;
    }
    if (napi_is_typedarray(env, v, &is) == napi_ok && is) {
        return napi_get_typedarray_info(env, v, &tt, len, data, &ab, &off) == napi_ok
               && tt == napi_uint8_array;
    }
    return 0;
}

void fn_js_to_ftn(napi_env env, napi_value v, FutoInBinaryValue* out)
{
    napi_valuetype t = napi_undefined;
    memset(out, 0, sizeof *out);
    napi_typeof(env, v, &t);
    switch (t) {
    case napi_number: {
        double d = 0;
        napi_get_value_double(env, v, &d);
        if (integral(d) && !(d == 0 && 1 / d < 0)) {
            out->type = &ty_i64;
            out->i64 = (int64_t)d;
        } else {
            out->type = &ty_double;
            out->d = d;
        }
        return;
    }
    case napi_boolean:
        out->type = &ty_bool;
        napi_get_value_bool(env, v, &out->b);
        return;
    case napi_bigint: {
        bool lossless = false;
        int64_t i = 0;
        napi_get_value_bigint_int64(env, v, &i, &lossless);
        if (lossless) {
            out->type = &ty_i64;
            out->i64 = i;
            return;
        }
        break;
    }
    case napi_string: {
        size_t len = 0;
        char* s;
        napi_get_value_string_utf8(env, v, NULL, 0, &len);
        if (len > UINT32_MAX - 1 || !(s = malloc(len + 1))) {
            break;
        }
        napi_get_value_string_utf8(env, v, s, len + 1, &len);
        out->type = &ty_str;
        out->cstr = s;
        out->length = (uint32_t)len;
        return;
    }
    case napi_object: {
        bool is = false;
        void* data = NULL;
        size_t len = 0;
        if (bytes_of(env, v, &data, &len)) {
            void* copy = malloc(len ? len : 1);
            if (!copy || len > UINT32_MAX) {
                free(copy);
                break;
            }
            if (len) {
                memcpy(copy, data, len);
            }
            out->type = &ty_bytes;
            out->p = copy;
            out->length = (uint32_t)len;
            return;
        }
        if (napi_is_array(env, v, &is) == napi_ok && is && number_array(env, v, out)) {
            return;
        }
        break;
    }
    default:
        break;
    }
    set_custom(env, v, out);
}

int fn_js_is_scalar(napi_env env, napi_value v)
{
    napi_valuetype t = napi_undefined;
    napi_typeof(env, v, &t);
    return t == napi_number || t == napi_string || t == napi_boolean;
}
