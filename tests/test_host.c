/* Language hosts and async stacks (futoin/sys/host.h): C functions of
 * shared objects by name, a plug-in loaded from FUTOIN_HOST_PATH, clear
 * errors for what cannot be had, registration, and the async stack of an
 * error across languages and parallel() branches. */
#include "common.h"
#include "host/host_steps.h"

#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

static void host_setup(void)
{
    /* where the test plug-in (tests/host/echo_host.c) was built */
    setenv("FUTOIN_HOST_PATH", "/nonexistent:" FUTOIN_TEST_PLUGIN_DIR, 1);
    fx_setup();
}
TestSuite(host, .init = host_setup, .fini = fx_teardown);


Test(host, c_functions_by_name)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, two_doubles, NULL);
    cr_assert_eq(futoin_host_add(as, "c", "libm.so.6",
                                 "double hypot(double x, double y)"),
                 FUTOIN_OK);
    API(as)->add(as, NULL, print_value, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("value 5\n");
    API(as)->free(as);
}

/* What cannot be had fails in the flow with InvalidRequest, and says so
 * at the call site too. */
static void expect_failure(const char* language, const char* module,
                           const char* function, const char* info_part)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    trace_len = 0;
    trace_buf[0] = 0;
    cr_assert_lt(futoin_host_add(as, language, module, function), 0);
    API(as)->add(as, NULL, print_value, NULL); /* never runs */
    API(as)->execute(as, NULL, print_error);
    run();
    cr_assert(strncmp(trace_buf, "InvalidRequest: ", 16) == 0, "%s", trace_buf);
    cr_assert(strstr(trace_buf, info_part), "'%s' not in: %s", info_part,
              trace_buf);
    API(as)->free(as);
}

Test(host, what_cannot_be_had_is_invalid_request)
{
    expect_failure("cobol", "payroll", "run",
                   "adding payroll.run: no host for language 'cobol': no "
                   "plug-in libfutoin_host_cobol.so found");
    expect_failure("cobol", "payroll", "run",
                   "Searched: FUTOIN_HOST_PATH: "
                   "/nonexistent/libfutoin_host_cobol.so, ");
    expect_failure("c", "libnope.so", "int f(int)", "c: cannot load module 'libnope.so'");
    expect_failure("c", "libm.so.6", "double nosuch(double)",
                   "c: module 'libm.so.6' has no function 'nosuch'");
    expect_failure("c", "libm.so.6", "double hypot(double", "is not a C declaration");
    expect_failure("c", "libm.so.6", "double f(double, double, double, double, double)",
                   "is not a C declaration");
    expect_failure("echo", "mod", "nosuch", "echo: module 'mod' has no function 'nosuch'");
    expect_failure("no/such", "m", "f", "'no/such' is not a language name");
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
}

static int (*echo_counters(void))(int*, int*, int*)
{
    void* dl = dlopen(FUTOIN_TEST_PLUGIN_DIR "/libfutoin_host_echo.so",
                      RTLD_NOW | RTLD_NOLOAD);
    union
    {
        void* p;
        int (*fn)(int*, int*, int*);
    } u;
    cr_assert_not_null(dl, "the plug-in is not loaded");
    u.p = dlsym(dl, "echo_host_counters");
    dlclose(dl);
    cr_assert_not_null(u.p);
    return u.fn;
}

