/*
 * The JVM and the class path of the host plug-in, from JAVA_HOME, PATH and
 * CLASSPATH (jvm_env.h). Only absolute settings are followed: a relative
 * JAVA_HOME, PATH or CLASSPATH entry (or an empty one, which means ".")
 * would name a folder relative to wherever the host program happens to
 * run, so what it loads would depend on that.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, realpath */
#endif
#include "jvm_env.h"

#include "fj_str.h"
#include "zip_entry.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- libjvm ----------------------------------------------------------------- */

static void tried_add(char* tried, size_t cap, const char* what)
{
    size_t used = strlen(tried);
    if (used + 3 < cap) {
        snprintf(tried + used, cap - used, "%s%.300s", used ? ", " : "", what);
    }
}

static void* try_libjvm(const char* path, char* tried, size_t triedcap)
{
    void* dl = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!dl) {
        tried_add(tried, triedcap, path);
    }
    return dl;
}

/* <home>/lib/server/libjvm.so of the real file of `java` (a symbolic link
 * such as Debian's /usr/bin/java -> /etc/alternatives/java -> .../bin/java
 * is followed to the end). */
static void* libjvm_of_java(const char* java, char* tried, size_t triedcap)
{
    char real[PATH_MAX], lib[PATH_MAX + 32];
    size_t n;
    if (!realpath(java, real)) {
        return NULL;
    }
    n = strlen(real);
    if (n < 9 || strcmp(real + n - 9, "/bin/java") != 0) {
        char why[PATH_MAX + 64];
        snprintf(why, sizeof(why), "%.*s (not in a bin/ of a JDK)", PATH_MAX, real);
        tried_add(tried, triedcap, why);
        return NULL;
    }
    snprintf(lib, sizeof(lib), "%.*s/lib/server/libjvm.so", (int)(n - 9), real);
    return try_libjvm(lib, tried, triedcap);
}

void* fj_open_libjvm(char* err, size_t errlen)
{
    char tried[1536] = "";
    const char* libjvm = getenv("FUTOIN_JAVA_LIBJVM");
    const char* home = getenv("JAVA_HOME");
    const char* path = getenv("PATH");
    void* dl = NULL;
    if (libjvm && *libjvm) {
        dl = try_libjvm(libjvm, tried, sizeof(tried));
        if (!dl) {
            snprintf(err, errlen,
                     "java: no JVM: libjvm.so not found (tried FUTOIN_JAVA_LIBJVM=%s)",
                     tried);
        }
        return dl;
    }
    if (home && home[0] == '/') {
        char lib[PATH_MAX + 32];
        snprintf(lib, sizeof(lib), "%.*s/lib/server/libjvm.so", PATH_MAX, home);
        dl = try_libjvm(lib, tried, sizeof(tried));
    } else if (home && *home) {
        tried_add(tried, sizeof(tried), "JAVA_HOME (not an absolute path)");
    }
    while (!dl && path && *path) {
        const char* colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        if (len > 0 && path[0] == '/' && len < PATH_MAX) {
            char java[PATH_MAX + 8];
            snprintf(java, sizeof(java), "%.*s/java", (int)len, path);
            if (access(java, X_OK) == 0) {
                dl = libjvm_of_java(java, tried, sizeof(tried));
            }
        }
        path = colon ? colon + 1 : NULL;
    }
    if (!dl) {
        snprintf(err, errlen,
                 "java: no JVM: libjvm.so not found (tried %s; install a JRE 17, "
                 "e.g. Debian's openjdk-17-jre-headless, and put its java on "
                 "PATH, or set JAVA_HOME)",
                 tried[0] ? tried : "JAVA_HOME unset, no java on PATH");
    }
    return dl;
}

/* ---- the class path ---------------------------------------------------------- */

typedef struct list
{
    char** items;
    size_t n, cap;
    int oom;
} list;

