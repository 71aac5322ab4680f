/* Unmodified plain C functions as steps through libffi (futoin/ffi.h):
 * arguments from the previous step's values by declared types, the return
 * value passed on, mismatches a clear InvalidRequest. */
#include "common.h"

#include <futoin/ffi.h>

#include <math.h>

TestSuite(ffi, .init = fx_setup, .fini = fx_teardown);

static const FutoInType ty_double = {FTN_TYPE_DOUBLE, NULL};
static const FutoInType ty_int32 = {FTN_TYPE_INT32, NULL};
static const FutoInType ty_bool = {FTN_TYPE_BOOL, NULL};

/* plain functions, not written for futoin */
static int64_t add64(int64_t a, int64_t b)
{
    return a + b;
}
static size_t my_strlen(const char* s)
{
    return strlen(s);
}
static const char* greet(const char* who)
{
    static char buf[64];
    snprintf(buf, sizeof(buf), "hello, %s", who);
    return buf;
}
static int32_t negate32(int32_t v)
{
    return -v;
}
static bool is_odd(int64_t v)
{
    return v & 1;
}
static int void_calls;
static void no_result(void)
{
    ++void_calls;
}

static FutoInArgs pending;
static void give(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->success(as, &pending);
}
static void print_result(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const FutoInBinaryValue* v = &a->arg0;
    if (!v->type) {
        tr("result none");
    } else if (v->type->flags == FTN_TYPE_DOUBLE) {
        tr("result double %g", v->d);
    } else if (v->type->flags == FTN_TYPE_INT64) {
        tr("result int64 %lld", (long long)v->i64);
    } else if (v->type->flags == FTN_TYPE_UINT64) {
        tr("result uint64 %llu", (unsigned long long)v->u64);
    } else if (v->type->flags == FTN_TYPE_INT32) {
        tr("result int32 %d", v->i32);
    } else if (v->type->flags == FTN_TYPE_BOOL) {
        tr("result bool %d", v->b);
    } else if (v->type->flags == FTN_TYPE_STRING) {
        tr("result string %s", v->cstr);
    }
}
static void eh_info(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("%s: %s", code,
       (const char*)API(as)->stateVariable(as, NULL, "error_info", NULL, NULL));
}

static void run_call(futoin_ffi_fn* fn)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    cr_assert_not_null(fn);
    API(as)->add(as, NULL, give, NULL);
    futoin_ffi_add(as, fn, eh_info);
    API(as)->add(as, NULL, print_result, NULL);
    API(as)->execute(as, NULL, NULL);
    run();
    API(as)->free(as);
    futoin_ffi_free(fn);
    memset(&pending, 0, sizeof(pending));
}

Test(ffi, hypot_doubles)
{
    const futoin_ffi_type a[] = {FUTOIN_FFI_DOUBLE, FUTOIN_FFI_DOUBLE};
    pending.arg0.type = &ty_double;
    pending.arg0.d = 3.0;
    set_i64(&pending, 1, 4); /* an exact integer widens to double */
    run_call(futoin_ffi_prepare((void (*)(void))hypot, FUTOIN_FFI_DOUBLE, 2, a));
    assert_trace("result double 5\n");
}

Test(ffi, int64_and_int32)
{
    const futoin_ffi_type a[] = {FUTOIN_FFI_INT64, FUTOIN_FFI_INT64};
    set_i64(&pending, 0, 40);
    pending.arg1.type = &ty_int32;
    pending.arg1.i32 = 2;
    run_call(futoin_ffi_prepare((void (*)(void))add64, FUTOIN_FFI_INT64, 2, a));
    const futoin_ffi_type b[] = {FUTOIN_FFI_INT32};
    set_i64(&pending, 0, 7);
    run_call(futoin_ffi_prepare((void (*)(void))negate32, FUTOIN_FFI_INT32, 1, b));
    const futoin_ffi_type c[] = {FUTOIN_FFI_INT64};
    set_i64(&pending, 0, 3);
    run_call(futoin_ffi_prepare((void (*)(void))is_odd, FUTOIN_FFI_BOOL, 1, c));
    assert_trace("result int64 42\nresult int32 -7\nresult bool 1\n");
}

Test(ffi, const_char_taker_and_string_result)
{
    const futoin_ffi_type a[] = {FUTOIN_FFI_CSTRING};
    set_str(&pending, 0, "futoin");
    run_call(futoin_ffi_prepare((void (*)(void))my_strlen, FUTOIN_FFI_UINT64, 1, a));
    set_str(&pending, 0, "world");
    run_call(futoin_ffi_prepare((void (*)(void))greet, FUTOIN_FFI_CSTRING, 1, a));
    assert_trace("result uint64 6\nresult string hello, world\n");
}

Test(ffi, void_function)
{
    void_calls = 0;
    run_call(futoin_ffi_prepare((void (*)(void))no_result, FUTOIN_FFI_VOID, 0, NULL));
    assert_trace("result none\n");
    cr_assert_eq(void_calls, 1);
}

Test(ffi, mismatches_are_invalid_request)
{
    const futoin_ffi_type dd[] = {FUTOIN_FFI_DOUBLE, FUTOIN_FFI_DOUBLE};
    set_str(&pending, 0, "three");
    pending.arg1.type = &ty_double;
    pending.arg1.d = 4;
    run_call(futoin_ffi_prepare((void (*)(void))hypot, FUTOIN_FFI_DOUBLE, 2, dd));
    pending.arg0.type = &ty_double;
    pending.arg0.d = 3; /* second value missing */
    run_call(futoin_ffi_prepare((void (*)(void))hypot, FUTOIN_FFI_DOUBLE, 2, dd));
    const futoin_ffi_type i32[] = {FUTOIN_FFI_INT32};
    set_i64(&pending, 0, (int64_t)1 << 40); /* does not fit */
    run_call(futoin_ffi_prepare((void (*)(void))negate32, FUTOIN_FFI_INT32, 1, i32));
    const futoin_ffi_type s[] = {FUTOIN_FFI_CSTRING};
    pending.arg0.type = &ty_bool;
    pending.arg0.b = true;
    run_call(futoin_ffi_prepare((void (*)(void))my_strlen, FUTOIN_FFI_UINT64, 1, s));
    assert_trace("InvalidRequest: ffi step: argument 1: expected double, got string\n"
                 "InvalidRequest: ffi step: argument 2: expected double, got nothing\n"
                 "InvalidRequest: ffi step: argument 1: expected int32, got int64\n"
                 "InvalidRequest: ffi step: argument 1: expected const char*, got bool\n");
}

Test(ffi, bad_prepare_refused)
{
    const futoin_ffi_type v[] = {FUTOIN_FFI_VOID};
    const futoin_ffi_type five[5] = {FUTOIN_FFI_INT32, FUTOIN_FFI_INT32,
                                     FUTOIN_FFI_INT32, FUTOIN_FFI_INT32,
                                     FUTOIN_FFI_INT32};
    cr_assert_null(futoin_ffi_prepare(NULL, FUTOIN_FFI_VOID, 0, NULL));
    cr_assert_null(futoin_ffi_prepare((void (*)(void))no_result, FUTOIN_FFI_VOID, 1, v));
    cr_assert_null(futoin_ffi_prepare((void (*)(void))no_result, FUTOIN_FFI_VOID, 5, five));
    cr_assert_null(futoin_ffi_prepare((void (*)(void))no_result, (futoin_ffi_type)99, 0, NULL));
}
