/*
 * The Tool of the Java binding: one futoin_tool (one libuv loop), driven
 * either by Tool.run() on the caller's thread or by a dedicated thread.
 *
 * Posts from other threads. Java's Executor.execute() queues the task in
 * Java and asks for one drain through futoin_tool_immediate(), which is
 * safe from any thread (the runtime queues it lock-free and wakes the
 * loop). Posting through the runtime keeps one FIFO with the completions
 * other threads post (success() of a waiting step), so a worker that
 * completes a step and then posts a task sees them run in that order.
 *
 * Keep-alive. A tool's loop returns from futoin_tool_run() when nothing is
 * left to do. A dedicated thread must instead wait for posts until the
 * Tool is closed, so its loop holds one referenced uv_async_t of ours
 * that is closed (from the loop thread) when the Tool shuts down.
 *
 * Timers (Tool.deferred/immediate) keep a counted global reference to
 * their Java Handle; a list of pending ones lets free() drop those the
 * runtime would otherwise drop silently with the tool.
 *
 * Borrowed tools. A Java step in a flow of a C, Python or Lua program runs
 * on that program's futoin_tool; asi.tool() is then a Tool "borrowed" for
 * it, never freed here. The runtime tells nobody when a program frees its
 * tool, so a borrowed tool is touched only while something proves it
 * alive: a Java callback of one of its flows runs on this thread (the
 * handle in fj_cur_bsi is live and belongs to it), a timer of it fires, or
 * timers of it are pending: then an fj_tool is made for it (as for the Lua
 * binding's borrowed tools) that holds an idle root of that tool, which
 * keeps the program from freeing the tool under them (futoin_tool_free()
 * refuses while roots live), until the last timer has fired or was
 * cancelled (Tool.java decides when, on the loop thread).
 *
 * Stopping a run from another thread (Tool.stop(), an interrupt). Only
 * the loop thread may call uv_stop(), and only inside uv_run() does it
 * work without leaving the flag set for a later run, so another thread
 * wakes the loop through an unreferenced uv_async_t of ours (thread-safe
 * uv_async_send, keeps nothing alive) whose callback, always inside
 * uv_run(), stops it. Each run has a number: a stop asked for run N is
 * ignored by any other run, so one that arrives after its run returned
 * cannot end the next one.
 *
 * Clearing released Rec slots. The loop also holds an unreferenced
 * uv_prepare_t of ours, started for the Tool's Rec table once it has one
 * (jni_rectab.c says why); it keeps nothing alive and is closed with the
 * tool. Without it (no memory) the slots are cleared only when Java adds
 * a step or a run ends, as they always are.
 */
#define _POSIX_C_SOURCE 200809L
#include "futoin_java.h"
#include "fj_api.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <uv.h>

typedef struct fj_timer fj_timer;
struct fj_timer
{
    fj_timer* prev;
    fj_timer* next;
    fj_tool* tool;
    FutoInHandle h;
    jobject handle; /* counted global ref to the Java Tool.Handle */
};

struct fj_tool
{
    futoin_tool* tool;
    FutoInAsyncSteps* anchor; /* borrowed: an idle root of that tool */
    jobject jtool;     /* counted global ref to the Java Tool */
    uv_async_t* keep;  /* dedicated thread: keeps the loop running */
    uv_async_t* stopper; /* unreferenced: stops the run asked for */
    uv_prepare_t* idle;  /* unreferenced: clears the Rec table (jni_rectab.c) */
    atomic_llong run_gen;  /* the run in progress (0: none) */
    atomic_llong stop_gen; /* the run asked to stop */
    fj_timer* timers;  /* pending timers and immediates */
    int rt;            /* its Rec table's index (jni_rectab.c), 0: none */
};

#define T(h) ((fj_tool*)(uintptr_t)(h))

futoin_tool* fj_tool_core(fj_tool* t)
{
    return t ? t->tool : NULL;
}

jobject fj_tool_jobject(fj_tool* t)
{
    return t->jtool;
}

static void keep_cb(uv_async_t* a)
{
    (void)a; /* only keeps the loop alive */
}

static void keep_closed(uv_handle_t* h)
{
    free(h);
}

