/* Compiled with -std=c11 -pedantic -Werror: the public headers are valid
 * strict C11 (the layout asserts inside them are checked here too). */
#include <futoin/async.h>
#include <futoin/errors.h>
#include <futoin/export.h>
#include <futoin/ftn12.h>
#include <futoin/sync.h>
#include <futoin/ffi.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/wrap.h>
#include <futoin/sys/host.h>

#include <stdio.h>

int main(void)
{
    FutoInBinaryValue v = {0};
    FutoInArgs a;
    futoin_host_policy policy = FUTOIN_HOST_POLICY_INIT;
    futoin_reset_binval(&v);
    if (policy.size != sizeof(policy) || policy.languages || policy.modules) {
        return 1;
    }
    a.args[0] = v;
    printf("FutoInBinaryValue=%zu FutoInArgs=%zu API=%zu\n",
           sizeof(FutoInBinaryValue), sizeof(a), sizeof(FutoInAsyncStepsAPI));
    return sizeof(FutoInAsyncStepsAPI) == 25 * sizeof(void*) ? 0 : 1;
}
