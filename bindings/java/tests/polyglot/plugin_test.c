/*
 * The Java host plug-in (libfutoin_host_java.so) in a C program, for what
 * the matrix (tests/polyglot/c_host.c) does not cover: clear errors where
 * a Java step is resolved (no JVM, no class, no method, a class that fails
 * to load), a Java exception as InternalError with its stack trace, a Java
 * step working after all that, 10,000 flows with Java steps on the main
 * thread and on a loop thread of its own (attached once, detached when it
 * ends), a Java step's asi.tool() being this program's loop (its timers
 * run), and the binding's counters at the end: no global reference and no
 * named step left.
 * One JVM per process: the "no JVM" case must come first.
 *
 * Environment as for c_host (CLASSPATH with the jar, where the library
 * finds the plug-in; FUTOIN_JAVA_CLASSPATH with the fragments and
 * bindings/java/tests/polyglot's classes). Last line
 * "polyglot-java-plugin: N passed, M failed".
 */
#include <futoin/async.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "futoin_check.h" /* tests/include: CHECK, futoin_check_summary */
#include "c_steps.h"       /* code, info, on_error, send */

static futoin_tool* tool;
static int64_t value;
static int values;

static void keep(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    values = a->arg0.type ? 1 : 0;
    value = a->arg0.type && a->arg0.type->flags == FTN_TYPE_INT64 ? a->arg0.i64 : -1;
}

/* (text, int64) of Probe.timers */
static char* kept_text;
static int64_t* kept_addr;

static void keep_text(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    if (a->arg0.type && (a->arg0.type->flags & FTN_BASE_TYPE_MASK) == FTN_TYPE_STRING) {
        snprintf(kept_text, 256, "%.*s", (int)a->arg0.length, a->arg0.cstr);
    }
    if (a->arg1.type && a->arg1.type->flags == FTN_TYPE_INT64) {
        *kept_addr = a->arg1.i64;
    }
}

/* A step of `module`.`function` that cannot be had: the call says so, and
 * the flow fails with InvalidRequest naming what and why. */
static void expect_failure(const char* module, const char* function,
                           const char* part)
{
    FutoInAsyncSteps* as = futoin_root_new(tool);
    int rc = futoin_host_add(as, "java", module, function);
    code[0] = info[0] = 0;
    as->api->execute(as, NULL, on_error);
    futoin_tool_run(tool);
    CHECK(rc < 0, "%s.%s: futoin_host_add() returned %d", module, function, rc);
    CHECK(strcmp(code, "InvalidRequest") == 0, "%s.%s: code '%s'", module, function,
          code);
    CHECK(strstr(info, "java") && strstr(info, module) && strstr(info, function)
                  && strstr(info, part),
          "%s.%s: error_info '%s' lacks '%s'", module, function, info, part);
    as->api->free(as);
}

static void handled(FutoInAsyncSteps* as, void* d, const char* c)
{
    as->api->success(as, NULL);
}

static void java_fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    futoin_host_add(as, "java", "org.futoin.polyglot.Fragments", "fail");
}

static void cancel_root(void* d)
{
    FutoInAsyncSteps* as = d;
    as->api->cancel(as);
}

/* 10,000 flows with a Java step: success, error handled in C, cancel. */
static int many(futoin_tool* t)
{
    int bad = 0;
    for (int i = 0; i < 10000; ++i) {
        FutoInAsyncSteps* as = futoin_root_new(t);
        code[0] = 0;
        switch (i % 3) {
        case 0:
            as->api->add(as, NULL, send, NULL);
            futoin_host_add(as, "java", "org.futoin.polyglot.Fragments", "echo");
            as->api->add(as, NULL, keep, NULL);
            break;
        case 1:
            as->api->add(as, NULL, java_fail, handled);
            break;
        default:
            futoin_host_add(as, "java", "org.futoin.polyglot.Fragments", "wait");
            futoin_tool_immediate(t, cancel_root, as);
            break;
        }
        as->api->execute(as, NULL, on_error);
        futoin_tool_run(t);
        bad += code[0] != 0;
        as->api->free(as);
    }
    return bad;
}

/* A loop thread of its own: attached to the JVM by its first Java step,
 * detached when it ends. */
static void* other_loop(void* arg)
{
    futoin_tool* t;
    int* bad = arg;
    if (futoin_tool_new(&t, NULL) != FUTOIN_OK) {
        *bad = -1;
        return NULL;
    }
    *bad = many(t);
    futoin_tool_free(t);
    return NULL;
}

