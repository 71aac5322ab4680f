/*
 * The hand-written part of the Python binding: the AsyncSteps and Tool
 * types, the trampolines that run Python callables as steps, error, cancel
 * and loop callbacks, and the FutoInBinaryValue <-> Python conversion.
 * Everything goes through the adapter layer (futoin/sys/wrap.h), so the
 * same code drives our handles and any other implementation's.
 *
 * SWIG generates the module (bindings/futoin_async.i plus
 * bindings/python/futoin_python.i) and calls futoin_py_init() from its
 * %init block; the hot path lives here because a SWIG proxy object per
 * step would cost several times the step itself.
 *
 * GIL. Tool.run() releases the GIL with PyEval_SaveThread() and keeps the
 * thread state in a thread-local (T.ts). A trampoline on that thread
 * restores exactly that state and saves it again when it returns: one
 * thread state per loop thread. Callbacks reached while Python already
 * holds the GIL on this thread (cancel handlers run from asi.cancel(),
 * release hooks run from root.free()) call straight through; any other
 * thread takes PyGILState_Ensure().
 *
 * Releases. Every callable given to C is referenced by a record that the
 * runtime releases exactly once through futoin_wrap_* release hooks, and
 * custom values are released through their type's cleanup. Those run on the
 * loop thread, usually with the GIL released; instead of taking the GIL
 * for each, they are queued (thread-local, no lock needed: loop thread
 * only) and dropped by the next trampoline or when run() returns.
 */
#include "futoin_py.h"

#include <futoin/sync.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

/* ---- per-thread state of the loop thread -------------------------------- */

typedef struct fpy_tls
{
    PyThreadState* ts; /* set while run() has the GIL released */
    void** pend;       /* tagged: bit 0 set = PyObject*, else fpy_rec* */
    size_t n, cap;
    PyObject *fatal_t, *fatal_v, *fatal_tb; /* KeyboardInterrupt/SystemExit */
} fpy_tls;

static _Thread_local fpy_tls T;

typedef struct fpy_rec
{
    PyObject* fn;
    PyObject* eh;
    FutoInAsyncSteps* root; /* our root handle or NULL: to cancel on Ctrl-C */
} fpy_rec;

typedef struct fpy_gil
{
    int how;
    PyGILState_STATE st;
} fpy_gil;

static void release_now(void* p)
{
    uintptr_t u = (uintptr_t)p;
    if (u & 1u) {
        PyObject* o = (PyObject*)(u & ~(uintptr_t)1u);
        Py_DECREF(o);
    } else {
        fpy_rec* r = p;
        Py_XDECREF(r->fn);
        Py_XDECREF(r->eh);
        PyMem_Free(r);
    }
}

static void drain(void)
{
    while (T.n) {
        void* p = T.pend[--T.n];
        release_now(p);
    }
}

static void release_tagged(void* p)
{
    if (T.ts) {
        /* the loop thread inside run(): defer to the next GIL holder */
        if (T.n == T.cap) {
            size_t cap = T.cap ? T.cap * 2 : 256;
            void** np = realloc(T.pend, cap * sizeof(void*));
            if (!np) {
                return; /* out of memory: leak rather than crash */
            }
            T.pend = np;
            T.cap = cap;
        }
        T.pend[T.n++] = p;
        return;
    }
    if (PyGILState_Check()) {
        release_now(p);
    } else {
        PyGILState_STATE st = PyGILState_Ensure();
        release_now(p);
        PyGILState_Release(st);
    }
}

static void rec_release(void* data)
{
    release_tagged(data);
}

static inline void gil_enter(fpy_gil* g)
{
    PyThreadState* ts = T.ts;
    g->st = PyGILState_UNLOCKED;
    if (ts) {
        T.ts = NULL;
        PyEval_RestoreThread(ts);
        g->how = 1;
        if (T.n) {
            drain();
        }
    } else if (PyGILState_Check()) {
        g->how = 0;
    } else {
        g->st = PyGILState_Ensure();
        g->how = 2;
    }
}

static inline void gil_leave(fpy_gil* g)
{
    if (g->how == 1) {
        T.ts = PyEval_SaveThread();
    } else if (g->how == 2) {
        PyGILState_Release(g->st);
    }
}

static fpy_rec* rec_new(PyObject* fn, PyObject* eh, FutoInAsyncSteps* root)
{
    fpy_rec* r = PyMem_Malloc(sizeof(*r));
    if (!r) {
        PyErr_NoMemory();
        return NULL;
    }
    Py_XINCREF(fn);
    Py_XINCREF(eh);
    r->fn = fn;
    r->eh = eh;
    r->root = root;
    return r;
}

/* ---- types registered by the Python layer ------------------------------- */

static PyTypeObject* step_type;  /* AsyncSteps (subclass of the base) */
static PyObject* state_type;     /* State(dict) */
static PyObject* error_type;     /* FutoInError */

/* ---- values ------------------------------------------------------------- */

static void free_p(FutoInBinaryValue* v)
{
    free((void*)v->p);
}

static void custom_cleanup(FutoInBinaryValue* v)
{
    release_tagged((void*)((uintptr_t)v->p | 1u));
}

static const FutoInType ty_bool = {FTN_TYPE_BOOL, NULL};
static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};
static const FutoInType ty_u64 = {FTN_TYPE_UINT64, NULL};
static const FutoInType ty_double = {FTN_TYPE_DOUBLE, NULL};
static const FutoInType ty_str = {FTN_TYPE_STRING, free_p};
static const FutoInType ty_bytes = {FTN_TYPE_ARRAY | FTN_TYPE_UINT8, free_p};
static const FutoInType ty_i64arr = {FTN_TYPE_ARRAY | FTN_TYPE_INT64, free_p};
static const FutoInType ty_darr = {FTN_TYPE_ARRAY | FTN_TYPE_DOUBLE, free_p};
static const FutoInType ty_custom = {FTN_TYPE_CUSTOM_OBJECT, custom_cleanup};

static void set_custom(FutoInBinaryValue* v, PyObject* o)
{
    Py_INCREF(o);
    v->type = &ty_custom;
    v->p = o;
    v->custom_data = NULL;
    v->length = 0;
}

