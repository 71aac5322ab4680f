/*
 * The type ToolBase (futoin_async._core.ToolBase, the C part of
 * futoin_async.Tool): its slots, its methods and getters (each unpacks its
 * arguments and calls one operation of py_tool.c or py_asyncio.c) and
 * their docstrings.
 */
#include "py_types.h"

#define TL(o) ((fpy_tool*)(o))

static int tool_init(PyObject* self, PyObject* args, PyObject* kw)
{
    static char* kwlist[] = {"uv_loop", "virtual_time", NULL};
    PyObject* addr = NULL;
    int virtual_time = 0;
    unsigned long long uv_loop = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$p:Tool", kwlist, &addr,
                                     &virtual_time)) {
        return -1;
    }
    if (addr && addr != Py_None) {
        if (!PyLong_Check(addr)) {
            PyErr_Format(PyExc_TypeError,
                         "Tool(uv_loop): the address of a uv_loop_t (int), not %.80s",
                         Py_TYPE(addr)->tp_name);
            return -1;
        }
        uv_loop = PyLong_AsUnsignedLongLong(addr);
        if (PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError,
                            "Tool(uv_loop): an address is a non-negative int");
            return -1;
        }
    }
    return fpy_tool_init(TL(self), uv_loop, virtual_time);
}

static int tool_traverse(PyObject* self, visitproc visit, void* arg)
{
    Py_VISIT(TL(self)->flows);
    Py_VISIT(TL(self)->timers);
    Py_VISIT(TL(self)->failure);
    Py_VISIT(TL(self)->done);
    Py_VISIT(TL(self)->aloop);
    Py_VISIT(TL(self)->apump);
    Py_VISIT(TL(self)->atimer);
    Py_VISIT(TL(self)->tloop);
    Py_VISIT(TL(self)->hooks);
    return 0;
}

static int tool_gc_clear(PyObject* self)
{
    fpy_tool* t = TL(self);
    if (t->flows && PyDict_GET_SIZE(t->flows)) {
        PyDict_Clear(t->flows);
    }
    if (t->timers && PyDict_GET_SIZE(t->timers)) {
        PyObject* d = PyDict_New();
        if (d) { /* cancel them properly: they point into the loop */
            PyObject* old = t->timers;
            t->timers = d;
            Py_DECREF(old);
        }
    }
    Py_CLEAR(t->failure);
    Py_CLEAR(t->tloop);
    Py_CLEAR(t->hooks); /* a hook then finds no callable: nothing runs */
    return 0;
}

static void tool_dealloc(PyObject* self)
{
    fpy_tool* t = TL(self);
    PyObject *et, *ev, *etb;
    PyObject_GC_UnTrack(self);
    PyErr_Fetch(&et, &ev, &etb);
    if (t->borrowed) {
        /* nothing pending (timers and holds keep a reference): only let go;
         * its tool may be gone already */
        t->tool = NULL;
        fpy_tool_unlist(t);
    } else if (fpy_tool_close(t) < 0) {
        PyErr_Clear(); /* roots of other owners: the tool is leaked, not freed
                          under them */
        fpy_tool_unlist(t);
    }
    Py_CLEAR(t->flows);
    Py_CLEAR(t->timers);
    Py_CLEAR(t->failure);
    Py_CLEAR(t->done);
    Py_CLEAR(t->apump);
    Py_CLEAR(t->tloop);
    Py_CLEAR(t->hooks);
    PyErr_Restore(et, ev, etb);
    Py_TYPE(self)->tp_free(self);
}

static PyObject* t_run(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_tool_drive(TL(self));
}

/* _advance_ms(ms): the int milliseconds Tool.advance() computed. */
static PyObject* t__advance_ms(PyObject* self, PyObject* arg)
{
    FLUSH();
    long long ms;
    if (!PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "_advance_ms(ms): int expected, not %.80s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    ms = PyLong_AsLongLong(arg);
    if (ms == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "advance(): too far for the clock");
        return NULL;
    }
    if (ms < 0) {
        PyErr_SetString(PyExc_ValueError, "advance(): the clock only moves forward "
                                          "(a delay >= 0)");
        return NULL;
    }
    return fpy_tool_advance(TL(self), ms);
}

static PyObject* t__next_due_ms(PyObject* self, PyObject* unused)
{
    return fpy_tool_next_due(TL(self));
}

static PyObject* t__now_ms(PyObject* self, PyObject* unused)
{
    return fpy_tool_now(TL(self));
}

static PyObject* t__set_hooks(PyObject* self, PyObject* table)
{
    FLUSH();
    return fpy_tool_set_hooks(TL(self), table);
}

static PyObject* t__dump(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_tool_dump(TL(self));
}

static PyObject* tg_virtual_time(PyObject* self, void* c)
{
    fpy_tool* t = TL(self);
    return PyBool_FromLong(t->tool && futoin_tool_is_virtual(t->tool));
}

