/* Hooks (futoin/sys/hooks.h) and the live dump (futoin_tool_dump()): the
 * exact event sequence of each kind of flow, hooks set and cleared from
 * inside a hook, misuse refused, and the dump's report of waiting flows.
 * Virtual time throughout, so due times and waits are exact. */
#include "common.h"

#include <futoin/steps.h>
#include <futoin/sync.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/hooks.h>
#include <futoin/sys/wrap.h>
#include <pthread.h>
#include <stdlib.h>

TestSuite(hooks, .init = fx_setup_virtual, .fini = fx_teardown);
TestSuite(dump, .init = fx_setup_virtual, .fini = fx_teardown);

#define assert_no_misuse()                                                     \
    cr_assert_eq(misuse_seen, 0, "misuse reported: %s", misuse_last)

/* ---- a recorder: one trace line per event ------------------------------- */

static const char* const event_names[] = {
        "?",           "flow_started",  "flow_finished", "step_entered",
        "step_left",   "error_raised",  "error_handled", "cancel",
        "wait_begun",  "wait_ended",    "sync_acquired", "sync_released"};
static const char* const wait_names[] = {"none", "timer", "external", "sync",
                                         "foreign"};

/* A step's name: its function when the step comes from this file (added
 * with the FUTOIN_ADD macros), else its language and "lib" (the wait step
 * of a sync object). */
static const char* step_name(const futoin_hook_event* ev)
{
    const futoin_frame_origin* o = ev->origin;
    if (o && o->file && strstr(o->file, "test_hooks.c") && o->function) {
        return o->function;
    }
    return o && o->language && strcmp(o->language, "c") != 0 ? o->language
                                                                 : "lib";
}

static const char* prefix = "";

static void record(void* data, const futoin_hook_event* ev)
{
    char line[256];
    int n;
    (void)data;
    cr_assert_eq(ev->size, sizeof(futoin_hook_event));
    cr_assert_eq(ev->now, futoin_tool_now(T));
    n = snprintf(line, sizeof(line), "%s%s r%td", prefix,
                 event_names[ev->type], ev->root_id);
    if (ev->origin) {
        n += snprintf(line + n, sizeof(line) - (size_t)n, " %s", step_name(ev));
    } else if (ev->step) {
        n += snprintf(line + n, sizeof(line) - (size_t)n, " step");
    }
    switch (ev->type) {
    case FUTOIN_HOOK_FLOW_FINISHED:
        n += snprintf(line + n, sizeof(line) - (size_t)n, " %s%s%s",
                      ev->outcome == FUTOIN_HOOK_SUCCESS ? "success"
                      : ev->outcome == FUTOIN_HOOK_ERROR ? "error"
                                                         : "cancelled",
                      ev->code ? " " : "", ev->code ? ev->code : "");
        break;
    case FUTOIN_HOOK_ERROR_RAISED:
    case FUTOIN_HOOK_ERROR_HANDLED:
        n += snprintf(line + n, sizeof(line) - (size_t)n, " %s%s%s", ev->code,
                      ev->info ? " " : "", ev->info ? ev->info : "");
        break;
    case FUTOIN_HOOK_WAIT_BEGUN:
    case FUTOIN_HOOK_WAIT_ENDED:
        n += snprintf(line + n, sizeof(line) - (size_t)n, " %s",
                      wait_names[ev->wait]);
        if (ev->sync) {
            n += snprintf(line + n, sizeof(line) - (size_t)n, " sync");
        }
        if (ev->language) {
            n += snprintf(line + n, sizeof(line) - (size_t)n, " %s",
                          ev->language);
        }
        if (ev->due) {
            n += snprintf(line + n, sizeof(line) - (size_t)n, " due=%llu",
                          (unsigned long long)ev->due);
        }
        break;
    case FUTOIN_HOOK_SYNC_ACQUIRED:
    case FUTOIN_HOOK_SYNC_RELEASED:
        cr_assert_not_null(ev->sync);
        break;
    default:
        break;
    }
    n += snprintf(line + n, sizeof(line) - (size_t)n, " @%llu",
                  (unsigned long long)ev->now);
    tr("%s", line);
}

