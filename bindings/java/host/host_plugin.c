/*
 * libfutoin_host_java.so: the language host plug-in for Java, loaded by
 * libfutoin_async (dlopen) when a program written in C, Python or Lua adds
 * a Java step (futoin_host_add(as, "java", class, method)). It ships in
 * the binding's jar as a stored entry (native/<platform>/futoin-hosts/),
 * and next to the jar in a build.
 *
 * It only brings the JVM: start() finds the JVM of this process
 * (JNI_GetCreatedJavaVMs of the libjvm already loaded), or loads libjvm.so
 * as a Java user's settings say (JAVA_HOME, else the `java` on PATH with
 * its links resolved; jvm_env.c) and creates one with
 *   -Xrs                                 (no JVM handlers for SIGINT,
 *                                         SIGTERM, SIGHUP, SIGQUIT: the host
 *                                         program's own)
 *   -Djava.class.path=<the binding's jar>:<CLASSPATH, absolute entries>
 *                                        (the jar: the one on CLASSPATH
 *                                         that carries this plug-in, or
 *                                         futoin-async.jar next to it)
 *   $FUTOIN_JAVA_OPTIONS                 (blank-separated, optional)
 * A process can create one JVM only, ever: it stays until the process
 * ends. Then org.futoin.async.Polyglot.hostTable() loads the binding into
 * that JVM (its NativeLoader binds the glue to the libfutoin_async already
 * in the process, never a second copy) and returns the binding's own
 * "java" host table (host/jni_host.c), to which start/resolve/stop are
 * forwarded. The calling thread (the loop thread) is attached to the JVM
 * once and detached when it ends (a thread-specific key's destructor; the
 * main thread of a program is never detached, the process ends with it).
 *
 * Links nothing of the JVM or of the runtime: both are already in the
 * process, or loaded here with dlopen.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "fj_host.h"
#include "fj_str.h"
#include "jvm_env.h"

#include <dlfcn.h>
#include <jni.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the plug-in's two exports (built with -fvisibility=hidden) */
#define FJ_EXPORT __attribute__((visibility("default")))
FJ_EXPORT int futoin_host_get(uint32_t version, const futoin_host_api** out);
FJ_EXPORT int futoin_host_java_counters(fj_host_counters* out);

typedef jint (*get_created_fn)(JavaVM**, jsize, jsize*);
typedef jint (*create_fn)(JavaVM**, void**, void*);

static pthread_mutex_t boot_mx = PTHREAD_MUTEX_INITIALIZER;
static const fj_host_table* inner; /* the binding's, once the JVM runs */

/* libjvm: the one in the process, else loaded as JAVA_HOME or PATH say
 * (jvm_env.c). Its two entry points, or an explanation in `err`. */
static int find_jvm(get_created_fn* created, create_fn* create, char* err,
                    size_t errlen)
{
    void* dl;
    union
    {
        void* p;
        get_created_fn g;
        create_fn c;
    } u;
    u.p = dlsym(RTLD_DEFAULT, "JNI_GetCreatedJavaVMs");
    if (u.p) {
        *created = u.g;
        u.p = dlsym(RTLD_DEFAULT, "JNI_CreateJavaVM");
        *create = u.c;
        return FUTOIN_OK;
    }
    dl = fj_open_libjvm(err, errlen);
    if (!dl) {
        return FUTOIN_EINVAL;
    }
    u.p = dlsym(dl, "JNI_GetCreatedJavaVMs");
    *created = u.g;
    u.p = dlsym(dl, "JNI_CreateJavaVM");
    *create = u.c;
    if (!*created || !*create) {
        fj_copy_str(err, errlen, "java: no JVM: libjvm.so has no JNI_CreateJavaVM");
        return FUTOIN_EINVAL;
    }
    return FUTOIN_OK;
}

/* What the class path was made of, for the error when the binding's
 * classes are not on it. */
static char cp_note[1536];
static char* cp_used;

