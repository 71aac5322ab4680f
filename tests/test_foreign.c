/* The foreign FTN12 implementation (tests/foreign/), driven through its
 * 25-slot table only: levels, error handlers, external completion, timeout,
 * cancel order, stack() cleanup, loops with labels, parallel, state, the
 * sched_* slots. Last, our library's futoin_async_tool() is shown to return
 * NULL for foreign handles without reading the foreign table (which is
 * exactly 25 slots on the heap, so ASan/valgrind catch any read past it). */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <futoin/async.h> /* futoin_async_tool(), our own tool for contrast */

#include "foreign/foreign_as.h"

static foreign_loop* L;
static char trace_buf[1 << 15];
static size_t trace_len;

__attribute__((format(printf, 1, 2))) static void tr(const char* fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(trace_buf + trace_len, sizeof(trace_buf) - trace_len - 2,
                  fmt, ap);
    va_end(ap);
    if (n > 0) {
        trace_len += (size_t)n;
        if (trace_len > sizeof(trace_buf) - 2) {
            trace_len = sizeof(trace_buf) - 2;
        }
    }
    trace_buf[trace_len++] = '\n';
    trace_buf[trace_len] = 0;
}

#define assert_trace(expected)                                                 \
    cr_assert_str_eq(trace_buf, expected, "trace was:\n%s", trace_buf)

static void setup(void)
{
    trace_len = 0;
    trace_buf[0] = 0;
    L = foreign_loop_new();
    cr_assert_not_null(L);
}

/* Every test frees its roots and misuses nothing. */
static void teardown(void)
{
    cr_assert_eq(foreign_live_roots(L), 0, "roots leaked");
    cr_assert_eq(foreign_misuse_count(L), 0, "misuse reported");
    foreign_loop_free(L);
    L = NULL;
}

TestSuite(foreign, .init = setup, .fini = teardown);

#define API(as) ((as)->api)

static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};
static const FutoInType ty_str = {FTN_TYPE_STRING, NULL};

static void success_i64(FutoInAsyncSteps* as, int64_t v)
{
    FutoInArgs a;
    memset(&a, 0, sizeof(a));
    a.arg0.type = &ty_i64;
    a.arg0.i64 = v;
    API(as)->success(as, &a);
}

static void success_str(FutoInAsyncSteps* as, const char* s)
{
    FutoInArgs a;
    memset(&a, 0, sizeof(a));
    a.arg0.type = &ty_str;
    a.arg0.cstr = s;
    a.arg0.length = (uint32_t)strlen(s);
    API(as)->success(as, &a);
}

static void on_unhandled(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("unhandled %s", code);
}

static void name_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s", (const char*)d);
}

static const char* error_info(FutoInAsyncSteps* as)
{
    const char* s = API(as)->stateVariable(as, NULL, "error_info", NULL, NULL);
    return s ? s : "(null)";
}

static void run_root(FutoInAsyncSteps* as)
{
    API(as)->execute(as, NULL, on_unhandled);
    foreign_run(L);
}

/* ---- §1.1 levels ---------------------------------------------------------- */

static void l1_add1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* p;
    tr("Level 1 add #1");
    API(as)->add(as, "Level 2 add #1", name_step, NULL);
    p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, "Level 2 parallel #2", name_step, NULL);
    API(as)->add(as, "Level 2 add #3", name_step, NULL);
}
static void l0_add1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* p;
    tr("Level 0 add #1");
    API(as)->add(as, NULL, l1_add1, NULL);
    p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, "Level 1 parallel #2", name_step, NULL);
    API(as)->add(as, "Level 1 add #3", name_step, NULL);
}

Test(foreign, spec_1_1_levels)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    FutoInAsyncSteps* p;
    API(as)->add(as, NULL, l0_add1, NULL);
    p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, "Level 0 parallel #2", name_step, NULL);
    API(as)->add(as, "Level 0 add #3", name_step, NULL);
    run_root(as);
    assert_trace("Level 0 add #1\n"
                 "Level 1 add #1\n"
                 "Level 2 add #1\n"
                 "Level 2 parallel #2\n"
                 "Level 2 add #3\n"
                 "Level 1 parallel #2\n"
                 "Level 1 add #3\n"
                 "Level 0 parallel #2\n"
                 "Level 0 add #3\n");
    API(as)->free(as);
}

/* ---- §1.2 error handlers: new error, success with a value ------------------ */

