/*
 * AsyncSteps for Python: the trampolines that run Python callables as
 * steps, error, cancel and loop callbacks, and the operations behind the
 * methods of AsyncSteps (the type itself is in py_types.c).
 *
 * Everything goes through the adapter layer (futoin/sys/wrap.h), so the
 * same code drives our handles and any other FTN12 implementation's.
 *
 * One Python object per step call would cost as much as the step itself;
 * the trampolines keep one spare object (as_cache) and reuse it whenever
 * the step did not keep a reference to its `asi`.
 *
 * "error() raises": asi.error() calls handle_error (the code's exception
 * as last_exception), then leaves the calling code with the private Unwind,
 * a BaseException that `except Exception`/`except FutoInError` in step
 * code do not stop and the trampoline swallows; break_loop() and
 * continue_loop() raise it the same way. Any other exception becomes its
 * FutoInError code, or InternalError with its text in error_info, and the
 * exception itself as last_exception. KeyboardInterrupt and SystemExit
 * cancel the root and are re-raised from run() (py_gil.c keeps them); in a
 * flow hosted by another language they fail the step (on_fatal).
 *
 * Misuse is raised at the call site: calls that only a step's own callback
 * may make are checked against the handle whose callback runs now
 * (fpy_T.cur), root-only and step-only calls against the object's kind,
 * other threads against the tool's loop thread, and whatever the library
 * still reports through a Tool's misuse callback during a call
 * (fpy_check_begin/end) becomes InvalidStateError.
 */
#include "futoin_py.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* A step callable with its error handler, handed to C as one record;
 * released exactly once by the runtime's release hook. The hook may run
 * without the GIL; the record is then freed by the next GIL holder
 * (py_gil.c), so pymalloc serves it. A callable without an error handler
 * (most steps, loop bodies, cancel handlers) is handed over as itself: one
 * allocation less per step. */
typedef struct fpy_rec
{
    PyObject* fn;
    PyObject* eh;
} fpy_rec;

enum { EXEC_CALL, EXEC_FUTURE, EXEC_AWAITER };

/* One execute() of a root: its last step, its unhandled-error callback and
 * the check for a cancelled flow share it (refs). It settles exactly once:
 * with the last step's values, an unhandled error, or as cancelled. */
typedef struct fpy_exec
{
    int refs;
    int settled;
    PyObject* unhandled;  /* the user's unhandled(code, info, last), or NULL */
    PyObject* on_success; /* the user's on_success(*values), or NULL */
    PyObject* on_result;  /* on_result(exc, value), or NULL */
    int mode;             /* what on_result is: EXEC_CALL, EXEC_FUTURE, EXEC_AWAITER */
    PyObject* fut_cb;     /* EXEC_FUTURE: the future's done callback */
    fpy_steps* owner;     /* the root object (borrowed; NULL once it died) */
    futoin_tool* ftool;   /* our tool of the root, or NULL (foreign) */
    FutoInAsyncSteps* root;
} fpy_exec;

#define step_type (&fpy_steps_type)
static PyObject* hooks_dict;     /* all hooks, by name */
static PyObject* state_type;     /* State(dict) */
static PyObject* make_error;     /* make_error(code, info) -> FutoInError */
static PyObject* flow_error;     /* flow_error(code, info, last) -> exception */
static PyObject* cancelled_type; /* CancelledError */
static PyObject* unwind_type;    /* the private exception error(),
                                    break_loop(), continue_loop() raise */
static PyObject* error_type;     /* FutoInError */
static PyObject* await_step;     /* await_step(asi, awaitable) */
static PyObject* invalid_state;  /* InvalidStateError */
static PyObject* future_type;    /* asyncio.Future */
static PyObject* as_cache;       /* one spare step object */
static const FutoInAsyncStepsAPI* root_api; /* the table of our roots */

static PyObject* hook(PyObject* hooks, const char* name)
{
    PyObject* o = PyDict_GetItemString(hooks, name);
    if (!o) {
        PyErr_Format(PyExc_KeyError, "_set_types(): hook %s is missing", name);
        return NULL;
    }
    return Py_NewRef(o);
}

int fpy_set_types(PyObject* state_cls, PyObject* hooks)
{
    if (!PyDict_Check(hooks)) {
        PyErr_SetString(PyExc_TypeError, "_set_types(state_cls, hooks: dict)");
        return -1;
    }
    PyObject* me = hook(hooks, "make_error");
    PyObject* fe = hook(hooks, "flow_error");
    PyObject* ct = hook(hooks, "CancelledError");
    PyObject* lc = hook(hooks, "Unwind");
    PyObject* fe2 = hook(hooks, "FutoInError");
    PyObject* aw = hook(hooks, "await_step");
    PyObject* is = hook(hooks, "InvalidStateError");
    PyObject* ft = hook(hooks, "Future");
    if (!me || !fe || !ct || !lc || !aw || !is || !ft || !fe2) {
        Py_XDECREF(fe2);
        Py_XDECREF(ft);
        Py_XDECREF(me);
        Py_XDECREF(fe);
        Py_XDECREF(ct);
        Py_XDECREF(lc);
        Py_XDECREF(aw);
        Py_XDECREF(is);
        return -1;
    }
    Py_XSETREF(hooks_dict, Py_NewRef(hooks));
    Py_XSETREF(state_type, Py_NewRef(state_cls));
    Py_XSETREF(make_error, me);
    Py_XSETREF(flow_error, fe);
    Py_XSETREF(cancelled_type, ct);
    Py_XSETREF(unwind_type, lc);
    Py_XSETREF(await_step, aw);
    Py_XSETREF(invalid_state, is);
    Py_XSETREF(future_type, ft);
    Py_XSETREF(error_type, fe2);
    return 0;
}

PyObject* fpy_hook(const char* name)
{
    PyObject* o = hooks_dict ? PyDict_GetItemString(hooks_dict, name) : NULL;
    if (!o) {
        PyErr_Format(PyExc_RuntimeError, "futoin_async is not initialised (%s)", name);
    }
    return o;
}

PyObject* fpy_invalid_state(const char* fmt, ...)
{
    va_list ap;
    PyObject* msg;
    va_start(ap, fmt);
    msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (msg) {
        PyErr_SetObject(invalid_state ? invalid_state : PyExc_RuntimeError, msg);
        Py_DECREF(msg);
    }
    return NULL;
}

/* ---- records ------------------------------------------------------------ */

static fpy_rec* rec_new(PyObject* fn, PyObject* eh)
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
    return r;
}

static void rec_free(void* data)
{
    fpy_rec* r = data;
    Py_XDECREF(r->fn);
    Py_XDECREF(r->eh);
    PyMem_Free(r);
}

/* The runtime's release hooks: run once per record or callable, on the
 * loop thread. */
static void rec_release(void* data)
{
    fpy_release(rec_free, data);
}

static void obj_release(void* data)
{
    fpy_release_obj(data);
}

/* Where a step came from, for async stacks: computed from the callable
 * only when a stack is recorded (py_host.c). */
static void rec_origin(void* data, futoin_frame_origin* out)
{
    fpy_origin_of(((fpy_rec*)data)->fn, out);
}

static const futoin_step_class fn_class = {sizeof(futoin_step_class),
                                           obj_release, fpy_origin_fn};
static const futoin_step_class rec_class = {sizeof(futoin_step_class),
                                            rec_release, rec_origin};

/* ---- step objects ------------------------------------------------------- */

/* An object of `type` for handle `bsi`. */
static PyObject* obj_for(PyTypeObject* type, FutoInAsyncSteps* bsi, int kind)
{
    fpy_steps* s = fpy_steps_alloc(type ? type : &fpy_steps_type);
    if (!s) {
        return NULL;
    }
    s->bsi = bsi;
    s->kind = (unsigned short)kind;
    return (PyObject*)s;
}

static PyObject* as_new(FutoInAsyncSteps* bsi)
{
    fpy_steps* s = (fpy_steps*)as_cache;
    if (!s) {
        return obj_for(step_type, bsi, FPY_STEP);
    }
    as_cache = NULL;
    s->bsi = bsi;
    s->did = 0;
    return (PyObject*)s;
}