static int create_jvm(create_fn create, JavaVM** vm, JNIEnv** env, char* err,
                      size_t errlen)
{
    JavaVMOption opts[32];
    JavaVMInitArgs args;
    char* cp = fj_class_path_option(cp_note, sizeof(cp_note));
    char* extra = getenv("FUTOIN_JAVA_OPTIONS") ? strdup(getenv("FUTOIN_JAVA_OPTIONS"))
                                                : NULL;
    int n = 0;
    jint rc;
    if (!cp) {
        free(extra);
        fj_copy_str(err, errlen, "java: out of memory");
        return FUTOIN_ENOMEM;
    }
    if (strcmp(cp, "-Djava.class.path=") == 0) {
        /* The JVM takes an empty class path for the current folder: the
         * binding and the steps would come from wherever the program runs
         * (issue 23). Without the binding's jar nothing could run anyway. */
        snprintf(err, errlen,
                 "java: nothing on the JVM's class path: put futoin-async.jar on "
                 "CLASSPATH (an absolute path)%s%s",
                 cp_note[0] ? "; " : "", cp_note);
        free(extra);
        free(cp);
        return FUTOIN_EINVAL;
    }
    opts[n++].optionString = "-Xrs";
    opts[n++].optionString = cp;
    if (extra) {
        char* save = NULL;
        for (char* t = strtok_r(extra, " \t", &save); t && n < 32;
             t = strtok_r(NULL, " \t", &save)) {
            opts[n++].optionString = t;
        }
    }
    for (int i = 0; i < n; ++i) {
        opts[i].extraInfo = NULL;
    }
    args.version = JNI_VERSION_10;
    args.nOptions = n;
    args.options = opts;
    args.ignoreUnrecognized = JNI_FALSE;
    rc = create(vm, (void**)env, &args);
    free(extra);
    if (rc != JNI_OK) {
        snprintf(err, errlen, "java: JNI_CreateJavaVM failed (%d) with %s",
                 (int)rc, cp);
        free(cp);
        return FUTOIN_EINVAL;
    }
    free(cp_used);
    cp_used = cp; /* kept for error messages */
    return FUTOIN_OK;
}

/* The message of the pending exception, into err (and cleared). */
static void exception_text(JNIEnv* env, const char* what, char* err,
                           size_t errlen)
{
    jthrowable t = (*env)->ExceptionOccurred(env);
    jclass oc;
    jmethodID ts;
    jstring s = NULL;
    const char* c;
    (*env)->ExceptionClear(env);
    snprintf(err, errlen, "java: %s", what);
    if (!t) {
        return;
    }
    oc = (*env)->FindClass(env, "java/lang/Object");
    ts = oc ? (*env)->GetMethodID(env, oc, "toString", "()Ljava/lang/String;") : NULL;
    if (ts) {
        s = (*env)->CallObjectMethod(env, t, ts);
    }
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
    } else if (s && (c = (*env)->GetStringUTFChars(env, s, NULL)) != NULL) {
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, ": %s", c);
        (*env)->ReleaseStringUTFChars(env, s, c);
    }
    if (s) {
        (*env)->DeleteLocalRef(env, s);
    }
    if (oc) {
        (*env)->DeleteLocalRef(env, oc);
    }
    (*env)->DeleteLocalRef(env, t);
}

/* A thread this plug-in attached (or made the JVM on) is detached when it
 * ends: a thread that ends attached leaves the JVM a dead thread to wait
 * for. (The binding's own attachments do the same, glue/jni_env.c.) */
static pthread_key_t detach_key;
static pthread_once_t detach_once = PTHREAD_ONCE_INIT;

static void detach_at_exit(void* vm)
{
    JavaVM* jvm = vm;
    (*jvm)->DetachCurrentThread(jvm);
}

static void make_key(void)
{
    (void)pthread_key_create(&detach_key, detach_at_exit);
}

static void detach_when_done(JavaVM* vm)
{
    pthread_once(&detach_once, make_key);
    pthread_setspecific(detach_key, vm);
}

static int boot(char* err, size_t errlen)
{
    get_created_fn created = NULL;
    create_fn create = NULL;
    JavaVM* vm = NULL;
    JNIEnv* env = NULL;
    jsize nvm = 0;
    jclass cls;
    jmethodID mid;
    jlong table;
    int rc = find_jvm(&created, &create, err, errlen);
    if (rc != FUTOIN_OK) {
        return rc;
    }
    if (created(&vm, 1, &nvm) != JNI_OK || nvm == 0) {
        rc = create_jvm(create, &vm, &env, err, errlen);
        if (rc != FUTOIN_OK) {
            return rc;
        }
        detach_when_done(vm);
    } else if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_10) != JNI_OK) {
        /* a JVM someone else created: attach this (loop) thread once */
        JavaVMAttachArgs a = {JNI_VERSION_10, "futoin-host-java", NULL};
        if ((*vm)->AttachCurrentThreadAsDaemon(vm, (void**)&env, &a) != JNI_OK) {
            fj_copy_str(err, errlen, "java: cannot attach to the running JVM");
            return FUTOIN_EINVAL;
        }
        detach_when_done(vm);
    }
    cls = (*env)->FindClass(env, "org/futoin/async/Polyglot");
    if (!cls) {
        char what[3072];
        const char* cp = cp_used ? cp_used + strlen("-Djava.class.path=")
                                 : "the class path of a JVM started before";
        snprintf(what, sizeof(what),
                 "org.futoin.async.Polyglot is not on the JVM's class path "
                 "(%.1024s%s%.1536s): put futoin-async.jar on CLASSPATH "
                 "(an absolute path)",
                 cp[0] ? cp : "empty", cp_note[0] ? "; " : "", cp_note);
        exception_text(env, what, err, errlen);
        return FUTOIN_EINVAL;
    }
    mid = (*env)->GetStaticMethodID(env, cls, "hostTable", "()J");
    table = mid ? (*env)->CallStaticLongMethod(env, cls, mid) : 0;
    if ((*env)->ExceptionCheck(env) || !table) {
        exception_text(env, "loading the Java binding failed", err, errlen);
        (*env)->DeleteLocalRef(env, cls);
        return FUTOIN_EINVAL;
    }
    (*env)->DeleteLocalRef(env, cls);
    inner = (const fj_host_table*)(uintptr_t)table;
    if (inner->size < sizeof(fj_host_table) || !inner->api) {
        inner = NULL;
        fj_copy_str(err, errlen, "java: the Java binding's host table is too old");
        return FUTOIN_EVERSION;
    }
    return FUTOIN_OK;
}

