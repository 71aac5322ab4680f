/* §1.8 loops: loop / repeat, labelled breakLoop / continueLoop, errors in
 * loops, and loops of a million iterations without stack growth. */
#include "common.h"

TestSuite(loops, .init = fx_setup, .fini = fx_teardown);

static void name_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s", (const char*)d);
}
static void eh_print(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("%s onerror: %s", d ? (const char*)d : "step", code);
}

/* loop until break after 3 iterations */
static int counter;
static void check_break(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("result %lld", (long long)a->arg0.i64);
    if (a->arg0.i64 >= 3) {
        API(as)->breakLoop(as, NULL);
    }
}
static void produce(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    succeed_i64(as, 1, ++counter, 0);
}
static void loop_body(FutoInAsyncSteps* as, void* d)
{
    tr("iteration");
    API(as)->add(as, NULL, produce, NULL);
    API(as)->add(as, NULL, check_break, NULL);
}
static void after_loop(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("after loop args=%d", a->arg0.type != NULL);
}

Test(loops, loop_until_break)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    counter = 0;
    API(as)->loop(as, NULL, loop_body, NULL);
    API(as)->add(as, NULL, after_loop, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("iteration\nresult 1\niteration\nresult 2\niteration\nresult 3\n"
                 "after loop args=0\n");
    API(as)->free(as);
}

/* repeat(3) passes i = 0, 1, 2 */
static void rep_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    tr("Iteration: %zu", i);
}

Test(loops, repeat_counts)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->repeat(as, NULL, 3, rep_body, NULL);
    API(as)->repeat(as, NULL, 0, rep_body, NULL);
    API(as)->add(as, "done", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("Iteration: 0\nIteration: 1\nIteration: 2\ndone\n");
    API(as)->free(as);
}

/* Inner loop continues the OUTER loop; outer breaks after 2 rounds. */
static void inner_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    tr("inner %zu", i);
    if (i == 1) {
        API(as)->continueLoop(as, "OUTER");
    }
}
static void outer_tail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("never: outer tail");
}
static void outer_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    tr("outer %zu", i);
    if (i == 2) {
        API(as)->breakLoop(as, "OUTER");
        return;
    }
    API(as)->repeat(as, NULL, 5, inner_body, "INNER");
    API(as)->add(as, NULL, outer_tail, NULL);
}

Test(loops, labelled_continue_and_break)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->repeat(as, NULL, 10, outer_body, "OUTER");
    API(as)->add(as, "done", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("outer 0\ninner 0\ninner 1\n"
                 "outer 1\ninner 0\ninner 1\n"
                 "outer 2\ndone\n");
    API(as)->free(as);
}

/* break from an inner loop out of the outer one, from a sub-step */
static void deep_break(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("deep break");
    API(as)->breakLoop(as, "OUTER");
}
static void inner2(FutoInAsyncSteps* as, void* d)
{
    API(as)->add(as, NULL, deep_break, NULL);
}
static void outer2(FutoInAsyncSteps* as, void* d)
{
    tr("outer");
    API(as)->loop(as, NULL, inner2, "INNER");
}

Test(loops, break_outer_from_nested_substep)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->loop(as, NULL, outer2, "OUTER");
    API(as)->add(as, "done", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("outer\ndeep break\ndone\n");
    API(as)->free(as);
}

/* Unknown label and break outside a loop are InternalError. */
static void bad_label(FutoInAsyncSteps* as, void* d)
{
    API(as)->breakLoop(as, "NOPE");
}
static void eh_info(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("onerror %s: %s", code,
       (const char*)API(as)->stateVariable(as, NULL, "error_info", NULL, NULL));
}
static void loop_in_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->loop(as, NULL, bad_label, "REAL");
}
static void break_no_loop(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->breakLoop(as, NULL);
}

Test(loops, unknown_label_and_no_loop_are_errors)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, loop_in_step, eh_info);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    API(as)->free(as);
    as = futoin_root_new(T);
    API(as)->add(as, NULL, break_no_loop, eh_info);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("onerror InternalError: breakLoop(): no loop with this label\n"
                 "unhandled InternalError\n"
                 "onerror InternalError: breakLoop() outside of a loop\n"
                 "unhandled InternalError\n");
    API(as)->free(as);
}

