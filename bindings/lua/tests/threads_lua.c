/*
 * Test-only Lua module `threads_lua`: a loop thread of its own, with a
 * futoin_tool of its own, that adds Lua steps by name (futoin_host_add) in
 * a Lua program: the binding's host must run them in a Lua state of that
 * thread (made for it), never in the program's state, and close it as the
 * thread ends. Built by test.sh; used by threads_spec.lua.
 *
 *   threads_lua.run(module, { {fn [, str]}, ... }) -> results, states, freed
 *
 * runs one flow per entry on a new thread (a C step giving `str`, or the
 * integer 20 without one; the Lua step module.fn; a C step taking up to
 * two values), one after the other, then joins the thread. `results[i]` is
 * { ok = true, v1, v2 } or { ok = false, code = ..., info = ... };
 * `states` is how many Lua states the host had while the thread still
 * lived (after its flows); `freed`: whether the thread could free its tool
 * after them (roots Lua made on it are gone); threads_lua.states(): how many it has now.
 * libfutoin_async is the copy the binding loaded
 * (by soname, RTLD_NOLOAD): nothing is linked.
 */
#include <lauxlib.h>
#include <lua.h>

#include <futoin/async.h>
#include <futoin/sys/host.h>

#include "futoin_lua_host.h" /* bindings/lua/host: the host's counters */

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_JOBS = 8 };

typedef struct job
{
    char* fn;
    char* give; /* NULL: the integer 20 */
    int done, ok, nvals;
    int is_int[2];
    long long ints[2];
    char strs[2][128];
    char code[64], info[512];
} job;

typedef struct api
{
    int (*tool_new)(futoin_tool**, const futoin_tool_options*);
    int (*tool_free)(futoin_tool*);
    int (*tool_run)(futoin_tool*);
    FutoInAsyncSteps* (*root_new)(futoin_tool*);
    int (*host_add)(FutoInAsyncSteps*, const char*, const char*, const char*);
} api;

typedef struct run
{
    api a;
    const fl_host_iface* host;
    char* module;
    job jobs[MAX_JOBS];
    int njobs;
    int states;
    int freed; /* futoin_tool_free() of the thread's tool */
} run;

static const FutoInType ty_str = {FTN_TYPE_STRING, NULL};
static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};

static void give(FutoInAsyncSteps* as, void* d, const FutoInArgs* in)
{
    job* j = d;
    FutoInArgs args;
    (void)in;
    memset(&args, 0, sizeof(args));
    if (j->give) {
        args.args[0].type = &ty_str;
        args.args[0].cstr = j->give;
        args.args[0].length = (uint32_t)strlen(j->give);
    } else {
        args.args[0].type = &ty_i64;
        args.args[0].i64 = 20;
    }
    as->api->success(as, &args);
}

static void take(FutoInAsyncSteps* as, void* d, const FutoInArgs* in)
{
    job* j = d;
    (void)as;
    j->ok = 1;
    for (int i = 0; i < 2 && in && in->args[i].type; ++i) {
        const FutoInBinaryValue* v = &in->args[i];
        if (v->type->flags == FTN_TYPE_INT64) {
            j->is_int[i] = 1;
            j->ints[i] = (long long)v->i64;
        } else if (v->type->flags == FTN_TYPE_STRING) {
            size_t n = v->length < sizeof(j->strs[i]) - 1 ? v->length : sizeof(j->strs[i]) - 1;
            memcpy(j->strs[i], v->cstr, n);
            j->strs[i][n] = 0;
        }
        j->nvals = i + 1;
    }
}

static void failed(FutoInAsyncSteps* as, void* d, const char* code)
{
    job* j = d;
    const char* i = as->api->stateVariable(as, NULL, "error_info", NULL, NULL);
    j->ok = 0;
    strncpy(j->code, code, sizeof(j->code) - 1);
    strncpy(j->info, i ? i : "", sizeof(j->info) - 1);
}

static void* loop_thread(void* arg)
{
    run* r = arg;
    futoin_tool* t;
    r->freed = FUTOIN_EINVAL;
    if (r->a.tool_new(&t, NULL) != FUTOIN_OK) {
        return NULL;
    }
    for (int i = 0; i < r->njobs; ++i) {
        job* j = &r->jobs[i];
        FutoInAsyncSteps* as = r->a.root_new(t);
        as->api->add(as, j, give, NULL);
        r->a.host_add(as, "lua", r->module, j->fn);
        as->api->add(as, j, take, NULL);
        as->api->execute(as, j, failed);
        r->a.tool_run(t);
        as->api->free(as);
        j->done = 1;
    }
    if (r->host->version >= 2 && r->host->counters2) {
        long refs, recs;
        r->host->counters2(&refs, &recs, &r->states);
    }
    r->freed = r->a.tool_free(t);
    return NULL; /* the host closes this thread's Lua state as it ends */
}

