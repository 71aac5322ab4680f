/*
 * The polyglot matrix with C as the host program: steps of Python, Lua and
 * Java (each language's "polyglot_fragments", see tests/polyglot/README.md)
 * in flows whose own steps are C. Each cell checks values both ways, an
 * error crossing into a C handler and a C error caught by a handler of the
 * other language, cancel, timeout, shared state and the async stack; then
 * 10,000 mixed flows per language, after which the plug-ins hold nothing.
 *
 * "Hold nothing" is checked with each plug-in's own counters (Lua registry
 * references, JNI global references, live Python steps, ...), read before
 * and after the flows, and the process must map exactly one
 * libfutoin_async.so.0: the one this program was linked with, to which
 * every binding's glue bound by soname (tests/polyglot/run.sh also runs
 * this program built with ASan+UBSan, and under valgrind).
 *
 * A plain program, not Criterion: a JVM can be created once per process,
 * and Criterion forks every test. Environment (set by tests/polyglot/run.sh):
 *   FUTOIN_POLYGLOT_LANGS      languages to run (default "python lua java")
 *   FUTOIN_POLYGLOT_C_FRAGMENTS  path of libpolyglot_fragments.so
 *   FUTOIN_POLYGLOT_MANY       flows of cell_many per language (default 10000)
 *   PYTHONPATH, LUA_PATH, LUA_CPATH, CLASSPATH (where the library finds
 *   the plug-ins; or FUTOIN_HOST_PATH), FUTOIN_JAVA_CLASSPATH
 * Prints "polyglot-c: runtime <path>", then last "polyglot-c: N passed, M
 * failed".
 */
#include <futoin/async.h>
#include <futoin/steps.h>
#include <futoin/sys/ext.h>
#include <futoin/sys/host.h>
#include <futoin/trace.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a failed check names the cell's language: "FAIL [python] c_host.c:..." */
#define FUTOIN_CHECK_CONTEXT lang
#include "../include/futoin_check.h" /* CHECK, futoin_check_summary */
#include "../trace_export/futoin_trace_jsonl.h"

static const char* lang; /* the fragment language of the cell */
static const char* cfrag;
static futoin_tool* tool;

#define MODULE "polyglot_fragments"
static const char* module_of(const char* l)
{
    if (strcmp(l, "java") == 0) {
        return "org.futoin.polyglot.Fragments";
    }
    if (strcmp(l, "c") == 0) {
        return cfrag;
    }
    return MODULE;
}

/* ---- values ------------------------------------------------------------- */

static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};
static const FutoInType ty_d = {FTN_TYPE_DOUBLE, NULL};
static const FutoInType ty_b = {FTN_TYPE_BOOL, NULL};
static const FutoInType ty_s = {FTN_TYPE_STRING, NULL};
static const FutoInType ty_bytes = {FTN_TYPE_ARRAY | FTN_TYPE_UINT8, NULL};
static const FutoInType ty_ints = {FTN_TYPE_ARRAY | FTN_TYPE_INT64, NULL};
static const FutoInType ty_floats = {FTN_TYPE_ARRAY | FTN_TYPE_DOUBLE, NULL};

static const uint8_t bytes[] = {0x00, 0x01, 0xff};
static const int64_t ints[] = {1, 2, 3};
static const double floats[] = {0.5, 1.5};
static const char hello[] = "h\xc3\xa9llo"; /* héllo */

static void batch1(FutoInArgs* a)
{
    memset(a, 0, sizeof(*a));
    a->arg0.type = &ty_i64;
    a->arg0.i64 = 42;
    a->arg1.type = &ty_d;
    a->arg1.d = 2.5;
    a->arg2.type = &ty_b;
    a->arg2.b = true;
    a->arg3.type = &ty_s;
    a->arg3.cstr = hello;
    a->arg3.length = (uint32_t)strlen(hello);
}

static void batch2(FutoInArgs* a)
{
    memset(a, 0, sizeof(*a));
    a->arg0.type = &ty_bytes;
    a->arg0.p = bytes;
    a->arg0.length = 3;
    a->arg1.type = &ty_ints;
    a->arg1.p = ints;
    a->arg1.length = 3;
    a->arg2.type = &ty_floats;
    a->arg2.p = floats;
    a->arg2.length = 2;
}

