/*
 * File descriptors watched on a Tool's libuv loop (uv_poll), for the
 * add_reader()/add_writer() of its asyncio event loop
 * (lib/futoin_async/_loop.py): ToolBase._poll(fd, events, callback) starts,
 * changes or (events 0) stops the one watcher of `fd`; `callback(fd,
 * events)` runs on the loop thread when the fd is ready (selectors'
 * EVENT_READ 1 and EVENT_WRITE 2, which are libuv's UV_READABLE and
 * UV_WRITABLE). libuv allows one poll handle per fd on a loop, so reader
 * and writer share it. A watcher holds its tool (a borrowed tool's program
 * cannot free the tool under it); close() stops them all.
 */
#include "futoin_py.h"

#include <stdlib.h>

typedef struct fpy_fdwatch
{
    uv_poll_t poll; /* first: the handle's address is the record's */
    fpy_tool* tool;
    int fd;
    PyObject* cb; /* callback(fd, events), owned */
    struct fpy_fdwatch* next;
} fpy_fdwatch;

_Static_assert(UV_READABLE == 1 && UV_WRITABLE == 2, "selectors' event bits");

static void on_closed(uv_handle_t* h)
{
    free(h); /* the callback was released when it stopped */
}

static void on_poll(uv_poll_t* p, int status, int events)
{
    fpy_fdwatch* w = (fpy_fdwatch*)p;
    fpy_tool* t = w->tool;
    fpy_gil g;
    PyObject *cb, *res;
    fpy_gil_enter(&g);
    if (status < 0) {
        /* an error on the fd: both sides learn it when they use it */
        events = UV_READABLE | UV_WRITABLE;
    }
    cb = Py_NewRef(w->cb); /* the callback may stop this watcher */
    Py_INCREF(t);
    ++t->in_cb;
    res = PyObject_CallFunction(cb, "ii", w->fd, events & (UV_READABLE | UV_WRITABLE));
    if (res) {
        Py_DECREF(res);
    } else if (fpy_is_fatal() && (!t->borrowed || fpy_in_run())) {
        fpy_store_fatal();
    } else {
        PyErr_WriteUnraisable(cb);
    }
    --t->in_cb;
    Py_DECREF(cb);
    fpy_borrowed_sync(t);
    Py_DECREF(t);
    fpy_gil_leave(&g);
}

static void stop(fpy_fdwatch* w)
{
    uv_poll_stop(&w->poll);
    uv_close((uv_handle_t*)&w->poll, on_closed);
    fpy_release_obj(w->cb);
    w->cb = NULL;
}

/* Stop every watcher of `t` (close()); GIL held. */
void fpy_tool_unpoll(fpy_tool* t)
{
    while (t->fdw) {
        fpy_fdwatch* w = t->fdw;
        t->fdw = w->next;
        stop(w);
        --t->holds;
    }
}

PyObject* fpy_tool_poll(fpy_tool* t, int fd, int events, PyObject* cb)
{
    fpy_fdwatch **at, *w;
    int rc;
    if (!fpy_tool_use(t, "_poll()")) {
        return NULL;
    }
    if (!futoin_tool_is_same_thread(t->tool)) {
        PyErr_SetString(PyExc_RuntimeError, "_poll(): not on the tool's loop thread");
        return NULL;
    }
    if (fd < 0 || (events & ~(UV_READABLE | UV_WRITABLE))) {
        PyErr_Format(PyExc_ValueError, "_poll(): bad fd %d or events %d", fd, events);
        return NULL;
    }
    for (at = &t->fdw; *at && (*at)->fd != fd; at = &(*at)->next) {
    }
    w = *at;
    if (!events) {
        if (w) {
            *at = w->next;
            stop(w);
            --t->holds;
            Py_INCREF(t);
            fpy_borrowed_sync(t);
            Py_DECREF(t);
        }
        Py_RETURN_NONE;
    }
    if (!PyCallable_Check(cb)) {
        PyErr_Format(PyExc_TypeError, "_poll(): callable expected, not %.80s",
                     Py_TYPE(cb)->tp_name);
        return NULL;
    }
    if (!w) {
        w = calloc(1, sizeof(*w));
        if (!w) {
            return PyErr_NoMemory();
        }
        rc = uv_poll_init(futoin_tool_uv_loop(t->tool), &w->poll, fd);
        if (rc != 0) {
            free(w);
            PyErr_Format(PyExc_OSError, "add_reader/add_writer(%d): %s", fd, uv_strerror(rc));
            return NULL;
        }
        w->tool = t;
        w->fd = fd;
        w->next = t->fdw;
        t->fdw = w;
        ++t->holds;
        fpy_borrowed_sync(t);
    }
    Py_XSETREF(w->cb, Py_NewRef(cb));
    rc = uv_poll_start(&w->poll, events, on_poll);
    if (rc != 0) {
        PyErr_Format(PyExc_OSError, "add_reader/add_writer(%d): %s", fd, uv_strerror(rc));
        for (at = &t->fdw; *at != w; at = &(*at)->next) {
        }
        *at = w->next;
        stop(w);
        --t->holds;
        Py_INCREF(t);
        fpy_borrowed_sync(t);
        Py_DECREF(t);
        return NULL;
    }
    Py_RETURN_NONE;
}
