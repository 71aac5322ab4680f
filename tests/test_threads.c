/* Threads: root execute/cancel/free from any thread (posted, handlers on the
 * loop thread), every other call from a foreign thread refused and
 * reported, and completions that race with their step's timeout or cancel
 * (a lost race is dropped quietly, not misuse). The last test hammers all
 * of it from several threads; the test command also runs this file under
 * ThreadSanitizer. */
#include "common.h"

#include <futoin/sys/ext.h>
#include <futoin/sys/wrap.h>
#include <pthread.h>
#include <stdatomic.h>
#include <uv.h>

/* A test that hangs (the old behaviour of several) fails instead. */
TestSuite(threads, .init = fx_setup, .fini = fx_teardown, .timeout = 60);

static pthread_t loop_thread;
static pthread_t worker;
static int handler_on_loop; /* 1 yes, -1 no, 0 did not run */

static void record_thread(void)
{
    handler_on_loop = pthread_equal(pthread_self(), loop_thread) ? 1 : -1;
}

static void spawn(void* (*fn)(void*), void* arg)
{
    cr_assert_eq(pthread_create(&worker, NULL, fn, arg), 0);
}

static size_t late_count(void)
{
    futoin_tool_stats st = FUTOIN_TOOL_STATS_INIT;
    cr_assert_eq(futoin_tool_get_stats(T, &st), FUTOIN_OK);
    return st.late_completions;
}

/* ---- root cancel from another thread ----------------------------------- */

static void on_cancel_rec(FutoInAsyncSteps* as, void* d)
{
    record_thread();
    tr("cancel %s", (const char*)d);
}

static void* cancel_root_thread(void* d)
{
    FutoInAsyncSteps* root = d;
    API(root)->cancel(root);
    return NULL;
}

static FutoInAsyncSteps* the_root;
static void wait_and_spawn_cancel(FutoInAsyncSteps* as, void* d,
                                  const FutoInArgs* a)
{
    API(as)->setCancel(as, "w", on_cancel_rec);
    spawn(cancel_root_thread, the_root);
}

Test(threads, root_cancel_from_another_thread)
{
    loop_thread = pthread_self();
    handler_on_loop = 0;
    the_root = futoin_root_new(T);
    API(the_root)->add(the_root, NULL, wait_and_spawn_cancel, NULL);
    API(the_root)->execute(the_root, NULL, on_unhandled);
    run(); /* returns: the posted cancel ended the only flow */
    pthread_join(worker, NULL);
    assert_trace("cancel w\n");
    cr_assert_eq(handler_on_loop, 1, "cancel handler ran on another thread");
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
    API(the_root)->free(the_root);
}

/* ---- root free from another thread ------------------------------------- */

static void* free_root_thread(void* d)
{
    FutoInAsyncSteps* root = d;
    API(root)->free(root);
    return NULL;
}

static void wait_and_spawn_free(FutoInAsyncSteps* as, void* d,
                                const FutoInArgs* a)
{
    API(as)->setCancel(as, "f", on_cancel_rec);
    spawn(free_root_thread, the_root);
}

Test(threads, root_free_from_another_thread)
{
    futoin_tool_stats st = FUTOIN_TOOL_STATS_INIT;
    loop_thread = pthread_self();
    handler_on_loop = 0;
    the_root = futoin_root_new(T);
    API(the_root)->add(the_root, NULL, wait_and_spawn_free, NULL);
    API(the_root)->execute(the_root, NULL, on_unhandled);
    run();
    pthread_join(worker, NULL);
    assert_trace("cancel f\n");
    cr_assert_eq(handler_on_loop, 1);
    cr_assert_eq(futoin_tool_get_stats(T, &st), FUTOIN_OK);
    cr_assert_eq(st.live_roots, 0, "the root was not freed");
}

/* ---- root execute from another thread ---------------------------------- */

