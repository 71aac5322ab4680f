/*
 * The JVM side of the glue: what JNI_OnLoad caches, the JNIEnv of the
 * calling thread, counted global references and misuse reporting.
 *
 * Classes and method IDs are looked up once, in JNI_OnLoad: FindClass
 * there uses the class loader of the class that loaded the library (the
 * jar's), and a lookup per callback would cost more than the step.
 *
 * Threads. A loop driven from Java (Tool.run() or the Tool's own thread)
 * runs callbacks on a Java thread that is inside a JNI down-call, so
 * GetEnv() finds it attached. A loop driven by native code (a C host, or
 * another language's loop thread) is not known to the JVM: the first
 * callback attaches that thread once, as a daemon, and a pthread key
 * destructor detaches it when the thread ends. Never detach per callback:
 * attaching costs microseconds and creates a java.lang.Thread each time.
 */
#include "futoin_java.h"
#include "fj_str.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

fj_cache fj;

static atomic_llong grefs;
static atomic_llong attaches;
static atomic_llong detaches;
static pthread_key_t detach_key;

/* ---- attach / detach ------------------------------------------------------ */

/* This thread's JNIEnv once GetEnv() or attaching gave it: valid while the
 * thread stays attached, i.e. for its life (Java threads never detach;
 * the threads attached here are detached only when they end). */
static _Thread_local JNIEnv* thread_env __attribute__((tls_model("initial-exec")));

static void detach_at_exit(void* vm)
{
    JavaVM* jvm = vm;
    thread_env = NULL;
    (*jvm)->DetachCurrentThread(jvm);
    atomic_fetch_add(&detaches, 1);
}

static JNIEnv* attach_thread(void)
{
    JNIEnv* env = NULL;
    JavaVMAttachArgs args = {FJ_JNI_VERSION, "futoin-native-loop", NULL};
    if ((*fj.vm)->AttachCurrentThreadAsDaemon(fj.vm, (void**)&env, &args)
        != JNI_OK) {
        return NULL;
    }
    atomic_fetch_add(&attaches, 1);
    /* The key's value must be non-NULL for the destructor to run. */
    pthread_setspecific(detach_key, fj.vm);
    return env;
}

JNIEnv* fj_env_slow(void)
{
    JNIEnv* env = thread_env;
    jint rc;
    if (env) {
        return env;
    }
    if (!fj.vm) {
        return NULL;
    }
    rc = (*fj.vm)->GetEnv(fj.vm, (void**)&env, FJ_JNI_VERSION);
    if (rc != JNI_OK) {
        env = rc == JNI_EDETACHED ? attach_thread() : NULL;
    }
    thread_env = env;
    return env;
}

int64_t fj_attach_count(void) { return atomic_load(&attaches); }
int64_t fj_detach_count(void) { return atomic_load(&detaches); }

/* ---- counted global references ------------------------------------------- */

jobject fj_gref(JNIEnv* env, jobject o)
{
    jobject g;
    if (!o) {
        return NULL;
    }
    g = (*env)->NewGlobalRef(env, o);
    if (g) {
        atomic_fetch_add_explicit(&grefs, 1, memory_order_relaxed);
    }
    return g;
}

void fj_gref_drop(JNIEnv* env, jobject g)
{
    if (g) {
        (*env)->DeleteGlobalRef(env, g);
        atomic_fetch_sub_explicit(&grefs, 1, memory_order_relaxed);
    }
}

int64_t fj_gref_count(void) { return atomic_load(&grefs); }

void fj_ref_count(int delta)
{
    atomic_fetch_add_explicit(&grefs, delta, memory_order_relaxed);
}

/* ---- exceptions ----------------------------------------------------------- */

void fj_throw(JNIEnv* env, jclass cls, const char* msg)
{
    if (!(*env)->ExceptionCheck(env)) {
        (*env)->ThrowNew(env, cls, msg);
    }
}

