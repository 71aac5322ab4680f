/* The library's own version, compiled in from futoin/async.h so that a
 * program can compare the header it was built with to the library it runs
 * with. */
#include <futoin/async.h>

FUTOIN_API const char* futoin_async_version(void)
{
    return FUTOIN_VERSION_STRING;
}

FUTOIN_API int futoin_async_version_number(void)
{
    return FUTOIN_VERSION_NUMBER;
}
