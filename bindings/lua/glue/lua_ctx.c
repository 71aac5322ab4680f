/*
 * The per-state context of the Lua binding: registry references (counted),
 * callback records, the traceback handler of every pcall into Lua, and the
 * capture of misuse reports so that they become Lua errors at the call site.
 *
 * Lifetime. The context is malloc'ed and boxed in a userdata kept in the
 * registry; the box's __gc runs last of all our objects when the state
 * closes (finalizers run in reverse creation order and the box is made in
 * luaopen). Roots and tools are finalized before it, which releases every
 * record they hold. Should something still be held by the runtime at that
 * point (a Lua step inside another language's flow), the context is only
 * marked closed: late releases then touch no Lua state, and the last one
 * frees the context.
 */
#include "futoin_lua.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ctx_key = 0; /* registry key (address) of the box */

typedef struct fl_box
{
    fl_ctx* ctx;
} fl_box;

fl_ctx* fl_ctx_get(lua_State* L)
{
    fl_box* b;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &ctx_key);
    b = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (!b || !b->ctx) {
        luaL_error(L, "futoin_async: the module is not initialised");
    }
    return b->ctx;
}

fl_ctx* fl_ctx_peek(lua_State* L)
{
    fl_box* b;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &ctx_key);
    b = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return b ? b->ctx : NULL;
}

enum { CHUNK_RECS = 256 };

typedef struct fl_chunk
{
    struct fl_chunk* next;
    fl_rec recs[CHUNK_RECS];
} fl_chunk;


static void free_chunks(fl_ctx* ctx)
{
    fl_chunk* c;
    while ((c = ctx->chunks) != NULL) {
        ctx->chunks = c->next;
        free(c);
    }
    ctx->free_recs = NULL;
}

static void ctx_maybe_free(fl_ctx* ctx)
{
    if (ctx->closed && ctx->refs == 0 && ctx->recs == 0) {
        free_chunks(ctx);
        fl_handles_free(ctx);
        free(ctx);
    }
}

static int box_gc(lua_State* L)
{
    fl_box* b = lua_touserdata(L, 1);
    fl_ctx* ctx = b ? b->ctx : NULL;
    if (!ctx) {
        return 0;
    }
    b->ctx = NULL;
    fl_host_close(ctx);
    fl_handles_close(ctx);
    /* Nothing refers to Lua after this: refs still held elsewhere are
     * dropped without touching the state (it is closing). */
    ctx->closed = 1;
    ctx->L = NULL;
    ctx->run_L = NULL;
    ctx_maybe_free(ctx);
    return 0;
}

/* One metatable per kind of object; the Lua layer fills __index. Its key
 * goes in first (an empty table holds its place until then): the key
 * first put in a table that never grows keeps its main position, so every
 * `obj:method` finds __index at the first node it looks at, whatever the
 * string hash seed (fl_methods_new() says why that matters). */
static void open_metatables(lua_State* L, fl_ctx* ctx)
{
    static const char* const names[FL_MT_LIGHT] = {
        "futoin_async.Step", "futoin_async.AsyncSteps", "futoin_async.Parallel",
        "futoin_async.Tool", "futoin_async.Timer", "futoin_async.Opaque"};
    for (int i = 0; i < FL_MT_LIGHT; ++i) { /* FL_MT_LIGHT: lua_handle.c */
        lua_createtable(L, 0, 4);
        lua_newtable(L);
        lua_setfield(L, -2, "__index");
        lua_pushstring(L, names[i]);
        lua_setfield(L, -2, "__name");
        switch (i) {
        case FL_MT_ROOT:
            /* only roots own something; a finalizer on every step handle
             * would cost the GC more than the rest of the step */
            lua_pushcfunction(L, fl_steps_gc);
            lua_setfield(L, -2, "__gc");
            /* fall through */
        case FL_MT_STEP:
        case FL_MT_PAR:
            lua_pushcfunction(L, fl_steps_tostring);
            lua_setfield(L, -2, "__tostring");
            break;
        case FL_MT_TOOL:
            lua_pushcfunction(L, fl_tool_gc);
            lua_setfield(L, -2, "__gc");
            lua_pushcfunction(L, fl_tool_tostring);
            lua_setfield(L, -2, "__tostring");
            break;
        case FL_MT_OPAQUE:
            lua_pushcfunction(L, fl_opaque_gc);
            lua_setfield(L, -2, "__gc");
            lua_pushcfunction(L, fl_opaque_tostring);
            lua_setfield(L, -2, "__tostring");
            break;
        default:
            break;
        }
        ctx->mt[i] = luaL_ref(L, LUA_REGISTRYINDEX); /* fixed: not counted */
    }
}