static int64_t int_of(const FutoInBinaryValue* v)
{
    switch (v->type->flags) {
    case FTN_TYPE_INT8: return v->i8;
    case FTN_TYPE_INT16: return v->i16;
    case FTN_TYPE_INT32: return v->i32;
    case FTN_TYPE_UINT8: return v->u8;
    case FTN_TYPE_UINT16: return v->u16;
    case FTN_TYPE_UINT32: return v->u32;
    default: return v->i64;
    }
}

static bool is_int(const FutoInBinaryValue* v)
{
    unsigned f = v->type ? v->type->flags : 0;
    return f >= FTN_TYPE_INT8 && f <= FTN_TYPE_UINT64;
}

static const char* kind(const FutoInBinaryValue* v)
{
    static char buf[16];
    if (!v->type) {
        return "none";
    }
    snprintf(buf, sizeof(buf), "0x%02x", v->type->flags);
    return buf;
}

/* ---- flow plumbing ------------------------------------------------------ */

static FutoInArgs given;          /* what the first step passes on */
static FutoInArgs got;            /* what the last step received (copied) */
static char got_text[1024];
static int got_n;
static char err_code[64], err_info[256];
static int unhandled_n;

static void send_values(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs out = given;
    as->api->success(as, &out);
}

static void keep_values(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    got_n = 0;
    got_text[0] = 0;
    memset(&got, 0, sizeof(got));
    for (int i = 0; i < 4; ++i) {
        const FutoInBinaryValue* v = &a->args[i];
        if (!v->type) {
            continue;
        }
        ++got_n;
        got.args[i].type = v->type;
        got.args[i].u64 = v->u64;
        got.args[i].length = v->length;
        if ((v->type->flags & FTN_TYPE_ARRAY) || v->type->flags == FTN_TYPE_STRING) {
            /* only the text or the array's first bytes are kept: enough to
             * compare, and nothing to free */
            size_t n = v->type->flags == FTN_TYPE_STRING
                               ? (v->length ? v->length : strlen(v->cstr))
                               : v->length * 8;
            if (n > 200) {
                n = 200;
            }
            if (i == 0 && v->type->flags == FTN_TYPE_STRING) {
                memcpy(got_text, v->cstr, n);
                got_text[n] = 0;
            }
            got.args[i].p = NULL;
        }
    }
    /* arrays compared here, while the values are valid */
    if (a->arg0.type && a->arg0.type->flags == (FTN_TYPE_ARRAY | FTN_TYPE_UINT8)) {
        CHECK(a->arg0.length == 3 && memcmp(a->arg0.p, bytes, 3) == 0,
              "bytes came back as %u bytes", (unsigned)a->arg0.length);
    }
    if (a->arg1.type && (a->arg1.type->flags & FTN_TYPE_ARRAY)) {
        bool same = a->arg1.length == 3;
        for (uint32_t i = 0; same && i < 3; ++i) {
            unsigned base = a->arg1.type->flags & FTN_BASE_TYPE_MASK;
            int64_t x = base == FTN_TYPE_INT32 ? ((const int32_t*)a->arg1.p)[i]
                                                : ((const int64_t*)a->arg1.p)[i];
            same = x == ints[i];
        }
        CHECK(same, "int array came back wrong (flags 0x%02x, %u elements)",
              a->arg1.type->flags, (unsigned)a->arg1.length);
    }
    if (a->arg2.type && (a->arg2.type->flags & FTN_TYPE_ARRAY)) {
        CHECK(a->arg2.type->flags == (FTN_TYPE_ARRAY | FTN_TYPE_DOUBLE)
                      && a->arg2.length == 2
                      && ((const double*)a->arg2.p)[0] == 0.5
                      && ((const double*)a->arg2.p)[1] == 1.5,
              "float array came back wrong (flags 0x%02x)", a->arg2.type->flags);
    }
}

static void note_error(FutoInAsyncSteps* as, void* d, const char* code)
{
    const char* info = as->api->stateVariable(as, NULL, "error_info", NULL, NULL);
    snprintf(err_code, sizeof(err_code), "%s", code);
    snprintf(err_info, sizeof(err_info), "%s", info ? info : "");
    if (d) { /* handled: go on */
        as->api->success(as, NULL);
    }
}

static void on_unhandled(FutoInAsyncSteps* as, void* d, const char* code)
{
    ++unhandled_n;
    note_error(as, NULL, code);
}

static void reset(void)
{
    memset(&got, 0, sizeof(got));
    got_n = 0;
    got_text[0] = 0;
    err_code[0] = err_info[0] = 0;
    unhandled_n = 0;
}

