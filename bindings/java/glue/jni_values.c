/*
 * FutoInBinaryValue <-> Java (FTN12 §2.7 values).
 *
 * The Java side (Values.java) classifies a value with `instanceof`, which
 * is far cheaper in Java than IsInstanceOf() calls from C, and hands over
 * a tag (an FTN12 flag byte), the raw bits of a scalar and, for strings,
 * arrays and custom objects, one object. Here the value is built: strings
 * arrive as UTF-8 byte[] (length is authoritative, embedded zeros
 * survive), primitive arrays are copied into malloc'd buffers, any other
 * object becomes a custom value of Java holding one counted global
 * reference, released by the type's cleanup exactly once.
 *
 * The other way, scalars go back as raw bits (Java boxes them), strings as
 * a String (plain ASCII) or UTF-8 byte[], arrays as primitive arrays.
 * A custom value of another language is moved into a holder that the Java
 * ForeignValue object owns: it is cleaned up once, by whoever ends up with
 * it, or passed on unchanged to the next step.
 */
#include "futoin_java.h"

#include <stdlib.h>
#include <string.h>

static void free_p(FutoInBinaryValue* v)
{
    free((void*)v->p);
}

static void custom_cleanup(FutoInBinaryValue* v)
{
    JNIEnv* env;
    if (v->p && (env = fj_env()) != NULL) {
        fj_gref_drop(env, (jobject)v->p);
    }
}

static const FutoInType ty_bool = {FTN_TYPE_BOOL, NULL};
static const FutoInType ty_i8 = {FTN_TYPE_INT8, NULL};
static const FutoInType ty_i16 = {FTN_TYPE_INT16, NULL};
static const FutoInType ty_i32 = {FTN_TYPE_INT32, NULL};
static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};
static const FutoInType ty_u64 = {FTN_TYPE_UINT64, NULL};
static const FutoInType ty_float = {FTN_TYPE_FLOAT, NULL};
static const FutoInType ty_double = {FTN_TYPE_DOUBLE, NULL};
static const FutoInType ty_str = {FTN_TYPE_STRING, free_p};
static const FutoInType ty_arr[16] = {
        [FTN_TYPE_BOOL] = {FTN_TYPE_ARRAY | FTN_TYPE_BOOL, free_p},
        [FTN_TYPE_INT16] = {FTN_TYPE_ARRAY | FTN_TYPE_INT16, free_p},
        [FTN_TYPE_INT32] = {FTN_TYPE_ARRAY | FTN_TYPE_INT32, free_p},
        [FTN_TYPE_INT64] = {FTN_TYPE_ARRAY | FTN_TYPE_INT64, free_p},
        [FTN_TYPE_UINT8] = {FTN_TYPE_ARRAY | FTN_TYPE_UINT8, free_p},
        [FTN_TYPE_UINT16] = {FTN_TYPE_ARRAY | FTN_TYPE_UINT16, free_p},
        [FTN_TYPE_FLOAT] = {FTN_TYPE_ARRAY | FTN_TYPE_FLOAT, free_p},
        [FTN_TYPE_DOUBLE] = {FTN_TYPE_ARRAY | FTN_TYPE_DOUBLE, free_p},
};
static const FutoInType ty_custom = {FTN_TYPE_CUSTOM_OBJECT, custom_cleanup};

int fj_is_java_custom(const FutoInBinaryValue* v)
{
    return v && v->type == &ty_custom;
}

void fj_set_custom(JNIEnv* env, FutoInBinaryValue* v, jobject o)
{
    v->type = &ty_custom;
    v->p = o ? fj_gref(env, o) : NULL;
    v->custom_data = NULL;
    v->length = 0;
}

static void* oom(JNIEnv* env)
{
    fj_throw(env, fj.ex_oom, "futoin: out of native memory for a value");
    return NULL;
}

