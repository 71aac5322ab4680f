/* Trace context (futoin/trace.h): a W3C traceparent set on a root or in a
 * step is seen by the steps after it; every step has a span id of its own
 * under the span of the frame it runs in (its enclosing step, the
 * parallel() step of its branch, the loop of its iteration, the flow's
 * parent span at level 0); newInstance() continues the trace under the
 * span of the step that calls it; a bad value is refused with the
 * context left as it was; clearing ends tracing. */
#include "common.h"

#include <futoin/sys/ext.h>
#include <futoin/trace.h>

#include <stdlib.h>

TestSuite(trace, .init = fx_setup, .fini = fx_teardown);

#define TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
#define TRACE_ID "4bf92f3577b34da6a3ce929d0e0e4736"
#define PARENT_ID "00f067aa0ba902b7"
#define TP2 "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"

#define assert_no_misuse()                                                     \
    cr_assert_eq(misuse_seen, 0, "misuse reported: %s", misuse_last)

/* What each step saw, by the order the steps ran in. */
typedef struct seen
{
    const char* name;
    int rc;
    futoin_trace_info info;
} seen;
static seen S[64];
static size_t nseen;

static seen* look(FutoInAsyncSteps* as, const char* name)
{
    seen* s = &S[nseen++];
    s->name = name;
    s->info = (futoin_trace_info)FUTOIN_TRACE_INFO_INIT;
    s->rc = futoin_trace_get(as, &s->info);
    return s;
}

static const seen* find(const char* name)
{
    for (size_t i = 0; i < nseen; ++i) {
        if (strcmp(S[i].name, name) == 0) {
            return &S[i];
        }
    }
    cr_assert_fail("no step %s seen", name);
    return NULL;
}

/* A step that records what it sees and passes on. */
static void see(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    look(as, (const char*)d);
}

static void set_tp(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    cr_assert_eq(futoin_trace_set(as, (const char*)d), FUTOIN_OK);
    look(as, d ? "setter" : "clearer");
}

static void run_root(FutoInAsyncSteps* as)
{
    API(as)->execute(as, NULL, on_unhandled);
    run();
    API(as)->free(as);
}

static void assert_traced(const seen* s, const char* trace_id,
                          const char* parent)
{
    cr_assert_eq(s->rc, 1, "%s: no context", s->name);
    cr_assert_str_eq(s->info.trace_id, trace_id, "%s", s->name);
    cr_assert_eq(strlen(s->info.span_id), 16, "%s", s->name);
    cr_assert_str_neq(s->info.span_id, "0000000000000000", "%s", s->name);
    cr_assert_str_eq(s->info.parent_span_id, parent, "%s: parent", s->name);
}

/* A root of T whose context is TP. */
static FutoInAsyncSteps* traced_root(void)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    cr_assert_eq(futoin_trace_set(as, TP), FUTOIN_OK);
    return as;
}

static void assert_distinct_spans(void)
{
    for (size_t i = 0; i < nseen; ++i) {
        for (size_t j = i + 1; j < nseen; ++j) {
            /* a root's own handle shows the span it continues */
            if (S[i].rc == 1 && S[j].rc == 1 && !strstr(S[i].name, "-root")
                && !strstr(S[j].name, "-root")) {
                cr_assert_str_neq(S[i].info.span_id, S[j].info.span_id,
                                  "%s and %s share a span", S[i].name,
                                  S[j].name);
            }
        }
    }
}

/* ---- bad input ------------------------------------------------------------ */

static const char* const bad[] = {
        "",
        "00",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",    /* short */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", /* 00 + more */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-011",  /* 00, long */
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   /* separator */
        "00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   /* version ff */
        "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",   /* upper case */
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",   /* zero trace */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",   /* zero parent */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bz-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",  /* v1, no '-' */
};

