/*
 * The flow's state for Lua: state() tables (in the root object, or in the
 * registry for other roots), their metatable reaching the state shared
 * between languages (futoin/sys/host.h), and the flow's last error as
 * state() and the accessors read it (error_info, last_exception, async
 * stacks).
 */
#include "futoin_lua.h"
#include "lua_steps.h"

#include <stdint.h>
#include <string.h>

/* Private keys of state() tables: the flow they belong to, and the names
 * they put in the shared store. */
static const char fl_state_id_key = 0;
static const char fl_state_names_key = 0;

/* ---- state() ------------------------------------------------------------- *
 *
 * The state table of a root of our Tool lives in the root object (its user
 * value 3), so it goes with the root and holds no registry slot until the
 * root is collected. The flow finds it through a state variable of the
 * root whose value is the root's fl_steps (an even address), and the root
 * object through its tool's table of executing roots (a step can only run
 * while its root runs). Roots of other implementations and adopted roots
 * keep the table in the registry (the variable's value is then the
 * reference, tagged odd: 2 * ref + 1). */

static void* st_alloc(void* data)
{
    fl_ctx* ctx = data;
    void* v = ctx->pending_root;
    int ref = ctx->pending_state;
    ctx->pending_root = NULL;
    ctx->pending_state = LUA_NOREF;
    if (v) {
        return v;
    }
    return ref >= 0 ? (void*)(((uintptr_t)ref << 1) | 1u) : NULL;
}

static void st_cleanup(void* data, void* value)
{
    if ((uintptr_t)value & 1u) {
        fl_unref(data, (int)((uintptr_t)value >> 1));
    }
}

/* Make the state variable of root `s` point at the root (once). */
void fl_state_map_root(fl_ctx* ctx, fl_steps* s)
{
    if (!(s->flags & FL_F_STATEMAP) && s->bsi) {
        ctx->pending_root = s;
        if (s->bsi->api->stateVariable(s->bsi, ctx, ctx->state_name, st_alloc,
                                       st_cleanup) == s) {
            s->flags |= FL_F_STATEMAP;
        }
        ctx->pending_root = NULL;
    }
}

/* A new state table (pushed) of the flow identified by the value at
 * `id_idx`: the root object of a root of our Tool, or the state variable's
 * odd value (a light userdata) of other roots. Its metatable reaches the
 * state shared between languages (see st_index below). */
static void new_state_table(lua_State* L, fl_ctx* ctx, int id_idx)
{
    id_idx = lua_absindex(L, id_idx);
    lua_newtable(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->state_mt);
    lua_setmetatable(L, -2);
    lua_pushlightuserdata(L, (void*)&fl_state_id_key);
    lua_pushvalue(L, id_idx);
    lua_rawset(L, -3);
}

/* Push the state table of root object `idx` (made on first use). */
static void push_root_state(lua_State* L, fl_ctx* ctx, int idx)
{
    idx = lua_absindex(L, idx);
    if (lua_getiuservalue(L, idx, 3) != LUA_TTABLE) {
        lua_pop(L, 1);
        new_state_table(L, ctx, idx);
        lua_pushvalue(L, -1);
        lua_setiuservalue(L, idx, 3);
    }
}

/* Push the flow's state table; `self` is the handle object it is asked
 * through (stack index 1 of the method). Raises on failure. */