/* A handle kept past its callback (by a timer, a worker, a closure) must
 * never call through its FutoInAsyncSteps* once the step has ended: the
 * record is pooled and, after its quarantine, serves another step, so a
 * late success() would complete that one, and a tool freed by close()
 * takes the records with it. The handle therefore anchors a small stack()
 * allocation to its step whose cleanup, run by the runtime when the step's
 * frame ends (completion, timeout, cancel, root freed, tool closed), marks
 * the handle ended and drops the pointer. It holds the GIL meanwhile, so a
 * worker that holds the GIL while it completes the step sees either the
 * live record or an ended handle. */
static void keep_cleanup(void* slot)
{
    fpy_gil g;
    fpy_steps* s;
    fpy_gil_enter(&g);
    s = *(fpy_steps**)slot;
    if (s) {
        s->keep = NULL;
        s->bsi = NULL;
        s->ended = 1;
    }
    fpy_gil_leave(&g);
}

static void keep_track(fpy_steps* s)
{
    fpy_steps** slot;
    fpy_tool* t;
    if (s->keep || !s->bsi || !futoin_wrap_is_ours(s->bsi)
        || !s->bsi->api->is_same_thread(s->bsi)) {
        return;
    }
    fpy_check_begin();
    slot = s->bsi->api->stack(s->bsi, sizeof(*slot), keep_cleanup);
    --fpy_T.expect;
    fpy_T.misused = 0; /* refused (the step ended): nothing to anchor */
    if (!slot) {
        return;
    }
    *slot = s;
    s->keep = (void**)slot;
    if (!s->tool_obj && (t = fpy_tool_find(futoin_async_tool(s->bsi))) != NULL) {
        s->tool_obj = Py_NewRef((PyObject*)t); /* counts its late completions */
    }
}

void fpy_steps_unkeep(fpy_steps* s)
{
    if (s->keep) {
        *s->keep = NULL; /* the runtime frees the slot with the step */
        s->keep = NULL;
    }
}

static void as_done(PyObject* o)
{
    if (Py_REFCNT(o) == 1 && !as_cache && Py_TYPE(o) == step_type) {
        ((fpy_steps*)o)->bsi = NULL; /* a cached object refers to nothing */
        as_cache = o;
        return;
    }
    if (Py_REFCNT(o) > 1) {
        keep_track((fpy_steps*)o); /* kept by the step's code */
    }
    Py_DECREF(o);
}

int fpy_steps_init_root(fpy_steps* s, PyObject* tool_obj)
{
    fpy_tool* tool = (fpy_tool*)tool_obj;
    if (!tool->tool) {
        fpy_invalid_state("the Tool is closed");
        return -1;
    }
    if (!futoin_tool_is_same_thread(tool->tool)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "AsyncSteps(tool): a root is made on its tool's loop thread");
        return -1;
    }
    s->bsi = futoin_root_new(tool->tool);
    if (!s->bsi) {
        PyErr_NoMemory();
        return -1;
    }
    root_api = s->bsi->api;
    s->kind = FPY_ROOT;
    s->tool_obj = Py_NewRef(tool_obj);
    s->tool = tool;
    s->next_root = tool->roots; /* close() frees the tool's roots */
    if (tool->roots) {
        tool->roots->prev_root = s;
    }
    tool->roots = s;
    return 0;
}

static void unlist_root(fpy_steps* s)
{
    fpy_tool* t = s->tool;
    if (!t || (!s->prev_root && t->roots != s)) {
        return; /* not listed */
    }
    if (s->prev_root) {
        s->prev_root->next_root = s->next_root;
    } else {
        t->roots = s->next_root;
    }
    if (s->next_root) {
        s->next_root->prev_root = s->prev_root;
    }
    s->next_root = s->prev_root = NULL;
}

void fpy_steps_free_root(fpy_steps* s)
{
    FutoInAsyncSteps* b = s->bsi;
    unlist_root(s);
    if (s->exec) {
        s->exec->owner = NULL;
        s->exec = NULL;
    }
    if (s->kind == FPY_ROOT && b) {
        s->bsi = NULL;
        b->api->free(b); /* may run Python code (releases) */
    }
}

/* Dealloc: free an owned root (which releases what it still holds). */
void fpy_steps_clear(fpy_steps* s)
{
    fpy_steps_unkeep(s);
    fpy_steps_free_root(s);
    Py_CLEAR(s->tool_obj);
}

/* AsyncSteps._wrap(cls, address, owned, tool) */
PyObject* fpy_steps_wrap(PyObject* cls, PyObject* address, int own,
                         PyObject* tool)
{
    FutoInAsyncSteps* b;
    PyObject* o;
    fpy_steps* s;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject*)cls, &fpy_steps_type)) {
        PyErr_SetString(PyExc_TypeError, "wrap(): cls must derive from AsyncSteps");
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
    o = obj_for((PyTypeObject*)cls, b, own ? FPY_ROOT : FPY_BORROWED);
    if (!o) {
        return NULL;
    }
    s = (fpy_steps*)o;
    if (tool && tool != Py_None) {
        s->tool_obj = Py_NewRef(tool);
        s->tool = NULL; /* a wrapped root is not kept alive by execute() */
    }
    if (!own && b->api != root_api) {
        /* a step or parallel() handle of ours (a root's handle lives as
         * long as the root: an anchor per wrap() would pile up on it) */
        keep_track(s);
    }
    return o;
}

/* ---- exceptions from Python code ---------------------------------------- */

/* KeyboardInterrupt / SystemExit: keep it for run(), cancel the executing
 * roots of the tool (what Ctrl-C in run() does too), and stop the loop if
 * our run() is driving it (never a loop run by others). */
static void on_fatal(FutoInAsyncSteps* bsi)
{
    futoin_tool* tool = futoin_async_tool(bsi);
    fpy_tool* t = fpy_tool_find(tool);
    fpy_store_fatal();
    if (t) {
        fpy_tool_cancel_executing(t);
    }
    if (tool && fpy_in_run()) {
        uv_stop(futoin_tool_uv_loop(tool));
    }
}

/* A flow that no Python run() drives, on a tool Python did not make: a
 * program in another language hosts it (the plug-in), and no run() is
 * there to re-raise KeyboardInterrupt/SystemExit. */
static int hosted_elsewhere(FutoInAsyncSteps* bsi)
{
    return !fpy_in_run() && !fpy_tool_find(futoin_async_tool(bsi));
}

/* KeyboardInterrupt / SystemExit in a step of a flow hosted by another
 * language: the step fails with InternalError, its info naming the
 * exception ("SystemExit: 3", "KeyboardInterrupt") and the exception as
 * last_exception. Neither the process nor the flow is ended here: what an
 * interrupt means is the host program's to decide. */
static void fail_fatal(FutoInAsyncSteps* bsi)
{
    PyObject *t, *v, *tb, *text = NULL, *info;
    FutoInBinaryValue ex;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (tb && v) {
        PyException_SetTraceback(v, tb);
    }
    text = v ? PyObject_Str(v) : NULL;
    if (text && PyUnicode_GET_LENGTH(text) > 0) {
        info = PyUnicode_FromFormat("%s: %U", ((PyTypeObject*)t)->tp_name, text);
    } else {
        info = PyUnicode_FromString(((PyTypeObject*)t)->tp_name);
    }
    PyErr_Clear();
    if (v) {
        fpy_set_custom(&ex, v);
        futoin_wrap_set_last_exception(bsi, &ex);
    }
    bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR,
                           info ? PyUnicode_AsUTF8(info) : "KeyboardInterrupt or SystemExit");
    PyErr_Clear();
    Py_XDECREF(info);
    Py_XDECREF(text);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
}

/* A str without NUL as UTF-8 (borrowed from `o`), or NULL. */
static const char* c_str(PyObject* o)
{
    Py_ssize_t n;
    const char* c = PyUnicode_AsUTF8AndSize(o, &n);
    if (c && strlen(c) != (size_t)n) {
        return NULL;
    }
    return c;
}

/* A Python exception escaped a step, loop body or error handler: the flow
 * gets its code (FutoInError) or InternalError, and the exception object
 * as last_exception. */