/* A copy of a primitive Java array of `esize`-byte elements. */
static int copy_array(JNIEnv* env, int base, jobject arr, FutoInBinaryValue* v)
{
    jsize n;
    size_t esize;
    void* buf;
    if (!arr) {
        fj_throw(env, fj.ex_npe, "futoin: null array");
        return -1;
    }
    n = (*env)->GetArrayLength(env, (jarray)arr);
    switch (base) {
    case FTN_TYPE_BOOL:
    case FTN_TYPE_UINT8: esize = 1; break;
    case FTN_TYPE_INT16:
    case FTN_TYPE_UINT16: esize = 2; break;
    case FTN_TYPE_INT32:
    case FTN_TYPE_FLOAT: esize = 4; break;
    default: esize = 8; break;
    }
    buf = malloc(n ? (size_t)n * esize : 1);
    if (!buf) {
        oom(env);
        return -1;
    }
    switch (base) {
    case FTN_TYPE_BOOL:
        (*env)->GetBooleanArrayRegion(env, arr, 0, n, buf);
        break;
    case FTN_TYPE_UINT8: (*env)->GetByteArrayRegion(env, arr, 0, n, buf); break;
    case FTN_TYPE_INT16: (*env)->GetShortArrayRegion(env, arr, 0, n, buf); break;
    case FTN_TYPE_UINT16: (*env)->GetCharArrayRegion(env, arr, 0, n, buf); break;
    case FTN_TYPE_INT32: (*env)->GetIntArrayRegion(env, arr, 0, n, buf); break;
    case FTN_TYPE_FLOAT: (*env)->GetFloatArrayRegion(env, arr, 0, n, buf); break;
    case FTN_TYPE_INT64: (*env)->GetLongArrayRegion(env, arr, 0, n, buf); break;
    case FTN_TYPE_DOUBLE:
        (*env)->GetDoubleArrayRegion(env, arr, 0, n, buf);
        break;
    default: break;
    }
    v->type = &ty_arr[base];
    v->p = buf;
    v->length = (uint32_t)n;
    return 0;
}

int fj_to_binval(JNIEnv* env, int tag, jlong bits, jobject obj,
                 FutoInBinaryValue* v)
{
    fj_binval_clear(v);
    if (tag & FTN_TYPE_ARRAY && tag != FJ_TAG_FOREIGN) {
        int base = tag & FTN_BASE_TYPE_MASK;
        if (!ty_arr[base].flags) {
            fj_throw(env, fj.ex_arg, "futoin: unsupported array type");
            return -1;
        }
        return copy_array(env, base, obj, v);
    }
    switch (tag) {
    case FTN_TYPE_CUSTOM_OBJECT:
        fj_set_custom(env, v, obj);
        return 0;
    case FTN_TYPE_STRING: {
        jsize n;
        char* c;
        if (!obj) {
            fj_throw(env, fj.ex_npe, "futoin: null string bytes");
            return -1;
        }
        n = (*env)->GetArrayLength(env, (jarray)obj);
        c = malloc((size_t)n + 1);
        if (!c) {
            oom(env);
            return -1;
        }
        (*env)->GetByteArrayRegion(env, (jbyteArray)obj, 0, n, (jbyte*)c);
        c[n] = 0;
        v->type = &ty_str;
        v->cstr = c;
        v->length = (uint32_t)n;
        return 0;
    }
    case FTN_TYPE_BOOL: v->type = &ty_bool; v->b = bits != 0; return 0;
    case FTN_TYPE_INT8: v->type = &ty_i8; v->i8 = (int8_t)bits; return 0;
    case FTN_TYPE_INT16: v->type = &ty_i16; v->i16 = (int16_t)bits; return 0;
    case FTN_TYPE_INT32: v->type = &ty_i32; v->i32 = (int32_t)bits; return 0;
    case FTN_TYPE_INT64: v->type = &ty_i64; v->i64 = bits; return 0;
    case FTN_TYPE_UINT64: v->type = &ty_u64; v->u64 = (uint64_t)bits; return 0;
    case FTN_TYPE_FLOAT: {
        uint32_t u = (uint32_t)bits;
        v->type = &ty_float;
        memcpy(&v->f, &u, sizeof(u));
        return 0;
    }
    case FTN_TYPE_DOUBLE:
        v->type = &ty_double;
        memcpy(&v->d, &bits, sizeof(bits));
        return 0;
    case FJ_TAG_FOREIGN: {
        FutoInBinaryValue* h = (FutoInBinaryValue*)(uintptr_t)bits;
        if (!h || !h->type) {
            fj_throw(env, fj.ex_state,
                     "ForeignValue was already passed on or released");
            return -1;
        }
        *v = *h; /* move: the holder is emptied */
        fj_binval_clear(h);
        return 0;
    }
    default:
        fj_throw(env, fj.ex_arg, "futoin: unsupported value tag");
        return -1;
    }
}