static void stopper_cb(uv_async_t* a)
{
    fj_tool* t = a->data;
    long long run = atomic_load(&t->run_gen);
    if (run != 0 && atomic_load(&t->stop_gen) == run) {
        uv_stop(futoin_tool_uv_loop(t->tool)); /* uv_run returns after this pass */
    }
}

jlong fj_tool_new(JNIEnv* env, jobject jtool, jboolean keepalive,
                  jboolean virtual_time)
{
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    fj_tool* t = calloc(1, sizeof(*t));
    if (!t) {
        fj_throw(env, fj.ex_oom, "Tool: out of memory");
        return 0;
    }
    o.virtual_time = virtual_time == JNI_TRUE;
    o.misuse = fj_misuse_cb;
    o.misuse_data = t;
    if (futoin_tool_new(&t->tool, &o) != FUTOIN_OK) {
        free(t);
        fj_throw(env, fj.ex_state, "futoin_tool_new() failed");
        return 0;
    }
    if (keepalive) {
        t->keep = malloc(sizeof(*t->keep));
        if (!t->keep
            || uv_async_init(futoin_tool_uv_loop(t->tool), t->keep, keep_cb) != 0) {
            free(t->keep);
            futoin_tool_free(t->tool);
            free(t);
            fj_throw(env, fj.ex_state, "Tool: keep-alive handle failed");
            return 0;
        }
    }
    t->stopper = malloc(sizeof(*t->stopper));
    if (!t->stopper
        || uv_async_init(futoin_tool_uv_loop(t->tool), t->stopper, stopper_cb) != 0) {
        free(t->stopper);
        if (t->keep) {
            uv_close((uv_handle_t*)t->keep, keep_closed);
            futoin_tool_run_nowait(t->tool);
        }
        futoin_tool_free(t->tool);
        free(t);
        fj_throw(env, fj.ex_state, "Tool: stop handle failed");
        return 0;
    }
    t->stopper->data = t;
    uv_unref((uv_handle_t*)t->stopper);
    t->idle = malloc(sizeof(*t->idle));
    if (t->idle) {
        uv_prepare_init(futoin_tool_uv_loop(t->tool), t->idle);
        uv_unref((uv_handle_t*)t->idle);
    }
    t->jtool = fj_gref(env, jtool);
    return (jlong)(uintptr_t)t;
}

/* Dedicated thread: let the loop end once the flows are gone. Loop thread. */
void fj_tool_release_loop(jlong h)
{
    fj_tool* t = T(h);
    if (t->keep) {
        uv_close((uv_handle_t*)t->keep, keep_closed);
        t->keep = NULL;
    }
}

static void timer_unlink(fj_timer* tm)
{
    if (tm->prev) {
        tm->prev->next = tm->next;
    } else {
        tm->tool->timers = tm->next;
    }
    if (tm->next) {
        tm->next->prev = tm->prev;
    }
}

static void timer_drop(JNIEnv* env, fj_timer* tm)
{
    timer_unlink(tm);
    fj_gref_drop(env, tm->handle);
    free(tm);
}

/* A Java callback of a flow of `core` runs on this thread: the tool is
 * alive, and this is its loop thread. */
jboolean fj_tool_borrowed_here(jlong core)
{
    FutoInAsyncSteps* cur = fj_cur_bsi;
    return cur && core && futoin_async_ext(cur)
                   && futoin_async_tool(cur) == (futoin_tool*)(uintptr_t)core
               ? JNI_TRUE
               : JNI_FALSE;
}

/* The futoin_tool* of the flow of `bsi`, or 0 for a handle of another
 * FTN12 implementation. Loop thread, a live handle. */
jlong fj_async_tool(jlong bsi)
{
    FutoInAsyncSteps* b = (FutoInAsyncSteps*)(uintptr_t)bsi;
    return futoin_async_ext(b) ? (jlong)(uintptr_t)futoin_async_tool(b) : 0;
}

/* An fj_tool over the program's tool `core` (proved alive by the caller,
 * on its loop thread) for timers of the borrowed Java Tool `jtool`: its
 * idle root keeps `core` from being freed until fj_tool_unborrow(). */
jlong fj_tool_borrow(JNIEnv* env, jlong core, jobject jtool)
{
    fj_tool* t = calloc(1, sizeof(*t));
    if (!t) {
        fj_throw(env, fj.ex_oom, "Tool: out of memory");
        return 0;
    }
    t->tool = (futoin_tool*)(uintptr_t)core;
    t->anchor = futoin_root_new(t->tool);
    if (!t->anchor) {
        free(t);
        fj_throw(env, fj.ex_state, "Tool: the hosting program's tool refused a root");
        return 0;
    }
    t->jtool = fj_gref(env, jtool);
    return (jlong)(uintptr_t)t;
}