static void run_free(run* r)
{
    for (int i = 0; i < r->njobs; ++i) {
        free(r->jobs[i].fn);
        free(r->jobs[i].give);
    }
    free(r->module);
    free(r);
}

/* The binding's host table (the plug-in forwards to the same). */
static const fl_host_iface* host_of(lua_State* L)
{
    const fl_host_iface* host;
    lua_getglobal(L, "require");
    lua_pushliteral(L, "futoin_async");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "core");
    lua_getfield(L, -1, "_host_iface");
    lua_call(L, 0, 1);
    host = lua_touserdata(L, -1);
    lua_pop(L, 3);
    return host;
}

static int t_run(lua_State* L)
{
    const char* module = luaL_checkstring(L, 1);
    void* core;
    pthread_t th;
    run* r;
    luaL_checktype(L, 2, LUA_TTABLE);
    r = calloc(1, sizeof(*r));
    if (!r) {
        return luaL_error(L, "out of memory");
    }
    core = dlopen("libfutoin_async.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (!core) {
        free(r);
        return luaL_error(L, "libfutoin_async.so.0 is not loaded");
    }
    *(void**)&r->a.tool_new = dlsym(core, "futoin_tool_new");
    *(void**)&r->a.tool_free = dlsym(core, "futoin_tool_free");
    *(void**)&r->a.tool_run = dlsym(core, "futoin_tool_run");
    *(void**)&r->a.root_new = dlsym(core, "futoin_root_new");
    *(void**)&r->a.host_add = dlsym(core, "futoin_host_add");
    dlclose(core); /* the binding keeps it loaded */
    r->host = host_of(L);
    r->module = strdup(module);
    r->njobs = (int)luaL_len(L, 2);
    if (r->njobs > MAX_JOBS) {
        r->njobs = MAX_JOBS;
    }
    for (int i = 0; i < r->njobs; ++i) {
        lua_geti(L, 2, i + 1);
        lua_geti(L, -1, 1);
        r->jobs[i].fn = strdup(luaL_checkstring(L, -1));
        lua_pop(L, 1);
        if (lua_geti(L, -1, 2) == LUA_TSTRING) {
            r->jobs[i].give = strdup(lua_tostring(L, -1));
        }
        lua_pop(L, 2);
    }
    if (!r->host || !r->a.tool_new || !r->a.host_add || pthread_create(&th, NULL, loop_thread, r) != 0) {
        run_free(r);
        return luaL_error(L, "cannot start the loop thread");
    }
    pthread_join(th, NULL);
    lua_createtable(L, r->njobs, 0);
    for (int i = 0; i < r->njobs; ++i) {
        job* j = &r->jobs[i];
        lua_createtable(L, 2, 3);
        lua_pushboolean(L, j->done && j->ok);
        lua_setfield(L, -2, "ok");
        if (j->ok) {
            for (int k = 0; k < j->nvals; ++k) {
                if (j->is_int[k]) {
                    lua_pushinteger(L, (lua_Integer)j->ints[k]);
                } else {
                    lua_pushstring(L, j->strs[k]);
                }
                lua_seti(L, -2, k + 1);
            }
        } else {
            lua_pushstring(L, j->code);
            lua_setfield(L, -2, "code");
            lua_pushstring(L, j->info);
            lua_setfield(L, -2, "info");
        }
        lua_seti(L, -2, i + 1);
    }
    lua_pushinteger(L, r->states);
    lua_pushboolean(L, r->freed == FUTOIN_OK);
    run_free(r);
    return 3;
}

/* threads_lua.states() -> how many Lua states the host has now */
static int t_states(lua_State* L)
{
    const fl_host_iface* host = host_of(L);
    long refs, recs;
    int n = 0;
    if (host && host->version >= 2 && host->counters2) {
        host->counters2(&refs, &recs, &n);
    }
    lua_pushinteger(L, n);
    return 1;
}

int luaopen_threads_lua(lua_State* L)
{
    static const luaL_Reg fns[] = {{"run", t_run}, {"states", t_states}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
