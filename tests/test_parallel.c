/* parallel() (§1.4, §3.3): all branches start, an error cancels the
 * siblings, parallel's onerror, shared state, nesting. */
#include "common.h"

#include <stdlib.h>

TestSuite(parallel, .init = fx_setup, .fini = fx_teardown);
/* Tests about timers: on virtual time, the clock says when they fired. */
TestSuite(parallel_timers, .init = fx_setup_virtual, .fini = fx_teardown);

static void on_cancel(FutoInAsyncSteps* as, void* d)
{
    tr("cancel %s", (const char*)d);
}
static void eh_print(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("%s onerror: %s", d ? (const char*)d : "step", code);
}

/* Branches interleave: each branch's sub-steps run in its own flow. */
static void sub_print(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s", (const char*)d);
}
static void branch(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    static char names[3][2][8];
    int b = (int)(intptr_t)d;
    tr("branch %d", b);
    for (int i = 0; i < 2; ++i) {
        snprintf(names[b][i], 8, "b%d.s%d", b, i);
        API(as)->add(as, names[b][i], sub_print, NULL);
    }
}
static void after(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("after args=%d", a->arg0.type != NULL);
}
static void give(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    succeed_i64(as, 1, 1, 0);
}

Test(parallel, all_branches_start_and_join)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInAsyncSteps* p;
    API(as)->add(as, NULL, give, NULL);
    p = API(as)->parallel(as, NULL, NULL);
    for (intptr_t i = 0; i < 3; ++i) {
        API(p)->add(p, (void*)i, branch, NULL);
    }
    API(as)->add(as, NULL, after, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    /* as in the reference: a branch that never waits runs to its end
     * before the next branch starts (tests/expected/q4_parallel.trace a) */
    assert_trace("branch 0\nb0.s0\nb0.s1\n"
                 "branch 1\nb1.s0\nb1.s1\n"
                 "branch 2\nb2.s0\nb2.s1\n"
                 "after args=0\n");
    API(as)->free(as);
}

/* §1.4: the failing branch cancels the waiting siblings, then parallel's
 * onerror, then the outer handler; the step after never runs. */
static void job_waits(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("job %s", (const char*)d);
    API(as)->setCancel(as, d, on_cancel);
}
static void job_fails(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("job 3 fails");
    ERROR(as, "SomeError");
}
static void abort_outer(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* p = API(as)->parallel(as, "parallel", eh_print);
    API(p)->add(p, "1", job_waits, NULL);
    API(p)->add(p, "2", job_waits, NULL);
    API(p)->add(p, NULL, job_fails, NULL);
}
static void never(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("never");
}

Test(parallel, spec_1_4_error_cancels_siblings)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, abort_outer, eh_print);
    API(as)->add(as, NULL, never, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("job 1\njob 2\njob 3 fails\n"
                 "cancel 1\ncancel 2\n"
                 "parallel onerror: SomeError\n"
                 "step onerror: SomeError\n"
                 "unhandled SomeError\n");
    API(as)->free(as);
}

/* A branch's own handler can recover that branch alone. */
static void branch_eh_recover(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("branch recovers %s", code);
    SUCCESS0(as);
}
static void fail_now(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    ERROR(as, "BranchError");
}

Test(parallel, branch_handler_recovers_branch)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInAsyncSteps* p = API(as)->parallel(as, "parallel", eh_print);
    API(p)->add(p, "ok", sub_print, NULL);
    API(p)->add(p, NULL, fail_now, branch_eh_recover);
    API(as)->add(as, "after", sub_print, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("ok\nbranch recovers BranchError\nafter\n");
    API(as)->free(as);
}

/* parallel's onerror can continue the flow with success(). */
static void par_eh_recover(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("parallel recovers %s", code);
    SUCCESS0(as);
}

Test(parallel, parallel_onerror_recovers)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, par_eh_recover);
    API(p)->add(p, "1", job_waits, NULL);
    API(p)->add(p, NULL, fail_now, NULL);
    API(as)->add(as, "after", sub_print, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("job 1\ncancel 1\nparallel recovers BranchError\nafter\n");
    API(as)->free(as);
}

