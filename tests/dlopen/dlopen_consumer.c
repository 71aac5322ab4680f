/* A dlopen consumer: opens libfutoin_async by path, resolves ONE symbol,
 * negotiates the API version it was built for, and runs a flow using only
 * the returned tables (no link-time dependency on the library).
 * usage: dlopen_consumer PATH_TO_LIBFUTOIN_ASYNC_SO
 * Prints "dlopen: N passed, M failed". */
#include <futoin/sys/ext.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "../include/futoin_check.h" /* CHECK, futoin_check_summary */

static int ran, released;
static const FutoInType ty_int = {FTN_TYPE_INT64, NULL};

static void produce(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs v;
    (void)d;
    (void)a;
    memset(&v, 0, sizeof(v));
    v.arg0.type = &ty_int;
    v.arg0.i64 = 7;
    as->api->success(as, &v);
}
static void consume(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)as;
    (void)d;
    ran += (int)a->arg0.i64;
}
static void rel(void* d)
{
    (void)d;
    ++released;
}

int main(int argc, char** argv)
{
    const char* path = argc > 1 ? argv[1] : FUTOIN_LIB_PATH;
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen: 0 passed, 1 failed (%s)\n", dlerror());
        return 1;
    }
    futoin_async_get_api_fn get =
            (futoin_async_get_api_fn)(uintptr_t)dlsym(h, FUTOIN_GET_API_SYMBOL);
    CHECK(get != NULL, "futoin_async_get_api resolves");
    if (!get) {
        return 1;
    }
    const futoin_async_api* api = NULL;
    CHECK(get(FUTOIN_API_VERSION + 7, &api) == FUTOIN_EVERSION && !api,
          "a newer version than the library is refused");
    CHECK(get(FUTOIN_API_VERSION, &api) == FUTOIN_OK && api,
          "the built-for version is granted");
    CHECK(api->version >= FUTOIN_API_VERSION && api->size >= sizeof(*api),
          "table version and size");
    printf("library %s, api v%u\n", api->version_string(), api->version);

    futoin_tool* tool = NULL;
    CHECK(api->tool_new(&tool, NULL) == FUTOIN_OK, "tool_new");
    FutoInAsyncSteps* as = api->root_new(tool);
    const futoin_async_ext_table* x = api->ext(as);
    CHECK(x && x->version >= FUTOIN_EXT_VERSION_1, "ext table of our root");
    x->add(as, NULL, produce, NULL, rel);
    x->add(as, NULL, consume, NULL, rel);
    as->api->execute(as, NULL, NULL);
    CHECK(api->tool_run(tool) == FUTOIN_OK, "tool_run");
    CHECK(ran == 7, "value passed between steps");
    CHECK(released == 2, "release hooks ran once each");
    as->api->free(as);
    FutoInSync* mtx = api->mutex_new(1, FUTOIN_UNLIMITED);
    CHECK(mtx != NULL && mtx->api && mtx->api->lock, "mutex_new");
    CHECK(api->mutex_free(mtx) == FUTOIN_OK, "mutex_free");
    CHECK(api->tool_free(tool) == FUTOIN_OK, "tool_free");
    CHECK(dlclose(h) == 0, "dlclose");
    return futoin_check_summary("dlopen");
}
