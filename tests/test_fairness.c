/* Fairness: a flow that never waits must not hold the loop. Work between
 * two libuv turns is bounded by time (tool/tool.h, futoin__tool_busy), so
 * timers, cancels, cross-thread completions and other flows get a turn
 * about once per millisecond of busy work.
 *
 * The assertions count iterations, never wall-clock time: a loop body
 * costs a few ns, so a turn each millisecond lets a 5 ms timer land after
 * some 10^6 iterations; without time slices it landed after ~2^31. */
#include "common.h"

#include <futoin/sys/ext.h>

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <uv.h>

TestSuite(fairness, .init = fx_setup, .fini = fx_teardown);

/* "long before": a few ms of a loop body that costs a few ns */
#define LONG_BEFORE 10000000ull

static unsigned long long spins[3];

static void spin_body(FutoInAsyncSteps* as, void* d)
{
    ++spins[(uintptr_t)d];
}

static void spin_forever(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->loop(as, d, spin_body, NULL);
}

/* ---- a timeout around a loop that never waits ------------------------- */

static const char* seen_code;
static unsigned long long spins_at_error;

static void timed_loop(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setTimeout(as, 5);
    API(as)->loop(as, d, spin_body, NULL);
}
static void record_error(FutoInAsyncSteps* as, void* d, const char* code)
{
    seen_code = code[0] == 'T' ? "Timeout" : "other";
    spins_at_error = spins[0];
    SUCCESS0(as);
}

Test(fairness, timeout_ends_a_loop_that_never_waits)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    memset(spins, 0, sizeof(spins));
    seen_code = NULL;
    API(as)->add(as, (void*)0, timed_loop, record_error);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    cr_assert_str_eq(seen_code, "Timeout");
    cr_assert_gt(spins_at_error, 0);
    cr_assert_lt(spins_at_error, LONG_BEFORE,
                 "the 5 ms timeout landed after %llu iterations", spins_at_error);
    API(as)->free(as);
}

/* The cost of one call of fn in ns: the fastest of several rounds of 20
 * calls. A round that was preempted (once 155 us for a ~3 us callback on a
 * loaded machine), or that paid for valgrind translating the code, reads
 * far too slow, and a bound calibrated on it is too tight. */
static uint64_t fastest_ns_per_call(void (*fn)(void), int rounds)
{
    uint64_t per = UINT64_MAX;
    for (int round = 0; round < rounds; ++round) {
        uint64_t t0 = uv_hrtime();
        for (int i = 0; i < 20; ++i) {
            fn();
        }
        uint64_t took = (uv_hrtime() - t0) / 20;
        per = took < per ? took : per;
    }
    return per;
}

/* A loop body that does real work (about 50 us) is checked after fewer
 * iterations: a 5 ms timeout lands within a few dozen of them, not after
 * thousands (a count-only check every N iterations would wait N bodies). */
static void slow_body(FutoInAsyncSteps* as, void* d)
{
    volatile unsigned long x = 0;
    for (unsigned i = 0; i < 100000; ++i) {
        x += i;
    }
    ++spins[0];
}
static void one_slow_body(void)
{
    slow_body(NULL, NULL);
}
static void slow_loop(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setTimeout(as, 5);
    API(as)->loop(as, d, slow_body, NULL);
}

Test(fairness, timeout_ends_a_loop_with_slow_bodies)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    memset(spins, 0, sizeof(spins));
    seen_code = NULL;
    /* How long one body takes here, in bodies per 5 ms: the check must
     * land within a small multiple of that, whatever the machine. */
    uint64_t per_body = fastest_ns_per_call(one_slow_body, 5) + 1;
    unsigned long long bodies_in_5ms = 5000000ull / per_body + 1;
    spins[0] = 0;
    API(as)->add(as, (void*)0, slow_loop, record_error);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    cr_assert_str_eq(seen_code, "Timeout");
    /* the 32-unit initial stride plus a few ms of slack */
    cr_assert_lt(spins_at_error, 4 * bodies_in_5ms + 64,
                 "timeout after %llu bodies (%llu fit in 5 ms)", spins_at_error,
                 bodies_in_5ms);
    API(as)->free(as);
}

