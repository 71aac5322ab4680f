/*
 * The language host "lua" (futoin/sys/host.h) and the origins of Lua steps.
 *
 * The host runs in the Lua states the module was opened in, one per loop
 * thread (see "the host's states" below):
 *  - Lua is the host program (lua5.4 running a script that required
 *    futoin_async): luaopen registers the host (futoin_host_register), so
 *    steps of other languages can add Lua functions to a flow by name;
 *  - another language is the host: libfutoin_async loads the plug-in
 *    libfutoin_host_lua.so (host/lua_host_plugin.c), which makes a first
 *    state, requires futoin_async, hands the state over (adopt) and
 *    forwards to the same table (futoin_lua_host.h).
 * A loop thread without a state gets one made here when a Lua step is
 * resolved on it.
 *
 * resolve(module, function): `require(module)` (or, for a path ending in
 * ".lua" or holding a '/', the file it names, loaded once), then the field
 * `function` of what it returned, which must be callable. The step runs
 * through the binding's own trampoline (values, errors with the Lua
 * traceback, cancel handlers, state), as a step added by asi:add() does.
 *
 * Origins: every step the binding adds carries fl_rec_class; its origin()
 * reads the function's source and first line (lua_getinfo ">S") and its
 * "module.field" name (a loaded module's table holding it) only when an
 * async stack is recorded, and keeps the strings in the record until its
 * release.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "futoin_lua.h"
#include "futoin_lua_host.h"

#include <lualib.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- origins ----------------------------------------------------------------- */

/* "module.field" of the function at `fn` when a table of package.loaded
 * holds it (as luaL_traceback names functions; "_G.f" is "f"), malloc'ed;
 * NULL if none. Raw accesses only: no Lua code runs. */
static char* loaded_name(lua_State* L, int fn)
{
    char* out = NULL;
    int global = 0; /* `out` names a global: a module's field is better */
    fn = lua_absindex(L, fn);
    luaL_checkstack(L, 6, "origin");
    if (lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE) != LUA_TTABLE) {
        lua_pop(L, 1);
        return NULL;
    }
    lua_pushnil(L);
    while ((!out || global) && lua_next(L, -2)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE) {
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, -1, fn)) {
                    const char* mod = lua_tostring(L, -4);
                    const char* field = lua_tostring(L, -2);
                    size_t lm = strlen(mod), lf = strlen(field);
                    int in_g = strcmp(mod, LUA_GNAME) == 0;
                    if (!out || !in_g) {
                        char* name = malloc(lm + lf + 2);
                        if (name && in_g) {
                            memcpy(name, field, lf + 1);
                        } else if (name) {
                            memcpy(name, mod, lm);
                            name[lm] = '.';
                            memcpy(name + lm + 1, field, lf + 1);
                        }
                        if (name) {
                            free(out);
                            out = name;
                            global = in_g;
                        }
                    }
                    lua_pop(L, 2);
                    break;
                }
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 1);
    }
    if (out && !global) {
        lua_pop(L, 1); /* the key the outer lua_next() left */
    }
    lua_pop(L, 1);
    return out;
}

/* Runs protected: fill the origin of record (light userdata 1): the step
 * function's source and first line, and its name when a loaded module's
 * table holds it. A coroutine step (fa.async) is shown as the user's
 * function it runs: the Lua layer maps its wrappers to them
 * (ctx->async_fns, a table with weak keys). */
static int origin_body(lua_State* L)
{
    fl_rec* r = lua_touserdata(L, 1);
    fl_ctx* ctx = r->ctx;
    lua_Debug ar;
    fl_rec_push(L, r, FL_A_FN); /* 2 */
    if (!r->name) {
        r->name = loaded_name(L, 2);
        fl_rec_origin_set(r); /* even NULL: then src may follow */
    }
    if (ctx->async_fns != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, ctx->async_fns);
        lua_pushvalue(L, 2);
        if (lua_rawget(L, -2) == LUA_TFUNCTION) {
            lua_replace(L, 2);
        }
        lua_settop(L, 2);
    }
    if (lua_isfunction(L, 2) && lua_getinfo(L, ">S", &ar) && *ar.what != 'C') {
        const char* file = ar.source && ar.source[0] == '@' ? ar.source + 1
                                                            : ar.short_src;
        r->src = strdup(file);
        r->line = ar.linedefined > 0 ? (uint32_t)ar.linedefined : 0;
        fl_rec_origin_set(r);
    }
    return 0;
}

