/* Waiting for external events (§1.3, §3.5): setTimeout, setCancel,
 * waitExternal, completion from outside the step and from other threads,
 * root cancel() (§2.2.3). */
#include "common.h"

#include <futoin/sync.h>
#include <pthread.h>

TestSuite(wait, .init = fx_setup, .fini = fx_teardown);
/* The tests about timers run on virtual time: drive() moves the clock from
 * one due timer to the next, and the clock says when the flow ended. */
TestSuite(wait_timers, .init = fx_setup_virtual, .fini = fx_teardown);

/* The clock stopped at `ms`, with no timer left. */
#define assert_ended_at(ms)                                                    \
    do {                                                                       \
        uint64_t due_;                                                         \
        cr_assert_eq(futoin_tool_now(T), (uint64_t)(ms), "the clock is at %llu", \
                     (unsigned long long)futoin_tool_now(T));                  \
        cr_assert_eq(futoin_tool_next_due(T, &due_), 0, "a timer is left");    \
    } while (0)

static void name_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s", (const char*)d);
}
static void eh_print(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("%s onerror: %s", d ? (const char*)d : "step", code);
}
static void on_cancel(FutoInAsyncSteps* as, void* d)
{
    tr("cancel %s", (const char*)d);
}

/* ---- setTimeout ---------------------------------------------------------- */

static void wait_with_timeout(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setTimeout(as, 10);
    API(as)->setCancel(as, "waiter", on_cancel);
}

Test(wait_timers, timeout_raises_timeout_and_cancels_the_wait)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, wait_with_timeout, eh_print);
    API(as)->add(as, "never", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    drive();
    /* the cancel handler runs before the error handler (reference q11 e) */
    assert_trace("cancel waiter\nstep onerror: Timeout\nunhandled Timeout\n");
    API(as)->free(as);
    assert_ended_at(10);
}

/* A step that only sets a timeout waits (no implicit success). */
static void only_timeout(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setTimeout(as, 1);
}
static void timeout_recover(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("recovered %s", code);
    SUCCESS0(as);
}

Test(wait_timers, timeout_only_waits_then_recovers)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, only_timeout, timeout_recover);
    API(as)->add(as, "after", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    drive();
    assert_trace("recovered Timeout\nafter\n");
    API(as)->free(as);
    assert_ended_at(1);
}

/* The timeout of a step covers its sub-steps. Timeout is raised at the
 * innermost frame, so the waiting sub-step is cancelled and its handler
 * sees Timeout first, then the owner's (reference q2_timeout_substeps a). */
static void sub_waits(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("sub waits");
    API(as)->setCancel(as, "sub", on_cancel);
}
static void step_with_subs(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setTimeout(as, 20);
    API(as)->add(as, NULL, sub_waits, eh_print);
}

Test(wait_timers, timeout_covers_sub_steps)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, "outer", step_with_subs, eh_print);
    API(as)->execute(as, NULL, on_unhandled);
    drive();
    assert_trace("sub waits\ncancel sub\nstep onerror: Timeout\n"
                 "outer onerror: Timeout\nunhandled Timeout\n");
    API(as)->free(as);
    assert_ended_at(20);
}

/* A long timeout never fires once the step completes: no timer is left
 * (on the wall clock, run() would wait ~49 days). */
static void complete_later(void* d)
{
    FutoInAsyncSteps* as = d;
    succeed_i64(as, 1, 7, 0);
}
static void long_timeout(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setTimeout(as, UINT32_MAX);
    API(as)->sched_immediate(as, as, complete_later);
}
static void print_i(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("got %lld", (long long)a->arg0.i64);
}

Test(wait_timers, long_timeout_stopped_on_success)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, long_timeout, eh_print);
    API(as)->add(as, NULL, print_i, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    drive();
    assert_trace("got 7\n");
    API(as)->free(as);
    assert_ended_at(0);
}

/* setTimeout twice: the second overrides the first (§1.9). */
static void timeout_twice(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setTimeout(as, 1);
    API(as)->setTimeout(as, UINT32_MAX);
    API(as)->sched_deferred(as, 30, as, complete_later);
}

