/* No malloc per step in steady state, shown with a counting allocator:
 * this executable interposes malloc/calloc/realloc/free (the library's
 * calls bind to them), and counts while `counting` is set. The same
 * allocator fails on a thread that sets `failing` (out of memory there, on
 * purpose). Not built under AddressSanitizer, which owns the allocator
 * itself. */
#include "common.h"

#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>

#include <execinfo.h>
#include <stdatomic.h>
#include <stdlib.h>

extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void __libc_free(void*);

static atomic_size_t n_alloc;
static atomic_int counting;
static __thread int failing; /* this thread's allocations fail */

/* FUTOIN_ALLOC_TRACE=1 prints where a steady-state allocation came from. */
static void counted(void)
{
    static __thread int inside;
    atomic_fetch_add(&n_alloc, 1);
    if (!inside && getenv("FUTOIN_ALLOC_TRACE")) {
        void* frames[16];
        inside = 1;
        backtrace_symbols_fd(frames, backtrace(frames, 16), 2);
        inside = 0;
    }
}

void* malloc(size_t n)
{
    if (failing) {
        return NULL;
    }
    if (atomic_load(&counting)) {
        counted();
    }
    return __libc_malloc(n);
}
void* calloc(size_t a, size_t b)
{
    if (failing) {
        return NULL;
    }
    if (atomic_load(&counting)) {
        counted();
    }
    return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n)
{
    if (failing) {
        return NULL;
    }
    if (atomic_load(&counting)) {
        counted();
    }
    return __libc_realloc(p, n);
}
void free(void* p)
{
    __libc_free(p);
}

TestSuite(alloc, .init = fx_setup, .fini = fx_teardown);

static const FutoInType ty_int = {FTN_TYPE_INT64, NULL};

static void pass_value(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs out;
    memset(&out, 0, sizeof(out));
    out.arg0.type = &ty_int;
    out.arg0.i64 = a->arg0.type ? a->arg0.i64 + 1 : 0;
    API(as)->success(as, &out);
}
static void nested(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->add(as, NULL, pass_value, NULL);
    API(as)->add(as, NULL, pass_value, NULL);
}
static void body(FutoInAsyncSteps* as, void* d, size_t i)
{
    API(as)->add(as, NULL, pass_value, NULL);
}
static void resume(void* d)
{
    FutoInArgs out;
    memset(&out, 0, sizeof(out));
    out.arg0.type = &ty_int;
    out.arg0.i64 = 1;
    API((FutoInAsyncSteps*)d)->success(d, &out);
}
static void waits(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->waitExternal(as);
    API(as)->sched_immediate(as, as, resume);
}
static void branch(FutoInAsyncSteps* as, void* d, const FutoInArgs* a) {}

/* One flow of every common shape: values passed, sub-steps, a loop,
 * successStep, an external wait, a parallel with branches, and a root
 * created and freed. */
static void one_round(int steps)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    for (int i = 0; i < steps; ++i) {
        API(as)->add(as, NULL, pass_value, NULL);
        API(as)->add(as, NULL, nested, NULL);
    }
    API(as)->repeat(as, NULL, 100, body, NULL);
    {
        FutoInArgs v;
        memset(&v, 0, sizeof(v));
        v.arg0.type = &ty_int;
        v.arg0.i64 = 1;
        futoin_async_ext(as)->successStep(as, &v); /* pooled values */
        futoin_async_ext(as)->add(as, NULL, pass_value, NULL, NULL);
    }
    API(as)->add(as, NULL, waits, NULL);
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, NULL, branch, NULL);
    API(p)->add(p, NULL, branch, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    API(as)->free(as);
}

Test(alloc, no_malloc_per_step_in_steady_state)
{
    /* warm-up: pools and the ring reach their size; freed roots are
     * quarantined (reused only after 256 others), so cycle past that */
    one_round(20000);
    for (int i = 0; i < 600; ++i) {
        one_round(1);
    }
    atomic_store(&n_alloc, 0);
    atomic_store(&counting, 1);
    one_round(20000); /* ~100,000 steps */
    atomic_store(&counting, 0);
    cr_assert_eq(atomic_load(&n_alloc), 0,
                 "%zu allocations in steady state", atomic_load(&n_alloc));
}

