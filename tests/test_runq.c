/* The run queue (tool/tool.h futoin__tool_rq): flows scheduled one after
 * another share one slot of the immediate ring, a batch linked through
 * the flows. What it must keep: the order of flows and immediates as if
 * each had a slot of its own, the burst budget counted per flow, and a
 * batch that stays whole when a flow in it is freed, cancelled, restarted
 * or taken again from its pool before the batch reached it. */
#include "common.h"

#include <stdint.h>

TestSuite(runq, .init = fx_setup, .fini = fx_teardown);

static void say(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)as;
    (void)a;
    tr("%s", (const char*)d);
}

static void imm_say(void* d)
{
    tr("%s", (const char*)d);
}

static FutoInAsyncSteps* root_saying(const char* what)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    cr_assert_not_null(as);
    API(as)->add(as, (void*)what, say, NULL);
    return as;
}

static void exec(FutoInAsyncSteps* as)
{
    API(as)->execute(as, NULL, NULL);
}

Test(runq, flows_and_immediates_keep_their_order)
{
    FutoInAsyncSteps* r[4];
    r[0] = root_saying("A");
    r[1] = root_saying("B");
    r[2] = root_saying("C");
    r[3] = root_saying("D");
    exec(r[0]);
    exec(r[1]);
    futoin_tool_immediate(T, imm_say, "x");
    exec(r[2]);
    exec(r[3]);
    futoin_tool_immediate(T, imm_say, "y");
    run();
    assert_trace("A\nB\nx\nC\nD\ny\n");
    for (int i = 0; i < 4; ++i) {
        API(r[i])->free(r[i]);
    }
}

/* A flow that yields (its step budget is used up) goes behind what was
 * queued meanwhile, in the same batch or after an immediate. */
static void count_to(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)a;
    (void)d;
    static int n;
    if (++n % 300 == 0) {
        tr("step %d", n);
    }
    (void)as;
}

Test(runq, a_yielding_flow_goes_behind_the_others)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    FutoInAsyncSteps* b = root_saying("B");
    for (int i = 0; i < 600; ++i) {
        API(a)->add(a, NULL, count_to, NULL);
    }
    exec(a);
    exec(b);
    futoin_tool_immediate(T, imm_say, "x");
    run();
    /* 256 steps per turn (FUTOIN__FLOW_BUDGET): a runs 256, B, x, 256, 88 */
    assert_trace("B\nx\nstep 300\nstep 600\n");
    API(a)->free(a);
    API(b)->free(b);
}

/* Roots A, B and C executed one after another: one batch. */
static void three_in_a_batch(FutoInAsyncSteps** a, FutoInAsyncSteps** b,
                             FutoInAsyncSteps** c)
{
    *a = root_saying("A");
    *b = root_saying("B");
    *c = root_saying("C");
    exec(*a);
    exec(*b);
    exec(*c);
}

Test(runq, a_root_freed_while_scheduled_leaves_its_batch_whole)
{
    FutoInAsyncSteps *a, *b, *c;
    three_in_a_batch(&a, &b, &c);
    API(b)->free(b);
    API(a)->free(a);
    run();
    assert_trace("C\n");
    API(c)->free(c);
}

Test(runq, a_root_cancelled_and_executed_again_while_scheduled_runs_once)
{
    FutoInAsyncSteps *a, *b, *c;
    three_in_a_batch(&a, &b, &c);
    API(b)->cancel(b);
    API(b)->add(b, "B again", say, NULL);
    exec(b);
    run();
    /* b keeps its place in the batch, where its first slot would have run
     * it before the run queue */
    assert_trace("A\nB again\nC\n");
    API(a)->free(a);
    API(b)->free(b);
    API(c)->free(c);
}

/* More than the roots' pool keeps in quarantine (pool.c: 256). */
#define PAST_QUARANTINE 300

Test(runq, a_root_freed_while_scheduled_and_taken_again_runs_in_its_place)
{
    static FutoInAsyncSteps* filler[PAST_QUARANTINE];
    FutoInAsyncSteps* a = root_saying("A");
    FutoInAsyncSteps* b = root_saying("B");
    FutoInAsyncSteps* n;
    exec(a);
    exec(b);
    API(a)->free(a);
    /* Push a's record out of the quarantine: it is the next one taken. */
    for (int i = 0; i < PAST_QUARANTINE; ++i) {
        filler[i] = futoin_root_new(T);
    }
    for (int i = 0; i < PAST_QUARANTINE; ++i) {
        API(filler[i])->free(filler[i]);
    }
    n = root_saying("N");
    cr_assert_eq(n, a, "the test needs a's record back from the pool");
    exec(n);
    run();
    assert_trace("N\nB\n");
    API(n)->free(n);
    API(b)->free(b);
}

