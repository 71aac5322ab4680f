/*
 * Finding the CPython of an installed wheel, for the plug-in (py_locate.h).
 *
 * The plug-in is <site>/futoin_async/futoin-hosts/libfutoin_host_python.so
 * of the wheel built for CPython X.Y. In order, the first hit wins:
 *
 *  1. the venv the plug-in is installed in (<venv>/lib/pythonX.Y/
 *     site-packages, with <venv>/pyvenv.cfg), else the activated one
 *     ($VIRTUAL_ENV, if its pyvenv.cfg says version X.Y): libpython is the
 *     base installation's (pyvenv.cfg `home` is its bin folder:
 *     <home>/../lib/libpythonX.Y.so.1.0), the program is <venv>/bin/pythonX.Y;
 *  2. the installation the plug-in is installed in (<prefix>/lib/pythonX.Y/
 *     site-packages): <prefix>/lib/libpythonX.Y.so.1.0, <prefix>/bin/pythonX.Y;
 *  3. each absolute PATH folder holding pythonX.Y (resolved): ../lib/ of it;
 *  4. the soname itself, in the system's search path (Debian's libpython3.11
 *     in /usr/lib/x86_64-linux-gnu).
 *
 * Only absolute paths named by these are used (never the current folder).
 */
#define _GNU_SOURCE
#include "py_locate.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_file(const char* p)
{
    return access(p, R_OK) == 0;
}

static void note(fpy_located* out, const char* what)
{
    size_t n = strlen(out->searched);
    snprintf(out->searched + n, sizeof(out->searched) - n, "%s%s", n ? ", " : "", what);
}

/* Drop the last `n` components of `path` (in place); 0 if too few. */
static int up(char* path, int n)
{
    while (n-- > 0) {
        char* slash = strrchr(path, '/');
        if (!slash || slash == path) {
            return 0;
        }
        *slash = 0;
    }
    return 1;
}

/* The value of `key` in <venv>/pyvenv.cfg ("key = value"), or 0. */
static int venv_cfg(const char* venv, const char* key, char* val, size_t len)
{
    char path[PATH_MAX + 16], line[PATH_MAX + 64];
    FILE* f;
    int found = 0;
    snprintf(path, sizeof(path), "%s/pyvenv.cfg", venv);
    if (!(f = fopen(path, "r"))) {
        return 0;
    }
    while (!found && fgets(line, sizeof(line), f)) {
        char *k = line, *eq = strchr(line, '='), *v, *end;
        if (!eq) {
            continue;
        }
        *eq = 0;
        while (*k == ' ' || *k == '\t') {
            ++k;
        }
        for (end = eq; end > k && (end[-1] == ' ' || end[-1] == '\t'); --end) {
        }
        *end = 0;
        if (strcmp(k, key) != 0) {
            continue;
        }
        for (v = eq + 1; *v == ' ' || *v == '\t'; ++v) {
        }
        v[strcspn(v, "\r\n")] = 0;
        snprintf(val, len, "%s", v);
        found = 1;
    }
    fclose(f);
    return found;
}

/* libpython and program of venv `venv` for X.Y: 1 if its libpython exists. */
static int from_venv(fpy_located* out, const char* venv, int major, int minor,
                     const char* soname)
{
    char home[PATH_MAX], ver[64], want[16], lib[PATH_MAX + 64], prog[PATH_MAX + 32];
    snprintf(want, sizeof(want), "%d.%d", major, minor);
    if (venv_cfg(venv, "version", ver, sizeof(ver)) /* 3.12.1, or version_info */
        || venv_cfg(venv, "version_info", ver, sizeof(ver))) {
        size_t n = strlen(want);
        if (strncmp(ver, want, n) != 0 || (ver[n] && ver[n] != '.')) {
            return 0; /* a venv of another CPython */
        }
    }
    if (!venv_cfg(venv, "home", home, sizeof(home)) || home[0] != '/') {
        return 0;
    }
    snprintf(lib, sizeof(lib), "%s/../lib/%s", home, soname);
    note(out, lib);
    snprintf(prog, sizeof(prog), "%s/bin/python%d.%d", venv, major, minor);
    if (!is_file(prog)) {
        snprintf(prog, sizeof(prog), "%s/bin/python3", venv);
    }
    if (is_file(prog)) {
        snprintf(out->program, sizeof(out->program), "%s", prog);
    }
    if (is_file(lib) && realpath(lib, out->libpython)) {
        return 1;
    }
    /* a base installation whose libpython is in the system's path
     * (Debian's /usr/bin/python3): the venv still names the program */
    return 0;
}