/* A trim gives the pools' memory back; growing again reuses the blocks it
 * kept mapped (copy on write), so steady state still allocates nothing. */
Test(alloc, no_malloc_per_step_after_a_trim)
{
    futoin_tool_stats st = FUTOIN_TOOL_STATS_INIT;
    one_round(20000);
    for (int i = 0; i < 600; ++i) {
        one_round(1);
    }
    cr_assert_gt(futoin_tool_trim(T), 0);
    one_round(20000); /* the pools grow again, into the trimmed blocks */
    for (int i = 0; i < 600; ++i) {
        one_round(1);
    }
    atomic_store(&n_alloc, 0);
    atomic_store(&counting, 1);
    one_round(20000);
    atomic_store(&counting, 0);
    cr_assert_eq(atomic_load(&n_alloc), 0,
                 "%zu allocations in steady state after a trim",
                 atomic_load(&n_alloc));
    cr_assert_eq(futoin_tool_get_stats(T, &st), FUTOIN_OK);
    cr_assert_gt(st.trimmed_bytes, 0);
}

/* A C function added by name again and again (as a request handler adds
 * its steps per request) is resolved once: later adds and the steps' ends
 * allocate nothing, and the function still runs each time. */
static void give_minus_two(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs out;
    static const FutoInType ty_d = {FTN_TYPE_DOUBLE, NULL};
    memset(&out, 0, sizeof(out));
    out.arg0.type = &ty_d;
    out.arg0.d = -2.0;
    API(as)->success(as, &out);
}
static double got;
static void keep_double(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    got = a->arg0.type && a->arg0.type->flags == FTN_TYPE_DOUBLE ? a->arg0.d : -1;
}
static void c_by_name_round(int n)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    for (int i = 0; i < n; ++i) {
        API(as)->add(as, NULL, give_minus_two, NULL);
        cr_assert_eq(futoin_host_add(as, "c", "libm.so.6", "double fabs(double)"),
                     FUTOIN_OK);
        API(as)->add(as, NULL, keep_double, NULL);
    }
    got = 0;
    API(as)->execute(as, NULL, on_unhandled);
    run();
    cr_assert_eq(got, 2.0, "fabs(-2) gave %g", got);
    API(as)->free(as);
}

Test(alloc, a_c_step_added_by_name_again_allocates_nothing)
{
    c_by_name_round(2000);
    for (int i = 0; i < 600; ++i) {
        c_by_name_round(1);
    }
    atomic_store(&n_alloc, 0);
    atomic_store(&counting, 1);
    c_by_name_round(2000);
    atomic_store(&counting, 0);
    cr_assert_eq(atomic_load(&n_alloc), 0,
                 "%zu allocations for 2,000 C steps added by name",
                 atomic_load(&n_alloc));
}

/* ---- out of memory ------------------------------------------------------- */

static atomic_int posted_ran;
static void posted(void* d)
{
    atomic_fetch_add(&posted_ran, 1);
}

static FutoInHandle oom_h, ok_h;
static void* post_without_memory(void* arg)
{
    failing = 1;
    oom_h = futoin_tool_immediate(T, posted, NULL);
    failing = 0;
    ok_h = futoin_tool_immediate(T, posted, NULL);
    return NULL;
}

/* A post from another thread that could not be queued says so in the
 * handle it returns (and is reported), so that the caller can undo what
 * the callback would have done; one that was queued runs. */
Test(alloc, an_immediate_posted_without_memory_says_it_was_not_queued)
{
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, post_without_memory, NULL), 0);
    pthread_join(th, NULL);
    cr_assert(!FUTOIN_HANDLE_QUEUED(oom_h), "data3 = %td", oom_h.data3);
    cr_assert_eq(oom_h.data3, FUTOIN_HANDLE_NOT_QUEUED);
    cr_assert_eq(misuse_seen, 1);
    cr_assert_str_eq(misuse_last,
                     "InternalError: futoin_tool_immediate(): out of memory");
    cr_assert(FUTOIN_HANDLE_QUEUED(ok_h), "data3 = %td", ok_h.data3);
    run();
    cr_assert_eq(atomic_load(&posted_ran), 1, "only the queued post runs");
}

