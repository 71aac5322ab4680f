/*
 * Trace context of a root (futoin/trace.h).
 *
 * A root with no context holds a NULL pointer and nothing else, so the
 * engine's paths test one field at most. Span ids are not stored in the
 * step records (a step is 12 words with none to spare): a step's span id
 * is computed from its record's address and generation, mixed with the
 * root's random key, whenever it is asked for. A record's generation moves
 * on every reuse, so the id is the same for the step's whole life, from
 * the moment it is entered, and is not given to a later step. The one
 * place where a record serves more than one step is a burst of loop
 * iterations run in place on one frame (flow.c, loop_burst): a traced root
 * runs its iterations one frame each instead, and a context set from
 * inside such a burst ends the burst after the iteration that set it.
 */
#include "engine/engine.h"

#include <futoin/trace.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

struct futoin__trace
{
    uint64_t key[2];   /* random per root: span ids tell nothing else */
    uint64_t parent;   /* the flow's parent span, never 0 */
    uint8_t id[16];    /* trace id, never all zero */
    uint8_t flags;
};

/* ---- keys ---------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
    /* splitmix64's finaliser: a bijection of 64-bit words */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static _Atomic(uint64_t) key_counter;
static _Atomic(uint64_t) key_seed;

/* A fresh 64-bit key: a splitmix64 sequence over a seed read once from the
 * kernel (any thread; roots of several tools may be traced at once). */
static uint64_t next_key(void)
{
    uint64_t seed = atomic_load_explicit(&key_seed, memory_order_relaxed);
    if (!seed) {
        uint64_t s = 0;
        if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != (ssize_t)sizeof(s)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            s = mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30)
                      ^ (uint64_t)(uintptr_t)&ts);
        }
        s |= 1;
        uint64_t expected = 0;
        if (!atomic_compare_exchange_strong(&key_seed, &expected, s)) {
            s = expected;
        }
        seed = s;
    }
    return mix64(seed + atomic_fetch_add_explicit(&key_counter,
                                                  0x9e3779b97f4a7c15ULL,
                                                  memory_order_relaxed));
}

/* ---- parsing ------------------------------------------------------------- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

/* `n` bytes from 2n lowercase hex digits at `p`; false on anything else. */
static bool parse_hex(const char* p, uint8_t* out, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        int hi = hexval(p[2 * i]);
        int lo = hi < 0 ? -1 : hexval(p[2 * i + 1]);
        if (lo < 0) {
            return false;
        }
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

static bool all_zero(const uint8_t* b, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (b[i]) {
            return false;
        }
    }
    return true;
}

struct parsed
{
    uint8_t id[16];
    uint8_t parent[8];
    uint8_t flags;
};

static const char* parse(const char* tp, struct parsed* out)
{
    uint8_t version;
    size_t len;
    if (!tp) {
        return "traceparent is NULL";
    }
    len = strnlen(tp, FUTOIN_TRACEPARENT_LEN + 1);
    if (len < FUTOIN_TRACEPARENT_LEN) {
        return "traceparent is too short: 55 characters expected, "
               "\"00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>\"";
    }
    if (tp[2] != '-' || tp[35] != '-' || tp[52] != '-') {
        return "traceparent: the fields must be separated by '-' "
               "(\"00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>\")";
    }
    if (!parse_hex(tp, &version, 1)) {
        return "traceparent: the version is not 2 lowercase hex digits";
    }
    if (version == 0xff) {
        return "traceparent: version ff is invalid";
    }
    if (version == 0 && len != FUTOIN_TRACEPARENT_LEN) {
        return "traceparent: version 00 is exactly 55 characters";
    }
    if (len > FUTOIN_TRACEPARENT_LEN && tp[FUTOIN_TRACEPARENT_LEN] != '-') {
        return "traceparent: what follows the flags must start with '-'";
    }
    if (!parse_hex(tp + 3, out->id, 16)) {
        return "traceparent: the trace id is not 32 lowercase hex digits";
    }
    if (all_zero(out->id, 16)) {
        return "traceparent: the trace id is all zero";
    }
    if (!parse_hex(tp + 36, out->parent, 8)) {
        return "traceparent: the parent id is not 16 lowercase hex digits";
    }
    if (all_zero(out->parent, 8)) {
        return "traceparent: the parent id is all zero";
    }
    if (!parse_hex(tp + 53, &out->flags, 1)) {
        return "traceparent: the flags are not 2 lowercase hex digits";
    }
    return NULL;
}

FUTOIN_API const char* futoin_trace_check(const char* traceparent)
{
    struct parsed p;
    return parse(traceparent, &p);
}

/* ---- spans --------------------------------------------------------------- */

static uint64_t span_of(const struct futoin__trace* t, const futoin__step* s)
{
    uint64_t h = mix64((uint64_t)(uintptr_t)s ^ t->key[0]);
    h = mix64(h ^ t->key[1] ^ futoin__step_gen(s));
    return h ? h : 1; /* W3C: an all-zero span id is invalid */
}

/* The nearest frame from `s` down that is a span: a step or a loop
 * iteration, the frames async stacks and hooks show (the engine's own
 * parallel(), loop and addSync() frames are not spans, so an exporter
 * that sees only shown frames never meets a parent it was not told of);
 * NULL below the root's level. */
static const futoin__step* shown(const futoin__step* s)
{
    while (s && !futoin__frame_shown(s)) {
        s = futoin__frame_below(s);
    }
    return s;
}

/* The span step `s` (shown) runs under: the nearest span below it, across
 * parallel() into the flow that runs the branch, else the flow's parent. */