static void s12_l1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("Level 1 func");
    API(as)->handle_error(as, "myerror", "my info");
}
static void s12_l1_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("Level 1 onerror: %s (%s)", code, error_info(as));
    API(as)->handle_error(as, "newerror", NULL);
}
static void s12_l0(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("Level 0 func");
    API(as)->add(as, NULL, s12_l1, s12_l1_eh);
}
static void s12_l0_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("Level 0 onerror: %s (%s)", code, error_info(as));
    success_str(as, "Prm");
}
static void s12_func2(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("Level 0 func2: %s", a->arg0.cstr);
}

Test(foreign, spec_1_2_error_handlers)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    API(as)->add(as, NULL, s12_l0, s12_l0_eh);
    API(as)->add(as, NULL, s12_func2, NULL);
    run_root(as);
    assert_trace("Level 0 func\n"
                 "Level 1 func\n"
                 "Level 1 onerror: myerror (my info)\n"
                 "Level 0 onerror: newerror ((null))\n"
                 "Level 0 func2: Prm\n");
    API(as)->free(as);
}

/* ---- §1.2.1 steps added in an error handler ------------------------------- */

static void s121_l2(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("Level 2 func");
    API(as)->handle_error(as, "second", NULL);
}
static void s121_l2_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("Level 2 onerror: %s", code);
}
static void s121_l1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("Level 1 func");
    API(as)->handle_error(as, "first", NULL);
}
static void s121_l1_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("Level 1 onerror: %s", code);
    API(as)->add(as, NULL, s121_l2, s121_l2_eh);
}
static void s121_l0(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("Level 0 func");
    API(as)->add(as, NULL, s121_l1, s121_l1_eh);
}
static void s121_l0_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("Level 0 onerror: %s", code);
}

Test(foreign, spec_1_2_1_add_in_handler)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    API(as)->add(as, NULL, s121_l0, s121_l0_eh);
    run_root(as);
    assert_trace("Level 0 func\n"
                 "Level 1 func\n"
                 "Level 1 onerror: first\n"
                 "Level 2 func\n"
                 "Level 2 onerror: second\n"
                 "Level 0 onerror: second\n"
                 "unhandled second\n");
    API(as)->free(as);
}

/* Handler-added steps pass their values on; silent handler -> unhandled. */
static void give_x(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("X run");
    success_i64(as, 5);
}
static void fail_e1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("F run");
    API(as)->handle_error(as, "E1", "info1");
}
static void eh_add_x(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("F onerror %s", code);
    API(as)->add(as, NULL, give_x, NULL);
}
static void print_i64(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    if (a->arg0.type) {
        tr("%s %lld", (const char*)d, (long long)a->arg0.i64);
    } else {
        tr("%s []", (const char*)d);
    }
}
static void eh_silent(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("%s onerror %s", (const char*)d, code);
}

Test(foreign, handler_outcomes)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    API(as)->add(as, NULL, fail_e1, eh_add_x);
    API(as)->add(as, "N", print_i64, NULL);
    API(as)->add(as, NULL, fail_e1, NULL); /* no handler: unhandled */
    API(as)->add(as, "never", print_i64, NULL);
    run_root(as);
    assert_trace("F run\n"
                 "F onerror E1\n"
                 "X run\n"
                 "N 5\n"
                 "F run\n"
                 "unhandled E1\n");

    /* the finished root runs again; a silent handler keeps unwinding */
    trace_len = 0;
    API(as)->add(as, "F", fail_e1, eh_silent);
    run_root(as);
    assert_trace("F run\n"
                 "F onerror E1\n"
                 "unhandled E1\n");
    API(as)->free(as);
}

/* ---- success(): values are moved; args die after the callback -------------- */

static int custom_cleanups;
static void custom_cleanup(FutoInBinaryValue* v)
{
    ++custom_cleanups;
}
static const FutoInType ty_custom = {FTN_TYPE_CUSTOM_OBJECT, custom_cleanup};

static void give_two(FutoInAsyncSteps* as, void* d, const FutoInArgs* in)
{
    FutoInArgs a;
    memset(&a, 0, sizeof(a));
    a.arg0.type = &ty_i64;
    a.arg0.i64 = 42;
    a.arg1.type = &ty_custom;
    a.arg1.custom_data = &custom_cleanups;
    API(as)->success(as, &a);
    cr_assert_null(a.arg0.type, "success() must reset the caller's copy");
    cr_assert_null(a.arg1.type);
    cr_assert_null(a.arg1.custom_data);
}
static void take_two(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("got %lld custom=%d cleanups=%d", (long long)a->arg0.i64,
       a->arg1.type == &ty_custom, custom_cleanups);
}
static void after_two(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("after: args=%d cleanups=%d", a->arg0.type != NULL, custom_cleanups);
}

