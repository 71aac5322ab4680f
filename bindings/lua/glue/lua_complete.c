/*
 * Completing a step from Lua: success(...), success_step(...), error()
 * and the coroutine layer's _fail(), inside the step's own callback or,
 * for a waiting step, from outside it (the runtime then says whether the
 * completion was taken: a late one returns false, rule 3).
 *
 * "error() throws": asi:error() reports the error to the runtime, then
 * raises a FutoInError marked as handled, which the trampoline swallows.
 * Outside the step's own callback (completing a waiting step from a luv
 * callback, say) there is nothing to unwind and it just returns. Any other
 * Lua error becomes InternalError with the Lua traceback as error_info and
 * the error object as last_exception.
 */
#include "futoin_lua.h"
#include "lua_steps.h"

#include <string.h>

/* success(...) / success_step(...): self and up to 4 values. */
static int values_count(lua_State* L, const char* what)
{
    int n = lua_gettop(L) - 1;
    if (n > 4) {
        luaL_error(L, "%s: at most 4 values (FTN12 FutoInArgs), got %d", what, n);
    }
    return n;
}

/* success() with every check; fl_success() took the common case. */
static __attribute__((noinline)) int success_slow(lua_State* L, fl_steps* s)
{
    fl_ctx* ctx;
    int n = lua_gettop(L) - 1;
    int external;
    FutoInArgs a;
    /* Next: a step's own callback succeeds with numbers or booleans and
     * has done nothing else through its handle (so every check below
     * would pass), outside a call that keeps them. */
    if (s && s->kind == FL_STEP && (s->flags & (uint16_t)~FL_F_LIGHT) == FL_F_ACTIVE
        && n <= 4) {
        int i = 0;
        while (i < n && fl_to_binval_plain(L, 2 + i, &a.args[i])) {
            ++i;
        }
        if (i == n) {
            ctx = s->ctx;
            if (n < 4) {
                memset(&a.args[n], 0, sizeof(a.args[0]) * (size_t)(4 - n));
            }
            fl_clear_misuse(ctx);
            s->bsi->api->success(s->bsi, n ? &a : NULL);
            s->flags |= FL_F_SUCCESS;
            fl_check_misuse(L, ctx, "success()");
            return 0; /* inside its callback: nothing (`return asi:success(v)`) */
        }
    }
    s = fl_check_steps(L, 1, "success()");
    ctx = s->ctx;
    n = values_count(L, "success()");
    external = s->kind == FL_STEP && !(s->flags & FL_F_ACTIVE);
    if (!fl_gate(L, s, FL_G_COMPLETE, "success()")) {
        lua_pushboolean(L, 0);
        return 1;
    }
    if (s->kind == FL_STEP && !external) {
        if (s->flags & FL_F_SUCCESS) {
            return luaL_error(L, "success(): called twice");
        }
        if (s->flags & FL_F_ADDED) {
            return luaL_error(L, "success(): after add() (a step that adds "
                                 "sub-steps succeeds with their results)");
        }
    }
    if (n) {
        fl_args_from(L, ctx, 2, n, &a);
    }
    fl_clear_misuse(ctx);
    if (external) {
        /* Completing a waiting step from outside its callback: the
         * runtime says whether it was taken (0: it lost the race with its
         * timeout or a cancel, which is no error). */
        int rc = futoin_wrap_try_success(s->bsi, n ? &a : NULL);
        if (n) {
            fl_args_reset(&a); /* a no-op after the move */
        }
        s->flags |= FL_F_SUCCESS | FL_F_DONE;
        if (s->rec && s->rec->live == s) {
            fl_rec_detach(s->rec);
        }
        fl_check_misuse(L, ctx, "success()");
        lua_pushboolean(L, rc == 1);
        return 1;
    }
    s->bsi->api->success(s->bsi, n ? &a : NULL);
    for (int i = 0; i < n; ++i) {
        futoin_reset_binval(&a.args[i]); /* a no-op after the move */
    }
    s->flags |= FL_F_SUCCESS;
    fl_check_misuse(L, ctx, "success()");
    if (s->kind == FL_STEP) {
        return 0; /* inside its callback: nothing (`return asi:success(v)`) */
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* success(v...) kept by call `c` of handle `s` if every value is a number
 * or a boolean, else the checked way. */
static __attribute__((noinline)) int success_keep(lua_State* L, fl_steps* s,
                                                  fl_call* c, int n)
{
    FutoInArgs* dst = c->kept;
    int i = 0;
    if (n > 4) {
        return success_slow(L, s);
    }
    while (i < n && fl_to_binval_plain(L, 2 + i, &dst->args[i])) {
        ++i;
    }
    if (i < n) {
        return success_slow(L, s);
    }
    c->kept_n = n;
    s->flags |= FL_F_SUCCESS | FL_F_KEPT;
    return 0; /* inside its callback: nothing (`return asi:success(v)`) */
}

/* The common case: inside a step's own call (the innermost one of its
 * context), having done nothing else through the handle, the step
 * succeeds with numbers or booleans. The values are kept by the call
 * (lua_trampoline.c): they go to the next Lua step as they are if the
 * runtime lets it run now. One integer, the usual value, is read here.
 * A light handle is that call's when its value is the call's (fl_call.hv,
 * unique while the call runs): its slot is then c->s, not decoded. */
int fl_success(lua_State* L)
{
    void* p = lua_touserdata(L, 1);
    fl_steps* s;
    fl_call* c;
    fl_ctx* ctx;
    if (fl_handle_is_light(p) && (ctx = fl_handle_ctx_of(p)) != NULL
        && (c = ctx->cur_call) != NULL && c->hv == p) {
        s = c->s; /* a step's call (hv): it has c->kept */
    } else {
        s = fl_to_steps(L, 1);
        if (!s || (c = s->ctx->cur_call) == NULL || c->s != s || !c->kept) {
            return success_slow(L, s);
        }
    }
    if ((s->flags & (uint16_t)~FL_F_LIGHT) == FL_F_ACTIVE) {
        /* no count lives across the calls: fewer saved registers */
        if (lua_gettop(L) == 2 && lua_isinteger(L, 2)) {
            c->kept_i = lua_tointeger(L, 2);
            c->kept_n = FL_KEPT_INT;
            s->flags |= FL_F_SUCCESS | FL_F_KEPT;
            return 0;
        }
        return success_keep(L, s, c, lua_gettop(L) - 1);
    }
    return success_slow(L, s);
}

int fl_success_step(lua_State* L)
{
    fl_steps* s = fl_check_steps(L, 1, "success_step()");
    int n = values_count(L, "success_step()");
    FutoInArgs a;
    fl_gate(L, s, FL_G_ADD, "success_step()");
    fl_args_from(L, s->ctx, 2, n, &a);
    fl_clear_misuse(s->ctx);
    futoin_wrap_success_step(s->bsi, &a);
    fl_args_reset(&a);
    s->flags |= FL_F_ADDED;
    fl_check_misuse(L, s->ctx, "success_step()");
    lua_settop(L, 1);
    return 1;
}

/* Is the running coroutine a step made with fa.async() for handle 1? */
static int in_coroutine_step(lua_State* L, fl_ctx* ctx)
{
    int yes;
    if (ctx->co_steps == LUA_NOREF || lua_pushthread(L)) {
        if (ctx->co_steps != LUA_NOREF) {
            lua_pop(L, 1); /* the main thread */
        }
        return 0;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->co_steps);
    lua_insert(L, -2);
    lua_rawget(L, -2);
    yes = lua_rawequal(L, -1, 1);
    lua_pop(L, 2);
    return yes;
}

int fl_error(lua_State* L, fl_steps* s, int code_idx, int info_idx)
{
    fl_ctx* ctx = s->ctx;
    const char* code;
    const char* info = NULL;
    int external = s->kind == FL_STEP && !(s->flags & FL_F_ACTIVE);
    FutoInBinaryValue ex;
    if (lua_type(L, code_idx) != LUA_TSTRING) {
        return luaL_error(L, "error(code, info): code must be a string, got %s",
                          luaL_typename(L, code_idx));
    }
    code = fl_c_string(L, code_idx, "error(code, info)", "code");
    if (!*code) {
        return luaL_error(L, "error(code, info): code must not be empty");
    }
    if (info_idx && !lua_isnoneornil(L, info_idx)) {
        if (!lua_isstring(L, info_idx)) {
            return luaL_error(L, "error(code, info): info must be a string, got %s",
                              luaL_typename(L, info_idx));
        }
        info = fl_c_string(L, info_idx, "error(code, info)", "info");
    }
    if (!fl_gate(L, s, FL_G_COMPLETE, "error()")) {
        lua_pushboolean(L, 0);
        return 1;
    }
    if (s->kind == FL_STEP && !external && (s->flags & FL_F_SUCCESS)
        && !(s->flags & FL_F_ERRH)) {
        return luaL_error(L, "error(): after success()");
    }
    fl_push_error(L, ctx, code, info, 1);
    fl_set_custom(L, ctx, -1, &ex);
    fl_clear_misuse(ctx);
    if (external) {
        /* Completing a waiting step from outside its callback: the
         * runtime says whether it was taken (0: it lost the race with its
         * timeout or a cancel, which is no error), and only then is the
         * error object the flow's last_exception (the unwinding it starts
         * runs later, from the loop). */
        int rc = futoin_wrap_try_error(s->bsi, code, info);
        if (rc == 1) {
            futoin_wrap_set_last_exception(s->bsi, &ex);
        } else {
            futoin_reset_binval(&ex);
        }
        s->flags |= FL_F_FAILED | FL_F_DONE;
        if (s->rec && s->rec->live == s) {
            fl_rec_detach(s->rec);
        }
        fl_check_misuse(L, ctx, "error()");
        lua_pushboolean(L, rc == 1);
        if (rc != 1 || !in_coroutine_step(L, ctx)) {
            return 1; /* nothing to unwind: completing a waiting step */
        }
        lua_pop(L, 1);
        return lua_error(L); /* a coroutine step: leave its code */
    }
    futoin_wrap_set_last_exception(s->bsi, &ex);
    s->bsi->api->handle_error(s->bsi, code, info);
    s->flags |= FL_F_FAILED;
    fl_check_misuse(L, ctx, "error()");
    if (s->kind != FL_STEP) {
        lua_pushboolean(L, 1);
        return 1;
    }
    return lua_error(L); /* the handled FutoInError: leaves the step's code */
}

/* asi:_fail(err, traceback): report a Lua error object as the trampoline
 * does (the coroutine helper of the Lua layer uses it for errors raised in
 * a coroutine step). Raises the handled marker inside the callback. */
int fl_fail(lua_State* L, fl_steps* s, int err, int tb)
{
    fl_ctx* ctx = s->ctx;
    FutoInBinaryValue ex;
    const char* code = FUTOIN_ERR_INTERNAL_ERROR;
    const char* info;
    int external = s->kind == FL_STEP && !(s->flags & FL_F_ACTIVE);
    if (!fl_gate(L, s, FL_G_COMPLETE, "_fail()")) {
        lua_pushboolean(L, 0);
        return 1;
    }
    if (fl_is_error_obj(L, err)) {
        lua_getfield(L, err, "code");
        if (lua_type(L, -1) == LUA_TSTRING) {
            code = lua_tostring(L, -1);
        }
        lua_getfield(L, err, "info");
        info = lua_isstring(L, -1) ? lua_tostring(L, -1) : NULL;
    } else {
        info = lua_tostring(L, tb);
    }
    fl_set_custom(L, ctx, err, &ex);
    fl_clear_misuse(ctx);
    if (external) {
        int rc = futoin_wrap_try_error(s->bsi, code, info); /* as error() */
        if (rc == 1) {
            futoin_wrap_set_last_exception(s->bsi, &ex);
        } else {
            futoin_reset_binval(&ex);
        }
        s->flags |= FL_F_FAILED | FL_F_DONE;
        if (s->rec && s->rec->live == s) {
            fl_rec_detach(s->rec);
        }
        fl_clear_misuse(ctx);
        lua_pushboolean(L, rc == 1);
        return 1;
    }
    futoin_wrap_set_last_exception(s->bsi, &ex);
    s->bsi->api->handle_error(s->bsi, code, info);
    s->flags |= FL_F_FAILED;
    lua_pushboolean(L, !ctx->misuse);
    fl_clear_misuse(ctx);
    if (s->kind == FL_STEP) {
        fl_push_error(L, ctx, code, info, 1);
        return lua_error(L);
    }
    return 1;
}
