/*
 * Polyglot flows (futoin/sys/host.h) for Java:
 *
 *  - the class of Java steps (fj_step_class): the release of their Rec and
 *    their origin (language "java", Class.method, File.java:line), worked
 *    out in Java only when an async stack is recorded (Origins.java) and
 *    kept per class of step, so add() costs what it did;
 *  - the "java" language host: resolve("org.example.Steps", "name") makes a
 *    step of `public static void name(AsyncSteps asi, Object... args)`
 *    (Polyglot.java); registered when the binding is loaded into a JVM
 *    (Java is the host program) and reached through the host plug-in
 *    (host_plugin.c) when another language's program started the JVM;
 *  - addForeign(): a step of another language, by name (futoin_host_add);
 *  - the async stack of a flow's error as data for Java;
 *  - the state shared between languages (futoin_state_set/get).
 */
#include "fj_api.h"
#include "fj_host.h"
#include "fj_str.h"
#include "futoin_java.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BSI(h) ((FutoInAsyncSteps*)(uintptr_t)(h))

static atomic_llong named_live;
static atomic_llong starts;
static atomic_llong stops;

/* ---- origins ---------------------------------------------------------------- */

/* A Java step's origin starts empty; the JNIEnv to ask Java with, or NULL
 * (no env, or an exception pending: the origin stays empty). */
static JNIEnv* origin_begin(futoin_frame_origin* out)
{
    JNIEnv* env = fj_env();
    out->language = "java";
    out->function = NULL;
    out->file = NULL;
    out->line = 0;
    return env && !(*env)->ExceptionCheck(env) ? env : NULL;
}

/* Java's answer `p`: an origin kept for the life of the process, per class
 * of step (Origins.java), or 0. */
static void origin_end(JNIEnv* env, jlong p, futoin_frame_origin* out)
{
    if (!fj_upcall_failed(env) && p) {
        *out = *(const futoin_frame_origin*)(uintptr_t)p;
    }
}

static void java_origin(void* data, futoin_frame_origin* out)
{
    JNIEnv* env = origin_begin(out);
    if (env) {
        origin_end(env,
                   (*env)->CallStaticLongMethod(env, fj.dispatch, fj.d_origin,
                                                data),
                   out);
    }
}

const futoin_step_class fj_step_class = {sizeof(futoin_step_class),
                                         fj_rec_release, java_origin};

/* The same for a step whose Rec is in a table (jni_rectab.c). */
static void java_origin_t(void* data, futoin_frame_origin* out)
{
    jint id;
    jobject recs = fj_rt_recs(data, &id);
    JNIEnv* env = origin_begin(out);
    if (env) {
        origin_end(env,
                   (*env)->CallStaticLongMethod(env, fj.dispatch,
                                                fj.d_origin_t, recs, id),
                   out);
    }
}

const futoin_step_class fj_step_class_t = {sizeof(futoin_step_class),
                                           fj_rt_release, java_origin_t};

static void named_release(void* data)
{
    atomic_fetch_sub(&named_live, 1);
    fj_rec_release(data);
}

static const futoin_step_class named_class = {sizeof(futoin_step_class),
                                              named_release, java_origin};

static char* dup_bytes(JNIEnv* env, jbyteArray b)
{
    jsize n;
    char* s;
    if (!b) {
        return NULL;
    }
    n = (*env)->GetArrayLength(env, b);
    s = malloc((size_t)n + 1);
    if (s) {
        (*env)->GetByteArrayRegion(env, b, 0, n, (jbyte*)s);
        s[n] = 0;
    }
    return s;
}

/* Origins.java: one per class of step, never freed (a bounded cache, like
 * the classes themselves). Java holds each as a long in its heap, where no
 * leak checker looks (LeakSanitizer and valgrind called every origin a
 * leak, and a C host could not keep leak checking on for this glue); an
 * origin two threads computed at once (ClassValue, NamedStep.origin())
 * was lost for real. So every origin is also pushed on this list, which
 * keeps them reachable from C for the life of the process. */
typedef struct fj_origin_node
{
    futoin_frame_origin origin; /* first: the address Java holds */
    struct fj_origin_node* next;
} fj_origin_node;

static _Atomic(fj_origin_node*) origins;

