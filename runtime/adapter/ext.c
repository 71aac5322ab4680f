/*
 * The extension table (futoin/sys/ext.h): release hooks for callback data,
 * error state as values, successStep; and the versioned API table handed to
 * dlopen consumers.
 *
 * The release-hook variants run the FTN12 call and then attach the hook to
 * the record it created (found as the new tail of the queue it was added
 * to). If the call was refused, nothing holds the data any more, so the hook
 * runs at once: either way it runs exactly once.
 */
#include "engine/engine.h"

#include <futoin/sys/ext.h>
#include <futoin/trace.h>

#include <stdlib.h>
#include <string.h>

static bool is_ours(FutoInAsyncSteps* bsi)
{
    return bsi && (bsi->api == &futoin__step_api || bsi->api == &futoin__root_api
                   || bsi->api == &futoin__par_api);
}

/* The queue a new step of `bsi` goes to: its tail, or NULL. */
static futoin__step* queue_tail(FutoInAsyncSteps* bsi)
{
    if (bsi->api == &futoin__root_api) {
        futoin__root* r = futoin__as_root(bsi);
        return r->state == FUTOIN__R_FREED ? NULL : futoin__root_tail(r);
    }
    futoin__step* s = futoin__as_step(bsi);
    if (s->state == FUTOIN__S_FREE) {
        return NULL;
    }
    if (bsi->api == &futoin__par_api) {
        return s->u.p.br_tail;
    }
    /* Only a step whose callback runs takes sub-steps; a waiting one's
     * `sub_head` holds its wait's start (engine.h), and the add() of any
     * other refuses, as it does with NULL here. */
    if (s->state != FUTOIN__S_EXEC && s->state != FUTOIN__S_ERRH) {
        return NULL;
    }
    return futoin__sub_tail(s);
}

static void attach(FutoInAsyncSteps* bsi, futoin__step* before, void* data,
                   futoin_release_cb release)
{
    futoin__step* after = queue_tail(bsi);
    if (!release) {
        return;
    }
    if (after && after != before) {
        after->rel.release = release;
    } else {
        release(data); /* refused: the runtime holds nothing */
    }
}

static void ext_add(FutoInAsyncSteps* bsi, void* data,
                    FutoInAsyncSteps_execute_callback f,
                    FutoInAsyncSteps_error_callback eh,
                    futoin_release_cb release)
{
    if (!bsi) {
        futoin__misuse_null("add()");
        if (release) {
            release(data);
        }
        return;
    }
    futoin__step* before = queue_tail(bsi);
    bsi->api->add(bsi, data, f, eh);
    attach(bsi, before, data, release);
}

static FutoInAsyncSteps* ext_parallel(FutoInAsyncSteps* bsi, void* data,
                                      FutoInAsyncSteps_error_callback eh,
                                      futoin_release_cb release)
{
    if (!bsi) {
        futoin__misuse_null("parallel()");
        if (release) {
            release(data);
        }
        return NULL;
    }
    FutoInAsyncSteps* p = bsi->api->parallel(bsi, data, eh);
    if (release) {
        if (p) {
            futoin__as_step(p)->rel.release = release;
        } else {
            release(data);
        }
    }
    return p;
}

static void ext_set_cancel(FutoInAsyncSteps* bsi, void* data,
                           FutoInAsyncSteps_cancel_callback ch,
                           futoin_release_cb release)
{
    if (!bsi) {
        futoin__misuse_null("setCancel()");
        if (release) {
            release(data);
        }
        return;
    }
    futoin__step* s = futoin__as_step(bsi);
    bsi->api->setCancel(bsi, data, ch);
    if (!release) {
        return;
    }
    if (bsi->api == &futoin__step_api && s->state == FUTOIN__S_EXEC
        && (s->kind == FUTOIN__K_STEP || s->kind == FUTOIN__K_BODY)
        && (s->flags & FUTOIN__F_CANCEL) && FUTOIN__RARE(s, cancel) == ch
        && s->rare->cancel_data == data) {
        s->rare->cancel_release = release;
    } else {
        release(data);
    }
}

static void ext_loop(FutoInAsyncSteps* bsi, void* data,
                     void (*f)(FutoInAsyncSteps* bsi, void* data),
                     const char* label, futoin_release_cb release)
{
    if (!bsi) {
        futoin__misuse_null("loop()");
        if (release) {
            release(data);
        }
        return;
    }
    futoin__step* before = queue_tail(bsi);
    bsi->api->loop(bsi, data, f, label);
    attach(bsi, before, data, release);
}

