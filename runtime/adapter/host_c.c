/*
 * The built-in host of language "c": a step is a function of a shared
 * object, either a plain C function called through libffi with the
 * previous step's values (named by its declaration, "double hypot(double,
 * double)") or a step function written against the FTN12 API itself
 * (named by its bare name). futoin/sys/host.h documents both forms.
 *
 * The shared object is named by an absolute path or by a bare soname
 * ("libm.so.6"), which dlopen() looks up as the dynamic linker does
 * (LD_LIBRARY_PATH, the caller's RUNPATH, ld.so.cache, the system
 * folders). A relative path with a slash ("./libx.so", "lib/x.so") is
 * refused: dlopen() would resolve it against the current folder.
 */
#include "adapter/adapter.h"
#include "base/codeinfo.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct c_step
{
    futoin_ffi_fn* fn;                    /* a plain function, or NULL */
    FutoInAsyncSteps_execute_callback step; /* an FTN12 step function */
    void* dl;
    char* label;  /* its frame's function: the declaration as given */
    char* module;
    /* Where the caller added it (futoin_host_add_at(); NULL, 0: not
     * said); the frame's function is then "<declaration> in <module>". */
    const char* site_file;
    uint32_t site_line;
    /* Where the function is defined, from the object's line table
     * (base/codeinfo.c; NULL, 0: no debug info): the frame's file:line
     * when no call site was said (a step another language adds by name). */
    const char* def_file;
    uint32_t def_line;
    struct c_step* next; /* in the resolved cache's bucket */
    char* key;           /* "module\0function", when cached */
} c_step;

/*
 * The caller's file:line for the C step futoin_host_add_at() is adding.
 * futoin_host_add() (host_add.c) runs the whole add, with the host
 * registry and its checks, and calls c_resolve() on this thread before it
 * returns; the host API's resolve() has no room for a call site, so the
 * site rides in a thread-local slot, set around that one call and taken
 * (cleared) by the first c_resolve() that runs: one that runs nested
 * (a module's constructor adding a C step while dlopen() loads it)
 * never sees the outer site.
 */
static _Thread_local const char* site_file;
static _Thread_local uint32_t site_line;

/*
 * Resolved C steps, kept: a flow that adds the same C function again (a
 * request handler adding its steps per request) finds it here instead of
 * paying dlopen(), dlsym(), parsing and three allocations per step, and
 * the step's end frees nothing. An entry is immutable once inserted (the
 * libffi call description is only read), so every tool's loop thread
 * shares it; modules are never unloaded anyway (c_release). The cache is
 * bounded: past C_CACHE_MAX entries, steps are resolved and freed one by
 * one as before.
 */
#define C_CACHE_BUCKETS 256
#define C_CACHE_MAX 4096
static pthread_mutex_t c_cache_mx = PTHREAD_MUTEX_INITIALIZER;
static c_step* c_cache[C_CACHE_BUCKETS];
static size_t c_cache_n;

static uint32_t c_key_hash(const char* module, const char* function)
{
    uint32_t h = 2166136261u; /* FNV-1a over both strings and the NUL */
    for (const char* p = module; *p; ++p) {
        h = (h ^ (unsigned char)*p) * 16777619u;
    }
    h = (h ^ 0u) * 16777619u;
    for (const char* p = function; *p; ++p) {
        h = (h ^ (unsigned char)*p) * 16777619u;
    }
    return h;
}

/* Whether cache entry `c` is `function` of `module` added at file:line
 * (each call site has its entry: the site is part of the frame). */
static bool c_cache_match(const c_step* c, const char* module,
                          const char* function, const char* file,
                          uint32_t line)
{
    return c->site_file == file && c->site_line == line
           && strcmp(c->key, module) == 0
           && strcmp(c->key + strlen(c->key) + 1, function) == 0;
}

static c_step* c_cache_find(uint32_t h, const char* module,
                            const char* function, const char* file,
                            uint32_t line)
{
    c_step* c;
    pthread_mutex_lock(&c_cache_mx);
    for (c = c_cache[h % C_CACHE_BUCKETS]; c; c = c->next) {
        if (c_cache_match(c, module, function, file, line)) {
            break;
        }
    }
    pthread_mutex_unlock(&c_cache_mx);
    return c;
}

