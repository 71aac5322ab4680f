/*
 * The trampolines: how the runtime calls Lua functions as steps, error
 * handlers, cancel handlers and loop bodies. Each call gets a handle (asi)
 * of its own, runs protected with the traceback handler, and what it did
 * is read back: an error it raised goes into the flow (a handled
 * FutoInError is already there), values it returned are its result (rule
 * 1 of the cross-language contract), and its handle is retired unless the
 * step waits (FTN12 §1.3).
 */
#include "futoin_lua.h"
#include "lua_steps.h"

#include <stdio.h>
#include <string.h>

/* ---- trampolines --------------------------------------------------------- */

/* The flags of a call's handle. */
static uint16_t call_flags(int kind)
{
    switch (kind) {
    case FL_CALL_ERROR: return FL_F_ACTIVE | FL_F_ERRH;
    case FL_CALL_CANCEL: return FL_F_ACTIVE | FL_F_CANCELH;
    default: return FL_F_ACTIVE;
    }
}

/* Runs protected: build the call and make it (the slow path of invoke():
 * what may allocate or raise before the call). */
static int call_body(lua_State* L)
{
    fl_call* c = lua_touserdata(L, 1);
    fl_rec* r = c->rec;
    fl_ctx* ctx = r->ctx;
    fl_steps* s;
    int n = 1;

    fl_rec_push(L, r, c->kind == FL_CALL_ERROR ? FL_A_EH : FL_A_FN);
    if (c->s) {
        lua_pushlightuserdata(L, fl_handle_value(c->s)); /* made by invoke() */
    } else {
        s = fl_push_steps(L, ctx, c->bsi, FL_STEP, 0);
        s->rec = r;
        r->live = s;
        c->s = s;
        c->hv = NULL;
        s->flags = call_flags(c->kind);
    }
    switch (c->kind) {
    case FL_CALL_STEP:
        n += fl_push_args(L, ctx, c->args);
        break;
    case FL_CALL_ERROR:
        lua_pushstring(L, c->code ? c->code : FUTOIN_ERR_INTERNAL_ERROR);
        ++n;
        break;
    case FL_CALL_REPEAT:
        lua_pushinteger(L, (lua_Integer)c->index + 1); /* Lua counts from 1 */
        ++n;
        break;
    default:
        break;
    }
    lua_call(L, n, LUA_MULTRET);
    return lua_gettop(L) - 1; /* what it returned */
}

/* Runs protected: what a failed call means for the flow. In: the value
 * the pcall left (the traceback, or an error object). Out: code, info,
 * reference of the exception object (or nothing for a handled error). */
static int call_analyze(lua_State* L)
{
    fl_ctx* ctx = lua_touserdata(L, 2);
    if (fl_is_error_obj(L, 1)) {
        lua_getfield(L, 1, "handled");
        if (lua_toboolean(L, -1)) {
            return 0; /* asi:error(), break, continue: already reported */
        }
        lua_getfield(L, 1, "code");
        if (lua_type(L, -1) != LUA_TSTRING) {
            lua_pop(L, 1);
            lua_pushliteral(L, FUTOIN_ERR_INTERNAL_ERROR);
        }
        lua_getfield(L, 1, "info");
        if (!lua_isstring(L, -1)) {
            lua_pop(L, 1);
            lua_pushnil(L);
        } else {
            lua_tostring(L, -1);
        }
        lua_pushvalue(L, 1);
    } else {
        lua_pushliteral(L, FUTOIN_ERR_INTERNAL_ERROR);
        if (lua_type(L, 1) == LUA_TSTRING) {
            lua_pushvalue(L, 1); /* the traceback */
        } else {
            lua_pushliteral(L, "Lua error");
        }
        lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->err_slot); /* the original */
    }
    lua_pushinteger(L, fl_ref(L, ctx));
    return 3;
}

/* A call failed with status `st` (error value on top). Report it into the
 * flow (in_flow) or print it (cancel handlers have no flow to report to). */
