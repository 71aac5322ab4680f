/* Bad input never crashes and never passes silently: NULL handles to every
 * slot, values whose type is not an FTN12 type, strings and arrays with a
 * NULL pointer, the FFI's type errors, NULL names and NULL prepared calls. */
#include "common.h"

#include <futoin/ffi.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/wrap.h>

#include <math.h>
#include <criterion/redirect.h>

/* A NULL handle has no tool to report to: the report goes to stderr,
 * which these tests read back. */
static void setup_redirect(void)
{
    fx_setup();
    cr_redirect_stderr();
}
TestSuite(badinput, .init = setup_redirect, .fini = fx_teardown);

static char* stderr_text(void)
{
    static char buf[1 << 15];
    FILE* f = cr_get_redirected_stderr();
    size_t n;
    fflush(stderr);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = 0;
    return buf;
}

static size_t count_lines(const char* text, const char* needle)
{
    size_t n = 0;
    for (const char* p = text; (p = strstr(p, needle)) != NULL; ++p) {
        ++n;
    }
    return n;
}

/* ---- a NULL handle to every slot ---------------------------------------- */

static void nop_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
}
static void nop_body(FutoInAsyncSteps* as, void* d)
{
}
static void nop_rep(FutoInAsyncSteps* as, void* d, size_t i)
{
}
static void nop_cb(void* d)
{
}
static void* nop_alloc(void* d)
{
    return d;
}

/* Every one of the 25 slots of `api`, through a NULL handle. */
static void all_slots_null(const FutoInAsyncStepsAPI* api)
{
    FutoInHandle h = {0, 0, 0};
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    set_i64(&args, 0, 1);
    api->add(NULL, NULL, nop_step, NULL);
    cr_assert_null(api->parallel(NULL, NULL, NULL));
    cr_assert_null(api->stateVariable(NULL, NULL, "x", nop_alloc, NULL));
    cr_assert_null(api->stack(NULL, 8, NULL));
    api->success(NULL, &args);
    cr_assert_null(args.arg0.type, "values not taken");
    api->handle_error(NULL, "E", NULL);
    api->setTimeout(NULL, 1);
    api->setCancel(NULL, NULL, NULL);
    api->waitExternal(NULL);
    api->loop(NULL, NULL, nop_body, NULL);
    api->repeat(NULL, NULL, 1, nop_rep, NULL);
    api->breakLoop(NULL, NULL);
    api->continueLoop(NULL, NULL);
    api->execute(NULL, NULL, NULL);
    api->cancel(NULL);
    api->addSync(NULL, NULL, NULL, nop_step, NULL);
    cr_assert_eq(api->rootId(NULL), 0);
    cr_assert_eq(api->isValid(NULL), 0);
    cr_assert_null(api->newInstance(NULL));
    api->free(NULL);
    h = api->sched_immediate(NULL, NULL, nop_cb);
    cr_assert_null(h.data1);
    h = api->sched_deferred(NULL, 1, NULL, nop_cb);
    cr_assert_null(h.data1);
    api->sched_cancel(NULL, &h);
    cr_assert_eq(api->sched_is_valid(NULL, &h), 0);
    cr_assert_eq(api->is_same_thread(NULL), 0);
}

static void step_tables(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, NULL);
    all_slots_null(as->api);
    all_slots_null(p->api);
}

Test(badinput, null_handle_to_every_slot_of_every_table)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    all_slots_null(as->api); /* the root table */
    API(as)->add(as, NULL, step_tables, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    API(as)->free(as);
    /* 3 tables x 25 slots, each reported once */
    cr_assert_eq(count_lines(stderr_text(), "called through a NULL handle"), 75,
                 "%s", stderr_text());
}

static int released;
static void count_release(void* d)
{
    ++released;
}