/* Python -> binary. Returns 0, or -1 with a Python error set. */
int futoin_py_to_binval(PyObject* o, FutoInBinaryValue* v)
{
    memset(v, 0, sizeof(*v));
    if (o == Py_True || o == Py_False) {
        v->type = &ty_bool;
        v->b = (o == Py_True);
        return 0;
    }
    if (PyLong_CheckExact(o)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (!overflow) {
            if (x == -1 && PyErr_Occurred()) {
                return -1;
            }
            v->type = &ty_i64;
            v->i64 = x;
            return 0;
        }
        if (overflow > 0) {
            unsigned long long ux = PyLong_AsUnsignedLongLong(o);
            if (!PyErr_Occurred()) {
                v->type = &ty_u64;
                v->u64 = ux;
                return 0;
            }
            PyErr_Clear();
        }
        set_custom(v, o);
        return 0;
    }
    if (PyFloat_CheckExact(o)) {
        v->type = &ty_double;
        v->d = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    if (PyUnicode_CheckExact(o)) {
        Py_ssize_t len;
        const char* s = PyUnicode_AsUTF8AndSize(o, &len);
        char* c;
        if (!s) {
            return -1;
        }
        if ((size_t)len > UINT32_MAX - 1) {
            set_custom(v, o);
            return 0;
        }
        c = malloc((size_t)len + 1);
        if (!c) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(c, s, (size_t)len + 1);
        v->type = &ty_str;
        v->cstr = c;
        v->length = (uint32_t)len;
        return 0;
    }
    if (PyBytes_CheckExact(o)) {
        Py_ssize_t len = PyBytes_GET_SIZE(o);
        char* c = malloc(len ? (size_t)len : 1);
        if (!c) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(c, PyBytes_AS_STRING(o), (size_t)len);
        v->type = &ty_bytes;
        v->p = c;
        v->length = (uint32_t)len;
        return 0;
    }
    if (PyList_CheckExact(o) && PyList_GET_SIZE(o) > 0) {
        Py_ssize_t n = PyList_GET_SIZE(o), i;
        int all_int = 1, all_num = 1;
        for (i = 0; i < n; ++i) {
            PyObject* e = PyList_GET_ITEM(o, i);
            if (PyLong_CheckExact(e)) {
                int ovf = 0;
                PyLong_AsLongLongAndOverflow(e, &ovf);
                if (ovf) {
                    all_int = all_num = 0;
                }
            } else if (PyFloat_CheckExact(e)) {
                all_int = 0;
            } else {
                all_int = all_num = 0;
            }
        }
        if (all_num) {
            void* buf = malloc((size_t)n * 8);
            if (!buf) {
                PyErr_NoMemory();
                return -1;
            }
            for (i = 0; i < n; ++i) {
                PyObject* e = PyList_GET_ITEM(o, i);
                if (all_int) {
                    ((int64_t*)buf)[i] = PyLong_AsLongLong(e);
                } else {
                    ((double*)buf)[i] = PyFloat_AsDouble(e);
                }
            }
            v->type = all_int ? &ty_i64arr : &ty_darr;
            v->p = buf;
            v->length = (uint32_t)n;
            return 0;
        }
    }
    set_custom(v, o);
    return 0;
}

static PyObject* num_array(const FutoInBinaryValue* v, int base)
{
    uint32_t n = v->length, i;
    PyObject* l = PyList_New(n);
    if (!l) {
        return NULL;
    }
    for (i = 0; i < n; ++i) {
        PyObject* e;
        switch (base) {
        case FTN_TYPE_BOOL: e = PyBool_FromLong(((const bool*)v->p)[i]); break;
        case FTN_TYPE_INT8: e = PyLong_FromLong(((const int8_t*)v->p)[i]); break;
        case FTN_TYPE_INT16: e = PyLong_FromLong(((const int16_t*)v->p)[i]); break;
        case FTN_TYPE_INT32: e = PyLong_FromLong(((const int32_t*)v->p)[i]); break;
        case FTN_TYPE_INT64: e = PyLong_FromLongLong(((const int64_t*)v->p)[i]); break;
        case FTN_TYPE_UINT16: e = PyLong_FromLong(((const uint16_t*)v->p)[i]); break;
        case FTN_TYPE_UINT32: e = PyLong_FromUnsignedLong(((const uint32_t*)v->p)[i]); break;
        case FTN_TYPE_UINT64: e = PyLong_FromUnsignedLongLong(((const uint64_t*)v->p)[i]); break;
        case FTN_TYPE_FLOAT: e = PyFloat_FromDouble(((const float*)v->p)[i]); break;
        case FTN_TYPE_DOUBLE: e = PyFloat_FromDouble(((const double*)v->p)[i]); break;
        default: e = Py_NewRef(Py_None); break;
        }
        if (!e) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, e);
    }
    return l;
}

/* binary -> Python (new reference). */
PyObject* futoin_py_from_binval(const FutoInBinaryValue* v)
{
    int flags = v->type->flags;
    int base = flags & FTN_BASE_TYPE_MASK;
    if (flags & FTN_TYPE_ARRAY) {
        if (base == FTN_TYPE_UINT8) {
            return PyBytes_FromStringAndSize(v->p, v->length);
        }
        return num_array(v, base);
    }
    switch (base) {
    case FTN_TYPE_CUSTOM_OBJECT:
        if (v->type == &ty_custom) {
            return Py_NewRef((PyObject*)v->p);
        }
        return PyLong_FromVoidPtr((void*)v->p); /* another language's */
    case FTN_TYPE_STRING: {
        size_t len = v->length ? v->length : (v->cstr ? strlen(v->cstr) : 0);
        return PyUnicode_DecodeUTF8(v->cstr ? v->cstr : "", (Py_ssize_t)len,
                                    "replace");
    }
    case FTN_TYPE_STRING16: {
        size_t len = v->length;
        if (!len && v->cstr16) {
            while (v->cstr16[len]) ++len;
        }
        return PyUnicode_DecodeUTF16((const char*)v->cstr16,
                                     (Py_ssize_t)(len * 2), "replace", NULL);
    }
    case FTN_TYPE_STRING32: {
        size_t len = v->length;
        if (!len && v->cstr32) {
            while (v->cstr32[len]) ++len;
        }
        return PyUnicode_DecodeUTF32((const char*)v->cstr32,
                                     (Py_ssize_t)(len * 4), "replace", NULL);
    }
    case FTN_TYPE_BOOL: return PyBool_FromLong(v->b);
    case FTN_TYPE_INT8: return PyLong_FromLong(v->i8);
    case FTN_TYPE_INT16: return PyLong_FromLong(v->i16);
    case FTN_TYPE_INT32: return PyLong_FromLong(v->i32);
    case FTN_TYPE_INT64: return PyLong_FromLongLong(v->i64);
    case FTN_TYPE_UINT8: return PyLong_FromLong(v->u8);
    case FTN_TYPE_UINT16: return PyLong_FromLong(v->u16);
    case FTN_TYPE_UINT32: return PyLong_FromUnsignedLong(v->u32);
    case FTN_TYPE_UINT64: return PyLong_FromUnsignedLongLong(v->u64);
    case FTN_TYPE_FLOAT: return PyFloat_FromDouble(v->f);
    case FTN_TYPE_DOUBLE: return PyFloat_FromDouble(v->d);
    default: Py_RETURN_NONE;
    }
}

static void args_reset(FutoInArgs* a)
{
    for (int i = 0; i < 4; ++i) {
        futoin_reset_binval(&a->args[i]);
    }
}

static int tuple_to_args(PyObject* const* items, Py_ssize_t n, FutoInArgs* a)
{
    memset(a, 0, sizeof(*a));
    if (n > 4) {
        PyErr_SetString(PyExc_TypeError, "at most 4 values (FTN12 FutoInArgs)");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        if (futoin_py_to_binval(items[i], &a->args[i]) < 0) {
            args_reset(a);
            return -1;
        }
    }
    return 0;
}

/* ---- AsyncSteps object -------------------------------------------------- */

