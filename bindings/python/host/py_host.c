/*
 * Python in polyglot flows (futoin/sys/host.h):
 *
 *  - the language host "python": a named function of an importable module
 *    becomes a step that runs through the binding's normal trampoline.
 *    _core registers it when it is imported (the program is a Python
 *    program, or the plug-in libfutoin_host_python.so started CPython and
 *    imported us: host_plugin.c forwards to this table, which it gets
 *    from the capsule _core._host_api);
 *  - where a Python step came from (futoin_frame_origin), computed only
 *    when an async stack is recorded, from the callable the step holds;
 *  - the async stack of an error as Python data;
 *  - the shared state store (futoin_state_set/get) behind State.
 *
 * The host's functions are called by the library from any language's
 * code on the loop thread, with or without the GIL: they take it as the
 * trampolines do (fpy_gil_enter).
 */
#include "futoin_py.h"
#include "py_host_export.h"

#include <futoin/sys/host.h>

#include <stdio.h>
#include <string.h>

/* ---- origins ------------------------------------------------------------ */

void fpy_origin_of(PyObject* fn, futoin_frame_origin* out)
{
    fpy_gil g;
    PyObject *et, *ev, *etb;
    PyObject* f = fn;
    out->language = "python";
    out->function = NULL;
    out->file = NULL;
    out->line = 0;
    fpy_gil_enter(&g);
    PyErr_Fetch(&et, &ev, &etb); /* an exception on its way: keep it */
    if (PyMethod_Check(f)) {
        f = PyMethod_GET_FUNCTION(f); /* held by the bound method */
    }
    if (PyFunction_Check(f)) {
        PyFunctionObject* fo = (PyFunctionObject*)f;
        PyCodeObject* co = (PyCodeObject*)fo->func_code;
        /* UTF-8 cached in the str objects, which the function keeps */
        if (fo->func_qualname && PyUnicode_Check(fo->func_qualname)) {
            out->function = PyUnicode_AsUTF8(fo->func_qualname);
        }
        if (co && co->co_filename && PyUnicode_Check(co->co_filename)) {
            out->file = PyUnicode_AsUTF8(co->co_filename);
        }
        out->line = co && co->co_firstlineno > 0 ? (uint32_t)co->co_firstlineno : 0;
    } else {
        out->function = Py_TYPE(f)->tp_name; /* a callable object */
    }
    PyErr_Clear();
    PyErr_Restore(et, ev, etb);
    fpy_gil_leave(&g);
}

void fpy_origin_fn(void* data, futoin_frame_origin* out)
{
    fpy_origin_of((PyObject*)data, out);
}

/* ---- the host ----------------------------------------------------------- */

static int h_starts, h_stops, h_live;

static void host_release(void* data)
{
    __atomic_fetch_sub(&h_live, 1, __ATOMIC_RELAXED);
    fpy_release_obj((PyObject*)data);
}

static const futoin_step_class host_class = {sizeof(futoin_step_class),
                                             host_release, fpy_origin_fn};

static int host_start(futoin_tool* tool, char* err, size_t errlen)
{
    (void)tool;
    if (!Py_IsInitialized()) {
        snprintf(err, errlen, "python: the interpreter is not running");
        return FUTOIN_EINVAL;
    }
    if (!PyGILState_GetThisThreadState()) {
        /* A loop thread Python does not know: give it a thread state for
         * good, so that each callback only takes the GIL (a fresh thread
         * state per callback costs several times more). */
        (void)PyGILState_Ensure();
        (void)PyEval_SaveThread();
    }
    __atomic_fetch_add(&h_starts, 1, __ATOMIC_RELAXED);
    return FUTOIN_OK;
}

static void host_stop(void)
{
    __atomic_fetch_add(&h_stops, 1, __ATOMIC_RELAXED);
}

/* "<prefix><ExceptionType>: <text>" of the current exception into err. */
static void describe_exception(char* err, size_t errlen, const char* prefix)
{
    PyObject *t, *v, *tb, *s = NULL;
    const char* text = NULL;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (v) {
        s = PyObject_Str(v);
        text = s ? PyUnicode_AsUTF8(s) : NULL;
    }
    snprintf(err, errlen, "%s%s%s%s", prefix,
             t ? ((PyTypeObject*)t)->tp_name : "error", text && *text ? ": " : "",
             text ? text : "");
    PyErr_Clear();
    Py_XDECREF(s);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
}

