/* Steps and levels (§1.1), implicit success (§1.6), success values,
 * stateVariable, stack(), rootId, isValid, newInstance, sched_* slots. */
#include "common.h"

#include <futoin/sys/ext.h>
#include <stdlib.h>

TestSuite(steps, .init = fx_setup, .fini = fx_teardown);

/* ---- §1.1 levels: the spec's execution sequence ------------------------- */

static void name_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s", (const char*)d);
}
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

Test(steps, spec_1_1_levels)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInAsyncSteps* p;
    API(as)->add(as, NULL, l0_add1, NULL);
    p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, "Level 0 parallel #2", name_step, NULL);
    API(as)->add(as, "Level 0 add #3", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
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

/* ---- §1.6 implicit success ---------------------------------------------- */

static void count_args(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    int n = 0;
    while (n < 4 && a->args[n].type) {
        ++n;
    }
    tr("%s args=%d", (const char*)d, n);
}
static void give_two(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    succeed_i64(as, 2, 1, 2);
}

Test(steps, implicit_success_passes_no_values)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, give_two, NULL);
    API(as)->add(as, "a", count_args, NULL); /* implicit success */
    API(as)->add(as, "b", count_args, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("a args=2\nb args=0\n");
    API(as)->free(as);
}

/* ---- success values: four values, moved, cleaned up exactly once -------- */

static int cleanups;
static void counting_cleanup(FutoInBinaryValue* v)
{
    ++cleanups;
    free((void*)v->p);
}
static const FutoInType ty_owned = {FTN_TYPE_STRING, counting_cleanup};

static void give_four(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    for (int i = 0; i < 4; ++i) {
        char* s = malloc(8);
        snprintf(s, 8, "v%d", i);
        args.args[i].type = &ty_owned;
        args.args[i].cstr = s;
        args.args[i].length = 2;
    }
    API(as)->success(as, &args);
    /* moved: the caller's copy is reset */
    for (int i = 0; i < 4; ++i) {
        cr_assert_null(args.args[i].type);
    }
}
static void take_four(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s %s %s %s cleanups=%d", a->arg0.cstr, a->arg1.cstr, a->arg2.cstr,
       a->arg3.cstr, cleanups);
}

Test(steps, four_values_moved_and_cleaned_once)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    cleanups = 0;
    API(as)->add(as, NULL, give_four, NULL);
    API(as)->add(as, NULL, take_four, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("v0 v1 v2 v3 cleanups=0\n");
    cr_assert_eq(cleanups, 4, "values cleaned once after the consumer ran");
    API(as)->free(as);
}

/* Values nobody consumes (last step, or dropped by cancel) are cleaned. */
Test(steps, unconsumed_values_cleaned)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    cleanups = 0;
    API(as)->add(as, NULL, give_four, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    cr_assert_eq(cleanups, 4);
    API(as)->free(as);
}

/* ---- sub-step results propagate to the parent's next step (§3.2) -------- */

static void sub_res(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    succeed_i64(as, 2, a->arg0.i64, 2);
}
static void sub_one(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    succeed_i64(as, 1, 1, 0);
}
static void outer(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->add(as, NULL, sub_one, NULL);
    API(as)->add(as, NULL, sub_res, NULL);
}
static void print_two(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("externalSuccess %lld %lld", (long long)a->arg0.i64,
       (long long)a->arg1.i64);
}

Test(steps, substep_results_reach_parents_next_step)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, outer, NULL);
    API(as)->add(as, NULL, print_two, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("externalSuccess 1 2\n");
    API(as)->free(as);
}

/* ---- stateVariable ------------------------------------------------------- */

static int allocs, frees;
static void* alloc_counter(void* data)
{
    ++allocs;
    int* p = calloc(1, sizeof(int));
    *p = *(int*)data;
    return p;
}
static void free_counter(void* data, void* value)
{
    ++frees;
    free(value);
}
static void use_state(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    static int init = 10;
    int* c = API(as)->stateVariable(as, &init, "counter", alloc_counter,
                                    free_counter);
    *c += 1;
    tr("counter=%d", *c);
}

Test(steps, state_variable_allocated_once_and_cleaned)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    allocs = frees = 0;
    cr_assert_null(API(as)->stateVariable(as, NULL, "counter", NULL, NULL),
                   "no allocate: a missing variable is NULL");
    API(as)->add(as, NULL, use_state, NULL);
    API(as)->add(as, NULL, use_state, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("counter=11\ncounter=12\n");
    cr_assert_eq(allocs, 1);
    cr_assert_eq(frees, 0);
    API(as)->free(as);
    cr_assert_eq(frees, 1, "cleanup runs when the root is freed");
}

/* ---- stack(): lifetime of the step --------------------------------------- */

