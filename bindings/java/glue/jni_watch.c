/*
 * Watching a Tool's flows from Java: its hooks (futoin/sys/hooks.h) and the
 * live dump (futoin_tool_dump()), for Tool.setHooks() and Tool.dump().
 * Thin: every event goes up to Dispatch.hook() with its fields, which makes
 * the Tool.HookEvent and calls the listener; the dump is the C report as
 * UTF-8 bytes. The behaviour (which events, in which order, what a hook may
 * do) is the library's.
 */
#include "futoin_java.h"
#include "fj_api.h"

#include <futoin/sys/hooks.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jstring str(JNIEnv* env, const char* s)
{
    return s ? (*env)->NewStringUTF(env, s) : NULL;
}

/* Every hook, on the loop thread: one up-call. Dispatch.hook() catches
 * what the listener throws (Tool.uncaught()). */
static void on_event(void* data, const futoin_hook_event* ev)
{
    fj_tool* t = data;
    JNIEnv* env = fj_env();
    jobject jtool = fj_tool_jobject(t);
    const char* name = futoin_hook_name((int)ev->type);
    jstring event, lang, fn, file, code, info, outcome, wait, wlang;
    if (!env || !jtool || (*env)->PushLocalFrame(env, 12) != 0) {
        return;
    }
    event = str(env, name ? name : "?");
    outcome = str(env, ev->type == FUTOIN_HOOK_FLOW_FINISHED
                               ? futoin_hook_outcome_name(ev->outcome) : NULL);
    wait = str(env, ev->wait != FUTOIN_WAIT_NONE ? futoin_wait_kind_name(ev->wait) : NULL);
    lang = str(env, ev->origin ? ev->origin->language : NULL);
    fn = str(env, ev->origin ? ev->origin->function : NULL);
    file = str(env, ev->origin ? ev->origin->file : NULL);
    code = str(env, ev->code);
    info = str(env, ev->info);
    wlang = str(env, ev->language);
    (*env)->CallStaticVoidMethod(
            env, fj.dispatch, fj.d_hook, jtool, event,
            (jlong)ev->root_id, (jlong)ev->now, lang, fn, file,
            (jint)(ev->origin ? ev->origin->line : 0), code, info,
            outcome, wait, (jlong)ev->due, wlang,
            (jlong)(uintptr_t)ev->sync);
    fj_upcall_failed(env);
    (*env)->PopLocalFrame(env, NULL);
}

/* On: every hook calls up (Tool.setHooks() filters nothing: the listener
 * sees every event); off: cleared. Returns the runtime's code. Loop
 * thread (checked in Java). */
jint fj_tool_set_hooks(jlong tool, jboolean on)
{
    fj_tool* t = (fj_tool*)(uintptr_t)tool;
    futoin_hooks h = FUTOIN_HOOKS_INIT;
    if (on != JNI_TRUE) {
        return futoin_tool_set_hooks(fj_tool_core(t), NULL);
    }
    h.data = t;
    h.flow_started = h.flow_finished = h.step_entered = h.step_left = on_event;
    h.error_raised = h.error_handled = h.cancel = on_event;
    h.wait_begun = h.wait_ended = h.sync_acquired = h.sync_released = on_event;
    return futoin_tool_set_hooks(fj_tool_core(t), &h);
}

/* futoin_tool_dump() as UTF-8 bytes, or NULL (OutOfMemoryError thrown).
 * Loop thread (checked in Java). */
jbyteArray fj_tool_dump(JNIEnv* env, jlong tool)
{
    char* buf = NULL;
    size_t len = 0;
    FILE* f = open_memstream(&buf, &len);
    jbyteArray out;
    int n;
    if (!f) {
        fj_throw(env, fj.ex_oom, "Tool.dump(): out of memory");
        return NULL;
    }
    n = futoin_tool_dump(fj_tool_core((fj_tool*)(uintptr_t)tool), f);
    if (fclose(f) != 0 || n < 0) {
        free(buf);
        fj_throw(env, n == FUTOIN_ENOMEM || n >= 0 ? fj.ex_oom : fj.ex_state,
                 "Tool.dump(): refused");
        return NULL;
    }
    out = (*env)->NewByteArray(env, (jsize)len);
    if (out) {
        (*env)->SetByteArrayRegion(env, out, 0, (jsize)len, (const jbyte*)buf);
    }
    free(buf);
    return out;
}
