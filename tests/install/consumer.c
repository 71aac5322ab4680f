/* A user program built only from an installed libfutoin_async, with
 * `pkg-config --cflags --libs futoin_async`. */
#include <futoin/async.h>

#include <stdio.h>
#include <string.h>

static int steps;

static void step(FutoInAsyncSteps* as, void* data, const FutoInArgs* args)
{
    ++steps;
    if (args->arg0.type) {
        printf("consumer got %lld\n", (long long)args->arg0.i64);
    }
}

static const FutoInType ty_int = {FTN_TYPE_INT64, NULL};

static void produce(FutoInAsyncSteps* as, void* data, const FutoInArgs* args)
{
    FutoInArgs out;
    memset(&out, 0, sizeof(out));
    out.arg0.type = &ty_int;
    out.arg0.i64 = 42;
    as->api->success(as, &out);
}

int main(void)
{
    futoin_tool* tool;
    FutoInAsyncSteps* as;
    if (futoin_tool_new(&tool, NULL) != FUTOIN_OK) {
        return 1;
    }
    as = futoin_root_new(tool);
    as->api->add(as, NULL, produce, NULL);
    as->api->add(as, NULL, step, NULL);
    as->api->execute(as, NULL, NULL);
    futoin_tool_run(tool);
    as->api->free(as);
    printf("libfutoin_async %s, steps=%d\n", futoin_async_version(), steps);
    return (futoin_tool_free(tool) == FUTOIN_OK && steps == 1) ? 0 : 1;
}
