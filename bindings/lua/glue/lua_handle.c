/*
 * Step handles (the `asi` a Lua step gets) as light userdata.
 *
 * Why. A full userdata per step costs an allocation, its metatable and
 * the garbage collector's work on it: about 450 instructions of a step
 * that otherwise costs 3,000-4,000. Lua has no reference counts, so a
 * userdata cannot be reused when nobody kept it (as the Python binding
 * reuses its spare step object): a kept handle of a finished step would
 * then act on a later step. A light userdata is a value, not an object:
 * making one allocates nothing, and each call gets a value of its own.
 *
 * The value. Bits 63-60 hold a tag no user-space pointer has on 64-bit
 * targets (0xA: not canonical on x86-64 nor on AArch64 without tagging),
 * then the context's number (8 bits), the slot's index (20 bits) and the
 * slot's generation (32 bits). A slot holds the fl_steps of one call, so
 * every method works on handles of both kinds alike. A value is ours when
 * its tag and context number match and its index is in range; its
 * generation says whether the slot still describes that call.
 *
 * Retired slots. A call's slot is retired when the call is over (the
 * record is detached, lua_ctx.c) and is reused FIFO only after
 * FL_HANDLE_QUARANTINE other slots were retired after it, as the runtime
 * retires its step records: until then a kept handle of a finished step
 * finds the exact final state of its call ("has finished", "already
 * completed", a late completion of a step lost to a timeout returns
 * false). After that its slot serves another call and the handle reads as
 * the context's `ghost`, a finished step of unknown fate: every method
 * refuses it with "has finished", but success()/error() return false, as
 * for a completion that lost its race, because such a late completion may
 * come from a luv callback, where raising would end the process.
 *
 * Methods. Light userdata share one metatable per Lua state. The module
 * takes it when no one else has (else, or when another module replaces
 * it later, this state goes back to full userdata handles): its __index
 * is the methods table of handles and its __tostring prints other light
 * userdata as Lua does. Indexing some other light userdata then yields a
 * method (or nil) instead of an error, and calling a method on it is
 * refused with "expected an AsyncSteps handle as self".
 */
#include "futoin_lua.h"

#include <stdlib.h>

enum
{
    FL_HANDLE_MAX_IDS = 256,
    FL_HANDLE_MAX_SLOTS = 1 << 20
};

/* Written when a state opens or closes, read by the state's own thread. */
_Atomic(fl_ctx*) fl_handle_ctx[FL_HANDLE_MAX_IDS];

/* __tostring of light userdata: ours as handles, others as Lua prints them. */
static int light_tostring(lua_State* L)
{
    void* p = lua_touserdata(L, 1);
    if (fl_handle_is_light(p) && fl_handle_decode(p)) {
        return fl_steps_tostring(L);
    }
    lua_pushfstring(L, "userdata: %p", p);
    return 1;
}

/* Is the metatable of light userdata ours? (pushes nothing) */
static int light_mt_is_ours(lua_State* L, fl_ctx* ctx)
{
    int ours = 0;
    lua_pushlightuserdata(L, NULL);
    if (lua_getmetatable(L, -1)) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->mt[FL_MT_LIGHT]);
        ours = lua_rawequal(L, -1, -2);
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
    return ours;
}

void fl_handles_open(lua_State* L, fl_ctx* ctx)
{
    ctx->ghost.magic = &fl_steps_magic;
    ctx->ghost.ctx = ctx;
    ctx->ghost.kind = FL_STEP;
    ctx->ghost.flags = FL_F_DONE | FL_F_LOST | FL_F_GHOST;

    lua_createtable(L, 0, 2);
    lua_newtable(L); /* __index first (open_metatables(), lua_ctx.c) */
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, light_tostring);
    lua_setfield(L, -2, "__tostring");
    ctx->mt[FL_MT_LIGHT] = luaL_ref(L, LUA_REGISTRYINDEX); /* fixed */

    ctx->light = 0;
    if (!FL_HANDLE_BITS || getenv("FUTOIN_LUA_FULL_HANDLES")) {
        return;
    }
    for (unsigned id = 0; id < FL_HANDLE_MAX_IDS; ++id) {
        fl_ctx* none = NULL;
        if (atomic_compare_exchange_strong(&fl_handle_ctx[id], &none, ctx)) {
            ctx->light_id = id;
            ctx->light_claimed = 1;
            ctx->light = 1;
            break;
        }
    }
    if (!ctx->light) {
        return; /* more states than numbers: full userdata */
    }
    lua_pushlightuserdata(L, NULL);
    if (lua_getmetatable(L, -1)) {
        lua_pop(L, 2); /* someone else's: leave it alone */
        ctx->light = 0;
        return;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->mt[FL_MT_LIGHT]);
    lua_setmetatable(L, -2);
    lua_pop(L, 1);
}

void fl_handles_check(lua_State* L, fl_ctx* ctx)
{
    if (ctx->light && !light_mt_is_ours(L, ctx)) {
        ctx->light = 0; /* replaced by another module: new calls get userdata */
    }
}

void fl_handles_close(fl_ctx* ctx)
{
    if (ctx->light_claimed) {
        atomic_store(&fl_handle_ctx[ctx->light_id], NULL);
        ctx->light_claimed = 0;
    }
    ctx->light = 0;
}

void fl_handles_free(fl_ctx* ctx)
{
    for (uint32_t i = 0; i < ctx->nhchunks; ++i) {
        free(ctx->hchunks[i]);
    }
    free(ctx->hchunks);
    ctx->hchunks = NULL;
    ctx->nhchunks = 0;
    ctx->nhslots = 0;
}

fl_hslot* fl_handle_grow(fl_ctx* ctx)
{
    uint32_t idx = ctx->nhslots;
    fl_hslot* h;
    if (idx % FL_HANDLE_CHUNK == 0) {
        uint32_t n = idx / FL_HANDLE_CHUNK;
        if (idx >= FL_HANDLE_MAX_SLOTS) {
            return NULL;
        }
        if (n >= ctx->nhchunks) {
            uint32_t cap = ctx->nhchunks ? 2 * ctx->nhchunks : 16;
            fl_hslot** a = realloc(ctx->hchunks, cap * sizeof(*a));
            if (!a) {
                return NULL;
            }
            for (uint32_t i = ctx->nhchunks; i < cap; ++i) {
                a[i] = NULL;
            }
            ctx->hchunks = a;
            ctx->nhchunks = cap;
        }
        if (!ctx->hchunks[n]) {
            ctx->hchunks[n] = calloc(FL_HANDLE_CHUNK, sizeof(fl_hslot));
            if (!ctx->hchunks[n]) {
                return NULL;
            }
        }
    }
    h = &ctx->hchunks[idx / FL_HANDLE_CHUNK][idx % FL_HANDLE_CHUNK];
    /* bits 63-32 of its values: tag 0xA, context number, index */
    h->hi = (0xAu << 28) | ((uint32_t)ctx->light_id << 20) | idx;
    /* for the slot's life: fl_handle_new() sets only what changes */
    h->s.magic = &fl_steps_magic;
    h->s.ctx = ctx;
    h->s.tool = NULL;
    h->s.kind = FL_STEP;
    h->next = NULL;
    ctx->nhslots = idx + 1;
    return h;
}