Test(host, a_plugin_from_the_host_path)
{
    const futoin_host_api* h = NULL;
    int starts, stops, live;
    FutoInAsyncSteps* as = futoin_root_new(T);
    cr_assert_eq(futoin_host_add(as, "echo", "mod", "5"), FUTOIN_OK);
    cr_assert_eq(futoin_host_add(as, "echo", "mod", "7"), FUTOIN_OK);
    API(as)->add(as, NULL, print_value, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("value 12\n");
    cr_assert_eq(futoin_host_find("echo", &h, NULL, 0), FUTOIN_OK);
    cr_assert_str_eq(h->language, "echo");
    echo_counters()(&starts, &stops, &live);
    cr_assert_eq(starts, 1, "started %d times", starts);
    cr_assert_eq(live, 0, "%d step data not released", live);
    API(as)->free(as);
    futoin_host_shutdown();
    echo_counters()(&starts, &stops, &live);
    cr_assert_eq(stops, 1);
}

static int fake_start(futoin_tool* t, char* e, size_t n)
{
    return FUTOIN_OK;
}
static int fake_resolve(const char* m, const char* f, futoin_host_step* o,
                        char* e, size_t n)
{
    return FUTOIN_EINVAL;
}
static void fake_stop(void)
{
}
static const futoin_host_api fake = {sizeof(futoin_host_api),
                                     FUTOIN_HOST_VERSION_1, "fake", fake_start,
                                     fake_resolve, fake_stop};
static const futoin_host_api fake_c = {sizeof(futoin_host_api),
                                       FUTOIN_HOST_VERSION_1, "c", fake_start,
                                       fake_resolve, fake_stop};
static const futoin_host_api broken = {sizeof(futoin_host_api),
                                       FUTOIN_HOST_VERSION_1, "broken",
                                       fake_start, NULL, fake_stop};

static int failing_start(futoin_tool* t, char* e, size_t n)
{
    snprintf(e, n, "no runtime in this process");
    return FUTOIN_EINVAL;
}
static int silent_start(futoin_tool* t, char* e, size_t n)
{
    return FUTOIN_EINVAL;
}
static const futoin_host_api silent = {sizeof(futoin_host_api),
                                       FUTOIN_HOST_VERSION_1, "silent",
                                       silent_start, fake_resolve, fake_stop};
static const futoin_host_api unstartable = {sizeof(futoin_host_api),
                                            FUTOIN_HOST_VERSION_1, "unstartable",
                                            failing_start, fake_resolve, fake_stop};

/* start() cannot know which step wanted the host: the error names it */
Test(host, a_host_that_cannot_start_names_the_step)
{
    cr_assert_eq(futoin_host_register(&unstartable), FUTOIN_OK);
    expect_failure("unstartable", "billing", "charge",
                   "no runtime in this process (adding billing.charge)");
    cr_assert_eq(futoin_host_register(&silent), FUTOIN_OK);
    expect_failure("silent", "billing", "refund",
                   "silent: the host did not start (no reason given; adding "
                   "billing.refund)");
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
}

Test(host, registration)
{
    const futoin_host_api* h = NULL;
    cr_assert_eq(futoin_host_register(&fake), FUTOIN_OK);
    cr_assert_eq(futoin_host_register(&fake), FUTOIN_EBUSY);
    cr_assert_eq(futoin_host_register(&fake_c), FUTOIN_EBUSY, "'c' is built in");
    cr_assert_eq(futoin_host_register(&broken), FUTOIN_EINVAL);
    cr_assert_eq(futoin_host_register(NULL), FUTOIN_EINVAL);
    cr_assert_eq(futoin_host_find("fake", &h, NULL, 0), FUTOIN_OK);
    cr_assert_eq(h, &fake);
}

/* A value with no type is no value: refused, never taken as a removal
 * (only a NULL `value` removes), and what the name held stays. */
Test(host, shared_state_refuses_a_value_without_a_type)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInBinaryValue v;
    memset(&v, 0, sizeof(v));
    v.type = &ty_i64;
    v.i64 = 7;
    cr_assert_eq(futoin_state_set(as, "n", &v), FUTOIN_OK);
    memset(&v, 0, sizeof(v));
    cr_assert_eq(futoin_state_set(as, "n", &v), FUTOIN_EINVAL);
    cr_assert_not_null(futoin_state_get(as, "n"), "still there");
    cr_assert_eq(futoin_state_get(as, "n")->i64, 7);
    cr_assert_eq(futoin_state_set(as, "other", &v), FUTOIN_EINVAL);
    cr_assert_null(futoin_state_get(as, "other"));
    API(as)->free(as);
}

