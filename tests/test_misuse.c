/* Misuse is an error, never a crash (§2.1 "any violation is reported as
 * InternalError"). The C++ reference implementation aborts here. */
#include "common.h"

TestSuite(misuse, .init = fx_setup, .fini = fx_teardown);

static void eh_info(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("onerror %s: %s", code,
       (const char*)API(as)->stateVariable(as, NULL, "error_info", NULL, NULL));
}
static void name_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s", (const char*)d);
}

static void run_one(FutoInAsyncSteps_execute_callback f)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, f, eh_info);
    API(as)->add(as, "never", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    API(as)->free(as);
}

/* The reference's q7 frame (tests/ref_js/q7_misuse.js): a wrapper step W
 * whose sub-step S misbehaves, a sibling S2 after S, then a root step N.
 * A call after success() is raised one level up: S already completed, so
 * W's handler sees the InternalError and S's own handler does not (q7 a2,
 * c2). */
static void w_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("W onerror %s: %s", code,
       (const char*)API(as)->stateVariable(as, NULL, "error_info", NULL, NULL));
}
static void s_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("S onerror %s", code);
}
static FutoInAsyncSteps_execute_callback framed_s;
static void w_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->add(as, NULL, framed_s, s_eh);
    API(as)->add(as, "S2 run", name_step, NULL);
}
static void run_framed(FutoInAsyncSteps_execute_callback s)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    framed_s = s;
    API(as)->add(as, NULL, w_step, w_eh);
    API(as)->add(as, "N run", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    API(as)->free(as);
}

static void success_twice(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    SUCCESS0(as);
    SUCCESS0(as);
}
Test(misuse, success_twice_is_raised_one_level_up)
{
    run_framed(success_twice);
    assert_trace("W onerror InternalError: success() after success()\n"
                 "unhandled InternalError\n");
}

static void success_after_add(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->add(as, "sub", name_step, NULL);
    SUCCESS0(as);
}
Test(misuse, success_after_add)
{
    run_one(success_after_add);
    assert_trace("onerror InternalError: success() after add()\n"
                 "unhandled InternalError\n");
}

/* §2.1: an execute callback either completes (success or error) or adds
 * sub-steps; "any violation is reported as InternalError", as success()
 * after add() is. (The JS reference lets the error through: a documented
 * deliberate difference, README.) */
static void error_after_add(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->add(as, "sub", name_step, NULL);
    ERROR(as, "MyError");
}
Test(misuse, error_after_add_is_internal_error)
{
    run_one(error_after_add);
    assert_trace("onerror InternalError: error() after add()\n"
                 "unhandled InternalError\n");
}

static void add_after_success(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    SUCCESS0(as);
    API(as)->add(as, "sub", name_step, NULL);
}
Test(misuse, add_after_success_is_raised_one_level_up)
{
    run_framed(add_after_success);
    assert_trace("W onerror InternalError: add() after success()\n"
                 "unhandled InternalError\n");
}

static void error_after_success(FutoInAsyncSteps* as, void* d,
                                const FutoInArgs* a)
{
    SUCCESS0(as);
    ERROR(as, "Late");
}
Test(misuse, error_after_success_is_raised_one_level_up)
{
    run_framed(error_after_success);
    assert_trace("W onerror InternalError: error() after success()\n"
                 "unhandled InternalError\n");
}

static void null_callback(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->add(as, NULL, NULL, NULL);
}
Test(misuse, add_null_callback_is_invalid_request)
{
    run_one(null_callback);
    assert_trace("onerror InvalidRequest: add(): the execute callback is NULL\n"
                 "unhandled InvalidRequest\n");
}

static void bad_sync(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    static FutoInSync no_api; /* api == NULL */
    API(as)->addSync(as, &no_api, NULL, name_step, NULL);
}
Test(misuse, add_sync_invalid_object)
{
    run_one(bad_sync);
    assert_trace("onerror InvalidRequest: addSync(): NULL callback or invalid "
                 "sync object\nunhandled InvalidRequest\n");
}

/* Calls through the handle of a finished step: reported, not executed. */
static FutoInAsyncSteps* finished;
static void keep(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    finished = as;
}
static void use_finished(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    size_t before = misuse_seen;
    SUCCESS0(finished);
    ERROR(finished, "X");
    API(finished)->add(finished, "ghost", name_step, NULL);
    API(finished)->setTimeout(finished, 1);
    API(finished)->waitExternal(finished);
    cr_assert_null(API(finished)->stack(finished, 8, NULL));
    cr_assert_eq(API(finished)->isValid(finished), 0);
    tr("reported %zu", misuse_seen - before);
}
Test(misuse, calls_through_finished_step)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, keep, NULL);
    API(as)->add(as, NULL, use_finished, NULL);
    API(as)->add(as, "end", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("reported 6\nend\n");
    API(as)->free(as);
}