static futoin_hooks all_hooks(futoin_hook_cb cb, void* data)
{
    futoin_hooks h = FUTOIN_HOOKS_INIT;
    h.data = data;
    h.flow_started = h.flow_finished = h.step_entered = h.step_left = cb;
    h.error_raised = h.error_handled = h.cancel = cb;
    h.wait_begun = h.wait_ended = h.sync_acquired = h.sync_released = cb;
    return h;
}

static void hook_all(void)
{
    futoin_hooks h = all_hooks(record, NULL);
    prefix = "";
    cr_assert_eq(futoin_tool_set_hooks(T, &h), FUTOIN_OK);
}

static void advance(uint64_t ms)
{
    cr_assert_eq(futoin_tool_advance(T, ms), FUTOIN_OK);
}

static void free_root(FutoInAsyncSteps* r)
{
    r->api->free(r);
}

/* A root of T, then every hook recording (the test adds its steps). */
static FutoInAsyncSteps* hooked_root(void)
{
    FutoInAsyncSteps* r = futoin_root_new(T);
    hook_all();
    return r;
}

/* execute() with the recorder of unhandled errors, then the loop until it
 * has nothing ready. */
static void execute_run(FutoInAsyncSteps* r)
{
    r->api->execute(r, NULL, on_unhandled);
    run();
}

/* The end of a test's one root: freed, and no misuse reported. */
static void free_root_clean(FutoInAsyncSteps* r)
{
    free_root(r);
    assert_no_misuse();
}

/* ---- steps --------------------------------------------------------------- */

static void step_b(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)d;
    (void)a;
    SUCCESS0(as);
}
static void inner(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)as;
    (void)d;
    (void)a;
}
static void step_a(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)d;
    (void)a;
    FUTOIN_ADD(as, NULL, inner, NULL);
}
static void fail_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)d;
    (void)a;
    as->api->handle_error(as, "MyError", "it broke");
}
static void take_error(FutoInAsyncSteps* as, void* d, const char* code)
{
    (void)d;
    (void)code;
    SUCCESS0(as);
}
static void pass_error(FutoInAsyncSteps* as, void* d, const char* code)
{
    (void)as;
    (void)d;
    (void)code;
}

static FutoInAsyncSteps* waiting; /* the step an external completion ends */
static void wait_ext(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)d;
    (void)a;
    waiting = as;
    as->api->waitExternal(as);
}
static void sleepy(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)d;
    (void)a;
    as->api->setTimeout(as, 100);
}
static void complete_waiting(void* d)
{
    (void)d;
    SUCCESS0(waiting);
}

/* ---- event sequences ----------------------------------------------------- */

Test(hooks, plain_chain)
{
    FutoInAsyncSteps* r = hooked_root();
    FUTOIN_ADD(r, NULL, step_a, NULL);
    FUTOIN_ADD(r, NULL, step_b, NULL);
    execute_run(r);
    assert_trace("flow_started r1 @0\n"
                 "step_entered r1 step_a @0\n"
                 "step_entered r1 inner @0\n"
                 "step_left r1 inner @0\n"
                 "step_left r1 step_a @0\n"
                 "step_entered r1 step_b @0\n"
                 "step_left r1 step_b @0\n"
                 "flow_finished r1 success @0\n");
    free_root_clean(r);
}

/* Hooks set by a step of a root's run of plain steps (flow.c
 * level0_run(), which steps aside while hooks are set): that step is left,
 * and the next ones are entered and left, as on the general path. */
static void set_hooks_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)as;
    (void)d;
    (void)a;
    hook_all();
}

