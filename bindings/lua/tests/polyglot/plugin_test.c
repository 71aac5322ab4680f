/*
 * The Lua host plug-in (libfutoin_host_lua.so) in a C program, beyond the
 * matrix of tests/polyglot/c_host.c: clear errors where a Lua step is
 * resolved or started (no Lua library, no binding, a module that fails to
 * load, no such function), a Lua runtime error as InternalError with the
 * Lua traceback, the origin of a step resolved by name, the counters the
 * plug-in exports back at zero after flows, and a state closed by the last
 * stop() and made again by the next start().
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

static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};
static long long got_value = -1;

static void give_20(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs args;
    (void)d;
    (void)a;
    memset(&args, 0, sizeof(args));
    args.args[0].type = &ty_i64;
    args.args[0].i64 = 20;
    as->api->success(as, &args);
}

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

/* A flow of a tool on another thread: the Lua state is not its. */
static void* other_thread(void* arg)
{
    futoin_tool* t;
    FutoInAsyncSteps* as;
    int* rc = arg;
    if (futoin_tool_new(&t, NULL) != FUTOIN_OK) {
        return NULL;
    }
    as = futoin_root_new(t);
    code[0] = info[0] = 0;
    *rc = futoin_host_add(as, "lua", "polyglot_fragments", "echo");
    as->api->execute(as, NULL, on_error);
    futoin_tool_run(t);
    as->api->free(as);
    futoin_tool_free(t);
    return NULL;
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

    /* a tool on another thread: refused clearly, never run on the wrong
     * thread */
    {
        pthread_t th;
        int rc = 0;
        pthread_create(&th, NULL, other_thread, &rc);
        pthread_join(th, NULL);
        CHECK(rc < 0 && strcmp(code, "InvalidRequest") == 0, "another thread: %d %s", rc,
              code);
        CHECK(strstr(info, "lua: cannot resolve polyglot_fragments.echo: no Lua "
                           "state on this thread"),
              "info '%s'", info);
    }

    /* the counters: nothing held after the flows; the state is open */
    cnt = counters();
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
