/* The wrap/binary adapter layer (futoin/sys/wrap.h): the same scenarios
 * through futoin_wrap_* over OUR engine and over the deliberately foreign
 * 25-slot implementation (tests/foreign/), with identical traces, and every
 * callback's data released exactly once on both. */
#include "common.h"

#include <futoin/sys/wrap.h>

#include "foreign/foreign_as.h"

TestSuite(wrap, .init = fx_setup, .fini = fx_teardown);

/* ---- two back ends --------------------------------------------------------*/

typedef struct backend
{
    const char* name;
    FutoInAsyncSteps* (*root_new)(void);
    void (*run)(void);
    foreign_loop* loop;
} backend;

static foreign_loop* floop;
static FutoInAsyncSteps* ours_root(void)
{
    return futoin_root_new(T);
}
static void ours_run(void)
{
    futoin_tool_run(T);
}
static FutoInAsyncSteps* foreign_root(void)
{
    return foreign_root_new(floop);
}
static void foreign_run_all(void)
{
    foreign_run(floop);
}

/* ---- release accounting ---------------------------------------------------*/

#define NDATA 32
static int released[NDATA];
static void rel(void* d)
{
    ++released[(intptr_t)d];
}
static void expect_released_once(int from, int to)
{
    for (int i = from; i <= to; ++i) {
        cr_assert_eq(released[i], 1, "data %d released %d times", i,
                     released[i]);
    }
}

/* ---- the scenario ---------------------------------------------------------*/

static void on_cancel(FutoInAsyncSteps* as, void* d)
{
    tr("cancel %d", (int)(intptr_t)d);
}
static void leaf(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("leaf %d", (int)(intptr_t)d);
}
static void fails(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("fails %d", (int)(intptr_t)d);
    futoin_wrap_set_cancel(as, (void*)12, on_cancel, rel);
    API(as)->handle_error(as, "WrapError", "from the wrapped step");
}
static void recover(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("recover %s info=%s", code, futoin_wrap_error_info(as));
    FutoInArgs v;
    memset(&v, 0, sizeof(v));
    set_i64(&v, 0, 5);
    API(as)->success(as, &v);
}
static void body(FutoInAsyncSteps* as, void* d, size_t i)
{
    tr("iteration %zu", i);
    if (i == 1) {
        API(as)->breakLoop(as, NULL);
    }
}
static void print_value(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("value %lld", a->arg0.type ? (long long)a->arg0.i64 : -1LL);
}
static void outer(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs v;
    tr("outer");
    futoin_wrap_add(as, (void*)2, leaf, NULL, rel);
    FutoInAsyncSteps* p = futoin_wrap_parallel(as, (void*)3, NULL, rel);
    futoin_wrap_add(p, (void*)4, leaf, NULL, rel);
    futoin_wrap_add(p, (void*)5, leaf, NULL, rel);
    futoin_wrap_add(as, (void*)6, fails, recover, rel);
    futoin_wrap_add(as, (void*)7, print_value, NULL, rel);
    futoin_wrap_repeat(as, (void*)8, 5, body, NULL, rel);
    memset(&v, 0, sizeof(v));
    set_i64(&v, 0, 77);
    futoin_wrap_success_step(as, &v);
    cr_assert_null(v.arg0.type, "successStep moved the value");
    futoin_wrap_add(as, (void*)9, print_value, NULL, rel);
}

static void run_scenario(FutoInAsyncSteps* (*root_new)(void), void (*run_fn)(void))
{
    FutoInAsyncSteps* as = root_new();
    memset(released, 0, sizeof(released));
    futoin_wrap_add(as, (void*)1, outer, NULL, rel);
    futoin_wrap_execute(as, (void*)10, on_unhandled, rel);
    run_fn();
    tr("released before free: %d %d %d %d %d %d %d %d %d", released[1],
       released[2], released[3], released[4], released[5], released[6],
       released[7], released[8], released[9]);
    API(as)->free(as);
    expect_released_once(1, 10);
    expect_released_once(12, 12);
}

static const char* expected =
        "outer\nleaf 2\nleaf 4\nleaf 5\nfails 6\ncancel 12\n"
        "recover WrapError info=from the wrapped step\nvalue 5\n"
        "iteration 0\niteration 1\nvalue 77\n";

Test(wrap, ours)
{
    FutoInAsyncSteps* probe = futoin_root_new(T);
    cr_assert_eq(futoin_wrap_is_ours(probe), 1);
    API(probe)->free(probe);
    run_scenario(ours_root, ours_run);
    /* ours: each datum is released as soon as its step is done */
    char want[1024];
    snprintf(want, sizeof(want), "%sreleased before free: 1 1 1 1 1 1 1 1 1\n",
             expected);
    assert_trace(want);
}

Test(wrap, foreign)
{
    floop = foreign_loop_new();
    FutoInAsyncSteps* probe = foreign_root_new(floop);
    cr_assert_eq(futoin_wrap_is_ours(probe), 0);
    API(probe)->free(probe);
    run_scenario(foreign_root, foreign_run_all);
    /* foreign: data is anchored to the step that added it, so it is
     * released when that step's frame goes; data 1 was added on the root
     * before execute(), so it is anchored to the root and released when
     * the root is freed (checked by run_scenario) */
    char want[1024];
    snprintf(want, sizeof(want), "%sreleased before free: 0 1 1 1 1 1 1 1 1\n",
             expected);
    assert_trace(want);
    cr_assert_eq(foreign_live_roots(floop), 0);
    foreign_loop_free(floop);
}

/* A refused call releases at once on both back ends. */
static void refuses(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->success(as, NULL);
    futoin_wrap_add(as, (void*)20, leaf, NULL, rel);
    tr("refused released=%d", released[20]);
}

Test(wrap, refused_call_releases_ours)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    memset(released, 0, sizeof(released));
    futoin_wrap_add(as, NULL, refuses, NULL, NULL);
    futoin_wrap_execute(as, NULL, on_unhandled, NULL);
    run();
    API(as)->free(as);
    assert_trace("refused released=1\nunhandled InternalError\n");
}

/* Cancel of a waiting foreign flow releases everything anchored in it. */
static void waits(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    futoin_wrap_set_cancel(as, (void*)21, on_cancel, rel);
    API(as)->waitExternal(as);
}
static void waits_outer(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    futoin_wrap_add(as, (void*)23, waits, NULL, rel);
}

static void cancel_scenario(FutoInAsyncSteps* as, void (*run_fn)(void))
{
    memset(released, 0, sizeof(released));
    futoin_wrap_add(as, (void*)24, waits_outer, NULL, rel);
    API(as)->execute(as, NULL, on_unhandled);
    run_fn();
    API(as)->cancel(as);
    API(as)->free(as);
    for (int i = 21; i <= 24; i += (i == 21 ? 2 : 1)) {
        cr_assert_eq(released[i], 1, "data %d released %d times", i,
                     released[i]);
    }
}

static void ours_nowait(void)
{
    futoin_tool_run_nowait(T);
}

Test(wrap, cancel_releases_ours)
{
    cancel_scenario(futoin_root_new(T), ours_nowait);
    assert_trace("cancel 21\n");
}

Test(wrap, cancel_releases_foreign)
{
    floop = foreign_loop_new();
    cancel_scenario(foreign_root_new(floop), foreign_run_all);
    assert_trace("cancel 21\n");
    foreign_loop_free(floop);
}
