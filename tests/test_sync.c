/* Synchronisation (§1.11, §2.3–2.5, §3.6): Mutex, Throttle and Limiter
 * through addSync(); values through the section, FIFO order, re-entrance,
 * parallel branches as separate flows, queue limits, cancel / error /
 * timeout without leaks, the throttle clock, foreign sync objects and
 * foreign handles, and no allocation per lock/unlock in steady state.
 *
 * Most tests drive the loop with pump() (non-blocking passes) and let
 * flows out of their sections explicitly with leave(), so every ordering
 * is decided by the test, never by time. The tool runs on virtual time
 * (futoin_tool_options.virtual_time): a Throttle's or Limiter's period
 * ends only when the test moves the clock (drive(), advance_to_next()), so
 * no stall of a loaded machine can bring a tick between two steps of a
 * test, and the periods are asserted on the clock itself. */
#include "common.h"

#include <futoin/sync.h>

#include <stdint.h>
#include <stdlib.h>

#if FUTOIN_TEST_COUNT_MALLOC
/* Counting allocator, as in test_alloc.c: only built without sanitizers
 * (meson passes FUTOIN_TEST_COUNT_MALLOC), which own the allocator. */
#include <stdatomic.h>
extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void __libc_free(void*);
static atomic_size_t n_alloc;
static atomic_int counting;
void* malloc(size_t n)
{
    if (atomic_load(&counting)) {
        atomic_fetch_add(&n_alloc, 1);
    }
    return __libc_malloc(n);
}
void* calloc(size_t a, size_t b)
{
    if (atomic_load(&counting)) {
        atomic_fetch_add(&n_alloc, 1);
    }
    return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n)
{
    if (atomic_load(&counting)) {
        atomic_fetch_add(&n_alloc, 1);
    }
    return __libc_realloc(p, n);
}
void free(void* p)
{
    __libc_free(p);
}
#endif

TestSuite(sync, .init = fx_setup_virtual, .fini = fx_teardown);

/* ---- helpers ------------------------------------------------------------ */

/* Run what is ready, and return while sections wait for leave(): on the
 * virtual clock futoin_tool_run() runs what is due now, however many time
 * slices that takes, and never waits for a period to end. */
static void pump(void)
{
    cr_assert_eq(futoin_tool_run(T), FUTOIN_OK);
}

/* Move the virtual clock to the next due timer and run what falls due;
 * false when no timer is pending. */
static bool advance_to_next(void)
{
    uint64_t ms;
    if (futoin_tool_next_due(T, &ms) != 1) {
        return false;
    }
    cr_assert_eq(futoin_tool_advance(T, ms), FUTOIN_OK);
    return true;
}

static futoin_sync_stats stats(FutoInSync* s)
{
    futoin_sync_stats st = FUTOIN_SYNC_STATS_INIT;
    cr_assert_eq(futoin_sync_get_stats(s, &st), FUTOIN_OK);
    return st;
}

#define assert_counts(s, in, q)                                                \
    do {                                                                       \
        futoin_sync_stats st_ = stats(s);                                      \
        cr_assert_eq(st_.inside, (size_t)(in), "inside %zu, want %d",          \
                     st_.inside, (int)(in));                                   \
        cr_assert_eq(st_.queued, (size_t)(q), "queued %zu, want %d",           \
                     st_.queued, (int)(q));                                    \
    } while (0)

enum kind
{
    K_MUTEX,
    K_THROTTLE,
    K_LIMITER
};
static const char* const kind_name[] = {"mutex", "throttle", "limiter"};

/* The period of make()'s Throttle. On the virtual clock no tick comes
 * between two steps of a test unless it advances the clock. */
#define THROTTLE_MS 200

static FutoInSync* make(enum kind k, size_t max, size_t max_queue)
{
    futoin_limiter_options o = FUTOIN_LIMITER_OPTIONS_INIT;
    switch (k) {
    case K_MUTEX:
        return futoin_mutex_new(max, max_queue);
    case K_THROTTLE:
        return futoin_throttle_new(T, max, THROTTLE_MS, max_queue);
    default:
        o.concurrent = max;
        o.max_queue = max_queue;
        o.rate = 1000;
        o.period_ms = 10;
        return futoin_limiter_new(T, &o);
    }
}

/* Each free function refuses (EINVAL) an object of another kind. */
static void destroy(FutoInSync* s)
{
    int rc = futoin_mutex_free(s);
    if (rc == FUTOIN_EINVAL) {
        rc = futoin_throttle_free(s);
    }
    if (rc == FUTOIN_EINVAL) {
        rc = futoin_limiter_free(s);
    }
    cr_assert_eq(rc, FUTOIN_OK, "sync object not freed");
}

/* A contender: one root whose section waits inside until leave(). */
typedef struct who
{
    int id;
    FutoInAsyncSteps* root;
    FutoInAsyncSteps* held;
    FutoInSync* sync;
} who;
static who W[8];

static const char* info_of(FutoInAsyncSteps* as)
{
    const char* s = API(as)->stateVariable(as, NULL, "error_info", NULL, NULL);
    return s ? s : "";
}
static void unh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("%d unhandled %s (%s)", ((who*)d)->id, code, info_of(as));
}
static void sec_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    who* w = d;
    tr("%d in", w->id);
    w->held = as;
    API(as)->waitExternal(as);
}
static void sec_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("%d onerror %s", ((who*)d)->id, code);
}
static void after(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%d after", ((who*)d)->id);
}

static void start_root(int i, FutoInSync* s,
                       FutoInAsyncSteps_execute_callback sec)
{
    who* w = &W[i];
    w->id = i;
    w->held = NULL;
    w->sync = s;
    w->root = futoin_root_new(T);
    API(w->root)->addSync(w->root, s, w, sec, sec_eh);
    API(w->root)->add(w->root, w, after, NULL);
    API(w->root)->execute(w->root, w, unh);
}
static void start(int i, FutoInSync* s)
{
    start_root(i, s, sec_wait);
}

static void leave(int i)
{
    FutoInAsyncSteps* h = W[i].held;
    cr_assert_not_null(h, "%d is not inside", i);
    W[i].held = NULL;
    tr("%d exit", i);
    SUCCESS0(h);
}

/* Run until a queued contender got in: what is due now, then, for a
 * Throttle, the clock moves tick by tick until one lets it in. A contender
 * that never gets in fails the test when no timer is left. */