static void run_root(FutoInAsyncSteps* as)
{
    as->api->execute(as, NULL, on_unhandled);
    futoin_tool_run(tool);
}

/* the line FUTOIN_HOST_ADD() records for every fragment step (a C
 * fragment's frame shows it) */
static uint32_t fragment_line;

static int add_fragment(FutoInAsyncSteps* as, const char* fn)
{
    fragment_line = __LINE__ + 1;
    return FUTOIN_HOST_ADD(as, lang, module_of(lang), fn);
}

/* ---- cells -------------------------------------------------------------- */

static void cell_values(void)
{
    FutoInAsyncSteps* as = futoin_root_new(tool);
    reset();
    batch1(&given);
    as->api->add(as, NULL, send_values, NULL);
    CHECK(add_fragment(as, "echo") == FUTOIN_OK, "echo not resolved");
    as->api->add(as, NULL, keep_values, NULL);
    run_root(as);
    CHECK(unhandled_n == 0, "echo failed: %s %s", err_code, err_info);
    CHECK(got_n == 4, "echo passed on %d values", got_n);
    CHECK(is_int(&got.arg0) && int_of(&got.arg0) == 42, "int came back as %s",
          kind(&got.arg0));
    CHECK(got.arg1.type && got.arg1.type->flags == FTN_TYPE_DOUBLE && got.arg1.d == 2.5,
          "float came back as %s", kind(&got.arg1));
    CHECK(got.arg2.type && got.arg2.type->flags == FTN_TYPE_BOOL && got.arg2.b,
          "bool came back as %s", kind(&got.arg2));
    CHECK(got.arg3.type && got.arg3.type->flags == FTN_TYPE_STRING, "str came back as %s",
          kind(&got.arg3));
    as->api->free(as);

    as = futoin_root_new(tool);
    reset();
    batch2(&given);
    as->api->add(as, NULL, send_values, NULL);
    add_fragment(as, "echo");
    as->api->add(as, NULL, keep_values, NULL);
    run_root(as);
    CHECK(unhandled_n == 0 && got_n == 3, "echo of arrays: %d values, %s %s", got_n,
          err_code, err_info);
    as->api->free(as);

    /* what the other language saw */
    as = futoin_root_new(tool);
    reset();
    batch1(&given);
    as->api->add(as, NULL, send_values, NULL);
    add_fragment(as, "describe");
    as->api->add(as, NULL, keep_values, NULL);
    run_root(as);
    CHECK(strcmp(got_text, "int:42,float:2.5,bool:true,str:h\xc3\xa9llo") == 0,
          "describe: '%s'", got_text);
    as->api->free(as);

    as = futoin_root_new(tool);
    reset();
    batch2(&given);
    as->api->add(as, NULL, send_values, NULL);
    add_fragment(as, "describe");
    as->api->add(as, NULL, keep_values, NULL);
    run_root(as);
    CHECK(strcmp(got_text, "bytes:0001ff,ints:1|2|3,floats:0.5|1.5") == 0,
          "describe: '%s'", got_text);
    as->api->free(as);
}

/* An error raised in the other language, handled in C. */
static void wrap_fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    add_fragment(as, "fail");
}

/* A C error caught by a handler written in the other language. */
static void send_c_fail(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs out;
    memset(&out, 0, sizeof(out));
    out.arg0.type = &ty_s;
    out.arg0.cstr = "c";
    out.arg0.length = 1;
    out.arg1.type = &ty_s;
    out.arg1.cstr = cfrag;
    out.arg1.length = (uint32_t)strlen(cfrag);
    out.arg2.type = &ty_s;
    out.arg2.cstr = "fail";
    out.arg2.length = 4;
    as->api->success(as, &out);
}

static const futoin_async_stack* stack_seen;
static char stack_text[4096];
static void keep_stack(FutoInAsyncSteps* as, void* d, const char* code)
{
    on_unhandled(as, d, code);
    stack_seen = futoin_async_ext(as)->async_stack(as);
    stack_text[0] = 0;
    futoin_async_stack_format(stack_seen, stack_text, sizeof(stack_text));
}

