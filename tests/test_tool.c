/* AsyncTool (FTN12 §2.6): immediates, deferred calls, handles, remote
 * posts from other threads, attaching to a foreign loop, misuse reports,
 * and the error / version tables. Every test that makes a tool frees it
 * and asserts FUTOIN_OK, so a leaked handle or root fails. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <futoin/async.h>

/* ---- fixture -------------------------------------------------------------- */

static futoin_tool* T;
static char trace[256];
static size_t trace_len;
static size_t misuse_seen;
static char misuse_last[256];

static void on_misuse(void* data, const char* code, const char* msg)
{
    (void)data;
    ++misuse_seen;
    snprintf(misuse_last, sizeof(misuse_last), "%s: %s", code, msg);
}

static void setup(void)
{
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    o.misuse = on_misuse;
    trace_len = 0;
    trace[0] = 0;
    misuse_seen = 0;
    misuse_last[0] = 0;
    cr_assert_eq(futoin_tool_new(&T, &o), FUTOIN_OK);
}

static void teardown(void)
{
    cr_assert_eq(futoin_tool_free(T), FUTOIN_OK);
    T = NULL;
}

static void run(void)
{
    cr_assert_eq(futoin_tool_run(T), FUTOIN_OK);
}

/* Append the character passed as data. */
static void tr(void* data)
{
    if (trace_len < sizeof(trace) - 1) {
        trace[trace_len++] = (char)(intptr_t)data;
        trace[trace_len] = 0;
    }
}

#define CH(c) ((void*)(intptr_t)(c))
#define assert_trace(expected)                                                 \
    cr_assert_str_eq(trace, expected, "trace was: \"%s\"", trace)

static int handle_is_zero(const FutoInHandle* h)
{
    return h->data1 == NULL && h->data2 == NULL && h->data3 == 0;
}

/* What a call that queued nothing returns (futoin/async.h). */
static int handle_not_queued(const FutoInHandle* h)
{
    return h->data1 == NULL && h->data2 == NULL
           && h->data3 == FUTOIN_HANDLE_NOT_QUEUED && !FUTOIN_HANDLE_QUEUED(*h);
}

TestSuite(tool, .init = setup, .fini = teardown);
TestSuite(tool_bare); /* tests that make their own tool */
TestSuite(tables);

/* ---- immediates ------------------------------------------------------------ */

Test(tool, immediate_fifo)
{
    futoin_tool_immediate(T, tr, CH('a'));
    futoin_tool_immediate(T, tr, CH('b'));
    futoin_tool_immediate(T, tr, CH('c'));
    assert_trace("");
    run();
    assert_trace("abc");
}

static void tr_then_schedule(void* data)
{
    tr(data);
    futoin_tool_immediate(T, tr, CH((char)(intptr_t)data + 1));
}

Test(tool, immediate_from_immediate_same_run)
{
    futoin_tool_immediate(T, tr_then_schedule, CH('a'));
    futoin_tool_immediate(T, tr, CH('x'));
    run();
    /* 'b' is queued behind 'x', which was already pending */
    assert_trace("axb");
}

Test(tool, immediate_cancel_before_run)
{
    FutoInHandle hb;
    futoin_tool_immediate(T, tr, CH('a'));
    hb = futoin_tool_immediate(T, tr, CH('b'));
    futoin_tool_immediate(T, tr, CH('c'));
    futoin_tool_cancel(T, &hb);
    cr_assert(handle_is_zero(&hb));
    run();
    assert_trace("ac");
}

Test(tool, immediate_cancel_only_entry_releases_loop)
{
    FutoInHandle h = futoin_tool_immediate(T, tr, CH('a'));
    futoin_tool_cancel(T, &h);
    cr_assert_eq(futoin_tool_run_nowait(T), 0);
    run();
    assert_trace("");
}

static FutoInHandle self_handle;
static int self_valid_inside = -1;

static void check_self(void* data)
{
    self_valid_inside = futoin_tool_is_valid(T, &self_handle);
    /* cancelling the running entry is a no-op */
    futoin_tool_cancel(T, &self_handle);
    tr(data);
}

Test(tool, immediate_is_valid)
{
    FutoInHandle ha = futoin_tool_immediate(T, tr, CH('a'));
    FutoInHandle hb = futoin_tool_immediate(T, tr, CH('b'));
    FutoInHandle hb_copy = hb;
    cr_assert_eq(futoin_tool_is_valid(T, &ha), 1);
    cr_assert_eq(futoin_tool_is_valid(T, &hb), 1);
    futoin_tool_cancel(T, &hb);
    cr_assert_eq(futoin_tool_is_valid(T, &hb), 0);
    cr_assert_eq(futoin_tool_is_valid(T, &hb_copy), 0);
    self_handle = futoin_tool_immediate(T, check_self, CH('s'));
    run();
    assert_trace("as");
    cr_assert_eq(futoin_tool_is_valid(T, &ha), 0);
    cr_assert_eq(self_valid_inside, 0);
}