/* Keep `c` (just resolved) if there is room; returns the entry to use:
 * `c` itself, or the one another thread inserted meanwhile. */
static c_step* c_cache_keep(c_step* c, uint32_t h, const char* module,
                            const char* function)
{
    size_t lm = strlen(module) + 1, lf = strlen(function) + 1;
    c_step* found;
    char* key = malloc(lm + lf);
    if (!key) {
        return c;
    }
    memcpy(key, module, lm);
    memcpy(key + lm, function, lf);
    pthread_mutex_lock(&c_cache_mx);
    for (found = c_cache[h % C_CACHE_BUCKETS]; found; found = found->next) {
        if (c_cache_match(found, module, function, c->site_file, c->site_line)) {
            break;
        }
    }
    if (!found && c_cache_n < C_CACHE_MAX) {
        c->key = key;
        c->next = c_cache[h % C_CACHE_BUCKETS];
        c_cache[h % C_CACHE_BUCKETS] = c;
        ++c_cache_n;
        key = NULL;
        found = c;
    }
    pthread_mutex_unlock(&c_cache_mx);
    free(key);
    return found ? found : c;
}

static void c_release(void* data)
{
    c_step* c = data;
    if (c->key) {
        return; /* kept in the cache for the life of the process */
    }
    futoin_ffi_free(c->fn);
    /* The module is not unloaded (c->dl is not closed): values the step
     * passed on outlive it, and their types and cleanups are code and data
     * of that module. dlopen() counts its references, so the module is
     * loaded once however many steps use it. */
    free(c->label);
    free(c->module);
    free(c);
}

static void c_origin(void* data, futoin_frame_origin* out)
{
    c_step* c = data;
    out->language = "c";
    out->function = c->label;
    if (c->site_file) {
        out->file = c->site_file;
        out->line = c->site_line;
    } else {
        out->file = c->def_file ? c->def_file : c->module;
        out->line = c->def_file ? c->def_line : 0;
    }
}

static const futoin_step_class c_class = {sizeof(futoin_step_class), c_release,
                                          c_origin};

static void c_execute(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* in)
{
    c_step* c = data;
    if (c->step) {
        c->step(bsi, NULL, in); /* written against the FTN12 API itself */
    } else {
        futoin__ffi_run(bsi, c->fn, in);
    }
}

/* A bare name: "name" of a step function. */
static bool c_identifier(const char* s)
{
    if (!*s || isdigit((unsigned char)*s)) {
        return false;
    }
    for (; *s; ++s) {
        if (!isalnum((unsigned char)*s) && *s != '_') {
            return false;
        }
    }
    return true;
}

static int c_start(futoin_tool* tool, char* err, size_t errlen)
{
    return FUTOIN_OK;
}

static void c_stop(void)
{
}

