/*
 * One execution of a root: execute() and what builds on it (run(),
 * `await root`, promise(), execute(on_success=...)), how it settles exactly
 * once (with the last step's values, an unhandled error, or as cancelled),
 * and cancel(), on the loop thread or posted there from another thread.
 */
#include "futoin_py.h"

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
            fpy_on_callback_exception(e->root, e->on_result);
        }
    } else if (e->on_result && e->mode == EXEC_AWAITER) {
        if (fpy_awaiter_settle(e->on_result, exc, value) < 0) {
            fpy_on_callback_exception(e->root, e->on_result);
        }
    } else if (e->on_result) {
        res = PyObject_CallFunctionObjArgs(e->on_result, exc ? exc : Py_None,
                                           value ? value : Py_None, NULL);
        if (res) {
            Py_DECREF(res);
        } else {
            fpy_on_callback_exception(e->root, e->on_result);
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
            fpy_on_callback_exception(bsi, fn);
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
            fpy_on_callback_exception(bsi, e->unhandled);
        }
    } else {
        PyObject* stack = fpy_async_stack_of(bsi);
        if (!stack) {
            PyErr_Clear();
        }
        exc = PyObject_CallFunction(fpy_H.flow_error, "sOOO", code ? code : "", ei, le,
                                    stack ? stack : Py_None);
        Py_XDECREF(stack);
        if (!exc) {
            PyErr_WriteUnraisable(fpy_H.flow_error);
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
        PyObject* exc = PyObject_CallFunction(fpy_H.cancelled_type, "s",
                                              "the flow was cancelled");
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

/* The root object lets go of its execution (freed, or cancelled): the
 * flow settles without it. */
void fpy_exec_detach(fpy_steps* s)
{
    if (s->exec) {
        s->exec->owner = NULL;
        s->exec = NULL;
    }
}

/* ---- execute() and cancel() --------------------------------------------- */

/* execute(unhandled=None) and _execute(on_result). A root of our Tool is
 * kept alive by the tool while it runs: from here until it settles (its
 * last step, an unhandled error, or a cancel). */
static PyObject* execute(fpy_steps* s, PyObject* unhandled, PyObject* on_result,
                         int mode, PyObject* fut_cb, int keep);

PyObject* fpy_execute(fpy_steps* s, PyObject* unhandled, PyObject* on_result)
{
    return execute(s, unhandled, on_result, EXEC_CALL, NULL, 1);
}

PyObject* fpy_execute_with(fpy_steps* s, PyObject* unhandled, PyObject* on_success)
{
    PyObject* r;
    on_success = fpy_none_to_null(on_success);
    if (fpy_check_callables("execute(unhandled=None, on_success=None)", on_success,
                            NULL) < 0) {
        return NULL;
    }
    r = execute(s, unhandled, NULL, EXEC_CALL, NULL, 1);
    if (r && on_success && s->exec) {
        s->exec->on_success = Py_NewRef(on_success);
    }
    return r;
}

int fpy_execute_into(fpy_steps* s, PyObject* fut, PyObject* cb)
{
    PyObject* r = execute(s, NULL, fut, EXEC_FUTURE, cb, 1);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* `keep`: 0 when the awaiter, which holds the root, runs the flow itself
 * (the tool then need not keep the root alive: a dict entry made and
 * dropped per flow) */
int fpy_execute_awaited(fpy_steps* s, PyObject* awaiter, int keep)
{
    PyObject* r = execute(s, NULL, awaiter, EXEC_AWAITER, NULL, keep);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyObject* execute(fpy_steps* s, PyObject* unhandled, PyObject* on_result,
                         int mode, PyObject* fut_cb, int keep)
{
    int into_future = mode != EXEC_CALL;
    fpy_exec* e;
    if (!fpy_live(s) || !fpy_not_other_thread(s, "execute()")) {
        return NULL;
    }
    if (s->kind != FPY_ROOT) {
        return fpy_invalid_state("execute() is for a root, not a step");
    }
    if (s->exec) {
        return fpy_invalid_state("execute(): the root is executing already");
    }
    unhandled = fpy_none_to_null(unhandled);
    on_result = fpy_none_to_null(on_result);
    if (fpy_check_callables("execute(unhandled=None)", unhandled,
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
    if (s->tool && keep) {
        PyObject* key = fpy_flow_key(s);
        PyObject* token = PyTuple_New(1);
        int rc = -1;
        if (key && token) {
            PyTuple_SET_ITEM(token, 0, Py_NewRef((PyObject*)s));
            rc = PyDict_SetItem(s->tool->flows, key, token);
        }
        Py_XDECREF(key);
        Py_XDECREF(token);
        if (rc < 0) {
            e->refs = 1;
            exec_unref(e);
            return NULL;
        }
        s->kept = 1;
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
        return fpy_live(s) ? fpy_invalid_state("cancel() is for a root, not a step")
                           : NULL;
    }
    if (!s->bsi) {
        Py_RETURN_FALSE; /* freed (or its tool closed): nothing executes */
    }
    if (!fpy_same_thread(s)) {
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
    /* no longer executing from the caller's point of view: it may add
     * steps and execute again; the flow settles as cancelled */
    fpy_exec_detach(s);
    fpy_tool_root_done(s);
    return PyBool_FromLong(executing);
}