Test(wait_timers, set_timeout_twice_overrides)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, timeout_twice, eh_print);
    API(as)->add(as, NULL, print_i, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    drive();
    assert_trace("got 7\n");
    API(as)->free(as);
    assert_ended_at(30);
}

/* ---- §3.5 external completion: success and error branches -------------- */

static void ext_ok(void* d)
{
    SUCCESS0((FutoInAsyncSteps*)d);
}
static void ext_err(void* d)
{
    ERROR((FutoInAsyncSteps*)d, "ExternalFailure");
}
static void eh_plain(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("step onerror: %s", code);
}
static void wait_ext(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->waitExternal(as);
    API(as)->sched_deferred(as, 1, as, (void (*)(void*))d);
}

Test(wait_timers, spec_3_5_external_success)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, (void*)ext_ok, wait_ext, eh_plain);
    API(as)->add(as, "done", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    drive();
    assert_trace("done\n");
    API(as)->free(as);
    assert_ended_at(1);
}

Test(wait_timers, spec_3_5_external_error)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, (void*)ext_err, wait_ext, eh_plain);
    API(as)->add(as, "done", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    drive();
    assert_trace("step onerror: ExternalFailure\nunhandled ExternalFailure\n");
    API(as)->free(as);
    assert_ended_at(1);
}

/* A step of one flow completes a waiting step of another. */
static FutoInAsyncSteps* waiting;
static void waiter(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("waiter waits");
    waiting = as;
    API(as)->waitExternal(as);
}
static void waker(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("waker");
    succeed_i64(waiting, 1, 5, 0);
}

Test(wait, completed_by_another_flow)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    FutoInAsyncSteps* b = futoin_root_new(T);
    API(a)->add(a, NULL, waiter, NULL);
    API(a)->add(a, NULL, print_i, NULL);
    API(b)->add(b, NULL, waker, NULL);
    API(a)->execute(a, NULL, on_unhandled);
    API(b)->execute(b, NULL, on_unhandled);
    run();
    assert_trace("waiter waits\nwaker\ngot 5\n");
    API(a)->free(a);
    API(b)->free(b);
}

/* ---- completion from another thread -------------------------------------- */

struct thr_ctx
{
    FutoInAsyncSteps* as;
    int is_error;
};
static void* thread_main(void* p)
{
    struct thr_ctx* c = p;
    cr_assert_eq(API(c->as)->is_same_thread(c->as), 0);
    if (c->is_error) {
        API(c->as)->handle_error(c->as, "FromThread", "info from thread");
    } else {
        succeed_i64(c->as, 1, 99, 0);
    }
    return NULL;
}
static pthread_t thr;
static struct thr_ctx ctx;
static void wait_thread(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->waitExternal(as);
    ctx.as = as;
    ctx.is_error = d != NULL;
    cr_assert_eq(pthread_create(&thr, NULL, thread_main, &ctx), 0);
}
static void print_i_thread(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("got %lld on loop thread=%d", (long long)a->arg0.i64,
       API(as)->is_same_thread(as));
}

Test(wait, success_from_another_thread)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, wait_thread, eh_print);
    API(as)->add(as, NULL, print_i_thread, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run(); /* the waiting root keeps the loop alive until the thread posts */
    pthread_join(thr, NULL);
    assert_trace("got 99 on loop thread=1\n");
    API(as)->free(as);
}

static void eh_info(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("onerror %s info=%s", code,
       (const char*)API(as)->stateVariable(as, NULL, "error_info", NULL, NULL));
}

Test(wait, error_from_another_thread)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, "e", wait_thread, eh_info);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    pthread_join(thr, NULL);
    assert_trace("onerror FromThread info=info from thread\nunhandled FromThread\n");
    API(as)->free(as);
}

/* ---- root cancel(): innermost first, each handler exactly once --------- */

