/* Where C steps come from (futoin/steps.h, futoin/sys/host.h): the frames
 * of an async stack name each C step's function and file:line, whether it
 * was added through the macros (the line of the call), by name through the
 * built-in host "c" (the declaration and the object, and the caller's
 * line through FUTOIN_HOST_ADD), or with the plain FTN12 calls (its
 * symbols and debug info: the line where the function starts). Static
 * functions included: this program is linked without -rdynamic, so no
 * step function of it has a dynamic symbol. */
#include "common.h"

#include <futoin/steps.h>
#include <futoin/sync.h>

#include "foreign/foreign_as.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

TestSuite(frames, .init = fx_setup, .fini = fx_teardown);

static char text[8192];
static const futoin_async_stack* seen;

/* The unhandled error's stack, kept until the root is freed. */
static void keep_stack(FutoInAsyncSteps* as, void* d, const char* code)
{
    seen = futoin_wrap_async_stack(as);
    cr_assert_not_null(seen);
    futoin_async_stack_format(seen, text, sizeof(text));
    tr("unhandled %s", code);
}

/* Run root `as`, keeping the stack of the error it ends with. */
static void run_keeping_stack(FutoInAsyncSteps* as)
{
    API(as)->execute(as, NULL, keep_stack);
    run();
}

static void assert_frame(uint32_t i, const char* function, const char* file,
                         uint32_t line)
{
    const futoin_frame_origin* f;
    cr_assert_lt(i, seen->count, "frame %u of %u:\n%s", i, seen->count, text);
    f = &seen->frames[i];
    cr_assert_str_eq(f->language, "c", "frame %u:\n%s", i, text);
    cr_assert_str_eq(f->function, function, "frame %u:\n%s", i, text);
    cr_assert_not_null(f->file, "frame %u:\n%s", i, text);
    cr_assert_str_eq(f->file, file, "frame %u:\n%s", i, text);
    cr_assert_eq(f->line, line, "frame %u: line %u, not %u:\n%s", i, f->line, line,
                 text);
}

/* ---- FUTOIN_ADD ----------------------------------------------------------- */

static uint32_t inner_line;

static void fails(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    ERROR(as, "Broken");
}
static void adds_failing(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    inner_line = __LINE__ + 1;
    FUTOIN_ADD(as, NULL, fails, NULL);
}

Test(frames, add_names_the_function_and_the_line_it_was_added_at)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    uint32_t outer_line = __LINE__ + 1;
    FUTOIN_ADD(as, NULL, adds_failing, NULL);
    run_keeping_stack(as);
    assert_trace("unhandled Broken\n");
    cr_assert_eq(seen->count, 2, "%s", text);
    assert_frame(0, "fails", __FILE__, inner_line);
    assert_frame(1, "adds_failing", __FILE__, outer_line);
    {
        char want[1024];
        snprintf(want, sizeof(want), "  at c fails (%s:%u)\n  at c adds_failing (%s:%u)\n",
                 __FILE__, inner_line, __FILE__, outer_line);
        cr_assert_str_eq(text, want);
    }
    API(as)->free(as);
}

/* The same function added at two places: each frame has its own line. */
static uint32_t lines_seen[2];
static int runs;
static void record_line(FutoInAsyncSteps* as, void* d, const char* code)
{
    const futoin_async_stack* st = futoin_wrap_async_stack(as);
    cr_assert_not_null(st);
    lines_seen[runs++] = st->frames[0].line;
    API(as)->success(as, NULL);
}

Test(frames, every_call_site_has_its_own_line)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    uint32_t first = __LINE__ + 1;
    FUTOIN_ADD(as, NULL, fails, record_line);
    uint32_t second = __LINE__ + 1;
    FUTOIN_ADD(as, NULL, fails, record_line);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    cr_assert_eq(runs, 2);
    cr_assert_eq(lines_seen[0], first);
    cr_assert_eq(lines_seen[1], second);
    cr_assert_neq(first, second);
    API(as)->free(as);
}