/* An error in a loop body ends the loop through the enclosing handler. */
static void err_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    tr("body %zu", i);
    if (i == 1) {
        ERROR(as, "LoopFail");
    }
}
static void loop_owner(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->repeat(as, NULL, 5, err_body, NULL);
}

Test(loops, error_in_body_reaches_outer_handler)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, "owner", loop_owner, eh_print);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("body 0\nbody 1\nowner onerror: LoopFail\nunhandled LoopFail\n");
    API(as)->free(as);
}

/* breakLoop() from an error handler inside the body. */
static void body_fails(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    ERROR(as, "Stop");
}
static void eh_break(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("break on %s", code);
    API(as)->breakLoop(as, NULL);
}
static void body_with_eh(FutoInAsyncSteps* as, void* d)
{
    tr("body");
    API(as)->add(as, NULL, body_fails, eh_break);
}

Test(loops, break_from_error_handler)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->loop(as, NULL, body_with_eh, NULL);
    API(as)->add(as, "done", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("body\nbreak on Stop\ndone\n");
    API(as)->free(as);
}

/* A body that waits: the loop resumes when it is completed externally. */
static void resume(void* d)
{
    SUCCESS0((FutoInAsyncSteps*)d);
}
static void waiting_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    tr("wait %zu", i);
    API(as)->waitExternal(as);
    API(as)->sched_immediate(as, as, resume);
}

Test(loops, waiting_bodies)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->repeat(as, NULL, 3, waiting_body, NULL);
    API(as)->add(as, "done", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("wait 0\nwait 1\nwait 2\ndone\n");
    API(as)->free(as);
}

/* A million iterations: no stack growth, no per-iteration allocation. */
static size_t sum;
static void add_i(FutoInAsyncSteps* as, void* d, size_t i)
{
    sum += i;
}

Test(loops, million_iterations)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    sum = 0;
    API(as)->repeat(as, NULL, 1000000, add_i, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    cr_assert_eq(sum, (size_t)1000000 * 999999 / 2);
    API(as)->free(as);
}

/* Bodies that call success() with values: each iteration's values are
 * cleaned up (the loop passes none on), also on the in-place fast path. */
static int value_cleanups;
static void count_cleanup(FutoInBinaryValue* v)
{
    ++value_cleanups;
}
static const FutoInType ty_counted = {FTN_TYPE_INT64, count_cleanup};
static void body_succeeds(FutoInAsyncSteps* as, void* d, size_t i)
{
    FutoInArgs v;
    memset(&v, 0, sizeof(v));
    v.arg0.type = &ty_counted;
    v.arg0.i64 = (int64_t)i;
    API(as)->success(as, &v);
}

Test(loops, body_success_values_are_dropped)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    value_cleanups = 0;
    API(as)->repeat(as, NULL, 5, body_succeeds, NULL);
    API(as)->add(as, NULL, after_loop, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("after loop args=0\n");
    cr_assert_eq(value_cleanups, 5);
    API(as)->free(as);
}

/* A break in a parallel() branch ends the loop around the parallel(): the
 * siblings are cancelled, the parallel's error handler sees LoopBreak like
 * any branch error, and the flow goes on after the loop. (The JS reference
 * loses the flow here: nothing after the loop ever runs. A deliberate
 * difference, README.) A continue goes on with the next iteration. */
static void br_cancel(FutoInAsyncSteps* as, void* d)
{
    tr("%s cancelled", (const char*)d);
}
static void br_break(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("branch 1 breaks");
    API(as)->breakLoop(as, (const char*)d);
}
static void br_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("branch 2 waits");
    API(as)->setCancel(as, "branch 2", br_cancel);
}
static void par_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("parallel onerror %s", code);
}
static int par_iter;
static void par_loop_body(FutoInAsyncSteps* as, void* d)
{
    FutoInAsyncSteps* p;
    tr("iteration %d", par_iter);
    if (par_iter++ > 2) {
        tr("safety break");
        API(as)->breakLoop(as, NULL);
        return;
    }
    p = API(as)->parallel(as, NULL, par_eh);
    API(p)->add(p, NULL, br_wait, NULL); /* starts first, then waits */
    API(p)->add(p, d, br_break, NULL);
}
static void after_par_loop(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("after loop, last_exception=%s",
       (const char*)API(as)->stateVariable(as, NULL, "last_exception", NULL, NULL));
}

