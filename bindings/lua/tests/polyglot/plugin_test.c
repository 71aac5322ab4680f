/*
 * The Lua host plug-in (libfutoin_host_lua.so) in a C program, beyond the
 * matrix of tests/polyglot/c_host.c: clear errors where a Lua step is
 * resolved or started (no Lua library, no binding, a module that fails to
 * load, no such function), a Lua runtime error as InternalError with the
 * Lua traceback, the origin of a step resolved by name, the counters the
 * plug-in exports back at zero after flows, and a state closed by the last
 * stop() and made again by the next start(); Lua steps on two more loop
 * threads at once, each thread with its own tool and its own Lua state
 * (globals), asi:tool()'s timers and new roots on each, and those states
 * closed as their threads end (bindings/lua/tests/polyglot/host_steps.lua).
 *
 * Environment: FUTOIN_HOST_PATH (a copy of the plug-in outside the rock
 * tree, so that only LUA_PATH/LUA_CPATH find the binding), LUA_PATH/LUA_CPATH
 * (the rock and tests/polyglot/fragments/lua), FUTOIN_LUA_PLUGIN (that
 * copy's path), FUTOIN_LUA_TEST_DIR (a writable folder for test modules).
 * Last line: "polyglot-lua-plugin: N passed, M failed".
 */
#include <futoin/async.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_steps.h"       /* give_20, copy_str */
#include "futoin_check.h" /* tests/include: CHECK, futoin_check_summary */

static futoin_tool* tool;

static char code[64], info[4096], stack[4096];

static void on_error(FutoInAsyncSteps* as, void* d, const char* c)
{
    (void)d;
    const char* i = as->api->stateVariable(as, NULL, "error_info", NULL, NULL);
    const futoin_async_stack* st = futoin_async_ext(as)->async_stack(as);
    snprintf(code, sizeof(code), "%s", c);
    snprintf(info, sizeof(info), "%s", i ? i : "");
    stack[0] = 0;
    if (st) {
        futoin_async_stack_format(st, stack, sizeof(stack));
    }
}

static long long got_value = -1;

static void take_value(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)as;
    (void)d;
    got_value = a && a->args[0].type && a->args[0].type->flags == FTN_TYPE_INT64
                        ? (long long)a->args[0].i64
                        : -2;
}

/* Run one Lua step by name; returns futoin_host_add()'s result. */
static int run_one(const char* module, const char* function)
{
    FutoInAsyncSteps* as = futoin_root_new(tool);
    int rc;
    code[0] = info[0] = stack[0] = 0;
    rc = futoin_host_add(as, "lua", module, function);
    as->api->execute(as, NULL, on_error);
    futoin_tool_run(tool);
    as->api->free(as);
    return rc;
}

static int (*counters(void))(long*, long*, int*)
{
    const char* path = getenv("FUTOIN_LUA_PLUGIN");
    void* dl = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    union
    {
        void* p;
        int (*fn)(long*, long*, int*);
    } u;
    u.p = dl ? dlsym(dl, "futoin_host_lua_counters") : NULL;
    if (dl) {
        dlclose(dl);
    }
    return u.fn;
}

static void write_file(const char* path, const char* text)
{
    FILE* f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* ---- Lua steps on several loop threads ------------------------------------ */

/* What one loop thread saw: each thread has its own tool and flows, and
 * runs Lua steps in its own Lua state. */
typedef struct thread_run
{
    const char* name;
    pthread_barrier_t* ready; /* both threads have their tool */
    pthread_barrier_t* done;  /* both ran their flows (main reads counters) */
    pthread_barrier_t* leave; /* main read them: the threads may end */
    int rc;                   /* the first futoin_host_add() that failed */
    char code[64], info[1024];
    char first[64], second[64]; /* what host_steps.mark() found */
    long long doubled;          /* host_steps.timers(): v * 2 ... */
    char trace[128];            /* ... and the order its callbacks ran in */
    int freed;                  /* futoin_tool_free() of its tool */
} thread_run;

static void give_name(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs args;
    (void)a;
    memset(&args, 0, sizeof(args));
    args.args[0].type = &ty_str;
    args.args[0].cstr = d;
    args.args[0].length = (uint32_t)strlen(d);
    as->api->success(as, &args);
}

static void take_mark(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)as;
    copy_str(d, 64, &a->args[0]);
}

static void take_timers(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    thread_run* r = d;
    (void)as;
    r->doubled = a->args[0].type && a->args[0].type->flags == FTN_TYPE_INT64
                         ? (long long)a->args[0].i64
                         : -2;
    copy_str(r->trace, sizeof(r->trace), &a->args[1]);
}