Test(foreign, success_moves_values)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    custom_cleanups = 0;
    API(as)->add(as, NULL, give_two, NULL);
    API(as)->add(as, NULL, take_two, NULL);
    API(as)->add(as, NULL, after_two, NULL); /* implicit success: nothing */
    run_root(as);
    assert_trace("got 42 custom=1 cleanups=0\n"
                 "after: args=0 cleanups=1\n");
    API(as)->free(as);
}

/* ---- §1.3 / §3.5 external completion --------------------------------------- */

static FutoInAsyncSteps* waiting;
static void ext_ok(void* d)
{
    tr("external success");
    success_i64(waiting, 7);
}
static void ext_err(void* d)
{
    tr("external error");
    API(waiting)->handle_error(waiting, "ExtError", "ext info");
}
static void wait_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("step waits");
    waiting = as;
    API(as)->waitExternal(as);
    API(as)->sched_immediate(as, NULL, (void (*)(void*))d);
}
static void wait_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("onerror %s (%s)", code, error_info(as));
}

Test(foreign, external_completion)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    API(as)->add(as, (void*)ext_ok, wait_step, wait_eh);
    API(as)->add(as, "next", print_i64, NULL);
    API(as)->add(as, (void*)ext_err, wait_step, wait_eh);
    API(as)->add(as, "never", print_i64, NULL);
    run_root(as);
    assert_trace("step waits\n"
                 "external success\n"
                 "next 7\n"
                 "step waits\n"
                 "external error\n"
                 "onerror ExtError (ext info)\n"
                 "unhandled ExtError\n");
    API(as)->free(as);
}

/* ---- setTimeout / setCancel ---------------------------------------------------- */

static void trace_cancel(FutoInAsyncSteps* as, void* d)
{
    tr("%s cancel", (const char*)d);
}
static void timed_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("T run");
    API(as)->setCancel(as, "T", trace_cancel);
    API(as)->setTimeout(as, 20);
}
static void timed_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("T onerror %s at %llu ms", code,
       (unsigned long long)foreign_now(L));
    API(as)->success(as, NULL);
}
static void late_ok(void* d)
{
    success_i64(waiting, 1);
}
static void early_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("E run");
    waiting = as;
    API(as)->setTimeout(as, 100);
    API(as)->sched_deferred(as, 10, NULL, late_ok);
}
static void print_now(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s at %llu ms", (const char*)d, (unsigned long long)foreign_now(L));
}

Test(foreign, timeout_and_cancel_handler)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    API(as)->add(as, NULL, timed_step, timed_eh);
    API(as)->add(as, NULL, early_step, wait_eh);
    API(as)->add(as, "N", print_now, NULL);
    run_root(as);
    /* the 100 ms timer was cancelled by the success at 10 ms */
    cr_assert_eq(foreign_now(L), 30);
    assert_trace("T run\n"
                 "T cancel\n"
                 "T onerror Timeout at 20 ms\n"
                 "E run\n"
                 "N at 30 ms\n");
    API(as)->free(as);
}

/* ---- root cancel: innermost first, no error handlers ------------------------ */

static FutoInAsyncSteps* the_root;
static void l2_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("L2 run");
    API(as)->setCancel(as, "L2", trace_cancel);
}
static void l1_run(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("L1 run");
    API(as)->setCancel(as, "L1", trace_cancel);
    API(as)->add(as, NULL, l2_wait, wait_eh);
}
static void l0_run(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("L0 run");
    API(as)->setCancel(as, "L0", trace_cancel);
    API(as)->add(as, NULL, l1_run, wait_eh);
    if (d) {
        tr("L0 calls root cancel");
        API(the_root)->cancel(the_root); /* deferred until we return */
        tr("L0 cancel returned");
    }
}
static void cancel_root(void* d)
{
    tr("calling cancel");
    API(the_root)->cancel(the_root);
    tr("cancel returned");
}