static void on_exception(FutoInAsyncSteps* bsi)
{
    PyObject *t, *v, *tb, *code = NULL, *info = NULL, *s = NULL;
    FutoInBinaryValue ex;
    const char* ccode = FUTOIN_ERR_INTERNAL_ERROR;
    const char* cinfo = NULL;

    if (fpy_is_fatal()) {
        if (hosted_elsewhere(bsi)) {
            fail_fatal(bsi);
        } else {
            on_fatal(bsi);
        }
        return;
    }
    if (unwind_type && PyErr_ExceptionMatches(unwind_type)) {
        PyErr_Clear(); /* error()/break_loop()/continue_loop(): the runtime knows */
        return;
    }
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (tb && v) {
        PyException_SetTraceback(v, tb);
    }
    if (v && error_type && PyObject_TypeCheck(v, (PyTypeObject*)error_type)) {
        code = PyObject_GetAttrString(v, "code");
        info = PyObject_GetAttrString(v, "info");
        PyErr_Clear();
        if (code && PyUnicode_Check(code)) {
            const char* c = c_str(code);
            if (c && *c) {
                ccode = c;
            }
        }
        if (info && PyUnicode_Check(info)) {
            cinfo = PyUnicode_AsUTF8(info);
        }
    } else {
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
    bsi->api->handle_error(bsi, ccode, cinfo);
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
static void on_callback_exception(FutoInAsyncSteps* bsi, PyObject* fn)
{
    if (fpy_is_fatal() && !hosted_elsewhere(bsi)) {
        on_fatal(bsi);
    } else if (unwind_type && PyErr_ExceptionMatches(unwind_type)) {
        PyErr_Clear(); /* error() there: the runtime has it (or refused it) */
    } else {
        PyErr_WriteUnraisable(fn);
    }
}

/* ---- a step's return value ---------------------------------------------- */

static int is_awaitable(PyObject* o)
{
    PyTypeObject* t = Py_TYPE(o);
    return PyCoro_CheckExact(o)
           || (t->tp_as_async && t->tp_as_async->am_await);
}

/* A step (or error handler, or loop body) returned `res`, not None: it is
 * the step's result, as if it had called asi.success(res) last (a tuple:
 * several values); an awaitable is awaited as by asi.await_(). An
 * AsyncSteps object is what add() and its kin return for chaining, never
 * a value: it is ignored. A step that
 * also completed, waited or added steps itself is an error: the value
 * would otherwise be lost. */
static void await_in_step(FutoInAsyncSteps* bsi, PyObject* a, PyObject* aw);

static void on_return(FutoInAsyncSteps* bsi, PyObject* a, PyObject* res)
{
    fpy_steps* s = (fpy_steps*)a;
    PyTypeObject* t = Py_TYPE(res);
    PyObject* const* items = &res;
    Py_ssize_t n = 1;
    FutoInArgs fa;
    if (t != &PyLong_Type && t != &PyFloat_Type && t != &PyUnicode_Type) {
        /* not one of the common results: the checks */
        if (PyObject_TypeCheck(res, &fpy_steps_type)) {
            return; /* `lambda asi: asi.add(...)`: the chaining result */
        }
        if (is_awaitable(res)) {
            await_in_step(bsi, a, res);
            return;
        }
        if (t == &PyTuple_Type) {
            items = &PyTuple_GET_ITEM(res, 0);
            n = PyTuple_GET_SIZE(res);
        }
    }
    if (s->did) {
        const char* what = (s->did & FPY_DID_COMPLETE) ? "success()/error()"
                           : (s->did & FPY_DID_WAIT)
                                   ? "wait_external()/set_timeout()/set_cancel()"
                                   : "add()";
        PyErr_Format(PyExc_TypeError,
                     "a step returned %.60R after it called %s: return a "
                     "value only instead of completing the step otherwise",
                     res, what);
        on_exception(bsi);
        return;
    }
    if (fpy_args_from(items, n, &fa) < 0) {
        on_exception(bsi);
        return;
    }
    bsi->api->success(bsi, &fa);
    fpy_args_reset(&fa);
}

/* ---- trampolines -------------------------------------------------------- */

/* What follows `asi` in the call; built after the GIL is taken. */
enum { EXTRA_NONE, EXTRA_VALUES, EXTRA_CODE, EXTRA_INDEX, EXTRA_AWAIT };

/* Call fn(asi, *extra) as code of `bsi`: a step, loop body or error handler
 * (in_flow: its exceptions and return value go to the flow) or a cancel
 * handler. */
static void call_step(FutoInAsyncSteps* bsi, PyObject* fn, int in_flow,
                      int kind, const FutoInArgs* args, const char* code,
                      size_t index, PyObject* extra)
{
    fpy_gil g;
    PyObject* stack[5];
    PyObject *a, *res;
    FutoInAsyncSteps* prev;
    size_t n = 1, i;

    fpy_gil_enter(&g);
    prev = fpy_T.cur;
    a = as_new(bsi);
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
    case EXTRA_AWAIT: /* await_step(asi, awaitable) */
        stack[n++] = Py_NewRef(extra);
        break;
    default:
        break;
    }
    fpy_T.cur = bsi;
    res = PyObject_Vectorcall(fn, stack, n, NULL);
    if (res) {
        if (res != Py_None && in_flow) {
            on_return(bsi, a, res);
        }
        Py_DECREF(res);
    } else if (in_flow) {
        on_exception(bsi);
    } else {
        on_callback_exception(bsi, fn);
    }
    fpy_T.cur = prev;
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

/* A step with an error handler (data: fpy_rec). */
static void tr_step(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    fpy_rec* r = data;
    call_step(bsi, r->fn, 1,
              (args && args->args[0].type) ? EXTRA_VALUES : EXTRA_NONE, args,
              NULL, 0, NULL);
}

/* A step without one (data: the callable). */
void fpy_tr_fn(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    call_step(bsi, data, 1,
              (args && args->args[0].type) ? EXTRA_VALUES : EXTRA_NONE, args,
              NULL, 0, NULL);
}

static void tr_error(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    fpy_rec* r = data;
    call_step(bsi, r->eh, 1, EXTRA_CODE, NULL, code, 0, NULL);
}

/* await_(awaitable). Its asyncio future (an awaitable that is not one is
 * made a Task by the Python layer's future_of()) completes the step at once
 * if it is done already; a flow that `await root` drives hands it to that
 * awaiter, which yields it to the awaiting Task (py_asyncio.c); otherwise
 * the Python layer's await_step(asi, future) waits for it with a done
 * callback. */
static int await_done_now(FutoInAsyncSteps* bsi, PyObject* aw)
{
    static PyObject *s_done, *s_exception, *s_result;
    PyObject *d, *exc, *res;
    FutoInArgs fa;
    int rc = 0;
    if (!future_type || !PyObject_TypeCheck(aw, (PyTypeObject*)future_type)) {
        return 0;
    }
    if (!s_done && (!(s_done = PyUnicode_InternFromString("done"))
                    || !(s_exception = PyUnicode_InternFromString("exception"))
                    || !(s_result = PyUnicode_InternFromString("result")))) {
        PyErr_Clear();
        return 0;
    }
    d = PyObject_CallMethodNoArgs(aw, s_done);
    if (d != Py_True) {
        Py_XDECREF(d);
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(d);
    exc = PyObject_CallMethodNoArgs(aw, s_exception); /* raises if cancelled */
    if (!exc) {
        PyErr_Clear();
        return 0; /* cancelled: the Python layer says what that means */
    }
    if (exc != Py_None) {
        PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
        Py_DECREF(exc);
        return -1; /* raised in the step */
    }
    Py_DECREF(exc);
    res = PyObject_CallMethodNoArgs(aw, s_result);
    if (!res) {
        return -1;
    }
    if (res != Py_None) {
        PyObject* const* items = &res;
        Py_ssize_t n = 1;
        if (PyTuple_CheckExact(res)) {
            items = &PyTuple_GET_ITEM(res, 0);
            n = PyTuple_GET_SIZE(res);
        }
        if (fpy_args_from(items, n, &fa) < 0) {
            rc = -1;
        } else {
            bsi->api->success(bsi, &fa);
            fpy_args_reset(&fa);
        }
    }
    Py_DECREF(res);
    return rc < 0 ? -1 : 1;
}

/* The asyncio future of an awaitable (new reference), or NULL (raised). */
static PyObject* future_of(PyObject* aw)
{
    PyObject* fn;
    if (future_type && PyObject_TypeCheck(aw, (PyTypeObject*)future_type)) {
        return Py_NewRef(aw);
    }
    fn = fpy_hook("future_of");
    return fn ? PyObject_CallOneArg(fn, aw) : NULL;
}

/* A step returned an awaitable (an `async def` step): as await_(), from
 * inside the step's own callback (`a` is its asi). */
static void await_in_step(FutoInAsyncSteps* bsi, PyObject* a, PyObject* aw)
{
    PyObject* fut = future_of(aw);
    int rc = -1;
    if (fut) {
        rc = await_done_now(bsi, fut);
        if (rc == 0 && fpy_awaiter_take(bsi, fut)) {
            rc = 1;
        }
        if (rc == 0) {
            PyObject* r = PyObject_CallFunctionObjArgs(await_step, a, fut, NULL);
            rc = r ? 1 : -1;
            Py_XDECREF(r);
        }
        Py_DECREF(fut);
    }
    if (rc < 0) {
        on_exception(bsi);
    }
}

/* await_() (data: the awaitable). */
static void tr_await(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    fpy_gil g;
    PyObject* fut;
    int rc = -1;
    fpy_gil_enter(&g);
    fut = future_of(data);
    if (fut) {
        rc = await_done_now(bsi, fut);
        if (rc == 0 && fpy_awaiter_take(bsi, fut)) {
            rc = 1;
        }
    }
    if (rc < 0) {
        on_exception(bsi);
    }
    fpy_gil_leave(&g);
    if (rc == 0) {
        call_step(bsi, await_step, 1, EXTRA_AWAIT, NULL, NULL, 0, fut);
    }
    if (fut) {
        fpy_gil_enter(&g);
        Py_DECREF(fut);
        fpy_gil_leave(&g);
    }
}

/* The awaiter completes the step it took: with the future's outcome. */
static void step_complete_with(FutoInAsyncSteps* bsi, PyObject* fut);

void fpy_step_complete_with(FutoInAsyncSteps* bsi, PyObject* fut)
{
    /* the step may have ended meanwhile (a lost race): quiet either way */
    fpy_check_begin();
    step_complete_with(bsi, fut);
    --fpy_T.expect;
    fpy_T.misused = 0;
}

static void step_complete_with(FutoInAsyncSteps* bsi, PyObject* fut)
{
    static PyObject *s_exception, *s_result;
    PyObject *exc, *res;
    FutoInArgs fa;
    if (!s_exception && (!(s_exception = PyUnicode_InternFromString("exception"))
                         || !(s_result = PyUnicode_InternFromString("result")))) {
        return;
    }
    exc = PyObject_CallMethodNoArgs(fut, s_exception);
    if (!exc) {
        on_exception(bsi); /* cancelled: CancelledError fails the step */
        return;
    }
    if (exc != Py_None) {
        PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
        Py_DECREF(exc);
        on_exception(bsi);
        return;
    }
    Py_DECREF(exc);
    res = PyObject_CallMethodNoArgs(fut, s_result);
    if (!res) {
        on_exception(bsi);
        return;
    }
    if (res == Py_None) {
        futoin_wrap_try_success(bsi, NULL);
    } else if (fpy_args_from(PyTuple_CheckExact(res) ? &PyTuple_GET_ITEM(res, 0) : &res,
                             PyTuple_CheckExact(res) ? PyTuple_GET_SIZE(res) : 1,
                             &fa) < 0) {
        on_exception(bsi);
    } else {
        futoin_wrap_try_success(bsi, &fa);
        fpy_args_reset(&fa);
    }
    Py_DECREF(res);
}

/* Cancel handlers, loop and repeat bodies (data: the callable). */
static void tr_cancel(FutoInAsyncSteps* bsi, void* data)
{
    call_step(bsi, data, 0, EXTRA_NONE, NULL, NULL, 0, NULL);
}

static void tr_loop(FutoInAsyncSteps* bsi, void* data)
{
    call_step(bsi, data, 1, EXTRA_NONE, NULL, NULL, 0, NULL);
}

static void tr_repeat(FutoInAsyncSteps* bsi, void* data, size_t i)
{
    call_step(bsi, data, 1, EXTRA_INDEX, NULL, NULL, i, NULL);
}

/* error_info of the last error (str), or None. */
PyObject* fpy_error_info_of(FutoInAsyncSteps* bsi)
{
    const char* info = futoin_wrap_error_info(bsi);
    if (info) {
        return PyUnicode_DecodeUTF8(info, (Py_ssize_t)strlen(info), "replace");
    }
    Py_RETURN_NONE;
}

/* The Python exception of the last error, else its code, else None. */
PyObject* fpy_last_exception_of(FutoInAsyncSteps* bsi)
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

/* ---- one execution of a root -------------------------------------------- */

static void exec_unref(fpy_exec* e)
{
    if (--e->refs > 0) {
        return;
    }
    Py_XDECREF(e->unhandled);
    Py_XDECREF(e->on_success);
    Py_XDECREF(e->on_result);
    Py_XDECREF(e->fut_cb);
    PyMem_Free(e);
}

/* The flow is over: `exc` (an exception, or NULL) or `value`. GIL held. */
static void exec_settle(fpy_exec* e, PyObject* exc, PyObject* value)
{
    PyObject* res;
    if (e->settled) {
        return;
    }
    e->settled = 1;
    if (e->owner) {
        fpy_steps* s = e->owner;
        if (s->exec == e) {
            s->exec = NULL;
        }
        fpy_tool_root_done(s);
    }
    if (e->on_result && e->mode == EXEC_FUTURE) {
        if (fpy_future_settle(e->on_result, e->fut_cb, exc, value) < 0) {
            on_callback_exception(e->root, e->on_result);
        }
    } else if (e->on_result && e->mode == EXEC_AWAITER) {
        if (fpy_awaiter_settle(e->on_result, exc, value) < 0) {
            on_callback_exception(e->root, e->on_result);
        }
    } else if (e->on_result) {
        res = PyObject_CallFunctionObjArgs(e->on_result, exc ? exc : Py_None,
                                           value ? value : Py_None, NULL);
        if (res) {
            Py_DECREF(res);
        } else {
            on_callback_exception(e->root, e->on_result);
        }
    }
    /* delivered: the record lives on until the root lets go of it, its
     * target need not (an awaiter refers to the root: no cycle) */
    Py_CLEAR(e->on_result);
    Py_CLEAR(e->fut_cb);
}

/* The last step execute() adds: the flow succeeded with `args`. */
static void tr_finished(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    fpy_exec* e = data;
    fpy_gil g;
    PyObject* v[4];
    PyObject* value = NULL;
    int n = 0;
    fpy_gil_enter(&g);
    if (e->on_result || e->on_success) {
        for (; args && n < 4 && args->args[n].type; ++n) {
            if (!(v[n] = futoin_py_from_binval(&args->args[n]))) {
                break;
            }
        }
        if (PyErr_Occurred()) {
            PyErr_Clear();
        }
    }
    if (e->on_success && !e->settled) {
        /* the root's values, without run(): on_success(*values) */
        PyObject* fn = e->on_success;
        PyObject* res;
        e->on_success = NULL; /* once */
        res = PyObject_Vectorcall(fn, v, (size_t)n, NULL);
        if (res) {
            Py_DECREF(res);
        } else {
            on_callback_exception(bsi, fn);
        }
        Py_DECREF(fn);
    }
    if (!e->on_result) {
        for (int i = 0; i < n; ++i) {
            Py_DECREF(v[i]);
        }
        n = 0;
    }
    if (n == 1) {
        value = v[0];
    } else if (n > 1) {
        value = PyTuple_New(n);
        for (int i = 0; i < n; ++i) {
            if (value) {
                PyTuple_SET_ITEM(value, i, v[i]);
            } else {
                Py_DECREF(v[i]);
            }
        }
    }
    exec_settle(e, NULL, value);
    Py_XDECREF(value);
    fpy_gil_leave(&g);
}

/* execute()'s unhandled-error callback. The user's callback gets
 * (code, error_info, last_exception); run()/await get the exception; with
 * neither, the root's Tool raises it from run(). Never silent. */
static void tr_unhandled(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    fpy_exec* e = data;
    fpy_gil g;
    PyObject *res = NULL, *ei, *le, *exc = NULL;
    fpy_gil_enter(&g);
    ei = fpy_error_info_of(bsi);
    le = fpy_last_exception_of(bsi);
    if (!ei || !le) {
        PyErr_Clear();
    } else if (e->unhandled) {
        res = PyObject_CallFunction(e->unhandled, "sOO", code ? code : "", ei, le);
        if (res) {
            Py_DECREF(res);
        } else {
            on_callback_exception(bsi, e->unhandled);
        }
    } else {
        PyObject* stack = fpy_async_stack_of(bsi);
        if (!stack) {
            PyErr_Clear();
        }
        exc = PyObject_CallFunction(flow_error, "sOOO", code ? code : "", ei, le,
                                    stack ? stack : Py_None);
        Py_XDECREF(stack);
        if (!exc) {
            PyErr_WriteUnraisable(flow_error);
        } else if (!e->on_result) {
            if (e->owner && e->owner->tool) {
                fpy_tool_fail(e->owner->tool, exc);
            } else {
                /* nobody to raise it to: sys.unraisablehook prints it */
                PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
                PyErr_WriteUnraisable(NULL);
            }
        }
    }
    Py_XDECREF(ei);
    Py_XDECREF(le);
    exec_settle(e, exc, NULL);
    Py_XDECREF(exc);
    fpy_gil_leave(&g);
}

/* Neither the last step nor the unhandled callback settled the execution
 * when the runtime let go of its data: the flow was cancelled (or its root
 * freed). Decided one loop pass later, after a pending unhandled error. */
static void exec_check(void* data)
{
    fpy_exec* e = data;
    fpy_gil g;
    fpy_gil_enter(&g);
    if (!e->settled) {
        PyObject* exc = PyObject_CallFunction(cancelled_type, "s", "the flow was cancelled");
        if (!exc) {
            PyErr_Clear();
        }
        exec_settle(e, exc, NULL);
        Py_XDECREF(exc);
    }
    exec_unref(e);
    fpy_gil_leave(&g);
}

static void exec_drop(void* data)
{
    fpy_exec* e = data;
    if (!e->settled) {
        fpy_tool* t = fpy_tool_find(e->ftool);
        int closing = t && t->closing; /* its immediates would be dropped */
        FutoInHandle h = {0, 0, 0};
        if (e->ftool && !closing) {
            h = futoin_tool_immediate(e->ftool, exec_check, e);
            if (futoin_tool_is_valid(e->ftool, &h)
                || !futoin_tool_is_same_thread(e->ftool)) {
                return; /* exec_check() drops this reference */
            }
        }
        if (closing || e->refs == 1) {
            ++e->refs;
            exec_check(e); /* the last reference, or the tool closes: now */
            return;
        }
    }
    exec_unref(e);
}

static void exec_release(void* data)
{
    fpy_release(exec_drop, data);
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

PyObject* fpy_state_peek(FutoInAsyncSteps* bsi)
{
    if (!futoin_wrap_is_ours(bsi)) {
        return NULL;
    }
    return bsi->api->stateVariable(bsi, NULL, "python.state", NULL, NULL);
}

/* Values assigned to the flow's State where no handle reached the shared
 * store (a State kept from a step, written from a timer) are published
 * through `bsi`, a handle of the flow, before it completes. Loop thread. */
static void flush_state(FutoInAsyncSteps* bsi)
{
    static PyObject *s_pending, *s_flush;
    PyObject *d, *pending, *r;
    FutoInAsyncSteps* prev;
    if (!s_pending && (!(s_pending = PyUnicode_InternFromString("_pending"))
                       || !(s_flush = PyUnicode_InternFromString("_flush")))) {
        PyErr_Clear();
        return;
    }
    d = fpy_state_peek(bsi);
    pending = d ? PyObject_GetAttr(d, s_pending) : NULL;
    if (!pending) {
        PyErr_Clear();
        return;
    }
    if (PyObject_IsTrue(pending) == 1) {
        prev = fpy_T.cur;
        fpy_T.cur = bsi; /* State reaches the store through this handle */
        r = PyObject_CallMethodNoArgs(d, s_flush);
        fpy_T.cur = prev;
        if (!r) {
            PyErr_WriteUnraisable(d);
        }
        Py_XDECREF(r);
    }
    Py_DECREF(pending);
    PyErr_Clear();
}

/* ---- checks at the call site -------------------------------------------- */

static int live(fpy_steps* s)
{
    if (!s->bsi) {
        fpy_invalid_state(s->ended ? "the AsyncSteps handle is closed: its step "
                                     "ended (completed, timed out, cancelled, "
                                     "or its root or tool went away)"
                                   : "the AsyncSteps handle is closed (its step "
                                     "finished or its root was freed)");
        return 0;
    }
    return 1;
}

/* success()/error() through a kept handle whose step ended (bsi NULL): a
 * late completion if the step waited and this handle had not completed it
 * (its timeout, a cancel of its flow, or close() of its tool won: False,
 * counted, from any thread); misuse otherwise (a second completion, or a
 * step that completed by returning or ran sub-steps). */
static PyObject* complete_ended(fpy_steps* s, const char* what)
{
    if (s->ended && (s->did & FPY_DID_WAIT) && !(s->did & FPY_DID_COMPLETE)) {
        if (s->tool_obj && PyObject_TypeCheck(s->tool_obj, &fpy_tool_type)) {
            ++((fpy_tool*)s->tool_obj)->late;
        }
        Py_RETURN_FALSE;
    }
    if (s->ended) {
        return fpy_invalid_state("%s on a step that already %s", what,
                                 (s->did & FPY_DID_COMPLETE)
                                         ? "completed through this handle"
                                         : "completed (or is not waiting)");
    }
    live(s);
    return NULL;
}

/* The loop thread of the handle's tool? (foreign: its own answer) */
static int same_thread(fpy_steps* s)
{
    if (s->tool && s->tool->tool) {
        return futoin_tool_is_same_thread(s->tool->tool);
    }
    return s->bsi->api->is_same_thread(s->bsi);
}

static int not_other_thread(fpy_steps* s, const char* what)
{
    if (!same_thread(s)) {
        PyErr_Format(PyExc_RuntimeError,
                     "%s from another thread: only success(), error() and "
                     "a root's cancel() may be called off the loop thread",
                     what);
        return 0;
    }
    return 1;
}

/* Calls that only a step's own callback (or a root before it executes, or
 * a parallel() handle) may make. */
static int in_own_step(fpy_steps* s, const char* what, int root_ok)
{
    if (!live(s)) {
        return 0;
    }
    if (s->bsi == fpy_T.cur) {
        return 1; /* its own callback runs on this thread now */
    }
    if (!not_other_thread(s, what)) {
        return 0;
    }
    switch (s->kind) {
    case FPY_ROOT:
        if (!root_ok) {
            fpy_invalid_state("%s is for a step's own handle inside its "
                              "callback, not a root", what);
            return 0;
        }
        if (s->exec) {
            fpy_invalid_state("%s on a root while it executes: add to the "
                              "running step's own handle instead", what);
            return 0;
        }
        return 1;
    case FPY_STEP:
        fpy_invalid_state("%s outside the step's own callback (the step "
                          "finished, waits, or runs sub-steps)", what);
        return 0;
    default: /* parallel() handles and wrapped handles: the library checks */
        return 1;
    }
}

static PyObject* none_to_null(PyObject* o)
{
    return (o == Py_None) ? NULL : o;
}

static int check_callables(const char* what, PyObject* fn, PyObject* eh)
{
    if ((fn && !PyCallable_Check(fn)) || (eh && !PyCallable_Check(eh))) {
        PyErr_Format(PyExc_TypeError, "%s: callable expected, got %.80s", what,
                     Py_TYPE((fn && !PyCallable_Check(fn)) ? fn : eh)->tp_name);
        return -1;
    }
    return 0;
}

/* A str argument without NUL (its UTF-8 is borrowed from `o`). */
static int str_arg(PyObject* o, const char* what, const char** out)
{
    Py_ssize_t n;
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be str, not %.80s", what,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = PyUnicode_AsUTF8AndSize(o, &n);
    if (!*out) {
        return -1;
    }
    if (strlen(*out) != (size_t)n) {
        PyErr_Format(PyExc_ValueError, "%s must not contain NUL characters", what);
        return -1;
    }
    return 0;
}

/* An error code: a non-empty str without NUL (rule 4). */
static int code_arg(PyObject* o, const char* what, const char** out)
{
    if (str_arg(o, what, out) < 0) {
        return -1;
    }
    if (!**out) {
        PyErr_Format(PyExc_ValueError, "%s must not be empty", what);
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
    return str_arg(o, "label", out);
}

/* ---- operations behind AsyncSteps' methods ------------------------- */

PyObject* fpy_add(fpy_steps* s, PyObject* fn, PyObject* eh)
{
    fpy_rec* r;
    eh = none_to_null(eh);
    if (!in_own_step(s, "add()", 1)
        || check_callables("add(step, onerror=None)", fn, eh) < 0) {
        return NULL;
    }
    if (!eh) {
        fpy_check_begin();
        futoin_wrap_add_classed(s->bsi, Py_NewRef(fn), fpy_tr_fn, NULL, &fn_class);
    } else {
        if (!(r = rec_new(fn, eh))) {
            return NULL;
        }
        fpy_check_begin();
        futoin_wrap_add_classed(s->bsi, r, tr_step, tr_error, &rec_class);
    }
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}

PyObject* fpy_await(fpy_steps* s, PyObject* awaitable)
{
    if (!in_own_step(s, "await_()", 1)) {
        return NULL;
    }
    fpy_check_begin();
    futoin_wrap_add(s->bsi, Py_NewRef(awaitable), tr_await, NULL, obj_release);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}

PyObject* fpy_parallel(fpy_steps* s, PyObject* eh)
{
    fpy_rec* r = NULL;
    FutoInAsyncSteps* p;
    PyObject* o;
    eh = none_to_null(eh);
    if (!in_own_step(s, "parallel()", 1)
        || check_callables("parallel(onerror=None)", NULL, eh) < 0) {
        return NULL;
    }
    if (eh && !(r = rec_new(NULL, eh))) {
        return NULL;
    }
    fpy_check_begin();
    p = futoin_wrap_parallel(s->bsi, r, r ? tr_error : NULL,
                             r ? rec_release : NULL);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    if (!p) {
        return fpy_invalid_state("parallel() was refused");
    }
    s->did |= FPY_DID_ADD;
    o = obj_for(step_type, p, FPY_BORROWED);
    if (o) {
        keep_track((fpy_steps*)o); /* the caller keeps it by design */
    }
    return o;
}

/* Completing a step from outside its own callback: a waiting step, from a
 * timer, another flow or another thread. True if this call completed it,
 * False if the step had already ended (its timeout, a cancel, an error
 * unwinding past it) - a lost race, not an error. */
static PyObject* complete_external(fpy_steps* s, FutoInArgs* fa,
                                   PyObject* code, PyObject* info)
{
    const char* ccode = NULL;
    const char* cinfo = NULL;
    int rc;
    if (s->kind == FPY_ROOT) {
        if (fa) {
            fpy_args_reset(fa);
        }
        return fpy_invalid_state("%s is for a step's own handle, not a root",
                                 code ? "error()" : "success()");
    }
    if (code) {
        if (code_arg(code, "error(): code", &ccode) < 0
            || (info && info != Py_None && str_arg(info, "error(): info", &cinfo) < 0)) {
            return NULL;
        }
    }
    if (same_thread(s) && futoin_wrap_is_ours(s->bsi) && s->bsi->api->isValid(s->bsi)) {
        flush_state(s->bsi);
    }
    /* The library decides at once, from any thread (a claim on the step):
     * 1 taken, 0 the step had already ended (a lost race, dropped
     * quietly), < 0 misuse (reported; raised here). From another thread
     * the completion is posted to the loop thread. */
    fpy_check_begin();
    if (code) {
        rc = futoin_wrap_try_error(s->bsi, ccode, cinfo);
    } else {
        rc = futoin_wrap_try_success(s->bsi, fa);
    }
    if (fa) {
        fpy_args_reset(fa); /* no-op after a move */
    }
    if (fpy_check_end() < 0) {
        return NULL;
    }
    if (rc < 0) {
        return fpy_invalid_state("%s refused: the step is not waiting",
                                 code ? "error()" : "success()");
    }
    if (rc > 0) {
        s->did |= FPY_DID_COMPLETE;
    }
    return PyBool_FromLong(rc > 0);
}

PyObject* fpy_success(fpy_steps* s, PyObject* const* v, Py_ssize_t n)
{
    FutoInArgs fa;
    if (!s->bsi) {
        return complete_ended(s, "success()");
    }
    if (n > 4) {
        PyErr_Format(PyExc_TypeError,
                     "success() takes at most 4 values (FTN12), %zd given", n);
        return NULL;
    }
    if (n && fpy_args_from(v, n, &fa) < 0) {
        return NULL;
    }
    if (s->bsi != fpy_T.cur) {
        return complete_external(s, n ? &fa : NULL, NULL, NULL);
    }
    fpy_check_begin();
    s->bsi->api->success(s->bsi, n ? &fa : NULL);
    if (n) {
        fpy_args_reset(&fa); /* no-op after a move; frees if refused */
    }
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_COMPLETE;
    Py_RETURN_NONE;
}

PyObject* fpy_success_step(fpy_steps* s, PyObject* const* v, Py_ssize_t n)
{
    FutoInArgs fa;
    if (!in_own_step(s, "success_step()", 1)) {
        return NULL;
    }
    if (n > 4) {
        PyErr_Format(PyExc_TypeError,
                     "success_step() takes at most 4 values (FTN12), %zd given", n);
        return NULL;
    }
    if (fpy_args_from(v, n, &fa) < 0) {
        return NULL;
    }
    fpy_check_begin();
    futoin_wrap_success_step(s->bsi, &fa);
    fpy_args_reset(&fa);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}

/* error(code, info=None): handle_error with the code's exception as
 * last_exception, then leave the calling code with the private Unwind (a
 * BaseException: `except Exception`/`except FutoInError` in step code do
 * not stop it), which the trampoline drops. Completing a waiting step
 * from elsewhere returns True/False instead. */
PyObject* fpy_error(fpy_steps* s, PyObject* code, PyObject* info)
{
    const char* ccode;
    const char* cinfo = NULL;
    FutoInBinaryValue ex;
    PyObject* exc;
    if (!s->bsi) {
        return complete_ended(s, "error()");
    }
    if (!info) {
        info = Py_None;
    }
    if (s->bsi != fpy_T.cur) {
        return complete_external(s, NULL, code, info);
    }
    if (code_arg(code, "error(): code", &ccode) < 0) {
        return NULL;
    }
    if (info != Py_None && str_arg(info, "error(): info", &cinfo) < 0) {
        return NULL;
    }
    exc = PyObject_CallFunctionObjArgs(make_error, code, info, NULL);
    if (!exc) {
        return NULL;
    }
    fpy_check_begin();
    fpy_set_custom(&ex, exc);
    futoin_wrap_set_last_exception(s->bsi, &ex);
    s->bsi->api->handle_error(s->bsi, ccode, cinfo);
    if (fpy_check_end() < 0) {
        Py_DECREF(exc);
        return NULL;
    }
    s->did |= FPY_DID_COMPLETE;
    PyErr_SetObject(unwind_type, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject* fpy_set_timeout(fpy_steps* s, PyObject* arg)
{
    unsigned long ms;
    if (!in_own_step(s, "set_timeout()", 0)) {
        return NULL;
    }
    if (PyFloat_Check(arg)) {
        double d = PyFloat_AsDouble(arg);
        if (d != d) {
            PyErr_SetString(PyExc_ValueError, "set_timeout(): NaN");
            return NULL;
        }
        ms = d < 0 ? 0 : (d > (double)UINT32_MAX ? UINT32_MAX : (unsigned long)d);
    } else if (PyLong_Check(arg)) {
        ms = PyLong_AsUnsignedLong(arg);
        if (PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError,
                            "set_timeout(timeout_ms): a non-negative number of "
                            "milliseconds");
            return NULL;
        }
    } else {
        PyErr_Format(PyExc_TypeError,
                     "set_timeout(timeout_ms): int or float milliseconds, not %.80s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    fpy_check_begin();
    s->bsi->api->setTimeout(s->bsi, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_WAIT;
    Py_RETURN_NONE;
}

PyObject* fpy_set_cancel(fpy_steps* s, PyObject* fn)
{
    if (!in_own_step(s, "set_cancel()", 0)
        || check_callables("set_cancel(handler)", fn, NULL) < 0) {
        return NULL;
    }
    fpy_check_begin();
    futoin_wrap_set_cancel(s->bsi, Py_NewRef(fn), tr_cancel, obj_release);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_WAIT;
    Py_RETURN_NONE;
}

PyObject* fpy_wait_external(fpy_steps* s)
{
    if (!in_own_step(s, "wait_external()", 0)) {
        return NULL;
    }
    fpy_check_begin();
    s->bsi->api->waitExternal(s->bsi);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_WAIT;
    Py_RETURN_NONE;
}

PyObject* fpy_loop(fpy_steps* s, PyObject* fn, PyObject* label)
{
    const char* l;
    if (!in_own_step(s, "loop()", 1)
        || check_callables("loop(body, label=None)", fn, NULL) < 0
        || label_arg(label, &l) < 0) {
        return NULL;
    }
    fpy_check_begin();
    futoin_wrap_loop(s->bsi, Py_NewRef(fn), tr_loop, l, obj_release);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}

PyObject* fpy_repeat(fpy_steps* s, PyObject* count, PyObject* fn,
                     PyObject* label)
{
    const char* l;
    size_t c;
    if (!in_own_step(s, "repeat()", 1)
        || check_callables("repeat(count, body, label=None)", fn, NULL) < 0) {
        return NULL;
    }
    if (!PyLong_Check(count)) {
        PyErr_Format(PyExc_TypeError, "repeat(count, ...): int expected, not %.80s",
                     Py_TYPE(count)->tp_name);
        return NULL;
    }
    c = PyLong_AsSize_t(count);
    if (c == (size_t)-1 && PyErr_Occurred()) {
        PyErr_SetString(PyExc_ValueError, "repeat(count, ...): count must be >= 0");
        return NULL;
    }
    if (label_arg(label, &l) < 0) {
        return NULL;
    }
    fpy_check_begin();
    futoin_wrap_repeat(s->bsi, Py_NewRef(fn), c, tr_repeat, l, obj_release);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}

/* break_loop()/continue_loop() leave the calling Python code as the JS
 * reference's break()/continue() do: the runtime is told first, then the
 * private Unwind (a BaseException, so `except Exception` does not catch
 * it) unwinds to the trampoline, which drops it. */
PyObject* fpy_break(fpy_steps* s, PyObject* label, int is_continue)
{
    const char* what = is_continue ? "continue_loop()" : "break_loop()";
    const char* l;
    if (!live(s)) {
        return NULL;
    }
    if (s->bsi != fpy_T.cur) {
        if (!not_other_thread(s, what)) {
            return NULL;
        }
        return fpy_invalid_state("%s outside a loop body's own callback", what);
    }
    if (label_arg(label, &l) < 0) {
        return NULL;
    }
    fpy_check_begin();
    if (is_continue) {
        s->bsi->api->continueLoop(s->bsi, l);
    } else {
        s->bsi->api->breakLoop(s->bsi, l);
    }
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_COMPLETE;
    PyErr_SetNone(unwind_type);
    return NULL;
}

PyObject* fpy_sync(fpy_steps* s, PyObject* obj, PyObject* fn, PyObject* eh)
{
    FutoInSync* so;
    PyObject* p;
    fpy_rec* r;
    eh = none_to_null(eh);
    if (!in_own_step(s, "sync()", 1)
        || check_callables("sync(obj, step, onerror=None)", fn, eh) < 0) {
        return NULL;
    }
    p = PyObject_GetAttrString(obj, "ptr");
    if (!p) {
        PyErr_Format(PyExc_TypeError, "sync(obj, ...): Mutex, Throttle or "
                     "Limiter expected, not %.80s", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    so = PyLong_AsVoidPtr(p);
    Py_DECREF(p);
    if (!so) {
        if (!PyErr_Occurred()) {
            fpy_invalid_state("sync(): the object is closed");
        }
        return NULL;
    }
    if (!eh) {
        fpy_check_begin();
        futoin_wrap_add_sync(s->bsi, so, Py_NewRef(fn), fpy_tr_fn, NULL, obj_release);
    } else {
        if (!(r = rec_new(fn, eh))) {
            return NULL;
        }
        fpy_check_begin();
        futoin_wrap_add_sync(s->bsi, so, r, tr_step, tr_error, rec_release);
    }
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}

/* execute(unhandled=None) and _execute(on_result). A root of our Tool is
 * kept alive by the tool while it runs: from here until it settles (its
 * last step, an unhandled error, or a cancel). */
static PyObject* execute(fpy_steps* s, PyObject* unhandled, PyObject* on_result,
                         int mode, PyObject* fut_cb);

PyObject* fpy_execute(fpy_steps* s, PyObject* unhandled, PyObject* on_result)
{
    return execute(s, unhandled, on_result, EXEC_CALL, NULL);
}

PyObject* fpy_execute_with(fpy_steps* s, PyObject* unhandled, PyObject* on_success)
{
    PyObject* r;
    on_success = none_to_null(on_success);
    if (check_callables("execute(unhandled=None, on_success=None)", on_success, NULL) < 0) {
        return NULL;
    }
    r = execute(s, unhandled, NULL, EXEC_CALL, NULL);
    if (r && on_success && s->exec) {
        s->exec->on_success = Py_NewRef(on_success);
    }
    return r;
}

int fpy_execute_into(fpy_steps* s, PyObject* fut, PyObject* cb)
{
    PyObject* r = execute(s, NULL, fut, EXEC_FUTURE, cb);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

int fpy_execute_awaited(fpy_steps* s, PyObject* awaiter)
{
    PyObject* r = execute(s, NULL, awaiter, EXEC_AWAITER, NULL);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyObject* execute(fpy_steps* s, PyObject* unhandled, PyObject* on_result,
                         int mode, PyObject* fut_cb)
{
    int into_future = mode != EXEC_CALL;
    fpy_exec* e;
    if (!live(s) || !not_other_thread(s, "execute()")) {
        return NULL;
    }
    if (s->kind != FPY_ROOT) {
        return fpy_invalid_state("execute() is for a root, not a step");
    }
    if (s->exec) {
        return fpy_invalid_state("execute(): the root is executing already");
    }
    unhandled = none_to_null(unhandled);
    on_result = none_to_null(on_result);
    if (check_callables("execute(unhandled=None)", unhandled,
                        into_future ? NULL : on_result) < 0) {
        return NULL;
    }
    e = PyMem_Calloc(1, sizeof(*e));
    if (!e) {
        return PyErr_NoMemory();
    }
    e->refs = 2; /* the last step's data and the unhandled callback's */
    e->unhandled = Py_XNewRef(unhandled);
    e->on_result = Py_XNewRef(on_result);
    e->mode = mode;
    e->fut_cb = Py_XNewRef(fut_cb);
    e->root = s->bsi;
    e->ftool = futoin_async_tool(s->bsi);
    if (s->tool) {
        PyObject* key = PyLong_FromVoidPtr(s);
        PyObject* token = PyTuple_Pack(1, (PyObject*)s);
        int rc = (key && token) ? PyDict_SetItem(s->tool->flows, key, token) : -1;
        Py_XDECREF(key);
        Py_XDECREF(token);
        if (rc < 0) {
            e->refs = 1;
            exec_unref(e);
            return NULL;
        }
    }
    e->owner = s;
    s->exec = e;
    ++s->exec_gen;
    fpy_check_begin();
    futoin_wrap_add(s->bsi, e, tr_finished, NULL, exec_release);
    futoin_wrap_execute(s->bsi, e, tr_unhandled, exec_release);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* root.cancel() from another thread: posted to the loop thread, where it
 * cancels the execution that ran when it was called (not a later one). */
typedef struct fpy_post
{
    PyObject* root;
    unsigned long gen;
} fpy_post;

static void tr_posted_cancel(void* data)
{
    fpy_post* p = data;
    fpy_steps* s = (fpy_steps*)p->root;
    fpy_gil g;
    fpy_gil_enter(&g);
    if (s->bsi && s->exec && s->exec_gen == p->gen) {
        PyObject* r = fpy_cancel(s);
        if (!r) {
            PyErr_WriteUnraisable(p->root);
        }
        Py_XDECREF(r);
    }
    Py_DECREF(p->root);
    PyMem_Free(p);
    fpy_gil_leave(&g);
}

PyObject* fpy_cancel(fpy_steps* s)
{
    int executing;
    if (s->kind != FPY_ROOT) {
        return live(s) ? fpy_invalid_state("cancel() is for a root, not a step")
                       : NULL;
    }
    if (!s->bsi) {
        Py_RETURN_FALSE; /* freed (or its tool closed): nothing executes */
    }
    if (!same_thread(s)) {
        futoin_tool* t = futoin_async_tool(s->bsi);
        fpy_post* p;
        if (!t) {
            PyErr_SetString(PyExc_RuntimeError,
                            "cancel() from another thread needs a root of this library");
            return NULL;
        }
        if (!s->exec) {
            Py_RETURN_FALSE; /* nothing executes: nothing to cancel */
        }
        p = PyMem_Malloc(sizeof(*p));
        if (!p) {
            return PyErr_NoMemory();
        }
        p->root = Py_NewRef((PyObject*)s);
        p->gen = s->exec_gen;
        futoin_tool_immediate(t, tr_posted_cancel, p);
        Py_RETURN_TRUE;
    }
    executing = s->exec != NULL;
    fpy_check_begin();
    s->bsi->api->cancel(s->bsi);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    if (s->exec) {
        /* no longer executing from the caller's point of view: it may add
         * steps and execute again; the flow settles as cancelled */
        s->exec->owner = NULL;
        s->exec = NULL;
    }
    fpy_tool_root_done(s);
    return PyBool_FromLong(executing);
}

PyObject* fpy_new_instance(fpy_steps* s)
{
    FutoInAsyncSteps* b;
    PyObject* o;
    if (!live(s) || !not_other_thread(s, "new_instance()")) {
        return NULL;
    }
    fpy_check_begin();
    b = s->bsi->api->newInstance(s->bsi);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    if (!b) {
        return fpy_invalid_state("new_instance() was refused");
    }
    o = obj_for(step_type, b, FPY_ROOT);
    if (!o) {
        b->api->free(b);
    }
    return o;
}

PyObject* fpy_free(fpy_steps* s)
{
    if (s->kind == FPY_ROOT && s->bsi) {
        if (!not_other_thread(s, "free()")) {
            return NULL;
        }
        fpy_check_begin();
        fpy_steps_free_root(s);
        fpy_tool_root_done(s);
        if (fpy_check_end() < 0) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

PyObject* fpy_state(fpy_steps* s)
{
    PyObject* d;
    if (!live(s) || !not_other_thread(s, "state")) {
        return NULL;
    }
    fpy_check_begin();
    d = state_dict(s->bsi);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    if (!d) {
        if (!PyErr_Occurred()) {
            fpy_invalid_state("state is not available");
        }
        return NULL;
    }
    if (s->kind == FPY_ROOT || s->bsi != fpy_T.cur) {
        /* Outside the flow's steps (a root, or a step's handle used from
         * a timer) State reaches the shared store through this handle */
        static PyObject *s_rootref, *s_stepref;
        PyObject *name, *ref;
        if (!s_rootref && (!(s_rootref = PyUnicode_InternFromString("_rootref"))
                           || !(s_stepref = PyUnicode_InternFromString("_stepref")))) {
            return NULL;
        }
        name = s->kind == FPY_ROOT ? s_rootref : s_stepref;
        ref = PyObject_GetAttr(d, name);
        if (!ref) {
            PyErr_Clear();
        } else if (!PyWeakref_Check(ref) || PyWeakref_GetObject(ref) != (PyObject*)s) {
            PyObject* w = PyWeakref_NewRef((PyObject*)s, NULL);
            if (!w || PyObject_GenericSetAttr(d, name, w) < 0) {
                PyErr_Clear();
            }
            Py_XDECREF(w);
        }
        Py_XDECREF(ref);
    }
    return Py_NewRef(d); /* the dict is owned by the root */
}

PyObject* fpy_async_stack(fpy_steps* s)
{
    if (!live(s) || !not_other_thread(s, "async_stack")) {
        return NULL;
    }
    return fpy_async_stack_of(s->bsi);
}

/* add_foreign(language, module, function): a step written in another
 * language. What cannot be had (no host, no module, no function) is a step
 * that fails with InvalidRequest, its error_info saying why. */
PyObject* fpy_add_foreign(fpy_steps* s, PyObject* language, PyObject* module,
                          PyObject* function)
{
    const char *l, *m, *f;
    if (!in_own_step(s, "add_foreign()", 1)
        || str_arg(language, "add_foreign(): language", &l) < 0
        || str_arg(module, "add_foreign(): module", &m) < 0
        || str_arg(function, "add_foreign(): function", &f) < 0) {
        return NULL;
    }
    fpy_check_begin();
    (void)futoin_host_add(s->bsi, l, m, f);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    s->did |= FPY_DID_ADD;
    return Py_NewRef(s);
}

PyObject* fpy_error_info(fpy_steps* s)
{
    return live(s) && not_other_thread(s, "error_info") ? fpy_error_info_of(s->bsi)
                                                        : NULL;
}

PyObject* fpy_last_exception(fpy_steps* s)
{
    return live(s) && not_other_thread(s, "last_exception")
                   ? fpy_last_exception_of(s->bsi)
                   : NULL;
}

PyObject* fpy_root_id(fpy_steps* s)
{
    ptrdiff_t id;
    if (!live(s) || !not_other_thread(s, "root_id")) {
        return NULL;
    }
    fpy_check_begin();
    id = s->bsi->api->rootId(s->bsi);
    if (fpy_check_end() < 0) {
        return NULL;
    }
    return PyLong_FromSsize_t(id);
}

PyObject* fpy_is_valid(fpy_steps* s)
{
    if (!s->bsi) {
        Py_RETURN_FALSE;
    }
    return PyBool_FromLong(s->bsi->api->isValid(s->bsi));
}

PyObject* fpy_is_same_thread(fpy_steps* s)
{
    if (!live(s)) {
        return NULL;
    }
    return PyBool_FromLong(same_thread(s));
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
    fpy_tool* t;
    if (s->tool_obj) {
        return Py_NewRef(s->tool_obj);
    }
    t = s->bsi ? fpy_tool_find(futoin_async_tool(s->bsi)) : NULL;
    if (t) {
        return Py_NewRef((PyObject*)t);
    }
    Py_RETURN_NONE;
}

/* _fail(exc): fail a waiting step with a Python exception, as if its code
 * had raised it (await_: the awaited future's exception). Loop thread. */
PyObject* fpy_fail(fpy_steps* s, PyObject* exc)
{
    if (!live(s) || !not_other_thread(s, "_fail()")) {
        return NULL;
    }
    if (!PyExceptionInstance_Check(exc)) {
        PyErr_SetString(PyExc_TypeError, "_fail(exc): an exception instance");
        return NULL;
    }
    PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
    fpy_check_begin();
    on_exception(s->bsi);
    --fpy_T.expect;
    fpy_T.misused = 0; /* the step had ended already: a lost race */
    Py_RETURN_NONE;
}

PyObject* fpy_is_executing(fpy_steps* s)
{
    return PyBool_FromLong(s->exec != NULL);
}