static void list_add(list* l, const char* s, size_t len)
{
    char* copy;
    for (size_t i = 0; i < l->n; ++i) {
        if (strlen(l->items[i]) == len && memcmp(l->items[i], s, len) == 0) {
            return; /* each entry once */
        }
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char** items = realloc(l->items, cap * sizeof(*items));
        if (!items) {
            l->oom = 1;
            return;
        }
        l->items = items;
        l->cap = cap;
    }
    copy = malloc(len + 1);
    if (!copy) {
        l->oom = 1;
        return;
    }
    memcpy(copy, s, len);
    copy[len] = 0;
    l->items[l->n++] = copy;
}

static void list_free(list* l)
{
    for (size_t i = 0; i < l->n; ++i) {
        free(l->items[i]);
    }
    free(l->items);
}

static int by_name(const void* a, const void* b)
{
    return strcmp(*(char* const*)a, *(char* const*)b);
}

/* An entry ending in "/" "*": the jars in its folder, in name order (the
 * launcher's order is unspecified; a fixed one makes runs repeatable). */
static void add_jars_of(list* l, const char* dir, size_t dirlen)
{
    char d[PATH_MAX];
    list found = {0};
    DIR* h;
    struct dirent* e;
    if (dirlen >= sizeof(d)) {
        return;
    }
    memcpy(d, dir, dirlen);
    d[dirlen] = 0;
    if (!(h = opendir(d))) {
        return;
    }
    while ((e = readdir(h)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n > 4 && (strcmp(e->d_name + n - 4, ".jar") == 0
                      || strcmp(e->d_name + n - 4, ".JAR") == 0)) {
            char f[PATH_MAX * 2];
            int k = snprintf(f, sizeof(f), "%s/%s", d, e->d_name);
            if (k > 0 && (size_t)k < sizeof(f)) {
                list_add(&found, f, (size_t)k);
            }
        }
    }
    closedir(h);
    if (found.n) {
        qsort(found.items, found.n, sizeof(*found.items), by_name);
    }
    for (size_t i = 0; i < found.n; ++i) {
        list_add(l, found.items[i], strlen(found.items[i]));
    }
    l->oom |= found.oom;
    list_free(&found);
}

/* The absolute entries of a CLASSPATH-style value; what was left out is
 * named in `note`. */
static void add_entries(list* l, const char* value, int absolute_only, char* note,
                        size_t notelen)
{
    while (value && *value) {
        const char* colon = strchr(value, ':');
        size_t len = colon ? (size_t)(colon - value) : strlen(value);
        if (len == 0 || (absolute_only && value[0] != '/')) {
            char what[320];
            snprintf(what, sizeof(what), "'%.*s'", len > 256 ? 256 : (int)len, value);
            tried_add(note, notelen, what);
        } else if (len >= 2 && value[len - 1] == '*' && value[len - 2] == '/') {
            add_jars_of(l, value, len - 2);
        } else {
            list_add(l, value, len);
        }
        value = colon ? colon + 1 : NULL;
    }
}

/* The file this plug-in was loaded from (dladdr of one of its functions). */
static int own_file(char* out, size_t cap)
{
    Dl_info info;
    if (!dladdr((void*)&fj_class_path_option, &info) || !info.dli_fname
        || info.dli_fname[0] != '/' || strlen(info.dli_fname) >= cap) {
        return -1;
    }
    fj_copy_str(out, cap, info.dli_fname);
    return 0;
}

/* Is `jar` a jar whose stored plug-in entry has this CRC-32 and size? */
static int holds_plugin(const char* jar, uint32_t crc, uint64_t size)
{
    futoin_zip_entry e;
    int fd = open(jar, O_RDONLY | O_CLOEXEC);
    int rc;
    if (fd < 0) {
        return 0;
    }
    rc = futoin__zip_find_fd(fd, FJ_PLUGIN_ENTRY, &e, NULL, 0);
    close(fd);
    return rc == FUTOIN_ZIP_OK && e.crc32 == crc && e.size == size;
}