static void thread_error(FutoInAsyncSteps* as, void* d, const char* c)
{
    thread_run* r = d;
    const char* i = as->api->stateVariable(as, NULL, "error_info", NULL, NULL);
    snprintf(r->code, sizeof(r->code), "%s", c);
    snprintf(r->info, sizeof(r->info), "%s", i ? i : "");
}

/* One flow on `t`: a C step giving `give` (NULL: 20), the Lua step
 * host_steps.<fn>, a C step taking its result. */
static void thread_flow(futoin_tool* t, thread_run* r, const char* give,
                        const char* fn, FutoInAsyncSteps_execute_callback take,
                        void* into)
{
    FutoInAsyncSteps* as = futoin_root_new(t);
    int rc;
    if (give) {
        as->api->add(as, (void*)give, give_name, NULL);
    } else {
        as->api->add(as, NULL, give_20, NULL);
    }
    rc = futoin_host_add(as, "lua", "host_steps", fn);
    if (rc != FUTOIN_OK && r->rc == FUTOIN_OK) {
        r->rc = rc;
    }
    as->api->add(as, into, take, NULL);
    as->api->execute(as, r, thread_error);
    futoin_tool_run(t);
    as->api->free(as);
}

static void* loop_thread(void* arg)
{
    thread_run* r = arg;
    futoin_tool* t;
    char second[64];
    int ok = futoin_tool_new(&t, NULL) == FUTOIN_OK;
    pthread_barrier_wait(r->ready);
    if (ok) {
        snprintf(second, sizeof(second), "%s-again", r->name);
        thread_flow(t, r, r->name, "mark", take_mark, r->first);
        thread_flow(t, r, second, "mark", take_mark, r->second);
        thread_flow(t, r, NULL, "timers", take_timers, r);
    } else {
        snprintf(r->code, sizeof(r->code), "no tool");
    }
    /* the roots Lua made on this tool are gone: it can be freed */
    r->freed = ok ? futoin_tool_free(t) : FUTOIN_EINVAL;
    pthread_barrier_wait(r->done);
    pthread_barrier_wait(r->leave);
    return NULL; /* the Lua state of this thread is closed as it ends */
}