/* ---- parallel branches cancelled or freed while scheduled -------------- */

static FutoInAsyncSteps* victim;
static int victim_freed;

static void branch(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)as;
    (void)a;
    tr("%s", (const char*)d);
}

static void start_par(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)a;
    const char* const* names = d;
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, NULL);
    for (int i = 0; names[i]; ++i) {
        API(p)->add(p, (void*)names[i], branch, NULL);
    }
}

static const char* const victim_branches[] = {"v1", "v2", "v3", NULL};
static const char* const killer_branches[] = {"k1", "k2", "k3", NULL};

/* Ends the victim while its branches wait in the batch behind this flow,
 * then starts branches of its own, whose flows are the victim's records
 * (the flows' pool reuses them at once). */
static void kill_victim(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)a;
    tr("kill");
    if (d) {
        API(victim)->free(victim);
        victim_freed = 1;
    } else {
        API(victim)->cancel(victim);
    }
    start_par(as, (void*)killer_branches, NULL);
}

static void par_victim_case(int free_it)
{
    FutoInAsyncSteps* v = futoin_root_new(T);
    FutoInAsyncSteps* k = futoin_root_new(T);
    victim = v;
    victim_freed = 0;
    API(v)->add(v, (void*)victim_branches, start_par, NULL);
    API(k)->add(k, free_it ? (void*)1 : NULL, kill_victim, NULL);
    /* one batch [v, k]; v's branches join it behind k */
    exec(v);
    exec(k);
    run();
    assert_trace("kill\nk1\nk2\nk3\n");
    if (!victim_freed) {
        API(v)->free(v);
    }
    API(k)->free(k);
}

Test(runq, a_parallel_cancelled_while_its_branches_are_scheduled)
{
    par_victim_case(0);
}

Test(runq, a_parallel_freed_while_its_branches_are_scheduled)
{
    par_victim_case(1);
}

/* ---- fairness: a batch is not one unit of the burst budget -------------- */

#define MANY 5000
static FutoInAsyncSteps* many[MANY];
static int ran;
static int ran_at_timer = -1;

static void on_timer(void* d)
{
    (void)d;
    ran_at_timer = ran;
}

static void count_and_arm(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)as;
    (void)a;
    (void)d;
    if (ran++ == 0) {
        /* due at once: it fires at libuv's next turn, when this burst ends */
        futoin_tool_deferred(T, 0, on_timer, NULL);
    }
}

Test(runq, a_batch_counts_each_flow_against_the_burst_budget)
{
    ran = 0;
    ran_at_timer = -1;
    for (int i = 0; i < MANY; ++i) {
        many[i] = futoin_root_new(T);
        API(many[i])->add(many[i], NULL, count_and_arm, NULL);
        exec(many[i]);
    }
    run();
    cr_assert_eq(ran, MANY);
    /* FUTOIN__IMM_BURST_BUDGET (4096) flows at most, fewer if the time
     * slice ended the burst first */
    cr_assert(ran_at_timer > 0 && ran_at_timer <= 4096,
              "the timer fired after %d flows", ran_at_timer);
    for (int i = 0; i < MANY; ++i) {
        API(many[i])->free(many[i]);
    }
}

/* ---- memory: scheduled flows take no ring slot ------------------------- */

static size_t waiting;
static FutoInAsyncSteps* waiters[MANY];

static void wait_here(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)d;
    (void)a;
    waiters[waiting++] = as;
    API(as)->waitExternal(as);
}