static PyObject* t_run_nowait(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_tool_pass(TL(self));
}

static int tool_live(fpy_tool* t)
{
    if (!t->tool) {
        fpy_invalid_state("the Tool is closed");
        return 0;
    }
    return fpy_tool_use(t, "the Tool") != NULL;
}

static PyObject* t_backend_fd(PyObject* self, PyObject* unused)
{
    if (!tool_live(TL(self))) {
        return NULL;
    }
    return PyLong_FromLong(uv_backend_fd(futoin_tool_uv_loop(TL(self)->tool)));
}

static PyObject* t_backend_timeout(PyObject* self, PyObject* unused)
{
    if (!tool_live(TL(self))) {
        return NULL;
    }
    return PyLong_FromLong(uv_backend_timeout(futoin_tool_uv_loop(TL(self)->tool)));
}

static PyObject* t_uv_loop(PyObject* self, PyObject* unused)
{
    if (!tool_live(TL(self))) {
        return NULL;
    }
    return PyLong_FromVoidPtr(futoin_tool_uv_loop(TL(self)->tool));
}

static PyObject* t_immediate(PyObject* self, PyObject* fn)
{
    return fpy_tool_schedule(TL(self), NULL, fn);
}

static PyObject* t_deferred(PyObject* self, PyObject* const* args,
                            Py_ssize_t nargs, PyObject* kwnames)
{
    PARSE("deferred", 2, "delay_ms", "fn");
    return fpy_tool_schedule(TL(self), a_[0], a_[1]);
}

static PyObject* t_cancel(PyObject* self, PyObject* key)
{
    return fpy_tool_cancel_timer(TL(self), key);
}

static PyObject* t__borrow_init(PyObject* self, PyObject* ptr)
{
    void* p = PyLong_AsVoidPtr(ptr);
    if (!p && PyErr_Occurred()) {
        return NULL;
    }
    if (fpy_borrowed_init(TL(self), p) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject* t__hold(PyObject* self, PyObject* unused)
{
    return fpy_tool_hold(TL(self), 1);
}

static PyObject* t__unhold(PyObject* self, PyObject* unused)
{
    return fpy_tool_hold(TL(self), -1);
}

static PyObject* t__poll(PyObject* self, PyObject* const* args, Py_ssize_t nargs)
{
    int fd, events;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "_poll(fd, events, callback)");
        return NULL;
    }
    fd = (int)PyLong_AsLong(args[0]);
    events = (int)PyLong_AsLong(args[1]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    return fpy_tool_poll(TL(self), fd, events, args[2]);
}

static PyObject* t_event_loop(PyObject* self, PyObject* unused)
{
    return Py_XNewRef(fpy_tool_event_loop(TL(self)));
}

static PyObject* tg_tloop(PyObject* self, void* c)
{
    PyObject* l = TL(self)->tloop;
    return Py_NewRef(l ? l : Py_None);
}

static PyObject* tg_borrowed(PyObject* self, void* c)
{
    return PyBool_FromLong(TL(self)->borrowed);
}

static PyObject* tg_usable(PyObject* self, void* c)
{
    return PyBool_FromLong(fpy_tool_usable(TL(self)));
}

static PyObject* t_is_same_thread(PyObject* self, PyObject* unused)
{
    fpy_tool* t = TL(self);
    return PyBool_FromLong(fpy_tool_usable(t) && futoin_tool_is_same_thread(t->tool));
}

static PyObject* t_misuse_count(PyObject* self, PyObject* unused)
{
    fpy_tool* t = TL(self);
    return PyLong_FromSize_t(fpy_tool_usable(t) ? futoin_tool_misuse_count(t->tool) : 0);
}

static PyObject* t_stats(PyObject* self, PyObject* unused)
{
    FLUSH();
    fpy_tool* t = TL(self);
    futoin_tool_stats st = FUTOIN_TOOL_STATS_INIT;
    if (!tool_live(t)) {
        return NULL;
    }
    if (futoin_tool_get_stats(t->tool, &st) != FUTOIN_OK) {
        PyErr_SetString(PyExc_RuntimeError, "stats(): on the tool's loop thread only");
        return NULL;
    }
    return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n,s:n}", "misuse", (Py_ssize_t)st.misuse,
                         "late_completions",
                         (Py_ssize_t)(st.late_completions + t->late),
                         "live_roots", (Py_ssize_t)st.live_roots,
                         "live_steps", (Py_ssize_t)st.live_steps,
                         "pool_bytes", (Py_ssize_t)st.pool_bytes,
                         "trimmed_bytes", (Py_ssize_t)st.trimmed_bytes);
}