Test(foreign, cancel_order)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    FutoInHandle h;
    the_root = as;
    API(as)->add(as, NULL, l0_run, wait_eh);
    API(as)->add(as, "never", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    h = API(as)->sched_deferred(as, 5, NULL, cancel_root);
    cr_assert(API(as)->sched_is_valid(as, &h));
    foreign_run(L);
    cr_assert_not(API(as)->sched_is_valid(as, &h));
    assert_trace("L0 run\n"
                 "L1 run\n"
                 "L2 run\n"
                 "calling cancel\n"
                 "L2 cancel\n"
                 "L1 cancel\n"
                 "L0 cancel\n"
                 "cancel returned\n");

    /* cancel from inside a step: deferred until the callback returns */
    trace_len = 0;
    API(as)->add(as, "inside", l0_run, wait_eh);
    run_root(as);
    assert_trace("L0 run\n"
                 "L0 calls root cancel\n"
                 "L0 cancel returned\n"
                 "L0 cancel\n");
    API(as)->free(as);
}

/* ---- stack(): freed when the step is destroyed ------------------------------ */

static void trace_cleanup(void* p)
{
    tr("cleanup %s", *(const char**)p);
}
static void stack_a(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const char** p = API(as)->stack(as, sizeof(*p), trace_cleanup);
    cr_assert_not_null(p);
    cr_assert_null(*p, "stack() memory is zeroed");
    *p = "A";
    tr("A run");
    API(as)->add(as, "A.1 run", name_step, NULL);
}
static void stack_fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const char** p = API(as)->stack(as, sizeof(*p), trace_cleanup);
    *p = "F";
    API(as)->handle_error(as, "Oops", NULL);
}
static void stack_fail_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("F onerror %s", code);
    API(as)->success(as, NULL);
}
static void stack_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const char** p = API(as)->stack(as, sizeof(*p), trace_cleanup);
    *p = "W";
    API(as)->setCancel(as, "W", trace_cancel);
    API(as)->sched_immediate(as, NULL, cancel_root);
}

Test(foreign, stack_cleanup)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    the_root = as;
    API(as)->add(as, NULL, stack_a, NULL);
    API(as)->add(as, "B run", name_step, NULL);
    API(as)->add(as, NULL, stack_fail, stack_fail_eh);
    API(as)->add(as, NULL, stack_wait, NULL);
    run_root(as);
    assert_trace("A run\n"
                 "A.1 run\n"
                 "cleanup A\n"
                 "B run\n"
                 "F onerror Oops\n"
                 "cleanup F\n"
                 "calling cancel\n"
                 "W cancel\n"
                 "cleanup W\n"
                 "cancel returned\n");
    API(as)->free(as);
}

/* ---- §1.8 loops with labels ---------------------------------------------------- */

static int outer_i, inner_i;
static void inner_body(FutoInAsyncSteps* as, void* d)
{
    int i = inner_i++;
    tr("inner %d.%d", outer_i - 1, i);
    if (outer_i - 1 == 1 && i == 1) {
        API(as)->breakLoop(as, "OUTER");
    } else if (i == 2) {
        API(as)->breakLoop(as, NULL);
    }
}
static void after_inner(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("outer %d after inner", outer_i - 1);
}
static void outer_body(FutoInAsyncSteps* as, void* d)
{
    tr("outer %d", outer_i++);
    inner_i = 0;
    API(as)->loop(as, NULL, inner_body, "INNER");
    API(as)->add(as, NULL, after_inner, NULL);
}

Test(foreign, loop_break_labels)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    outer_i = 0;
    API(as)->loop(as, NULL, outer_body, "OUTER"); /* a loop on the root */
    API(as)->add(as, "next", print_i64, NULL);
    run_root(as);
    assert_trace("outer 0\n"
                 "inner 0.0\n"
                 "inner 0.1\n"
                 "inner 0.2\n"
                 "outer 0 after inner\n"
                 "outer 1\n"
                 "inner 1.0\n"
                 "inner 1.1\n"
                 "next []\n");
    API(as)->free(as);
}

/* continue("OUTER") from a sub-step of the inner body; outer stops at 3 */
static void inner_sub(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("inner %d.%d", outer_i - 1, inner_i);
    if (inner_i++ == 1) {
        API(as)->continueLoop(as, "OUTER");
    }
}
static void inner_body2(FutoInAsyncSteps* as, void* d)
{
    API(as)->setCancel(as, "body", trace_cancel);
    API(as)->add(as, NULL, inner_sub, NULL);
}
static void never_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("never");
}
static void outer_body2(FutoInAsyncSteps* as, void* d)
{
    tr("outer %d", outer_i++);
    if (outer_i == 4) {
        API(as)->breakLoop(as, NULL);
        return;
    }
    inner_i = 0;
    API(as)->loop(as, NULL, inner_body2, "INNER");
    API(as)->add(as, NULL, never_step, NULL);
}

