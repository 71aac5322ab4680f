/* Scale: a million sequential steps and 100,000 nested levels run without
 * growing the C stack; 100,000 flows wait at once. The C stack limit of the
 * test process is irrelevant here because execution is iterative; the
 * tests would crash with recursion long before these counts. */
#include "common.h"

#include <sys/resource.h>

TestSuite(scale, .init = fx_setup, .fini = fx_teardown);

static size_t count;
static void tick(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    ++count;
}

Test(scale, million_sequential_steps)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    count = 0;
    for (int i = 0; i < 1000000; ++i) {
        API(as)->add(as, NULL, tick, NULL);
    }
    API(as)->execute(as, NULL, on_unhandled);
    run();
    cr_assert_eq(count, 1000000);
    API(as)->free(as);
}

/* Each level adds the next one: 100,000 frames deep, then unwinds. */
static size_t depth;
static void nest(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    if (++depth < 100000) {
        API(as)->add(as, NULL, nest, NULL);
    } else {
        succeed_i64(as, 1, (int64_t)depth, 0);
    }
}
static void deepest_value(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("value %lld", (long long)a->arg0.i64);
}

Test(scale, hundred_thousand_nested_levels)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    depth = 0;
    API(as)->add(as, NULL, nest, NULL);
    API(as)->add(as, NULL, deepest_value, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("value 100000\n");
    API(as)->free(as);
}

/* The same depth unwinding an error through every level's handler. */
static size_t handled;
static void nest_fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a);
static void count_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    ++handled;
}
static void nest_fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    if (++depth < 100000) {
        API(as)->add(as, NULL, nest_fail, count_eh);
    } else {
        ERROR(as, "Deep");
    }
}

Test(scale, error_unwinds_hundred_thousand_levels)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    depth = handled = 0;
    API(as)->add(as, NULL, nest_fail, count_eh);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    cr_assert_eq(handled, 100000);
    assert_trace("unhandled Deep\n");
    API(as)->free(as);
}

/* 100,000 flows wait at once, then a controller wakes them all. */
#define NFLOWS 100000
static FutoInAsyncSteps* roots[NFLOWS];
static void wake_all(void* d);
static FutoInAsyncSteps* waiters[NFLOWS];
static size_t nwaiting, ndone;
static void wait_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    waiters[(size_t)d] = as;
    API(as)->waitExternal(as);
    if (++nwaiting == NFLOWS) {
        API(as)->sched_immediate(as, NULL, wake_all);
    }
}
static void consume(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    if (a->arg0.i64 == 1) {
        ++ndone;
    }
}
static void wake_all(void* d);
static void wake_all_impl(void* d)
{
    cr_assert_eq(nwaiting, NFLOWS, "all flows wait at once");
    for (size_t i = 0; i < NFLOWS; ++i) {
        succeed_i64(waiters[i], 1, 1, 0);
    }
}
static void wake_all(void* d)
{
    wake_all_impl(d);
}

Test(scale, hundred_thousand_waiting_flows)
{
    nwaiting = ndone = 0;
    for (size_t i = 0; i < NFLOWS; ++i) {
        roots[i] = futoin_root_new(T);
        API(roots[i])->add(roots[i], (void*)i, wait_step, NULL);
        API(roots[i])->add(roots[i], NULL, consume, NULL);
        API(roots[i])->execute(roots[i], NULL, on_unhandled);
    }
    run();
    cr_assert_eq(ndone, NFLOWS);
    for (size_t i = 0; i < NFLOWS; ++i) {
        API(roots[i])->free(roots[i]);
    }
}
