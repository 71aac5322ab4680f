/*
 * JavaScript steps in a C host program, through the prototype plug-in
 * libfutoin_host_javascript.so (Node embedded on the C program's loop;
 * bindings/node/README.md, "JavaScript steps in other hosts"): values both
 * ways, an error of JavaScript caught in C with the one async stack, a
 * timeout around a JavaScript wait whose cancel handler sets the shared
 * state, and a C error caught by a JavaScript handler (catch).
 * Run by bindings/node/embed-test.sh. Last line:
 *   node-embed: N passed, M failed
 */
#include <futoin/async.h>
#include <futoin/steps.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
static char got_text[256], got_code[64], got_info[64], got_stack[2048];
static int got_timeout;

static void check(int ok, const char* what)
{
    if (ok) {
        ++passed;
    } else {
        ++failed;
        printf("FAIL %s\n", what);
    }
}

static const FutoInType ti = {FTN_TYPE_INT64, NULL};
static const FutoInType td = {FTN_TYPE_DOUBLE, NULL};
static const FutoInType ts = {FTN_TYPE_STRING, NULL};

static void give(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs o;
    (void)d;
    (void)a;
    memset(&o, 0, sizeof o);
    o.arg0.type = &ti;
    o.arg0.i64 = 42;
    o.arg1.type = &td;
    o.arg1.d = 2.5;
    o.arg2.type = &ts;
    o.arg2.cstr = "h\xc3\xa9llo";
    o.arg2.length = 6;
    as->api->success(as, &o);
}

static void keep_text(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)as;
    (void)d;
    if (a->arg0.type && (a->arg0.type->flags & FTN_BASE_TYPE_MASK) == FTN_TYPE_STRING) {
        snprintf(got_text, sizeof got_text, "%s", a->arg0.cstr);
    }
}

static void outer(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)d;
    (void)a;
    FUTOIN_HOST_ADD(as, "javascript", "polyglot_fragments", "fail");
}

static void on_err(FutoInAsyncSteps* as, void* d, const char* code)
{
    (void)d;
    snprintf(got_code, sizeof got_code, "%s", code);
    snprintf(got_info, sizeof got_info, "%s", futoin_wrap_error_info(as) ? futoin_wrap_error_info(as) : "");
    futoin_async_stack_format(futoin_async_ext(as)->async_stack(as), got_stack, sizeof got_stack);
    as->api->success(as, NULL);
}

static void wait_js(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    (void)d;
    (void)a;
    as->api->setTimeout(as, 20);
    futoin_host_add(as, "javascript", "polyglot_fragments", "wait");
}

static void on_timeout(FutoInAsyncSteps* as, void* d, const char* code)
{
    const FutoInBinaryValue* v = futoin_state_get(as, "cancelled_javascript");
    (void)d;
    got_timeout = strcmp(code, "Timeout") == 0 && v && v->type
                  && (v->type->flags & FTN_BASE_TYPE_MASK) == FTN_TYPE_BOOL && v->b;
    as->api->success(as, NULL);
}

static void catch_args(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs o;
    (void)d;
    (void)a;
    memset(&o, 0, sizeof o);
    o.arg0.type = &ts;
    o.arg0.cstr = "c";
    o.arg0.length = 1;
    o.arg1.type = &ts;
    o.arg1.cstr = getenv("FUTOIN_POLYGLOT_C_FRAGMENTS");
    o.arg1.length = (uint32_t)strlen(o.arg1.cstr);
    o.arg2.type = &ts;
    o.arg2.cstr = "fail";
    o.arg2.length = 4;
    as->api->success(as, &o);
}

int main(void)
{
    futoin_tool* tool = NULL;
    futoin_tool_options o = FUTOIN_TOOL_OPTIONS_INIT;
    FutoInAsyncSteps* root;
    char caught[256] = "";
    if (futoin_tool_new(&tool, &o) != FUTOIN_OK) {
        return 2;
    }
    root = futoin_root_new(tool);
    FUTOIN_ADD(root, NULL, give, NULL);
    FUTOIN_HOST_ADD(root, "javascript", "polyglot_fragments", "describe");
    FUTOIN_ADD(root, NULL, keep_text, NULL);
    FUTOIN_ADD(root, NULL, outer, on_err);
    FUTOIN_ADD(root, NULL, wait_js, on_timeout);
    root->api->execute(root, NULL, NULL);
    futoin_tool_run(tool);
    check(strcmp(got_text, "int:42,float:2.5,str:h\xc3\xa9llo") == 0, "values: C -> JavaScript describe -> C");
    check(strcmp(got_code, "FragmentError") == 0 && strcmp(got_info, "javascript") == 0,
          "a JavaScript error caught in C, with its error_info");
    check(strstr(got_stack, "  at javascript fail (") == got_stack
              && strstr(got_stack, "polyglot_fragments.js:") && strstr(got_stack, "\n  at c outer ("),
          "the async stack: JavaScript's frame, then C's");
    check(got_timeout, "a C timeout around a JavaScript wait: its cancel handler set the shared state");
    root->api->free(root);

    /* a C error caught by a JavaScript handler */
    if (getenv("FUTOIN_POLYGLOT_C_FRAGMENTS")) {
        root = futoin_root_new(tool);
        FUTOIN_ADD(root, NULL, catch_args, NULL);
        FUTOIN_HOST_ADD(root, "javascript", "polyglot_fragments", "catch");
        FUTOIN_ADD(root, NULL, keep_text, NULL);
        got_text[0] = 0;
        root->api->execute(root, NULL, NULL);
        futoin_tool_run(tool);
        snprintf(caught, sizeof caught, "%s", got_text);
        check(strcmp(caught, "caught FragmentError in javascript") == 0,
              "a C error caught by a JavaScript handler (catch)");
        root->api->free(root);
    }
    if (failed) {
        printf("async stack was:\n%s", got_stack);
    }
    printf("node-embed: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
