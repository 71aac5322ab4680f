/*
 * Rec tables: a step that Java's add() puts into a flow of one of this
 * binding's own Tools carries no JNI global reference. Its Rec sits in
 * its Tool's table (RecTable.java, an Object[] indexed by id) and the
 * step's `data` is (table index << 32 | id). A global reference costs
 * ~400 instructions per step (NewGlobalRef and DeleteGlobalRef take the
 * JVM's OopStorage lock); a slot costs a store.
 *
 * The table and its free list are Java's; C releases a slot without a JNI
 * call by pushing its id onto the "freed" stack in the table's direct
 * buffer, which Java drains when it next takes an id (and at the end of
 * a run). Layout of that buffer (native byte order), cap ids:
 *   0   jlong  the next step's handle, written by fj_chain_t()
 *   8   jint   how many ids are on the freed stack
 *   16  jint   freed[cap]
 *   16 + 4 cap: jbyte notify[cap]: Java wants to hear of the release of
 *               that id's step (Rec.addWaiter), as Rec.notifyRelease
 * Everything here runs on the loop thread of the table's Tool (adds,
 * trampolines and releases all do), one thread at a time.
 *
 * A released slot must not stay filled until Java happens to add again:
 * its Rec holds the step's lambda and whatever that captured, and a Tool
 * whose flows are done may get no more work for a long time (on its own
 * thread: ever). So the table holds an unreferenced uv_prepare_t of its
 * Tool, started once (it keeps nothing alive), which libuv runs once per
 * turn of the loop, before it waits for I/O or timers: if slots were
 * released since the last drain, its callback has Java clear them
 * (Dispatch.drainTable). A release itself does nothing more than before,
 * and a turn of the loop pays one read of the count (and an up-call when
 * steps ended in it), after the bursts of immediates that ran the steps.
 * (Starting the handle at the first release after a drain instead cost
 * a test per release, and measurably more in bench/java/Bench.java.) The
 * ends of run(), runOnce() and advance() and a root's free clear the
 * slots from Java (a virtual-time Tool never enters libuv's loop).
 *
 * Only a flow of the table's own tool may hold steps of its table: it is
 * that tool's loop thread that runs and releases them. A handle of
 * another flow (AsyncSteps.wrap() with a Tool that does not run it,
 * misuse) would have its steps released on another loop, writing the
 * freed stack from a thread that is not the table's. fj_add_t() compares
 * the handle's tool (ext tool()) with fj_rt_core[index] and refuses such
 * an add; Java then adds the step with a global reference.
 *
 * Tables are registered by index in a fixed array; the index is freed
 * with the Tool (fj_tool_free: every step is released by then). A Tool
 * that finds no index, and every step added otherwise (borrowed tools,
 * sync(), loops, polyglot), keeps using counted global references.
 */
#include "futoin_java.h"
#include "fj_api.h"

#include <pthread.h>
#include <string.h>
#include <uv.h>

#define RT_MAX FJ_RT_MAX

typedef struct fj_rt
{
    jobject recs;  /* global ref: the Object[] of Recs, or NULL; not counted
                    * (fj_gref_count): it is part of its Tool, which is */
    uint8_t* io;   /* the direct buffer's memory */
    jint cap;
    uv_prepare_t* idle;  /* the Tool's, started; NULL: none (any more) */
} fj_rt;

static fj_rt tables[RT_MAX]; /* [0] unused: data is never NULL */
futoin_tool* fj_rt_core[RT_MAX];
static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;

static inline fj_rt* rt_of(void* data, jint* id)
{
    uintptr_t d = (uintptr_t)data;
    *id = (jint)(uint32_t)d;
    return &tables[d >> 32];
}

jobject fj_rt_recs(void* data, jint* id)
{
    return rt_of(data, id)->recs;
}