static PyObject* t_close(PyObject* self, PyObject* unused)
{
    FLUSH();
    fpy_tool* t = TL(self);
    if (t->borrowed && !fpy_tool_usable(t)) {
        /* nothing of ours is on its tool, which may be gone: let go */
        (void)fpy_tool_close(t);
        Py_RETURN_NONE;
    }
    if (t->tool && !futoin_tool_is_same_thread(t->tool)) {
        PyErr_SetString(PyExc_RuntimeError, "close() from another thread");
        return NULL;
    }
    if (fpy_in_run() && t->tool && futoin_tool_is_same_thread(t->tool)) {
        return fpy_invalid_state("close() while run() drives the loop");
    }
    if (fpy_tool_close(t) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject* t__watch_signals(PyObject* self, PyObject* const* args,
                                  Py_ssize_t nargs)
{
    int fd, wfd;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_watch_signals(fd, wfd)");
        return NULL;
    }
    fd = PyLong_AsLong(args[0]);
    wfd = PyLong_AsLong(args[1]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    return fpy_tool_watch_signals(TL(self), fd, wfd);
}

static PyObject* t__post(PyObject* self, PyObject* fn)
{
    return fpy_tool_post(TL(self), fn);
}

static PyObject* t__drive(PyObject* self, PyObject* loop)
{
    FLUSH();
    if (fpy_tool_drive_with(TL(self), loop) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject* t__kick(PyObject* self, PyObject* unused)
{
    FLUSH();
    if (fpy_tool_kick(TL(self)) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject* t__pump(PyObject* self, PyObject* unused)
{
    FLUSH();
    return fpy_tool_apump(TL(self));
}

static PyObject* tg_aloop(PyObject* self, void* c)
{
    PyObject* l = TL(self)->aloop;
    return Py_NewRef(l ? l : Py_None);
}

static PyObject* tg_ptr(PyObject* self, void* c)
{
    return PyLong_FromVoidPtr(TL(self)->tool);
}

static PyObject* tg_executing(PyObject* self, void* c)
{
    fpy_tool* t = TL(self);
    return PyLong_FromSsize_t((t->flows ? PyDict_GET_SIZE(t->flows) : 0) + t->awaited);
}

static PyObject* tg_closed(PyObject* self, void* c)
{
    return PyBool_FromLong(TL(self)->tool == NULL);
}

static PyMethodDef tool_methods[] = {
    M("run", t_run, METH_NOARGS,
      "run($self, /)\n--\n\n"
      "Run the loop until nothing is left to do (the GIL is released while\n"
      "it waits). Raises the first unhandled error of a root executed\n"
      "without an unhandled callback (the loop stops there; run() again\n"
      "goes on with the other flows)."),
    M("_advance_ms", t__advance_ms, METH_O,
      "_advance_ms($self, ms, /)\n--\n\n"
      "Virtual time: move the clock ms milliseconds on, running what falls\n"
      "due (Tool.advance() takes seconds)."),
    M("_next_due_ms", t__next_due_ms, METH_NOARGS,
      "_next_due_ms($self, /)\n--\n\n"
      "Milliseconds until the next timer (int), or None."),
    M("_now_ms", t__now_ms, METH_NOARGS,
      "_now_ms($self, /)\n--\n\nThe tool's clock in milliseconds (int)."),
    M("_set_hooks", t__set_hooks, METH_O,
      "_set_hooks($self, table, /)\n--\n\n"
      "futoin_tool_set_hooks(): {event name: callable} or None (Tool.set_hooks())."),
    M("_dump", t__dump, METH_NOARGS,
      "_dump($self, /)\n--\n\nfutoin_tool_dump() as a str (Tool.dump())."),
    M("run_nowait", t_run_nowait, METH_NOARGS,
      "run_nowait($self, /)\n--\n\n"
      "One non-blocking pass of the loop; True while work remains."),
    M("backend_fd", t_backend_fd, METH_NOARGS,
      "backend_fd($self, /)\n--\n\nlibuv's backend (epoll) file descriptor."),
    M("backend_timeout", t_backend_timeout, METH_NOARGS,
      "backend_timeout($self, /)\n--\n\n"
      "Milliseconds until libuv's next timer (-1: none, 0: work is due)."),
    M("uv_loop", t_uv_loop, METH_NOARGS,
      "uv_loop($self, /)\n--\n\nThe ``uv_loop_t*`` address (int)."),
    M("immediate", t_immediate, METH_O,
      "immediate($self, fn, /)\n--\n\n"
      "Call ``fn()`` on the loop thread after the current callback (FTN12\n"
      "sched_immediate). Returns a key for cancel()."),
    M("deferred", t_deferred, FC,
      "deferred($self, delay_ms, fn)\n--\n\n"
      "Call ``fn()`` after delay_ms milliseconds (FTN12 units; asyncio's\n"
      "seconds: call_later()). Returns a key for cancel()."),
    M("cancel", t_cancel, METH_O,
      "cancel($self, key, /)\n--\n\n"
      "Cancel a call scheduled by immediate()/deferred(); True if it was\n"
      "still pending."),
    M("is_same_thread", t_is_same_thread, METH_NOARGS,
      "is_same_thread($self, /)\n--\n\nTrue on the tool's loop thread."),
    M("misuse_count", t_misuse_count, METH_NOARGS,
      "misuse_count($self, /)\n--\n\n"
      "How many API misuses the library reported for this tool."),
    M("stats", t_stats, METH_NOARGS,
      "stats($self, /)\n--\n\n"
      "What the tool did and holds (a dict): misuse, late_completions\n"
      "(completions that lost the race against their step's timeout or a\n"
      "cancel), live_roots, live_steps, pool_bytes, trimmed_bytes."),
    M("close", t_close, METH_NOARGS,
      "close($self, /)\n--\n\n"
      "Cancel the executing roots, free every root made on the tool (those\n"
      "still referenced become closed handles), drop pending calls and free\n"
      "the loop. Idempotent."),
    M("_drive", t__drive, METH_O,
      "_drive($self, loop, /)\n--\n\nBe driven by this asyncio loop from now on."),
    M("_kick", t__kick, METH_NOARGS,
      "_kick($self, /)\n--\n\nA libuv pass soon (loop.call_soon), once per burst."),
    M("_pump", t__pump, METH_NOARGS,
      "_pump($self, /)\n--\n\nA libuv pass now, then ask asyncio for the next."),
    M("_post", t__post, METH_O,
      "_post($self, fn, /)\n--\n\nCall fn() on the loop thread; any thread."),
    M("event_loop", t_event_loop, METH_NOARGS,
      "event_loop($self, /)\n--\n\n"
      "The asyncio event loop over this tool's own libuv loop (made on first\n"
      "use): the running loop of `async def` steps and await_() in flows\n"
      "that asyncio does not drive (Tool.run(), or a program in another\n"
      "language hosting the flow)."),
    M("_borrow_init", t__borrow_init, METH_O,
      "_borrow_init($self, ptr, /)\n--\n\n"
      "Make this object a borrowed Tool of the futoin_tool* `ptr`."),
    M("_poll", t__poll, METH_FASTCALL,
      "_poll($self, fd, events, callback, /)\n--\n\n"
      "Watch fd for events (1 read, 2 write; 0 stops): callback(fd, events)."),
    M("_hold", t__hold, METH_NOARGS,
      "_hold($self, /)\n--\n\nKeep a borrowed tool while something waits on it."),
    M("_unhold", t__unhold, METH_NOARGS,
      "_unhold($self, /)\n--\n\nUndo one _hold()."),
    M("_watch_signals", t__watch_signals, METH_FASTCALL,
      "_watch_signals($self, fd, wfd, /)\n--\n\n"
      "Watch Python's signal wakeup socket (both ends owned by the tool)."),
    {NULL, NULL, 0, NULL}};

static PyGetSetDef tool_getset[] = {
    {"ptr", tg_ptr, NULL, PyDoc_STR("The futoin_tool* address (int)."), NULL},
    {"executing", tg_executing, NULL,
     PyDoc_STR("How many roots the tool keeps alive while they execute."), NULL},
    {"closed", tg_closed, NULL, PyDoc_STR("True after close()."), NULL},
    {"virtual_time", tg_virtual_time, NULL,
     PyDoc_STR("True for a Tool made with virtual_time=True: its clock moves\n"
               "only with advance()."),
     NULL},
    {"borrowed", tg_borrowed, NULL,
     PyDoc_STR("True for the tool of a flow that a program in another language\n"
               "hosts (see the README: 'Steps of flows other languages host')."),
     NULL},
    {"usable", tg_usable, NULL,
     PyDoc_STR("True if the tool can be used now (a borrowed one: while Python\n"
               "code of a flow or timer of it runs, or roots made on it live)."),
     NULL},
    {"_tloop", tg_tloop, NULL,
     PyDoc_STR("The tool's own event loop if it was made, or None."), NULL},
    {"_aloop", tg_aloop, NULL, PyDoc_STR("The asyncio loop driving the tool, or None."),
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject fpy_tool_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "futoin_async._core.ToolBase",
    .tp_basicsize = sizeof(fpy_tool),
    .tp_dealloc = tool_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = PyDoc_STR("ToolBase(uv_loop=0, *, virtual_time=False)\n--\n\n"
                        "The C part of futoin_async.Tool."),
    .tp_traverse = tool_traverse,
    .tp_clear = tool_gc_clear,
    .tp_methods = tool_methods,
    .tp_getset = tool_getset,
    .tp_init = tool_init,
    .tp_new = PyType_GenericNew,
};
