/*
 * The wrap/binary adapter layer (futoin/sys/wrap.h). Our handles take the
 * extension table; a foreign handle gets only the 25 spec slots, and the
 * callback data is anchored with stack() on the step that adds it: the
 * anchor's cleanup runs when that step's frame is destroyed, which is after
 * everything the step added has finished, failed or been cancelled.
 */
#include "engine/engine.h"

#include <futoin/sys/wrap.h>

#include <string.h>

typedef struct anchor
{
    futoin_release_cb release;
    void* data;
} anchor;

static void anchor_cleanup(void* value)
{
    anchor* a = value;
    if (a->release) {
        a->release(a->data);
    }
}

/* Tie `data` to the current foreign step; release at once if impossible. */
static void anchor_data(FutoInAsyncSteps* bsi, void* data,
                        futoin_release_cb release)
{
    anchor* a;
    if (!release) {
        return;
    }
    a = bsi->api->stack ? bsi->api->stack(bsi, sizeof(*a), anchor_cleanup)
                        : NULL;
    if (!a) {
        release(data);
        return;
    }
    a->release = release;
    a->data = data;
}

/* Our extension table for our handles; NULL for a foreign one. A NULL
 * handle goes to our table too, whose slots report it as misuse (and
 * release the data) instead of dereferencing it. */
static const futoin_async_ext_table* ext_of(FutoInAsyncSteps* bsi)
{
    /* futoin_async_ext() without the call through the PLT: a handle of
     * ours (or NULL, which our table refuses) gets our table. */
    if (!bsi || bsi->api == &futoin__step_api || bsi->api == &futoin__root_api
        || bsi->api == &futoin__par_api) {
        return &futoin__ext_tab;
    }
    return futoin_async_ext(bsi);
}

FUTOIN_API int futoin_wrap_is_ours(FutoInAsyncSteps* bsi)
{
    return futoin_async_ext(bsi) != NULL;
}

FUTOIN_API void futoin_wrap_add(FutoInAsyncSteps* bsi, void* data,
                                FutoInAsyncSteps_execute_callback f,
                                FutoInAsyncSteps_error_callback eh,
                                futoin_release_cb release)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        x->add(bsi, data, f, eh, release);
        return;
    }
    bsi->api->add(bsi, data, f, eh);
    anchor_data(bsi, data, release);
}

FUTOIN_API FutoInAsyncSteps* futoin_wrap_parallel(
        FutoInAsyncSteps* bsi, void* data, FutoInAsyncSteps_error_callback eh,
        futoin_release_cb release)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    FutoInAsyncSteps* p;
    if (x) {
        return x->parallel(bsi, data, eh, release);
    }
    p = bsi->api->parallel(bsi, data, eh);
    anchor_data(bsi, data, release);
    return p;
}

FUTOIN_API void futoin_wrap_set_cancel(FutoInAsyncSteps* bsi, void* data,
                                       FutoInAsyncSteps_cancel_callback ch,
                                       futoin_release_cb release)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        x->setCancel(bsi, data, ch, release);
        return;
    }
    bsi->api->setCancel(bsi, data, ch);
    anchor_data(bsi, data, release);
}

FUTOIN_API void futoin_wrap_loop(FutoInAsyncSteps* bsi, void* data,
                                 void (*f)(FutoInAsyncSteps* bsi, void* data),
                                 const char* label, futoin_release_cb release)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        x->loop(bsi, data, f, label, release);
        return;
    }
    bsi->api->loop(bsi, data, f, label);
    anchor_data(bsi, data, release);
}

FUTOIN_API void futoin_wrap_repeat(
        FutoInAsyncSteps* bsi, void* data, size_t count,
        void (*f)(FutoInAsyncSteps* bsi, void* data, size_t i),
        const char* label, futoin_release_cb release)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        x->repeat(bsi, data, count, f, label, release);
        return;
    }
    bsi->api->repeat(bsi, data, count, f, label);
    anchor_data(bsi, data, release);
}

FUTOIN_API void futoin_wrap_add_sync(FutoInAsyncSteps* bsi, FutoInSync* sync,
                                     void* data,
                                     FutoInAsyncSteps_execute_callback f,
                                     FutoInAsyncSteps_error_callback eh,
                                     futoin_release_cb release)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        x->addSync(bsi, sync, data, f, eh, release);
        return;
    }
    bsi->api->addSync(bsi, sync, data, f, eh);
    anchor_data(bsi, data, release);
}

FUTOIN_API void futoin_wrap_execute(FutoInAsyncSteps* bsi, void* data,
                                    FutoInAsyncSteps_error_callback unhandled,
                                    futoin_release_cb release)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        x->execute(bsi, data, unhandled, release);
        return;
    }
    anchor_data(bsi, data, release);
    bsi->api->execute(bsi, data, unhandled);
}