enum { KIND_STEP = 0, KIND_ROOT = 1, KIND_BORROWED = 2 };

typedef struct fpy_as
{
    PyObject_HEAD
    FutoInAsyncSteps* bsi;
    FutoInAsyncSteps* root; /* our root handle, NULL if unknown */
    PyObject* tool;         /* roots: the Tool (owned ref) */
    int kind;
} fpy_as;

typedef struct fpy_tool
{
    PyObject_HEAD
    futoin_tool* tool;
    PyObject* flows;  /* roots executing: kept alive until the loop idles */
    PyObject* timers; /* int(address of fpy_timer) -> callable */
} fpy_tool;

static PyTypeObject fpy_tool_type;
static PyTypeObject fpy_as_type;

static fpy_as* as_cache; /* one spare step object, reused when unshared */

static fpy_as* as_new(FutoInAsyncSteps* bsi, FutoInAsyncSteps* root)
{
    fpy_as* a = as_cache;
    if (a) {
        as_cache = NULL;
    } else {
        a = (fpy_as*)step_type->tp_alloc(step_type, 0);
        if (!a) {
            return NULL;
        }
        a->tool = NULL;
        a->kind = KIND_STEP;
    }
    a->bsi = bsi;
    a->root = root;
    return a;
}

static void as_done(fpy_as* a)
{
    if (Py_REFCNT(a) == 1 && !as_cache && Py_TYPE(a) == step_type) {
        as_cache = a;
        return;
    }
    Py_DECREF(a);
}

static int check_live(fpy_as* a)
{
    if (!a->bsi) {
        PyErr_SetString(PyExc_RuntimeError, "AsyncSteps handle is closed");
        return -1;
    }
    return 0;
}

static void store_fatal(FutoInAsyncSteps* bsi, FutoInAsyncSteps* root)
{
    PyObject *t, *v, *tb;
    futoin_tool* tool;
    PyErr_Fetch(&t, &v, &tb);
    if (T.fatal_t) {
        Py_XDECREF(t);
        Py_XDECREF(v);
        Py_XDECREF(tb);
    } else {
        T.fatal_t = t;
        T.fatal_v = v;
        T.fatal_tb = tb;
    }
    if (root) {
        root->api->cancel(root);
    }
    tool = futoin_async_tool(bsi);
    if (tool) {
        uv_stop(futoin_tool_uv_loop(tool));
    }
}

/* A Python exception escaped a step / loop body / error handler. */
static void on_exception(FutoInAsyncSteps* bsi, FutoInAsyncSteps* root)
{
    PyObject *t, *v, *tb, *code = NULL, *info = NULL, *s = NULL;
    FutoInBinaryValue ex;
    const char* ccode;
    const char* cinfo = NULL;

    if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)
        || PyErr_ExceptionMatches(PyExc_SystemExit)) {
        store_fatal(bsi, root);
        return;
    }
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (tb && v) {
        PyException_SetTraceback(v, tb);
    }
    if (v && error_type && PyObject_IsInstance(v, error_type) == 1) {
        PyObject* h = PyObject_GetAttrString(v, "_handled");
        int handled = h && PyObject_IsTrue(h) == 1;
        Py_XDECREF(h);
        PyErr_Clear();
        if (handled) {
            goto out; /* asi.error() already called handle_error */
        }
        code = PyObject_GetAttrString(v, "code");
        info = PyObject_GetAttrString(v, "info");
        PyErr_Clear();
        ccode = code && PyUnicode_Check(code) ? PyUnicode_AsUTF8(code)
                                               : FUTOIN_ERR_INTERNAL_ERROR;
        if (info && PyUnicode_Check(info)) {
            cinfo = PyUnicode_AsUTF8(info);
        }
    } else {
        ccode = FUTOIN_ERR_INTERNAL_ERROR;
        s = v ? PyObject_Str(v) : NULL;
        if (s) {
            cinfo = PyUnicode_AsUTF8(s);
        }
        if (!cinfo || !*cinfo) {
            cinfo = t ? ((PyTypeObject*)t)->tp_name : "exception";
        }
    }
    PyErr_Clear();
    if (v) {
        set_custom(&ex, v);
        futoin_wrap_set_last_exception(bsi, &ex);
    }
    bsi->api->handle_error(bsi, ccode, cinfo);
out:
    PyErr_Clear();
    Py_XDECREF(code);
    Py_XDECREF(info);
    Py_XDECREF(s);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
}

static void tr_step(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    fpy_rec* r = data;
    fpy_gil g;
    PyObject* stack[5];
    PyObject* res;
    size_t n = 1;
    fpy_as* a;

    gil_enter(&g);
    a = as_new(bsi, r->root);
    if (!a) {
        PyErr_Clear();
        bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR, "out of memory");
        gil_leave(&g);
        return;
    }
    stack[0] = (PyObject*)a;
    if (args) {
        for (int i = 0; i < 4 && args->args[i].type; ++i) {
            PyObject* o = futoin_py_from_binval(&args->args[i]);
            if (!o) {
                o = Py_NewRef(Py_None);
                PyErr_Clear();
            }
            stack[n++] = o;
        }
    }
    res = PyObject_Vectorcall(r->fn, stack, n, NULL);
    for (size_t i = 1; i < n; ++i) {
        Py_DECREF(stack[i]);
    }
    if (res) {
        Py_DECREF(res);
    } else {
        on_exception(bsi, r->root);
    }
    as_done(a);
    gil_leave(&g);
}

static void sync_error_state(FutoInAsyncSteps* bsi);
static PyObject* error_info_of(FutoInAsyncSteps* bsi);
static PyObject* last_exception_of(FutoInAsyncSteps* bsi);

static void call_eh(FutoInAsyncSteps* bsi, fpy_rec* r, PyObject* eh,
                    const char* code)
{
    fpy_gil g;
    PyObject *c, *res;
    fpy_as* a;
    gil_enter(&g);
    a = as_new(bsi, r->root);
    c = PyUnicode_FromString(code ? code : "");
    if (!a || !c) {
        Py_XDECREF(c);
        if (a) {
            as_done(a);
        }
        PyErr_Clear();
        gil_leave(&g);
        return;
    }
    sync_error_state(bsi);
    {
        PyObject* stack[2] = {(PyObject*)a, c};
        res = PyObject_Vectorcall(eh, stack, 2, NULL);
    }
    Py_DECREF(c);
    if (res) {
        Py_DECREF(res);
    } else {
        on_exception(bsi, r->root);
    }
    as_done(a);
    gil_leave(&g);
}

static void tr_error(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    fpy_rec* r = data;
    call_eh(bsi, r, r->eh, code);
}

/* execute()'s unhandled-error callback: fn(code, error_info, last_exception); exceptions there
 * cannot go to any flow: they are printed. */