Test(badinput, null_handle_to_the_extension_table_and_the_wrap_layer)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    const futoin_async_ext_table* x = futoin_async_ext(as);
    FutoInArgs args;
    FutoInBinaryValue v;
    released = 0;
    memset(&args, 0, sizeof(args));
    x->add(NULL, NULL, nop_step, NULL, count_release);
    cr_assert_null(x->parallel(NULL, NULL, NULL, count_release));
    x->setCancel(NULL, NULL, NULL, count_release);
    x->loop(NULL, NULL, nop_body, NULL, count_release);
    x->repeat(NULL, NULL, 1, nop_rep, NULL, count_release);
    x->addSync(NULL, NULL, NULL, nop_step, NULL, count_release);
    x->execute(NULL, NULL, NULL, count_release);
    cr_assert_null(x->error_info(NULL));
    cr_assert_null(x->error_code(NULL));
    cr_assert_null(x->last_exception(NULL));
    x->successStep(NULL, &args);
    cr_assert_eq(x->try_success(NULL, &args), FUTOIN_EINVAL);
    cr_assert_eq(x->try_error(NULL, "E", NULL), FUTOIN_EINVAL);
    cr_assert_eq(released, 7, "release ran %d times", released);

    futoin_wrap_add(NULL, NULL, nop_step, NULL, count_release);
    cr_assert_null(futoin_wrap_parallel(NULL, NULL, NULL, count_release));
    futoin_wrap_set_cancel(NULL, NULL, NULL, count_release);
    futoin_wrap_loop(NULL, NULL, nop_body, NULL, count_release);
    futoin_wrap_repeat(NULL, NULL, 1, nop_rep, NULL, count_release);
    futoin_wrap_add_sync(NULL, NULL, NULL, nop_step, NULL, count_release);
    futoin_wrap_execute(NULL, NULL, NULL, count_release);
    futoin_wrap_success_step(NULL, &args);
    cr_assert_eq(futoin_wrap_try_success(NULL, &args), FUTOIN_EINVAL);
    cr_assert_eq(futoin_wrap_try_error(NULL, "E", NULL), FUTOIN_EINVAL);
    cr_assert_null(futoin_wrap_error_info(NULL));
    cr_assert_null(futoin_wrap_error_code(NULL));
    memset(&v, 0, sizeof(v));
    cr_assert_eq(futoin_wrap_set_last_exception(NULL, &v), 0);
    cr_assert_null(futoin_wrap_last_exception(NULL));
    cr_assert_eq(futoin_wrap_is_ours(NULL), 0);
    cr_assert_eq(released, 14, "release ran %d times", released);
    API(as)->free(as);
}

Test(badinput, ffi_add_with_null_handle_or_null_call)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    futoin_ffi_type at[] = {FUTOIN_FFI_DOUBLE, FUTOIN_FFI_DOUBLE};
    futoin_ffi_fn* fn = futoin_ffi_prepare((void (*)(void))hypot,
                                           FUTOIN_FFI_DOUBLE, 2, at);
    cr_assert_not_null(fn);
    futoin_ffi_add(NULL, fn, NULL);
    cr_assert(strstr(stderr_text(), "futoin_ffi_add() called through a NULL handle"));
    futoin_ffi_add(as, NULL, NULL);
    cr_assert_eq(misuse_seen, 1);
    cr_assert_str_eq(misuse_last,
                     "InternalError: futoin_ffi_add(): the prepared call is NULL");
    futoin_ffi_free(fn);
    API(as)->free(as);
}

/* ---- values that are not FTN12 values ----------------------------------- */

static const FutoInType ty_bad_ee = {0xEE, NULL};
static const FutoInType ty_bad_00 = {0x00, NULL};
static const FutoInType ty_str_ok = {FTN_TYPE_STRING, NULL};
static const FutoInType ty_i64_arr = {FTN_TYPE_ARRAY | FTN_TYPE_INT64, NULL};

static int bad_case;
static void pass_bad_value(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    set_i64(&args, 0, 1); /* a good value first: the bad one is value 2 */
    switch (bad_case) {
    case 0: args.arg1.type = &ty_bad_ee; break;
    case 1: args.arg1.type = &ty_bad_00; break;
    case 2: args.arg1.type = &ty_str_ok; args.arg1.cstr = NULL; break;
    case 3: args.arg1.type = &ty_i64_arr; args.arg1.p = NULL; args.arg1.length = 3; break;
    }
    API(as)->success(as, &args);
}
static void must_not_run(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("the next step ran");
}
static void eh_info(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("%s: %s", code,
       (const char*)API(as)->stateVariable(as, NULL, "error_info", NULL, NULL));
}

