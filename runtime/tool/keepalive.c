/*
 * What keeps the loop turning. The idle handle and the uv timer are active
 * only while there is work, and the async handle is referenced only while
 * flows are executing (futoin__tool_ref), so uv_run(UV_RUN_DEFAULT) returns
 * once nothing is left. futoin__tool_sync(), which every callback of ours
 * ends with, is inline in tool/internal.h.
 */
#include "tool/internal.h"

void futoin__tool_prepare_cb(uv_prepare_t* handle)
{
    futoin__tool_sync(handle->data);
}

/* The first ref on an attached loop (tool.h has the inline part). */
void futoin__tool_ref_slow(futoin_tool* tool)
{
    if (tool->active_refs++ == 0 && !tool->lazy) {
        futoin__tool_sync_ref(tool);
    }
}

/* An unbalanced unref, or the last one on an attached loop. */
void futoin__tool_unref_slow(futoin_tool* tool)
{
    if (tool->active_refs == 0) {
        futoin__tool_misuse(tool, "tool: unbalanced unref");
        return;
    }
    if (--tool->active_refs == 0 && !tool->lazy) {
        futoin__tool_sync_ref(tool);
    }
}
