/*
 * The language host "lua" (futoin/sys/host.h) and the origins of Lua steps.
 *
 * The host runs in the Lua state the module was opened in:
 *  - Lua is the host program (lua5.4 running a script that required
 *    futoin_async): luaopen registers the host (futoin_host_register), so
 *    steps of other languages can add Lua functions to a flow by name;
 *  - another language is the host: libfutoin_async loads the plug-in
 *    libfutoin_host_lua.so (host/lua_host_plugin.c), which makes a state,
 *    requires futoin_async and forwards to the same table
 *    (futoin_lua_host.h).
 * The first state opened in the process is the host's until it is closed.
 *
 * resolve(module, function): `require(module)` (or, for a path ending in
 * ".lua" or holding a '/', the file it names, loaded once), then the field
 * `function` of what it returned, which must be callable. The step runs
 * through the binding's own trampoline (values, errors with the Lua
 * traceback, cancel handlers, state), as a step added by asi:add() does.
 *
 * Origins: every step the binding adds carries fl_rec_class; its origin()
 * reads the function's source and first line (lua_getinfo ">S") only when
 * an async stack is recorded, and keeps the strings in the record until
 * its release.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "futoin_lua.h"
#include "futoin_lua_host.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- origins ----------------------------------------------------------------- */

static void rec_origin(void* data, futoin_frame_origin* out)
{
    fl_rec* r = data;
    fl_ctx* ctx = r->ctx;
    out->language = "lua";
    out->function = r->name;
    if (!r->src && !ctx->closed && fl_rec_has(r, FL_A_FN)) {
        lua_State* L = fl_ctx_state(ctx);
        if (lua_checkstack(L, 4)) {
            int top = lua_gettop(L);
            lua_Debug ar;
            fl_rec_push(L, r, FL_A_FN);
            if (lua_isfunction(L, -1) && lua_getinfo(L, ">S", &ar) && *ar.what != 'C') {
                const char* file = ar.source && ar.source[0] == '@' ? ar.source + 1
                                                                    : ar.short_src;
                r->src = strdup(file);
                r->line = ar.linedefined > 0 ? (uint32_t)ar.linedefined : 0;
            }
            lua_settop(L, top);
        }
    }
    out->file = r->src;
    out->line = r->src ? r->line : 0;
}

const futoin_step_class fl_rec_class = {sizeof(futoin_step_class),
                                        fl_rec_release, rec_origin};

/* ---- the host ------------------------------------------------------------------ */

static pthread_mutex_t host_mx = PTHREAD_MUTEX_INITIALIZER;
static fl_ctx* host_ctx;     /* the state that is the host, or NULL */
static pthread_t host_thread; /* ... and the thread it lives on */
static int host_registered;

static int host_start(futoin_tool* tool, char* err, size_t errlen)
{
    int rc = FUTOIN_OK;
    (void)tool;
    pthread_mutex_lock(&host_mx);
    if (!host_ctx) {
        fl_errf(err, errlen, "lua: no Lua state to run Lua steps in (the "
                              "one that offered the host was closed)");
        rc = FUTOIN_EINVAL;
    } else if (!pthread_equal(host_thread, pthread_self())) {
        fl_errf(err, errlen, "lua: the Lua state lives on another thread "
                              "than this tool's loop");
        rc = FUTOIN_EINVAL;
    }
    pthread_mutex_unlock(&host_mx);
    return rc;
}

static void host_stop(void)
{
}

typedef struct resolve_call
{
    fl_ctx* ctx;
    const char* module;
    const char* function;
    fl_rec* rec;
    int missing; /* loaded, but no such function */
} resolve_call;

static int is_path(const char* m)
{
    size_t n = strlen(m);
    return strchr(m, '/') || (n > 4 && strcmp(m + n - 4, ".lua") == 0);
}

/* Runs protected: load the module, find the function, make its record. */
static int resolve_body(lua_State* L)
{
    resolve_call* c = lua_touserdata(L, 1);
    if (is_path(c->module)) {
        /* a file, run once: package.loaded[path] */
        lua_getglobal(L, "package");
        lua_getfield(L, -1, "loaded");
        if (lua_getfield(L, -1, c->module) == LUA_TNIL) {
            lua_pop(L, 1);
            if (luaL_loadfile(L, c->module) != LUA_OK) {
                return lua_error(L);
            }
            lua_call(L, 0, 1);
            if (lua_isnil(L, -1)) {
                lua_pop(L, 1);
                lua_pushboolean(L, 1);
            }
            lua_pushvalue(L, -1);
            lua_setfield(L, -3, c->module);
        }
    } else {
        lua_getglobal(L, "require");
        lua_pushstring(L, c->module);
        lua_call(L, 1, 1);
    }
    if (!lua_istable(L, -1)) {
        c->missing = 1;
        return 0;
    }
    lua_getfield(L, -1, c->function);
    if (!lua_isfunction(L, -1)) {
        if (luaL_getmetafield(L, -1, "__call") == LUA_TNIL) {
            c->missing = 1;
            return 0;
        }
        lua_pop(L, 1);
    }
    fl_handles_check(L, c->ctx); /* no execute() in Lua for such flows */
    c->rec = fl_rec_new(L, c->ctx, 1u << FL_A_FN);
    if (!c->rec) {
        return luaL_error(L, "out of memory");
    }
    fl_rec_set(L, c->rec, FL_A_FN, -1);
    return 0;
}