static void call_failed(lua_State* L, fl_ctx* ctx, fl_call* c, int st)
{
    int base = lua_gettop(L);
    const char* code = FUTOIN_ERR_INTERNAL_ERROR;
    const char* info = NULL;
    int ref = LUA_NOREF;
    int in_flow = c->kind != FL_CALL_CANCEL;

    if (st == LUA_ERRMEM) {
        info = "Lua: not enough memory";
    } else if (st == LUA_ERRERR) {
        info = "Lua: error in the error handler";
    } else {
        lua_pushcfunction(L, call_analyze);
        lua_pushvalue(L, base);
        lua_pushlightuserdata(L, ctx);
        if (lua_pcall(L, 2, 3, 0) != LUA_OK) {
            info = "Lua: could not read the error";
        } else if (lua_isnil(L, -3)) {
            lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->err_slot);
            lua_settop(L, base);
            return; /* handled */
        } else {
            code = lua_tostring(L, -3);
            info = lua_tostring(L, -2);
            ref = (int)lua_tointeger(L, -1);
        }
    }
    lua_pushboolean(L, 0);
    lua_rawseti(L, LUA_REGISTRYINDEX, ctx->err_slot);
    if (c->s) {
        c->s->flags |= FL_F_FAILED;
    }
    if (!in_flow) {
        fprintf(stderr, "futoin_async: error in a cancel handler: %s\n",
                info ? info : code);
        fl_unref(ctx, ref);
    } else {
        if (ref >= 0) {
            FutoInBinaryValue ex;
            fl_custom_adopt(ctx, ref, &ex); /* the value owns the reference */
            futoin_wrap_set_last_exception(c->bsi, &ex);
        }
        c->bsi->api->handle_error(c->bsi, code, info);
    }
    lua_settop(L, base);
}

/* ---- a step's return value ------------------------------------------------ *
 *
 * Rule 1 of the cross-language contract: what a step (or an error handler,
 * or a loop body) returns, other than nothing, is its result, as if it had
 * called success(...) last (several values: several results). What add()
 * and its kin return for chaining (the handle itself, a parallel() handle)
 * is not a value. A step that also completed, waited or added sub-steps
 * itself fails with InternalError saying so: the values would otherwise be
 * lost. */

typedef struct fl_ret
{
    fl_call* c;
    FutoInArgs a;
    int n; /* values converted into `a`, or -1: an error to report */
} fl_ret;

/* What the handle's call did that leaves no room for a returned value. */
static const char* returned_after(uint16_t f)
{
    if (f & FL_F_SUCCESS) {
        return "success()";
    }
    if (f & FL_F_FAILED) {
        return "error()";
    }
    if (f & FL_F_ADDED) {
        return "add() (or another call that adds steps)";
    }
    if (f & FL_F_WAITING) {
        return "set_cancel(), set_timeout() or wait_external() (so it waits)";
    }
    return NULL;
}

/* Runs protected: (fl_ret, values...) -> the values in ret->a, or the
 * message and the reference of an InternalError object explaining why
 * they cannot be the result (ret->n = -1). */
static int returned_body(lua_State* L)
{
    fl_ret* rt = lua_touserdata(L, 1);
    fl_ctx* ctx = rt->c->s->ctx;
    int n = lua_gettop(L) - 1;
    const char* did = returned_after(rt->c->s->flags);
    const char* msg;
    if (!did && n <= 4) {
        fl_args_from(L, ctx, 2, n, &rt->a); /* raises: nothing converted */
        rt->n = n;
        return 0;
    }
    if (did) {
        msg = lua_pushfstring(L, "a step returned a value (%s) after it called %s: "
                                 "return the values instead, or return nothing",
                              luaL_typename(L, 2), did);
    } else {
        msg = lua_pushfstring(L, "a step returned %d values: at most 4 "
                                 "(FTN12 FutoInArgs)", n);
    }
    fl_push_error(L, ctx, FUTOIN_ERR_INTERNAL_ERROR, msg, 0);
    lua_pushinteger(L, fl_ref(L, ctx)); /* (msg, reference of the error) */
    rt->n = -1;
    return 2;
}