int fj_rt_set(JNIEnv* env, int idx, futoin_tool* core, jobject recs, jobject io,
              jint cap)
{
    uint8_t* mem = (*env)->GetDirectBufferAddress(env, io);
    jlong size = (*env)->GetDirectBufferCapacity(env, io);
    jobject g;
    if (sizeof(void*) < 8 || !mem || cap <= 0 || size < 16 + 5 * (jlong)cap) {
        return 0; /* (index << 32 | id) needs 64-bit data: global references */
    }
    if (!idx) {
        pthread_mutex_lock(&tables_lock);
        for (idx = 1; idx < RT_MAX && tables[idx].io; ++idx) {
        }
        if (idx < RT_MAX) {
            tables[idx].io = mem; /* taken */
        }
        pthread_mutex_unlock(&tables_lock);
        if (idx == RT_MAX) {
            return 0;
        }
    }
    if (!(g = (*env)->NewGlobalRef(env, recs))) {
        if (!tables[idx].recs) {
            fj_rt_unset(env, idx);
        }
        return 0;
    }
    if (tables[idx].recs) {
        (*env)->DeleteGlobalRef(env, tables[idx].recs);
    }
    tables[idx].recs = g;
    tables[idx].io = mem;
    tables[idx].cap = cap;
    fj_rt_core[idx] = core;
    return idx;
}

void fj_rt_unset(JNIEnv* env, int idx)
{
    if (idx <= 0 || idx >= RT_MAX) {
        return;
    }
    if (env && tables[idx].recs) {
        (*env)->DeleteGlobalRef(env, tables[idx].recs);
    }
    pthread_mutex_lock(&tables_lock);
    fj_rt_core[idx] = NULL;
    tables[idx].recs = NULL;
    tables[idx].cap = 0;
    tables[idx].io = NULL;
    tables[idx].idle = NULL;
    pthread_mutex_unlock(&tables_lock);
}

/* The prepare handle ran (loop thread): Java clears the released slots. */
static void rt_idle_cb(uv_prepare_t* p)
{
    fj_rt* t = &tables[(intptr_t)p->data];
    jint n;
    if (!t->io) {
        return;
    }
    memcpy(&n, t->io + 8, sizeof(n));
    if (n != 0) {
        JNIEnv* env = fj_env();
        if (env) {
            (*env)->CallStaticVoidMethod(env, fj.dispatch, fj.d_drain_t,
                                         (jint)(intptr_t)p->data);
            fj_upcall_failed(env);
        }
    }
}

void fj_rt_set_idle(int idx, void* prepare)
{
    uv_prepare_t* p = prepare;
    if (idx <= 0 || idx >= RT_MAX) {
        return;
    }
    if (tables[idx].idle) {
        uv_prepare_stop(tables[idx].idle);
    }
    tables[idx].idle = p;
    if (p) {
        p->data = (void*)(intptr_t)idx;
        uv_prepare_start(p, rt_idle_cb);
    }
}

/* The release of a table step's data: its id goes back to Java. */
void fj_rt_release(void* data)
{
    jint id;
    fj_rt* t = rt_of(data, &id);
    uint8_t* io = t->io;
    jint n;
    if (!io) {
        return;
    }
    if (io[16 + 4 * (size_t)t->cap + (size_t)id]) {
        JNIEnv* env = fj_env();
        io[16 + 4 * (size_t)t->cap + (size_t)id] = 0;
        if (env) {
            (*env)->CallStaticVoidMethod(env, fj.dispatch, fj.d_released_t,
                                         t->recs, id);
            fj_upcall_failed(env);
        }
    }
    memcpy(&n, io + 8, sizeof(n));
    memcpy(io + 16 + 4 * (size_t)n, &id, sizeof(id));
    ++n;
    memcpy(io + 8, &n, sizeof(n));
    fj_ref_count(-1);
}

/* The next step's handle for Java (fj_chain_t). */
void fj_rt_set_next(void* data, FutoInAsyncSteps* next)
{
    jint id;
    jlong b = (jlong)(uintptr_t)next;
    memcpy(rt_of(data, &id)->io, &b, sizeof(b));
}