Test(tool, cancel_stale_or_zero_is_noop)
{
    FutoInHandle zero = {NULL, NULL, 0};
    FutoInHandle ran = futoin_tool_immediate(T, tr, CH('a'));
    FutoInHandle ran_copy;
    FutoInHandle foreign;
    FutoInHandle foreign_copy;
    futoin_tool* other;

    cr_assert_eq(futoin_tool_new(&other, NULL), FUTOIN_OK);
    foreign = futoin_tool_immediate(other, tr, CH('f'));
    foreign_copy = foreign;

    run();
    ran_copy = ran;
    futoin_tool_cancel(T, &zero);
    cr_assert(handle_is_zero(&zero));
    futoin_tool_cancel(T, &ran);
    cr_assert(handle_is_zero(&ran));
    futoin_tool_cancel(T, &ran); /* already cancelled */
    futoin_tool_cancel(T, NULL);
    futoin_tool_cancel(NULL, &ran_copy);
    cr_assert_eq(futoin_tool_is_valid(T, &zero), 0);
    cr_assert_eq(futoin_tool_is_valid(T, &ran_copy), 0);
    cr_assert_eq(futoin_tool_is_valid(T, NULL), 0);

    /* a handle of another tool is neither acted on nor touched */
    futoin_tool_cancel(T, &foreign);
    cr_assert_eq(memcmp(&foreign, &foreign_copy, sizeof(foreign)), 0);
    cr_assert_eq(futoin_tool_is_valid(T, &foreign), 0);
    cr_assert_eq(futoin_tool_is_valid(other, &foreign), 1);

    /* new entries reuse the ring slot of `ran`: its copy stays stale */
    futoin_tool_immediate(T, tr, CH('b'));
    futoin_tool_cancel(T, &ran_copy);
    run();
    assert_trace("ab");

    cr_assert_eq(futoin_tool_run(other), FUTOIN_OK);
    assert_trace("abf");
    cr_assert_eq(futoin_tool_free(other), FUTOIN_OK);
    cr_assert_eq(misuse_seen, 0);
}

static uint32_t seq_next;
static uint32_t seq_bad;

static void check_seq(void* data)
{
    if ((uint32_t)(uintptr_t)data != seq_next) {
        ++seq_bad;
    }
    ++seq_next;
}

Test(tool, immediate_growth_200k_in_order)
{
    const uint32_t n = 200000;
    seq_next = 0;
    seq_bad = 0;
    for (uint32_t i = 0; i < n; ++i) {
        futoin_tool_immediate(T, check_seq, (void*)(uintptr_t)i);
    }
    run();
    cr_assert_eq(seq_next, n);
    cr_assert_eq(seq_bad, 0);
}

/* Growth while handles are pending: they still name their own entries. */
Test(tool, immediate_handles_survive_growth)
{
    enum
    {
        N = 5000
    };
    static FutoInHandle h[N];
    seq_next = 0;
    seq_bad = 0;
    for (uint32_t i = 0; i < N; ++i) {
        h[i] = futoin_tool_immediate(T, check_seq, (void*)(uintptr_t)i);
    }
    for (uint32_t i = 0; i < N; ++i) {
        cr_assert_eq(futoin_tool_is_valid(T, &h[i]), 1);
    }
    futoin_tool_cancel(T, &h[N - 1]);
    run();
    cr_assert_eq(seq_next, N - 1);
    cr_assert_eq(seq_bad, 0);
}

static void chain_step(void* data)
{
    uintptr_t left = (uintptr_t)data;
    ++seq_next;
    if (left > 0) {
        futoin_tool_immediate(T, chain_step, (void*)(left - 1));
    }
}

/* A chain longer than one burst still finishes within one run. */
Test(tool, immediate_chain_spans_bursts)
{
    seq_next = 0;
    futoin_tool_immediate(T, chain_step, (void*)(uintptr_t)99999);
    run();
    cr_assert_eq(seq_next, 100000);
}

/* ---- deferred -------------------------------------------------------------- */

/* A timer started by a callback of futoin_tool_run's first burst (run
 * before libuv is entered) keeps that run going until it fires, on a loop
 * that nothing else ever saw (futoin_tool_uv_loop is not called here). */
static void start_deferred(void* data)
{
    tr(data);
    futoin_tool_deferred(T, 1, tr, CH('d'));
}

Test(tool, run_waits_for_a_timer_started_by_its_first_burst)
{
    futoin_tool_immediate(T, start_deferred, CH('a'));
    run();
    assert_trace("ad");
}

Test(tool, deferred_order_by_delay_then_fifo)
{
    futoin_tool_deferred(T, 30, tr, CH('a'));
    futoin_tool_deferred(T, 10, tr, CH('b'));
    futoin_tool_deferred(T, 20, tr, CH('c'));
    futoin_tool_deferred(T, 10, tr, CH('d'));
    futoin_tool_deferred(T, 0, tr, CH('e'));
    futoin_tool_deferred(T, 20, tr, CH('f'));
    run();
    assert_trace("ebdcfa");
}

