/* futoin_tool_trim(): after a peak, the pools' memory goes back to the
 * system (RSS falls back near where it was), handles of finished steps and
 * roots stay safe to call through (they read as finished), from any
 * thread, and the pools grow again when needed. */
#include "common.h"

#include <futoin/sys/wrap.h>

#include <pthread.h>
#include <stdlib.h>
#include <uv.h>

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

/* A peak of `n` waiting flows. */
static void peak(size_t n)
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
}

/* Roots [from, to) of the peak cancelled and freed. */
static void free_roots(size_t from, size_t to)
{
    for (size_t i = from; i < to; ++i) {
        API(roots[i])->free(roots[i]);
    }
}

/* A peak of waiting flows, all cancelled and freed. */
static void peak_and_free(size_t n, long* peak_rss, size_t* peak_pool)
{
    peak(n);
    if (peak_rss) {
        *peak_rss = rss_kb();
    }
    if (peak_pool) {
        *peak_pool = stats().pool_bytes;
    }
    free_roots(0, n);
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

/* ---- trimming on idle ----------------------------------------------------- */

/* A tool whose loop gives memory back once it has been idle for 20 ms (or
 * never, for the second fixture). The idle period is driven by the loop:
 * a libuv timer of the test's own (not one of the tool's callbacks, so it
 * is no activity of the tool's) watches the stats once per millisecond
 * and stops when the memory is back; nothing sleeps and no deadline is
 * asserted. */
#define IDLE_MS 20

static void idle_setup(uint32_t ms)
{
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    o.misuse = on_misuse;
    o.trim_idle_ms = ms;
    misuse_seen = 0;
    misuse_last[0] = 0;
    cr_assert_eq(futoin_tool_new(&T, &o), FUTOIN_OK);
}
static void idle_on_setup(void)
{
    idle_setup(IDLE_MS);
}
static void idle_off_setup(void)
{
    idle_setup(0);
}

TestSuite(trim_idle, .init = idle_on_setup, .fini = fx_teardown);
TestSuite(trim_idle_off, .init = idle_off_setup, .fini = fx_teardown);

static uv_timer_t watch;
static unsigned watch_ticks, watch_max;
static size_t watch_base;
static bool watch_trimmed;

static void watch_tick(uv_timer_t* t)
{
    ++watch_ticks;
    watch_trimmed = stats().trimmed_bytes > watch_base;
    if (watch_trimmed || (watch_max && watch_ticks >= watch_max)) {
        uv_close((uv_handle_t*)t, NULL);
        uv_stop(t->loop); /* flows may still wait: run() would go on */
    }
}

/* Run the loop until the tool has trimmed (again), or (max_ticks != 0) for
 * that many milliseconds of the loop's time at least. */
static void watch_run(unsigned max_ticks)
{
    watch_base = stats().trimmed_bytes;
    watch_ticks = 0;
    watch_max = max_ticks;
    watch_trimmed = false;
    cr_assert_eq(uv_timer_init(futoin_tool_uv_loop(T), &watch), 0);
    cr_assert_eq(uv_timer_start(&watch, watch_tick, 1, 1), 0);
    run();
}

Test(trim_idle, memory_goes_back_once_the_loop_is_idle)
{
    long before = rss_kb(), peak, after;
    size_t peak_pool;
    peak_and_free(PEAK, &peak, &peak_pool);
    cr_assert_gt(peak - before, 40000, "a peak of %d flows took only %ld KiB",
                 PEAK, peak - before);
    cr_assert_eq(stats().trimmed_bytes, 0, "trimmed while busy");
    watch_run(0);
    after = rss_kb();
    cr_assert(watch_trimmed);
    cr_assert_lt(stats().pool_bytes, (size_t)1 << 20, "%zu bytes still mapped",
                 stats().pool_bytes);
    cr_assert_geq(stats().trimmed_bytes, peak_pool * 9 / 10,
                  "gave back %zu of %zu", stats().trimmed_bytes, peak_pool);
    cr_assert_lt(after, 2 * before + 1024,
                 "RSS before %ld KiB, at the peak %ld, after idle %ld", before,
                 peak, after);
    cr_assert_eq(futoin_tool_trim(T), 0, "the idle trim left some behind");
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
}

Test(trim_idle_off, memory_stays_when_trimming_on_idle_is_off)
{
    size_t peak_pool;
    peak_and_free(PEAK, NULL, &peak_pool);
    /* ten idle periods of the other fixture, by the loop's clock */
    watch_run(10 * IDLE_MS);
    cr_assert(!watch_trimmed);
    cr_assert_geq(watch_ticks, 10 * IDLE_MS);
    cr_assert_eq(stats().trimmed_bytes, 0);
    cr_assert_geq(stats().pool_bytes, peak_pool * 9 / 10);
    /* the explicit trim still works */
    cr_assert_gt(futoin_tool_trim(T), 0);
}

/* A loop that keeps running the tool's callbacks is not idle: a flow that
 * never waits runs for 40 idle periods (counted by the tool's own 1 ms
 * timer) after a peak, and nothing is trimmed meanwhile; once it stops,
 * the memory goes back. */
static FutoInAsyncSteps* busy_root;
static unsigned busy_ticks;
static size_t trimmed_while_busy;
static void busy_body(FutoInAsyncSteps* as, void* d)
{
}
static void busy_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->loop(as, NULL, busy_body, NULL);
}
static void busy_tick(void* d)
{
    trimmed_while_busy += stats().trimmed_bytes;
    if (++busy_ticks < 40 * IDLE_MS) {
        futoin_tool_deferred(T, 1, busy_tick, NULL);
    } else {
        API(busy_root)->cancel(busy_root);
    }
}

