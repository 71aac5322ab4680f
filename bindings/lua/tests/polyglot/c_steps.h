/*
 * C steps shared by the C host programs of these tests (plugin_test.c,
 * installed_host.c): values given to and taken from Lua steps.
 */
#ifndef FUTOIN_LUA_TEST_C_STEPS_H
#define FUTOIN_LUA_TEST_C_STEPS_H

#include <futoin/async.h>

#include <stdio.h>
#include <string.h>

static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};
static const FutoInType ty_str = {FTN_TYPE_STRING, NULL};

/* success(20) */
static void give_20(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs args;
    (void)d;
    (void)a;
    memset(&args, 0, sizeof(args));
    args.args[0].type = &ty_i64;
    args.args[0].i64 = 20;
    as->api->success(as, &args);
}

/* A string value into out[len] ("(not a string)" for anything else). */
static void copy_str(char* out, size_t len, const FutoInBinaryValue* v)
{
    if (v->type && v->type->flags == FTN_TYPE_STRING) {
        snprintf(out, len, "%.*s", (int)v->length, v->cstr);
    } else {
        snprintf(out, len, "(not a string)");
    }
}

#endif