/* A step handle used outside its callback while the step still runs its
 * sub-steps: InternalError in the flow, at that step. */
static FutoInAsyncSteps* parent_handle;
static void child_misuses(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(parent_handle)->add(parent_handle, "ghost", name_step, NULL);
}
static void parent(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    parent_handle = as;
    API(as)->add(as, NULL, child_misuses, NULL);
}
Test(misuse, parent_handle_used_from_child)
{
    run_one(parent);
    assert_trace("onerror InternalError: add() outside of the step's own "
                 "callback\nunhandled InternalError\n");
}

/* execute twice, execute on a step, root-only calls on steps, step-only
 * calls on roots: reported, no effect. */
static void root_calls_on_step(FutoInAsyncSteps* as, void* d,
                               const FutoInArgs* a)
{
    size_t before = misuse_seen;
    API(as)->execute(as, NULL, NULL);
    API(as)->cancel(as);
    API(as)->free(as);
    tr("reported %zu", misuse_seen - before);
}
Test(misuse, root_only_and_step_only_calls)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    SUCCESS0(as);
    ERROR(as, "X");
    API(as)->setTimeout(as, 1);
    API(as)->setCancel(as, NULL, NULL);
    API(as)->waitExternal(as);
    API(as)->breakLoop(as, NULL);
    API(as)->continueLoop(as, NULL);
    cr_assert_eq(misuse_seen, 7);
    API(as)->add(as, NULL, root_calls_on_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    API(as)->execute(as, NULL, on_unhandled);
    cr_assert_eq(misuse_seen, 8, "execute twice reported");
    run();
    assert_trace("reported 3\n");
    cr_assert_eq(misuse_seen, 11);
    /* like the reference: a finished root takes new steps and runs again */
    API(as)->add(as, "second run", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("reported 3\nsecond run\n");
    cr_assert_eq(misuse_seen, 11, "%s", misuse_last);
    API(as)->free(as);
}

/* root.add() while the root runs: reported, and InternalError in the flow */
static FutoInAsyncSteps* running_root;
static void top_add(void* d)
{
    API(running_root)->add(running_root, "ghost", name_step, NULL);
}
static void waits(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setCancel(as, NULL, NULL);
    API(as)->waitExternal(as);
    API(as)->sched_immediate(as, NULL, top_add);
}
Test(misuse, root_add_while_running)
{
    running_root = futoin_root_new(T);
    API(running_root)->add(running_root, NULL, waits, eh_info);
    API(running_root)->execute(running_root, NULL, on_unhandled);
    run();
    assert_trace("onerror InternalError: add() on a root while it runs\n"
                 "unhandled InternalError\n");
    cr_assert_eq(misuse_seen, 1);
    API(running_root)->free(running_root);
}

/* root.add() from inside the root's own step, which then returns: the
 * reference throws InternalError out of add(), so that step fails (its
 * handler sees it) and the flow does not go on. Regression: the error was
 * raised at "whatever is on top" once the step had been popped, found no
 * frame, and was dropped: the next step ran as if nothing had happened. */
static void adds_to_own_root(FutoInAsyncSteps* as, void* d,
                             const FutoInArgs* a)
{
    API(running_root)->add(running_root, "ghost", name_step, NULL);
    tr("step returns");
}
Test(misuse, root_add_from_own_step_fails_that_step)
{
    running_root = futoin_root_new(T);
    API(running_root)->add(running_root, NULL, adds_to_own_root, eh_info);
    API(running_root)->add(running_root, "next step", name_step, NULL);
    API(running_root)->execute(running_root, NULL, on_unhandled);
    run();
    assert_trace("step returns\n"
                 "onerror InternalError: add() on a root while it runs\n"
                 "unhandled InternalError\n");
    cr_assert_eq(misuse_seen, 1);
    API(running_root)->free(running_root);
}

/* The same without an error handler, from a step of a sub-step queue. */
static void adds_to_own_root_nested(FutoInAsyncSteps* as, void* d,
                                    const FutoInArgs* a)
{
    API(as)->add(as, NULL, adds_to_own_root, NULL);
}
Test(misuse, root_add_from_nested_step_fails_the_flow)
{
    running_root = futoin_root_new(T);
    API(running_root)->add(running_root, NULL, adds_to_own_root_nested, NULL);
    API(running_root)->add(running_root, "next step", name_step, NULL);
    API(running_root)->execute(running_root, NULL, on_unhandled);
    run();
    assert_trace("step returns\n"
                 "unhandled InternalError\n");
    cr_assert_eq(misuse_seen, 1);
    API(running_root)->free(running_root);
}

/* The same from outside before the flow's first step ran (it is queued,
 * nothing is on its stack): the flow ends with InternalError instead of
 * running its steps as if nothing had happened (regression: dropped). */
Test(misuse, root_add_before_first_step_fails_the_flow)
{
    running_root = futoin_root_new(T);
    API(running_root)->add(running_root, "first step", name_step, NULL);
    futoin_tool_immediate(T, top_add, NULL);
    API(running_root)->execute(running_root, NULL, on_unhandled);
    run();
    assert_trace("unhandled InternalError\n");
    cr_assert_eq(misuse_seen, 1);
    API(running_root)->free(running_root);
}

/* free() from inside the root's own step is deferred until it returns. */
static FutoInAsyncSteps* self_root;
static void on_cancel(FutoInAsyncSteps* as, void* d)
{
    tr("cancel %s", (const char*)d);
}
static void free_self(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setCancel(as, "self", on_cancel);
    API(self_root)->free(self_root);
    tr("step continues safely");
}
Test(misuse, free_during_own_step_is_deferred)
{
    self_root = futoin_root_new(T);
    API(self_root)->add(self_root, NULL, free_self, NULL);
    API(self_root)->add(self_root, "never", name_step, NULL);
    API(self_root)->execute(self_root, NULL, on_unhandled);
    run();
    assert_trace("step continues safely\ncancel self\n");
    /* the root is gone: a late call is reported, not executed */
    API(self_root)->cancel(self_root);
    cr_assert_geq(misuse_seen, 1);
}

/* futoin_tool_free refuses while roots are alive. */
Test(misuse, tool_free_with_live_root)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    cr_assert_eq(futoin_tool_free(T), FUTOIN_EBUSY);
    API(as)->free(as);
}