Test(trace, check_accepts_valid_values_and_names_what_is_wrong)
{
    cr_assert_null(futoin_trace_check(TP));
    cr_assert_null(futoin_trace_check(TP2));
    /* a later version may carry more fields after a '-' */
    cr_assert_null(futoin_trace_check(
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-not"));
    cr_assert_null(futoin_trace_check(
            "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
    cr_assert_not_null(futoin_trace_check(NULL));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        const char* why = futoin_trace_check(bad[i]);
        cr_assert_not_null(why, "accepted %s", bad[i]);
        cr_assert(strstr(why, "traceparent") != NULL, "%s: %s", bad[i], why);
    }
    cr_assert(strstr(futoin_trace_check(bad[12]), "trace id is all zero"));
    cr_assert(strstr(futoin_trace_check(bad[13]), "parent id is all zero"));
    cr_assert(strstr(futoin_trace_check(bad[8]), "version ff"));
    cr_assert(strstr(futoin_trace_check(bad[10]), "trace id"));
}

static void set_bad(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        cr_assert_eq(futoin_trace_set(as, bad[i]), FUTOIN_EINVAL, "%s", bad[i]);
    }
    look(as, "after-bad");
}

Test(trace, a_bad_value_is_refused_and_leaves_the_context_as_it_was)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    futoin_trace_info info = FUTOIN_TRACE_INFO_INIT;
    /* none yet: refused values do not make one */
    API(as)->add(as, NULL, set_bad, NULL);
    API(as)->add(as, TP, set_tp, NULL);
    API(as)->add(as, NULL, set_bad, NULL);
    cr_assert_eq(futoin_trace_get(as, &info), 0);
    cr_assert_str_eq(info.trace_id, "");
    cr_assert_str_eq(info.traceparent, "");
    run_root(as);
    cr_assert_eq(S[0].rc, 0, "a refused value set a context");
    assert_traced(&S[2], TRACE_ID, PARENT_ID);
    assert_no_misuse(); /* a bad value is data, not misuse */
}

Test(trace, misuse_is_refused_and_reported)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    futoin_trace_info info = FUTOIN_TRACE_INFO_INIT;
    futoin_trace_info small = FUTOIN_TRACE_INFO_INIT;
    static const FutoInAsyncStepsAPI other;
    FutoInAsyncSteps foreign = {&other};
    small.size = 8;
    cr_assert_eq(futoin_trace_get(as, NULL), FUTOIN_EINVAL);
    cr_assert_eq(futoin_trace_get(as, &small), FUTOIN_EINVAL);
    cr_assert_eq(small.size, 8, "a too small struct was written");
    /* a foreign implementation's handle: refused, never read */
    cr_assert_eq(futoin_trace_set(&foreign, TP), FUTOIN_EINVAL);
    cr_assert_eq(futoin_trace_get(&foreign, &info), FUTOIN_EINVAL);
    assert_no_misuse();
    /* NULL: no tool to tell (printed on stderr) */
    cr_assert_eq(futoin_trace_set(NULL, TP), FUTOIN_EINVAL);
    cr_assert_eq(futoin_trace_get(NULL, &info), FUTOIN_EINVAL);
    API(as)->free(as);
    /* a freed root: a stale handle */
    cr_assert_eq(futoin_trace_set(as, TP), FUTOIN_EINVAL);
    cr_assert_eq(misuse_seen, 1);
    cr_assert(strstr(misuse_last, "stale") != NULL, "%s", misuse_last);
}

/* ---- propagation ---------------------------------------------------------- */

static void nest(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    look(as, "outer");
    API(as)->add(as, "inner1", see, NULL);
    API(as)->add(as, "inner2", see, NULL);
}

Test(trace, set_on_the_root_every_step_is_a_span_under_its_frame)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    futoin_trace_info info = FUTOIN_TRACE_INFO_INIT;
    cr_assert_eq(futoin_trace_set(as, TP), FUTOIN_OK);
    cr_assert_eq(futoin_trace_get(as, &info), 1);
    /* through the root's own handle: the flow's parent span */
    cr_assert_str_eq(info.span_id, PARENT_ID);
    cr_assert_str_eq(info.parent_span_id, "");
    cr_assert_str_eq(info.traceparent, TP);
    cr_assert_eq(info.flags, 1);
    API(as)->add(as, "first", see, NULL);
    API(as)->add(as, NULL, nest, NULL);
    API(as)->add(as, "last", see, NULL);
    run_root(as);
    cr_assert_eq(nseen, 5);
    assert_traced(find("first"), TRACE_ID, PARENT_ID);
    assert_traced(find("outer"), TRACE_ID, PARENT_ID);
    assert_traced(find("inner1"), TRACE_ID, find("outer")->info.span_id);
    assert_traced(find("inner2"), TRACE_ID, find("outer")->info.span_id);
    assert_traced(find("last"), TRACE_ID, PARENT_ID);
    assert_distinct_spans();
    /* what a step sends on names its own span */
    char want[FUTOIN_TRACEPARENT_LEN + 1];
    snprintf(want, sizeof(want), "00-%s-%s-01", TRACE_ID,
             find("inner1")->info.span_id);
    cr_assert_str_eq(find("inner1")->info.traceparent, want);
    assert_no_misuse();
}

