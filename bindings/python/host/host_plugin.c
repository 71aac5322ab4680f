/*
 * libfutoin_host_python.so: the language host plug-in of Python
 * (futoin/sys/host.h), for programs written in another language.
 *
 * A thin bootstrapper that does NOT link libpython (a plug-in that did
 * would drag a second interpreter's worth of symbols into processes that
 * already run one, and could not be loaded where python3 itself is the
 * program). start():
 *
 *  - if CPython already runs in the process (Py_IsInitialized found with
 *    dlsym(RTLD_DEFAULT) and true), attach to it;
 *  - else dlopen() the libpython of the CPython the wheel was built for,
 *    found from where the plug-in is installed (its venv's base Python, or
 *    its installation), VIRTUAL_ENV, PATH or the system's search path
 *    (py_locate.c; FUTOIN_LIBPYTHON first, for development), with
 *    RTLD_GLOBAL, so that extension modules imported later
 *    (futoin_async._core itself, which like every Debian extension
 *    module does not link libpython) find its symbols, and start it as
 *    the venv's (or installation's) python, so that site.py adds that
 *    venv's site-packages, as Py_InitializeEx(0) does: no signal handlers
 *    (the host program owns them; a JVM in the process needs SIGSEGV for
 *    itself), but through
 *    Py_InitializeFromConfig(), which returns why CPython cannot start (a
 *    broken PYTHONHOME) where Py_InitializeEx() would exit the process:
 *    start() then fails (InvalidRequest naming why), now and for good,
 *    and the host program and its other languages go on;
 *
 * then imports futoin_async (the package this plug-in ships in is added
 * to sys.path when it is not importable otherwise) -- whose _core binds
 * to the libfutoin_async.so.0 (and libuv.so.1) already mapped, by soname --
 * and forwards to the
 * host table its _core implements (py_host_export.h). _core registers
 * that table too when it is imported; the library keeps the plug-in's,
 * which is the same code.
 *
 * The GIL: after starting the interpreter the loop thread releases it;
 * every callback of a Python step takes it (PyGILState_Ensure over the
 * thread state _core keeps for the loop thread) and gives it back, so
 * Python threads run whenever no Python step does.
 *
 * The last stop() flushes sys.stdout/sys.stderr. The interpreter is not
 * finalised: extension modules cannot be initialised twice in a process,
 * so a later start() attaches to it again.
 */
/* Python.h for the layout of PyConfig and PyStatus only (and first, as
 * it wants): the plug-in links no libpython, it calls what it needs
 * through dlsym() and checks that the loaded libpython is the version it
 * was built for before it hands it a PyConfig. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "py_host_export.h"
#include "py_locate.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the plug-in is built with hidden visibility: these two are its API */
#define PLUGIN_EXPORT __attribute__((visibility("default")))

#ifndef FUTOIN_LIBPYTHON
#define FUTOIN_LIBPYTHON "libpython3.11.so.1.0"
#endif

PLUGIN_EXPORT int futoin_host_get(uint32_t version, const futoin_host_api** out);
PLUGIN_EXPORT int python_host_counters(int* starts, int* stops, int* live);

/* The few CPython functions the bootstrapper needs, by dlsym(). */
typedef struct py_fns
{
    int (*IsInitialized)(void);
    int (*GILState_Ensure)(void);
    void (*GILState_Release)(int);
    void* (*Eval_SaveThread)(void);
    void* (*Import_ImportModule)(const char*);
    void* (*Object_GetAttrString)(void*, const char*);
    void* (*Capsule_GetPointer)(void*, const char*);
    void (*DecRef)(void*);
    void (*Err_Fetch)(void**, void**, void**);
    void (*Err_NormalizeException)(void**, void**, void**);
    void* (*Object_Str)(void*);
    const char* (*Unicode_AsUTF8)(void*);
    void (*Err_Clear)(void);
    int (*Run_SimpleString)(const char*);
} py_fns;

