/*
 * The FTN12 table of the handle parallel() returns. It only collects
 * branches: add() queues one branch per call while the parallel step has
 * not started; everything that would act on a running step is misuse.
 * Misuse while a step's callback runs in the same flow fails that step
 * with InternalError (§2.1), as misuse of a step handle does; misuse with
 * no running callback to fail goes to the tool's misuse callback.
 */
#include "engine/engine.h"

#include <stdio.h>

/* Fail the step whose callback runs now in `p`'s flow with `code`, or, if
 * none does, report `msg` as misuse. */
static void par_fail(futoin__step* p, const char* code, const char* msg)
{
    futoin__step* cur = p->flow ? p->flow->top : NULL;
    if (p->state != FUTOIN__S_FREE && cur
        && (cur->state == FUTOIN__S_EXEC || cur->state == FUTOIN__S_ERRH)) {
        futoin__step_error(cur, code, msg);
    } else {
        futoin__tool_misuse(futoin__recpool_tool(p), msg);
    }
}

static bool par_live(futoin__step* p, const char* what)
{
    char msg[128];
    if (!futoin__on_loop(p, what)) {
        return false;
    }
    if (p->state == FUTOIN__S_FREE) {
        snprintf(msg, sizeof(msg),
                 "%s through the handle of a finished parallel()", what);
    } else if (p->state != FUTOIN__S_QUEUED) {
        snprintf(msg, sizeof(msg),
                 "%s on a parallel() that already started", what);
    } else {
        return true;
    }
    par_fail(p, FUTOIN_ERR_INTERNAL_ERROR, msg);
    return false;
}

static void par_add(FutoInAsyncSteps* bsi, void* data,
                    FutoInAsyncSteps_execute_callback f,
                    FutoInAsyncSteps_error_callback eh)
{
    futoin__step* p = futoin__as_step(bsi);
    futoin__step* b;
    if (!par_live(p, "add()")) {
        return;
    }
    if (!f) {
        par_fail(p, FUTOIN_ERR_INVALID_REQUEST,
                 "parallel().add(): the execute callback is NULL");
        return;
    }
    b = futoin__step_new(p->flow, FUTOIN__K_STEP);
    if (!b) {
        par_fail(p, FUTOIN_ERR_INTERNAL_ERROR, "parallel().add(): out of memory");
        return;
    }
    b->f = f;
    b->eh = eh;
    b->data = data;
    if (p->u.p.br_tail) {
        p->u.p.br_tail->next = b;
    } else {
        p->u.p.br_head = b;
    }
    p->u.p.br_tail = b;
}

static void par_misuse(FutoInAsyncSteps* bsi, const char* what)
{
    futoin__step* p = futoin__as_step(bsi);
    char msg[128];
    if (!futoin__on_loop(p, what)) {
        return;
    }
    if (p->state == FUTOIN__S_FREE) {
        par_live(p, what);
        return;
    }
    snprintf(msg, sizeof(msg), "%s is not available on a parallel() handle",
             what);
    par_fail(p, FUTOIN_ERR_INTERNAL_ERROR, msg);
}

static FutoInAsyncSteps* par_parallel(FutoInAsyncSteps* bsi, void* data,
                                      FutoInAsyncSteps_error_callback eh)
{
    par_misuse(bsi, "parallel()");
    return NULL;
}

static void* par_state_variable(FutoInAsyncSteps* bsi, void* data,
                                const char* name, void* (*allocate)(void* data),
                                void (*cleanup)(void* data, void* value))
{
    futoin__step* p = futoin__as_step(bsi);
    if (!futoin__on_loop(p, "stateVariable()")) {
        return NULL;
    }
    if (p->state == FUTOIN__S_FREE) {
        par_live(p, "stateVariable()");
        return NULL;
    }
    return futoin__state_variable(p->flow->root, data, name, allocate, cleanup);
}