/* A raise takes a record of its own from the tool's pool (engine.h,
 * futoin__flow.raise). Out of memory it must still happen: the tool's
 * spare record keeps the first flow's raise whole, code and break target
 * included; any other flow keeps the raise in its one word, its code then
 * reading as InternalError. These run with the raise pool still empty, so
 * its first block cannot be had while `failing`. */

static FutoInAsyncSteps* oom_waiting[2];
static void oom_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    oom_waiting[(intptr_t)d] = as;
    API(as)->waitExternal(as);
}
static void oom_fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    ERROR(as, FUTOIN_ERR_INVALID_REQUEST);
}
static void oom_onerror(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("%s onerror %s", (const char*)d, code);
}
static void oom_wait_onerror(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("%c onerror %s", (int)"ab"[(intptr_t)d], code);
}
static void oom_after(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("%s", (const char*)d);
}

Test(alloc, an_error_raised_without_memory_keeps_its_code)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, "step", oom_fail, oom_onerror);
    API(as)->execute(as, NULL, on_unhandled);
    failing = 1;
    run();
    failing = 0;
    assert_trace("step onerror InvalidRequest\n"
                 "unhandled InvalidRequest\n");
    API(as)->free(as);
}

Test(alloc, errors_of_two_waiting_flows_without_memory_both_unwind)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    FutoInAsyncSteps* b = futoin_root_new(T);
    API(a)->add(a, (void*)0, oom_wait, oom_wait_onerror);
    API(a)->add(a, "a goes on", oom_after, NULL);
    API(b)->add(b, (void*)1, oom_wait, oom_wait_onerror);
    API(b)->add(b, "b goes on", oom_after, NULL);
    API(a)->execute(a, NULL, on_unhandled);
    API(b)->execute(b, NULL, on_unhandled);
    futoin_tool_run_nowait(T); /* both wait */
    cr_assert(oom_waiting[0] && oom_waiting[1]);
    /* Both errors are pending before either flow runs: the first takes
     * the spare, the second is bare. */
    failing = 1;
    ERROR(oom_waiting[0], FUTOIN_ERR_INVALID_REQUEST);
    ERROR(oom_waiting[1], FUTOIN_ERR_INVALID_REQUEST);
    run();
    failing = 0;
    assert_trace("a onerror InvalidRequest\nunhandled InvalidRequest\n"
                 "b onerror InternalError\nunhandled InternalError\n");
    API(a)->free(a);
    API(b)->free(b);
}

static void oom_body(FutoInAsyncSteps* as, void* d, size_t i)
{
    tr("body %zu", i);
    if (i == 1) {
        API(as)->breakLoop(as, NULL);
    }
}
static void oom_loop(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->repeat(as, NULL, 5, oom_body, NULL);
}

static void oom_loop_once(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->repeat(as, NULL, 1, oom_body, NULL);
}

/* Root `as` runs a loop that breaks, then the step "after", with the
 * allocator failing. */
static void break_without_memory(FutoInAsyncSteps* as, const char* after)
{
    trace_len = 0;
    trace_buf[0] = 0;
    API(as)->add(as, NULL, oom_loop, NULL);
    API(as)->add(as, (void*)after, oom_after, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    failing = 1;
    run();
    failing = 0;
}

Test(alloc, a_break_without_memory_still_ends_its_loop)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    /* a loop with no break first: its frame and body records are had
     * before `failing`, the raise pool stays empty */
    API(as)->add(as, NULL, oom_loop_once, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("body 0\n");
    break_without_memory(as, "after the loop");
    assert_trace("body 0\nbody 1\nafter the loop\n");
    /* the spare was given back: a second break needs it again */
    break_without_memory(as, "after again");
    assert_trace("body 0\nbody 1\nafter again\n");
    API(as)->free(as);
}