static void rec_origin(void* data, futoin_frame_origin* out)
{
    fl_rec* r = data;
    fl_ctx* ctx = r->ctx;
    out->language = "lua";
    if (!r->src && !ctx->closed && fl_rec_has(r, FL_A_FN)) {
        lua_State* L = fl_ctx_state(ctx);
        if (lua_checkstack(L, 4)) {
            int top = lua_gettop(L);
            lua_pushcfunction(L, origin_body);
            lua_pushlightuserdata(L, r);
            lua_pcall(L, 1, 0, 0); /* an error (out of memory): no origin */
            lua_settop(L, top);
        }
    }
    out->function = r->name;
    out->file = r->src;
    out->line = r->src ? r->line : 0;
}

const futoin_step_class fl_rec_class = {sizeof(futoin_step_class),
                                        fl_rec_release, rec_origin};

/* ---- the host's states: one per loop thread ------------------------------ */

/*
 * Every Lua state that loads this module offers the host on the thread it
 * was opened on; a thread's host state is the oldest of them still open.
 * A thread that has none gets one when it first needs it (a tool of a C,
 * Python or Java program on that thread adds a Lua step): made here with
 * luaL_newstate() + luaL_openlibs(), package.path/cpath as the state opened
 * last had them when it loaded this module (the plug-in's first state: its
 * LUA_PATH/LUA_CPATH plus the rock tree), then require "futoin_async".
 * Such a state is the host's own ("own"), as is the plug-in's first one
 * (adopt()): it is closed on its thread when that thread ends (a
 * pthread key's destructor), or by the last stop() (futoin_host_shutdown(),
 * which the runtime documents as called with no flow running). A state a
 * Lua program opened is never closed here. So a lua_State is only ever used
 * on its own thread, and its globals are that thread's.
 */
typedef struct host_state
{
    fl_ctx* ctx;     /* the context of the state */
    lua_State* own;  /* the state, when the host closes it; else NULL */
    pthread_t thread;
    struct host_state* next;
} host_state;

static pthread_mutex_t host_mx = PTHREAD_MUTEX_INITIALIZER;
static host_state* host_states; /* oldest first; under host_mx */
static char* boot_path;         /* package.path of the state opened last */
static char* boot_cpath;        /* ... and its package.cpath */
static int host_registered;
static int host_starts;         /* start()s not matched by a stop() yet */
/* one state made at a time (luaopen runs SWIG's module set-up) */
static pthread_mutex_t make_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static int exit_key_ok;

_Thread_local fl_ctx* fl_host_caller;

/* The host state of thread `th` (host_mx held), or NULL. */
static host_state* state_of(pthread_t th)
{
    for (host_state* h = host_states; h; h = h->next) {
        if (pthread_equal(h->thread, th)) {
            return h;
        }
    }
    return NULL;
}

static host_state* entry_of(fl_ctx* ctx)
{
    for (host_state* h = host_states; h; h = h->next) {
        if (h->ctx == ctx) {
            return h;
        }
    }
    return NULL;
}

/* Take one state the host owns: of thread `th`, or of any thread (`all`).
 * NULL when there is none left. */
static lua_State* take_own(pthread_t th, int all)
{
    lua_State* L = NULL;
    pthread_mutex_lock(&host_mx);
    for (host_state* h = host_states; h && !L; h = h->next) {
        if (h->own && (all || pthread_equal(h->thread, th))) {
            L = h->own;
            h->own = NULL;
        }
    }
    pthread_mutex_unlock(&host_mx);
    return L;
}

/* A thread that had a state of the host ends: close it there. */
static void on_thread_exit(void* unused)
{
    lua_State* L;
    (void)unused;
    while ((L = take_own(pthread_self(), 0)) != NULL) {
        lua_close(L); /* its context leaves host_states (fl_host_close) */
    }
}