static FutoInAsyncSteps* keeper_step;
static void keeper(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    keeper_step = as;
    API(as)->waitExternal(as);
}
static void keeper_done(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("keeper done");
}
static void started_by_worker(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    record_thread();
    tr("B runs");
    SUCCESS0(keeper_step); /* lets the keeper flow end */
}
static void* execute_root_thread(void* d)
{
    FutoInAsyncSteps* root = d;
    API(root)->execute(root, NULL, on_unhandled);
    return NULL;
}
static FutoInAsyncSteps* root_b;
static void spawn_executor(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    spawn(execute_root_thread, root_b);
}

Test(threads, root_execute_from_another_thread)
{
    FutoInAsyncSteps* keep = futoin_root_new(T);
    loop_thread = pthread_self();
    handler_on_loop = 0;
    root_b = futoin_root_new(T);
    API(root_b)->add(root_b, NULL, started_by_worker, NULL);
    API(keep)->add(keep, NULL, spawn_executor, NULL);
    API(keep)->add(keep, NULL, keeper, NULL);
    API(keep)->add(keep, NULL, keeper_done, NULL);
    API(keep)->execute(keep, NULL, on_unhandled);
    run();
    pthread_join(worker, NULL);
    assert_trace("B runs\nkeeper done\n");
    cr_assert_eq(handler_on_loop, 1, "the root ran on another thread");
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
    API(keep)->free(keep);
    API(root_b)->free(root_b);
}

/* ---- every other call from a foreign thread is refused ----------------- */

static void never(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("must not run");
}
static void* never_alloc(void* d)
{
    return d;
}
static void never_loop(FutoInAsyncSteps* as, void* d)
{
    tr("must not run");
}

static size_t misuse_before;
static int refused_results; /* calls that returned a non-null / nonzero */
static void* misuse_from_thread(void* d)
{
    FutoInAsyncSteps* as = d;
    misuse_before = futoin_tool_misuse_count(T);
    API(as)->add(as, NULL, never, NULL);
    API(as)->setTimeout(as, 1);
    API(as)->setCancel(as, NULL, NULL);
    API(as)->waitExternal(as);
    API(as)->loop(as, NULL, never_loop, NULL);
    refused_results += API(as)->parallel(as, NULL, NULL) != NULL;
    refused_results +=
            API(as)->stateVariable(as, NULL, "x", never_alloc, NULL) != NULL;
    refused_results += API(as)->stack(as, 16, NULL) != NULL;
    refused_results += API(as)->isValid(as) != 0;
    API(as)->breakLoop(as, NULL);
    API(as)->execute(as, NULL, NULL);
    refused_results += futoin_root_new(T) != NULL;
    /* ... and then the one call that belongs here */
    succeed_i64(as, 1, 7, 0);
    return NULL;
}
static void wait_for_worker(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->waitExternal(as);
    spawn(misuse_from_thread, as);
}
static void got_value(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("got %lld", (long long)a->arg0.i64);
}

Test(threads, step_calls_from_another_thread_are_refused)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, wait_for_worker, NULL);
    API(as)->add(as, NULL, got_value, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    pthread_join(worker, NULL);
    assert_trace("got 7\n"); /* nothing the worker added ran */
    cr_assert_eq(refused_results, 0);
    cr_assert_eq(futoin_tool_misuse_count(T) - misuse_before, 12,
                 "refused calls reported: %zu (last: %s)",
                 futoin_tool_misuse_count(T) - misuse_before, misuse_last);
    cr_assert(strstr(misuse_last, "not the loop thread"), "%s", misuse_last);
    API(as)->free(as);
}

/* ---- late completions are a race, not misuse --------------------------- */

/* The step times out; its cancel handler (which runs before its error
 * handler) completes it the way an external event racing the timeout
 * would: that completion lost the race and is dropped quietly. */
static void late_success(FutoInAsyncSteps* as, void* d)
{
    succeed_i64(as, 1, 1, 0);
    tr("late success");
}
static void timed_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setTimeout(as, 1);
    API(as)->setCancel(as, NULL, late_success);
    API(as)->waitExternal(as);
}
static void on_err_trace(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("onerror %s", code);
}

Test(threads, completion_after_timeout_is_quiet)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, timed_wait, on_err_trace);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("late success\nonerror Timeout\nunhandled Timeout\n");
    cr_assert_eq(misuse_seen, 0, "reported: %s", misuse_last);
    cr_assert_eq(late_count(), 1);
    API(as)->free(as);
}

