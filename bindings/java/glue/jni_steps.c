/*
 * AsyncSteps for Java: the trampolines that run Java callbacks as steps,
 * error, cancel and loop callbacks, and the operations behind the JNI
 * entry points of AsyncSteps (declared in fj_api.h) that add steps, loops
 * and waits and drive roots. Completing a step is jni_complete.c's.
 *
 * Everything goes through the adapter layer (futoin/sys/wrap.h), so the
 * same code drives our handles and any other FTN12 implementation's.
 *
 * The `data` of every callback is a counted global reference to a Java
 * record (Rec: the callable, its error handler, its arity). The runtime
 * releases it exactly once through fj_rec_release(), which deletes the
 * reference; Java hears about it only when it asked to (Rec.notifyRelease:
 * a step handle kept for a later success() must learn that its step is
 * gone), so a plain step costs one up-call, not two.
 *
 * A trampoline runs on the loop thread inside some JNI down-call (run())
 * or on a native thread attached once (jni_env.c). Every local reference
 * it creates is deleted before it returns: a loop of a million steps runs
 * inside ONE down-call, whose local frame would otherwise grow without
 * bound. Java exceptions are converted in Java (Dispatch); the checks here
 * are the last resort for errors thrown while converting one.
 */
#include "futoin_java.h"
#include "fj_api.h"

#include <stdlib.h>

#define BSI(h) ((FutoInAsyncSteps*)(uintptr_t)(h))
#define JBSI(b) ((jlong)(uintptr_t)(b))

static const char* const no_jvm = "futoin-java: no JVM on this thread";

/* ---- trampolines ------------------------------------------------------------ */

void fj_rec_release(void* data)
{
    jobject rec = data;
    JNIEnv* env = fj_env();
    if (!env) {
        return; /* the JVM is gone: nothing left to release to */
    }
    if ((*env)->GetBooleanField(env, rec, fj.rec_notify)) {
        (*env)->CallStaticVoidMethod(env, fj.dispatch, fj.d_released, rec);
        fj_upcall_failed(env);
    }
    fj_gref_drop(env, rec);
}

/* An up-call let an exception through: the flow gets InternalError. */
static void after_upcall(JNIEnv* env, FutoInAsyncSteps* bsi, int in_flow)
{
    if (fj_upcall_failed(env) && in_flow) {
        bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR,
                               "futoin-java: exception escaped the dispatcher");
    }
}

/*
 * A step callback returns the success() it called last, if Java could
 * keep it for us (AsyncSteps.pending): the common `asi.success(v)` with no
 * value or one small scalar then costs no JNI down-call. Encoding: bits
 * 56..63 the tag (FJ_PENDING_NONE: no values), bits 0..55 the payload,
 * sign-extended for signed tags. Applying it right after the callback is
 * the same as calling it inside: the runtime acts on success() only after
 * the callback returns, and Java applies it itself before any other call
 * on the step.
 */
#define FJ_PENDING_NONE 0xFE

static void after_step(JNIEnv* env, FutoInAsyncSteps* bsi, jlong pending)
{
    int tag;
    jlong bits;
    FutoInArgs a;
    if (fj_upcall_failed(env)) {
        bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR,
                               "futoin-java: exception escaped the dispatcher");
        return;
    }
    if (!pending) {
        return;
    }
    tag = (int)(((uint64_t)pending >> 56) & 0xFF);
    if (tag == FJ_PENDING_NONE) {
        bsi->api->success(bsi, NULL);
        return;
    }
    bits = (jlong)((uint64_t)pending << 8) >> 8; /* sign-extend 56 bits */
    fj_args_clear(&a);
    if (fj_to_binval(env, tag, bits, NULL, &a.arg0) < 0) {
        (*env)->ExceptionClear(env);
        bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR,
                               "futoin-java: bad pending value");
        return;
    }
    bsi->api->success(bsi, &a);
    futoin_reset_binval(&a.arg0);
}

static void drop_objs(JNIEnv* env, jobject* o, const int* local, int n)
{
    for (int i = 0; i < n; ++i) {
        if (o[i] && local[i]) {
            (*env)->DeleteLocalRef(env, o[i]);
        }
    }
}

