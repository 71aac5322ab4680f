/*
 * AsyncSteps for Python: the trampolines that run Python callables as
 * steps, error, cancel and loop callbacks, and the operations behind the
 * SWIG-generated methods of AsyncStepsBase (bindings/python/futoin_python.i).
 *
 * Everything goes through the adapter layer (futoin/sys/wrap.h), so the
 * same code drives our handles and any other FTN12 implementation's.
 *
 * One Python object per step call would cost as much as the step itself;
 * the trampolines keep one spare object (as_cache) and reuse it whenever
 * the step did not keep a reference to its `asi`.
 *
 * "error() raises": asi.error() calls handle_error, then raises a
 * FutoInError marked as handled, which the trampoline swallows. Any other
 * exception becomes InternalError with its text in error_info and the
 * exception itself as last_exception. KeyboardInterrupt and SystemExit
 * cancel the root and are re-raised from run() (py_gil.c keeps them).
 */
#include "futoin_py.h"

#include <stdlib.h>
#include <string.h>

/* A callable (and its error handler) handed to C; released exactly once by
 * the runtime's release hook. The hook may run without the GIL; the record
 * is then freed by the next GIL holder (py_gil.c), so pymalloc serves it. */
typedef struct fpy_rec
{
    PyObject* fn;
    PyObject* eh;
    FutoInAsyncSteps* root; /* our root handle or NULL: to cancel on Ctrl-C */
    fpy_steps* owner;       /* execute(): the root kept alive by its tool */
} fpy_rec;

static PyTypeObject* base_type;  /* SWIG's AsyncStepsBase */
static PyTypeObject* step_type;  /* the Python layer's AsyncSteps */
static PyObject* state_type;     /* State(dict) */
static PyObject* error_type;     /* FutoInError */
static PyObject* as_cache;       /* one spare step object */

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
    r->owner = NULL;
    return r;
}

static void rec_free(void* data)
{
    fpy_rec* r = data;
    Py_XDECREF(r->fn);
    Py_XDECREF(r->eh);
    PyMem_Free(r);
}

/* The runtime's release hook: runs once per record, on the loop thread. */
static void rec_release(void* data)
{
    fpy_release(rec_free, data);
}

int fpy_set_types(PyTypeObject* base, PyObject* steps_cls,
                  PyObject* state_cls, PyObject* error_cls)
{
    if (!PyType_Check(steps_cls)
        || !PyType_IsSubtype((PyTypeObject*)steps_cls, base)) {
        PyErr_SetString(PyExc_TypeError,
                        "_set_types(steps_cls, state_cls, error_cls): "
                        "steps_cls must derive from AsyncStepsBase");
        return -1;
    }
    base_type = base;
    Py_XSETREF(step_type, (PyTypeObject*)Py_NewRef(steps_cls));
    Py_XSETREF(state_type, Py_NewRef(state_cls));
    Py_XSETREF(error_type, Py_NewRef(error_cls));
    Py_CLEAR(as_cache);
    return 0;
}

static fpy_steps* steps_alloc(void)
{
    fpy_steps* s = PyMem_Calloc(1, sizeof(*s));
    if (!s) {
        PyErr_NoMemory();
    }
    return s;
}

/* An object of `type` for handle `bsi`; steals nothing. */
static PyObject* obj_for(PyTypeObject* type, FutoInAsyncSteps* bsi,
                         FutoInAsyncSteps* root, int kind)
{
    fpy_steps* s = steps_alloc();
    PyObject* o;
    if (!s) {
        return NULL;
    }
    s->bsi = bsi;
    s->root = root;
    s->kind = kind;
    o = fpy_obj_new(type, s);
    if (!o) {
        PyMem_Free(s);
    }
    return o;
}

static PyObject* as_new(FutoInAsyncSteps* bsi, FutoInAsyncSteps* root)
{
    PyObject* o = as_cache;
    fpy_steps* s;
    if (!o) {
        return obj_for(step_type ? step_type : base_type, bsi, root, FPY_STEP);
    }
    as_cache = NULL;
    s = fpy_obj_steps(o);
    s->bsi = bsi;
    s->root = root;
    return o;
}

