/* futoin_tool_trim(): after a peak, the pools' memory goes back to the
 * system (RSS falls back near where it was), handles of finished steps and
 * roots stay safe to call through (they read as finished), from any
 * thread, and the pools grow again when needed. */
#include "common.h"

#include <futoin/sys/wrap.h>

#include <pthread.h>
#include <stdlib.h>

TestSuite(trim, .init = fx_setup, .fini = fx_teardown);

static long rss_kb(void)
{
    char line[256];
    long kb = -1;
    FILE* f = fopen("/proc/self/status", "r");
    cr_assert_not_null(f);
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) {
            break;
        }
    }
    fclose(f);
    return kb;
}

static futoin_tool_stats stats(void)
{
    futoin_tool_stats st = FUTOIN_TOOL_STATS_INIT;
    cr_assert_eq(futoin_tool_get_stats(T, &st), FUTOIN_OK);
    return st;
}

#define PEAK 200000
static FutoInAsyncSteps* roots[PEAK];
static size_t waiting;

static void on_cancel(FutoInAsyncSteps* as, void* d)
{
}
static void wait_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    ++waiting;
    API(as)->setCancel(as, NULL, on_cancel);
}

/* A peak of waiting flows, all cancelled and freed. */
static void peak_and_free(size_t n, long* peak_rss, size_t* peak_pool)
{
    waiting = 0;
    for (size_t i = 0; i < n; ++i) {
        roots[i] = futoin_root_new(T);
        API(roots[i])->add(roots[i], NULL, wait_step, NULL);
        API(roots[i])->execute(roots[i], NULL, NULL);
    }
    while (waiting < n) {
        futoin_tool_run_nowait(T);
    }
    if (peak_rss) {
        *peak_rss = rss_kb();
    }
    if (peak_pool) {
        *peak_pool = stats().pool_bytes;
    }
    for (size_t i = 0; i < n; ++i) {
        API(roots[i])->free(roots[i]);
    }
    futoin_tool_run_nowait(T);
}

Test(trim, memory_goes_back_after_a_peak)
{
    long before = rss_kb(), peak, after;
    size_t peak_pool, given;
    peak_and_free(PEAK, &peak, &peak_pool);
    cr_assert_gt(peak - before, 40000, "a peak of %d flows took only %ld KiB",
                 PEAK, peak - before);
    given = futoin_tool_trim(T);
    after = rss_kb();
    /* the pools keep only the blocks that hold the quarantine */
    cr_assert_lt(stats().pool_bytes, (size_t)1 << 20, "%zu bytes still mapped",
                 stats().pool_bytes);
    cr_assert_geq(given, peak_pool * 9 / 10, "gave back %zu of %zu", given,
                  peak_pool);
    cr_assert_eq(stats().trimmed_bytes, given);
    cr_assert_lt(after, 2 * before + 1024,
                 "RSS before %ld KiB, at the peak %ld, after trim %ld", before,
                 peak, after);
}

/* Handles kept from before a trim, through which a late completion or a
 * late cancel arrives: they read as a finished step / a freed root. */
static FutoInAsyncSteps* stale_step;
static void keep_and_time_out(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    stale_step = as;
    API(as)->setTimeout(as, 1);
    API(as)->waitExternal(as);
}
static void swallow(FutoInAsyncSteps* as, void* d, const char* code)
{
    SUCCESS0(as);
}
static int worker_rc = 99;
static void* late_from_thread(void* d)
{
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    set_i64(&args, 0, 1);
    worker_rc = futoin_wrap_try_success(stale_step, &args);
    return NULL;
}

Test(trim, stale_handles_stay_safe_after_a_trim)
{
    FutoInAsyncSteps* first = futoin_root_new(T);
    pthread_t worker;
    API(first)->add(first, NULL, keep_and_time_out, swallow);
    API(first)->execute(first, NULL, on_unhandled);
    run();
    API(first)->free(first);
    /* enough flows after it that its block leaves the quarantine */
    peak_and_free(PEAK, NULL, NULL);
    cr_assert_gt(futoin_tool_trim(T), 0);
    /* a late completion through the trimmed record: lost a race, quiet */
    SUCCESS0(stale_step);
    cr_assert_eq(pthread_create(&worker, NULL, late_from_thread, NULL), 0);
    pthread_join(worker, NULL);
    cr_assert_eq(worker_rc, 0, "try_success() = %d", worker_rc);
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
    cr_assert_eq(stats().late_completions, 2);
    /* a late cancel through a freed root of a trimmed block: reported */
    API(roots[7])->cancel(roots[7]);
    cr_assert_eq(misuse_seen, 1);
    cr_assert(strstr(misuse_last, "freed"), "%s", misuse_last);
}

/* Pools grow again after a trim, into the blocks it kept mapped. */
Test(trim, pools_grow_again_after_a_trim)
{
    size_t pool_peak, pool_again;
    peak_and_free(PEAK, NULL, &pool_peak);
    futoin_tool_trim(T);
    peak_and_free(PEAK, NULL, &pool_again);
    /* the same blocks again, give or take the one per pool that holds
     * the quarantine (records freed last are not reused at once) */
    cr_assert_leq(pool_again, pool_peak + 4 * ((size_t)1 << 18),
                  "peak %zu, again %zu", pool_peak, pool_again);
    cr_assert_gt(pool_again, pool_peak / 2);
    cr_assert_eq(stats().live_roots, 0);
    cr_assert_gt(futoin_tool_trim(T), 0);
}