/* The values of a step that takes `want` of them (-1: all): one value goes
 * through step1 (5 arguments), more through step (11): a JNI up-call
 * walks its signature on every call, so short ones are cheaper. */
static void call_with_values(JNIEnv* env, FutoInAsyncSteps* bsi, jobject rec,
                             jint id, FutoInArgs* args, int want)
{
    jint tags = 0;
    jlong bits[4] = {0, 0, 0, 0};
    jobject objs[4] = {NULL, NULL, NULL, NULL};
    int local[4] = {0, 0, 0, 0};
    int n = 0;
    int limit = (want < 0 || want > 4) ? 4 : want;
    for (; n < limit && args->args[n].type; ++n) {
        jint tag;
        if (fj_from_binval(env, &args->args[n], &tag, &bits[n], &objs[n],
                           &local[n])
            < 0) {
            (*env)->ExceptionClear(env);
            drop_objs(env, objs, local, n);
            for (int i = 0; i < n; ++i) {
                if (((tags >> (8 * i)) & 0xFF) == FJ_TAG_FOREIGN) {
                    FutoInBinaryValue* h = (FutoInBinaryValue*)(uintptr_t)bits[i];
                    futoin_reset_binval(h);
                    free(h);
                }
            }
            bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR,
                                   "futoin-java: out of memory for a value");
            return;
        }
        tags |= (tag & 0xFF) << (8 * n);
    }
    jlong pending;
    FutoInAsyncSteps* outer = fj_enter(bsi);
    if (n <= 1 && id < 0) { /* Dispatch.step1 also serves steps that take all values */
        pending = (*env)->CallStaticLongMethod(env, fj.dispatch, fj.d_step1, rec,
                                               JBSI(bsi), tags, bits[0], objs[0]);
    } else if (n <= 1) {
        pending = (*env)->CallStaticLongMethod(env, fj.dispatch, fj.d_step1_t, rec,
                                               id, JBSI(bsi), tags, bits[0], objs[0]);
    } else if (id < 0) {
        pending = (*env)->CallStaticLongMethod(env, fj.dispatch, fj.d_step, rec,
                                               JBSI(bsi), tags, bits[0], bits[1],
                                               bits[2], bits[3], objs[0], objs[1],
                                               objs[2], objs[3]);
    } else {
        pending = (*env)->CallStaticLongMethod(env, fj.dispatch, fj.d_step_t, rec,
                                               id, JBSI(bsi), tags, bits[0], bits[1],
                                               bits[2], bits[3], objs[0], objs[1],
                                               objs[2], objs[3]);
    }
    fj_leave(outer);
    drop_objs(env, objs, local, n);
    after_step(env, bsi, pending);
}

/* A step that ignores values (arity 0): they are never converted. */
/* Dispatch.step0 for step `bsi` (its Rec `rec`, or slot `id` of table
 * `rec` when id >= 0), inside fj_enter(bsi). */
static jlong up_step0(JNIEnv* env, FutoInAsyncSteps* bsi, jobject rec, jint id)
{
    FutoInAsyncSteps* outer = fj_enter(bsi);
    jlong pending = id < 0 ? (*env)->CallStaticLongMethod(env, fj.dispatch, fj.d_step0,
                                                          rec, JBSI(bsi))
                           : (*env)->CallStaticLongMethod(env, fj.dispatch, fj.d_step0_t,
                                                          rec, id, JBSI(bsi));
    fj_leave(outer);
    return pending;
}

static void tr_step0(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    JNIEnv* env = fj_env();
    (void)args;
    if (!env) {
        bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR, no_jvm);
        return;
    }
    after_step(env, bsi, up_step0(env, bsi, data, -1));
}

/* The same for a step whose Rec is in a table (jni_rectab.c). */
static void tr_step0_t(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    JNIEnv* env = fj_env();
    jint id;
    jobject recs = fj_rt_recs(data, &id);
    (void)args;
    if (!env) {
        bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR, no_jvm);
        return;
    }
    after_step(env, bsi, up_step0(env, bsi, recs, id));
}

/* Steps that take values; one trampoline per arity, so that the arity is
 * known without reading the record. The runtime cleans the args after the
 * call; values moved out of them (foreign custom objects) are left empty. */