/* The same race from another thread: the worker is started by the cancel
 * handler, after the timeout fired; try_success() says it lost. */
static atomic_int worker_rc;
static bool worker_values_left;
static void* try_complete_thread(void* d)
{
    FutoInAsyncSteps* as = d;
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    set_i64(&args, 0, 5);
    atomic_store(&worker_rc, futoin_wrap_try_success(as, &args));
    worker_values_left = args.arg0.type != NULL;
    return NULL;
}
static void cancel_spawns_worker(FutoInAsyncSteps* as, void* d)
{
    spawn(try_complete_thread, as);
}
static void timed_wait_worker(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setTimeout(as, 1);
    API(as)->setCancel(as, NULL, cancel_spawns_worker);
    API(as)->waitExternal(as);
}

Test(threads, completion_from_worker_after_timeout_is_quiet)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    atomic_store(&worker_rc, 99);
    API(as)->add(as, NULL, timed_wait_worker, on_err_trace);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    pthread_join(worker, NULL);
    assert_trace("onerror Timeout\nunhandled Timeout\n");
    cr_assert_eq(atomic_load(&worker_rc), 0, "try_success() = %d",
                 atomic_load(&worker_rc));
    cr_assert(!worker_values_left, "values not moved");
    cr_assert_eq(misuse_seen, 0, "reported: %s", misuse_last);
    cr_assert_eq(late_count(), 1);
    API(as)->free(as);
}

/* A completion that claimed the step before its timeout fired wins, even
 * when the timer is due before the loop gets to apply the completion. The
 * spin only makes the old behaviour (Timeout, then the completion reported
 * as misuse) certain; the claim decides either way. */
static void* complete_now_thread(void* d)
{
    succeed_i64(d, 1, 42, 0);
    return NULL;
}
static void claim_then_stall(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setTimeout(as, 1);
    API(as)->waitExternal(as);
    spawn(complete_now_thread, as);
    pthread_join(worker, NULL);
    uint64_t until = uv_hrtime() + 3000000; /* the timer is then due */
    while (uv_hrtime() < until) {
    }
}

Test(threads, claimed_completion_beats_a_due_timeout)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, claim_then_stall, on_err_trace);
    API(as)->add(as, NULL, got_value, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("got 42\n");
    cr_assert_eq(misuse_seen, 0, "reported: %s", misuse_last);
    cr_assert_eq(late_count(), 0);
    API(as)->free(as);
}

/* A completion that claims the step while its callback runs, from a
 * worker, where the callback then returns without waiting: the step
 * completes by itself, and the completion, which reaches the loop thread
 * after the step's record was retired, is reported as misuse, not dropped
 * as a lost race (the record's generation moved on when it was retired:
 * remote.c tells the two apart by it). */
static void claim_then_return(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    spawn(complete_now_thread, as);
    pthread_join(worker, NULL);
}
static void next_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("next %s", a->arg0.type ? "with a value" : "without a value");
}

Test(threads, claimed_completion_of_a_step_that_did_not_wait_is_misuse)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, claim_then_return, on_err_trace);
    API(as)->add(as, NULL, next_step, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    /* The flow ended before the loop polled: the next run takes the post. */
    run();
    assert_trace("next without a value\n");
    cr_assert_eq(misuse_seen, 1, "%zu reports, last: %s", misuse_seen,
                 misuse_last);
    cr_assert(strstr(misuse_last, "success() from another thread on a step "
                                  "that completed without waiting"),
              "%s", misuse_last);
    cr_assert_eq(late_count(), 0);
    API(as)->free(as);
}

/* try_success()/try_error() say what became of the completion. */
static FutoInAsyncSteps* waiting;
static void wait_here(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    waiting = as;
    API(as)->setTimeout(as, (uint32_t)(uintptr_t)d);
    API(as)->waitExternal(as);
}
static int rc_first, rc_second, rc_late;
static void complete_twice(void* d)
{
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    set_i64(&args, 0, 3);
    rc_first = futoin_wrap_try_success(waiting, &args);
    rc_second = futoin_wrap_try_error(waiting, "Again", NULL);
}

