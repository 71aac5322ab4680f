/*
 * Borrowed Tools: the Tool object of a flow that a program written in
 * another language hosts (Python steps added by name to a flow of a C, Lua
 * or Java program, through the plug-in). `asi.tool` of such a step is the
 * hosting loop's own tool, wrapped in a Tool object that never frees it:
 * its timers (call_soon/call_later/immediate/deferred) run on that loop,
 * roots made on it run there, and its asyncio event loop
 * (lib/futoin_async/_loop.py) serves `async def` steps.
 *
 * Lifetime. The library gives no notice when that program frees its tool,
 * so a borrowed Tool is used only while something proves the tool alive:
 *  - a Python callback of a flow of that tool runs now (fpy_T.cur), or one
 *    of the borrowed Tool's own timers runs (in_cb);
 *  - roots made on it from Python live (a tool with live roots cannot be
 *    freed: futoin_tool_free() says EBUSY);
 *  - while its timers or holds (fd watchers, executor jobs) pend it keeps
 *    an idle root of the tool, the anchor, and a reference to itself, so
 *    that the program cannot free the tool under them (EBUSY again) and
 *    the timers are not dropped with the object; the last one lets go.
 * Otherwise its methods raise InvalidStateError instead of touching a tool
 * that may be gone. The same object serves the tool while it lives (a
 * list of borrowed Tools by address; an object outliving its tool holds
 * nothing of it, so a new tool at the same address may reuse it).
 * The design is the Lua binding's (bindings/lua glue, lua_tool.c).
 */
#include "futoin_py.h"

int fpy_borrowed_init(fpy_tool* t, futoin_tool* ft)
{
    if (t->tool || t->borrowed) {
        PyErr_SetString(PyExc_RuntimeError, "_borrow_init(): the Tool is initialised");
        return -1;
    }
    if (!ft) {
        PyErr_SetString(PyExc_ValueError, "_borrow_init(): NULL tool");
        return -1;
    }
    if ((!t->flows && !(t->flows = PyDict_New()))
        || (!t->timers && !(t->timers = PyDict_New()))) {
        return -1;
    }
    t->tool = ft;
    t->borrowed = 1;
    t->afd = -1;
    fpy_tool_list(t);
    return 0;
}

int fpy_borrowed_close(fpy_tool* t)
{
    int rc;
    Py_INCREF(t); /* the anchor's reference may go */
    t->closing = 1;
    rc = fpy_tool_drop_all(t);
    t->holds = 0;
    fpy_borrowed_sync(t);
    t->closing = 0;
    t->tool = NULL;
    fpy_tool_unlist(t);
    Py_DECREF(t);
    return rc;
}

PyObject* fpy_tool_obj_of(futoin_tool* ft)
{
    fpy_tool* t;
    PyObject *mk, *ptr, *o;
    if (!ft) {
        Py_RETURN_NONE;
    }
    if ((t = fpy_tool_find(ft)) != NULL || (t = fpy_tool_find_borrowed(ft)) != NULL) {
        return Py_NewRef((PyObject*)t);
    }
    if (!(mk = fpy_hook("borrow_tool")) || !(ptr = PyLong_FromVoidPtr(ft))) {
        return NULL;
    }
    o = PyObject_CallOneArg(mk, ptr);
    Py_DECREF(ptr);
    if (o && (!PyObject_TypeCheck(o, &fpy_tool_type) || ((fpy_tool*)o)->tool != ft)) {
        Py_DECREF(o);
        PyErr_SetString(PyExc_TypeError, "borrow_tool() did not make a borrowed Tool");
        return NULL;
    }
    return o;
}

int fpy_tool_usable(fpy_tool* t)
{
    FutoInAsyncSteps* cur;
    if (!t->tool) {
        return 0;
    }
    if (!t->borrowed || t->in_cb > 0 || t->roots
        || __atomic_load_n(&t->anchor, __ATOMIC_ACQUIRE)) {
        return 1;
    }
    /* a Python callback of a flow of that tool runs on this thread */
    cur = fpy_T.cur;
    return cur && futoin_async_ext(cur) && futoin_async_tool(cur) == t->tool;
}

futoin_tool* fpy_tool_use(fpy_tool* t, const char* what)
{
    if (fpy_tool_usable(t)) {
        return t->tool;
    }
    if (!t->tool) {
        fpy_invalid_state("%s: the Tool is closed", what);
    } else {
        fpy_invalid_state("%s: this Tool is the loop of the program that hosts "
                          "the flow (borrowed): usable only while Python code of "
                          "a flow or timer of it runs, or while roots made on it "
                          "live",
                          what);
    }
    return NULL;
}

void fpy_borrowed_sync(fpy_tool* t)
{
    int need;
    if (!t->borrowed) {
        return;
    }
    need = t->tool && ((t->timers && PyDict_GET_SIZE(t->timers) > 0) || t->holds > 0);
    if (need && !t->anchor) {
        FutoInAsyncSteps* a = futoin_root_new(t->tool);
        if (a) { /* out of memory: unanchored, as before the timer */
            Py_INCREF(t);
            __atomic_store_n(&t->anchor, a, __ATOMIC_RELEASE);
        }
    } else if (!need && t->anchor) {
        FutoInAsyncSteps* a = t->anchor;
        __atomic_store_n(&t->anchor, NULL, __ATOMIC_RELEASE);
        a->api->free(a);
        Py_DECREF(t); /* may be the last reference: nothing after this */
    }
}

PyObject* fpy_tool_hold(fpy_tool* t, int delta)
{
    if (delta > 0 && !fpy_tool_use(t, "_hold()")) {
        return NULL;
    }
    if (delta < 0 && t->holds <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "_unhold() without _hold()");
        return NULL;
    }
    t->holds += delta;
    Py_INCREF(t); /* sync may drop the anchor's reference */
    fpy_borrowed_sync(t);
    Py_DECREF(t);
    Py_RETURN_NONE;
}

PyObject* fpy_tool_event_loop(fpy_tool* t)
{
    PyObject* mk;
    if (!fpy_tool_use(t, "event_loop()")) {
        return NULL;
    }
    if (!t->tloop) {
        if (!(mk = fpy_hook("ToolEventLoop"))) {
            return NULL;
        }
        t->tloop = PyObject_CallOneArg(mk, (PyObject*)t);
    }
    return t->tloop;
}
