/*
 * The type AsyncSteps (futoin_async.AsyncSteps, the public class itself):
 * its slots, its methods and getters (each unpacks its arguments and calls
 * one operation: py_add.c, py_complete.c, py_execute.c, py_handles.c,
 * py_state.c, py_asyncio.c) and their docstrings. Why it is written by
 * hand and not subclassed: py_types.c.
 */
#include "py_types.h"

#include <structmember.h>

#define S(o) ((fpy_steps*)(o))

fpy_steps* fpy_steps_alloc(PyTypeObject* type)
{
    return (fpy_steps*)type->tp_alloc(type, 0);
}

static int init_with(fpy_steps* s, PyObject* tool);

static int steps_init(PyObject* self, PyObject* args, PyObject* kw)
{
    static char* kwlist[] = {"tool", NULL};
    PyObject* tool = Py_None;
    PyObject* dflt = NULL;
    fpy_steps* s = S(self);
    int rc;
    if (!kw && PyTuple_GET_SIZE(args) == 1) {
        tool = PyTuple_GET_ITEM(args, 0); /* AsyncSteps(tool): the usual call */
    } else if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:AsyncSteps", kwlist, &tool)) {
        return -1;
    }
    if (tool == Py_None) {
        PyObject* fn = fpy_hook("default_tool");
        if (!fn || !(dflt = PyObject_CallNoArgs(fn))) {
            return -1;
        }
        tool = dflt;
    }
    rc = init_with(s, tool);
    Py_XDECREF(dflt);
    return rc;
}

/* AsyncSteps(tool) once the tool is known (not None). */
static int init_with(fpy_steps* s, PyObject* tool)
{
    if (!PyObject_TypeCheck(tool, &fpy_tool_type)) {
        PyErr_Format(PyExc_TypeError, "AsyncSteps(tool): a Tool is required, not %.80s",
                     Py_TYPE(tool)->tp_name);
        return -1;
    }
    if (s->bsi) {
        PyErr_SetString(PyExc_RuntimeError, "AsyncSteps.__init__() called twice");
        return -1;
    }
    return fpy_steps_init_root(s, tool);
}

/* AsyncSteps(tool), the usual call (a root per flow), without the
 * argument tuple and type.__call__ of the generic path. Only the class
 * itself: tp_vectorcall is not inherited, subclasses take that path. */
static PyObject* steps_vectorcall(PyObject* type, PyObject* const* args, size_t nargsf,
                                  PyObject* kwnames)
{
    PyObject* self;
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames || args[0] == Py_None
        || type != (PyObject*)&fpy_steps_type) {
        PyObject *tuple, *kw = NULL, *r;
        Py_ssize_t n = PyVectorcall_NARGS(nargsf);
        if (!(tuple = PyTuple_New(n))) {
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; ++i) {
            PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
        }
        if (kwnames) {
            kw = PyDict_New();
            for (Py_ssize_t i = 0; kw && i < PyTuple_GET_SIZE(kwnames); ++i) {
                if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0) {
                    Py_CLEAR(kw);
                }
            }
            if (!kw) {
                Py_DECREF(tuple);
                return NULL;
            }
        }
        r = PyType_Type.tp_call(type, tuple, kw);
        Py_DECREF(tuple);
        Py_XDECREF(kw);
        return r;
    }
    self = (PyObject*)fpy_steps_alloc((PyTypeObject*)type);
    if (self && init_with((fpy_steps*)self, args[0]) < 0) {
        Py_CLEAR(self);
    }
    return self;
}

static PyObject* steps_repr(PyObject* self)
{
    fpy_steps* s = S(self);
    const char* kind = s->kind == FPY_ROOT ? "root" : "step";
    if (!s->bsi || !s->bsi->api->isValid(s->bsi)) {
        return PyUnicode_FromFormat("<futoin_async.AsyncSteps %s (finished)>", kind);
    }
    return PyUnicode_FromFormat("<futoin_async.AsyncSteps %s %p>", kind, s->bsi);
}

/* await root: runs the flow in the awaiting Task (py_asyncio.c). */
static PyObject* steps_await(PyObject* self)
{
    return fpy_awaiter_new(S(self));
}