static void push_state(lua_State* L, fl_ctx* ctx, FutoInAsyncSteps* bsi,
                       fl_steps* self)
{
    void* v;
    if (self && self->kind == FL_ROOT && self->tool) {
        fl_state_map_root(ctx, self);
        push_root_state(L, ctx, 1);
        return;
    }
    v = bsi->api->stateVariable(bsi, NULL, ctx->state_name, NULL, NULL);
    if (v && !((uintptr_t)v & 1u)) {
        fl_steps* root = v;
        if (root->tool && root->tool->exec_ref != LUA_NOREF) {
            lua_rawgeti(L, LUA_REGISTRYINDEX, root->tool->exec_ref);
            lua_pushlightuserdata(L, root);
            if (lua_rawget(L, -2) == LUA_TUSERDATA) {
                push_root_state(L, ctx, lua_gettop(L));
                lua_replace(L, -3);
                lua_pop(L, 1);
                return;
            }
            lua_pop(L, 2);
        }
        luaL_error(L, "state(): the root of this flow is not running");
    }
    if (!v) {
        int ref;
        lua_pushnil(L); /* the identity, below */
        lua_newtable(L);
        lua_pushvalue(L, -1);
        ref = fl_ref(L, ctx);
        ctx->pending_state = ref;
        v = bsi->api->stateVariable(bsi, ctx, ctx->state_name, st_alloc,
                                    st_cleanup);
        if (ctx->pending_state != LUA_NOREF) {
            ctx->pending_state = LUA_NOREF;
            fl_unref(ctx, ref); /* not installed */
        }
        if (!v || !((uintptr_t)v & 1u)) {
            luaL_error(L, "state(): not available on this handle");
        }
        /* the new table: its metatable and identity (the variable's value) */
        lua_pushlightuserdata(L, v);
        lua_replace(L, -3);
        lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->state_mt);
        lua_setmetatable(L, -2);
        lua_pushlightuserdata(L, (void*)&fl_state_id_key);
        lua_pushvalue(L, -3);
        lua_rawset(L, -3);
        lua_replace(L, -2);
        return;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, (int)((uintptr_t)v >> 1));
}

/* Push last_exception: the Lua error object if the error came from this
 * state, else the error code, else nil. */
void fl_push_last_exception(lua_State* L, fl_ctx* ctx, FutoInAsyncSteps* bsi)
{
    const char* code;
    if (fl_push_custom(L, ctx, futoin_wrap_last_exception(bsi))) {
        return;
    }
    code = futoin_wrap_error_code(bsi);
    if (code) {
        lua_pushstring(L, code);
    } else {
        lua_pushnil(L);
    }
}

void fl_push_error_info(lua_State* L, FutoInAsyncSteps* bsi)
{
    const char* info = futoin_wrap_error_info(bsi);
    if (info) {
        lua_pushstring(L, info);
    } else {
        lua_pushnil(L);
    }
}

int fl_state(lua_State* L, fl_steps* s)
{
    fl_gate(L, s, FL_G_ANY, "state()");
    fl_clear_misuse(s->ctx);
    push_state(L, s->ctx, s->bsi, s);
    fl_check_misuse(L, s->ctx, "state()");
    return 1;
}

int fl_error_info(lua_State* L, fl_steps* s)
{
    fl_gate(L, s, FL_G_ANY, "error_info()");
    fl_push_error_info(L, s->bsi);
    return 1;
}

int fl_last_exception(lua_State* L, fl_steps* s)
{
    fl_gate(L, s, FL_G_ANY, "last_exception()");
    fl_push_last_exception(L, s->ctx, s->bsi);
    return 1;
}

/* ---- state shared between languages ---------------------------------------- *
 *
 * A state() table has a metatable (one per Lua state) whose __index and
 * __newindex reach the root's shared store (futoin_state_get/set of
 * futoin/sys/host.h), which every language reads and writes:
 *
 *  - writing a key that the table does not hold: a number, a boolean, a
 *    string or an fa.bytes() value goes to the shared store (copied), nil
 *    removes it there; anything else (tables, functions, userdata) is kept
 *    in the table itself, language-local, as before;
 *  - reading a key that the table does not hold reads the shared store (a
 *    fresh Lua value each time: numeric arrays set by another language
 *    come as a new table), plus `async_stack`: the frames of the flow's
 *    last error.
 *
 * Which flow: the table's identity (under a private key of the table: the
 * root object of a root of our Tool, or the state variable's odd value of
 * other roots; a weak side table would grow with the finished flows the
 * GC has not collected yet) is matched
 * against the flow of the Lua callback running now (ctx->cur_bsi); outside
 * any callback a root of our Tool is reached through its object. A table
 * reached otherwise (a foreign root's table kept past its callbacks) has
 * only its local part. */

