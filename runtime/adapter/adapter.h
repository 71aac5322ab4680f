/* Internal interface of the adapter layer (not installed). */
#ifndef FUTOIN_RUNTIME_ADAPTER_H
#define FUTOIN_RUNTIME_ADAPTER_H

#include <futoin/ffi.h>
#include <futoin/sys/host.h>

#include <pthread.h>
#include <stdbool.h>

/* ffi.c: the body of a libffi step: call `p` with the values `in` and
 * complete `bsi` with its result (or InvalidRequest naming a value of the
 * wrong type). Used by futoin_ffi_add() and the C language host. */
void futoin__ffi_run(FutoInAsyncSteps* bsi, const futoin_ffi_fn* p,
                     const FutoInArgs* in);

/* host_c.c: the built-in host of language "c" (static storage). */
extern const futoin_host_api futoin__host_c;

/* host.c: the registry of language hosts. One entry per language, kept
 * for the life of the process. */
typedef struct futoin__host_entry
{
    const futoin_host_api* api;
    void* dl;    /* the plug-in, when we loaded it */
    /* The fields below are read and written under the registry's lock. */
    int started;       /* start()s made by futoin_host_add() */
    bool starting;     /* a start() runs now, on thread `starter` */
    pthread_t starter;
} futoin__host_entry;

/* Whether `h` is a host table the registry can use. */
bool futoin__host_table_ok(const futoin_host_api* h);
/* Whether `language` is a language name: 1-32 of [A-Za-z0-9_-]. */
bool futoin__host_language_ok(const char* language);
/* The entry of `language`: registered, built in or loaded now. FUTOIN_OK,
 * or an error with `err` saying why. Thread-safe. */
int futoin__host_find_entry(const char* language, futoin__host_entry** out,
                            char* err, size_t errlen);
/* Start the host of `e` on `tool`'s loop thread on first use, once however
 * many threads ask at the same time (the others wait for that start()).
 * FUTOIN_OK if it runs; else start()'s error, with its message in `err`. */
int futoin__host_start(futoin__host_entry* e, futoin_tool* tool, char* err,
                       size_t errlen);

/* host_plugin.c: find and load the plug-in of `language` (a safe name);
 * FUTOIN_OK with its table and dlopen() handle, or FUTOIN_EINVAL with
 * `err` saying what provides it and naming the places searched. Called
 * with the registry's lock held. */
int futoin__host_load_plugin(const char* language,
                             const futoin_host_api** api_out, void** dl_out,
                             char* err, size_t errlen);

/* host_policy.c: whether the process's and `tool`'s load policies (tool
 * NULL: the process's only) allow a step of `module` in `language` (a
 * language name); FUTOIN_OK, or FUTOIN_EINVAL with `err` naming the rule.
 * Any thread. */
int futoin__host_policy_check(futoin_tool* tool, const char* language,
                              const char* module, char* err, size_t errlen);

/* host_search.c: the places the plug-in of a language may be, in the
 * order of futoin/sys/host.h, each an absolute path named by a setting. */
typedef enum futoin__host_cand
{
    FUTOIN__HOST_FILE,     /* a plug-in file to try */
    FUTOIN__HOST_JAR,      /* a jar that may carry the Java plug-in */
    FUTOIN__HOST_LEFT_OUT, /* an entry not followed (relative, empty) */
    FUTOIN__HOST_UNSET,    /* the main setting of a language is not set */
} futoin__host_cand;

/* `setting` names where the candidate came from ("PYTHONPATH", ...);
 * `path` is the candidate (for LEFT_OUT: the entry, quoted). Returns true
 * to stop the search (the plug-in was found). */
typedef bool (*futoin__host_visit_fn)(void* ctx, futoin__host_cand kind,
                                      const char* setting, const char* path);
void futoin__host_search(const char* language, futoin__host_visit_fn visit,
                         void* ctx);

#ifndef FUTOIN_HOST_PLATFORM
#define FUTOIN_HOST_PLATFORM "linux-x86_64"
#endif
/* The Java plug-in's place in the binding's jar (a stored entry) and in a
 * class folder. */
#define FUTOIN__HOST_JAVA_ENTRY                                                \
    "native/" FUTOIN_HOST_PLATFORM "/futoin-hosts/libfutoin_host_java.so"

/* host_jar.c: take the stored entry `entry` of `jar` out into the private
 * cache (checked, by CRC-32 and size); 0 with the cached file's path,
 * 1 if `jar` holds no such entry (or is no zip), -1 with `err` saying why
 * (a compressed entry, a cache folder refused, ...). */
int futoin__host_jar_extract(const char* jar, const char* entry, char* path,
                             size_t pathlen, char* err, size_t errlen);

#endif
