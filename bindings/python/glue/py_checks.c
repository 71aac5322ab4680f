/*
 * Checks at the call site. Misuse is raised where it happens: calls that
 * only a step's own callback may make are checked against the handle whose
 * callback runs now (fpy_T.cur), root-only and step-only calls against the
 * object's kind, other threads against the tool's loop thread, and whatever
 * the library still reports through a Tool's misuse callback during a call
 * (fpy_check_begin/end, py_gil.c) becomes InvalidStateError. And the
 * arguments the operations check alike: callables, str without NUL, error
 * codes, loop labels.
 */
#include "futoin_py.h"

#include <string.h>

int fpy_live(fpy_steps* s)
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

/* The loop thread of the handle's tool? (foreign: its own answer) */
int fpy_same_thread(fpy_steps* s)
{
    if (s->tool && s->tool->tool) {
        return futoin_tool_is_same_thread(s->tool->tool);
    }
    return s->bsi->api->is_same_thread(s->bsi);
}

int fpy_not_other_thread(fpy_steps* s, const char* what)
{
    if (!fpy_same_thread(s)) {
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
int fpy_in_own_step_slow(fpy_steps* s, const char* what, int root_ok)
{
    if (!s->bsi) {
        return fpy_live(s);
    }
    if (!fpy_not_other_thread(s, what)) {
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

int fpy_bad_callables(const char* what, PyObject* fn, PyObject* eh)
{
    if ((fn && !PyCallable_Check(fn)) || (eh && !PyCallable_Check(eh))) {
        PyErr_Format(PyExc_TypeError, "%s: callable expected, got %.80s", what,
                     Py_TYPE((fn && !PyCallable_Check(fn)) ? fn : eh)->tp_name);
        return -1;
    }
    return 0;
}

/* A str argument without NUL (its UTF-8 is borrowed from `o`). */
int fpy_str_arg(PyObject* o, const char* what, const char** out)
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
int fpy_code_arg(PyObject* o, const char* what, const char** out)
{
    if (fpy_str_arg(o, what, out) < 0) {
        return -1;
    }
    if (!**out) {
        PyErr_Format(PyExc_ValueError, "%s must not be empty", what);
        return -1;
    }
    return 0;
}

int fpy_label_arg(PyObject* o, const char** out)
{
    *out = NULL;
    if (!o || o == Py_None) {
        return 0;
    }
    return fpy_str_arg(o, "label", out);
}