static void cell_errors(void)
{
    FutoInAsyncSteps* as = futoin_root_new(tool);
    reset();
    as->api->add(as, (void*)1, wrap_fail, note_error);
    run_root(as);
    CHECK(unhandled_n == 0, "the C handler did not take it");
    CHECK(strcmp(err_code, "FragmentError") == 0, "code '%s'", err_code);
    CHECK(strcmp(err_info, lang) == 0, "error_info '%s'", err_info);
    as->api->free(as);

    as = futoin_root_new(tool);
    reset();
    as->api->add(as, NULL, send_c_fail, NULL);
    add_fragment(as, "catch");
    as->api->add(as, NULL, keep_values, NULL);
    run_root(as);
    {
        char want[64];
        snprintf(want, sizeof(want), "caught FragmentError in %s", lang);
        CHECK(strcmp(got_text, want) == 0, "catch gave '%s' (%s %s)", got_text,
              err_code, err_info);
    }
    as->api->free(as);

    /* the async stack: the other language's frame, then C's, each with
     * its function and file:line (C's: where FUTOIN_ADD() added it) */
    as = futoin_root_new(tool);
    reset();
    stack_seen = NULL;
    {
        uint32_t line = __LINE__ + 1;
        FUTOIN_ADD(as, NULL, wrap_fail, NULL);
        as->api->execute(as, NULL, keep_stack);
        futoin_tool_run(tool);
        CHECK(stack_seen && stack_seen->count >= 2, "no async stack");
        if (stack_seen && stack_seen->count >= 2) {
            const futoin_frame_origin* f = stack_seen->frames;
            CHECK(strcmp(f[0].language, lang) == 0, "frame 0 is %s:\n%s", f[0].language,
                  stack_text);
            CHECK(strcmp(f[1].language, "c") == 0, "frame 1 is %s:\n%s", f[1].language,
                  stack_text);
            CHECK(f[0].function && strstr(f[0].function, "fail"), "frame 0 names '%s'",
                  f[0].function);
            CHECK(f[0].file && f[0].line > 0, "frame 0 has no file:line:\n%s",
                  stack_text);
            CHECK(strcmp(lang, "c") != 0
                          || (strcmp(f[0].file, __FILE__) == 0 && f[0].line == fragment_line),
                  "a C fragment's frame is where it was added:\n%s", stack_text);
            CHECK(f[1].function && strcmp(f[1].function, "wrap_fail") == 0
                          && f[1].file && strcmp(f[1].file, __FILE__) == 0
                          && f[1].line == line,
                  "frame 1 is not wrap_fail at %s:%u:\n%s", __FILE__, (unsigned)line,
                  stack_text);
        }
    }
    as->api->free(as);
}

static bool cancelled_flag(FutoInAsyncSteps* as)
{
    char name[64];
    const FutoInBinaryValue* v;
    snprintf(name, sizeof(name), "cancelled_%s", lang);
    v = futoin_state_get(as, name);
    return v && v->type && v->type->flags == FTN_TYPE_BOOL && v->b;
}

static void cancel_cb(void* d)
{
    FutoInAsyncSteps* as = d;
    as->api->cancel(as);
}

static void timed_wait(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    as->api->setTimeout(as, 30);
    add_fragment(as, "wait");
}

static void cell_cancel_timeout(void)
{
    FutoInAsyncSteps* as = futoin_root_new(tool);
    reset();
    add_fragment(as, "wait");
    as->api->execute(as, NULL, on_unhandled);
    futoin_tool_deferred(tool, 20, cancel_cb, as);
    futoin_tool_run(tool);
    CHECK(cancelled_flag(as), "cancel: the %s cancel handler did not run", lang);
    CHECK(unhandled_n == 0, "cancel reported %s", err_code);
    as->api->free(as);

    as = futoin_root_new(tool);
    reset();
    as->api->add(as, (void*)1, timed_wait, note_error);
    run_root(as);
    CHECK(strcmp(err_code, "Timeout") == 0, "timeout: C handler saw '%s'", err_code);
    CHECK(cancelled_flag(as), "timeout: the %s cancel handler did not run", lang);
    as->api->free(as);
}

static void set_key(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInBinaryValue v;
    memset(&v, 0, sizeof(v));
    v.type = &ty_i64;
    v.i64 = 42;
    futoin_state_set(as, "key", &v);
}

static char from_text[64];
static void read_from(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    char name[64];
    const FutoInBinaryValue* v;
    snprintf(name, sizeof(name), "from_%s", lang);
    v = futoin_state_get(as, name);
    snprintf(from_text, sizeof(from_text), "%s",
             v && v->type && v->type->flags == FTN_TYPE_STRING ? v->cstr : "?");
}