static void see_twice(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    look(as, "before");
    cr_assert_eq(futoin_trace_set(as, TP), FUTOIN_OK);
    look(as, "setter");
    look(as, "setter-again");
}

Test(trace, set_in_a_step_is_seen_by_that_step_and_the_next_ones)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, "untraced", see, NULL);
    API(as)->add(as, NULL, see_twice, NULL);
    API(as)->add(as, "next", see, NULL);
    run_root(as);
    cr_assert_eq(find("untraced")->rc, 0);
    cr_assert_eq(find("before")->rc, 0);
    assert_traced(find("setter"), TRACE_ID, PARENT_ID);
    /* a step's span id is the same each time it asks */
    cr_assert_str_eq(find("setter")->info.span_id,
                     find("setter-again")->info.span_id);
    assert_traced(find("next"), TRACE_ID, PARENT_ID);
    cr_assert_str_neq(find("setter")->info.span_id, find("next")->info.span_id);
    assert_no_misuse();
}

static void par(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* p;
    look(as, "holder");
    p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, NULL, nest, NULL);
    API(p)->add(p, "branch2", see, NULL);
    API(p)->add(p, "branch3", see, NULL);
}

static void par_probe(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    /* the parallel() step itself: read through a sub-step's frame below */
    look(as, (const char*)d);
}

Test(trace, parallel_branches_each_get_spans_under_the_step_that_forked)
{
    FutoInAsyncSteps* as = traced_root();
    API(as)->add(as, NULL, par, NULL);
    API(as)->add(as, "after", par_probe, NULL);
    run_root(as);
    const seen* holder = find("holder");
    const seen* outer = find("outer");
    const seen* b2 = find("branch2");
    const seen* b3 = find("branch3");
    assert_traced(holder, TRACE_ID, PARENT_ID);
    /* the three branches run under the step that called parallel(): the
     * parallel() frame is the engine's, not a span (hooks do not show it) */
    assert_traced(outer, TRACE_ID, holder->info.span_id);
    assert_traced(b2, TRACE_ID, holder->info.span_id);
    assert_traced(b3, TRACE_ID, holder->info.span_id);
    assert_traced(find("inner1"), TRACE_ID, outer->info.span_id);
    assert_traced(find("inner2"), TRACE_ID, outer->info.span_id);
    assert_traced(find("after"), TRACE_ID, PARENT_ID);
    assert_distinct_spans();
    cr_assert_eq(nseen, 7);
    assert_no_misuse();
}

/* Through a parallel() handle: the span parallel() runs in. */
static FutoInAsyncSteps* par_handle;
static void par_look(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    look(par_handle, "parallel");
    look(as, "branch");
}
static void par2(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    look(as, "holder");
    par_handle = API(as)->parallel(as, NULL, NULL);
    API(par_handle)->add(par_handle, NULL, par_look, NULL);
}

Test(trace, a_parallel_handle_shows_the_span_parallel_runs_in)
{
    FutoInAsyncSteps* as = traced_root();
    API(as)->add(as, NULL, par2, NULL);
    run_root(as);
    assert_traced(find("parallel"), TRACE_ID, PARENT_ID);
    cr_assert_str_eq(find("parallel")->info.span_id, find("holder")->info.span_id);
    assert_traced(find("branch"), TRACE_ID, find("holder")->info.span_id);
    assert_no_misuse();
}

/* ---- loops ---------------------------------------------------------------- */

static char iter_names[8][8];
static void body(FutoInAsyncSteps* as, void* d, size_t i)
{
    if (i == 1 && d) {
        cr_assert_eq(futoin_trace_set(as, TP), FUTOIN_OK);
    }
    snprintf(iter_names[i], sizeof(iter_names[i]), "iter%zu", i);
    look(as, iter_names[i]);
}
static void looper(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    look(as, "holder");
    API(as)->repeat(as, d, 5, body, NULL);
}

/* Iterations `from` to 4 of looper's repeat() are traced under `parent`,
 * and no two steps share a span. */
static void assert_iterations_traced(int from, const char* parent)
{
    for (int i = from; i < 5; ++i) {
        char n[8];
        snprintf(n, sizeof(n), "iter%d", i);
        assert_traced(find(n), TRACE_ID, parent);
    }
    assert_distinct_spans();
}

Test(trace, every_loop_iteration_is_a_span_of_its_own)
{
    FutoInAsyncSteps* as = traced_root();
    API(as)->add(as, NULL, looper, NULL);
    run_root(as);
    /* all under the step that called repeat() (the loop frame is the
     * engine's, not a span) */
    assert_iterations_traced(0, find("holder")->info.span_id);
    assert_no_misuse();
}