static void ext_repeat(FutoInAsyncSteps* bsi, void* data, size_t count,
                       void (*f)(FutoInAsyncSteps* bsi, void* data, size_t i),
                       const char* label, futoin_release_cb release)
{
    if (!bsi) {
        futoin__misuse_null("repeat()");
        if (release) {
            release(data);
        }
        return;
    }
    futoin__step* before = queue_tail(bsi);
    bsi->api->repeat(bsi, data, count, f, label);
    attach(bsi, before, data, release);
}

static void ext_add_sync(FutoInAsyncSteps* bsi, FutoInSync* sync, void* data,
                         FutoInAsyncSteps_execute_callback f,
                         FutoInAsyncSteps_error_callback eh,
                         futoin_release_cb release)
{
    if (!bsi) {
        futoin__misuse_null("addSync()");
        if (release) {
            release(data);
        }
        return;
    }
    futoin__step* before = queue_tail(bsi);
    bsi->api->addSync(bsi, sync, data, f, eh);
    attach(bsi, before, data, release);
}

static void ext_execute(FutoInAsyncSteps* bsi, void* data,
                        FutoInAsyncSteps_error_callback unhandled,
                        futoin_release_cb release)
{
    if (!bsi) {
        futoin__misuse_null("execute()");
        if (release) {
            release(data);
        }
        return;
    }
    if (bsi->api != &futoin__root_api) {
        bsi->api->execute(bsi, data, unhandled); /* reports the misuse */
        if (release) {
            release(data);
        }
        return;
    }
    futoin__root_execute(bsi, data, unhandled, release);
}

static const char* ext_error_info(FutoInAsyncSteps* bsi)
{
    if (!bsi) {
        futoin__misuse_null("error_info()");
        return NULL;
    }
    futoin__root* r = futoin__root_of(bsi);
    return r ? FUTOIN__RARE(r, error_info) : NULL;
}

static const char* ext_error_code(FutoInAsyncSteps* bsi)
{
    if (!bsi) {
        futoin__misuse_null("error_code()");
        return NULL;
    }
    futoin__root* r = futoin__root_of(bsi);
    return r ? FUTOIN__RARE(r, error_code) : NULL;
}

static void ext_set_last_exception(FutoInAsyncSteps* bsi, FutoInBinaryValue* v)
{
    if (!bsi) {
        futoin__misuse_null("set_last_exception()");
        if (v) {
            futoin_reset_binval(v);
        }
        return;
    }
    futoin__root* r = futoin__root_of(bsi);
    if (r) {
        futoin__root_attach_exception(r, bsi, v);
    } else if (v) {
        futoin_reset_binval(v);
    }
}

static const FutoInBinaryValue* ext_last_exception(FutoInAsyncSteps* bsi)
{
    if (!bsi) {
        futoin__misuse_null("last_exception()");
        return NULL;
    }
    futoin__root* r = futoin__root_of(bsi);
    return r ? FUTOIN__RARE(r, last_exc) : NULL;
}

/* successStep(): the values ride in a pooled FutoInArgs owned by the step
 * record (F_OWNARGS): no allocation in steady state. success() moves them
 * out; values never consumed (cancel, free) go back with the record. */
static void success_step_cb(FutoInAsyncSteps* bsi, void* data,
                            const FutoInArgs* args)
{
    bsi->api->success(bsi, (FutoInArgs*)data);
}

static void ext_success_step(FutoInAsyncSteps* bsi, FutoInArgs* args)
{
    if (!bsi) {
        futoin__misuse_null("successStep()");
        if (args) {
            futoin__args_clear(args);
        }
        return;
    }
    futoin_tool* tool = futoin_async_tool(bsi);
    futoin__step* before = queue_tail(bsi);
    futoin__step* after;
    FutoInArgs* own = tool ? futoin__args_alloc(tool) : NULL;
    if (!own) {
        if (args) {
            futoin__args_clear(args);
        }
        bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR,
                               "successStep(): out of memory");
        return;
    }
    if (args) {
        futoin__args_move(own, args);
    }
    bsi->api->add(bsi, own, success_step_cb, NULL);
    after = queue_tail(bsi);
    if (after && after != before) {
        after->flags |= FUTOIN__F_OWNARGS;
    } else {
        futoin__args_release(tool, own); /* refused */
    }
}

/* A classed call queued `after` (NULL or == `before`: it was refused):
 * the record gets the class, or the data is released at once, the runtime
 * holding nothing. For loop() the record is the loop frame, for addSync()
 * the guard, whose data and class the guarded step shows. */
