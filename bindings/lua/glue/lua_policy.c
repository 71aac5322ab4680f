/*
 * The load policy (futoin/sys/host.h, futoin_host_policy_set()) from Lua:
 * fa.Tool{ allow = {...} }, tool:set_load_policy{...} and
 * fa.set_load_policy{...}. The Lua layer (lib/futoin_async/policy.lua)
 * checks the lists and words the errors; this hands them to the library
 * as C strings.
 */
#include "futoin_lua.h"

#include <string.h>

/* The strings of the list at `idx` (nil: NULL) as a NULL-terminated array
 * in a userdata pushed on the stack, each string pushed too: all stay on
 * the stack, so alive, until the call returns. */
static const char** c_list(lua_State* L, int idx, const char* what)
{
    lua_Integer n;
    const char** out;
    if (lua_isnil(L, idx)) {
        return NULL;
    }
    luaL_checktype(L, idx, LUA_TTABLE);
    n = (lua_Integer)lua_rawlen(L, idx);
    if (n > 100000) {
        luaL_error(L, "set_load_policy(): %s: too many entries", what);
    }
    luaL_checkstack(L, (int)n + 2, "set_load_policy()");
    out = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof(*out), 0);
    for (lua_Integer i = 0; i < n; ++i) {
        size_t len;
        lua_rawgeti(L, idx, i + 1);
        if (lua_type(L, -1) != LUA_TSTRING) {
            luaL_error(L, "set_load_policy(): %s[%d] must be a string, got %s", what,
                       (int)(i + 1), luaL_typename(L, -1));
        }
        out[i] = lua_tolstring(L, -1, &len);
        if (strlen(out[i]) != len) {
            luaL_error(L, "set_load_policy(): %s[%d] must not contain an embedded NUL",
                       what, (int)(i + 1));
        }
    }
    out[n] = NULL;
    return out;
}

static int policy_set(lua_State* L, futoin_tool* ft, int languages, int modules)
{
    futoin_host_policy p = FUTOIN_HOST_POLICY_INIT;
    p.languages = c_list(L, languages, "languages");
    p.modules = c_list(L, modules, "modules");
    lua_pushinteger(L, futoin_host_policy_set(ft, &p)); /* copies the lists */
    return 1;
}

int fl_tool_policy_set(lua_State* L, fl_tool* t, int languages, int modules)
{
    if (t->attached == FL_TOOL_BORROWED) {
        /* code of a flow must not set the policy of its host program */
        return luaL_error(L, "set_load_policy(): this Tool is the loop of the "
                             "program that hosts this Lua state; that program "
                             "sets its load policy");
    }
    return policy_set(L, fl_tool_get(L, t, "set_load_policy()"), languages, modules);
}

int fl_policy_set(lua_State* L, int languages, int modules)
{
    return policy_set(L, NULL, languages, modules);
}
