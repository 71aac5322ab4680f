/*
 * Watching a Tool's flows from Lua: its hooks (futoin/sys/hooks.h) and the
 * live dump (futoin_tool_dump()), for tool:set_hooks{...} and tool:dump().
 * Thin: every event becomes a table handed to the function set for its
 * name; the dump is the C report as a string. The behaviour (which events,
 * in which order, what a hook may do) is the library's.
 */
#include "futoin_lua.h"

#include <futoin/sys/hooks.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_str(lua_State* L, const char* key, const char* v)
{
    if (v) {
        lua_pushstring(L, v);
        lua_setfield(L, -2, key);
    }
}

static void set_int(lua_State* L, const char* key, lua_Integer v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, key);
}

/* The event as a table: event, root_id, now (tool ms) always; the rest
 * when the event has them. */
static void push_event(lua_State* L, const futoin_hook_event* ev)
{
    const char* wait = ev->wait != FUTOIN_WAIT_NONE ? futoin_wait_kind_name(ev->wait) : NULL;
    lua_createtable(L, 0, 12);
    set_str(L, "event", futoin_hook_name((int)ev->type));
    set_int(L, "root_id", (lua_Integer)ev->root_id);
    set_int(L, "now", (lua_Integer)ev->now);
    if (ev->origin) {
        set_str(L, "language", ev->origin->language);
        set_str(L, "function", ev->origin->function);
        set_str(L, "file", ev->origin->file);
        set_int(L, "line", (lua_Integer)ev->origin->line);
    }
    set_str(L, "code", ev->code);
    set_str(L, "info", ev->info);
    if (ev->type == FUTOIN_HOOK_FLOW_FINISHED) {
        set_str(L, "outcome", futoin_hook_outcome_name(ev->outcome));
    }
    if (wait) {
        set_str(L, "wait", wait);
        if (ev->due) {
            set_int(L, "due", (lua_Integer)ev->due);
        }
        set_str(L, "wait_language", ev->language);
    }
    if (ev->sync) {
        lua_pushlightuserdata(L, ev->sync);
        lua_setfield(L, -2, "sync");
    }
}

/* Every hook, on the loop thread. An error in a hook cannot go anywhere
 * (the engine is mid-event): it is printed, as a Tool timer's is. */
static void on_event(void* data, const futoin_hook_event* ev)
{
    fl_tool* t = data;
    fl_ctx* ctx = t->ctx;
    const char* name = futoin_hook_name((int)ev->type);
    lua_State* L;
    int top;
    if (ctx->closed || t->hooks_ref <= 0 || !name) {
        return;
    }
    L = fl_ctx_state(ctx);
    if (!lua_checkstack(L, 8)) {
        return;
    }
    top = lua_gettop(L);
    lua_pushcfunction(L, fl_msgh);
    lua_rawgeti(L, LUA_REGISTRYINDEX, t->hooks_ref);
    lua_getfield(L, -1, name);
    if (lua_isfunction(L, -1)) {
        push_event(L, ev);
        if (lua_pcall(L, 1, 0, top + 1) != LUA_OK) {
            fprintf(stderr, "futoin_async: error in a Tool hook (%s): %s\n",
                    name,
                    lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
        }
    }
    lua_settop(L, top);
}

/* 0 is "no table" (the tool is zeroed when made), never a reference to
 * give back: fl_unref() ignores only LUA_NOREF and LUA_REFNIL, and would
 * count (and unref) 0. */
static void drop_ref(fl_ctx* ctx, int ref)
{
    if (ref > 0) {
        fl_unref(ctx, ref);
    }
}

int fl_tool_set_hooks(lua_State* L, fl_tool* t, int table)
{
    static const char what[] = "Tool:set_hooks{...}";
    futoin_hooks h = FUTOIN_HOOKS_INIT;
    futoin_tool* ft = fl_tool_get(L, t, what);
    int old = t->hooks_ref;
    int rc;
    if (t->attached == FL_TOOL_BORROWED) {
        return luaL_error(L, "%s: this Tool is the loop of the program that "
                             "hosts this Lua state: that program sets its hooks",
                          what);
    }
    if (!futoin_tool_is_same_thread(ft)) {
        return luaL_error(L, "%s: not on the tool's loop thread", what);
    }
    if (!lua_isnoneornil(L, table) && !lua_istable(L, table)) {
        return luaL_error(L, "%s: a table of functions, or nil", what);
    }
    h.data = t;
    t->hooks_ref = 0;
    if (lua_istable(L, table)) {
        for (int i = FUTOIN_HOOK_FLOW_STARTED; i <= FUTOIN_HOOK_SYNC_RELEASED; ++i) {
            if (lua_getfield(L, table, futoin_hook_name(i)) == LUA_TFUNCTION) {
                *futoin_hooks_member(&h, i) = on_event;
            }
            lua_pop(L, 1);
        }
        lua_pushvalue(L, table);
        t->hooks_ref = fl_ref(L, t->ctx);
    }
    rc = futoin_tool_set_hooks(ft, t->hooks_ref > 0 ? &h : NULL);
    /* the old table goes after the call: an event during it finds one */
    drop_ref(t->ctx, old);
    if (rc != FUTOIN_OK) {
        drop_ref(t->ctx, t->hooks_ref);
        t->hooks_ref = 0;
        futoin_tool_set_hooks(ft, NULL);
        return luaL_error(L, "%s: refused (%d)", what, rc);
    }
    return 0;
}

void fl_tool_drop_hooks(fl_tool* t)
{
    drop_ref(t->ctx, t->hooks_ref);
    t->hooks_ref = 0;
}

int fl_tool_dump(lua_State* L, fl_tool* t)
{
    static const char what[] = "Tool:dump()";
    futoin_tool* ft = fl_tool_get(L, t, what);
    char* buf = NULL;
    size_t len = 0;
    FILE* f;
    int n;
    if (!futoin_tool_is_same_thread(ft)) {
        return luaL_error(L, "%s: not on the tool's loop thread", what);
    }
    f = open_memstream(&buf, &len);
    if (!f) {
        return luaL_error(L, "%s: out of memory", what);
    }
    n = futoin_tool_dump(ft, f);
    if (fclose(f) != 0 || n < 0) {
        free(buf);
        return luaL_error(L, "%s: refused (%d)", what, n);
    }
    lua_pushlstring(L, buf, len);
    free(buf);
    return 1;
}