static void pump_until_in(int i)
{
    pump();
    while (!W[i].held) {
        cr_assert(advance_to_next(), "%d never gets in: no timer is pending", i);
    }
}

static void free_roots(int n)
{
    for (int i = 0; i < n; ++i) {
        if (W[i].root) {
            API(W[i].root)->free(W[i].root);
            W[i].root = NULL;
        }
    }
}

/* ---- values pass through the section (§1.11.3) -------------------------- */

static void give(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs out;
    memset(&out, 0, sizeof(out));
    set_i64(&out, 0, 7);
    set_str(&out, 1, "seven");
    API(as)->success(as, &out);
}
static void sec_args(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("section got %lld %s %d", a->arg0.type ? (long long)a->arg0.i64 : -1,
       a->arg1.type ? a->arg1.cstr : "-", a->arg2.type != NULL);
    succeed_i64(as, 2, 70, 71);
}
static void take(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("after got %lld %lld %d", a->arg0.type ? (long long)a->arg0.i64 : -1,
       a->arg1.type ? (long long)a->arg1.i64 : -1, a->arg2.type != NULL);
}
static void run_args_root(FutoInAsyncSteps* as, FutoInSync* s)
{
    API(as)->add(as, NULL, give, NULL);
    API(as)->addSync(as, s, NULL, sec_args, NULL);
    API(as)->add(as, NULL, take, NULL);
    API(as)->execute(as, NULL, on_unhandled);
}

Test(sync, values_reach_the_section_and_the_step_after)
{
    for (int k = K_MUTEX; k <= K_LIMITER; ++k) {
        FutoInSync* s = make((enum kind)k, 1, FUTOIN_UNLIMITED);
        FutoInAsyncSteps* as = futoin_root_new(T);

        /* uncontended: the object lets the flow in at once */
        trace_len = 0;
        trace_buf[0] = 0;
        run_args_root(as, s);
        drive();
        assert_trace("section got 7 seven 0\nafter got 70 71 0\n");

        /* contended: the flow waits in the queue first; the values it
         * brought are kept for the section meanwhile */
        trace_len = 0;
        trace_buf[0] = 0;
        if (k == K_THROTTLE) {
            /* use up the period (max 1): the next entry waits a tick */
            size_t periods = stats(s).periods;
            run_args_root(as, s);
            pump();
            trace_len = 0;
            trace_buf[0] = 0;
            run_args_root(as, s); /* root reusable once finished */
            pump();
            cr_assert_eq(stats(s).periods, periods, "a tick came without the clock");
            cr_assert_eq(stats(s).queued, 1, "%s", kind_name[k]);
        } else {
            start(0, s);
            pump();
            run_args_root(as, s);
            pump();
            cr_assert_eq(stats(s).queued, 1, "%s", kind_name[k]);
            leave(0);
        }
        drive();
        if (k == K_THROTTLE) {
            assert_trace("section got 7 seven 0\nafter got 70 71 0\n");
        } else {
            assert_trace("0 in\n0 exit\n0 after\n"
                         "section got 7 seven 0\nafter got 70 71 0\n");
        }
        assert_counts(s, 0, 0);
        API(as)->free(as);
        free_roots(1);
        destroy(s);
    }
}

/* ---- §2.3: five contenders on Mutex(2), FIFO ---------------------------- */

Test(sync, mutex2_five_contenders_enter_in_fifo_order)
{
    FutoInSync* m = futoin_mutex_new(2, FUTOIN_UNLIMITED);
    for (int i = 0; i < 5; ++i) {
        start(i, m);
    }
    pump();
    assert_trace("0 in\n1 in\n");
    assert_counts(m, 2, 3);

    leave(1); /* the head of the queue takes the room, not a newcomer */
    pump();
    leave(0);
    pump();
    assert_counts(m, 2, 1);
    leave(3);
    pump();
    leave(2);
    pump();
    leave(4);
    pump();
    assert_trace("0 in\n1 in\n"
                 "1 exit\n1 after\n2 in\n"
                 "0 exit\n0 after\n3 in\n"
                 "3 exit\n3 after\n4 in\n"
                 "2 exit\n2 after\n"
                 "4 exit\n4 after\n");
    assert_counts(m, 0, 0);
    cr_assert_eq(stats(m).entries, 5);
    free_roots(5);
    cr_assert_eq(futoin_mutex_free(m), FUTOIN_OK);
}

/* ---- §1.11.4: re-entrance by the same flow is a no-op ------------------- */

static FutoInSync* reent_sync;
static void reent_inner(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    futoin_sync_stats st = stats(reent_sync);
    tr("inner in: inside=%zu queued=%zu entries=%zu", st.inside, st.queued,
       st.entries);
    succeed_i64(as, 1, 42, 0);
}
static void reent_inner_after(FutoInAsyncSteps* as, void* d,
                              const FutoInArgs* a)
{
    tr("inner after %lld", (long long)a->arg0.i64);
}
static void reent_outer(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("outer in");
    API(as)->addSync(as, reent_sync, NULL, reent_inner, NULL);
    API(as)->add(as, NULL, reent_inner_after, NULL);
}
static void reent_done(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    futoin_sync_stats st = stats(reent_sync);
    tr("outer done: inside=%zu", st.inside);
}

Test(sync, reentrance_by_the_same_flow_is_a_noop)
{
    for (int k = K_MUTEX; k <= K_LIMITER; ++k) {
        FutoInAsyncSteps* as = futoin_root_new(T);
        /* max 1 and no queue: anything but a no-op would be rejected */
        reent_sync = make((enum kind)k, 1, 0);
        if (k == K_LIMITER) {
            futoin_limiter_options o = FUTOIN_LIMITER_OPTIONS_INIT;
            o.period_ms = 10; /* rate 1, burst 0 */
            destroy(reent_sync);
            reent_sync = futoin_limiter_new(T, &o);
        }
        trace_len = 0;
        trace_buf[0] = 0;
        API(as)->addSync(as, reent_sync, NULL, reent_outer, NULL);
        API(as)->add(as, NULL, reent_done, NULL);
        API(as)->execute(as, NULL, on_unhandled);
        drive();
        assert_trace("outer in\n"
                     "inner in: inside=1 queued=0 entries=1\n"
                     "inner after 42\n"
                     "outer done: inside=0\n");
        cr_assert_eq(stats(reent_sync).rejected, 0, "%s", kind_name[k]);
        API(as)->free(as);
        destroy(reent_sync);
    }
}