static PyAsyncMethods steps_as_async = {.am_await = steps_await};

static int steps_traverse(PyObject* self, visitproc visit, void* arg)
{
    Py_VISIT(S(self)->tool_obj);
    return 0;
}

/* The tool outlives its roots: a root frees its FTN12 handle on the tool's
 * loop in dealloc, so tool_obj is never cleared here. The cycle
 * tool -> executing roots -> tool is broken by the tool's own clear. */
static int steps_gc_clear(PyObject* self)
{
    return 0;
}

/* Deallocs free FTN12 handles and loops, which runs release hooks and
 * may clear errors: the exception being raised while the object goes
 * (e.g. out of a frame that is unwinding) is kept aside meanwhile. */
static void steps_dealloc(PyObject* self)
{
    PyObject *et, *ev, *etb;
    PyObject_GC_UnTrack(self);
    PyErr_Fetch(&et, &ev, &etb);
    if (S(self)->weakrefs) {
        PyObject_ClearWeakRefs(self);
    }
    fpy_steps_clear(S(self));
    PyErr_Restore(et, ev, etb);
    Py_TYPE(self)->tp_free(self);
}

static PyObject* m_add(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames)
{
    FLUSH();
    PARSE("add", 1, "step", "onerror");
    return fpy_add(S(self), a_[0], a_[1]);
}

static PyObject* m__add_foreign(PyObject* self, PyObject* const* args,
                                Py_ssize_t nargs, PyObject* kwnames)
{
    FLUSH();
    PARSE("_add_foreign", 3, "language", "module", "function");
    return fpy_add_foreign(S(self), a_[0], a_[1], a_[2]);
}

static PyObject* m_await_(PyObject* self, PyObject* arg)
{
    FLUSH();
    return fpy_await(S(self), arg);
}

static PyObject* m_parallel(PyObject* self, PyObject* const* args,
                            Py_ssize_t nargs, PyObject* kwnames)
{
    FLUSH();
    PARSE("parallel", 0, "onerror");
    return fpy_parallel(S(self), a_[0]);
}

static PyObject* m_success(PyObject* self, PyObject* const* args, Py_ssize_t nargs)
{
    fpy_steps* s = S(self);
    if (s->bsi == fpy_T.chain_bsi && s->bsi && !s->did && !fpy_T.kept && nargs <= 4
        && fpy_kept_keep(args, nargs)) {
        /* the usual one: kept for the next step (py_trampolines.c) */
        s->did |= FPY_DID_COMPLETE;
        Py_RETURN_NONE;
    }
    return fpy_success(s, args, nargs);
}

static PyObject* m_success_step(PyObject* self, PyObject* const* args,
                                Py_ssize_t nargs)
{
    FLUSH();
    return fpy_success_step(S(self), args, nargs);
}

static PyObject* m_error(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames)
{
    FLUSH();
    PARSE("error", 1, "code", "info");
    return fpy_error(S(self), a_[0], a_[1]);
}

static PyObject* m_set_timeout(PyObject* self, PyObject* arg)
{
    FLUSH();
    return fpy_set_timeout(S(self), arg);
}

static PyObject* m_set_cancel(PyObject* self, PyObject* arg)
{
    FLUSH();
    return fpy_set_cancel(S(self), arg);
}

static PyObject* m_wait_external(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_wait_external(S(self));
}

static PyObject* m_loop(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames)
{
    FLUSH();
    PARSE("loop", 1, "body", "label");
    return fpy_loop(S(self), a_[0], a_[1]);
}

static PyObject* m_repeat(PyObject* self, PyObject* const* args,
                          Py_ssize_t nargs, PyObject* kwnames)
{
    FLUSH();
    PARSE("repeat", 2, "count", "body", "label");
    return fpy_repeat(S(self), a_[0], a_[1], a_[2]);
}

static PyObject* m_break_loop(PyObject* self, PyObject* const* args,
                              Py_ssize_t nargs, PyObject* kwnames)
{
    FLUSH();
    PARSE("break_loop", 0, "label");
    return fpy_break(S(self), a_[0], 0);
}