jlong fj_origin_new(JNIEnv* env, jbyteArray function, jbyteArray file,
                    jint line)
{
    fj_origin_node* n = calloc(1, sizeof(*n));
    futoin_frame_origin* o;
    if (!n) {
        fj_throw(env, fj.ex_oom, "futoin: out of native memory");
        return 0;
    }
    o = &n->origin;
    o->language = "java";
    o->function = dup_bytes(env, function);
    o->file = dup_bytes(env, file);
    o->line = line > 0 ? (uint32_t)line : 0;
    n->next = atomic_load(&origins);
    while (!atomic_compare_exchange_weak(&origins, &n->next, n)) {
    }
    return (jlong)(uintptr_t)o;
}

/*
 * The member references of a class's constant pool (for a lambda's hidden
 * class: the method it calls, Origins.java picks it), as an Object[] of
 * String[]{owner, name, descriptor}, or null. Class.getConstantPool() and
 * jdk.internal.reflect.ConstantPool are not exported to Java code, but JNI
 * does not check module access. Anything unexpected: null (the origin is
 * then the class alone).
 */
jobject fj_lambda_target(JNIEnv* env, jobject cls)
{
    jclass kc = NULL, cpc = NULL, sa = NULL;
    jmethodID gcp, size_m, ref_m;
    jobject cp = NULL;
    jobjectArray found = NULL;
    jint n, k = 0;
    if (!cls) {
        return NULL;
    }
    kc = (*env)->GetObjectClass(env, cls); /* java.lang.Class */
    gcp = (*env)->GetMethodID(env, kc, "getConstantPool",
                              "()Ljdk/internal/reflect/ConstantPool;");
    if (!gcp) {
        goto out;
    }
    cp = (*env)->CallObjectMethod(env, cls, gcp);
    if ((*env)->ExceptionCheck(env) || !cp) {
        goto out;
    }
    cpc = (*env)->GetObjectClass(env, cp);
    size_m = (*env)->GetMethodID(env, cpc, "getSize", "()I");
    ref_m = size_m ? (*env)->GetMethodID(env, cpc, "getMemberRefInfoAt",
                                         "(I)[Ljava/lang/String;")
                   : NULL;
    if (!ref_m) {
        goto out;
    }
    n = (*env)->CallIntMethod(env, cp, size_m);
    if ((*env)->ExceptionCheck(env) || n <= 0 || n > 4096) {
        goto out;
    }
    sa = (*env)->FindClass(env, "[Ljava/lang/String;");
    found = sa ? (*env)->NewObjectArray(env, n, sa, NULL) : NULL;
    for (jint i = 1; found && i < n; ++i) {
        jobject ref = (*env)->CallObjectMethod(env, cp, ref_m, i);
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env); /* not a member reference */
            continue;
        }
        if (ref) {
            (*env)->SetObjectArrayElement(env, found, k++, ref);
            (*env)->DeleteLocalRef(env, ref);
        }
    }
out:
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        if (found) {
            (*env)->DeleteLocalRef(env, found);
            found = NULL;
        }
    }
    if (sa) {
        (*env)->DeleteLocalRef(env, sa);
    }
    if (cp) {
        (*env)->DeleteLocalRef(env, cp);
    }
    if (cpc) {
        (*env)->DeleteLocalRef(env, cpc);
    }
    if (kc) {
        (*env)->DeleteLocalRef(env, kc);
    }
    return found;
}

/* ---- the "java" language host ----------------------------------------------- */

static int jh_start(futoin_tool* tool, char* err, size_t errlen)
{
    (void)tool;
    /* the calling (loop) thread is attached once, detached when it ends */
    if (!fj_env()) {
        fj_copy_str(err, errlen, "java: cannot attach this thread to the JVM");
        return FUTOIN_EINVAL;
    }
    atomic_fetch_add(&starts, 1);
    return FUTOIN_OK;
}

static void jh_stop(void)
{
    atomic_fetch_add(&stops, 1);
}

static jbyteArray new_bytes(JNIEnv* env, const char* s)
{
    jsize n = (jsize)strlen(s);
    jbyteArray b = (*env)->NewByteArray(env, n);
    if (b) {
        (*env)->SetByteArrayRegion(env, b, 0, n, (const jbyte*)s);
    }
    return b;
}

