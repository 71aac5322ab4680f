/*
 * Between the Lua binding's module (futoin_async.core) and its host plug-in
 * (libfutoin_host_lua.so, host/lua_host_plugin.c). The module implements the
 * language host "lua" over the Lua state it was opened in; the plug-in,
 * loaded by libfutoin_async when Lua is not the host program, only makes
 * that state (luaL_newstate, require "futoin_async") and asks the module for
 * this table through `futoin_async.core._host_iface()` (a light userdata):
 * no symbol of the module is looked up, so the module can stay RTLD_LOCAL.
 */
#ifndef FUTOIN_LUA_HOST_H
#define FUTOIN_LUA_HOST_H

#include <futoin/sys/host.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define FL_HOST_IFACE_VERSION 2u

struct lua_State;

typedef struct fl_host_iface
{
    uint32_t size;    /* sizeof(fl_host_iface) */
    uint32_t version; /* FL_HOST_IFACE_VERSION */
    /** start/resolve/stop over the state that offers the host */
    const futoin_host_api* host;
    /** What the binding holds now in that state: registry references and
     *  callback records (both 0 when nothing of Lua is in use). */
    void (*counters)(long* refs, long* recs);
    /* ---- version 2 ---- */
    /** The plug-in made the state `L` on this thread and loaded the module
     *  in it: the host owns it from now on (closes it when the thread ends
     *  or at the last stop()). FUTOIN_OK, or a negative FUTOIN_E*. */
    int (*adopt)(struct lua_State* L);
    /** counters() summed over every state of the host, and how many states
     *  there are (one per thread that ran Lua steps, at most). */
    void (*counters2)(long* refs, long* recs, int* states);
} fl_host_iface;

/** Write a formatted message into a caller's buffer `err` of `errlen`
 *  bytes (cut to fit). It goes through a local buffer so that the
 *  formatting is the checked (_FORTIFY_SOURCE) variant whatever buffer the
 *  caller gave (tests/abi/check_hardening.sh reads that back). */
static inline __attribute__((format(printf, 3, 4), unused)) void
fl_errf(char* err, size_t errlen, const char* fmt, ...)
{
    char buf[1024];
    va_list ap;
    size_t n;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (!err || !errlen) {
        return;
    }
    n = strlen(buf);
    if (n >= errlen) {
        n = errlen - 1;
    }
    memcpy(err, buf, n);
    err[n] = 0;
}

#endif
