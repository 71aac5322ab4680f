/*
 * The load policy (futoin/sys/host.h, futoin_host_policy_set()): which
 * languages and modules futoin_host_add() may load, per tool and for the
 * process. Checked before anything is looked for or loaded.
 *
 * A policy is set once and never changes afterwards, which is what makes
 * reading it cheap and safe from any thread: it is published with one
 * compare-and-swap from NULL (the process's in a static pointer, a tool's
 * in the engine's per-tool slot for this layer) and only freed with its
 * tool, when no flow of that tool can add steps any more. The process's
 * lives as long as the process.
 */
#include "adapter/adapter.h"
#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rule
{
    char* language;
    char* name;  /* without the final "*" of a prefix rule */
    size_t len;  /* of name */
    bool prefix; /* the rule ended in "*" */
} rule;

typedef struct policy
{
    futoin__tool_upper upper; /* first: the engine releases it */
    bool any_language;
    size_t nlangs;
    char** langs;
    bool any_module;
    size_t nrules;
    rule* rules;
} policy;

static _Atomic(policy*) process_policy;

static void policy_free(policy* p)
{
    if (!p) {
        return;
    }
    for (size_t i = 0; i < p->nlangs; ++i) {
        free(p->langs[i]);
    }
    for (size_t i = 0; i < p->nrules; ++i) {
        free(p->rules[i].language);
        free(p->rules[i].name);
    }
    free(p->langs);
    free(p->rules);
    free(p);
}

static void policy_release(futoin__tool_upper* up)
{
    policy_free((policy*)(void*)up);
}

static size_t count(const char* const* list)
{
    size_t n = 0;
    while (list[n]) {
        ++n;
    }
    return n;
}

/* "language:name" (name non-empty, a "*" only last) into `r`. */
static int parse_rule(const char* text, rule* r)
{
    const char* colon = strchr(text, ':');
    const char* star;
    size_t langlen;
    if (!colon || colon == text) {
        return FUTOIN_EINVAL;
    }
    langlen = (size_t)(colon - text);
    r->language = strndup(text, langlen);
    if (!r->language) {
        return FUTOIN_ENOMEM;
    }
    if (!futoin__host_language_ok(r->language) || !colon[1]) {
        return FUTOIN_EINVAL;
    }
    star = strchr(colon + 1, '*');
    if (star && star[1]) {
        return FUTOIN_EINVAL;
    }
    r->prefix = star != NULL;
    r->len = strlen(colon + 1) - (r->prefix ? 1 : 0);
    r->name = strndup(colon + 1, r->len);
    return r->name ? FUTOIN_OK : FUTOIN_ENOMEM;
}

/* A copy of `src`, checked. */
static int policy_copy(const futoin_host_policy* src, policy** out)
{
    policy* p = calloc(1, sizeof(*p));
    int rc = FUTOIN_OK;
    if (!p) {
        return FUTOIN_ENOMEM;
    }
    p->upper.release = policy_release;
    p->any_language = !src->languages;
    p->any_module = !src->modules;
    if (src->languages) {
        size_t n = count(src->languages);
        p->langs = calloc(n ? n : 1, sizeof(*p->langs));
        rc = p->langs ? FUTOIN_OK : FUTOIN_ENOMEM;
        for (size_t i = 0; i < n && rc == FUTOIN_OK; ++i) {
            if (!futoin__host_language_ok(src->languages[i])) {
                rc = FUTOIN_EINVAL;
            } else if (!(p->langs[p->nlangs++] = strdup(src->languages[i]))) {
                rc = FUTOIN_ENOMEM;
            }
        }
    }
    if (src->modules && rc == FUTOIN_OK) {
        size_t n = count(src->modules);
        p->rules = calloc(n ? n : 1, sizeof(*p->rules));
        rc = p->rules ? FUTOIN_OK : FUTOIN_ENOMEM;
        for (size_t i = 0; i < n && rc == FUTOIN_OK; ++i) {
            rc = parse_rule(src->modules[i], &p->rules[p->nrules++]);
        }
    }
    if (rc != FUTOIN_OK) {
        policy_free(p);
        return rc;
    }
    *out = p;
    return FUTOIN_OK;
}

