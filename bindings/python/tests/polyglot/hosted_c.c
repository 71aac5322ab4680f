/*
 * A C program hosting Python steps (the plug-in libfutoin_host_python.so),
 * for bindings/python/tests/test_hosted.py: the Python steps of module
 * argv[1] (tests/polyglot/pg_hosted.py) and of the polyglot fragments
 * (tests/polyglot/fragments/python) reach the hosting loop through
 * asi.tool (a borrowed Tool) and its timers, `async def` steps await
 * asyncio.sleep() in the Tool's own event loop, a cancel reaches the
 * coroutine as CancelledError, and after argv[2] (default 1000) async
 * flows the plug-in's counters are back at their baseline. Then the
 * process maps one libfutoin_async and one libuv, and the tool is freed
 * (nothing of Python's holds it).
 *
 * With `--plugin PATH` the program loads the plug-in itself (dlopen,
 * futoin_host_register) instead of leaving it to the library: the test of
 * an installed wheel runs it with nothing but an activated venv's settings.
 * It prints what the Python side runs in ("interp <sys.prefix>|<package>")
 * and what is mapped ("runtime", "libuv", "libpython").
 *
 * Each check is a CHECK of tests/include/futoin_check.h (a failed one
 * says why on stderr); the last line is "hosted: N passed, M failed". A
 * plain program: CPython starts once per process.
 */
#define _GNU_SOURCE
#include <futoin/async.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>

#include "futoin_check.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAGMENTS "polyglot_fragments"
static futoin_tool* tool;
static const char* module;

/* One check of the cell named `cell`; `why` says what went wrong. */
#define check(ok, cell, why) CHECK(ok, "%s: %s", cell, why)

/* ---- one flow: C gives 20, a Python step, C keeps what came out ---------- */

static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};
static char got[256];      /* what the last step saw, as text */
static char err_text[4096]; /* the unhandled error, if any */

static void give(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs o;
    memset(&o, 0, sizeof(o));
    o.arg0.type = &ty_i64;
    o.arg0.i64 = 20;
    as->api->success(as, &o);
}

static void keep(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const FutoInBinaryValue* v = &a->arg0;
    if (!v->type) {
        snprintf(got, sizeof(got), "none");
    } else if (v->type->flags == FTN_TYPE_STRING) {
        snprintf(got, sizeof(got), "%.*s", (int)v->length, v->cstr);
    } else {
        snprintf(got, sizeof(got), "%lld", (long long)v->i64);
    }
}

static void on_unhandled(FutoInAsyncSteps* as, void* d, const char* code)
{
    const char* info = futoin_async_ext(as)->error_info(as);
    snprintf(err_text, sizeof(err_text), "%s: %s", code, info ? info : "");
}

static FutoInAsyncSteps* flow(const char* mod, const char* function, int give_first)
{
    FutoInAsyncSteps* as = futoin_root_new(tool);
    got[0] = err_text[0] = 0;
    if (give_first) {
        as->api->add(as, NULL, give, NULL);
    }
    futoin_host_add(as, "python", mod, function);
    as->api->add(as, NULL, keep, NULL);
    as->api->execute(as, NULL, on_unhandled);
    return as;
}

/* Run mod.function (after C gave 20): what reached the next C step. */
static const char* run_flow(const char* mod, const char* function, int give_first)
{
    FutoInAsyncSteps* as = flow(mod, function, give_first);
    futoin_tool_run(tool);
    as->api->free(as);
    return err_text[0] ? err_text : got;
}

static void expect(const char* cell, const char* mod, const char* function,
                   int give_first, const char* want)
{
    char why[4400];
    const char* r = run_flow(mod, function, give_first);
    snprintf(why, sizeof(why), "%s gave '%s', not '%s'", function, r, want);
    check(strcmp(r, want) == 0, cell, why);
}

/* ---- cancel: once the coroutine runs (shared state "started"), cancel ---- */

typedef struct canceller
{
    FutoInAsyncSteps* root;
    int polls;
} canceller;

static void poll_started(void* data)
{
    canceller* c = data;
    const FutoInBinaryValue* v;
    if (got[0] || err_text[0]) {
        return; /* the flow ended by itself: nothing to cancel */
    }
    v = futoin_state_get(c->root, "started");
    if (v && v->type && v->type->flags == FTN_TYPE_BOOL && v->b) {
        c->root->api->cancel(c->root);
        return;
    }
    if (++c->polls < 100000) { /* never a deadline: the loop's own order */
        futoin_tool_deferred(tool, 1, poll_started, c);
    }
}