/* The call of `c` returned the values from `first` to the top. */
static void call_returned(lua_State* L, fl_ctx* ctx, fl_call* c, int first)
{
    fl_steps* s = c->s;
    int n = lua_gettop(L) - first + 1;
    fl_ret rt;
    int st;
    if (c->kind == FL_CALL_CANCEL || !s || (s->flags & (FL_F_DONE | FL_F_FAILED))) {
        /* no flow takes it (a cancel handler, a cancelled flow), or the
         * step already fails with its own error, which stands */
        return;
    }
    if (fl_to_steps(L, first)) {
        return; /* `return asi:add(...)`: the chaining result */
    }
    if (!lua_checkstack(L, 4)) {
        c->bsi->api->handle_error(c->bsi, FUTOIN_ERR_INTERNAL_ERROR,
                                  "Lua: stack overflow");
        s->flags |= FL_F_FAILED;
        return;
    }
    rt.c = c;
    rt.n = -1;
    lua_pushcfunction(L, returned_body);
    lua_insert(L, first);
    lua_pushlightuserdata(L, &rt);
    lua_insert(L, first + 1);
    st = lua_pcall(L, n + 1, 2, 0);
    if (st == LUA_OK && rt.n >= 0) {
        s->bsi->api->success(s->bsi, rt.n ? &rt.a : NULL);
        fl_args_reset(&rt.a);
        s->flags |= FL_F_SUCCESS;
    } else {
        const char* info;
        if (st == LUA_OK) {
            FutoInBinaryValue ex;
            info = lua_tostring(L, -2);
            fl_custom_adopt(ctx, (int)lua_tointeger(L, -1), &ex);
            futoin_wrap_set_last_exception(c->bsi, &ex);
        } else {
            info = lua_tostring(L, -1); /* the value could not be converted */
        }
        c->bsi->api->handle_error(c->bsi, FUTOIN_ERR_INTERNAL_ERROR, info);
        s->flags |= FL_F_FAILED;
    }
    fl_clear_misuse(ctx);
}

/* ---- a kept success() and chained steps ----------------------------------- *
 *
 * A step's own success() of scalars (lua_complete.c) is kept by its call
 * (fl_call.kept) instead of going to the runtime at once. When the call
 * returns having done nothing else, the runtime's chain() (futoin/sys/
 * ext.h) completes the step and starts the next one if that is a Lua step
 * too: it runs here, in the same call from the runtime, with the kept
 * values as its arguments, and neither the values nor the step's end go
 * through the runtime's completion path. Otherwise the kept success() is
 * given to the runtime then. Anything else that reaches the runtime
 * through the handle meanwhile gives it first (fl_check_steps), and so
 * does a call that fails or returns values, so the runtime sees every call
 * in the order the step made them.
 *
 * The chained steps of one context run in one protected call
 * (chain_body), each with lua_call: the message handler, the stack check
 * and the setjmp of lua_pcall are paid once per run of steps instead of
 * once per step. An error in any of them unwinds to that pcall, where `c`
 * describes the step that raised it. */

const FutoInArgs fl_args_int; /* only its address is used */

/* The one integer a chained step got (fl_args_int) as real FutoInArgs, in
 * the buffer its call does not keep values in (c->spare): before the call
 * goes anywhere but the chained run (fl_chain_body). */
static void call_args_fill(fl_call* c)
{
    FutoInBinaryValue* v = &c->spare->args[0];
    v->type = &fl_ty_i64;
    v->i64 = (int64_t)c->arg_i;
    v->custom_data = NULL;
    v->length = 0;
    c->spare->args[1].type = NULL; /* readers stop at the first empty slot */
    c->args = c->spare;
}