void fl_methods_new(lua_State* L)
{
    lua_createtable(L, 0, FL_METHODS_SIZE);
    lua_pushcfunction(L, fl_add_native);
    lua_setfield(L, -2, "add");
    lua_pushcfunction(L, fl_success);
    lua_setfield(L, -2, "success");
}

const futoin_async_ext_table* fl_ext_learn(fl_ctx* ctx, FutoInAsyncSteps* bsi)
{
    const futoin_async_ext_table* x = futoin_async_ext(bsi);
    if (!x || x->version < FUTOIN_EXT_VERSION_4 || (ctx->ext && ctx->ext != x)) {
        return NULL; /* not ours, too old, or of another copy of the runtime */
    }
    ctx->ext = x;
    for (int i = 0; i < 3; ++i) {
        if (ctx->ext_api[i] == &ctx->ext_api[i]) {
            ctx->ext_api[i] = bsi->api; /* a step's, a root's, a parallel()'s */
            break;
        }
    }
    return x;
}

fl_ctx* fl_ctx_open(lua_State* L)
{
    fl_box* b;
    fl_ctx* ctx;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &ctx_key);
    b = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (b && b->ctx) {
        return b->ctx; /* required again (package.loaded was cleared) */
    }
    b = lua_newuserdatauv(L, sizeof(*b), 0);
    b->ctx = NULL;
    lua_newtable(L);
    lua_pushcfunction(L, box_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        luaL_error(L, "futoin_async: out of memory");
    }
    b->ctx = ctx;
    lua_rawsetp(L, LUA_REGISTRYINDEX, &ctx_key);

    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    ctx->L = lua_tothread(L, -1);
    lua_pop(L, 1);
    for (int i = 0; i < 3; ++i) {
        ctx->ext_api[i] = &ctx->ext_api[i]; /* no api table is there */
    }
    ctx->err_new = LUA_NOREF;
    ctx->bytes_mt = LUA_NOREF;
    ctx->co_steps = LUA_NOREF;
    ctx->async_fns = LUA_NOREF;
    lua_newtable(L); /* Tool objects by futoin_tool*: weak values */
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    ctx->tools_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* fixed: not counted */
    lua_pushboolean(L, 0);
    ctx->err_slot = luaL_ref(L, LUA_REGISTRYINDEX); /* fixed: not counted */
    lua_pushboolean(L, 0);
    ctx->share_ref = luaL_ref(L, LUA_REGISTRYINDEX); /* fixed: not counted */
    ctx->share_ptr = NULL;
    ctx->share_cnt = 0;
    ctx->pending_state = LUA_NOREF;
    snprintf(ctx->state_name, sizeof(ctx->state_name), "lua.state.%p",
             (void*)ctx);
    open_metatables(L, ctx);
    fl_handles_open(L, ctx);
    fl_state_open(L, ctx);
    fl_host_open(L, ctx);
    return ctx;
}

int fl_ref(lua_State* L, fl_ctx* ctx)
{
    int r = luaL_ref(L, LUA_REGISTRYINDEX);
    if (r >= 0) {
        ++ctx->refs;
    }
    return r;
}

void fl_unref(fl_ctx* ctx, int ref)
{
    if (ref < 0) {
        return;
    }
    --ctx->refs;
    if (ctx->closed) {
        ctx_maybe_free(ctx);
        return;
    }
    {
        lua_State* L = fl_ctx_state(ctx);
        /* Release hooks run inside runtime calls made from any Lua
         * function; make sure the thread has room for luaL_unref. */
        if (lua_checkstack(L, 4)) {
            luaL_unref(L, LUA_REGISTRYINDEX, ref);
        }
    }
}

/* ---- callback records ---------------------------------------------------- */