Test(badinput, values_that_are_not_ftn12_values_are_invalid_request)
{
    static const char* expected[] = {
            "InvalidRequest: success(): value 2 has an unknown type (flags 0xee)\n",
            "InvalidRequest: success(): value 2 has an unknown type (flags 0x00)\n",
            "InvalidRequest: success(): value 2 is a string with a NULL pointer\n",
            "InvalidRequest: success(): value 2 is an array of 3 elements with a "
            "NULL pointer\n",
    };
    for (bad_case = 0; bad_case < 4; ++bad_case) {
        FutoInAsyncSteps* as = futoin_root_new(T);
        trace_len = 0;
        trace_buf[0] = 0;
        API(as)->add(as, NULL, pass_bad_value, eh_info);
        API(as)->add(as, NULL, must_not_run, NULL);
        API(as)->execute(as, NULL, NULL);
        run();
        assert_trace(expected[bad_case]);
        API(as)->free(as);
    }
}

/* The same from another thread: the completion becomes the error. */
static int worker_rc;
static pthread_t worker;
static void* bad_from_thread(void* d)
{
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    args.arg0.type = &ty_bad_ee;
    worker_rc = futoin_wrap_try_success(d, &args);
    return NULL;
}
static void wait_for_bad(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->waitExternal(as);
    cr_assert_eq(pthread_create(&worker, NULL, bad_from_thread, as), 0);
}

Test(badinput, bad_values_from_another_thread_are_invalid_request)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, wait_for_bad, eh_info);
    API(as)->add(as, NULL, must_not_run, NULL);
    API(as)->execute(as, NULL, NULL);
    run();
    pthread_join(worker, NULL);
    assert_trace(
            "InvalidRequest: success(): value 1 has an unknown type (flags 0xee)\n");
    API(as)->free(as);
}

/* ---- the FFI names the real type ---------------------------------------- */

static const int64_t some_ints[] = {3, 4};
static void pass_int_array(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    args.arg0.type = &ty_i64_arr;
    args.arg0.p = some_ints;
    args.arg0.length = 2;
    set_i64(&args, 1, 4);
    API(as)->success(as, &args);
}
static int callee_calls;
static size_t counting_strlen(const char* s)
{
    ++callee_calls;
    return strlen(s);
}
static void pass_null_string(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    args.arg0.type = &ty_str_ok;
    args.arg0.cstr = NULL;
    API(as)->success(as, &args);
}

Test(badinput, ffi_errors_name_the_real_type_and_a_null_string_never_arrives)
{
    futoin_ffi_type dd[] = {FUTOIN_FFI_DOUBLE, FUTOIN_FFI_DOUBLE};
    futoin_ffi_type s1[] = {FUTOIN_FFI_CSTRING};
    futoin_ffi_fn* hyp = futoin_ffi_prepare((void (*)(void))hypot,
                                            FUTOIN_FFI_DOUBLE, 2, dd);
    futoin_ffi_fn* len = futoin_ffi_prepare((void (*)(void))counting_strlen,
                                            FUTOIN_FFI_UINT64, 1, s1);
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInAsyncSteps* bs = futoin_root_new(T);
    callee_calls = 0;
    API(as)->add(as, NULL, pass_int_array, NULL);
    futoin_ffi_add(as, hyp, eh_info);
    API(as)->execute(as, NULL, NULL);
    API(bs)->add(bs, NULL, pass_null_string, eh_info);
    futoin_ffi_add(bs, len, NULL);
    API(bs)->execute(bs, NULL, NULL);
    run();
    assert_trace("InvalidRequest: ffi step: argument 1: expected double, got "
                 "array of int64\n"
                 "InvalidRequest: success(): value 1 is a string with a NULL "
                 "pointer\n");
    cr_assert_eq(callee_calls, 0);
    API(as)->free(as);
    API(bs)->free(bs);
    futoin_ffi_free(hyp);
    futoin_ffi_free(len);
}

/* ---- NULL names --------------------------------------------------------- */

Test(badinput, state_variable_with_a_null_name_is_reported)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    cr_assert_null(API(as)->stateVariable(as, NULL, NULL, nop_alloc, NULL));
    cr_assert_eq(misuse_seen, 1);
    cr_assert_str_eq(misuse_last, "InternalError: stateVariable(): the name is NULL");
    API(as)->free(as);
}
