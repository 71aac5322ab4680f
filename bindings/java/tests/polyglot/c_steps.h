/*
 * The C side of the Java plug-in's test programs (plugin_test.c,
 * installed_test.c): what a flow's error left (code, error_info) and a C
 * step that passes the INT64 42 on. One program includes it once.
 */
#ifndef FJ_TESTS_C_STEPS_H
#define FJ_TESTS_C_STEPS_H

#include <futoin/async.h>

#include <stdio.h>
#include <string.h>

/* The code and error_info of the last unhandled error (execute()'s
 * callback on_error), "" when none. */
static char code[64], info[4096];

static void on_error(FutoInAsyncSteps* as, void* d, const char* c)
{
    const char* i = as->api->stateVariable(as, NULL, "error_info", NULL, NULL);
    (void)d;
    snprintf(code, sizeof(code), "%s", c);
    snprintf(info, sizeof(info), "%s", i ? i : "");
}

static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};

/* success(42 as INT64) */
static void send(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs out;
    (void)d;
    (void)a;
    memset(&out, 0, sizeof(out));
    out.arg0.type = &ty_i64;
    out.arg0.i64 = 42;
    as->api->success(as, &out);
}

#endif
