/*
 * Internal interface of the Java binding's C support code (JNI glue).
 *
 * SWIG generates the JNI entry points (FutoInNativeJNI, package
 * org.futoin.async) from bindings/java/interface/futoin_java.i: argument
 * marshalling of primitives, arrays and objects. Their bodies call the
 * functions declared here, which hold what SWIG cannot generate: the
 * trampolines that run Java callbacks as steps (C -> Java up-calls), the
 * per-thread JNIEnv discipline of the loop thread, the release of global
 * references, and the FutoInBinaryValue <-> Java conversion.
 *
 * Files (glue/): jni_env.c (JNI_OnLoad cache, JNIEnv per thread,
 * attach/detach, counted global refs, misuse reporting at the call site),
 * jni_values.c (conversion, ForeignValue holders), jni_steps.c
 * (trampolines, the operations that add steps and drive roots),
 * jni_complete.c (success/error of a step, also from outside its
 * callback), jni_state.c (the state map, error_info, last_exception),
 * jni_tool.c (the Tool: loop, posts from other threads, timers, sync
 * objects), jni_testhooks.c (C-side helpers the JUnit suite drives); and
 * host/jni_host.c (polyglot flows: the "java" host, step origins,
 * addForeign, the shared state).
 *
 * Conventions:
 *  - handles cross as jlong (a FutoInAsyncSteps* / fj_tool* / FutoInSync*);
 *  - callback data handed to the runtime is a JNI global reference to a
 *    Java record (org.futoin.async.Rec); the runtime's release hook deletes
 *    it exactly once;
 *  - Java exceptions never cross C frames: the Java dispatcher catches
 *    everything; the trampolines still check and clear as a last resort;
 *  - functions that take `JNIEnv* env` may leave a Java exception pending
 *    and return; the SWIG wrapper then returns to Java, which throws it.
 */
#ifndef FUTOIN_JAVA_H
#define FUTOIN_JAVA_H

#include <jni.h>
#include <stdint.h>

#include <futoin/async.h>
#include <futoin/sync.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/wrap.h>

#define FJ_JNI_VERSION JNI_VERSION_10

/* ---- jni_env.c ---------------------------------------------------------- */

/** What JNI_OnLoad caches (classes are global refs, never released). */
typedef struct fj_cache
{
    JavaVM* vm;
    jclass dispatch;        /* org.futoin.async.Dispatch */
    jmethodID d_step0;      /* (Rec, long) */
    jmethodID d_step1;      /* (Rec, long, int, long, Object) */
    jmethodID d_step;       /* (Rec, long, int, long x4, Object x4) */
    jmethodID d_error;      /* (Rec, long, Object code) -> long */
    jmethodID d_cancel;     /* (Rec, long) */
    jmethodID d_loop;       /* (Rec, long, long) */
    jmethodID d_released;   /* (Rec) */
    jmethodID d_unhandled;  /* (Rec, long, Object code) */
    jmethodID d_drain;      /* (Object tool) */
    jmethodID d_timer;      /* (Object runnable) */
    jmethodID d_new_state;  /* () -> Object */
    jmethodID d_misuse;     /* (Object tool, String) */
    jmethodID d_origin;     /* (Rec) -> long (a futoin_frame_origin*) */
    /* the same for a step whose Rec is in a table (jni_rectab.c): the
     * Rec as (Object[] recs, int id) */
    jmethodID d_step0_t;    /* (Object[], int, long) -> long */
    jmethodID d_step1_t;    /* (Object[], int, long, int, long, Object) -> long */
    jmethodID d_step_t;     /* (Object[], int, long, int, long x4, Object x4) -> long */
    jmethodID d_error_t;    /* (Object[], int, long, Object code) -> long */
    jmethodID d_released_t; /* (Object[], int) */
    jmethodID d_drain_t;    /* (int index): drain that table (its loop idles) */
    jmethodID d_origin_t;   /* (Object[], int) -> long */
    jmethodID d_resolve;    /* (byte[] module, byte[] function) -> Object */
    jmethodID d_decode;     /* (int tag, long bits, Object) -> Object */
    jmethodID d_hook;       /* (Object tool, int type, ...) a hook event */
    jclass rec;             /* org.futoin.async.Rec */
    jfieldID rec_notify;    /* Rec.notifyRelease:boolean */
    jfieldID asi_chained;   /* AsyncSteps.chained:long (fj_chain) */
    jclass ex_state;        /* IllegalStateException */
    jclass ex_arg;          /* IllegalArgumentException */
    jclass ex_npe;          /* NullPointerException */
    jclass ex_oom;          /* OutOfMemoryError */
    jstring codes[32];      /* interned standard error codes */
} fj_cache;

