/*
 * Roots for Lua: made on a Tool (kept alive by their tool while they
 * execute), adopted from another implementation (fa.wrap()), freed with
 * their object; execute(), cancel(), free(), and how an execution ended:
 * root:result(), run() and execute()'s on_done read it.
 */
#include "futoin_lua.h"
#include "lua_steps.h"

#include <stdio.h>
#include <string.h>

/* ---- made, adopted, freed ------------------------------------------------ */

int fl_root_new(lua_State* L, fl_tool* t, int tool_idx)
{
    FutoInAsyncSteps* b;
    fl_steps* s;
    futoin_tool* ft = fl_tool_get(L, t, "AsyncSteps(tool)");
    if (!futoin_tool_is_same_thread(ft)) {
        return luaL_error(L, "AsyncSteps(tool): not on the tool's loop thread");
    }
    s = fl_push_steps(L, t->ctx, NULL, FL_ROOT, FL_ROOT_UVS);
    b = futoin_root_new(ft);
    if (!b) {
        return luaL_error(L, "AsyncSteps(): out of memory");
    }
    s->bsi = b;
    s->tool = t;
    ++t->roots; /* until root_freed() */
    lua_pushvalue(L, tool_idx); /* the root keeps its tool alive */
    lua_setiuservalue(L, -2, FL_UV_TOOL);
    return 1;
}

int fl_wrap(lua_State* L, void* address, int owned)
{
    FutoInAsyncSteps* b = address;
    fl_ctx* ctx = fl_ctx_get(L);
    if (!b) {
        return luaL_error(L, "wrap(): NULL handle");
    }
    if (!b->api) {
        return luaL_error(L, "wrap(): a handle without a function table");
    }
    fl_push_steps(L, ctx, b, owned ? FL_ROOT : FL_WRAP, 1);
    return 1;
}

/* A root's FutoInAsyncSteps was freed (once). */
static void root_freed(fl_steps* s)
{
    if (s->tool) {
        --s->tool->roots;
    }
}

int fl_steps_gc(lua_State* L)
{
    fl_steps* s = fl_to_steps(L, 1);
    if (s && s->kind == FL_ROOT && s->bsi) {
        FutoInAsyncSteps* b = s->bsi;
        s->bsi = NULL;
        b->api->free(b);
        root_freed(s);
    }
    return 0;
}

/* A root stopped running: its tool stops keeping it alive. Nothing here may
 * raise (we are inside the runtime). */
static void root_stopped(fl_steps* s)
{
    if ((s->flags & FL_F_RUNNING) && s->bsi) {
        /* The flow's exception object (a registry reference) goes with the
         * flow: execute()'s callback and run() had it. Kept until the root
         * is collected it would hold a registry slot for as long. */
        FutoInBinaryValue none;
        memset(&none, 0, sizeof(none));
        futoin_wrap_set_last_exception(s->bsi, &none);
    }
    s->flags &= (uint16_t)~FL_F_RUNNING;
    if (s->tool && !s->ctx->closed) {
        fl_tool_drop(fl_ctx_state(s->ctx), s->tool, s);
        fl_tool_sweep_soon(s->tool);
    }
}

/* ---- how a root's execution ended ------------------------------------------- *
 *
 * A root of our Tool keeps how its last execution ended in its object (user
 * value FL_UV_RESULT: {true, values..., n = } or {false, error, n = 2}),
 * which root:result() and root:run() read, and calls execute()'s on_done
 * (user value FL_UV_DONE) with the same values once the root is idle
 * again: after its last step (tr_finished, which gets the final values),
 * an unhandled error (tr_unhandled_root), or cancel()/free() of a running
 * root (the error is a Cancelled FutoInError). The result is taken while
 * the flow's values and error are still there; the root stops; then
 * on_done runs. After its last step or an unhandled error it runs inside
 * the flow's end (the runtime still runs that root): executing the root
 * again is refused there, clearly, and works from a later callback. */

/* Runs protected: (root, ok, values...) -> the root's result. */
static int result_body(lua_State* L)
{
    int n = lua_gettop(L) - 1;
    lua_createtable(L, n, 1);
    for (int i = 1; i <= n; ++i) {
        lua_pushvalue(L, i + 1);
        lua_rawseti(L, -2, i);
    }
    lua_pushinteger(L, n);
    lua_setfield(L, -2, "n");
    lua_setiuservalue(L, 1, FL_UV_RESULT);
    return 0;
}