/* successStep() over the spec slots: the values ride in stack() memory of
 * the adding step, and a step moves them into success(). */
typedef struct success_values
{
    FutoInArgs args;
} success_values;

static void success_values_cleanup(void* value)
{
    futoin__args_clear(&((success_values*)value)->args);
}

static void success_from_values(FutoInAsyncSteps* bsi, void* data,
                                const FutoInArgs* in)
{
    bsi->api->success(bsi, &((success_values*)data)->args);
}

FUTOIN_API void futoin_wrap_success_step(FutoInAsyncSteps* bsi,
                                         FutoInArgs* args)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    success_values* v;
    if (x) {
        x->successStep(bsi, args);
        return;
    }
    v = bsi->api->stack(bsi, sizeof(*v), success_values_cleanup);
    if (!v) {
        if (args) {
            futoin__args_clear(args);
        }
        bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR,
                               "successStep(): stack() failed");
        return;
    }
    if (args) {
        futoin__args_move(&v->args, args);
    }
    bsi->api->add(bsi, v, success_from_values, NULL);
}

FUTOIN_API void futoin_wrap_add_classed(FutoInAsyncSteps* bsi, void* data,
                                        FutoInAsyncSteps_execute_callback f,
                                        FutoInAsyncSteps_error_callback eh,
                                        const futoin_step_class* cls)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        x->add_classed(bsi, data, f, eh, cls);
        return;
    }
    bsi->api->add(bsi, data, f, eh);
    anchor_data(bsi, data, cls ? cls->release : NULL);
}

FUTOIN_API void futoin_wrap_loop_classed(
        FutoInAsyncSteps* bsi, void* data,
        void (*f)(FutoInAsyncSteps* bsi, void* data), const char* label,
        const futoin_step_class* cls)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        x->loop_classed(bsi, data, f, label, cls);
        return;
    }
    bsi->api->loop(bsi, data, f, label);
    anchor_data(bsi, data, cls ? cls->release : NULL);
}

FUTOIN_API void futoin_wrap_repeat_classed(
        FutoInAsyncSteps* bsi, void* data, size_t count,
        void (*f)(FutoInAsyncSteps* bsi, void* data, size_t i),
        const char* label, const futoin_step_class* cls)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        x->repeat_classed(bsi, data, count, f, label, cls);
        return;
    }
    bsi->api->repeat(bsi, data, count, f, label);
    anchor_data(bsi, data, cls ? cls->release : NULL);
}

FUTOIN_API void futoin_wrap_add_sync_classed(
        FutoInAsyncSteps* bsi, FutoInSync* sync, void* data,
        FutoInAsyncSteps_execute_callback f, FutoInAsyncSteps_error_callback eh,
        const futoin_step_class* cls)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        x->addSync_classed(bsi, sync, data, f, eh, cls);
        return;
    }
    bsi->api->addSync(bsi, sync, data, f, eh);
    anchor_data(bsi, data, cls ? cls->release : NULL);
}

FUTOIN_API const futoin_async_stack* futoin_wrap_async_stack(
        FutoInAsyncSteps* bsi)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    return x ? x->async_stack(bsi) : NULL;
}

FUTOIN_API int futoin_wrap_try_success(FutoInAsyncSteps* bsi, FutoInArgs* args)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        return x->try_success(bsi, args);
    }
    bsi->api->success(bsi, args);
    return 1;
}

FUTOIN_API int futoin_wrap_try_error(FutoInAsyncSteps* bsi, const char* code,
                                     const char* info)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        return x->try_error(bsi, code, info);
    }
    bsi->api->handle_error(bsi, code, info);
    return 1;
}

FUTOIN_API const char* futoin_wrap_error_info(FutoInAsyncSteps* bsi)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        return x->error_info(bsi);
    }
    return bsi->api->stateVariable(bsi, NULL, "error_info", NULL, NULL);
}

FUTOIN_API const char* futoin_wrap_error_code(FutoInAsyncSteps* bsi)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        return x->error_code(bsi);
    }
    return bsi->api->stateVariable(bsi, NULL, "last_exception", NULL, NULL);
}

FUTOIN_API int futoin_wrap_set_last_exception(FutoInAsyncSteps* bsi,
                                              FutoInBinaryValue* value)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    if (x) {
        x->set_last_exception(bsi, value);
        return bsi ? 1 : 0;
    }
    if (value) {
        futoin_reset_binval(value);
    }
    return 0;
}

FUTOIN_API const FutoInBinaryValue* futoin_wrap_last_exception(
        FutoInAsyncSteps* bsi)
{
    const futoin_async_ext_table* x = ext_of(bsi);
    return x ? x->last_exception(bsi) : NULL;
}