/* ---- the data of *_OWNED forms: released exactly once ------------------- */

static int released[8];
static void release(void* d)
{
    ++released[(intptr_t)d];
}
static void quiet(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("step %d released %d", (int)(intptr_t)d, released[(intptr_t)d]);
}
static void quiet_body(FutoInAsyncSteps* as, void* d)
{
    tr("loop %d", (int)(intptr_t)d);
    API(as)->breakLoop(as, NULL);
}
static void quiet_repeat(FutoInAsyncSteps* as, void* d, size_t i)
{
    tr("repeat %d: %zu", (int)(intptr_t)d, i);
}

static void owned_scenario(FutoInAsyncSteps* as)
{
    memset(released, 0, sizeof(released));
    FUTOIN_ADD_OWNED(as, (void*)1, quiet, NULL, release);
    FUTOIN_LOOP_OWNED(as, (void*)2, quiet_body, NULL, release);
    FUTOIN_REPEAT_OWNED(as, (void*)3, 2, quiet_repeat, "r", release);
    FUTOIN_ADD(as, (void*)4, quiet, NULL);
    FUTOIN_LOOP(as, (void*)5, quiet_body, "l");
    FUTOIN_REPEAT(as, (void*)6, 1, quiet_repeat, NULL);
}

static const char* owned_trace =
        "step 1 released 0\nloop 2\nrepeat 3: 0\nrepeat 3: 1\n"
        "step 4 released 0\nloop 5\nrepeat 6: 0\n";

Test(frames, the_owned_forms_release_their_data_once)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    owned_scenario(as);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace(owned_trace);
    for (int i = 1; i <= 3; ++i) {
        cr_assert_eq(released[i], 1, "data %d released %d times", i, released[i]);
    }
    for (int i = 4; i <= 6; ++i) {
        cr_assert_eq(released[i], 0, "data %d has no release hook", i);
    }
    API(as)->free(as);
}

Test(frames, the_macros_work_over_a_foreign_implementation)
{
    foreign_loop* fl = foreign_loop_new();
    FutoInAsyncSteps* as = foreign_root_new(fl);
    owned_scenario(as);
    API(as)->execute(as, NULL, on_unhandled);
    foreign_run(fl);
    assert_trace(owned_trace);
    API(as)->free(as);
    /* anchored to the foreign root's stack(): released with it */
    for (int i = 1; i <= 3; ++i) {
        cr_assert_eq(released[i], 1, "data %d released %d times", i, released[i]);
    }
    cr_assert_eq(foreign_live_roots(fl), 0);
    foreign_loop_free(fl);
}

/* Refused (off the loop thread, or a NULL handle): released at once. */
static void* add_from_thread(void* root)
{
    FUTOIN_ADD_OWNED((FutoInAsyncSteps*)root, (void*)1, quiet, NULL, release);
    FUTOIN_LOOP_OWNED((FutoInAsyncSteps*)root, (void*)2, quiet_body, NULL, release);
    FUTOIN_REPEAT_OWNED((FutoInAsyncSteps*)root, (void*)3, 1, quiet_repeat, NULL,
                        release);
    return NULL;
}

Test(frames, a_refused_call_releases_the_data_at_once)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    FutoInSync* mx = futoin_mutex_new(1, FUTOIN_UNLIMITED);
    pthread_t th;
    memset(released, 0, sizeof(released));
    cr_assert_eq(pthread_create(&th, NULL, add_from_thread, as), 0);
    pthread_join(th, NULL);
    for (int i = 1; i <= 3; ++i) {
        cr_assert_eq(released[i], 1, "data %d released %d times", i, released[i]);
    }
    cr_assert_eq(misuse_seen, 3, "%s", misuse_last);
    FUTOIN_ADD_SYNC_OWNED((FutoInAsyncSteps*)NULL, mx, (void*)4, quiet, NULL, release);
    cr_assert_eq(released[4], 1);
    API(as)->execute(as, NULL, on_unhandled);
    run();
    assert_trace("");
    API(as)->free(as);
    cr_assert_eq(futoin_mutex_free(mx), FUTOIN_OK);
}