static FutoInAsyncSteps* root_to_cancel;
static void cancel_root_cb(void* d)
{
    tr("cancel()");
    API(root_to_cancel)->cancel(root_to_cancel);
    API(root_to_cancel)->cancel(root_to_cancel); /* twice: no effect */
}
static void lvl3(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setCancel(as, "L3", on_cancel);
    API(as)->sched_deferred(as, 1, NULL, cancel_root_cb);
}
static void lvl2(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setCancel(as, "L2", on_cancel);
    API(as)->add(as, NULL, lvl3, eh_print);
}
static void lvl1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setCancel(as, "L1", on_cancel);
    API(as)->add(as, NULL, lvl2, eh_print);
}

Test(wait_timers, root_cancel_innermost_first_once)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    root_to_cancel = as;
    API(as)->add(as, NULL, lvl1, eh_print);
    API(as)->add(as, "never", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    drive();
    assert_trace("cancel()\ncancel L3\ncancel L2\ncancel L1\n");
    API(as)->free(as);
    assert_trace("cancel()\ncancel L3\ncancel L2\ncancel L1\n");
    assert_ended_at(1);
}

/* cancel() from inside the root's own step is deferred until the step
 * returns; the flow stops there. */
static void self_cancel(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("self cancel");
    API(as)->setCancel(as, "self", on_cancel);
    API(root_to_cancel)->cancel(root_to_cancel);
    tr("still in step");
}

Test(wait, cancel_from_own_step_is_deferred)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    root_to_cancel = as;
    API(as)->add(as, NULL, self_cancel, eh_print);
    API(as)->add(as, "never", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("self cancel\nstill in step\ncancel self\n");
    API(as)->free(as);
}

/* Freeing a waiting root cancels it first. */
static void just_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setCancel(as, "w", on_cancel);
}

Test(wait, free_cancels_a_waiting_root)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, just_wait, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    cr_assert_eq(futoin_tool_run_nowait(T) >= 0, 1);
    API(as)->free(as);
    assert_trace("cancel w\n");
    run(); /* nothing left: returns */
}

/* A handle kept past cancel is no longer valid, and a late success through
 * it is not executed. It lost a race against the cancel, which a correct
 * program cannot always avoid: dropped quietly and counted, not reported
 * as misuse. */
static FutoInAsyncSteps* kept;
static void keep_handle(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    kept = as;
    API(as)->setCancel(as, "k", on_cancel);
}

Test(wait, late_success_after_cancel_is_dropped_quietly)
{
    futoin_tool_stats st = FUTOIN_TOOL_STATS_INIT;
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, keep_handle, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    futoin_tool_run_nowait(T);
    cr_assert_eq(API(kept)->isValid(kept), 1);
    API(as)->cancel(as);
    cr_assert_eq(API(kept)->isValid(kept), 0);
    SUCCESS0(kept);
    cr_assert_eq(misuse_seen, 0, "reported: %s", misuse_last);
    cr_assert_eq(futoin_tool_get_stats(T, &st), FUTOIN_OK);
    cr_assert_eq(st.late_completions, 1);
    run();
    assert_trace("cancel k\n");
    API(as)->free(as);
}

/* ---- a woken step's one value (issue 22: kept in the step, not pooled) -- */

/* A step woken from outside with one plain value keeps it until its flow
 * runs (engine.h futoin__val1); the next step gets it bit for bit, its
 * type the caller's own. */
static int val_cleanups;
static void val_cleanup(FutoInBinaryValue* v)
{
    tr("cleanup %lld", (long long)v->i64);
    ++val_cleanups;
}
static const FutoInType ty_counted_i64 = {FTN_TYPE_INT64, val_cleanup};
static int custom_anchor;

static void print_value(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const FutoInBinaryValue* v = &a->arg0;
    if (v->type == &ty_dbl) {
        tr("got double %g", v->d);
    } else if (v->type == &ty_counted_i64) {
        tr("got counted %lld custom=%d length=%u", (long long)v->i64,
           v->custom_data == &custom_anchor, v->length);
    } else {
        tr("got type %p", (const void*)v->type);
    }
    cr_assert_null(a->arg1.type);
}
static void wake_with(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs v;
    memset(&v, 0, sizeof(v));
    if (d == (void*)&ty_dbl) {
        v.arg0.type = &ty_dbl;
        v.arg0.d = -1.25;
    } else {
        v.arg0.type = &ty_counted_i64;
        v.arg0.i64 = 7;
        if (d) { /* with custom data: the pooled way */
            v.arg0.custom_data = &custom_anchor;
            v.arg0.length = 3;
        }
    }
    tr("wake");
    API(waiting)->success(waiting, &v);
    cr_assert_null(v.arg0.type, "success() moved the value out");
}