Test(hooks, set_inside_a_run_of_plain_steps)
{
    FutoInAsyncSteps* r = futoin_root_new(T);
    FUTOIN_ADD(r, NULL, inner, NULL);
    FUTOIN_ADD(r, NULL, step_b, NULL);
    FUTOIN_ADD(r, NULL, set_hooks_step, NULL);
    FUTOIN_ADD(r, NULL, step_b, NULL);
    FUTOIN_ADD(r, NULL, inner, NULL);
    execute_run(r);
    assert_trace("step_left r1 set_hooks_step @0\n"
                 "step_entered r1 step_b @0\n"
                 "step_left r1 step_b @0\n"
                 "step_entered r1 inner @0\n"
                 "step_left r1 inner @0\n"
                 "flow_finished r1 success @0\n");
    free_root_clean(r);
}

/* A binding's steps that ask ext chain() for the next one (futoin/sys/
 * ext.h): while hooks are set, chain() runs none in place, and each step
 * is entered and left the usual way. */
static int hk_calls;
static void hk_tr(FutoInAsyncSteps* as, void* d, const FutoInArgs* a);
static const FutoInAsyncSteps_execute_callback hk_fns[] = {hk_tr};
static const futoin_step_class hk_cls = {sizeof(futoin_step_class), NULL,
                                         NULL, {"bind", NULL, NULL, 0}};
static void hk_tr(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const futoin_async_ext_table* x = futoin_async_ext(as);
    (void)a;
    ++hk_calls;
    while ((as = x->chain(as, hk_fns, 1, &d)) != NULL) {
    }
}

Test(hooks, chained_steps_are_entered_and_left)
{
    FutoInAsyncSteps* r = hooked_root();
    const futoin_async_ext_table* x = futoin_async_ext(r);
    hk_calls = 0;
    for (int i = 0; i < 3; ++i) {
        x->add_classed(r, NULL, hk_tr, NULL, &hk_cls);
    }
    execute_run(r);
    assert_trace("flow_started r1 @0\n"
                 "step_entered r1 bind @0\n"
                 "step_left r1 bind @0\n"
                 "step_entered r1 bind @0\n"
                 "step_left r1 bind @0\n"
                 "step_entered r1 bind @0\n"
                 "step_left r1 bind @0\n"
                 "flow_finished r1 success @0\n");
    cr_assert_eq(hk_calls, 3, "calls %d", hk_calls);
    free_root_clean(r);
}

Test(hooks, error_handled_by_onerror)
{
    FutoInAsyncSteps* r = hooked_root();
    FUTOIN_ADD(r, NULL, fail_step, take_error);
    FUTOIN_ADD(r, NULL, step_b, NULL);
    execute_run(r);
    assert_trace("flow_started r1 @0\n"
                 "step_entered r1 fail_step @0\n"
                 "error_raised r1 step MyError it broke @0\n"
                 "error_handled r1 step MyError @0\n"
                 "step_left r1 fail_step @0\n"
                 "step_entered r1 step_b @0\n"
                 "step_left r1 step_b @0\n"
                 "flow_finished r1 success @0\n");
    free_root_clean(r);
}

Test(hooks, unhandled_error)
{
    FutoInAsyncSteps* r = hooked_root();
    FUTOIN_ADD(r, NULL, fail_step, pass_error);
    FUTOIN_ADD(r, NULL, step_b, NULL);
    execute_run(r);
    assert_trace("flow_started r1 @0\n"
                 "step_entered r1 fail_step @0\n"
                 "error_raised r1 step MyError it broke @0\n"
                 "step_left r1 fail_step @0\n"
                 "flow_finished r1 error MyError @0\n"
                 "unhandled MyError\n");
    free_root_clean(r);
}

Test(hooks, cancel)
{
    FutoInAsyncSteps* r = hooked_root();
    FUTOIN_ADD(r, NULL, wait_ext, NULL);
    execute_run(r);
    advance(7);
    r->api->cancel(r);
    assert_trace("flow_started r1 @0\n"
                 "step_entered r1 wait_ext @0\n"
                 "wait_begun r1 wait_ext external @0\n"
                 "cancel r1 @7\n"
                 "wait_ended r1 wait_ext external @7\n"
                 "step_left r1 wait_ext @7\n"
                 "flow_finished r1 cancelled @7\n");
    free_root_clean(r);
}

