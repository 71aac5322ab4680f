/* Virtual time (futoin_tool_options.virtual_time): the clock moves only
 * with futoin_tool_advance(); timers fire in due-time order, including those
 * started while it advances; futoin_tool_next_due() and futoin_tool_now()
 * follow it; run() returns when nothing is due now; immediates, posts from
 * other threads, step timeouts and the periods of Throttle and Limiter all
 * work on it; bad calls are refused. Nothing here reads the wall clock: the
 * assertions are on the virtual clock and on traces. */
#include "common.h"

#include <futoin/sync.h>
#include <pthread.h>
#include <uv.h>

TestSuite(vtime, .init = fx_setup_virtual, .fini = fx_teardown);

#define assert_no_misuse()                                                     \
    cr_assert_eq(misuse_seen, 0, "misuse reported: %s", misuse_last)

/* The milliseconds until the next timer, which must be pending. */
static uint64_t next_due(void)
{
    uint64_t ms = 12345;
    cr_assert_eq(futoin_tool_next_due(T, &ms), 1, "no timer pending");
    return ms;
}
static void assert_nothing_due(void)
{
    uint64_t ms = 12345;
    cr_assert_eq(futoin_tool_next_due(T, &ms), 0, "a timer is pending");
    cr_assert_eq(ms, 12345, "ms written with no timer pending");
}
static void advance(uint64_t ms)
{
    cr_assert_eq(futoin_tool_advance(T, ms), FUTOIN_OK);
}

/* A callback that prints its name and the tool's clock. */
static void say_at(void* d)
{
    tr("%s at %llu", (const char*)d, (unsigned long long)futoin_tool_now(T));
}

/* ---- the clock ------------------------------------------------------------- */

Test(vtime, the_clock_starts_at_zero_and_moves_only_with_advance)
{
    cr_assert_eq(futoin_tool_is_virtual(T), 1);
    cr_assert_eq(futoin_tool_now(T), 0);
    run();
    cr_assert_eq(futoin_tool_now(T), 0, "run() moved the clock");
    assert_nothing_due();
    advance(1500);
    cr_assert_eq(futoin_tool_now(T), 1500);
    advance(0);
    cr_assert_eq(futoin_tool_now(T), 1500);
    advance(UINT64_MAX - 1500);
    cr_assert_eq(futoin_tool_now(T), UINT64_MAX);
    assert_no_misuse();
}

Test(vtime, timers_fire_in_due_order_and_fifo_among_equals)
{
    futoin_tool_deferred(T, 30, say_at, "c");
    futoin_tool_deferred(T, 10, say_at, "a1");
    futoin_tool_deferred(T, 20, say_at, "b");
    futoin_tool_deferred(T, 10, say_at, "a2");
    cr_assert_eq(next_due(), 10);
    run();
    assert_trace("");
    advance(25);
    assert_trace("a1 at 10\na2 at 10\nb at 20\n");
    cr_assert_eq(futoin_tool_now(T), 25);
    cr_assert_eq(next_due(), 5);
    advance(4);
    assert_trace("a1 at 10\na2 at 10\nb at 20\n");
    advance(1);
    assert_trace("a1 at 10\na2 at 10\nb at 20\nc at 30\n");
    assert_nothing_due();
    assert_no_misuse();
}

/* A timer at 10 starts more while the clock advances: one due at once
 * (after the immediates of its turn, as on a real clock), one inside the
 * advance, one past its end. */
static void start_more(void* d)
{
    say_at(d);
    futoin_tool_immediate(T, say_at, "imm");
    futoin_tool_deferred(T, 0, say_at, "zero");
    futoin_tool_deferred(T, 5, say_at, "five");
    futoin_tool_deferred(T, 100, say_at, "hundred");
}

