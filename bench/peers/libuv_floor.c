/*
 * Floors for the libfutoin_async benchmark suite: what it costs to run N
 * callbacks with nothing but libuv, and with nothing but an indirect call.
 *
 *   libuv_floor --impl IMPL --test TEST [--scale F]
 *   libuv_floor --impl IMPL --list
 *
 * impl=indirect_call  test=callbacks (10,000,000)
 *     A counted loop calling a noinline function through a volatile function
 *     pointer (the compiler can neither inline nor devirtualise it).
 *
 * impl=libuv_ring  test=callbacks (10,000,000)
 *     The cheapest way through a libuv loop: an own power-of-two ring of
 *     {fn, arg} entries drained by ONE uv_idle handle in bursts of up to
 *     RING_BURST callbacks per loop turn. Each callback re-posts the next one
 *     (a chain, like a flow's next step), so every op = pop + indirect call
 *     + push, plus one loop turn per RING_BURST callbacks.
 *
 * impl=libuv_turn  (the naive way: one loop turn per callback)
 *   test=callbacks        (10,000,000) one uv_idle callback per turn. Every
 *                          libuv loop owns an fd (its signal pipe), so each
 *                          turn with an active idle handle also makes an
 *                          epoll_wait(..., 0) syscall: this is the price of a
 *                          loop turn.
 *   test=callbacks_check  (10,000,000) Node's setImmediate pattern: uv_check
 *                          runs one callback per turn and an empty uv_idle
 *                          keeps the poll timeout at 0.
 *   test=callbacks_async  (1,000,000) uv_async_send() per callback: the
 *                          callback re-sends its own async handle (eventfd
 *                          write + epoll + read per callback).
 */
#include <uv.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench_common.h"

#define RING_CAP 4096u /* power of two */
#define RING_BURST 1024u

#define N_CALLBACKS 10000000ull
#define N_ASYNC 1000000ull

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

static void fail(const char *what)
{
    fprintf(stderr, "libuv_floor: check failed: %s\n", what);
    exit(2);
}

static void check_uv(int rc, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "libuv_floor: %s: %s\n", what, uv_strerror(rc));
        exit(2);
    }
}

/* The callback body every floor runs: bump a counter in memory. */
static NOINLINE void target(uint64_t *counter) { ++*counter; }

/* volatile: re-read on every call, so no inlining or devirtualisation. */
static void (*volatile g_target)(uint64_t *) = target;

/* ---- indirect_call -------------------------------------------------- */

static void run_indirect(double scale)
{
    const uint64_t n = bench_scaled(N_CALLBACKS, scale, 1);
    uint64_t counter = 0;
    uint64_t i, t0, t1;

    t0 = bench_now_ns();
    for (i = 0; i < n; ++i)
        g_target(&counter);
    t1 = bench_now_ns();

    if (counter != n)
        fail("indirect counter");
    bench_report("indirect_call", "callbacks", n, t1 - t0, -1.0);
}

/* ---- libuv_ring ----------------------------------------------------- */

typedef void (*ring_fn)(void *arg);

struct ring_entry {
    ring_fn fn;
    void *arg;
};

struct ring_ctx {
    struct ring_entry ring[RING_CAP];
    unsigned head, tail; /* free-running; index with & (RING_CAP - 1) */
    uv_idle_t idle;
    int idle_on; /* own flag: no libuv call on the hot path */
    uint64_t n, posted, done;
};

static void ring_idle_cb(uv_idle_t *h);

static void ring_push(struct ring_ctx *c, ring_fn fn, void *arg)
{
    struct ring_entry *e;

    if (c->tail - c->head == RING_CAP)
        fail("ring overflow");
    if (!c->idle_on) {
        c->idle_on = 1;
        uv_idle_start(&c->idle, ring_idle_cb);
    }
    e = &c->ring[c->tail++ & (RING_CAP - 1)];
    e->fn = fn;
    e->arg = arg;
}

static NOINLINE void ring_step(void *arg)
{
    struct ring_ctx *c = arg;

    target(&c->done);
    if (c->posted < c->n) {
        ++c->posted;
        ring_push(c, ring_step, c);
    }
}

static void ring_idle_cb(uv_idle_t *h)
{
    struct ring_ctx *c = h->data;
    unsigned burst = 0;

    while (c->head != c->tail && burst < RING_BURST) {
        struct ring_entry e = c->ring[c->head++ & (RING_CAP - 1)];
        e.fn(e.arg);
        ++burst;
    }
    if (c->head == c->tail) {
        c->idle_on = 0;
        uv_idle_stop(h);
    }
}

