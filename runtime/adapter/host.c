/*
 * Language hosts (futoin/sys/host.h): the registry. The other parts live
 * next to it: finding and loading plug-ins (host_plugin.c), the built-in
 * host of language "c" (host_c.c) and adding a step by name
 * (host_add.c).
 *
 * The registry is a small table guarded by a mutex: bindings register from
 * whatever thread loads them, and lookups are rare (once per step added
 * by name, against a handful of languages).
 */
#include "adapter/adapter.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define MAX_HOSTS 16

static pthread_mutex_t hosts_mx = PTHREAD_MUTEX_INITIALIZER;
/* Signalled when a host's start() ends (futoin__host_start). */
static pthread_cond_t hosts_cv = PTHREAD_COND_INITIALIZER;
static futoin__host_entry hosts[MAX_HOSTS];
static size_t nhosts;

bool futoin__host_table_ok(const futoin_host_api* h)
{
    return h && h->size >= sizeof(futoin_host_api)
           && h->version >= FUTOIN_HOST_VERSION_1 && h->language
           && h->language[0] && h->start && h->resolve && h->stop;
}

static futoin__host_entry* lookup(const char* language)
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

bool futoin__host_language_ok(const char* language)
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

int futoin__host_find_entry(const char* language, futoin__host_entry** out,
                            char* err, size_t errlen)
{
    futoin__host_entry* e;
    int rc = FUTOIN_OK;
    if (!futoin__host_language_ok(language)) {
        snprintf(err, errlen, "'%s' is not a language name",
                 language ? language : "(null)");
        return FUTOIN_EINVAL;
    }
    pthread_mutex_lock(&hosts_mx);
    e = lookup(language);
    if (!e && nhosts < MAX_HOSTS) {
        futoin__host_entry fresh = {0};
        if (strcmp(language, "c") == 0) {
            fresh.api = &futoin__host_c;
        } else {
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
    futoin__host_entry* e = NULL;
    char scratch[8];
    int rc;
    if (!out) {
        return FUTOIN_EINVAL;
    }
    if (!err) {
        err = scratch;
        errlen = sizeof(scratch);
    }
    rc = futoin__host_find_entry(language, &e, err, errlen);
    *out = rc == FUTOIN_OK ? e->api : NULL;
    return rc;
}

/*
 * Start the host of `e` on first use (futoin_host_add). Two loop threads
 * may add steps of a language at the same moment: one runs start(), the
 * others wait for it under the registry's lock and then use the host (or,
 * if it failed, try themselves). start() itself runs without the lock: it
 * may load a binding that registers hosts. A start() that adds a step of
 * its own language before it returns would wait for itself: refused.
 */
int futoin__host_start(futoin__host_entry* e, futoin_tool* tool, char* err,
                       size_t errlen)
{
    int rc;
    pthread_t self = pthread_self();
    pthread_mutex_lock(&hosts_mx);
    while (e->starting && !pthread_equal(e->starter, self)) {
        pthread_cond_wait(&hosts_cv, &hosts_mx);
    }
    if (e->started != 0) {
        pthread_mutex_unlock(&hosts_mx);
        return FUTOIN_OK;
    }
    if (e->starting) {
        pthread_mutex_unlock(&hosts_mx);
        snprintf(err, errlen,
                 "%s: its host's start() added a step of its own language "
                 "before it returned",
                 e->api->language);
        return FUTOIN_EBUSY;
    }
    e->starting = true;
    e->starter = self;
    pthread_mutex_unlock(&hosts_mx);

    err[0] = 0;
    rc = e->api->start(tool, err, errlen);

    pthread_mutex_lock(&hosts_mx);
    e->starting = false;
    if (rc == FUTOIN_OK) {
        ++e->started;
    }
    pthread_cond_broadcast(&hosts_cv);
    pthread_mutex_unlock(&hosts_mx);
    return rc;
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