/* ---- §1.11.4: parallel branches are separate flows ---------------------- */

static FutoInSync* par_sync;
static void branch_sync(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->addSync(as, par_sync, d, sec_wait, sec_eh);
    API(as)->add(as, d, after, NULL);
}
static void parent_section(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* p;
    tr("parent in");
    p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, &W[1], branch_sync, NULL);
    API(p)->add(p, &W[2], branch_sync, NULL);
}
static void parent_after(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("parent out: inside=%zu", stats(par_sync).inside);
}

/* The parent holds one of two places. If the branches inherited its lock
 * they would both walk in; as separate flows, one takes the second place
 * and the other waits for it. */
Test(sync, parallel_branches_do_not_inherit_the_parent_lock)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    par_sync = futoin_mutex_new(2, FUTOIN_UNLIMITED);
    W[1].id = 1;
    W[2].id = 2;
    API(as)->addSync(as, par_sync, NULL, parent_section, NULL);
    API(as)->add(as, NULL, parent_after, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    pump();
    assert_trace("parent in\n1 in\n");
    assert_counts(par_sync, 2, 1);
    leave(1);
    pump();
    leave(2);
    pump();
    assert_trace("parent in\n1 in\n"
                 "1 exit\n1 after\n2 in\n"
                 "2 exit\n2 after\n"
                 "parent out: inside=0\n");
    API(as)->free(as);
    cr_assert_eq(futoin_mutex_free(par_sync), FUTOIN_OK);
}

static void branch_try(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->addSync(as, par_sync, d, sec_wait, sec_eh);
}
static void branch_try_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("branch: %s (%s)", code, info_of(as));
    SUCCESS0(as);
}
static void parent_try(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, NULL);
    tr("parent in");
    API(p)->add(p, &W[1], branch_try, branch_try_eh);
}

/* A branch of a flow that holds Mutex(1) is another flow: it does not walk
 * in, it is refused (no queue allowed) instead of deadlocking the test. */
Test(sync, branch_of_a_holder_is_refused_not_let_in)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    par_sync = futoin_mutex_new(1, 0);
    W[1].id = 1;
    API(as)->addSync(as, par_sync, NULL, parent_try, NULL);
    API(as)->add(as, NULL, parent_after, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    drive();
    assert_trace("parent in\n"
                 "branch: DefenseRejected (Mutex: queue limit 0 reached)\n"
                 "parent out: inside=0\n");
    API(as)->free(as);
    cr_assert_eq(futoin_mutex_free(par_sync), FUTOIN_OK);
}

/* Two branches of one root on Mutex(1), sections that wait a loop turn:
 * without the mutex they would interleave (a in, b in, a out, b out). */
typedef struct named_wait
{
    const char* name;
    FutoInAsyncSteps* as;
} named_wait;
static named_wait NW[2];
static void resume_named(void* d)
{
    named_wait* n = d;
    tr("%s out", n->name);
    SUCCESS0(n->as);
}
static void sec_named(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    named_wait* n = d;
    tr("%s in", n->name);
    n->as = as;
    API(as)->waitExternal(as);
    API(as)->sched_immediate(as, n, resume_named);
}
static void branch_named(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->addSync(as, par_sync, d, sec_named, NULL);
}

Test(sync, parallel_branches_exclude_each_other)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInAsyncSteps* p;
    par_sync = futoin_mutex_new(1, FUTOIN_UNLIMITED);
    NW[0].name = "a";
    NW[1].name = "b";
    p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, &NW[0], branch_named, NULL);
    API(p)->add(p, &NW[1], branch_named, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    drive();
    assert_trace("a in\na out\nb in\nb out\n");
    API(as)->free(as);
    cr_assert_eq(futoin_mutex_free(par_sync), FUTOIN_OK);
}

/* ---- §1.11.6: queue limits ---------------------------------------------- */

Test(sync, queue_limit_gives_defense_rejected_with_error_info)
{
    static const char* const expect[] = {
            "Mutex: queue limit 2 reached",
            "Throttle: queue limit 2 reached",
            "Limiter: queue limit 2 reached (concurrent 1)",
    };
    for (int k = K_MUTEX; k <= K_LIMITER; ++k) {
        FutoInSync* s = make((enum kind)k, 1, 2);
        char want[256];
        snprintf(want, sizeof(want), "3 unhandled DefenseRejected (%s)\n", expect[k]);
        trace_len = 0;
        trace_buf[0] = 0;
        /* Each contender runs up to its wait before the next starts: which
         * one is over the limit must not depend on where a time slice
         * ends (under valgrind a slice can end after a few callbacks, and
         * once root 1, not root 3, was the one rejected). What is due now
         * only; a Throttle lets 1 in only at its next tick, which the clock
         * does not reach here. */
        for (int i = 0; i < 4; ++i) {
            start(i, s);
            pump();
        }
        cr_assert_eq(stats(s).periods, 0, "a tick came without the clock");
        cr_assert(strstr(trace_buf, "0 in\n") && strstr(trace_buf, want)
                      && trace_len == strlen("0 in\n") + strlen(want),
                  "trace was:\n%s", trace_buf);
        assert_counts(s, 1, 2);
        cr_assert_eq(stats(s).rejected, 1);
        leave(0);
        pump_until_in(1); /* a Throttle lets it in at the next tick */
        leave(1);
        pump_until_in(2);
        leave(2);
        drive();
        assert_counts(s, 0, 0);
        free_roots(4);
        destroy(s);
    }
}

/* ---- cancel, error and timeout never leak -------------------------------- */

static void sec_wait_cancellable(FutoInAsyncSteps* as, void* d,
                                 const FutoInArgs* a);
static void on_sec_cancel(FutoInAsyncSteps* as, void* d)
{
    tr("%d section cancelled", ((who*)d)->id);
}
static void sec_wait_cancellable(FutoInAsyncSteps* as, void* d,
                                 const FutoInArgs* a)
{
    sec_wait(as, d, a);
    API(as)->setCancel(as, d, on_sec_cancel);
}

