/*
 * Critical sections per second through addSync() (futoin/sync.h).
 * One test per process: `sync_bench --test NAME [--scale F]`, `--list`;
 * prints one `BENCH impl=futoin test=NAME ...` line (bench/README.md).
 *
 *  mutex            one flow, N sections on Mutex(1): the uncontended cost
 *                   of lock + section step + unlock
 *  nolock           the same N steps added with add(): the floor to
 *                   subtract from `mutex`
 *  mutex_contended  4 flows on Mutex(1); every section waits one loop turn
 *                   (sched_immediate), so each lock queues and each unlock
 *                   hands the mutex over to the next flow
 *  nolock_wait      the same 4 flows and waiting sections, without a lock
 *  mutex_wide       64 flows on Mutex(8), waiting sections
 *  throttle         one flow, N sections on a Throttle that never throttles
 *  limiter          one flow, N sections on a Limiter that never limits
 */
#include <futoin/async.h>
#include <futoin/sync.h>

#include "peers/bench_common.h"

#define API(as) ((as)->api)

static futoin_tool* tool;
static uint64_t sections;
static size_t flows_left;
static uint64_t t_end;

static void die(const char* what)
{
    fprintf(stderr, "sync_bench: %s\n", what);
    exit(2);
}

static void section(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    ++sections; /* implicit success */
}

static void resume(void* d)
{
    FutoInAsyncSteps* as = d;
    API(as)->success(as, NULL);
}
static void section_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    ++sections;
    API(as)->waitExternal(as);
    API(as)->sched_immediate(as, as, resume);
}

typedef struct job
{
    FutoInSync* sync; /* NULL: plain add() */
    FutoInAsyncSteps_execute_callback f;
} job;

static void body(FutoInAsyncSteps* as, void* d, size_t i)
{
    job* j = d;
    if (j->sync) {
        API(as)->addSync(as, j->sync, NULL, j->f, NULL);
    } else {
        API(as)->add(as, NULL, j->f, NULL);
    }
}

/* The last flow to finish stops the clock: a Throttle's or Limiter's timer
 * keeps the loop for one more period, which is not part of the work. */
static void flow_done(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    if (--flows_left == 0) {
        t_end = bench_now_ns();
    }
}

/* `flows` roots, each running `per_flow` sections, all at once. */
static uint64_t run_flows(job* j, size_t flows, uint64_t per_flow)
{
    FutoInAsyncSteps* roots[64];
    uint64_t t0;
    if (flows > 64) {
        die("too many flows");
    }
    for (size_t i = 0; i < flows; ++i) {
        roots[i] = futoin_root_new(tool);
        if (!roots[i]) {
            die("futoin_root_new failed");
        }
        API(roots[i])->repeat(roots[i], j, (size_t)per_flow, body, NULL);
        API(roots[i])->add(roots[i], NULL, flow_done, NULL);
    }
    sections = 0;
    flows_left = flows;
    t0 = bench_now_ns();
    for (size_t i = 0; i < flows; ++i) {
        API(roots[i])->execute(roots[i], NULL, NULL);
    }
    futoin_tool_run(tool);
    t0 = t_end - t0;
    for (size_t i = 0; i < flows; ++i) {
        API(roots[i])->free(roots[i]);
    }
    if (sections != flows * per_flow) {
        die("not every section ran");
    }
    return t0;
}

static void bench(const char* name, job* j, size_t flows, uint64_t n)
{
    uint64_t per_flow = n / flows;
    /* warm-up: pools and rings reach their size */
    run_flows(j, flows, per_flow / 10 + 1);
    bench_report("futoin", name, per_flow * flows,
                 run_flows(j, flows, per_flow), -1);
}

static int free_sync(FutoInSync* s)
{
    int rc = futoin_mutex_free(s);
    if (rc == FUTOIN_EINVAL) {
        rc = futoin_throttle_free(s);
    }
    if (rc == FUTOIN_EINVAL) {
        rc = futoin_limiter_free(s);
    }
    return rc;
}

int main(int argc, char** argv)
{
    static const char* const tests[] = {"mutex",       "nolock",
                                        "mutex_contended", "nolock_wait",
                                        "mutex_wide",  "throttle",
                                        "limiter"};
    struct bench_args a;
    job j = {NULL, section};
    uint64_t n;

    if (bench_parse_args(argc, argv, &a) != 0) {
        return 2;
    }
    if (a.list) {
        for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); ++t) {
            puts(tests[t]);
        }
        return 0;
    }
    if (!a.test) {
        die("usage: sync_bench --test NAME [--scale F] | --list");
    }
    if (a.impl && strcmp(a.impl, "futoin") != 0) {
        die("only --impl futoin");
    }
    if (futoin_tool_new(&tool, NULL) != FUTOIN_OK) {
        die("futoin_tool_new failed");
    }
    n = bench_scaled(4000000, a.scale, 1000);
    if (!strcmp(a.test, "mutex")) {
        j.sync = futoin_mutex_new(1, FUTOIN_UNLIMITED);
        bench(a.test, &j, 1, n);
    } else if (!strcmp(a.test, "nolock")) {
        bench(a.test, &j, 1, n);
    } else if (!strcmp(a.test, "mutex_contended")) {
        j.sync = futoin_mutex_new(1, FUTOIN_UNLIMITED);
        j.f = section_wait;
        bench(a.test, &j, 4, n / 2);
    } else if (!strcmp(a.test, "nolock_wait")) {
        j.f = section_wait;
        bench(a.test, &j, 4, n / 2);
    } else if (!strcmp(a.test, "mutex_wide")) {
        j.sync = futoin_mutex_new(8, FUTOIN_UNLIMITED);
        j.f = section_wait;
        bench(a.test, &j, 64, n / 2);
    } else if (!strcmp(a.test, "throttle")) {
        j.sync = futoin_throttle_new(tool, (size_t)-2, 1000, FUTOIN_UNLIMITED);
        bench(a.test, &j, 1, n);
    } else if (!strcmp(a.test, "limiter")) {
        futoin_limiter_options o = FUTOIN_LIMITER_OPTIONS_INIT;
        o.rate = (size_t)-2;
        j.sync = futoin_limiter_new(tool, &o);
        bench(a.test, &j, 1, n);
    } else {
        die("unknown test");
    }
    if (j.sync && free_sync(j.sync) != FUTOIN_OK) {
        die("sync object not freed");
    }
    return futoin_tool_free(tool) == FUTOIN_OK ? 0 : 1;
}