/* The kept values of call `c` to the runtime (s: its handle). */
static void kept_give(fl_call* c, fl_steps* s)
{
    int n = c->kept_n;
    if (n == FL_KEPT_INT) {
        FutoInBinaryValue* v = &c->kept->args[0];
        v->type = &fl_ty_i64;
        v->i64 = (int64_t)c->kept_i;
        v->custom_data = NULL;
        v->length = 0;
        n = 1;
    }
    s->flags &= (uint16_t)~FL_F_KEPT;
    if (n < 4) {
        memset(&c->kept->args[n], 0, sizeof(c->kept->args[0]) * (size_t)(4 - n));
    }
    fl_clear_misuse(s->ctx);
    c->bsi->api->success(c->bsi, n ? c->kept : NULL);
    fl_clear_misuse(s->ctx); /* taken: a step that did nothing else */
}

void fl_kept_flush(fl_steps* s)
{
    fl_call* c = s->ctx->cur_call;
    while (c && c->s != s) {
        c = c->prev; /* a nested call of the same context runs now */
    }
    if (c) {
        kept_give(c, s);
    } else {
        s->flags &= (uint16_t)~FL_F_KEPT; /* not reached: kept only in a call */
    }
}

static const FutoInAsyncSteps_execute_callback chain_fns[] = {fl_tr_step};

/* Did the call of step handle `s` (flags `f`, not active any more) end as
 * the usual step does: nothing returned (checked by the caller), nothing
 * done through its handle but maybe a kept success()? */
static inline int call_plain(const fl_rec* r, const fl_steps* s, uint16_t f)
{
    return (f == FL_F_LIGHT || f == (FL_F_LIGHT | FL_F_SUCCESS | FL_F_KEPT))
           && r->live == s && !(r->has & (1u << FL_A_WAIT));
}

/* After the plain end of the call of step handle `s` (call_plain): the
 * handle is finished (fl_rec_detach(), inline), then chain the next Lua
 * step into `c` (returns 1: c->rec is its record, c->args its values),
 * or give the kept success() (returns 0). `x`: fl_ext_of() of c->bsi;
 * kept_ok: it has chain_kept() (version 8). */
static inline __attribute__((always_inline)) int chain_next(fl_call* c, fl_steps* s,
                                                            uint16_t f,
                                                            const futoin_async_ext_table* x,
                                                            int kept_ok)
{
    fl_rec* r = c->rec;
    FutoInAsyncSteps* next;
    void* data;
    s->flags = (uint16_t)((f & ~FL_F_KEPT) | FL_F_DONE);
    s->rec = NULL;
    r->live = NULL;
    fl_handle_retire(s);
    if (kept_ok) {
        /* the step's record is released here, inline for the usual one,
         * instead of through its release hook */
        if (!(next = x->chain_kept(c->bsi, chain_fns, 1, &data))) {
            goto give;
        }
        {
            fl_ctx* ctx = r->ctx;
            /* fl_rec_release_fast() of the usual record, less what holds
             * here: its handle is detached (above) and the context open
             * (its Lua step just ran) */
            if (r->has == ((1u << FL_A_FN) | FL_H_SHARED) && ctx->share_cnt > 1
                && !ctx->sweepers) { /* has: no origin either */
                fl_rec_release_usual(ctx, r);
            } else {
                fl_rec_release_slow(r);
            }
        }
    } else if (!x || !(next = x->chain(c->bsi, chain_fns, 1, &data))) {
        goto give;
    }
    /* the step ended as its success() said; the next one gets its values
     * (none after an implicit success()) */
    c->args = NULL;
    if (f & FL_F_KEPT) {
        int n = c->kept_n;
        if (n == FL_KEPT_INT) {
            /* one integer: no buffer changes hands */
            c->arg_i = c->kept_i;
            c->args = &fl_args_int;
        } else if (n) {
            FutoInArgs* in = c->kept;
            if (n < 4) {
                in->args[n].type = NULL; /* readers stop at the first empty slot */
            }
            c->kept = c->spare;
            c->spare = in;
            c->args = in;
        }
    }
    c->bsi = next;
    c->rec = data;
    c->s = NULL;
    c->hv = NULL;
    return 1;
give:
    if (f & FL_F_KEPT) {
        kept_give(c, s);
    }
    return 0;
}