static void tr_unhandled(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    fpy_rec* r = data;
    fpy_gil g;
    PyObject* res;
    gil_enter(&g);
    sync_error_state(bsi);
    {
        PyObject* ei = error_info_of(bsi);
        PyObject* le = last_exception_of(bsi);
        res = (ei && le) ? PyObject_CallFunction(r->fn, "sOO", code ? code : "",
                                                ei, le)
                         : NULL;
        Py_XDECREF(ei);
        Py_XDECREF(le);
    }
    if (res) {
        Py_DECREF(res);
    } else if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)
               || PyErr_ExceptionMatches(PyExc_SystemExit)) {
        store_fatal(bsi, NULL);
    } else {
        PyErr_WriteUnraisable(r->fn);
    }
    gil_leave(&g);
}

static void tr_cancel(FutoInAsyncSteps* bsi, void* data)
{
    fpy_rec* r = data;
    fpy_gil g;
    PyObject* res;
    fpy_as* a;
    gil_enter(&g);
    a = as_new(bsi, r->root);
    if (!a) {
        PyErr_Clear();
        gil_leave(&g);
        return;
    }
    res = PyObject_CallOneArg(r->fn, (PyObject*)a);
    if (res) {
        Py_DECREF(res);
    } else if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)
               || PyErr_ExceptionMatches(PyExc_SystemExit)) {
        store_fatal(bsi, r->root);
    } else {
        PyErr_WriteUnraisable(r->fn); /* a cancel handler cannot fail */
    }
    as_done(a);
    gil_leave(&g);
}

static void tr_loop(FutoInAsyncSteps* bsi, void* data)
{
    fpy_rec* r = data;
    fpy_gil g;
    PyObject* res;
    fpy_as* a;
    gil_enter(&g);
    a = as_new(bsi, r->root);
    if (!a) {
        PyErr_Clear();
        bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR, "out of memory");
        gil_leave(&g);
        return;
    }
    res = PyObject_CallOneArg(r->fn, (PyObject*)a);
    if (res) {
        Py_DECREF(res);
    } else {
        on_exception(bsi, r->root);
    }
    as_done(a);
    gil_leave(&g);
}

static void tr_repeat(FutoInAsyncSteps* bsi, void* data, size_t i)
{
    fpy_rec* r = data;
    fpy_gil g;
    PyObject *res, *pi;
    fpy_as* a;
    gil_enter(&g);
    a = as_new(bsi, r->root);
    pi = PyLong_FromSize_t(i);
    if (!a || !pi) {
        Py_XDECREF(pi);
        if (a) {
            as_done(a);
        }
        PyErr_Clear();
        bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR, "out of memory");
        gil_leave(&g);
        return;
    }
    {
        PyObject* stack[2] = {(PyObject*)a, pi};
        res = PyObject_Vectorcall(r->fn, stack, 2, NULL);
    }
    Py_DECREF(pi);
    if (res) {
        Py_DECREF(res);
    } else {
        on_exception(bsi, r->root);
    }
    as_done(a);
    gil_leave(&g);
}

/* ---- state -------------------------------------------------------------- */

static void* st_alloc(void* data)
{
    PyObject* d = PyObject_CallNoArgs(state_type ? state_type
                                                 : (PyObject*)&PyDict_Type);
    if (!d) {
        PyErr_Clear();
    }
    return d;
}

static void st_cleanup(void* data, void* value)
{
    if (value) {
        release_tagged((void*)((uintptr_t)value | 1u));
    }
}

static PyObject* state_of(FutoInAsyncSteps* bsi)
{
    PyObject* d = bsi->api->stateVariable(bsi, NULL, "python.state", st_alloc,
                                          st_cleanup);
    if (!d) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_RuntimeError, "state() is not available");
        }
        return NULL;
    }
    return d; /* borrowed: owned by the root */
}

static PyObject* last_exception_of(FutoInAsyncSteps* bsi)
{
    const FutoInBinaryValue* v = futoin_wrap_last_exception(bsi);
    const char* code;
    if (v && v->type == &ty_custom) {
        return Py_NewRef((PyObject*)v->p);
    }
    code = futoin_wrap_error_code(bsi);
    if (code) {
        return PyUnicode_FromString(code);
    }
    Py_RETURN_NONE;
}

static PyObject* error_info_of(FutoInAsyncSteps* bsi)
{
    const char* info = futoin_wrap_error_info(bsi);
    if (info) {
        return PyUnicode_FromString(info);
    }
    Py_RETURN_NONE;
}

/* Mirror error_info / last_exception into the Python state (spec §1.7). */
static void sync_error_state(FutoInAsyncSteps* bsi)
{
    PyObject* d = bsi->api->stateVariable(bsi, NULL, "python.state", st_alloc,
                                          st_cleanup);
    PyObject *ei, *le;
    if (!d) {
        PyErr_Clear();
        return;
    }
    ei = error_info_of(bsi);
    le = last_exception_of(bsi);
    if (ei) {
        PyDict_SetItemString(d, "error_info", ei);
        Py_DECREF(ei);
    }
    if (le) {
        PyDict_SetItemString(d, "last_exception", le);
        Py_DECREF(le);
    }
    PyErr_Clear();
}

/* ---- AsyncSteps methods ------------------------------------------------- */

#define LIVE(a)                                                                \
    if (check_live(a) < 0)                                                     \
    return NULL

static PyObject* none_to_null(PyObject* o)
{
    return (o == Py_None) ? NULL : o;
}

static PyObject* as_add(fpy_as* a, PyObject* const* args, Py_ssize_t n)
{
    PyObject *fn, *eh = NULL;
    fpy_rec* r;
    LIVE(a);
    if (n < 1 || n > 2) {
        PyErr_SetString(PyExc_TypeError, "add(step, onerror=None)");
        return NULL;
    }
    fn = args[0];
    if (n > 1) {
        eh = none_to_null(args[1]);
    }
    if (!PyCallable_Check(fn) || (eh && !PyCallable_Check(eh))) {
        PyErr_SetString(PyExc_TypeError, "add(): step and onerror must be callable");
        return NULL;
    }
    r = rec_new(fn, eh, a->root);
    if (!r) {
        return NULL;
    }
    futoin_wrap_add(a->bsi, r, tr_step, eh ? tr_error : NULL, rec_release);
    return Py_NewRef((PyObject*)a);
}

static PyObject* as_parallel(fpy_as* a, PyObject* const* args, Py_ssize_t n)
{
    PyObject* eh = n > 0 ? none_to_null(args[0]) : NULL;
    fpy_rec* r = NULL;
    FutoInAsyncSteps* p;
    fpy_as* pa;
    LIVE(a);
    if (eh) {
        if (!PyCallable_Check(eh)) {
            PyErr_SetString(PyExc_TypeError, "parallel(): onerror must be callable");
            return NULL;
        }
        r = rec_new(NULL, eh, a->root);
        if (!r) {
            return NULL;
        }
    }
    p = futoin_wrap_parallel(a->bsi, r, r ? tr_error : NULL,
                             r ? rec_release : NULL);
    if (!p) {
        PyErr_SetString(PyExc_RuntimeError, "parallel() refused");
        return NULL;
    }
    pa = (fpy_as*)step_type->tp_alloc(step_type, 0);
    if (!pa) {
        return NULL;
    }
    pa->bsi = p;
    pa->root = a->root;
    pa->kind = KIND_STEP;
    pa->tool = NULL;
    return (PyObject*)pa;
}