Test(foreign, loop_continue_outer)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    outer_i = 0;
    API(as)->loop(as, NULL, outer_body2, "OUTER");
    API(as)->add(as, "next", print_i64, NULL);
    run_root(as);
    assert_trace("outer 0\n"
                 "inner 0.0\n"
                 "inner 0.1\n"
                 "body cancel\n"
                 "outer 1\n"
                 "inner 1.0\n"
                 "inner 1.1\n"
                 "body cancel\n"
                 "outer 2\n"
                 "inner 2.0\n"
                 "inner 2.1\n"
                 "body cancel\n"
                 "outer 3\n"
                 "next []\n");
    API(as)->free(as);
}

static void rep_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    tr("body %zu", i);
    if (i == 1) {
        API(as)->continueLoop(as, NULL);
        return;
    }
    API(as)->add(as, "sub", name_step, NULL);
}
static void bad_break(FutoInAsyncSteps* as, void* d, size_t i)
{
    API(as)->breakLoop(as, "NOPE");
}
static void loop_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->repeat(as, NULL, 3, rep_body, NULL);
    API(as)->repeat(as, NULL, 0, rep_body, NULL);
    API(as)->repeat(as, NULL, 5, bad_break, "MINE");
}
static void loop_step_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("S onerror %s: %s", code, error_info(as));
    success_i64(as, 9);
}

Test(foreign, repeat_continue_and_unknown_label)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    API(as)->add(as, NULL, loop_step, loop_step_eh);
    API(as)->add(as, "next", print_i64, NULL);
    run_root(as);
    assert_trace("body 0\n"
                 "sub\n"
                 "body 1\n"
                 "body 2\n"
                 "sub\n"
                 "S onerror InternalError: breakLoop(): no enclosing loop by "
                 "that label\n"
                 "next 9\n");
    API(as)->free(as);
}

static size_t long_count;
static void count_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    ++long_count;
}

Test(foreign, long_loop_does_not_grow_the_stack)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    long_count = 0;
    API(as)->repeat(as, NULL, 100000, count_body, NULL);
    run_root(as);
    cr_assert_eq(long_count, 100000);
    API(as)->free(as);
}

/* ---- parallel ------------------------------------------------------------------ */

static void* alloc_int(void* d)
{
    static int slots[2];
    return &slots[(intptr_t)d];
}
static void branch(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    int* v = API(as)->stateVariable(as, (void*)(intptr_t)((intptr_t)d - 1),
                                    d == (void*)1 ? "r1" : "r2", alloc_int,
                                    NULL);
    tr("b%d run args=%d", (int)(intptr_t)d, a->arg0.type != NULL);
    *v = (int)(intptr_t)d * 10;
    API(as)->add(as, d == (void*)1 ? "b1.1" : "b2.1", name_step, NULL);
}
static void after_par(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    int* r1 = API(as)->stateVariable(as, NULL, "r1", NULL, NULL);
    int* r2 = API(as)->stateVariable(as, NULL, "r2", NULL, NULL);
    tr("after parallel args=%d r1=%d r2=%d", a->arg0.type != NULL, *r1, *r2);
}
static void before_par(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    success_i64(as, 1);
}

Test(foreign, parallel_two_branches)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    FutoInAsyncSteps* p;
    API(as)->add(as, NULL, before_par, NULL);
    p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, (void*)1, branch, NULL);
    API(p)->add(p, (void*)2, branch, NULL);
    API(as)->add(as, NULL, after_par, NULL);
    run_root(as);
    assert_trace("b1 run args=0\n"
                 "b2 run args=0\n"
                 "b1.1\n"
                 "b2.1\n"
                 "after parallel args=0 r1=10 r2=20\n");
    API(as)->free(as);
}

static void pb_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s run", (const char*)d);
    API(as)->setCancel(as, d, trace_cancel);
    if (strcmp(d, "b1") == 0) {
        API(as)->add(as, "b1.1", l2_wait, NULL);
    }
}
static void pb_fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("b3 run");
    waiting = as;
    API(as)->setCancel(as, "b3", trace_cancel);
    API(as)->sched_immediate(as, NULL, ext_err);
}
static void par_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("%s onerror %s", (const char*)d, code);
}
static void par_eh_recover(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("P onerror %s", code);
    API(as)->success(as, NULL);
}