/* Starting CPython without letting it end the process: Py_InitializeEx()
 * calls exit(1) when the interpreter cannot start (a broken PYTHONHOME, a
 * missing standard library); Py_InitializeFromConfig() returns why. The
 * config is the one Py_InitializeEx() uses (the "compat" config: the
 * PYTHON* variables apply, no locale coercion), without signal handlers. */
typedef struct py_init_fns
{
    const unsigned long* Version;
    void (*Config_Init)(PyConfig*);
    PyStatus (*Config_SetBytesString)(PyConfig*, wchar_t**, const char*);
    PyStatus (*InitializeFromConfig)(const PyConfig*);
    void (*Config_Clear)(PyConfig*);
    int (*Status_Exception)(PyStatus);
} py_init_fns;

static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static py_fns py;
static const fpy_host_export* core; /* _core's table, once imported */
static int started;                 /* start()s not yet stopped */
static char start_failed[768];      /* why CPython could not start: for
                                       good (it cannot be tried again) */

static int load_fns(void* lib, char* err, size_t errlen)
{
    static const struct
    {
        const char* name;
        size_t off;
    } names[] = {
#define F(n, f) {n, offsetof(py_fns, f)}
            F("Py_IsInitialized", IsInitialized),
            F("PyGILState_Ensure", GILState_Ensure),
            F("PyGILState_Release", GILState_Release),
            F("PyEval_SaveThread", Eval_SaveThread),
            F("PyImport_ImportModule", Import_ImportModule),
            F("PyObject_GetAttrString", Object_GetAttrString),
            F("PyCapsule_GetPointer", Capsule_GetPointer),
            F("Py_DecRef", DecRef),
            F("PyErr_Fetch", Err_Fetch),
            F("PyErr_NormalizeException", Err_NormalizeException),
            F("PyObject_Str", Object_Str),
            F("PyUnicode_AsUTF8", Unicode_AsUTF8),
            F("PyErr_Clear", Err_Clear),
            F("PyRun_SimpleString", Run_SimpleString),
#undef F
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
        void* p = dlsym(lib, names[i].name);
        if (!p) {
            snprintf(err, errlen,
                     "python: the loaded libpython has no %s (not CPython 3?)",
                     names[i].name);
            return FUTOIN_EINVAL;
        }
        memcpy((char*)&py + names[i].off, &p, sizeof(p));
    }
    return FUTOIN_OK;
}

static int load_init_fns(void* lib, py_init_fns* f, char* err, size_t errlen)
{
    void* p;
    f->Version = dlsym(lib, "Py_Version");
    if (!f->Version) {
        snprintf(err, errlen, "python: the loaded libpython is older than "
                 "CPython 3.11 (this plug-in is built for %d.%d)",
                 PY_MAJOR_VERSION, PY_MINOR_VERSION);
        return FUTOIN_EINVAL;
    }
    if ((*f->Version >> 16) != ((unsigned long)PY_VERSION_HEX >> 16)) {
        snprintf(err, errlen, "python: the loaded libpython is CPython %lu.%lu, "
                 "this plug-in (and futoin_async) is built for %d.%d",
                 *f->Version >> 24, (*f->Version >> 16) & 0xff,
                 PY_MAJOR_VERSION, PY_MINOR_VERSION);
        return FUTOIN_EINVAL;
    }
    /* the config of Py_InitializeEx(), exported though private; the
     * public python config coerces the C locale of the whole process */
    p = dlsym(lib, "_PyConfig_InitCompatConfig");
    if (!p) {
        p = dlsym(lib, "PyConfig_InitPythonConfig");
    }
    memcpy(&f->Config_Init, &p, sizeof(p));
    p = dlsym(lib, "Py_InitializeFromConfig");
    memcpy(&f->InitializeFromConfig, &p, sizeof(p));
    p = dlsym(lib, "PyConfig_Clear");
    memcpy(&f->Config_Clear, &p, sizeof(p));
    p = dlsym(lib, "PyStatus_Exception");
    memcpy(&f->Status_Exception, &p, sizeof(p));
    p = dlsym(lib, "PyConfig_SetBytesString");
    memcpy(&f->Config_SetBytesString, &p, sizeof(p));
    if (!f->Config_Init || !f->InitializeFromConfig || !f->Config_Clear
        || !f->Status_Exception || !f->Config_SetBytesString) {
        snprintf(err, errlen, "python: the loaded libpython lacks the "
                 "PyConfig API");
        return FUTOIN_EINVAL;
    }
    return FUTOIN_OK;
}

