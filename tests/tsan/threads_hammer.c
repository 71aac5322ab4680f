/*
 * Cross-thread calls hammered from several threads at once, as a plain
 * program: Criterion cannot run under ThreadSanitizer (its inheritable
 * arena fails to map, Criterion issue #274), so the test command builds
 * this file with -fsanitize=thread and runs it; any report fails the run.
 * It also runs in the normal build as one more test.
 *
 * What it hammers: worker threads complete waiting steps (with short
 * timeouts and cancel handlers, so completions race with timeouts), make
 * calls that must be refused from their thread, and execute, cancel and
 * free roots, while the loop thread runs the flows. Every completion is
 * accounted for; the last line is "hammer: N passed, M failed".
 */
#include <futoin/async.h>
#include <futoin/sys/host.h>
#include <futoin/sys/wrap.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../include/futoin_check.h" /* CHECK, futoin_check_summary */

static atomic_size_t misuse_seen;
static void on_misuse(void* d, const char* code, const char* msg)
{
    atomic_fetch_add(&misuse_seen, 1);
}

static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};

/* ---- scenario 1: completions racing timeouts and root cancels ----------- */

#define FLOWS 4000
#define WORKERS 3

static futoin_tool* tool;
static FutoInAsyncSteps* roots[FLOWS];
static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static FutoInAsyncSteps* queue[FLOWS];
static size_t qhead, qtail;
static bool done;
static atomic_size_t rc1, rc0, rc_bad, refused, applied;

static void never(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    abort(); /* a refused add() must never run */
}
static void on_cancel(FutoInAsyncSteps* as, void* d)
{
}
static void wait_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    if ((uintptr_t)d % 7) { /* most race a 0-4 ms timeout; some never time out */
        as->api->setTimeout(as, (uint32_t)((uintptr_t)d % 5));
    }
    as->api->setCancel(as, NULL, on_cancel);
    as->api->waitExternal(as);
    pthread_mutex_lock(&mx);
    queue[qtail++] = as;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mx);
}
static void next_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    if (a->arg0.type) {
        atomic_fetch_add(&applied, 1);
    }
}
static void on_error(FutoInAsyncSteps* as, void* d, const char* code)
{
    if (code[0] == 'W') {
        atomic_fetch_add(&applied, 1);
    }
    as->api->success(as, NULL);
}

static void* worker(void* d)
{
    unsigned seed = (unsigned)(uintptr_t)d;
    for (;;) {
        FutoInAsyncSteps* as;
        int rc;
        pthread_mutex_lock(&mx);
        while (qhead == qtail && !done) {
            pthread_cond_wait(&cv, &mx);
        }
        if (qhead == qtail) {
            pthread_mutex_unlock(&mx);
            return NULL;
        }
        as = queue[qhead++];
        pthread_mutex_unlock(&mx);
        for (unsigned spin = rand_r(&seed) % 4000; spin; --spin) {
            __asm__ volatile("" ::: "memory");
        }
        as->api->add(as, NULL, never, NULL); /* refused: wrong thread */
        atomic_fetch_add(&refused, 1);
        if (rand_r(&seed) % 4 == 0) {
            rc = futoin_wrap_try_error(as, "WorkerError", "from a worker");
        } else {
            FutoInArgs args;
            memset(&args, 0, sizeof(args));
            args.arg0.type = &ty_i64;
            args.arg0.i64 = 1;
            rc = futoin_wrap_try_success(as, &args);
        }
        atomic_fetch_add(rc == 1 ? &rc1 : rc == 0 ? &rc0 : &rc_bad, 1);
    }
}

static void* canceller(void* d)
{
    unsigned seed = 4242;
    for (int n = 0; n < FLOWS / 4; ++n) {
        FutoInAsyncSteps* r = roots[rand_r(&seed) % FLOWS];
        r->api->cancel(r);
    }
    return NULL;
}

