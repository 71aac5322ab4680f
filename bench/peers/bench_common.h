/*
 * Shared helpers for the peer benchmarks (C11 and C++17).
 *
 * Protocol: every bench binary runs exactly one test per process and prints
 * exactly one line on stdout:
 *
 *   BENCH impl=<impl> test=<test> ops=<N> ns_per_op=<float> peak_rss_kb=<int> [bytes_per_flow=<float>]
 *
 * Options: --test NAME, --scale F (iteration multiplier, default 1.0),
 *          --impl NAME (peer binaries only), --list (supported tests).
 */
#ifndef FUTOIN_BENCH_PEERS_COMMON_H
#define FUTOIN_BENCH_PEERS_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Reads a "Key:   <n> kB" field of /proc/self/status; -1 if unavailable. */
static inline long bench_status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t klen = strlen(key);
    long val = -1;

    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            val = strtol(line + klen + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return val;
}

/* Current resident set size, KiB. */
static inline long bench_rss_kb(void) { return bench_status_kb("VmRSS"); }

/* Peak resident set size of the process so far, KiB. */
static inline long bench_peak_rss_kb(void) { return bench_status_kb("VmHWM"); }

/* Scales a base iteration count; never returns less than `min`. */
static inline uint64_t bench_scaled(uint64_t base, double scale, uint64_t min)
{
    double v = (double)base * scale + 0.5;
    uint64_t n = v < 1.0 ? 0 : (uint64_t)v;
    return n < min ? min : n;
}

static inline void bench_report(const char *impl, const char *test,
                                uint64_t ops, uint64_t elapsed_ns,
                                double bytes_per_flow)
{
    double ns_per_op = ops ? (double)elapsed_ns / (double)ops : 0.0;

    if (bytes_per_flow >= 0.0)
        printf("BENCH impl=%s test=%s ops=%llu ns_per_op=%.3f peak_rss_kb=%ld"
               " bytes_per_flow=%.1f\n",
               impl, test, (unsigned long long)ops, ns_per_op,
               bench_peak_rss_kb(), bytes_per_flow);
    else
        printf("BENCH impl=%s test=%s ops=%llu ns_per_op=%.3f peak_rss_kb=%ld\n",
               impl, test, (unsigned long long)ops, ns_per_op,
               bench_peak_rss_kb());
    fflush(stdout);
}

struct bench_args {
    const char *impl;  /* NULL if not given */
    const char *test;  /* NULL if not given */
    double scale;
    int list;
};

/* Returns 0 on success, prints usage and returns -1 on bad arguments. */
static inline int bench_parse_args(int argc, char **argv, struct bench_args *a)
{
    int i;

    a->impl = NULL;
    a->test = NULL;
    a->scale = 1.0;
    a->list = 0;
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--list") == 0) {
            a->list = 1;
        } else if (strcmp(argv[i], "--test") == 0 && i + 1 < argc) {
            a->test = argv[++i];
        } else if (strcmp(argv[i], "--impl") == 0 && i + 1 < argc) {
            a->impl = argv[++i];
        } else if (strcmp(argv[i], "--scale") == 0 && i + 1 < argc) {
            char *end = NULL;
            a->scale = strtod(argv[++i], &end);
            if (!end || *end != '\0' || !(a->scale > 0.0)) {
                fprintf(stderr, "bad --scale value: %s\n", argv[i]);
                return -1;
            }
        } else {
            fprintf(stderr,
                    "usage: %s [--impl IMPL] (--list | --test NAME [--scale F])\n",
                    argv[0]);
            return -1;
        }
    }
    return 0;
}

#endif