fl_rec* fl_rec_new(lua_State* L, fl_ctx* ctx, unsigned need)
{
    fl_rec* r = ctx->free_recs;
    if (!r) {
        fl_chunk* c;
        if (ctx->nrecs_total > INT32_MAX - CHUNK_RECS) {
            return NULL;
        }
        c = malloc(sizeof(*c));
        if (!c) {
            return NULL;
        }
        c->next = ctx->chunks;
        ctx->chunks = c;
        /* What a record on the free list always holds (add_fast() in
         * lua_steps.c takes one as it is): its ctx, no live handle, no
         * value, no origin; fl_rec_release() leaves it so. */
        for (int i = CHUNK_RECS - 1; i >= 0; --i) {
            c->recs[i].ref[0] = c->recs[i].ref[1] = c->recs[i].ref[2] = LUA_NOREF;
            c->recs[i].ctx = ctx;
            c->recs[i].live = NULL;
            c->recs[i].has = 0;
            c->recs[i].name = NULL;
            c->recs[i].src = NULL;
            c->recs[i].next = ctx->free_recs;
            ctx->free_recs = &c->recs[i];
        }
        ctx->nrecs_total += CHUNK_RECS;
        r = ctx->free_recs;
    }
    /* still on the free list: raising here loses nothing */
    for (int which = FL_A_FN; which <= FL_A_WAIT; ++which) {
        if (need & (1u << which)) {
            fl_rec_reserve(L, r, which);
        }
    }
    ctx->free_recs = r->next;
    r->ctx = ctx;
    r->live = NULL;
    r->next = NULL;
    r->has = 0;
    r->name = NULL;
    r->src = NULL;
    ++ctx->recs;
    return r;
}

void fl_rec_reserve(lua_State* L, fl_rec* r, int which)
{
    if (r->ref[which - 1] == LUA_NOREF) {
        lua_pushboolean(L, 0);
        r->ref[which - 1] = luaL_ref(L, LUA_REGISTRYINDEX); /* kept: not counted */
    }
}

void fl_rec_set(lua_State* L, fl_rec* r, int which, int idx)
{
    lua_pushvalue(L, idx);
    if (r->ref[which - 1] == LUA_NOREF) {
        r->ref[which - 1] = luaL_ref(L, LUA_REGISTRYINDEX); /* kept: not counted */
    } else {
        lua_rawseti(L, LUA_REGISTRYINDEX, r->ref[which - 1]);
    }
    if (!fl_rec_has(r, which)) {
        r->has |= (uint8_t)(1u << which);
        ++r->ctx->refs;
    }
}

/* Drop the values of the slots in `mask` the record holds. Writing an
 * existing slot allocates nothing: never raises. */
void fl_rec_unshare(fl_rec* r)
{
    fl_ctx* ctx = r->ctx;
    r->has &= (uint8_t)~FL_H_SHARED;
    if (--ctx->share_cnt == 0) {
        lua_State* L;
        ctx->share_ptr = NULL;
        if (ctx->closed) {
            return;
        }
        L = fl_ctx_state(ctx);
        if (lua_checkstack(L, 1)) {
            lua_pushboolean(L, 0);
            lua_rawseti(L, LUA_REGISTRYINDEX, ctx->share_ref);
        }
    }
}

static void rec_clear_mask(fl_rec* r, unsigned mask)
{
    fl_ctx* ctx = r->ctx;
    lua_State* L;
    int unshared = 0;
    mask &= r->has & ((1u << FL_A_FN) | (1u << FL_A_EH) | (1u << FL_A_WAIT) | FL_H_SHARED);
    if ((mask & (1u << FL_A_FN)) && (r->has & FL_H_SHARED)) {
        /* the value is in the shared anchor: nothing of the record's own */
        fl_rec_unshare(r);
        r->has &= (uint8_t)~(1u << FL_A_FN);
        --ctx->refs;
        mask &= ~(1u << FL_A_FN);
        unshared = 1;
    }
    mask &= ~(unsigned)FL_H_SHARED;
    if (!mask) {
        if (unshared && ctx->closed) {
            ctx_maybe_free(ctx);
        }
        return;
    }
    r->has &= (uint8_t)~mask;
    ctx->refs -= (long)((mask >> FL_A_FN) & 1) + (long)((mask >> FL_A_EH) & 1)
                 + (long)((mask >> FL_A_WAIT) & 1);
    if (ctx->closed) {
        ctx_maybe_free(ctx);
        return;
    }
    L = fl_ctx_state(ctx);
    if (!lua_checkstack(L, 1)) {
        return;
    }
    for (int which = FL_A_FN; mask >> which; ++which) {
        if (mask & (1u << which)) {
            lua_pushboolean(L, 0);
            lua_rawseti(L, LUA_REGISTRYINDEX, r->ref[which - 1]);
        }
    }
}

