/*
 * AsyncSteps for Lua: the operations behind the methods of the handle
 * objects (the SWIG wrappers of interface/futoin_lua.i call them); the
 * trampolines that run Lua functions as steps, error, cancel and loop
 * callbacks are in lua_trampoline.c, success() and error() in
 * lua_complete.c.
 *
 * Everything goes through the adapter layer (futoin/sys/wrap.h), so the
 * same code drives our handles and any other FTN12 implementation's.
 *
 * Handle objects. Each callback gets a handle (asi) of its own bound to
 * one step: a light userdata naming a slot (lua_handle.c), or a fresh
 * userdata where light ones cannot be had. Its state (fl_steps) remembers
 * what happened through it (flags), so misuse is
 * refused with a Lua error at the call site before the runtime sees it: a
 * handle of a finished step, add() after success(), success() twice, calls
 * that only the step's own callback may make. A waiting step's object stays
 * usable from outside (success()/error() complete it) until it completes,
 * times out or is cancelled; the record's release (or its next call) marks
 * it finished, and a completion that lost that race returns false.
 */
#include "futoin_lua.h"
#include "lua_steps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char fl_steps_magic = 0;
/* ---- handle objects ------------------------------------------------------ */

fl_steps* fl_push_steps(lua_State* L, fl_ctx* ctx, FutoInAsyncSteps* bsi,
                        int kind, int nuv)
{
    fl_steps* s = lua_newuserdatauv(L, sizeof(*s), nuv);
    int mt = kind == FL_STEP ? FL_MT_STEP : kind == FL_PAR ? FL_MT_PAR : FL_MT_ROOT;
    s->magic = &fl_steps_magic;
    s->bsi = bsi;
    s->ctx = ctx;
    s->rec = NULL;
    s->tool = NULL;
    s->flags = 0;
    s->kind = (uint8_t)kind;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->mt[mt]);
    lua_setmetatable(L, -2);
    return s;
}

int fl_not_steps(lua_State* L, int idx, const char* what)
{
    return luaL_error(L, "%s: expected an AsyncSteps handle as self, got %s "
                         "(call it as a method: asi:%s)",
                      what, luaL_typename(L, idx), what);
}

int fl_steps_tostring(lua_State* L)
{
    fl_steps* s = fl_to_steps(L, 1);
    static const char* const kinds[] = {"step", "AsyncSteps", "parallel", "AsyncSteps (adopted)"};
    if (!s) {
        lua_pushliteral(L, "futoin_async handle (?)");
    } else if ((s->kind == FL_STEP && (s->flags & FL_F_DONE)) || !s->bsi) {
        lua_pushfstring(L, "futoin_async.%s (finished)", kinds[s->kind & 3]);
    } else {
        lua_pushfstring(L, "futoin_async.%s (%p)", kinds[s->kind & 3], (void*)s->bsi);
    }
    return 1;
}

/* ---- argument checks, records -------------------------------------------- */

static int is_callable(lua_State* L, int idx)
{
    if (lua_isfunction(L, idx)) {
        return 1;
    }
    if (luaL_getmetafield(L, idx, "__call") != LUA_TNIL) {
        lua_pop(L, 1);
        return 1;
    }
    return 0;
}

/* `idx` (0: absent) must be callable, or nil when `optional`. */
int fl_check_fn(lua_State* L, int idx, int optional, const char* what,
                const char* name)
{
    if (idx && !lua_isnoneornil(L, idx)) {
        if (!is_callable(L, idx)) {
            luaL_error(L, "%s: %s must be a function, got %s", what, name,
                       luaL_typename(L, idx));
        }
        return idx;
    }
    if (!optional) {
        luaL_error(L, "%s: %s must be a function, got %s", what, name,
                   idx ? luaL_typename(L, idx) : "no value");
    }
    return 0;
}

/* The C string of string argument `idx`, refused (a Lua error naming
 * `name`) if an embedded NUL would cut it. */
const char* fl_c_string(lua_State* L, int idx, const char* what,
                        const char* name)
{
    size_t len;
    const char* v = lua_tolstring(L, idx, &len);
    if (strlen(v) != len) {
        luaL_error(L, "%s: %s must not contain an embedded NUL", what, name);
    }
    return v;
}

static const char* label_arg(lua_State* L, int idx, const char* what)
{
    if (!idx || lua_isnoneornil(L, idx)) {
        return NULL;
    }
    if (lua_type(L, idx) != LUA_TSTRING) {
        luaL_error(L, "%s: label must be a string, got %s", what,
                   luaL_typename(L, idx));
    }
    return fl_c_string(L, idx, what, "label");
}