/* ---- loops, addSync, parallel branches ----------------------------------- */

static void body_fails(FutoInAsyncSteps* as, void* d)
{
    ERROR(as, "InLoop");
}
static void repeat_fails(FutoInAsyncSteps* as, void* d, size_t i)
{
    if (i == 2) {
        ERROR(as, "InRepeat");
    }
}

Test(frames, a_loop_body_shows_the_loop_call)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    uint32_t at = __LINE__ + 1;
    FUTOIN_LOOP(as, NULL, body_fails, "outer");
    run_keeping_stack(as);
    assert_trace("unhandled InLoop\n");
    cr_assert_eq(seen->count, 1, "%s", text);
    assert_frame(0, "body_fails", __FILE__, at);
    API(as)->free(as);
}

Test(frames, a_repeat_body_shows_the_repeat_call)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    uint32_t at = __LINE__ + 1;
    FUTOIN_REPEAT_OWNED(as, (void*)1, 5, repeat_fails, NULL, release);
    memset(released, 0, sizeof(released));
    run_keeping_stack(as);
    assert_trace("unhandled InRepeat\n");
    assert_frame(0, "repeat_fails", __FILE__, at);
    cr_assert_eq(released[1], 1);
    API(as)->free(as);
}

static FutoInSync* mutex;
static uint32_t sync_line;
static void guarded_fails(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    tr("guarded %d", (int)(intptr_t)d);
    ERROR(as, "Guarded");
}
static void adds_sync(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    sync_line = __LINE__ + 1;
    FUTOIN_ADD_SYNC_OWNED(as, mutex, (void*)2, guarded_fails, NULL, release);
}

Test(frames, the_step_add_sync_guards_shows_its_call)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    uint32_t at = __LINE__ + 2;
    mutex = futoin_mutex_new(1, FUTOIN_UNLIMITED);
    FUTOIN_ADD_SYNC(as, mutex, NULL, adds_sync, NULL);
    memset(released, 0, sizeof(released));
    run_keeping_stack(as);
    assert_trace("guarded 2\nunhandled Guarded\n");
    cr_assert_eq(seen->count, 2, "%s", text);
    assert_frame(0, "guarded_fails", __FILE__, sync_line);
    assert_frame(1, "adds_sync", __FILE__, at);
    cr_assert_eq(released[2], 1);
    API(as)->free(as);
    cr_assert_eq(futoin_mutex_free(mutex), FUTOIN_OK);
}

static uint32_t branch_line;
static void waits(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    API(as)->setCancel(as, NULL, NULL);
}
static void adds_branches(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInAsyncSteps* p = API(as)->parallel(as, NULL, NULL);
    FUTOIN_ADD(p, NULL, waits, NULL);
    branch_line = __LINE__ + 1;
    FUTOIN_ADD(p, NULL, fails, NULL);
}

Test(frames, a_branch_shows_its_call_then_the_step_that_runs_the_parallel)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    uint32_t at = __LINE__ + 1;
    FUTOIN_ADD(as, NULL, adds_branches, NULL);
    run_keeping_stack(as);
    assert_trace("unhandled Broken\n");
    cr_assert_eq(seen->count, 2, "%s", text);
    assert_frame(0, "fails", __FILE__, branch_line);
    assert_frame(1, "adds_branches", __FILE__, at);
    API(as)->free(as);
}

/* ---- classes: `frame`, origin(), and an older class without `frame` ---- */

static void line_only(void* data, futoin_frame_origin* out)
{
    out->line = 4242; /* the rest as `frame` filled it */
}
static const futoin_step_class with_origin = {
        sizeof(futoin_step_class), NULL, line_only, {"c", "named", "here.c", 1}};