extern fj_cache fj;

/** This thread's JNIEnv; a native thread is attached once (as a daemon)
 *  and detached when it ends. NULL if the JVM is gone. */
JNIEnv* fj_env_slow(void);

/** The JNIEnv of the Tool.run()/runOnce() down-call on this thread, set
 *  for its duration (valid for exactly that long), else NULL. */
extern _Thread_local JNIEnv* fj_loop_env __attribute__((tls_model("initial-exec")));

/** The handle whose Java callback runs on this thread (innermost, set by
 *  the trampolines for the duration of their up-call; NULL outside any).
 *  A Tool borrowed from the program that hosts this JVM is proved alive
 *  by it (jni_tool.c fj_tool_borrowed_here()). */
extern _Thread_local FutoInAsyncSteps* fj_cur_bsi __attribute__((tls_model("initial-exec")));

/** Enter / leave a Java callback of `bsi` (nesting is restored). */
static inline FutoInAsyncSteps* fj_enter(FutoInAsyncSteps* bsi)
{
    FutoInAsyncSteps* outer = fj_cur_bsi;
    fj_cur_bsi = bsi;
    return outer;
}

static inline void fj_leave(FutoInAsyncSteps* outer)
{
    fj_cur_bsi = outer;
}

/** The trampolines' JNIEnv: the running loop's, else GetEnv()/attach. */
static inline JNIEnv* fj_env(void)
{
    JNIEnv* env = fj_loop_env;
    return env ? env : fj_env_slow();
}

/** Counted global references (the leak test compares the count). */
jobject fj_gref(JNIEnv* env, jobject o);
void fj_gref_drop(JNIEnv* env, jobject g);
int64_t fj_gref_count(void);
/** References to Java the runtime holds without a global reference each
 *  (Rec table slots, jni_rectab.c) count as well: +1 / -1. */
void fj_ref_count(int delta);
int64_t fj_attach_count(void);
int64_t fj_detach_count(void);

/** Throw `cls(msg)` into Java (the SWIG wrapper returns, Java throws). */
void fj_throw(JNIEnv* env, jclass cls, const char* msg);

/** A Java exception is pending after an up-call: clear it and return 1.
 *  Only for the last-resort path (Dispatch catches everything). */
int fj_upcall_failed(JNIEnv* env);

/** An error code for Java: the interned String of a standard code, else a
 *  new local String (ASCII) or UTF-8 byte[] (Values.str() decodes both). */
jobject fj_code_string(JNIEnv* env, const char* code, int* is_local);

/*
 * Misuse at the call site. The runtime reports misuse that no flow can
 * take through the tool's misuse callback, on the thread that misused it.
 * JNI entry points that call the runtime bracket the call with
 * fj_guard_begin()/fj_guard_end(): a misuse reported inside the bracket
 * becomes an IllegalStateException thrown from that Java call.
 */
void fj_guard_begin(void);
/** Returns 1 (and throws) if a misuse was reported since begin. */
int fj_guard_end(JNIEnv* env);
/** The tool's misuse callback (data: the fj_tool, may be NULL). */
void fj_misuse_cb(void* data, const char* code, const char* message);

/* ---- jni_steps.c ------------------------------------------------------- */

/** The release hook of every Rec handed to the runtime. */
void fj_rec_release(void* data);
/* ---- jni_rectab.c: Recs in a Tool's table ---- */

#define FJ_RT_MAX 4096
/** Binds (idx 0: registers) the table of the Tool whose core tool is
 *  `core`: its Object[] and direct buffer of `cap` ids. Returns the
 *  index, 0 if none is left. */
int fj_rt_set(JNIEnv* env, int idx, futoin_tool* core, jobject recs, jobject io,
              jint cap);
/** By table index: the core tool whose flows alone may hold steps of
 *  that table (fj_add_t), NULL for none. */
