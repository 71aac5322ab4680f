/*
 * The public life cycle of a tool: the loop layer (tool/tool.c) plus the
 * step engine's per-tool pools. It lives in the engine so that the loop
 * layer knows nothing of the layers above it.
 */
#include "engine/engine.h"

FUTOIN_API int futoin_tool_new(
        futoin_tool** out, const futoin_tool_options* opts)
{
    int rc = futoin__tool_create(out, opts, sizeof(struct futoin__engine_tool));
    if (rc == FUTOIN_OK) {
        futoin__engine_tool_init(*out);
    }
    return rc;
}

FUTOIN_API int futoin_tool_free(futoin_tool* tool)
{
    int rc;
    if (!tool) {
        return FUTOIN_EINVAL;
    }
    if (futoin__eng(tool)->live_roots > 0) {
        return FUTOIN_EBUSY;
    }
    rc = futoin__tool_check_free(tool);
    if (rc != FUTOIN_OK) {
        return rc;
    }
    futoin__engine_tool_close(tool);
    return futoin__tool_destroy(tool);
}