/* How a run of chained steps (chain_body) ended: fl_call.chained. */
enum
{
    FL_CHAIN_CALL = 0, /* its last call ended otherwise: c->s to finish */
    FL_CHAIN_DONE = 1, /* its last call ended plainly, nothing chained */
    FL_CHAIN_AWAY = 2  /* the next step is of another context: `c` is its call */
};

/* Runs protected (invoke_inl): (c) -> what the last step returned. The
 * steps chained into `c` after its first, of c's context, one after
 * another while they end plainly and the runtime chains the next.
 * Tracebacks leave its frame out (lua_ctx.c): a step's traceback reads as
 * if the runtime had called the step itself.
 *
 * Stack: 1 `c`, 2 the context's shared step function (fl_rec) as last
 * read from its registry slot, or nil; then the call. A run of steps of
 * one function (a loop adding one handler, a named function) pushes it
 * with lua_pushvalue() from slot 2 instead of a registry read per step.
 * Slot 2 keeps the function alive, so while the anchor's pointer is the
 * one read into it (`fn`), slot 2 holds the anchored function. */
int fl_chain_body(lua_State* L)
{
    fl_call* c = lua_touserdata(L, 1);
    fl_ctx* ctx = c->rec->ctx;
    const void* fn = NULL; /* what slot 2 holds, if anything */
    /* every step of the run is a handle chain() of this table returned */
    const futoin_async_ext_table* x = fl_ext_of(ctx, c->bsi);
    const int kept_ok = x && x->version >= FUTOIN_EXT_VERSION_8;
    lua_pushnil(L);
    for (;;) {
        fl_rec* r = c->rec;
        fl_steps* s;
        int n = 1;
        uint16_t f;
        if (r->live || fl_rec_has(r, FL_A_WAIT)) {
            fl_rec_detach(r);
        }
        ctx->cur_bsi = c->bsi;
        if (!(r->has & FL_H_SHARED)) {
            fl_rec_push(L, r, FL_A_FN);
        } else if (fn && fn == ctx->share_ptr) {
            lua_pushvalue(L, 2);
        } else {
            lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->share_ref);
            lua_copy(L, -1, 2);
            fn = ctx->share_ptr;
        }
        if (ctx->light && (s = fl_handle_new(ctx, c->bsi)) != NULL) {
            /* all set before the push: the stores fl_handle_new() made
             * are overwritten here, not repeated */
            s->rec = r;
            s->flags = FL_F_LIGHT | FL_F_ACTIVE;
            r->live = s;
            c->s = s;
            c->hv = fl_handle_value(s);
            lua_pushlightuserdata(L, c->hv);
        } else {
            s = fl_push_steps(L, ctx, c->bsi, FL_STEP, 0); /* may raise */
            s->rec = r;
            s->flags |= FL_F_ACTIVE;
            r->live = s;
            c->s = s;
        }
        if (c->args == &fl_args_int) {
            lua_pushinteger(L, c->arg_i); /* the usual one */
            ++n;
        } else if (c->args) {
            const FutoInBinaryValue* v = &c->args->args[0];
            if (v->type == &fl_ty_i64 && !c->args->args[1].type) {
                lua_pushinteger(L, (lua_Integer)v->i64);
                ++n;
            } else {
                n += fl_push_args(L, ctx, c->args);
            }
        }
        lua_call(L, n, LUA_MULTRET);
        /* the flags are read after lua_gettop(): no value lives across it */
        if (lua_gettop(L) != 2) {
            s->flags &= (uint16_t)~FL_F_ACTIVE;
            return lua_gettop(L) - 2; /* invoke_inl() finishes the call */
        }
        f = (uint16_t)(s->flags & ~FL_F_ACTIVE);
        if (!call_plain(r, s, f)) {
            s->flags = f;
            return 0; /* invoke_inl() finishes the call */
        }
        if (!chain_next(c, s, f, x, kept_ok)) {
            c->chained = FL_CHAIN_DONE;
            return 0;
        }
        if (c->rec->ctx != ctx) {
            c->chained = FL_CHAIN_AWAY;
            return 0;
        }
    }
}

