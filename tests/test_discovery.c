/* Finding a language's plug-in (futoin/sys/host.h, "Finding a language's
 * plug-in"): from each ecosystem's own settings, in the documented order,
 * only ever from an absolute path those settings name; a plug-in planted
 * in the current folder, behind a relative or empty entry, is never
 * loaded. The Java plug-in taken out of a jar into a checked private
 * cache. The error when nothing is found: what provides the plug-in and
 * what was searched. A C step's library: absolute or a bare soname.
 *
 * The plug-ins are tests/host/echo_host.c built under each language's
 * name (libfake_host_<lang>.so in FUTOIN_TEST_PLUGIN_DIR), copied into
 * fake trees in a temporary folder: no Python, Lua or Java is needed.
 * Every test runs in a process of its own (Criterion), with the settings
 * cleared first: a plug-in, once loaded, stays for the process. */
#include "common.h"

#include <futoin/sys/host.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PLUGINS FUTOIN_TEST_PLUGIN_DIR

static char tmp[64]; /* this test's folder; the current folder too */

static void discovery_setup(void)
{
    static const char* const settings[] = {
            "FUTOIN_HOST_PATH", "VIRTUAL_ENV", "PYTHONPATH", "LUA_CPATH",
            "LUA_CPATH_5_4",    "CLASSPATH",   "XDG_CACHE_HOME",
    };
    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); ++i) {
        unsetenv(settings[i]);
    }
    snprintf(tmp, sizeof(tmp), "/tmp/futoin-discovery-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    cr_assert_eq(chdir(tmp), 0);
    setenv("PATH", "/nonexistent", 1);
    /* the jar cache under this folder, never the user's */
    {
        char cache[PATH_MAX];
        snprintf(cache, sizeof(cache), "%s/cache", tmp);
        setenv("XDG_CACHE_HOME", cache, 1);
    }
    fx_setup();
}

