/*
 * Where the plug-in of a language may be (futoin/sys/host.h, "Finding a
 * language's plug-in"): every candidate, in order, from the settings each
 * ecosystem already has. This file only names candidates; host_plugin.c
 * tries them (and host_jar.c takes a plug-in out of a jar).
 *
 * The rule that matters for security: a candidate is only ever an
 * ABSOLUTE path that one of these settings names. A relative entry, an
 * empty one (which the languages themselves read as the current folder)
 * or a relative template is left out and reported, never tried: loading a
 * plug-in runs its code, and the current folder of a process is whatever
 * its user happened to `cd` into.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "adapter/adapter.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FUTOIN_HOST_MULTIARCH
#define FUTOIN_HOST_MULTIARCH "x86_64-linux-gnu"
#endif
#ifndef FUTOIN_HOST_SYSTEM_DIR
#define FUTOIN_HOST_SYSTEM_DIR "/usr/local/lib/" FUTOIN_HOST_MULTIARCH "/futoin_async/futoin-hosts"
#endif

/* Lua 5.4's own default cpath (luaconf.h LUA_CPATH_DEFAULT, as Debian
 * builds it): what the interpreter searches when neither LUA_CPATH_5_4
 * nor LUA_CPATH is set, and what ";;" stands for in them. */
#define LUA_DEFAULT_CPATH                                                      \
    "/usr/local/lib/lua/5.4/?.so;/usr/lib/" FUTOIN_HOST_MULTIARCH             \
    "/lua/5.4/?.so;/usr/lib/lua/5.4/?.so;/usr/local/lib/lua/5.4/"              \
    "loadall.so;./?.so"

typedef struct search
{
    const char* language;
    futoin__host_visit_fn visit;
    void* ctx;
    bool done; /* the visitor took a candidate */
} search;

static void offer(search* s, futoin__host_cand kind, const char* setting,
                  const char* path)
{
    if (!s->done) {
        s->done = s->visit(s->ctx, kind, setting, path);
    }
}

/* `<dir (dirlen bytes)>/<rest>` as a candidate, if it fits. */
static void offer_in(search* s, futoin__host_cand kind, const char* setting,
                     const char* dir, size_t dirlen, const char* rest)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof(path), "%.*s/%s", (int)dirlen, dir, rest);
    if (n > 0 && (size_t)n < sizeof(path)) {
        offer(s, kind, setting, path);
    }
}

/* An entry of a list that is not an absolute path: reported, not tried. */
static void left_out(search* s, const char* setting, const char* entry,
                     size_t len)
{
    char what[160];
    if (len == 0) {
        snprintf(what, sizeof(what), "(an empty entry)");
    } else {
        snprintf(what, sizeof(what), "'%.*s'", len > 120 ? 120 : (int)len,
                 entry);
    }
    offer(s, FUTOIN__HOST_LEFT_OUT, setting, what);
}

/* Each `sep`-separated element of `value`: absolute ones to `each`, the
 * others reported as left out. */
static void each_absolute(search* s, const char* setting, const char* value,
                          char sep,
                          void (*each)(search*, const char*, const char*,
                                       size_t))
{
    while (value && !s->done) {
        const char* end = strchr(value, sep);
        size_t len = end ? (size_t)(end - value) : strlen(value);
        if (len > 0 && value[0] == '/') {
            each(s, setting, value, len);
        } else {
            left_out(s, setting, value, len);
        }
        value = end ? end + 1 : NULL;
    }
}

/* ---- every language: FUTOIN_HOST_PATH, the core's folders --------------- */

static void host_path_entry(search* s, const char* setting, const char* dir,
                            size_t len)
{
    char file[96];
    snprintf(file, sizeof(file), "libfutoin_host_%s.so", s->language);
    offer_in(s, FUTOIN__HOST_FILE, setting, dir, len, file);
}

/* The folder the loaded libfutoin_async.so.0 is in (absolute), or 0; also
 * 0 when that folder is gone (a package that extracts the library to a
 * temporary folder and deletes it once loaded, as the Java jar does):
 * nothing can be found there, and an error should not name it. */
