/* Compiled with -std=c11 -pedantic -Werror: the public headers are valid
 * strict C11 (the layout asserts inside them are checked here too), and
 * the macros of futoin/steps.h expand to valid C11 that records where
 * each step was added. */
#include <futoin/async.h>
#include <futoin/errors.h>
#include <futoin/export.h>
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

#include <stdio.h>
#include <string.h>

static void step(FutoInAsyncSteps* as, void* data, const FutoInArgs* args)
{
    (void)data;
    (void)args;
    as->api->success(as, NULL);
}
static void body(FutoInAsyncSteps* as, void* data)
{
    (void)data;
    as->api->breakLoop(as, NULL);
}
static void times(FutoInAsyncSteps* as, void* data, size_t i)
{
    (void)as;
    (void)data;
    (void)i;
}
static void release(void* data)
{
    ++*(int*)data;
}
static void fails(FutoInAsyncSteps* as, void* data, const FutoInArgs* args)
{
    (void)data;
    (void)args;
    as->api->handle_error(as, "Here", NULL);
}
static unsigned fail_line;
static int seen_ok;
static void check_stack(FutoInAsyncSteps* as, void* data, const char* code)
{
    const futoin_async_stack* st = futoin_wrap_async_stack(as);
    (void)data;
    seen_ok = st && st->count == 1 && strcmp(code, "Here") == 0
              && strcmp(st->frames[0].function, "fails") == 0
              && strcmp(st->frames[0].file, __FILE__) == 0
              && st->frames[0].line == fail_line;
}

int main(void)
{
    FutoInBinaryValue v = {0};
    FutoInArgs a;
    futoin_tool* tool;
    FutoInAsyncSteps* as;
    FutoInSync* mx = futoin_mutex_new(1, 8);
    int released = 0;
    futoin_host_policy policy = FUTOIN_HOST_POLICY_INIT;
    futoin_reset_binval(&v);
    if (policy.size != sizeof(policy) || policy.languages || policy.modules) {
        return 1;
    }
    a.args[0] = v;
    printf("FutoInBinaryValue=%zu FutoInArgs=%zu API=%zu\n",
           sizeof(FutoInBinaryValue), sizeof(a), sizeof(FutoInAsyncStepsAPI));
    if (futoin_tool_new(&tool, NULL) != FUTOIN_OK || !mx) {
        return 1;
    }
    as = futoin_root_new(tool);
    FUTOIN_ADD(as, NULL, step, NULL);
    FUTOIN_ADD_OWNED(as, &released, step, NULL, release);
    FUTOIN_LOOP(as, NULL, body, NULL);
    FUTOIN_LOOP_OWNED(as, &released, body, "label", release);
    FUTOIN_REPEAT(as, NULL, 2, times, NULL);
    FUTOIN_REPEAT_OWNED(as, &released, 2, times, NULL, release);
    FUTOIN_ADD_SYNC(as, mx, NULL, step, NULL);
    FUTOIN_ADD_SYNC_OWNED(as, mx, &released, step, NULL, release);
    fail_line = __LINE__ + 1;
    FUTOIN_ADD(as, NULL, fails, NULL);
    as->api->execute(as, NULL, check_stack);
    futoin_tool_run(tool);
    as->api->free(as);
    as = futoin_root_new(tool); /* added, never run */
    if (FUTOIN_HOST_ADD(as, "c", "libm.so.6", "double sqrt(double)") != FUTOIN_OK) {
        seen_ok = 0;
    }
    as->api->free(as);
    futoin_mutex_free(mx);
    if (futoin_tool_free(tool) != FUTOIN_OK || released != 4 || !seen_ok) {
        printf("released %d, stack %s\n", released, seen_ok ? "ok" : "wrong");
        return 1;
    }
    return sizeof(FutoInAsyncStepsAPI) == 25 * sizeof(void*) ? 0 : 1;
}
