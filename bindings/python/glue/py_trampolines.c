/*
 * The trampolines: the callbacks, handed to the adapter layer
 * (futoin/sys/wrap.h), that run Python callables as steps, error handlers,
 * cancel handlers, loop and repeat bodies and await_() steps, so the same
 * code drives our handles and any other FTN12 implementation's; and what a
 * step's return value means.
 *
 * One Python object per step call would cost as much as the step itself;
 * the trampolines keep one spare object (as_cache) and reuse it whenever
 * the step did not keep a reference to its `asi`. Consecutive Python steps
 * run in one call from the core (ext chain(): run_steps), a success() kept
 * in Python handing its values to the next step as they are.
 */
#include "futoin_py.h"

/* ---- records ------------------------------------------------------------ */

/* A step callable with its error handler, handed to C as one record;
 * released exactly once by the runtime's release hook. The hook may run
 * without the GIL; the record is then freed by the next GIL holder
 * (py_gil.c), so pymalloc serves it. A callable without an error handler
 * (most steps, loop bodies, cancel handlers) is handed over as itself: one
 * allocation less per step. */
struct fpy_rec
{
    /* Not an object: the header only puts &rec_tag where an object has its
     * type, so that step data (a callable or a record, which ext chain()
     * hands back alike) tells which it is (rec_fn). Never referenced. */
    PyObject_HEAD
    PyObject* fn;
    PyObject* eh;
};

static PyTypeObject rec_tag; /* never readied: only its address is used */

