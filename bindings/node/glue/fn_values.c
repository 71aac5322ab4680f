/*
 * Values between steps. A JavaScript step's results stay JavaScript: the
 * array of them crosses the core as ONE custom FTN12 value, the array's
 * reference, whose cleanup deletes the reference (so a value the core
 * drops, a step that never runs, releases it exactly once). What another
 * language's step passes on (numbers, strings, bools) becomes JavaScript
 * values here.
 */
#include "futoin_node.h"

#include <string.h>

static void js_values_cleanup(FutoInBinaryValue* v)
{
    fn_release_ref(v->custom_data);
    v->custom_data = NULL;
}

static const FutoInType js_values_type = {FTN_TYPE_CUSTOM_OBJECT, js_values_cleanup};

void fn_values_to_args(napi_env env, napi_value arr, FutoInArgs* out)
{
    napi_ref ref = NULL;
    memset(out, 0, sizeof *out);
    if (napi_create_reference(env, arr, 1, &ref) == napi_ok) {
        out->arg0.type = &js_values_type;
        out->arg0.custom_data = ref;
    }
}

static napi_value one_value(napi_env env, const FutoInBinaryValue* v)
{
    napi_value r;
    unsigned base = v->type->flags & FTN_BASE_TYPE_MASK;
    if (v->type->flags & FTN_TYPE_ARRAY) {
        uint32_t i;
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
        napi_set_element(env, r, (uint32_t)i, one_value(env, &args->args[i]));
    }
    return r;
}