/* ---- a timer-scheduled root cancel ------------------------------------- */

static unsigned long long spins_at_cancel;
static void cancel_root(void* d)
{
    FutoInAsyncSteps* as = d;
    spins_at_cancel = spins[0] + spins[1];
    API(as)->cancel(as);
}

Test(fairness, timer_cancel_lands_during_a_busy_loop)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    memset(spins, 0, sizeof(spins));
    spins_at_cancel = 0;
    API(as)->add(as, (void*)0, spin_forever, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    futoin_tool_deferred(T, 5, cancel_root, as);
    run();
    cr_assert_gt(spins_at_cancel, 0);
    cr_assert_lt(spins_at_cancel, LONG_BEFORE,
                 "cancel landed after %llu iterations", spins_at_cancel);
    cr_assert_eq(spins[0], spins_at_cancel, "the loop ran on after cancel()");
    API(as)->free(as);
}

/* ---- a completion from another thread, for another flow ---------------- */

/* Counted from the moment the worker's success() has returned (the busy
 * body notes the count when it first sees the flag): how soon the new
 * thread gets a CPU is the machine's business, not the tool's. */
static FutoInAsyncSteps* busy_root;
static atomic_bool completion_posted;
static unsigned long long spins_at_posted;

static void spin_watch_body(FutoInAsyncSteps* as, void* d)
{
    if (spins_at_posted == ULLONG_MAX
        && atomic_load_explicit(&completion_posted, memory_order_acquire)) {
        spins_at_posted = spins[0];
    }
    ++spins[0];
}

static void spin_watching(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->loop(as, d, spin_watch_body, NULL);
}

static void* complete_from_thread(void* d)
{
    FutoInAsyncSteps* as = d;
    API(as)->success(as, NULL);
    atomic_store_explicit(&completion_posted, true, memory_order_release);
    return NULL;
}

static pthread_t worker;
static void wait_for_thread(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->waitExternal(as);
    cr_assert_eq(pthread_create(&worker, NULL, complete_from_thread, as), 0);
}
static void after_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    spins_at_cancel = spins[0];
    API(busy_root)->cancel(busy_root);
}

Test(fairness, cross_thread_completion_lands_during_a_busy_loop)
{
    FutoInAsyncSteps* waiter = futoin_root_new(T);
    busy_root = futoin_root_new(T);
    memset(spins, 0, sizeof(spins));
    spins_at_cancel = 0;
    spins_at_posted = ULLONG_MAX;
    atomic_store(&completion_posted, false);
    API(busy_root)->add(busy_root, (void*)0, spin_watching, NULL);
    API(busy_root)->execute(busy_root, NULL, on_unhandled);
    API(waiter)->add(waiter, NULL, wait_for_thread, NULL);
    API(waiter)->add(waiter, NULL, after_wait, NULL);
    API(waiter)->execute(waiter, NULL, on_unhandled);
    run();
    pthread_join(worker, NULL);
    cr_assert_gt(spins_at_cancel, 0, "the busy flow never ran");
    /* never seen: the completion landed before the worker set the flag */
    if (spins_at_posted > spins_at_cancel) {
        spins_at_posted = spins_at_cancel;
    }
    cr_assert_lt(spins_at_cancel - spins_at_posted, LONG_BEFORE,
                 "the completion landed %llu iterations after it was posted",
                 spins_at_cancel - spins_at_posted);
    API(waiter)->free(waiter);
    API(busy_root)->free(busy_root);
}

/* ---- two busy flows on one tool ---------------------------------------- */

/* A 1 ms timer ticks 20 times, then both are cancelled: long enough for
 * many turns each, even under valgrind. */
