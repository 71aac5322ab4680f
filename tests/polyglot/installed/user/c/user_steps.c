/*
 * A user's C steps, as a C programmer who installed the core with `meson
 * install` writes them: FTN12 step functions in a shared object built with
 * `pkg-config --cflags futoin_async` (headers only: a step calls the
 * vtable it is given, it links nothing of the library). Other languages
 * add them by the shared object's absolute path and a bare name, e.g.
 * Python `asi.add_foreign("c", "/path/libuser_steps.so", "append")`.
 *
 *   append(trail, n) -> (trail + ">c", n + 1)
 *   fail()           -> error UserError, error_info "c"
 */
#include <futoin/ftn12.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

__attribute__((visibility("default"))) void append(FutoInAsyncSteps* as, void* data,
                                                   const FutoInArgs* in);
__attribute__((visibility("default"))) void fail(FutoInAsyncSteps* as, void* data,
                                                 const FutoInArgs* in);

static void free_string(FutoInBinaryValue* v)
{
    free((void*)v->cstr);
}

static const FutoInType owned_string = {FTN_TYPE_STRING, free_string};
static const FutoInType int64_type = {FTN_TYPE_INT64, NULL};

/* An integer value of any width, or 0 with *ok cleared. */
static int64_t int_value(const FutoInBinaryValue* v, int* ok)
{
    unsigned base = v->type ? v->type->flags & 0x1F : 0;
    *ok = 1;
    switch (v->type && !(v->type->flags & FTN_TYPE_ARRAY) ? base : 0) {
    case FTN_TYPE_INT8: return v->i8;
    case FTN_TYPE_INT16: return v->i16;
    case FTN_TYPE_INT32: return v->i32;
    case FTN_TYPE_INT64: return v->i64;
    case FTN_TYPE_UINT8: return v->u8;
    case FTN_TYPE_UINT16: return v->u16;
    case FTN_TYPE_UINT32: return v->u32;
    case FTN_TYPE_UINT64: return (int64_t)v->u64;
    default: *ok = 0; return 0;
    }
}

void append(FutoInAsyncSteps* as, void* data, const FutoInArgs* in)
{
    const FutoInBinaryValue* t = &in->args[0];
    FutoInArgs out;
    size_t len;
    char* s;
    int ok;
    int64_t n = int_value(&in->args[1], &ok);
    (void)data;
    if (!t->type || (t->type->flags & 0x1F) != FTN_TYPE_STRING || !ok) {
        as->api->handle_error(as, "InvalidRequest", "c append: (string, integer) expected");
        return;
    }
    len = t->length ? t->length : strlen(t->cstr);
    if (!(s = malloc(len + 3))) {
        as->api->handle_error(as, "InternalError", "c append: out of memory");
        return;
    }
    memcpy(s, t->cstr, len);
    memcpy(s + len, ">c", 3);
    memset(&out, 0, sizeof(out));
    out.arg0.type = &owned_string; /* the runtime frees it with free_string */
    out.arg0.cstr = s;
    out.arg0.length = (uint32_t)(len + 2);
    out.arg1.type = &int64_type;
    out.arg1.i64 = n + 1;
    as->api->success(as, &out);
}

void fail(FutoInAsyncSteps* as, void* data, const FutoInArgs* in)
{
    (void)data;
    (void)in;
    as->api->handle_error(as, "UserError", "c");
}