Test(foreign, parallel_error_cancels_siblings)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    FutoInAsyncSteps* p;
    p = API(as)->parallel(as, NULL, par_eh_recover);
    API(p)->add(p, "b1", pb_wait, par_eh);
    API(p)->add(p, "b2", pb_wait, par_eh);
    API(p)->add(p, "b3", pb_fail, par_eh);
    API(as)->add(as, "next", print_i64, NULL);
    run_root(as);
    /* l2_wait traces "L2 run" and cancels as "L2" */
    assert_trace("b1 run\n"
                 "b2 run\n"
                 "b3 run\n"
                 "L2 run\n"
                 "external error\n"
                 "b3 cancel\n"
                 "b3 onerror ExtError\n"
                 "L2 cancel\n"
                 "b1 cancel\n"
                 "b2 cancel\n"
                 "P onerror ExtError\n"
                 "next []\n");
    API(as)->free(as);
}

/* ---- state, error_info, misc slots -------------------------------------------- */

static int state_cleanups;
static int state_value = 5;
static void* alloc_state(void* d)
{
    return d;
}
static void cleanup_state(void* d, void* v)
{
    ++state_cleanups;
}

static void misc_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* root = d;
    FutoInAsyncSteps* other;
    FutoInHandle h;
    cr_assert_eq(API(as)->rootId(as), API(root)->rootId(root));
    cr_assert(API(as)->isValid(as));
    cr_assert(API(as)->is_same_thread(as));
    cr_assert_eq(API(as)->stateVariable(as, NULL, "v", NULL, NULL),
                 &state_value);
    other = API(as)->newInstance(as);
    cr_assert_neq(API(other)->rootId(other), API(as)->rootId(as));
    cr_assert_null(API(other)->stateVariable(other, NULL, "v", NULL, NULL),
                   "a new instance has its own state");
    API(other)->free(other);
    h = API(as)->sched_immediate(as, NULL, ext_ok);
    cr_assert(API(as)->sched_is_valid(as, &h));
    API(as)->sched_cancel(as, &h);
    cr_assert_not(API(as)->sched_is_valid(as, &h));
    API(as)->sched_cancel(as, &h); /* twice: ignored */
    API(as)->addSync(as, NULL, NULL, name_step, NULL);
}
static void misc_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("onerror %s: %s", code, error_info(as));
    tr("last_exception %s",
       (const char*)API(as)->stateVariable(as, NULL, "last_exception", NULL,
                                           NULL));
}

Test(foreign, state_and_misc_slots)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    state_cleanups = 0;
    cr_assert_null(API(as)->stateVariable(as, NULL, "error_info", NULL, NULL),
                   "no error yet");
    cr_assert_eq(API(as)->stateVariable(as, &state_value, "v", alloc_state,
                                        cleanup_state),
                 &state_value);
    API(as)->add(as, as, misc_step, misc_eh);
    run_root(as);
    assert_trace("onerror NotImplemented: addSync() is not supported by the "
                 "foreign implementation\n"
                 "last_exception NotImplemented\n"
                 "unhandled NotImplemented\n");
    cr_assert_eq(state_cleanups, 0);
    API(as)->free(as);
    cr_assert_eq(state_cleanups, 1, "state cleanup runs when the root is freed");
}

/* ---- our library and the foreign table --------------------------------------- */

static FutoInAsyncSteps* seen_step;
static FutoInAsyncSteps* seen_par;
static void probe_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    seen_step = as;
    cr_assert_null(futoin_async_tool(as), "a foreign step is not ours");
    seen_par = API(as)->parallel(as, NULL, NULL);
    cr_assert_null(futoin_async_tool(seen_par), "a foreign parallel");
    API(seen_par)->add(seen_par, "branch", name_step, NULL);
}