void fpy_locate(fpy_located* out, int major, int minor, const char* soname,
                const void* self)
{
    Dl_info info;
    char path[PATH_MAX], site[PATH_MAX], tail[64];
    const char* env;
    memset(out, 0, sizeof(*out));
    snprintf(tail, sizeof(tail), "/lib/python%d.%d/site-packages", major, minor);

    /* where the plug-in is: <site>/futoin_async/futoin-hosts/<file> */
    if (dladdr(self, &info) && info.dli_fname && realpath(info.dli_fname, path)
        && up(path, 3)) {
        char probe[PATH_MAX + 32];
        snprintf(probe, sizeof(probe), "%s/futoin_async/__init__.py", path);
        if (is_file(probe)) {
            snprintf(out->package_parent, sizeof(out->package_parent), "%s", path);
        }
    }
    snprintf(site, sizeof(site), "%s", out->package_parent);
    /* 1. its venv, or the activated one */
    if (site[0] && strlen(site) > strlen(tail)
        && strcmp(site + strlen(site) - strlen(tail), tail) == 0) {
        char root[PATH_MAX], cfg[PATH_MAX + 16];
        snprintf(root, sizeof(root), "%s", site);
        up(root, 3);
        snprintf(cfg, sizeof(cfg), "%s/pyvenv.cfg", root);
        if (is_file(cfg)) {
            if (from_venv(out, root, major, minor, soname)) {
                return;
            }
        } else {
            /* 2. the installation it is in */
            char lib[PATH_MAX + 64], prog[PATH_MAX + 32];
            snprintf(lib, sizeof(lib), "%s/lib/%s", root, soname);
            note(out, lib);
            snprintf(prog, sizeof(prog), "%s/bin/python%d.%d", root, major, minor);
            if (is_file(prog)) {
                snprintf(out->program, sizeof(out->program), "%s", prog);
            }
            if (is_file(lib) && realpath(lib, out->libpython)) {
                return;
            }
        }
    }
    env = getenv("VIRTUAL_ENV");
    if (!out->program[0] && env && env[0] == '/'
        && from_venv(out, env, major, minor, soname)) {
        return;
    }
    /* 3. PATH's pythonX.Y */
    env = getenv("PATH");
    if (env) {
        char* copy = strdup(env);
        char* save = NULL;
        for (char* d = copy ? strtok_r(copy, ":", &save) : NULL; d;
             d = strtok_r(NULL, ":", &save)) {
            char exe[PATH_MAX + 32], real[PATH_MAX], lib[PATH_MAX + 64];
            if (d[0] != '/') {
                continue; /* never a relative entry */
            }
            snprintf(exe, sizeof(exe), "%s/python%d.%d", d, major, minor);
            if (!is_file(exe) || !realpath(exe, real) || !up(real, 2)) {
                continue;
            }
            snprintf(lib, sizeof(lib), "%s/lib/%s", real, soname);
            note(out, lib);
            if (is_file(lib) && realpath(lib, out->libpython)) {
                break;
            }
        }
        free(copy);
        if (out->libpython[0]) {
            return;
        }
    }
    /* 4. the system's */
    note(out, "the system's library path");
    snprintf(out->libpython, sizeof(out->libpython), "%s", soname);
}
