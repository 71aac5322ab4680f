/*
 * The Java host plug-in as a user who installed the jar gets it (issue 23):
 * a C program whose environment is nothing but PATH, JAVA_HOME, CLASSPATH
 * and XDG_CACHE_HOME (polyglot.sh runs it under `env -i`) runs Java steps.
 *
 * The library finds the plug-in by itself: the jar on CLASSPATH carries it
 * as the stored entry native/<platform>/futoin-hosts/libfutoin_host_java.so,
 * which the library takes out into $XDG_CACHE_HOME/futoin_async/ and loads
 * (futoin/sys/host.h, "Finding a language's plug-in"). The plug-in must
 * find the JVM through JAVA_HOME or the `java` on PATH, and make its class
 * path of the jar it came from and CLASSPATH (absolute entries) alone.
 *
 * usage: installed_test [-m MODULE] JAR ok CLASSPATH_EXPECTED
 *        installed_test [-m MODULE] JAR fail TEXT...
 *   ok:   a Java step (MODULE.echo; org.futoin.polyglot.Fragments.echo
 *         without -m) echoes 42; the plug-in loaded is the one in the
 *         cache, with the CRC-32 of JAR's entry; the JVM's java.class.path
 *         is CLASSPATH_EXPECTED; one libfutoin_async and one libuv are
 *         mapped (the JVM's glue bound to this program's runtime by
 *         soname);
 *   fail: that Java step fails with InvalidRequest whose error_info holds
 *         each TEXT.
 * Last line "polyglot-java-installed: N passed, M failed".
 */
#define _GNU_SOURCE
#include <futoin/async.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "futoin_check.h" /* tests/include: CHECK, futoin_check_summary */
#include "c_steps.h"       /* code, info, on_error, send */
#include "jvm_env.h"      /* FJ_PLUGIN_ENTRY */
#include "zip_entry.h"

static futoin_tool* tool;
static char text[8192];
static int64_t value;

static void keep(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    value = a->arg0.type && a->arg0.type->flags == FTN_TYPE_INT64 ? a->arg0.i64 : -1;
    text[0] = 0;
    if (a->arg0.type && (a->arg0.type->flags & FTN_BASE_TYPE_MASK) == FTN_TYPE_STRING) {
        snprintf(text, sizeof(text), "%.*s", (int)a->arg0.length, a->arg0.cstr);
    }
}

/* Runs one flow: [C step sending 42] Java module.function, [keep]. */
static void run(const char* module, const char* function, int send42)
{
    FutoInAsyncSteps* as = futoin_root_new(tool);
    code[0] = info[0] = text[0] = 0;
    value = 0;
    if (send42) {
        as->api->add(as, NULL, send, NULL);
    }
    futoin_host_add(as, "java", module, function);
    as->api->add(as, NULL, keep, NULL);
    as->api->execute(as, NULL, on_error);
    futoin_tool_run(tool);
    as->api->free(as);
}

/* Whether the file at `path` is the plug-in entry of `jar` (size and
 * CRC-32, read with the same zip reader the library uses). */
static int is_entry_of(const char* path, const char* jar)
{
    char err[256];
    futoin_zip_entry e;
    uint32_t crc = 0;
    uint64_t size = 0;
    int in = open(jar, O_RDONLY | O_CLOEXEC), f = open(path, O_RDONLY | O_CLOEXEC);
    int rc = in >= 0 && f >= 0
             && futoin__zip_find_fd(in, FJ_PLUGIN_ENTRY, &e, err, sizeof(err)) == FUTOIN_ZIP_OK
             && futoin__zip_crc32_fd(f, &crc, &size) == FUTOIN_ZIP_OK && crc == e.crc32
             && size == e.size;
    if (in >= 0) {
        close(in);
    }
    if (f >= 0) {
        close(f);
    }
    return rc;
}

/* Files mapped into this process whose names begin with `name`. */
static int mapped(const char* name, char* which, size_t cap)
{
    char line[4096], seen[16][1024];
    int n = 0;
    FILE* f = fopen("/proc/self/maps", "r");
    which[0] = 0;
    while (f && fgets(line, sizeof(line), f)) {
        char* path = strchr(line, '/');
        char* base;
        int dup = 0;
        if (!path) {
            continue;
        }
        path[strcspn(path, "\n")] = 0;
        base = strrchr(path, '/') + 1;
        if (strncmp(base, name, strlen(name)) != 0) {
            continue;
        }
        for (int i = 0; i < n; ++i) {
            dup |= strcmp(seen[i], path) == 0;
        }
        if (!dup && n < 16) {
            size_t used = strlen(which);
            snprintf(seen[n++], sizeof(seen[0]), "%s", path);
            snprintf(which + used, cap - used, "%s%s", used ? ", " : "", path);
        }
    }
    if (f) {
        fclose(f);
    }
    return n;
}

int main(int argc, char** argv)
{
    char which[4096], cache[1024];
    const char* xdg = getenv("XDG_CACHE_HOME");
    const char* module = "org.futoin.polyglot.Fragments";
    int ok;
    if (argc > 2 && strcmp(argv[1], "-m") == 0) {
        module = argv[2];
        argv += 2;
        argc -= 2;
    }
    if (argc < 4 || (strcmp(argv[2], "ok") != 0 && strcmp(argv[2], "fail") != 0)
        || (strcmp(argv[2], "ok") == 0 && argc != 4)) {
        fprintf(stderr, "usage: %s [-m MODULE] JAR ok CLASSPATH | JAR fail TEXT...\n",
                argv[0]);
        return 2;
    }
    ok = strcmp(argv[2], "ok") == 0;
    snprintf(cache, sizeof(cache), "%s/futoin_async/libfutoin_host_java-", xdg ? xdg : "?");
    if (futoin_tool_new(&tool, NULL) != FUTOIN_OK) {
        return 2;
    }
    run(module, "echo", 1);
    if (ok) {
        CHECK(code[0] == 0 && value == 42, "echo: %lld, error %s %s", (long long)value, code,
              info);
        run("org.futoin.polyglot.Probe", "classPath", 0);
        CHECK(strcmp(text, argv[3]) == 0, "the JVM's class path is\n  '%s', not\n  '%s' (%s %s)",
              text, argv[3], code, info);
        CHECK(mapped("libfutoin_async", which, sizeof(which)) == 1,
              "libfutoin_async mapped: %s", which);
        CHECK(mapped("libuv.", which, sizeof(which)) == 1, "libuv mapped: %s", which);
        CHECK(mapped("libfutoin_java.so", which, sizeof(which)) == 1,
              "the Java glue mapped: %s", which);
        CHECK(mapped("libfutoin_host_java", which, sizeof(which)) == 1
                      && strncmp(which, cache, strlen(cache)) == 0,
              "the plug-in mapped is %s, not the jar's in %s*", which, cache);
        CHECK(is_entry_of(which, argv[1]), "%s is not the plug-in entry of %s", which,
              argv[1]);
    } else {
        for (int i = 3; i < argc; ++i) {
            CHECK(strcmp(code, "InvalidRequest") == 0 && strstr(info, argv[i]) != NULL,
                  "%s.echo: expected InvalidRequest with '%s', got '%s': %s", module,
                  argv[i], code, info);
        }
    }
    futoin_host_shutdown();
    CHECK(futoin_tool_free(tool) == FUTOIN_OK, "tool not freed");
    return futoin_check_summary("polyglot-java-installed");
}
