/*
 * FutoInBinaryValue <-> Python conversion (FTN12 §2.7 values).
 *
 * int (64-bit signed, else unsigned), float, bool, str (UTF-8), bytes and
 * non-empty lists of ints or floats become binary values; anything else,
 * None included, travels as a custom value of Python that holds one
 * reference, released through the type's cleanup exactly once. Values of
 * other languages' custom types arrive as their address (an int).
 */
#include "futoin_py.h"

#include <stdlib.h>
#include <string.h>


static void free_p(FutoInBinaryValue* v)
{
    free((void*)v->p);
}

static void custom_cleanup(FutoInBinaryValue* v)
{
    fpy_release_obj((PyObject*)v->p);
}

static const FutoInType ty_bool = {FTN_TYPE_BOOL, NULL};
static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};
static const FutoInType ty_u64 = {FTN_TYPE_UINT64, NULL};
static const FutoInType ty_double = {FTN_TYPE_DOUBLE, NULL};
static const FutoInType ty_str = {FTN_TYPE_STRING, free_p};
static const FutoInType ty_bytes = {FTN_TYPE_ARRAY | FTN_TYPE_UINT8, free_p};
static const FutoInType ty_i64arr = {FTN_TYPE_ARRAY | FTN_TYPE_INT64, free_p};
static const FutoInType ty_darr = {FTN_TYPE_ARRAY | FTN_TYPE_DOUBLE, free_p};
static const FutoInType ty_custom = {FTN_TYPE_CUSTOM_OBJECT, custom_cleanup};

void fpy_set_custom(FutoInBinaryValue* v, PyObject* o)
{
    Py_INCREF(o);
    v->type = &ty_custom;
    v->p = o;
    v->custom_data = NULL;
    v->length = 0;
}

/* Python -> binary. Returns 0, or -1 with a Python error set. */
int futoin_py_to_binval(PyObject* o, FutoInBinaryValue* v)
{
    memset(v, 0, sizeof(*v));
    if (PyLong_CheckExact(o)) { /* the common case first */
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (!overflow) {
            if (x == -1 && PyErr_Occurred()) {
                return -1;
            }
            v->type = &ty_i64;
            v->i64 = x;
            return 0;
        }
    }
    if (o == Py_True || o == Py_False) {
        v->type = &ty_bool;
        v->b = (o == Py_True);
        return 0;
    }
    if (PyLong_CheckExact(o)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (!overflow) {
            if (x == -1 && PyErr_Occurred()) {
                return -1;
            }
            v->type = &ty_i64;
            v->i64 = x;
            return 0;
        }
        if (overflow > 0) {
            unsigned long long ux = PyLong_AsUnsignedLongLong(o);
            if (!PyErr_Occurred()) {
                v->type = &ty_u64;
                v->u64 = ux;
                return 0;
            }
            PyErr_Clear();
        }
        fpy_set_custom(v, o);
        return 0;
    }
    if (PyFloat_CheckExact(o)) {
        v->type = &ty_double;
        v->d = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    if (PyUnicode_CheckExact(o)) {
        Py_ssize_t len;
        const char* s = PyUnicode_AsUTF8AndSize(o, &len);
        char* c;
        if (!s) {
            return -1;
        }
        if ((size_t)len > UINT32_MAX - 1) {
            fpy_set_custom(v, o);
            return 0;
        }
        c = malloc((size_t)len + 1);
        if (!c) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(c, s, (size_t)len + 1);
        v->type = &ty_str;
        v->cstr = c;
        v->length = (uint32_t)len;
        return 0;
    }
    if (PyBytes_CheckExact(o)) {
        Py_ssize_t len = PyBytes_GET_SIZE(o);
        char* c = malloc(len ? (size_t)len : 1);
        if (!c) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(c, PyBytes_AS_STRING(o), (size_t)len);
        v->type = &ty_bytes;
        v->p = c;
        v->length = (uint32_t)len;
        return 0;
    }
    if (PyList_CheckExact(o) && PyList_GET_SIZE(o) > 0) {
        Py_ssize_t n = PyList_GET_SIZE(o), i;
        int all_int = 1, all_num = 1;
        for (i = 0; i < n; ++i) {
            PyObject* e = PyList_GET_ITEM(o, i);
            if (PyLong_CheckExact(e)) {
                int ovf = 0;
                PyLong_AsLongLongAndOverflow(e, &ovf);
                if (ovf) {
                    all_int = all_num = 0;
                }
            } else if (PyFloat_CheckExact(e)) {
                all_int = 0;
            } else {
                all_int = all_num = 0;
            }
        }
        if (all_num) {
            void* buf = malloc((size_t)n * 8);
            if (!buf) {
                PyErr_NoMemory();
                return -1;
            }
            for (i = 0; i < n; ++i) {
                PyObject* e = PyList_GET_ITEM(o, i);
                if (all_int) {
                    ((int64_t*)buf)[i] = PyLong_AsLongLong(e);
                } else {
                    ((double*)buf)[i] = PyFloat_AsDouble(e);
                }
            }
            v->type = all_int ? &ty_i64arr : &ty_darr;
            v->p = buf;
            v->length = (uint32_t)n;
            return 0;
        }
    }
    fpy_set_custom(v, o);
    return 0;
}

static PyObject* num_array(const FutoInBinaryValue* v, int base)
{
    uint32_t n = v->length, i;
    PyObject* l = PyList_New(n);
    if (!l) {
        return NULL;
    }
    for (i = 0; i < n; ++i) {
        PyObject* e;
        switch (base) {
        case FTN_TYPE_BOOL: e = PyBool_FromLong(((const bool*)v->p)[i]); break;
        case FTN_TYPE_INT8: e = PyLong_FromLong(((const int8_t*)v->p)[i]); break;
        case FTN_TYPE_INT16: e = PyLong_FromLong(((const int16_t*)v->p)[i]); break;
        case FTN_TYPE_INT32: e = PyLong_FromLong(((const int32_t*)v->p)[i]); break;
        case FTN_TYPE_INT64: e = PyLong_FromLongLong(((const int64_t*)v->p)[i]); break;
        case FTN_TYPE_UINT16: e = PyLong_FromLong(((const uint16_t*)v->p)[i]); break;
        case FTN_TYPE_UINT32: e = PyLong_FromUnsignedLong(((const uint32_t*)v->p)[i]); break;
        case FTN_TYPE_UINT64: e = PyLong_FromUnsignedLongLong(((const uint64_t*)v->p)[i]); break;
        case FTN_TYPE_FLOAT: e = PyFloat_FromDouble(((const float*)v->p)[i]); break;
        case FTN_TYPE_DOUBLE: e = PyFloat_FromDouble(((const double*)v->p)[i]); break;
        default: e = Py_NewRef(Py_None); break;
        }
        if (!e) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, i, e);
    }
    return l;
}