static void cell_state(void)
{
    FutoInAsyncSteps* as = futoin_root_new(tool);
    reset();
    from_text[0] = 0;
    as->api->add(as, NULL, set_key, NULL);
    add_fragment(as, "read_state");
    as->api->add(as, NULL, keep_values, NULL);
    add_fragment(as, "write_state");
    as->api->add(as, NULL, read_from, NULL);
    run_root(as);
    CHECK(unhandled_n == 0, "state: %s %s", err_code, err_info);
    CHECK(is_int(&got.arg0) && int_of(&got.arg0) == 42, "read_state gave %s",
          kind(&got.arg0));
    CHECK(strcmp(from_text, lang) == 0, "from_%s is '%s'", lang, from_text);
    as->api->free(as);
}

/* ---- one trace across the languages ------------------------------------ */

/* C -> Python -> Lua -> Java: a C step sets the trace context and adds
 * Python's trace_nest under itself, which adds Lua's under itself, which
 * adds Java's (tests/polyglot/fragments). Each records what it sees in the
 * shared state "trace_<lang>"; one trace, each span under the one before,
 * and a C step after the chain is under the flow's parent span again. */
#define TRACE_TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
#define TRACE_ID "4bf92f3577b34da6a3ce929d0e0e4736"
#define TRACE_PARENT "00f067aa0ba902b7"

static char trace_c[2][128]; /* the C step that sets it, the C step after */

static void note_trace(FutoInAsyncSteps* as, char* out)
{
    futoin_trace_info i = FUTOIN_TRACE_INFO_INIT;
    if (futoin_trace_get(as, &i) == 1) {
        snprintf(out, 128, "%s %s %s", i.trace_id, i.span_id, i.parent_span_id);
    } else {
        snprintf(out, 128, "none");
    }
}

static void trace_start(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    CHECK(futoin_trace_set(as, TRACE_TP) == FUTOIN_OK, "futoin_trace_set refused");
    note_trace(as, trace_c[0]);
    FUTOIN_HOST_ADD(as, "python", MODULE, "trace_nest");
}

static void trace_after(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    note_trace(as, trace_c[1]);
}

typedef struct span_seen
{
    char trace_id[40], span[24], parent[24];
} span_seen;

static span_seen span_of_text(const char* who, const char* text)
{
    span_seen s;
    memset(&s, 0, sizeof(s));
    CHECK(sscanf(text, "%39s %23s %23s", s.trace_id, s.span, s.parent) == 3,
          "%s saw no trace context: '%s'", who, text);
    return s;
}