static void scenario_completions(void)
{
    pthread_t w[WORKERS], c;
    futoin_tool_stats st = FUTOIN_TOOL_STATS_INIT;
    size_t misuse_before = atomic_load(&misuse_seen);
    for (uintptr_t i = 0; i < FLOWS; ++i) {
        roots[i] = futoin_root_new(tool);
        roots[i]->api->add(roots[i], (void*)i, wait_step, on_error);
        roots[i]->api->add(roots[i], NULL, next_step, NULL);
        roots[i]->api->execute(roots[i], NULL, NULL);
    }
    for (uintptr_t i = 0; i < WORKERS; ++i) {
        pthread_create(&w[i], NULL, worker, (void*)(i + 1));
    }
    pthread_create(&c, NULL, canceller, NULL);
    futoin_tool_run(tool);
    pthread_join(c, NULL);
    pthread_mutex_lock(&mx);
    done = true;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mx);
    for (int i = 0; i < WORKERS; ++i) {
        pthread_join(w[i], NULL);
    }
    while (futoin_tool_run_nowait(tool) > 0) {
    }
    futoin_tool_run_nowait(tool); /* posts that came after run() returned */
    futoin_tool_get_stats(tool, &st);
    CHECK(atomic_load(&rc_bad) == 0, "%zu completions refused as misuse",
          atomic_load(&rc_bad));
    CHECK(atomic_load(&rc1) + atomic_load(&rc0) == qtail, "%zu + %zu != %zu",
          atomic_load(&rc1), atomic_load(&rc0), qtail);
    CHECK(atomic_load(&misuse_seen) - misuse_before == atomic_load(&refused),
          "misuse %zu, refused calls %zu",
          atomic_load(&misuse_seen) - misuse_before, atomic_load(&refused));
    CHECK(st.late_completions >= atomic_load(&rc0), "late %zu < lost %zu",
          st.late_completions, atomic_load(&rc0));
    CHECK(st.late_completions
                  <= atomic_load(&rc0) + atomic_load(&rc1) - atomic_load(&applied),
          "late %zu", st.late_completions);
    for (int i = 0; i < FLOWS; ++i) {
        roots[i]->api->free(roots[i]);
    }
    printf("completions: %zu taken, %zu lost a race, %zu applied, %zu late\n",
           atomic_load(&rc1), atomic_load(&rc0), atomic_load(&applied),
           st.late_completions);
}

/* ---- scenario 2: roots started, cancelled and freed from threads -------- */

/* One thread executes every root; each root's step (on the loop thread)
 * hands its root to a second thread, which cancels and frees it, or frees
 * it at once. Every handler must run on the loop thread. */
#define ROOTS 2000
static FutoInAsyncSteps* croots[ROOTS];
static FutoInAsyncSteps* keeper;
static atomic_size_t ran, cancelled, off_loop;
static pthread_t loop_thread;
static FutoInAsyncSteps* rq[ROOTS];
static size_t rq_head, rq_tail;

static void on_loop_check(void)
{
    if (!pthread_equal(pthread_self(), loop_thread)) {
        atomic_fetch_add(&off_loop, 1);
    }
}
static void cancel_counted(FutoInAsyncSteps* as, void* d)
{
    on_loop_check();
    atomic_fetch_add(&cancelled, 1);
}
static void waiting_step(FutoInAsyncSteps* as, void* root, const FutoInArgs* a)
{
    on_loop_check();
    atomic_fetch_add(&ran, 1);
    as->api->setCancel(as, NULL, cancel_counted);
    pthread_mutex_lock(&mx);
    rq[rq_tail++] = root;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mx);
}
static void* executor(void* d)
{
    for (int i = 0; i < ROOTS; ++i) {
        croots[i]->api->execute(croots[i], NULL, NULL);
    }
    return NULL;
}
static void* stopper(void* d)
{
    for (size_t n = 0; n < ROOTS; ++n) {
        FutoInAsyncSteps* r;
        pthread_mutex_lock(&mx);
        while (rq_head == rq_tail) {
            pthread_cond_wait(&cv, &mx);
        }
        r = rq[rq_head++];
        pthread_mutex_unlock(&mx);
        if (n % 2) {
            r->api->cancel(r);
        }
        r->api->free(r);
    }
    keeper->api->success(keeper, NULL); /* posted after every free */
    return NULL;
}
static pthread_t exec_thread, stop_thread;
static void keep_waiting(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    keeper = as; /* before the threads that use it exist */
    as->api->waitExternal(as);
    pthread_create(&exec_thread, NULL, executor, NULL);
    pthread_create(&stop_thread, NULL, stopper, NULL);
}