Test(sync, cancel_while_holding_releases_to_the_next)
{
    for (int k = K_MUTEX; k <= K_LIMITER; k += 2) { /* holders: Mutex, Limiter */
        FutoInSync* s = make((enum kind)k, 1, FUTOIN_UNLIMITED);
        trace_len = 0;
        trace_buf[0] = 0;
        start_root(0, s, sec_wait_cancellable);
        start(1, s);
        pump();
        assert_counts(s, 1, 1);
        API(W[0].root)->cancel(W[0].root);
        pump();
        assert_counts(s, 1, 0);
        leave(1);
        pump();
        assert_trace("0 in\n0 section cancelled\n1 in\n1 exit\n1 after\n");
        assert_counts(s, 0, 0);
        free_roots(2);
        destroy(s);
    }
}

Test(sync, cancel_while_queued_frees_the_queue_slot)
{
    for (int k = K_MUTEX; k <= K_LIMITER; k += 2) {
        FutoInSync* s = make((enum kind)k, 1, 1);
        trace_len = 0;
        trace_buf[0] = 0;
        start(0, s);
        start(1, s);
        pump();
        assert_counts(s, 1, 1);
        API(W[1].root)->cancel(W[1].root);
        assert_counts(s, 1, 0);
        start(2, s); /* the slot is free again: queued, not rejected */
        pump();
        assert_counts(s, 1, 1);
        leave(0);
        pump();
        leave(2);
        pump();
        assert_trace("0 in\n0 exit\n0 after\n2 in\n2 exit\n2 after\n");
        assert_counts(s, 0, 0);
        cr_assert_eq(stats(s).rejected, 0);
        free_roots(3);
        destroy(s);
    }
}

/* The holder leaves and lets the next one in, which is cancelled before it
 * ran again (0's next step frees its root): its cancel handler finds its
 * queue record already recycled, its unlock passes the place on to 2. */
static FutoInSync* lbr_sync;
static void after_free_1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    futoin_sync_stats st = stats(lbr_sync);
    tr("0 after: inside=%zu queued=%zu", st.inside, st.queued);
    API(W[1].root)->free(W[1].root);
    W[1].root = NULL;
    st = stats(lbr_sync);
    tr("1 freed: inside=%zu queued=%zu", st.inside, st.queued);
}

Test(sync, cancel_after_being_let_in_but_before_running)
{
    FutoInSync* m = lbr_sync = futoin_mutex_new(1, FUTOIN_UNLIMITED);
    W[0].id = 0;
    W[0].root = futoin_root_new(T);
    API(W[0].root)->addSync(W[0].root, m, &W[0], sec_wait, NULL);
    API(W[0].root)->add(W[0].root, &W[0], after_free_1, NULL);
    API(W[0].root)->execute(W[0].root, &W[0], unh);
    start(1, m);
    start(2, m);
    pump();
    leave(0);
    pump();
    leave(2);
    pump();
    /* at "0 after", 1 was let in (inside 1) and 2 still queued */
    assert_trace("0 in\n0 exit\n0 after: inside=1 queued=1\n"
                 "1 freed: inside=1 queued=0\n"
                 "2 in\n2 exit\n2 after\n");
    assert_counts(m, 0, 0);
    free_roots(3);
    cr_assert_eq(futoin_mutex_free(m), FUTOIN_OK);
}

static void sec_fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%d in, fails", ((who*)d)->id);
    ERROR(as, "Boom");
}

Test(sync, error_in_the_section_releases)
{
    for (int k = K_MUTEX; k <= K_LIMITER; ++k) {
        FutoInSync* s = make((enum kind)k, 1, FUTOIN_UNLIMITED);
        trace_len = 0;
        trace_buf[0] = 0;
        start_root(0, s, sec_fail);
        start(1, s);
        pump_until_in(1);
        assert_trace("0 in, fails\n0 onerror Boom\n0 unhandled Boom ()\n1 in\n");
        assert_counts(s, 1, 0);
        leave(1);
        drive();
        assert_counts(s, 0, 0);
        free_roots(2);
        destroy(s);
    }
}

/* A step around addSync() times out while its flow is queued: the flow
 * leaves the queue (the Mutex(1, 1) takes another at once) and the holder
 * is not disturbed. */
static FutoInSync* to_sync;
static void holder_done(void* d)
{
    leave(0);
}
static void sec_hold_100ms(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    sec_wait(as, d, a);
    API(as)->sched_deferred(as, 100, NULL, holder_done);
}
static void outer_with_timeout(FutoInAsyncSteps* as, void* d,
                               const FutoInArgs* a)
{
    API(as)->setTimeout(as, 20);
    API(as)->addSync(as, to_sync, d, sec_wait, sec_eh);
}
static void sec_pass(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%d in", ((who*)d)->id);
}
static void outer_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    futoin_sync_stats st = stats(to_sync);
    tr("1 outer onerror %s: inside=%zu queued=%zu", code, st.inside, st.queued);
    /* there is room in the queue again: 2 is queued, not rejected */
    start_root(2, to_sync, sec_pass);
    SUCCESS0(as);
}

Test(sync, timeout_while_queued_releases_the_queue_slot)
{
    FutoInAsyncSteps* as;
    to_sync = futoin_mutex_new(1, 1);
    start_root(0, to_sync, sec_hold_100ms);
    W[1].id = 1;
    as = W[1].root = futoin_root_new(T);
    API(as)->add(as, &W[1], outer_with_timeout, outer_eh);
    API(as)->add(as, &W[1], after, NULL);
    API(as)->execute(as, &W[1], unh);
    /* 1 cannot be let in before 0 leaves (after 100 ms), so it is queued
     * when its 20 ms run out: no pump-and-check here, which a slow run
     * (valgrind) could turn into a race with the timeout */
    drive();
    assert_trace("0 in\n"
                 "1 outer onerror Timeout: inside=1 queued=0\n"
                 "1 after\n"
                 "0 exit\n0 after\n"
                 "2 in\n2 after\n");
    assert_counts(to_sync, 0, 0);
    cr_assert_eq(stats(to_sync).rejected, 0);
    free_roots(3);
    cr_assert_eq(futoin_mutex_free(to_sync), FUTOIN_OK);
}

/* ---- §2.4: the throttle's periods and its clock -------------------------- */

static FutoInSync* thr;
static void sec_period(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    futoin_sync_stats st = stats(thr);
    tr("%d in period %zu", ((who*)d)->id, st.periods);
}