static void as_done(PyObject* o)
{
    if (Py_REFCNT(o) == 1 && !as_cache && Py_TYPE(o) == step_type) {
        fpy_obj_steps(o)->bsi = NULL; /* a cached object refers to nothing */
        as_cache = o;
        return;
    }
    Py_DECREF(o);
}

fpy_steps* fpy_steps_new_root(PyObject* tool_obj, fpy_tool* tool)
{
    fpy_steps* s = steps_alloc();
    if (!s) {
        return NULL;
    }
    s->bsi = futoin_root_new(tool->tool);
    if (!s->bsi) {
        PyMem_Free(s);
        PyErr_NoMemory();
        return NULL;
    }
    s->root = s->bsi;
    s->kind = FPY_ROOT;
    s->tool_obj = Py_NewRef(tool_obj);
    s->tool = tool;
    return s;
}

void fpy_steps_destroy(fpy_steps* s)
{
    if (!s) {
        return;
    }
    if (s->kind == FPY_ROOT && s->bsi) {
        FutoInAsyncSteps* b = s->bsi;
        s->bsi = NULL;
        b->api->free(b);
    }
    Py_CLEAR(s->tool_obj);
    PyMem_Free(s);
}

/* AsyncStepsBase._wrap(cls, address, owned, tool) */
PyObject* fpy_steps_wrap(PyObject* cls, PyObject* address, PyObject* owned,
                         PyObject* tool)
{
    FutoInAsyncSteps* b;
    PyObject* o;
    fpy_steps* s;
    int own;
    if (!PyType_Check(cls) || !base_type
        || !PyType_IsSubtype((PyTypeObject*)cls, base_type)) {
        PyErr_SetString(PyExc_TypeError, "_wrap(): cls must derive from AsyncStepsBase");
        return NULL;
    }
    b = PyLong_AsVoidPtr(address);
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
    own = owned ? PyObject_IsTrue(owned) : 0;
    if (own < 0) {
        return NULL;
    }
    o = obj_for((PyTypeObject*)cls, b, NULL, own ? FPY_ROOT : FPY_BORROWED);
    if (!o) {
        return NULL;
    }
    s = fpy_obj_steps(o);
    if (own && futoin_wrap_is_ours(b)) {
        s->root = b;
    }
    if (tool && tool != Py_None) {
        s->tool_obj = Py_NewRef(tool);
        s->tool = NULL; /* a wrapped root is not kept alive by execute() */
    }
    return o;
}

/* ---- exceptions from Python code ---------------------------------------- */

/* KeyboardInterrupt / SystemExit: keep it for run(), cancel the root, and
 * stop the loop if our run() is driving it (never a loop run by others). */
static void on_fatal(FutoInAsyncSteps* bsi, FutoInAsyncSteps* root)
{
    futoin_tool* tool = futoin_async_tool(bsi);
    fpy_store_fatal();
    if (root) {
        root->api->cancel(root);
    }
    if (tool && fpy_in_run()) {
        uv_stop(futoin_tool_uv_loop(tool));
    }
}

/* A Python exception escaped a step, loop body or error handler. */
static void on_exception(FutoInAsyncSteps* bsi, FutoInAsyncSteps* root)
{
    PyObject *t, *v, *tb, *code = NULL, *info = NULL, *s = NULL;
    FutoInBinaryValue ex;
    const char* ccode;
    const char* cinfo = NULL;

    if (fpy_is_fatal()) {
        on_fatal(bsi, root);
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
        fpy_set_custom(&ex, v);
        futoin_wrap_set_last_exception(bsi, &ex);
    }
    bsi->api->handle_error(bsi, ccode ? ccode : FUTOIN_ERR_INTERNAL_ERROR, cinfo);
out:
    PyErr_Clear();
    Py_XDECREF(code);
    Py_XDECREF(info);
    Py_XDECREF(s);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
}

