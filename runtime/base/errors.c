/*
 * Names and descriptions of the standard error codes. Both tables are
 * generated from FUTOIN_ERROR_MAP, the single list in futoin/errors.h, so
 * the C constants, these strings and the enum can never drift apart.
 */
#include <stddef.h>
#include <string.h>

#include <futoin/errors.h>

#define FUTOIN__ERR_NAME(e, s, d) s,
#define FUTOIN__ERR_DESC(e, s, d) d,

/* Static storage: the runtime keeps these pointers without copying, so
 * futoin_error_name() must return the very same pointer on every call. */
static const char* const error_names[FUTOIN_ERROR_COUNT] = {
        FUTOIN_ERROR_MAP(FUTOIN__ERR_NAME)};
static const char* const error_descs[FUTOIN_ERROR_COUNT] = {
        FUTOIN_ERROR_MAP(FUTOIN__ERR_DESC)};

#undef FUTOIN__ERR_NAME
#undef FUTOIN__ERR_DESC

FUTOIN_API const char* futoin_error_name(futoin_error e)
{
    /* The cast folds negative values into the out-of-range check. */
    if ((unsigned)e >= (unsigned)FUTOIN_ERROR_COUNT) {
        return NULL;
    }
    return error_names[e];
}

FUTOIN_API const char* futoin_error_description(futoin_error e)
{
    if ((unsigned)e >= (unsigned)FUTOIN_ERROR_COUNT) {
        return NULL;
    }
    return error_descs[e];
}

FUTOIN_API int futoin_error_lookup(const char* code)
{
    if (!code) {
        return -1;
    }
    for (int i = 0; i < (int)FUTOIN_ERROR_COUNT; ++i) {
        if (strcmp(code, error_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}