static FutoInAsyncSteps* busy2[2];
static unsigned long long spins_at_stop[2], spins_at_first_tick;
static int ticks;
static void tick(void* d)
{
    if (ticks++ == 0) {
        spins_at_first_tick = spins[1] + spins[2];
    }
    if (ticks < 20) {
        futoin_tool_deferred(T, 1, tick, NULL);
        return;
    }
    spins_at_stop[0] = spins[1];
    spins_at_stop[1] = spins[2];
    API(busy2[0])->cancel(busy2[0]);
    API(busy2[1])->cancel(busy2[1]);
}

Test(fairness, two_busy_flows_both_progress)
{
    memset(spins, 0, sizeof(spins));
    for (int i = 0; i < 2; ++i) {
        busy2[i] = futoin_root_new(T);
        API(busy2[i])->add(busy2[i], (void*)(uintptr_t)(i + 1), spin_forever,
                           NULL);
        API(busy2[i])->execute(busy2[i], NULL, on_unhandled);
    }
    ticks = 0;
    futoin_tool_deferred(T, 1, tick, NULL);
    run();
    unsigned long long a = spins_at_stop[0], b = spins_at_stop[1];
    cr_assert_gt(a, 0);
    cr_assert_gt(b, 0);
    cr_assert_lt(spins_at_first_tick, LONG_BEFORE,
                 "the first tick landed after %llu iterations", spins_at_first_tick);
    /* they take turns: neither gets less than a tenth of the other */
    cr_assert_gt(a * 10, b, "flow 1: %llu, flow 2: %llu", a, b);
    cr_assert_gt(b * 10, a, "flow 1: %llu, flow 2: %llu", a, b);
    for (int i = 0; i < 2; ++i) {
        API(busy2[i])->free(busy2[i]);
    }
}

/* A flow whose turn comes runs at least one step even when the time slice
 * just ended, so it never falls behind an immediate queued after it: here
 * every root's first step (which sets a cancel handler) must run before
 * the cancel() that was queued right after its execute(), while a busy
 * flow keeps ending slices. */
#define ORDER_ROOTS 20000
static FutoInAsyncSteps* order_roots[ORDER_ROOTS];
static unsigned order_cancelled, order_started;
static void order_on_cancel(FutoInAsyncSteps* as, void* d)
{
    ++order_cancelled;
}
static void order_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    ++order_started;
    API(as)->setCancel(as, NULL, order_on_cancel);
    for (volatile int i = 0; i < 3000; ++i) { /* a few us: slices end mid-burst */
    }
}
static void order_cancel(void* d)
{
    FutoInAsyncSteps* as = d;
    API(as)->cancel(as);
}
static unsigned order_seed = 7;
static void order_nop(void* d)
{
}
static void order_stop_busy(void* d)
{
    API((FutoInAsyncSteps*)d)->cancel(d);
}

Test(fairness, a_flow_keeps_its_turn_when_a_slice_ends)
{
    FutoInAsyncSteps* busy = futoin_root_new(T);
    order_cancelled = order_started = 0;
    memset(spins, 0, sizeof(spins));
    API(busy)->add(busy, (void*)0, spin_forever, NULL);
    API(busy)->execute(busy, NULL, on_unhandled);
    for (int i = 0; i < ORDER_ROOTS; ++i) {
        order_roots[i] = futoin_root_new(T);
        API(order_roots[i])->add(order_roots[i], NULL, order_step, NULL);
        API(order_roots[i])->execute(order_roots[i], NULL, on_unhandled);
        futoin_tool_immediate(T, order_cancel, order_roots[i]);
        /* a varying amount of other work, so that the clock reads (every
         * `stride` units) land on every kind of turn */
        for (int k = rand_r(&order_seed) % 3; k > 0; --k) {
            futoin_tool_immediate(T, order_nop, NULL);
        }
    }
    futoin_tool_immediate(T, order_stop_busy, busy);
    run();
    cr_assert_eq(order_started, ORDER_ROOTS, "%u roots were cancelled before "
                 "their first step", ORDER_ROOTS - order_started);
    cr_assert_eq(order_cancelled, ORDER_ROOTS);
    for (int i = 0; i < ORDER_ROOTS; ++i) {
        API(order_roots[i])->free(order_roots[i]);
    }
    API(busy)->free(busy);
}

