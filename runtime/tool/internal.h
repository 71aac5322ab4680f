/*
 * Private to the loop layer (the files of runtime/tool/): what they share
 * with each other and the layer above never sees. tool.h is the interface
 * for the step engine; this header adds the pieces of one concern that
 * another concern of the loop layer calls (the life cycle starts the
 * handles whose callbacks live with their concern, trimming shrinks the
 * storage of each).
 */
#ifndef FUTOIN_RUNTIME_TOOL_INTERNAL_H
#define FUTOIN_RUNTIME_TOOL_INTERNAL_H

#include "tool/tool.h"

/* Loop-thread-only public entry points check their thread: a call from
 * elsewhere would race with the loop, so it is refused and reported. */
static inline bool futoin__tool_check_thread(futoin_tool* tool,
                                             const char* message)
{
    if (FUTOIN__UNLIKELY(!futoin__tool_on_thread(tool))) {
        futoin__tool_misuse(tool, message);
        return false;
    }
    return true;
}

#endif /* FUTOIN_RUNTIME_TOOL_INTERNAL_H */