static void cell_trace_chain(void)
{
    static const char* const langs[] = {"python", "lua", "java"};
    span_seen seen[5];
    FutoInAsyncSteps* as = futoin_root_new(tool);
    reset();
    trace_c[0][0] = trace_c[1][0] = 0;
    char* jsonl = NULL;
    size_t jsonl_len = 0;
    FILE* out = open_memstream(&jsonl, &jsonl_len);
    futoin_trace_jsonl* exporter = out ? futoin_trace_jsonl_start(tool, out) : NULL;
    CHECK(exporter != NULL, "the example exporter did not start");
    FUTOIN_ADD(as, NULL, trace_start, NULL);
    FUTOIN_ADD(as, NULL, trace_after, NULL);
    run_root(as);
    CHECK(unhandled_n == 0, "trace chain: %s %s", err_code, err_info);
    CHECK(futoin_trace_jsonl_stop(exporter) == 5, "spans exported:\n%s", jsonl);
    if (out) {
        fclose(out);
    }
    seen[0] = span_of_text("c", trace_c[0]);
    for (int i = 0; i < 3; ++i) {
        char name[32];
        const FutoInBinaryValue* v;
        snprintf(name, sizeof(name), "trace_%s", langs[i]);
        v = futoin_state_get(as, name);
        seen[i + 1] = span_of_text(langs[i], v && v->type && v->type->flags == FTN_TYPE_STRING
                                                     ? v->cstr
                                                     : "(not set)");
    }
    seen[4] = span_of_text("c after", trace_c[1]);
    CHECK(strcmp(seen[0].parent, TRACE_PARENT) == 0, "c: parent %s", seen[0].parent);
    CHECK(strcmp(seen[4].parent, TRACE_PARENT) == 0, "c after: parent %s", seen[4].parent);
    for (int i = 0; i < 5; ++i) {
        CHECK(strcmp(seen[i].trace_id, TRACE_ID) == 0, "span %d: trace %s", i,
              seen[i].trace_id);
        for (int j = i + 1; j < 5; ++j) {
            CHECK(strcmp(seen[i].span, seen[j].span) != 0, "spans %d and %d: %s", i,
                  j, seen[i].span);
        }
    }
    for (int i = 1; i < 4; ++i) {
        CHECK(strcmp(seen[i].parent, seen[i - 1].span) == 0,
              "%s runs under %s, not under the %s step's span %s", langs[i - 1],
              seen[i].parent, i == 1 ? "c" : langs[i - 2], seen[i - 1].span);
    }
    /* The exporter (tests/trace_export, over the hooks) wrote the same
     * five spans, innermost first as they ended, each naming its origin. */
    {
        static const char* const origin[5][2] = {
                {"c", "trace_start"}, {"python", "trace_nest"}, {"lua", "trace_nest"},
                {"java", "trace_nest"}, {"c", "trace_after"}};
        static const int order[5] = {3, 2, 1, 0, 4}; /* line i is span order[i] */
        const char* line = jsonl ? jsonl : "";
        for (int n = 0; n < 5; ++n) {
            const span_seen* sp = &seen[order[n]];
            char want[256];
            const char* end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line);
            char text[1024];
            snprintf(text, sizeof(text), "%.*s", (int)(len < 1000 ? len : 1000), line);
            snprintf(want, sizeof(want),
                     "{\"trace_id\":\"%s\",\"span_id\":\"%s\",\"parent_span_id\":\"%s\","
                     "\"name\":\"",
                     sp->trace_id, sp->span, sp->parent);
            CHECK(strncmp(text, want, strlen(want)) == 0, "span line %d: %s\nwanted %s...",
                  n, text, want);
            snprintf(want, sizeof(want), "\"origin\":{\"language\":\"%s\",",
                     origin[order[n]][0]);
            CHECK(strstr(text, want) != NULL, "span line %d is not of %s: %s", n,
                  origin[order[n]][0], text);
            CHECK(strstr(text, origin[order[n]][1]) != NULL, "span line %d does not name %s: %s",
                  n, origin[order[n]][1], text);
            CHECK(strstr(text, "\"status\":\"ok\"}") != NULL, "span line %d: %s", n, text);
            line = end ? end + 1 : line + len;
        }
    }
    free(jsonl);
    as->api->free(as);
}

/* ---- the plug-ins' own counters ---------------------------------------- */

/* What bindings/java/host/fj_host.h calls fj_host_counters (the Java
 * plug-in's futoin_host_java_counters() fills it). */
typedef struct java_counters
{
    int64_t global_refs; /* JNI global references the binding holds */
    int64_t named_steps; /* steps made by resolve() not yet released */
    int64_t starts, stops;
    int64_t attached, detached; /* native threads attached to the JVM */
} java_counters;
_Static_assert(sizeof(java_counters) == 6 * sizeof(int64_t), "fj_host_counters");

#define MAX_COUNTERS 6
typedef struct counters
{
    int n; /* 0: the plug-in or its counters were not found */
    const char* names[MAX_COUNTERS];
    long long v[MAX_COUNTERS];
} counters;

/* The plug-in that serves `language`, already loaded: the file holding the
 * host table the library found (dladdr), opened again with RTLD_NOLOAD. */
static void* loaded_plugin(const char* language)
{
    const futoin_host_api* api = NULL;
    char err[512];
    Dl_info info;
    if (futoin_host_find(language, &api, err, sizeof(err)) != FUTOIN_OK
        || !dladdr((const void*)api, &info) || !info.dli_fname) {
        return NULL;
    }
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
}

/* Python's own count of its allocated blocks (sys.getallocatedblocks()),
 * after a collection, or -1 when it means nothing: without pymalloc (the
 * sanitizer runs set PYTHONMALLOC=malloc) the count stays put, or the
 * functions are not there. The sanitizers report a leaked object the GC
 * does not track (str, bytes, int), but a leaked container stays linked
 * in the GC's lists, reachable: this count in the normal run catches it.
 * libpython is in the process with RTLD_GLOBAL (the plug-in loads it so). */