Test(tool, deferred_cancel)
{
    FutoInHandle ha = futoin_tool_deferred(T, 5, tr, CH('a'));
    FutoInHandle hb = futoin_tool_deferred(T, 5, tr, CH('b'));
    FutoInHandle hc = futoin_tool_deferred(T, 1, tr, CH('c'));
    cr_assert_eq(futoin_tool_is_valid(T, &ha), 1);
    futoin_tool_cancel(T, &ha);
    cr_assert(handle_is_zero(&ha));
    cr_assert_eq(futoin_tool_is_valid(T, &ha), 0);
    futoin_tool_cancel(T, &hc);
    run();
    assert_trace("b");
    cr_assert_eq(futoin_tool_is_valid(T, &hb), 0);
}

/* Cancelling every timer lets the loop finish at once. */
Test(tool, deferred_cancel_all_releases_loop)
{
    FutoInHandle h = futoin_tool_deferred(T, 60000, tr, CH('a'));
    futoin_tool_cancel(T, &h);
    run();
    assert_trace("");
}

Test(tool, deferred_handle_stale_after_firing)
{
    FutoInHandle h1 = futoin_tool_deferred(T, 1, tr, CH('a'));
    FutoInHandle h1_copy = h1;
    FutoInHandle h2;
    run();
    assert_trace("a");
    cr_assert_eq(futoin_tool_is_valid(T, &h1), 0);
    futoin_tool_cancel(T, &h1);
    cr_assert(handle_is_zero(&h1));

    /* The pooled entry is reused: the old handle must not reach it. */
    h2 = futoin_tool_deferred(T, 1, tr, CH('b'));
    cr_assert_eq(h2.data2, h1_copy.data2, "entry expected to be reused");
    cr_assert_eq(futoin_tool_is_valid(T, &h1_copy), 0);
    futoin_tool_cancel(T, &h1_copy);
    cr_assert_eq(futoin_tool_is_valid(T, &h2), 1);
    run();
    assert_trace("ab");
}

Test(tool, deferred_garbage_pointer_ignored)
{
    int not_a_timer[16] = {0};
    FutoInHandle h = futoin_tool_deferred(T, 1, tr, CH('a'));
    FutoInHandle bad = {T, not_a_timer, 0};
    FutoInHandle misaligned = h;
    misaligned.data2 = (char*)h.data2 + 1;
    cr_assert_eq(futoin_tool_is_valid(T, &bad), 0);
    futoin_tool_cancel(T, &bad);
    cr_assert_eq(futoin_tool_is_valid(T, &misaligned), 0);
    futoin_tool_cancel(T, &misaligned);
    cr_assert_eq(futoin_tool_is_valid(T, &h), 1);
    run();
    assert_trace("a");
}

static void reschedule_zero(void* data)
{
    uintptr_t left = (uintptr_t)data;
    tr(CH('r'));
    if (left > 0) {
        futoin_tool_deferred(T, 0, reschedule_zero, (void*)(left - 1));
    }
}

/* A zero-delay timer started from a timer callback waits for the next
 * turn instead of running in the same pass forever. */
Test(tool, deferred_zero_from_timer)
{
    futoin_tool_deferred(T, 0, reschedule_zero, (void*)(uintptr_t)2);
    cr_assert_eq(futoin_tool_run_nowait(T), 1);
    assert_trace("r");
    run();
    assert_trace("rrr");
}

/* The same when the callback took a while: the zero-delay timer it starts
 * is counted from a fresh reading of the clock (the loop's cached time is
 * that of the turn's start), which must not make it due in this pass. */
static void reschedule_zero_slowly(void* data)
{
    uintptr_t left = (uintptr_t)data;
    uv_sleep(2); /* the clock moves past the turn's cached time */
    tr(CH('s'));
    if (left > 0) {
        futoin_tool_deferred(T, 0, reschedule_zero_slowly, (void*)(left - 1));
    }
}

Test(tool, deferred_zero_from_a_slow_timer)
{
    futoin_tool_deferred(T, 0, reschedule_zero_slowly, (void*)(uintptr_t)2);
    cr_assert_eq(futoin_tool_run_nowait(T), 1);
    assert_trace("s");
    run();
    assert_trace("sss");
}

static uint32_t heap_last_delay;
static uint32_t heap_fired;
static uint32_t heap_bad;

static void heap_check(void* data)
{
    uint32_t key = (uint32_t)(uintptr_t)data; /* delay * 65536 + index */
    if (key < heap_last_delay) {
        ++heap_bad;
    }
    heap_last_delay = key;
    ++heap_fired;
}