/* Py_InitializeEx(0), returning why it failed instead of exiting. Started
 * as `program` (PyConfig.program_name) when known: the venv's python, whose
 * pyvenv.cfg site.py then reads (its site-packages, the base's if it
 * includes them), or the installation's; PYTHONHOME and PYTHONPATH still
 * apply. */
static int initialize(void* lib, const char* program, char* err, size_t errlen)
{
    py_init_fns f;
    PyConfig config;
    PyStatus st;
    if (load_init_fns(lib, &f, err, errlen) != FUTOIN_OK) {
        return FUTOIN_EINVAL;
    }
    f.Config_Init(&config);
    config.install_signal_handlers = 0; /* the host program owns them */
    st = program && *program
                 ? f.Config_SetBytesString(&config, &config.program_name, program)
                 : (PyStatus){0};
    if (!f.Status_Exception(st)) {
        st = f.InitializeFromConfig(&config);
    }
    f.Config_Clear(&config);
    if (!f.Status_Exception(st)) {
        return FUTOIN_OK;
    }
    if (st.err_msg) {
        snprintf(err, errlen, "python: cannot start CPython: %s%s%s (check "
                 "PYTHONHOME and PYTHONPATH)", st.func ? st.func : "",
                 st.func ? ": " : "", st.err_msg);
    } else {
        snprintf(err, errlen, "python: cannot start CPython: it asked to exit "
                 "with status %d", st.exitcode);
    }
    return FUTOIN_EINVAL;
}

/* "<prefix><ExceptionType>: <text>" of the pending Python exception. */
static void describe(char* err, size_t errlen, const char* prefix)
{
    void *t = NULL, *v = NULL, *tb = NULL, *s = NULL, *tn = NULL, *tns = NULL;
    const char* text = NULL;
    const char* tname = "error";
    py.Err_Fetch(&t, &v, &tb);
    if (t) {
        py.Err_NormalizeException(&t, &v, &tb);
        tn = py.Object_GetAttrString(t, "__name__");
        tns = tn ? py.Object_Str(tn) : NULL;
        if (tns && py.Unicode_AsUTF8(tns)) {
            tname = py.Unicode_AsUTF8(tns);
        }
    }
    if (v) {
        s = py.Object_Str(v);
        text = s ? py.Unicode_AsUTF8(s) : NULL;
    }
    snprintf(err, errlen, "%s%s%s%s", prefix, tname, text && *text ? ": " : "",
             text ? text : "");
    py.Err_Clear();
    void* refs[] = {t, v, tb, s, tn, tns};
    for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); ++i) {
        if (refs[i]) {
            py.DecRef(refs[i]);
        }
    }
}

/* Why futoin_async cannot be imported, and what a user does about it. A
 * plug-in without the package beside it (`parent` empty: the one `meson
 * install` puts into <libdir>/futoin_async/futoin-hosts/, or one copied
 * out of a wheel) runs the package of an installed wheel: the message says
 * how to install it (README "Polyglot set-up"). GIL held, the import's
 * exception set. */