static void stack_cleanup(void* v)
{
    tr("cleanup %s", (const char*)v);
}
static void stack_inner(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    char* mem = API(as)->stack(as, 16, stack_cleanup);
    strcpy(mem, "inner");
    tr("inner step");
}
static void stack_outer(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    char* mem = API(as)->stack(as, 16, stack_cleanup);
    cr_assert_not_null(mem);
    cr_assert_eq(((uintptr_t)mem) % _Alignof(max_align_t), 0);
    for (int i = 0; i < 16; ++i) {
        cr_assert_eq(mem[i], 0, "stack() memory is zeroed");
    }
    strcpy(mem, "outer");
    API(as)->add(as, NULL, stack_inner, NULL);
    tr("outer step");
}

Test(steps, stack_lives_as_long_as_the_step)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, stack_outer, NULL);
    API(as)->add(as, "next", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("outer step\ninner step\ncleanup inner\ncleanup outer\nnext\n");
    API(as)->free(as);
}

static void stack_then_fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    char* mem = API(as)->stack(as, 8, stack_cleanup);
    strcpy(mem, "failed");
    ERROR(as, "Oops");
}

Test(steps, stack_freed_on_error)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, stack_then_fail, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("cleanup failed\nunhandled Oops\n");
    API(as)->free(as);
}

Test(steps, stack_on_root_lives_with_root)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    char* mem = API(as)->stack(as, 8, stack_cleanup);
    strcpy(mem, "root");
    API(as)->add(as, "step", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("step\n");
    API(as)->free(as);
    assert_trace("step\ncleanup root\n");
}

/* ---- rootId, isValid, newInstance ---------------------------------------- */

static ptrdiff_t seen_id;
static int seen_valid;
static void check_ids(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    seen_id = API(as)->rootId(as);
    seen_valid = API(as)->isValid(as);
}

Test(steps, root_id_is_valid_new_instance)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInAsyncSteps* as2 = API(as)->newInstance(as);
    cr_assert_not_null(as2);
    cr_assert_neq(API(as)->rootId(as), API(as2)->rootId(as2));
    cr_assert_eq(API(as)->isValid(as), 1);
    cr_assert_eq(futoin_async_tool(as2), T);
    API(as)->add(as, NULL, check_ids, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    cr_assert_eq(seen_id, API(as)->rootId(as), "a step reports its root id");
    cr_assert_eq(seen_valid, 1);
    API(as)->free(as);
    API(as2)->free(as2);
}

/* ---- sched_* slots and is_same_thread through the vtable --------------- */

static FutoInAsyncSteps* sched_root;
static FutoInHandle h_def;
static void sched_cb(void* d)
{
    tr("sched %s", (const char*)d);
}
/* The deferred callback is scheduled from the immediate one, so the order
 * does not depend on how long the process takes between the two. */
static void sched_imm_cb(void* d)
{
    tr("sched %s", (const char*)d);
    h_def = API(sched_root)->sched_deferred(sched_root, 5, "def", sched_cb);
    cr_assert_eq(API(sched_root)->sched_is_valid(sched_root, &h_def), 1);
}

Test(steps, sched_slots)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    sched_root = as;
    FutoInHandle h1 = API(as)->sched_immediate(as, "imm", sched_imm_cb);
    FutoInHandle h3 = API(as)->sched_immediate(as, "cancelled", sched_cb);
    FutoInHandle h4 = API(as)->sched_deferred(as, 1, "cancelled", sched_cb);
    cr_assert_eq(API(as)->sched_is_valid(as, &h1), 1);
    cr_assert_eq(API(as)->sched_is_valid(as, &h4), 1);
    API(as)->sched_cancel(as, &h3);
    API(as)->sched_cancel(as, &h4);
    cr_assert_eq(API(as)->sched_is_valid(as, &h3), 0);
    cr_assert_eq(API(as)->sched_is_valid(as, &h4), 0);
    cr_assert_eq(API(as)->is_same_thread(as), 1);
    run();
    assert_trace("sched imm\nsched def\n");
    cr_assert_eq(API(as)->sched_is_valid(as, &h1), 0);
    cr_assert_eq(API(as)->sched_is_valid(as, &h_def), 0);
    API(as)->free(as);
}

/* An empty root completes at once. */
Test(steps, empty_root)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("");
    API(as)->free(as);
}

/* Freeing a root that never ran releases its queued steps. */
Test(steps, free_unexecuted_root)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, "x", name_step, NULL);
    API(as)->parallel(as, NULL, NULL);
    API(as)->repeat(as, NULL, 3, NULL, "L");
    API(as)->free(as);
    assert_trace("");
    cr_assert_eq(misuse_seen, 1, "repeat() with a NULL body was reported");
}

/* ---- a run of level-0 steps (flow.c level0_run) ------------------------- */