static size_t core_dir(const char** dir)
{
    Dl_info info;
    const char* slash;
    char path[PATH_MAX];
    struct stat st;
    if (!dladdr((const void*)&futoin__host_c, &info) || !info.dli_fname
        || info.dli_fname[0] != '/') {
        return 0;
    }
    slash = strrchr(info.dli_fname, '/');
    if (snprintf(path, sizeof(path), "%.*s/", (int)(slash - info.dli_fname),
                 info.dli_fname) >= (int)sizeof(path)
        || stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        return 0;
    }
    *dir = info.dli_fname;
    return (size_t)(slash - info.dli_fname);
}

/* ---- python ----------------------------------------------------------- */

/* The minor versions N of the folders `<prefix>/lib/python3.N`, newest
 * first (at most 16). */
static size_t python_versions(const char* prefix, size_t plen, int* out,
                              size_t cap)
{
    char lib[PATH_MAX];
    DIR* d;
    struct dirent* de;
    size_t n = 0;
    if (snprintf(lib, sizeof(lib), "%.*s/lib", (int)plen, prefix)
        >= (int)sizeof(lib)) {
        return 0;
    }
    d = opendir(lib);
    while (d && (de = readdir(d)) != NULL && n < cap) {
        const char* p = de->d_name;
        char* end;
        long minor;
        if (strncmp(p, "python3.", 8) != 0 || !isdigit((unsigned char)p[8])) {
            continue;
        }
        minor = strtol(p + 8, &end, 10);
        if (*end || minor > 999) {
            continue;
        }
        out[n++] = (int)minor;
    }
    if (d) {
        closedir(d);
    }
    for (size_t i = 1; i < n; ++i) { /* newest first: a few entries */
        for (size_t j = i; j > 0 && out[j - 1] < out[j]; --j) {
            int t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    }
    return n;
}

#define PYTHON_PLUGIN "futoin_async/futoin-hosts/libfutoin_host_python.so"

/* `<prefix>/lib/python3.N/<packages>/futoin_async/futoin-hosts/...` */
static void python_prefix(search* s, const char* setting, const char* prefix,
                          size_t plen, const char* packages)
{
    int minor[16];
    size_t n = python_versions(prefix, plen, minor, 16);
    for (size_t i = 0; i < n; ++i) {
        char rest[128];
        snprintf(rest, sizeof(rest), "lib/python3.%d/%s/" PYTHON_PLUGIN,
                 minor[i], packages);
        offer_in(s, FUTOIN__HOST_FILE, setting, prefix, plen, rest);
    }
}

static void pythonpath_entry(search* s, const char* setting, const char* dir,
                             size_t len)
{
    offer_in(s, FUTOIN__HOST_FILE, setting, dir, len, PYTHON_PLUGIN);
}

/* A PATH folder holding an executable python3: the site-packages of the
 * prefix it is the bin/ of (a venv's bin/ on PATH, as activate puts it). */
static void path_entry(search* s, const char* setting, const char* dir,
                       size_t len)
{
    char exe[PATH_MAX];
    struct stat st;
    const char* slash;
    while (len > 1 && dir[len - 1] == '/') {
        --len;
    }
    if (snprintf(exe, sizeof(exe), "%.*s/python3", (int)len, dir)
                >= (int)sizeof(exe)
        || stat(exe, &st) != 0 || !S_ISREG(st.st_mode)
        || access(exe, X_OK) != 0) {
        return;
    }
    slash = memrchr(dir, '/', len);
    python_prefix(s, setting, dir, slash && slash > dir ? (size_t)(slash - dir) : 0,
                  "site-packages");
}

static void search_python(search* s)
{
    const char* venv = getenv("VIRTUAL_ENV");
    if (venv && *venv) {
        if (venv[0] == '/') {
            python_prefix(s, "VIRTUAL_ENV", venv, strlen(venv), "site-packages");
        } else {
            left_out(s, "VIRTUAL_ENV", venv, strlen(venv));
        }
    } else {
        offer(s, FUTOIN__HOST_UNSET, "VIRTUAL_ENV", "(not set: no venv is active)");
    }
    each_absolute(s, "PYTHONPATH", getenv("PYTHONPATH"), ':', pythonpath_entry);
    each_absolute(s, "PATH", getenv("PATH"), ':', path_entry);
    offer(s, FUTOIN__HOST_FILE, "the system's Python",
          "/usr/lib/python3/dist-packages/" PYTHON_PLUGIN);
    python_prefix(s, "the system's Python", "/usr/local", 10, "dist-packages");
}

/* ---- lua -------------------------------------------------------------- */

#define LUA_PLUGIN "futoin_async/futoin-hosts/libfutoin_host_lua"

/* A cpath template: every "?" stands for the plug-in's name; a template
 * whose file would not be called libfutoin_host_lua.so names no plug-in
 * (loadall.so, say) and is skipped. */
static void lua_template(search* s, const char* setting, const char* t,
                         size_t len)
{
    char path[PATH_MAX];
    size_t n = 0;
    const char* base;
    for (size_t i = 0; i < len; ++i) {
        const char* piece = t[i] == '?' ? LUA_PLUGIN : NULL;
        size_t plen = piece ? strlen(piece) : 1;
        if (n + plen >= sizeof(path)) {
            return;
        }
        memcpy(path + n, piece ? piece : t + i, plen);
        n += plen;
    }
    path[n] = 0;
    base = strrchr(path, '/');
    if (base && strcmp(base + 1, "libfutoin_host_lua.so") == 0) {
        offer(s, FUTOIN__HOST_FILE, setting, path);
    }
}

static void search_lua(search* s)
{
    const char* setting = "LUA_CPATH_5_4";
    const char* value = getenv(setting);
    const char* mark;
    char* full = NULL;
    if (!value) {
        setting = "LUA_CPATH";
        value = getenv(setting);
    }
    if (!value) {
        setting = "Lua's default cpath";
        value = LUA_DEFAULT_CPATH;
    } else if ((mark = strstr(value, ";;")) != NULL) {
        /* as Lua does: the first ";;" is the default path */
        size_t head = (size_t)(mark - value), len = strlen(value);
        full = malloc(len + sizeof(LUA_DEFAULT_CPATH) + 2);
        if (full) {
            memcpy(full, value, head);
            snprintf(full + head, len + sizeof(LUA_DEFAULT_CPATH) + 2 - head,
                     ";%s;%s", LUA_DEFAULT_CPATH, mark + 2);
            value = full;
        }
    }
    while (value && !s->done) {
        const char* end = strchr(value, ';');
        size_t len = end ? (size_t)(end - value) : strlen(value);
        if (len > 0 && value[0] == '/') {
            lua_template(s, setting, value, len);
        } else if (len > 0) {
            left_out(s, setting, value, len); /* "./?.so" among them */
        } /* an empty template names no file (Lua skips it too) */
        value = end ? end + 1 : NULL;
    }
    free(full);
}

/* ---- java ------------------------------------------------------------- */

static int by_name(const void* a, const void* b)
{
    return strcmp(*(char* const*)a, *(char* const*)b);
}

/* An entry "DIR" "/" "*": the jars in DIR, in name order, as the java
 * launcher takes them (at most 256). */
static void jars_of(search* s, const char* setting, const char* dir,
                    size_t len)
{
    char path[PATH_MAX];
    char* names[256];
    size_t n = 0;
    DIR* d;
    struct dirent* de;
    if (snprintf(path, sizeof(path), "%.*s", (int)len, dir) >= (int)sizeof(path)) {
        return;
    }
    d = opendir(path);
    while (d && (de = readdir(d)) != NULL && n < 256) {
        size_t l = strlen(de->d_name);
        if (l > 4 && (strcmp(de->d_name + l - 4, ".jar") == 0
                      || strcmp(de->d_name + l - 4, ".JAR") == 0)
            && (names[n] = strdup(de->d_name)) != NULL) {
            ++n;
        }
    }
    if (d) {
        closedir(d);
    }
    qsort(names, n, sizeof(names[0]), by_name);
    for (size_t i = 0; i < n; ++i) {
        offer_in(s, FUTOIN__HOST_JAR, setting, dir, len, names[i]);
        free(names[i]);
    }
}

static void classpath_entry(search* s, const char* setting, const char* e,
                            size_t len)
{
    char path[PATH_MAX];
    struct stat st;
    if (len >= 2 && e[len - 1] == '*' && e[len - 2] == '/') {
        jars_of(s, setting, e, len - 2);
        return;
    }
    if (snprintf(path, sizeof(path), "%.*s", (int)len, e) >= (int)sizeof(path)) {
        return;
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        /* a class folder: the jar's layout, unpacked */
        offer_in(s, FUTOIN__HOST_FILE, setting, e, len, FUTOIN__HOST_JAVA_ENTRY);
    } else {
        offer(s, FUTOIN__HOST_JAR, setting, path);
    }
}

/* ---- the order ---------------------------------------------------------- */

void futoin__host_search(const char* language, futoin__host_visit_fn visit,
                         void* ctx)
{
    search s = {language, visit, ctx, false};
    const char* dir = NULL;
    size_t dirlen = core_dir(&dir);
    char file[96], sys_rest[128];
    const char* hosts = getenv("FUTOIN_HOST_PATH");

    /* 2. FUTOIN_HOST_PATH, kept for development */
    if (hosts && *hosts) {
        each_absolute(&s, "FUTOIN_HOST_PATH", hosts, ':', host_path_entry);
    }
    /* 3. futoin-hosts/ next to the libfutoin_async that is loaded: the
     *    package that brought the core brings its plug-in there */
    snprintf(file, sizeof(file), "futoin-hosts/libfutoin_host_%s.so", language);
    if (dirlen) {
        offer_in(&s, FUTOIN__HOST_FILE, "next to libfutoin_async", dir, dirlen,
                 file);
    }
    /* 4. the language's own settings */
    if (strcmp(language, "python") == 0) {
        search_python(&s);
    } else if (strcmp(language, "lua") == 0) {
        search_lua(&s);
    } else if (strcmp(language, "java") == 0) {
        const char* cp = getenv("CLASSPATH");
        if (cp && *cp) {
            each_absolute(&s, "CLASSPATH", cp, ':', classpath_entry);
        } else {
            offer(&s, FUTOIN__HOST_UNSET, "CLASSPATH", "(not set)");
        }
    }
    /* 5. a system install (meson install): the one the loaded core belongs
     *    to (<libdir>/futoin_async/), the prefix this core was configured
     *    for, and the usual two */
    snprintf(sys_rest, sizeof(sys_rest), "futoin_async/%s", file);
    if (dirlen) {
        offer_in(&s, FUTOIN__HOST_FILE, "a system install", dir, dirlen,
                 sys_rest);
    }
    {
        static const char* const systems[] = {
                FUTOIN_HOST_SYSTEM_DIR,
                "/usr/local/lib/" FUTOIN_HOST_MULTIARCH "/futoin_async/futoin-hosts",
                "/usr/lib/" FUTOIN_HOST_MULTIARCH "/futoin_async/futoin-hosts",
        };
        char own[PATH_MAX] = "";
        if (dirlen) {
            snprintf(own, sizeof(own), "%.*s/futoin_async/futoin-hosts",
                     (int)dirlen, dir);
        }
        for (size_t i = 0; i < sizeof(systems) / sizeof(systems[0]); ++i) {
            bool seen = systems[i][0] != '/' || strcmp(systems[i], own) == 0;
            for (size_t j = 0; j < i && !seen; ++j) {
                seen = strcmp(systems[i], systems[j]) == 0;
            }
            if (!seen) {
                host_path_entry(&s, "a system install", systems[i],
                                strlen(systems[i]));
            }
        }
    }
}