/* Exceptions where no flow can take them (cancel handlers, unhandled-error
 * callbacks): fatal ones are kept for run(), others printed. */
static void on_callback_exception(FutoInAsyncSteps* bsi, fpy_rec* r)
{
    if (fpy_is_fatal()) {
        on_fatal(bsi, r->root);
    } else {
        PyErr_WriteUnraisable(r->fn);
    }
}

/* ---- trampolines -------------------------------------------------------- */

/* What follows `asi` in the call; built after the GIL is taken. */
enum { EXTRA_NONE, EXTRA_VALUES, EXTRA_CODE, EXTRA_INDEX };

static void sync_error_state(FutoInAsyncSteps* bsi);

/* Call fn(asi, *extra) as code of `bsi`: a step, loop body or error handler
 * (in_flow: its exceptions go to the flow) or a cancel handler. */
static void call_step(FutoInAsyncSteps* bsi, fpy_rec* r, PyObject* fn,
                      int in_flow, int kind, const FutoInArgs* args,
                      const char* code, size_t index)
{
    fpy_gil g;
    PyObject* stack[5];
    PyObject *a, *res;
    size_t n = 1, i;

    fpy_gil_enter(&g);
    a = as_new(bsi, r->root);
    if (!a) {
        goto fail;
    }
    stack[0] = a;
    switch (kind) {
    case EXTRA_VALUES:
        for (i = 0; i < 4 && args->args[i].type; ++i) {
            PyObject* o = futoin_py_from_binval(&args->args[i]);
            if (!o) {
                goto fail;
            }
            stack[n++] = o;
        }
        break;
    case EXTRA_CODE:
        sync_error_state(bsi);
        if (!(stack[n] = PyUnicode_FromString(code ? code : ""))) {
            goto fail;
        }
        ++n;
        break;
    case EXTRA_INDEX:
        if (!(stack[n] = PyLong_FromSize_t(index))) {
            goto fail;
        }
        ++n;
        break;
    default:
        break;
    }
    res = PyObject_Vectorcall(fn, stack, n, NULL);
    if (res) {
        Py_DECREF(res);
    } else if (in_flow) {
        on_exception(bsi, r->root);
    } else {
        on_callback_exception(bsi, r);
    }
    for (i = 1; i < n; ++i) {
        Py_DECREF(stack[i]);
    }
    as_done(a);
    fpy_gil_leave(&g);
    return;
fail:
    /* out of memory building the call */
    PyErr_Clear();
    for (i = 1; i < n; ++i) {
        Py_DECREF(stack[i]);
    }
    if (a) {
        as_done(a);
    }
    if (in_flow) {
        bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR, "out of memory");
    }
    fpy_gil_leave(&g);
}

static void tr_step(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    fpy_rec* r = data;
    call_step(bsi, r, r->fn, 1,
              (args && args->args[0].type) ? EXTRA_VALUES : EXTRA_NONE, args,
              NULL, 0);
}

static void tr_error(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    fpy_rec* r = data;
    call_step(bsi, r, r->eh, 1, EXTRA_CODE, NULL, code, 0);
}

static void tr_cancel(FutoInAsyncSteps* bsi, void* data)
{
    fpy_rec* r = data;
    call_step(bsi, r, r->fn, 0, EXTRA_NONE, NULL, NULL, 0);
}

static void tr_loop(FutoInAsyncSteps* bsi, void* data)
{
    fpy_rec* r = data;
    call_step(bsi, r, r->fn, 1, EXTRA_NONE, NULL, NULL, 0);
}

static void tr_repeat(FutoInAsyncSteps* bsi, void* data, size_t i)
{
    fpy_rec* r = data;
    call_step(bsi, r, r->fn, 1, EXTRA_INDEX, NULL, NULL, i);
}