/* A root's steps after the first that completed run in a loop of their own
 * while they are plain; these check that each step there is what it is on
 * the general path: values passed on, stack() memory, a stale handle of a
 * step completed in the run, a cancel or free from inside the run, a
 * release hook of the data (each once, right after its step), and more
 * steps than one turn of the flow takes (FUTOIN__FLOW_BUDGET). */

static FutoInAsyncSteps* l0_kept;
static void l0_keep(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s", (const char*)d);
    l0_kept = as;
}
static void l0_use_kept(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    size_t before = misuse_seen;
    SUCCESS0(l0_kept);
    API(l0_kept)->add(l0_kept, "ghost", name_step, NULL);
    cr_assert_eq(API(l0_kept)->isValid(l0_kept), 0);
    tr("%s reported %zu", (const char*)d, misuse_seen - before);
}
static void l0_give(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s", (const char*)d);
    succeed_i64(as, 1, 7, 0);
}
static void l0_stack_cleanup(void* v)
{
    tr("cleanup %d", *(int*)v);
}
static void l0_stack(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    int* v = API(as)->stack(as, sizeof(int), l0_stack_cleanup);
    *v = 5;
    tr("%s", (const char*)d);
}

Test(steps, level0_run_steps_as_the_general_path)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, "a", name_step, NULL);
    API(as)->add(as, "b", l0_keep, NULL);
    API(as)->add(as, "c", l0_use_kept, NULL);
    API(as)->add(as, "d", l0_give, NULL);
    API(as)->add(as, "e", count_args, NULL);
    API(as)->add(as, "f", l0_stack, NULL);
    API(as)->add(as, "g", count_args, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("a\nb\nc reported 2\nd\ne args=1\nf\ncleanup 5\n"
                 "g args=0\n");
    API(as)->free(as);
}

static void l0_cancel(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* root = d;
    tr("cancel");
    API(root)->cancel(root);
}
static void l0_free(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* root = d;
    tr("free");
    API(root)->free(root);
}

Test(steps, level0_run_cancel_and_free_from_a_step)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInAsyncSteps* other = futoin_root_new(T);
    API(as)->add(as, "a", name_step, NULL);
    API(as)->add(as, "b", name_step, NULL);
    API(as)->add(as, as, l0_cancel, NULL);
    API(as)->add(as, "not run", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    API(other)->add(other, "x", name_step, NULL);
    API(other)->add(other, "y", name_step, NULL);
    API(other)->add(other, other, l0_free, NULL);
    API(other)->add(other, "not run", name_step, NULL);
    API(other)->execute(other, NULL, on_unhandled);
    run();
    assert_trace("a\nb\ncancel\nx\ny\nfree\n");
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
    API(as)->free(as);
}

static int l0_released;
static void l0_release(void* d)
{
    ++l0_released;
    tr("release %s", (const char*)d);
}
static const futoin_step_class l0_cls = {sizeof(futoin_step_class),
                                         l0_release, NULL, {0}};
static int l0_count;
static void l0_count_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    ++l0_count;
}

Test(steps, level0_run_release_hooks_and_long_runs)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    const futoin_async_ext_table* x = futoin_async_ext(as);
    const int n = 1000; /* several turns of the flow */
    l0_released = 0;
    l0_count = 0;
    x->add(as, "a", name_step, NULL, l0_release);
    x->add(as, "b", name_step, NULL, l0_release);
    x->add_classed(as, "c", name_step, NULL, &l0_cls);
    for (int i = 0; i < n; ++i) {
        API(as)->add(as, NULL, l0_count_step, NULL);
    }
    API(as)->add(as, "end", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("a\nrelease a\nb\nrelease b\nc\nrelease c\nend\n");
    cr_assert_eq(l0_released, 3);
    cr_assert_eq(l0_count, n);
    API(as)->free(as);
}

/* A binding's steps inside the run that chain() the next ones (futoin/sys/
 * ext.h): the chained steps were given back by chain() itself, and the
 * pool they went to keeps working (many roots, each taking records). */
static void l0_chain_tr(FutoInAsyncSteps* as, void* d, const FutoInArgs* a);
static const FutoInAsyncSteps_execute_callback l0_chain_fns[] = {l0_chain_tr};
static void l0_chain_release(void* d)
{
    (void)d;
    ++l0_released;
}
static const futoin_step_class l0_chain_cls = {sizeof(futoin_step_class),
                                               l0_chain_release, NULL, {0}};
static void l0_chain_tr(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const futoin_async_ext_table* x = futoin_async_ext(as);
    do {
        ++l0_count;
    } while ((as = x->chain(as, l0_chain_fns, 1, &d)) != NULL);
}