/* A record anchoring the functions at fn_idx / eh_idx (0: none). */
fl_rec* fl_make_rec(lua_State* L, fl_ctx* ctx, int fn_idx, int eh_idx)
{
    fl_rec* r = fl_rec_new(L, ctx, (fn_idx ? 1u << FL_A_FN : 0) | (eh_idx ? 1u << FL_A_EH : 0));
    if (!r) {
        luaL_error(L, "futoin_async: out of memory");
    }
    if (fn_idx) {
        fl_rec_set(L, r, FL_A_FN, fn_idx);
    }
    if (eh_idx) {
        fl_rec_set(L, r, FL_A_EH, eh_idx);
    }
    return r;
}

/* ---- operations behind the methods ---------------------------------------- */

/* The common case of add(): a function and no error handler, added to a
 * root or by a step's own callback that may still add (every check of
 * fl_add() would pass), with a record whose reference exists. Returns 0
 * (nothing done) otherwise. */
static inline __attribute__((always_inline)) int add_fast(lua_State* L, fl_steps* s,
                                                         int fn, int eh)
{
    fl_ctx* ctx = s->ctx;
    fl_rec* r = ctx->free_recs;
    const futoin_async_ext_table* x;
    const void* p;
    if (!eh && r && r->ref[FL_A_FN - 1] != LUA_NOREF
        && (s->kind == FL_STEP
                ? (s->flags & (uint16_t) ~(FL_F_LIGHT | FL_F_ADDED | FL_F_WAITING))
                          == FL_F_ACTIVE
                : s->bsi != NULL)
        /* The anchored function again (the usual add() of a loop or a
         * named function) needs no type check: lua_topointer() of a
         * value is the address of a live object only for that object
         * itself (NULL for numbers, booleans and nil), and the anchored
         * function is alive. Only a light userdata that C code made of
         * that very address would pass too. */
        && (((p = lua_topointer(L, fn)) == ctx->share_ptr && p)
            || lua_type(L, fn) == LUA_TFUNCTION)) {
        /* a free record holds its ctx and nothing else (fl_rec_new(),
         * lua_ctx.c); `next` is read on the free list only */
        ctx->free_recs = r->next;
        ++ctx->recs;
        if (p == ctx->share_ptr) {
            ++ctx->share_cnt; /* anchored already */
            r->has = (1u << FL_A_FN) | FL_H_SHARED;
        } else if (ctx->share_cnt == 0) {
            lua_pushvalue(L, fn); /* becomes the shared anchor */
            lua_rawseti(L, LUA_REGISTRYINDEX, ctx->share_ref);
            ctx->share_ptr = p;
            ctx->share_cnt = 1;
            r->has = (1u << FL_A_FN) | FL_H_SHARED;
        } else {
            lua_pushvalue(L, fn);
            lua_rawseti(L, LUA_REGISTRYINDEX, r->ref[FL_A_FN - 1]);
            r->has = 1u << FL_A_FN;
        }
        ++ctx->refs;
        fl_clear_misuse(ctx);
        if ((x = fl_ext_of(ctx, s->bsi)) != NULL) {
            x->add_classed(s->bsi, r, fl_tr_step, NULL, &fl_rec_class);
        } else {
            futoin_wrap_add_classed(s->bsi, r, fl_tr_step, NULL, &fl_rec_class);
        }
        s->flags |= FL_F_ADDED;
        fl_check_misuse(L, ctx, "add()");
        return 1;
    }
    return 0;
}

/* add() with every check and a record of its own. A `name` (NULL: none)
 * names a step the binding adds on the user's behalf, shown in async stacks
 * as `name` at file:line instead of as the function's own definition. */
static int add_checked(lua_State* L, fl_steps* s, int fn, int eh,
                       const char* name, const char* file, lua_Integer line)
{
    fl_ctx* ctx = s->ctx;
    fl_rec* r;
    fl_gate(L, s, FL_G_ADD, "add()");
    fl_check_fn(L, fn, 0, "add(step, onerror)", "step");
    eh = fl_check_fn(L, eh, 1, "add(step, onerror)", "onerror");
    r = fl_make_rec(L, ctx, fn, eh);
    if (name) {
        r->name = strdup(name);
        r->src = file && *file ? strdup(file) : NULL;
        r->line = line > 0 && line <= (lua_Integer)UINT32_MAX ? (uint32_t)line : 0;
        fl_rec_origin_set(r);
    }
    fl_clear_misuse(ctx);
    futoin_wrap_add_classed(s->bsi, r, fl_tr_step, eh ? fl_tr_error : NULL,
                            &fl_rec_class);
    s->flags |= FL_F_ADDED;
    fl_check_misuse(L, ctx, "add()");
    lua_settop(L, 1);
    return 1;
}