/* The handler sits below the function and its arguments; after the call
 * the stack goes back to where it was (`base`), whatever the call left:
 * values it returned (call_returned) or the error value (call_failed).
 * Returns 1 when the runtime started the next step, a Lua step of another
 * context, in place (chain_next): `c` is then that step's call, to be
 * made next. */
static inline __attribute__((always_inline)) int invoke_inl(fl_call* c)
{
    fl_rec* r = c->rec;
    fl_ctx* ctx = r->ctx;
    lua_State* L;
    FutoInAsyncSteps* prev;
    int st;
    fl_steps* s;
    int base;

    if (c->args == &fl_args_int) {
        call_args_fill(c); /* chained from a call of another context */
    }
    if (ctx->closed) {
        if (c->kind != FL_CALL_CANCEL) {
            c->bsi->api->handle_error(c->bsi, FUTOIN_ERR_INTERNAL_ERROR,
                                      "the Lua state of this step was closed");
        }
        return 0;
    }
    /* The previous call of this record (a loop's last iteration, the step
     * whose error handler this is) is over. */
    if (r->live || fl_rec_has(r, FL_A_WAIT)) {
        fl_rec_detach(r);
    }
    L = fl_ctx_state(ctx);
    if (!lua_checkstack(L, 12)) {
        if (c->kind != FL_CALL_CANCEL) {
            c->bsi->api->handle_error(c->bsi, FUTOIN_ERR_INTERNAL_ERROR,
                                      "Lua: stack overflow");
        }
        return 0;
    }
    prev = ctx->cur_bsi;
    ctx->cur_bsi = c->bsi;
    c->prev = ctx->cur_call;
    ctx->cur_call = c;
    base = lua_gettop(L);
    lua_pushcfunction(L, fl_msgh);
    if (ctx->light && (s = fl_handle_new(ctx, c->bsi)) != NULL) {
        s->rec = r;
        r->live = s;
        c->s = s;
        c->hv = NULL;
        s->flags |= call_flags(c->kind);
        /* The fast path: nothing below allocates or raises (the stack was
         * checked; values that would allocate go the slow way), so the
         * function is called directly, without call_body's C frame. */
        if (c->kind == FL_CALL_STEP || c->kind == FL_CALL_LOOP || c->kind == FL_CALL_REPEAT) {
            int n = 1;
            void* hv = fl_handle_value(s);
            fl_rec_push(L, r, FL_A_FN);
            lua_pushlightuserdata(L, hv);
            if (c->kind == FL_CALL_STEP) {
                c->hv = hv;
            }
            if (c->kind == FL_CALL_REPEAT) {
                lua_pushinteger(L, (lua_Integer)c->index + 1); /* Lua counts from 1 */
                ++n;
            } else if (c->kind == FL_CALL_STEP && c->args && c->args->args[0].type) {
                const FutoInBinaryValue* v = &c->args->args[0];
                if (v->type == &fl_ty_i64 && !c->args->args[1].type) {
                    lua_pushinteger(L, (lua_Integer)v->i64); /* the usual one */
                    ++n;
                } else {
                    int k = fl_push_args_plain(L, ctx, c->args);
                    n = k < 0 ? -1 : n + k;
                }
            }
            if (n >= 0) {
                st = lua_pcall(L, n, LUA_MULTRET, -(n + 2));
                goto called;
            }
            lua_settop(L, -3); /* the function and the handle: pushed nothing else */
        }
    }
    lua_pushcfunction(L, call_body);
    lua_pushlightuserdata(L, c);
    st = lua_pcall(L, 1, LUA_MULTRET, -3);
called:
    ctx->cur_bsi = prev;
    ctx->cur_call = c->prev;
    r = c->rec; /* the last step chain_body ran, if it ran */
    s = c->s;
    if (s) {
        uint16_t f = (uint16_t)(s->flags & ~FL_F_ACTIVE);
        s->flags = f;
        if (c->kind == FL_CALL_STEP && st == LUA_OK && lua_gettop(L) == base + 1
            && call_plain(r, s, f)) {
            /* The usual step: it returned nothing and did nothing but
             * (maybe) success(). The next step may run right here. */
            const futoin_async_ext_table* x = fl_ext_of(ctx, c->bsi);
            if (!chain_next(c, s, f, x, x && x->version >= FUTOIN_EXT_VERSION_8)) {
                lua_settop(L, base);
                return 0;
            }
            if (c->rec->ctx != ctx) {
                lua_settop(L, base);
                return 1;
            }
            /* the handler stays at base + 1 for the run */
            ctx->cur_bsi = c->bsi;
            ctx->cur_call = c;
            c->chained = FL_CHAIN_CALL;
            lua_pushcfunction(L, fl_chain_body);
            lua_pushlightuserdata(L, c);
            st = lua_pcall(L, 1, LUA_MULTRET, base + 1);
            if (st == LUA_OK && c->chained != FL_CHAIN_CALL) {
                ctx->cur_bsi = prev;
                ctx->cur_call = c->prev;
                lua_settop(L, base);
                return c->chained == FL_CHAIN_AWAY;
            }
            goto called; /* its last step ended otherwise */
        }
        if (f & FL_F_KEPT) {
            kept_give(c, s); /* before what the call did after success() */
        }
    }
    if (st != LUA_OK) {
        call_failed(L, ctx, c, st);
    } else if (lua_gettop(L) > base + 1) {
        /* trailing nils are no values: `return nil`, `return maybe` */
        int top = lua_gettop(L);
        while (top > base + 1 && lua_isnil(L, top)) {
            --top;
        }
        if (top > base + 1) {
            lua_settop(L, top);
            call_returned(L, ctx, c, base + 2);
        }
    }
    if (s && r->live == s) {
        uint16_t f = s->flags;
        if ((f & (FL_F_LIGHT | FL_F_WAITING)) == FL_F_LIGHT
            && !(r->has & (1u << FL_A_WAIT))) {
            /* fl_rec_detach() of the usual call, inline */
            s->flags = (uint16_t)(f | FL_F_DONE);
            s->rec = NULL;
            r->live = NULL;
            fl_handle_retire(s);
        } else if (!(f & FL_F_WAITING)
                   || (f & (FL_F_SUCCESS | FL_F_FAILED | FL_F_ADDED))) {
            /* finished: it completed, or runs sub-steps, so it did not end
             * up waiting (a waiting one stays usable, FTN12 §1.3) */
            s->flags = (uint16_t)(f & ~FL_F_WAITING);
            fl_rec_detach(r);
        }
    }
    lua_settop(L, base);
    return 0;
}

static void invoke(fl_call* c)
{
    invoke_inl(c);
}

void fl_tr_step(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    /* two buffers for kept values: those of the step running now (its
     * args, once chained) and those it keeps for the next */
    FutoInArgs kept[2];
    fl_call c = {.bsi = bsi, .rec = data, .args = args, .kind = FL_CALL_STEP,
                 .kept = &kept[0], .spare = &kept[1]};
    while (invoke_inl(&c)) {
    }
}

void fl_tr_error(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    fl_call c = {bsi, data, NULL, code, 0, FL_CALL_ERROR, NULL};
    invoke(&c);
}

void fl_tr_cancel(FutoInAsyncSteps* bsi, void* data)
{
    fl_call c = {bsi, data, NULL, NULL, 0, FL_CALL_CANCEL, NULL};
    invoke(&c);
}

void fl_tr_loop(FutoInAsyncSteps* bsi, void* data)
{
    fl_call c = {bsi, data, NULL, NULL, 0, FL_CALL_LOOP, NULL};
    invoke(&c);
}

void fl_tr_repeat(FutoInAsyncSteps* bsi, void* data, size_t i)
{
    fl_call c = {bsi, data, NULL, NULL, i, FL_CALL_REPEAT, NULL};
    invoke(&c);
}
