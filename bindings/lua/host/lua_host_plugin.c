/*
 * libfutoin_host_lua.so: the language host "lua" for a program written in
 * another language (C, Python, Java). libfutoin_async loads it with dlopen()
 * (found in the rock's tree through LUA_CPATH, futoin/sys/host.h) the first
 * time a flow adds a step of language "lua" by name (futoin_host_add).
 *
 * start(): the first start makes a Lua 5.4 state in this process:
 *   1. dlopen("liblua5.4.so.0", RTLD_NOW | RTLD_GLOBAL) (or the library
 *      FUTOIN_LUA_LIBRARY names): C modules that
 *      `require` loads (futoin_async.core, luv, ...) do not link liblua,
 *      they expect the interpreter to provide its symbols globally; this
 *      plug-in was itself loaded RTLD_LOCAL, so it links nothing of Lua and
 *      takes every function it calls from that handle;
 *   2. luaL_newstate() + luaL_openlibs() (package.path/cpath from
 *      LUA_PATH/LUA_CPATH as lua5.4 does; the rock tree this plug-in was
 *      installed in is appended as a fallback);
 *   3. require "futoin_async": the binding's module binds to the
 *      libfutoin_async.so.0 already in the process (same soname) and hands
 *      back the host table it implements (futoin_lua_host.h), to which
 *      start/resolve/stop forward; the state is handed over to it (adopt).
 * From then on the binding's host keeps one state per loop thread: a
 * thread without one gets a new state (same paths) when a Lua step is
 * resolved on it; each is closed when its thread ends, and the last stop()
 * (futoin_host_shutdown()) closes those left, so a C host checked with
 * valgrind sees nothing of Lua left; a later start() makes a new one.
 *
 * When Lua is the host program this plug-in is not loaded at all: the
 * binding registers the same table for the running state.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "futoin_lua_host.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plug-in's exports (built with hidden visibility). */
#define FL_EXPORT __attribute__((visibility("default")))
FL_EXPORT int futoin_host_get(uint32_t version, const futoin_host_api** out);
FL_EXPORT int futoin_host_lua_counters(long* refs, long* recs, int* states);

#define LIBLUA "liblua5.4.so.0"

/* The functions of liblua this plug-in calls. */
static struct
{
    lua_State* (*newstate)(void);
    void (*openlibs)(lua_State*);
    int (*loadstring)(lua_State*, const char*);
    int (*pcallk)(lua_State*, int, int, int, lua_KContext, lua_KFunction);
    void* (*touserdata)(lua_State*, int);
    const char* (*tolstring)(lua_State*, int, size_t*);
    const char* (*pushstring)(lua_State*, const char*);
    void (*settop)(lua_State*, int);
    void (*close)(lua_State*);
} lua;

static void* liblua;       /* our handle of liblua (kept: RTLD_GLOBAL) */
static const fl_host_iface* iface; /* the binding's host, once loaded */
/* start()/stop() may come from several loop threads at once */
static pthread_mutex_t plugin_mx = PTHREAD_MUTEX_INITIALIZER;

static int load_liblua(char* err, size_t errlen)
{
    static const char* const names[] = {
        "luaL_newstate", "luaL_openlibs", "luaL_loadstring", "lua_pcallk",
        "lua_touserdata", "lua_tolstring", "lua_pushstring", "lua_settop",
        "lua_close"};
    void** slots[] = {(void**)&lua.newstate, (void**)&lua.openlibs,
                      (void**)&lua.loadstring, (void**)&lua.pcallk,
                      (void**)&lua.touserdata, (void**)&lua.tolstring,
                      (void**)&lua.pushstring, (void**)&lua.settop,
                      (void**)&lua.close};
    if (liblua) {
        return FUTOIN_OK;
    }
    const char* name = getenv("FUTOIN_LUA_LIBRARY"); /* another Lua 5.4 build */
    if (!name || !*name) {
        name = LIBLUA;
    }
    liblua = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (!liblua) {
        fl_errf(err, errlen, "lua: Lua 5.4 is not installed: cannot load "
                              "%s (%s; on Debian: apt-get install "
                              "liblua5.4-0)", name, dlerror());
        return FUTOIN_EINVAL;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
        *slots[i] = dlsym(liblua, names[i]);
        if (!*slots[i]) {
            fl_errf(err, errlen, "lua: %s has no %s() (not Lua 5.4?)", name,
                     names[i]);
            dlclose(liblua);
            liblua = NULL;
            return FUTOIN_EINVAL;
        }
    }
    return FUTOIN_OK;
}

/* Where this plug-in lives, for the rock tree it may be installed in:
 * <tree>/lib/lua/5.4/futoin_async/futoin-hosts/libfutoin_host_lua.so. */
static void own_dir(char* dir, size_t len)
{
    Dl_info info;
    const char* slash;
    dir[0] = 0;
    if (dladdr((void*)&futoin_host_get, &info) && info.dli_fname
        && (slash = strrchr(info.dli_fname, '/')) != NULL) {
        size_t n = (size_t)(slash - info.dli_fname);
        if (n >= len) {
            n = len - 1;
        }
        memcpy(dir, info.dli_fname, n);
        dir[n] = 0;
    }
}