Test(hooks, timeout)
{
    FutoInAsyncSteps* r = hooked_root();
    FUTOIN_ADD(r, NULL, sleepy, NULL);
    execute_run(r);
    advance(99);
    assert_trace("flow_started r1 @0\n"
                 "step_entered r1 sleepy @0\n"
                 "wait_begun r1 sleepy timer due=100 @0\n");
    advance(1);
    assert_trace("flow_started r1 @0\n"
                 "step_entered r1 sleepy @0\n"
                 "wait_begun r1 sleepy timer due=100 @0\n"
                 "wait_ended r1 sleepy timer due=100 @100\n"
                 "error_raised r1 step Timeout @100\n"
                 "step_left r1 sleepy @100\n"
                 "flow_finished r1 error Timeout @100\n"
                 "unhandled Timeout\n");
    free_root_clean(r);
}

Test(hooks, wait_external_completed_from_the_loop)
{
    FutoInAsyncSteps* r = hooked_root();
    FUTOIN_ADD(r, NULL, wait_ext, NULL);
    execute_run(r);
    futoin_tool_deferred(T, 30, complete_waiting, NULL);
    advance(30);
    assert_trace("flow_started r1 @0\n"
                 "step_entered r1 wait_ext @0\n"
                 "wait_begun r1 wait_ext external @0\n"
                 "wait_ended r1 wait_ext external @30\n"
                 "step_left r1 wait_ext @30\n"
                 "flow_finished r1 success @30\n");
    free_root_clean(r);
}

static FutoInAsyncSteps* guarded_at[3];
static void guarded(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)a;
    guarded_at[(intptr_t)d] = as;
    as->api->waitExternal(as);
}

Test(hooks, mutex_wait_of_two_flows)
{
    FutoInSync* mtx = futoin_mutex_new(1, FUTOIN_UNLIMITED);
    FutoInAsyncSteps* r1 = futoin_root_new(T);
    FutoInAsyncSteps* r2 = futoin_root_new(T);
    hook_all();
    FUTOIN_ADD_SYNC(r1, mtx, (void*)(intptr_t)1, guarded, NULL);
    FUTOIN_ADD_SYNC(r2, mtx, (void*)(intptr_t)2, guarded, NULL);
    r1->api->execute(r1, NULL, on_unhandled);
    r2->api->execute(r2, NULL, on_unhandled);
    run();
    advance(5);
    SUCCESS0(guarded_at[1]);
    run();
    advance(5);
    SUCCESS0(guarded_at[2]);
    run();
    assert_trace("flow_started r1 @0\n"
                 "flow_started r2 @0\n"
                 "sync_acquired r1 step @0\n"
                 "step_entered r1 guarded @0\n"
                 "wait_begun r1 guarded external @0\n"
                 "step_entered r2 lib @0\n"
                 "wait_begun r2 lib sync sync @0\n"
                 "wait_ended r1 guarded external @5\n"
                 "step_left r1 guarded @5\n"
                 "sync_released r1 step @5\n"
                 "wait_ended r2 lib sync sync @5\n"
                 "flow_finished r1 success @5\n"
                 "step_left r2 lib @5\n"
                 "sync_acquired r2 step @5\n"
                 "step_entered r2 guarded @5\n"
                 "wait_begun r2 guarded external @5\n"
                 "wait_ended r2 guarded external @10\n"
                 "step_left r2 guarded @10\n"
                 "sync_released r2 step @10\n"
                 "flow_finished r2 success @10\n");
    free_root(r1);
    free_root(r2);
    cr_assert_eq(futoin_mutex_free(mtx), FUTOIN_OK);
    assert_no_misuse();
}

static void body(FutoInAsyncSteps* as, void* d, size_t i)
{
    (void)as;
    (void)d;
    tr("body %zu", i);
}

