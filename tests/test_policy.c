/* The load policy (futoin_host_policy_set(), futoin/sys/host.h): an
 * allow-list of languages and modules per tool and for the process;
 * what it does not name is refused before anything is looked for or
 * loaded, with an error naming the rule; set once; everything allowed
 * without one. The echo host (tests/host/echo_host.c, found through
 * FUTOIN_HOST_PATH) stands for a language's plug-in. */
#include "common.h"
#include "host/host_steps.h"

#include <futoin/sys/host.h>

#include <dlfcn.h>
#include <stdlib.h>

#define ECHO_PLUGIN FUTOIN_TEST_PLUGIN_DIR "/libfutoin_host_echo.so"

static void policy_setup(void)
{
    setenv("FUTOIN_HOST_PATH", FUTOIN_TEST_PLUGIN_DIR, 1);
    fx_setup();
}
TestSuite(policy, .init = policy_setup, .fini = fx_teardown);

/* One flow on `tool`: `language` `module` `function` (a C one given 3 and
 * 4), then the value it passed on; the trace says what happened. Returns
 * what futoin_host_add() returned. */
static int add_on(futoin_tool* tool, const char* language, const char* module,
                  const char* function)
{
    FutoInAsyncSteps* as = futoin_root_new(tool);
    int rc;
    trace_len = 0;
    trace_buf[0] = 0;
    if (strcmp(language, "c") == 0) {
        API(as)->add(as, NULL, two_doubles, NULL);
    }
    rc = futoin_host_add(as, language, module, function);
    API(as)->add(as, NULL, print_value, NULL);
    API(as)->execute(as, NULL, print_error);
    cr_assert_eq(futoin_tool_run(tool), FUTOIN_OK);
    API(as)->free(as);
    return rc;
}

static int add(const char* language, const char* module, const char* function)
{
    return add_on(T, language, module, function);
}

#define assert_refused(language, module, function, why)                        \
    do {                                                                       \
        cr_assert_eq(add(language, module, function), FUTOIN_EINVAL);          \
        assert_trace("InvalidRequest: " why "\n");                             \
    } while (0)