static void set_class(futoin__step* before, futoin__step* after, void* data,
                      const futoin_step_class* cls)
{
    if (after && after != before) {
        if (cls) {
            after->rel.cls = cls;
            after->flags |= FUTOIN__F_CLASS;
        }
    } else if (cls && cls->release) {
        cls->release(data);
    }
}

static bool classed_gate(FutoInAsyncSteps* bsi, const char* what, void* data,
                         const futoin_step_class* cls)
{
    if (futoin__on_loop(bsi, what)) {
        return true;
    }
    if (cls && cls->release) {
        cls->release(data); /* refused: the runtime holds nothing */
    }
    return false;
}

/* ext_add_classed() of anything but a root's handle on its loop thread. */
static FUTOIN__NOINLINE void add_classed_other(
        FutoInAsyncSteps* bsi, void* data, FutoInAsyncSteps_execute_callback f,
        FutoInAsyncSteps_error_callback eh, const futoin_step_class* cls)
{
    futoin__step* before;
    futoin__step* after;
    if (!classed_gate(bsi, "add()", data, cls)) {
        return; /* a root's too, off its loop thread */
    }
    before = queue_tail(bsi);
    bsi->api->add(bsi, data, f, eh);
    after = queue_tail(bsi);
    set_class(before, after, data, cls);
}

static void ext_add_classed(FutoInAsyncSteps* bsi, void* data,
                            FutoInAsyncSteps_execute_callback f,
                            FutoInAsyncSteps_error_callback eh,
                            const futoin_step_class* cls)
{
    /* the usual case, a binding's add() to a root: one call, no saved
     * register here */
    if (bsi && bsi->api == &futoin__root_api
        && futoin__tool_on_thread(futoin__recpool_tool(bsi))) {
        futoin__root_add_classed(bsi, data, f, eh, cls);
        return;
    }
    add_classed_other(bsi, data, f, eh, cls);
}

static void ext_loop_classed(FutoInAsyncSteps* bsi, void* data,
                             void (*f)(FutoInAsyncSteps* bsi, void* data),
                             const char* label, const futoin_step_class* cls)
{
    futoin__step* before;
    if (!classed_gate(bsi, "loop()", data, cls)) {
        return;
    }
    before = queue_tail(bsi);
    bsi->api->loop(bsi, data, f, label);
    set_class(before, queue_tail(bsi), data, cls);
}

static void ext_repeat_classed(FutoInAsyncSteps* bsi, void* data, size_t count,
                               void (*f)(FutoInAsyncSteps* bsi, void* data,
                                         size_t i),
                               const char* label, const futoin_step_class* cls)
{
    futoin__step* before;
    if (!classed_gate(bsi, "repeat()", data, cls)) {
        return;
    }
    before = queue_tail(bsi);
    bsi->api->repeat(bsi, data, count, f, label);
    set_class(before, queue_tail(bsi), data, cls);
}

static void ext_add_sync_classed(FutoInAsyncSteps* bsi, FutoInSync* sync,
                                 void* data,
                                 FutoInAsyncSteps_execute_callback f,
                                 FutoInAsyncSteps_error_callback eh,
                                 const futoin_step_class* cls)
{
    futoin__step* before;
    if (!classed_gate(bsi, "addSync()", data, cls)) {
        return;
    }
    before = queue_tail(bsi);
    bsi->api->addSync(bsi, sync, data, f, eh);
    set_class(before, queue_tail(bsi), data, cls);
}

static const futoin_async_stack* ext_async_stack(FutoInAsyncSteps* bsi)
{
    futoin__root* r;
    if (!futoin__on_loop(bsi, "async_stack()")) {
        return NULL;
    }
    r = futoin__root_of(bsi);
    return r ? futoin__stack_get(r) : NULL;
}

static int ext_try_success(FutoInAsyncSteps* bsi, FutoInArgs* args)
{
    if (!bsi) {
        futoin__misuse_null("try_success()");
        if (args) {
            futoin__args_clear(args);
        }
        return FUTOIN_EINVAL;
    }
    if (bsi->api != &futoin__step_api) {
        bsi->api->success(bsi, args); /* a root or parallel(): misuse */
        return FUTOIN_EINVAL;
    }
    return futoin__step_complete(futoin__as_step(bsi), args, NULL, NULL);
}

static int ext_try_error(FutoInAsyncSteps* bsi, const char* code,
                         const char* info)
{
    if (!bsi) {
        futoin__misuse_null("try_error()");
        return FUTOIN_EINVAL;
    }
    if (bsi->api != &futoin__step_api) {
        bsi->api->handle_error(bsi, code, info);
        return FUTOIN_EINVAL;
    }
    return futoin__step_complete(futoin__as_step(bsi), NULL,
                                 code ? code : FUTOIN_ERR_INTERNAL_ERROR, info);
}