/* built before `frame` existed: what follows `origin` is not its */
static const futoin_step_class older = {offsetof(futoin_step_class, frame), NULL, NULL,
                                        {"zz", "not_this", "nowhere.c", 9}};

Test(frames, origin_gets_the_class_frame_to_change)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    futoin_wrap_add_classed(as, NULL, fails, NULL, &with_origin);
    run_keeping_stack(as);
    assert_frame(0, "named", "here.c", 4242);
    API(as)->free(as);
}

Test(frames, a_class_built_before_frame_existed_is_not_read_past_its_size)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    futoin_wrap_add_classed(as, NULL, fails, NULL, &older);
    run_keeping_stack(as);
    cr_assert_str_eq(seen->frames[0].language, "c", "%s", text);
    cr_assert_str_eq(seen->frames[0].function, "fails", "%s", text);
    cr_assert(!strstr(text, "nowhere.c"), "%s", text);
    API(as)->free(as);
}

/* ---- a class that defers its origin (origin_defer / origin_resolve) ------- */

static int deferred, resolved, dropped;
static int defer_token;

static void* defer_file(void* data, futoin_frame_origin* out)
{
    ++deferred;
    out->function = "cheap_name"; /* copied now */
    return &defer_token;
}
static void resolve_file(void* tok, futoin_frame_origin* out)
{
    cr_assert_eq(tok, &defer_token);
    if (!out) {
        ++dropped;
        return;
    }
    ++resolved;
    cr_assert_str_eq(out->function, "cheap_name");
    out->file = "later.js"; /* static: outlives the stack */
    out->line = 77;
}
static const futoin_step_class deferring = {sizeof(futoin_step_class), NULL, line_only,
                                            {"c", "named", "here.c", 1}, defer_file,
                                            resolve_file};
/* `origin_defer` without `origin_resolve`: not a deferring class */
static const futoin_step_class half = {sizeof(futoin_step_class), NULL, line_only,
                                       {"c", "named", "here.c", 1}, defer_file, NULL};

static void keep_stack_unread(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("unhandled %s", code);
}

Test(frames, a_deferred_origin_is_completed_once_when_the_stack_is_read)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    deferred = resolved = dropped = 0;
    futoin_wrap_add_classed(as, NULL, fails, NULL, &deferring);
    API(as)->execute(as, NULL, keep_stack_unread);
    run();
    cr_assert_eq(deferred, 1);
    cr_assert_eq(resolved, 0, "resolved while the error unwound");
    seen = futoin_wrap_async_stack(as);
    cr_assert_not_null(seen);
    futoin_async_stack_format(seen, text, sizeof(text));
    cr_assert_eq(resolved, 1);
    assert_frame(0, "cheap_name", "later.js", 77);
    cr_assert_eq(futoin_wrap_async_stack(as), seen);
    cr_assert_eq(resolved, 1, "read twice, resolved twice");
    API(as)->free(as);
    cr_assert_eq(dropped, 0);
}

Test(frames, a_deferred_origin_nobody_read_is_released_with_the_stack)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    deferred = resolved = dropped = 0;
    futoin_wrap_add_classed(as, NULL, fails, NULL, &deferring);
    API(as)->execute(as, NULL, keep_stack_unread);
    run();
    API(as)->free(as);
    cr_assert_eq(deferred, 1);
    cr_assert_eq(resolved, 0);
    cr_assert_eq(dropped, 1);
}

Test(frames, a_class_that_defers_without_resolving_is_asked_its_origin)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    deferred = 0;
    futoin_wrap_add_classed(as, NULL, fails, NULL, &half);
    run_keeping_stack(as);
    cr_assert_eq(deferred, 0);
    assert_frame(0, "named", "here.c", 4242);
    API(as)->free(as);
}

/* ---- C steps by name (the built-in host "c") ------------------------------ */

