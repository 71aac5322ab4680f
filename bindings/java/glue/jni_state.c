/*
 * The flow's state and error state for Java: the state map every Java
 * step of a flow shares (the stateVariable "java.state", created by
 * Dispatch.newState() on first use and released with the root), and the
 * error state the accessors and the map read from the runtime each time:
 * error_info, the error code, last_exception (StateMap.java, ErrorState.java).
 */
#include "futoin_java.h"
#include "fj_api.h"

#include <string.h>

#define BSI(h) ((FutoInAsyncSteps*)(uintptr_t)(h))

static void* st_alloc(void* data)
{
    JNIEnv* env = fj_env();
    jobject m, g;
    (void)data;
    if (!env) {
        return NULL;
    }
    m = (*env)->CallStaticObjectMethod(env, fj.dispatch, fj.d_new_state);
    if (fj_upcall_failed(env) || !m) {
        return NULL;
    }
    g = fj_gref(env, m);
    (*env)->DeleteLocalRef(env, m);
    return g;
}

static void st_cleanup(void* data, void* value)
{
    JNIEnv* env = fj_env();
    (void)data;
    if (env) {
        fj_gref_drop(env, value);
    }
}

/* The flow's state map (shared by every step, branch and language that
 * asks for "java.state"); a local reference. */
jobject fj_state(JNIEnv* env, jlong h)
{
    FutoInAsyncSteps* bsi = BSI(h);
    jobject g = bsi->api->stateVariable(bsi, NULL, "java.state", st_alloc,
                                        st_cleanup);
    if (!g) {
        fj_throw(env, fj.ex_state, "state() is not available");
        return NULL;
    }
    return (*env)->NewLocalRef(env, g);
}

static jbyteArray bytes_of(JNIEnv* env, const char* s)
{
    jbyteArray b;
    jsize n;
    if (!s) {
        return NULL;
    }
    n = (jsize)strlen(s);
    b = (*env)->NewByteArray(env, n);
    if (b) {
        (*env)->SetByteArrayRegion(env, b, 0, n, (const jbyte*)s);
    }
    return b;
}

jbyteArray fj_error_info(JNIEnv* env, jlong h)
{
    return bytes_of(env, futoin_wrap_error_info(BSI(h)));
}

jbyteArray fj_error_code(JNIEnv* env, jlong h)
{
    return bytes_of(env, futoin_wrap_error_code(BSI(h)));
}

/* last_exception: the Java object kept by error() (or by a Throwable
 * converted to InternalError); null when none or another language's. */
jobject fj_last_exception(JNIEnv* env, jlong h)
{
    const FutoInBinaryValue* v = futoin_wrap_last_exception(BSI(h));
    if (fj_is_java_custom(v) && v->p) {
        return (*env)->NewLocalRef(env, (jobject)v->p);
    }
    return NULL;
}