/* A Java primitive array with the elements of `v` (NULL: out of memory). */
static jobject new_array(JNIEnv* env, int base, const FutoInBinaryValue* v)
{
    jsize n = (jsize)v->length;
    jobject a = NULL;
    switch (base) {
    case FTN_TYPE_BOOL:
        if ((a = (*env)->NewBooleanArray(env, n))) {
            jboolean tmp[64];
            const bool* src = v->p;
            for (jsize i = 0; i < n; i += 64) {
                jsize k = n - i < 64 ? n - i : 64;
                for (jsize j = 0; j < k; ++j) {
                    tmp[j] = src[i + j] ? JNI_TRUE : JNI_FALSE;
                }
                (*env)->SetBooleanArrayRegion(env, a, i, k, tmp);
            }
        }
        break;
    case FTN_TYPE_INT8:
    case FTN_TYPE_UINT8:
        if ((a = (*env)->NewByteArray(env, n))) {
            (*env)->SetByteArrayRegion(env, a, 0, n, v->p);
        }
        break;
    case FTN_TYPE_INT16:
        if ((a = (*env)->NewShortArray(env, n))) {
            (*env)->SetShortArrayRegion(env, a, 0, n, v->p);
        }
        break;
    case FTN_TYPE_UINT16:
        if ((a = (*env)->NewCharArray(env, n))) {
            (*env)->SetCharArrayRegion(env, a, 0, n, v->p);
        }
        break;
    case FTN_TYPE_INT32:
        if ((a = (*env)->NewIntArray(env, n))) {
            (*env)->SetIntArrayRegion(env, a, 0, n, v->p);
        }
        break;
    case FTN_TYPE_UINT32:
        if ((a = (*env)->NewLongArray(env, n))) {
            jlong tmp[64];
            const uint32_t* src = v->p;
            for (jsize i = 0; i < n; i += 64) {
                jsize k = n - i < 64 ? n - i : 64;
                for (jsize j = 0; j < k; ++j) {
                    tmp[j] = src[i + j];
                }
                (*env)->SetLongArrayRegion(env, a, i, k, tmp);
            }
        }
        break;
    case FTN_TYPE_INT64:
    case FTN_TYPE_UINT64:
        if ((a = (*env)->NewLongArray(env, n))) {
            (*env)->SetLongArrayRegion(env, a, 0, n, v->p);
        }
        break;
    case FTN_TYPE_FLOAT:
        if ((a = (*env)->NewFloatArray(env, n))) {
            (*env)->SetFloatArrayRegion(env, a, 0, n, v->p);
        }
        break;
    case FTN_TYPE_DOUBLE:
        if ((a = (*env)->NewDoubleArray(env, n))) {
            (*env)->SetDoubleArrayRegion(env, a, 0, n, v->p);
        }
        break;
    default:
        break;
    }
    return a;
}

/* A string of `len` UTF-8 bytes: a String when it is plain ASCII without
 * zeros (NewStringUTF reads modified UTF-8, which agrees there), else the
 * bytes for Java to decode. */
static jobject new_string(JNIEnv* env, const char* s, size_t len)
{
    size_t i;
    jbyteArray b;
    for (i = 0; i < len; ++i) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0 || c >= 0x80) {
            break;
        }
    }
    if (i == len && s[len] == 0) {
        return (*env)->NewStringUTF(env, s);
    }
    b = (*env)->NewByteArray(env, (jsize)len);
    if (b) {
        (*env)->SetByteArrayRegion(env, b, 0, (jsize)len, (const jbyte*)s);
    }
    return b;
}