void fl_rec_clear(fl_rec* r, int which)
{
    rec_clear_mask(r, 1u << which);
}

/* Detach the handle object of the record's last call (lua_trampoline.c
 * keeps the same rule inline): it finished, so calls through it are
 * refused from now on; a waiting one that nobody completed lost to a
 * timeout or cancel. A light handle's slot is retired here, once per call
 * (r->live is its only link). */
void fl_rec_detach(fl_rec* r)
{
    fl_steps* s = r->live;
    if (s) {
        if ((s->flags & FL_F_WAITING) && !(s->flags & FL_F_DONE)) {
            s->flags |= FL_F_LOST;
        }
        s->flags |= FL_F_DONE;
        s->flags &= (uint16_t)~FL_F_ACTIVE;
        s->rec = NULL;
        r->live = NULL;
        if (s->flags & FL_F_LIGHT) {
            fl_handle_retire(s);
        }
    }
    if (r->has & (1u << FL_A_WAIT)) {
        fl_rec_clear(r, FL_A_WAIT);
    }
}

/* fl_rec_release() of any record but the usual one (fl_rec_release_fast). */
void fl_rec_release_slow(fl_rec* r)
{
    fl_ctx* ctx = r->ctx;
    if (r->live) {
        fl_rec_detach(r);
    }
    if (r->has == ((1u << FL_A_FN) | FL_H_SHARED)) {
        /* the usual record: the shared step function, nothing else */
        r->has = 0;
        --ctx->refs;
        if (--ctx->share_cnt == 0) {
            ctx->share_ptr = NULL;
            if (!ctx->closed) {
                lua_State* L = fl_ctx_state(ctx);
                if (lua_checkstack(L, 1)) {
                    lua_pushboolean(L, 0);
                    lua_rawseti(L, LUA_REGISTRYINDEX, ctx->share_ref);
                }
            }
        }
    } else if (r->has == 1u << FL_A_FN && !ctx->closed) {
        /* a step function in the record's own slot, nothing else */
        lua_State* L = fl_ctx_state(ctx);
        r->has = 0;
        --ctx->refs;
        if (lua_checkstack(L, 1)) {
            lua_pushboolean(L, 0);
            lua_rawseti(L, LUA_REGISTRYINDEX, r->ref[FL_A_FN - 1]);
        }
    } else {
        rec_clear_mask(r, r->has); /* FN, EH and WAIT */
    }
    if (r->has & FL_H_ORIGIN) {
        free(r->name);
        free(r->src);
        r->name = NULL;
        r->src = NULL;
        r->has = 0; /* as a free record is (fl_rec_new) */
    }
    r->next = ctx->free_recs;
    ctx->free_recs = r;
    --ctx->recs;
    if (ctx->closed) {
        ctx_maybe_free(ctx);
    } else if (ctx->sweepers) {
        fl_tool_sweep_again(ctx); /* lua_tool.c: roots made on a borrowed tool */
    }
}

void fl_rec_release(void* data)
{
    if (!fl_rec_release_fast(data)) {
        fl_rec_release_slow(data);
    }
}

/* ---- errors -------------------------------------------------------------- */

int fl_is_error_obj(lua_State* L, int idx)
{
    int yes;
    if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx)) {
        return 0;
    }
    lua_getfield(L, -1, "__futoin_error");
    yes = lua_toboolean(L, -1);
    lua_pop(L, 2);
    return yes;
}

static int is_handled(lua_State* L, int idx)
{
    int yes;
    if (!fl_is_error_obj(L, idx)) {
        return 0;
    }
    lua_getfield(L, idx, "handled");
    yes = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return yes;
}

