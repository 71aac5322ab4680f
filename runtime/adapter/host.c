/*
 * Language hosts (futoin/sys/host.h): the registry, the plug-in loader, the
 * built-in host of language "c" and futoin_host_add().
 *
 * The registry is a small table guarded by a mutex: bindings register from
 * whatever thread loads them, and lookups are rare (once per step added
 * by name, against a handful of languages).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "adapter/adapter.h"
#include "engine/engine.h"

#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>
#include <futoin/sys/wrap.h>

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HOSTS 16

typedef struct host_entry
{
    const futoin_host_api* api;
    void* dl;       /* the plug-in, when we loaded it */
    int started;    /* start()s made by futoin_host_add() */
} host_entry;

static pthread_mutex_t hosts_mx = PTHREAD_MUTEX_INITIALIZER;
static host_entry hosts[MAX_HOSTS];
static size_t nhosts;

bool futoin__host_table_ok(const futoin_host_api* h)
{
    return h && h->size >= sizeof(futoin_host_api)
           && h->version >= FUTOIN_HOST_VERSION_1 && h->language
           && h->language[0] && h->start && h->resolve && h->stop;
}

static host_entry* lookup(const char* language)
{
    for (size_t i = 0; i < nhosts; ++i) {
        if (strcmp(hosts[i].api->language, language) == 0) {
            return &hosts[i];
        }
    }
    return NULL;
}

FUTOIN_API int futoin_host_register(const futoin_host_api* host)
{
    int rc = FUTOIN_OK;
    if (!futoin__host_table_ok(host)) {
        return host && host->version < FUTOIN_HOST_VERSION_1 ? FUTOIN_EVERSION
                                                             : FUTOIN_EINVAL;
    }
    pthread_mutex_lock(&hosts_mx);
    if (lookup(host->language) || strcmp(host->language, "c") == 0) {
        rc = FUTOIN_EBUSY;
    } else if (nhosts == MAX_HOSTS) {
        rc = FUTOIN_ENOMEM;
    } else {
        hosts[nhosts].api = host;
        hosts[nhosts].dl = NULL;
        hosts[nhosts].started = 0;
        ++nhosts;
    }
    pthread_mutex_unlock(&hosts_mx);
    return rc;
}

/* ---- finding a host ------------------------------------------------------ */

static bool safe_language(const char* language)
{
    if (!language || !*language || strlen(language) > 32) {
        return false;
    }
    for (const char* p = language; *p; ++p) {
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-') {
            return false;
        }
    }
    return true;
}

static int find_entry(const char* language, host_entry** out, char* err,
                      size_t errlen)
{
    host_entry* e;
    int rc = FUTOIN_OK;
    if (!safe_language(language)) {
        snprintf(err, errlen, "'%s' is not a language name",
                 language ? language : "(null)");
        return FUTOIN_EINVAL;
    }
    pthread_mutex_lock(&hosts_mx);
    e = lookup(language);
    if (!e && nhosts < MAX_HOSTS) {
        host_entry fresh;
        if (strcmp(language, "c") == 0) {
            fresh.api = &futoin__host_c;
            fresh.dl = NULL;
            fresh.started = 0;
        } else {
            fresh.started = 0;
            rc = futoin__host_load_plugin(language, &fresh.api, &fresh.dl,
                                          err, errlen);
        }
        if (rc == FUTOIN_OK) {
            hosts[nhosts] = fresh;
            e = &hosts[nhosts++];
        }
    } else if (!e) {
        snprintf(err, errlen, "no host for language '%s': too many languages",
                 language);
        rc = FUTOIN_ENOMEM;
    }
    pthread_mutex_unlock(&hosts_mx);
    *out = e;
    return rc;
}

FUTOIN_API int futoin_host_find(const char* language,
                                const futoin_host_api** out, char* err,
                                size_t errlen)
{
    host_entry* e = NULL;
    char scratch[8];
    int rc;
    if (!out) {
        return FUTOIN_EINVAL;
    }
    if (!err) {
        err = scratch;
        errlen = sizeof(scratch);
    }
    rc = find_entry(language, &e, err, errlen);
    *out = rc == FUTOIN_OK ? e->api : NULL;
    return rc;
}

/* ---- adding a step by name --------------------------------------------- */

/* The step added when a named step cannot be had: it fails with
 * InvalidRequest, its error_info saying why. */
typedef struct failed_step
{
    char* why;
    char* name; /* language:module.function, for the async stack */
} failed_step;

static void failed_release(void* data)
{
    failed_step* f = data;
    free(f->why);
    free(f->name);
    free(f);
}