Test(trace, a_context_set_inside_a_burst_of_iterations_still_splits_spans)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, "set-in-iteration-1", looper, NULL);
    run_root(as);
    cr_assert_eq(find("iter0")->rc, 0);
    assert_iterations_traced(1, find("iter1")->info.parent_span_id);
    assert_no_misuse();
}

/* ---- newInstance ---------------------------------------------------------- */

static FutoInAsyncSteps* child;
static void start_child(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    look(as, "starter");
    child = API(as)->newInstance(as);
    cr_assert_not_null(child);
    look(child, "child-root");
    API(child)->add(child, "child-step", see, NULL);
    API(child)->add(child, NULL, nest, NULL);
    API(child)->execute(child, NULL, on_unhandled);
}

Test(trace, new_instance_continues_the_trace_under_the_starting_step)
{
    FutoInAsyncSteps* as = traced_root();
    API(as)->add(as, NULL, start_child, NULL);
    run_root(as);
    API(child)->free(child);
    const seen* starter = find("starter");
    assert_traced(starter, TRACE_ID, PARENT_ID);
    /* the new root continues the starter's span */
    cr_assert_eq(find("child-root")->rc, 1);
    cr_assert_str_eq(find("child-root")->info.trace_id, TRACE_ID);
    cr_assert_str_eq(find("child-root")->info.span_id, starter->info.span_id);
    assert_traced(find("child-step"), TRACE_ID, starter->info.span_id);
    assert_traced(find("outer"), TRACE_ID, starter->info.span_id);
    assert_traced(find("inner1"), TRACE_ID, find("outer")->info.span_id);
    assert_distinct_spans();
    assert_no_misuse();
}

Test(trace, new_instance_of_an_untraced_root_is_untraced)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, start_child, NULL);
    run_root(as);
    API(child)->free(child);
    cr_assert_eq(find("child-root")->rc, 0);
    cr_assert_eq(find("child-step")->rc, 0);
    assert_no_misuse();
}

Test(trace, new_instance_through_the_root_handle_keeps_the_parent_span)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    futoin_trace_info info = FUTOIN_TRACE_INFO_INIT;
    cr_assert_eq(futoin_trace_set(as, TP), FUTOIN_OK);
    FutoInAsyncSteps* n = API(as)->newInstance(as);
    cr_assert_eq(futoin_trace_get(n, &info), 1);
    cr_assert_str_eq(info.traceparent, TP);
    API(n)->free(n);
    API(as)->free(as);
}

/* ---- replacing and clearing ----------------------------------------------- */

static void replace(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    look(as, "old");
    cr_assert_eq(futoin_trace_set(as, TP2), FUTOIN_OK);
    look(as, "new");
}

Test(trace, a_new_context_replaces_the_old_and_span_ids_stay)
{
    FutoInAsyncSteps* as = traced_root();
    API(as)->add(as, NULL, replace, NULL);
    API(as)->add(as, "next", see, NULL);
    run_root(as);
    assert_traced(find("old"), TRACE_ID, PARENT_ID);
    assert_traced(find("new"), "0af7651916cd43dd8448eb211c80319c",
                  "b7ad6b7169203331");
    cr_assert_str_eq(find("old")->info.span_id, find("new")->info.span_id);
    cr_assert_eq(find("new")->info.flags, 0);
    assert_traced(find("next"), "0af7651916cd43dd8448eb211c80319c",
                  "b7ad6b7169203331");
    assert_no_misuse();
}

Test(trace, a_cleared_context_is_gone_for_the_rest_of_the_flow)
{
    FutoInAsyncSteps* as = traced_root();
    API(as)->add(as, "traced", see, NULL);
    API(as)->add(as, NULL, set_tp, NULL); /* NULL: clear */
    API(as)->add(as, "untraced", see, NULL);
    API(as)->add(as, NULL, start_child, NULL);
    run_root(as);
    API(child)->free(child);
    assert_traced(find("traced"), TRACE_ID, PARENT_ID);
    cr_assert_eq(find("clearer")->rc, 0);
    cr_assert_eq(find("untraced")->rc, 0);
    cr_assert_str_eq(find("untraced")->info.span_id, "");
    cr_assert_eq(find("child-step")->rc, 0);
    assert_no_misuse();
}

/* A waiting step keeps its span until it is completed from outside. */
static FutoInAsyncSteps* waiting;
static void wait_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    look(as, "wait-enter");
    waiting = as;
    API(as)->waitExternal(as);
}
static void complete_later(void* d)
{
    look(waiting, "wait-complete");
    API(waiting)->success(waiting, NULL);
}