/* "module.function" for the async stack (a file: its name without ".lua") */
static char* step_name(const char* module, const char* function)
{
    const char* m = module;
    size_t mlen = strlen(m);
    char* out;
    if (is_path(module)) {
        const char* slash = strrchr(module, '/');
        m = slash ? slash + 1 : module;
        mlen = strlen(m);
        if (mlen > 4 && strcmp(m + mlen - 4, ".lua") == 0) {
            mlen -= 4;
        }
    }
    out = malloc(mlen + strlen(function) + 2);
    if (out) {
        memcpy(out, m, mlen);
        out[mlen] = '.';
        strcpy(out + mlen + 1, function);
    }
    return out;
}

static int host_resolve(const char* module, const char* function,
                        futoin_host_step* out, char* err, size_t errlen)
{
    fl_ctx* ctx;
    lua_State* L;
    resolve_call c;
    int top, st;

    pthread_mutex_lock(&host_mx);
    ctx = host_ctx;
    if (ctx && !pthread_equal(host_thread, pthread_self())) {
        ctx = NULL;
    }
    pthread_mutex_unlock(&host_mx);
    if (!ctx || ctx->closed) {
        fl_errf(err, errlen, "lua: cannot resolve %s.%s: no Lua state on "
                              "this thread", module, function);
        return FUTOIN_EINVAL;
    }
    L = ctx->host_L ? ctx->host_L : fl_ctx_state(ctx);
    if (!lua_checkstack(L, 8)) {
        fl_errf(err, errlen, "lua: cannot resolve %s.%s: Lua stack overflow",
                 module, function);
        return FUTOIN_ENOMEM;
    }
    memset(&c, 0, sizeof(c));
    c.ctx = ctx;
    c.module = module;
    c.function = function;
    top = lua_gettop(L);
    lua_pushcfunction(L, resolve_body);
    lua_pushlightuserdata(L, &c);
    st = lua_pcall(L, 1, 0, 0);
    if (st != LUA_OK) {
        const char* msg = lua_tostring(L, -1);
        fl_errf(err, errlen, "lua: cannot load module '%s' (for function "
                              "'%s'): %s", module, function,
                 msg ? msg : "(error object is not a string)");
        lua_settop(L, top);
        if (c.rec) {
            fl_rec_release(c.rec);
        }
        return FUTOIN_EINVAL;
    }
    lua_settop(L, top);
    if (c.missing || !c.rec) {
        fl_errf(err, errlen, "lua: module '%s' has no function '%s'", module,
                 function);
        return FUTOIN_EINVAL;
    }
    c.rec->name = step_name(module, function);
    out->execute = fl_tr_step;
    out->error = NULL;
    out->data = c.rec;
    out->cls = &fl_rec_class;
    return FUTOIN_OK;
}

static const futoin_host_api lua_host = {
        sizeof(futoin_host_api), FUTOIN_HOST_VERSION_1, "lua",
        host_start, host_resolve, host_stop,
};

static void host_counters(long* refs, long* recs)
{
    fl_ctx* ctx;
    pthread_mutex_lock(&host_mx);
    ctx = host_ctx;
    pthread_mutex_unlock(&host_mx);
    *refs = ctx ? ctx->refs : 0;
    *recs = ctx ? ctx->recs : 0;
}

static const fl_host_iface lua_iface = {sizeof(fl_host_iface),
                                        FL_HOST_IFACE_VERSION, &lua_host,
                                        host_counters};

const void* fl_host_iface_get(void)
{
    return &lua_iface;
}

void fl_host_open(lua_State* L, fl_ctx* ctx)
{
    int reg = 0;
    (void)L;
    pthread_mutex_lock(&host_mx);
    if (!host_ctx) {
        host_ctx = ctx;
        host_thread = pthread_self();
    }
    if (!host_registered) {
        host_registered = reg = 1;
    }
    pthread_mutex_unlock(&host_mx);
    if (reg) {
        Dl_info info;
        /* This module stays in the process once loaded: the runtime may
         * hold records of ours (and call their release) after the state
         * that loaded it closed, which dlcloses its C modules. */
        if (dladdr((void*)&lua_iface, &info) && info.dli_fname) {
            dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        }
        /* Lua is the host program: other languages reach it through this
         * table. EBUSY: the plug-in was loaded first (it made this state). */
        futoin_host_register(&lua_host);
    }
}

void fl_host_close(fl_ctx* ctx)
{
    pthread_mutex_lock(&host_mx);
    if (host_ctx == ctx) {
        host_ctx = NULL;
    }
    pthread_mutex_unlock(&host_mx);
}
