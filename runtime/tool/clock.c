/*
 * The tool's clock: libuv's loop time, or a virtual clock for tests
 * (futoin_tool_options.virtual_time). Timers are measured against
 * futoin__tool_clock() (tool/internal.h) and ordered by the heap of
 * timer.c either way; what differs is who fires them. On the wall clock
 * the uv timer does, when libuv's poll wakes up for it. On a virtual clock
 * nothing waits: futoin_tool_run() runs what is due now and returns, and
 * futoin_tool_advance() moves the clock from one due time to the next,
 * running what falls due at each, so the layers above see the same
 * sequence of callbacks as on a real clock, without the waits between.
 *
 * The time slice (slice.c) stays on the wall clock on a virtual tool: it
 * bounds busy work, which takes real time whatever the clock says, so that
 * due timers and I/O still get a turn beside a flow that never waits.
 */
#include "tool/internal.h"

/* Anything ready to run at the virtual clock's time. */
static bool vt_ready(futoin_tool* tool)
{
    return tool->ring_head != tool->ring_tail || futoin__tool_posts_pending(tool)
           || futoin__tool_timer_due(tool, tool->vnow);
}

/* A uv_stop() from a callback (a binding stops its run() at an unhandled
 * error) ends the run as it ends uv_run(): the request is consumed. The
 * callbacks here run outside uv_run(), which would otherwise never see it. */
static bool vt_stopped(futoin_tool* tool)
{
    if (tool->loop->stop_flag == 0) {
        return false;
    }
    tool->loop->stop_flag = 0;
    futoin__tool_sync(tool);
    return true;
}

/* A burst of immediates, calls posted from other threads first, as the
 * idle handle would run them. */
static void vt_burst(futoin_tool* tool)
{
    futoin__tool_idle_cb(&tool->idle); /* ends with futoin__tool_sync() */
}

/*
 * One turn in libuv's order: the timers due now, in one batch as timer_cb
 * fires them (those they start wait for the next turn, even when due at
 * once); a burst of immediates; then one libuv pass that does not wait,
 * for I/O and the handles of others. The burst ran here, so the idle
 * handle is stopped for that pass. Returns false when a callback asked to
 * stop.
 */
static bool vt_turn(futoin_tool* tool)
{
    if (futoin__tool_timer_due(tool, tool->vnow)) {
        futoin__tool_active(tool); /* for trimming on idle */
        ++tool->cb_depth;
        futoin__tool_slice_reset(tool);
        futoin__tool_timers_fire(tool, tool->vnow);
        --tool->cb_depth;
        if (vt_stopped(tool)) {
            return false;
        }
    }
    if (tool->ring_head != tool->ring_tail || futoin__tool_posts_pending(tool)) {
        vt_burst(tool);
        if (vt_stopped(tool)) {
            return false;
        }
    }
    futoin__tool_idle_stop(tool);
    futoin__tool_sync_ref(tool);
    uv_run(tool->loop, UV_RUN_NOWAIT);
    return true;
}

/* Run what is due at the clock's time until nothing is. The first burst
 * comes before any check, as futoin_tool_run()'s fast path on a real clock
 * (a binding may stop the loop first to run only what is queued). Returns
 * false when a callback asked to stop. */
static bool vt_run_due(futoin_tool* tool)
{
    if (tool->ring_head != tool->ring_tail || futoin__tool_posts_pending(tool)) {
        vt_burst(tool);
    }
    if (vt_stopped(tool)) {
        return false;
    }
    do {
        if (!vt_turn(tool)) {
            return false;
        }
    } while (vt_ready(tool));
    futoin__tool_sync(tool);
    return true;
}

void futoin__tool_vt_run(futoin_tool* tool)
{
    vt_run_due(tool);
}

int futoin__tool_vt_pass(futoin_tool* tool)
{
    vt_turn(tool);
    return vt_ready(tool) || tool->heap_len != 0 || uv_loop_alive(tool->loop);
}

FUTOIN_API int futoin_tool_advance(futoin_tool* tool, uint64_t ms)
{
    uint64_t target;
    if (!tool) {
        return FUTOIN_EINVAL;
    }
    if (!tool->virtual_time) {
        futoin__tool_misuse(tool, "futoin_tool_advance(): the tool runs on the "
                                  "wall clock (see futoin_tool_options.virtual_time)");
        return FUTOIN_EINVAL;
    }
    if (!futoin__tool_check_thread(
                tool, "futoin_tool_advance(): not the loop thread")) {
        return FUTOIN_EINVAL;
    }
    if (tool->cb_depth != 0 || tool->in_run != 0 || tool->closing) {
        futoin__tool_misuse(tool, "futoin_tool_advance(): called while the loop "
                                  "runs (from a callback, or inside futoin_tool_run())");
        return FUTOIN_EINVAL;
    }
    if (ms > UINT64_MAX - tool->vnow) {
        futoin__tool_misuse(tool, "futoin_tool_advance(): the clock would pass "
                                  "UINT64_MAX");
        return FUTOIN_EINVAL;
    }
    target = tool->vnow + ms;
    ++tool->in_run;
    if (vt_run_due(tool)) {
        /* Timer by timer: each jump runs what falls due then, including
         * the immediates and timers that it starts, before the clock moves
         * on. The heap is re-read every time, so timers started during the
         * advance are taken in their turn. */
        while (futoin__tool_timer_due(tool, target)) {
            if (tool->heap[0]->due > tool->vnow) {
                tool->vnow = tool->heap[0]->due;
            }
            if (!vt_run_due(tool)) {
                goto out; /* stopped: the clock stays where it came */
            }
        }
        tool->vnow = target;
    }
out:
    --tool->in_run;
    return FUTOIN_OK;
}

FUTOIN_API int futoin_tool_next_due(futoin_tool* tool, uint64_t* ms)
{
    uint64_t now;
    uint64_t due;
    if (!tool) {
        return FUTOIN_EINVAL;
    }
    if (!ms) {
        futoin__tool_misuse(tool, "futoin_tool_next_due(): NULL ms");
        return FUTOIN_EINVAL;
    }
    if (!futoin__tool_check_thread(
                tool, "futoin_tool_next_due(): not the loop thread")) {
        return FUTOIN_EINVAL;
    }
    if (tool->heap_len == 0) {
        return 0;
    }
    now = futoin__tool_clock(tool);
    due = tool->heap[0]->due;
    *ms = due > now ? due - now : 0;
    return 1;
}

FUTOIN_API uint64_t futoin_tool_now(futoin_tool* tool)
{
    if (!tool
        || !futoin__tool_check_thread(tool,
                                      "futoin_tool_now(): not the loop thread")) {
        return 0;
    }
    return futoin__tool_clock(tool);
}

FUTOIN_API int futoin_tool_is_virtual(futoin_tool* tool)
{
    /* set at creation and never changed: safe to read from any thread */
    return tool && tool->virtual_time;
}