static int rm_one(const char* path, const struct stat* st, int flag,
                  struct FTW* ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void discovery_teardown(void)
{
    fx_teardown();
    if (chdir("/") == 0 && tmp[0]) {
        nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
}

TestSuite(discovery, .init = discovery_setup, .fini = discovery_teardown);

/* ---- fake trees --------------------------------------------------------- */

/* `<tmp>/<rel>` */
static const char* at(const char* rel)
{
    static char buf[4][PATH_MAX];
    static int next;
    char* p = buf[next++ % 4];
    snprintf(p, PATH_MAX, "%s/%s", tmp, rel);
    return p;
}

static void mkdirs(const char* path)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s", path);
    for (char* s = p + 1; *s; ++s) {
        if (*s == '/') {
            *s = 0;
            mkdir(p, 0755);
            *s = '/';
        }
    }
    mkdir(p, 0755);
}

static void copy_file(const char* from, const char* to, mode_t mode)
{
    char dir[PATH_MAX], buf[65536];
    ssize_t n;
    int in, out;
    snprintf(dir, sizeof(dir), "%s", to);
    *strrchr(dir, '/') = 0;
    mkdirs(dir);
    in = open(from, O_RDONLY);
    cr_assert_geq(in, 0, "cannot open %s", from);
    out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
    cr_assert_geq(out, 0, "cannot create %s", to);
    while ((n = read(in, buf, sizeof(buf))) > 0) {
        cr_assert_eq(write(out, buf, (size_t)n), n);
    }
    close(in);
    close(out);
}

/* The fake plug-in of `lang` copied to `<tmp>/<rel>`. */
static void plant(const char* lang, const char* rel)
{
    char from[PATH_MAX];
    snprintf(from, sizeof(from), PLUGINS "/libfake_host_%s.so", lang);
    copy_file(from, at(rel), 0755);
}

static bool same_file(const char* a, const char* b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev
           && sa.st_ino == sb.st_ino;
}

static bool is_loaded(const char* path)
{
    void* dl = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (dl) {
        dlclose(dl);
    }
    return dl != NULL;
}

/* The file the host of `lang` was loaded from. */
static const char* host_file(const char* lang)
{
    const futoin_host_api* h = NULL;
    char err[2048];
    Dl_info info;
    int rc = futoin_host_find(lang, &h, err, sizeof(err));
    cr_assert_eq(rc, FUTOIN_OK, "%s: %s", lang, err);
    cr_assert_str_eq(h->language, lang);
    cr_assert(dladdr((const void*)h, &info) && info.dli_fname);
    return info.dli_fname;
}

static void assert_found_at(const char* lang, const char* rel)
{
    const char* got = host_file(lang);
    cr_assert(same_file(got, at(rel)), "%s loaded from %s, not %s", lang, got,
              at(rel));
}

/* The error of futoin_host_find() when nothing is found. */
static const char* not_found(const char* lang)
{
    static char err[2048];
    const futoin_host_api* h = NULL;
    int rc = futoin_host_find(lang, &h, err, sizeof(err));
    cr_assert_neq(rc, FUTOIN_OK, "%s found: %s", lang, h ? h->language : "?");
    return err;
}

/* `a` comes before `b` in `text`, both there. */
#define assert_before(text, a, b)                                              \
    do {                                                                       \
        const char* pa_ = strstr(text, a);                                     \
        const char* pb_ = strstr(text, b);                                     \
        cr_assert(pa_ && pb_ && pa_ < pb_, "'%s' not before '%s' in: %s", a,   \
                  b, text);                                                    \
    } while (0)

/* ---- python ------------------------------------------------------------- */

#define PY_HOST "futoin_async/futoin-hosts/libfutoin_host_python.so"

Test(discovery, python_from_the_activated_venv)
{
    plant("python", "venv/lib/python3.11/site-packages/" PY_HOST);
    setenv("VIRTUAL_ENV", at("venv"), 1);
    assert_found_at("python", "venv/lib/python3.11/site-packages/" PY_HOST);
}

Test(discovery, python_from_pythonpath)
{
    plant("python", "pp/" PY_HOST);
    setenv("PYTHONPATH", at("pp"), 1);
    assert_found_at("python", "pp/" PY_HOST);
}

/* a python3 on PATH: the site-packages of the prefix it is the bin/ of
 * (a venv used without activating it) */
Test(discovery, python_from_the_prefix_of_a_python3_on_path)
{
    char path[PATH_MAX * 2];
    plant("python", "prefix/lib/python3.12/site-packages/" PY_HOST);
    copy_file("/bin/true", at("prefix/bin/python3"), 0755);
    mkdirs(at("empty/bin"));
    snprintf(path, sizeof(path), "/nonexistent:%s:%s", at("empty/bin"),
             at("prefix/bin"));
    setenv("PATH", path, 1);
    assert_found_at("python", "prefix/lib/python3.12/site-packages/" PY_HOST);
}

/* VIRTUAL_ENV, then PYTHONPATH, then PATH, then the system's folders;
 * FUTOIN_HOST_PATH before all of them */
Test(discovery, python_settings_in_order)
{
    char path[PATH_MAX];
    const char* err;
    mkdirs(at("venv/lib/python3.11/site-packages"));
    mkdirs(at("prefix/lib/python3.11"));
    copy_file("/bin/true", at("prefix/bin/python3"), 0755);
    setenv("VIRTUAL_ENV", at("venv"), 1);
    setenv("PYTHONPATH", at("pp"), 1);
    snprintf(path, sizeof(path), "%s", at("prefix/bin"));
    setenv("PATH", path, 1);
    setenv("FUTOIN_HOST_PATH", at("hosts"), 1);
    err = not_found("python");
    assert_before(err, "FUTOIN_HOST_PATH: ", "VIRTUAL_ENV: ");
    assert_before(err, "VIRTUAL_ENV: ", "PYTHONPATH: ");
    assert_before(err, "PYTHONPATH: ", "; PATH: ");
    assert_before(err, "; PATH: ", "the system's Python: /usr/lib/python3/dist-packages/" PY_HOST);
    cr_assert(strstr(err, at("venv/lib/python3.11/site-packages/" PY_HOST)), "%s", err);
    cr_assert(strstr(err, at("prefix/lib/python3.11/site-packages/" PY_HOST)), "%s", err);

    /* the first one that holds a plug-in wins */
    plant("python", "pp/" PY_HOST);
    plant("python", "venv/lib/python3.11/site-packages/" PY_HOST);
    assert_found_at("python", "venv/lib/python3.11/site-packages/" PY_HOST);
}

Test(discovery, futoin_host_path_comes_first)
{
    plant("python", "hosts/libfutoin_host_python.so");
    plant("python", "venv/lib/python3.11/site-packages/" PY_HOST);
    setenv("VIRTUAL_ENV", at("venv"), 1);
    setenv("FUTOIN_HOST_PATH", at("hosts"), 1);
    assert_found_at("python", "hosts/libfutoin_host_python.so");
}

/* ---- lua ---------------------------------------------------------------- */

#define LUA_HOST "futoin_async/futoin-hosts/libfutoin_host_lua.so"

Test(discovery, lua_from_lua_cpath_5_4_before_lua_cpath)
{
    char t[PATH_MAX];
    plant("lua", "a/" LUA_HOST);
    plant("lua", "b/" LUA_HOST);
    snprintf(t, sizeof(t), "%s/?.so", at("a"));
    setenv("LUA_CPATH_5_4", t, 1);
    snprintf(t, sizeof(t), "%s/?.so", at("b"));
    setenv("LUA_CPATH", t, 1);
    assert_found_at("lua", "a/" LUA_HOST);
}

/* a rock tree as `luarocks path` names it: <tree>/lib/lua/5.4/?.so */
Test(discovery, lua_from_a_rock_tree_on_lua_cpath)
{
    char t[PATH_MAX * 2];
    plant("lua", "tree/lib/lua/5.4/" LUA_HOST);
    snprintf(t, sizeof(t), "%s/nothing/?.so;%s/lib/lua/5.4/?.so;;", tmp,
             at("tree"));
    setenv("LUA_CPATH", t, 1);
    assert_found_at("lua", "tree/lib/lua/5.4/" LUA_HOST);
}

/* ";;" is Lua's default cpath, and so is no setting at all; templates
 * without "?" name no plug-in */
Test(discovery, lua_default_cpath)
{
    char t[PATH_MAX];
    const char* err;
    snprintf(t, sizeof(t), "%s/first/?.so;;%s/last/?.so", tmp, tmp);
    setenv("LUA_CPATH", t, 1);
    err = not_found("lua");
    assert_before(err, at("first/" LUA_HOST), "/usr/local/lib/lua/5.4/" LUA_HOST);
    assert_before(err, "/usr/local/lib/lua/5.4/" LUA_HOST, "/usr/lib/lua/5.4/" LUA_HOST);
    assert_before(err, "/usr/lib/lua/5.4/" LUA_HOST, at("last/" LUA_HOST));
    cr_assert(strstr(err, "LUA_CPATH './?.so'"), "%s", err);
    cr_assert_null(strstr(err, "loadall"), "%s", err);
    unsetenv("LUA_CPATH");
    err = not_found("lua");
    cr_assert(strstr(err, "Lua's default cpath: /usr/local/lib/lua/5.4/" LUA_HOST), "%s", err);
}

/* ---- java --------------------------------------------------------------- */

#define CACHE "cache/futoin_async"

/* The one plug-in file in the cache, as `<tmp>/...`. */
static const char* cached_file(void)
{
    static char name[PATH_MAX];
    int n = 0;
    DIR* d = opendir(at(CACHE));
    struct dirent* de;
    cr_assert_not_null(d, "no cache folder");
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] != '.') {
            snprintf(name, sizeof(name), "%s/%s", at(CACHE), de->d_name);
            ++n;
        }
    }
    closedir(d);
    cr_assert_eq(n, 1, "%d files in the cache", n);
    return name;
}