Test(hooks, every_loop_iteration_is_entered_and_left)
{
    FutoInAsyncSteps* r = hooked_root();
    FUTOIN_REPEAT(r, NULL, 2, body, NULL);
    execute_run(r);
    assert_trace("flow_started r1 @0\n"
                 "step_entered r1 body @0\n"
                 "body 0\n"
                 "step_left r1 body @0\n"
                 "step_entered r1 body @0\n"
                 "body 1\n"
                 "step_left r1 body @0\n"
                 "flow_finished r1 success @0\n");
    free_root_clean(r);
}

static int loop_calls;
static void breaking_body(FutoInAsyncSteps* as, void* d)
{
    (void)d;
    if (++loop_calls == 2) {
        as->api->breakLoop(as, NULL);
    }
}

Test(hooks, a_loop_break_is_not_an_error)
{
    FutoInAsyncSteps* r = hooked_root();
    loop_calls = 0;
    FUTOIN_LOOP(r, NULL, breaking_body, NULL);
    FUTOIN_ADD(r, NULL, step_b, NULL);
    execute_run(r);
    assert_trace("flow_started r1 @0\n"
                 "step_entered r1 breaking_body @0\n"
                 "step_left r1 breaking_body @0\n"
                 "step_entered r1 breaking_body @0\n"
                 "step_left r1 breaking_body @0\n"
                 "step_entered r1 step_b @0\n"
                 "step_left r1 step_b @0\n"
                 "flow_finished r1 success @0\n");
    free_root_clean(r);
}

/* ---- setting and clearing from inside a hook ------------------------------ */

static int switch_calls;
/* The first hook table: records, and at the first step_entered replaces
 * itself with a table whose hooks record under "B:"; that one clears the
 * hooks at its first step_left. */
static void clear_on_left(void* data, const futoin_hook_event* ev)
{
    record(data, ev);
    if (ev->type == FUTOIN_HOOK_STEP_LEFT) {
        cr_assert_eq(futoin_tool_set_hooks(T, NULL), FUTOIN_OK);
    }
}
static void switch_on_enter(void* data, const futoin_hook_event* ev)
{
    record(data, ev);
    if (ev->type == FUTOIN_HOOK_STEP_ENTERED && switch_calls++ == 0) {
        futoin_hooks b = all_hooks(clear_on_left, NULL);
        cr_assert_eq(futoin_tool_set_hooks(T, &b), FUTOIN_OK);
        /* the table this hook was called from is retired, not freed: its
         * members are still readable here */
        prefix = "B:";
    }
}

Test(hooks, set_and_cleared_from_inside_a_hook)
{
    FutoInAsyncSteps* r = futoin_root_new(T);
    futoin_hooks a = all_hooks(switch_on_enter, NULL);
    switch_calls = 0;
    prefix = "";
    cr_assert_eq(futoin_tool_set_hooks(T, &a), FUTOIN_OK);
    FUTOIN_ADD(r, NULL, step_a, NULL);
    FUTOIN_ADD(r, NULL, step_b, NULL);
    execute_run(r);
    assert_trace("flow_started r1 @0\n"
                 "step_entered r1 step_a @0\n"
                 "B:step_entered r1 inner @0\n"
                 "B:step_left r1 inner @0\n");
    cr_assert_eq(switch_calls, 1);
    /* cleared: a second flow reports nothing */
    r->api->add(r, NULL, step_b, NULL);
    execute_run(r);
    assert_trace("flow_started r1 @0\n"
                 "step_entered r1 step_a @0\n"
                 "B:step_entered r1 inner @0\n"
                 "B:step_left r1 inner @0\n");
    free_root_clean(r);
}

/* ---- misuse ----------------------------------------------------------------- */

static void* set_from_thread(void* arg)
{
    futoin_hooks h = all_hooks(record, NULL);
    (void)arg;
    return (void*)(intptr_t)futoin_tool_set_hooks(T, &h);
}