/* Slow callbacks in one burst: after fast work has grown the clock-read
 * stride to its maximum, a burst of ~20 us immediates must still end its
 * slice after about a millisecond, not after the burst's count limit
 * (4096 callbacks, ~80 ms here): a 2 ms timer fires within some dozens of
 * them. The callback's cost is measured first, so the bound holds on any
 * machine (slower callbacks only make the count smaller). */
#define SLOW_IMMS 6000
static unsigned slow_spin = 1000;
static unsigned slow_ran, slow_ran_at_timer;
static bool slow_timer_fired;
static void slow_imm(void* d)
{
    if (slow_timer_fired) {
        return;
    }
    for (volatile unsigned i = 0; i < slow_spin; ++i) {
    }
    ++slow_ran;
}
static void slow_timer(void* d)
{
    slow_timer_fired = true;
    slow_ran_at_timer = slow_ran;
}
static void start_slow_burst(void* d)
{
    for (int i = 0; i < SLOW_IMMS; ++i) {
        futoin_tool_immediate(T, slow_imm, NULL);
    }
    futoin_tool_deferred(T, 2, slow_timer, NULL);
}

/* One slow callback as the burst runs it (the timer has not fired). */
static void one_slow_imm(void)
{
    slow_timer_fired = false;
    slow_imm(NULL);
}

/* Grow slow_spin until one slow callback costs at least 15 us here (about
 * 20 us); returns its cost in ns, the fastest of several rounds
 * (fastest_ns_per_call() says why: a preempted round once stopped the
 * calibration early and made the bound too tight). */
static uint64_t calibrate_slow_callback(void)
{
    uint64_t per;
    for (;;) {
        per = fastest_ns_per_call(one_slow_imm, 7);
        if (per >= 15000 || slow_spin > (1u << 30)) {
            break;
        }
        slow_spin *= 2;
    }
    return per;
}

Test(fairness, a_burst_of_slow_callbacks_still_yields_each_millisecond)
{
    FutoInAsyncSteps* busy = futoin_root_new(T);
    uint64_t per = calibrate_slow_callback();
    unsigned per_ms = (unsigned)(1000000 / per) + 1;
    slow_ran = 0;
    slow_timer_fired = false;
    /* fast work first: the stride grows to its maximum */
    memset(spins, 0, sizeof(spins));
    API(busy)->add(busy, (void*)0, spin_forever, NULL);
    API(busy)->execute(busy, NULL, on_unhandled);
    futoin_tool_deferred(T, 3, cancel_root, busy);
    run();
    /* then the slow burst */
    futoin_tool_immediate(T, start_slow_burst, NULL);
    run();
    cr_assert(slow_timer_fired);
    cr_assert_lt(slow_ran_at_timer, 10 * per_ms + 64,
                 "the 2 ms timer fired after %u callbacks of %llu ns "
                 "(%u fit in 1 ms)",
                 slow_ran_at_timer, (unsigned long long)per, per_ms);
    API(busy)->free(busy);
}

/* ---- a binding's run of chained steps (ext chain()) -------------------- */

/* ext chain() (futoin/sys/ext.h) runs a binding's consecutive steps in one
 * call from the runtime; each chained step counts against the time slice
 * as a step of the runtime's own loop does. A run of slow steps (each
 * >= 15 us, calibrated), fewer than a flow's budget of 256, still ends
 * at the slice's end: a 1 ms timer armed by the first step fires between
 * two steps of the run, not after its last. */
