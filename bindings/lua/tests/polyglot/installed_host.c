/*
 * A C host program using the Lua host plug-in of an INSTALLED rock
 * (issue 23): run by polyglot.sh under `env -i` with nothing but PATH and
 * what `eval "$(luarocks --lua-version=5.4 --tree T path)"` sets (LUA_PATH,
 * LUA_CPATH; the user's module folder prepended to LUA_PATH).
 *
 * It is linked to a libfutoin_async.so.0 that is NOT the rock's copy in T
 * (argv[1] names the one it was linked to, in a folder of no package), so
 * the library finds the plug-in through LUA_CPATH alone: T's
 * lib/lua/5.4/futoin_async/futoin-hosts/libfutoin_host_lua.so (checked).
 * Checks: the plug-in finds
 * Debian's liblua5.4.so.0; the embedded state finds the rock's module in
 * T (argv[2]) and the user's module (host_steps.lua) through LUA_PATH /
 * LUA_CPATH; luv loads there; a Lua step uses the tool of this program
 * (timers, a new root); and /proc/self/maps holds ONE libfutoin_async
 * (the one linked: the rock's core.so bound to it by soname, its own copy
 * never loaded) and ONE libuv (luv's and libfutoin_async's). Last line:
 * "polyglot-lua-installed: N passed, M failed".
 */
#include <futoin/async.h>
#include <futoin/sys/host.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_steps.h"       /* give_20, copy_str */
#include "futoin_check.h" /* tests/include: CHECK, futoin_check_summary */

static futoin_tool* tool;
static char code[64], info[2048];
static char vals[2][1024];
static long long ival = -1;

static void on_error(FutoInAsyncSteps* as, void* d, const char* c)
{
    const char* i = as->api->stateVariable(as, NULL, "error_info", NULL, NULL);
    (void)d;
    snprintf(code, sizeof(code), "%s", c);
    snprintf(info, sizeof(info), "%s", i ? i : "");
}

static void take(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)as;
    (void)d;
    for (int i = 0; i < 2; ++i) {
        const FutoInBinaryValue* v = &a->args[i];
        copy_str(vals[i], sizeof(vals[i]), v);
        if (v->type && v->type->flags == FTN_TYPE_INT64) {
            ival = (long long)v->i64;
        }
    }
}

static int run_lua(const char* fn)
{
    FutoInAsyncSteps* as = futoin_root_new(tool);
    int rc;
    code[0] = info[0] = vals[0][0] = vals[1][0] = 0;
    as->api->add(as, NULL, give_20, NULL);
    rc = futoin_host_add(as, "lua", "host_steps", fn);
    as->api->add(as, NULL, take, NULL);
    as->api->execute(as, NULL, on_error);
    futoin_tool_run(tool);
    as->api->free(as);
    return rc;
}

/* The distinct files mapped whose name holds `needle`: how many, and the
 * first one. */
static int mapped(const char* needle, char* first, size_t len)
{
    char line[4096], seen[16][1024];
    int n = 0;
    FILE* f = fopen("/proc/self/maps", "r");
    first[0] = 0;
    if (!f) {
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        char* path = strchr(line, '/');
        int dup = 0;
        if (!path || !strstr(path, needle)) {
            continue;
        }
        path[strcspn(path, "\n")] = 0;
        for (int i = 0; i < n; ++i) {
            dup |= strcmp(seen[i], path) == 0;
        }
        if (!dup && n < 16) {
            snprintf(seen[n++], sizeof(seen[0]), "%s", path);
        }
    }
    fclose(f);
    if (n) {
        snprintf(first, len, "%s", seen[0]);
    }
    return n;
}

int main(int argc, char** argv)
{
    char path[1024];
    const char* linked = argc > 1 ? argv[1] : "";
    const char* tree = argc > 2 ? argv[2] : "";
    int n;

    if (argc < 3 || futoin_tool_new(&tool, NULL) != FUTOIN_OK) {
        fprintf(stderr, "usage: installed_host LINKED_CORE ROCK_TREE\n");
        return 2;
    }
    CHECK(getenv("LUA_PATH") && getenv("LUA_CPATH") && !getenv("LD_LIBRARY_PATH"),
          "the environment is not luarocks' alone");

    CHECK(run_lua("where") == FUTOIN_OK && !code[0], "host_steps.where: %s %s", code, info);
    snprintf(path, sizeof(path), "%s/lib/lua/5.4/futoin_async/core.so", tree);
    CHECK(strstr(vals[0], tree) == vals[0] && strstr(vals[0], "/futoin_async/core.so"),
          "the Lua state found the binding at '%s', not in the rock tree %s", vals[0], tree);
    CHECK(strncmp(vals[1], "1.", 2) == 0, "luv's version '%s'", vals[1]);

    CHECK(run_lua("timers") == FUTOIN_OK && !code[0], "host_steps.timers: %s %s", code, info);
    CHECK(ival == 40 && strcmp(vals[1], "immediate,deferred,root") == 0,
          "asi:tool() timers and new_instance(): %lld '%s'", ival, vals[1]);

    CHECK(run_lua("fail") == FUTOIN_OK && strcmp(code, "InternalError") == 0
                  && strstr(info, "lua failed on 20") && strstr(info, "stack traceback:"),
          "a Lua error: %s %s", code, info);

    n = mapped("libfutoin_async.so", path, sizeof(path));
    CHECK(n == 1 && strcmp(path, linked) == 0,
          "%d libfutoin_async mapped (first: %s), want only %s", n, path, linked);
    n = mapped("libuv.so", path, sizeof(path));
    CHECK(n == 1, "%d libuv mapped (first: %s)", n, path);
    n = mapped("liblua5.4.so", path, sizeof(path));
    CHECK(n == 1, "%d liblua5.4 mapped (first: %s)", n, path);
    n = mapped("luv.so", path, sizeof(path)); /* Debian: liblua5.4-luv.so.0 */
    CHECK(n == 1, "luv mapped %d times (first: %s)", n, path);
    {
        char want[1024];
        snprintf(want, sizeof(want),
                 "%s/lib/lua/5.4/futoin_async/futoin-hosts/libfutoin_host_lua.so", tree);
        n = mapped("libfutoin_host_lua.so", path, sizeof(path));
        CHECK(n == 1 && strcmp(path, want) == 0,
              "%d Lua plug-ins mapped (first: %s), want only the tree's %s", n, path, want);
    }
    snprintf(path, sizeof(path), "%s/lib/lua/5.4/futoin_async/", tree);
    {
        char first[1024];
        n = mapped(path, first, sizeof(first));
        /* core.so and the plug-in: the tree's libfutoin_async.so.0 is not */
        CHECK(n == 2 && !strstr(first, "libfutoin_async"), "from the rock tree: %d files (%s)",
              n, first);
    }

    futoin_host_shutdown();
    CHECK(futoin_tool_free(tool) == FUTOIN_OK, "tool not freed");
    return futoin_check_summary("polyglot-lua-installed");
}