static void cell_cancel(void)
{
    canceller c = {NULL, 0};
    char why[4400];
    const char* r;
    c.root = flow(FRAGMENTS, "async_wait", 0);
    futoin_tool_deferred(tool, 1, poll_started, &c);
    futoin_tool_run(tool);
    snprintf(why, sizeof(why), "the flow was not cancelled, error '%s'", err_text);
    check(!got[0] && !err_text[0], "cancel", why);
    c.root->api->free(c.root);
    r = run_flow(FRAGMENTS, "async_seen", 0);
    snprintf(why, sizeof(why), "the coroutine saw '%s'", r);
    check(strcmp(r, "CancelledError") == 0, "cancel reaches the coroutine", why);
}

/* ---- counters ------------------------------------------------------------- */

/* The plug-in serving "python", already loaded (as tests/polyglot/c_host.c
 * finds it). */
static void* loaded_plugin(void)
{
    const futoin_host_api* api = NULL;
    char err[512];
    Dl_info info;
    if (futoin_host_find("python", &api, err, sizeof(err)) != FUTOIN_OK
        || !dladdr((const void*)api, &info) || !info.dli_fname) {
        return NULL;
    }
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
}

/* starts, stops, live steps, and sys.getallocatedblocks() after a
 * collection (libpython is in the process with RTLD_GLOBAL: the plug-in
 * loads it so) */
static int counters(long long v[4])
{
    void* dl = loaded_plugin();
    union
    {
        void* p;
        int (*python)(int*, int*, int*);
        int (*ensure)(void);
        void (*release)(int);
        int (*run)(const char*);
        void* (*import)(const char*);
        void* (*getattr)(void*, const char*);
        long (*aslong)(void*);
        void (*decref)(void*);
    } c, ensure, release, run, import, getattr, aslong, decref;
    int s = 0, p = 0, l = 0, g;
    void *m, *n;
    if (!dl || !(c.p = dlsym(dl, "python_host_counters"))) {
        return -1;
    }
    c.python(&s, &p, &l);
    dlclose(dl);
    ensure.p = dlsym(RTLD_DEFAULT, "PyGILState_Ensure");
    release.p = dlsym(RTLD_DEFAULT, "PyGILState_Release");
    run.p = dlsym(RTLD_DEFAULT, "PyRun_SimpleString");
    import.p = dlsym(RTLD_DEFAULT, "PyImport_ImportModule");
    getattr.p = dlsym(RTLD_DEFAULT, "PyObject_GetAttrString");
    aslong.p = dlsym(RTLD_DEFAULT, "PyLong_AsLong");
    decref.p = dlsym(RTLD_DEFAULT, "Py_DecRef");
    if (!ensure.p || !release.p || !run.p || !import.p || !getattr.p || !aslong.p
        || !decref.p) {
        return -1;
    }
    g = ensure.ensure();
    run.run("import gc, sys\ngc.collect()\n"
            "sys.modules['__main__'].futoin_blocks = sys.getallocatedblocks()\n");
    m = import.import("__main__");
    n = m ? getattr.getattr(m, "futoin_blocks") : NULL;
    v[3] = n ? aslong.aslong(n) : -1;
    if (n) {
        decref.decref(n);
    }
    if (m) {
        decref.decref(m);
    }
    release.release(g);
    v[0] = s;
    v[1] = p;
    v[2] = l;
    return v[3] < 0 ? -1 : 0;
}

static void cell_many(int n)
{
    static const char* names[4] = {"starts", "stops", "live steps", "allocated blocks"};
    long long before[4], after[4];
    char why[256];
    int ok = 1;
    /* Caches (interned strings, type and code caches, free lists) settle in
     * the first flows: measure after them, so the bound below is about what
     * every later flow keeps (a leak), not about what the first ones fill. */
    for (int i = 0; i < n / 4; ++i) {
        run_flow(FRAGMENTS, "async_echo", 1);
    }
    if (counters(before) < 0) {
        check(0, "counters", "the plug-in's counters or libpython's are not there");
        return;
    }
    for (int i = 0; i < n && ok; ++i) {
        const char* r = run_flow(FRAGMENTS, "async_echo", 1);
        if (strcmp(r, "20") != 0) {
            snprintf(why, sizeof(why), "flow %d gave '%.200s'", i, r);
            ok = 0;
        }
    }
    check(ok, "many async flows", ok ? "" : why);
    if (counters(after) < 0) {
        check(0, "counters", "the counters went away");
        return;
    }
    for (int k = 0; k < 3; ++k) {
        snprintf(why, sizeof(why), "%s: %lld before %d flows, %lld after", names[k],
                 before[k], n, after[k]);
        check(after[k] == before[k], names[k], why);
    }
    /* a leaked object per flow would be n blocks or more */
    snprintf(why, sizeof(why), "allocated blocks grew by %lld in %d flows",
             after[3] - before[3], n);
    printf("allocated blocks: %lld before, %lld after\n", before[3], after[3]);
    check(after[3] - before[3] < n / 2, names[3], why);
}