Test(trace, a_waiting_step_keeps_its_span)
{
    FutoInAsyncSteps* as = traced_root();
    API(as)->add(as, NULL, wait_step, NULL);
    API(as)->add(as, "after", see, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    futoin_tool_immediate(T, complete_later, NULL);
    run();
    API(as)->free(as);
    cr_assert_str_eq(find("wait-enter")->info.span_id,
                     find("wait-complete")->info.span_id);
    assert_traced(find("after"), TRACE_ID, PARENT_ID);
    for (size_t i = 0; i < nseen; ++i) {
        cr_assert_eq(S[i].rc, 1);
    }
    assert_no_misuse();
}

/* ---- the extension table -------------------------------------------------- */

Test(trace, ext_table_version_7_reaches_the_same_context)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    const futoin_async_ext_table* x = futoin_async_ext(as);
    futoin_trace_info info = FUTOIN_TRACE_INFO_INIT;
    cr_assert_geq(x->version, FUTOIN_EXT_VERSION_7);
    cr_assert_geq(x->size, offsetof(futoin_async_ext_table, trace_get) + sizeof(void*));
    cr_assert_eq(x->trace_set(as, "nope"), FUTOIN_EINVAL);
    cr_assert_eq(x->trace_set(as, TP), FUTOIN_OK);
    cr_assert_eq(futoin_trace_get(as, &info), 1);
    cr_assert_str_eq(info.traceparent, TP);
    info = (futoin_trace_info)FUTOIN_TRACE_INFO_INIT;
    cr_assert_eq(x->trace_get(as, &info), 1);
    cr_assert_str_eq(info.trace_id, TRACE_ID);
    cr_assert_eq(x->trace_set(as, NULL), FUTOIN_OK);
    cr_assert_eq(x->trace_get(as, &info), 0);
    API(as)->free(as);
    assert_no_misuse();
}

/* ---- the example exporter (tests/trace_export, over the hooks) --------- */

#include "trace_export/futoin_trace_jsonl.h"

static void failing(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    ERROR(as, "SomeError");
}
static void recover(FutoInAsyncSteps* as, void* d, const char* code)
{
    SUCCESS0(as);
}
static void outer_fails(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    look(as, "outer");
    API(as)->add(as, NULL, failing, NULL);
}

Test(trace, the_example_exporter_writes_a_span_per_step_with_its_status)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    char* text = NULL;
    size_t len = 0;
    FILE* out = open_memstream(&text, &len);
    futoin_trace_jsonl* x = futoin_trace_jsonl_start(T, out);
    cr_assert_not_null(x);
    API(as)->add(as, "untraced", see, NULL); /* before the context: no span */
    API(as)->add(as, TP, set_tp, NULL);
    API(as)->add(as, NULL, outer_fails, recover);
    run_root(as);
    cr_assert_eq(futoin_trace_jsonl_stop(x), 3, "%s", text);
    fclose(out);
    char want[512];
    /* innermost first, as they ended: the failing step, its parent, ... */
    const char* l1 = text;
    const char* l2 = strchr(l1, '\n') + 1;
    const char* l3 = strchr(l2, '\n') + 1;
    snprintf(want, sizeof(want),
             "{\"trace_id\":\"" TRACE_ID "\",\"span_id\":\"%.16s\",\"parent_span_id\":\"" PARENT_ID "\",\"name\":\"set_tp\"",
             find("setter")->info.span_id);
    cr_assert(strncmp(l1, want, strlen(want)) == 0, "%s\nwanted %s", text, want);
    cr_assert(strstr(l1, "\"status\":\"ok\"}\n") != NULL, "%s", text);
    snprintf(want, sizeof(want), "\"parent_span_id\":\"%s\",\"name\":\"failing\"",
             find("outer")->info.span_id);
    cr_assert(strstr(l2, want) != NULL && strstr(l2, "\"status\":\"error:SomeError\"}") != NULL,
              "%s", text);
    cr_assert(strstr(l2, "\"origin\":{\"language\":\"c\",\"function\":\"failing\"") != NULL,
              "%s", text);
    snprintf(want, sizeof(want), "\"span_id\":\"%s\",\"parent_span_id\":\"" PARENT_ID "\",\"name\":\"outer_fails\"",
             find("outer")->info.span_id);
    cr_assert(strstr(l3, want) != NULL, "%s", text);
    cr_assert(strstr(l3, ",\"start\":") != NULL && strstr(l3, ",\"end\":") != NULL, "%s", text);
    free(text);
    assert_no_misuse();
}
