/*
 * The README's first demo: one order through a pipeline whose steps are
 * written in four languages, in ONE flow on ONE loop thread.
 *
 *   Python reads the order;            (tests/demo/polyglot/order.py)
 *   a Python call for an exchange rate is cancelled by a C timeout;
 *   Lua applies the pricing rules;     (tests/demo/polyglot/pricing.lua)
 *   Java computes the totals exactly;  (tests/demo/polyglot/demo/Totals.java)
 *   Java's credit check fails, and a Lua handler sends the order to review;
 *   C writes the receipt, and the stack of that handled error, which
 *   crosses Java, Lua and C.
 *
 * Values pass through the flow's shared state (futoin_state_set/get) and
 * step values; every language adds the others' steps by name. Run it with
 * `bash .ci/demo`, which builds the languages' packages and sets up the
 * environment (tests/demo/polyglot/run.sh).
 */
#include <futoin/async.h>
#include <futoin/steps.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char order_text[] =
        "order 1042 for ACME in EUR: 3 x widget @ 2.50; 1 x gadget @ 10.00; "
        "12 x bolt @ 0.15; 2 x sprocket @ 14.90";

static const FutoInType ty_str = {FTN_TYPE_STRING, NULL};
static const FutoInType ty_d = {FTN_TYPE_DOUBLE, NULL};
static const char* receipt_path;
static int failures;

static void say(const char* line)
{
    printf("[c] %s\n", line);
    fflush(stdout);
}

static const char* state_str(FutoInAsyncSteps* as, const char* name)
{
    const FutoInBinaryValue* v = futoin_state_get(as, name);
    return v && v->type && v->type->flags == FTN_TYPE_STRING ? v->cstr : "?";
}

/* the order text, for Python to read */
static void start(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs out;
    say("order pipeline: python -> lua -> java -> lua -> c, one flow, one thread");
    memset(&out, 0, sizeof(out));
    out.arg0.type = &ty_str;
    out.arg0.cstr = order_text;
    out.arg0.length = (uint32_t)strlen(order_text);
    as->api->success(as, &out);
}

/* A Python call that may take too long: 50 ms, then the order stays in
 * USD. The timeout cancels the Python wait (its cancel handler runs) and
 * raises Timeout here. */
static void rate(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    as->api->setTimeout(as, 50);
    FUTOIN_HOST_ADD(as, "python", "order", "fetch_rate");
}

static void rate_failed(FutoInAsyncSteps* as, void* d, const char* code)
{
    FutoInBinaryValue one;
    char line[128];
    snprintf(line, sizeof(line), "no exchange rate (%s after 50 ms): the order stays in USD",
             code);
    say(line);
    memset(&one, 0, sizeof(one));
    one.type = &ty_d;
    one.d = 1.0;
    futoin_state_set(as, "rate", &one);
    as->api->success(as, NULL);
}

/* Lua decides what a failed credit check means; this C step is where the
 * decision sits in the flow (and so in the error's async stack). */
static void review(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FUTOIN_HOST_ADD(as, "lua", "pricing", "approve");
}

/* C writes the result. */
static void write_receipt(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const FutoInBinaryValue* qtys = futoin_state_get(as, "qtys");
    const FutoInBinaryValue* net = futoin_state_get(as, "net_prices");
    char names[256];
    FILE* out = stdout;
    FILE* file = receipt_path ? fopen(receipt_path, "w") : NULL;
    int i = 0;

    snprintf(names, sizeof(names), "%s", state_str(as, "names"));
    say("receipt:");
    for (int pass = 0; pass < (file ? 2 : 1); ++pass) {
        char* save = NULL;
        char copy[256];
        out = pass ? file : stdout;
        memcpy(copy, names, sizeof(copy));
        fprintf(out, "    order %s, customer %s, currency USD\n",
                "1042", state_str(as, "customer"));
        i = 0;
        for (char* n = strtok_r(copy, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
            long long q = qtys && i < (int)qtys->length
                                  ? ((const long long*)qtys->p)[i]
                                  : 0;
            double p = net && i < (int)net->length ? ((const double*)net->p)[i] : 0;
            fprintf(out, "    %-9s %3lld x %6.2f\n", n, q, p);
            ++i;
        }
        fprintf(out, "    subtotal %s, tax %s, total %s\n", state_str(as, "subtotal"),
                state_str(as, "tax"), state_str(as, "total"));
        fprintf(out, "    status: %s\n", state_str(as, "status"));
    }
    if (file) {
        fclose(file);
        printf("[c] receipt written to %s\n", receipt_path);
    }
    fflush(stdout);
}

/* The stack of the error Lua handled: where Java raised it, through Lua,
 * down to this C program's step. */
static void show_stack(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    const futoin_async_stack* st = futoin_async_ext(as)->async_stack(as);
    char text[4096];
    if (!st) {
        say("no error was recorded");
        ++failures;
        return;
    }
    futoin_async_stack_format(st, text, sizeof(text));
    printf("[c] the handled error's async stack (%s), innermost first:\n%s", st->code,
           text);
    fflush(stdout);
}

static void unhandled(FutoInAsyncSteps* as, void* d, const char* code)
{
    const char* info = as->api->stateVariable(as, NULL, "error_info", NULL, NULL);
    printf("[c] the flow failed: %s: %s\n", code, info ? info : "");
    ++failures;
}

int main(int argc, char** argv)
{
    futoin_tool* tool;
    FutoInAsyncSteps* root;
    receipt_path = argc > 1 ? argv[1] : NULL;
    if (futoin_tool_new(&tool, NULL) != FUTOIN_OK) {
        return 2;
    }
    root = futoin_root_new(tool);
    /* FUTOIN_ADD() is add() that records where the step was added: its
     * frame in an async stack reads "at c review (order_pipeline.c:NN)" */
    FUTOIN_ADD(root, NULL, start, NULL);
    FUTOIN_HOST_ADD(root, "python", "order", "parse");
    FUTOIN_ADD(root, NULL, rate, rate_failed);
    FUTOIN_HOST_ADD(root, "lua", "pricing", "apply");
    FUTOIN_HOST_ADD(root, "java", "demo.Totals", "compute");
    FUTOIN_ADD(root, NULL, review, NULL);
    FUTOIN_ADD(root, NULL, write_receipt, NULL);
    FUTOIN_ADD(root, NULL, show_stack, NULL);
    root->api->execute(root, NULL, unhandled);
    futoin_tool_run(tool);
    root->api->free(root);
    futoin_host_shutdown();
    futoin_tool_free(tool);
    return failures ? 1 : 0;
}