Test(trim_idle, a_busy_loop_is_not_idle)
{
    peak_and_free(PEAK, NULL, NULL);
    busy_root = futoin_root_new(T);
    busy_ticks = 0;
    trimmed_while_busy = 0;
    API(busy_root)->add(busy_root, NULL, busy_step, NULL);
    API(busy_root)->execute(busy_root, NULL, on_unhandled);
    futoin_tool_deferred(T, 1, busy_tick, NULL);
    run();
    cr_assert_eq(busy_ticks, 40 * IDLE_MS);
    cr_assert_eq(trimmed_while_busy, 0, "trimmed while a flow was running");
    API(busy_root)->free(busy_root);
    watch_run(0);
    cr_assert(watch_trimmed);
    /* as small as an explicit trim makes it: the blocks that hold the
     * quarantine (which the busy flow's churn may spread over one more) */
    cr_assert_leq(stats().pool_bytes, (size_t)2 << 20, "%zu bytes still mapped",
                  stats().pool_bytes);
    cr_assert_eq(futoin_tool_trim(T), 0, "the idle trim left some behind");
}

/* Pools that grow again after an idle trim are trimmed again on the next
 * idle period: the timer is started anew by the growth. */
Test(trim_idle, every_peak_is_trimmed_after_it)
{
    size_t first;
    peak_and_free(PEAK, NULL, NULL);
    watch_run(0);
    cr_assert(watch_trimmed);
    first = stats().trimmed_bytes;
    peak_and_free(PEAK, NULL, NULL);
    cr_assert_eq(stats().trimmed_bytes, first);
    cr_assert_geq(stats().pool_bytes, (size_t)8 << 20);
    watch_run(0);
    cr_assert(watch_trimmed);
    cr_assert_gt(stats().trimmed_bytes, first);
    cr_assert_leq(stats().pool_bytes, (size_t)1 << 20);
    cr_assert_eq(futoin_tool_trim(T), 0, "the idle trim left some behind");
}

/* Memory still in use when the loop went idle (flows waiting) goes back
 * after those flows end, even when they are freed by calls made outside
 * the tool's callbacks and nothing of the tool's runs after that: the
 * free itself is activity that starts the idle timer again. (Were it not,
 * the second wait below would never end: the test waits for the event,
 * it sets no deadline.) */
Test(trim_idle, memory_freed_later_from_outside_the_loop_goes_back_too)
{
    size_t first;
    peak(PEAK);
    free_roots(0, PEAK / 2);
    watch_run(0);
    cr_assert(watch_trimmed);
    first = stats().trimmed_bytes;
    cr_assert_geq(stats().pool_bytes, (size_t)8 << 20, "the waiting half's "
                  "memory went too: %zu bytes mapped", stats().pool_bytes);
    free_roots(PEAK / 2, PEAK); /* no loop runs meanwhile */
    watch_run(0);
    cr_assert(watch_trimmed);
    cr_assert_gt(stats().trimmed_bytes, first);
    cr_assert_leq(stats().pool_bytes, (size_t)2 << 20, "%zu bytes still mapped",
                  stats().pool_bytes);
    cr_assert_eq(futoin_tool_trim(T), 0, "the idle trim left some behind");
}