Test(wait, a_woken_steps_one_value_reaches_the_next_step)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    FutoInAsyncSteps* b = futoin_root_new(T);
    API(a)->add(a, NULL, waiter, NULL);
    API(a)->add(a, NULL, print_value, NULL);
    API(b)->add(b, (void*)&ty_dbl, wake_with, NULL);
    API(a)->execute(a, NULL, on_unhandled);
    API(b)->execute(b, NULL, on_unhandled);
    run();
    assert_trace("waiter waits\nwake\ngot double -1.25\n");
    API(a)->free(a);
    API(b)->free(b);
}

/* A value with custom_data and a length is passed in a pooled container,
 * whole. */
Test(wait, a_woken_steps_value_with_custom_data_arrives_whole)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    FutoInAsyncSteps* b = futoin_root_new(T);
    val_cleanups = 0;
    API(a)->add(a, NULL, waiter, NULL);
    API(a)->add(a, NULL, print_value, NULL);
    API(b)->add(b, (void*)1, wake_with, NULL);
    API(a)->execute(a, NULL, on_unhandled);
    API(b)->execute(b, NULL, on_unhandled);
    run();
    assert_trace("waiter waits\nwake\ngot counted 7 custom=1 length=3\n"
                 "cleanup 7\n");
    cr_assert_eq(val_cleanups, 1);
    API(a)->free(a);
    API(b)->free(b);
}

/* The woken flow's root is cancelled before the flow runs: the value the
 * step holds is cleaned up once, and nothing after the step runs. */
static FutoInAsyncSteps* root_a;
static void wake_then_cancel(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    wake_with(as, NULL, a);
    API(root_a)->cancel(root_a);
    tr("cancelled");
}

Test(wait, a_woken_steps_value_is_cleaned_up_once_on_cancel)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    FutoInAsyncSteps* b = futoin_root_new(T);
    root_a = a;
    val_cleanups = 0;
    API(a)->add(a, NULL, waiter, NULL);
    API(a)->add(a, NULL, print_value, NULL);
    API(b)->add(b, NULL, wake_then_cancel, NULL);
    API(a)->execute(a, NULL, on_unhandled);
    API(b)->execute(b, NULL, on_unhandled);
    run();
    assert_trace("waiter waits\nwake\ncleanup 7\ncancelled\n");
    cr_assert_eq(val_cleanups, 1);
    API(a)->free(a);
    API(b)->free(b);
}

/* An outer step's timeout fires, then the inner waiting step is woken with
 * a value, both before the flow runs: the Timeout unwinds from the woken
 * step (innermost first), its value is cleaned up once, and the outer
 * handler sees the Timeout. */
static void wake_at_10(void* d)
{
    wake_with(NULL, NULL, NULL);
}
static void inner_waits(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    waiting = as;
    API(as)->waitExternal(as);
    API(as)->sched_deferred(as, 10, NULL, wake_at_10);
}
static void outer_times_out(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setTimeout(as, 10);
    API(as)->add(as, NULL, inner_waits, NULL);
    API(as)->add(as, NULL, print_value, NULL);
}

Test(wait_timers, a_timeout_before_the_woken_flow_runs_drops_the_value_once)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    val_cleanups = 0;
    API(as)->add(as, "outer", outer_times_out, eh_print);
    API(as)->add(as, "after", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    drive();
    assert_trace("wake\ncleanup 7\nouter onerror: Timeout\nunhandled Timeout\n");
    cr_assert_eq(val_cleanups, 1);
    API(as)->free(as);
    assert_ended_at(10);
}

/* The same with the waiting step a sub-step: the value goes from the step
 * straight to the next sub-step's callback (flow.c woken_value), once,
 * and is cleaned up once after it. */