static const char boot[] =
        "local cpath, path = ...\n"
        "if cpath ~= '' then\n"
        "  package.cpath = package.cpath .. ';' .. cpath\n"
        "  package.path = package.path .. ';' .. path\n"
        "end\n"
        "return require('futoin_async').core._host_iface()\n";

/* The first state: loads the binding, whose host table it hands back,
 * and is handed over to that host. */
static int make_state(char* err, size_t errlen)
{
    char dir[1024], cpath[1200], path[2600];
    const fl_host_iface* t;
    lua_State* state;
    int rc = load_liblua(err, errlen);
    if (rc != FUTOIN_OK) {
        return rc;
    }
    state = lua.newstate();
    if (!state) {
        fl_errf(err, errlen, "lua: cannot make a Lua state (out of memory)");
        return FUTOIN_ENOMEM;
    }
    lua.openlibs(state);
    own_dir(dir, sizeof(dir));
    cpath[0] = path[0] = 0;
    if (dir[0]) {
        snprintf(cpath, sizeof(cpath), "%s/../../?.so", dir);
        snprintf(path, sizeof(path),
                 "%s/../../../../../share/lua/5.4/?.lua;"
                 "%s/../../../../../share/lua/5.4/?/init.lua",
                 dir, dir);
    }
    if (lua.loadstring(state, boot) != LUA_OK) {
        fl_errf(err, errlen, "lua: %s", lua.tolstring(state, -1, NULL));
        goto fail;
    }
    lua.pushstring(state, cpath);
    lua.pushstring(state, path);
    if (lua.pcallk(state, 2, 1, 0, 0, NULL) != LUA_OK) {
        const char* msg = lua.tolstring(state, -1, NULL);
        fl_errf(err, errlen, "lua: cannot load the Lua binding (require "
                              "\"futoin_async\"; set LUA_PATH/LUA_CPATH to "
                              "its rock tree: install the Lua rock with "
                              "luarocks --lua-version=5.4 install futoin_async, "
                              "then eval \"$(luarocks --lua-version=5.4 path)\"): %s",
                 msg ? msg : "(error object is not a string)");
        goto fail;
    }
    t = lua.touserdata(state, -1);
    lua.settop(state, 0);
    if (!t || t->size < sizeof(fl_host_iface) || t->version < FL_HOST_IFACE_VERSION
        || !t->host || !t->adopt || !t->counters2) {
        fl_errf(err, errlen, "lua: the Lua binding loaded has no usable "
                              "host table (an older futoin_async rock?)");
        goto fail;
    }
    if (t->adopt(state) != FUTOIN_OK) {
        fl_errf(err, errlen, "lua: the Lua binding did not take its state");
        goto fail;
    }
    iface = t;
    return FUTOIN_OK;
fail:
    lua.close(state);
    return FUTOIN_EINVAL;
}

static int plugin_start(futoin_tool* tool, char* err, size_t errlen)
{
    int rc = FUTOIN_OK;
    pthread_mutex_lock(&plugin_mx);
    if (!iface) {
        rc = make_state(err, errlen);
    }
    pthread_mutex_unlock(&plugin_mx);
    /* the host counts starts and has a state on this thread */
    return rc == FUTOIN_OK ? iface->host->start(tool, err, errlen) : rc;
}

static int plugin_resolve(const char* module, const char* function,
                          futoin_host_step* out, char* err, size_t errlen)
{
    const fl_host_iface* t;
    pthread_mutex_lock(&plugin_mx);
    t = iface;
    pthread_mutex_unlock(&plugin_mx);
    if (!t) {
        fl_errf(err, errlen, "lua: cannot resolve %s.%s: Lua is not started",
                 module, function);
        return FUTOIN_EINVAL;
    }
    return t->host->resolve(module, function, out, err, errlen);
}

static void plugin_stop(void)
{
    const fl_host_iface* t;
    pthread_mutex_lock(&plugin_mx);
    t = iface;
    pthread_mutex_unlock(&plugin_mx);
    /* The last one closes the states the host made (the binding stays
     * loaded: steps of Lua the runtime may still hold are released later
     * without touching a closed state). */
    if (t) {
        t->host->stop();
    }
}

static const futoin_host_api plugin = {
        sizeof(futoin_host_api), FUTOIN_HOST_VERSION_1, "lua",
        plugin_start, plugin_resolve, plugin_stop,
};

FL_EXPORT int futoin_host_get(uint32_t version, const futoin_host_api** out)
{
    if (version < FUTOIN_HOST_VERSION_1 || !out) {
        return FUTOIN_EVERSION;
    }
    *out = &plugin;
    return FUTOIN_OK;
}

/* For leak checks of host programs: what the Lua binding holds in the
 * states of its host (registry references, callback records), and how
 * many states are open (one per loop thread that ran Lua steps, at most).
 * Call it with no flow running. */
FL_EXPORT int futoin_host_lua_counters(long* refs, long* recs, int* states)
{
    long r = 0, c = 0;
    int n = 0;
    const fl_host_iface* t;
    pthread_mutex_lock(&plugin_mx);
    t = iface;
    pthread_mutex_unlock(&plugin_mx);
    if (t) {
        t->counters2(&r, &c, &n);
    }
    if (refs) {
        *refs = r;
    }
    if (recs) {
        *recs = c;
    }
    if (states) {
        *states = n;
    }
    return FUTOIN_OK;
}
