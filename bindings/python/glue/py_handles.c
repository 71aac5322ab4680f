/*
 * AsyncSteps objects: the Python object of an FTN12 handle (a root, the
 * `asi` of a step, a parallel() handle, a wrapped handle of any
 * implementation), the anchor that closes a handle kept past its step, the
 * roots of a Tool (made, listed, freed, new_instance()) and what a handle
 * tells (error_info, last_exception, root_id, ...). The type itself is in
 * py_asyncsteps_type.c; the spare `asi` of the trampolines in
 * py_trampolines.c.
 */
#include "futoin_py.h"

#include <string.h>

static const FutoInAsyncStepsAPI* root_api; /* the table of our roots */

/* ---- our extension table ------------------------------------------------ */

/* Slots not filled yet point at something no handle's api is. */
static const char no_api;
const FutoInAsyncStepsAPI* fpy_ext_apis[4] = {
        (const void*)&no_api, (const void*)&no_api, (const void*)&no_api,
        (const void*)&no_api};
const futoin_async_ext_table* fpy_ext_tab;

const futoin_async_ext_table* fpy_ext_slow(FutoInAsyncSteps* bsi)
{
    const futoin_async_ext_table* x = futoin_async_ext(bsi);
    if (!x || x->version < FUTOIN_EXT_VERSION_4) {
        return NULL;
    }
    /* with the GIL held: one writer at a time */
    for (int i = 0; i < 4; ++i) {
        if (fpy_ext_apis[i] == (const void*)&no_api) {
            fpy_ext_apis[i] = bsi->api;
            fpy_ext_tab = x;
            break;
        }
    }
    return x;
}

/* ---- step objects ------------------------------------------------------- */

/* An object of `type` for handle `bsi`. */
PyObject* fpy_steps_for(PyTypeObject* type, FutoInAsyncSteps* bsi, int kind)
{
    fpy_steps* s = fpy_steps_alloc(type ? type : &fpy_steps_type);
    if (!s) {
        return NULL;
    }
    s->bsi = bsi;
    s->kind = (unsigned short)kind;
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

void fpy_steps_keep(fpy_steps* s)
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

/* ---- roots -------------------------------------------------------------- */

int fpy_steps_init_root(fpy_steps* s, PyObject* tool_obj)
{
    fpy_tool* tool = (fpy_tool*)tool_obj;
    if (!fpy_tool_use(tool, "AsyncSteps(tool)")) {
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
    fpy_exec_detach(s);
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
    o = fpy_steps_for((PyTypeObject*)cls, b, own ? FPY_ROOT : FPY_BORROWED);
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
        fpy_steps_keep(s);
    }
    return o;
}

PyObject* fpy_new_instance(fpy_steps* s)
{
    FutoInAsyncSteps* b;
    PyObject* o;
    if (!fpy_live(s) || !fpy_not_other_thread(s, "new_instance()")) {
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
    o = fpy_steps_for(&fpy_steps_type, b, FPY_ROOT);
    if (!o) {
        b->api->free(b);
    }
    return o;
}

PyObject* fpy_free(fpy_steps* s)
{
    if (s->kind == FPY_ROOT && s->bsi) {
        if (!fpy_not_other_thread(s, "free()")) {
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

/* ---- what a handle tells ------------------------------------------------ */

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

PyObject* fpy_error_info(fpy_steps* s)
{
    return fpy_live(s) && fpy_not_other_thread(s, "error_info")
                   ? fpy_error_info_of(s->bsi)
                   : NULL;
}

PyObject* fpy_last_exception(fpy_steps* s)
{
    return fpy_live(s) && fpy_not_other_thread(s, "last_exception")
                   ? fpy_last_exception_of(s->bsi)
                   : NULL;
}

PyObject* fpy_async_stack(fpy_steps* s)
{
    if (!fpy_live(s) || !fpy_not_other_thread(s, "async_stack")) {
        return NULL;
    }
    return fpy_async_stack_of(s->bsi);
}

PyObject* fpy_root_id(fpy_steps* s)
{
    ptrdiff_t id;
    if (!fpy_live(s) || !fpy_not_other_thread(s, "root_id")) {
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
    if (!fpy_live(s)) {
        return NULL;
    }
    return PyBool_FromLong(fpy_same_thread(s));
}

PyObject* fpy_binary(fpy_steps* s)
{
    if (!fpy_live(s)) {
        return NULL;
    }
    return PyLong_FromVoidPtr(s->bsi);
}

PyObject* fpy_is_ours(fpy_steps* s)
{
    if (!fpy_live(s)) {
        return NULL;
    }
    return PyBool_FromLong(futoin_wrap_is_ours(s->bsi));
}

PyObject* fpy_tool_ptr_of(fpy_steps* s)
{
    if (!fpy_live(s)) {
        return NULL;
    }
    return PyLong_FromVoidPtr(futoin_async_tool(s->bsi));
}

/* The Tool the flow runs on: the Tool made by Python, or a borrowed Tool
 * for the tool of a program in another language (py_borrowed.c); None for
 * another implementation's handle. */
PyObject* fpy_tool_of(fpy_steps* s)
{
    if (s->tool_obj) {
        return Py_NewRef(s->tool_obj);
    }
    if (!s->bsi || !s->bsi->api || !futoin_wrap_is_ours(s->bsi)) {
        Py_RETURN_NONE;
    }
    return fpy_tool_obj_of(futoin_async_tool(s->bsi));
}

PyObject* fpy_is_executing(fpy_steps* s)
{
    return PyBool_FromLong(s->exec != NULL);
}