/* Let the program's tool go again (no timer pending). Loop thread. */
void fj_tool_unborrow(JNIEnv* env, jlong h)
{
    fj_tool* t = T(h);
    while (t->timers) {
        futoin_tool_cancel(t->tool, &t->timers->h);
        timer_drop(env, t->timers);
    }
    t->anchor->api->free(t->anchor);
    fj_gref_drop(env, t->jtool);
    free(t);
}

/* misuse_count() of the program's tool `core`, proved alive. */
jlong fj_core_misuse_count(jlong core)
{
    return (jlong)futoin_tool_misuse_count((futoin_tool*)(uintptr_t)core);
}

/* Free the tool. Returns FUTOIN_OK, or FUTOIN_EBUSY (roots still alive,
 * nothing freed). Loop thread, outside run(). */
jint fj_rt_bind(JNIEnv* env, jlong h, jobject recs, jobject io, jint cap)
{
    fj_tool* t = T(h);
    int idx = fj_rt_set(env, t->rt, t->tool, recs, io, cap);
    if (idx && !t->rt) {
        t->rt = idx;
        if (t->idle) {
            fj_rt_set_idle(idx, t->idle);
        }
    }
    return idx;
}

jint fj_tool_free(JNIEnv* env, jlong h)
{
    fj_tool* t = T(h);
    int rc;
    if (t->keep || t->stopper || t->idle) {
        fj_tool_release_loop(h);
        if (t->stopper) {
            uv_close((uv_handle_t*)t->stopper, keep_closed);
            t->stopper = NULL;
        }
        if (t->idle) {
            fj_rt_set_idle(t->rt, NULL); /* stopped: no drain while the tool goes */
            uv_close((uv_handle_t*)t->idle, keep_closed);
            t->idle = NULL;
        }
        /* the close callbacks run on the next pass */
        futoin_tool_run_nowait(t->tool);
    }
    rc = futoin_tool_free(t->tool);
    if (rc != FUTOIN_OK) {
        return rc;
    }
    while (t->timers) {
        timer_drop(env, t->timers); /* dropped with the tool, never called */
    }
    fj_rt_unset(env, t->rt); /* every step of the tool was released */
    fj_gref_drop(env, t->jtool);
    free(t);
    return FUTOIN_OK;
}

/* The loop runs inside this down-call: its callbacks use `env` (saved and
 * restored, since a callback may run another tool's loop). `gen` numbers
 * the run for fj_tool_stop() (0: a run nobody may stop). */
jint fj_tool_run(JNIEnv* env, jlong h, jlong gen)
{
    JNIEnv* saved = fj_loop_env;
    jint rc;
    fj_loop_env = env;
    atomic_store(&T(h)->run_gen, gen);
    rc = futoin_tool_run(T(h)->tool);
    atomic_store(&T(h)->run_gen, 0);
    fj_loop_env = saved;
    return rc;
}

/* Virtual time: advance the clock `ms` and run what falls due, inside this
 * down-call as a run (numbered `gen` for fj_tool_stop()). Returns the
 * runtime's code (FUTOIN_EINVAL: refused). */
jint fj_tool_advance(JNIEnv* env, jlong h, jlong ms, jlong gen)
{
    JNIEnv* saved = fj_loop_env;
    jint rc;
    fj_loop_env = env;
    atomic_store(&T(h)->run_gen, gen);
    rc = futoin_tool_advance(T(h)->tool, (uint64_t)ms);
    atomic_store(&T(h)->run_gen, 0);
    fj_loop_env = saved;
    return rc;
}

/* Milliseconds until the next timer, or -1 when none is pending. Loop
 * thread. */
jlong fj_tool_next_due(jlong h)
{
    uint64_t ms = 0;
    if (futoin_tool_next_due(T(h)->tool, &ms) != 1) {
        return -1;
    }
    return ms > INT64_MAX ? INT64_MAX : (jlong)ms;
}