/* The tool of any live handle of ours: hooks are per tool. */
static int ext_set_hooks(FutoInAsyncSteps* bsi, const futoin_hooks* hooks)
{
    futoin_tool* tool = futoin_async_tool(bsi);
    if (!tool) {
        if (!bsi) {
            futoin__misuse_null("set_hooks()");
        }
        return FUTOIN_EINVAL;
    }
    if (!futoin__on_loop(bsi, "set_hooks()")) {
        return FUTOIN_EINVAL;
    }
    if (!futoin__root_of(bsi)) {
        futoin__tool_misuse(tool, "set_hooks() through a stale handle");
        return FUTOIN_EINVAL;
    }
    return futoin_tool_set_hooks(tool, hooks);
}

const futoin_async_ext_table futoin__ext_tab = {
        .size = sizeof(futoin_async_ext_table),
        .version = FUTOIN_EXT_VERSION_8,
        .add = ext_add,
        .parallel = ext_parallel,
        .setCancel = ext_set_cancel,
        .loop = ext_loop,
        .repeat = ext_repeat,
        .addSync = ext_add_sync,
        .execute = ext_execute,
        .error_info = ext_error_info,
        .error_code = ext_error_code,
        .set_last_exception = ext_set_last_exception,
        .last_exception = ext_last_exception,
        .successStep = ext_success_step,
        .tool = futoin_async_tool,
        .try_success = ext_try_success,
        .try_error = ext_try_error,
        .add_classed = ext_add_classed,
        .async_stack = ext_async_stack,
        .chain = futoin__step_chain, /* it checks its handle itself */
        .loop_classed = ext_loop_classed,
        .repeat_classed = ext_repeat_classed,
        .addSync_classed = ext_add_sync_classed,
        .set_hooks = ext_set_hooks,
        .trace_set = futoin_trace_set,
        .trace_get = futoin_trace_get,
        .chain_kept = futoin__step_chain_kept, /* the same checks as chain */
};

const futoin_async_ext_table* futoin__ext_table(void)
{
    return &futoin__ext_tab;
}

FUTOIN_API const futoin_async_ext_table* futoin_async_ext(FutoInAsyncSteps* bsi)
{
    /* Only the api pointer is compared: a foreign table is never read. */
    return is_ours(bsi) ? &futoin__ext_tab : NULL;
}

/* ---- negotiation --------------------------------------------------------- */

static const futoin_async_api api_table = {
        .size = sizeof(futoin_async_api),
        .version = FUTOIN_API_VERSION_2,
        .version_string = futoin_async_version,
        .version_number = futoin_async_version_number,
        .tool_options_init = futoin_tool_options_init,
        .tool_new = futoin_tool_new,
        .tool_free = futoin_tool_free,
        .tool_run = futoin_tool_run,
        .tool_run_nowait = futoin_tool_run_nowait,
        .tool_uv_loop = futoin_tool_uv_loop,
        .tool_immediate = futoin_tool_immediate,
        .tool_deferred = futoin_tool_deferred,
        .tool_cancel = futoin_tool_cancel,
        .tool_is_valid = futoin_tool_is_valid,
        .tool_is_same_thread = futoin_tool_is_same_thread,
        .tool_misuse_count = futoin_tool_misuse_count,
        .root_new = futoin_root_new,
        .async_tool = futoin_async_tool,
        .ext = futoin_async_ext,
        .error_name = futoin_error_name,
        .error_lookup = futoin_error_lookup,
        .mutex_new = futoin_mutex_new,
        .mutex_free = futoin_mutex_free,
        .throttle_new = futoin_throttle_new,
        .throttle_free = futoin_throttle_free,
        .limiter_options_init = futoin_limiter_options_init,
        .limiter_new = futoin_limiter_new,
        .limiter_free = futoin_limiter_free,
        .tool_get_stats = futoin_tool_get_stats,
        .tool_trim = futoin_tool_trim,
};

FUTOIN_API int futoin_async_get_api(uint32_t version,
                                    const futoin_async_api** out)
{
    if (!out) {
        return FUTOIN_EINVAL;
    }
    if (version == 0 || version > FUTOIN_API_VERSION) {
        *out = NULL;
        return FUTOIN_EVERSION;
    }
    *out = &api_table;
    return FUTOIN_OK;
}