/* Runs protected: (root, args) -> the result of a root that finished with
 * the values `args`. */
static int finished_body(lua_State* L)
{
    fl_steps* s = fl_to_steps(L, 1);
    const FutoInArgs* a = lua_touserdata(L, 2);
    lua_settop(L, 1);
    lua_pushcfunction(L, result_body);
    lua_pushvalue(L, 1);
    lua_pushboolean(L, 1);
    lua_call(L, 2 + fl_push_args(L, s->ctx, a), 0);
    return 0;
}

/* Runs protected: (root, code or nil) -> the result of a root that ended
 * with the unhandled error `code` of its flow (nil: cancelled). */
static int failed_body(lua_State* L)
{
    fl_steps* s = fl_to_steps(L, 1);
    fl_ctx* ctx = s->ctx;
    lua_pushcfunction(L, result_body);
    lua_pushvalue(L, 1);
    lua_pushboolean(L, 0);
    if (lua_isnil(L, 2)) {
        fl_push_error(L, ctx, FL_CANCELLED, "the root was cancelled", 0);
    } else {
        fl_push_error(L, ctx, lua_tostring(L, 2), futoin_wrap_error_info(s->bsi), 0);
        fl_push_last_exception(L, ctx, s->bsi);
        lua_setfield(L, -2, "cause");
        fl_push_async_stack(L, futoin_wrap_async_stack(s->bsi));
        lua_setfield(L, -2, "async_stack");
    }
    lua_call(L, 3, 0);
    return 0;
}

/* Runs protected: (root) -> on_done(result...) if there is one. */
static int notify_body(lua_State* L)
{
    int n;
    if (lua_getiuservalue(L, 1, FL_UV_DONE) == LUA_TNIL
        || lua_getiuservalue(L, 1, FL_UV_RESULT) != LUA_TTABLE) {
        return 0;
    }
    lua_getfield(L, 3, "n");
    n = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    luaL_checkstack(L, n, "on_done");
    for (int i = 1; i <= n; ++i) {
        lua_rawgeti(L, 3, i);
    }
    lua_remove(L, 3);
    lua_call(L, n, 0);
    return 0;
}

/* pcall `body` with the `nargs` arguments on top; an error is printed
 * (`what` names the callback): no flow can take it. */
static void call_printed(lua_State* L, fl_ctx* ctx, lua_CFunction body, int nargs,
                         const char* what)
{
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, fl_msgh);
    lua_insert(L, base + 1);
    lua_pushcfunction(L, body);
    lua_insert(L, base + 2);
    if (lua_pcall(L, nargs, 0, base + 1) != LUA_OK) {
        fprintf(stderr, "futoin_async: error in %s: %s\n", what,
                lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
        lua_pushboolean(L, 0);
        lua_rawseti(L, LUA_REGISTRYINDEX, ctx->err_slot);
    }
    lua_settop(L, base);
}

/* Push the object of running root `s` (kept by its tool); 0 (nothing
 * pushed) if it cannot be had. */
static int push_running_root(lua_State* L, fl_steps* s)
{
    if (s->ctx->closed || !s->tool || s->tool->exec_ref == LUA_NOREF
        || !lua_checkstack(L, 16)) {
        return 0;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->tool->exec_ref);
    lua_pushlightuserdata(L, s);
    if (lua_rawget(L, -2) != LUA_TUSERDATA) {
        lua_pop(L, 2);
        return 0;
    }
    lua_remove(L, -2);
    return 1;
}

/* Root `s` (its object at `idx`) was cancelled or freed while running. */
static void root_cancelled(lua_State* L, fl_steps* s, int idx)
{
    idx = lua_absindex(L, idx);
    lua_pushvalue(L, idx);
    lua_pushnil(L);
    call_printed(L, s->ctx, failed_body, 2, "cancel()");
    root_stopped(s);
    lua_pushvalue(L, idx);
    call_printed(L, s->ctx, notify_body, 1, "an execute() on_done callback");
}

/* The last step execute() adds to a root of ours: the root has finished,
 * with the flow's final values. */
static void tr_finished(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    fl_steps* s = data;
    lua_State* L;
    if (s->ctx->closed || !push_running_root(L = fl_ctx_state(s->ctx), s)) {
        root_stopped(s);
        return;
    }
    lua_pushvalue(L, -1);
    lua_pushlightuserdata(L, (void*)args);
    call_printed(L, s->ctx, finished_body, 2, "execute()");
    root_stopped(s);
    s->flags |= FL_F_ENDING;
    call_printed(L, s->ctx, notify_body, 1, "an execute() on_done callback");
    s->flags &= (uint16_t)~FL_F_ENDING;
}

