/*
 * Plain C functions as steps, called through libffi (futoin/ffi.h). The
 * call interface is prepared once; each step only converts the incoming
 * values into a small on-stack buffer and calls ffi_call(), so running a
 * prepared function allocates nothing except a copied string result.
 */
#include "engine/engine.h"

#include <futoin/sys/ext.h>

#include <futoin/ffi.h>

#include <ffi.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct futoin_ffi_fn
{
    ffi_cif cif;
    void (*fn)(void);
    futoin_ffi_type ret;
    size_t nargs;
    futoin_ffi_type args[FUTOIN_FFI_MAX_ARGS];
    ffi_type* ffi_args[FUTOIN_FFI_MAX_ARGS];
};

static ffi_type* ffi_of(futoin_ffi_type t)
{
    switch (t) {
    case FUTOIN_FFI_VOID: return &ffi_type_void;
    case FUTOIN_FFI_INT32: return &ffi_type_sint32;
    case FUTOIN_FFI_INT64: return &ffi_type_sint64;
    case FUTOIN_FFI_UINT32: return &ffi_type_uint32;
    case FUTOIN_FFI_UINT64: return &ffi_type_uint64;
    case FUTOIN_FFI_FLOAT: return &ffi_type_float;
    case FUTOIN_FFI_DOUBLE: return &ffi_type_double;
    case FUTOIN_FFI_BOOL: return &ffi_type_uint8;
    case FUTOIN_FFI_CSTRING: return &ffi_type_pointer;
    }
    return NULL;
}