Test(foreign, futoin_async_tool_rejects_foreign_handles)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    futoin_tool* tool;
    FutoInAsyncSteps* ours;

    cr_assert_eq(as->api, foreign_api(L), "every handle shares one table");
    cr_assert_null(futoin_async_tool(as), "a foreign root is not ours");
    API(as)->add(as, NULL, probe_step, NULL);
    run_root(as);
    assert_trace("branch\n");
    cr_assert_eq(seen_step->api, foreign_api(L));
    cr_assert_eq(seen_par->api, foreign_api(L));
    /* finished steps are retired: recently stale handles are detected */
    cr_assert_not(API(seen_step)->isValid(seen_step));
    cr_assert_not(API(seen_par)->isValid(seen_par));
    cr_assert(API(as)->isValid(as));

    /* contrast: our own root is recognised */
    cr_assert_eq(futoin_tool_new(&tool, NULL), FUTOIN_OK);
    ours = futoin_root_new(tool);
    cr_assert_eq(futoin_async_tool(ours), tool);
    cr_assert_neq(ours->api, as->api);
    ours->api->free(ours);
    cr_assert_eq(futoin_tool_free(tool), FUTOIN_OK);

    API(as)->free(as);
}

/* free() from inside the root's own step is deferred; cancel handlers run */
static void free_inside(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* root = d;
    void* p = API(as)->stack(as, 16, NULL);
    API(as)->setCancel(as, "S", trace_cancel);
    API(root)->free(root);
    memset(p, 1, 16); /* still ours until we return */
    tr("free returned");
}

Test(foreign, free_from_inside_is_deferred)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    API(as)->add(as, as, free_inside, NULL);
    run_root(as);
    assert_trace("free returned\n"
                 "S cancel\n");
    cr_assert_eq(foreign_live_roots(L), 0);
}

/* ---- timeouts cover sub-steps and parallels; errors and break in loops ----- */

static void tp_branch(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s run", (const char*)d);
    API(as)->setCancel(as, d, trace_cancel);
}
static void tp_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* p;
    tr("T run");
    API(as)->setTimeout(as, 20);
    p = API(as)->parallel(as, "P", par_eh);
    API(p)->add(p, "b1", tp_branch, par_eh);
    API(p)->add(p, "b2", tp_branch, par_eh);
}

Test(foreign, timeout_over_parallel)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    API(as)->add(as, "T", tp_step, par_eh);
    run_root(as);
    assert_trace("T run\n"
                 "b1 run\n"
                 "b2 run\n"
                 "b1 cancel\n"
                 "b2 cancel\n"
                 "P onerror Timeout\n"
                 "T onerror Timeout\n"
                 "unhandled Timeout\n");
    cr_assert_eq(foreign_now(L), 20);
    API(as)->free(as);
}

static void err_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    tr("body %zu", i);
    if (i == 1) {
        API(as)->handle_error(as, "MyErr", NULL);
    }
}
static void sub_fails(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->handle_error(as, "MyErr", NULL);
}
static void sub_eh_breaks(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("sub onerror %s -> break", code);
    API(as)->breakLoop(as, NULL);
}
static void brk_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    tr("body %zu", i);
    if (i == 2) {
        API(as)->add(as, NULL, sub_fails, sub_eh_breaks);
    }
}
static void loops_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->repeat(as, NULL, 5, d ? brk_body : err_body, NULL);
}
static void loops_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("S onerror %s", code);
    success_i64(as, 3);
}

Test(foreign, error_and_break_in_loop_bodies)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    API(as)->add(as, NULL, loops_step, loops_eh); /* error ends the loop */
    API(as)->add(as, "next", print_i64, NULL);
    API(as)->add(as, "brk", loops_step, loops_eh); /* break from a handler */
    API(as)->add(as, "next", print_i64, NULL);
    run_root(as);
    assert_trace("body 0\n"
                 "body 1\n"
                 "S onerror MyErr\n"
                 "next 3\n"
                 "body 0\n"
                 "body 1\n"
                 "body 2\n"
                 "sub onerror MyErr -> break\n"
                 "next []\n");
    API(as)->free(as);
}

/* A root freed while a step waits: cancel handlers and cleanups run. */
static void waits_forever(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const char** p = API(as)->stack(as, sizeof(*p), trace_cleanup);
    *p = "S";
    tr("S run");
    API(as)->setCancel(as, "S", trace_cancel);
}

Test(foreign, free_while_waiting)
{
    FutoInAsyncSteps* as = foreign_root_new(L);
    API(as)->add(as, NULL, waits_forever, wait_eh);
    run_root(as); /* nothing can complete it: the loop runs dry */
    tr("loop idle");
    API(as)->free(as);
    assert_trace("S run\n"
                 "loop idle\n"
                 "S cancel\n"
                 "cleanup S\n");
}