/* error_info of the last error (str), or None. */
static PyObject* error_info_of(FutoInAsyncSteps* bsi)
{
    const char* info = futoin_wrap_error_info(bsi);
    if (info) {
        return PyUnicode_FromString(info);
    }
    Py_RETURN_NONE;
}

/* The Python exception of the last error, else its code, else None. */
static PyObject* last_exception_of(FutoInAsyncSteps* bsi)
{
    PyObject* o = fpy_custom_of(futoin_wrap_last_exception(bsi));
    const char* code;
    if (o) {
        return Py_NewRef(o);
    }
    code = futoin_wrap_error_code(bsi);
    if (code) {
        return PyUnicode_FromString(code);
    }
    Py_RETURN_NONE;
}

/* execute()'s unhandled-error callback: fn(code, error_info, last_exception)
 * when one was given. No flow can take an exception raised there: it is
 * printed. The root has finished: its tool stops keeping it alive. */
static void tr_unhandled(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    fpy_rec* r = data;
    fpy_gil g;
    PyObject *res = NULL, *ei, *le;
    fpy_gil_enter(&g);
    if (r->fn) {
        ei = error_info_of(bsi);
        le = last_exception_of(bsi);
        if (ei && le) {
            res = PyObject_CallFunction(r->fn, "sOO", code ? code : "", ei, le);
        }
        Py_XDECREF(ei);
        Py_XDECREF(le);
        if (res) {
            Py_DECREF(res);
        } else {
            on_callback_exception(bsi, r);
        }
    }
    if (r->owner) {
        fpy_tool_root_done(r->owner);
    }
    fpy_gil_leave(&g);
}

/* The last step execute() adds to a root of ours: the root has finished. */
static void tr_finished(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    fpy_gil g;
    (void)bsi;
    (void)args;
    fpy_gil_enter(&g);
    fpy_tool_root_done(data);
    fpy_gil_leave(&g);
}

/* ---- state and error state ---------------------------------------------- */

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
    fpy_release_obj(value);
}

static PyObject* state_dict(FutoInAsyncSteps* bsi)
{
    return bsi->api->stateVariable(bsi, NULL, "python.state", st_alloc,
                                   st_cleanup);
}

