/*
 * C steps and threads the JUnit suite drives (package-private in Java,
 * class TestHooks). They stand in for "another language" in one flow:
 * steps written in C that produce FTN12 values Java has no own form for
 * (UTF-16/32 strings, unsigned arrays, a custom object of a foreign
 * type), consume what Java produced, and a native (non-Java) thread that
 * drives a tool's loop so that the trampolines must attach it.
 *
 * Small and harmless in the shipped library: nothing here runs unless a
 * test calls it.
 */
#include "futoin_java.h"
#include "fj_api.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BSI(h) ((FutoInAsyncSteps*)(uintptr_t)(h))

/* ---- a custom value of a "foreign" language -------------------------------- */

static atomic_int foreign_cleanups;
static atomic_int foreign_seen;

static void foreign_cleanup(FutoInBinaryValue* v)
{
    free((void*)v->p);
    atomic_fetch_add(&foreign_cleanups, 1);
}

static const FutoInType foreign_type = {FTN_TYPE_CUSTOM_OBJECT, foreign_cleanup};

static void produce_foreign(FutoInAsyncSteps* bsi, void* data,
                            const FutoInArgs* args)
{
    FutoInArgs a;
    int* payload = malloc(sizeof(int));
    (void)data;
    (void)args;
    memset(&a, 0, sizeof(a));
    *payload = 4242;
    a.arg0.type = &foreign_type;
    a.arg0.p = payload;
    bsi->api->success(bsi, &a);
}

/* Checks that arg0 is the foreign object, unchanged, and passes it on. */
static void consume_foreign(FutoInAsyncSteps* bsi, void* data,
                            const FutoInArgs* args)
{
    (void)data;
    if (args && args->arg0.type == &foreign_type
        && *(const int*)args->arg0.p == 4242) {
        atomic_fetch_add(&foreign_seen, 1);
    } else {
        bsi->api->handle_error(bsi, "ForeignLost", "foreign value did not arrive");
    }
}

void fj_test_add_foreign_producer(jlong h)
{
    futoin_wrap_add(BSI(h), NULL, produce_foreign, NULL, NULL);
}

void fj_test_add_foreign_consumer(jlong h)
{
    futoin_wrap_add(BSI(h), NULL, consume_foreign, NULL, NULL);
}

jint fj_test_foreign_cleanups(void) { return atomic_load(&foreign_cleanups); }
jint fj_test_foreign_seen(void) { return atomic_load(&foreign_seen); }

/* ---- values Java has no own form for ---------------------------------------- */

static void free_p(FutoInBinaryValue* v)
{
    free((void*)v->p);
}

static const FutoInType t_s16 = {FTN_TYPE_STRING16, NULL};
static const FutoInType t_s32 = {FTN_TYPE_STRING32, NULL};
static const FutoInType t_u8 = {FTN_TYPE_UINT8, NULL};
static const FutoInType t_u16 = {FTN_TYPE_UINT16, NULL};
static const FutoInType t_u32 = {FTN_TYPE_UINT32, NULL};
static const FutoInType t_u64 = {FTN_TYPE_UINT64, NULL};
static const FutoInType t_i64 = {FTN_TYPE_INT64, NULL};
static const FutoInType t_str = {FTN_TYPE_STRING, free_p};
static const FutoInType t_au32 = {FTN_TYPE_ARRAY | FTN_TYPE_UINT32, NULL};
static const FutoInType t_ai8 = {FTN_TYPE_ARRAY | FTN_TYPE_INT8, NULL};
static const FutoInType t_abool = {FTN_TYPE_ARRAY | FTN_TYPE_BOOL, NULL};
static const FutoInType t_astr = {FTN_TYPE_ARRAY | FTN_TYPE_STRING, NULL};

static const char16_t s16[] = {'h', 0x00e9, 0xd83d, 0xde00, 0};
static const char32_t s32[] = {'x', 0x1f600, 0};
static const uint32_t au32[] = {1, 4000000000u};
static const int8_t ai8[] = {-1, 2};
static const bool abool[] = {true, false, true};
static const char* const astr[] = {"a", "b"};

/* kind 0: STRING16, STRING32, UINT8, UINT16
 * kind 1: UINT32, UINT64 (> INT64_MAX), ARRAY|UINT32, ARRAY|INT8
 * kind 2: ARRAY|BOOL, STRING "a\0b" (length 3), INT64 min, ARRAY|STRING */
static void produce_values(FutoInAsyncSteps* bsi, void* data,
                           const FutoInArgs* args)
{
    FutoInArgs a;
    int kind = (int)(intptr_t)data;
    (void)args;
    memset(&a, 0, sizeof(a));
    switch (kind) {
    case 0:
        a.arg0.type = &t_s16;
        a.arg0.cstr16 = s16;
        a.arg0.length = 4;
        a.arg1.type = &t_s32;
        a.arg1.cstr32 = s32;
        a.arg1.length = 0; /* NUL-terminated */
        a.arg2.type = &t_u8;
        a.arg2.u8 = 250;
        a.arg3.type = &t_u16;
        a.arg3.u16 = 65000;
        break;
    case 1:
        a.arg0.type = &t_u32;
        a.arg0.u32 = 4000000000u;
        a.arg1.type = &t_u64;
        a.arg1.u64 = UINT64_MAX;
        a.arg2.type = &t_au32;
        a.arg2.p = au32;
        a.arg2.length = 2;
        a.arg3.type = &t_ai8;
        a.arg3.p = ai8;
        a.arg3.length = 2;
        break;
    default: {
        char* s = malloc(4);
        memcpy(s, "a\0b", 4);
        a.arg0.type = &t_abool;
        a.arg0.p = abool;
        a.arg0.length = 3;
        a.arg1.type = &t_str;
        a.arg1.cstr = s;
        a.arg1.length = 3;
        a.arg2.type = &t_i64;
        a.arg2.i64 = INT64_MIN;
        a.arg3.type = &t_astr;
        a.arg3.p = astr;
        a.arg3.length = 2;
        break;
    }
    }
    bsi->api->success(bsi, &a);
}