Test(threads, try_completion_results)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInAsyncSteps* bs = futoin_root_new(T);
    /* accepted, then the second completion is misuse */
    API(as)->add(as, (void*)(uintptr_t)1000, wait_here, on_err_trace);
    API(as)->add(as, NULL, got_value, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    futoin_tool_immediate(T, complete_twice, NULL);
    run();
    cr_assert_eq(rc_first, 1);
    cr_assert_eq(rc_second, FUTOIN_EINVAL);
    cr_assert_eq(misuse_seen, 1, "%s", misuse_last);
    assert_trace("got 3\n");
    /* after the timeout: lost the race */
    API(bs)->add(bs, (void*)(uintptr_t)1, wait_here, on_err_trace);
    API(bs)->execute(bs, NULL, NULL);
    run();
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    set_i64(&args, 0, 4);
    rc_late = futoin_wrap_try_success(waiting, &args);
    cr_assert_eq(rc_late, 0);
    cr_assert_eq(late_count(), 1);
    cr_assert_eq(misuse_seen, 1);
    API(as)->free(as);
    API(bs)->free(bs);
}

/* ---- a posted root call meets a free on the loop thread --------------- */

/* A worker's call is posted; the loop thread may free the root before the
 * post arrives. The free was made after the call, so the call is dropped
 * quietly (an execute's data is released), never reported as a call on a
 * freed root, and never applied to whoever owns the record next. */

static void noop_cb(void* d)
{
}
/* Let posts arrive while the loop is busy with something else (a timer),
 * the way they race with a loop that runs flows. */
static void run_posts(void)
{
    futoin_tool_deferred(T, 1, noop_cb, NULL);
    run();
}

static void join_op(void* (*fn)(void*), FutoInAsyncSteps* root)
{
    spawn(fn, root);
    cr_assert_eq(pthread_join(worker, NULL), 0);
}

/* libuv does not look at the async handle of a loop with nothing alive:
 * run() takes such posts itself. */
Test(threads, free_posted_while_the_loop_is_idle_is_taken_by_run)
{
    futoin_tool_stats st = FUTOIN_TOOL_STATS_INIT;
    FutoInAsyncSteps* root = futoin_root_new(T);
    join_op(free_root_thread, root);
    run();
    cr_assert_eq(futoin_tool_get_stats(T, &st), FUTOIN_OK);
    cr_assert_eq(st.live_roots, 0, "the posted free() did not run");
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
}

Test(threads, cancel_posted_before_a_loop_free_is_dropped_quietly)
{
    FutoInAsyncSteps* root = futoin_root_new(T);
    join_op(cancel_root_thread, root); /* posted, not yet run */
    API(root)->free(root);             /* on the loop thread, after it */
    run_posts();
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
}

static atomic_int released;
static void count_release(void* d)
{
    atomic_fetch_add(&released, 1);
}
static void must_not_run(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("ran");
}
static void* ext_execute_thread(void* d)
{
    FutoInAsyncSteps* root = d;
    futoin_async_ext(root)->execute(root, root, on_unhandled, count_release);
    return NULL;
}

Test(threads, execute_posted_before_a_loop_free_releases_its_data)
{
    FutoInAsyncSteps* root = futoin_root_new(T);
    atomic_store(&released, 0);
    API(root)->add(root, NULL, must_not_run, NULL);
    join_op(ext_execute_thread, root);
    API(root)->free(root);
    run_posts();
    assert_trace("");
    cr_assert_eq(atomic_load(&released), 1,
                 "execute()'s data released %d times", atomic_load(&released));
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
}

Test(threads, free_posted_before_a_loop_free_is_a_double_free)
{
    FutoInAsyncSteps* root = futoin_root_new(T);
    join_op(free_root_thread, root);
    API(root)->free(root);
    run_posts();
    cr_assert_eq(misuse_seen, 1, "%zu reports, last: %s", misuse_seen,
                 misuse_last);
    cr_assert(strstr(misuse_last, "free() on a root that was freed"), "%s",
              misuse_last);
}