int fl_add(lua_State* L, fl_steps* s, int fn, int eh)
{
    if (add_fast(L, s, fn, eh)) {
        lua_pushvalue(L, 1); /* returns self */
        return 1;
    }
    return add_checked(L, s, fn, eh, NULL, NULL, 0);
}

/* add(step [, onerror]) with the checks SWIG generates for the others. */
int fl_add_native(lua_State* L)
{
    int n = lua_gettop(L);
    fl_steps* s;
    if (n < 2 || n > 3) {
        return luaL_error(L, "add(): expected 2 to 3 arguments (self included), "
                             "got %d", n);
    }
    s = fl_check_steps(L, 1, "add");
    if (n == 2 && add_fast(L, s, 2, 0)) {
        lua_pushvalue(L, 1); /* returns self */
        return 1;
    }
    return fl_add(L, s, 2, n > 2 ? 3 : 0);
}

int fl_parallel(lua_State* L, fl_steps* s, int eh)
{
    fl_ctx* ctx = s->ctx;
    fl_rec* r = NULL;
    FutoInAsyncSteps* p;
    fl_steps* ps;
    fl_gate(L, s, FL_G_ADD, "parallel()");
    eh = fl_check_fn(L, eh, 1, "parallel(onerror)", "onerror");
    ps = fl_push_steps(L, ctx, NULL, FL_PAR, 1); /* before: may raise */
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    if (eh) {
        r = fl_make_rec(L, ctx, 0, eh);
    }
    fl_clear_misuse(ctx);
    p = futoin_wrap_parallel(s->bsi, r, r ? fl_tr_error : NULL,
                             r ? fl_rec_release : NULL);
    s->flags |= FL_F_ADDED;
    fl_check_misuse(L, ctx, "parallel()");
    if (!p) {
        return luaL_error(L, "parallel(): refused by the runtime");
    }
    ps->bsi = p;
    return 1;
}

/* set_timeout(), set_cancel() and wait_external() each make a step wait
 * (FTN12 §1.3: implicit success is off), unless it completes or adds
 * sub-steps in its callback: the handle must stay usable after the
 * callback returns, since the completion comes through it. Before the
 * runtime call: take what may raise (a full userdata's anchor). */
static void wait_reserve(lua_State* L, fl_steps* s)
{
    if (s->kind == FL_STEP && s->rec && !(s->flags & FL_F_LIGHT)) {
        fl_rec_reserve(L, s->rec, FL_A_WAIT);
    }
}

/* After the runtime call: the handle waits (never raises: the reference
 * was taken by wait_reserve). */
static void wait_mark(lua_State* L, fl_steps* s)
{
    if (s->kind == FL_STEP && !(s->flags & FL_F_WAITING)) {
        s->flags |= FL_F_WAITING;
        if (s->rec && !(s->flags & FL_F_LIGHT) && !fl_rec_has(s->rec, FL_A_WAIT)) {
            /* the object must outlive the callback: its completion comes
             * through it, and the release hook marks it finished */
            fl_rec_set(L, s->rec, FL_A_WAIT, 1);
        }
    }
}

int fl_set_timeout(lua_State* L, fl_steps* s, lua_Number ms)
{
    uint32_t t;
    fl_gate(L, s, FL_G_EXEC, "set_timeout()");
    if (!(ms >= 0)) {
        return luaL_error(L, "set_timeout(ms): ms must be >= 0");
    }
    t = ms >= (lua_Number)UINT32_MAX ? UINT32_MAX : (uint32_t)ceil(ms);
    wait_reserve(L, s);
    fl_clear_misuse(s->ctx);
    s->bsi->api->setTimeout(s->bsi, t);
    fl_check_misuse(L, s->ctx, "set_timeout()");
    wait_mark(L, s);
    return 0;
}

int fl_set_cancel(lua_State* L, fl_steps* s, int fn)
{
    fl_rec* r;
    fl_gate(L, s, FL_G_EXEC, "set_cancel()");
    fl_check_fn(L, fn, 0, "set_cancel(handler)", "handler");
    wait_reserve(L, s);
    r = fl_make_rec(L, s->ctx, fn, 0);
    fl_clear_misuse(s->ctx);
    futoin_wrap_set_cancel(s->bsi, r, fl_tr_cancel, fl_rec_release);
    fl_check_misuse(L, s->ctx, "set_cancel()");
    wait_mark(L, s);
    return 0;
}

