/*
 * Completing a step from Java: success() with its values and successStep()
 * inside the step's callback (the kept success() of KeptSuccess.java is
 * applied by the trampolines, jni_steps.c), error() (handle_error, the
 * Java exception kept as last_exception), and the completions of a waiting
 * step from outside its callback (try_success/try_error, any thread:
 * Completions.java). Each call is bracketed by the misuse guard, so a
 * misuse the runtime reports becomes an IllegalStateException of that
 * Java call.
 */
#include "futoin_java.h"
#include "fj_api.h"

#include <stdlib.h>

#define BSI(h) ((FutoInAsyncSteps*)(uintptr_t)(h))

/* ---- inside the step's callback ------------------------------------------- */

void fj_success0(JNIEnv* env, jlong h)
{
    FutoInAsyncSteps* bsi = BSI(h);
    fj_guard_begin();
    bsi->api->success(bsi, NULL);
    fj_guard_end(env);
}

void fj_success1(JNIEnv* env, jlong h, jint tag, jlong bits, jobject obj)
{
    FutoInAsyncSteps* bsi = BSI(h);
    FutoInArgs a;
    fj_args_clear(&a);
    if (fj_to_binval(env, tag, bits, obj, &a.arg0) < 0) {
        return;
    }
    fj_guard_begin();
    bsi->api->success(bsi, &a);
    futoin_reset_binval(&a.arg0); /* no-op after a move; frees if refused */
    fj_guard_end(env);
}

void fj_success(JNIEnv* env, jlong h, jint tags, jlong b0, jlong b1, jlong b2,
                jlong b3, jobject o0, jobject o1, jobject o2, jobject o3)
{
    FutoInAsyncSteps* bsi = BSI(h);
    const jlong bits[4] = {b0, b1, b2, b3};
    const jobject objs[4] = {o0, o1, o2, o3};
    FutoInArgs a;
    if (fj_args_from(env, tags, bits, objs, &a) < 0) {
        return;
    }
    fj_guard_begin();
    bsi->api->success(bsi, &a);
    fj_args_reset(&a);
    fj_guard_end(env);
}

void fj_success_step(JNIEnv* env, jlong h, jint tags, jlong b0, jlong b1,
                     jlong b2, jlong b3, jobject o0, jobject o1, jobject o2,
                     jobject o3)
{
    const jlong bits[4] = {b0, b1, b2, b3};
    const jobject objs[4] = {o0, o1, o2, o3};
    FutoInArgs a;
    if (fj_args_from(env, tags, bits, objs, &a) < 0) {
        return;
    }
    fj_guard_begin();
    futoin_wrap_success_step(BSI(h), &a);
    fj_args_reset(&a);
    fj_guard_end(env);
}

/* ---- from outside the step's callback ------------------------------------- */

/*
 * A waiting step completed by a worker thread or a later event of the
 * loop (futoin_wrap_try_success/try_error, any thread): 1 taken, 0 lost
 * a race to the step's timeout or a cancel (dropped quietly, the normal
 * outcome), < 0 misuse (a step that completed normally or was completed
 * already), for which the runtime's report becomes an
 * IllegalStateException here (the guard).
 */
jint fj_try_success(JNIEnv* env, jlong h, jint tags, jlong b0, jlong b1,
                    jlong b2, jlong b3, jobject o0, jobject o1, jobject o2,
                    jobject o3)
{
    const jlong bits[4] = {b0, b1, b2, b3};
    const jobject objs[4] = {o0, o1, o2, o3};
    FutoInArgs a;
    int rc;
    if (fj_args_from(env, tags, bits, objs, &a) < 0) {
        return FUTOIN_ENOMEM;
    }
    fj_guard_begin();
    rc = futoin_wrap_try_success(BSI(h), &a);
    fj_args_reset(&a); /* no-op after the move */
    fj_guard_end(env);
    return rc;
}

/* The C copies of an error's code and info (UTF-8 byte[], may be null).
 * Returns -1 with an exception pending when out of memory. */
static int code_info(JNIEnv* env, jbyteArray code, jbyteArray info, char** c,
                     char** i)
{
    if (fj_cstr_of(env, code, c) < 0 || fj_cstr_of(env, info, i) < 0) {
        free(*c);
        *c = NULL;
        return -1;
    }
    return 0;
}

/* Keep the Java exception `exc` as the root's last_exception (moved). */
static void keep_exception(JNIEnv* env, FutoInAsyncSteps* bsi, jobject exc)
{
    FutoInBinaryValue ex;
    fj_set_custom(env, &ex, exc);
    futoin_wrap_set_last_exception(bsi, &ex);
    futoin_reset_binval(&ex); /* no-op after the move */
}

/* The error's Java exception `exc` (may be null) becomes last_exception
 * once the error was taken, on the loop thread only (another thread's
 * completion is applied later, on the loop thread: code and info only). */
jint fj_try_error(JNIEnv* env, jlong h, jbyteArray code, jbyteArray info,
                  jobject exc)
{
    FutoInAsyncSteps* bsi = BSI(h);
    char *c = NULL, *i = NULL;
    int rc;
    if (code_info(env, code, info, &c, &i) < 0) {
        return FUTOIN_ENOMEM;
    }
    fj_guard_begin();
    rc = futoin_wrap_try_error(bsi, c ? c : FUTOIN_ERR_INTERNAL_ERROR, i);
    if (rc == 1 && exc && futoin_wrap_is_ours(bsi) && bsi->api->is_same_thread(bsi)) {
        keep_exception(env, bsi, exc);
    }
    fj_guard_end(env);
    free(c);
    free(i);
    return rc;
}

/* error(): keep `exc` (the Java exception, may be null) as last_exception,
 * then handle_error(code, info). */
void fj_handle_error(JNIEnv* env, jlong h, jbyteArray code, jbyteArray info,
                     jobject exc)
{
    FutoInAsyncSteps* bsi = BSI(h);
    char *c = NULL, *i = NULL;
    if (code_info(env, code, info, &c, &i) < 0) {
        return;
    }
    fj_guard_begin();
    if (exc && futoin_wrap_is_ours(bsi)) {
        keep_exception(env, bsi, exc);
    }
    bsi->api->handle_error(bsi, c ? c : FUTOIN_ERR_INTERNAL_ERROR, i);
    fj_guard_end(env);
    free(c);
    free(i);
}
