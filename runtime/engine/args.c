/*
 * The values a step passes on (FutoInArgs): clearing them, and checking
 * them where they enter the runtime.
 */
#include "engine/engine.h"

#include <stdio.h>

void futoin__args_clear(FutoInArgs* a)
{
    for (int i = 0; i < 4; ++i) {
        if (a->args[i].type) {
            futoin_reset_binval(&a->args[i]);
        }
    }
}

_Static_assert(sizeof(FutoInArgs) % 8 == 0, "FutoInArgs is whole words");

/* Word by word: memcpy() + memset() of a FutoInArgs compiled to `rep stos`
 * (see FUTOIN__NO_MEMSET_PATTERN). */
FUTOIN__NO_MEMSET_PATTERN void futoin__args_move(FutoInArgs* dst,
                                                 FutoInArgs* src)
{
    typedef uint64_t __attribute__((may_alias)) word;
    word* d = (word*)(void*)dst;
    word* s = (word*)(void*)src;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 16
#endif
    for (size_t i = 0; i < sizeof(*dst) / 8; ++i) {
        d[i] = s[i];
        s[i] = 0;
    }
}

/* Values are handed on to code in other languages and to C functions
 * through libffi, which trust their type: a value whose flags name no
 * FTN12 type, or a string or array whose pointer is NULL, is refused
 * where it enters (success()), naming the argument, instead of crashing
 * whoever reads it later. */
bool futoin__args_check(const FutoInArgs* a, const char* what, char* msg,
                        size_t len)
{
    for (int i = 0; i < 4; ++i) {
        const FutoInBinaryValue* v = &a->args[i];
        unsigned flags, base, cplx;
        if (!v->type) {
            continue;
        }
        flags = v->type->flags;
        base = flags & FTN_BASE_TYPE_MASK;
        cplx = flags & FTN_COMPLEX_TYPE_MASK;
        if (base == 0 || (cplx != 0 && cplx != FTN_TYPE_ARRAY)) {
            if (msg) {
                snprintf(msg, len,
                         "%s: value %d has an unknown type (flags 0x%02x)",
                         what, i + 1, flags);
            }
            return false;
        }
        if (cplx == FTN_TYPE_ARRAY && !v->p && v->length != 0) {
            if (msg) {
                snprintf(msg, len,
                         "%s: value %d is an array of %u elements with a "
                         "NULL pointer",
                         what, i + 1, (unsigned)v->length);
            }
            return false;
        }
        if (cplx == 0 && !v->p
            && (base == FTN_TYPE_STRING || base == FTN_TYPE_STRING16
                || base == FTN_TYPE_STRING32)) {
            if (msg) {
                snprintf(msg, len, "%s: value %d is a string with a NULL pointer",
                         what, i + 1);
            }
            return false;
        }
    }
    return true;
}