static void step_n(FutoInAsyncSteps* bsi, jobject rec, jint id,
                   const FutoInArgs* args, int want)
{
    JNIEnv* env = fj_env();
    if (!env) {
        bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR, no_jvm);
        return;
    }
    if (args && args->arg0.type) {
        call_with_values(env, bsi, rec, id, (FutoInArgs*)args, want);
        return;
    }
    after_step(env, bsi, up_step0(env, bsi, rec, id));
}

static void step_n_t(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args,
                     int want)
{
    jint id;
    jobject recs = fj_rt_recs(data, &id);
    step_n(bsi, recs, id, args, want);
}

static void tr_step1(FutoInAsyncSteps* b, void* d, const FutoInArgs* a) { step_n(b, d, -1, a, 1); }
static void tr_step2(FutoInAsyncSteps* b, void* d, const FutoInArgs* a) { step_n(b, d, -1, a, 2); }
static void tr_step3(FutoInAsyncSteps* b, void* d, const FutoInArgs* a) { step_n(b, d, -1, a, 3); }
static void tr_step4(FutoInAsyncSteps* b, void* d, const FutoInArgs* a) { step_n(b, d, -1, a, 4); }
static void tr_step_all(FutoInAsyncSteps* b, void* d, const FutoInArgs* a) { step_n(b, d, -1, a, -1); }
static void tr_step1_t(FutoInAsyncSteps* b, void* d, const FutoInArgs* a) { step_n_t(b, d, a, 1); }
static void tr_step2_t(FutoInAsyncSteps* b, void* d, const FutoInArgs* a) { step_n_t(b, d, a, 2); }
static void tr_step3_t(FutoInAsyncSteps* b, void* d, const FutoInArgs* a) { step_n_t(b, d, a, 3); }
static void tr_step4_t(FutoInAsyncSteps* b, void* d, const FutoInArgs* a) { step_n_t(b, d, a, 4); }
static void tr_step_all_t(FutoInAsyncSteps* b, void* d, const FutoInArgs* a) { step_n_t(b, d, a, -1); }

/* The table trampolines, by arity as fj_step_tr()'s; ext chain() looks
 * for these. */
static const FutoInAsyncSteps_execute_callback tr_t[] = {
        tr_step0_t, tr_step1_t, tr_step2_t, tr_step3_t, tr_step4_t, tr_step_all_t};

static FutoInAsyncSteps_execute_callback step_tr_t(jint arity)
{
    return arity >= 0 && arity <= 4 ? tr_t[arity] : tr_step_all_t;
}

FutoInAsyncSteps_execute_callback fj_step_tr(jint arity)
{
    switch (arity) {
    case 0: return tr_step0;
    case 1: return tr_step1;
    case 2: return tr_step2;
    case 3: return tr_step3;
    case 4: return tr_step4;
    default: return tr_step_all;
    }
}

static void error_up(FutoInAsyncSteps* bsi, jobject rec, jint id, const char* code)
{
    int local;
    jobject c;
    jlong pending;
    FutoInAsyncSteps* outer;
    JNIEnv* env = fj_env();
    if (!env) {
        return; /* the error goes on to the outer handlers */
    }
    c = fj_code_string(env, code, &local);
    if (!c) {
        fj_upcall_failed(env);
        return;
    }
    outer = fj_enter(bsi);
    pending = id < 0 ? (*env)->CallStaticLongMethod(env, fj.dispatch, fj.d_error, rec,
                                                    JBSI(bsi), c)
                     : (*env)->CallStaticLongMethod(env, fj.dispatch, fj.d_error_t, rec,
                                                    id, JBSI(bsi), c);
    fj_leave(outer);
    if (local) {
        (*env)->DeleteLocalRef(env, c); /* allowed with an exception pending */
    }
    after_step(env, bsi, pending);
}

static void tr_error(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    error_up(bsi, data, -1, code);
}

static void tr_error_t(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    jint id;
    jobject recs = fj_rt_recs(data, &id);
    error_up(bsi, recs, id, code);
}

static void tr_cancel(FutoInAsyncSteps* bsi, void* data)
{
    JNIEnv* env = fj_env();
    if (env) {
        FutoInAsyncSteps* outer = fj_enter(bsi);
        (*env)->CallStaticVoidMethod(env, fj.dispatch, fj.d_cancel, data,
                                     JBSI(bsi));
        fj_leave(outer);
        after_upcall(env, bsi, 0);
    }
}

