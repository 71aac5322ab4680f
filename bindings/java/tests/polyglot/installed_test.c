/*
 * The Java host plug-in as a user who installed the jar gets it (issue 23):
 * a C program whose environment is nothing but PATH, JAVA_HOME and
 * CLASSPATH (polyglot.sh runs it under `env -i`) runs Java steps.
 *
 * The plug-in is the jar's stored entry
 * native/<platform>/futoin-hosts/libfutoin_host_java.so, extracted here
 * with the zip reader (host/zip_entry.c) to a temporary folder, which
 * FUTOIN_HOST_PATH then names: the library's own discovery of plug-ins in
 * CLASSPATH jars is not written yet, so this program does that part. The
 * plug-in must find the JVM through JAVA_HOME or the `java` on PATH, and
 * make its class path of the jar it came from and CLASSPATH (absolute
 * entries) alone.
 *
 * usage: installed_test JAR ok CLASSPATH_EXPECTED
 *        installed_test JAR fail TEXT
 *   ok:   a Java step echoes 42; the JVM's java.class.path is
 *         CLASSPATH_EXPECTED; one libfutoin_async and one libuv are mapped
 *         (the JVM's glue bound to this program's runtime by soname);
 *   fail: the Java step fails with InvalidRequest whose error_info holds
 *         TEXT.
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

/* The plug-in out of the jar, into a new temporary folder. */
static int extract(const char* jar, char* dir, size_t dirlen, char* file,
                   size_t filelen)
{
    char err[256];
    futoin_zip_entry e;
    int in = open(jar, O_RDONLY | O_CLOEXEC), out, rc;
    snprintf(dir, dirlen, "/tmp/futoin-installed-XXXXXX");
    if (in < 0 || !mkdtemp(dir)) {
        fprintf(stderr, "cannot open %s or make a folder\n", jar);
        return -1;
    }
    rc = futoin__zip_find_fd(in, FJ_PLUGIN_ENTRY, &e, err, sizeof(err));
    CHECK(rc == FUTOIN_ZIP_OK, "%s: %s", jar, err);
    snprintf(file, filelen, "%s/libfutoin_host_java.so", dir);
    out = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
    if (rc != FUTOIN_ZIP_OK || out < 0) {
        close(in);
        return -1;
    }
    rc = futoin__zip_copy_fd(in, &e, out, err, sizeof(err));
    CHECK(rc == FUTOIN_ZIP_OK, "extracting: %s", err);
    close(in);
    close(out);
    return rc == FUTOIN_ZIP_OK ? 0 : -1;
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
    char dir[64], file[128], which[4096];
    int ok;
    if (argc != 4 || (strcmp(argv[2], "ok") != 0 && strcmp(argv[2], "fail") != 0)) {
        fprintf(stderr, "usage: %s JAR ok CLASSPATH | JAR fail TEXT\n", argv[0]);
        return 2;
    }
    ok = strcmp(argv[2], "ok") == 0;
    if (extract(argv[1], dir, sizeof(dir), file, sizeof(file)) != 0) {
        return futoin_check_summary("polyglot-java-installed");
    }
    /* what the library's discovery will do by itself */
    setenv("FUTOIN_HOST_PATH", dir, 1);
    if (futoin_tool_new(&tool, NULL) != FUTOIN_OK) {
        return 2;
    }
    run("org.futoin.polyglot.Fragments", "echo", 1);
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
    } else {
        CHECK(strcmp(code, "InvalidRequest") == 0 && strstr(info, argv[3]) != NULL,
              "expected InvalidRequest with '%s', got '%s': %s", argv[3], code, info);
    }
    futoin_host_shutdown();
    CHECK(futoin_tool_free(tool) == FUTOIN_OK, "tool not freed");
    unlink(file);
    rmdir(dir);
    return futoin_check_summary("polyglot-java-installed");
}