static int jh_resolve(const char* module, const char* function,
                      futoin_host_step* out, char* err, size_t errlen)
{
    JNIEnv* env = fj_env();
    jbyteArray m, f;
    jobject r;
    int rc = FUTOIN_EINVAL;
    if (!env) {
        snprintf(err, errlen, "java: no JVM on this thread (module '%s', "
                 "function '%s')", module, function);
        return FUTOIN_EINVAL;
    }
    m = new_bytes(env, module);
    f = m ? new_bytes(env, function) : NULL;
    if (!f) {
        fj_upcall_failed(env);
        if (m) {
            (*env)->DeleteLocalRef(env, m);
        }
        snprintf(err, errlen, "java: out of memory resolving %s.%s", module,
                 function);
        return FUTOIN_ENOMEM;
    }
    /* a Rec, or the UTF-8 bytes of why not */
    r = (*env)->CallStaticObjectMethod(env, fj.dispatch, fj.d_resolve, m, f);
    if (fj_upcall_failed(env) || !r) {
        snprintf(err, errlen, "java: resolving %s.%s failed", module, function);
    } else if ((*env)->IsInstanceOf(env, r, fj.rec)) {
        jobject g = fj_gref(env, r);
        if (g) {
            out->execute = fj_step_tr(-1);
            out->error = NULL;
            out->data = g;
            out->cls = &named_class;
            atomic_fetch_add(&named_live, 1);
            rc = FUTOIN_OK;
        } else {
            snprintf(err, errlen, "java: no global reference left for %s.%s",
                     module, function);
            rc = FUTOIN_ENOMEM;
        }
    } else {
        jsize n = (*env)->GetArrayLength(env, r);
        size_t k = (size_t)n < errlen ? (size_t)n : errlen - 1;
        (*env)->GetByteArrayRegion(env, r, 0, (jsize)k, (jbyte*)err);
        err[k] = 0;
    }
    if (r) {
        (*env)->DeleteLocalRef(env, r);
    }
    (*env)->DeleteLocalRef(env, f);
    (*env)->DeleteLocalRef(env, m);
    return rc;
}

static const futoin_host_api java_host = {
        sizeof(futoin_host_api), FUTOIN_HOST_VERSION_1, "java",
        jh_start, jh_resolve, jh_stop,
};

static void jh_counters(fj_host_counters* c)
{
    c->global_refs = fj_gref_count();
    c->named_steps = atomic_load(&named_live);
    c->starts = atomic_load(&starts);
    c->stops = atomic_load(&stops);
    c->attached = fj_attach_count();
    c->detached = fj_detach_count();
}

static const fj_host_table host_table = {sizeof(fj_host_table), &java_host,
                                         jh_counters};

void fj_host_register(void)
{
    /* EBUSY: the plug-in (which started this JVM) is the java host already
     * and forwards to this very table */
    (void)futoin_host_register(&java_host);
}

jlong fj_host_table_address(void)
{
    return (jlong)(uintptr_t)&host_table;
}

jlong fj_named_steps(void)
{
    return atomic_load(&named_live);
}

/* ---- addForeign ------------------------------------------------------------- */

/* futoin_host_add() as it is: in a Java program the runtime was loaded
 * from the folder NativeLoader extracted the jar's libraries to and deleted
 * at once, and the library neither searches nor names the folder of a core
 * whose folder is gone (runtime/adapter/host_search.c). */
jint fj_host_add(JNIEnv* env, jlong h, jbyteArray language, jbyteArray module,
                 jbyteArray function)
{
    char* l = dup_bytes(env, language);
    char* m = dup_bytes(env, module);
    char* f = dup_bytes(env, function);
    jint rc = FUTOIN_ENOMEM;
    if (l && m && f) {
        fj_guard_begin();
        rc = futoin_host_add(BSI(h), l, m, f);
        fj_guard_end(env);
    } else {
        fj_throw(env, fj.ex_oom, "futoin: out of native memory");
    }
    free(l);
    free(m);
    free(f);
    return rc;
}

/* ---- the async stack ---------------------------------------------------------- */

