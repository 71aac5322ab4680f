/* The demo: the FTN12 spec's examples running on libfutoin_async, each
 * printed as a trace. Run: build/tests/futoin_demo */
#include <futoin/async.h>

#include <stdio.h>
#include <string.h>

#define API(as) ((as)->api)

static futoin_tool* tool;

static void name_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    %s\n", (const char*)d);
}
static void on_unhandled(FutoInAsyncSteps* as, void* d, const char* code)
{
    printf("    (unhandled error: %s)\n", code);
}
static const FutoInType ty_str = {FTN_TYPE_STRING, NULL};
static const FutoInType ty_int = {FTN_TYPE_INT64, NULL};

static void run_root(const char* title, FutoInAsyncSteps* as)
{
    printf("%s\n", title);
    API(as)->execute(as, NULL, on_unhandled);
    futoin_tool_run(tool);
    API(as)->free(as);
}

/* §1.1 Levels */
static void l1_add1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    Level 1 add #1\n");
    API(as)->add(as, "Level 2 add #1", name_step, NULL);
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, "Level 2 parallel #2", name_step, NULL);
    API(as)->add(as, "Level 2 add #3", name_step, NULL);
}
static void l0_add1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    Level 0 add #1\n");
    API(as)->add(as, NULL, l1_add1, NULL);
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, "Level 1 parallel #2", name_step, NULL);
    API(as)->add(as, "Level 1 add #3", name_step, NULL);
}

/* §1.2 Error handling */
static void e_l1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    Level 1 func\n");
    API(as)->handle_error(as, "myerror", NULL);
}
static void e_l1_err(FutoInAsyncSteps* as, void* d, const char* code)
{
    printf("    Level 1 onerror: %s\n", code);
    API(as)->handle_error(as, "newerror", NULL);
}
static void e_l0(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    Level 0 func\n");
    API(as)->add(as, NULL, e_l1, e_l1_err);
}
static void e_l0_err(FutoInAsyncSteps* as, void* d, const char* code)
{
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    printf("    Level 0 onerror: %s\n", code);
    args.arg0.type = &ty_str;
    args.arg0.cstr = "Prm";
    API(as)->success(as, &args);
}
static void e_func2(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    Level 0 func2: %s\n", a->arg0.cstr);
}

/* §1.2.1 Steps in error handler */
static void s_l2(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    Level 2 func\n");
    API(as)->handle_error(as, "second", NULL);
}
static void s_l2_err(FutoInAsyncSteps* as, void* d, const char* code)
{
    printf("    Level 2 onerror: %s\n", code);
}
static void s_l1(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    Level 1 func\n");
    API(as)->handle_error(as, "first", NULL);
}
static void s_l1_err(FutoInAsyncSteps* as, void* d, const char* code)
{
    printf("    Level 1 onerror: %s\n", code);
    API(as)->add(as, NULL, s_l2, s_l2_err);
}
static void s_l0(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    Level 0 func\n");
    API(as)->add(as, NULL, s_l1, s_l1_err);
}
static void s_l0_err(FutoInAsyncSteps* as, void* d, const char* code)
{
    printf("    Level 0 onerror: %s\n", code);
}

/* §1.4 Parallel abort */
static void p_cancel(FutoInAsyncSteps* as, void* d)
{
    printf("    cancel handler of job %s\n", (const char*)d);
}
static void p_job(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    job %s waits\n", (const char*)d);
    API(as)->setCancel(as, d, p_cancel);
}
static void p_fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    job 3 raises Some Error\n");
    API(as)->handle_error(as, "SomeError", NULL);
}
static void p_final(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    never printed\n");
}

/* §1.8 / §3.4 loops */
static void rep(FutoInAsyncSteps* as, void* d, size_t i)
{
    printf("    Iteration: %zu\n", i);
}
static int n;
static void check(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    result %lld\n", (long long)a->arg0.i64);
    if (a->arg0.i64 >= 3) {
        API(as)->breakLoop(as, NULL);
    }
}
static void produce(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs args;
    memset(&args, 0, sizeof(args));
    args.arg0.type = &ty_int;
    args.arg0.i64 = ++n;
    API(as)->success(as, &args);
}
static void body(FutoInAsyncSteps* as, void* d)
{
    API(as)->add(as, NULL, produce, NULL);
    API(as)->add(as, NULL, check, NULL);
}

/* §3.5 external event */
static void ext_done(void* d)
{
    printf("    external event fired\n");
    API((FutoInAsyncSteps*)d)->success((FutoInAsyncSteps*)d, NULL);
}
static void ext_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    printf("    waiting for an external event\n");
    API(as)->waitExternal(as);
    API(as)->sched_deferred(as, 10, as, ext_done);
}

int main(void)
{
    FutoInAsyncSteps* as;
    FutoInAsyncSteps* p;

    if (futoin_tool_new(&tool, NULL) != FUTOIN_OK) {
        return 1;
    }
    printf("libfutoin_async %s — FTN12 v1.14 spec examples\n\n",
           futoin_async_version());

    as = futoin_root_new(tool);
    API(as)->add(as, NULL, l0_add1, NULL);
    p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, "Level 0 parallel #2", name_step, NULL);
    API(as)->add(as, "Level 0 add #3", name_step, NULL);
    run_root("§1.1 Levels", as);

    as = futoin_root_new(tool);
    API(as)->add(as, NULL, e_l0, e_l0_err);
    API(as)->add(as, NULL, e_func2, NULL);
    run_root("§1.2 Error handling", as);

    as = futoin_root_new(tool);
    API(as)->add(as, NULL, s_l0, s_l0_err);
    run_root("§1.2.1 Steps in error handler", as);

    as = futoin_root_new(tool);
    p = API(as)->parallel(as, NULL, NULL);
    API(p)->add(p, "1", p_job, NULL);
    API(p)->add(p, "2", p_job, NULL);
    API(p)->add(p, NULL, p_fail, NULL);
    API(as)->add(as, NULL, p_final, NULL);
    run_root("§1.4 Parallel execution abort", as);

    as = futoin_root_new(tool);
    API(as)->loop(as, NULL, body, NULL);
    API(as)->repeat(as, NULL, 3, rep, NULL);
    run_root("§1.8 Async loops", as);

    as = futoin_root_new(tool);
    API(as)->add(as, NULL, ext_wait, NULL);
    API(as)->add(as, "next step runs", name_step, NULL);
    run_root("§3.5 External event wait", as);

    return futoin_tool_free(tool) == FUTOIN_OK ? 0 : 1;
}