static uint64_t parent_span_of(const struct futoin__trace* t,
                               const futoin__step* s)
{
    const futoin__step* p = shown(futoin__frame_below(s));
    return p ? span_of(t, p) : t->parent;
}

/* ---- handles ------------------------------------------------------------- */

static bool is_ours(FutoInAsyncSteps* bsi)
{
    return bsi && (bsi->api == &futoin__step_api || bsi->api == &futoin__root_api
                   || bsi->api == &futoin__par_api);
}

/* The live root of `bsi` on its loop thread, with `*step` the step record
 * (NULL for the root's own handle); NULL (reported) otherwise. */
static futoin__root* gate(FutoInAsyncSteps* bsi, const char* what,
                          futoin__step** step)
{
    futoin__root* r;
    if (!bsi) {
        futoin__misuse_null(what);
        return NULL;
    }
    if (!is_ours(bsi)) {
        return NULL; /* a foreign implementation: nothing of ours to tell */
    }
    if (!futoin__on_loop(bsi, what)) {
        return NULL;
    }
    r = futoin__root_of(bsi);
    if (!r || (bsi->api != &futoin__root_api
               && futoin__as_step(bsi)->state == FUTOIN__S_QUEUED)) {
        char msg[96];
        snprintf(msg, sizeof(msg), "%s through a stale or not started handle",
                 what);
        futoin__tool_misuse(futoin__recpool_tool(bsi), msg);
        return NULL;
    }
    *step = bsi->api == &futoin__root_api ? NULL : futoin__as_step(bsi);
    return r;
}

/* The span of a handle: its step's, or for an engine frame's handle (a
 * parallel()) the span it runs in; the flow's parent span for the root. */
static uint64_t handle_span(const struct futoin__trace* t, const futoin__step* s)
{
    s = shown(s);
    return s ? span_of(t, s) : t->parent;
}

/* A flow set in a burst of in-place loop iterations (flow.c, loop_burst)
 * must see the next iteration on a frame of its own, or iterations would
 * share a span id: an empty stack() allocation on the body's frame is one
 * of the things that end a burst, and it goes with the frame. */
static void end_burst(futoin__step* s)
{
    if (s && s->kind == FUTOIN__K_BODY && s->state == FUTOIN__S_EXEC
        && !FUTOIN__RARE(s, allocs) && futoin__step_rare_get(s)) {
        (void)futoin__alloc_push(&s->rare->allocs, 0, NULL);
    }
}

FUTOIN_API int futoin_trace_set(FutoInAsyncSteps* bsi, const char* traceparent)
{
    futoin__step* s;
    futoin__root* r = gate(bsi, "futoin_trace_set()", &s);
    struct parsed p;
    struct futoin__trace* t;
    if (!r) {
        return FUTOIN_EINVAL;
    }
    if (!traceparent) {
        futoin__trace_free(r);
        return FUTOIN_OK;
    }
    if (parse(traceparent, &p)) {
        return FUTOIN_EINVAL;
    }
    t = FUTOIN__RARE(r, trace);
    if (!t) {
        if (!futoin__root_rare_get(r) || !(t = malloc(sizeof(*t)))) {
            return FUTOIN_ENOMEM;
        }
        t->key[0] = next_key();
        t->key[1] = next_key();
        r->rare->trace = t;
        end_burst(s);
    }
    memcpy(t->id, p.id, sizeof(t->id));
    t->parent = 0;
    for (size_t i = 0; i < 8; ++i) {
        t->parent = t->parent << 8 | p.parent[i];
    }
    t->flags = p.flags;
    return FUTOIN_OK;
}

static void hex(char* out, const uint8_t* b, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; ++i) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

static void hex64(char* out, uint64_t v)
{
    uint8_t b[8];
    for (size_t i = 0; i < 8; ++i) {
        b[i] = (uint8_t)(v >> (56 - 8 * i));
    }
    hex(out, b, 8);
}

FUTOIN_API int futoin_trace_get(FutoInAsyncSteps* bsi, futoin_trace_info* out)
{
    futoin__step* s;
    futoin__root* r;
    const struct futoin__trace* t;
    if (!out || out->size < sizeof(futoin_trace_info)) {
        return FUTOIN_EINVAL;
    }
    r = gate(bsi, "futoin_trace_get()", &s);
    if (!r) {
        return FUTOIN_EINVAL;
    }
    memset(out, 0, sizeof(*out));
    out->size = sizeof(*out);
    t = FUTOIN__RARE(r, trace);
    if (!t) {
        return 0;
    }
    out->flags = t->flags;
    hex(out->trace_id, t->id, 16);
    s = (futoin__step*)shown(s);
    hex64(out->span_id, handle_span(t, s));
    if (s) {
        hex64(out->parent_span_id, parent_span_of(t, s));
    }
    snprintf(out->traceparent, sizeof(out->traceparent), "00-%s-%s-%02x",
             out->trace_id, out->span_id, out->flags);
    return 1;
}

/* ---- engine -------------------------------------------------------------- */

void futoin__trace_inherit(futoin__root* nr, FutoInAsyncSteps* from,
                           const futoin__root* r)
{
    const struct futoin__trace* t = r->rare->trace;
    struct futoin__trace* n;
    if (!futoin__root_rare_get(nr) || !(n = malloc(sizeof(*n)))) {
        return; /* the new flow is simply not traced */
    }
    *n = *t;
    n->key[0] = next_key();
    n->key[1] = next_key();
    n->parent = handle_span(t, from->api == &futoin__root_api
                                       ? NULL
                                       : futoin__as_step(from));
    nr->rare->trace = n;
}

void futoin__trace_free(futoin__root* r)
{
    if (r->rare) {
        free(r->rare->trace);
        r->rare->trace = NULL;
    }
}
