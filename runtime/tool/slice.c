/*
 * Time slices (tool.h says why and how): the clock read behind
 * futoin__tool_busy(), which every burst level calls with its work. Reading
 * the clock also measures how fast this burst's units go, and sets how many
 * units pass before the next read.
 */
#include "tool/internal.h"

bool futoin__tool_slice_check(futoin_tool* tool)
{
    uint64_t now;
    uint32_t units = tool->slice_units;
    if (tool->slice_over) {
        return true; /* every burst level on the way out asks again */
    }
    now = uv_hrtime();
    tool->slice_units = 0;
    if (tool->slice_end == 0) {
        /* The first read of a slice starts it. This burst's work may be
         * slower than what was measured before: the next unit tells. */
        tool->slice_end = now + FUTOIN__SLICE_NS;
        tool->slice_stride = 1;
    } else {
        uint64_t gap = now - tool->slice_last;
        uint64_t stride = gap ? (uint64_t)units * FUTOIN__SLICE_READ_NS / gap
                              : FUTOIN__SLICE_STRIDE_MAX;
        tool->slice_stride = stride < 1 ? 1
                             : stride > FUTOIN__SLICE_STRIDE_MAX
                                     ? FUTOIN__SLICE_STRIDE_MAX
                                     : (uint32_t)stride;
        tool->slice_learned = tool->slice_stride;
        if (now >= tool->slice_end) {
            tool->slice_over = true;
            tool->slice_stride = 0; /* the fast path now asks here */
        }
    }
    tool->slice_last = now;
    return tool->slice_over;
}