static long long python_blocks(void)
{
    union
    {
        void* p;
        int (*ensure)(void);
        void (*release)(int);
        long (*collect)(void);
        long (*blocks)(void);
    } ensure, release, collect, blocks;
    const char* pm = getenv("PYTHONMALLOC");
    long long n;
    int g;
    if (pm && strncmp(pm, "pymalloc", 8) != 0) {
        return -1;
    }
    ensure.p = dlsym(RTLD_DEFAULT, "PyGILState_Ensure");
    release.p = dlsym(RTLD_DEFAULT, "PyGILState_Release");
    collect.p = dlsym(RTLD_DEFAULT, "PyGC_Collect");
    blocks.p = dlsym(RTLD_DEFAULT, "_Py_GetAllocatedBlocks");
    if (!ensure.p || !release.p || !collect.p || !blocks.p) {
        return -1;
    }
    g = ensure.ensure();
    collect.collect();
    n = blocks.blocks();
    release.release(g);
    return n;
}

/* The counters of the plug-in of `l`: every one must be back at its
 * baseline after the flows. */
static counters counters_of(const char* l)
{
    counters c;
    void* dl = loaded_plugin(l);
    union
    {
        void* p;
        int (*lua)(long*, long*, int*);
        int (*java)(java_counters*);
        int (*python)(int*, int*, int*);
    } u;
    memset(&c, 0, sizeof(c));
    if (!dl) {
        return c;
    }
    if (strcmp(l, "lua") == 0 && (u.p = dlsym(dl, "futoin_host_lua_counters"))) {
        long refs = 0, recs = 0;
        int states = 0;
        u.lua(&refs, &recs, &states);
        c = (counters){3, {"registry refs", "callback records", "lua states"},
                       {refs, recs, states}};
    } else if (strcmp(l, "java") == 0 && (u.p = dlsym(dl, "futoin_host_java_counters"))) {
        java_counters j;
        u.java(&j);
        c = (counters){6,
                       {"JNI global refs", "named steps", "starts", "stops",
                        "threads attached", "threads detached"},
                       {j.global_refs, j.named_steps, j.starts, j.stops, j.attached,
                        j.detached}};
    } else if (strcmp(l, "python") == 0 && (u.p = dlsym(dl, "python_host_counters"))) {
        int starts = 0, stops = 0, live = 0;
        u.python(&starts, &stops, &live);
        c = (counters){4, {"starts", "stops", "live steps", "allocated blocks"},
                       {starts, stops, live, python_blocks()}};
    }
    dlclose(dl);
    return c;
}

static int many_flows(void)
{
    const char* e = getenv("FUTOIN_POLYGLOT_MANY");
    int n = e && *e ? atoi(e) : 10000;
    return n > 0 ? n : 10000;
}

/* 10,000 flows of every kind: what the plug-ins allocate comes back. */
static void cell_many(void)
{
    const int n = many_flows();
    counters before = counters_of(lang), after;
    for (int i = 0; i < n; ++i) {
        FutoInAsyncSteps* as = futoin_root_new(tool);
        reset();
        switch (i % 3) {
        case 0:
            batch1(&given);
            as->api->add(as, NULL, send_values, NULL);
            add_fragment(as, "echo");
            as->api->execute(as, NULL, on_unhandled);
            break;
        case 1:
            as->api->add(as, (void*)1, wrap_fail, note_error);
            as->api->execute(as, NULL, on_unhandled);
            break;
        default:
            add_fragment(as, "wait");
            as->api->execute(as, NULL, on_unhandled);
            futoin_tool_immediate(tool, cancel_cb, as);
            break;
        }
        futoin_tool_run(tool);
        if (unhandled_n) {
            CHECK(unhandled_n == 0, "flow %d: %s %s", i, err_code, err_info);
            as->api->free(as);
            return;
        }
        as->api->free(as);
    }
    CHECK(1, "%d flows", n);
    if (strcmp(lang, "c") == 0) {
        return; /* built in: no plug-in, nothing it could hold */
    }
    after = counters_of(lang);
    CHECK(before.n > 0 && after.n == before.n, "no counters of the %s plug-in", lang);
    for (int k = 0; k < after.n && k < before.n; ++k) {
        if (strcmp(after.names[k], "allocated blocks") == 0) {
            /* caches (interned strings, specialised code) settle in the
             * first flows; one leaked object per flow would be thousands */
            if (before.v[k] >= 0 && after.v[k] >= 0) {
                CHECK(after.v[k] - before.v[k] < 500,
                      "python's allocated blocks grew by %lld in %d flows",
                      after.v[k] - before.v[k], n);
            }
            continue;
        }
        CHECK(after.v[k] == before.v[k], "%s %s: %lld before %d flows, %lld after",
              lang, after.names[k], before.v[k], n, after.v[k]);
    }
}