static void make_exit_key(void)
{
    exit_key_ok = pthread_key_create(&exit_key, on_thread_exit) == 0;
}

/* The state of `ctx` (on this thread) is the host's to close. */
static int own_state(fl_ctx* ctx, lua_State* L)
{
    host_state* h;
    pthread_once(&exit_once, make_exit_key);
    if (!exit_key_ok || pthread_setspecific(exit_key, &exit_key) != 0) {
        return FUTOIN_ENOMEM;
    }
    pthread_mutex_lock(&host_mx);
    h = entry_of(ctx);
    if (h) {
        h->own = L;
    }
    pthread_mutex_unlock(&host_mx);
    return h ? FUTOIN_OK : FUTOIN_EINVAL;
}

/* Runs protected in a new state: the standard libraries, the paths,
 * require "futoin_async"; returns the context (a light userdata). */
static int make_body(lua_State* L)
{
    const char* path = lua_touserdata(L, 1);
    const char* cpath = lua_touserdata(L, 2);
    luaL_openlibs(L);
    lua_getglobal(L, "package");
    if (path) {
        lua_pushstring(L, path);
        lua_setfield(L, -2, "path");
    }
    if (cpath) {
        lua_pushstring(L, cpath);
        lua_setfield(L, -2, "cpath");
    }
    lua_getglobal(L, "require");
    lua_pushliteral(L, "futoin_async");
    lua_call(L, 1, 0);
    lua_pushlightuserdata(L, fl_ctx_get(L));
    return 1;
}

/* A new state for this thread, owned by the host; NULL (err written) if it
 * cannot be had. */
static fl_ctx* make_state(char* err, size_t errlen)
{
    char* path = NULL;
    char* cpath = NULL;
    fl_ctx* ctx = NULL;
    lua_State* L;
    pthread_mutex_lock(&make_mx);
    pthread_mutex_lock(&host_mx);
    if (boot_path) {
        path = strdup(boot_path);
    }
    if (boot_cpath) {
        cpath = strdup(boot_cpath);
    }
    pthread_mutex_unlock(&host_mx);
    L = luaL_newstate();
    if (!L) {
        fl_errf(err, errlen, "lua: cannot make a Lua state for this thread "
                              "(out of memory)");
        goto out;
    }
    lua_pushcfunction(L, make_body);
    lua_pushlightuserdata(L, path);
    lua_pushlightuserdata(L, cpath);
    if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
        const char* msg = lua_tostring(L, -1);
        fl_errf(err, errlen, "lua: cannot make a Lua state for this thread "
                              "(require \"futoin_async\"): %s",
                 msg ? msg : "(error object is not a string)");
        lua_close(L);
        goto out;
    }
    ctx = lua_touserdata(L, -1);
    lua_settop(L, 0);
    if (own_state(ctx, L) != FUTOIN_OK) {
        fl_errf(err, errlen, "lua: cannot keep a Lua state for this thread");
        lua_close(L);
        ctx = NULL;
    }
out:
    pthread_mutex_unlock(&make_mx);
    free(path);
    free(cpath);
    return ctx;
}

/* The host state of the calling thread: the state asking to resolve (a
 * Lua step calling add_foreign()), else the thread's, else a new one. */
static fl_ctx* this_thread_state(char* err, size_t errlen)
{
    fl_ctx* ctx = fl_host_caller;
    host_state* h;
    if (ctx && !ctx->closed) {
        return ctx;
    }
    pthread_mutex_lock(&host_mx);
    h = state_of(pthread_self());
    ctx = h ? h->ctx : NULL;
    pthread_mutex_unlock(&host_mx);
    return ctx ? ctx : make_state(err, errlen);
}

/* ---- the host ------------------------------------------------------------------ */

static int host_start(futoin_tool* tool, char* err, size_t errlen)
{
    (void)tool;
    if (!this_thread_state(err, errlen)) {
        return FUTOIN_EINVAL;
    }
    pthread_mutex_lock(&host_mx);
    ++host_starts;
    pthread_mutex_unlock(&host_mx);
    return FUTOIN_OK;
}