static void a_string(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs out;
    memset(&out, 0, sizeof(out));
    set_str(&out, 0, "not a number");
    API(as)->success(as, &out);
}

Test(frames, a_c_step_by_name_names_the_declaration_the_object_and_the_caller)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    uint32_t at;
    API(as)->add(as, NULL, a_string, NULL);
    at = __LINE__ + 1;
    cr_assert_eq(FUTOIN_HOST_ADD(as, "c", "libm.so.6", "double sqrt(double)"), FUTOIN_OK);
    run_keeping_stack(as);
    assert_trace("unhandled InvalidRequest\n");
    assert_frame(0, "double sqrt(double) in libm.so.6", __FILE__, at);
    API(as)->free(as);

    /* the same function without a call site: the object is the file */
    trace_len = 0;
    as = futoin_root_new(T);
    API(as)->add(as, NULL, a_string, NULL);
    cr_assert_eq(futoin_host_add(as, "c", "libm.so.6", "double sqrt(double)"), FUTOIN_OK);
    run_keeping_stack(as);
    assert_frame(0, "double sqrt(double)", "libm.so.6", 0);
    cr_assert_str_eq(text, "  at c double sqrt(double) (libm.so.6)\n");
    API(as)->free(as);
}

Test(frames, each_call_site_of_a_c_step_by_name_has_its_line)
{
    uint32_t lines[3];
    for (int i = 0; i < 3; ++i) {
        FutoInAsyncSteps* as = futoin_root_new(T);
        API(as)->add(as, NULL, a_string, NULL);
        if (i == 1) {
            lines[i] = __LINE__ + 1;
            FUTOIN_HOST_ADD(as, "c", "libm.so.6", "double cbrt(double)");
        } else {
            lines[i] = __LINE__ + 1;
            FUTOIN_HOST_ADD(as, "c", "libm.so.6", "double cbrt(double)");
        }
        run_keeping_stack(as);
        assert_frame(0, "double cbrt(double) in libm.so.6", __FILE__, lines[i]);
        API(as)->free(as);
    }
    cr_assert_neq(lines[0], lines[1]);
}

/* A site whose add failed before a C step was resolved is not taken by
 * the next C step. */
Test(frames, a_site_is_not_left_over_for_the_next_c_step)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    cr_assert_neq(futoin_host_add_at(as, "c", NULL, "double sqrt(double)", "x.c", 7),
                  FUTOIN_OK);
    cr_assert_neq(futoin_host_add_at(as, "nosuchlanguage", "m", "f", "y.c", 8),
                  FUTOIN_OK);
    API(as)->free(as);
    as = futoin_root_new(T);
    API(as)->add(as, NULL, a_string, NULL);
    futoin_host_add(as, "c", "libm.so.6", "double sqrt(double)");
    run_keeping_stack(as);
    assert_frame(0, "double sqrt(double)", "libm.so.6", 0);
    API(as)->free(as);
}

/* ---- steps added with the plain calls: symbols and debug info ------------ */

#if FUTOIN_TEST_DEBUG_INFO
/* The line table's first row for a function is the line of its opening
 * brace (GCC) or of its name (Clang): one line here, for both. */
static const uint32_t plain_line = __LINE__ + 1;
static void plain_static_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a) {
    ERROR(as, "Plain");
}

static bool ends_with(const char* s, const char* tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

Test(frames, a_plain_static_step_is_named_from_the_symbol_and_line_tables)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    const futoin_frame_origin* f;
    const char* file;
    API(as)->add(as, NULL, plain_static_step, NULL);
    run_keeping_stack(as);
    f = &seen->frames[0];
    cr_assert_str_eq(f->function, "plain_static_step", "%s", text);
    cr_assert_not_null(f->file, "%s", text);
    cr_assert(f->file[0] == '/' && ends_with(f->file, "/tests/test_frames.c")
                      && !strstr(f->file, "/../") && !strstr(f->file, "/./"),
              "%s", text);
    cr_assert_eq(f->line, plain_line, "%s", text);
    file = f->file;
    API(as)->free(as);

    /* read again: the same answer (kept for the process), the same
     * strings */
    trace_len = 0;
    as = futoin_root_new(T);
    API(as)->add(as, NULL, plain_static_step, NULL);
    run_keeping_stack(as);
    cr_assert_eq(seen->frames[0].file, file);
    cr_assert_eq(seen->frames[0].line, plain_line);
    API(as)->free(as);
}
#endif

