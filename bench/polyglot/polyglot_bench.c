/*
 * bench/polyglot: the cost of a step when consecutive steps are written in
 * different languages (C -> Python -> Lua -> Java -> C ...), side by side
 * with chains that stay in one language, in one run of one process.
 *
 * Every step is the "echo" fragment of its language (tests/polyglot/): it
 * receives one integer and passes it on, so each step pays one crossing in
 * (FTN12 value -> the language's value) and one out. The chain is built
 * first (futoin_host_add() resolves each step by name; that cost is
 * reported apart) and then run; only the run is timed. Each chain runs
 * `rounds` times, alternating, and the median is reported.
 *
 *   polyglot_bench [steps] [rounds]      (defaults 20000, 7)
 * Environment as tests/polyglot/run.sh exports it (PYTHONPATH, LUA_CPATH,
 * CLASSPATH, ...,
 * FUTOIN_POLYGLOT_C_FRAGMENTS); FUTOIN_POLYGLOT_LANGS limits the languages.
 * Target (issue 14): a language-crossing step <= 0.5 us.
 */
#include <futoin/async.h>
#include <futoin/sys/host.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static futoin_tool* tool;
static const char* cfrag;
static const FutoInType ty_i64 = {FTN_TYPE_INT64, NULL};
static int64_t result;
static int errors;
static int flow_errors; /* the first one is shown */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char* module_of(const char* l)
{
    if (strcmp(l, "java") == 0) {
        return "org.futoin.polyglot.Fragments";
    }
    if (strcmp(l, "c") == 0) {
        return cfrag;
    }
    return "polyglot_fragments";
}

static void start_value(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    FutoInArgs out;
    memset(&out, 0, sizeof(out));
    out.arg0.type = &ty_i64;
    out.arg0.i64 = 7;
    as->api->success(as, &out);
}

static void end_value(FutoInAsyncSteps* as, void* d, const FutoInArgs* a)
{
    result = a->arg0.type ? a->arg0.i64 : -1;
}

static void on_error(FutoInAsyncSteps* as, void* d, const char* code)
{
    const char* info = as->api->stateVariable(as, NULL, "error_info", NULL, NULL);
    ++errors;
    if (flow_errors++ == 0) {
        fprintf(stderr, "polyglot_bench: %s: %s\n", code, info ? info : "");
    }
}

/* A root with `steps` echo steps, languages taken in turn from `langs`. */
static FutoInAsyncSteps* chain(char** langs, int nlangs, int steps,
                               double* add_ns)
{
    FutoInAsyncSteps* as = futoin_root_new(tool);
    uint64_t t0 = now_ns();
    as->api->add(as, NULL, start_value, NULL);
    for (int i = 0; i < steps; ++i) {
        const char* l = langs[i % nlangs];
        if (futoin_host_add(as, l, module_of(l), "echo") != FUTOIN_OK) {
            ++errors;
        }
    }
    as->api->add(as, NULL, end_value, NULL);
    *add_ns = (double)(now_ns() - t0) / steps;
    return as;
}

static double run_once(char** langs, int nlangs, int steps, double* add_ns)
{
    FutoInAsyncSteps* as = chain(langs, nlangs, steps, add_ns);
    uint64_t t0;
    double ns;
    result = 0;
    t0 = now_ns();
    as->api->execute(as, NULL, on_error);
    futoin_tool_run(tool);
    ns = (double)(now_ns() - t0) / steps;
    if (result != 7) {
        ++errors;
    }
    as->api->free(as);
    return ns;
}

static int cmp_d(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char** argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 20000;
    int rounds = argc > 2 ? atoi(argv[2]) : 7;
    const char* env = getenv("FUTOIN_POLYGLOT_LANGS");
    char buf[128];
    char* langs[8];
    int nlangs = 1; /* "c" first */
    enum { MAXCHAINS = 8 };
    const char* names[MAXCHAINS];
    double runs[MAXCHAINS][32], adds[MAXCHAINS];
    int nchains;

    cfrag = getenv("FUTOIN_POLYGLOT_C_FRAGMENTS");
    if (!cfrag || futoin_tool_new(&tool, NULL) != FUTOIN_OK || rounds > 32) {
        fprintf(stderr, "polyglot_bench: FUTOIN_POLYGLOT_C_FRAGMENTS not set\n");
        return 2;
    }
    langs[0] = "c";
    snprintf(buf, sizeof(buf), "%s", env ? env : "python lua java");
    for (char* save = NULL, *l = strtok_r(buf, " ,", &save); l && nlangs < 8;
         l = strtok_r(NULL, " ,", &save)) {
        langs[nlangs++] = l;
    }
    /* chains: each language alone, then all of them in turn */
    nchains = nlangs + 1;
    for (int c = 0; c < nlangs; ++c) {
        names[c] = langs[c];
    }
    names[nlangs] = "mixed";
    /* warm-up: start every runtime, JIT the paths */
    for (int c = 0; c < nchains; ++c) {
        double ignored;
        if (c < nlangs) {
            run_once(&langs[c], 1, steps / 4 + 1, &ignored);
        } else {
            run_once(langs, nlangs, steps / 4 + 1, &ignored);
        }
    }
    for (int r = 0; r < rounds; ++r) {
        for (int c = 0; c < nchains; ++c) {
            runs[c][r] = c < nlangs ? run_once(&langs[c], 1, steps, &adds[c])
                                    : run_once(langs, nlangs, steps, &adds[c]);
        }
    }
    printf("polyglot_bench: %d steps a chain, %d rounds, median ns per step\n",
           steps, rounds);
    printf("%-8s %10s %10s %10s   %s\n", "chain", "median", "min", "max",
           "resolve (futoin_host_add) ns/step");
    for (int c = 0; c < nchains; ++c) {
        qsort(runs[c], (size_t)rounds, sizeof(double), cmp_d);
        printf("%-8s %10.1f %10.1f %10.1f   %.0f\n", names[c], runs[c][rounds / 2],
               runs[c][0], runs[c][rounds - 1], adds[c]);
        printf("BENCH impl=futoin test=polyglot_%s ops=%d ns_per_op=%.1f\n",
               names[c], steps, runs[c][rounds / 2]);
    }
    if (nlangs > 1) {
        double mixed = runs[nchains - 1][rounds / 2];
        /* a chain that failed measured nothing: no verdict on it */
        printf("target: a language-crossing step %.1f ns (goal <= 500 ns): %s\n",
               mixed, errors ? "NO RESULT (errors)" : mixed <= 500.0 ? "PASS" : "FAIL");
    }
    futoin_host_shutdown();
    futoin_tool_free(tool);
    if (errors) {
        fprintf(stderr, "polyglot_bench: %d errors\n", errors);
        return 1;
    }
    return 0;
}
