/*
 * The load policy (futoin/sys/host.h, futoin_host_policy_set()) from Java:
 * LoadPolicy, new Tool(policy), Tool.setLoadPolicy(),
 * LoadPolicy.setForProcess(). LoadPolicy checks the entries and words the
 * errors; this hands them to the library as C strings.
 */
#include "futoin_java.h"
#include "fj_api.h"

#include <futoin/sys/host.h>
#include <stdlib.h>

/* The `n` NUL-terminated UTF-8 entries of `packed` (null: none given, a
 * NULL list) as a NULL-terminated array, in one allocation: the pointers,
 * then the bytes. 0, or -1 with OutOfMemoryError thrown. */
static int c_list(JNIEnv* env, jbyteArray packed, jint n, const char*** out)
{
    jsize len;
    char* bytes;
    const char** list;
    *out = NULL;
    if (!packed || n < 0) {
        return 0;
    }
    len = (*env)->GetArrayLength(env, packed);
    list = malloc(((size_t)n + 1) * sizeof(*list) + (size_t)len + 1);
    if (!list) {
        fj_throw(env, fj.ex_oom, "futoin: out of native memory");
        return -1;
    }
    bytes = (char*)(list + n + 1);
    (*env)->GetByteArrayRegion(env, packed, 0, len, (jbyte*)bytes);
    bytes[len] = 0;
    for (jint i = 0, at = 0; i < n; ++i) {
        /* LoadPolicy packed exactly n entries, each ending in a NUL */
        list[i] = at < len ? bytes + at : "";
        while (at < len && bytes[at]) {
            ++at;
        }
        ++at;
    }
    list[n] = NULL;
    *out = list;
    return 0;
}

jint fj_policy_set(JNIEnv* env, jlong tool, jbyteArray languages, jint nlanguages,
                   jbyteArray modules, jint nmodules)
{
    futoin_host_policy p = FUTOIN_HOST_POLICY_INIT;
    const char** langs = NULL;
    const char** mods = NULL;
    jint rc = FUTOIN_ENOMEM;
    if (c_list(env, languages, nlanguages, &langs) == 0
        && c_list(env, modules, nmodules, &mods) == 0) {
        p.languages = langs;
        p.modules = mods;
        /* copies the lists; any thread */
        rc = futoin_host_policy_set((futoin_tool*)(uintptr_t)tool, &p);
    }
    free(langs);
    free(mods);
    return rc;
}