static PyObject* as_success(fpy_as* a, PyObject* const* args, Py_ssize_t n)
{
    FutoInArgs fa;
    LIVE(a);
    if (n == 0) {
        a->bsi->api->success(a->bsi, NULL);
        Py_RETURN_NONE;
    }
    if (tuple_to_args(args, n, &fa) < 0) {
        return NULL;
    }
    a->bsi->api->success(a->bsi, &fa);
    args_reset(&fa); /* no-op after a move; frees if refused */
    Py_RETURN_NONE;
}

static PyObject* as_success_step(fpy_as* a, PyObject* const* args, Py_ssize_t n)
{
    FutoInArgs fa;
    LIVE(a);
    if (tuple_to_args(args, n, &fa) < 0) {
        return NULL;
    }
    futoin_wrap_success_step(a->bsi, &fa);
    args_reset(&fa);
    return Py_NewRef((PyObject*)a);
}

/* error(code, info=None): handle_error, then raise FutoInError (marked as
 * handled, so a trampoline that catches it does not report it again). */
static PyObject* as_error(fpy_as* a, PyObject* const* args, Py_ssize_t n)
{
    PyObject *code, *info = Py_None, *exc;
    const char* ccode;
    const char* cinfo = NULL;
    FutoInBinaryValue ex;
    LIVE(a);
    if (n < 1 || n > 2 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "error(code: str, info=None)");
        return NULL;
    }
    code = args[0];
    if (n > 1) {
        info = args[1];
    }
    ccode = PyUnicode_AsUTF8(code);
    if (!ccode) {
        return NULL;
    }
    if (info != Py_None) {
        if (!PyUnicode_Check(info)) {
            PyErr_SetString(PyExc_TypeError, "error(): info must be str or None");
            return NULL;
        }
        cinfo = PyUnicode_AsUTF8(info);
        if (!cinfo) {
            return NULL;
        }
    }
    exc = PyObject_CallFunctionObjArgs(error_type, code, info, NULL);
    if (!exc) {
        return NULL;
    }
    if (PyObject_SetAttrString(exc, "_handled", Py_True) < 0) {
        Py_DECREF(exc);
        return NULL;
    }
    set_custom(&ex, exc);
    futoin_wrap_set_last_exception(a->bsi, &ex);
    a->bsi->api->handle_error(a->bsi, ccode, cinfo);
    PyErr_SetObject(error_type, exc);
    Py_DECREF(exc);
    return NULL;
}

static PyObject* as_set_timeout(fpy_as* a, PyObject* arg)
{
    unsigned long ms;
    LIVE(a);
    if (PyFloat_Check(arg)) {
        double d = PyFloat_AsDouble(arg);
        ms = d < 0 ? 0 : (unsigned long)d;
    } else {
        ms = PyLong_AsUnsignedLong(arg);
        if (PyErr_Occurred()) {
            return NULL;
        }
    }
    a->bsi->api->setTimeout(a->bsi, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
    Py_RETURN_NONE;
}

static PyObject* as_set_cancel(fpy_as* a, PyObject* fn)
{
    fpy_rec* r;
    LIVE(a);
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "set_cancel(): callable expected");
        return NULL;
    }
    r = rec_new(fn, NULL, a->root);
    if (!r) {
        return NULL;
    }
    futoin_wrap_set_cancel(a->bsi, r, tr_cancel, rec_release);
    Py_RETURN_NONE;
}

static PyObject* as_wait_external(fpy_as* a, PyObject* unused)
{
    LIVE(a);
    a->bsi->api->waitExternal(a->bsi);
    Py_RETURN_NONE;
}

static int label_arg(PyObject* o, const char** out)
{
    *out = NULL;
    if (!o || o == Py_None) {
        return 0;
    }
    if (!PyUnicode_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "label must be str or None");
        return -1;
    }
    *out = PyUnicode_AsUTF8(o);
    return *out ? 0 : -1;
}

static PyObject* as_loop(fpy_as* a, PyObject* const* args, Py_ssize_t n)
{
    const char* label;
    fpy_rec* r;
    LIVE(a);
    if (n < 1 || n > 2 || !PyCallable_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "loop(body, label=None)");
        return NULL;
    }
    if (label_arg(n > 1 ? args[1] : NULL, &label) < 0) {
        return NULL;
    }
    r = rec_new(args[0], NULL, a->root);
    if (!r) {
        return NULL;
    }
    futoin_wrap_loop(a->bsi, r, tr_loop, label, rec_release);
    return Py_NewRef((PyObject*)a);
}

static PyObject* as_repeat(fpy_as* a, PyObject* const* args, Py_ssize_t n)
{
    const char* label;
    size_t count;
    fpy_rec* r;
    LIVE(a);
    if (n < 2 || n > 3 || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "repeat(count, body, label=None)");
        return NULL;
    }
    count = PyLong_AsSize_t(args[0]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (label_arg(n > 2 ? args[2] : NULL, &label) < 0) {
        return NULL;
    }
    r = rec_new(args[1], NULL, a->root);
    if (!r) {
        return NULL;
    }
    futoin_wrap_repeat(a->bsi, r, count, tr_repeat, label, rec_release);
    return Py_NewRef((PyObject*)a);
}

/* break_loop()/continue_loop() leave the calling Python code as the JS
 * reference's break()/continue() do: the runtime is told first, then a
 * handled FutoInError ("LoopBreak"/"LoopCont") unwinds to the trampoline,
 * which drops it. */
static PyObject* raise_handled(const char* code)
{
    PyObject* exc = PyObject_CallFunction(error_type, "sO", code, Py_None);
    if (!exc) {
        return NULL;
    }
    if (PyObject_SetAttrString(exc, "_handled", Py_True) == 0) {
        PyErr_SetObject(error_type, exc);
    }
    Py_DECREF(exc);
    return NULL;
}

static PyObject* as_break(fpy_as* a, PyObject* const* args, Py_ssize_t n)
{
    const char* label;
    LIVE(a);
    if (label_arg(n > 0 ? args[0] : NULL, &label) < 0) {
        return NULL;
    }
    a->bsi->api->breakLoop(a->bsi, label);
    return raise_handled("LoopBreak");
}

static PyObject* as_continue(fpy_as* a, PyObject* const* args, Py_ssize_t n)
{
    const char* label;
    LIVE(a);
    if (label_arg(n > 0 ? args[0] : NULL, &label) < 0) {
        return NULL;
    }
    a->bsi->api->continueLoop(a->bsi, label);
    return raise_handled("LoopCont");
}