FUTOIN_API int futoin_host_policy_set(futoin_tool* tool,
                                      const futoin_host_policy* policy_in)
{
    policy* p = NULL;
    policy* expected = NULL;
    futoin__tool_upper* none = NULL;
    bool taken;
    int rc;
    if (!policy_in) {
        return FUTOIN_EINVAL;
    }
    if (policy_in->size != sizeof(futoin_host_policy)) {
        return FUTOIN_EVERSION;
    }
    rc = policy_copy(policy_in, &p);
    if (rc != FUTOIN_OK) {
        return rc;
    }
    if (tool) {
        taken = atomic_compare_exchange_strong_explicit(
                &futoin__eng(tool)->upper, &none, &p->upper,
                memory_order_acq_rel, memory_order_acquire);
    } else {
        taken = atomic_compare_exchange_strong_explicit(
                &process_policy, &expected, p, memory_order_acq_rel,
                memory_order_acquire);
    }
    if (!taken) {
        policy_free(p);
        return FUTOIN_EBUSY;
    }
    return FUTOIN_OK;
}

/* ---- checking a step ---------------------------------------------------- */

static bool rule_matches(const rule* r, const char* language,
                         const char* module)
{
    if (strcmp(r->language, language) != 0) {
        return false;
    }
    if (!r->prefix) {
        return strcmp(r->name, module) == 0;
    }
    /* ".." could climb out of a folder a prefix names */
    return strncmp(r->name, module, r->len) == 0 && !strstr(module, "..");
}

/* Appends `text` to `buf` (bounded: what does not fit becomes "..."). */
static void list_add(char* buf, size_t cap, const char* text)
{
    size_t used = strlen(buf);
    if (used + strlen(text) + 8 < cap) {
        snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", text);
    } else if (used + 5 < cap && strcmp(buf + (used > 3 ? used - 3 : 0), "...") != 0) {
        snprintf(buf + used, cap - used, ", ...");
    }
}

static int check_one(const policy* p, const char* whose, const char* language,
                     const char* module, char* err, size_t errlen)
{
    char list[512] = "";
    bool ok = p->any_language;
    for (size_t i = 0; !ok && i < p->nlangs; ++i) {
        ok = strcmp(p->langs[i], language) == 0;
    }
    if (!ok) {
        for (size_t i = 0; i < p->nlangs; ++i) {
            list_add(list, sizeof(list), p->langs[i]);
        }
        snprintf(err, errlen,
                 "load policy of %s: language '%s' is not allowed "
                 "(languages: %s)",
                 whose, language, list[0] ? list : "none");
        return FUTOIN_EINVAL;
    }
    ok = p->any_module;
    for (size_t i = 0; !ok && i < p->nrules; ++i) {
        ok = rule_matches(&p->rules[i], language, module);
    }
    if (!ok) {
        for (size_t i = 0; i < p->nrules; ++i) {
            if (strcmp(p->rules[i].language, language) == 0) {
                char r[300];
                snprintf(r, sizeof(r), "%s:%.200s%s", language,
                         p->rules[i].name, p->rules[i].prefix ? "*" : "");
                list_add(list, sizeof(list), r);
            }
        }
        if (list[0]) {
            snprintf(err, errlen,
                     "load policy of %s: %s module '%.200s' is not allowed "
                     "(no rule matches it; rules for %s: %s)",
                     whose, language, module, language, list);
        } else {
            snprintf(err, errlen,
                     "load policy of %s: %s module '%.200s' is not allowed "
                     "(no rule names %s modules)",
                     whose, language, module, language);
        }
        return FUTOIN_EINVAL;
    }
    return FUTOIN_OK;
}

int futoin__host_policy_check(futoin_tool* tool, const char* language,
                              const char* module, char* err, size_t errlen)
{
    const policy* p = atomic_load_explicit(&process_policy, memory_order_acquire);
    int rc = FUTOIN_OK;
    if (p) {
        rc = check_one(p, "this process", language, module, err, errlen);
    }
    if (rc == FUTOIN_OK && tool) {
        const futoin__tool_upper* up =
                atomic_load_explicit(&futoin__eng(tool)->upper, memory_order_acquire);
        if (up) {
            rc = check_one((const policy*)(const void*)up, "this tool", language,
                           module, err, errlen);
        }
    }
    return rc;
}