/* binary -> Python (new reference). */
PyObject* futoin_py_from_binval(const FutoInBinaryValue* v)
{
    int flags;
    if (v->type == &ty_i64) {
        return PyLong_FromLongLong(v->i64); /* the common case, first */
    }
    flags = v->type->flags;
    int base = flags & FTN_BASE_TYPE_MASK;
    if (flags & FTN_TYPE_ARRAY) {
        if (base == FTN_TYPE_UINT8) {
            return PyBytes_FromStringAndSize(v->p, v->length);
        }
        return num_array(v, base);
    }
    switch (base) {
    case FTN_TYPE_CUSTOM_OBJECT:
        if (v->type == &ty_custom) {
            return Py_NewRef((PyObject*)v->p);
        }
        return PyLong_FromVoidPtr((void*)v->p); /* another language's */
    case FTN_TYPE_STRING: {
        size_t len = v->length ? v->length : (v->cstr ? strlen(v->cstr) : 0);
        return PyUnicode_DecodeUTF8(v->cstr ? v->cstr : "", (Py_ssize_t)len,
                                    "replace");
    }
    case FTN_TYPE_STRING16: {
        size_t len = v->length;
        if (!len && v->cstr16) {
            while (v->cstr16[len]) ++len;
        }
        return PyUnicode_DecodeUTF16((const char*)v->cstr16,
                                     (Py_ssize_t)(len * 2), "replace", NULL);
    }
    case FTN_TYPE_STRING32: {
        size_t len = v->length;
        if (!len && v->cstr32) {
            while (v->cstr32[len]) ++len;
        }
        return PyUnicode_DecodeUTF32((const char*)v->cstr32,
                                     (Py_ssize_t)(len * 4), "replace", NULL);
    }
    case FTN_TYPE_BOOL: return PyBool_FromLong(v->b);
    case FTN_TYPE_INT8: return PyLong_FromLong(v->i8);
    case FTN_TYPE_INT16: return PyLong_FromLong(v->i16);
    case FTN_TYPE_INT32: return PyLong_FromLong(v->i32);
    case FTN_TYPE_INT64: return PyLong_FromLongLong(v->i64);
    case FTN_TYPE_UINT8: return PyLong_FromLong(v->u8);
    case FTN_TYPE_UINT16: return PyLong_FromLong(v->u16);
    case FTN_TYPE_UINT32: return PyLong_FromUnsignedLong(v->u32);
    case FTN_TYPE_UINT64: return PyLong_FromUnsignedLongLong(v->u64);
    case FTN_TYPE_FLOAT: return PyFloat_FromDouble(v->f);
    case FTN_TYPE_DOUBLE: return PyFloat_FromDouble(v->d);
    default: Py_RETURN_NONE;
    }
}

void fpy_args_reset(FutoInArgs* a)
{
    for (int i = 0; i < 4; ++i) {
        futoin_reset_binval(&a->args[i]);
    }
}

int fpy_args_from(PyObject* const* items, Py_ssize_t n, FutoInArgs* a)
{
    if (n == 1) {
        /* the common case: only the absent values' types need clearing */
        a->args[1].type = a->args[2].type = a->args[3].type = NULL;
        return futoin_py_to_binval(items[0], &a->args[0]);
    }
    memset(a, 0, sizeof(*a));
    if (n > 4) {
        PyErr_SetString(PyExc_TypeError, "at most 4 values (FTN12 FutoInArgs)");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        if (futoin_py_to_binval(items[i], &a->args[i]) < 0) {
            fpy_args_reset(a);
            return -1;
        }
    }
    return 0;
}


PyObject* fpy_custom_of(const FutoInBinaryValue* v)
{
    return (v && v->type == &ty_custom) ? (PyObject*)v->p : NULL;
}

/* Round trip through FutoInBinaryValue, for tests of the conversion:
 * (value, type flags). */
PyObject* fpy_roundtrip(PyObject* o)
{
    FutoInBinaryValue v;
    PyObject *r, *tn, *t;
    if (futoin_py_to_binval(o, &v) < 0) {
        return NULL;
    }
    r = futoin_py_from_binval(&v);
    tn = PyLong_FromLong(v.type->flags);
    t = (r && tn) ? PyTuple_Pack(2, r, tn) : NULL;
    Py_XDECREF(r);
    Py_XDECREF(tn);
    futoin_reset_binval(&v);
    return t;
}
