/*
 * Prompt KeyboardInterrupt in Tool.run(). Python runs signal handlers only
 * between bytecodes of the main thread; while run() blocks in epoll_wait()
 * with the GIL released, libuv restarts the wait after EINTR and Ctrl-C
 * would wait for the next event. The Python layer therefore points
 * signal.set_wakeup_fd() at a socket whose other end this tool watches
 * (fpy_tool_watch_signals): a signal wakes the loop, the watcher runs the
 * Python handlers, and an exception they raise (KeyboardInterrupt) cancels
 * the executing roots, stops the loop, and is re-raised from run(). The
 * watcher is unreferenced, so it never keeps the loop alive by itself.
 */
#include "futoin_py.h"

#include <stdlib.h>
#include <unistd.h>

/* The signal watcher owns both ends of the socket pair it watches. */
typedef struct fpy_sigwatch
{
    uv_poll_t poll; /* first: the handle's address is the record's */
    int fd, wfd;
} fpy_sigwatch;

static void on_sig_closed(uv_handle_t* h)
{
    fpy_sigwatch* w = (fpy_sigwatch*)h;
    close(w->fd);
    close(w->wfd);
    free(w);
}

void fpy_tool_unwatch_signals(fpy_tool* t)
{
    if (t->sig) {
        uv_close((uv_handle_t*)t->sig, on_sig_closed);
        t->sig = NULL;
    }
}

/* ---- signals ------------------------------------------------------------ */

void fpy_tool_cancel_executing(fpy_tool* t)
{
    PyObject* snap = t->flows ? PyDict_Values(t->flows) : NULL;
    if (!snap) {
        PyErr_Clear();
        return;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(snap); ++i) {
        fpy_steps* s = fpy_obj_steps(PyTuple_GET_ITEM(PyList_GET_ITEM(snap, i), 0));
        if (s && s->bsi && s->bsi->api->isValid(s->bsi)) {
            s->bsi->api->cancel(s->bsi);
        }
    }
    Py_DECREF(snap);
}

static void on_signal_fd(uv_poll_t* p, int status, int events)
{
    fpy_tool* t = p->data;
    char buf[64];
    uv_os_fd_t fd;
    fpy_gil g;
    if (uv_fileno((uv_handle_t*)p, &fd) == 0) {
        while (read(fd, buf, sizeof(buf)) > 0) {
        }
    }
    fpy_gil_enter(&g);
    if (PyErr_CheckSignals() < 0) {
        /* a handler raised (KeyboardInterrupt): unwind like a step's */
        fpy_store_fatal();
        fpy_tool_cancel_executing(t);
        if (fpy_in_run()) {
            uv_stop(futoin_tool_uv_loop(t->tool));
        }
    }
    fpy_gil_leave(&g);
}

/* Watch `fd`, the non-blocking read end of the socket pair whose write end
 * `wfd` Python's signal.set_wakeup_fd() writes to, on this tool's loop.
 * Takes ownership of both (closed with the tool, or at once when refused).
 * Once per tool. */
PyObject* fpy_tool_watch_signals(fpy_tool* t, int fd, int wfd)
{
    fpy_sigwatch* w;
    int rc;
    if (!t->tool || t->sig) {
        close(fd);
        close(wfd);
        PyErr_SetString(PyExc_RuntimeError, "_watch_signals(): already watching");
        return NULL;
    }
    w = malloc(sizeof(*w));
    if (!w) {
        close(fd);
        close(wfd);
        return PyErr_NoMemory();
    }
    w->fd = fd;
    w->wfd = wfd;
    rc = uv_poll_init(futoin_tool_uv_loop(t->tool), &w->poll, fd);
    if (rc == 0) {
        w->poll.data = t;
        rc = uv_poll_start(&w->poll, UV_READABLE, on_signal_fd);
        if (rc != 0) {
            uv_close((uv_handle_t*)&w->poll, on_sig_closed);
        }
    } else {
        close(fd);
        close(wfd);
        free(w);
    }
    if (rc != 0) {
        PyErr_Format(PyExc_OSError, "_watch_signals(): %s", uv_strerror(rc));
        return NULL;
    }
    uv_unref((uv_handle_t*)&w->poll);
    t->sig = &w->poll;
    Py_RETURN_NONE;
}