int fj_upcall_failed(JNIEnv* env)
{
    if ((*env)->ExceptionCheck(env)) {
        /* Dispatch catches every Throwable; this is an error thrown while
         * handling one (StackOverflowError, OutOfMemoryError). */
        (*env)->ExceptionDescribe(env);
        (*env)->ExceptionClear(env);
        return 1;
    }
    return 0;
}

jobject fj_code_string(JNIEnv* env, const char* code, int* is_local)
{
    int i = futoin_error_lookup(code);
    const char* p;
    jbyteArray b;
    jsize n;
    *is_local = 0;
    if (i >= 0 && i < (int)(sizeof(fj.codes) / sizeof(fj.codes[0]))
        && fj.codes[i]) {
        return fj.codes[i];
    }
    *is_local = 1;
    if (!code) {
        code = "";
    }
    for (p = code; *p && (unsigned char)*p < 0x80; ++p) {
    }
    if (!*p) {
        return (*env)->NewStringUTF(env, code); /* ASCII: same in modified UTF-8 */
    }
    /* Anything else as UTF-8 bytes, decoded in Java (JNI's string
     * functions read modified UTF-8, which differs outside the BMP). */
    n = (jsize)strlen(code);
    b = (*env)->NewByteArray(env, n);
    if (b) {
        (*env)->SetByteArrayRegion(env, b, 0, n, (const jbyte*)code);
    }
    return b;
}

/* ---- misuse at the call site ----------------------------------------------- */

/* Touched by every entry point: initial-exec TLS (a %fs-relative load, no
 * __tls_get_addr call); the message is only written on misuse. */
#define FJ_TLS_IE __attribute__((tls_model("initial-exec")))
static _Thread_local int guard_depth FJ_TLS_IE;
static _Thread_local int guard_hit FJ_TLS_IE;
static _Thread_local char guard_msg[256];
_Thread_local JNIEnv* fj_loop_env FJ_TLS_IE;
_Thread_local FutoInAsyncSteps* fj_cur_bsi FJ_TLS_IE;

void fj_guard_begin(void)
{
    ++guard_depth;
    guard_hit = 0;
}

int fj_guard_end(JNIEnv* env)
{
    --guard_depth;
    if (guard_hit) {
        guard_hit = 0;
        fj_throw(env, fj.ex_state, guard_msg);
        return 1;
    }
    return 0;
}

void fj_misuse_cb(void* data, const char* code, const char* message)
{
    JNIEnv* env;
    jobject jtool = data ? fj_tool_jobject(data) : NULL;
    jstring msg;
    if (guard_depth > 0) {
        fj_copy_str(guard_msg, sizeof(guard_msg), message);
        guard_hit = 1;
        return;
    }
    /* Not inside a Java call on this thread: nobody to throw to. The Tool's
     * misuse handler gets it (Tool.onMisuse; by default stderr, except
     * completions from other threads that lost a race against a timeout
     * or cancel: a normal outcome). The count is kept by the runtime. */
    env = jtool ? fj_env() : NULL;
    if (env && !(*env)->ExceptionCheck(env)
        && (msg = (*env)->NewStringUTF(env, message)) != NULL) {
        (*env)->CallStaticVoidMethod(env, fj.dispatch, fj.d_misuse, jtool, msg);
        fj_upcall_failed(env);
        (*env)->DeleteLocalRef(env, msg);
        return;
    }
    fprintf(stderr, "futoin: %s: %s\n", code, message);
}

/* ---- JNI_OnLoad ----------------------------------------------------------- */

static jclass global_class(JNIEnv* env, const char* name)
{
    jclass c = (*env)->FindClass(env, name);
    jclass g = c ? (*env)->NewGlobalRef(env, c) : NULL;
    if (c) {
        (*env)->DeleteLocalRef(env, c);
    }
    return g;
}