/* ---- starting a host from two threads at once -------------------------- */

/* A host whose start() waits (up to half a second) for a second start() to
 * come in while it runs: two threads that could both start it then do, and
 * the count says so. Only a start() that is never entered twice gets the
 * whole wait, so the wait bounds nothing: it only gives a race its chance. */
static pthread_mutex_t twice_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t twice_cv = PTHREAD_COND_INITIALIZER;
static int twice_starts, twice_inside, twice_stops, twice_ran;

static int twice_start(futoin_tool* t, char* e, size_t n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 500 * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec += 1;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&twice_mx);
    ++twice_starts;
    ++twice_inside;
    pthread_cond_broadcast(&twice_cv);
    while (twice_inside < 2
           && pthread_cond_timedwait(&twice_cv, &twice_mx, &until) == 0) {
    }
    --twice_inside;
    pthread_mutex_unlock(&twice_mx);
    return FUTOIN_OK;
}
static void twice_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    pthread_mutex_lock(&twice_mx);
    ++twice_ran;
    pthread_mutex_unlock(&twice_mx);
}
static int twice_resolve(const char* m, const char* f, futoin_host_step* out,
                         char* e, size_t n)
{
    out->execute = twice_step;
    return FUTOIN_OK;
}
static void twice_stop(void)
{
    pthread_mutex_lock(&twice_mx);
    ++twice_stops;
    pthread_mutex_unlock(&twice_mx);
}
static const futoin_host_api twice = {sizeof(futoin_host_api),
                                      FUTOIN_HOST_VERSION_1, "twice",
                                      twice_start, twice_resolve, twice_stop};

static pthread_barrier_t twice_barrier;
static int twice_rc[2];

/* One tool per thread, as two loops of one process would have. */
static void* twice_thread(void* arg)
{
    int* rc = arg;
    futoin_tool* tool;
    FutoInAsyncSteps* as;
    if (futoin_tool_new(&tool, NULL) != FUTOIN_OK) {
        *rc = -1000;
        return NULL;
    }
    as = futoin_root_new(tool);
    pthread_barrier_wait(&twice_barrier);
    *rc = futoin_host_add(as, "twice", "m", "f");
    API(as)->execute(as, NULL, NULL);
    futoin_tool_run(tool);
    API(as)->free(as);
    if (futoin_tool_free(tool) != FUTOIN_OK) {
        *rc = -2000;
    }
    return NULL;
}

/* The first use starts a host once, however many loop threads add its
 * steps at the same moment: the others wait for that start(). */
Test(host, two_threads_start_a_host_once)
{
    pthread_t th[2];
    cr_assert_eq(futoin_host_register(&twice), FUTOIN_OK);
    pthread_barrier_init(&twice_barrier, NULL, 2);
    for (int i = 0; i < 2; ++i) {
        cr_assert_eq(pthread_create(&th[i], NULL, twice_thread, &twice_rc[i]), 0);
    }
    for (int i = 0; i < 2; ++i) {
        pthread_join(th[i], NULL);
        cr_assert_eq(twice_rc[i], FUTOIN_OK, "thread %d: %d", i, twice_rc[i]);
    }
    pthread_barrier_destroy(&twice_barrier);
    cr_assert_eq(twice_starts, 1, "start() ran %d times", twice_starts);
    cr_assert_eq(twice_ran, 2, "both flows ran the host's step");
    futoin_host_shutdown();
    cr_assert_eq(twice_stops, 1, "one stop() for the one start()");
}

/* ---- async stacks ------------------------------------------------------- */

void branch_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a);
void outer_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a);
void nest(FutoInAsyncSteps* as, void* d, const FutoInArgs* a);

