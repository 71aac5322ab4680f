/*
 * A C program of the installed core (tests/polyglot/installed/run.sh
 * builds it with `pkg-config --cflags --libs futoin_async` against the
 * `meson install` prefix, with an rpath to that prefix's libdir) hosting
 * ONE flow with steps of Python, Lua and Java, installed as their
 * packages: the library finds each plug-in through the ecosystem's own
 * settings (VIRTUAL_ENV, LUA_CPATH, CLASSPATH), nothing else.
 *
 *   c_host                 the flow: "c" -> python, lua, java append ->
 *                          checked here; then each language's fail, its
 *                          error handled by a C handler
 *   c_host --missing LANG  one step of LANG whose error is printed (the
 *                          negative check: LANG's package is not set up)
 *
 * Prints "trail c ...", "cell c LANG ok" or "cell c LANG FAIL: why" per
 * language, "frame c LANG I LANGUAGE FUNCTION FILE LINE" for each frame of
 * the async stack LANG's error had in the handler (the failing steps are
 * added with FUTOIN_ADD(), which records this file:line), "missing LANG
 * CODE: INFO" with --missing, and "map FILE" for
 * every libfutoin_async*, libuv* and libfutoin_host_* file mapped into the
 * process (run.sh checks there is one of the first two, and whose).
 */
#define _GNU_SOURCE
#include <futoin/async.h>
#include <futoin/steps.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NLANG 3
static const char* const langs[NLANG] = {"python", "lua", "java"};
static const char* const modules[NLANG] = {"user_steps", "user_steps", "example.UserSteps"};

static char trail[256];
static long long count = -1;
static char codes[NLANG][64];
static char infos[NLANG][4096];
static char stacks[NLANG][4096]; /* "frame c LANG ..." lines */

static const FutoInType string_type = {FTN_TYPE_STRING, NULL}; /* static text */
static const FutoInType int64_type = {FTN_TYPE_INT64, NULL};

static void begin(FutoInAsyncSteps* as, void* data, const FutoInArgs* in)
{
    FutoInArgs out;
    (void)data;
    (void)in;
    memset(&out, 0, sizeof(out));
    out.arg0.type = &string_type;
    out.arg0.cstr = "c";
    out.arg0.length = 1;
    out.arg1.type = &int64_type;
    out.arg1.i64 = 1;
    as->api->success(as, &out);
}

static void check(FutoInAsyncSteps* as, void* data, const FutoInArgs* in)
{
    const FutoInBinaryValue* t = &in->arg0;
    (void)as;
    (void)data;
    if (t->type && (t->type->flags & 0x1F) == FTN_TYPE_STRING) {
        snprintf(trail, sizeof(trail), "%.*s",
                 (int)(t->length ? t->length : strlen(t->cstr)), t->cstr);
    }
    if (in->arg1.type && (in->arg1.type->flags & 0x1F) == FTN_TYPE_INT64) {
        count = in->arg1.i64;
    }
}

static void add_fail(FutoInAsyncSteps* as, void* data, const FutoInArgs* in)
{
    int i = (int)(intptr_t)data;
    (void)in;
    futoin_host_add(as, langs[i], modules[i], "fail");
}

static void on_fail(FutoInAsyncSteps* as, void* data, const char* code)
{
    int i = (int)(intptr_t)data;
    const char* info = as->api->stateVariable(as, NULL, "error_info", NULL, NULL);
    const futoin_async_stack* st = futoin_async_ext(as)->async_stack(as);
    size_t used = 0;
    snprintf(codes[i], sizeof(codes[i]), "%s", code);
    snprintf(infos[i], sizeof(infos[i]), "%s", info ? info : "");
    for (uint32_t k = 0; st && k < st->count && used < sizeof(stacks[i]); ++k) {
        const futoin_frame_origin* f = &st->frames[k];
        const char* base = f->file ? strrchr(f->file, '/') : NULL;
        int n = snprintf(stacks[i] + used, sizeof(stacks[i]) - used, "frame c %s %u %s %s %s %u\n",
                         langs[i], (unsigned)k, f->language, f->function ? f->function : "?",
                         base ? base + 1 : (f->file ? f->file : "?"), (unsigned)f->line);
        used += n > 0 ? (size_t)n : 0;
    }
    as->api->success(as, NULL);
}