Test(vtime, timers_started_during_an_advance_fire_in_their_turn)
{
    futoin_tool_deferred(T, 10, start_more, "start");
    futoin_tool_deferred(T, 12, say_at, "twelve");
    advance(20);
    assert_trace("start at 10\nimm at 10\nzero at 10\ntwelve at 12\n"
                 "five at 15\n");
    cr_assert_eq(futoin_tool_now(T), 20);
    cr_assert_eq(next_due(), 90);
    advance(next_due());
    assert_trace("start at 10\nimm at 10\nzero at 10\ntwelve at 12\n"
                 "five at 15\nhundred at 110\n");
    assert_nothing_due();
    assert_no_misuse();
}

Test(vtime, a_cancelled_timer_neither_fires_nor_counts_as_due)
{
    FutoInHandle h = futoin_tool_deferred(T, 10, say_at, "never");
    futoin_tool_deferred(T, 50, say_at, "later");
    cr_assert_eq(next_due(), 10);
    futoin_tool_cancel(T, &h);
    cr_assert_eq(next_due(), 50);
    advance(50);
    assert_trace("later at 50\n");
    assert_no_misuse();
}

/* ---- run() returns when nothing is due now -------------------------------- */

static void chain(void* d)
{
    long n = (long)(intptr_t)d;
    tr("imm %ld", n);
    if (n < 3) {
        futoin_tool_immediate(T, chain, (void*)(intptr_t)(n + 1));
    }
}

Test(vtime, run_runs_immediates_and_returns_with_timers_pending)
{
    futoin_tool_deferred(T, 1000, say_at, "timer");
    futoin_tool_immediate(T, chain, (void*)(intptr_t)1);
    run();
    assert_trace("imm 1\nimm 2\nimm 3\n");
    cr_assert_eq(futoin_tool_now(T), 0);
    cr_assert_eq(next_due(), 1000);
    /* one pass at a time too, and the pending timer is work left */
    futoin_tool_deferred(T, 0, say_at, "zero");
    cr_assert_eq(futoin_tool_run_nowait(T), 1);
    assert_trace("imm 1\nimm 2\nimm 3\nzero at 0\n");
    advance(1000);
    assert_trace("imm 1\nimm 2\nimm 3\nzero at 0\ntimer at 1000\n");
    cr_assert_eq(futoin_tool_run_nowait(T), 0);
    assert_no_misuse();
}

/* ---- flows: step timeouts follow the virtual clock ------------------------ */

static FutoInAsyncSteps* waiting;

static void wait_minute(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("wait at %llu", (unsigned long long)futoin_tool_now(T));
    waiting = as;
    API(as)->setCancel(as, NULL, NULL);
    API(as)->setTimeout(as, *(uint32_t*)d);
}
static void wait_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("onerror %s at %llu", code, (unsigned long long)futoin_tool_now(T));
}
static void after_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("after %s at %llu", a->arg0.type ? a->arg0.cstr : "-",
       (unsigned long long)futoin_tool_now(T));
}
static void complete_waiting(void* d)
{
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    set_str(&args, 0, "done");
    tr("complete at %llu", (unsigned long long)futoin_tool_now(T));
    API(waiting)->success(waiting, &args);
}

static FutoInAsyncSteps* start_waiting_flow(uint32_t* timeout_ms)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, timeout_ms, wait_minute, wait_eh);
    API(as)->add(as, NULL, after_wait, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    return as;
}

/* The scenario: a 60 s timeout, the wait completed after 30 s of
 * virtual time. bench/futoin_bench.c --test vtime measures its wall time. */
Test(vtime, a_minute_timeout_completed_after_thirty_seconds)
{
    static uint32_t minute = 60000;
    FutoInAsyncSteps* as = start_waiting_flow(&minute);
    futoin_tool_deferred(T, 30000, complete_waiting, NULL);
    run();
    assert_trace("wait at 0\n");
    cr_assert_eq(next_due(), 30000);
    advance(30000);
    assert_trace("wait at 0\ncomplete at 30000\nafter done at 30000\n");
    /* the step's timeout was cleared with the wait */
    assert_nothing_due();
    API(as)->free(as);
    assert_no_misuse();
}

