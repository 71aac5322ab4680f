/*
 * Finding and loading the plug-in of a language that no binding
 * registered: libfutoin_host_<language>.so from FUTOIN_HOST_PATH, then from
 * futoin-hosts/ next to this library, then from the system's search path
 * (futoin/sys/host.h). The registry calls it with its lock held, so a
 * language is loaded once however many threads ask for it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "adapter/adapter.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Load libfutoin_host_<language>.so from `dir` (NULL: the system's search
 * path). Returns the handle, or NULL with the reason appended to `tried`. */
static void* try_load(const char* dir, size_t dirlen, const char* language,
                      char* tried, size_t triedlen)
{
    char path[1024];
    size_t used = strlen(tried);
    void* dl;
    if (dir) {
        snprintf(path, sizeof(path), "%.*s/libfutoin_host_%s.so", (int)dirlen,
                 dir, language);
    } else {
        snprintf(path, sizeof(path), "libfutoin_host_%s.so", language);
    }
    dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl && used < triedlen) {
        /* a list that may be cut short: it only explains an error */
        snprintf(tried + used, triedlen - used, "%s%.200s", used ? ", " : "",
                 path);
    }
    return dl;
}

int futoin__host_load_plugin(const char* language,
                             const futoin_host_api** api_out, void** dl_out,
                             char* err, size_t errlen)
{
    char tried[1024] = "";
    const char* env = getenv("FUTOIN_HOST_PATH");
    void* dl = NULL;
    futoin_host_get_fn get;
    const futoin_host_api* api = NULL;
    union
    {
        void* p;
        futoin_host_get_fn fn;
    } u;

    while (!dl && env && *env) {
        const char* colon = strchr(env, ':');
        size_t len = colon ? (size_t)(colon - env) : strlen(env);
        if (len) {
            dl = try_load(env, len, language, tried, sizeof(tried));
        }
        env = colon ? colon + 1 : NULL;
    }
    if (!dl) {
        /* futoin-hosts/ next to this library */
        Dl_info info;
        if (dladdr((void*)&futoin__host_c, &info) && info.dli_fname) {
            const char* slash = strrchr(info.dli_fname, '/');
            if (slash) {
                char dir[1024];
                snprintf(dir, sizeof(dir), "%.*s/futoin-hosts",
                         (int)(slash - info.dli_fname), info.dli_fname);
                dl = try_load(dir, strlen(dir), language, tried, sizeof(tried));
            }
        }
    }
    if (!dl) {
        dl = try_load(NULL, 0, language, tried, sizeof(tried));
    }
    if (!dl) {
        snprintf(err, errlen,
                 "no host for language '%s': no plug-in found (tried %s; set "
                 "FUTOIN_HOST_PATH, or load the language's binding first)",
                 language, tried);
        return FUTOIN_EINVAL;
    }
    u.p = dlsym(dl, FUTOIN_HOST_GET_SYMBOL);
    get = u.fn;
    if (!get || get(FUTOIN_HOST_VERSION, &api) != FUTOIN_OK || !futoin__host_table_ok(api)
        || strcmp(api->language, language) != 0) {
        snprintf(err, errlen,
                 "no host for language '%s': its plug-in has no usable "
                 "%s() table",
                 language, FUTOIN_HOST_GET_SYMBOL);
        dlclose(dl);
        return FUTOIN_EINVAL;
    }
    *api_out = api;
    *dl_out = dl;
    return FUTOIN_OK;
}