/*
 * start() cannot name the module and function a failure is about, and the
 * error of a step that cannot be had must name them. So when the JVM
 * cannot be had, start() succeeds (counted as one start to undo) and the
 * JVM is tried again by resolve(), which says what failed for which step.
 */
static futoin_tool* pending_tool; /* a start() not forwarded yet */
static int pending_starts;

/* Boot if needed, then forward the starts held back; loop thread. */
static int ready(char* err, size_t errlen)
{
    int rc = FUTOIN_OK;
    pthread_mutex_lock(&boot_mx);
    if (!inner) {
        rc = boot(err, errlen);
    }
    while (rc == FUTOIN_OK && pending_starts > 0) {
        rc = inner->api->start(pending_tool, err, errlen);
        if (rc == FUTOIN_OK) {
            --pending_starts;
        }
    }
    pthread_mutex_unlock(&boot_mx);
    return rc;
}

static int pl_start(futoin_tool* tool, char* err, size_t errlen)
{
    pthread_mutex_lock(&boot_mx);
    pending_tool = tool;
    ++pending_starts;
    pthread_mutex_unlock(&boot_mx);
    (void)ready(err, errlen); /* a failure is told by resolve() */
    err[0] = 0;
    return FUTOIN_OK;
}

static int pl_resolve(const char* module, const char* function,
                      futoin_host_step* out, char* err, size_t errlen)
{
    char why[1024];
    int rc = ready(why, sizeof(why));
    if (rc != FUTOIN_OK) {
        snprintf(err, errlen, "%s (cannot resolve %s.%s)", why, module,
                 function);
        return rc;
    }
    rc = inner->api->resolve(module, function, out, err, errlen);
    if (rc != FUTOIN_OK && strstr(err, "no class '")) {
        /* a class not found may sit behind an entry left out (relative or
         * empty CLASSPATH / FUTOIN_JAVA_CLASSPATH entries, a relative
         * FUTOIN_JAVA_JAR; Polyglot.find() says "no class '...' on the
         * class path"); cp_note says what was left out, and is empty when
         * nothing was. It was written by boot() under boot_mx, which
         * ready() took */
        size_t used = strlen(err);
        if (cp_note[0] && used < errlen) {
            snprintf(err + used, errlen - used, "; %s", cp_note);
        }
    }
    return rc;
}

static void pl_stop(void)
{
    pthread_mutex_lock(&boot_mx);
    if (pending_starts > 0) {
        --pending_starts;
        pthread_mutex_unlock(&boot_mx);
        return;
    }
    pthread_mutex_unlock(&boot_mx);
    if (inner) {
        inner->api->stop(); /* the JVM stays: one per process, ever */
    }
}

static const futoin_host_api plugin = {
        sizeof(futoin_host_api), FUTOIN_HOST_VERSION_1, "java",
        pl_start, pl_resolve, pl_stop,
};

FJ_EXPORT int futoin_host_get(uint32_t version, const futoin_host_api** out)
{
    if (version < FUTOIN_HOST_VERSION_1 || !out) {
        return FUTOIN_EVERSION;
    }
    *out = &plugin;
    return FUTOIN_OK;
}

/** For leak checks of host programs: the binding's counters (all 0 before
 *  the JVM was started). */
FJ_EXPORT int futoin_host_java_counters(fj_host_counters* out)
{
    memset(out, 0, sizeof(*out));
    if (inner) {
        inner->counters(out);
    }
    return FUTOIN_OK;
}