Test(steps, level0_run_chained_steps)
{
    const int roots = 40, steps = 64;
    l0_count = 0;
    l0_released = 0;
    for (int k = 0; k < roots; ++k) {
        FutoInAsyncSteps* as = futoin_root_new(T);
        const futoin_async_ext_table* x = futoin_async_ext(as);
        API(as)->add(as, NULL, l0_count_step, NULL);
        API(as)->add(as, NULL, l0_count_step, NULL);
        for (int i = 0; i < steps; ++i) {
            x->add_classed(as, NULL, l0_chain_tr, NULL, &l0_chain_cls);
        }
        API(as)->add(as, NULL, l0_count_step, NULL);
        API(as)->execute(as, NULL, on_unhandled);
        run();
        API(as)->free(as);
    }
    cr_assert_eq(l0_count, roots * (steps + 3));
    cr_assert_eq(l0_released, roots * steps);
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
}

/* ---- a root's level-0 queue ----------------------------------------------
 * A flow keeps no tail: a root's queue grows only while it is not running,
 * through the tool's append cursor (root.c root_append), which names the
 * root added to last. These fill roots in turn, refill them after a run,
 * a cancel or an unhandled error, and check that every step lands at the
 * end of its own root's queue. */

static void l0_run(FutoInAsyncSteps* as)
{
    API(as)->execute(as, NULL, on_unhandled);
    run();
}

Test(steps, roots_filled_in_turn_keep_each_its_order)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    FutoInAsyncSteps* b = futoin_root_new(T);
    API(a)->add(a, "a1", name_step, NULL);
    API(b)->add(b, "b1", name_step, NULL);
    API(a)->add(a, "a2", name_step, NULL);
    API(a)->add(a, "a3", name_step, NULL);
    API(b)->add(b, "b2", name_step, NULL);
    API(a)->add(a, "a4", name_step, NULL);
    API(b)->add(b, "b3", name_step, NULL);
    l0_run(b);
    l0_run(a);
    assert_trace("b1\nb2\nb3\na1\na2\na3\na4\n");
    API(a)->free(a);
    API(b)->free(b);
}

/* The cursor still names a root whose queue a run emptied: its next steps
 * start a new queue, and a root filled meanwhile keeps its own. */
Test(steps, a_root_refilled_after_its_run_runs_only_its_new_steps)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    FutoInAsyncSteps* b = futoin_root_new(T);
    API(a)->add(a, "a1", name_step, NULL);
    API(a)->add(a, "a2", name_step, NULL);
    l0_run(a);
    API(a)->add(a, "a3", name_step, NULL);
    API(b)->add(b, "b1", name_step, NULL);
    API(a)->add(a, "a4", name_step, NULL);
    l0_run(a);
    l0_run(b);
    assert_trace("a1\na2\na3\na4\nb1\n");
    API(a)->free(a);
    API(b)->free(b);
}

static void l0_fails(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("fails");
    API(as)->handle_error(as, "Failed", NULL);
}

/* An unhandled error drops the steps the flow did not run; what the root's
 * unhandled callback adds runs when it executes the root again. */
static void l0_refill(FutoInAsyncSteps* as, void* data, const char* code)
{
    tr("unhandled %s", code);
    API(as)->add(as, "again 1", name_step, NULL);
    API(as)->add(as, "again 2", name_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
}

Test(steps, steps_added_by_the_unhandled_callback_run_alone)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    API(a)->add(a, NULL, l0_fails, NULL);
    API(a)->add(a, "dropped", name_step, NULL);
    API(a)->execute(a, NULL, l0_refill);
    run();
    assert_trace("fails\nunhandled Failed\nagain 1\nagain 2\n");
    API(a)->free(a);
}

static void l0_noop_cancel(FutoInAsyncSteps* as, void* d)
{
    tr("cancelled");
}
static void l0_waits(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("waits");
    API(as)->setCancel(as, NULL, l0_noop_cancel);
}

/* A cancel drops the steps the flow did not run; steps added after it run
 * alone. */
Test(steps, a_root_refilled_after_a_cancel_runs_only_its_new_steps)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    FutoInAsyncSteps* b = futoin_root_new(T);
    API(a)->add(a, NULL, l0_waits, NULL);
    API(a)->add(a, "dropped 1", name_step, NULL);
    API(a)->add(a, "dropped 2", name_step, NULL);
    API(a)->execute(a, NULL, on_unhandled);
    futoin_tool_run_nowait(T); /* a waits: run() would not return */
    API(a)->cancel(a);
    run();
    API(b)->add(b, "b1", name_step, NULL);
    API(a)->add(a, "a1", name_step, NULL);
    API(a)->add(a, "a2", name_step, NULL);
    l0_run(a);
    l0_run(b);
    assert_trace("waits\ncancelled\na1\na2\nb1\n");
    API(a)->free(a);
    API(b)->free(b);
}