/* The binding's jar: FUTOIN_JAVA_JAR; else the jar among `candidates`
 * that carries this very plug-in; else futoin-async.jar next to it. */
static void binding_jar(list* out, const list* candidates, char* note, size_t notelen)
{
    const char* jar = getenv("FUTOIN_JAVA_JAR");
    char self[PATH_MAX], next[PATH_MAX + 32];
    struct stat st;
    if (jar && *jar) {
        /* an override, but still only an absolute path: a relative one
         * would name a file of whatever folder the program runs in */
        if (jar[0] == '/') {
            list_add(out, jar, strlen(jar));
            return;
        }
        {
            char what[320];
            snprintf(what, sizeof(what), "FUTOIN_JAVA_JAR '%.256s' left out: not an absolute path",
                     jar);
            tried_add(note, notelen, what);
        }
    }
    if (own_file(self, sizeof(self)) != 0) {
        return;
    }
    {
        uint32_t crc;
        uint64_t size;
        int fd = open(self, O_RDONLY | O_CLOEXEC);
        int ok = fd >= 0 && futoin__zip_crc32_fd(fd, &crc, &size) == FUTOIN_ZIP_OK;
        if (fd >= 0) {
            close(fd);
        }
        for (size_t i = 0; ok && i < candidates->n; ++i) {
            if (holds_plugin(candidates->items[i], crc, size)) {
                list_add(out, candidates->items[i], strlen(candidates->items[i]));
                return;
            }
        }
    }
    snprintf(next, sizeof(next), "%.*s/futoin-async.jar",
             (int)(strrchr(self, '/') - self), self);
    if (stat(next, &st) == 0 && S_ISREG(st.st_mode)) {
        list_add(out, next, strlen(next));
        return;
    }
    tried_add(note, notelen, "no futoin-async.jar on CLASSPATH carries this plug-in");
}

char* fj_class_path_option(char* note, size_t notelen)
{
    static const char prefix[] = "-Djava.class.path=";
    list user = {0}, all = {0};
    char skipped[1024] = "", skipped_dev[1024] = "";
    char* opt = NULL;
    size_t len = sizeof(prefix);
    note[0] = 0;
    /* the development override follows the rule of CLASSPATH: absolute
     * entries only (issue 23 item 7: never the current folder) */
    add_entries(&user, getenv("FUTOIN_JAVA_CLASSPATH"), 1, skipped_dev, sizeof(skipped_dev));
    add_entries(&user, getenv("CLASSPATH"), 1, skipped, sizeof(skipped));
    binding_jar(&all, &user, note, notelen);
    if (skipped_dev[0]) {
        char what[1100];
        snprintf(what, sizeof(what),
                 "relative or empty FUTOIN_JAVA_CLASSPATH entries left out: %s", skipped_dev);
        tried_add(note, notelen, what);
    }
    for (size_t i = 0; i < user.n; ++i) {
        list_add(&all, user.items[i], strlen(user.items[i]));
    }
    if (skipped[0]) {
        char what[1100];
        snprintf(what, sizeof(what), "relative or empty CLASSPATH entries left out: %s",
                 skipped);
        tried_add(note, notelen, what);
    }
    if (!user.oom && !all.oom) {
        for (size_t i = 0; i < all.n; ++i) {
            len += strlen(all.items[i]) + 1;
        }
        opt = malloc(len);
    }
    if (opt) {
        char* p = opt;
        memcpy(p, prefix, sizeof(prefix) - 1);
        p += sizeof(prefix) - 1;
        for (size_t i = 0; i < all.n; ++i) {
            size_t n = strlen(all.items[i]);
            if (i) {
                *p++ = ':';
            }
            memcpy(p, all.items[i], n);
            p += n;
        }
        *p = 0;
    }
    list_free(&user);
    list_free(&all);
    return opt;
}