static void run_ring(double scale)
{
    static struct ring_ctx c;
    uv_loop_t loop;
    uint64_t t0, t1;

    check_uv(uv_loop_init(&loop), "uv_loop_init");
    memset(&c, 0, sizeof c);
    c.n = bench_scaled(N_CALLBACKS, scale, 1);
    check_uv(uv_idle_init(&loop, &c.idle), "uv_idle_init");
    c.idle.data = &c;

    t0 = bench_now_ns();
    c.posted = 1;
    ring_push(&c, ring_step, &c);
    check_uv(uv_run(&loop, UV_RUN_DEFAULT), "uv_run");
    t1 = bench_now_ns();

    if (c.done != c.n)
        fail("ring count");
    uv_close((uv_handle_t *)&c.idle, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    check_uv(uv_loop_close(&loop), "uv_loop_close");
    bench_report("libuv_ring", "callbacks", c.n, t1 - t0, -1.0);
}

/* ---- libuv_turn ----------------------------------------------------- */

struct turn_ctx {
    uint64_t n, done;
    uv_idle_t idle;
    uv_check_t check;
    uv_async_t async;
};

static void turn_idle_cb(uv_idle_t *h)
{
    struct turn_ctx *c = h->data;

    g_target(&c->done);
    if (c->done == c->n)
        uv_idle_stop(h);
}

static void noop_idle_cb(uv_idle_t *h) { (void)h; }

static void turn_check_cb(uv_check_t *h)
{
    struct turn_ctx *c = h->data;

    g_target(&c->done);
    if (c->done == c->n) {
        uv_check_stop(h);
        uv_idle_stop(&c->idle);
    }
}

static void turn_async_cb(uv_async_t *h)
{
    struct turn_ctx *c = h->data;

    g_target(&c->done);
    if (c->done < c->n)
        uv_async_send(h);
    else
        uv_close((uv_handle_t *)h, NULL);
}

static void close_cb_walk(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void run_turn(const char *test, double scale)
{
    static struct turn_ctx c;
    uv_loop_t loop;
    uint64_t t0, t1;

    memset(&c, 0, sizeof c);
    check_uv(uv_loop_init(&loop), "uv_loop_init");

    if (strcmp(test, "callbacks") == 0) {
        c.n = bench_scaled(N_CALLBACKS, scale, 1);
        check_uv(uv_idle_init(&loop, &c.idle), "uv_idle_init");
        c.idle.data = &c;
        t0 = bench_now_ns();
        uv_idle_start(&c.idle, turn_idle_cb);
        uv_run(&loop, UV_RUN_DEFAULT);
        t1 = bench_now_ns();
    } else if (strcmp(test, "callbacks_check") == 0) {
        c.n = bench_scaled(N_CALLBACKS, scale, 1);
        check_uv(uv_idle_init(&loop, &c.idle), "uv_idle_init");
        check_uv(uv_check_init(&loop, &c.check), "uv_check_init");
        c.check.data = &c;
        t0 = bench_now_ns();
        uv_check_start(&c.check, turn_check_cb);
        uv_idle_start(&c.idle, noop_idle_cb);
        uv_run(&loop, UV_RUN_DEFAULT);
        t1 = bench_now_ns();
    } else if (strcmp(test, "callbacks_async") == 0) {
        c.n = bench_scaled(N_ASYNC, scale, 1);
        check_uv(uv_async_init(&loop, &c.async, turn_async_cb), "uv_async_init");
        c.async.data = &c;
        t0 = bench_now_ns();
        uv_async_send(&c.async);
        uv_run(&loop, UV_RUN_DEFAULT);
        t1 = bench_now_ns();
    } else {
        fprintf(stderr, "libuv_floor: unknown test '%s' for libuv_turn\n", test);
        exit(1);
    }

    if (c.done != c.n)
        fail("turn count");
    uv_walk(&loop, close_cb_walk, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    check_uv(uv_loop_close(&loop), "uv_loop_close");
    bench_report("libuv_turn", test, c.n, t1 - t0, -1.0);
}

/* ---- main ----------------------------------------------------------- */

int main(int argc, char **argv)
{
    struct bench_args a;
    const char *impl;

    if (bench_parse_args(argc, argv, &a) != 0)
        return 1;
    impl = a.impl ? a.impl : "indirect_call";

    if (strcmp(impl, "indirect_call") != 0 && strcmp(impl, "libuv_ring") != 0 &&
        strcmp(impl, "libuv_turn") != 0) {
        fprintf(stderr,
                "libuv_floor: unknown impl '%s' (indirect_call|libuv_ring|libuv_turn)\n",
                impl);
        return 1;
    }
    if (a.list) {
        if (strcmp(impl, "libuv_turn") == 0)
            puts("callbacks\ncallbacks_check\ncallbacks_async");
        else
            puts("callbacks");
        return 0;
    }
    if (!a.test) {
        fprintf(stderr, "libuv_floor: --test is required\n");
        return 1;
    }

    if (strcmp(impl, "libuv_turn") == 0) {
        run_turn(a.test, a.scale);
        return 0;
    }
    if (strcmp(a.test, "callbacks") != 0) {
        fprintf(stderr, "libuv_floor: unknown test '%s' for %s\n", a.test, impl);
        return 1;
    }
    if (strcmp(impl, "indirect_call") == 0)
        run_indirect(a.scale);
    else
        run_ring(a.scale);
    return 0;
}