/* Runs protected: unhandled(code, error_info, last_exception); the
 * function is argument 2. */
static int unhandled_body(lua_State* L)
{
    fl_call* c = lua_touserdata(L, 1);
    fl_ctx* ctx = c->s ? c->s->ctx : c->rec->ctx;
    lua_pushvalue(L, 2);
    lua_pushstring(L, c->code ? c->code : FUTOIN_ERR_INTERNAL_ERROR);
    fl_push_error_info(L, c->bsi);
    fl_push_last_exception(L, ctx, c->bsi);
    lua_call(L, 3, 0);
    return 0;
}

/* Call the unhandled-error function on top of the stack (popped). No flow
 * can take an error raised there: it is printed. The flow's state is the
 * one of the callback (state(), error_info, last_exception). */
static void call_unhandled(lua_State* L, fl_ctx* ctx, fl_call* c)
{
    FutoInAsyncSteps* prev = ctx->cur_bsi;
    ctx->cur_bsi = c->bsi;
    lua_pushlightuserdata(L, c);
    lua_insert(L, -2);
    call_printed(L, ctx, unhandled_body, 2, "an unhandled-error callback");
    ctx->cur_bsi = prev;
}

/* execute()'s unhandled-error callback for an adopted root: the function
 * is anchored in a record. */
static void tr_unhandled(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    fl_rec* r = data;
    fl_ctx* ctx = r->ctx;
    if (!ctx->closed && fl_rec_has(r, FL_A_FN)) {
        lua_State* L = fl_ctx_state(ctx);
        fl_call c = {bsi, r, NULL, code, 0, FL_CALL_CANCEL, NULL};
        if (lua_checkstack(L, 12)) {
            fl_rec_push(L, r, FL_A_FN);
            call_unhandled(L, ctx, &c);
        }
    }
}

/* ... and for a root of our Tool: `data` is the root's object, kept alive
 * by its tool while it runs, and the function is its user value 2 (so a
 * root needs no record: nothing of it waits for the root to be
 * collected). The root has finished: its tool lets it go. */
static void tr_unhandled_root(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    fl_steps* s = data;
    fl_ctx* ctx = s->ctx;
    lua_State* L;
    int root;
    if (ctx->closed || !push_running_root(L = fl_ctx_state(ctx), s)) {
        root_stopped(s);
        return;
    }
    root = lua_gettop(L);
    if (lua_getiuservalue(L, root, FL_UV_UNHANDLED) != LUA_TNIL) {
        fl_call c = {bsi, NULL, NULL, code, 0, FL_CALL_CANCEL, s};
        call_unhandled(L, ctx, &c);
    } else {
        lua_pop(L, 1);
    }
    lua_pushvalue(L, root);
    lua_pushstring(L, code ? code : FUTOIN_ERR_INTERNAL_ERROR);
    call_printed(L, ctx, failed_body, 2, "execute()");
    root_stopped(s);
    s->flags |= FL_F_ENDING;
    call_printed(L, ctx, notify_body, 1, "an execute() on_done callback");
    s->flags &= (uint16_t)~FL_F_ENDING;
}

/* ---- execute, cancel, free, result --------------------------------------- */

/* execute(unhandled). A root of our Tool is kept alive by the tool while
 * it runs: from here until its last step, an unhandled error, cancel() or
 * free(). */