/* Calls a parallel() handle does not offer, made while a step runs: they
 * fail that step with InternalError (§2.1) instead of only being reported
 * while the flow carries on as if the branch had succeeded. The first one
 * wins; nothing goes to the misuse callback. */
static int par_call;
static void loop_body(FutoInAsyncSteps* as, void* d)
{
    tr("loop body must not run");
}
static void rep_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    tr("repeat body must not run");
}
static void par_misuse(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    static char mutex_mem[64];
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, "branch", name_step, NULL);
    switch (par_call) {
    case 0: SUCCESS0(p); break;
    case 1: API(p)->loop(p, NULL, loop_body, NULL); break;
    case 2: API(p)->repeat(p, NULL, 3, rep_body, NULL); break;
    case 3: cr_assert_null(API(p)->parallel(p, NULL, NULL)); break;
    case 4: API(p)->addSync(p, (FutoInSync*)mutex_mem, NULL, name_step, NULL); break;
    case 5: API(p)->add(p, NULL, NULL, NULL); break;
    }
}
Test(misuse, parallel_handle_misuse_fails_the_flow)
{
    static const char* expected[] = {
            "onerror InternalError: success() is not available on a parallel() handle\n",
            "onerror InternalError: loop() is not available on a parallel() handle\n",
            "onerror InternalError: repeat() is not available on a parallel() handle\n",
            "onerror InternalError: parallel() is not available on a parallel() handle\n",
            "onerror InternalError: addSync() is not available on a parallel() handle\n",
            "onerror InvalidRequest: parallel().add(): the execute callback is NULL\n",
    };
    static const char* unhandled[] = {"InternalError", "InternalError",
                                      "InternalError", "InternalError",
                                      "InternalError", "InvalidRequest"};
    char want[256];
    for (par_call = 0; par_call < 6; ++par_call) {
        trace_len = 0;
        trace_buf[0] = 0;
        run_one(par_misuse);
        snprintf(want, sizeof(want), "%sunhandled %s\n", expected[par_call],
                 unhandled[par_call]);
        assert_trace(want);
    }
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
}

/* Running the loop from inside a step would nest flows: refused. */
static void nested_run(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("nested run=%d", futoin_tool_run(T));
    tr("nested nowait=%d", futoin_tool_run_nowait(T));
}
Test(misuse, nested_run_refused)
{
    run_one(nested_run);
    assert_trace("nested run=-22\nnested nowait=-22\nnever\n");
}