/* Heap order with random delays and random cancels, FIFO among equals. */
Test(tool, deferred_heap_random)
{
    enum
    {
        N = 3000
    };
    static FutoInHandle h[N];
    uint32_t rnd = 12345;
    uint32_t cancelled = 0;
    heap_last_delay = 0;
    heap_fired = 0;
    heap_bad = 0;
    for (uint32_t i = 0; i < N; ++i) {
        uint32_t delay;
        rnd = rnd * 1103515245u + 12345u;
        delay = (rnd >> 16) % 8;
        h[i] = futoin_tool_deferred(T, delay, heap_check,
                                    (void*)(uintptr_t)(delay * 65536 + i));
    }
    for (uint32_t i = 0; i < N; i += 7) {
        futoin_tool_cancel(T, &h[i]);
        ++cancelled;
    }
    run();
    cr_assert_eq(heap_bad, 0);
    cr_assert_eq(heap_fired, N - cancelled);
}

/* ---- threads ---------------------------------------------------------------- */

enum
{
    RT_THREADS = 4,
    RT_PER_THREAD = 10000
};

static uint32_t rt_next[RT_THREADS]; /* loop thread only */
static uint32_t rt_bad_order;
static uint32_t rt_bad_thread;
static uint32_t rt_total;
/* A step that waits keeps run() going until the last post completes it:
 * no timer, so nothing depends on how long the producers take. */
static FutoInAsyncSteps* rt_waiting;
static uv_thread_t rt_threads[RT_THREADS];

static void rt_cb(void* data)
{
    uintptr_t v = (uintptr_t)data;
    uint32_t thread = (uint32_t)(v / RT_PER_THREAD);
    uint32_t i = (uint32_t)(v % RT_PER_THREAD);
    if (futoin_tool_is_same_thread(T) != 1) {
        ++rt_bad_thread;
    }
    /* one producer's posts arrive in its order, each exactly once */
    if (rt_next[thread] != i) {
        ++rt_bad_order;
    }
    rt_next[thread] = i + 1;
    if (++rt_total == RT_THREADS * RT_PER_THREAD) {
        rt_waiting->api->success(rt_waiting, NULL);
    }
}

static void rt_producer(void* arg)
{
    uintptr_t thread = (uintptr_t)arg;
    for (uintptr_t i = 0; i < RT_PER_THREAD; ++i) {
        FutoInHandle h = futoin_tool_immediate(
                T, rt_cb, (void*)(thread * RT_PER_THREAD + i));
        if (!handle_is_zero(&h) || !FUTOIN_HANDLE_QUEUED(h)) {
            ++rt_bad_thread; /* remote handles are inert, and queued */
        }
    }
}

/* The producers start once the step waits, so the last post finds it. */
static void rt_wait_for_posts(FutoInAsyncSteps* as, void* d,
                              const FutoInArgs* a)
{
    rt_waiting = as;
    as->api->waitExternal(as);
    for (uintptr_t t = 0; t < RT_THREADS; ++t) {
        cr_assert_eq(uv_thread_create(&rt_threads[t], rt_producer, (void*)t), 0);
    }
}

Test(tool, immediates_from_other_threads)
{
    FutoInAsyncSteps* root = futoin_root_new(T);
    root->api->add(root, NULL, rt_wait_for_posts, NULL);
    root->api->execute(root, NULL, NULL);
    run();
    for (int t = 0; t < RT_THREADS; ++t) {
        uv_thread_join(&rt_threads[t]);
    }
    root->api->free(root);
    cr_assert_eq(rt_total, RT_THREADS * RT_PER_THREAD);
    for (int t = 0; t < RT_THREADS; ++t) {
        cr_assert_eq(rt_next[t], RT_PER_THREAD);
    }
    cr_assert_eq(rt_bad_thread, 0);
    cr_assert_eq(rt_bad_order, 0);
    assert_trace("");
}

static void post_one(void* arg)
{
    (void)arg;
    futoin_tool_immediate(T, tr, CH('r'));
}

/* A remote post still queued when the tool is freed is dropped (freed,
 * never called); the leak checkers verify the node is released. */
Test(tool, remote_post_dropped_at_free)
{
    uv_thread_t th;
    cr_assert_eq(uv_thread_create(&th, post_one, NULL), 0);
    uv_thread_join(&th);
    assert_trace("");
}

static int other_thread_same;

static void ask_same_thread(void* arg)
{
    (void)arg;
    other_thread_same = futoin_tool_is_same_thread(T);
}

Test(tool, is_same_thread)
{
    uv_thread_t th;
    other_thread_same = -1;
    cr_assert_eq(futoin_tool_is_same_thread(T), 1);
    cr_assert_eq(uv_thread_create(&th, ask_same_thread, NULL), 0);
    uv_thread_join(&th);
    cr_assert_eq(other_thread_same, 0);
    cr_assert_eq(futoin_tool_is_same_thread(NULL), 0);
}

static void deferred_off_thread(void* arg)
{
    FutoInHandle* out = arg;
    *out = futoin_tool_deferred(T, 1, tr, CH('d'));
}