static PyObject* as_sync(fpy_as* a, PyObject* const* args, Py_ssize_t n)
{
    FutoInSync* s;
    PyObject *fn, *eh = NULL, *p;
    fpy_rec* r;
    LIVE(a);
    if (n < 2 || n > 3) {
        PyErr_SetString(PyExc_TypeError, "sync(obj, step, onerror=None)");
        return NULL;
    }
    p = PyObject_GetAttrString(args[0], "ptr");
    if (!p) {
        return NULL;
    }
    s = PyLong_AsVoidPtr(p);
    Py_DECREF(p);
    if (!s) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "sync(): object is closed");
        }
        return NULL;
    }
    fn = args[1];
    eh = n > 2 ? none_to_null(args[2]) : NULL;
    if (!PyCallable_Check(fn) || (eh && !PyCallable_Check(eh))) {
        PyErr_SetString(PyExc_TypeError, "sync(): step and onerror must be callable");
        return NULL;
    }
    r = rec_new(fn, eh, a->root);
    if (!r) {
        return NULL;
    }
    futoin_wrap_add_sync(a->bsi, s, r, tr_step, eh ? tr_error : NULL, rec_release);
    return Py_NewRef((PyObject*)a);
}

static PyObject* as_execute(fpy_as* a, PyObject* const* args, Py_ssize_t n)
{
    PyObject* fn = n > 0 ? none_to_null(args[0]) : NULL;
    fpy_rec* r = NULL;
    LIVE(a);
    if (fn) {
        if (!PyCallable_Check(fn)) {
            PyErr_SetString(PyExc_TypeError, "execute(): callable expected");
            return NULL;
        }
        r = rec_new(fn, NULL, a->root);
        if (!r) {
            return NULL;
        }
    }
    if (a->tool) {
        /* Keep the root alive while it runs: the tool drops it when idle. */
        if (PyList_Append(((fpy_tool*)a->tool)->flows, (PyObject*)a) < 0) {
            if (r) {
                release_now(r);
            }
            return NULL;
        }
    }
    futoin_wrap_execute(a->bsi, r, r ? tr_unhandled : NULL,
                        r ? rec_release : NULL);
    Py_RETURN_NONE;
}

static PyObject* as_cancel(fpy_as* a, PyObject* unused)
{
    LIVE(a);
    a->bsi->api->cancel(a->bsi);
    Py_RETURN_NONE;
}

static PyObject* as_new_instance(fpy_as* a, PyObject* unused)
{
    FutoInAsyncSteps* b;
    fpy_as* r;
    LIVE(a);
    b = a->bsi->api->newInstance(a->bsi);
    if (!b) {
        PyErr_SetString(PyExc_RuntimeError, "newInstance() failed");
        return NULL;
    }
    r = (fpy_as*)step_type->tp_alloc(step_type, 0);
    if (!r) {
        b->api->free(b);
        return NULL;
    }
    r->bsi = b;
    r->root = futoin_wrap_is_ours(b) ? b : NULL;
    r->kind = KIND_ROOT;
    r->tool = NULL;
    return (PyObject*)r;
}

static PyObject* as_free(fpy_as* a, PyObject* unused)
{
    if (a->kind == KIND_ROOT && a->bsi) {
        FutoInAsyncSteps* b = a->bsi;
        a->bsi = NULL;
        b->api->free(b);
    }
    Py_RETURN_NONE;
}

static PyObject* as_get_state(fpy_as* a, void* c)
{
    PyObject* d;
    LIVE(a);
    d = state_of(a->bsi);
    return d ? Py_NewRef(d) : NULL;
}

static PyObject* as_get_error_info(fpy_as* a, void* c)
{
    LIVE(a);
    return error_info_of(a->bsi);
}

static PyObject* as_get_last_exception(fpy_as* a, void* c)
{
    LIVE(a);
    return last_exception_of(a->bsi);
}

static PyObject* as_get_root_id(fpy_as* a, void* c)
{
    LIVE(a);
    return PyLong_FromSsize_t(a->bsi->api->rootId(a->bsi));
}

static PyObject* as_is_valid(fpy_as* a, PyObject* unused)
{
    if (!a->bsi) {
        Py_RETURN_FALSE;
    }
    return PyBool_FromLong(a->bsi->api->isValid(a->bsi));
}

static PyObject* as_is_same_thread(fpy_as* a, PyObject* unused)
{
    LIVE(a);
    return PyBool_FromLong(a->bsi->api->is_same_thread(a->bsi));
}

static PyObject* as_binary(fpy_as* a, PyObject* unused)
{
    LIVE(a);
    return PyLong_FromVoidPtr(a->bsi);
}

static PyObject* as_is_ours(fpy_as* a, PyObject* unused)
{
    LIVE(a);
    return PyBool_FromLong(futoin_wrap_is_ours(a->bsi));
}

static PyObject* as_tool_ptr(fpy_as* a, PyObject* unused)
{
    LIVE(a);
    return PyLong_FromVoidPtr(futoin_async_tool(a->bsi));
}

static PyObject* as_tool(fpy_as* a, void* c)
{
    if (a->tool) {
        return Py_NewRef(a->tool);
    }
    Py_RETURN_NONE;
}

/* AsyncSteps._wrap(address, owned=False, tool=None) */
static PyObject* as_wrap(PyObject* cls, PyObject* const* args, Py_ssize_t n)
{
    FutoInAsyncSteps* b;
    fpy_as* r;
    if (n < 1 || n > 3) {
        PyErr_SetString(PyExc_TypeError, "_wrap(address, owned=False, tool=None)");
        return NULL;
    }
    b = PyLong_AsVoidPtr(args[0]);
    if (!b) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "wrap(): NULL handle");
        }
        return NULL;
    }
    if (!b->api) {
        PyErr_SetString(PyExc_ValueError, "wrap(): handle without a table");
        return NULL;
    }
    r = (fpy_as*)((PyTypeObject*)cls)->tp_alloc((PyTypeObject*)cls, 0);
    if (!r) {
        return NULL;
    }
    r->bsi = b;
    r->root = NULL;
    r->kind = (n > 1 && PyObject_IsTrue(args[1]) == 1) ? KIND_ROOT : KIND_BORROWED;
    r->tool = (n > 2 && args[2] != Py_None) ? Py_NewRef(args[2]) : NULL;
    if (r->kind == KIND_ROOT && futoin_wrap_is_ours(b)) {
        r->root = b;
    }
    return (PyObject*)r;
}

static int as_init(fpy_as* a, PyObject* args, PyObject* kw)
{
    PyObject* tool = NULL;
    static char* kwl[] = {"tool", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwl, &tool)) {
        return -1;
    }
    if (a->bsi) {
        return 0;
    }
    if (!tool || !PyObject_TypeCheck(tool, &fpy_tool_type)) {
        PyErr_SetString(PyExc_TypeError, "AsyncSteps(tool): a Tool is required");
        return -1;
    }
    a->bsi = futoin_root_new(((fpy_tool*)tool)->tool);
    if (!a->bsi) {
        PyErr_NoMemory();
        return -1;
    }
    a->root = a->bsi;
    a->kind = KIND_ROOT;
    Py_XSETREF(a->tool, Py_NewRef(tool));
    return 0;
}

static void as_dealloc(fpy_as* a)
{
    if (a->kind == KIND_ROOT && a->bsi) {
        FutoInAsyncSteps* b = a->bsi;
        a->bsi = NULL;
        b->api->free(b);
    }
    Py_CLEAR(a->tool);
    Py_TYPE(a)->tp_free((PyObject*)a);
}