static const char* ffi_name(futoin_ffi_type t)
{
    static const char* const names[] = {"void", "int32", "int64", "uint32",
                                        "uint64", "float", "double", "bool",
                                        "const char*"};
    return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

/* What a value really is, for the error that refuses it: "int64",
 * "array of double", "string (NULL)", "unknown type (flags 0xee)". */
static const char* binval_name(const FutoInBinaryValue* v, char* buf,
                               size_t len)
{
    static const char* const names[] = {
            NULL,     "custom object", "string", "string16", "string32",
            "bool",   "int8",          "int16",  "int32",    "int64",
            "uint8",  "uint16",        "uint32", "uint64",   "float",
            "double"};
    unsigned flags, base, cplx;
    if (!v->type) {
        return "nothing";
    }
    flags = v->type->flags;
    base = flags & FTN_BASE_TYPE_MASK;
    cplx = flags & FTN_COMPLEX_TYPE_MASK;
    if (!names[base] || (cplx != 0 && cplx != FTN_TYPE_ARRAY)) {
        snprintf(buf, len, "unknown type (flags 0x%02x)", flags);
    } else if (cplx == FTN_TYPE_ARRAY) {
        snprintf(buf, len, "array of %s", names[base]);
    } else if (!v->p && (base == FTN_TYPE_STRING || base == FTN_TYPE_STRING16
                         || base == FTN_TYPE_STRING32)) {
        snprintf(buf, len, "%s (NULL)", names[base]);
    } else {
        return names[base];
    }
    return buf;
}

FUTOIN_API futoin_ffi_fn* futoin_ffi_prepare(void (*fn)(void),
                                             futoin_ffi_type ret, size_t nargs,
                                             const futoin_ffi_type* args)
{
    futoin_ffi_fn* p;
    if (!fn || nargs > FUTOIN_FFI_MAX_ARGS || (nargs && !args) || !ffi_of(ret)
        || (unsigned)ret > FUTOIN_FFI_CSTRING) {
        return NULL;
    }
    p = calloc(1, sizeof(*p));
    if (!p) {
        return NULL;
    }
    p->fn = fn;
    p->ret = ret;
    p->nargs = nargs;
    for (size_t i = 0; i < nargs; ++i) {
        if (args[i] == FUTOIN_FFI_VOID || (unsigned)args[i] > FUTOIN_FFI_CSTRING) {
            free(p);
            return NULL;
        }
        p->args[i] = args[i];
        p->ffi_args[i] = ffi_of(args[i]);
    }
    if (ffi_prep_cif(&p->cif, FFI_DEFAULT_ABI, (unsigned)nargs, ffi_of(ret),
                     p->ffi_args)
        != FFI_OK) {
        free(p);
        return NULL;
    }
    return p;
}

FUTOIN_API void futoin_ffi_free(futoin_ffi_fn* fn)
{
    free(fn);
}

/* One converted argument. */
typedef union ffi_slot
{
    int32_t i32;
    int64_t i64;
    uint32_t u32;
    uint64_t u64;
    float f;
    double d;
    uint8_t b;
    const char* s;
} ffi_slot;

/* Read an integer value of any FTN integer type; false if not one. */
static bool int_of(const FutoInBinaryValue* v, bool* neg, uint64_t* mag)
{
    int64_t s;
    switch (v->type->flags) {
    case FTN_TYPE_INT8: s = v->i8; break;
    case FTN_TYPE_INT16: s = v->i16; break;
    case FTN_TYPE_INT32: s = v->i32; break;
    case FTN_TYPE_INT64: s = v->i64; break;
    case FTN_TYPE_UINT8: *neg = false; *mag = v->u8; return true;
    case FTN_TYPE_UINT16: *neg = false; *mag = v->u16; return true;
    case FTN_TYPE_UINT32: *neg = false; *mag = v->u32; return true;
    case FTN_TYPE_UINT64: *neg = false; *mag = v->u64; return true;
    default: return false;
    }
    *neg = s < 0;
    *mag = s < 0 ? (uint64_t)(-(s + 1)) + 1 : (uint64_t)s;
    return true;
}

static bool convert(futoin_ffi_type t, const FutoInBinaryValue* v, ffi_slot* out)
{
    bool neg = false;
    uint64_t mag = 0;
    bool is_int;
    if (!v->type || (v->type->flags & FTN_TYPE_ARRAY)) {
        return false;
    }
    is_int = int_of(v, &neg, &mag);
    switch (t) {
    case FUTOIN_FFI_INT32:
        if (!is_int || (neg ? mag > (uint64_t)INT32_MAX + 1 : mag > INT32_MAX)) {
            return false;
        }
        out->i32 = neg ? (int32_t)(-(int64_t)(mag - 1) - 1) : (int32_t)mag;
        return true;
    case FUTOIN_FFI_INT64:
        if (!is_int || (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > INT64_MAX)) {
            return false;
        }
        out->i64 = neg ? -(int64_t)(mag - 1) - 1 : (int64_t)mag;
        return true;
    case FUTOIN_FFI_UINT32:
        if (!is_int || neg || mag > UINT32_MAX) {
            return false;
        }
        out->u32 = (uint32_t)mag;
        return true;
    case FUTOIN_FFI_UINT64:
        if (!is_int || neg) {
            return false;
        }
        out->u64 = mag;
        return true;
    case FUTOIN_FFI_FLOAT:
        if (v->type->flags != FTN_TYPE_FLOAT) {
            return false;
        }
        out->f = v->f;
        return true;
    case FUTOIN_FFI_DOUBLE:
        if (v->type->flags == FTN_TYPE_DOUBLE) {
            out->d = v->d;
        } else if (v->type->flags == FTN_TYPE_FLOAT) {
            out->d = v->f;
        } else if (is_int && mag <= (1ull << 53)) {
            out->d = neg ? -(double)mag : (double)mag;
        } else {
            return false;
        }
        return true;
    case FUTOIN_FFI_BOOL:
        if (v->type->flags != FTN_TYPE_BOOL) {
            return false;
        }
        out->b = v->b ? 1 : 0;
        return true;
    case FUTOIN_FFI_CSTRING:
        if (v->type->flags != FTN_TYPE_STRING || !v->cstr) {
            return false; /* a NULL string would reach the callee */
        }
        out->s = v->cstr;
        return true;
    default:
        return false;
    }
}

static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};
static const FutoInType ty_u64 = {FTN_TYPE_UINT64, NULL};
static const FutoInType ty_i32 = {FTN_TYPE_INT32, NULL};
static const FutoInType ty_u32 = {FTN_TYPE_UINT32, NULL};
static const FutoInType ty_f = {FTN_TYPE_FLOAT, NULL};
static const FutoInType ty_d = {FTN_TYPE_DOUBLE, NULL};
static const FutoInType ty_b = {FTN_TYPE_BOOL, NULL};
static void free_cstr(FutoInBinaryValue* v)
{
    free((void*)v->cstr);
}
static const FutoInType ty_s = {FTN_TYPE_STRING, free_cstr};