Test(tool, deferred_off_thread_is_misuse)
{
    uv_thread_t th;
    FutoInHandle h = {T, T, 1};
    cr_assert_eq(uv_thread_create(&th, deferred_off_thread, &h), 0);
    uv_thread_join(&th);
    cr_assert(handle_not_queued(&h));
    cr_assert_eq(misuse_seen, 1);
    cr_assert_eq(futoin_tool_misuse_count(T), 1);
    run();
    assert_trace("");
}

/* ---- loop ownership ------------------------------------------------------- */

static FutoInAsyncSteps* attached_step;
static void attached_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr(CH('w'));
    attached_step = as;
    as->api->waitExternal(as);
}
static void attached_done(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr(d);
}
static void attached_complete(void* d)
{
    attached_step->api->success(attached_step, NULL);
}

Test(tool_bare, attach_external_loop)
{
    uv_loop_t loop;
    futoin_tool* tool;
    FutoInAsyncSteps* root;
    futoin_tool_options o;
    trace_len = 0;
    trace[0] = 0;
    cr_assert_eq(uv_loop_init(&loop), 0);
    cr_assert_eq(futoin_tool_options_init(&o, FUTOIN_TOOL_OPTIONS_VERSION),
                 FUTOIN_OK);
    o.uv_loop = &loop;
    cr_assert_eq(futoin_tool_new(&tool, &o), FUTOIN_OK);
    cr_assert_eq(futoin_tool_uv_loop(tool), &loop);
    cr_assert_eq(futoin_tool_run(tool), FUTOIN_EINVAL);

    /* A root that waits is pending work whatever the time: the
     * non-blocking pass runs the immediate and reports it. */
    root = futoin_root_new(tool);
    root->api->add(root, NULL, attached_wait, NULL);
    root->api->add(root, CH('d'), attached_done, NULL);
    root->api->execute(root, NULL, NULL);
    futoin_tool_immediate(tool, tr, CH('i'));
    cr_assert_eq(futoin_tool_run_nowait(tool), 1);
    assert_trace("wi");
    /* the owner's loop runs the rest: a timer completes the step */
    futoin_tool_deferred(tool, 1, attached_complete, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_trace("wid");
    root->api->free(root);

    /* pending work is dropped, the loop stays open and clean */
    futoin_tool_immediate(tool, tr, CH('x'));
    futoin_tool_deferred(tool, 1, tr, CH('y'));
    cr_assert_eq(futoin_tool_free(tool), FUTOIN_OK);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_trace("wid");
    cr_assert_eq(uv_loop_close(&loop), 0);
}

/* futoin_tool_free() on an attached loop, called from the loop owner's own
 * callback: it must not run the owner's loop (uv_run is not reentrant);
 * the owner's next pass releases the tool. */
static int foreign_idle_calls;
static int freed_in_timer;

static void foreign_idle(uv_idle_t* h)
{
    (void)h;
    ++foreign_idle_calls;
}

static void free_tool_from_owner_timer(uv_timer_t* t)
{
    futoin_tool* tool = t->data;
    int before = foreign_idle_calls;
    freed_in_timer = futoin_tool_free(tool) == FUTOIN_OK
                     && foreign_idle_calls == before;
    uv_close((uv_handle_t*)t, NULL);
}

Test(tool_bare, free_from_attached_loop_owner_callback)
{
    uv_loop_t loop;
    uv_timer_t timer;
    uv_idle_t idle;
    futoin_tool* tool;
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    cr_assert_eq(uv_loop_init(&loop), 0);
    o.uv_loop = &loop;
    cr_assert_eq(futoin_tool_new(&tool, &o), FUTOIN_OK);
    futoin_tool_deferred(tool, 100000, tr, CH('z')); /* dropped by free */
    foreign_idle_calls = 0;
    freed_in_timer = 0;
    uv_idle_init(&loop, &idle);
    uv_idle_start(&idle, foreign_idle);
    uv_timer_init(&loop, &timer);
    timer.data = tool;
    uv_timer_start(&timer, free_tool_from_owner_timer, 0, 0);
    while (uv_is_active((uv_handle_t*)&timer)) {
        uv_run(&loop, UV_RUN_ONCE);
    }
    cr_assert(freed_in_timer, "free refused, or it ran the owner's loop");
    uv_idle_stop(&idle);
    uv_close((uv_handle_t*)&idle, NULL);
    uv_run(&loop, UV_RUN_DEFAULT); /* close callbacks release the tool */
    cr_assert_eq(uv_loop_close(&loop), 0);
}

Test(tool, own_loop)
{
    cr_assert_not_null(futoin_tool_uv_loop(T));
    cr_assert_eq(futoin_tool_run_nowait(T), 0);
    futoin_tool_immediate(T, tr, CH('a'));
    cr_assert_eq(futoin_tool_run_nowait(T), 0);
    assert_trace("a");
}

Test(tool, free_drops_pending)
{
    futoin_tool_immediate(T, tr, CH('a'));
    futoin_tool_deferred(T, 1, tr, CH('b'));
    /* teardown frees with both pending; neither may run */
}

/* A callback that stops the loop ends the run it runs in, and only that
 * one: here it runs before the loop turns (futoin_tool_run() runs what is
 * queued first) and nothing else is left, so libuv's own run, which would
 * consume the request, is never entered. A binding stops its run() this
 * way (Python at KeyboardInterrupt in a step). */
static void tr_then_stop(void* data)
{
    tr(data);
    uv_stop(futoin_tool_uv_loop(T));
}

Test(tool, uv_stop_before_the_loop_turns_ends_only_that_run)
{
    futoin_tool_immediate(T, tr_then_stop, CH('s'));
    run();
    assert_trace("s");
    futoin_tool_deferred(T, 0, tr, CH('d')); /* needs a turn of the loop */
    run();
    assert_trace("sd");
}

static int free_inside_rc;
static int run_inside_rc;

static void free_inside(void* data)
{
    (void)data;
    free_inside_rc = futoin_tool_free(T);
    run_inside_rc = futoin_tool_run(T);
}

Test(tool, free_and_run_refused_inside_callback)
{
    futoin_tool_immediate(T, free_inside, NULL);
    run();
    cr_assert_eq(free_inside_rc, FUTOIN_EBUSY);
    cr_assert_eq(run_inside_rc, FUTOIN_EINVAL);
    cr_assert_eq(misuse_seen, 1);
}

/* futoin_tool_run() runs what is queued before it enters libuv (its fast
 * path, no uv_run() around the burst); when a handle that is not the
 * tool's is still alive after that, it runs the loop, and that handle's
 * callback is inside the run too: freeing the tool or running it again
 * from there is refused as from the tool's own callbacks. */
static uv_timer_t foreign_timer;
static void foreign_timer_cb(uv_timer_t* t)
{
    tr(CH('t'));
    free_inside_rc = futoin_tool_free(T);
    run_inside_rc = futoin_tool_run(T);
    uv_close((uv_handle_t*)t, NULL);
}

Test(tool, a_foreign_handle_runs_after_the_queue_inside_the_same_run)
{
    cr_assert_eq(uv_timer_init(futoin_tool_uv_loop(T), &foreign_timer), 0);
    cr_assert_eq(uv_timer_start(&foreign_timer, foreign_timer_cb, 0, 0), 0);
    futoin_tool_immediate(T, tr, CH('a'));
    futoin_tool_immediate(T, tr, CH('b'));
    free_inside_rc = run_inside_rc = 0;
    run();
    assert_trace("abt");
    cr_assert_eq(free_inside_rc, FUTOIN_EBUSY);
    cr_assert_eq(run_inside_rc, FUTOIN_EINVAL);
    cr_assert_eq(misuse_seen, 1);
    cr_assert(strstr(misuse_last, "called while running"), "%s", misuse_last);
}

/* ---- misuse ----------------------------------------------------------------- */

Test(tool, misuse_callback_counts)
{
    FutoInHandle h = futoin_tool_immediate(T, NULL, NULL);
    cr_assert(handle_not_queued(&h));
    cr_assert_eq(futoin_tool_is_valid(T, &h), 0);
    cr_assert_eq(misuse_seen, 1);
    cr_assert_str_eq(misuse_last,
                     "InternalError: futoin_tool_immediate(): NULL callback");
    h = futoin_tool_deferred(T, 1, NULL, NULL);
    cr_assert(handle_not_queued(&h));
    futoin_tool_cancel(T, &h); /* a no-op, never an error */
    cr_assert(handle_not_queued(&h));
    cr_assert_eq(misuse_seen, 2);
    cr_assert_eq(futoin_tool_misuse_count(T), 2);
    cr_assert_eq(futoin_tool_misuse_count(NULL), 0);
}

Test(tool_bare, misuse_default_goes_to_stderr)
{
    futoin_tool* tool;
    cr_assert_eq(futoin_tool_new(&tool, NULL), FUTOIN_OK);
    cr_redirect_stderr();
    futoin_tool_immediate(tool, NULL, NULL);
    fflush(stderr);
    cr_assert_stderr_eq_str(
            "futoin: InternalError: futoin_tool_immediate(): NULL callback\n");
    cr_assert_eq(futoin_tool_misuse_count(tool), 1);
    cr_assert_eq(futoin_tool_free(tool), FUTOIN_OK);
}

/* ---- options, errors, version ---------------------------------------------- */

Test(tables, options_init)
{
    futoin_tool_options init = FUTOIN_TOOL_OPTIONS_INIT;
    futoin_tool_options o;
    futoin_tool* tool = (futoin_tool*)&o;
    memset(&o, 0xA5, sizeof(o));
    cr_assert_eq(futoin_tool_options_init(&o, FUTOIN_TOOL_OPTIONS_VERSION),
                 FUTOIN_OK);
    cr_assert_eq(o.version, init.version);
    cr_assert_eq(o.uv_loop, init.uv_loop);
    cr_assert_eq(o.misuse, init.misuse);
    cr_assert_eq(o.misuse_data, init.misuse_data);
    cr_assert_eq(o.trim_idle_ms, init.trim_idle_ms);
    cr_assert_eq(o.trim_idle_ms, FUTOIN_TOOL_TRIM_IDLE_MS_DEFAULT);
    cr_assert_gt(FUTOIN_TOOL_TRIM_IDLE_MS_DEFAULT, 0, "trimming on idle is on");

    cr_assert_eq(futoin_tool_options_init(&o, 0), FUTOIN_EVERSION);
    cr_assert_eq(futoin_tool_options_init(&o, FUTOIN_TOOL_OPTIONS_VERSION + 1),
                 FUTOIN_EVERSION);
    cr_assert_eq(futoin_tool_options_init(NULL, FUTOIN_TOOL_OPTIONS_VERSION),
                 FUTOIN_EINVAL);

    o = init;
    o.version = 99;
    cr_assert_eq(futoin_tool_new(&tool, &o), FUTOIN_EVERSION);
    cr_assert_eq(tool, (futoin_tool*)&o, "out set on failure");
    cr_assert_eq(futoin_tool_new(NULL, NULL), FUTOIN_EINVAL);
    cr_assert_eq(futoin_tool_free(NULL), FUTOIN_EINVAL);
}

/* Version 1 of the options (0.1.0, 0.2.0) ends after misuse_data: the
 * library writes and reads nothing past it for a caller of version 1, and
 * such a tool trims on idle with the default delay. */
Test(tables, options_of_version_1_still_work)
{
    futoin_tool_options o;
    futoin_tool* tool = NULL;
    memset(&o, 0xA5, sizeof(o));
    cr_assert_eq(futoin_tool_options_init(&o, 1), FUTOIN_OK);
    cr_assert_eq(o.version, 1);
    cr_assert_null(o.uv_loop);
    cr_assert_null(o.misuse);
    cr_assert_null(o.misuse_data);
    cr_assert_eq(o.trim_idle_ms, 0xA5A5A5A5u, "wrote past a version 1 struct");
    cr_assert_eq(futoin_tool_new(&tool, &o), FUTOIN_OK);
    cr_assert_not_null(tool);
    cr_assert_eq(futoin_tool_free(tool), FUTOIN_OK);
    /* exactly the old size: ASan and valgrind see any access past it */
    size_t v1_size = offsetof(futoin_tool_options, trim_idle_ms);
    futoin_tool_options* v1 = malloc(v1_size);
    cr_assert_not_null(v1);
    cr_assert_eq(futoin_tool_options_init(v1, 1), FUTOIN_OK);
    tool = NULL;
    cr_assert_eq(futoin_tool_new(&tool, v1), FUTOIN_OK);
    cr_assert_eq(futoin_tool_free(tool), FUTOIN_OK);
    free(v1);
}

Test(tables, error_names_round_trip)
{
    static const char* const constants[FUTOIN_ERROR_COUNT] = {
#define X(e, s, d) FUTOIN_ERR_##e,
            FUTOIN_ERROR_MAP(X)
#undef X
    };
    for (int i = 0; i < (int)FUTOIN_ERROR_COUNT; ++i) {
        const char* name = futoin_error_name((futoin_error)i);
        cr_assert_not_null(name);
        cr_assert_eq(futoin_error_name((futoin_error)i), name,
                     "same pointer every call");
        cr_assert_str_eq(name, constants[i]);
        cr_assert_eq(futoin_error_lookup(name), i);
        cr_assert_not_null(futoin_error_description((futoin_error)i));
    }
    cr_assert_str_eq(futoin_error_name(FUTOIN_ERROR_TIMEOUT), "Timeout");
    cr_assert_eq(futoin_error_lookup("InternalError"),
                 FUTOIN_ERROR_INTERNAL_ERROR);
    cr_assert_null(futoin_error_name(FUTOIN_ERROR_COUNT));
    cr_assert_null(futoin_error_name((futoin_error)-1));
    cr_assert_null(futoin_error_description(FUTOIN_ERROR_COUNT));
    cr_assert_eq(futoin_error_lookup("myerror"), -1);
    cr_assert_eq(futoin_error_lookup("timeout"), -1);
    cr_assert_eq(futoin_error_lookup(""), -1);
    cr_assert_eq(futoin_error_lookup(NULL), -1);
}

Test(tables, version)
{
    cr_assert_str_eq(futoin_async_version(), FUTOIN_VERSION_STRING);
    cr_assert_eq(futoin_async_version_number(), FUTOIN_VERSION_NUMBER);
    cr_assert_eq(futoin_async_version_number(), 300);
}

/* ---- timers started after the loop's cached time went old ---------------
 * libuv caches the loop's time at the start of each turn. A timer started
 * after a long callback on someone else's loop (Node.js, asyncio's, an
 * embedder's), or on our own loop between two runs, must count its delay
 * from when it was started, not from that cached time: else it fires early
 * by however long the loop was busy (futoin_tool_deferred(50) fired after
 * 1 ms from a Node.js callback that had computed for 200 ms). Each test
 * checks a lower bound only (a timer never fires before its delay): a
 * loaded machine can only make it later. */

#define LATE_BUSY_MS 120
#define LATE_DELAY_MS 100

static uint64_t late_t0;
static uint64_t late_elapsed_ms;
static int late_fired;

static void late_fire(void* d)
{
    (void)d;
    late_elapsed_ms = (uv_hrtime() - late_t0) / 1000000u;
    ++late_fired;
}

static void late_start(futoin_tool* tool)
{
    late_t0 = uv_hrtime();
    futoin_tool_deferred(tool, LATE_DELAY_MS, late_fire, NULL);
}

static void late_owner_timer(uv_timer_t* t)
{
    uv_sleep(LATE_BUSY_MS); /* the loop's cached time is now that old */
    late_start(t->data);
    uv_close((uv_handle_t*)t, NULL);
}

/* One ms of slack: the loop's time is in whole ms (truncated). */
static void assert_not_early(void)
{
    cr_assert_eq(late_fired, 1);
    cr_assert_geq(late_elapsed_ms, LATE_DELAY_MS - 1,
                  "a %d ms timer fired after %llu ms", LATE_DELAY_MS,
                  (unsigned long long)late_elapsed_ms);
}

Test(tool_bare, deferred_after_a_long_callback_on_an_attached_loop)
{
    uv_loop_t loop;
    uv_timer_t timer;
    futoin_tool* tool;
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    late_fired = 0;
    cr_assert_eq(uv_loop_init(&loop), 0);
    o.uv_loop = &loop;
    cr_assert_eq(futoin_tool_new(&tool, &o), FUTOIN_OK);
    uv_timer_init(&loop, &timer);
    timer.data = tool;
    uv_timer_start(&timer, late_owner_timer, 0, 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_not_early();
    cr_assert_eq(futoin_tool_free(tool), FUTOIN_OK);
    uv_run(&loop, UV_RUN_DEFAULT);
    cr_assert_eq(uv_loop_close(&loop), 0);
}

Test(tool_bare, deferred_between_runs_of_its_own_loop)
{
    futoin_tool* tool;
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    late_fired = 0;
    cr_assert_eq(futoin_tool_new(&tool, &o), FUTOIN_OK);
    futoin_tool_immediate(tool, tr, CH('a'));
    cr_assert_eq(futoin_tool_run(tool), FUTOIN_OK);
    uv_sleep(LATE_BUSY_MS); /* the program works between two runs */
    late_start(tool);
    cr_assert_eq(futoin_tool_run(tool), FUTOIN_OK);
    assert_not_early();
    cr_assert_eq(futoin_tool_free(tool), FUTOIN_OK);
}

/* A step's timeout set by a step that runs right after a long one, in
 * the tool's burst on an attached loop. */
static uint64_t late_timeout_ms;
static void late_busy_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)as; (void)d; (void)a;
    uv_sleep(LATE_BUSY_MS);
}
static void late_wait_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)d; (void)a;
    late_t0 = uv_hrtime();
    as->api->setTimeout(as, LATE_DELAY_MS);
}
static void late_timeout_eh(FutoInAsyncSteps* as, void* d, const char* code)
{
    (void)d;
    if (strcmp(code, "Timeout") == 0) {
        late_timeout_ms = (uv_hrtime() - late_t0) / 1000000u;
        as->api->success(as, NULL);
    }
}

Test(tool_bare, step_timeout_after_a_long_step_on_an_attached_loop)
{
    uv_loop_t loop;
    futoin_tool* tool;
    FutoInAsyncSteps* root;
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    late_timeout_ms = 0;
    cr_assert_eq(uv_loop_init(&loop), 0);
    o.uv_loop = &loop;
    cr_assert_eq(futoin_tool_new(&tool, &o), FUTOIN_OK);
    root = futoin_root_new(tool);
    root->api->add(root, NULL, late_busy_step, NULL);
    root->api->add(root, NULL, late_wait_step, late_timeout_eh);
    root->api->execute(root, NULL, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    cr_assert_geq(late_timeout_ms, LATE_DELAY_MS - 1,
                  "a %d ms step timeout fired after %llu ms", LATE_DELAY_MS,
                  (unsigned long long)late_timeout_ms);
    root->api->free(root);
    cr_assert_eq(futoin_tool_free(tool), FUTOIN_OK);
    uv_run(&loop, UV_RUN_DEFAULT);
    cr_assert_eq(uv_loop_close(&loop), 0);
}
