/*
 * Giving memory back: the loop layer's share of futoin_tool_trim(), and
 * trimming on idle (tool.h says how the idle timer decides), which runs the
 * whole trim of every layer once a period has passed without activity.
 */
#include "tool/internal.h"

/* Each concern gives back what its own storage can spare. */
size_t futoin__tool_trim_loop(futoin_tool* tool)
{
    size_t given = futoin__tool_imm_trim(tool);
    return given + futoin__tool_timer_trim(tool);
}

bool futoin__tool_loop_at_rest(const futoin_tool* tool)
{
    return futoin__tool_imm_at_rest(tool) && futoin__tool_timer_at_rest(tool);
}

static void trim_tick(uv_timer_t* handle)
{
    futoin_tool* tool = handle->data;
    bool more;
    if (tool->turns != tool->trim_seen) {
        tool->trim_seen = tool->turns; /* busy in the last period: wait on */
        return;
    }
    uv_timer_stop(&tool->trim_timer);
    tool->trim_armed = false;
    more = tool->trim_idle && tool->trim_idle(tool);
    tool->trim_rearm = more && !tool->trim_armed; /* (the trim may grow) */
}

FUTOIN__NOINLINE void futoin__tool_trim_arm(futoin_tool* tool)
{
    if (tool->time_stale) {
        /* a period starts now, not when libuv last read the clock */
        uv_update_time(tool->loop);
        tool->time_stale = false;
    }
    tool->trim_seen = tool->turns;
    uv_timer_start(&tool->trim_timer, trim_tick, tool->trim_idle_ms,
                   tool->trim_idle_ms);
    tool->trim_armed = true;
    tool->trim_rearm = false;
}

void futoin__tool_grew(futoin_tool* tool)
{
    if (tool->trim_idle_ms == 0 || tool->closing) {
        return;
    }
    /* Growing is activity too: a peak may be built by calls made outside
     * the loop's callbacks (roots created before run()). */
    ++tool->turns;
    if (!tool->trim_armed) {
        futoin__tool_trim_arm(tool);
    }
}
