/*
 * Test-only Lua module `foreign_as`: the library's deliberately foreign,
 * minimal 25-slot FTN12 implementation (tests/foreign/foreign_as.c),
 * exposed to Lua so that fa.wrap() drives a handle that is not ours
 * (only the spec's slots are used). Built by test.sh.
 */
#include <lauxlib.h>
#include <lua.h>

#include "foreign_as.h"

static foreign_loop* loop_arg(lua_State* L)
{
    foreign_loop* l = lua_touserdata(L, 1);
    luaL_argcheck(L, l != NULL, 1, "foreign loop expected");
    return l;
}

static int f_loop_new(lua_State* L)
{
    lua_pushlightuserdata(L, foreign_loop_new());
    return 1;
}

static int f_loop_free(lua_State* L)
{
    foreign_loop_free(loop_arg(L));
    return 0;
}

static int f_run(lua_State* L)
{
    foreign_run(loop_arg(L));
    return 0;
}

static int f_root_new(lua_State* L)
{
    lua_pushlightuserdata(L, foreign_root_new(loop_arg(L)));
    return 1;
}

static int f_live_roots(lua_State* L)
{
    lua_pushinteger(L, (lua_Integer)foreign_live_roots(loop_arg(L)));
    return 1;
}

int luaopen_foreign_as(lua_State* L);
int luaopen_foreign_as(lua_State* L)
{
    static const luaL_Reg fns[] = {
        {"loop_new", f_loop_new}, {"loop_free", f_loop_free}, {"run", f_run},
        {"root_new", f_root_new}, {"live_roots", f_live_roots}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