static int host_resolve(const char* module, const char* function,
                        futoin_host_step* out, char* err, size_t errlen)
{
    fpy_gil g;
    PyObject *et, *ev, *etb;
    PyObject *o = NULL, *m;
    const char* p;
    char prefix[512];
    int rc = FUTOIN_EINVAL;

    fpy_gil_enter(&g);
    PyErr_Fetch(&et, &ev, &etb);
    m = PyImport_ImportModule(module);
    if (!m) {
        snprintf(prefix, sizeof(prefix),
                 "python: cannot import module '%s' (for %s.%s): ", module,
                 module, function);
        describe_exception(err, errlen, prefix);
        goto out;
    }
    /* the function, or a dotted path below the module ("Class.method") */
    o = m;
    for (p = function; o && *p;) {
        const char* dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        PyObject* name = PyUnicode_FromStringAndSize(p, (Py_ssize_t)n);
        PyObject* next = name ? PyObject_GetAttr(o, name) : NULL;
        Py_XDECREF(name);
        Py_DECREF(o);
        o = next;
        if (!o) {
            if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
                PyErr_Clear();
                snprintf(err, errlen, "python: module '%s' has no function '%s'",
                         module, function);
            } else {
                snprintf(prefix, sizeof(prefix), "python: %s.%s: ", module,
                         function);
                describe_exception(err, errlen, prefix);
            }
            goto out;
        }
        p = dot ? dot + 1 : p + n;
    }
    if (!*function || !PyCallable_Check(o)) {
        snprintf(err, errlen, "python: %s.%s is not a function (%.80s)", module,
                 function, Py_TYPE(o)->tp_name);
        Py_CLEAR(o);
        goto out;
    }
    out->execute = fpy_tr_fn;
    out->error = NULL;
    out->data = o; /* the reference goes to the runtime: host_release */
    out->cls = &host_class;
    __atomic_fetch_add(&h_live, 1, __ATOMIC_RELAXED);
    rc = FUTOIN_OK;
out:
    PyErr_Restore(et, ev, etb);
    fpy_gil_leave(&g);
    return rc;
}

static const futoin_host_api host_api = {
        sizeof(futoin_host_api), FUTOIN_HOST_VERSION_1, "python",
        host_start, host_resolve, host_stop,
};

static void host_counters(int* starts, int* stops, int* live)
{
    *starts = __atomic_load_n(&h_starts, __ATOMIC_RELAXED);
    *stops = __atomic_load_n(&h_stops, __ATOMIC_RELAXED);
    *live = __atomic_load_n(&h_live, __ATOMIC_RELAXED);
}

static const fpy_host_export host_export = {sizeof(fpy_host_export), &host_api,
                                            host_counters};

PyObject* fpy_host_counters(void)
{
    int s, p, l;
    host_counters(&s, &p, &l);
    return Py_BuildValue("(iii)", s, p, l);
}

int fpy_host_init(PyObject* m)
{
    PyObject* cap = PyCapsule_New((void*)&host_export, FPY_HOST_CAPSULE, NULL);
    int rc;
    if (!cap || PyModule_AddObject(m, "_host_api", cap) < 0) {
        Py_XDECREF(cap);
        return -1;
    }
    /* EBUSY: the plug-in is the registered host (it started us); it
     * forwards to this very table */
    rc = futoin_host_register(&host_api);
    if (rc != FUTOIN_OK && rc != FUTOIN_EBUSY) {
        PyErr_Format(PyExc_ImportError,
                     "futoin_async: cannot register the python host (%d)", rc);
        return -1;
    }
    return 0;
}

/* ---- the async stack ----------------------------------------------------- */

static PyObject* str_or_none(const char* s)
{
    if (!s) {
        Py_RETURN_NONE;
    }
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

PyObject* fpy_async_stack_of(FutoInAsyncSteps* bsi)
{
    const futoin_async_stack* st = futoin_wrap_async_stack(bsi);
    PyObject *frames, *mk, *res;
    if (!st) {
        Py_RETURN_NONE;
    }
    mk = fpy_hook("make_stack");
    if (!mk) {
        return NULL;
    }
    frames = PyList_New(st->count);
    if (!frames) {
        return NULL;
    }
    for (uint32_t i = 0; i < st->count; ++i) {
        const futoin_frame_origin* o = &st->frames[i];
        PyObject* t = Py_BuildValue("(NNNI)", str_or_none(o->language),
                                    str_or_none(o->function),
                                    str_or_none(o->file), (unsigned)o->line);
        if (!t) {
            Py_DECREF(frames);
            return NULL;
        }
        PyList_SET_ITEM(frames, i, t);
    }
    res = PyObject_CallFunction(mk, "NsII", frames, st->code ? st->code : "",
                                (unsigned)st->elided, (unsigned)st->elided_after);
    return res;
}

/* ---- shared state --------------------------------------------------------- */

/* The live handle of our runtime behind the weak reference `name` of
 * State `st` (a root, or a step used outside its own callback) whose
 * flow's state `st` is, or NULL. Refused (err) off the loop thread. */
static FutoInAsyncSteps* state_ref(PyObject* st, PyObject* name, int* err)
{
    PyObject* ref = PyObject_GetAttr(st, name);
    PyObject* r;
    fpy_steps* s;
    futoin_tool* t;
    if (!ref) {
        PyErr_Clear();
        return NULL;
    }
    r = PyWeakref_Check(ref) ? PyWeakref_GetObject(ref) : NULL; /* borrowed */
    s = r ? fpy_obj_steps(r) : NULL;
    Py_DECREF(ref);
    if (!s || !s->bsi || !futoin_wrap_is_ours(s->bsi)) {
        return NULL;
    }
    t = futoin_async_tool(s->bsi);
    if (t && !futoin_tool_is_same_thread(t)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "state: shared values are read and written on "
                        "the flow's loop thread");
        *err = 1;
        return NULL;
    }
    if (s->kind != FPY_ROOT
        && (!s->bsi->api->isValid(s->bsi) || fpy_state_peek(s->bsi) != st)) {
        return NULL; /* the step ended (or the object serves another one) */
    }
    return s->bsi;
}