/* ---- one runtime, one libuv ---------------------------------------------------- */

static void cell_maps(void)
{
    FILE* maps = fopen("/proc/self/maps", "r");
    char line[4352], core[4096] = "", uv[4096] = "", py[4096] = "", why[8400];
    int cores = 0, uvs = 0, pys = 0;
    if (!maps) {
        check(0, "maps", "cannot read /proc/self/maps");
        return;
    }
    while (fgets(line, sizeof(line), maps)) {
        char* path = strchr(line, '/');
        const char* base;
        if (!path) {
            continue;
        }
        path[strcspn(path, "\n")] = 0;
        base = strrchr(path, '/') + 1;
        if (strncmp(base, "libfutoin_async.so", 18) == 0 && strcmp(core, path) != 0) {
            cores += !core[0] || strcmp(core, path) != 0;
            snprintf(core, sizeof(core), "%s", path);
        }
        if (strncmp(base, "libuv.so", 8) == 0 && strcmp(uv, path) != 0) {
            uvs += !uv[0] || strcmp(uv, path) != 0;
            snprintf(uv, sizeof(uv), "%s", path);
        }
        if (strncmp(base, "libpython3", 10) == 0 && strcmp(py, path) != 0) {
            pys += !py[0] || strcmp(py, path) != 0;
            snprintf(py, sizeof(py), "%s", path);
        }
    }
    fclose(maps);
    printf("runtime %s\nlibuv %s\nlibpython %s\n", core, uv, py);
    snprintf(why, sizeof(why), "%d libpython files mapped (last %s)", pys, py);
    check(pys == 1, "one libpython", why);
    snprintf(why, sizeof(why), "%d libfutoin_async files mapped (last %s)", cores, core);
    check(cores == 1, "one libfutoin_async", why);
    snprintf(why, sizeof(why), "%d libuv files mapped (last %s)", uvs, uv);
    check(uvs == 1, "one libuv", why);
}

/* --plugin PATH: load the plug-in here and register its host table. */
static int load_plugin(const char* path)
{
    void* dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    union
    {
        void* p;
        futoin_host_get_fn get;
    } u;
    const futoin_host_api* api = NULL;
    if (!dl || !(u.p = dlsym(dl, FUTOIN_HOST_GET_SYMBOL))
        || u.get(FUTOIN_HOST_VERSION, &api) != FUTOIN_OK
        || futoin_host_register(api) != FUTOIN_OK) {
        fprintf(stderr, "cannot load the plug-in %s: %s\n", path, dl ? "no host table" : dlerror());
        return -1;
    }
    return 0; /* stays loaded: the library keeps its table */
}

int main(int argc, char** argv)
{
    int n = argc > 2 ? atoi(argv[2]) : 1000;
    if (argc < 2 || futoin_tool_new(&tool, NULL) != FUTOIN_OK) {
        fprintf(stderr, "usage: hosted_c MODULE [FLOWS [--plugin PATH]]\n");
        return 2;
    }
    if (argc > 4 && strcmp(argv[3], "--plugin") == 0 && load_plugin(argv[4]) < 0) {
        return 2;
    }
    module = argv[1];
    printf("interp %s\n", run_flow(module, "interp_info", 0));
    expect("asi.tool is the hosting loop's", module, "tool_info", 0, "borrowed usable");
    expect("call_later from a step", FRAGMENTS, "timer_echo", 1, "20");
    expect("immediate/call_soon from a step and a timer", module, "soon_double", 1, "40");
    expect("async def step", FRAGMENTS, "async_echo", 1, "20");
    expect("async def step: gather, wait_for, executor", module, "async_mix", 1, "63");
    cell_cancel();
    expect("no task left", module, "tasks_left", 0, "0");
    cell_many(n > 0 ? n : 1000);
    cell_maps();
    futoin_host_shutdown();
    check(futoin_tool_free(tool) == FUTOIN_OK, "the tool is freed",
          "futoin_tool_free() refused: something of Python's still holds it");
    return futoin_check_summary("hosted");
}