static void scenario_root_ops(void)
{
    futoin_tool_stats st = FUTOIN_TOOL_STATS_INIT;
    size_t misuse_before = atomic_load(&misuse_seen);
    FutoInAsyncSteps* kroot;
    loop_thread = pthread_self();
    for (int i = 0; i < ROOTS; ++i) {
        croots[i] = futoin_root_new(tool);
        croots[i]->api->add(croots[i], croots[i], waiting_step, NULL);
    }
    kroot = futoin_root_new(tool);
    kroot->api->add(kroot, NULL, keep_waiting, NULL);
    kroot->api->execute(kroot, NULL, NULL);
    futoin_tool_run(tool);
    pthread_join(exec_thread, NULL);
    pthread_join(stop_thread, NULL);
    futoin_tool_get_stats(tool, &st);
    CHECK(atomic_load(&ran) == ROOTS, "%zu of %d roots ran", atomic_load(&ran),
          ROOTS);
    CHECK(atomic_load(&cancelled) == ROOTS, "%zu of %d cancel handlers ran",
          atomic_load(&cancelled), ROOTS);
    CHECK(atomic_load(&off_loop) == 0, "%zu handlers ran off the loop thread",
          atomic_load(&off_loop));
    CHECK(st.live_roots == 1, "live roots %zu (the keeper only)", st.live_roots);
    CHECK(atomic_load(&misuse_seen) == misuse_before, "misuse reported");
    kroot->api->free(kroot);
    printf("root ops: %zu roots executed from one thread, cancelled and freed "
           "from another\n",
           atomic_load(&ran));
}

/* ---- scenario 3: a language host started from two loop threads at once -- */

/* start() lingers (up to 200 ms) while it is alone, so a second loop
 * thread that would start the host too comes in meanwhile: the registry
 * must make it wait for this start() instead, and read the host's state
 * only under its lock. The counters are relaxed atomics on purpose: they
 * must not order the two threads, or they would hide that race from
 * ThreadSanitizer. */
static pthread_barrier_t hs_barrier;
static atomic_int hs_starts, hs_inside, hs_ran, hs_bad;

static int hs_start(futoin_tool* t, char* e, size_t n)
{
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    atomic_fetch_add_explicit(&hs_starts, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&hs_inside, 1, memory_order_relaxed);
    do {
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (atomic_load_explicit(&hs_inside, memory_order_relaxed) < 2
             && (now.tv_sec - t0.tv_sec) * 1000000000L + now.tv_nsec
                                - t0.tv_nsec
                        < 200 * 1000000L);
    atomic_fetch_sub_explicit(&hs_inside, 1, memory_order_relaxed);
    return FUTOIN_OK;
}
static void hs_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    atomic_fetch_add(&hs_ran, 1);
}
static int hs_resolve(const char* m, const char* f, futoin_host_step* out,
                      char* e, size_t n)
{
    out->execute = hs_step;
    return FUTOIN_OK;
}
static void hs_stop(void)
{
}
static const futoin_host_api hs_host = {sizeof(futoin_host_api),
                                        FUTOIN_HOST_VERSION_1, "hammered",
                                        hs_start, hs_resolve, hs_stop};

static void* hs_loop_thread(void* d)
{
    futoin_tool* t;
    FutoInAsyncSteps* as;
    if (futoin_tool_new(&t, NULL) != FUTOIN_OK) {
        atomic_fetch_add(&hs_bad, 1);
        return NULL;
    }
    as = futoin_root_new(t);
    pthread_barrier_wait(&hs_barrier);
    if (futoin_host_add(as, "hammered", "m", "f") != FUTOIN_OK) {
        atomic_fetch_add(&hs_bad, 1);
    }
    as->api->execute(as, NULL, NULL);
    futoin_tool_run(t);
    as->api->free(as);
    if (futoin_tool_free(t) != FUTOIN_OK) {
        atomic_fetch_add(&hs_bad, 1);
    }
    return NULL;
}

static void scenario_host_start(void)
{
    pthread_t th[2];
    CHECK(futoin_host_register(&hs_host) == FUTOIN_OK, "host not registered");
    pthread_barrier_init(&hs_barrier, NULL, 2);
    for (int i = 0; i < 2; ++i) {
        pthread_create(&th[i], NULL, hs_loop_thread, NULL);
    }
    for (int i = 0; i < 2; ++i) {
        pthread_join(th[i], NULL);
    }
    pthread_barrier_destroy(&hs_barrier);
    CHECK(atomic_load(&hs_starts) == 1, "start() ran %d times",
          atomic_load(&hs_starts));
    CHECK(atomic_load(&hs_ran) == 2, "%d of 2 flows ran the host's step",
          atomic_load(&hs_ran));
    CHECK(atomic_load(&hs_bad) == 0, "%d calls failed", atomic_load(&hs_bad));
    futoin_host_shutdown();
    printf("host start: 2 loop threads, start() ran %d time(s)\n",
           atomic_load(&hs_starts));
}

