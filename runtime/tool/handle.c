/*
 * The FutoInHandle calls that serve both kinds of handle: data2 is the
 * timer entry of a deferred call and NULL for an immediate, whose data3 is
 * its sequence number plus one. Either is checked against the live state
 * of its kind before anything is touched, so a stale handle is harmless.
 */
#include "tool/internal.h"

FUTOIN_API void futoin_tool_cancel(futoin_tool* tool, FutoInHandle* handle)
{
    uint64_t seq;
    futoin__timer* t;
    /* Handles of another tool are left alone, not even zeroed: they may
     * still be live there. */
    if (!tool || !handle || handle->data1 != (void*)tool) {
        return;
    }
    if (!futoin__tool_check_thread(
                tool, "futoin_tool_cancel(): not the loop thread")) {
        return;
    }
    if (handle->data2) {
        t = futoin__tool_timer_of(tool, handle);
        if (t) {
            futoin__tool_timer_stop(tool, t, t->gen);
        }
    } else if (futoin__tool_imm_seq_of(tool, handle, &seq)) {
        futoin__tool_imm_cancel(tool, seq);
    }
    *handle = inert_handle;
}

FUTOIN_API int futoin_tool_is_valid(
        futoin_tool* tool, const FutoInHandle* handle)
{
    uint64_t seq;
    if (!tool || !handle || handle->data1 != (void*)tool) {
        return 0;
    }
    if (!futoin__tool_check_thread(
                tool, "futoin_tool_is_valid(): not the loop thread")) {
        return 0;
    }
    if (handle->data2) {
        return futoin__tool_timer_of(tool, handle) != NULL;
    }
    return futoin__tool_imm_seq_of(tool, handle, &seq);
}