/* The same flow on both clocks gives the same trace: on the wall clock
 * with a scaled-down 60 ms / 30 ms (both timers sit in one heap, so even a
 * stalled loop fires the completion before the timeout), on the virtual
 * one with the real minute. */
static const char* trace_of_half_timeout_flow(bool virtual_time, uint32_t unit)
{
    static char out[256];
    static uint32_t timeout;
    futoin_tool* saved = T;
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    FutoInAsyncSteps* as;
    o.misuse = on_misuse;
    o.virtual_time = virtual_time;
    cr_assert_eq(futoin_tool_new(&T, &o), FUTOIN_OK);
    trace_len = 0;
    trace_buf[0] = 0;
    timeout = 2 * unit;
    as = start_waiting_flow(&timeout);
    futoin_tool_deferred(T, unit, complete_waiting, NULL);
    run();
    if (virtual_time) {
        advance(unit);
    }
    API(as)->free(as);
    cr_assert_eq(futoin_tool_free(T), FUTOIN_OK);
    T = saved;
    /* the times differ by the clock; the order of the lines must not */
    {
        size_t o_len = 0;
        for (const char* p = trace_buf; *p && o_len < sizeof(out) - 1; ++p) {
            if (p[0] == ' ' && strncmp(p, " at ", 4) == 0) {
                while (*p && *p != '\n') {
                    ++p;
                }
                --p;
                continue;
            }
            out[o_len++] = *p;
        }
        out[o_len] = 0;
    }
    return out;
}

Test(vtime, the_half_timeout_flow_has_the_same_trace_on_both_clocks)
{
    char wall[256];
    snprintf(wall, sizeof(wall), "%s", trace_of_half_timeout_flow(false, 30));
    cr_assert_str_eq(wall, "wait\ncomplete\nafter done\n");
    cr_assert_str_eq(trace_of_half_timeout_flow(true, 30000), wall);
    trace_len = 0;
    trace_buf[0] = 0;
    assert_no_misuse();
}

Test(vtime, a_step_times_out_exactly_at_its_due_time)
{
    static uint32_t minute = 60000;
    FutoInAsyncSteps* as = start_waiting_flow(&minute);
    run();
    advance(59999);
    assert_trace("wait at 0\n");
    advance(1);
    assert_trace("wait at 0\nonerror Timeout at 60000\nunhandled Timeout\n");
    assert_nothing_due();
    API(as)->free(as);
    assert_no_misuse();
}

/* sched_deferred() of the FTN12 table follows the tool's clock too. */
static void ext_done(void* d)
{
    FutoInAsyncSteps* as = d;
    tr("external at %llu", (unsigned long long)futoin_tool_now(T));
    SUCCESS0(as);
}
static void ext_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->waitExternal(as);
    API(as)->sched_deferred(as, 5000, as, ext_done);
}

Test(vtime, sched_deferred_follows_the_virtual_clock)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, ext_step, NULL);
    API(as)->add(as, NULL, after_wait, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    cr_assert_eq(next_due(), 5000);
    advance(10000);
    assert_trace("external at 5000\nafter - at 5000\n");
    API(as)->free(as);
    assert_no_misuse();
}

/* ---- other threads --------------------------------------------------------- */

static void* post_from_thread(void* d)
{
    futoin_tool_immediate(T, say_at, d);
    return NULL;
}
static void* complete_from_thread(void* d)
{
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    set_str(&args, 0, "from thread");
    API(waiting)->success(waiting, &args);
    return NULL;
}