/* byte[] of a C string, or NULL for NULL (or out of memory, exception set). */
static int put_str(JNIEnv* env, jobjectArray a, jsize i, const char* s)
{
    jbyteArray b;
    if (!s) {
        return 0;
    }
    if (!(b = new_bytes(env, s))) {
        return -1;
    }
    (*env)->SetObjectArrayElement(env, a, i, b);
    (*env)->DeleteLocalRef(env, b);
    return 0;
}

/*
 * The async stack of the last error of the flow of `h` as one Object[] of
 * UTF-8 byte[] (null for none): code, elided, elided_after, then per frame
 * language, function, file, line (numbers as decimal text). Null when no
 * stack was recorded.
 */
jobject fj_async_stack(JNIEnv* env, jlong h)
{
    const futoin_async_stack* st = futoin_wrap_async_stack(BSI(h));
    jobjectArray a;
    jclass obj;
    char num[24];
    if (!st) {
        return NULL;
    }
    obj = (*env)->FindClass(env, "java/lang/Object");
    if (!obj) {
        return NULL;
    }
    a = (*env)->NewObjectArray(env, (jsize)(3 + 4 * st->count), obj, NULL);
    (*env)->DeleteLocalRef(env, obj);
    if (!a || put_str(env, a, 0, st->code) < 0) {
        return NULL;
    }
    snprintf(num, sizeof(num), "%u", st->elided);
    put_str(env, a, 1, num);
    snprintf(num, sizeof(num), "%u", st->elided_after);
    put_str(env, a, 2, num);
    for (uint32_t i = 0; i < st->count; ++i) {
        const futoin_frame_origin* fr = &st->frames[i];
        jsize at = (jsize)(3 + 4 * i);
        snprintf(num, sizeof(num), "%u", fr->line);
        if (put_str(env, a, at, fr->language) < 0
            || put_str(env, a, at + 1, fr->function) < 0
            || put_str(env, a, at + 2, fr->file) < 0
            || put_str(env, a, at + 3, num) < 0) {
            return NULL;
        }
    }
    return a;
}

/* ---- shared state -------------------------------------------------------------- */

/* Set (tag != 0) or remove (tag 0) shared state variable `name`. */
jint fj_state_set(JNIEnv* env, jlong h, jbyteArray name, jint tag, jlong bits,
                  jobject obj)
{
    char* n = dup_bytes(env, name);
    FutoInBinaryValue v;
    jint rc;
    if (!n) {
        fj_throw(env, fj.ex_oom, "futoin: out of native memory");
        return FUTOIN_ENOMEM;
    }
    fj_binval_clear(&v);
    if (tag && fj_to_binval(env, tag, bits, obj, &v) < 0) {
        free(n);
        return FUTOIN_EINVAL;
    }
    fj_guard_begin();
    rc = futoin_state_set(BSI(h), n, tag ? &v : NULL); /* copies */
    fj_guard_end(env);
    futoin_reset_binval(&v);
    free(n);
    return rc;
}

/* The value of shared state variable `name` as a Java object, or null
 * (none, or a custom object of some language: those stay where they are). */
jobject fj_state_get(JNIEnv* env, jlong h, jbyteArray name)
{
    char* n = dup_bytes(env, name);
    const FutoInBinaryValue* v;
    FutoInBinaryValue copy;
    jint tag;
    jlong bits;
    jobject o = NULL, r;
    int local;
    if (!n) {
        fj_throw(env, fj.ex_oom, "futoin: out of native memory");
        return NULL;
    }
    fj_guard_begin();
    v = futoin_state_get(BSI(h), n);
    fj_guard_end(env);
    free(n);
    if (!v || !v->type
        || (v->type->flags & FTN_BASE_TYPE_MASK) == FTN_TYPE_CUSTOM_OBJECT) {
        return NULL;
    }
    copy = *v; /* borrowed: only read (no custom object is moved) */
    if (fj_from_binval(env, &copy, &tag, &bits, &o, &local) < 0) {
        fj_throw(env, fj.ex_oom, "futoin: out of memory for a value");
        return NULL;
    }
    if (tag == FJ_TAG_FOREIGN) { /* a type Java has no form for */
        free((void*)(uintptr_t)bits);
        return NULL;
    }
    r = (*env)->CallStaticObjectMethod(env, fj.dispatch, fj.d_decode, tag, bits,
                                       o);
    if (o && local) {
        (*env)->DeleteLocalRef(env, o);
    }
    return r;
}