/* Dispatch.loop for iteration `i` (-1: loop()) of `bsi`. */
static void loop_body(FutoInAsyncSteps* bsi, void* data, jlong i)
{
    JNIEnv* env = fj_env();
    FutoInAsyncSteps* outer;
    jlong pending;
    if (!env) {
        bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR, no_jvm);
        return;
    }
    outer = fj_enter(bsi);
    pending = (*env)->CallStaticLongMethod(env, fj.dispatch, fj.d_loop, data, JBSI(bsi), i);
    fj_leave(outer);
    after_step(env, bsi, pending);
}

static void tr_loop(FutoInAsyncSteps* bsi, void* data)
{
    loop_body(bsi, data, -1);
}

static void tr_repeat(FutoInAsyncSteps* bsi, void* data, size_t i)
{
    loop_body(bsi, data, (jlong)i);
}

static void tr_unhandled(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    int local;
    jobject c;
    JNIEnv* env = fj_env();
    if (!env) {
        return;
    }
    c = fj_code_string(env, code, &local);
    if (!c) {
        fj_upcall_failed(env);
        return;
    }
    {
        FutoInAsyncSteps* outer = fj_enter(bsi);
        (*env)->CallStaticVoidMethod(env, fj.dispatch, fj.d_unhandled, data,
                                     JBSI(bsi), c);
        fj_leave(outer);
    }
    after_upcall(env, bsi, 0);
    if (local) {
        (*env)->DeleteLocalRef(env, c);
    }
}

/* ---- helpers for the entry points ----------------------------------------- */

static jobject rec_ref(JNIEnv* env, jobject rec)
{
    jobject g = fj_gref(env, rec);
    if (!g) {
        fj_throw(env, fj.ex_oom, "futoin: no global reference left");
    }
    return g;
}

/* ---- operations ------------------------------------------------------------ */

void fj_add(JNIEnv* env, jlong h, jobject rec, jint arity, jboolean has_eh)
{
    jobject g = rec_ref(env, rec);
    if (!g) {
        return;
    }
    fj_guard_begin();
    /* classed: the same release, plus where the step came from, computed
     * only when an async stack is recorded (jni_host.c) */
    futoin_wrap_add_classed(BSI(h), g, fj_step_tr(arity),
                            has_eh ? tr_error : NULL, &fj_step_class);
    fj_guard_end(env);
}

/* The extension table (version 4 or later) of `bsi`'s implementation,
 * or NULL: futoin_async_ext() remembered for the last implementation
 * seen on this thread by one call site (roots and steps have tables of
 * their own: add() keeps one, chain() the other). */
typedef struct ext_cache
{
    const FutoInAsyncStepsAPI* api;
    const futoin_async_ext_table* x;
} ext_cache;

static _Thread_local ext_cache add_ext __attribute__((tls_model("initial-exec")));
static _Thread_local ext_cache chain_ext __attribute__((tls_model("initial-exec")));

static inline const futoin_async_ext_table* ext_v4(ext_cache* c, FutoInAsyncSteps* bsi)
{
    const futoin_async_ext_table* x;
    if (bsi->api == c->api) {
        return c->x;
    }
    x = futoin_async_ext(bsi);
    if (!x || x->version < FUTOIN_EXT_VERSION_4) {
        return NULL;
    }
    c->api = bsi->api;
    c->x = x;
    return x;
}

/* add() of a step whose Rec is slot `id` of table `idx` (jni_rectab.c):
 * no global reference. Only into a flow of the table's own tool: a handle
 * of another tool's flow (or of another FTN12 implementation) would have
 * the step released on that loop's thread, racing with the table's own
 * (AsyncSteps.wrap() with the wrong Tool). Then nothing is done and
 * JNI_FALSE returned: Java takes the slot back and adds with fj_add(). */