/* §3.3: branches share the root's state. */
static void* alloc_int(void* d)
{
    return calloc(1, sizeof(int));
}
static void free_int(void* d, void* v)
{
    free(v);
}
static void set_p(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    int* v = API(as)->stateVariable(as, NULL, (const char*)d, alloc_int,
                                    free_int);
    *v = ((const char*)d)[9] == '1' ? 1 : 2;
}
static void read_p(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    int* p1 = API(as)->stateVariable(as, NULL, "parallel_1", NULL, NULL);
    int* p2 = API(as)->stateVariable(as, NULL, "parallel_2", NULL, NULL);
    tr("externalSuccess %d %d", *p1, *p2);
}

Test(parallel, spec_3_3_shared_state)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, eh_print);
    API(p)->add(p, "parallel_1", set_p, eh_print);
    API(p)->add(p, "parallel_2", set_p, eh_print);
    API(as)->add(as, NULL, read_p, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("externalSuccess 1 2\n");
    API(as)->free(as);
}

/* Nested parallel inside a branch; root cancel reaches the inner branches
 * first. */
static FutoInAsyncSteps* to_cancel;
static void do_cancel(void* d)
{
    tr("cancel()");
    API(to_cancel)->cancel(to_cancel);
}
static void last_job_waits(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    job_waits(as, d, a);
    /* everything waits now: cancel from outside any step */
    API(as)->sched_immediate(as, NULL, do_cancel);
}
static void inner_par(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setCancel(as, "outer-branch", on_cancel);
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, "inner-a", job_waits, NULL);
    API(p)->add(p, "inner-b", last_job_waits, NULL);
}

Test(parallel, nested_parallel_cancel_innermost_first)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, NULL);
    to_cancel = as;
    API(p)->add(p, NULL, inner_par, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    /* branches in the order they were added, each innermost first */
    assert_trace("job inner-a\njob inner-b\ncancel()\n"
                 "cancel inner-a\ncancel inner-b\ncancel outer-branch\n");
    API(as)->free(as);
}

/* An empty parallel completes at once; the handle is invalid afterwards
 * and add() through it is reported. */
static FutoInAsyncSteps* par_kept;
static void keep_par(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    par_kept = API(as)->parallel(as, NULL, NULL);
    cr_assert_eq(API(par_kept)->isValid(par_kept), 1);
}
static void late_add(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    cr_assert_eq(API(par_kept)->isValid(par_kept), 0);
    API(par_kept)->add(par_kept, "late", sub_print, NULL);
    tr("late add reported=%zu", misuse_seen);
}

Test(parallel, empty_parallel_and_stale_handle)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, keep_par, NULL);
    API(as)->add(as, NULL, late_add, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("late add reported=1\n");
    API(as)->free(as);
}

/* Timeout on the step that owns a parallel cancels every branch. */
static void par_with_timeout(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setTimeout(as, 5);
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, eh_print);
    API(p)->add(p, "x", job_waits, NULL);
    API(p)->add(p, "y", job_waits, NULL);
}

Test(parallel_timers, timeout_cancels_branches)
{
    uint64_t ms;
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, "owner", par_with_timeout, eh_print);
    API(as)->execute(as, NULL, on_unhandled);
    drive();
    cr_assert_eq(futoin_tool_now(T), 5, "timed out at %llu ms",
                 (unsigned long long)futoin_tool_now(T));
    cr_assert_eq(futoin_tool_next_due(T, &ms), 0, "a timer is left");
    /* reference q2_timeout_substeps f: branches cancelled, then the
     * parallel's handler, then the owner's */
    assert_trace("job x\njob y\ncancel x\ncancel y\n"
                 "step onerror: Timeout\nowner onerror: Timeout\n"
                 "unhandled Timeout\n");
    API(as)->free(as);
}
