/* Steps the language-host tests (test_host.c, test_policy.c) share: the
 * values 3.0 and 4.0 for a C function such as hypot, and the trace lines
 * of a value passed on or of an error. Include after common.h. */
#ifndef FUTOIN_TESTS_HOST_STEPS_H
#define FUTOIN_TESTS_HOST_STEPS_H

static const FutoInType ty_d = {FTN_TYPE_DOUBLE, NULL};

static void two_doubles(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs out;
    memset(&out, 0, sizeof(out));
    out.arg0.type = &ty_d;
    out.arg0.d = 3.0;
    out.arg1.type = &ty_d;
    out.arg1.d = 4.0;
    API(as)->success(as, &out);
}
static void print_value(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    if (!a->arg0.type) {
        tr("no value");
    } else if (a->arg0.type->flags == FTN_TYPE_DOUBLE) {
        tr("value %g", a->arg0.d);
    } else {
        tr("value %lld", (long long)a->arg0.i64);
    }
}
static void print_error(FutoInAsyncSteps* as, void* d, const char* code)
{
    tr("%s: %s", code,
       (const char*)API(as)->stateVariable(as, NULL, "error_info", NULL, NULL));
}

#endif