Test(sync, throttle_groups_entries_by_period_and_stops_when_idle)
{
    uint64_t elapsed;
    futoin_sync_stats st;
    thr = futoin_throttle_new(T, 2, 30, FUTOIN_UNLIMITED);
    for (int i = 0; i < 7; ++i) {
        start_root(i, thr, sec_period);
    }
    /* returns only once the clock stopped: no busy loop, no armed timer */
    drive();
    elapsed = futoin_tool_now(T);
    /* at most 2 per period */
    assert_trace("0 in period 0\n0 after\n1 in period 0\n1 after\n"
                 "2 in period 1\n2 after\n3 in period 1\n3 after\n"
                 "4 in period 2\n4 after\n5 in period 2\n5 after\n"
                 "6 in period 3\n6 after\n");
    st = stats(thr);
    cr_assert_eq(st.timer_active, 0);
    cr_assert_eq(st.periods, 4, "one idle tick after the last entry");
    cr_assert_eq(st.timer_starts, 4);
    cr_assert_eq(st.entries, 7);
    cr_assert_eq(st.inside + st.queued + st.period_entries, 0);
    /* 3 ticks before the 7th entry, and the one that found nobody */
    cr_assert_eq(elapsed, 4 * 30, "elapsed %llu ms", (unsigned long long)elapsed);
    free_roots(7);

    /* The next entry after idling restarts the clock. */
    trace_len = 0;
    trace_buf[0] = 0;
    start_root(0, thr, sec_period);
    st = stats(thr);
    cr_assert_eq(st.timer_active, 0); /* not before the flow runs */
    pump();
    st = stats(thr);
    cr_assert_eq(st.timer_starts, 5);
    /* running until the tick that ends the entry's period finds nobody
     * queued */
    cr_assert_eq(st.timer_active, 1);
    cr_assert_eq(st.periods, 4);
    drive();
    assert_trace("0 in period 4\n0 after\n");
    st = stats(thr);
    cr_assert_eq(st.timer_active, 0);
    cr_assert_eq(st.periods, 5);
    cr_assert_eq(futoin_tool_now(T), elapsed + 30, "one period after the entry");
    free_roots(1);
    cr_assert_eq(futoin_throttle_free(thr), FUTOIN_OK);
}

Test(sync, idle_throttle_keeps_no_timer)
{
    thr = futoin_throttle_new(T, 5, 20, FUTOIN_UNLIMITED);
    cr_assert_eq(stats(thr).timer_active, 0);
    /* an idle Throttle does not keep the loop running */
    cr_assert_eq(futoin_tool_run_nowait(T), 0);
    start_root(0, thr, sec_period);
    drive();
    cr_assert_eq(stats(thr).timer_active, 0);
    cr_assert_eq(futoin_tool_run_nowait(T), 0);
    free_roots(1);
    cr_assert_eq(futoin_throttle_free(thr), FUTOIN_OK);
}

/* Freeing the object while its clock runs stops the clock. */
Test(sync, throttle_free_stops_a_running_clock)
{
    thr = futoin_throttle_new(T, 5, 10000, FUTOIN_UNLIMITED);
    start_root(0, thr, sec_period);
    pump();
    cr_assert_eq(stats(thr).timer_active, 1);
    cr_assert_eq(futoin_throttle_free(thr), FUTOIN_OK);
    drive(); /* returns at once: no timer left */
    free_roots(1);
}

/* ---- §2.5: Limiter ------------------------------------------------------- */

Test(sync, limiter_rejects_a_second_concurrent_flow)
{
    futoin_limiter_options o;
    FutoInSync* l;
    cr_assert_eq(futoin_limiter_options_init(&o, FUTOIN_LIMITER_OPTIONS_VERSION),
                 FUTOIN_OK);
    o.rate = 100; /* only the concurrency limit matters here */
    o.period_ms = 10;
    l = futoin_limiter_new(T, &o);
    start(0, l);
    start(1, l);
    pump();
    assert_trace("0 in\n"
                 "1 unhandled DefenseRejected "
                 "(Limiter: queue limit 0 reached (concurrent 1))\n");
    leave(0);
    drive();
    start(2, l); /* the slot is free again */
    pump();
    leave(2);
    drive();
    assert_trace("0 in\n"
                 "1 unhandled DefenseRejected "
                 "(Limiter: queue limit 0 reached (concurrent 1))\n"
                 "0 exit\n0 after\n2 in\n2 exit\n2 after\n");
    assert_counts(l, 0, 0);
    cr_assert_eq(stats(l).rejected, 1);
    free_roots(3);
    cr_assert_eq(futoin_limiter_free(l), FUTOIN_OK);
}

static FutoInSync* lim;
static void sec_lim(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%d in period %zu", ((who*)d)->id, stats(lim).periods);
}
static void unh_lim(FutoInAsyncSteps* as, void* d, const char* code)
{
    futoin_sync_stats st = stats(lim);
    tr("%d unhandled %s (%s) inside=%zu queued=%zu", ((who*)d)->id, code,
       info_of(as), st.inside, st.queued);
}

/* rate 2 per period, burst 1: two come in, one waits for the next period
 * (holding its concurrency slot), the fourth is rejected. */
Test(sync, limiter_rate_and_burst)
{
    futoin_limiter_options o = FUTOIN_LIMITER_OPTIONS_INIT;
    o.concurrent = 10;
    o.rate = 2;
    o.period_ms = 20;
    o.burst = 1;
    lim = futoin_limiter_new(T, &o);
    for (int i = 0; i < 4; ++i) {
        W[i].id = i;
        W[i].root = futoin_root_new(T);
        API(W[i].root)->addSync(W[i].root, lim, &W[i], sec_lim, NULL);
        API(W[i].root)->add(W[i].root, &W[i], after, NULL);
        API(W[i].root)->execute(W[i].root, &W[i], unh_lim);
    }
    drive();
    assert_trace("0 in period 0\n0 after\n1 in period 0\n1 after\n"
                 "3 unhandled DefenseRejected (Limiter: burst limit 1 reached "
                 "(rate 2 per 20 ms)) inside=1 queued=1\n"
                 "2 in period 1\n2 after\n");
    assert_counts(lim, 0, 0);
    cr_assert_eq(stats(lim).entries, 3);
    cr_assert_eq(stats(lim).rejected, 1);
    cr_assert_eq(stats(lim).timer_active, 0);
    free_roots(4);
    cr_assert_eq(futoin_limiter_free(lim), FUTOIN_OK);
}