static FutoInAsyncSteps* flow_bsi(lua_State* L, fl_ctx* ctx, int t)
{
    FutoInAsyncSteps* bsi = NULL;
    void* id;
    lua_pushlightuserdata(L, (void*)&fl_state_id_key);
    lua_rawget(L, t);
    id = lua_touserdata(L, -1);
    if (id && ctx->cur_bsi
        && ctx->cur_bsi->api->stateVariable(ctx->cur_bsi, NULL, ctx->state_name,
                                            NULL, NULL)
                   == id) {
        bsi = ctx->cur_bsi;
    } else if (id && lua_type(L, -1) == LUA_TUSERDATA) {
        fl_steps* root = fl_to_steps(L, -1);
        if (root && root->kind == FL_ROOT && root->bsi) {
            bsi = root->bsi;
        }
    }
    lua_pop(L, 1);
    return bsi;
}

/* The flow of state table `t` if it has a shared store (ours), else NULL. */
static FutoInAsyncSteps* shared_bsi(lua_State* L, fl_ctx* ctx, int t)
{
    FutoInAsyncSteps* bsi = flow_bsi(L, ctx, t);
    if (bsi && !futoin_async_ext(bsi)) {
        return NULL; /* a foreign implementation has no shared store */
    }
    return bsi;
}

/* Push a value the runtime keeps (borrowed: nothing is moved out of it).
 * A value of another language that Lua cannot copy reads as nil. */
static void push_borrowed(lua_State* L, fl_ctx* ctx, const FutoInBinaryValue* v)
{
    FutoInBinaryValue copy;
    int flags, base;
    if (!v || !v->type) {
        lua_pushnil(L);
        return;
    }
    flags = v->type->flags;
    base = flags & FTN_BASE_TYPE_MASK;
    if (base == FTN_TYPE_CUSTOM_OBJECT
        || ((flags & FTN_TYPE_ARRAY) && base != FTN_TYPE_UINT8
            && !(base >= FTN_TYPE_BOOL && base <= FTN_TYPE_DOUBLE))) {
        if (!fl_push_custom(L, ctx, v)) {
            lua_pushnil(L);
        }
        return;
    }
    copy = *v; /* read only: fl_push_binval moves nothing of these types */
    fl_push_binval(L, ctx, &copy);
}

static int is_reserved_state(const char* k)
{
    return strcmp(k, "error_info") == 0 || strcmp(k, "last_exception") == 0
           || strcmp(k, "async_stack") == 0;
}

/* __index(t, k) of state() tables: the flow's last error (error_info,
 * last_exception, async_stack: read from the flow each time, so that the
 * table says what the accessors and the runtime say at every moment, e.g.
 * nil after a handled break_loop()), then the shared store. */
static int st_index(lua_State* L)
{
    fl_ctx* ctx = lua_touserdata(L, lua_upvalueindex(1));
    FutoInAsyncSteps* bsi;
    const char* k;
    size_t len;
    if (lua_type(L, 2) != LUA_TSTRING) {
        return 0;
    }
    bsi = flow_bsi(L, ctx, 1);
    if (!bsi) {
        return 0;
    }
    k = lua_tolstring(L, 2, &len);
    if (strcmp(k, "error_info") == 0) {
        fl_push_error_info(L, bsi);
        return 1;
    }
    if (strcmp(k, "last_exception") == 0) {
        fl_push_last_exception(L, ctx, bsi);
        return 1;
    }
    if (!futoin_async_ext(bsi) || strlen(k) != len) {
        return 0; /* no shared store; no shared name holds a NUL */
    }
    if (strcmp(k, "async_stack") == 0) {
        fl_push_async_stack(L, futoin_wrap_async_stack(bsi));
        return 1;
    }
    push_borrowed(L, ctx, futoin_state_get(bsi, k));
    return 1;
}

