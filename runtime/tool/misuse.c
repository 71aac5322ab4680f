/*
 * Misuse that cannot go into a flow (a loop-thread-only call made from
 * another thread, a bad argument to a tool call): counted, and reported to
 * the tool's misuse callback, or to stderr when it has none.
 */
#include "tool/internal.h"

#include <stdio.h>

void futoin__tool_misuse(futoin_tool* tool, const char* message)
{
    if (!tool) {
        fprintf(stderr, "futoin: %s: %s\n", FUTOIN_ERR_INTERNAL_ERROR, message);
        return;
    }
    /* Misuse may be reported from any thread (e.g. a loop-thread-only call
     * made elsewhere), hence the atomic counter. */
    __atomic_fetch_add(&tool->misuse_count, 1, __ATOMIC_RELAXED);
    if (tool->misuse) {
        tool->misuse(tool->misuse_data, FUTOIN_ERR_INTERNAL_ERROR, message);
    } else {
        fprintf(stderr, "futoin: %s: %s\n", FUTOIN_ERR_INTERNAL_ERROR, message);
    }
}

FUTOIN_API size_t futoin_tool_misuse_count(futoin_tool* tool)
{
    return tool ? __atomic_load_n(&tool->misuse_count, __ATOMIC_RELAXED) : 0;
}