static void ffi_step(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* in)
{
    const futoin_ffi_fn* p = data;
    ffi_slot slots[FUTOIN_FFI_MAX_ARGS];
    void* argv[FUTOIN_FFI_MAX_ARGS];
    union
    {
        ffi_arg word; /* libffi widens small integer returns to ffi_arg */
        int64_t i64;
        uint64_t u64;
        float f;
        double d;
        const char* s;
    } rv;
    FutoInArgs out;
    char info[160];
    char got[48];

    for (size_t i = 0; i < p->nargs; ++i) {
        if (!convert(p->args[i], &in->args[i], &slots[i])) {
            snprintf(info, sizeof(info),
                     "ffi step: argument %zu: expected %s, got %s", i + 1,
                     ffi_name(p->args[i]),
                     binval_name(&in->args[i], got, sizeof(got)));
            bsi->api->handle_error(bsi, FUTOIN_ERR_INVALID_REQUEST, info);
            return;
        }
        argv[i] = &slots[i];
    }
    memset(&rv, 0, sizeof(rv));
    ffi_call((ffi_cif*)&p->cif, p->fn, &rv, argv);
    memset(&out, 0, sizeof(out));
    switch (p->ret) {
    case FUTOIN_FFI_VOID:
        bsi->api->success(bsi, NULL);
        return;
    case FUTOIN_FFI_INT32:
        out.arg0.type = &ty_i32;
        out.arg0.i32 = (int32_t)rv.word;
        break;
    case FUTOIN_FFI_UINT32:
        out.arg0.type = &ty_u32;
        out.arg0.u32 = (uint32_t)rv.word;
        break;
    case FUTOIN_FFI_INT64:
        out.arg0.type = &ty_i64;
        out.arg0.i64 = rv.i64;
        break;
    case FUTOIN_FFI_UINT64:
        out.arg0.type = &ty_u64;
        out.arg0.u64 = rv.u64;
        break;
    case FUTOIN_FFI_FLOAT:
        out.arg0.type = &ty_f;
        out.arg0.f = rv.f;
        break;
    case FUTOIN_FFI_DOUBLE:
        out.arg0.type = &ty_d;
        out.arg0.d = rv.d;
        break;
    case FUTOIN_FFI_BOOL:
        out.arg0.type = &ty_b;
        out.arg0.b = (rv.word & 0xff) != 0;
        break;
    case FUTOIN_FFI_CSTRING:
        if (rv.s) {
            char* copy = strdup(rv.s);
            if (!copy) {
                bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR,
                                       "ffi step: out of memory");
                return;
            }
            out.arg0.type = &ty_s;
            out.arg0.cstr = copy;
            out.arg0.length = (uint32_t)strlen(copy);
        }
        break;
    }
    bsi->api->success(bsi, &out);
}

FUTOIN_API void futoin_ffi_add(FutoInAsyncSteps* bsi, const futoin_ffi_fn* fn,
                               FutoInAsyncSteps_error_callback eh)
{
    static const char msg[] = "futoin_ffi_add(): the prepared call is NULL";
    if (!bsi) {
        futoin__misuse_null("futoin_ffi_add()");
        return;
    }
    if (!fn) {
        /* Into the flow from a running step (InvalidRequest, like add()
         * with a NULL callback); otherwise, e.g. on a root, a report. */
        futoin__flow* fl = futoin__flow_of(bsi);
        if (fl && fl->top == futoin__as_step(bsi)
            && futoin__as_step(bsi)->state == FUTOIN__S_EXEC) {
            bsi->api->handle_error(bsi, FUTOIN_ERR_INVALID_REQUEST, msg);
        } else if (futoin_async_ext(bsi)) {
            futoin__tool_misuse(futoin_async_tool(bsi), msg);
        } else {
            bsi->api->handle_error(bsi, FUTOIN_ERR_INVALID_REQUEST, msg);
        }
        return;
    }
    bsi->api->add(bsi, (void*)fn, ffi_step, eh);
}