Test(hooks, misuse_is_refused_with_a_code)
{
    futoin_hooks h = all_hooks(record, NULL);
    futoin_hooks small = h;
    futoin_hooks v0 = h;
    pthread_t th;
    void* rc;
    FutoInAsyncSteps* r = futoin_root_new(T);
    const futoin_async_ext_table* x = futoin_async_ext(r);

    cr_assert_eq(futoin_tool_set_hooks(NULL, &h), FUTOIN_EINVAL);
    small.size = offsetof(futoin_hooks, sync_released);
    cr_assert_eq(futoin_tool_set_hooks(T, &small), FUTOIN_EVERSION);
    v0.version = 0;
    cr_assert_eq(futoin_tool_set_hooks(T, &v0), FUTOIN_EVERSION);
    assert_no_misuse();

    cr_assert_eq(pthread_create(&th, NULL, set_from_thread, NULL), 0);
    cr_assert_eq(pthread_join(th, &rc), 0);
    cr_assert_eq((int)(intptr_t)rc, FUTOIN_EINVAL);
    cr_assert_eq(misuse_seen, 1);

    /* none of those set anything */
    r->api->add(r, NULL, step_b, NULL);
    execute_run(r);
    assert_trace("");

    /* the extension table's slot, through a live handle and a stale one */
    cr_assert_geq(x->version, FUTOIN_EXT_VERSION_6);
    cr_assert_eq(x->set_hooks(r, &h), FUTOIN_OK);
    cr_assert_eq(x->set_hooks(r, NULL), FUTOIN_OK);
    cr_assert_eq(x->set_hooks(NULL, &h), FUTOIN_EINVAL);
    free_root(r);
    cr_assert_eq(x->set_hooks(r, &h), FUTOIN_EINVAL);
    /* the thread and the stale handle (a NULL handle names no tool: it is
     * printed, not counted) */
    cr_assert_eq(misuse_seen, 2);
}

Test(hooks, a_newer_and_larger_table_is_accepted)
{
    struct
    {
        futoin_hooks h;
        futoin_hook_cb future[4];
    } big;
    FutoInAsyncSteps* r = futoin_root_new(T);
    memset(&big, 0, sizeof(big));
    big.h = all_hooks(record, NULL);
    big.h.size = sizeof(big);
    big.h.version = 99;
    prefix = "";
    cr_assert_eq(futoin_tool_set_hooks(T, &big.h), FUTOIN_OK);
    r->api->add(r, NULL, step_b, NULL);
    execute_run(r);
    cr_assert_not_null(strstr(trace_buf, "flow_finished r1 success @0\n"));
    free_root_clean(r);
}

/* ---- the live dump ---------------------------------------------------------- */

/* The dump as a string (caller frees). */
static char* dump(int expect_roots)
{
    char* buf = NULL;
    size_t len = 0;
    FILE* f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cr_assert_eq(futoin_tool_dump(T, f), expect_roots);
    cr_assert_eq(fclose(f), 0);
    return buf;
}

#define assert_has(text, line)                                                 \
    cr_assert_not_null(strstr((text), (line)), "no line\n%s\nin:\n%s", (line), \
                       (text))

/* The names every binding gives the numbers come from the library: each
 * number's name as this file spells it, NULL out of range. */
Test(hooks, the_names_of_the_numbers)
{
    static const char* const outcomes[] = {"success", "error", "cancelled"};
    cr_assert_null(futoin_hook_name(0));
    cr_assert_null(futoin_hook_name(-1));
    cr_assert_null(futoin_hook_name(FUTOIN_HOOK_SYNC_RELEASED + 1));
    for (int i = FUTOIN_HOOK_FLOW_STARTED; i <= FUTOIN_HOOK_SYNC_RELEASED; ++i) {
        cr_assert_str_eq(futoin_hook_name(i), event_names[i]);
    }
    cr_assert_null(futoin_hook_outcome_name(-1));
    cr_assert_null(futoin_hook_outcome_name(FUTOIN_HOOK_CANCELLED + 1));
    for (int i = FUTOIN_HOOK_SUCCESS; i <= FUTOIN_HOOK_CANCELLED; ++i) {
        cr_assert_str_eq(futoin_hook_outcome_name(i), outcomes[i]);
    }
    cr_assert_null(futoin_wait_kind_name(-1));
    cr_assert_null(futoin_wait_kind_name(FUTOIN_WAIT_FOREIGN + 1));
    for (int i = FUTOIN_WAIT_NONE; i <= FUTOIN_WAIT_FOREIGN; ++i) {
        cr_assert_str_eq(futoin_wait_kind_name(i), wait_names[i]);
    }
}