/* The tool's clock in milliseconds. Loop thread. */
jlong fj_tool_now(jlong h)
{
    uint64_t now = futoin_tool_now(T(h)->tool);
    return now > INT64_MAX ? INT64_MAX : (jlong)now;
}

/* isVirtualTime() of the program's tool `core`, proved alive. */
jboolean fj_core_is_virtual(jlong core)
{
    return futoin_tool_is_virtual((futoin_tool*)(uintptr_t)core) ? JNI_TRUE
                                                                  : JNI_FALSE;
}

jboolean fj_tool_is_virtual(jlong h)
{
    return futoin_tool_is_virtual(T(h)->tool) ? JNI_TRUE : JNI_FALSE;
}

/* Ask run `gen` to return after the callback in progress. Any thread; the
 * Java side guarantees the tool is not being freed concurrently. */
void fj_tool_stop(jlong h, jlong gen)
{
    fj_tool* t = T(h);
    atomic_store(&t->stop_gen, gen);
    uv_async_send(t->stopper);
}

jint fj_tool_run_nowait(JNIEnv* env, jlong h)
{
    JNIEnv* saved = fj_loop_env;
    jint rc;
    fj_loop_env = env;
    rc = futoin_tool_run_nowait(T(h)->tool);
    fj_loop_env = saved;
    return rc;
}

static void drain_cb(void* data)
{
    fj_tool* t = data;
    JNIEnv* env = fj_env();
    if (env) {
        (*env)->CallStaticVoidMethod(env, fj.dispatch, fj.d_drain, t->jtool);
        fj_upcall_failed(env);
    }
}

/* Ask the loop thread to drain the Java task queue. Any thread; the Java
 * side guarantees the tool is not being freed concurrently. */
void fj_tool_post(jlong h)
{
    futoin_tool_immediate(T(h)->tool, drain_cb, T(h));
}

static void timer_cb(void* data)
{
    fj_timer* tm = data;
    JNIEnv* env = fj_env();
    jobject handle = tm->handle;
    timer_unlink(tm);
    free(tm);
    if (!env) {
        return;
    }
    (*env)->CallStaticVoidMethod(env, fj.dispatch, fj.d_timer, handle);
    fj_upcall_failed(env);
    fj_gref_drop(env, handle);
}

/* A timer (delay_ms >= 0) or an immediate (delay_ms < 0) that runs
 * Dispatch.timer(handle). Loop thread. Returns the record's address. */
jlong fj_tool_schedule(JNIEnv* env, jlong h, jlong delay_ms, jobject handle)
{
    fj_tool* t = T(h);
    fj_timer* tm = calloc(1, sizeof(*tm));
    if (!tm || !(tm->handle = fj_gref(env, handle))) {
        free(tm);
        fj_throw(env, fj.ex_oom, "Tool: out of memory for a timer");
        return 0;
    }
    tm->tool = t;
    tm->next = t->timers;
    if (t->timers) {
        t->timers->prev = tm;
    }
    t->timers = tm;
    if (delay_ms < 0) {
        tm->h = futoin_tool_immediate(t->tool, timer_cb, tm);
    } else {
        tm->h = futoin_tool_deferred(
                t->tool, delay_ms > UINT32_MAX ? UINT32_MAX : (uint32_t)delay_ms,
                timer_cb, tm);
    }
    return (jlong)(uintptr_t)tm;
}

/* Cancel a pending timer record (the Java Handle knows it is pending). */
void fj_tool_cancel_timer(JNIEnv* env, jlong h, jlong timer)
{
    fj_timer* tm = (fj_timer*)(uintptr_t)timer;
    futoin_tool_cancel(T(h)->tool, &tm->h);
    timer_drop(env, tm);
}

jboolean fj_tool_is_same_thread(jlong h)
{
    return futoin_tool_is_same_thread(T(h)->tool) ? JNI_TRUE : JNI_FALSE;
}

jlong fj_tool_misuse_count(jlong h)
{
    return (jlong)futoin_tool_misuse_count(T(h)->tool);
}

/* The futoin_tool* (for Throttle/Limiter and foreign tests). */
jlong fj_tool_ptr(jlong h)
{
    return (jlong)(uintptr_t)T(h)->tool;
}

jlong fj_global_refs(void) { return fj_gref_count(); }
jlong fj_attached_threads(void) { return fj_attach_count(); }
jlong fj_detached_threads(void) { return fj_detach_count(); }