/* Can the value at `idx` go to the shared store from state()? */
static int shareable(lua_State* L, fl_ctx* ctx, int idx)
{
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
    case LUA_TBOOLEAN:
    case LUA_TSTRING:
        return 1;
    case LUA_TTABLE: {
        int yes = 0;
        if (ctx->bytes_mt != LUA_NOREF && lua_getmetatable(L, idx)) {
            lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->bytes_mt);
            yes = lua_rawequal(L, -1, -2);
            lua_pop(L, 2);
        }
        return yes;
    }
    default:
        return 0;
    }
}

/* Set shared variable `k` of `bsi` to the value at `idx` (nil removes):
 * 0 when done; FUTOIN_E* when the store refused it. Raises only when out
 * of memory. */
static int shared_put(lua_State* L, fl_ctx* ctx, FutoInAsyncSteps* bsi,
                      const char* k, int idx)
{
    FutoInBinaryValue v;
    int rc;
    if (lua_isnil(L, idx)) {
        return futoin_state_set(bsi, k, NULL);
    }
    rc = fl_to_binval(L, ctx, idx, &v);
    if (rc == FL_ENOMEM) {
        return luaL_error(L, "state: out of memory");
    }
    if (rc != 0) {
        return FUTOIN_EINVAL;
    }
    if ((v.type->flags & FTN_BASE_TYPE_MASK) == FTN_TYPE_CUSTOM_OBJECT) {
        rc = FUTOIN_EINVAL; /* not a value other languages can read */
    } else {
        rc = futoin_state_set(bsi, k, &v);
    }
    futoin_reset_binval(&v);
    return rc;
}

/* Remember (or forget, for nil) that state table `t` put `k` in the shared
 * store, so that pairs() lists it. */