Test(dump, an_empty_tool)
{
    char* d = dump(0);
    cr_assert_str_eq(d, "futoin-dump version=1 now=0 roots=0\nend roots=0\n");
    free(d);
    cr_assert_eq(futoin_tool_dump(NULL, stdout), FUTOIN_EINVAL);
    cr_assert_eq(futoin_tool_dump(T, NULL), FUTOIN_EINVAL);
    assert_no_misuse();
}

static void long_sleep(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)d;
    (void)a;
    as->api->setTimeout(as, 5000);
}
static void outer_sleep(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)d;
    (void)a;
    FUTOIN_ADD(as, NULL, long_sleep, NULL);
}
static void* alloc_var(void* d)
{
    (void)d;
    return malloc(1);
}
static void free_var(void* d, void* v)
{
    (void)d;
    free(v);
}

/* A step of "another language": its class names Python as its origin. */
static const futoin_step_class py_class = {
        sizeof(futoin_step_class), NULL, NULL,
        {"python", "fetch", "app/fetch.py", 12}};

static char line_buf[256];
static const char* at_line(const char* fmt, unsigned line)
{
    snprintf(line_buf, sizeof(line_buf), fmt, __FILE__, line);
    return line_buf;
}

Test(dump, waiting_flows_are_named_with_their_reason_and_origin)
{
    FutoInSync* mtx = futoin_mutex_new(1, FUTOIN_UNLIMITED);
    FutoInAsyncSteps* r1 = futoin_root_new(T);
    FutoInAsyncSteps* r2 = futoin_root_new(T);
    FutoInAsyncSteps* r3 = futoin_root_new(T);
    FutoInAsyncSteps* r4 = futoin_root_new(T);
    FutoInAsyncSteps* r5 = futoin_root_new(T);
    unsigned l_outer, l_wait, l_sync3, l_sync4;
    char* d;

    l_outer = __LINE__; FUTOIN_ADD(r1, NULL, outer_sleep, NULL);
    r1->api->stateVariable(r1, NULL, "user", alloc_var, free_var);
    r1->api->stateVariable(r1, NULL, "order", alloc_var, free_var);
    l_wait = __LINE__; FUTOIN_ADD(r2, NULL, wait_ext, NULL);
    l_sync3 = __LINE__; FUTOIN_ADD_SYNC(r3, mtx, (void*)(intptr_t)1, guarded, NULL);
    l_sync4 = __LINE__; FUTOIN_ADD_SYNC(r4, mtx, (void*)(intptr_t)2, guarded, NULL);
    futoin_wrap_add_classed(r5, NULL, wait_ext, NULL, &py_class);
    r1->api->execute(r1, NULL, on_unhandled);
    r2->api->execute(r2, NULL, on_unhandled);
    r3->api->execute(r3, NULL, on_unhandled);
    run();
    advance(400);
    r4->api->execute(r4, NULL, on_unhandled);
    r5->api->execute(r5, NULL, on_unhandled);
    run();
    advance(600);

    d = dump(5);
    assert_has(d, "futoin-dump version=1 now=1000 roots=5\n");
    /* on a timer: its own timeout, due at 5000, below the step that added it */
    assert_has(d, "root=1 state=running flows=1 keys=2\n"
                  "root=1 flow=0 state=waiting\n"
                  "root=1 flow=0 wait=timer since=0 waited=1000 due=5000\n"
                  "root=1 flow=0 at=0 c long_sleep (");
    assert_has(d, at_line("root=1 flow=0 at=1 c outer_sleep (%s:%u)\n"
                          "root=1 key=order\n"
                          "root=1 key=user\n", l_outer));
    /* on an external completion */
    assert_has(d, at_line("root=2 state=running flows=1 keys=0\n"
                          "root=2 flow=0 state=waiting\n"
                          "root=2 flow=0 wait=external since=0 waited=1000\n"
                          "root=2 flow=0 at=0 c wait_ext (%s:%u)\n", l_wait));
    /* the Mutex's holder waits on its own completion ... */
    assert_has(d, at_line("root=3 flow=0 wait=external since=0 waited=1000\n"
                          "root=3 flow=0 at=0 c guarded (%s:%u)\n", l_sync3));
    /* ... and the other flow is first in its queue, since 400 */
    assert_has(d, "root=4 state=running flows=1 keys=0\n"
                  "root=4 flow=0 state=waiting\n"
                  "root=4 flow=0 wait=sync since=400 waited=600 object=Mutex "
                  "place=1 queued=1\n");
    assert_has(d, at_line("root=4 flow=0 section=c guarded (%s:%u)\n", l_sync4));
    /* a step of another language */
    assert_has(d, "root=5 flow=0 wait=foreign since=400 waited=600 "
                  "language=python\n"
                  "root=5 flow=0 at=0 python fetch (app/fetch.py:12)\n");
    cr_assert(strstr(d, "end roots=5\n") == d + strlen(d) - strlen("end roots=5\n"));
    free(d);

    /* a freed root is no longer listed */
    free_root(r2);
    d = dump(4);
    cr_assert_null(strstr(d, "root=2 "), "%s", d);
    assert_has(d, "root=1 state=running");
    assert_has(d, "root=5 state=running");
    free(d);

    free_root(r1);
    free_root(r3);
    free_root(r4);
    free_root(r5);
    cr_assert_eq(futoin_mutex_free(mtx), FUTOIN_OK);
    d = dump(0);
    cr_assert_str_eq(d, "futoin-dump version=1 now=1000 roots=0\nend roots=0\n");
    free(d);
    assert_no_misuse();
}

