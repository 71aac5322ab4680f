// The public headers compile as C++ (extern "C", no C-only constructs),
// and the macros of futoin/steps.h expand to valid C++ that records where
// each step was added.
#include <futoin/async.h>
#include <futoin/ftn12.h>
#include <futoin/sync.h>
#include <futoin/ffi.h>
#include <futoin/steps.h>
#include <futoin/trace.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/hooks.h>
#include <futoin/sys/host.h>
#include <futoin/sys/wrap.h>
#include <futoin/sys/host.h>

#include <cstdio>
#include <cstring>

static const FutoInAsyncStepsAPI* api_of(FutoInAsyncSteps* s) { return s->api; }

static void step(FutoInAsyncSteps* as, void*, const FutoInArgs*) { as->api->success(as, nullptr); }
static void body(FutoInAsyncSteps* as, void*) { as->api->breakLoop(as, nullptr); }
static void times(FutoInAsyncSteps*, void*, size_t) {}
static void release(void* data) { ++*static_cast<int*>(data); }
static void fails(FutoInAsyncSteps* as, void*, const FutoInArgs*)
{
    as->api->handle_error(as, "Here", nullptr);
}
static unsigned fail_line;
static bool seen_ok;
static void check_stack(FutoInAsyncSteps* as, void*, const char* code)
{
    const futoin_async_stack* st = futoin_wrap_async_stack(as);
    seen_ok = st && st->count == 1 && std::strcmp(code, "Here") == 0
              && std::strcmp(st->frames[0].function, "fails") == 0
              && std::strcmp(st->frames[0].file, __FILE__) == 0
              && st->frames[0].line == fail_line;
}

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

    futoin_tool* tool = nullptr;
    FutoInSync* mx = futoin_mutex_new(1, 8);
    int released = 0;
    if (futoin_tool_new(&tool, nullptr) != FUTOIN_OK || !mx) {
        return 1;
    }
    FutoInAsyncSteps* as = futoin_root_new(tool);
    FUTOIN_ADD(as, nullptr, step, nullptr);
    FUTOIN_ADD_OWNED(as, &released, step, nullptr, release);
    FUTOIN_LOOP(as, nullptr, body, nullptr);
    FUTOIN_LOOP_OWNED(as, &released, body, "label", release);
    FUTOIN_REPEAT(as, nullptr, 2, times, nullptr);
    FUTOIN_REPEAT_OWNED(as, &released, 2, times, nullptr, release);
    FUTOIN_ADD_SYNC(as, mx, nullptr, step, nullptr);
    FUTOIN_ADD_SYNC_OWNED(as, mx, &released, step, nullptr, release);
    fail_line = __LINE__ + 1;
    FUTOIN_ADD(as, nullptr, fails, nullptr);
    as->api->execute(as, nullptr, check_stack);
    futoin_tool_run(tool);
    as->api->free(as);
    as = futoin_root_new(tool); /* added, never run */
    if (FUTOIN_HOST_ADD(as, "c", "libm.so.6", "double sqrt(double)") != FUTOIN_OK) {
        seen_ok = false;
    }
    as->api->free(as);
    futoin_mutex_free(mx);
    if (futoin_tool_free(tool) != FUTOIN_OK || released != 4 || !seen_ok) {
        std::printf("released %d, stack %s\n", released, seen_ok ? "ok" : "wrong");
        return 1;
    }
    return sizeof(FutoInAsyncStepsAPI) == 25 * sizeof(void*) ? 0 : 1;
}
