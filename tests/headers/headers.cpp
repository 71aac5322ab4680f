// The public headers compile as C++ (extern "C", no C-only constructs).
#include <futoin/async.h>
#include <futoin/ftn12.h>
#include <futoin/sync.h>
#include <futoin/ffi.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/wrap.h>
#include <futoin/sys/host.h>

#include <cstdio>

static const FutoInAsyncStepsAPI* api_of(FutoInAsyncSteps* s) { return s->api; }

int main()
{
    FutoInBinaryValue v{};
    futoin_reset_binval(&v);
    FutoInAsyncSteps dummy(nullptr);
    futoin_host_policy policy = FUTOIN_HOST_POLICY_INIT;
    if (policy.size != sizeof(policy) || policy.languages || policy.modules) {
        return 1;
    }
    std::printf("api=%p\n", static_cast<const void*>(api_of(&dummy)));
    static_assert(sizeof(FutoInArgs) == 4 * sizeof(FutoInBinaryValue), "args");
    return sizeof(FutoInAsyncStepsAPI) == 25 * sizeof(void*) ? 0 : 1;
}