int fl_execute(lua_State* L, fl_steps* s, int fn, int done)
{
    fl_ctx* ctx = s->ctx;
    fl_rec* r;
    fl_gate(L, s, FL_G_ANY, "execute()");
    if (s->kind == FL_STEP || s->kind == FL_PAR) {
        return luaL_error(L, "execute(): only a root AsyncSteps can be executed");
    }
    if (s->flags & FL_F_RUNNING) {
        return luaL_error(L, "execute(): the root is already running");
    }
    if (s->flags & FL_F_ENDING) {
        return luaL_error(L, "execute(): the root is ending (its on_done runs "
                             "inside its last step): execute it again from a "
                             "later callback, e.g. tool:immediate()");
    }
    if (s->tool && (!s->tool->tool || !futoin_tool_is_same_thread(s->tool->tool))) {
        return luaL_error(L, "execute(): not on the tool's loop thread");
    }
    fn = fl_check_fn(L, fn, 1, "execute(unhandled, on_done)", "unhandled");
    done = fl_check_fn(L, done, 1, "execute(unhandled, on_done)", "on_done");
    if (done && !(s->tool && s->kind == FL_ROOT)) {
        return luaL_error(L, "execute(unhandled, on_done): on_done needs a root "
                             "of a Tool of this binding (not an adopted handle)");
    }
    fl_handles_check(L, ctx);
    fl_clear_misuse(ctx);
    if (s->tool && s->kind == FL_ROOT) {
        if (fn) {
            lua_pushvalue(L, fn);
        } else {
            lua_pushnil(L);
        }
        lua_setiuservalue(L, 1, FL_UV_UNHANDLED);
        if (done) {
            lua_pushvalue(L, done);
        } else {
            lua_pushnil(L);
        }
        lua_setiuservalue(L, 1, FL_UV_DONE);
        lua_pushnil(L); /* a new execution: no result yet */
        lua_setiuservalue(L, 1, FL_UV_RESULT);
        fl_state_map_root(ctx, s);
        fl_tool_keep(L, s->tool, 1, s);
        s->flags |= FL_F_RUNNING;
        futoin_wrap_add(s->bsi, s, tr_finished, NULL, NULL);
        futoin_wrap_execute(s->bsi, s, tr_unhandled_root, NULL);
    } else {
        r = fl_make_rec(L, ctx, fn, 0);
        futoin_wrap_execute(s->bsi, r, tr_unhandled, fl_rec_release);
    }
    if (ctx->misuse && (s->flags & FL_F_RUNNING)) {
        root_stopped(s);
    }
    fl_check_misuse(L, ctx, "execute()");
    lua_settop(L, 1);
    return 1;
}

/* root:cancel() -> true if the root was executing and is now cancelled.
 * A handle adopted with fa.wrap() runs where the binding cannot see: the
 * cancel is passed on and true returned. */
int fl_cancel(lua_State* L, fl_steps* s)
{
    int was;
    fl_gate(L, s, FL_G_ANY, "cancel()");
    if (s->kind == FL_STEP || s->kind == FL_PAR) {
        return luaL_error(L, "cancel(): only a root AsyncSteps can be cancelled");
    }
    if (s->tool && s->tool->tool && !futoin_tool_is_same_thread(s->tool->tool)) {
        return luaL_error(L, "cancel(): not on the tool's loop thread");
    }
    was = s->tool ? (s->flags & FL_F_RUNNING) != 0 : 1;
    fl_clear_misuse(s->ctx);
    s->bsi->api->cancel(s->bsi);
    if (s->kind == FL_ROOT && s->tool && was) {
        root_cancelled(L, s, 1);
    } else if (s->kind == FL_ROOT) {
        root_stopped(s);
    }
    fl_check_misuse(L, s->ctx, "cancel()");
    lua_pushboolean(L, was);
    return 1;
}

int fl_free(lua_State* L, fl_steps* s)
{
    if (s->kind == FL_ROOT && s->bsi) {
        FutoInAsyncSteps* b = s->bsi;
        int was = s->tool && (s->flags & FL_F_RUNNING);
        s->bsi = NULL;
        b->api->free(b);
        root_freed(s);
        if (was) {
            root_cancelled(L, s, 1);
        } else {
            root_stopped(s);
        }
    } else if (s->kind != FL_ROOT) {
        return luaL_error(L, "free(): only a root AsyncSteps can be freed");
    }
    return 0;
}

/* root:result(): how the root's last execution ended (the table of
 * FL_UV_RESULT), nil while it never ended. */
int fl_result(lua_State* L, fl_steps* s)
{
    if (s->kind != FL_ROOT || !s->tool) {
        return luaL_error(L, "result(): only a root AsyncSteps of a Tool has a "
                             "result");
    }
    if (s->flags & FL_F_RUNNING) {
        lua_pushnil(L);
    } else {
        lua_getiuservalue(L, 1, FL_UV_RESULT);
    }
    return 1;
}

/* The Tool of a root of a Tool (its object), else nil. */
int fl_root_tool(lua_State* L, fl_steps* s)
{
    if (s->kind == FL_ROOT && s->tool) {
        lua_getiuservalue(L, 1, FL_UV_TOOL);
    } else {
        lua_pushnil(L);
    }
    return 1;
}