/* ---- C steps of shared objects, built several ways (tests/frames/) ------- */

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

typedef FutoInAsyncSteps_execute_callback (*lib_step_fn)(unsigned* line);

/* The static step of frames_lib.c in `path` (loaded for good) and the line
 * it starts at. */
static FutoInAsyncSteps_execute_callback lib_step(const char* path, unsigned* line)
{
    void* dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    lib_step_fn get;
    cr_assert_not_null(dl, "%s", dlerror());
    *(void**)&get = dlsym(dl, "frames_lib_step");
    cr_assert_not_null(get, "%s", dlerror());
    return get(line);
}

static const futoin_frame_origin* lib_frame(const char* name, unsigned* line,
                                            FutoInAsyncSteps** as)
{
    char path[PATH_MAX];
    FutoInAsyncSteps_execute_callback step;
    snprintf(path, sizeof(path), "%s/%s", FUTOIN_TEST_FRAMES_DIR, name);
    step = lib_step(path, line);
    *as = futoin_root_new(T);
    API(*as)->add(*as, NULL, step, NULL);
    run_keeping_stack(*as);
    assert_trace("unhandled InLib\n");
    return &seen->frames[0];
}

static bool ends_with_(const char* s, const char* tail)
{
    size_t n = s ? strlen(s) : 0, t = strlen(tail);
    return s && n >= t && strcmp(s + n - t, tail) == 0;
}

Test(frames, a_static_step_of_a_shared_object_with_dwarf_4_lines)
{
    FutoInAsyncSteps* as;
    unsigned line = 0;
    const futoin_frame_origin* f = lib_frame("libframes_dwarf4.so", &line, &as);
    cr_assert_str_eq(f->function, "lib_static_step", "%s", text);
    /* DWARF 2-4 line tables do not name the compilation's directory:
     * the path is relative to it, as the compiler was given the file */
    cr_assert(ends_with_(f->file, "tests/frames/frames_lib.c") && !strstr(f->file, "/./"),
              "%s", text);
    cr_assert_eq(f->line, line, "line %u, not %u:\n%s", f->line, line, text);
    API(as)->free(as);
}

/* A C step another language adds by name (no call site said): the frame is
 * where the function is defined, from the object's line table (before:
 * the object's path and line 0, even when it was built with -g). */
static const futoin_frame_origin* named_frame(const char* name, unsigned* line,
                                              FutoInAsyncSteps** as)
{
    char path[PATH_MAX];
    void* dl;
    unsigned (*get)(void);
    snprintf(path, sizeof(path), "%s/%s", FUTOIN_TEST_FRAMES_DIR, name);
    dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(dl, "%s", dlerror());
    *(void**)&get = dlsym(dl, "frames_lib_named_line");
    cr_assert_not_null(get, "%s", dlerror());
    *line = get();
    *as = futoin_root_new(T);
    cr_assert_eq(futoin_host_add(*as, "c", path, "frames_lib_named_step"), FUTOIN_OK);
    run_keeping_stack(*as);
    assert_trace("unhandled ByName\n");
    return &seen->frames[0];
}