/* The last stop() closes every state the host owns, on any thread. */
static void host_stop(void)
{
    lua_State* L;
    int last;
    pthread_mutex_lock(&host_mx);
    last = host_starts > 0 && --host_starts == 0;
    pthread_mutex_unlock(&host_mx);
    while (last && (L = take_own(pthread_self(), 1)) != NULL) {
        lua_close(L);
    }
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

    char why[512];
    ctx = this_thread_state(why, sizeof(why));
    if (!ctx) {
        fl_errf(err, errlen, "%s (resolving %s.%s)", why, module, function);
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
    fl_rec_origin_set(c.rec);
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

/* What the binding holds in every state of the host (call it with no flow
 * running: the counts of other threads' states are read as they are). */
static void host_counters2(long* refs, long* recs, int* states)
{
    long r = 0, c = 0;
    int n = 0;
    pthread_mutex_lock(&host_mx);
    for (host_state* h = host_states; h; h = h->next) {
        r += h->ctx->refs;
        c += h->ctx->recs;
        ++n;
    }
    pthread_mutex_unlock(&host_mx);
    *refs = r;
    *recs = c;
    if (states) {
        *states = n;
    }
}

static void host_counters(long* refs, long* recs)
{
    host_counters2(refs, recs, NULL);
}

/* The plug-in made `L` on this thread and loaded this module in it. */
static int host_adopt(lua_State* L)
{
    fl_ctx* ctx = fl_ctx_peek(L);
    return ctx ? own_state(ctx, L) : FUTOIN_EINVAL;
}

static const fl_host_iface lua_iface = {sizeof(fl_host_iface),
                                        FL_HOST_IFACE_VERSION, &lua_host,
                                        host_counters, host_adopt,
                                        host_counters2};

const void* fl_host_iface_get(void)
{
    return &lua_iface;
}

/* Keep what a state created now needs: package.path/cpath of `L`. */
static void keep_paths(lua_State* L)
{
    char* path = NULL;
    char* cpath = NULL;
    int top = lua_gettop(L);
    if (lua_getglobal(L, "package") == LUA_TTABLE
        && lua_getfield(L, top + 1, "path") == LUA_TSTRING
        && lua_getfield(L, top + 1, "cpath") == LUA_TSTRING) {
        path = strdup(lua_tostring(L, -2));
        cpath = strdup(lua_tostring(L, -1));
    }
    lua_settop(L, top);
    if (!path || !cpath) {
        free(path);
        free(cpath);
        return;
    }
    pthread_mutex_lock(&host_mx);
    free(boot_path);
    free(boot_cpath);
    boot_path = path;
    boot_cpath = cpath;
    pthread_mutex_unlock(&host_mx);
}

void fl_host_open(lua_State* L, fl_ctx* ctx)
{
    int reg = 0;
    host_state* h;
    keep_paths(L);
    h = calloc(1, sizeof(*h));
    if (!h) {
        luaL_error(L, "futoin_async: out of memory");
    }
    h->ctx = ctx;
    h->thread = pthread_self();
    pthread_mutex_lock(&host_mx);
    {
        host_state** tail = &host_states;
        while (*tail) {
            tail = &(*tail)->next;
        }
        *tail = h;
    }
    if (!host_registered) {
        host_registered = reg = 1;
    }
    pthread_mutex_unlock(&host_mx);
    if (reg) {
        Dl_info info;
        /* This module stays in the process once loaded: the runtime may
         * hold records of ours (and call their release) after the state
         * that loaded it closed, which dlcloses its C modules; and a
         * thread's state is closed by this module's code when the thread
         * ends. */
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
    host_state* gone = NULL;
    pthread_mutex_lock(&host_mx);
    for (host_state** p = &host_states; *p; p = &(*p)->next) {
        if ((*p)->ctx == ctx) {
            gone = *p;
            *p = gone->next;
            break;
        }
    }
    pthread_mutex_unlock(&host_mx);
    free(gone);
}