static void par_branch(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)d;
    (void)a;
    as->api->waitExternal(as);
}
static void par_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* p;
    (void)d;
    (void)a;
    p = as->api->parallel(as, NULL, NULL);
    FUTOIN_ADD(p, NULL, par_branch, NULL);
    FUTOIN_ADD(p, NULL, sleepy, NULL);
}

Test(dump, parallel_branches_and_a_new_root)
{
    FutoInAsyncSteps* r1 = futoin_root_new(T);
    FutoInAsyncSteps* r2 = futoin_root_new(T);
    char* d;
    FUTOIN_ADD(r1, NULL, par_step, NULL);
    r2->api->add(r2, NULL, step_b, NULL);
    r1->api->execute(r1, NULL, on_unhandled);
    run();
    d = dump(2);
    assert_has(d, "root=1 state=running flows=3 keys=0\n"
                  "root=1 flow=0 state=branches\n"
                  "root=1 flow=0 at=0 c par_step (");
    assert_has(d, "root=1 flow=1 parent=0 state=waiting\n"
                  "root=1 flow=1 wait=external since=0 waited=0\n"
                  "root=1 flow=1 at=0 c par_branch (");
    assert_has(d, "root=1 flow=1 at=1 c par_step (");
    assert_has(d, "root=1 flow=2 parent=0 state=waiting\n"
                  "root=1 flow=2 wait=timer since=0 waited=0 due=100\n"
                  "root=1 flow=2 at=0 c sleepy (");
    assert_has(d, "root=2 state=new flows=1 keys=0\n"
                  "root=2 flow=0 state=idle\n");
    free(d);
    free_root(r1);
    free_root(r2);
    assert_no_misuse();
}