Test(frames, a_c_step_added_by_name_is_where_its_function_is_defined)
{
    FutoInAsyncSteps* as;
    unsigned line = 0;
    const futoin_frame_origin* f = named_frame("libframes_dwarf4.so", &line, &as);
    cr_assert_str_eq(f->language, "c", "%s", text);
    cr_assert_str_eq(f->function, "frames_lib_named_step", "%s", text);
    cr_assert(ends_with_(f->file, "tests/frames/frames_lib.c"), "%s", text);
    cr_assert_eq(f->line, line, "line %u, not %u:\n%s", f->line, line, text);
    API(as)->free(as);
}

Test(frames, a_c_step_added_by_name_from_an_object_without_debug_info_is_the_object)
{
    FutoInAsyncSteps* as;
    unsigned line = 0;
    const futoin_frame_origin* f = named_frame("libframes_nodebug.so", &line, &as);
    cr_assert_str_eq(f->function, "frames_lib_named_step", "%s", text);
    cr_assert(ends_with_(f->file, "/libframes_nodebug.so"), "%s", text);
    cr_assert_eq(f->line, 0, "%s", text);
    API(as)->free(as);
}

Test(frames, a_static_step_of_an_object_without_debug_info_has_its_name_no_line)
{
    FutoInAsyncSteps* as;
    unsigned line = 0;
    const futoin_frame_origin* f = lib_frame("libframes_nodebug.so", &line, &as);
    cr_assert_str_eq(f->function, "lib_static_step", "%s", text);
    cr_assert(ends_with_(f->file, "/libframes_nodebug.so"), "%s", text);
    cr_assert_eq(f->line, 0, "%s", text);
    API(as)->free(as);
}

#if FUTOIN_TEST_STRIPPED
Test(frames, a_static_step_of_a_stripped_object_is_its_offset_in_it)
{
    FutoInAsyncSteps* as;
    unsigned line = 0;
    const futoin_frame_origin* f = lib_frame("libframes_stripped.so", &line, &as);
    cr_assert(f->function && strncmp(f->function, "+0x", 3) == 0, "%s", text);
    cr_assert(ends_with_(f->file, "/libframes_stripped.so"), "%s", text);
    cr_assert_eq(f->line, 0, "%s", text);
    API(as)->free(as);
}
#endif

static void copy_file(const char* from, const char* to)
{
    char buf[65536];
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
    ssize_t n;
    cr_assert(in >= 0 && out >= 0, "%s -> %s", from, to);
    while ((n = read(in, buf, sizeof(buf))) > 0) {
        cr_assert_eq(write(out, buf, (size_t)n), n);
    }
    close(in);
    close(out);
}

/* The object's file was replaced after it was loaded (a rebuild while the
 * program runs): the file is not the object, so neither its symbols nor
 * its lines are used. */
Test(frames, a_file_replaced_after_loading_is_not_read)
{
    char dir[] = "/tmp/futoin-frames.XXXXXX";
    char path[PATH_MAX + 32], other[PATH_MAX + 32], src[PATH_MAX];
    FutoInAsyncSteps_execute_callback step;
    FutoInAsyncSteps* as;
    unsigned line = 0;
    const futoin_frame_origin* f;
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/libframes.so", dir);
    snprintf(other, sizeof(other), "%s/libother.so", dir);
    snprintf(src, sizeof(src), "%s/libframes_dwarf4.so", FUTOIN_TEST_FRAMES_DIR);
    copy_file(src, path);
    step = lib_step(path, &line);
    snprintf(src, sizeof(src), "%s/libframes_other.so", FUTOIN_TEST_FRAMES_DIR);
    copy_file(src, other);
    cr_assert_eq(rename(other, path), 0);

    as = futoin_root_new(T);
    API(as)->add(as, NULL, step, NULL);
    run_keeping_stack(as);
    f = &seen->frames[0];
    cr_assert(f->function && strncmp(f->function, "+0x", 3) == 0, "%s", text);
    cr_assert_str_eq(f->file, path, "%s", text);
    cr_assert_eq(f->line, 0, "%s", text);
    API(as)->free(as);
    unlink(path);
    rmdir(dir);
}
