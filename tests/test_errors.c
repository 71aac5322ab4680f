/* §1.2 error handling and its four outcomes, §1.2.1 steps in an error
 * handler, error_info / last_exception (§1.7), unhandled errors. */
#include "common.h"

TestSuite(errors, .init = fx_setup, .fini = fx_teardown);

/* ---- §1.2 example: output compared with the spec's ---------------------- */

static void s12_l1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("Level 1 func");
    ERROR(as, "myerror");
}
static void s12_l1_err(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("Level 1 onerror: %s", code);
    ERROR(as, "newerror");
}
static void s12_l0(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("Level 0 func");
    API(as)->add(as, NULL, s12_l1, s12_l1_err);
}
static void s12_l0_err(FutoInAsyncSteps* as, void* d, const char* code)
{
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    tr("Level 0 onerror: %s", code);
    set_str(&args, 0, "Prm");
    API(as)->success(as, &args);
}
static void s12_func2(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("Level 0 func2: %s", a->arg0.cstr);
    SUCCESS0(as);
}

Test(errors, spec_1_2_example)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, s12_l0, s12_l0_err);
    API(as)->add(as, NULL, s12_func2, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("Level 0 func\n"
                 "Level 1 func\n"
                 "Level 1 onerror: myerror\n"
                 "Level 0 onerror: newerror\n"
                 "Level 0 func2: Prm\n");
    API(as)->free(as);
}

/* ---- §1.2.1 example ------------------------------------------------------ */

static void s121_l2(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("Level 2 func");
    ERROR(as, "second");
}
static void s121_l2_err(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("Level 2 onerror: %s", code);
}
static void s121_l1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("Level 1 func");
    ERROR(as, "first");
}
static void s121_l1_err(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("Level 1 onerror: %s", code);
    API(as)->add(as, NULL, s121_l2, s121_l2_err);
}
static void s121_l0(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("Level 0 func");
    API(as)->add(as, NULL, s121_l1, s121_l1_err);
}
static void s121_l0_err(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("Level 0 onerror: %s", code);
}

Test(errors, spec_1_2_1_steps_in_error_handler)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, s121_l0, s121_l0_err);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("Level 0 func\n"
                 "Level 1 func\n"
                 "Level 1 onerror: first\n"
                 "Level 2 func\n"
                 "Level 2 onerror: second\n"
                 "Level 0 onerror: second\n"
                 "unhandled second\n");
    API(as)->free(as);
}

/* Steps added by an error handler complete its step: their result goes on
 * to the next step after it. */
static void eh_add_ok(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("alt path");
    succeed_i64(as, 1, 42, 0);
}
static void fail_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("fail %s", (const char*)d);
    ERROR(as, (const char*)d);
}
static void eh_adds(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("onerror %s", code);
    API(as)->add(as, NULL, eh_add_ok, NULL);
}
static void print_args(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    char buf[128] = "next";
    for (int i = 0; i < 4 && a->args[i].type; ++i) {
        size_t l = strlen(buf);
        if (a->args[i].type->flags == FTN_TYPE_STRING) {
            snprintf(buf + l, sizeof(buf) - l, " %s", a->args[i].cstr);
        } else {
            snprintf(buf + l, sizeof(buf) - l, " %lld",
                     (long long)a->args[i].i64);
        }
    }
    tr("%s", buf);
}

Test(errors, handler_adding_steps_is_implicit_success)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, "E1", fail_step, eh_adds);
    API(as)->add(as, NULL, print_args, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("fail E1\nonerror E1\nalt path\nnext 42\n");
    API(as)->free(as);
}

/* Silent return continues unwinding; success() continues after the step. */
static void eh_silent(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("silent %s", code);
}
static void wrap_fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->add(as, "inner", fail_step, eh_silent);
}
static void eh_recover(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("recover %s", code);
    succeed_i64(as, 2, 1, 2);
}

Test(errors, silent_return_unwinds_and_success_recovers)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, wrap_fail, eh_recover);
    API(as)->add(as, NULL, print_args, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("fail inner\nsilent inner\nrecover inner\nnext 1 2\n");
    API(as)->free(as);
}

/* Unhandled: the remaining steps are skipped and execute()'s callback gets
 * the code; error_info and last_exception hold the last error. */
static void fail_info(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->handle_error(as, "NotImplemented", "some details");
}
static void never(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("never");
}
static void unhandled_state(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("unhandled %s info=%s last=%s", code,
       (const char*)API(as)->stateVariable(as, NULL, "error_info", NULL, NULL),
       (const char*)API(as)->stateVariable(as, NULL, "last_exception", NULL,
                                           NULL));
}

Test(errors, unhandled_error_info_last_exception)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    cr_assert_null(API(as)->stateVariable(as, NULL, "error_info", NULL, NULL));
    API(as)->add(as, NULL, fail_info, NULL);
    API(as)->add(as, NULL, never, NULL);
    API(as)->execute(as, NULL, unhandled_state);
    run();
    assert_trace("unhandled NotImplemented info=some details last=NotImplemented\n");
    API(as)->free(as);
}

/* error_info seen from inside the error handler; a new error replaces it. */
static void eh_info(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("eh %s info=%s", code,
       (const char*)API(as)->stateVariable(as, NULL, "error_info", NULL, NULL));
    API(as)->handle_error(as, "InvalidRequest", "second info");
}

Test(errors, error_info_inside_handler_and_replaced)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, fail_info, eh_info);
    API(as)->execute(as, NULL, unhandled_state);
    run();
    assert_trace("eh NotImplemented info=some details\n"
                 "unhandled InvalidRequest info=second info last=InvalidRequest\n");
    API(as)->free(as);
}

/* A user-defined (non-standard, long) code survives intact. */
static const char long_code[] = "MyVeryOwnErrorCodeThatIsLongerThanAnyBuffer";
static void fail_long(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    char copy[64];
    strcpy(copy, long_code); /* a transient string: the runtime copies it */
    ERROR(as, copy);
    memset(copy, 'x', sizeof(copy) - 1);
}

Test(errors, custom_codes_are_copied)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, fail_long, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("unhandled MyVeryOwnErrorCodeThatIsLongerThanAnyBuffer\n");
    API(as)->free(as);
}

/* An error with no handler anywhere and no unhandled callback ends the flow
 * (reported on stderr) and the loop still stops. */
Test(errors, no_unhandled_callback)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, "X", fail_step, NULL);
    API(as)->add(as, NULL, never, NULL);
    API(as)->execute(as, NULL, NULL);
    run();
    assert_trace("fail X\n");
    API(as)->free(as);
}

/* A step whose sub-steps already ran (one failed) adds new steps from its
 * error handler: they form a fresh queue on the same level. */
static void sub_ok(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("sub ok");
}
static void with_subs(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->add(as, NULL, sub_ok, NULL);
    API(as)->add(as, NULL, sub_ok, NULL);
    API(as)->add(as, "late", fail_step, NULL);
}
static void alt1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("alt 1");
}
static void alt2(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("alt 2");
    succeed_i64(as, 1, 9, 0);
}
static void eh_two_alts(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("onerror %s", code);
    API(as)->add(as, NULL, alt1, NULL);
    API(as)->add(as, NULL, alt2, NULL);
}

Test(errors, handler_adds_after_subs_ran)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, with_subs, eh_two_alts);
    API(as)->add(as, NULL, print_args, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("sub ok\nsub ok\nfail late\nonerror late\nalt 1\nalt 2\nnext 9\n");
    API(as)->free(as);
}