#define M(name, fn, flags) {name, (PyCFunction)(void (*)(void))fn, flags, NULL}
static PyMethodDef as_methods[] = {
    M("add", as_add, METH_FASTCALL),
    M("parallel", as_parallel, METH_FASTCALL),
    M("success", as_success, METH_FASTCALL),
    M("success_step", as_success_step, METH_FASTCALL),
    M("error", as_error, METH_FASTCALL),
    M("set_timeout", as_set_timeout, METH_O),
    M("set_cancel", as_set_cancel, METH_O),
    M("wait_external", as_wait_external, METH_NOARGS),
    M("loop", as_loop, METH_FASTCALL),
    M("repeat", as_repeat, METH_FASTCALL),
    M("break_loop", as_break, METH_FASTCALL),
    M("continue_loop", as_continue, METH_FASTCALL),
    M("sync", as_sync, METH_FASTCALL),
    M("execute", as_execute, METH_FASTCALL),
    M("cancel", as_cancel, METH_NOARGS),
    M("new_instance", as_new_instance, METH_NOARGS),
    M("free", as_free, METH_NOARGS),
    M("is_valid", as_is_valid, METH_NOARGS),
    M("is_same_thread", as_is_same_thread, METH_NOARGS),
    M("binary", as_binary, METH_NOARGS),
    M("is_ours", as_is_ours, METH_NOARGS),
    M("_tool_ptr", as_tool_ptr, METH_NOARGS),
    M("_wrap", as_wrap, METH_FASTCALL | METH_CLASS),
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef as_getset[] = {
    {"state", (getter)as_get_state, NULL, "the flow's state (a State dict)", NULL},
    {"error_info", (getter)as_get_error_info, NULL, "info of the last error", NULL},
    {"last_exception", (getter)as_get_last_exception, NULL,
     "the last error: the Python exception, or its code", NULL},
    {"root_id", (getter)as_get_root_id, NULL, "rootId()", NULL},
    {"tool", (getter)as_tool, NULL, "the Tool of a root (or None)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject fpy_as_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "futoin_async._core.AsyncStepsBase",
    .tp_basicsize = sizeof(fpy_as),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "FTN12 AsyncSteps over the wrap/binary adapter layer",
    .tp_methods = as_methods,
    .tp_getset = as_getset,
    .tp_init = (initproc)as_init,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)as_dealloc,
};

/* ---- Tool --------------------------------------------------------------- */

typedef struct fpy_timer
{
    fpy_tool* tool;
    FutoInHandle h;
} fpy_timer;

static PyObject* raise_fatal(void)
{
    if (T.fatal_t) {
        PyErr_Restore(T.fatal_t, T.fatal_v, T.fatal_tb);
        T.fatal_t = T.fatal_v = T.fatal_tb = NULL;
        return NULL;
    }
    return NULL;
}

static int tool_init(fpy_tool* t, PyObject* args, PyObject* kw)
{
    unsigned long long uvloop = 0;
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    static char* kwl[] = {"uv_loop", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|K", kwl, &uvloop)) {
        return -1;
    }
    if (t->tool) {
        return 0;
    }
    o.uv_loop = (void*)(uintptr_t)uvloop;
    if (futoin_tool_new(&t->tool, &o) != FUTOIN_OK) {
        PyErr_SetString(PyExc_RuntimeError, "futoin_tool_new() failed");
        return -1;
    }
    t->flows = PyList_New(0);
    t->timers = PyDict_New();
    if (!t->flows || !t->timers) {
        return -1;
    }
    return 0;
}

static void tool_drop_timers(fpy_tool* t)
{
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    if (!t->timers) {
        return;
    }
    while (PyDict_Next(t->timers, &pos, &k, &v)) {
        fpy_timer* tm = PyLong_AsVoidPtr(k);
        futoin_tool_cancel(t->tool, &tm->h);
        PyMem_Free(tm);
    }
    PyDict_Clear(t->timers);
}

static void tool_dealloc(fpy_tool* t)
{
    PyObject_GC_UnTrack(t);
    Py_CLEAR(t->flows);
    if (t->tool) {
        tool_drop_timers(t);
        if (futoin_tool_free(t->tool) == FUTOIN_OK) {
            t->tool = NULL;
        }
    }
    drain();
    Py_CLEAR(t->timers);
    Py_TYPE(t)->tp_free((PyObject*)t);
}

static int tool_traverse(fpy_tool* t, visitproc visit, void* arg)
{
    Py_VISIT(t->flows);
    Py_VISIT(t->timers);
    return 0;
}

static int tool_clear(fpy_tool* t)
{
    Py_CLEAR(t->flows);
    return 0;
}

static void tool_idle(fpy_tool* t)
{
    if (t->flows && PyList_GET_SIZE(t->flows)) {
        PyObject* old = t->flows;
        t->flows = PyList_New(0);
        Py_DECREF(old);
    }
    drain();
}

static PyObject* tool_run(fpy_tool* t, PyObject* unused)
{
    int rc;
    PyThreadState* ts;
    if (T.ts) {
        PyErr_SetString(PyExc_RuntimeError, "run(): already running on this thread");
        return NULL;
    }
    T.ts = PyEval_SaveThread();
    rc = futoin_tool_run(t->tool);
    ts = T.ts;
    T.ts = NULL;
    PyEval_RestoreThread(ts);
    drain();
    if (T.fatal_t) {
        return raise_fatal();
    }
    tool_idle(t);
    if (rc != FUTOIN_OK) {
        PyErr_SetString(PyExc_RuntimeError,
                        "run(): refused (nested run, or an attached loop)");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* One non-blocking pass. The GIL stays held (nothing here blocks). */
static PyObject* tool_run_nowait(fpy_tool* t, PyObject* unused)
{
    int rc = futoin_tool_run_nowait(t->tool);
    drain();
    if (T.fatal_t) {
        return raise_fatal();
    }
    if (rc < 0) {
        PyErr_SetString(PyExc_RuntimeError, "run_nowait(): refused");
        return NULL;
    }
    if (rc == 0) {
        tool_idle(t);
    }
    return PyBool_FromLong(rc);
}

static PyObject* tool_backend_fd(fpy_tool* t, PyObject* unused)
{
    return PyLong_FromLong(uv_backend_fd(futoin_tool_uv_loop(t->tool)));
}

static PyObject* tool_backend_timeout(fpy_tool* t, PyObject* unused)
{
    return PyLong_FromLong(uv_backend_timeout(futoin_tool_uv_loop(t->tool)));
}

static PyObject* tool_ptr(fpy_tool* t, void* c)
{
    return PyLong_FromVoidPtr(t->tool);
}

static PyObject* tool_uv_loop(fpy_tool* t, PyObject* unused)
{
    return PyLong_FromVoidPtr(futoin_tool_uv_loop(t->tool));
}

static void tr_timer(void* data)
{
    fpy_timer* tm = data;
    fpy_gil g;
    PyObject *key, *fn, *res;
    gil_enter(&g);
    key = PyLong_FromVoidPtr(tm);
    fn = key ? PyDict_GetItemWithError(tm->tool->timers, key) : NULL;
    if (fn) {
        Py_INCREF(fn);
        PyDict_DelItem(tm->tool->timers, key);
        PyMem_Free(tm);
        res = PyObject_CallNoArgs(fn);
        if (res) {
            Py_DECREF(res);
        } else if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)
                   || PyErr_ExceptionMatches(PyExc_SystemExit)) {
            PyObject *tt, *v, *tb;
            PyErr_Fetch(&tt, &v, &tb);
            if (!T.fatal_t) {
                T.fatal_t = tt;
                T.fatal_v = v;
                T.fatal_tb = tb;
            } else {
                Py_XDECREF(tt);
                Py_XDECREF(v);
                Py_XDECREF(tb);
            }
        } else {
            PyErr_WriteUnraisable(fn);
        }
        Py_DECREF(fn);
    }
    PyErr_Clear();
    Py_XDECREF(key);
    gil_leave(&g);
}

static PyObject* schedule(fpy_tool* t, uint32_t ms, int deferred, PyObject* fn)
{
    fpy_timer* tm;
    PyObject* key;
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "callable expected");
        return NULL;
    }
    tm = PyMem_Malloc(sizeof(*tm));
    if (!tm) {
        return PyErr_NoMemory();
    }
    tm->tool = t;
    key = PyLong_FromVoidPtr(tm);
    if (!key || PyDict_SetItem(t->timers, key, fn) < 0) {
        Py_XDECREF(key);
        PyMem_Free(tm);
        return NULL;
    }
    if (deferred) {
        tm->h = futoin_tool_deferred(t->tool, ms, tr_timer, tm);
    } else {
        tm->h = futoin_tool_immediate(t->tool, tr_timer, tm);
    }
    return key;
}

