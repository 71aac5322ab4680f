/*
 * What keeps the loop turning. The idle handle and the uv timer are active
 * only while there is work, and the async handle is referenced only while
 * flows are executing (futoin__tool_ref), so uv_run(UV_RUN_DEFAULT) returns
 * once nothing is left.
 */
#include "tool/internal.h"

static void sync_ref(futoin_tool* tool)
{
    bool want = tool->active_refs != 0;
    if (want != tool->async_refd) {
        if (want) {
            uv_ref((uv_handle_t*)&tool->async);
        } else {
            uv_unref((uv_handle_t*)&tool->async);
        }
        tool->async_refd = want;
    }
}

/*
 * Apply the handle state the counters ask for: the idle handle runs while
 * the ring has entries, the async handle is referenced while flows execute.
 * On an owned loop this happens here only — at the end of each of our
 * callbacks, before every poll (prepare_cb) and in futoin_tool_run — so a
 * short root does not pay four libuv calls for a start/stop and ref/unref
 * that cancel out. On an attached loop, whose owner may run it without us,
 * ref/unref and idle start are applied at once instead.
 */
void futoin__tool_sync(futoin_tool* tool)
{
    /* Posts left over by a slice normally wait in the ring (posts_run);
     * `posts_first` keeps the loop turning if that turn could not be
     * queued. */
    if (tool->ring_head != tool->ring_tail || tool->posts_first) {
        if (!tool->idle_active) {
            futoin__tool_idle_start(tool);
        }
    } else {
        futoin__tool_idle_stop(tool);
    }
    sync_ref(tool);
}

void futoin__tool_prepare_cb(uv_prepare_t* handle)
{
    futoin__tool_sync(handle->data);
}

void futoin__tool_ref(futoin_tool* tool)
{
    if (tool->active_refs++ == 0 && !tool->lazy) {
        sync_ref(tool);
    }
}

void futoin__tool_unref(futoin_tool* tool)
{
    if (tool->active_refs == 0) {
        futoin__tool_misuse(tool, "tool: unbalanced unref");
        return;
    }
    if (--tool->active_refs == 0 && !tool->lazy) {
        sync_ref(tool);
    }
}