static void failed_origin(void* data, futoin_frame_origin* out)
{
    failed_step* f = data;
    out->language = "futoin";
    out->function = f->name;
    out->file = NULL;
    out->line = 0;
}

static const futoin_step_class failed_class = {
        sizeof(futoin_step_class), failed_release, failed_origin};

static void failed_execute(FutoInAsyncSteps* bsi, void* data,
                           const FutoInArgs* in)
{
    bsi->api->handle_error(bsi, FUTOIN_ERR_INVALID_REQUEST,
                           ((failed_step*)data)->why);
}

static void add_step(FutoInAsyncSteps* bsi, const futoin_host_step* st)
{
    const futoin_async_ext_table* x = futoin_async_ext(bsi);
    if (x) {
        x->add_classed(bsi, st->data, st->execute, st->error, st->cls);
    } else {
        /* a foreign implementation: no origin, but the data is released */
        futoin_wrap_add(bsi, st->data, st->execute, st->error,
                        st->cls ? st->cls->release : NULL);
    }
}

static int add_failed(FutoInAsyncSteps* bsi, const char* language,
                      const char* module, const char* function, int rc,
                      const char* why)
{
    failed_step* f = calloc(1, sizeof(*f));
    futoin_host_step st;
    char name[256];
    snprintf(name, sizeof(name), "%s:%s.%s", language ? language : "?",
             module ? module : "?", function ? function : "?");
    if (f) {
        f->why = strdup(why);
        f->name = strdup(name);
    }
    if (!f || !f->why || !f->name) {
        if (f) {
            failed_release(f);
        }
        futoin__tool_misuse(futoin_async_tool(bsi), why);
        return rc;
    }
    st.execute = failed_execute;
    st.error = NULL;
    st.data = f;
    st.cls = &failed_class;
    add_step(bsi, &st);
    return rc;
}

FUTOIN_API int futoin_host_add(FutoInAsyncSteps* bsi, const char* language,
                               const char* module, const char* function)
{
    char err[1536];
    host_entry* e = NULL;
    futoin_host_step st;
    futoin_tool* tool;
    int rc;

    if (!bsi) {
        futoin__misuse_null("futoin_host_add()");
        return FUTOIN_EINVAL;
    }
    if (futoin_async_ext(bsi) && !futoin__on_loop(bsi, "futoin_host_add()")) {
        return FUTOIN_EINVAL;
    }
    if (!module || !function) {
        return add_failed(bsi, language, module, function, FUTOIN_EINVAL,
                          "futoin_host_add(): module and function are "
                          "required");
    }
    rc = find_entry(language, &e, err, sizeof(err));
    if (rc != FUTOIN_OK) {
        return add_failed(bsi, language, module, function, rc, err);
    }
    tool = futoin_async_tool(bsi);
    if (e->started == 0) {
        err[0] = 0;
        rc = e->api->start(tool, err, sizeof(err));
        if (rc != FUTOIN_OK) {
            /* start() does not know which step wanted the host: say it */
            char why[sizeof(err) + 256];
            if (err[0]) {
                snprintf(why, sizeof(why), "%s (adding %s.%s)", err, module,
                         function);
            } else {
                snprintf(why, sizeof(why),
                         "%s: the host did not start (no reason given; "
                         "adding %s.%s)",
                         language, module, function);
            }
            return add_failed(bsi, language, module, function, rc, why);
        }
        pthread_mutex_lock(&hosts_mx);
        ++e->started;
        pthread_mutex_unlock(&hosts_mx);
    }
    memset(&st, 0, sizeof(st));
    err[0] = 0;
    rc = e->api->resolve(module, function, &st, err, sizeof(err));
    if (rc != FUTOIN_OK || !st.execute) {
        if (!err[0]) {
            snprintf(err, sizeof(err), "%s: cannot resolve %s.%s", language,
                     module, function);
        }
        return add_failed(bsi, language, module, function,
                          rc != FUTOIN_OK ? rc : FUTOIN_EINVAL, err);
    }
    add_step(bsi, &st);
    return FUTOIN_OK;
}

FUTOIN_API void futoin_host_shutdown(void)
{
    const futoin_host_api* stop[MAX_HOSTS];
    int times[MAX_HOSTS];
    size_t n = 0;
    pthread_mutex_lock(&hosts_mx);
    for (size_t i = 0; i < nhosts; ++i) {
        if (hosts[i].started) {
            stop[n] = hosts[i].api;
            times[n++] = hosts[i].started;
            hosts[i].started = 0;
        }
    }
    pthread_mutex_unlock(&hosts_mx);
    for (size_t i = 0; i < n; ++i) {
        while (times[i]-- > 0) {
            stop[i]->stop();
        }
    }
}