static PyObject* m_continue_loop(PyObject* self, PyObject* const* args,
                                 Py_ssize_t nargs, PyObject* kwnames)
{
    FLUSH();
    PARSE("continue_loop", 0, "label");
    return fpy_break(S(self), a_[0], 1);
}

static PyObject* m_sync(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames)
{
    FLUSH();
    PARSE("sync", 2, "obj", "step", "onerror");
    return fpy_sync(S(self), a_[0], a_[1], a_[2]);
}

static PyObject* m_execute(PyObject* self, PyObject* const* args,
                           Py_ssize_t nargs, PyObject* kwnames)
{
    FLUSH();
    PARSE("execute", 0, "unhandled", "on_success");
    return fpy_execute_with(S(self), a_[0], a_[1]);
}

static PyObject* m__execute(PyObject* self, PyObject* arg)
{
    FLUSH();
    return fpy_execute(S(self), NULL, arg);
}

static PyObject* m_cancel(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_cancel(S(self));
}

static PyObject* m_new_instance(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_new_instance(S(self));
}

static PyObject* m_free(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_free(S(self));
}

static PyObject* m_is_valid(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_is_valid(S(self));
}

static PyObject* m_is_same_thread(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_is_same_thread(S(self));
}

static PyObject* m_binary(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_binary(S(self));
}

static PyObject* m_is_ours(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_is_ours(S(self));
}

static PyObject* m_promise(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_promise(S(self));
}

static PyObject* m__fail(PyObject* self, PyObject* arg)
{
    FLUSH();
    return fpy_fail(S(self), arg);
}

static PyObject* m__tool_ptr(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_tool_ptr_of(S(self));
}

static PyObject* m__wrap(PyObject* unused, PyObject* const* args,
                         Py_ssize_t nargs, PyObject* kwnames)
{
    FLUSH();
    int own = 0;
    PARSE("_wrap", 2, "cls", "address", "owned", "tool");
    if (a_[2] && (own = PyObject_IsTrue(a_[2])) < 0) {
        return NULL;
    }
    return fpy_steps_wrap(a_[0], a_[1], own, a_[3]);
}

static PyObject* g_state(PyObject* self, void* c)
{
    FLUSH();
    return fpy_state(S(self));
}
static PyObject* g_async_stack(PyObject* self, void* c)
{
    FLUSH();
    return fpy_async_stack(S(self));
}
static PyObject* g_error_info(PyObject* self, void* c)
{
    FLUSH();
    return fpy_error_info(S(self));
}
static PyObject* g_last_exception(PyObject* self, void* c)
{
    FLUSH();
    return fpy_last_exception(S(self));
}
static PyObject* g_root_id(PyObject* self, void* c)
{
    FLUSH();
    return fpy_root_id(S(self));
}
static PyObject* g_tool(PyObject* self, void* c)
{
    FLUSH();
    return fpy_tool_of(S(self));
}
static PyObject* g_executing(PyObject* self, void* c)
{
    FLUSH();
    return fpy_is_executing(S(self));
}