static PyObject* tool_immediate(fpy_tool* t, PyObject* fn)
{
    return schedule(t, 0, 0, fn);
}

static PyObject* tool_deferred(fpy_tool* t, PyObject* const* args, Py_ssize_t n)
{
    unsigned long ms;
    if (n != 2) {
        PyErr_SetString(PyExc_TypeError, "deferred(delay_ms, fn)");
        return NULL;
    }
    ms = PyLong_AsUnsignedLong(args[0]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    return schedule(t, (uint32_t)ms, 1, args[1]);
}

static PyObject* tool_cancel(fpy_tool* t, PyObject* key)
{
    fpy_timer* tm;
    PyObject* fn = PyDict_GetItemWithError(t->timers, key);
    if (!fn) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_FALSE;
    }
    tm = PyLong_AsVoidPtr(key);
    futoin_tool_cancel(t->tool, &tm->h);
    PyMem_Free(tm);
    if (PyDict_DelItem(t->timers, key) < 0) {
        return NULL;
    }
    Py_RETURN_TRUE;
}

static PyObject* tool_is_same_thread(fpy_tool* t, PyObject* unused)
{
    return PyBool_FromLong(futoin_tool_is_same_thread(t->tool));
}

static PyObject* tool_misuse_count(fpy_tool* t, PyObject* unused)
{
    return PyLong_FromSize_t(futoin_tool_misuse_count(t->tool));
}

static PyObject* tool_flows(fpy_tool* t, void* c)
{
    return PyLong_FromSsize_t(t->flows ? PyList_GET_SIZE(t->flows) : 0);
}

static PyMethodDef tool_methods[] = {
    M("run", tool_run, METH_NOARGS),
    M("run_nowait", tool_run_nowait, METH_NOARGS),
    M("backend_fd", tool_backend_fd, METH_NOARGS),
    M("backend_timeout", tool_backend_timeout, METH_NOARGS),
    M("uv_loop", tool_uv_loop, METH_NOARGS),
    M("immediate", tool_immediate, METH_O),
    M("deferred", tool_deferred, METH_FASTCALL),
    M("cancel", tool_cancel, METH_O),
    M("is_same_thread", tool_is_same_thread, METH_NOARGS),
    M("misuse_count", tool_misuse_count, METH_NOARGS),
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef tool_getset[] = {
    {"ptr", (getter)tool_ptr, NULL, "the futoin_tool* address", NULL},
    {"executing", (getter)tool_flows, NULL, "roots kept alive by execute()", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject fpy_tool_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "futoin_async._core.ToolBase",
    .tp_basicsize = sizeof(fpy_tool),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "AsyncTool: one libuv event loop",
    .tp_methods = tool_methods,
    .tp_getset = tool_getset,
    .tp_init = (initproc)tool_init,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)tool_dealloc,
    .tp_traverse = (traverseproc)tool_traverse,
    .tp_clear = (inquiry)tool_clear,
};

/* ---- module ------------------------------------------------------------- */

static PyObject* set_types(PyObject* self, PyObject* const* args, Py_ssize_t n)
{
    if (n != 3 || !PyType_Check(args[0])
        || !PyType_IsSubtype((PyTypeObject*)args[0], &fpy_as_type)) {
        PyErr_SetString(PyExc_TypeError, "_set_types(steps_cls, state_cls, error_cls)");
        return NULL;
    }
    Py_XSETREF(step_type, (PyTypeObject*)Py_NewRef(args[0]));
    Py_XSETREF(state_type, Py_NewRef(args[1]));
    Py_XSETREF(error_type, Py_NewRef(args[2]));
    Py_CLEAR(as_cache);
    Py_RETURN_NONE;
}

static PyObject* pending_releases(PyObject* self, PyObject* unused)
{
    return PyLong_FromSize_t(T.n);
}

/* Round trip through FutoInBinaryValue, for tests of the conversion. */
static PyObject* roundtrip(PyObject* self, PyObject* o)
{
    FutoInBinaryValue v;
    PyObject* r;
    if (futoin_py_to_binval(o, &v) < 0) {
        return NULL;
    }
    r = futoin_py_from_binval(&v);
    {
        PyObject* tn = PyLong_FromLong(v.type->flags);
        PyObject* t = r && tn ? PyTuple_Pack(2, r, tn) : NULL;
        Py_XDECREF(r);
        Py_XDECREF(tn);
        futoin_reset_binval(&v);
        return t;
    }
}

static PyMethodDef mod_methods[] = {
    M("_set_types", set_types, METH_FASTCALL),
    M("_pending_releases", pending_releases, METH_NOARGS),
    M("_roundtrip", roundtrip, METH_O),
    {NULL, NULL, 0, NULL},
};

int futoin_py_init(PyObject* m)
{
    if (PyType_Ready(&fpy_as_type) < 0 || PyType_Ready(&fpy_tool_type) < 0) {
        return -1;
    }
    step_type = (PyTypeObject*)Py_NewRef((PyObject*)&fpy_as_type);
    if (PyModule_AddObjectRef(m, "AsyncStepsBase", (PyObject*)&fpy_as_type) < 0
        || PyModule_AddObjectRef(m, "ToolBase", (PyObject*)&fpy_tool_type) < 0) {
        return -1;
    }
    for (PyMethodDef* d = mod_methods; d->ml_name; ++d) {
        PyObject* f = PyCFunction_New(d, NULL);
        if (!f || PyModule_AddObject(m, d->ml_name, f) < 0) {
            Py_XDECREF(f);
            return -1;
        }
    }
    return 0;
}