Test(loops, break_in_a_parallel_branch_ends_the_enclosing_loop)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    par_iter = 0;
    API(as)->loop(as, "L", par_loop_body, "L");
    API(as)->add(as, NULL, after_par_loop, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("iteration 0\nbranch 2 waits\nbranch 1 breaks\n"
                 "branch 2 cancelled\nparallel onerror LoopBreak\n"
                 "after loop, last_exception=(null)\n");
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
    API(as)->free(as);
}

static void br_continue(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("branch 1 continues");
    API(as)->continueLoop(as, NULL);
}
static void par_rep_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, NULL);
    tr("iteration %zu", i);
    API(p)->add(p, NULL, br_wait, NULL);
    API(p)->add(p, NULL, br_continue, NULL);
    API(as)->add(as, "never", name_step, NULL);
}

Test(loops, continue_in_a_parallel_branch_goes_on_with_the_next_iteration)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->repeat(as, NULL, 2, par_rep_body, NULL);
    API(as)->add(as, NULL, after_par_loop, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("iteration 0\nbranch 2 waits\nbranch 1 continues\n"
                 "branch 2 cancelled\n"
                 "iteration 1\nbranch 2 waits\nbranch 1 continues\n"
                 "branch 2 cancelled\n"
                 "after loop, last_exception=(null)\n");
    API(as)->free(as);
}

/* Issue 22 (T3): an iteration whose body added sub-steps and holds
 * nothing else ends on the same frame the next iteration runs on (as
 * iterations of the in-place burst always did), so an asynchronous loop
 * takes no fresh body record per iteration. The order of callbacks is
 * the same either way. */
static FutoInAsyncSteps* body_handles[4];
static void sub_resume(void* d)
{
    SUCCESS0((FutoInAsyncSteps*)d);
}
static void waiting_sub(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("sub %d", (int)(intptr_t)d);
    API(as)->waitExternal(as);
    API(as)->sched_immediate(as, as, sub_resume);
}
/* Iteration `i`'s body: traced, its handle kept, one sub-step `sub` added. */
static void body_adds(FutoInAsyncSteps* as, size_t i,
                      FutoInAsyncSteps_execute_callback sub)
{
    tr("body %zu", i);
    body_handles[i] = as;
    API(as)->add(as, (void*)(intptr_t)i, sub, NULL);
}
static void adding_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    body_adds(as, i, waiting_sub);
}
/* A root of repeat(3, body) then a step "done", run to its end (the caller
 * checks and frees it). */
static FutoInAsyncSteps* run_three_iterations(
        void (*body)(FutoInAsyncSteps* as, void* d, size_t i))
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    memset(body_handles, 0, sizeof(body_handles));
    API(as)->repeat(as, NULL, 3, body, NULL);
    API(as)->add(as, "done", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    return as;
}

Test(loops, async_iterations_run_on_one_body_frame)
{
    FutoInAsyncSteps* as = run_three_iterations(adding_body);
    assert_trace("body 0\nsub 0\nbody 1\nsub 1\nbody 2\nsub 2\ndone\n");
    cr_assert(body_handles[0] != NULL);
    cr_assert_eq(body_handles[1], body_handles[0]);
    cr_assert_eq(body_handles[2], body_handles[0]);
    API(as)->free(as);
}

/* A body with stack() memory is how a binding (or C code) learns that its
 * iteration ended: the cleanup runs as the iteration ends, before the next
 * body, and such a body is never run again: the next iteration gets a
 * record of its own, so a call through the ended one's handle finds a
 * freed record (README, "A step's handle ends with its step"). */
static void iteration_cleanup(void* v)
{
    tr("cleanup %d", *(int*)v);
}
static void anchored_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    int* v = API(as)->stack(as, sizeof(int), iteration_cleanup);
    cr_assert(v != NULL);
    *v = (int)i;
    body_adds(as, i, waiting_sub);
}