/* exported (the test is linked with -rdynamic): dladdr() names them */
void branch_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    futoin_host_add(as, "echo", "lib.echo", "fail");
}
static void other_branch(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setCancel(as, NULL, NULL);
    API(as)->waitExternal(as);
}
void outer_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, NULL, other_branch, NULL);
    API(p)->add(p, NULL, branch_step, NULL);
}
static char stack_text[4096];
static const futoin_async_stack* seen;
static void keep_stack(FutoInAsyncSteps* as, void* d, const char* code)
{
    const futoin_async_stack* st = futoin_async_ext(as)->async_stack(as);
    cr_assert_not_null(st);
    cr_assert_eq(API(as)->stateVariable(as, NULL, "async_stack", NULL, NULL),
                 (void*)st);
    seen = st;
    futoin_async_stack_format(st, stack_text, sizeof(stack_text));
    tr("%s", code);
}

Test(host, the_async_stack_of_an_error_across_languages_and_branches)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, outer_step, NULL);
    API(as)->execute(as, NULL, keep_stack);
    run();
    assert_trace("EchoError\n");
    cr_assert_str_eq(seen->code, "EchoError");
    cr_assert_eq(seen->count, 3);
    cr_assert_str_eq(seen->frames[0].language, "echo");
    cr_assert_str_eq(seen->frames[0].function, "fail");
    cr_assert_str_eq(seen->frames[0].file, "lib.echo");
    cr_assert_str_eq(seen->frames[1].language, "c");
    cr_assert_str_eq(seen->frames[1].function, "branch_step");
    cr_assert_str_eq(seen->frames[2].function, "outer_step");
    /* the object the function lives in (the test executable, whose name
     * under Criterion is its worker's) */
    cr_assert_not_null(seen->frames[2].file);
    cr_assert(strncmp(stack_text,
                      "  at echo fail (lib.echo)\n"
                      "  at c branch_step (",
                      strlen("  at echo fail (lib.echo)\n  at c branch_step ("))
                      == 0,
              "%s", stack_text);
    API(as)->free(as);
}

/* A deep stack keeps its innermost and outermost frames. */
void nest(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    uintptr_t left = (uintptr_t)d;
    if (left == 0) {
        ERROR(as, "Deep");
        return;
    }
    API(as)->add(as, (void*)(left - 1), nest, NULL);
}

Test(host, a_deep_stack_is_cut_in_the_middle)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, (void*)(uintptr_t)199, nest, NULL);
    API(as)->execute(as, NULL, keep_stack);
    run();
    cr_assert_eq(seen->count, FUTOIN_ASYNC_STACK_INNER + FUTOIN_ASYNC_STACK_OUTER);
    cr_assert_eq(seen->elided, 200 - seen->count);
    cr_assert_eq(seen->elided_after, FUTOIN_ASYNC_STACK_INNER);
    cr_assert(strstr(stack_text, "  ... 136 more frames ...\n"), "%s", stack_text);
    cr_assert_str_eq(seen->frames[0].function, "nest");
    API(as)->free(as);
}

/* A break is not an error: no stack is recorded for it. */
static void brk(FutoInAsyncSteps* as, void* d)
{
    API(as)->breakLoop(as, NULL);
}
static void read_stack(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("stack %s",
       API(as)->stateVariable(as, NULL, "async_stack", NULL, NULL) ? "set" : "none");
}

Test(host, a_break_records_no_stack)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->loop(as, NULL, brk, NULL);
    API(as)->add(as, NULL, read_stack, NULL);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("stack none\n");
    API(as)->free(as);
}

/* A bare name is an FTN12 step function of the shared object (the test
 * plug-in exports one: named_step, which fails with NamedError). */
Test(host, c_step_functions_by_name)
{
    static const char lib[] = FUTOIN_TEST_PLUGIN_DIR "/libfutoin_host_echo.so";
    FutoInAsyncSteps* as = futoin_root_new(T);
    API(as)->add(as, NULL, two_doubles, NULL);
    cr_assert_eq(futoin_host_add(as, "c", lib, "named_step"), FUTOIN_OK);
    API(as)->execute(as, NULL, print_error);
    run();
    assert_trace("NamedError: named step, data NULL, value 3\n");
    API(as)->free(as);
}