/* One C type at *p (skipping blanks), as a futoin_ffi_type. */
static bool c_type(const char** p, futoin_ffi_type* out)
{
    static const struct
    {
        const char* name;
        futoin_ffi_type t;
    } types[] = {
            {"const char*", FUTOIN_FFI_CSTRING}, {"char*", FUTOIN_FFI_CSTRING},
            {"unsigned long long", FUTOIN_FFI_UINT64},
            {"unsigned long", FUTOIN_FFI_UINT64},
            {"unsigned int", FUTOIN_FFI_UINT32}, {"unsigned", FUTOIN_FFI_UINT32},
            {"long long", FUTOIN_FFI_INT64}, {"long", FUTOIN_FFI_INT64},
            {"int64_t", FUTOIN_FFI_INT64}, {"int32_t", FUTOIN_FFI_INT32},
            {"uint64_t", FUTOIN_FFI_UINT64}, {"uint32_t", FUTOIN_FFI_UINT32},
            {"size_t", FUTOIN_FFI_UINT64}, {"int", FUTOIN_FFI_INT32},
            {"double", FUTOIN_FFI_DOUBLE}, {"float", FUTOIN_FFI_FLOAT},
            {"_Bool", FUTOIN_FFI_BOOL}, {"bool", FUTOIN_FFI_BOOL},
            {"void", FUTOIN_FFI_VOID},
    };
    char norm[64];
    size_t n = 0;
    const char* s = *p;
    while (isspace((unsigned char)*s)) {
        ++s;
    }
    /* the type ends at a name, ',' or ')': collapse blanks around '*' */
    while (*s && *s != ',' && *s != ')' && *s != '(' && n + 1 < sizeof(norm)) {
        if (isspace((unsigned char)*s)) {
            const char* t = s;
            while (isspace((unsigned char)*t)) {
                ++t;
            }
            if (*t == '*' || *t == ',' || *t == ')' || *t == '(' || !*t) {
                s = t;
                continue;
            }
            norm[n++] = ' ';
            s = t;
            continue;
        }
        norm[n++] = *s++;
    }
    norm[n] = 0;
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); ++i) {
        size_t len = strlen(types[i].name);
        if (strncmp(norm, types[i].name, len) == 0
            && (norm[len] == 0 || norm[len] == ' ')) {
            *out = types[i].t;
            /* what follows the type in `norm` (a name) is consumed too */
            *p = s;
            return true;
        }
    }
    return false;
}

/* "double hypot(double, double)" -> return type, name, argument types. */
static bool c_parse(const char* decl, futoin_ffi_type* ret, char* name,
                    size_t namelen, futoin_ffi_type* args, size_t* nargs)
{
    const char* open = strchr(decl, '(');
    const char* end;
    const char* p;
    const char* nm;
    size_t n;
    if (!open) {
        return false;
    }
    /* the name is the identifier right before '(' */
    end = open;
    while (end > decl && isspace((unsigned char)end[-1])) {
        --end;
    }
    nm = end;
    while (nm > decl && (isalnum((unsigned char)nm[-1]) || nm[-1] == '_')) {
        --nm;
    }
    if (nm == end || (size_t)(end - nm) >= namelen) {
        return false;
    }
    memcpy(name, nm, (size_t)(end - nm));
    name[end - nm] = 0;
    {
        char rbuf[64];
        const char* rp = rbuf;
        size_t rl = (size_t)(nm - decl);
        if (rl >= sizeof(rbuf)) {
            return false;
        }
        memcpy(rbuf, decl, rl);
        rbuf[rl] = 0;
        if (!c_type(&rp, ret)) {
            return false;
        }
    }
    p = open + 1;
    n = 0;
    while (isspace((unsigned char)*p)) {
        ++p;
    }
    if (*p == ')' || strncmp(p, "void)", 5) == 0 || strncmp(p, "void )", 6) == 0) {
        *nargs = 0;
        return true;
    }
    for (;;) {
        futoin_ffi_type t;
        if (n == FUTOIN_FFI_MAX_ARGS || !c_type(&p, &t) || t == FUTOIN_FFI_VOID) {
            return false;
        }
        /* skip a parameter name */
        while (*p && *p != ',' && *p != ')') {
            ++p;
        }
        args[n++] = t;
        if (*p == ')') {
            break;
        }
        if (*p != ',') {
            return false;
        }
        ++p;
    }
    *nargs = n;
    return true;
}

/* The frame's function: the declaration as the caller wrote it (a bare
 * name stays a name), with the module when the file is the caller's. */
static char* c_label(const char* function, const char* module, bool with_module)
{
    size_t n;
    char* s;
    if (!with_module) {
        return strdup(function);
    }
    n = strlen(function) + strlen(" in ") + strlen(module) + 1;
    s = malloc(n);
    if (s) {
        snprintf(s, n, "%s in %s", function, module);
    }
    return s;
}

