/*
 * Between the Lua binding's module (futoin_async.core) and its host plug-in
 * (libfutoin_host_lua.so, src/lua_host_plugin.c). The module implements the
 * language host "lua" over the Lua state it was opened in; the plug-in,
 * loaded by libfutoin_async when Lua is not the host program, only makes
 * that state (luaL_newstate, require "futoin_async") and asks the module for
 * this table through `futoin_async.core._host_iface()` (a light userdata):
 * no symbol of the module is looked up, so the module can stay RTLD_LOCAL.
 */
#ifndef FUTOIN_LUA_HOST_H
#define FUTOIN_LUA_HOST_H

#include <futoin/sys/host.h>

#define FL_HOST_IFACE_VERSION 1u

typedef struct fl_host_iface
{
    uint32_t size;    /* sizeof(fl_host_iface) */
    uint32_t version; /* FL_HOST_IFACE_VERSION */
    /** start/resolve/stop over the state that offers the host */
    const futoin_host_api* host;
    /** What the binding holds now in that state: registry references and
     *  callback records (both 0 when nothing of Lua is in use). */
    void (*counters)(long* refs, long* recs);
} fl_host_iface;

#endif