static void waits_then_prints(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->add(as, NULL, waiter, NULL);
    API(as)->add(as, NULL, print_value, NULL);
}

/* Root a runs `outer` (whose sub-steps wait) then "after"; root b wakes
 * the waiting step with a counted 7. */
static void run_woken_sub_steps(FutoInAsyncSteps_execute_callback outer)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    FutoInAsyncSteps* b = futoin_root_new(T);
    val_cleanups = 0;
    API(a)->add(a, NULL, outer, NULL);
    API(a)->add(a, "after", name_step, NULL);
    API(b)->add(b, NULL, wake_with, NULL);
    API(a)->execute(a, NULL, on_unhandled);
    API(b)->execute(b, NULL, on_unhandled);
    run();
    API(a)->free(a);
    API(b)->free(b);
}

Test(wait, a_woken_sub_steps_value_reaches_the_next_sub_step)
{
    run_woken_sub_steps(waits_then_prints);
    assert_trace("waiter waits\nwake\ngot counted 7 custom=0 length=0\n"
                 "cleanup 7\nafter\n");
    cr_assert_eq(val_cleanups, 1);
}

/* ... in a loop's body, every iteration: each wake's value reaches the
 * step after the wait (T3's shape). */
static int wake_rounds;
static void loop_wait_body(FutoInAsyncSteps* as, void* d)
{
    if (wake_rounds == 3) {
        API(as)->breakLoop(as, NULL);
        return;
    }
    API(as)->add(as, NULL, waiter, NULL);
    API(as)->add(as, NULL, print_value, NULL);
}
static void run_until_waiting(void)
{
    waiting = NULL;
    for (int i = 0; i < 100 && !waiting; ++i) {
        cr_assert_geq(futoin_tool_run_nowait(T), 0);
    }
}

Test(wait, every_wake_of_a_loop_passes_its_value_on)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    wake_rounds = 0;
    API(a)->loop(a, NULL, loop_wait_body, NULL);
    API(a)->add(a, "after", name_step, NULL);
    API(a)->execute(a, NULL, on_unhandled);
    /* a waiting step keeps futoin_tool_run() waiting: passes of the loop
     * until the flow waits again */
    run_until_waiting();
    while (wake_rounds < 3) {
        ++wake_rounds;
        wake_with(NULL, (void*)&ty_dbl, NULL); /* from outside a callback */
        run_until_waiting();
    }
    assert_trace("waiter waits\nwake\ngot double -1.25\n"
                 "waiter waits\nwake\ngot double -1.25\n"
                 "waiter waits\nwake\ngot double -1.25\n"
                 "after\n");
    API(a)->free(a);
}

/* ... where what comes next is no plain step (a loop frame, then a step
 * guarded by addSync()): the value goes the general way, and is still
 * cleaned up once. */
static void print_and_break(FutoInAsyncSteps* as, void* d)
{
    tr("loop body");
    API(as)->breakLoop(as, NULL);
}
static void waits_then_loops(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->add(as, NULL, waiter, NULL);
    API(as)->loop(as, NULL, print_and_break, NULL);
}

Test(wait, a_woken_sub_steps_value_before_a_loop_is_cleaned_up_once)
{
    run_woken_sub_steps(waits_then_loops);
    assert_trace("waiter waits\nwake\ncleanup 7\nloop body\nafter\n");
    cr_assert_eq(val_cleanups, 1);
}

static FutoInSync* wait_mutex;
static void waits_then_syncs(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->add(as, NULL, waiter, NULL);
    API(as)->addSync(as, wait_mutex, NULL, print_value, NULL);
}

Test(wait, a_woken_sub_steps_value_reaches_a_guarded_step)
{
    wait_mutex = futoin_mutex_new(1, FUTOIN_UNLIMITED);
    cr_assert_not_null(wait_mutex);
    run_woken_sub_steps(waits_then_syncs);
    assert_trace("waiter waits\nwake\ngot counted 7 custom=0 length=0\n"
                 "cleanup 7\nafter\n");
    cr_assert_eq(val_cleanups, 1);
    futoin_mutex_free(wait_mutex);
}