Test(vtime, posts_and_completions_from_another_thread_run)
{
    static uint32_t minute = 60000;
    pthread_t th;
    FutoInAsyncSteps* as = start_waiting_flow(&minute);
    run();
    advance(100);
    /* the worker is joined, not waited for by the loop: run() never waits */
    cr_assert_eq(pthread_create(&th, NULL, post_from_thread, "posted"), 0);
    cr_assert_eq(pthread_join(th, NULL), 0);
    cr_assert_eq(pthread_create(&th, NULL, complete_from_thread, NULL), 0);
    cr_assert_eq(pthread_join(th, NULL), 0);
    assert_trace("wait at 0\n");
    run();
    assert_trace("wait at 0\nposted at 100\nafter from thread at 100\n");
    assert_nothing_due();
    cr_assert_eq(futoin_tool_now(T), 100);
    API(as)->free(as);
    assert_no_misuse();
}

/* A post that arrives while nothing runs the loop runs at the start of the
 * next advance, before the clock moves. */
Test(vtime, a_post_waiting_at_advance_runs_before_the_clock_moves)
{
    pthread_t th;
    futoin_tool_deferred(T, 10, say_at, "timer");
    cr_assert_eq(pthread_create(&th, NULL, post_from_thread, "posted"), 0);
    cr_assert_eq(pthread_join(th, NULL), 0);
    advance(10);
    assert_trace("posted at 0\ntimer at 10\n");
    assert_no_misuse();
}

/* ---- I/O on the tool's loop ------------------------------------------------ */

static void on_async(uv_async_t* h)
{
    tr("io at %llu", (unsigned long long)futoin_tool_now(T));
    uv_close((uv_handle_t*)h, NULL);
}

Test(vtime, io_of_the_loop_still_works)
{
    static uv_async_t io;
    cr_assert_eq(uv_async_init(futoin_tool_uv_loop(T), &io, on_async), 0);
    futoin_tool_deferred(T, 7, say_at, "timer");
    advance(3);
    cr_assert_eq(uv_async_send(&io), 0);
    /* ready I/O runs without moving the clock, and before later timers */
    advance(10);
    assert_trace("io at 3\ntimer at 7\n");
    run(); /* the close callback */
    assert_no_misuse();
}

/* ---- sync objects: periods follow the virtual clock ----------------------- */

static void in_section(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s in at %llu", (const char*)d, (unsigned long long)futoin_tool_now(T));
}

static FutoInAsyncSteps* sync_root(FutoInSync* s, const char* name)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->addSync(as, s, (void*)name, in_section, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    return as;
}

Test(vtime, throttle_periods_follow_the_virtual_clock)
{
    FutoInSync* thr = futoin_throttle_new(T, 1, 1000, FUTOIN_UNLIMITED);
    FutoInAsyncSteps* r[3];
    cr_assert_not_null(thr);
    r[0] = sync_root(thr, "a");
    r[1] = sync_root(thr, "b");
    r[2] = sync_root(thr, "c");
    run();
    assert_trace("a in at 0\n");
    cr_assert_eq(next_due(), 1000);
    advance(999);
    assert_trace("a in at 0\n");
    advance(1);
    assert_trace("a in at 0\nb in at 1000\n");
    advance(5000);
    /* c at the next tick; then one idle tick stops the clock */
    assert_trace("a in at 0\nb in at 1000\nc in at 2000\n");
    assert_nothing_due();
    for (int i = 0; i < 3; ++i) {
        API(r[i])->free(r[i]);
    }
    cr_assert_eq(futoin_throttle_free(thr), FUTOIN_OK);
    assert_no_misuse();
}