static void note_shared_name(lua_State* L, fl_ctx* ctx, int t, int k, int set)
{
    (void)ctx;
    lua_pushlightuserdata(L, (void*)&fl_state_names_key);
    if (lua_rawget(L, t) != LUA_TTABLE) {
        lua_pop(L, 1);
        if (!set) {
            return;
        }
        lua_newtable(L);
        lua_pushlightuserdata(L, (void*)&fl_state_names_key);
        lua_pushvalue(L, -2);
        lua_rawset(L, t);
    }
    lua_pushvalue(L, k);
    if (set) {
        lua_pushboolean(L, 1);
    } else {
        lua_pushnil(L);
    }
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* __newindex(t, k, v) of state() tables (only for keys t does not hold). */
static int st_newindex(lua_State* L)
{
    fl_ctx* ctx = lua_touserdata(L, lua_upvalueindex(1));
    if (lua_type(L, 2) == LUA_TSTRING && is_reserved_state(lua_tostring(L, 2))) {
        return luaL_error(L, "state: '%s' is the flow's own (read-only; see "
                             "asi:error_info(), asi:last_exception(), "
                             "asi:async_stack())", lua_tostring(L, 2));
    }
    if (lua_type(L, 2) == LUA_TSTRING && (lua_isnil(L, 3) || shareable(L, ctx, 3))) {
        FutoInAsyncSteps* bsi = shared_bsi(L, ctx, 1);
        size_t len;
        const char* k = lua_tolstring(L, 2, &len);
        if (bsi && strlen(k) != len) {
            return luaL_error(L, "state: a shared name must not contain an "
                                 "embedded NUL");
        }
        if (bsi && shared_put(L, ctx, bsi, k, 3) == FUTOIN_OK) {
            note_shared_name(L, ctx, 1, 2, !lua_isnil(L, 3));
            return 0;
        }
    }
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 0;
}

/* core._state_names(t): the set of names state table `t` put in the shared
 * store (for its __pairs), or nil. */
int fl_state_names(lua_State* L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushlightuserdata(L, (void*)&fl_state_names_key);
    lua_rawget(L, 1);
    return 1;
}

/* core._state_keys(): the two private keys of state() tables (their
 * __pairs skips them). */
int fl_state_keys(lua_State* L)
{
    lua_pushlightuserdata(L, (void*)&fl_state_id_key);
    lua_pushlightuserdata(L, (void*)&fl_state_names_key);
    return 2;
}

/* core._state_mt(): the metatable of state() tables (the Lua layer adds
 * __pairs). */
int fl_state_mt(lua_State* L)
{
    fl_ctx* ctx = fl_ctx_get(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->state_mt);
    return 1;
}

void fl_state_open(lua_State* L, fl_ctx* ctx)
{
    lua_createtable(L, 0, 3);
    lua_pushlightuserdata(L, ctx);
    lua_pushcclosure(L, st_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushlightuserdata(L, ctx);
    lua_pushcclosure(L, st_newindex, 1);
    lua_setfield(L, -2, "__newindex");
    lua_pushliteral(L, "futoin_async.state");
    lua_setfield(L, -2, "__name");
    ctx->state_mt = luaL_ref(L, LUA_REGISTRYINDEX); /* fixed: not counted */
}

/* asi:shared_get(name): the shared variable as a Lua value (any kind another
 * language stored, numeric arrays included), nil if there is none. */
int fl_shared_get(lua_State* L, fl_steps* s, const char* name)
{
    fl_gate(L, s, FL_G_ANY, "shared_get()");
    if (!futoin_async_ext(s->bsi)) {
        return luaL_error(L, "shared_get(): not a handle of libfutoin_async");
    }
    fl_clear_misuse(s->ctx);
    push_borrowed(L, s->ctx, futoin_state_get(s->bsi, name));
    fl_check_misuse(L, s->ctx, "shared_get()");
    return 1;
}

/* asi:shared_set(name, value): copy `value` (number, boolean, string,
 * fa.bytes(), a sequence of numbers) into the shared store; nil removes. */
int fl_shared_set(lua_State* L, fl_steps* s, const char* name, int value)
{
    int rc;
    fl_gate(L, s, FL_G_ANY, "shared_set()");
    if (!futoin_async_ext(s->bsi)) {
        return luaL_error(L, "shared_set(): not a handle of libfutoin_async");
    }
    fl_clear_misuse(s->ctx);
    rc = shared_put(L, s->ctx, s->bsi, name, value);
    fl_check_misuse(L, s->ctx, "shared_set()");
    if (rc == FUTOIN_EBUSY) {
        return luaL_error(L, "shared_set(): '%s' is a state variable of the "
                             "stateVariable() slot", name);
    }
    if (rc != FUTOIN_OK) {
        return luaL_error(L, "shared_set(): '%s' cannot be shared (a reserved "
                             "name, or a %s, which other languages cannot read)",
                          name, luaL_typename(L, value));
    }
    lua_settop(L, 1);
    return 1;
}

/* ---- async stacks -------------------------------------------------------- */

void fl_push_async_stack(lua_State* L, const futoin_async_stack* st)
{
    if (!st) {
        lua_pushnil(L);
        return;
    }
    lua_createtable(L, (int)st->count, 3);
    for (uint32_t i = 0; i < st->count; ++i) {
        const futoin_frame_origin* o = &st->frames[i];
        lua_createtable(L, 0, 4);
        lua_pushstring(L, o->language ? o->language : "?");
        lua_setfield(L, -2, "language");
        if (o->function) {
            lua_pushstring(L, o->function);
            lua_setfield(L, -2, "function");
        }
        if (o->file) {
            lua_pushstring(L, o->file);
            lua_setfield(L, -2, "file");
        }
        lua_pushinteger(L, o->line);
        lua_setfield(L, -2, "line");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    if (st->code) {
        lua_pushstring(L, st->code);
        lua_setfield(L, -2, "code");
    }
    lua_pushinteger(L, st->elided);
    lua_setfield(L, -2, "elided");
    lua_pushinteger(L, st->elided_after);
    lua_setfield(L, -2, "elided_after");
}

/* asi:async_stack(): the frames of the flow's last error, innermost first,
 * or nil. */
int fl_async_stack(lua_State* L, fl_steps* s)
{
    fl_gate(L, s, FL_G_ANY, "async_stack()");
    fl_clear_misuse(s->ctx);
    fl_push_async_stack(L, futoin_wrap_async_stack(s->bsi));
    fl_check_misuse(L, s->ctx, "async_stack()");
    return 1;
}
