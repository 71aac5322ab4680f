/* A language host plug-in for the tests: language "echo", whose functions
 * are named by a number. Step "<module>.<n>" passes on n, "<module>.fail"
 * raises EchoError; every step records its origin as echo:<module>.<fn> at
 * line n. Counts starts, stops and live step data, for the leak check.
 *
 * Built again with ECHO_LANGUAGE set ("python", "lua", "java") as the fake
 * plug-ins of test_discovery.c: the same host under another language's
 * name, planted in the layouts where the library looks for that
 * language's plug-in. */
#include <futoin/sys/host.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ECHO_LANGUAGE
#define ECHO_LANGUAGE "echo"
#endif

FUTOIN_API int futoin_host_get(uint32_t version, const futoin_host_api** out);
FUTOIN_API int echo_host_counters(int* starts, int* stops, int* live);
FUTOIN_API void named_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a);

static int starts, stops, live;

typedef struct echo_step
{
    char module[64];
    char function[64];
    long n;
} echo_step;

static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};

static void echo_execute(FutoInAsyncSteps* as, void* data, const FutoInArgs* in)
{
    echo_step* e = data;
    FutoInArgs out;
    if (strcmp(e->function, "fail") == 0) {
        as->api->handle_error(as, "EchoError", e->module);
        return;
    }
    memset(&out, 0, sizeof(out));
    out.arg0.type = &ty_i64;
    out.arg0.i64 = e->n + (in->arg0.type ? in->arg0.i64 : 0);
    as->api->success(as, &out);
}

static void echo_release(void* data)
{
    --live;
    free(data);
}

static void echo_origin(void* data, futoin_frame_origin* o)
{
    echo_step* e = data;
    o->language = ECHO_LANGUAGE;
    o->function = e->function;
    o->file = e->module;
    o->line = (uint32_t)e->n;
}

static const futoin_step_class echo_class = {sizeof(futoin_step_class),
                                             echo_release, echo_origin};

static int echo_start(futoin_tool* tool, char* err, size_t errlen)
{
    ++starts;
    return FUTOIN_OK;
}

static void echo_stop(void)
{
    ++stops;
}

static int echo_resolve(const char* module, const char* function,
                        futoin_host_step* out, char* err, size_t errlen)
{
    echo_step* e;
    char* end;
    long n = strtol(function, &end, 10);
    if (strcmp(function, "fail") != 0 && (*end || end == function)) {
        snprintf(err, errlen, "echo: module '%s' has no function '%s'", module,
                 function);
        return FUTOIN_EINVAL;
    }
    e = calloc(1, sizeof(*e));
    if (!e) {
        return FUTOIN_ENOMEM;
    }
    snprintf(e->module, sizeof(e->module), "%s", module);
    snprintf(e->function, sizeof(e->function), "%s", function);
    e->n = n;
    ++live;
    out->execute = echo_execute;
    out->error = NULL;
    out->data = e;
    out->cls = &echo_class;
    return FUTOIN_OK;
}

static const futoin_host_api echo_host = {
        sizeof(futoin_host_api), FUTOIN_HOST_VERSION_1, ECHO_LANGUAGE,
        echo_start, echo_resolve, echo_stop,
};

FUTOIN_API int futoin_host_get(uint32_t version, const futoin_host_api** out)
{
    if (version < FUTOIN_HOST_VERSION_1) {
        return FUTOIN_EVERSION;
    }
    *out = &echo_host;
    return FUTOIN_OK;
}

FUTOIN_API int echo_host_counters(int* s, int* p, int* l)
{
    *s = starts;
    *p = stops;
    *l = live;
    return 0;
}

/* An FTN12 step function for the C host's bare-name form. */
FUTOIN_API void named_step(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    char info[64];
    snprintf(info, sizeof(info), "named step, data %s, value %g",
             d ? "set" : "NULL", a->arg0.type ? a->arg0.d : 0.0);
    as->api->handle_error(as, "NamedError", info);
}