static bool same_bytes(const char* a, const char* b)
{
    FILE* fa = fopen(a, "rb");
    FILE* fb = fopen(b, "rb");
    bool same = fa && fb;
    while (same) {
        int ca = getc(fa), cb = getc(fb);
        same = ca == cb;
        if (ca == EOF) {
            break;
        }
    }
    if (fa) {
        fclose(fa);
    }
    if (fb) {
        fclose(fb);
    }
    return same;
}

Test(discovery, java_from_a_jar_on_classpath)
{
    char cp[PATH_MAX * 3];
    struct stat st;
    const char* file;
    copy_file(PLUGINS "/fake_other.jar", at("lib/other.jar"), 0644);
    copy_file(PLUGINS "/fake_stored.jar", at("lib/futoin-async.jar"), 0644);
    snprintf(cp, sizeof(cp), "%s:%s:%s", at("nothing.jar"), at("lib/other.jar"),
             at("lib/futoin-async.jar"));
    setenv("CLASSPATH", cp, 1);
    file = host_file("java");
    cr_assert_eq(strncmp(file, at(CACHE "/libfutoin_host_java-"), strlen(at(CACHE "/libfutoin_host_java-"))), 0,
                 "loaded from %s", file);
    cr_assert(same_file(file, cached_file()));
    cr_assert(same_bytes(file, PLUGINS "/libfake_host_java.so"));
    cr_assert_eq(stat(at(CACHE), &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0700, "cache mode %o", st.st_mode & 07777);
    cr_assert_eq(st.st_uid, geteuid());
}

Test(discovery, java_from_the_jars_of_a_classpath_folder)
{
    char cp[PATH_MAX];
    const char* file;
    copy_file(PLUGINS "/fake_other.jar", at("lib/a.jar"), 0644);
    copy_file(PLUGINS "/fake_stored.jar", at("lib/futoin-async-0.3.0.jar"), 0644);
    snprintf(cp, sizeof(cp), "%s/*", at("lib"));
    setenv("CLASSPATH", cp, 1);
    file = host_file("java");
    cr_assert(same_file(file, cached_file()), "loaded from %s", file);
}

Test(discovery, java_from_a_class_folder)
{
    plant("java", "classes/" FAKE_JAVA_ENTRY);
    setenv("CLASSPATH", at("classes"), 1);
    assert_found_at("java", "classes/" FAKE_JAVA_ENTRY);
}

/* In a child process: find the Java host (taking it out of the jar into
 * the cache); exit 0 if found. */
static void find_java_in_a_child(void)
{
    pid_t pid = fork();
    int status = -1;
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        const futoin_host_api* h;
        _exit(futoin_host_find("java", &h, NULL, 0) == FUTOIN_OK ? 0 : 1);
    }
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
}