jboolean fj_add_t(JNIEnv* env, jlong h, jint idx, jint id, jint arity, jboolean has_eh)
{
    void* data = (void*)(((uintptr_t)(uint32_t)idx << 32) | (uint32_t)id);
    FutoInAsyncSteps* bsi = BSI(h);
    const futoin_async_ext_table* x = ext_v4(&add_ext, bsi);
    if (!x || x->tool(bsi) != fj_rt_core[(uint32_t)idx % FJ_RT_MAX]) {
        return JNI_FALSE;
    }
    fj_ref_count(1); /* fj_rt_release() takes it back, also when refused */
    fj_guard_begin();
    x->add_classed(bsi, data, step_tr_t(arity), has_eh ? tr_error_t : NULL,
                   &fj_step_class_t);
    fj_guard_end(env);
    return JNI_TRUE;
}

jlong fj_parallel(JNIEnv* env, jlong h, jobject rec)
{
    jobject g = NULL;
    FutoInAsyncSteps* p;
    if (rec && !(g = rec_ref(env, rec))) {
        return 0;
    }
    fj_guard_begin();
    p = futoin_wrap_parallel(BSI(h), g, g ? tr_error : NULL,
                             g ? fj_rec_release : NULL);
    if (!fj_guard_end(env) && !p) {
        fj_throw(env, fj.ex_state, "parallel() refused");
    }
    return JBSI(p);
}

/*
 * Java's consecutive steps without an up-call each (ext chain()): inside
 * the callback of step `h`, which kept a success() in Java, complete it
 * and start the next step if it is one of ours; its handle goes to
 * `asi.chained` and its Rec is returned (NULL: nothing was done, complete
 * `h` the usual way). Handles of another FTN12 implementation never chain.
 */
jobject fj_chain(JNIEnv* env, jlong h, jobject asi)
{
    static const FutoInAsyncSteps_execute_callback fns[] = {
            tr_step0, tr_step1, tr_step2, tr_step3, tr_step4, tr_step_all};
    FutoInAsyncSteps* bsi = BSI(h);
    const futoin_async_ext_table* x = futoin_async_ext(bsi);
    FutoInAsyncSteps* next;
    void* data = NULL;
    if (!x || x->version < FUTOIN_EXT_VERSION_4) {
        return NULL;
    }
    next = x->chain(bsi, fns, sizeof(fns) / sizeof(fns[0]), &data);
    if (!next) {
        return NULL;
    }
    (*env)->SetLongField(env, asi, fj.asi_chained, JBSI(next));
    fj_cur_bsi = next; /* the trampoline's callback goes on as this step's */
    return (jobject)data; /* the step's Rec (a global reference) */
}

/*
 * fj_chain() for a table step: chains only to table steps (a step of
 * another kind runs the usual way) and needs no JNI call: the next step's
 * handle goes to its table's buffer, its data (table index and id) is
 * returned; -1: nothing was done.
 */
jlong fj_chain_t(jlong h)
{
    FutoInAsyncSteps* bsi = BSI(h);
    const futoin_async_ext_table* x = ext_v4(&chain_ext, bsi);
    FutoInAsyncSteps* next;
    void* data = NULL;
    if (!x) {
        return -1;
    }
    next = x->chain(bsi, tr_t, sizeof(tr_t) / sizeof(tr_t[0]), &data);
    if (!next) {
        return -1;
    }
    fj_rt_set_next(data, next);
    fj_cur_bsi = next; /* the trampoline's callback goes on as this step's */
    return (jlong)(uintptr_t)data;
}

void fj_set_timeout(JNIEnv* env, jlong h, jlong ms)
{
    FutoInAsyncSteps* bsi = BSI(h);
    fj_guard_begin();
    bsi->api->setTimeout(bsi, ms < 0 ? 0 : (ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms));
    fj_guard_end(env);
}

void fj_set_cancel(JNIEnv* env, jlong h, jobject rec)
{
    jobject g = rec_ref(env, rec);
    if (!g) {
        return;
    }
    fj_guard_begin();
    futoin_wrap_set_cancel(BSI(h), g, tr_cancel, fj_rec_release);
    fj_guard_end(env);
}

void fj_wait_external(JNIEnv* env, jlong h)
{
    FutoInAsyncSteps* bsi = BSI(h);
    fj_guard_begin();
    bsi->api->waitExternal(bsi);
    fj_guard_end(env);
}