Test(loops, a_body_with_stack_memory_ends_with_its_iteration)
{
    FutoInAsyncSteps* as = run_three_iterations(anchored_body);
    assert_trace("body 0\nsub 0\ncleanup 0\nbody 1\nsub 1\ncleanup 1\n"
                 "body 2\nsub 2\ncleanup 2\ndone\n");
    cr_assert_neq(body_handles[1], body_handles[0]);
    cr_assert_neq(body_handles[2], body_handles[1]);
    API(as)->free(as);
}

/* A sub-step that calls success() through the handle of the iteration
 * before its own: with the frame run again that handle is its parent's,
 * misuse the flow reports (InternalError), never a silent completion. */
static void stale_sub(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    size_t i = (size_t)(intptr_t)d;
    tr("sub %zu", i);
    if (i == 1) {
        SUCCESS0(body_handles[0]);
    }
}
static void stale_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    body_adds(as, i, stale_sub);
}

Test(loops, a_call_through_the_previous_iterations_handle_is_misuse)
{
    size_t before = misuse_seen;
    FutoInAsyncSteps* as = run_three_iterations(stale_body);
    tr("reported %zu", misuse_seen - before);
    assert_trace("body 0\nsub 0\nbody 1\nsub 1\nunhandled InternalError\n"
                 "reported 0\n");
    API(as)->free(as);
}

/* A body frame keeps its loop's data and function (engine.h,
 * futoin__body_init): every iteration of loop() gets the loop's data,
 * on a body frame run again (its sub-step waited) and on a fresh one (the
 * iteration before held stack() memory), and so does repeat(). */
static int loop_ctx;
static void data_body(FutoInAsyncSteps* as, void* d)
{
    static int i;
    tr("body %d data %s", i, d == &loop_ctx ? "ok" : "WRONG");
    if (i == 4) {
        i = 0;
        API(as)->breakLoop(as, NULL);
        return;
    }
    if (i % 2) {
        cr_assert(API(as)->stack(as, sizeof(int), NULL) != NULL);
    }
    API(as)->add(as, (void*)(intptr_t)i++, waiting_sub, NULL);
}
static void data_rep_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    tr("rep %zu data %s", i, d == &loop_ctx ? "ok" : "WRONG");
    API(as)->add(as, (void*)(intptr_t)i, waiting_sub, NULL);
}

Test(loops, every_iteration_gets_the_loops_data)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->loop(as, &loop_ctx, data_body, NULL);
    API(as)->repeat(as, &loop_ctx, 2, data_rep_body, NULL);
    API(as)->add(as, "done", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("body 0 data ok\nsub 0\nbody 1 data ok\nsub 1\n"
                 "body 2 data ok\nsub 2\nbody 3 data ok\nsub 3\n"
                 "body 4 data ok\nrep 0 data ok\nsub 0\nrep 1 data ok\n"
                 "sub 1\ndone\n");
    API(as)->free(as);
}

/* A body that adds steps and then cancels or frees its root in the same
 * callback: the root settles once the body returns (none of the added
 * steps runs, no error is reported), on the way a body that only added
 * steps takes (flow.c exec_body). */
static FutoInAsyncSteps* settling_root;
static int settle_free;
static void settling_body(FutoInAsyncSteps* as, void* d)
{
    tr("body");
    API(as)->add(as, "never: sub-step", name_step, NULL);
    if (settle_free) {
        API(settling_root)->free(settling_root);
    } else {
        API(settling_root)->cancel(settling_root);
    }
    tr("body returns");
}

Test(loops, a_body_that_adds_steps_may_cancel_or_free_its_root)
{
    for (settle_free = 0; settle_free < 2; ++settle_free) {
        settling_root = futoin_root_new(T);
        API(settling_root)->loop(settling_root, NULL, settling_body, NULL);
        API(settling_root)->add(settling_root, "never: after", name_step, NULL);
        API(settling_root)->execute(settling_root, NULL, on_unhandled);
        run();
        tr("settled");
        if (!settle_free) {
            API(settling_root)->free(settling_root);
        }
    }
    assert_trace("body\nbody returns\nsettled\nbody\nbody returns\nsettled\n");
}