/* a cached file whose bytes, size or kind differ from the jar's entry is
 * never used: it is written again */
Test(discovery, a_tampered_cache_file_is_replaced)
{
    const char* file;
    char name[PATH_MAX], junk[PATH_MAX];
    struct stat st;
    int fd;
    copy_file(PLUGINS "/fake_stored.jar", at("futoin-async.jar"), 0644);
    setenv("CLASSPATH", at("futoin-async.jar"), 1);
    find_java_in_a_child();
    snprintf(name, sizeof(name), "%s", cached_file());
    cr_assert(same_bytes(name, PLUGINS "/libfake_host_java.so"));

    /* same size, other bytes */
    fd = open(name, O_WRONLY);
    cr_assert_geq(fd, 0);
    cr_assert_eq(pwrite(fd, "\x7f" "EVIL", 5, 64), 5);
    close(fd);
    cr_assert_not(same_bytes(name, PLUGINS "/libfake_host_java.so"));
    find_java_in_a_child();
    cr_assert(same_bytes(name, PLUGINS "/libfake_host_java.so"), "not replaced");

    /* cut short */
    cr_assert_eq(truncate(name, 100), 0);
    find_java_in_a_child();
    cr_assert(same_bytes(name, PLUGINS "/libfake_host_java.so"), "not replaced");

    /* a link to another file */
    snprintf(junk, sizeof(junk), "%s", at("junk.so"));
    copy_file(PLUGINS "/libfake_host_lua.so", junk, 0755);
    cr_assert_eq(unlink(name), 0);
    cr_assert_eq(symlink(junk, name), 0);
    file = host_file("java");
    cr_assert_eq(lstat(name, &st), 0);
    cr_assert(S_ISREG(st.st_mode), "the link was kept");
    cr_assert(same_file(file, name));
    cr_assert(same_bytes(name, PLUGINS "/libfake_host_java.so"));
    cr_assert_not(is_loaded(junk));
}

static void expect_cache_refused(const char* why)
{
    const char* err;
    setenv("CLASSPATH", at("futoin-async.jar"), 1);
    err = not_found("java");
    cr_assert(strstr(err, why), "'%s' not in: %s", why, err);
    cr_assert(strstr(err, at(CACHE)), "%s", err);
}