Test(runq, scheduled_flows_take_no_ring_slot)
{
    size_t given;
    waiting = 0;
    for (int i = 0; i < MANY; ++i) {
        many[i] = futoin_root_new(T);
        API(many[i])->add(many[i], NULL, wait_here, NULL);
        exec(many[i]);
    }
    while (waiting < MANY) {
        futoin_tool_run_nowait(T);
    }
    /* With a slot per flow the ring grew to 8,192 slots (128 KiB), which
     * a trim now gives back; the flows' records are all in use. */
    given = futoin_tool_trim(T);
    cr_assert_lt(given, 16384, "a trim gave back %zu bytes", given);
    for (int i = 0; i < MANY; ++i) {
        FutoInArgs v = {0};
        set_i64(&v, 0, 1);
        API(waiters[i])->success(waiters[i], &v);
    }
    given = futoin_tool_trim(T);
    cr_assert_lt(given, 16384, "a trim gave back %zu bytes", given);
    run();
    for (int i = 0; i < MANY; ++i) {
        API(many[i])->free(many[i]);
    }
}

/* A looping flow whose body adds one step yields after its budget, as any
 * flow does (FUTOIN__FLOW_BUDGET 256): an iteration counts three, its
 * body, its step and its end, so B runs after 85 of them. The body's first
 * sub-step runs without a turn of the loop in between (issue 22 step 9),
 * and still counts: without that, 128.
 *
 * The time slice (1 ms of wall clock, tool.h) may end A's burst sooner:
 * under valgrind the first run of fresh code is translated, and a loaded
 * machine may stop the thread, so B may come after fewer iterations. That
 * is the slice's right, and such an attempt says nothing about the budget:
 * it is run again, with fresh roots. More than 85 is a defect in any
 * attempt; one attempt at exactly 85 must come. */
static int loop_steps;
static int loop_steps_at_b;
static void loop_sub(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)as;
    (void)d;
    (void)a;
    ++loop_steps;
}
static void loop_adds_one(FutoInAsyncSteps* as, void* d)
{
    (void)d;
    if (loop_steps == 1000) {
        API(as)->breakLoop(as, NULL);
        return;
    }
    API(as)->add(as, NULL, loop_sub, NULL);
}
static void note_loop_steps(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)as;
    (void)d;
    (void)a;
    loop_steps_at_b = loop_steps;
}

Test(runq, a_looping_flow_yields_after_its_budget)
{
    enum { ATTEMPTS = 50 };
    int first = -1;
    int tries = 0;
    do {
        FutoInAsyncSteps* a = futoin_root_new(T);
        FutoInAsyncSteps* b = futoin_root_new(T);
        loop_steps = 0;
        loop_steps_at_b = -1;
        API(a)->loop(a, NULL, loop_adds_one, NULL);
        API(b)->add(b, NULL, note_loop_steps, NULL);
        exec(a);
        exec(b);
        run();
        cr_assert_eq(loop_steps, 1000);
        API(a)->free(a);
        API(b)->free(b);
        if (tries++ == 0) {
            first = loop_steps_at_b;
        }
        cr_assert(loop_steps_at_b >= 1 && loop_steps_at_b <= 85,
                  "B ran after %d iterations of A (the budget allows 85)",
                  loop_steps_at_b);
    } while (loop_steps_at_b != 85 && tries < ATTEMPTS);
    cr_assert_eq(loop_steps_at_b, 85,
                 "B never ran after exactly 85 iterations in %d attempts "
                 "(first %d, last %d)",
                 tries, first, loop_steps_at_b);
}

/* A flow of a batch queues so many immediates that the ring grows (and
 * moves) while the batch is walked: the batch's other flows still run in
 * their places, before those immediates, each once. */
static int imm_count;
static void imm_count_one(void* d)
{
    (void)d;
    if (++imm_count == 5000) {
        tr("5000 immediates");
    }
}
static void queue_many(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)d;
    (void)a;
    tr("A");
    for (int i = 0; i < 5000; ++i) {
        API(as)->sched_immediate(as, NULL, imm_count_one);
    }
}

Test(runq, a_batch_goes_on_when_a_flow_grows_the_ring)
{
    FutoInAsyncSteps* a = futoin_root_new(T);
    FutoInAsyncSteps* b = root_saying("B");
    FutoInAsyncSteps* c = root_saying("C");
    imm_count = 0;
    API(a)->add(a, NULL, queue_many, NULL);
    exec(a);
    exec(b);
    exec(c);
    run();
    assert_trace("A\nB\nC\n5000 immediates\n");
    cr_assert_eq(imm_count, 5000);
    API(a)->free(a);
    API(b)->free(b);
    API(c)->free(c);
}