/* The handle through which State `st` reaches its root: the step whose
 * callback runs now if `st` is its flow's state, else the step or the
 * Python root the state was last read through outside the flow's steps
 * (weak references), else NULL. */
static FutoInAsyncSteps* state_handle(PyObject* st, int* err)
{
    static PyObject *s_rootref, *s_stepref;
    FutoInAsyncSteps* cur = fpy_T.cur;
    FutoInAsyncSteps* h;
    *err = 0;
    if (cur && fpy_state_peek(cur) == st) {
        return cur;
    }
    if (!s_rootref && (!(s_rootref = PyUnicode_InternFromString("_rootref"))
                       || !(s_stepref = PyUnicode_InternFromString("_stepref")))) {
        PyErr_Clear();
        return NULL;
    }
    h = state_ref(st, s_stepref, err);
    if (!h && !*err) {
        h = state_ref(st, s_rootref, err);
    }
    return h;
}

/* The UTF-8 of a state name that can be shared (a non-empty str), or
 * NULL; -1 (ValueError) for a str with NUL, refused wherever it is used
 * (rule 5), whether or not a handle reaches the store. */
static int key_of(PyObject* key, const char** out)
{
    Py_ssize_t n;
    const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, &n) : NULL;
    *out = NULL;
    if (!k) {
        PyErr_Clear();
        return 0;
    }
    if (strlen(k) != (size_t)n) {
        PyErr_SetString(PyExc_ValueError,
                        "state: a name must not contain NUL characters");
        return -1;
    }
    *out = *k ? k : NULL;
    return 0;
}

PyObject* fpy_state_get(PyObject* st, PyObject* key, PyObject* missing)
{
    int err;
    FutoInAsyncSteps* h;
    const FutoInBinaryValue* v;
    const char* k;
    if (key_of(key, &k) < 0) {
        return NULL;
    }
    h = state_handle(st, &err);
    if (err) {
        return NULL;
    }
    if (!h || !k) {
        return Py_NewRef(missing);
    }
    v = futoin_state_get(h, k);
    if (!v || !v->type) {
        return Py_NewRef(missing);
    }
    return futoin_py_from_binval(v);
}

PyObject* fpy_state_put(PyObject* st, PyObject* key, PyObject* value,
                        PyObject* missing, PyObject* unreachable)
{
    int err, rc;
    FutoInAsyncSteps* h;
    FutoInBinaryValue bv;
    const FutoInBinaryValue* g;
    const char* k;
    if (key_of(key, &k) < 0) {
        return NULL;
    }
    h = state_handle(st, &err);
    if (err) {
        return NULL;
    }
    if (!h) {
        return Py_NewRef(unreachable);
    }
    if (!k) {
        return Py_NewRef(missing);
    }
    memset(&bv, 0, sizeof(bv));
    if (value && value != missing) {
        if (futoin_py_to_binval(value, &bv) < 0) {
            return NULL;
        }
        if (fpy_custom_of(&bv)) {
            /* a Python object: it stays in the Python state only, and
             * nothing older of that name is left to shadow it */
            futoin_reset_binval(&bv);
        }
    }
    rc = futoin_state_set(h, k, bv.type ? &bv : NULL);
    futoin_reset_binval(&bv);
    if (rc != FUTOIN_OK || !(g = futoin_state_get(h, k)) || !g->type) {
        return Py_NewRef(missing);
    }
    return futoin_py_from_binval(g); /* what the other languages see */
}

PyObject* fpy_state_reachable(PyObject* st)
{
    int err;
    FutoInAsyncSteps* h = state_handle(st, &err);
    if (err) {
        return NULL;
    }
    return PyBool_FromLong(h != NULL);
}

/* The predefined state of §1.7 is the flow's own: read live, as the
 * accessors read it, never a copy that could go stale. */
PyObject* fpy_state_error(PyObject* st, PyObject* key)
{
    int err;
    FutoInAsyncSteps* h = state_handle(st, &err);
    const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    if (err || !k) {
        return NULL;
    }
    if (!h) {
        Py_RETURN_NONE;
    }
    if (strcmp(k, "error_info") == 0) {
        return fpy_error_info_of(h);
    }
    if (strcmp(k, "last_exception") == 0) {
        return fpy_last_exception_of(h);
    }
    if (strcmp(k, "async_stack") == 0) {
        return fpy_async_stack_of(h);
    }
    PyErr_Format(PyExc_KeyError, "%R", key);
    return NULL;
}