static void* par_stack(FutoInAsyncSteps* bsi, size_t size,
                       void (*cleanup)(void* value))
{
    futoin__step* p = futoin__as_step(bsi);
    if (!futoin__on_loop(p, "stack()")) {
        return NULL;
    }
    if (p->state == FUTOIN__S_FREE) {
        par_live(p, "stack()");
        return NULL;
    }
    if (!futoin__step_rare_get(p)) {
        return NULL;
    }
    return futoin__alloc_push(&p->rare->allocs, size, cleanup);
}

static void par_success(FutoInAsyncSteps* bsi, FutoInArgs* args)
{
    if (args) {
        futoin__args_clear(args);
    }
    par_misuse(bsi, "success()");
}

static void par_handle_error(FutoInAsyncSteps* bsi, const char* c, const char* i)
{
    par_misuse(bsi, "handle_error()");
}

static void par_set_timeout(FutoInAsyncSteps* bsi, uint32_t ms)
{
    par_misuse(bsi, "setTimeout()");
}

static void par_set_cancel(FutoInAsyncSteps* bsi, void* data,
                           FutoInAsyncSteps_cancel_callback ch)
{
    par_misuse(bsi, "setCancel()");
}

static void par_wait_external(FutoInAsyncSteps* bsi)
{
    par_misuse(bsi, "waitExternal()");
}

static void par_loop(FutoInAsyncSteps* bsi, void* data,
                     void (*f)(FutoInAsyncSteps* bsi, void* data),
                     const char* label)
{
    par_misuse(bsi, "loop()");
}

static void par_repeat(FutoInAsyncSteps* bsi, void* data, size_t count,
                       void (*f)(FutoInAsyncSteps* bsi, void* data, size_t i),
                       const char* label)
{
    par_misuse(bsi, "repeat()");
}

static void par_break(FutoInAsyncSteps* bsi, const char* label)
{
    par_misuse(bsi, "breakLoop()");
}

static void par_continue(FutoInAsyncSteps* bsi, const char* label)
{
    par_misuse(bsi, "continueLoop()");
}

static void par_execute(FutoInAsyncSteps* bsi, void* data,
                        FutoInAsyncSteps_error_callback unhandled)
{
    par_misuse(bsi, "execute()");
}

static void par_cancel(FutoInAsyncSteps* bsi)
{
    par_misuse(bsi, "cancel()");
}

static void par_add_sync(FutoInAsyncSteps* bsi, FutoInSync* sync, void* data,
                         FutoInAsyncSteps_execute_callback f,
                         FutoInAsyncSteps_error_callback eh)
{
    par_misuse(bsi, "addSync()");
}

static void par_free(FutoInAsyncSteps* bsi)
{
    par_misuse(bsi, "free()");
}

static int par_is_valid(FutoInAsyncSteps* bsi)
{
    futoin__step* p = futoin__as_step(bsi);
    if (!futoin__on_loop(p, "isValid()")) {
        return 0;
    }
    return p->state == FUTOIN__S_QUEUED;
}


const FutoInAsyncStepsAPI futoin__par_api = {{{
        .add = par_add,
        .parallel = par_parallel,
        .stateVariable = par_state_variable,
        .stack = par_stack,
        .success = par_success,
        .handle_error = par_handle_error,
        .setTimeout = par_set_timeout,
        .setCancel = par_set_cancel,
        .waitExternal = par_wait_external,
        .loop = par_loop,
        .repeat = par_repeat,
        .breakLoop = par_break,
        .continueLoop = par_continue,
        .execute = par_execute,
        .cancel = par_cancel,
        .addSync = par_add_sync,
        .rootId = futoin__common_root_id,
        .isValid = par_is_valid,
        .newInstance = futoin__common_new_instance,
        .free = par_free,
        .sched_immediate = futoin__common_sched_immediate,
        .sched_deferred = futoin__common_sched_deferred,
        .sched_cancel = futoin__common_sched_cancel,
        .sched_is_valid = futoin__common_sched_is_valid,
        .is_same_thread = futoin__common_is_same_thread,
}}};