void fl_push_error(lua_State* L, fl_ctx* ctx, const char* code,
                   const char* info, int handled)
{
    if (ctx->err_new != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->err_new);
        lua_pushstring(L, code);
        if (info) {
            lua_pushstring(L, info);
        } else {
            lua_pushnil(L);
        }
        lua_pushboolean(L, handled);
        lua_call(L, 3, 1);
        return;
    }
    lua_createtable(L, 0, 3);
    lua_pushstring(L, code);
    lua_setfield(L, -2, "code");
    if (info) {
        lua_pushstring(L, info);
        lua_setfield(L, -2, "info");
    }
    lua_pushboolean(L, handled);
    lua_setfield(L, -2, "handled");
}

/* luaL_traceback() names functions by searching package.loaded for every
 * C frame, which costs tens of microseconds per error in a program with
 * many modules; this is the same format with the names Lua knows from the
 * call site (ar.name) only. */
static void push_traceback(lua_State* L, const char* msg)
{
    enum { MAX_LEVELS = 24 };
    luaL_Buffer b;
    lua_Debug ar;
    int level = 1;
    int shown = 0;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, msg);
    luaL_addstring(&b, "\nstack traceback:");
    while (lua_getstack(L, level, &ar)) {
        lua_getinfo(L, "Slnf", &ar);
        if (*ar.what == 'C' && lua_tocfunction(L, -1) == fl_chain_body) {
            lua_pop(L, 1); /* the binding's own frame between two steps */
            ++level;
            continue;
        }
        lua_pop(L, 1);
        if (++shown > MAX_LEVELS) {
            luaL_addstring(&b, "\n\t...");
            break;
        }
        lua_pushfstring(L, "\n\t%s:", ar.short_src);
        luaL_addvalue(&b);
        if (ar.currentline > 0) {
            lua_pushfstring(L, "%d:", ar.currentline);
            luaL_addvalue(&b);
        }
        if (*ar.namewhat) {
            lua_pushfstring(L, " in %s '%s'", ar.namewhat, ar.name);
        } else if (*ar.what == 'm') {
            lua_pushliteral(L, " in main chunk");
        } else if (*ar.what != 'C') {
            lua_pushfstring(L, " in function <%s:%d>", ar.short_src, ar.linedefined);
        } else {
            lua_pushliteral(L, " in ?");
        }
        luaL_addvalue(&b);
        ++level;
    }
    luaL_pushresult(&b);
}

/* The message handler of every pcall into Lua. An error this binding
 * already reported (asi:error(), break/continue) passes unchanged. For any
 * other error the original object is kept in the registry slot (it becomes
 * last_exception) and the handler returns the traceback text, which
 * becomes error_info. It runs where the error was raised, so the traceback
 * is the Lua stack of the failing code. */
int fl_msgh(lua_State* L)
{
    fl_ctx* ctx;
    const char* msg;
    if (is_handled(L, 1)) {
        return 1;
    }
    lua_rawgetp(L, LUA_REGISTRYINDEX, &ctx_key);
    ctx = ((fl_box*)lua_touserdata(L, -1))->ctx;
    lua_pop(L, 1);
    lua_pushvalue(L, 1);
    lua_rawseti(L, LUA_REGISTRYINDEX, ctx->err_slot);
    if (fl_is_error_obj(L, 1)) {
        return 1; /* raised by hand: its code and info are kept as they are */
    }
    msg = lua_tostring(L, 1);
    if (!msg) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) {
            msg = lua_tostring(L, -1);
        } else {
            msg = lua_pushfstring(L, "(error object is a %s value)",
                                  luaL_typename(L, 1));
        }
    }
    push_traceback(L, msg);
    return 1;
}

/* ---- misuse -------------------------------------------------------------- */

void fl_on_misuse(void* data, const char* code, const char* message)
{
    fl_ctx* ctx = data;
    const char* m = message ? message : "API misuse";
    size_t n = strlen(m);
    (void)code;
    if (!ctx) {
        return;
    }
    /* a copy, cut to fit (no formatting: nothing for _FORTIFY_SOURCE to
     * leave unchecked) */
    if (n >= sizeof(ctx->misuse_msg)) {
        n = sizeof(ctx->misuse_msg) - 1;
    }
    memcpy(ctx->misuse_msg, m, n);
    ctx->misuse_msg[n] = 0;
    ctx->misuse = 1;
}

void fl_raise_misuse(lua_State* L, fl_ctx* ctx, const char* what)
{
    ctx->misuse = 0;
    luaL_error(L, "%s: %s", what, ctx->misuse_msg);
}