/* ---- state shared between languages ------------------------------------ */

static int custom_cleanups;
static void custom_cleanup(FutoInBinaryValue* v)
{
    ++custom_cleanups;
}
static const FutoInType ty_custom = {FTN_TYPE_CUSTOM_OBJECT, custom_cleanup};
static const FutoInType ty_str2 = {FTN_TYPE_STRING, NULL};
static const FutoInType ty_i64a = {FTN_TYPE_ARRAY | FTN_TYPE_INT64, NULL};
static const FutoInType ty_stra = {FTN_TYPE_ARRAY | FTN_TYPE_STRING, NULL};
static void* make_var(void* d)
{
    return d;
}

Test(host, shared_state_copies_values_and_moves_custom_objects)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInBinaryValue v;
    const FutoInBinaryValue* got;
    char text[] = "h\xc3\xa9llo";
    int64_t ints[] = {1, 2, 3};
    const char* strs[] = {"a"};
    custom_cleanups = 0;

    memset(&v, 0, sizeof(v));
    v.type = &ty_str2;
    v.cstr = text;
    v.length = (uint32_t)strlen(text);
    cr_assert_eq(futoin_state_set(as, "s", &v), FUTOIN_OK);
    text[0] = 'X'; /* copied: the stored one does not change */
    got = futoin_state_get(as, "s");
    cr_assert_not_null(got);
    cr_assert_str_eq(got->cstr, "h\xc3\xa9llo");
    cr_assert_eq(got->length, 6);

    memset(&v, 0, sizeof(v));
    v.type = &ty_i64a;
    v.p = ints;
    v.length = 3;
    cr_assert_eq(futoin_state_set(as, "a", &v), FUTOIN_OK);
    ints[1] = 99;
    got = futoin_state_get(as, "a");
    cr_assert_eq(((const int64_t*)got->p)[1], 2);

    memset(&v, 0, sizeof(v));
    v.type = &ty_custom;
    v.p = &v;
    cr_assert_eq(futoin_state_set(as, "c", &v), FUTOIN_OK);
    cr_assert_null(v.type, "a custom object is moved");
    cr_assert_eq(futoin_state_get(as, "c")->type, &ty_custom);
    /* replaced: the old one is cleaned up once */
    memset(&v, 0, sizeof(v));
    v.type = &ty_custom;
    cr_assert_eq(futoin_state_set(as, "c", &v), FUTOIN_OK);
    cr_assert_eq(custom_cleanups, 1);
    /* removed */
    cr_assert_eq(futoin_state_set(as, "s", NULL), FUTOIN_OK);
    cr_assert_null(futoin_state_get(as, "s"));

    /* refused */
    memset(&v, 0, sizeof(v));
    v.type = &ty_stra;
    v.p = strs;
    v.length = 1;
    cr_assert_eq(futoin_state_set(as, "x", &v), FUTOIN_EINVAL);
    cr_assert_eq(futoin_state_set(as, "error_info", NULL), FUTOIN_EINVAL);
    cr_assert_eq(futoin_state_set(as, "async_stack", NULL), FUTOIN_EINVAL);
    cr_assert_eq(futoin_state_set(as, NULL, NULL), FUTOIN_EINVAL);
    cr_assert_not_null(API(as)->stateVariable(as, "mine", "mine", make_var, NULL));
    cr_assert_eq(futoin_state_set(as, "mine", NULL), FUTOIN_EBUSY);
    cr_assert_null(futoin_state_get(as, "mine"), "not a shared value");
    cr_assert_eq(futoin_state_set(NULL, "x", NULL), FUTOIN_EINVAL);

    API(as)->free(as);
    cr_assert_eq(custom_cleanups, 2, "the last custom object goes with the root");
}