int fj_from_binval(JNIEnv* env, FutoInBinaryValue* v, jint* tag, jlong* bits,
                   jobject* obj, int* obj_local)
{
    int flags = v->type->flags;
    int base = flags & FTN_BASE_TYPE_MASK;
    *tag = flags;
    *bits = 0;
    *obj = NULL;
    *obj_local = 1;
    if (v->type == &ty_custom) {
        *obj = (jobject)v->p; /* our global ref: Java gets the object */
        *obj_local = 0;
        return 0;
    }
    if (flags == (FTN_TYPE_ARRAY | base) && base != FTN_TYPE_CUSTOM_OBJECT
        && base != FTN_TYPE_STRING && base != FTN_TYPE_STRING16
        && base != FTN_TYPE_STRING32) {
        if (v->length && !v->p) {
            goto foreign;
        }
        *obj = new_array(env, base, v);
        return *obj ? 0 : -1;
    }
    switch (flags) {
    case FTN_TYPE_STRING: {
        const char* s = v->cstr ? v->cstr : "";
        size_t len = v->length ? v->length : strlen(s);
        *obj = new_string(env, s, len);
        return *obj ? 0 : -1;
    }
    case FTN_TYPE_STRING16: {
        size_t len = v->length;
        if (!len && v->cstr16) {
            while (v->cstr16[len]) {
                ++len;
            }
        }
        *obj = (*env)->NewCharArray(env, (jsize)len);
        if (*obj && len) {
            (*env)->SetCharArrayRegion(env, *obj, 0, (jsize)len,
                                       (const jchar*)v->cstr16);
        }
        return *obj ? 0 : -1;
    }
    case FTN_TYPE_STRING32: {
        size_t len = v->length;
        if (!len && v->cstr32) {
            while (v->cstr32[len]) {
                ++len;
            }
        }
        *obj = (*env)->NewIntArray(env, (jsize)len);
        if (*obj && len) {
            (*env)->SetIntArrayRegion(env, *obj, 0, (jsize)len,
                                      (const jint*)v->cstr32);
        }
        return *obj ? 0 : -1;
    }
    case FTN_TYPE_BOOL: *bits = v->b ? 1 : 0; return 0;
    case FTN_TYPE_INT8: *bits = v->i8; return 0;
    case FTN_TYPE_INT16: *bits = v->i16; return 0;
    case FTN_TYPE_INT32: *bits = v->i32; return 0;
    case FTN_TYPE_INT64: *bits = v->i64; return 0;
    case FTN_TYPE_UINT8: *bits = v->u8; return 0;
    case FTN_TYPE_UINT16: *bits = v->u16; return 0;
    case FTN_TYPE_UINT32: *bits = v->u32; return 0;
    case FTN_TYPE_UINT64: *bits = (jlong)v->u64; return 0;
    case FTN_TYPE_FLOAT: {
        uint32_t u;
        memcpy(&u, &v->f, sizeof(u));
        *bits = u;
        return 0;
    }
    case FTN_TYPE_DOUBLE: memcpy(bits, &v->d, sizeof(*bits)); return 0;
    default: break;
    }
foreign: {
    /* Another language's custom object, or a type Java has no form for:
     * move it into a holder that Java's ForeignValue owns. */
    FutoInBinaryValue* h = malloc(sizeof(*h));
    if (!h) {
        return -1;
    }
    *h = *v;
    fj_binval_clear(v);
    *tag = FJ_TAG_FOREIGN;
    *bits = (jlong)(uintptr_t)h;
    return 0;
}
}

void fj_args_reset(FutoInArgs* a)
{
    for (int i = 0; i < 4; ++i) {
        futoin_reset_binval(&a->args[i]);
    }
}

int fj_args_from(JNIEnv* env, jint tags, const jlong* bits,
                 const jobject* objs, FutoInArgs* a)
{
    fj_args_clear(a);
    for (int i = 0; i < 4; ++i) {
        int tag = (tags >> (8 * i)) & 0xFF;
        if (!tag) {
            break;
        }
        if (fj_to_binval(env, tag, bits[i], objs[i], &a->args[i]) < 0) {
            fj_args_reset(a);
            return -1;
        }
    }
    return 0;
}

/* A NUL-terminated copy of a Java byte[] (UTF-8), or NULL for null.
 * Returns -1 with an exception pending when out of memory. */
int fj_cstr_of(JNIEnv* env, jbyteArray b, char** out)
{
    jsize n;
    *out = NULL;
    if (!b) {
        return 0;
    }
    n = (*env)->GetArrayLength(env, b);
    *out = malloc((size_t)n + 1);
    if (!*out) {
        fj_throw(env, fj.ex_oom, "futoin: out of native memory");
        return -1;
    }
    (*env)->GetByteArrayRegion(env, b, 0, n, (jbyte*)*out);
    (*out)[n] = 0;
    return 0;
}

/* ---- ForeignValue holders ----------------------------------------------------- */

jint fj_foreign_flags(jlong holder)
{
    const FutoInBinaryValue* v = (const FutoInBinaryValue*)(uintptr_t)holder;
    return v && v->type ? v->type->flags : -1;
}

jlong fj_foreign_address(jlong holder)
{
    const FutoInBinaryValue* v = (const FutoInBinaryValue*)(uintptr_t)holder;
    return v && v->type ? (jlong)(uintptr_t)v->p : 0;
}

/* Clean up what the holder still holds and free it. Exactly once (the
 * Java side guarantees it). */
void fj_foreign_free(jlong holder)
{
    FutoInBinaryValue* v = (FutoInBinaryValue*)(uintptr_t)holder;
    if (v) {
        futoin_reset_binval(v);
        free(v);
    }
}
