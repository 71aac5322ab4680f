/*
 * The CHECK macro of the plain C test programs (the ones that are not
 * Criterion suites: tests/tsan/threads_hammer.c, tests/dlopen/
 * dlopen_consumer.c, the polyglot C host tests/polyglot/c_host.c and the
 * host plug-in tests bindings/<lang>/tests/polyglot/plugin_test.c),
 * defined once.
 *
 * CHECK(cond, fmt, ...) counts a passed check, or counts a failed one and
 * prints "FAIL file:line: cond: <message>" to stderr; either way the
 * program goes on. futoin_check_summary(label) prints the last line the
 * runners read, "<label>: N passed, M failed", and returns the program's
 * exit status (0: nothing failed, else 1):
 *
 *     CHECK(rc == FUTOIN_OK, "futoin_tool_free() returned %d", rc);
 *     ...
 *     return futoin_check_summary("hammer");
 *
 * A program whose failures need a context says so before including this
 * header: FUTOIN_CHECK_CONTEXT, an expression of type const char* read at
 * each failed check, is printed in brackets after FAIL (the polyglot C
 * host's "FAIL [python] c_host.c:123: cond: <message>", the language of
 * the cell):
 *
 *     #define FUTOIN_CHECK_CONTEXT lang
 *     #include "../include/futoin_check.h"
 *
 * The counters are the including file's own (static): one file of a
 * program checks. Not thread-safe: check on one thread (join workers and
 * check what they counted).
 */
#ifndef FUTOIN_TESTS_CHECK_H
#define FUTOIN_TESTS_CHECK_H

#include <stdio.h>

/* The checks of this program that passed and that failed so far. */
static int passed, failed;

#ifdef FUTOIN_CHECK_CONTEXT
#define FUTOIN_CHECK__CONTEXT() fprintf(stderr, "[%s] ", FUTOIN_CHECK_CONTEXT)
#else
#define FUTOIN_CHECK__CONTEXT() ((void)0)
#endif

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (cond) {                                                            \
            ++passed;                                                          \
        } else {                                                               \
            ++failed;                                                          \
            fputs("FAIL ", stderr);                                            \
            FUTOIN_CHECK__CONTEXT();                                           \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
        }                                                                      \
    } while (0)

/* Prints "<label>: N passed, M failed" (stdout) and returns the exit
 * status: 0 if no check failed, else 1. */
static inline int futoin_check_summary(const char* label)
{
    printf("%s: %d passed, %d failed\n", label, passed, failed);
    return failed ? 1 : 0;
}

#endif