static bool echo_loaded(void)
{
    void* dl = dlopen(ECHO_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
    if (dl) {
        dlclose(dl);
    }
    return dl != NULL;
}

static const char* const c_only[] = {"c", NULL};

Test(policy, everything_is_allowed_without_one)
{
    cr_assert_eq(add("echo", "any.module", "5"), FUTOIN_OK);
    assert_trace("value 5\n");
    cr_assert_eq(add("c", "libm.so.6", "double hypot(double, double)"), FUTOIN_OK);
    assert_trace("value 5\n");
}

/* a language the list does not name: refused, and its plug-in is not even
 * looked for */
Test(policy, a_language_outside_the_list_is_refused_before_loading)
{
    futoin_host_policy p = FUTOIN_HOST_POLICY_INIT;
    p.languages = c_only;
    cr_assert_eq(futoin_host_policy_set(T, &p), FUTOIN_OK);
    assert_refused("echo", "mod", "5",
                   "load policy of this tool: language 'echo' is not allowed "
                   "(languages: c)");
    cr_assert_not(echo_loaded(), "the refused language's plug-in was loaded");
    cr_assert_eq(add("c", "libm.so.6", "double hypot(double, double)"), FUTOIN_OK);
    assert_trace("value 5\n");
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
}

Test(policy, an_empty_language_list_allows_none)
{
    static const char* const none[] = {NULL};
    futoin_host_policy p = FUTOIN_HOST_POLICY_INIT;
    p.languages = none;
    cr_assert_eq(futoin_host_policy_set(T, &p), FUTOIN_OK);
    assert_refused("c", "libm.so.6", "double hypot(double, double)",
                   "load policy of this tool: language 'c' is not allowed "
                   "(languages: none)");
}

Test(policy, modules_exact_and_by_prefix)
{
    static const char* const rules[] = {
            "echo:pricing.*", "echo:util", "c:libm.so.6", "c:/opt/app/lib/*", NULL};
    futoin_host_policy p = FUTOIN_HOST_POLICY_INIT;
    p.modules = rules;
    cr_assert_eq(futoin_host_policy_set(T, &p), FUTOIN_OK);
    cr_assert_eq(add("echo", "pricing.rules", "2"), FUTOIN_OK);
    assert_trace("value 2\n");
    cr_assert_eq(add("echo", "pricing.sub.more", "1"), FUTOIN_OK);
    cr_assert_eq(add("echo", "util", "1"), FUTOIN_OK);
    cr_assert_eq(add("c", "libm.so.6", "double hypot(double, double)"), FUTOIN_OK);
    assert_trace("value 5\n");
    /* the package itself is not "pricing.*"; nor is a longer name */
    assert_refused("echo", "pricing", "1",
                   "load policy of this tool: echo module 'pricing' is not "
                   "allowed (no rule matches it; rules for echo: "
                   "echo:pricing.*, echo:util)");
    assert_refused("echo", "utility", "1",
                   "load policy of this tool: echo module 'utility' is not "
                   "allowed (no rule matches it; rules for echo: "
                   "echo:pricing.*, echo:util)");
    assert_refused("c", "libc.so.6", "int abs(int)",
                   "load policy of this tool: c module 'libc.so.6' is not "
                   "allowed (no rule matches it; rules for c: c:libm.so.6, "
                   "c:/opt/app/lib/*)");
    /* a folder's rule does not reach out of it */
    assert_refused("c", "/opt/app/lib/../../../lib/x86_64-linux-gnu/libc.so.6",
                   "int abs(int)",
                   "load policy of this tool: c module "
                   "'/opt/app/lib/../../../lib/x86_64-linux-gnu/libc.so.6' is "
                   "not allowed (no rule matches it; rules for c: c:libm.so.6, "
                   "c:/opt/app/lib/*)");
    cr_assert_eq(misuse_seen, 0, "%s", misuse_last);
}

Test(policy, a_language_without_rules_has_no_module_allowed)
{
    static const char* const rules[] = {"c:*", NULL};
    futoin_host_policy p = FUTOIN_HOST_POLICY_INIT;
    p.modules = rules;
    cr_assert_eq(futoin_host_policy_set(T, &p), FUTOIN_OK);
    assert_refused("echo", "mod", "1",
                   "load policy of this tool: echo module 'mod' is not "
                   "allowed (no rule names echo modules)");
    cr_assert_not(echo_loaded());
    cr_assert_eq(add("c", "libm.so.6", "double hypot(double, double)"), FUTOIN_OK);
}

/* set once: a flow cannot widen what its host program allowed */
Test(policy, set_once)
{
    futoin_host_policy p = FUTOIN_HOST_POLICY_INIT;
    futoin_host_policy all = FUTOIN_HOST_POLICY_INIT;
    p.languages = c_only;
    cr_assert_eq(futoin_host_policy_set(T, &p), FUTOIN_OK);
    cr_assert_eq(futoin_host_policy_set(T, &all), FUTOIN_EBUSY);
    assert_refused("echo", "mod", "5",
                   "load policy of this tool: language 'echo' is not allowed "
                   "(languages: c)");
    cr_assert_eq(futoin_host_policy_set(NULL, &p), FUTOIN_OK);
    cr_assert_eq(futoin_host_policy_set(NULL, &all), FUTOIN_EBUSY);
}

/* the process's policy applies to every tool, and so does each tool's own */
Test(policy, the_process_and_the_tool_both_apply)
{
    static const char* const echo_rules[] = {"echo:allowed.*", "c:*", NULL};
    futoin_host_policy proc = FUTOIN_HOST_POLICY_INIT;
    futoin_host_policy mine = FUTOIN_HOST_POLICY_INIT;
    futoin_tool* other = NULL;
    proc.modules = echo_rules;
    mine.languages = c_only;
    cr_assert_eq(futoin_tool_new(&other, NULL), FUTOIN_OK);
    cr_assert_eq(futoin_host_policy_set(NULL, &proc), FUTOIN_OK);
    cr_assert_eq(futoin_host_policy_set(T, &mine), FUTOIN_OK);
    /* T: the process allows echo allowed.x, T does not allow echo */
    assert_refused("echo", "allowed.x", "1",
                   "load policy of this tool: language 'echo' is not allowed "
                   "(languages: c)");
    /* the process refuses first */
    assert_refused("echo", "other", "1",
                   "load policy of this process: echo module 'other' is not "
                   "allowed (no rule matches it; rules for echo: "
                   "echo:allowed.*)");
    /* the other tool: the process's policy alone */
    cr_assert_eq(add_on(other, "echo", "allowed.x", "4"), FUTOIN_OK);
    assert_trace("value 4\n");
    cr_assert_eq(add_on(other, "echo", "other", "1"), FUTOIN_EINVAL);
    cr_assert(strstr(trace_buf, "load policy of this process: echo module 'other'"),
              "%s", trace_buf);
    cr_assert_eq(futoin_tool_free(other), FUTOIN_OK);
}

Test(policy, bad_policies_are_refused_and_change_nothing)
{
    static const char* const bad_language[] = {"no/such", NULL};
    static const char* const no_colon[] = {"libm.so.6", NULL};
    static const char* const no_language[] = {":libm.so.6", NULL};
    static const char* const no_name[] = {"c:", NULL};
    static const char* const star_inside[] = {"java:org.*.Totals", NULL};
    static const char* const bad_rule_language[] = {"py thon:x", NULL};
    futoin_host_policy p = FUTOIN_HOST_POLICY_INIT;
    cr_assert_eq(futoin_host_policy_set(T, NULL), FUTOIN_EINVAL);
    p.size = 0;
    cr_assert_eq(futoin_host_policy_set(T, &p), FUTOIN_EVERSION);
    p.size = sizeof(futoin_host_policy) + 8; /* rules this library cannot read */
    cr_assert_eq(futoin_host_policy_set(T, &p), FUTOIN_EVERSION);
    p.size = sizeof(futoin_host_policy);
    p.languages = bad_language;
    cr_assert_eq(futoin_host_policy_set(T, &p), FUTOIN_EINVAL);
    p.languages = NULL;
    p.modules = no_colon;
    cr_assert_eq(futoin_host_policy_set(T, &p), FUTOIN_EINVAL);
    p.modules = no_language;
    cr_assert_eq(futoin_host_policy_set(T, &p), FUTOIN_EINVAL);
    p.modules = no_name;
    cr_assert_eq(futoin_host_policy_set(T, &p), FUTOIN_EINVAL);
    p.modules = star_inside;
    cr_assert_eq(futoin_host_policy_set(T, &p), FUTOIN_EINVAL);
    p.modules = bad_rule_language;
    cr_assert_eq(futoin_host_policy_set(NULL, &p), FUTOIN_EINVAL);
    /* none of them was taken */
    cr_assert_eq(add("echo", "mod", "1"), FUTOIN_OK);
    p.languages = c_only;
    p.modules = NULL;
    cr_assert_eq(futoin_host_policy_set(T, &p), FUTOIN_OK);
    cr_assert_eq(add("echo", "mod", "1"), FUTOIN_EINVAL);
}

/* A policy set from another thread while the loop thread adds steps: each
 * add sees no policy or the whole one; after the setter is done, every
 * add is refused. */
static void* set_from_a_thread(void* arg)
{
    static const char* const none[] = {NULL};
    futoin_host_policy p = FUTOIN_HOST_POLICY_INIT;
    p.languages = none;
    *(int*)arg = futoin_host_policy_set(T, &p);
    return NULL;
}

Test(policy, set_from_another_thread)
{
    pthread_t th;
    int rc = -1;
    cr_assert_eq(pthread_create(&th, NULL, set_from_a_thread, &rc), 0);
    for (int i = 0; i < 50; ++i) {
        int r = add("c", "libm.so.6", "double hypot(double, double)");
        cr_assert(r == FUTOIN_OK || r == FUTOIN_EINVAL);
        if (r == FUTOIN_OK) {
            assert_trace("value 5\n");
        } else {
            assert_trace("InvalidRequest: load policy of this tool: language "
                         "'c' is not allowed (languages: none)\n");
        }
    }
    pthread_join(th, NULL);
    cr_assert_eq(rc, FUTOIN_OK);
    cr_assert_eq(add("c", "libm.so.6", "double hypot(double, double)"), FUTOIN_EINVAL);
}