#define CHAIN_STEPS 250
static unsigned chain_ran, chain_ran_at_timer, chain_calls;
static bool chain_timer_fired;
static void chain_timer(void* d)
{
    chain_timer_fired = true;
    chain_ran_at_timer = chain_ran;
}
static void chain_tr(FutoInAsyncSteps* as, void* d, const FutoInArgs* a);
static const FutoInAsyncSteps_execute_callback chain_fns[] = {chain_tr};
static void chain_tr(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const futoin_async_ext_table* x = futoin_async_ext(as);
    ++chain_calls;
    do {
        if (chain_ran == 0) {
            futoin_tool_deferred(T, 1, chain_timer, NULL);
        }
        for (volatile unsigned i = 0; i < slow_spin; ++i) {
        }
        ++chain_ran;
        as = x->chain(as, chain_fns, 1, &d);
    } while (as);
}

Test(fairness, a_run_of_chained_steps_ends_with_the_slice)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    calibrate_slow_callback();
    chain_ran = chain_calls = chain_ran_at_timer = 0;
    chain_timer_fired = false;
    for (int i = 0; i < CHAIN_STEPS; ++i) {
        API(as)->add(as, NULL, chain_tr, NULL);
    }
    API(as)->execute(as, NULL, on_unhandled);
    run();
    API(as)->free(as);
    cr_assert_eq(chain_ran, CHAIN_STEPS);
    cr_assert(chain_timer_fired);
    cr_assert_lt(chain_ran_at_timer, CHAIN_STEPS,
                 "the 1 ms timer fired after the whole run (%u calls)",
                 chain_calls);
    cr_assert_gt(chain_calls, 1);
}

/* ---- a flood of posts from another thread ------------------------------ */

/* Callbacks posted with futoin_tool_immediate() from another thread run in
 * the same time slices as everything else: a timer and an immediate of the
 * loop thread get their turn after about a millisecond of posted callbacks,
 * not after the whole flood (before: 6,000 callbacks of ~20 us, ~120 ms,
 * all ran first). Posts keep their order and none is lost. */
#define FLOOD_POSTS 6000
static unsigned flood_next, flood_out_of_order, flood_slow_ran;
static unsigned flood_at_timer, flood_at_imm;
static bool flood_timer_fired, flood_imm_ran;

static void flood_post(void* d)
{
    if ((uintptr_t)d != flood_next) {
        ++flood_out_of_order;
    }
    ++flood_next;
    if (flood_timer_fired && flood_imm_ran) {
        return; /* the rest only checks the order */
    }
    slow_timer_fired = false;
    slow_imm(NULL);
    ++flood_slow_ran;
}
static void flood_timer(void* d)
{
    flood_timer_fired = true;
    flood_at_timer = flood_slow_ran;
}
static void flood_imm(void* d)
{
    flood_imm_ran = true;
    flood_at_imm = flood_slow_ran;
}
static void* flood_producer(void* d)
{
    for (uintptr_t i = 0; i < FLOOD_POSTS; ++i) {
        futoin_tool_immediate(T, flood_post, (void*)i);
    }
    return NULL;
}
static void flood_reset(void)
{
    flood_next = flood_out_of_order = flood_slow_ran = 0;
    flood_at_timer = flood_at_imm = 0;
    flood_timer_fired = flood_imm_ran = false;
}

Test(fairness, a_flood_of_posts_yields_each_millisecond)
{
    pthread_t producer;
    uint64_t per = calibrate_slow_callback();
    unsigned per_ms = (unsigned)(1000000 / per) + 1;
    flood_reset();
    /* the whole flood is queued before the loop runs */
    cr_assert_eq(pthread_create(&producer, NULL, flood_producer, NULL), 0);
    cr_assert_eq(pthread_join(producer, NULL), 0);
    futoin_tool_immediate(T, flood_imm, NULL);
    futoin_tool_deferred(T, 2, flood_timer, NULL);
    run();
    cr_log_info("imm after %u, timer after %u posts (%u per ms)", flood_at_imm, flood_at_timer, per_ms);
    cr_assert_eq(flood_next, FLOOD_POSTS, "posts lost");
    cr_assert_eq(flood_out_of_order, 0);
    cr_assert(flood_imm_ran && flood_timer_fired);
    cr_assert_lt(flood_at_imm, 10 * per_ms + 64,
                 "the immediate ran after %u posted callbacks of %llu ns "
                 "(%u fit in 1 ms)",
                 flood_at_imm, (unsigned long long)per, per_ms);
    cr_assert_lt(flood_at_timer, 10 * per_ms + 64,
                 "the 2 ms timer fired after %u posted callbacks of %llu ns "
                 "(%u fit in 1 ms)",
                 flood_at_timer, (unsigned long long)per, per_ms);
}