static PyMethodDef steps_methods[] = {
    M("add", m_add, FC,
      "add($self, step, onerror=None)\n--\n\n"
      "Add a step: ``step(asi, *values)`` gets the previous step's values;\n"
      "``onerror(asi, code)`` handles an error of the step and of everything\n"
      "it added. Returns self (for chaining)."),
    M("_add_foreign", m__add_foreign, FC,
      "_add_foreign($self, language, module, function)\n--\n\n"
      "futoin_host_add(): a step written in another language."),
    M("await_", m_await_, METH_O,
      "await_($self, awaitable, /)\n--\n\n"
      "Add a step that waits for an asyncio awaitable: its result is the\n"
      "step's value (None: no value; a tuple: several); its exception\n"
      "becomes the step's error (a FutoInError keeps its code, any other is\n"
      "InternalError with the exception as ``__cause__`` of what run()/await\n"
      "raise); cancelling the flow cancels the future. The flow must be\n"
      "driven by asyncio (``await root`` / ``root.promise()``). Returns self."),
    M("parallel", m_parallel, FC,
      "parallel($self, onerror=None)\n--\n\n"
      "Add a step that runs the steps added to the returned AsyncSteps\n"
      "concurrently; it completes when all of them have."),
    M("success", m_success, METH_FASTCALL,
      "success($self, /, *values)\n--\n\n"
      "Complete the step with up to 4 values for the next step.\n\n"
      "In the step's own callback it returns None. Completing a waiting\n"
      "step from elsewhere (a timer, another thread) returns True if this\n"
      "call completed it, False if the step had already ended (its\n"
      "timeout, a cancel, an earlier completion)."),
    M("success_step", m_success_step, METH_FASTCALL,
      "success_step($self, /, *values)\n--\n\n"
      "Add a step that only calls success(*values). Returns self."),
    M("error", m_error, FC,
      "error($self, code, info=None)\n--\n\n"
      "Fail the step with an FTN12 error code, then leave the step's code\n"
      "with a private BaseException that ``except Exception`` and\n"
      "``except FutoInError`` do not stop (``finally`` runs); the flow's\n"
      "error handlers, ``last_exception`` and run() get the code's\n"
      "FutoInError (``futoin_async.errors.<code>``).\n\n"
      "Completing a waiting step from elsewhere (a timer, another thread)\n"
      "does not raise: it returns True if accepted, False if the step had\n"
      "already ended."),
    M("set_timeout", m_set_timeout, METH_O,
      "set_timeout($self, timeout_ms, /)\n--\n\n"
      "Fail the step with Timeout unless it completes within timeout_ms\n"
      "milliseconds (FTN12 units). Implies waiting for an external event."),
    M("set_cancel", m_set_cancel, METH_O,
      "set_cancel($self, handler, /)\n--\n\n"
      "``handler(asi)`` runs if the step is cancelled (an error, a\n"
      "timeout, or the root's cancel())."),
    M("wait_external", m_wait_external, METH_NOARGS,
      "wait_external($self, /)\n--\n\n"
      "The step completes later, by success()/error() from elsewhere."),
    M("loop", m_loop, FC,
      "loop($self, body, label=None)\n--\n\n"
      "Add a step that runs ``body(asi)`` until break_loop(). Returns self."),
    M("repeat", m_repeat, FC,
      "repeat($self, count, body, label=None)\n--\n\n"
      "Add a step that runs ``body(asi, i)`` for i in range(count)."),
    M("break_loop", m_break_loop, FC,
      "break_loop($self, label=None)\n--\n\n"
      "Leave the innermost loop (or the one labelled `label`); never\n"
      "returns: the calling code is left as by an exception."),
    M("continue_loop", m_continue_loop, FC,
      "continue_loop($self, label=None)\n--\n\n"
      "Go on with the next iteration of the innermost (or labelled) loop;\n"
      "never returns."),
    M("sync", m_sync, FC,
      "sync($self, obj, step, onerror=None)\n--\n\n"
      "Add a step that runs inside a Mutex, Throttle or Limiter."),
    M("execute", m_execute, FC,
      "execute($self, unhandled=None, on_success=None)\n--\n\n"
      "Start a root's flow on its tool's loop. ``unhandled(code, info,\n"
      "last_exception)`` gets an error no handler took; without it the\n"
      "tool's run() raises that error. ``on_success(*values)`` gets the\n"
      "last step's values when the flow succeeds (run() returns the same);\n"
      "neither runs for a cancelled flow."),
    M("_execute", m__execute, METH_O,
      "_execute($self, on_result, /)\n--\n\n"
      "execute(); ``on_result(exc, value)`` runs once when the flow ends."),
    M("cancel", m_cancel, METH_NOARGS,
      "cancel($self, /)\n--\n\n"
      "Cancel a root's flow (from any thread: posted to the loop thread).\n"
      "Returns True if the root was executing."),
    M("_new_instance", m_new_instance, METH_NOARGS,
      "_new_instance($self, /)\n--\n\n"
      "newInstance() of the handle's implementation."),
    M("free", m_free, METH_NOARGS,
      "free($self, /)\n--\n\n"
      "Free a root now (cancelling its flow); the object is closed."),
    M("is_valid", m_is_valid, METH_NOARGS,
      "is_valid($self, /)\n--\n\n"
      "False once the step finished or the root was freed."),
    M("is_same_thread", m_is_same_thread, METH_NOARGS,
      "is_same_thread($self, /)\n--\n\n"
      "True on the loop thread of the handle's tool."),
    M("binary", m_binary, METH_NOARGS,
      "binary($self, /)\n--\n\n"
      "The FTN12 ``FutoInAsyncSteps*`` address (int), for other languages."),
    M("is_ours", m_is_ours, METH_NOARGS,
      "is_ours($self, /)\n--\n\n"
      "True if the handle belongs to libfutoin_async (not a foreign FTN12\n"
      "implementation)."),
    M("promise", m_promise, METH_NOARGS,
      "promise($self, /)\n--\n\n"
      "execute() this root, driven by the running asyncio loop; the future\n"
      "gets the last step's values, the unhandled error, or CancelledError.\n"
      "Cancelling the future cancels the flow. ``await root`` does this."),
    M("_fail", m__fail, METH_O,
      "_fail($self, exc, /)\n--\n\n"
      "Fail a waiting step with a Python exception, as if raised in it."),
    M("_tool_ptr", m__tool_ptr, METH_NOARGS,
      "_tool_ptr($self, /)\n--\n\nThe futoin_tool* address, or 0."),
    {"_wrap", (PyCFunction)(void (*)(void))m__wrap, FC | METH_STATIC,
     PyDoc_STR("_wrap(cls, address, owned=False, tool=None)\n--\n\n"
               "An object of `cls` for a FutoInAsyncSteps* address.")},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef steps_getset[] = {
    {"state", g_state, NULL,
     PyDoc_STR("The flow's state: a dict whose keys are also attributes."), NULL},
    {"async_stack", g_async_stack, NULL,
     PyDoc_STR("The async stack of the flow's last error (AsyncStack: frames\n"
               "innermost first, across languages), or None."), NULL},
    {"error_info", g_error_info, NULL,
     PyDoc_STR("Info of the flow's last error, or None."), NULL},
    {"last_exception", g_last_exception, NULL,
     PyDoc_STR("The last error's Python exception, else its code, or None."), NULL},
    {"root_id", g_root_id, NULL, PyDoc_STR("The root's id (int)."), NULL},
    {"tool", g_tool, NULL,
     PyDoc_STR("The Tool the flow runs on (None for a foreign handle)."), NULL},
    {"_executing", g_executing, NULL,
     PyDoc_STR("True from execute() until the flow ends."), NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject fpy_steps_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "futoin_async.AsyncSteps",
    .tp_basicsize = sizeof(fpy_steps),
    .tp_dealloc = steps_dealloc,
    .tp_repr = steps_repr,
    .tp_as_async = &steps_as_async,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = PyDoc_STR(
        "AsyncSteps(tool=None)\n--\n\n"
        "FTN12 AsyncSteps: a root on `tool` (default: the thread's default\n"
        "tool), and the `asi` every step callable gets.\n\n"
        "Step callables get ``(asi, *values)``; error handlers ``(asi, code)``;\n"
        "loop bodies ``(asi)``; repeat bodies ``(asi, i)``; for_each bodies\n"
        "``(asi, key, value)``.\n\n"
        "A step completes when it returns, unless it added sub-steps or\n"
        "called wait_external()/set_timeout(). What it returns (other than\n"
        "None) is its result, as if it had called ``asi.success(value)`` last\n"
        "(a tuple: several values); a returned awaitable is awaited as by\n"
        "await_(). A step that returns a value after completing, waiting or\n"
        "adding steps itself fails with InternalError (cause: TypeError).\n\n"
        "A root is a context manager: leaving ``with AsyncSteps() as root:``\n"
        "frees it (cancelling its flow if it still executes)."),
    .tp_traverse = steps_traverse,
    .tp_clear = steps_gc_clear,
    .tp_weaklistoffset = offsetof(fpy_steps, weakrefs),
    .tp_methods = steps_methods,
    .tp_getset = steps_getset,
    .tp_init = steps_init,
    .tp_new = PyType_GenericNew,
    .tp_vectorcall = steps_vectorcall,
};
