/*
 * Loading the plug-in of a language that no binding registered: the
 * candidates host_search.c names, in order, until one is a plug-in of that
 * language (a jar's entry is taken out by host_jar.c first). When none is,
 * the error says which package provides the plug-in, how to install it,
 * and what was searched, left out and found broken (each part bounded, so
 * that a long PATH cannot push the advice out of the message).
 *
 * The registry calls this with its lock held, so a language is loaded
 * once however many threads ask for it.
 */
#include "adapter/adapter.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct report
{
    const char* language;
    const futoin_host_api* api; /* the plug-in found */
    void* dl;
    const char* setting;     /* of the last place added to `searched` */
    char searched[720];      /* places looked at, grouped by setting */
    char left_out[260];      /* entries not followed (not absolute) */
    char problems[480];      /* plug-ins found but unusable, bad jars */
    unsigned more;           /* places that did not fit in `searched` */
} report;

/* Append `text` to `buf` after `sep`; false (nothing written) when it
 * does not fit. */
static bool append(char* buf, size_t cap, const char* sep, const char* text)
{
    size_t used = strlen(buf);
    size_t need = (used ? strlen(sep) : 0) + strlen(text);
    if (used + need + 1 > cap) {
        return false;
    }
    snprintf(buf + used, cap - used, "%s%s", used ? sep : "", text);
    return true;
}

static void searched(report* r, const char* setting, const char* place)
{
    char text[PATH_MAX + 64];
    bool same = r->setting && strcmp(r->setting, setting) == 0 && r->searched[0];
    snprintf(text, sizeof(text), "%s%s%s", same ? "" : setting, same ? "" : ": ",
             place);
    if (!append(r->searched, sizeof(r->searched), same ? ", " : "; ", text)) {
        ++r->more;
        return;
    }
    r->setting = setting;
}

static void problem(report* r, const char* text)
{
    if (!append(r->problems, sizeof(r->problems), "; ", text)) {
        append(r->problems, sizeof(r->problems), "", " ...");
    }
}

/* dlopen() `path`, a file that exists: true if it is a plug-in of the
 * language; else the reason is a problem of the report. */
static bool try_open(report* r, const char* path)
{
    char text[PATH_MAX + 256];
    const futoin_host_api* api = NULL;
    futoin_host_get_fn get;
    union
    {
        void* p;
        futoin_host_get_fn fn;
    } u;
    void* dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char* why = dlerror();
        snprintf(text, sizeof(text), "%.300s cannot be loaded: %.200s", path,
                 why ? why : "?");
        problem(r, text);
        return false;
    }
    u.p = dlsym(dl, FUTOIN_HOST_GET_SYMBOL);
    get = u.fn;
    if (!get || get(FUTOIN_HOST_VERSION, &api) != FUTOIN_OK
        || !futoin__host_table_ok(api) || strcmp(api->language, r->language) != 0) {
        snprintf(text, sizeof(text),
                 "%.300s has no usable %s() table for language '%s'", path,
                 FUTOIN_HOST_GET_SYMBOL, r->language);
        problem(r, text);
        dlclose(dl);
        return false;
    }
    r->api = api;
    r->dl = dl;
    return true;
}

static bool visit(void* ctx, futoin__host_cand kind, const char* setting,
                  const char* path)
{
    report* r = ctx;
    struct stat st;
    char cached[PATH_MAX], why[768];
    int rc;
    switch (kind) {
    case FUTOIN__HOST_LEFT_OUT: {
        char text[256];
        snprintf(text, sizeof(text), "%s %s", setting, path);
        if (!append(r->left_out, sizeof(r->left_out), ", ", text)) {
            append(r->left_out, sizeof(r->left_out), "", " ...");
        }
        return false;
    }
    case FUTOIN__HOST_UNSET:
        searched(r, setting, path);
        return false;
    case FUTOIN__HOST_FILE:
        searched(r, setting, path);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            return false;
        }
        return try_open(r, path);
    case FUTOIN__HOST_JAR:
        searched(r, setting, path);
        why[0] = 0;
        rc = futoin__host_jar_extract(path, FUTOIN__HOST_JAVA_ENTRY, cached,
                                      sizeof(cached), why, sizeof(why));
        if (rc < 0) {
            problem(r, why);
        }
        return rc == 0 && try_open(r, cached);
    }
    return false;
}

/* What provides the plug-in of `language`, and how to install it. */
static const char* advice(const char* language)
{
    if (strcmp(language, "python") == 0) {
        return "the Python package provides it: pip install futoin_async "
               "(the wheel futoin_async-" FUTOIN_VERSION_STRING "-*.whl) into "
               "a venv and activate it (. VENV/bin/activate), or start the "
               "program with that venv's python3";
    }
    if (strcmp(language, "lua") == 0) {
        return "the Lua rock provides it: luarocks --lua-version=5.4 "
               "install futoin_async (futoin_async-" FUTOIN_VERSION_STRING
               "-1.*.rock), then eval \"$(luarocks --lua-version=5.4 path)\"";
    }
    if (strcmp(language, "java") == 0) {
        return "the Java jar provides it: put futoin-async.jar on CLASSPATH "
               "(an absolute path; released as futoin-async-"
               FUTOIN_VERSION_STRING ".jar)";
    }
    return NULL;
}

int futoin__host_load_plugin(const char* language,
                             const futoin_host_api** api_out, void** dl_out,
                             char* err, size_t errlen)
{
    report r;
    const char* how = advice(language);
    char more[48] = "";
    memset(&r, 0, sizeof(r));
    r.language = language;
    futoin__host_search(language, visit, &r);
    if (r.api) {
        *api_out = r.api;
        *dl_out = r.dl;
        return FUTOIN_OK;
    }
    if (r.more) {
        snprintf(more, sizeof(more), " (and %u more)", r.more);
    }
    /* the advice first, the list of places last: a message cut short by
     * `errlen` loses places searched, not what to do */
    snprintf(err, errlen,
             "no host for language '%s': no plug-in libfutoin_host_%s.so "
             "found; %s%s.%s%s%s%s%s%s Searched: %s%s.",
             language, language,
             how ? how : "no package of futoin_async provides it; name the "
                         "folder of its plug-in in FUTOIN_HOST_PATH (an "
                         "absolute path), or load its binding first",
             how ? ", or meson install of the core built with its plug-in" : "",
             r.problems[0] ? " Found but unusable: " : "", r.problems,
             r.problems[0] ? "." : "",
             r.left_out[0] ? " Left out (not absolute paths): " : "",
             r.left_out, r.left_out[0] ? "." : "",
             r.searched[0] ? r.searched : "nothing", more);
    return FUTOIN_EINVAL;
}