int main(void)
{
    typedef struct
    {
        int64_t global_refs, named_steps, starts, stops, attached, detached;
    } counters;
    int (*get_counters)(counters*);
    FutoInAsyncSteps* as;
    counters c;
    void* dl;

    if (futoin_tool_new(&tool, NULL) != FUTOIN_OK) {
        return 2;
    }
    /* no JVM to be had: a clear error, and nothing started */
    setenv("FUTOIN_JAVA_LIBJVM", "/nonexistent/lib/server/libjvm.so", 1);
    expect_failure("org.futoin.polyglot.Fragments", "echo", "no JVM");
    CHECK(strstr(info, "/nonexistent/lib/server/libjvm.so") != NULL,
          "the places tried are not named: %s", info);
    unsetenv("FUTOIN_JAVA_LIBJVM");

    /* the JVM starts now; what cannot be resolved says why */
    expect_failure("org.futoin.polyglot.NoSuchClass", "echo", "no class");
    expect_failure("org.futoin.polyglot.Fragments", "no_such_function", "no method");
    expect_failure("org.futoin.polyglot.BadSteps", "noValues", "BadSteps refuses to load");
    expect_failure("org.futoin.polyglot.BadSteps", "noValues", "failed to load");

    /* a Java exception: InternalError whose error_info is the exception's
     * text and the top of its trace, down to the step (issue 23: this
     * program cannot see the exception object); the async stack names the
     * Java step with its package */
    as = futoin_root_new(tool);
    code[0] = info[0] = 0;
    CHECK(futoin_host_add(as, "java", "org.futoin.polyglot.Throwing", "npe") == FUTOIN_OK,
          "Throwing.npe not resolved");
    as->api->execute(as, NULL, on_error);
    futoin_tool_run(tool);
    CHECK(strcmp(code, "InternalError") == 0, "npe: code '%s'", code);
    CHECK(strncmp(info, "java.lang.NullPointerException: boom in java\n", 45) == 0
                  && strncmp(info + 45, "\tat org.futoin.polyglot.Throwing.npe(Throwing.java:", 51)
                             == 0
                  && !strchr(info + 45, '\n') && !strstr(info, "org.futoin.async."),
          "npe: error_info '%s'", info);
    {
        const futoin_async_stack* st =
                as->api->stateVariable(as, NULL, "async_stack", NULL, NULL);
        CHECK(st && st->count >= 1 && st->frames[0].language
                      && strcmp(st->frames[0].language, "java") == 0
                      && st->frames[0].function
                      && strcmp(st->frames[0].function, "org.futoin.polyglot.Throwing.npe") == 0
                      && st->frames[0].file && strcmp(st->frames[0].file, "Throwing.java") == 0
                      && st->frames[0].line > 0,
              "npe: async stack frame 0 is not the Java step: %s",
              st && st->count ? st->frames[0].function : "(none)");
    }
    as->api->free(as);

    /* and Java steps work all the same */
    as = futoin_root_new(tool);
    value = 0;
    as->api->add(as, NULL, send, NULL);
    CHECK(futoin_host_add(as, "java", "org.futoin.polyglot.Fragments", "echo") == FUTOIN_OK,
          "echo not resolved");
    as->api->add(as, NULL, keep, NULL);
    as->api->execute(as, NULL, on_error);
    futoin_tool_run(tool);
    CHECK(values == 1 && value == 42, "echo gave %lld", (long long)value);
    as->api->free(as);

    /* the loop of this program, through asi.tool() of a Java step: its
     * timers run (issue 23) */
    {
        static char text[256];
        static int64_t addr;
        as = futoin_root_new(tool);
        code[0] = info[0] = text[0] = 0;
        addr = 0;
        CHECK(futoin_host_add(as, "java", "org.futoin.polyglot.Probe", "timers") == FUTOIN_OK,
              "Probe.timers not resolved");
        as->api->add(as, NULL, keep_text, NULL);
        kept_text = text;
        kept_addr = &addr;
        as->api->execute(as, NULL, on_error);
        futoin_tool_run(tool);
        CHECK(strcmp(text, "immediate,deferred,execute") == 0 && code[0] == 0,
              "Java timers on the C loop: '%s' %s %s", text, code, info);
        CHECK(addr == (int64_t)(uintptr_t)tool, "asi.tool() of the Java step is not this loop");
        as->api->free(as);
    }

    /* many flows, on this thread and on a thread of their own */
    CHECK(many(tool) == 0, "flows on the main thread failed: %s %s", code, info);
    {
        pthread_t th;
        int bad = 0;
        pthread_create(&th, NULL, other_loop, &bad);
        pthread_join(th, NULL);
        CHECK(bad == 0, "%d flows on another thread failed: %s %s", bad, code, info);
    }

    /* the binding holds nothing for flows that are gone */
    dl = dlopen("libfutoin_host_java.so", RTLD_NOW | RTLD_NOLOAD);
    get_counters = dl ? (int (*)(counters*))dlsym(dl, "futoin_host_java_counters") : NULL;
    CHECK(get_counters != NULL, "futoin_host_java_counters not found: %s", dlerror());
    if (get_counters) {
        get_counters(&c);
        CHECK(c.global_refs == 0 && c.named_steps == 0 && c.starts == 1,
              "global refs %lld, named steps %lld, starts %lld",
              (long long)c.global_refs, (long long)c.named_steps, (long long)c.starts);
        CHECK(c.attached == 1 && c.detached == 1,
              "the other loop thread: attached %lld, detached %lld",
              (long long)c.attached, (long long)c.detached);
    }
    if (dl) {
        dlclose(dl);
    }
    futoin_host_shutdown();
    if (get_counters) {
        get_counters(&c);
        CHECK(c.stops == 1, "stops %lld", (long long)c.stops);
    }
    CHECK(futoin_tool_free(tool) == FUTOIN_OK, "tool not freed");
    return futoin_check_summary("polyglot-java-plugin");
}