static int c_resolve(const char* module, const char* function,
                     futoin_host_step* out, char* err, size_t errlen)
{
    futoin_ffi_type ret, args[FUTOIN_FFI_MAX_ARGS];
    size_t nargs = 0;
    char name[128];
    void* dl;
    void* sym;
    c_step* c;
    uint32_t h;
    bool step_fn;
    const char* file = site_file;
    uint32_t line = file ? site_line : 0;
    site_file = NULL; /* taken: see site_file */
    site_line = 0;
    if (strchr(module, '/') && module[0] != '/') {
        /* dlopen() would take it from the current folder */
        snprintf(err, errlen,
                 "c: module '%s' is a relative path: name a shared object "
                 "by an absolute path, or by a bare soname that the dynamic "
                 "linker finds",
                 module);
        return FUTOIN_EINVAL;
    }
    h = c_key_hash(module, function);
    c = c_cache_find(h, module, function, file, line);
    if (c) {
        out->execute = c_execute;
        out->error = NULL;
        out->data = c;
        out->cls = &c_class;
        return FUTOIN_OK;
    }
    step_fn = c_identifier(function);
    if (step_fn && strlen(function) < sizeof(name)) {
        strcpy(name, function);
    } else if (!c_parse(function, &ret, name, sizeof(name), args, &nargs)) {
        snprintf(err, errlen,
                 "c: '%s' is not a C declaration this host can call "
                 "(e.g. \"double hypot(double, double)\"; at most %d "
                 "arguments of bool, int32_t, int64_t, uint32_t, uint64_t, "
                 "float, double, const char*)",
                 function, FUTOIN_FFI_MAX_ARGS);
        return FUTOIN_EINVAL;
    }
    dl = dlopen(module, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        snprintf(err, errlen, "c: cannot load module '%s': %s", module,
                 dlerror());
        return FUTOIN_EINVAL;
    }
    dlerror();
    sym = dlsym(dl, name);
    if (!sym) {
        snprintf(err, errlen, "c: module '%s' has no function '%s'", module,
                 name);
        dlclose(dl);
        return FUTOIN_EINVAL;
    }
    c = calloc(1, sizeof(*c));
    if (c) {
        union
        {
            void* p;
            void (*fn)(void);
        } u;
        u.p = sym;
        if (step_fn) {
            union
            {
                void* p;
                FutoInAsyncSteps_execute_callback fn;
            } v;
            v.p = sym;
            c->step = v.fn;
        } else {
            c->fn = futoin_ffi_prepare(u.fn, ret, nargs, args);
        }
        c->label = c_label(function, module, file != NULL);
        c->module = strdup(module);
        c->site_file = file;
        c->site_line = line;
        if (!file) {
            /* Read once, here: the entry is shared by every loop thread
             * once cached, and the object's file is read only for the
             * first add of a function (codeinfo keeps the answer; its
             * strings live as long as the process). */
            futoin__codeinfo ci;
            futoin__codeinfo_get(sym, &ci);
            c->def_file = ci.file;
            c->def_line = ci.file ? ci.line : 0;
        }
    }
    if (!c || (!c->fn && !c->step) || !c->label || !c->module) {
        if (c) {
            futoin_ffi_free(c->fn);
            free(c->label);
            free(c->module);
            free(c);
        }
        dlclose(dl);
        snprintf(err, errlen, "c: out of memory preparing '%s'", function);
        return FUTOIN_ENOMEM;
    }
    c->dl = dl;
    {
        c_step* kept = c_cache_keep(c, h, module, function);
        if (kept != c) {
            c_release(c); /* another thread resolved it first */
            c = kept;
        }
    }
    out->execute = c_execute;
    out->error = NULL;
    out->data = c;
    out->cls = &c_class;
    return FUTOIN_OK;
}

const futoin_host_api futoin__host_c = {
        sizeof(futoin_host_api), FUTOIN_HOST_VERSION_1, "c",
        c_start, c_resolve, c_stop,
};

FUTOIN_API int futoin_host_add_at(FutoInAsyncSteps* bsi, const char* language,
                                  const char* module, const char* function,
                                  const char* file, uint32_t line)
{
    int rc;
    /* only a C step takes the site; with any other language a C step
     * added while its host resolves (by code it runs) must not */
    bool c = language && strcmp(language, "c") == 0;
    if (c) {
        site_file = file;
        site_line = line;
    }
    rc = futoin_host_add(bsi, language, module, function);
    if (c) {
        site_file = NULL; /* not taken: the add failed before resolving */
        site_line = 0;
    }
    return rc;
}