#define REC "Lorg/futoin/async/Rec;"
#define OBJ "Ljava/lang/Object;"
#define STR "Ljava/lang/String;"

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* reserved)
{
    JNIEnv* env;
    jclass rec;
    (void)reserved;
    if ((*vm)->GetEnv(vm, (void**)&env, FJ_JNI_VERSION) != JNI_OK) {
        return JNI_ERR;
    }
    if (pthread_key_create(&detach_key, detach_at_exit) != 0) {
        return JNI_ERR;
    }
    fj.vm = vm;
    fj.dispatch = global_class(env, "org/futoin/async/Dispatch");
    rec = (*env)->FindClass(env, "org/futoin/async/Rec");
    fj.rec = rec ? (*env)->NewGlobalRef(env, rec) : NULL;
    fj.ex_state = global_class(env, "java/lang/IllegalStateException");
    fj.ex_arg = global_class(env, "java/lang/IllegalArgumentException");
    fj.ex_npe = global_class(env, "java/lang/NullPointerException");
    fj.ex_oom = global_class(env, "java/lang/OutOfMemoryError");
    if (!fj.dispatch || !rec || !fj.ex_state || !fj.ex_arg || !fj.ex_npe
        || !fj.ex_oom) {
        return JNI_ERR;
    }
    fj.rec_notify = (*env)->GetFieldID(env, rec, "notifyRelease", "Z");
    {
        jclass asc = (*env)->FindClass(env, "org/futoin/async/AsyncSteps");
        if (!asc) {
            return JNI_ERR;
        }
        fj.asi_chained = (*env)->GetFieldID(env, asc, "chained", "J");
        (*env)->DeleteLocalRef(env, asc);
    }
    (*env)->DeleteLocalRef(env, rec);
#define SM(f, n, s)                                                            \
    fj.f = (*env)->GetStaticMethodID(env, fj.dispatch, n, s);                  \
    if (!fj.f) {                                                               \
        return JNI_ERR;                                                        \
    }
    SM(d_step0, "step0", "(" REC "J)J");
    SM(d_step1, "step1", "(" REC "JIJ" OBJ ")J");
    SM(d_step, "step", "(" REC "JIJJJJ" OBJ OBJ OBJ OBJ ")J");
    SM(d_error, "error", "(" REC "J" OBJ ")J");
    SM(d_cancel, "cancel", "(" REC "J)V");
    SM(d_loop, "loop", "(" REC "JJ)J");
    SM(d_released, "released", "(" REC ")V");
    SM(d_unhandled, "unhandled", "(" REC "J" OBJ ")V");
    SM(d_drain, "drain", "(" OBJ ")V");
    SM(d_timer, "timer", "(" OBJ ")V");
    SM(d_new_state, "newState", "()" OBJ);
    SM(d_misuse, "misuse", "(" OBJ STR ")V");
    SM(d_origin, "origin", "(" REC ")J");
    SM(d_step0_t, "step0", "([" OBJ "IJ)J");
    SM(d_step1_t, "step1", "([" OBJ "IJIJ" OBJ ")J");
    SM(d_step_t, "step", "([" OBJ "IJIJJJJ" OBJ OBJ OBJ OBJ ")J");
    SM(d_error_t, "error", "([" OBJ "IJ" OBJ ")J");
    SM(d_released_t, "released", "([" OBJ "I)V");
    SM(d_drain_t, "drainTable", "(I)V");
    SM(d_origin_t, "origin", "([" OBJ "I)J");
    SM(d_resolve, "resolve", "([B[B)" OBJ);
    SM(d_decode, "decode", "(IJ" OBJ ")" OBJ);
    SM(d_hook, "hook", "(" OBJ STR "JJ" STR STR STR "I" STR STR STR STR "J" STR "J)V");
#undef SM
    if (!fj.rec_notify || !fj.rec || !fj.asi_chained) {
        return JNI_ERR;
    }
    for (int i = 0; i < FUTOIN_ERROR_COUNT
                    && i < (int)(sizeof(fj.codes) / sizeof(fj.codes[0]));
         ++i) {
        jstring s = (*env)->NewStringUTF(env, futoin_error_name((futoin_error)i));
        if (!s) {
            return JNI_ERR;
        }
        fj.codes[i] = (*env)->NewGlobalRef(env, s);
        (*env)->DeleteLocalRef(env, s);
    }
    /* steps of other languages can now call back into this JVM */
    fj_host_register();
    return FJ_JNI_VERSION;
}