fpy_rec* fpy_rec_new(PyObject* fn, PyObject* eh)
{
    fpy_rec* r = PyMem_Malloc(sizeof(*r));
    if (!r) {
        PyErr_NoMemory();
        return NULL;
    }
    r->ob_base.ob_refcnt = 1;
    r->ob_base.ob_type = &rec_tag;
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
void fpy_rec_release(void* data)
{
    fpy_release(rec_free, data);
}

void fpy_obj_release(void* data)
{
    if (fpy_T.held && data) {
        Py_DECREF((PyObject*)data); /* the usual case (fpy_release's first) */
        return;
    }
    fpy_release_obj(data);
}

/* Where a step came from, for async stacks: computed from the callable
 * only when a stack is recorded (py_async_stack.c). */
static void rec_origin(void* data, futoin_frame_origin* out)
{
    fpy_origin_of(((fpy_rec*)data)->fn, out);
}

const futoin_step_class fpy_fn_class = {sizeof(futoin_step_class),
                                        fpy_obj_release, fpy_origin_fn};
const futoin_step_class fpy_rec_class = {sizeof(futoin_step_class),
                                         fpy_rec_release, rec_origin};

/* ---- the step object of a call ------------------------------------------ */

static PyObject* as_cache; /* one spare step object */

static PyObject* as_new(FutoInAsyncSteps* bsi)
{
    fpy_steps* s = (fpy_steps*)as_cache;
    if (!s) {
        return fpy_steps_for(&fpy_steps_type, bsi, FPY_STEP);
    }
    as_cache = NULL;
    s->bsi = bsi;
    s->did = 0;
    return (PyObject*)s;
}

static void as_done(PyObject* o)
{
    if (Py_REFCNT(o) == 1 && !as_cache && Py_TYPE(o) == &fpy_steps_type) {
        ((fpy_steps*)o)->bsi = NULL; /* a cached object refers to nothing */
        as_cache = o;
        return;
    }
    if (Py_REFCNT(o) > 1) {
        fpy_steps_keep((fpy_steps*)o); /* kept by the step's code */
    }
    Py_DECREF(o);
}

/* ---- the kept success() ------------------------------------------------- */

/* A success() in a step's own callback, with values a trip through the
 * runtime would give back equal (and of the same type), is kept here
 * (fpy_T.kept) instead of being sent: when the callback returns and the
 * next step is a Python step too, the runtime lets it run in the same call
 * (ext chain(): run_steps) and the values go to it as they are; otherwise
 * the kept success() is sent then. Any other call that reaches the
 * runtime sends it first (fpy_kept_flush: the methods of AsyncSteps and
 * of ToolBase that touch flows), so the runtime sees every call in the
 * order it was made. */
int fpy_kept_apply(void)
{
    FutoInAsyncSteps* bsi = fpy_T.chain_bsi;
    int n = fpy_T.kept - 1, i, rc;
    FutoInArgs fa;
    fpy_T.kept = 0;
    rc = n ? fpy_args_from(fpy_T.kept_v, n, &fa) : 0;
    for (i = 0; i < n; ++i) {
        Py_DECREF(fpy_T.kept_v[i]);
    }
    if (rc < 0) {
        return -1; /* out of memory */
    }
    fpy_check_begin();
    bsi->api->success(bsi, n ? &fa : NULL);
    if (n) {
        fpy_args_reset(&fa); /* no-op after a move; frees if refused */
    }
    return fpy_check_end();
}

/* After the callback of `bsi` (no chain): send its kept success(), as if
 * success() had been called where it was. */
static void kept_settle(FutoInAsyncSteps* bsi)
{
    if (fpy_kept_apply() < 0) {
        fpy_on_exception(bsi);
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
        fpy_on_exception(bsi);
        return;
    }
    if (bsi == fpy_T.chain_bsi && !fpy_T.kept && n <= 4 && fpy_kept_keep(items, n)) {
        return; /* sent by run_steps, or handed to the next step */
    }
    if (fpy_args_from(items, n, &fa) < 0) {
        fpy_on_exception(bsi);
        return;
    }
    bsi->api->success(bsi, &fa);
    fpy_args_reset(&fa);
}

/* ---- trampolines -------------------------------------------------------- */

/* What follows `asi` in the call; built after the GIL is taken. */
enum { EXTRA_NONE, EXTRA_CODE, EXTRA_INDEX, EXTRA_AWAIT };

/* Call fn(asi, *extra) as code of `bsi`: a loop body, error handler or
 * await_() step (in_flow: its exceptions and return value go to the flow)
 * or a cancel handler. Steps: run_steps(). */
static void call_step(FutoInAsyncSteps* bsi, PyObject* fn, int in_flow,
                      int kind, const char* code,
                      size_t index, PyObject* extra)
{
    fpy_gil g;
    PyObject* stack[5];
    PyObject *a, *res;
    FutoInAsyncSteps *prev, *prev_chain;
    size_t n = 1, i;

    fpy_gil_enter(&g);
    if (fpy_T.kept && fpy_kept_apply() < 0) {
        PyErr_Clear(); /* a callback nested in one that kept: sent first */
    }
    prev = fpy_T.cur;
    prev_chain = fpy_T.chain_bsi;
    fpy_T.chain_bsi = NULL; /* nothing is kept in these callbacks */
    a = as_new(bsi);
    if (!a) {
        goto fail;
    }
    stack[0] = a;
    switch (kind) {
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
        fpy_on_exception(bsi);
    } else {
        fpy_on_callback_exception(bsi, fn);
    }
    fpy_T.cur = prev;
    fpy_T.chain_bsi = prev_chain;
    for (i = 1; i < n; ++i) {
        Py_DECREF(stack[i]);
    }
    as_done(a);
    fpy_gil_leave(&g);
    return;
fail:
    /* out of memory building the call */
    PyErr_Clear();
    fpy_T.chain_bsi = prev_chain;
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

/* The callable of a Python step's data: a record or the callable itself. */
static inline PyObject* rec_fn(void* data)
{
    return Py_TYPE((PyObject*)data) == &rec_tag ? ((fpy_rec*)data)->fn : data;
}

static const FutoInAsyncSteps_execute_callback chain_fns[] = {fpy_tr_fn,
                                                              fpy_tr_step};

/* A Python step `bsi` of callable `fn`, and the Python steps that follow it
 * as long as the runtime lets them run in this same call (ext chain()):
 * each gets the values the one before kept (fpy_T.kept) as they are, and
 * the step object of the one before when its code kept no reference to
 * it. What call_step() does for one step, for each. */
static void run_steps(FutoInAsyncSteps* bsi, PyObject* fn, const FutoInArgs* args)
{
    fpy_gil g;
    PyObject* stack[5];
    PyObject *a, *res;
    FutoInAsyncSteps *prev, *prev_chain, *next;
    const futoin_async_ext_table* x;
    void* data;
    size_t n = 1, i;

    fpy_gil_enter(&g);
    if (fpy_T.kept && fpy_kept_apply() < 0) {
        PyErr_Clear(); /* a callback nested in one that kept: sent first */
    }
    prev = fpy_T.cur;
    prev_chain = fpy_T.chain_bsi;
    a = as_new(bsi);
    if (!a) {
        goto fail;
    }
    stack[0] = a;
    for (i = 0; args && i < 4 && args->args[i].type; ++i) {
        PyObject* o = futoin_py_from_binval(&args->args[i]);
        if (!o) {
            goto fail;
        }
        stack[n++] = o;
    }
    x = fpy_ext(bsi);
    fpy_T.chain_bsi = x ? bsi : NULL;
    for (;;) {
        fpy_T.cur = bsi;
        res = PyObject_Vectorcall(fn, stack, n, NULL);
        for (i = 1; i < n; ++i) {
            Py_DECREF(stack[i]);
        }
        n = 1;
        if (!res) {
            if (fpy_T.kept) { /* success() then a raise: the runtime sees both */
                PyObject *et, *ev, *etb;
                PyErr_Fetch(&et, &ev, &etb);
                if (fpy_kept_apply() < 0) {
                    PyErr_Clear();
                }
                PyErr_Restore(et, ev, etb);
            }
            fpy_on_exception(bsi);
            break;
        }
        if (res != Py_None) {
            if (fpy_T.kept) {
                kept_settle(bsi); /* on_return() then finds it completed */
            }
            on_return(bsi, a, res);
        }
        Py_DECREF(res);
        if (!fpy_T.chain_bsi || (!fpy_T.kept && ((fpy_steps*)a)->did)) {
            break; /* a foreign handle, or the step did more than success() */
        }
        if (Py_REFCNT(a) > 1) {
            fpy_steps_keep((fpy_steps*)a); /* closed when its step ends */
        }
        data = NULL;
        next = x->chain(bsi, chain_fns, 2, &data);
        if (!next) {
            if (fpy_T.kept) {
                kept_settle(bsi);
            }
            break;
        }
        /* `bsi` completed and popped (its data released): `next` runs
         * now, with the values `bsi` kept */
        /* all four slots, those past n unused: no loop (nor memcpy call) */
        stack[1] = fpy_T.kept_v[0];
        stack[2] = fpy_T.kept_v[1];
        stack[3] = fpy_T.kept_v[2];
        stack[4] = fpy_T.kept_v[3];
        n = fpy_T.kept ? (size_t)fpy_T.kept : 1;
        fpy_T.kept = 0;
        bsi = next;
        fn = rec_fn(data);
        if (Py_REFCNT(a) == 1) {
            ((fpy_steps*)a)->bsi = next;
            ((fpy_steps*)a)->did = 0;
        } else {
            Py_DECREF(a);
            if (!(a = as_new(next))) {
                fpy_T.chain_bsi = NULL;
                goto fail;
            }
        }
        stack[0] = a;
        fpy_T.chain_bsi = next;
    }
    fpy_T.cur = prev;
    fpy_T.chain_bsi = prev_chain;
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
    fpy_T.cur = prev;
    fpy_T.chain_bsi = prev_chain;
    bsi->api->handle_error(bsi, FUTOIN_ERR_INTERNAL_ERROR, "out of memory");
    fpy_gil_leave(&g);
}

/* A step with an error handler (data: fpy_rec). */
void fpy_tr_step(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    run_steps(bsi, ((fpy_rec*)data)->fn, args);
}

/* A step without one (data: the callable). */
void fpy_tr_fn(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    run_steps(bsi, data, args);
}

void fpy_tr_error(FutoInAsyncSteps* bsi, void* data, const char* code)
{
    fpy_rec* r = data;
    call_step(bsi, r->eh, 1, EXTRA_CODE, code, 0, NULL);
}

/* done(), exception() and result() of an asyncio future. On an object of
 * asyncio.Future itself (what await_() gets from asyncio: a C type), its
 * method descriptors, looked up once, are called directly: a call by name
 * looks the method up again each time (a third of the call). Any other
 * future: by name. NULL: raised (or the names could not be made). */
enum { FUT_DONE, FUT_EXCEPTION, FUT_RESULT };

static PyObject* fut_call(PyObject* fut, int which)
{
    static const char* const names[3] = {"done", "exception", "result"};
    static PyObject *name[3], *meth[3];
    static PyTypeObject* tp;
    if (Py_TYPE(fut) == tp) {
        return PyObject_Vectorcall(meth[which], &fut, 1, NULL);
    }
    if (!name[0]) {
        for (int i = 0; i < 3; ++i) {
            if (!(name[i] = PyUnicode_InternFromString(names[i]))) {
                return NULL;
            }
        }
    }
    if (!tp && fpy_H.future_type && Py_TYPE(fut) == (PyTypeObject*)fpy_H.future_type
        && (Py_TYPE(fut)->tp_flags & Py_TPFLAGS_IMMUTABLETYPE)) {
        PyObject* m[3];
        int ok = 1;
        for (int i = 0; i < 3; ++i) {
            m[i] = _PyType_Lookup(Py_TYPE(fut), name[i]); /* borrowed */
            ok = ok && m[i] && Py_IS_TYPE(m[i], &PyMethodDescr_Type);
        }
        if (ok) {
            for (int i = 0; i < 3; ++i) {
                meth[i] = Py_NewRef(m[i]);
            }
            tp = (PyTypeObject*)Py_NewRef((PyObject*)Py_TYPE(fut));
            return PyObject_Vectorcall(meth[which], &fut, 1, NULL);
        }
    }
    return PyObject_CallMethodNoArgs(fut, name[which]);
}

/* await_(awaitable). Its asyncio future (an awaitable that is not one is
 * made a Task by the Python layer's future_of()) completes the step at once
 * if it is done already; a flow that `await root` drives hands it to that
 * awaiter, which yields it to the awaiting Task (py_asyncio.c); otherwise
 * the Python layer's await_step(asi, future) waits for it with a done
 * callback. */
static int await_done_now(FutoInAsyncSteps* bsi, PyObject* aw)
{
    PyObject *d, *exc, *res;
    FutoInArgs fa;
    int rc = 0;
    if (!fpy_H.future_type || !PyObject_TypeCheck(aw, (PyTypeObject*)fpy_H.future_type)) {
        return 0;
    }
    d = fut_call(aw, FUT_DONE);
    if (d != Py_True) {
        int pending = d == Py_False;
        Py_XDECREF(d);
        PyErr_Clear();
        return pending ? 2 : 0; /* 2: it said it is not done */
    }
    Py_DECREF(d);
    exc = fut_call(aw, FUT_EXCEPTION); /* raises if cancelled */
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
    res = fut_call(aw, FUT_RESULT);
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

/* The asyncio future of an awaitable of a step of `bsi` (new reference),
 * or NULL (raised): in asyncio's loop when it drives the flow, else in the
 * event loop of the flow's Tool (the Python layer's future_of()). */
static PyObject* future_of(FutoInAsyncSteps* bsi, PyObject* aw)
{
    PyObject *fn, *tool, *fut;
    if (fpy_H.future_type && PyObject_TypeCheck(aw, (PyTypeObject*)fpy_H.future_type)) {
        return Py_NewRef(aw);
    }
    if (!(fn = fpy_hook("future_of"))) {
        return NULL;
    }
    tool = futoin_wrap_is_ours(bsi) ? fpy_tool_obj_of(futoin_async_tool(bsi))
                                    : Py_NewRef(Py_None);
    if (!tool) {
        return NULL;
    }
    fut = PyObject_CallFunctionObjArgs(fn, aw, tool, NULL);
    Py_DECREF(tool);
    return fut;
}

/* A step returned an awaitable (an `async def` step): as await_(), from
 * inside the step's own callback (`a` is its asi). */
static void await_in_step(FutoInAsyncSteps* bsi, PyObject* a, PyObject* aw)
{
    PyObject* fut = future_of(bsi, aw);
    int rc = -1;
    if (fut) {
        rc = await_done_now(bsi, fut);
        if (rc == 0 || rc == 2) {
            rc = fpy_awaiter_take(bsi, fut, rc == 2) ? 1 : 0;
        }
        if (rc == 0) {
            PyObject* r = PyObject_CallFunctionObjArgs(fpy_H.await_step, a, fut, NULL);
            rc = r ? 1 : -1;
            Py_XDECREF(r);
        }
        Py_DECREF(fut);
    }
    if (rc < 0) {
        fpy_on_exception(bsi);
    }
}

/* await_() (data: the awaitable). */
void fpy_tr_await(FutoInAsyncSteps* bsi, void* data, const FutoInArgs* args)
{
    fpy_gil g;
    PyObject* fut;
    int rc = -1;
    fpy_gil_enter(&g);
    fut = future_of(bsi, data);
    if (fut) {
        rc = await_done_now(bsi, fut);
        if (rc == 0 || rc == 2) {
            rc = fpy_awaiter_take(bsi, fut, rc == 2) ? 1 : 0;
        }
    }
    if (rc < 0) {
        fpy_on_exception(bsi);
    }
    fpy_gil_leave(&g);
    if (rc == 0) {
        call_step(bsi, fpy_H.await_step, 1, EXTRA_AWAIT, NULL, 0, fut);
    }
    if (fut) {
        fpy_gil_enter(&g);
        Py_DECREF(fut);
        fpy_gil_leave(&g);
    }
}

/* The awaiter completes the step it took: with the future's outcome. */
static void step_complete_with(FutoInAsyncSteps* bsi, PyObject* fut);
static void step_success_with(FutoInAsyncSteps* bsi, PyObject* res);

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
    PyObject *exc, *res;
    exc = fut_call(fut, FUT_EXCEPTION);
    if (!exc) {
        fpy_on_exception(bsi); /* cancelled: CancelledError fails the step */
        return;
    }
    if (exc != Py_None) {
        PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
        Py_DECREF(exc);
        fpy_on_exception(bsi);
        return;
    }
    Py_DECREF(exc);
    res = fut_call(fut, FUT_RESULT);
    if (!res) {
        fpy_on_exception(bsi);
        return;
    }
    step_success_with(bsi, res);
}

/* ... with the future's result `res` (a reference handed over). */
static void step_success_with(FutoInAsyncSteps* bsi, PyObject* res)
{
    FutoInArgs fa;
    if (res == Py_None) {
        futoin_wrap_try_success(bsi, NULL);
    } else if (fpy_args_from(PyTuple_CheckExact(res) ? &PyTuple_GET_ITEM(res, 0) : &res,
                             PyTuple_CheckExact(res) ? PyTuple_GET_SIZE(res) : 1,
                             &fa) < 0) {
        fpy_on_exception(bsi);
    } else {
        futoin_wrap_try_success(bsi, &fa);
        fpy_args_reset(&fa);
    }
    Py_DECREF(res);
}

/* Cancel handlers, loop and repeat bodies (data: the callable). */
void fpy_tr_cancel(FutoInAsyncSteps* bsi, void* data)
{
    call_step(bsi, data, 0, EXTRA_NONE, NULL, 0, NULL);
}

void fpy_tr_loop(FutoInAsyncSteps* bsi, void* data)
{
    call_step(bsi, data, 1, EXTRA_NONE, NULL, 0, NULL);
}

void fpy_tr_repeat(FutoInAsyncSteps* bsi, void* data, size_t i)
{
    call_step(bsi, data, 1, EXTRA_INDEX, NULL, i, NULL);
}