Test(vtime, limiter_rate_follows_the_virtual_clock)
{
    futoin_limiter_options o = FUTOIN_LIMITER_OPTIONS_INIT;
    FutoInSync* lim;
    FutoInAsyncSteps* r[3];
    o.concurrent = 3;
    o.max_queue = 3;
    o.rate = 2;
    o.period_ms = 500;
    o.burst = 1;
    lim = futoin_limiter_new(T, &o);
    cr_assert_not_null(lim);
    r[0] = sync_root(lim, "a");
    r[1] = sync_root(lim, "b");
    r[2] = sync_root(lim, "c");
    run();
    assert_trace("a in at 0\nb in at 0\n");
    advance(499);
    assert_trace("a in at 0\nb in at 0\n");
    advance(1);
    assert_trace("a in at 0\nb in at 0\nc in at 500\n");
    advance(next_due());
    assert_nothing_due();
    for (int i = 0; i < 3; ++i) {
        API(r[i])->free(r[i]);
    }
    cr_assert_eq(futoin_limiter_free(lim), FUTOIN_OK);
    assert_no_misuse();
}

/* ---- uv_stop() ends an advance early --------------------------------------- */

static void stop_loop(void* d)
{
    say_at(d);
    uv_stop(futoin_tool_uv_loop(T));
}

Test(vtime, uv_stop_ends_an_advance_at_the_time_reached)
{
    futoin_tool_deferred(T, 10, stop_loop, "stop");
    futoin_tool_deferred(T, 20, say_at, "later");
    advance(100);
    assert_trace("stop at 10\n");
    cr_assert_eq(futoin_tool_now(T), 10);
    advance(90);
    assert_trace("stop at 10\nlater at 20\n");
    cr_assert_eq(futoin_tool_now(T), 100);
    assert_no_misuse();
}

/* ---- bad calls --------------------------------------------------------------- */

static int advance_rc = 1;
static void advance_inside(void* d)
{
    advance_rc = futoin_tool_advance(T, 10);
}
static void* advance_elsewhere(void* d)
{
    *(int*)d = futoin_tool_advance(T, 10);
    return NULL;
}
static void* now_elsewhere(void* d)
{
    *(uint64_t*)d = futoin_tool_now(T);
    return NULL;
}

Test(vtime, bad_calls_are_refused_and_reported)
{
    uint64_t ms = 0;
    uint64_t now = 7;
    int rc = 0;
    pthread_t th;

    cr_assert_eq(futoin_tool_advance(NULL, 1), FUTOIN_EINVAL);
    cr_assert_eq(futoin_tool_next_due(NULL, &ms), FUTOIN_EINVAL);
    cr_assert_eq(futoin_tool_now(NULL), 0);
    cr_assert_eq(futoin_tool_is_virtual(NULL), 0);

    cr_assert_eq(futoin_tool_next_due(T, NULL), FUTOIN_EINVAL);
    cr_assert_eq(misuse_seen, 1);
    cr_assert_str_eq(misuse_last,
                     "InternalError: futoin_tool_next_due(): NULL ms");

    /* from inside a callback of the tool */
    futoin_tool_immediate(T, advance_inside, NULL);
    run();
    cr_assert_eq(advance_rc, FUTOIN_EINVAL);
    cr_assert_eq(misuse_seen, 2);
    cr_assert(strstr(misuse_last, "called while the loop runs"), "%s",
              misuse_last);
    cr_assert_eq(futoin_tool_now(T), 0, "a refused advance moved the clock");

    /* from another thread */
    cr_assert_eq(pthread_create(&th, NULL, advance_elsewhere, &rc), 0);
    cr_assert_eq(pthread_join(th, NULL), 0);
    cr_assert_eq(rc, FUTOIN_EINVAL);
    cr_assert_eq(misuse_seen, 3);
    cr_assert_eq(pthread_create(&th, NULL, now_elsewhere, &now), 0);
    cr_assert_eq(pthread_join(th, NULL), 0);
    cr_assert_eq(now, 0);
    cr_assert_eq(misuse_seen, 4);

    /* past the end of the clock */
    advance(100);
    cr_assert_eq(futoin_tool_advance(T, UINT64_MAX - 99), FUTOIN_EINVAL);
    cr_assert_eq(misuse_seen, 5);
    cr_assert(strstr(misuse_last, "UINT64_MAX"), "%s", misuse_last);
    cr_assert_eq(futoin_tool_now(T), 100);
}