extern futoin_tool* fj_rt_core[FJ_RT_MAX];
/** Unregisters table `idx` (its Tool is freed: no step of it is left). */
void fj_rt_unset(JNIEnv* env, int idx);
/** Gives table `idx` its Tool's unreferenced, initialized uv_prepare_t
 *  (`prepare`; its data becomes the table's) and starts it: released
 *  slots are cleared once per turn of the loop, before it waits; NULL:
 *  the one it had is stopped (the Tool is being freed). Loop thread. */
void fj_rt_set_idle(int idx, void* prepare);
/** The release of a table step's data. */
void fj_rt_release(void* data);
/** The Object[] and id of a table step's data. */
jobject fj_rt_recs(void* data, jint* id);
/** Hands the handle of the step chained to Java (its table's buffer). */
void fj_rt_set_next(void* data, FutoInAsyncSteps* next);
/** The class of table steps (jni_host.c): fj_rt_release and the origin. */
extern const futoin_step_class fj_step_class_t;

/** The step trampoline for a Rec of `arity` (Rec.ALL: -1). */
FutoInAsyncSteps_execute_callback fj_step_tr(jint arity);

/* ---- host/jni_host.c ---------------------------------------------------- */

/** The class of Java steps (release + origin), for add_classed(). */
extern const futoin_step_class fj_step_class;
/** Registers the "java" host (JNI_OnLoad: Java is the host program). */
void fj_host_register(void);

/* ---- jni_values.c ------------------------------------------------------- */

/** Java value tags beyond FTN12 flags (values never collide: FTN12 flags
 *  only use the low 5 bits). */
enum
{
    FJ_TAG_NONE = 0,
    FJ_TAG_FOREIGN = 0xFF /* a custom value of another language, moved
                             into a holder; a = holder address */
};

/** Java -> FutoInBinaryValue. `tag` is an FTN12 flag byte chosen by the
 *  Java side (Values.java), `bits` the raw payload of scalars, `obj` the
 *  byte[] (UTF-8) of a string, the primitive array, the custom object or
 *  null. Returns 0, or -1 with a Java exception pending. */
int fj_to_binval(JNIEnv* env, int tag, jlong bits, jobject obj,
                 FutoInBinaryValue* v);

/** A NUL-terminated malloc'd copy of a Java byte[] (UTF-8: a label, an
 *  error code or info) in *out, NULL for null; the caller frees it.
 *  Returns 0, or -1 with an OutOfMemoryError pending. */
int fj_cstr_of(JNIEnv* env, jbyteArray b, char** out);

/** FutoInBinaryValue -> (tag, bits, obj) for Dispatch; `*obj` is a new
 *  local ref the caller deletes (or NULL), or our custom global ref passed
 *  through (then *obj_local = 0). A foreign custom value is MOVED out of
 *  `v` into a holder. Returns 0, or -1 (out of memory). */
int fj_from_binval(JNIEnv* env, FutoInBinaryValue* v, jint* tag, jlong* bits,
                   jobject* obj, int* obj_local);

/** An empty value / empty args, field by field: a memset() of a struct
 *  this small becomes `rep stos` at -O2, whose start-up cost is most of a
 *  success(v) call on some CPUs. Only `type` decides whether a slot is
 *  used; the payload of an empty slot is never read. */
static inline void fj_binval_clear(FutoInBinaryValue* v)
{
    v->type = NULL;
    v->u64 = 0;
    v->custom_data = NULL;
    v->length = 0;
}

static inline void fj_args_clear(FutoInArgs* a)
{
    a->arg0.type = NULL;
    a->arg1.type = NULL;
    a->arg2.type = NULL;
    a->arg3.type = NULL;
}

/** Up to 4 values from Java into `a` (cleared first). -1 with an exception. */
int fj_args_from(JNIEnv* env, jint tags, const jlong* bits,
                 const jobject* objs, FutoInArgs* a);
void fj_args_reset(FutoInArgs* a);

/** Our custom type: `p` is a counted global ref (or NULL for Java null). */
int fj_is_java_custom(const FutoInBinaryValue* v);
void fj_set_custom(JNIEnv* env, FutoInBinaryValue* v, jobject o);

/* ---- jni_tool.c --------------------------------------------------------- */

/** Behind org.futoin.async.Tool. */
typedef struct fj_tool fj_tool;
futoin_tool* fj_tool_core(fj_tool* t);
/** The Java Tool (a global ref owned by the fj_tool), or NULL. */
jobject fj_tool_jobject(fj_tool* t);

#endif