static void not_importable(const char* parent, char* err, size_t errlen)
{
    char why[512];
    Dl_info self;
    const char* me = "this plug-in";
    describe(why, sizeof(why), "");
    if (parent && parent[0]) {
        snprintf(err, errlen,
                 "python: cannot import futoin_async from %s: %s (reinstall its "
                 "wheel, or set PYTHONPATH)",
                 parent, why);
        return;
    }
    if (dladdr((const void*)&futoin_host_get, &self) && self.dli_fname) {
        me = self.dli_fname;
    }
    snprintf(err, errlen,
             "python: cannot import futoin_async: %s. The Python plug-in %s is not "
             "part of a Python package (meson install of the core ships the plug-in "
             "only): install the wheel for CPython %d.%d into a venv and activate it "
             "(python%d.%d -m venv VENV && VENV/bin/pip install "
             "futoin_async-*-cp%d%d-*.whl && . VENV/bin/activate), then the library "
             "uses the wheel's own plug-in; or put the site-packages folder holding "
             "futoin_async on PYTHONPATH",
             why, me, PY_MAJOR_VERSION, PY_MINOR_VERSION, PY_MAJOR_VERSION,
             PY_MINOR_VERSION, PY_MAJOR_VERSION, PY_MINOR_VERSION);
}

/* Import futoin_async and take _core's table. GIL held. `parent`: the
 * folder holding the package this plug-in ships in, added to sys.path
 * when the package is not importable otherwise (a wheel unpacked or
 * installed with --target), or NULL/"". */
static int import_core(const char* parent, char* err, size_t errlen)
{
    void *pkg, *mod, *cap;
    const fpy_host_export* x;
    pkg = py.Import_ImportModule("futoin_async");
    if (!pkg) {
        if (parent && parent[0] && !strpbrk(parent, "'\\\n")) {
            char code[2 * PATH_MAX + 128];
            py.Err_Clear();
            snprintf(code, sizeof(code),
                     "import sys\nif '%s' not in sys.path: sys.path.append('%s')\n",
                     parent, parent);
            py.Run_SimpleString(code);
            pkg = py.Import_ImportModule("futoin_async");
        }
    }
    if (!pkg) {
        not_importable(parent, err, errlen);
        return FUTOIN_EINVAL;
    }
    py.DecRef(pkg);
    mod = py.Import_ImportModule("futoin_async._core");
    cap = mod ? py.Object_GetAttrString(mod, "_host_api") : NULL;
    x = cap ? py.Capsule_GetPointer(cap, FPY_HOST_CAPSULE) : NULL;
    if (cap) {
        py.DecRef(cap);
    }
    if (mod) {
        py.DecRef(mod);
    }
    if (!x || x->size < sizeof(fpy_host_export) || !x->api) {
        if (!x) {
            describe(err, errlen, "python: futoin_async._core has no host table: ");
        } else {
            snprintf(err, errlen, "python: futoin_async._core's host table is too old");
        }
        return FUTOIN_EVERSION;
    }
    core = x;
    return FUTOIN_OK;
}