Test(sync, limiter_options_init_agrees_with_the_macro)
{
    futoin_limiter_options a = FUTOIN_LIMITER_OPTIONS_INIT;
    futoin_limiter_options b;
    memset(&b, 0xA5, sizeof(b));
    cr_assert_eq(futoin_limiter_options_init(&b, FUTOIN_LIMITER_OPTIONS_VERSION),
                 FUTOIN_OK);
    cr_assert_eq(a.version, b.version);
    cr_assert_eq(a.concurrent, b.concurrent);
    cr_assert_eq(a.max_queue, b.max_queue);
    cr_assert_eq(a.rate, b.rate);
    cr_assert_eq(a.period_ms, b.period_ms);
    cr_assert_eq(a.burst, b.burst);
    /* the spec's defaults */
    cr_assert_eq(b.concurrent, 1);
    cr_assert_eq(b.max_queue, 0);
    cr_assert_eq(b.rate, 1);
    cr_assert_eq(b.period_ms, 1000);
    cr_assert_eq(b.burst, 0);
    cr_assert_eq(futoin_limiter_options_init(&b, 99), FUTOIN_EVERSION);
    cr_assert_eq(futoin_limiter_options_init(NULL, 1), FUTOIN_EINVAL);
}

Test(sync, constructors_reject_bad_arguments)
{
    futoin_limiter_options o = FUTOIN_LIMITER_OPTIONS_INIT;
    FutoInSync* l;
    futoin_sync_stats st;
    cr_assert_null(futoin_mutex_new(0, 1));
    cr_assert_null(futoin_throttle_new(NULL, 1, 10, 1));
    cr_assert_null(futoin_throttle_new(T, 0, 10, 1));
    cr_assert_null(futoin_throttle_new(T, 1, 0, 1));
    cr_assert_null(futoin_limiter_new(NULL, &o));
    o.version = 2;
    cr_assert_null(futoin_limiter_new(T, &o));
    o.version = FUTOIN_LIMITER_OPTIONS_VERSION;
    o.concurrent = 0;
    cr_assert_null(futoin_limiter_new(T, &o));
    o.concurrent = 1;
    o.rate = 0;
    cr_assert_null(futoin_limiter_new(T, &o));
    o.rate = 1;
    o.period_ms = 0;
    cr_assert_null(futoin_limiter_new(T, &o));
    l = futoin_limiter_new(T, NULL); /* the defaults */
    cr_assert_not_null(l);
    memset(&st, 0, sizeof(st));
    st.version = 7;
    cr_assert_eq(futoin_sync_get_stats(l, &st), FUTOIN_EVERSION);
    cr_assert_eq(futoin_sync_get_stats(NULL, &st), FUTOIN_EINVAL);
    cr_assert_eq(futoin_limiter_free(l), FUTOIN_OK);
}

/* ---- freeing an object in use is refused -------------------------------- */

Test(sync, free_while_in_use_is_refused)
{
    FutoInSync* m = futoin_mutex_new(1, FUTOIN_UNLIMITED);
    FutoInSync* t = futoin_throttle_new(T, 1, 10, FUTOIN_UNLIMITED);
    FutoInSync* l = make(K_LIMITER, 1, FUTOIN_UNLIMITED);
    start(0, m);
    start(1, t);
    start(2, t); /* queued until the next tick */
    start(3, l);
    pump();
    cr_assert_eq(futoin_mutex_free(m), FUTOIN_EBUSY); /* held; on stderr */
    cr_assert_eq(futoin_throttle_free(t), FUTOIN_EBUSY);
    cr_assert_eq(futoin_limiter_free(l), FUTOIN_EBUSY);
    cr_assert_eq(misuse_seen, 2, "Throttle and Limiter report to the tool");
    /* the wrong kind, and NULL */
    cr_assert_eq(futoin_mutex_free(t), FUTOIN_EINVAL);
    cr_assert_eq(futoin_throttle_free(l), FUTOIN_EINVAL);
    cr_assert_eq(futoin_limiter_free(m), FUTOIN_EINVAL);
    cr_assert_eq(futoin_mutex_free(NULL), FUTOIN_OK);
    leave(0);
    leave(1);
    leave(3);
    pump_until_in(2);
    leave(2);
    drive();
    free_roots(4);
    cr_assert_eq(futoin_mutex_free(m), FUTOIN_OK);
    cr_assert_eq(futoin_throttle_free(t), FUTOIN_OK);
    cr_assert_eq(futoin_limiter_free(l), FUTOIN_OK);
}

/* ---- a sync object written by someone else (§2.7.3) ---------------------- */

typedef struct foreign_sync
{
    FutoInSync sync;
    int locks;
    int unlocks;
    int own_step; /* lock() adds a waiting step of its own */
    FutoInAsyncSteps* waiting;
} foreign_sync;

static void f_wait_cancel(FutoInAsyncSteps* as, void* d)
{
    tr("foreign wait cancelled");
    ((foreign_sync*)d)->waiting = NULL;
}
static void f_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    foreign_sync* f = d;
    tr("foreign waits (args %d)", a->arg0.type != NULL);
    f->waiting = as;
    API(as)->waitExternal(as);
    API(as)->setCancel(as, f, f_wait_cancel);
}
static void f_lock(FutoInAsyncSteps* bsi, FutoInSync* sync)
{
    foreign_sync* f = (foreign_sync*)sync;
    ++f->locks;
    tr("foreign lock");
    if (f->own_step) {
        API(bsi)->add(bsi, f, f_wait, NULL);
    }
}
static void f_unlock(FutoInAsyncSteps* bsi, FutoInSync* sync)
{
    foreign_sync* f = (foreign_sync*)sync;
    ++f->unlocks;
    tr("foreign unlock");
}
static const FutoInSyncAPI foreign_api = {{{.lock = f_lock, .unlock = f_unlock}}};

static void sec_args_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("section onerror %s", code);
}
static void sec_args_fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("section got %lld", (long long)a->arg0.i64);
    ERROR(as, "Boom");
}
static void sec_args_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("section got %lld, waits", (long long)a->arg0.i64);
    API(as)->waitExternal(as);
}

