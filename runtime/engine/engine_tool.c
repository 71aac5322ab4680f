/*
 * The public life cycle of a tool: the loop layer (tool/tool.c) plus the
 * step engine's per-tool pools. It lives in the engine so that the loop
 * layer knows nothing of the layers above it.
 */
#include "engine/engine.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

static bool engine_trim_idle(futoin_tool* tool);

FUTOIN_API int futoin_tool_new(
        futoin_tool** out, const futoin_tool_options* opts)
{
    int rc = futoin__tool_create(out, opts, sizeof(struct futoin__engine_tool));
    if (rc == FUTOIN_OK) {
        futoin__engine_tool_init(*out);
        (*out)->trim_idle = engine_trim_idle;
        (*out)->rq_run = futoin__flow_run_cb; /* flows are its records */
    }
    return rc;
}

FUTOIN_API int futoin_tool_free(futoin_tool* tool)
{
    int rc;
    if (!tool) {
        return FUTOIN_EINVAL;
    }
    if (futoin__recpool_live(&futoin__eng(tool)->roots) > 0) {
        return FUTOIN_EBUSY;
    }
    rc = futoin__tool_check_free(tool);
    if (rc != FUTOIN_OK) {
        return rc;
    }
    futoin__hooks_close(tool);
    futoin__engine_tool_close(tool);
    return futoin__tool_destroy(tool);
}

FUTOIN_API int futoin_tool_get_stats(futoin_tool* tool, futoin_tool_stats* out)
{
    struct futoin__engine_tool* e;
    if (!tool || !out) {
        return FUTOIN_EINVAL;
    }
    if (!futoin__tool_on_thread(tool)) {
        futoin__misuse_thread(tool, "futoin_tool_get_stats()");
        return FUTOIN_EINVAL;
    }
    if (out->version != FUTOIN_TOOL_STATS_VERSION) {
        return FUTOIN_EVERSION;
    }
    e = futoin__eng(tool);
    out->misuse = futoin_tool_misuse_count(tool);
    out->late_completions =
            atomic_load_explicit(&e->late_completions, memory_order_relaxed);
    out->live_roots = futoin__recpool_live(&e->roots);
    out->live_steps = futoin__recpool_live(&e->steps)
                     + futoin__recpool_live(&e->frames);
    out->pool_bytes = futoin__recpool_mapped(&e->steps)
                      + futoin__recpool_mapped(&e->frames)
                      + futoin__recpool_mapped(&e->step_rares)
                      + futoin__recpool_mapped(&e->flows)
                      + futoin__recpool_mapped(&e->args)
                      + futoin__recpool_mapped(&e->roots)
                      + futoin__recpool_mapped(&e->rares)
                      + futoin__recpool_mapped(&e->raises);
    out->trimmed_bytes = e->trimmed_bytes;
    return FUTOIN_OK;
}

/* Every layer's trim: futoin_tool_trim(), and the loop's own when it has
 * been idle for a while (futoin__tool_grew). */
static size_t engine_trim(futoin_tool* tool)
{
    struct futoin__engine_tool* e = futoin__eng(tool);
    size_t n;
    n = futoin__recpool_trim(&e->steps) + futoin__recpool_trim(&e->frames)
        + futoin__recpool_trim(&e->step_rares) + futoin__recpool_trim(&e->args)
        + futoin__recpool_trim(&e->rares) + futoin__recpool_trim(&e->raises);
    /* A flow freed while in a batch of the run queue still links the rest
     * of its batch (tool/tool.h): flows and roots keep their memory while
     * the ring holds anything (a trim on idle finds it empty). */
    if (tool->ring_head == tool->ring_tail) {
        n += futoin__recpool_trim(&e->flows) + futoin__recpool_trim(&e->roots);
    }
    n += futoin__tool_trim_loop(tool);
    e->trimmed_bytes += n;
#if defined(__GLIBC__)
    /* stack() memory, state variables, remote posts, label copies: the
     * C heap keeps their freed space unless asked to give it back */
    malloc_trim(0);
#endif
    return n;
}

/* The loop has been idle for a while (tool/tool.h, futoin__tool_grew):
 * trim, and say whether memory in use is left that may come back. */
static bool engine_trim_idle(futoin_tool* tool)
{
    struct futoin__engine_tool* e = futoin__eng(tool);
    engine_trim(tool);
    return !(futoin__recpool_at_rest(&e->steps)
             && futoin__recpool_at_rest(&e->frames)
             && futoin__recpool_at_rest(&e->step_rares)
             && futoin__recpool_at_rest(&e->flows)
             && futoin__recpool_at_rest(&e->args)
             && futoin__recpool_at_rest(&e->roots)
             && futoin__recpool_at_rest(&e->rares)
             && futoin__recpool_at_rest(&e->raises)
             && futoin__tool_loop_at_rest(tool));
}

FUTOIN_API size_t futoin_tool_trim(futoin_tool* tool)
{
    if (!tool) {
        return 0;
    }
    if (!futoin__tool_on_thread(tool)) {
        futoin__misuse_thread(tool, "futoin_tool_trim()");
        return 0;
    }
    return engine_trim(tool);
}