Test(threads, cancel_posted_after_a_free_is_misuse)
{
    FutoInAsyncSteps* root = futoin_root_new(T);
    API(root)->free(root);
    join_op(cancel_root_thread, root);
    run_posts();
    cr_assert_eq(misuse_seen, 1, "%s", misuse_last);
    cr_assert(strstr(misuse_last, "cancel() on a root that was freed"), "%s",
              misuse_last);
}

/* The freed root's record, once out of quarantine, is the next owner's:
 * a cancel posted to the old root must not cancel the new one. */
static FutoInAsyncSteps* new_root_on(FutoInAsyncSteps* record)
{
    for (int i = 0; i < 4096; ++i) {
        FutoInAsyncSteps* r = futoin_root_new(T);
        if (r == record) {
            return r;
        }
        API(r)->free(r);
    }
    return NULL;
}
static FutoInAsyncSteps* waiting_step;
static void wait_cancellable(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    waiting_step = as;
    API(as)->setCancel(as, "new owner", on_cancel_rec);
    API(as)->waitExternal(as);
}

static void posted_call_skips_the_next_owner(bool free_first)
{
    FutoInAsyncSteps* old = futoin_root_new(T);
    FutoInAsyncSteps* owner;
    if (free_first) {
        API(old)->free(old);
        join_op(cancel_root_thread, old);
    } else {
        join_op(cancel_root_thread, old);
        API(old)->free(old);
    }
    owner = new_root_on(old);
    cr_assert_not_null(owner, "the record was never reused");
    API(owner)->add(owner, NULL, wait_cancellable, NULL);
    API(owner)->execute(owner, NULL, on_unhandled);
    for (int i = 0; i < 3; ++i) { /* the owner keeps the loop alive */
        futoin_tool_run_nowait(T); /* the old cancel arrives now */
    }
    assert_trace("");
    SUCCESS0(waiting_step);
    run();
    API(owner)->free(owner);
}

Test(threads, cancel_posted_before_a_free_skips_the_records_next_owner)
{
    posted_call_skips_the_next_owner(false);
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
}

Test(threads, cancel_posted_after_a_free_skips_the_records_next_owner)
{
    posted_call_skips_the_next_owner(true);
    cr_assert_eq(misuse_seen, 1, "%s", misuse_last);
}

/* ---- the hammer -------------------------------------------------------- */

/* Flows whose waiting steps (with short timeouts and cancel handlers) are
 * completed by worker threads, while another thread cancels roots, all at
 * once. Every completion is accounted for: applied, lost a race (late), or
 * claimed and then overtaken by its root's cancel (late as well). */
#define H_FLOWS 3000
#define H_WORKERS 3

static FutoInAsyncSteps* h_roots[H_FLOWS];
static pthread_mutex_t h_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t h_cv = PTHREAD_COND_INITIALIZER;
static FutoInAsyncSteps* h_queue[H_FLOWS];
static size_t h_head, h_tail;
static bool h_done;
static atomic_size_t h_rc1, h_rc0, h_bad, h_refused, h_applied, h_errors;