void fj_test_add_c_values(jlong h, jint kind)
{
    futoin_wrap_add(BSI(h), (void*)(intptr_t)kind, produce_values, NULL, NULL);
}

/* A C step that passes its values on unchanged (moves them). */
static void pass_on(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    FutoInArgs a;
    (void)data;
    if (!args) {
        bsi->api->success(bsi, NULL);
        return;
    }
    memcpy(&a, args, sizeof(a));
    memset((FutoInArgs*)args, 0, sizeof(a)); /* moved: nothing left to clean */
    bsi->api->success(bsi, &a);
}

void fj_test_add_c_pass(jlong h)
{
    futoin_wrap_add(BSI(h), NULL, pass_on, NULL, NULL);
}

/* ---- a native thread driving a loop ---------------------------------------- */

static void* run_loop(void* tool)
{
    futoin_tool_run(tool);
    return NULL;
}

/* Run the tool's loop to idle on a new pthread the JVM does not know, and
 * wait for it to end. Returns 0, or -1 if the thread could not start. */
jint fj_test_run_on_native_thread(JNIEnv* env, jlong tool_ptr)
{
    pthread_t th;
    (void)env;
    if (pthread_create(&th, NULL, run_loop, (void*)(uintptr_t)tool_ptr) != 0) {
        return -1;
    }
    pthread_join(th, NULL);
    return 0;
}

/* ---- sync object counters ------------------------------------------------- */

/* Periods a Throttle or Limiter has ended (timer ticks), or -1: what
 * SyncTest counts entries against instead of a clock. Loop thread. */
jlong fj_test_sync_periods(jlong sync)
{
    futoin_sync_stats st = FUTOIN_SYNC_STATS_INIT;
    if (futoin_sync_get_stats((FutoInSync*)(uintptr_t)sync, &st) != FUTOIN_OK) {
        return -1;
    }
    return (jlong)st.periods;
}

/* ---- a flow of a C program ------------------------------------------------- */

/* What the C steps of a hosted flow saw. */
typedef struct hosted
{
    int done;
    char text[1024];
} hosted;

static void hosted_keep(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* a)
{
    hosted* h = data;
    const FutoInBinaryValue* v = &a->arg0;
    (void)bsi;
    if (v->type && (v->type->flags & FTN_BASE_TYPE_MASK) == FTN_TYPE_STRING) {
        snprintf(h->text, sizeof(h->text), "ok:%.*s", (int)v->length, v->cstr);
    } else if (v->type && v->type->flags == FTN_TYPE_INT32) {
        snprintf(h->text, sizeof(h->text), "ok:%d", (int)v->i32);
    } else {
        snprintf(h->text, sizeof(h->text), "ok:%s", v->type ? "?" : "");
    }
    h->done = 1;
}

static void hosted_error(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    hosted* h = data;
    const char* info = bsi->api->stateVariable(bsi, NULL, "error_info", NULL, NULL);
    snprintf(h->text, sizeof(h->text), "error:%s:%s", code, info ? info : "");
    h->done = 1;
}

/*
 * What a C program that hosts Java steps does, in this JVM (the JUnit
 * suite's stand-in for the polyglot matrix's C host): a tool and a root of
 * its own, the Java step `module`.`function` added by name, the loop run
 * on this thread. mode 0: run until idle, then free the tool. mode 1: run
 * without blocking until the flow is done, then try to free the tool
 * (":busy" is added when it is refused: Java timers still pending hold
 * it), run until idle and free it. Returns "ok:<value>" or
 * "error:<code>:<error_info>" (+ ":busy"); core_out[0] is the tool's
 * address.
 */
jstring fj_test_c_hosted(JNIEnv* env, jstring module, jstring function, jint mode,
                         jlongArray core_out)
{
    futoin_tool* t;
    FutoInAsyncSteps* root;
    hosted h = {0, ""};
    const char* m = (*env)->GetStringUTFChars(env, module, NULL);
    const char* f = m ? (*env)->GetStringUTFChars(env, function, NULL) : NULL;
    jlong core;
    int busy = 0;
    if (!f || futoin_tool_new(&t, NULL) != FUTOIN_OK) {
        if (m) {
            (*env)->ReleaseStringUTFChars(env, module, m);
        }
        return NULL;
    }
    core = (jlong)(uintptr_t)t;
    (*env)->SetLongArrayRegion(env, core_out, 0, 1, &core);
    root = futoin_root_new(t);
    futoin_host_add(root, "java", m, f);
    root->api->add(root, &h, hosted_keep, NULL);
    root->api->execute(root, &h, hosted_error);
    (*env)->ReleaseStringUTFChars(env, function, f);
    (*env)->ReleaseStringUTFChars(env, module, m);
    if (mode == 1) {
        while (!h.done && futoin_tool_run_nowait(t) >= 0) {
        }
        root->api->free(root);
        root = NULL;
        busy = futoin_tool_free(t) != FUTOIN_OK;
    }
    if (mode != 1 || busy) {
        futoin_tool_run(t);
        if (root) {
            root->api->free(root);
        }
        futoin_tool_free(t);
    }
    if (busy) {
        size_t n = strlen(h.text);
        snprintf(h.text + n, sizeof(h.text) - n, ":busy");
    }
    return (*env)->NewStringUTF(env, h.text);
}