static int start_python(char* err, size_t errlen)
{
    union
    {
        void* p;
        int (*fn)(void);
    } u;
    void* lib;
    const char* name;
    int gil, rc;
    /* large: off the (possibly small) stack of the host's loop thread */
    static fpy_located where;

    fpy_locate(&where, PY_MAJOR_VERSION, PY_MINOR_VERSION, FUTOIN_LIBPYTHON,
               (const void*)&futoin_host_get);
    u.p = dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    if (u.p && u.fn()) {
        /* attach to the interpreter of this process */
        if (!py.IsInitialized && load_fns(RTLD_DEFAULT, err, errlen) != FUTOIN_OK) {
            return FUTOIN_EINVAL;
        }
        gil = py.GILState_Ensure();
        rc = import_core(where.package_parent, err, errlen);
        py.GILState_Release(gil);
        return rc;
    }
    name = getenv("FUTOIN_LIBPYTHON"); /* development: a libpython by hand */
    if (!name || !*name) {
        name = where.libpython; /* py_locate.c: the wheel's venv or installation,
                                   VIRTUAL_ENV, PATH, the system */
    } else {
        where.program[0] = 0;
    }
    /* RTLD_GLOBAL: extension modules (not linked with libpython) need its
     * symbols; also when a RTLD_LOCAL load of it happened before */
    lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        if (name == where.libpython) {
            snprintf(err, errlen,
                     "python: cannot start CPython: %s (this wheel is for CPython "
                     "%d.%d; looked at %s; install that CPython with its shared "
                     "libpython, e.g. Debian's libpython%d.%d, or activate its venv)",
                     dlerror(), PY_MAJOR_VERSION, PY_MINOR_VERSION, where.searched,
                     PY_MAJOR_VERSION, PY_MINOR_VERSION);
        } else {
            snprintf(err, errlen, "python: cannot start CPython: %s (FUTOIN_LIBPYTHON)",
                     dlerror());
        }
        return FUTOIN_EINVAL;
    }
    if (load_fns(lib, err, errlen) != FUTOIN_OK) {
        return FUTOIN_EINVAL;
    }
    if (!py.IsInitialized()) {
        rc = initialize(lib, where.program, err, errlen); /* no signal handlers */
        if (rc != FUTOIN_OK) {
            /* a half-started interpreter cannot be started again: every
             * later start() fails the same way, other languages go on */
            snprintf(start_failed, sizeof(start_failed), "%s", err);
            return rc;
        }
        rc = import_core(where.package_parent, err, errlen);
        /* the loop thread keeps its thread state; the GIL is taken per
         * callback */
        (void)py.Eval_SaveThread();
        return rc;
    }
    gil = py.GILState_Ensure();
    rc = import_core(where.package_parent, err, errlen);
    py.GILState_Release(gil);
    return rc;
}

static int host_start(futoin_tool* tool, char* err, size_t errlen)
{
    int rc = FUTOIN_OK;
    pthread_mutex_lock(&mx);
    if (start_failed[0]) {
        snprintf(err, errlen, "%s", start_failed);
        rc = FUTOIN_EINVAL;
    } else if (!core) {
        rc = start_python(err, errlen);
    }
    if (rc == FUTOIN_OK) {
        rc = core->api->start(tool, err, errlen);
    }
    if (rc == FUTOIN_OK) {
        ++started;
    }
    pthread_mutex_unlock(&mx);
    return rc;
}

static int host_resolve(const char* module, const char* function,
                        futoin_host_step* out, char* err, size_t errlen)
{
    if (!core) {
        snprintf(err, errlen, "python: %s.%s: the host is not started", module,
                 function);
        return FUTOIN_EINVAL;
    }
    return core->api->resolve(module, function, out, err, errlen);
}

static void host_stop(void)
{
    pthread_mutex_lock(&mx);
    if (core && started > 0) {
        core->api->stop();
        if (--started == 0) {
            /* output a Python step printed must not be lost when the
             * host program exits without finalising the interpreter */
            int gil = py.GILState_Ensure();
            py.Run_SimpleString("import sys\n"
                                "for f in (sys.stdout, sys.stderr):\n"
                                "    f is None or f.flush()\n");
            py.GILState_Release(gil);
        }
    }
    pthread_mutex_unlock(&mx);
}

static const futoin_host_api plugin_api = {
        sizeof(futoin_host_api), FUTOIN_HOST_VERSION_1, "python",
        host_start, host_resolve, host_stop,
};

PLUGIN_EXPORT int futoin_host_get(uint32_t version, const futoin_host_api** out)
{
    if (version < FUTOIN_HOST_VERSION_1 || !out) {
        return FUTOIN_EVERSION;
    }
    *out = &plugin_api;
    return FUTOIN_OK;
}

/* For leak checks of host programs: start()s and stop()s of the python
 * host and the step data it made that the library has not released yet
 * (all 0 before the first start). */
PLUGIN_EXPORT int python_host_counters(int* starts, int* stops, int* live)
{
    *starts = *stops = *live = 0;
    if (core) {
        core->counters(starts, stops, live);
    }
    return 0;
}
