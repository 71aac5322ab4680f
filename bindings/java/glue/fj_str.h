/*
 * Bounded string copy for the glue's messages (error texts handed to the
 * library, JVM paths). A constant message or a plain "%s" given to
 * snprintf() is compiled into an unchecked snprintf() call even under
 * _FORTIFY_SOURCE (there is no format to check), which the hardening check
 * (tests/abi/check_hardening.sh) rightly flags; this copies instead.
 */
#ifndef FJ_STR_H
#define FJ_STR_H

#include <stddef.h>
#include <string.h>

/* Copy `src` into `dst` of `cap` bytes, cut to fit, always terminated
 * (nothing happens when cap is 0). */
static inline void fj_copy_str(char* dst, size_t cap, const char* src)
{
    size_t n;
    if (!cap) {
        return;
    }
    n = strlen(src);
    if (n >= cap) {
        n = cap - 1;
    }
    memcpy(dst, src, n);
    dst[n] = 0;
}

#endif