/* One pass of the loop runs a slice of a flood, not all of it, and says
 * that more is pending; what is left is dropped (never called, freed) when
 * the tool is freed. */
Test(fairness, a_pass_runs_a_slice_of_a_flood_and_free_drops_the_rest)
{
    pthread_t producer;
    calibrate_slow_callback();
    flood_reset();
    cr_assert_eq(pthread_create(&producer, NULL, flood_producer, NULL), 0);
    cr_assert_eq(pthread_join(producer, NULL), 0);
    cr_assert_eq(futoin_tool_run_nowait(T), 1, "posts left, but idle");
    unsigned ran = flood_next;
    cr_assert_gt(ran, 0);
    cr_assert_lt(ran, FLOOD_POSTS / 2, "one pass ran %u of %d posts", ran,
                 FLOOD_POSTS);
    cr_assert_eq(flood_out_of_order, 0);
    cr_assert_eq(futoin_tool_free(T), FUTOIN_OK);
    cr_assert_eq(flood_next, ran, "a post ran after the tool was freed");
    fx_setup(); /* for the fixture's own free */
}

/* Posts that arrive while a backlog of earlier ones is still being worked
 * off, from two producers at once, each in its producer's order and none
 * lost; a root that waits keeps the loop running until the last arrives. */
#define MIX_PRODUCERS 2
#define MIX_POSTS 3000
static unsigned mix_next[MIX_PRODUCERS], mix_bad, mix_total;
static FutoInAsyncSteps* mix_waiting;
static void mix_post(void* d)
{
    uintptr_t v = (uintptr_t)d;
    unsigned p = (unsigned)(v / MIX_POSTS), i = (unsigned)(v % MIX_POSTS);
    if (mix_next[p] != i) {
        ++mix_bad;
    }
    mix_next[p] = i + 1;
    if (i % 8 == 0) { /* every eighth is slow: slices end mid-backlog */
        slow_timer_fired = false;
        slow_imm(NULL);
    }
    if (++mix_total == MIX_PRODUCERS * MIX_POSTS) {
        SUCCESS0(mix_waiting);
    }
}
static void* mix_producer(void* d)
{
    uintptr_t p = (uintptr_t)d;
    for (uintptr_t i = 0; i < MIX_POSTS; ++i) {
        futoin_tool_immediate(T, mix_post, (void*)(p * MIX_POSTS + i));
    }
    return NULL;
}
static void mix_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    mix_waiting = as;
    API(as)->waitExternal(as);
}

Test(fairness, posts_keep_their_order_across_slices)
{
    pthread_t producers[MIX_PRODUCERS];
    FutoInAsyncSteps* root = futoin_root_new(T);
    calibrate_slow_callback();
    memset(mix_next, 0, sizeof(mix_next));
    mix_bad = mix_total = 0;
    API(root)->add(root, NULL, mix_wait, NULL);
    API(root)->execute(root, NULL, on_unhandled);
    for (uintptr_t p = 0; p < MIX_PRODUCERS; ++p) {
        cr_assert_eq(pthread_create(&producers[p], NULL, mix_producer,
                                    (void*)p), 0);
    }
    run();
    for (int p = 0; p < MIX_PRODUCERS; ++p) {
        cr_assert_eq(pthread_join(producers[p], NULL), 0);
        cr_assert_eq(mix_next[p], MIX_POSTS);
    }
    cr_assert_eq(mix_total, MIX_PRODUCERS * MIX_POSTS);
    cr_assert_eq(mix_bad, 0);
    assert_trace("");
    API(root)->free(root);
}