/* Mirror error_info / last_exception into the Python state (spec §1.7). */
static void sync_error_state(FutoInAsyncSteps* bsi)
{
    PyObject* d = state_dict(bsi);
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

/* ---- operations behind AsyncStepsBase's methods ------------------------- */

static int live(fpy_steps* s)
{
    if (!s || !s->bsi) {
        PyErr_SetString(PyExc_RuntimeError, "AsyncSteps handle is closed");
        return 0;
    }
    return 1;
}

static PyObject* none_to_null(PyObject* o)
{
    return (o == Py_None) ? NULL : o;
}

static int check_callables(const char* what, PyObject* fn, PyObject* eh)
{
    if ((fn && !PyCallable_Check(fn)) || (eh && !PyCallable_Check(eh))) {
        PyErr_Format(PyExc_TypeError, "%s: callable expected", what);
        return -1;
    }
    return 0;
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

PyObject* fpy_add(fpy_steps* s, PyObject* self, PyObject* fn, PyObject* eh)
{
    fpy_rec* r;
    if (!live(s)) {
        return NULL;
    }
    eh = none_to_null(eh);
    if (check_callables("add(step, onerror=None)", fn, eh) < 0) {
        return NULL;
    }
    r = rec_new(fn, eh, s->root);
    if (!r) {
        return NULL;
    }
    futoin_wrap_add(s->bsi, r, tr_step, eh ? tr_error : NULL, rec_release);
    return Py_NewRef(self);
}

PyObject* fpy_parallel(fpy_steps* s, PyObject* eh)
{
    fpy_rec* r = NULL;
    FutoInAsyncSteps* p;
    if (!live(s)) {
        return NULL;
    }
    eh = none_to_null(eh);
    if (eh) {
        if (check_callables("parallel(onerror=None)", NULL, eh) < 0) {
            return NULL;
        }
        r = rec_new(NULL, eh, s->root);
        if (!r) {
            return NULL;
        }
    }
    p = futoin_wrap_parallel(s->bsi, r, r ? tr_error : NULL,
                             r ? rec_release : NULL);
    if (!p) {
        PyErr_SetString(PyExc_RuntimeError, "parallel() refused");
        return NULL;
    }
    return obj_for(step_type ? step_type : base_type, p, s->root, FPY_STEP);
}

PyObject* fpy_success(fpy_steps* s, PyObject* const* v, Py_ssize_t n)
{
    FutoInArgs fa;
    if (!live(s)) {
        return NULL;
    }
    if (n == 0) {
        s->bsi->api->success(s->bsi, NULL);
        Py_RETURN_NONE;
    }
    if (fpy_args_from(v, n, &fa) < 0) {
        return NULL;
    }
    s->bsi->api->success(s->bsi, &fa);
    fpy_args_reset(&fa); /* no-op after a move; frees if refused */
    Py_RETURN_NONE;
}

PyObject* fpy_success_step(fpy_steps* s, PyObject* self, PyObject* const* v,
                           Py_ssize_t n)
{
    FutoInArgs fa;
    if (!live(s)) {
        return NULL;
    }
    if (fpy_args_from(v, n, &fa) < 0) {
        return NULL;
    }
    futoin_wrap_success_step(s->bsi, &fa);
    fpy_args_reset(&fa);
    return Py_NewRef(self);
}

/* A FutoInError(code, info) marked as handled: the trampoline that catches
 * it does not report it again. */
static PyObject* handled_error(PyObject* code, PyObject* info)
{
    PyObject* exc = PyObject_CallFunctionObjArgs(error_type, code, info, NULL);
    if (exc && PyObject_SetAttrString(exc, "_handled", Py_True) < 0) {
        Py_CLEAR(exc);
    }
    return exc;
}

/* error(code, info=None): handle_error, then raise FutoInError. */
PyObject* fpy_error(fpy_steps* s, PyObject* code, PyObject* info)
{
    const char* ccode;
    const char* cinfo = NULL;
    FutoInBinaryValue ex;
    PyObject* exc;
    if (!live(s)) {
        return NULL;
    }
    if (!info) {
        info = Py_None;
    }
    if (!PyUnicode_Check(code)) {
        PyErr_SetString(PyExc_TypeError, "error(code: str, info=None)");
        return NULL;
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
    exc = handled_error(code, info);
    if (!exc) {
        return NULL;
    }
    fpy_set_custom(&ex, exc);
    futoin_wrap_set_last_exception(s->bsi, &ex);
    s->bsi->api->handle_error(s->bsi, ccode, cinfo);
    PyErr_SetObject(error_type, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject* fpy_set_timeout(fpy_steps* s, PyObject* arg)
{
    unsigned long ms;
    if (!live(s)) {
        return NULL;
    }
    if (PyFloat_Check(arg)) {
        double d = PyFloat_AsDouble(arg);
        ms = d < 0 ? 0 : (d > (double)UINT32_MAX ? UINT32_MAX : (unsigned long)d);
    } else {
        ms = PyLong_AsUnsignedLong(arg);
        if (PyErr_Occurred()) {
            return NULL;
        }
    }
    s->bsi->api->setTimeout(s->bsi, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
    Py_RETURN_NONE;
}

PyObject* fpy_set_cancel(fpy_steps* s, PyObject* fn)
{
    fpy_rec* r;
    if (!live(s) || check_callables("set_cancel(handler)", fn, NULL) < 0) {
        return NULL;
    }
    r = rec_new(fn, NULL, s->root);
    if (!r) {
        return NULL;
    }
    futoin_wrap_set_cancel(s->bsi, r, tr_cancel, rec_release);
    Py_RETURN_NONE;
}

PyObject* fpy_wait_external(fpy_steps* s)
{
    if (!live(s)) {
        return NULL;
    }
    s->bsi->api->waitExternal(s->bsi);
    Py_RETURN_NONE;
}

PyObject* fpy_loop(fpy_steps* s, PyObject* self, PyObject* fn, PyObject* label)
{
    const char* l;
    fpy_rec* r;
    if (!live(s) || check_callables("loop(body, label=None)", fn, NULL) < 0
        || label_arg(label, &l) < 0) {
        return NULL;
    }
    r = rec_new(fn, NULL, s->root);
    if (!r) {
        return NULL;
    }
    futoin_wrap_loop(s->bsi, r, tr_loop, l, rec_release);
    return Py_NewRef(self);
}

PyObject* fpy_repeat(fpy_steps* s, PyObject* self, PyObject* count,
                     PyObject* fn, PyObject* label)
{
    const char* l;
    size_t c;
    fpy_rec* r;
    if (!live(s)
        || check_callables("repeat(count, body, label=None)", fn, NULL) < 0) {
        return NULL;
    }
    c = PyLong_AsSize_t(count);
    if (c == (size_t)-1 && PyErr_Occurred()) {
        return NULL;
    }
    if (label_arg(label, &l) < 0) {
        return NULL;
    }
    r = rec_new(fn, NULL, s->root);
    if (!r) {
        return NULL;
    }
    futoin_wrap_repeat(s->bsi, r, c, tr_repeat, l, rec_release);
    return Py_NewRef(self);
}

/* break_loop()/continue_loop() leave the calling Python code as the JS
 * reference's break()/continue() do: the runtime is told first, then a
 * handled FutoInError ("LoopBreak"/"LoopCont") unwinds to the trampoline,
 * which drops it. */
static PyObject* raise_handled(const char* code)
{
    PyObject* c = PyUnicode_FromString(code);
    PyObject* exc = c ? handled_error(c, Py_None) : NULL;
    Py_XDECREF(c);
    if (exc) {
        PyErr_SetObject(error_type, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

PyObject* fpy_break(fpy_steps* s, PyObject* label)
{
    const char* l;
    if (!live(s) || label_arg(label, &l) < 0) {
        return NULL;
    }
    s->bsi->api->breakLoop(s->bsi, l);
    return raise_handled("LoopBreak");
}

PyObject* fpy_continue(fpy_steps* s, PyObject* label)
{
    const char* l;
    if (!live(s) || label_arg(label, &l) < 0) {
        return NULL;
    }
    s->bsi->api->continueLoop(s->bsi, l);
    return raise_handled("LoopCont");
}

PyObject* fpy_sync(fpy_steps* s, PyObject* self, PyObject* obj, PyObject* fn,
                   PyObject* eh)
{
    FutoInSync* so;
    PyObject* p;
    fpy_rec* r;
    if (!live(s)) {
        return NULL;
    }
    eh = none_to_null(eh);
    if (check_callables("sync(obj, step, onerror=None)", fn, eh) < 0) {
        return NULL;
    }
    p = PyObject_GetAttrString(obj, "ptr");
    if (!p) {
        return NULL;
    }
    so = PyLong_AsVoidPtr(p);
    Py_DECREF(p);
    if (!so) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "sync(): object is closed");
        }
        return NULL;
    }
    r = rec_new(fn, eh, s->root);
    if (!r) {
        return NULL;
    }
    futoin_wrap_add_sync(s->bsi, so, r, tr_step, eh ? tr_error : NULL,
                         rec_release);
    return Py_NewRef(self);
}

/* execute(unhandled=None). A root of our Tool is kept alive by the tool
 * while it runs: from here until its last step, an unhandled error or a
 * cancel() from Python (or until the loop idles, whatever comes first). */
PyObject* fpy_execute(fpy_steps* s, PyObject* self, PyObject* fn)
{
    fpy_rec* r;
    if (!live(s)) {
        return NULL;
    }
    fn = none_to_null(fn);
    if (check_callables("execute(unhandled=None)", fn, NULL) < 0) {
        return NULL;
    }
    r = rec_new(fn, NULL, s->root);
    if (!r) {
        return NULL;
    }
    if (s->tool && s->kind == FPY_ROOT) {
        PyObject* key = PyLong_FromVoidPtr(s);
        PyObject* token = PyTuple_Pack(1, self);
        int rc = (key && token) ? PyDict_SetItem(s->tool->flows, key, token) : -1;
        Py_XDECREF(key);
        Py_XDECREF(token);
        if (rc < 0) {
            rec_free(r);
            return NULL;
        }
        r->owner = s;
        futoin_wrap_add(s->bsi, s, tr_finished, NULL, NULL);
    }
    futoin_wrap_execute(s->bsi, r, tr_unhandled, rec_release);
    Py_RETURN_NONE;
}

PyObject* fpy_cancel(fpy_steps* s)
{
    if (!live(s)) {
        return NULL;
    }
    s->bsi->api->cancel(s->bsi);
    if (s->kind == FPY_ROOT) {
        fpy_tool_root_done(s);
    }
    Py_RETURN_NONE;
}

PyObject* fpy_new_instance(fpy_steps* s)
{
    FutoInAsyncSteps* b;
    PyObject* o;
    if (!live(s)) {
        return NULL;
    }
    b = s->bsi->api->newInstance(s->bsi);
    if (!b) {
        PyErr_SetString(PyExc_RuntimeError, "newInstance() failed");
        return NULL;
    }
    o = obj_for(step_type ? step_type : base_type, b,
                futoin_wrap_is_ours(b) ? b : NULL, FPY_ROOT);
    if (!o) {
        b->api->free(b);
    }
    return o;
}

PyObject* fpy_free(fpy_steps* s)
{
    if (s && s->kind == FPY_ROOT && s->bsi) {
        FutoInAsyncSteps* b = s->bsi;
        s->bsi = NULL;
        b->api->free(b);
        fpy_tool_root_done(s);
    }
    Py_RETURN_NONE;
}

PyObject* fpy_state(fpy_steps* s)
{
    PyObject* d;
    if (!live(s)) {
        return NULL;
    }
    d = state_dict(s->bsi);
    if (!d) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_RuntimeError, "state is not available");
        }
        return NULL;
    }
    return Py_NewRef(d); /* the dict is owned by the root */
}

PyObject* fpy_error_info(fpy_steps* s)
{
    return live(s) ? error_info_of(s->bsi) : NULL;
}

PyObject* fpy_last_exception(fpy_steps* s)
{
    return live(s) ? last_exception_of(s->bsi) : NULL;
}

PyObject* fpy_root_id(fpy_steps* s)
{
    if (!live(s)) {
        return NULL;
    }
    return PyLong_FromSsize_t(s->bsi->api->rootId(s->bsi));
}

PyObject* fpy_is_valid(fpy_steps* s)
{
    if (!s || !s->bsi) {
        Py_RETURN_FALSE;
    }
    return PyBool_FromLong(s->bsi->api->isValid(s->bsi));
}

PyObject* fpy_is_same_thread(fpy_steps* s)
{
    if (!live(s)) {
        return NULL;
    }
    return PyBool_FromLong(s->bsi->api->is_same_thread(s->bsi));
}

PyObject* fpy_binary(fpy_steps* s)
{
    if (!live(s)) {
        return NULL;
    }
    return PyLong_FromVoidPtr(s->bsi);
}

PyObject* fpy_is_ours(fpy_steps* s)
{
    if (!live(s)) {
        return NULL;
    }
    return PyBool_FromLong(futoin_wrap_is_ours(s->bsi));
}

PyObject* fpy_tool_ptr_of(fpy_steps* s)
{
    if (!live(s)) {
        return NULL;
    }
    return PyLong_FromVoidPtr(futoin_async_tool(s->bsi));
}

PyObject* fpy_tool_of(fpy_steps* s)
{
    if (s && s->tool_obj) {
        return Py_NewRef(s->tool_obj);
    }
    Py_RETURN_NONE;
}