int fl_wait_external(lua_State* L, fl_steps* s)
{
    fl_gate(L, s, FL_G_EXEC, "wait_external()");
    wait_reserve(L, s);
    fl_clear_misuse(s->ctx);
    s->bsi->api->waitExternal(s->bsi);
    fl_check_misuse(L, s->ctx, "wait_external()");
    wait_mark(L, s);
    return 0;
}

int fl_loop(lua_State* L, fl_steps* s, int fn, int label)
{
    const char* l;
    fl_rec* r;
    fl_gate(L, s, FL_G_ADD, "loop()");
    fl_check_fn(L, fn, 0, "loop(body, label)", "body");
    l = label_arg(L, label, "loop(body, label)");
    r = fl_make_rec(L, s->ctx, fn, 0);
    fl_clear_misuse(s->ctx);
    futoin_wrap_loop(s->bsi, r, fl_tr_loop, l, fl_rec_release);
    s->flags |= FL_F_ADDED;
    fl_check_misuse(L, s->ctx, "loop()");
    lua_settop(L, 1);
    return 1;
}

int fl_repeat(lua_State* L, fl_steps* s, lua_Integer count, int fn, int label)
{
    const char* l;
    fl_rec* r;
    fl_gate(L, s, FL_G_ADD, "repeat_loop()");
    if (count < 0) {
        return luaL_error(L, "repeat_loop(count, body, label): count must be "
                             ">= 0, got %I", (LUAI_UACINT)count);
    }
    fl_check_fn(L, fn, 0, "repeat_loop(count, body, label)", "body");
    l = label_arg(L, label, "repeat_loop(count, body, label)");
    r = fl_make_rec(L, s->ctx, fn, 0);
    fl_clear_misuse(s->ctx);
    futoin_wrap_repeat(s->bsi, r, (size_t)count, fl_tr_repeat, l, fl_rec_release);
    s->flags |= FL_F_ADDED;
    fl_check_misuse(L, s->ctx, "repeat_loop()");
    lua_settop(L, 1);
    return 1;
}

/* break_loop()/continue_loop() leave the calling Lua code as the JS
 * reference's break()/continue() do: the runtime is told first, then a
 * handled FutoInError ("LoopBreak"/"LoopCont") unwinds to the trampoline. */
int fl_break(lua_State* L, fl_steps* s, int label, int cont)
{
    const char* what = cont ? "continue_loop()" : "break_loop()";
    const char* l;
    fl_gate(L, s, FL_G_LOOPCTL, what);
    l = label_arg(L, label, what);
    fl_clear_misuse(s->ctx);
    if (cont) {
        s->bsi->api->continueLoop(s->bsi, l);
    } else {
        s->bsi->api->breakLoop(s->bsi, l);
    }
    fl_check_misuse(L, s->ctx, what);
    fl_push_error(L, s->ctx, cont ? "LoopCont" : "LoopBreak", NULL, 1);
    return lua_error(L);
}

int fl_sync(lua_State* L, fl_steps* s, uintptr_t sync, int fn, int eh)
{
    fl_rec* r;
    fl_gate(L, s, FL_G_ADD, "sync()");
    if (!sync) {
        return luaL_error(L, "sync(obj, step, onerror): the object is closed");
    }
    fl_check_fn(L, fn, 0, "sync(obj, step, onerror)", "step");
    eh = fl_check_fn(L, eh, 1, "sync(obj, step, onerror)", "onerror");
    r = fl_make_rec(L, s->ctx, fn, eh);
    fl_clear_misuse(s->ctx);
    /* classed as add() is: the section's frame (async stacks, the dump's
     * section= line) is the Lua function's */
    futoin_wrap_add_sync_classed(s->bsi, (FutoInSync*)sync, r, fl_tr_step,
                                 eh ? fl_tr_error : NULL, &fl_rec_class);
    s->flags |= FL_F_ADDED;
    fl_check_misuse(L, s->ctx, "sync()");
    lua_settop(L, 1);
    return 1;
}

int fl_root_id(lua_State* L, fl_steps* s)
{
    fl_gate(L, s, FL_G_ANY, "root_id()");
    lua_pushinteger(L, (lua_Integer)s->bsi->api->rootId(s->bsi));
    return 1;
}