static char unhandled[4096];

static void on_unhandled(FutoInAsyncSteps* as, void* data, const char* code)
{
    const char* info = as->api->stateVariable(as, NULL, "error_info", NULL, NULL);
    (void)data;
    snprintf(unhandled, sizeof(unhandled), "%s: %s", code, info ? info : "");
}

/* Every file of the libraries that matter mapped into this process. */
static void print_maps(void)
{
    char line[4096], seen[64][1024];
    int n = 0;
    FILE* f = fopen("/proc/self/maps", "r");
    if (!f) {
        printf("map (cannot read /proc/self/maps)\n");
        return;
    }
    while (fgets(line, sizeof(line), f)) {
        char* path = strchr(line, '/');
        const char* base;
        int dup = 0;
        if (!path) {
            continue;
        }
        path[strcspn(path, "\n")] = 0;
        base = strrchr(path, '/') + 1;
        if (strncmp(base, "libfutoin_async", 15) && strncmp(base, "libuv.", 6)
            && strncmp(base, "libuv-", 6) && strncmp(base, "libfutoin_host_", 15)) {
            continue;
        }
        for (int i = 0; i < n; ++i) {
            dup |= strcmp(seen[i], path) == 0;
        }
        if (!dup && n < 64) {
            snprintf(seen[n++], sizeof(seen[0]), "%s", path);
            printf("map %s\n", path);
        }
    }
    fclose(f);
}

static int lang_index(const char* name)
{
    for (int i = 0; i < NLANG; ++i) {
        if (strcmp(name, langs[i]) == 0) {
            return i;
        }
    }
    return -1;
}

int main(int argc, char** argv)
{
    futoin_tool* tool;
    FutoInAsyncSteps* root;
    int missing = -1;
    if (argc == 3 && strcmp(argv[1], "--missing") == 0) {
        if ((missing = lang_index(argv[2])) < 0) {
            fprintf(stderr, "c_host: no language '%s'\n", argv[2]);
            return 2;
        }
    } else if (argc != 1) {
        fprintf(stderr, "usage: c_host [--missing python|lua|java]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (futoin_tool_new(&tool, NULL) != FUTOIN_OK || !(root = futoin_root_new(tool))) {
        fprintf(stderr, "c_host: no tool\n");
        return 1;
    }
    if (missing >= 0) {
        root->api->add(root, (void*)(intptr_t)missing, add_fail, on_fail);
    } else {
        root->api->add(root, NULL, begin, NULL);
        for (int i = 0; i < NLANG; ++i) {
            futoin_host_add(root, langs[i], modules[i], "append");
        }
        root->api->add(root, NULL, check, NULL);
        for (int i = 0; i < NLANG; ++i) {
            FUTOIN_ADD(root, (void*)(intptr_t)i, add_fail, on_fail);
        }
    }
    root->api->execute(root, NULL, on_unhandled);
    futoin_tool_run(tool);
    if (missing >= 0) {
        printf("missing %s %s: %s\n", langs[missing], codes[missing], infos[missing]);
    } else {
        char expected[64];
        snprintf(expected, sizeof(expected), "c>%s>%s>%s", langs[0], langs[1], langs[2]);
        printf("trail c %s %lld\n", trail, count);
        if (unhandled[0]) {
            printf("unhandled %s\n", unhandled);
        }
        for (int i = 0; i < NLANG; ++i) {
            /* the values crossed every language of the one flow ... */
            if (strcmp(trail, expected) != 0 || count != 1 + NLANG) {
                printf("cell c %s FAIL: values '%s' %lld, expected '%s' %d\n", langs[i], trail,
                       count, expected, 1 + NLANG);
            /* ... and this language's error reached the C handler */
            } else if (strcmp(codes[i], "UserError") != 0 || strcmp(infos[i], langs[i]) != 0) {
                printf("cell c %s FAIL: error '%s' '%s', expected 'UserError' '%s'\n", langs[i],
                       codes[i], infos[i], langs[i]);
            } else {
                printf("cell c %s ok\n", langs[i]);
            }
            fputs(stacks[i], stdout);
        }
    }
    print_maps();
    root->api->free(root);
    futoin_host_shutdown();
    return futoin_tool_free(tool) == FUTOIN_OK ? 0 : 1;
}