void fj_loop(JNIEnv* env, jlong h, jobject rec, jbyteArray label)
{
    char* l;
    jobject g;
    if (fj_cstr_of(env, label, &l) < 0) {
        return;
    }
    if ((g = rec_ref(env, rec)) != NULL) {
        fj_guard_begin();
        futoin_wrap_loop(BSI(h), g, tr_loop, l, fj_rec_release);
        fj_guard_end(env);
    }
    free(l);
}

void fj_repeat(JNIEnv* env, jlong h, jobject rec, jlong count, jbyteArray label)
{
    char* l;
    jobject g;
    if (fj_cstr_of(env, label, &l) < 0) {
        return;
    }
    if ((g = rec_ref(env, rec)) != NULL) {
        fj_guard_begin();
        futoin_wrap_repeat(BSI(h), g, count < 0 ? 0 : (size_t)count, tr_repeat,
                           l, fj_rec_release);
        fj_guard_end(env);
    }
    free(l);
}

void fj_break(JNIEnv* env, jlong h, jbyteArray label, jboolean cont)
{
    FutoInAsyncSteps* bsi = BSI(h);
    char* l;
    if (fj_cstr_of(env, label, &l) < 0) {
        return;
    }
    fj_guard_begin();
    if (cont) {
        bsi->api->continueLoop(bsi, l);
    } else {
        bsi->api->breakLoop(bsi, l);
    }
    fj_guard_end(env);
    free(l);
}

void fj_add_sync(JNIEnv* env, jlong h, jlong sync, jobject rec, jint arity,
                 jboolean has_eh)
{
    jobject g = rec_ref(env, rec);
    if (!g) {
        return;
    }
    fj_guard_begin();
    /* classed as add() is: the section's frame (async stacks, the dump's
     * section= line) is the Java step's */
    futoin_wrap_add_sync_classed(BSI(h), (FutoInSync*)(uintptr_t)sync, g,
                                 fj_step_tr(arity), has_eh ? tr_error : NULL,
                                 &fj_step_class);
    fj_guard_end(env);
}

void fj_execute(JNIEnv* env, jlong h, jobject rec)
{
    jobject g = rec_ref(env, rec);
    if (!g) {
        return;
    }
    fj_guard_begin();
    futoin_wrap_execute(BSI(h), g, tr_unhandled, fj_rec_release);
    fj_guard_end(env);
}

void fj_cancel(JNIEnv* env, jlong h)
{
    FutoInAsyncSteps* bsi = BSI(h);
    fj_guard_begin();
    bsi->api->cancel(bsi);
    fj_guard_end(env);
}

jlong fj_root_new(JNIEnv* env, jlong tool)
{
    FutoInAsyncSteps* r = futoin_root_new(fj_tool_core((fj_tool*)(uintptr_t)tool));
    if (!r) {
        fj_throw(env, fj.ex_oom, "futoin_root_new() failed");
    }
    return JBSI(r);
}

jlong fj_new_instance(JNIEnv* env, jlong h)
{
    FutoInAsyncSteps* bsi = BSI(h);
    FutoInAsyncSteps* r;
    fj_guard_begin();
    r = bsi->api->newInstance(bsi);
    if (!fj_guard_end(env) && !r) {
        fj_throw(env, fj.ex_state, "newInstance() failed");
    }
    return JBSI(r);
}

void fj_free(JNIEnv* env, jlong h)
{
    FutoInAsyncSteps* bsi = BSI(h);
    fj_guard_begin();
    bsi->api->free(bsi);
    fj_guard_end(env);
}

/* ---- small queries ----------------------------------------------------------- */

jlong fj_root_id(jlong h)
{
    FutoInAsyncSteps* bsi = BSI(h);
    return (jlong)bsi->api->rootId(bsi);
}

jboolean fj_is_valid(jlong h)
{
    FutoInAsyncSteps* bsi = BSI(h);
    return bsi && bsi->api->isValid(bsi) ? JNI_TRUE : JNI_FALSE;
}

jboolean fj_is_same_thread(jlong h)
{
    FutoInAsyncSteps* bsi = BSI(h);
    return bsi->api->is_same_thread(bsi) ? JNI_TRUE : JNI_FALSE;
}

jboolean fj_is_ours(jlong h)
{
    return futoin_wrap_is_ours(BSI(h)) ? JNI_TRUE : JNI_FALSE;
}