static void h_cancel(FutoInAsyncSteps* as, void* d)
{
}
static void h_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    uintptr_t i = (uintptr_t)d;
    API(as)->setTimeout(as, (uint32_t)(i % 3));
    API(as)->setCancel(as, NULL, h_cancel);
    API(as)->waitExternal(as);
    pthread_mutex_lock(&h_mx);
    h_queue[h_tail++] = as;
    pthread_cond_signal(&h_cv);
    pthread_mutex_unlock(&h_mx);
}
static void h_next(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    if (a->arg0.type) { /* the worker's value (a recovered error has none) */
        atomic_fetch_add(&h_applied, 1);
    }
}
static void h_onerror(FutoInAsyncSteps* as, void* d, const char* code)
{
    if (code[0] == 'W') { /* the worker's error: applied as well */
        atomic_fetch_add(&h_applied, 1);
    }
    atomic_fetch_add(&h_errors, 1);
    SUCCESS0(as);
}
static void* h_worker(void* d)
{
    unsigned seed = (unsigned)(uintptr_t)d;
    for (;;) {
        FutoInAsyncSteps* as;
        pthread_mutex_lock(&h_mx);
        while (h_head == h_tail && !h_done) {
            pthread_cond_wait(&h_cv, &h_mx);
        }
        if (h_head == h_tail) {
            pthread_mutex_unlock(&h_mx);
            return NULL;
        }
        as = h_queue[h_head++];
        pthread_mutex_unlock(&h_mx);
        for (unsigned spin = rand_r(&seed) % 20000; spin; --spin) {
            __asm__ volatile("" ::: "memory");
        }
        /* a refused call first: it must have no effect */
        API(as)->add(as, NULL, never, NULL);
        atomic_fetch_add(&h_refused, 1);
        int rc;
        if (rand_r(&seed) % 4 == 0) {
            rc = futoin_wrap_try_error(as, "WorkerError", "from a worker");
        } else {
            FutoInArgs args;
            memset(&args, 0, sizeof(args));
            set_i64(&args, 0, 1);
            rc = futoin_wrap_try_success(as, &args);
        }
        atomic_fetch_add(rc == 1 ? &h_rc1 : rc == 0 ? &h_rc0 : &h_bad, 1);
    }
}
static void* h_canceller(void* d)
{
    unsigned seed = 12345;
    for (int n = 0; n < H_FLOWS / 4; ++n) {
        FutoInAsyncSteps* r = h_roots[rand_r(&seed) % H_FLOWS];
        API(r)->cancel(r);
    }
    return NULL;
}

Test(threads, hammer_completions_cancels_and_misuse)
{
    pthread_t workers[H_WORKERS], canceller;
    futoin_tool_stats st = FUTOIN_TOOL_STATS_INIT;
    h_head = h_tail = 0;
    h_done = false;
    for (uintptr_t i = 0; i < H_FLOWS; ++i) {
        h_roots[i] = futoin_root_new(T);
        API(h_roots[i])->add(h_roots[i], (void*)i, h_wait, h_onerror);
        API(h_roots[i])->add(h_roots[i], NULL, h_next, NULL);
        API(h_roots[i])->execute(h_roots[i], NULL, NULL);
    }
    for (uintptr_t w = 0; w < H_WORKERS; ++w) {
        cr_assert_eq(pthread_create(&workers[w], NULL, h_worker, (void*)(w + 1)), 0);
    }
    cr_assert_eq(pthread_create(&canceller, NULL, h_canceller, NULL), 0);
    run();
    pthread_join(canceller, NULL);
    pthread_mutex_lock(&h_mx);
    h_done = true;
    pthread_cond_broadcast(&h_cv);
    pthread_mutex_unlock(&h_mx);
    for (int w = 0; w < H_WORKERS; ++w) {
        pthread_join(workers[w], NULL);
    }
    /* posts that arrived after run() returned: cancels, lost completions */
    while (futoin_tool_run_nowait(T) > 0) {
    }
    futoin_tool_run_nowait(T);
    cr_assert_eq(futoin_tool_get_stats(T, &st), FUTOIN_OK);
    size_t rc1 = atomic_load(&h_rc1), rc0 = atomic_load(&h_rc0);
    size_t applied = atomic_load(&h_applied);
    cr_assert_eq(atomic_load(&h_bad), 0, "a completion was refused as misuse");
    cr_assert_eq(rc1 + rc0, h_tail, "every handed-out step was completed once");
    cr_assert_eq(misuse_seen, atomic_load(&h_refused),
                 "misuse other than the refused add(): %s", misuse_last);
    /* Every completion that lost is counted once. A claimed one is applied
     * and reaches the next step, or its root's cancel overtakes it: before
     * it was applied (then it is counted as late too) or after. */
    cr_assert_leq(applied, rc1);
    cr_assert_geq(st.late_completions, rc0, "late %zu, rc0 %zu",
                  st.late_completions, rc0);
    cr_assert_leq(st.late_completions, rc0 + (rc1 - applied),
                  "late %zu, rc0 %zu, rc1 %zu, applied %zu",
                  st.late_completions, rc0, rc1, applied);
    for (int i = 0; i < H_FLOWS; ++i) {
        API(h_roots[i])->free(h_roots[i]);
    }
    cr_assert_eq(strstr(trace_buf, "must not run"), NULL);
}