Test(vtime_bare, a_wall_clock_tool_refuses_advance)
{
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    futoin_tool* tool;
    uint64_t ms = 0;
    misuse_seen = 0;
    o.misuse = on_misuse;
    cr_assert_eq(o.virtual_time, false, "the wall clock is the default");
    cr_assert_eq(futoin_tool_new(&tool, &o), FUTOIN_OK);
    cr_assert_eq(futoin_tool_is_virtual(tool), 0);
    cr_assert_eq(futoin_tool_advance(tool, 10), FUTOIN_EINVAL);
    cr_assert_eq(misuse_seen, 1);
    cr_assert(strstr(misuse_last, "wall clock"), "%s", misuse_last);
    /* next_due answers for the wall clock */
    cr_assert_eq(futoin_tool_next_due(tool, &ms), 0);
    futoin_tool_deferred(tool, 60000, say_at, "never");
    cr_assert_eq(futoin_tool_next_due(tool, &ms), 1);
    cr_assert_leq(ms, 60000);
    cr_assert_eq(futoin_tool_free(tool), FUTOIN_OK);
}

Test(vtime_bare, virtual_time_needs_the_tools_own_loop)
{
    uv_loop_t loop;
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    futoin_tool* tool = NULL;
    cr_assert_eq(uv_loop_init(&loop), 0);
    o.uv_loop = &loop;
    o.virtual_time = true;
    cr_assert_eq(futoin_tool_new(&tool, &o), FUTOIN_EINVAL);
    cr_assert_null(tool);
    cr_assert_eq(uv_loop_close(&loop), 0);
}

/* A caller of version 2 has no virtual_time field: the library neither
 * writes nor reads it, and the tool runs on the wall clock. */
Test(vtime_bare, options_of_version_2_run_on_the_wall_clock)
{
    futoin_tool_options o;
    futoin_tool* tool = NULL;
    memset(&o, 0xA5, sizeof(o));
    cr_assert_eq(futoin_tool_options_init(&o, 2), FUTOIN_OK);
    cr_assert_eq(o.version, 2);
    cr_assert_eq(o.trim_idle_ms, FUTOIN_TOOL_TRIM_IDLE_MS_DEFAULT);
    cr_assert_eq(*(unsigned char*)&o.virtual_time, 0xA5,
                 "wrote past a version 2 struct");
    cr_assert_eq(futoin_tool_new(&tool, &o), FUTOIN_OK);
    cr_assert_eq(futoin_tool_is_virtual(tool), 0);
    cr_assert_eq(futoin_tool_free(tool), FUTOIN_OK);
    /* exactly the old size: ASan and valgrind see any access past it */
    size_t v2_size = offsetof(futoin_tool_options, virtual_time);
    futoin_tool_options* v2 = malloc(v2_size);
    cr_assert_not_null(v2);
    cr_assert_eq(futoin_tool_options_init(v2, 2), FUTOIN_OK);
    tool = NULL;
    cr_assert_eq(futoin_tool_new(&tool, v2), FUTOIN_OK);
    cr_assert_eq(futoin_tool_is_virtual(tool), 0);
    cr_assert_eq(futoin_tool_free(tool), FUTOIN_OK);
    free(v2);
}

Test(vtime_bare, options_init_agrees_with_the_macro_on_virtual_time)
{
    futoin_tool_options init = FUTOIN_TOOL_OPTIONS_INIT;
    futoin_tool_options o;
    memset(&o, 0xA5, sizeof(o));
    cr_assert_eq(futoin_tool_options_init(&o, FUTOIN_TOOL_OPTIONS_VERSION),
                 FUTOIN_OK);
    cr_assert_eq(FUTOIN_TOOL_OPTIONS_VERSION, 3);
    cr_assert_eq(o.virtual_time, init.virtual_time);
    cr_assert_eq(o.virtual_time, false);
}