/* a cache folder others may only read is made private and used */
Test(discovery, a_readable_cache_folder_is_made_private)
{
    struct stat st;
    copy_file(PLUGINS "/fake_stored.jar", at("futoin-async.jar"), 0644);
    mkdirs(at(CACHE));
    cr_assert_eq(chmod(at(CACHE), 0755), 0);
    setenv("CLASSPATH", at("futoin-async.jar"), 1);
    cr_assert(same_bytes(host_file("java"), PLUGINS "/libfake_host_java.so"));
    cr_assert_eq(stat(at(CACHE), &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0700, "cache mode %o", st.st_mode & 07777);
}

Test(discovery, a_cache_folder_others_may_write_is_refused)
{
    copy_file(PLUGINS "/fake_stored.jar", at("futoin-async.jar"), 0644);
    mkdirs(at(CACHE));
    cr_assert_eq(chmod(at(CACHE), 0777), 0);
    expect_cache_refused("may be written by group or others (mode 0777): refused");
    cr_assert_eq(chmod(at(CACHE), 0770), 0);
    expect_cache_refused("(mode 0770): refused");
    cr_assert_eq(rmdir(at(CACHE)), 0, "something was written into it");
}

Test(discovery, a_cache_folder_of_another_user_is_refused)
{
    if (geteuid() != 0) {
        cr_skip_test("needs root to give a folder to another user");
    }
    copy_file(PLUGINS "/fake_stored.jar", at("futoin-async.jar"), 0644);
    mkdirs(at(CACHE));
    cr_assert_eq(chmod(at(CACHE), 0700), 0);
    cr_assert_eq(chown(at(CACHE), 65534, 65534), 0);
    expect_cache_refused("is not this user's own (owner uid 65534): refused");
}

Test(discovery, a_cache_folder_that_is_a_link_is_refused)
{
    copy_file(PLUGINS "/fake_stored.jar", at("futoin-async.jar"), 0644);
    mkdirs(at("elsewhere"));
    cr_assert_eq(chmod(at("elsewhere"), 0700), 0);
    mkdirs(at("cache"));
    cr_assert_eq(symlink(at("elsewhere"), at(CACHE)), 0);
    expect_cache_refused("cannot open the cache folder");
}

Test(discovery, a_compressed_plugin_entry_is_refused)
{
    const char* err;
    copy_file(PLUGINS "/fake_deflated.jar", at("futoin-async.jar"), 0644);
    setenv("CLASSPATH", at("futoin-async.jar"), 1);
    err = not_found("java");
    cr_assert(strstr(err, "is compressed (method 8), not stored"), "%s", err);
    cr_assert(strstr(err, "must be stored uncompressed"), "%s", err);
    cr_assert(strstr(err, at("futoin-async.jar")), "%s", err);
    cr_assert(access(at(CACHE), F_OK) != 0 || rmdir(at(CACHE)) == 0,
              "something was written to the cache");
}

/* ---- what is never followed --------------------------------------------- */

/* Plug-ins planted in the current folder and behind relative or empty
 * entries: none is loaded; the error (when nothing else is found on this
 * machine) names what was left out. */
static void assert_left_out(const char* lang, const char* const* planted,
                            const char* const* named)
{
    char err[2048];
    const futoin_host_api* h = NULL;
    int rc = futoin_host_find(lang, &h, err, sizeof(err));
    for (size_t i = 0; planted[i]; ++i) {
        cr_assert_not(is_loaded(at(planted[i])), "%s was loaded", planted[i]);
    }
    if (rc == FUTOIN_OK) {
        Dl_info info;
        cr_assert(dladdr((const void*)h, &info));
        cr_assert_neq(strncmp(info.dli_fname, tmp, strlen(tmp)), 0,
                      "loaded from %s", info.dli_fname);
        return;
    }
    for (size_t i = 0; named[i]; ++i) {
        cr_assert(strstr(err, named[i]), "'%s' not in: %s", named[i], err);
    }
}

Test(discovery, relative_and_empty_futoin_host_path_entries_are_not_followed)
{
    static const char* const planted[] = {
            "libfutoin_host_python.so", "rel/libfutoin_host_python.so", NULL};
    static const char* const named[] = {
            "Left out (not absolute paths): FUTOIN_HOST_PATH (an empty entry), "
            "FUTOIN_HOST_PATH 'rel', FUTOIN_HOST_PATH '.'",
            NULL};
    plant("python", planted[0]);
    plant("python", planted[1]);
    setenv("FUTOIN_HOST_PATH", ":rel:.", 1);
    assert_left_out("python", planted, named);
}

Test(discovery, relative_lua_cpath_templates_are_not_followed)
{
    static const char* const planted[] = {
            LUA_HOST, "rel/" LUA_HOST, NULL};
    static const char* const named[] = {
            "LUA_CPATH './?.so', LUA_CPATH 'rel/?.so'", NULL};
    plant("lua", planted[0]);
    plant("lua", planted[1]);
    setenv("LUA_CPATH", "./?.so;rel/?.so;?.so", 1);
    assert_left_out("lua", planted, named);
    /* Lua's own default has "./?.so" too */
    unsetenv("LUA_CPATH");
    {
        static const char* const dflt[] = {"Lua's default cpath './?.so'", NULL};
        assert_left_out("lua", planted, dflt);
    }
}

Test(discovery, relative_and_empty_classpath_entries_are_not_followed)
{
    static const char* const planted[] = {FAKE_JAVA_ENTRY, NULL};
    static const char* const named[] = {
            "CLASSPATH 'lib/futoin-async.jar', CLASSPATH (an empty entry), "
            "CLASSPATH '.', CLASSPATH 'lib/*'",
            NULL};
    copy_file(PLUGINS "/fake_stored.jar", at("lib/futoin-async.jar"), 0644);
    plant("java", planted[0]);
    setenv("CLASSPATH", "lib/futoin-async.jar::.:lib/*", 1);
    assert_left_out("java", planted, named);
    cr_assert_neq(access(at("cache"), F_OK), 0, "a jar was opened");
}

/* PATH: an empty element is the current folder; PYTHONPATH and
 * VIRTUAL_ENV: relative values */
Test(discovery, relative_python_settings_are_not_followed)
{
    static const char* const planted[] = {
            "lib/python3.11/site-packages/" PY_HOST, "bin/" PY_HOST,
            "bin/venv/lib/python3.11/site-packages/" PY_HOST, NULL};
    static const char* const named[] = {
            "VIRTUAL_ENV 'venv', PYTHONPATH (an empty entry), PYTHONPATH '.', "
            "PATH (an empty entry), PATH '.'",
            NULL};
    for (size_t i = 0; planted[i]; ++i) {
        plant("python", planted[i]);
    }
    copy_file("/bin/true", at("bin/python3"), 0755);
    cr_assert_eq(chdir(at("bin")), 0);
    setenv("VIRTUAL_ENV", "venv", 1);
    setenv("PYTHONPATH", ":.", 1);
    setenv("PATH", ":.", 1);
    assert_left_out("python", planted, named);
}

/* ---- the error when nothing is found ------------------------------------ */

/* The error handler of a root: its code and error_info. */
static char info[4096];
static void keep_info(FutoInAsyncSteps* as, void* d, const char* code)
{
    const char* i = API(as)->stateVariable(as, NULL, "error_info", NULL, NULL);
    (void)d;
    snprintf(info, sizeof(info), "%s: %s", code, i ? i : "");
}

/* Runs a root with only the step futoin_host_add() added: the error_info
 * of its error, in `info`. */
static int add_and_run(const char* lang, const char* module, const char* function)
{
    FutoInAsyncSteps* as = futoin_root_new(T);
    int rc = futoin_host_add(as, lang, module, function);
    info[0] = 0;
    API(as)->execute(as, NULL, keep_info);
    run();
    API(as)->free(as);
    return rc;
}

static void expect_step_error(const char* lang, const char* module,
                              const char* function, const char* const* parts)
{
    cr_assert_eq(add_and_run(lang, module, function), FUTOIN_EINVAL);
    cr_assert_eq(strncmp(info, "InvalidRequest: ", 16), 0, "%s", info);
    for (size_t i = 0; parts[i]; ++i) {
        cr_assert(strstr(info, parts[i]), "'%s' not in: %s", parts[i], info);
    }
}

Test(discovery, the_error_says_what_provides_the_plugin)
{
    static const char* const lua[] = {
            "adding pricing.apply: no host for language 'lua'",
            "luarocks --lua-version=5.4 install futoin_async",
            "futoin_async-" FUTOIN_VERSION_STRING "-1.*.rock",
            "eval \"$(luarocks --lua-version=5.4 path)\"", "Searched: ", NULL};
    static const char* const python[] = {
            "adding order.parse: no host for language 'python'",
            "pip install futoin_async", "futoin_async-" FUTOIN_VERSION_STRING "-*.whl",
            "activate it", "Searched: ", "VIRTUAL_ENV: (not set: no venv is active)", NULL};
    static const char* const java[] = {
            "adding demo.Totals.compute: no host for language 'java'",
            "put futoin-async.jar on CLASSPATH",
            "futoin-async-" FUTOIN_VERSION_STRING ".jar", "Searched: ",
            "CLASSPATH: (not set)", NULL};
    static const char* const cobol[] = {
            "adding payroll.run: no host for language 'cobol'",
            "no package of futoin_async provides it",
            "FUTOIN_HOST_PATH", "Searched: ", NULL};
    expect_step_error("lua", "pricing", "apply", lua);
    expect_step_error("python", "order", "parse", python);
    expect_step_error("java", "demo.Totals", "compute", java);
    expect_step_error("cobol", "payroll", "run", cobol);
}

/* a long setting cannot push the advice out: the list of places is cut */
Test(discovery, the_error_is_bounded)
{
    static char pp[64 * 1024];
    size_t n = 0;
    const char* err;
    for (int i = 0; i < 400; ++i) {
        n += (size_t)snprintf(pp + n, sizeof(pp) - n, "%s/a-long-folder-name-%03d:",
                              tmp, i);
    }
    setenv("PYTHONPATH", pp, 1);
    err = not_found("python");
    cr_assert_lt(strlen(err), 2048);
    cr_assert(strstr(err, "pip install futoin_async"), "%s", err);
    cr_assert(strstr(err, " more)"), "%s", err);
}

/* A package that takes the library out into a temporary folder and deletes
 * the folder once it is loaded (the Java jar does): the error names no
 * place in that folder. A second copy of the library, loaded from such a
 * folder here, answers for itself. */
Test(discovery, the_folder_of_a_deleted_core_is_not_named)
{
    Dl_info dli;
    void* dl;
    char core[PATH_MAX], err[2048];
    int (*find)(const char*, const futoin_host_api**, char*, size_t);
    const futoin_host_api* h = NULL;
    cr_assert(dladdr((const void*)&futoin_host_find, &dli) && dli.dli_fname);
    snprintf(core, sizeof(core), "%s", at("gone/libfutoin_async.so.0"));
    copy_file(dli.dli_fname, core, 0755);
    dl = dlopen(core, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(dl, "%s", dlerror());
    *(void**)&find = dlsym(dl, "futoin_host_find");
    cr_assert_not_null(find);
    cr_assert_eq(unlink(core), 0);
    cr_assert_eq(rmdir(at("gone")), 0);
    cr_assert_neq(find("cobol", &h, err, sizeof(err)), FUTOIN_OK);
    cr_assert_null(strstr(err, at("gone")), "names the deleted folder: %s", err);
    cr_assert(strstr(err, "Searched: a system install: "), "%s", err);
}

/* ---- C steps: a library by absolute path or bare soname ----------------- */

static void c_step_error(const char* module, const char* part)
{
    cr_assert_eq(add_and_run("c", module, "named_step"), FUTOIN_EINVAL);
    cr_assert(strstr(info, part), "'%s' not in: %s", part, info);
}

Test(discovery, a_c_library_by_a_relative_path_is_refused)
{
    copy_file(PLUGINS "/libfutoin_host_echo.so", at("libplanted.so"), 0755);
    copy_file(PLUGINS "/libfutoin_host_echo.so", at("sub/libplanted.so"), 0755);
    c_step_error("./libplanted.so", "c: module './libplanted.so' is a relative path");
    c_step_error("sub/libplanted.so", "c: module 'sub/libplanted.so' is a relative path");
    cr_assert_not(is_loaded(at("libplanted.so")));
    cr_assert_not(is_loaded(at("sub/libplanted.so")));
    /* the same library by its absolute path is a step */
    cr_assert_eq(add_and_run("c", at("libplanted.so"), "named_step"), FUTOIN_OK);
    cr_assert(strstr(info, "NamedError: named step"), "%s", info);
}