int fl_is_valid(lua_State* L, fl_steps* s)
{
    if (!s->bsi || (s->kind == FL_STEP && (s->flags & FL_F_DONE))) {
        lua_pushboolean(L, 0);
    } else {
        lua_pushboolean(L, s->bsi->api->isValid(s->bsi) != 0);
    }
    return 1;
}

/* What a handle can still do: roots "running"/"idle"/"freed"; step
 * handles "active" (its callback runs), "waiting" (for success()/error()
 * from outside), "completed" (in its callback, after success()/error()),
 * "finished" (refused from now on), "lost" (a waiting step ended by a
 * timeout or cancel: a late completion returns false). */
int fl_status(lua_State* L, fl_steps* s)
{
    const char* st;
    if (s->flags & FL_F_GHOST) {
        st = "finished"; /* a light handle whose slot moved on */
    } else if (!s->bsi) {
        st = "freed";
    } else if (s->kind == FL_ROOT) {
        st = (s->flags & FL_F_RUNNING) ? "running" : "idle";
    } else if (s->flags & FL_F_LOST) {
        st = "lost";
    } else if (s->flags & FL_F_DONE) {
        st = "finished";
    } else if (s->flags & (FL_F_SUCCESS | FL_F_FAILED)) {
        st = "completed"; /* in its callback, after success()/error() */
    } else if (s->flags & FL_F_ACTIVE) {
        st = "active";
    } else if (s->flags & FL_F_WAITING) {
        st = "waiting";
    } else {
        st = "idle";
    }
    lua_pushstring(L, st);
    return 1;
}

int fl_binary(lua_State* L, fl_steps* s)
{
    fl_gate(L, s, FL_G_ANY, "binary()");
    lua_pushlightuserdata(L, s->bsi);
    return 1;
}

/* asi:tool(): the Tool of the flow, from any handle of ours: a root of a
 * Tool has its object; a step finds the object of its flow's tool (one a
 * Tool of this state made, or a borrowed one for the tool of a program
 * that hosts this state, lua_tool.c). nil for a foreign implementation. */
int fl_tool_of(lua_State* L, fl_steps* s)
{
    futoin_tool* ft;
    if (s->kind == FL_ROOT && s->tool) {
        lua_getiuservalue(L, 1, FL_UV_TOOL);
        return 1;
    }
    fl_gate(L, s, FL_G_ANY, "tool()");
    if (s->kind == FL_PAR && !s->bsi->api->isValid(s->bsi)) {
        return luaL_error(L, "tool(): through the handle of a finished step");
    }
    ft = futoin_async_ext(s->bsi) ? futoin_async_tool(s->bsi) : NULL;
    if (!ft) {
        lua_pushnil(L);
        return 1;
    }
    fl_tool_push_of(L, s->ctx, ft);
    return 1;
}

/* ---- steps of other languages -------------------------------------------- */

/* asi:add_foreign(language, module, function): a step written in another
 * language (futoin_host_add). What cannot be had still adds a step, which
 * fails with InvalidRequest naming it; returns self and whether it was
 * resolved. */
int fl_add_foreign(lua_State* L, fl_steps* s, const char* language,
                   const char* module, const char* function)
{
    fl_ctx* ctx = s->ctx;
    lua_State* prev = ctx->host_L;
    fl_ctx* prev_caller = fl_host_caller;
    int rc;
    fl_gate(L, s, FL_G_ADD, "add_foreign()");
    fl_clear_misuse(ctx);
    ctx->host_L = L; /* a Lua function is resolved on the calling thread */
    fl_host_caller = ctx; /* ... of this state */
    rc = futoin_host_add(s->bsi, language, module, function);
    fl_host_caller = prev_caller;
    ctx->host_L = prev;
    s->flags |= FL_F_ADDED;
    fl_check_misuse(L, ctx, "add_foreign()");
    lua_settop(L, 1);
    lua_pushboolean(L, rc == FUTOIN_OK);
    return 2;
}

/* asi:_add_as(step, onerror, name, file, line): add() of a step the binding
 * makes on the user's behalf (add_foreign's guard around an error handler),
 * shown in async stacks as `name` at the user's file:line instead of as an
 * anonymous function of the Lua layer (futoin_async/polyglot.lua). */
int fl_add_as(lua_State* L, fl_steps* s, int fn, int eh, const char* name,
              const char* file, lua_Integer line)
{
    return add_checked(L, s, fn, eh, name, file, line);
}