Test(sync, foreign_sync_object_works_with_add_sync)
{
    foreign_sync f = {{&foreign_api}, 0, 0, 0, NULL};
    FutoInAsyncSteps* as = futoin_root_new(T);

    /* success: values in and out, one lock, one unlock */
    run_args_root(as, &f.sync);
    drive();
    assert_trace("foreign lock\nsection got 7 seven 0\nforeign unlock\n"
                 "after got 70 71 0\n");

    /* error in the section */
    trace_len = 0;
    trace_buf[0] = 0;
    API(as)->add(as, NULL, give, NULL);
    API(as)->addSync(as, &f.sync, NULL, sec_args_fail, sec_args_eh);
    API(as)->execute(as, NULL, on_unhandled);
    drive();
    assert_trace("foreign lock\nsection got 7\nsection onerror Boom\n"
                 "foreign unlock\nunhandled Boom\n");

    /* cancel inside the section */
    trace_len = 0;
    trace_buf[0] = 0;
    API(as)->add(as, NULL, give, NULL);
    API(as)->addSync(as, &f.sync, NULL, sec_args_wait, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    pump();
    API(as)->cancel(as);
    assert_trace("foreign lock\nsection got 7, waits\nforeign unlock\n");

    /* a lock() that waits in a step of its own: the values still reach the
     * section; then the same, cancelled while the object makes it wait */
    f.own_step = 1;
    trace_len = 0;
    trace_buf[0] = 0;
    run_args_root(as, &f.sync);
    pump();
    cr_assert_not_null(f.waiting);
    SUCCESS0(f.waiting);
    f.waiting = NULL;
    drive();
    API(as)->add(as, NULL, give, NULL);
    API(as)->addSync(as, &f.sync, NULL, sec_args_wait, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    pump();
    API(as)->cancel(as);
    assert_trace("foreign lock\nforeign waits (args 0)\n"
                 "section got 7 seven 0\nforeign unlock\nafter got 70 71 0\n"
                 "foreign lock\nforeign waits (args 0)\n"
                 "foreign wait cancelled\nforeign unlock\n");
    cr_assert_eq(f.locks, 5);
    cr_assert_eq(f.unlocks, 5);
    API(as)->free(as);
}

/* ---- our objects with a handle that is not ours ------------------------- */

/* A stand-in for another FTN12 implementation: only the slots a sync
 * object may use, each logging what it was asked. */
typedef struct fake_as
{
    FutoInAsyncSteps bsi;
    ptrdiff_t id;
    FutoInAsyncSteps_execute_callback f;
    void* f_data;
    FutoInAsyncSteps_cancel_callback ch;
    void* ch_data;
    int waits;
    int successes;
    char error[128];
} fake_as;

static void fk_add(FutoInAsyncSteps* bsi, void* data,
                   FutoInAsyncSteps_execute_callback f,
                   FutoInAsyncSteps_error_callback eh)
{
    fake_as* a = (fake_as*)bsi;
    a->f = f;
    a->f_data = data;
}
static void fk_success(FutoInAsyncSteps* bsi, FutoInArgs* args)
{
    ++((fake_as*)bsi)->successes;
}
static void fk_error(FutoInAsyncSteps* bsi, const char* code, const char* info)
{
    fake_as* a = (fake_as*)bsi;
    snprintf(a->error, sizeof(a->error), "%s: %s", code, info ? info : "");
}
static void fk_wait(FutoInAsyncSteps* bsi)
{
    ++((fake_as*)bsi)->waits;
}
static void fk_cancel(FutoInAsyncSteps* bsi, void* data,
                      FutoInAsyncSteps_cancel_callback ch)
{
    fake_as* a = (fake_as*)bsi;
    a->ch = ch;
    a->ch_data = data;
}
static ptrdiff_t fk_root_id(FutoInAsyncSteps* bsi)
{
    return ((fake_as*)bsi)->id;
}
static const FutoInAsyncStepsAPI fake_api = {{{
        .add = fk_add,
        .success = fk_success,
        .handle_error = fk_error,
        .setCancel = fk_cancel,
        .waitExternal = fk_wait,
        .rootId = fk_root_id,
}}};

/* As the wait step, run by the other implementation. */
static void fk_run_step(fake_as* a)
{
    FutoInArgs none;
    memset(&none, 0, sizeof(none));
    cr_assert_not_null(a->f);
    a->f(&a->bsi, a->f_data, &none);
}

Test(sync, foreign_handles_are_told_apart_by_root_id)
{
    FutoInSync* m = futoin_mutex_new(1, 1);
    fake_as A = {{&fake_api}, 1}, B = {{&fake_api}, 2}, C = {{&fake_api}, 3},
            D = {{&fake_api}, 4};

    m->api->lock(&A.bsi, m);
    cr_assert_null(A.f, "let in at once");
    m->api->lock(&A.bsi, m); /* same root: re-entrance */
    cr_assert_null(A.f);
    assert_counts(m, 1, 0);

    m->api->lock(&B.bsi, m); /* another root: must wait */
    fk_run_step(&B);
    cr_assert_eq(B.waits, 1);
    cr_assert_not_null(B.ch);
    assert_counts(m, 1, 1);

    m->api->lock(&C.bsi, m); /* the queue of 1 is full */
    cr_assert_str_eq(C.error, "DefenseRejected: Mutex: queue limit 1 reached");
    m->api->unlock(&C.bsi, m); /* C holds nothing: a no-op */
    assert_counts(m, 1, 1);

    m->api->unlock(&A.bsi, m);
    cr_assert_eq(B.successes, 0, "A still holds it once");
    m->api->unlock(&A.bsi, m);
    cr_assert_eq(B.successes, 1, "B is let in");
    assert_counts(m, 1, 0);

    /* D queues and gets the node B had; B's cancel handler, called late
     * (B was cancelled before it ran again), must leave D alone */
    m->api->lock(&D.bsi, m);
    fk_run_step(&D);
    assert_counts(m, 1, 1);
    B.ch(&B.bsi, B.ch_data);
    assert_counts(m, 1, 1);
    /* D is cancelled while queued */
    D.ch(&D.bsi, D.ch_data);
    assert_counts(m, 1, 0);
    m->api->unlock(&D.bsi, m);
    cr_assert_eq(D.successes, 0);
    m->api->unlock(&B.bsi, m);
    assert_counts(m, 0, 0);
    cr_assert_eq(futoin_mutex_free(m), FUTOIN_OK);
}

/* ---- no allocation per lock/unlock in steady state ----------------------- */

static void resume_cb(void* d)
{
    SUCCESS0((FutoInAsyncSteps*)d);
}
static void alloc_section(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->waitExternal(as);
    API(as)->sched_immediate(as, as, resume_cb);
}
static void alloc_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    API(as)->addSync(as, (FutoInSync*)d, NULL, alloc_section, NULL);
}
/* Five roots, reused, each 20 contended sections. */
static void alloc_round(FutoInAsyncSteps** roots, FutoInSync* s)
{
    for (int i = 0; i < 5; ++i) {
        API(roots[i])->repeat(roots[i], s, 20, alloc_body, NULL);
        API(roots[i])->execute(roots[i], NULL, on_unhandled);
    }
    drive();
}

Test(sync, no_allocation_per_lock_unlock_in_steady_state)
{
    futoin_limiter_options o = FUTOIN_LIMITER_OPTIONS_INIT;
    FutoInAsyncSteps* roots[5];
    FutoInSync* objs[3];
    o.concurrent = 2;
    o.max_queue = FUTOIN_UNLIMITED;
    o.rate = 40;
    o.period_ms = 1;
    o.burst = FUTOIN_UNLIMITED;
    objs[0] = futoin_mutex_new(2, FUTOIN_UNLIMITED);
    objs[1] = futoin_throttle_new(T, 40, 1, FUTOIN_UNLIMITED);
    objs[2] = futoin_limiter_new(T, &o);
    for (int i = 0; i < 5; ++i) {
        roots[i] = futoin_root_new(T);
    }
    for (int k = 0; k < 3; ++k) {
        size_t allocs;
        futoin_sync_stats before, after_st;
        /* warm-up: engine pools past their quarantine, our pools at peak */
        for (int r = 0; r < 30; ++r) {
            alloc_round(roots, objs[k]);
        }
        before = stats(objs[k]);
#if FUTOIN_TEST_COUNT_MALLOC
        atomic_store(&n_alloc, 0);
        atomic_store(&counting, 1);
#endif
        for (int r = 0; r < 30; ++r) {
            alloc_round(roots, objs[k]);
        }
#if FUTOIN_TEST_COUNT_MALLOC
        atomic_store(&counting, 0);
        allocs = atomic_load(&n_alloc);
#else
        allocs = 0;
#endif
        after_st = stats(objs[k]);
        cr_assert_eq(after_st.entries - before.entries, 30 * 100, "%s",
                     kind_name[k]);
        cr_assert_eq(after_st.allocations, before.allocations,
                     "%s: its pools grew in steady state", kind_name[k]);
        cr_assert_eq(allocs, 0, "%s: %zu allocations for 3000 sections",
                     kind_name[k], allocs);
        if (k != 1) {
            cr_assert_gt(before.entries, 0);
        }
    }
    for (int i = 0; i < 5; ++i) {
        API(roots[i])->free(roots[i]);
    }
    cr_assert_eq(futoin_mutex_free(objs[0]), FUTOIN_OK);
    cr_assert_eq(futoin_throttle_free(objs[1]), FUTOIN_OK);
    cr_assert_eq(futoin_limiter_free(objs[2]), FUTOIN_OK);
}

/* ---- random leaves and cancels keep the books straight ------------------ */

#define STRESS_MAX 128
static who SW[STRESS_MAX];
static int stress_inside;
static unsigned stress_rng = 12345;

static unsigned rnd(unsigned n)
{
    stress_rng = stress_rng * 1103515245u + 12345u;
    return (stress_rng >> 16) % n;
}
static void stress_cancelled(FutoInAsyncSteps* as, void* d)
{
    who* w = d;
    w->held = NULL;
    --stress_inside;
}
static void stress_section(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    who* w = d;
    w->held = as;
    ++stress_inside;
    API(as)->waitExternal(as);
    API(as)->setCancel(as, w, stress_cancelled);
}
static void stress_unhandled(FutoInAsyncSteps* as, void* d, const char* code)
{
    cr_assert_str_eq(code, FUTOIN_ERR_DEFENSE_REJECTED);
}

/* Flows start, leave and are freed (cancelled wherever they are: queued,
 * just let in, inside) in random order. After every pass of the loop the
 * object agrees with the test about who is inside, and no flow waits while
 * there is room (no lost wake-up). */
static void stress(FutoInSync* s, size_t max, size_t max_queue, int nroots)
{
    memset(SW, 0, sizeof(SW));
    stress_inside = 0;
    for (int step = 0; step < 4000; ++step) {
        unsigned i = rnd((unsigned)nroots);
        who* w = &SW[i];
        if (rnd(3) == 0) {
            if (w->held) {
                FutoInAsyncSteps* h = w->held;
                w->held = NULL;
                --stress_inside;
                SUCCESS0(h);
            }
        } else {
            if (w->root) {
                API(w->root)->free(w->root);
            }
            w->id = (int)i;
            w->held = NULL;
            w->root = futoin_root_new(T);
            API(w->root)->addSync(w->root, s, w, stress_section, NULL);
            API(w->root)->execute(w->root, w, stress_unhandled);
        }
        pump();
        futoin_sync_stats st = stats(s);
        cr_assert_eq(st.inside, (size_t)stress_inside, "step %d", step);
        cr_assert_leq(st.inside, max);
        cr_assert_leq(st.queued, max_queue);
        cr_assert(st.queued == 0 || st.inside == max,
                  "step %d: %zu queued with room (%zu inside)", step,
                  st.queued, st.inside);
    }
    for (int i = 0; i < nroots; ++i) {
        if (SW[i].root) {
            API(SW[i].root)->free(SW[i].root);
        }
    }
    assert_counts(s, 0, 0);
    cr_assert_eq(stress_inside, 0);
}

Test(sync, random_leaves_and_cancels_keep_the_books_straight)
{
    futoin_limiter_options o = FUTOIN_LIMITER_OPTIONS_INIT;
    FutoInSync* s = futoin_mutex_new(3, 20);
    stress(s, 3, 20, 40);
    cr_assert_gt(stats(s).rejected, 0, "the queue limit was reached");
    cr_assert_eq(futoin_mutex_free(s), FUTOIN_OK);

    /* many holders: the holder table grows and deletes in random order */
    s = futoin_mutex_new(50, FUTOIN_UNLIMITED);
    stress(s, 50, FUTOIN_UNLIMITED, 120);
    cr_assert_eq(futoin_mutex_free(s), FUTOIN_OK);

    o.concurrent = 3;
    o.max_queue = 20;
    o.rate = 1000000000;
    o.period_ms = 5;
    s = futoin_limiter_new(T, &o);
    stress(s, 3, 20, 40);
    cr_assert_eq(futoin_limiter_free(s), FUTOIN_OK);
}