/* ---- one runtime in the process ----------------------------------------- */

/* Every libfutoin_async.so.0 mapped into this process (by path) must be
 * the one this program was linked with: the plug-ins and the bindings'
 * glue (Python's _core, Lua's core.so, Java's libfutoin_java.so) need it
 * by soname and must have bound to it, not to the copy their wheel, rock
 * or jar carries. And each glue of a language that ran is mapped. */
static void check_one_runtime(const char* langs)
{
    static const struct
    {
        const char* lang;
        const char* glue;
    } glues[] = {{"python", "/futoin_async/_core."},
                 {"lua", "/futoin_async/core.so"},
                 {"java", "/libfutoin_java.so"}};
    char mine[PATH_MAX] = "", line[PATH_MAX + 256];
    bool seen_glue[3] = {false, false, false};
    int others = 0;
    Dl_info info;
    FILE* maps = fopen("/proc/self/maps", "r");
    union
    {
        int (*fn)(futoin_tool**, const futoin_tool_options*);
        void* p;
    } in_runtime = {futoin_tool_new};
    if (dladdr(in_runtime.p, &info) && info.dli_fname) {
        if (!realpath(info.dli_fname, mine)) {
            snprintf(mine, sizeof(mine), "%s", info.dli_fname);
        }
    }
    CHECK(mine[0] && maps, "cannot read /proc/self/maps or find the runtime");
    if (!maps) {
        return;
    }
    printf("polyglot-c: runtime %s\n", mine);
    while (fgets(line, sizeof(line), maps)) {
        char* path = strchr(line, '/');
        char* base;
        if (!path) {
            continue;
        }
        path[strcspn(path, "\n")] = 0;
        base = strrchr(path, '/') + 1;
        if (strncmp(base, "libfutoin_async.so", 18) == 0 && strcmp(path, mine) != 0) {
            if (others++ == 0) {
                fprintf(stderr, "a second runtime is mapped: %s\n", path);
            }
        }
        for (size_t g = 0; g < sizeof(glues) / sizeof(glues[0]); ++g) {
            seen_glue[g] = seen_glue[g] || strstr(path, glues[g].glue) != NULL;
        }
    }
    fclose(maps);
    CHECK(others == 0, "%d mappings of another libfutoin_async.so", others);
    for (size_t g = 0; g < sizeof(glues) / sizeof(glues[0]); ++g) {
        if (strstr(langs, glues[g].lang)) {
            CHECK(seen_glue[g], "the %s glue (*%s*) is not mapped", glues[g].lang,
                  glues[g].glue);
        }
    }
}

int main(void)
{
    const char* langs = getenv("FUTOIN_POLYGLOT_LANGS");
    char buf[128];
    cfrag = getenv("FUTOIN_POLYGLOT_C_FRAGMENTS");
    if (!cfrag) {
        fprintf(stderr, "FUTOIN_POLYGLOT_C_FRAGMENTS is not set\n");
        return 2;
    }
    if (futoin_tool_new(&tool, NULL) != FUTOIN_OK) {
        return 2;
    }
    snprintf(buf, sizeof(buf), "%s", langs ? langs : "python lua java");
    for (char* save = NULL, *l = strtok_r(buf, " ,", &save); l;
         l = strtok_r(NULL, " ,", &save)) {
        int before = failed;
        lang = l;
        cell_values();
        cell_errors();
        cell_cancel_timeout();
        cell_state();
        cell_many();
        printf("c host x %s: %s\n", lang, failed == before ? "ok" : "FAILED");
    }
    lang = "c";
    if (!langs || (strstr(langs, "python") && strstr(langs, "lua")
                   && strstr(langs, "java"))) {
        int before = failed;
        cell_trace_chain();
        printf("c host trace chain c > python > lua > java: %s\n",
               failed == before ? "ok" : "FAILED");
    }
    check_one_runtime(langs ? langs : "python lua java");
    futoin_host_shutdown();
    CHECK(futoin_tool_free(tool) == FUTOIN_OK, "tool not freed");
    return futoin_check_summary("polyglot-c");
}