int main(void)
{
    const char* dir = getenv("FUTOIN_LUA_TEST_DIR");
    char path[1024], lua_path[4096];
    long refs = -1, recs = -1;
    int open = -1;
    int (*cnt)(long*, long*, int*);

    if (!dir || futoin_tool_new(&tool, NULL) != FUTOIN_OK) {
        fprintf(stderr, "FUTOIN_LUA_TEST_DIR is not set\n");
        return 2;
    }

    /* test modules: one that fails to load, one whose step raises */
    snprintf(path, sizeof(path), "%s/bad_module.lua", dir);
    write_file(path, "local x = = 1\n");
    snprintf(path, sizeof(path), "%s/raising.lua", dir);
    write_file(path, "local M = {}\n"
                     "function M.boom(asi, v)\n"
                     "  error('boom ' .. tostring(v))\n"
                     "end\n"
                     "return M\n");
    snprintf(lua_path, sizeof(lua_path), "%s/?.lua;%s", dir,
             getenv("LUA_PATH") ? getenv("LUA_PATH") : ";;");
    setenv("LUA_PATH", lua_path, 1);

    /* no Lua library: a clear error, then Lua starts once it is there */
    setenv("FUTOIN_LUA_LIBRARY", "/nonexistent/liblua5.4.so.0", 1);
    CHECK(run_one("polyglot_fragments", "echo") < 0, "resolved without Lua");
    CHECK(strcmp(code, "InvalidRequest") == 0, "code '%s'", code);
    CHECK(strstr(info, "lua: Lua 5.4 is not installed: cannot load "
                       "/nonexistent/liblua5.4.so.0"),
          "info '%s'", info);
    unsetenv("FUTOIN_LUA_LIBRARY");

    /* no binding to require: LUA_CPATH/LUA_PATH without the rock (the
     * plug-in is a copy outside the rock tree: no fallback either) */
    {
        const char* cp = getenv("LUA_CPATH");
        const char* lp = getenv("LUA_PATH");
        char* saved_c = cp ? strdup(cp) : NULL;
        char* saved_l = lp ? strdup(lp) : NULL;
        setenv("LUA_CPATH", "/nonexistent/?.so", 1);
        setenv("LUA_PATH", "/nonexistent/?.lua", 1);
        CHECK(run_one("polyglot_fragments", "echo") < 0, "resolved without the binding");
        CHECK(strstr(info, "lua: cannot load the Lua binding (require "
                           "\"futoin_async\"; set LUA_PATH/LUA_CPATH"),
              "info '%s'", info);
        /* ... naming the rock and the commands that set it up */
        CHECK(strstr(info, "luarocks --lua-version=5.4 install futoin_async, then "
                           "eval \"$(luarocks --lua-version=5.4 path)\""),
              "info '%s'", info);
        setenv("LUA_CPATH", saved_c ? saved_c : "", 1);
        setenv("LUA_PATH", saved_l ? saved_l : "", 1);
        free(saved_c);
        free(saved_l);
    }

    CHECK(run_one("bad_module", "f") < 0, "resolved a module that fails");
    CHECK(strcmp(code, "InvalidRequest") == 0, "code '%s'", code);
    CHECK(strstr(info, "lua: cannot load module 'bad_module' (for function 'f'): ")
                  && strstr(info, "bad_module.lua:1:"),
          "info '%s'", info);

    CHECK(run_one("no_such_module_xyz", "f") < 0, "resolved a missing module");
    CHECK(strstr(info, "module 'no_such_module_xyz' not found"), "info '%s'", info);

    CHECK(run_one("polyglot_fragments", "no_such_fn") < 0, "resolved a missing function");
    CHECK(strstr(info, "lua: module 'polyglot_fragments' has no function "
                       "'no_such_fn'"),
          "info '%s'", info);

    /* a file path as the module */
    snprintf(path, sizeof(path), "%s/raising.lua", dir);
    CHECK(run_one(path, "boom") == FUTOIN_OK, "a file by path not resolved: %s", info);
    CHECK(strcmp(code, "InternalError") == 0, "code '%s'", code);
    CHECK(strstr(info, "boom nil") && strstr(info, "stack traceback:")
                  && strstr(info, "raising.lua:3:"),
          "a Lua error's info: '%s'", info);
    CHECK(strstr(stack, "  at lua raising.boom (") && strstr(stack, "raising.lua:2)"),
          "stack:\n%s", stack);

    /* a coroutine step (fa.async) resolved by name: its frame is the
     * user's function (file:line), not the Lua layer's wrapper; its error
     * reaches C with the message and the coroutine's traceback */
    snprintf(path, sizeof(path), "%s/co_mod.lua", dir);
    write_file(path, "local fa = require 'futoin_async'\n"
                     "local M = {}\n"
                     "M.fail = fa.async(function(asi, v)\n"
                     "  error('co failed ' .. tostring(v))\n"
                     "end)\n"
                     "return M\n");
    CHECK(run_one("co_mod", "fail") == FUTOIN_OK, "co_mod.fail not resolved: %s", info);
    CHECK(strcmp(code, "InternalError") == 0, "code '%s'", code);
    CHECK(strstr(info, "co_mod.lua:4: co failed nil") && strstr(info, "stack traceback:"),
          "a coroutine step's error: '%s'", info);
    CHECK(strstr(stack, "  at lua co_mod.fail (") && strstr(stack, "co_mod.lua:3)\n")
                  && !strstr(stack, "futoin_async/"),
          "stack:\n%s", stack);

    /* asi:tool() and asi:new_instance() in a flow of this C program: the
     * Tool of this program's loop (a borrowed one: never freed by Lua), a
     * new root on it, a timer of it; the step waits through set_cancel()
     * alone (FTN12 §1.3) until the new root's on_done completes it */
    snprintf(path, sizeof(path), "%s/tooluse.lua", dir);
    write_file(path,
               "local M = {}\n"
               "function M.roundtrip(asi, v)\n"
               "  local t = asi:tool()\n"
               "  assert(t ~= nil and t == asi:tool(), 'one Tool object per tool')\n"
               "  assert(t:attached() and t:is_same_thread())\n"
               "  assert(not pcall(t.run, t), 'the program runs its loop')\n"
               "  local sub = asi:new_instance()\n"
               "  assert(sub:tool() == t)\n"
               "  sub:add(function(a) return v + 1 end)\n"
               "  asi:set_cancel(function() sub:cancel() end)\n"
               "  sub:execute(nil, function(ok, w)\n"
               "    t:deferred(1, function() asi:success(ok and w * 2 or -1) end)\n"
               "  end)\n"
               "end\n"
               "return M\n");
    {
        FutoInAsyncSteps* as = futoin_root_new(tool);
        int rc;
        code[0] = info[0] = 0;
        got_value = -1;
        as->api->add(as, NULL, give_20, NULL);
        rc = futoin_host_add(as, "lua", "tooluse", "roundtrip");
        as->api->add(as, NULL, take_value, NULL);
        as->api->execute(as, NULL, on_error);
        futoin_tool_run(tool);
        as->api->free(as);
        CHECK(rc == FUTOIN_OK, "tooluse.roundtrip not resolved: %s", info);
        CHECK(got_value == 42 && !code[0], "asi:tool() / new_instance(): got %lld, %s %s",
              got_value, code, info);
    }

    /* Two more loop threads, each with its own tool, running Lua steps at
     * the same time: each gets a Lua state of its own (its globals are
     * its own), the tool of its flow from asi:tool() with working timers
     * and new roots; their states are closed as the threads end. */
    {
        pthread_t th[2];
        thread_run runs[2];
        pthread_barrier_t ready, done, leave;
        const char* names[2] = {"left", "right"};
        long before_refs = -1, before_recs = -1;
        int before_open = -1, during_open = -1;
        cnt = counters();
        if (cnt) {
            cnt(&before_refs, &before_recs, &before_open);
        }
        pthread_barrier_init(&ready, NULL, 2);
        pthread_barrier_init(&done, NULL, 3);
        pthread_barrier_init(&leave, NULL, 3);
        for (int i = 0; i < 2; ++i) {
            memset(&runs[i], 0, sizeof(runs[i]));
            runs[i].name = names[i];
            runs[i].ready = &ready;
            runs[i].done = &done;
            runs[i].leave = &leave;
            runs[i].doubled = -1;
            pthread_create(&th[i], NULL, loop_thread, &runs[i]);
        }
        pthread_barrier_wait(&done);
        if (cnt) {
            long r, c;
            cnt(&r, &c, &during_open);
        }
        pthread_barrier_wait(&leave);
        for (int i = 0; i < 2; ++i) {
            thread_run* r = &runs[i];
            pthread_join(th[i], NULL);
            CHECK(r->rc == FUTOIN_OK && !r->code[0], "thread %s: rc %d, %s %s", r->name,
                  r->rc, r->code, r->info);
            CHECK(strcmp(r->first, "none") == 0 && strcmp(r->second, r->name) == 0,
                  "thread %s: the Lua globals are not its own: first mark found '%s', "
                  "second '%s'",
                  r->name, r->first, r->second);
            CHECK(r->doubled == 40 && strcmp(r->trace, "immediate,deferred,root") == 0,
                  "thread %s: asi:tool() timers and new_instance(): %lld '%s'", r->name,
                  r->doubled, r->trace);
            CHECK(r->freed == FUTOIN_OK,
                  "thread %s: its tool cannot be freed after Lua made a root on it: %d",
                  r->name, r->freed);
        }
        pthread_barrier_destroy(&ready);
        pthread_barrier_destroy(&done);
        pthread_barrier_destroy(&leave);
        CHECK(before_open == 1 && during_open == 3,
              "a Lua state per loop thread: %d before, %d while the threads lived",
              before_open, during_open);
        if (cnt) {
            cnt(&refs, &recs, &open);
            CHECK(open == 1 && refs == before_refs && recs == before_recs,
                  "the threads' states are closed as they end: %d open, refs %ld -> "
                  "%ld, records %ld -> %ld",
                  open, before_refs, refs, before_recs, recs);
        }
    }

    /* the counters: nothing held after the flows; the state is open */
    CHECK(cnt != NULL, "futoin_host_lua_counters() not found");
    if (cnt) {
        cnt(&refs, &recs, &open);
        CHECK(refs == 0 && recs == 0 && open == 1, "refs %ld recs %ld open %d",
              refs, recs, open);
    }

    /* the last stop() closes the state; the next start() makes a new one */
    futoin_host_shutdown();
    if (cnt) {
        cnt(&refs, &recs, &open);
        CHECK(open == 0, "the state is still open");
    }
    CHECK(run_one("polyglot_fragments", "fail") == FUTOIN_OK, "not resolved: %s", info);
    CHECK(strcmp(code, "FragmentError") == 0 && strcmp(info, "lua") == 0,
          "after a restart: %s %s", code, info);
    futoin_host_shutdown();

    CHECK(futoin_tool_free(tool) == FUTOIN_OK, "tool not freed");
    return futoin_check_summary("polyglot-lua-plugin");
}