/* ---- scenario 4: load policies set while a loop thread adds steps ------- */

/* Two threads set the policy of a tool whose loop thread adds named steps
 * meanwhile, a third the process's: one of the two wins, the other gets
 * FUTOIN_EBUSY; each add sees no policy or a whole one (never a refusal
 * followed by an add allowed), and every add after the setters are done is
 * refused. */
static pthread_barrier_t lp_barrier;
static futoin_tool* lp_tool;
static atomic_int lp_ok, lp_busy, lp_other;

static void* lp_setter(void* whole_process)
{
    static const char* const only_c[] = {"c", NULL};
    static const char* const both[] = {"c", "hammered", NULL};
    futoin_host_policy p = FUTOIN_HOST_POLICY_INIT;
    int rc;
    p.languages = whole_process ? both : only_c;
    pthread_barrier_wait(&lp_barrier);
    rc = futoin_host_policy_set(whole_process ? NULL : lp_tool, &p);
    if (rc == FUTOIN_OK && !whole_process) {
        atomic_fetch_add(&lp_ok, 1);
    } else if (rc == FUTOIN_EBUSY && !whole_process) {
        atomic_fetch_add(&lp_busy, 1);
    } else if (rc != FUTOIN_OK) {
        atomic_fetch_add(&lp_other, 1);
    }
    return NULL;
}

/* the refused steps fail their flows: expected here */
static void lp_quiet(FutoInAsyncSteps* as, void* d, const char* code)
{
}

static void scenario_load_policy(void)
{
    pthread_t th[3];
    FutoInAsyncSteps* as;
    int allowed = 0, denied = 0, allowed_after = 0;
    CHECK(futoin_tool_new(&lp_tool, NULL) == FUTOIN_OK, "no tool");
    pthread_barrier_init(&lp_barrier, NULL, 4);
    for (int i = 0; i < 3; ++i) {
        pthread_create(&th[i], NULL, lp_setter, i == 2 ? (void*)1 : NULL);
    }
    as = futoin_root_new(lp_tool);
    pthread_barrier_wait(&lp_barrier);
    for (int i = 0; i < 2000; ++i) {
        if (futoin_host_add(as, "hammered", "m", "f") == FUTOIN_OK) {
            ++allowed;
            allowed_after += denied > 0;
        } else {
            ++denied;
        }
    }
    for (int i = 0; i < 3; ++i) {
        pthread_join(th[i], NULL);
    }
    pthread_barrier_destroy(&lp_barrier);
    as->api->execute(as, NULL, lp_quiet);
    futoin_tool_run(lp_tool);
    as->api->free(as);
    as = futoin_root_new(lp_tool);
    CHECK(futoin_host_add(as, "hammered", "m", "f") == FUTOIN_EINVAL,
          "an add after the policy was set was allowed");
    as->api->execute(as, NULL, lp_quiet);
    futoin_tool_run(lp_tool);
    as->api->free(as);
    CHECK(atomic_load(&lp_ok) == 1 && atomic_load(&lp_busy) == 1 && atomic_load(&lp_other) == 0,
          "policy set: %d ok, %d busy, %d other", atomic_load(&lp_ok), atomic_load(&lp_busy),
          atomic_load(&lp_other));
    CHECK(allowed_after == 0, "%d adds allowed after a refusal", allowed_after);
    CHECK(futoin_tool_free(lp_tool) == FUTOIN_OK, "tool not freed");
    futoin_host_shutdown();
    printf("load policy: 3 setters, %d adds allowed before it, %d refused\n", allowed,
           denied);
}

int main(void)
{
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    o.misuse = on_misuse;
    if (futoin_tool_new(&tool, &o) != FUTOIN_OK) {
        return 2;
    }
    scenario_completions();
    scenario_root_ops();
    scenario_host_start();
    scenario_load_policy(); /* last: it sets the process's policy */
    CHECK(futoin_tool_free(tool) == FUTOIN_OK, "tool not freed");
    return futoin_check_summary("hammer");
}
