/*
 * futoin_host_add(): a step of another language, named by language, module
 * and function, added to a flow. When the host, the module or the function
 * cannot be had, a step is added all the same that fails with
 * InvalidRequest and says why, so the error surfaces where the flow runs.
 */
#include "adapter/adapter.h"
#include "engine/engine.h"

#include <futoin/sys/ext.h>
#include <futoin/sys/wrap.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The step added when a named step cannot be had: it fails with
 * InvalidRequest, its error_info saying why. */
typedef struct failed_step
{
    char* why;
    char* name; /* language:module.function, for the async stack */
} failed_step;

static void failed_release(void* data)
{
    failed_step* f = data;
    free(f->why);
    free(f->name);
    free(f);
}

static void failed_origin(void* data, futoin_frame_origin* out)
{
    failed_step* f = data;
    out->language = "futoin";
    out->function = f->name;
    out->file = NULL;
    out->line = 0;
}

static const futoin_step_class failed_class = {
        sizeof(futoin_step_class), failed_release, failed_origin};

static void failed_execute(FutoInAsyncSteps* bsi, void* data,
                           const FutoInArgs* in)
{
    bsi->api->handle_error(bsi, FUTOIN_ERR_INVALID_REQUEST,
                           ((failed_step*)data)->why);
}

static void add_step(FutoInAsyncSteps* bsi, const futoin_host_step* st)
{
    const futoin_async_ext_table* x = futoin_async_ext(bsi);
    if (x) {
        x->add_classed(bsi, st->data, st->execute, st->error, st->cls);
    } else {
        /* a foreign implementation: no origin, but the data is released */
        futoin_wrap_add(bsi, st->data, st->execute, st->error,
                        st->cls ? st->cls->release : NULL);
    }
}

static int add_failed(FutoInAsyncSteps* bsi, const char* language,
                      const char* module, const char* function, int rc,
                      const char* why)
{
    failed_step* f = calloc(1, sizeof(*f));
    futoin_host_step st;
    char name[256];
    snprintf(name, sizeof(name), "%s:%s.%s", language ? language : "?",
             module ? module : "?", function ? function : "?");
    if (f) {
        f->why = strdup(why);
        f->name = strdup(name);
    }
    if (!f || !f->why || !f->name) {
        if (f) {
            failed_release(f);
        }
        futoin__tool_misuse(futoin_async_tool(bsi), why);
        return rc;
    }
    st.execute = failed_execute;
    st.error = NULL;
    st.data = f;
    st.cls = &failed_class;
    add_step(bsi, &st);
    return rc;
}

FUTOIN_API int futoin_host_add(FutoInAsyncSteps* bsi, const char* language,
                               const char* module, const char* function)
{
    char err[2048];
    futoin__host_entry* e = NULL;
    futoin_host_step st;
    futoin_tool* tool;
    int rc;

    if (!bsi) {
        futoin__misuse_null("futoin_host_add()");
        return FUTOIN_EINVAL;
    }
    if (futoin_async_ext(bsi) && !futoin__on_loop(bsi, "futoin_host_add()")) {
        return FUTOIN_EINVAL;
    }
    if (!module || !function) {
        return add_failed(bsi, language, module, function, FUTOIN_EINVAL,
                          "futoin_host_add(): module and function are "
                          "required");
    }
    if (futoin__host_language_ok(language)) {
        /* before anything is looked for: loading is running code */
        rc = futoin__host_policy_check(futoin_async_tool(bsi), language,
                                       module, err, sizeof(err));
        if (rc != FUTOIN_OK) {
            return add_failed(bsi, language, module, function, rc, err);
        }
    }
    rc = futoin__host_find_entry(language, &e, err, sizeof(err));
    if (rc != FUTOIN_OK) {
        /* the step first: the message ends with a list of places */
        char why[sizeof(err) + 256];
        snprintf(why, sizeof(why), "adding %.100s.%.100s: %s", module,
                 function, err);
        return add_failed(bsi, language, module, function, rc, why);
    }
    tool = futoin_async_tool(bsi);
    rc = futoin__host_start(e, tool, err, sizeof(err));
    if (rc != FUTOIN_OK) {
        /* start() does not know which step wanted the host: say it */
        char why[sizeof(err) + 256];
        if (err[0]) {
            snprintf(why, sizeof(why), "%s (adding %s.%s)", err, module,
                     function);
        } else {
            snprintf(why, sizeof(why),
                     "%s: the host did not start (no reason given; "
                     "adding %s.%s)",
                     language, module, function);
        }
        return add_failed(bsi, language, module, function, rc, why);
    }
    memset(&st, 0, sizeof(st));
    err[0] = 0;
    rc = e->api->resolve(module, function, &st, err, sizeof(err));
    if (rc != FUTOIN_OK || !st.execute) {
        if (!err[0]) {
            snprintf(err, sizeof(err), "%s: cannot resolve %s.%s", language,
                     module, function);
        }
        return add_failed(bsi, language, module, function,
                          rc != FUTOIN_OK ? rc : FUTOIN_EINVAL, err);
    }
    add_step(bsi, &st);
    return FUTOIN_OK;
}
