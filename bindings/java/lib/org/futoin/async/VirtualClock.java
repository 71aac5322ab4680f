package org.futoin.async;

import java.time.Duration;
import java.util.Objects;

/**
 * A {@link Tool}'s clock: virtual time (a test tool's clock moved only by
 * {@code advance()}, which runs what falls due on the way) and the
 * questions every Tool answers about its clock and timers.
 */
final class VirtualClock {
    private VirtualClock() {
    }

    /* Tool.isVirtualTime() */
    static boolean isVirtualTime(Tool tool) {
        if (tool.core != 0) {
            tool.checkLoopThread("isVirtualTime()");
            return FutoInNative.core_is_virtual(tool.core);
        }
        return tool.virtualTime;
    }

    /* Tool.advance(long) */
    static void advance(Tool tool, long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("advance(): the clock only moves forward (a delay >= 0), not " + ms);
        }
        tool.refuseBorrowed("advance()", "that program runs it");
        if (!tool.virtualTime) {
            throw new IllegalStateException("advance(): this Tool runs on the wall clock; make it with "
                    + "new Tool(new Tool.Options().virtualTime(true))");
        }
        tool.checkLoopThread("advance()");
        if (tool.running) {
            throw new IllegalStateException("advance(): not from inside the loop (a step, a callback, or while "
                    + "run() runs)");
        }
        if (ms > Long.MAX_VALUE - nowMillis(tool)) {
            throw new IllegalArgumentException("advance(): " + ms + " ms is too far for the clock");
        }
        long gen = ToolRuns.enter(tool, "advance()");
        try {
            ToolTasks.drain(tool);
            if (FutoInNative.tool_advance(tool.ptr, ms, gen) != 0) {
                throw new IllegalStateException("advance(): refused by the runtime");
            }
            /* tasks left by drain()'s budget: what is due now, as run() */
            while (!tool.stopRequested && !tool.tasks.isEmpty()) {
                ToolTasks.drain(tool);
                FutoInNative.tool_run(tool.ptr, gen);
            }
        } finally {
            ToolRuns.leaveRun(tool);
        }
    }

    /* Tool.advance(Duration) */
    static void advance(Tool tool, Duration d) {
        Objects.requireNonNull(d, "advance(): duration is null");
        if (d.isNegative()) {
            throw new IllegalArgumentException("advance(): the clock only moves forward (a delay >= 0), not " + d);
        }
        long ms;
        try {
            ms = d.toMillis();
            if (!d.minusMillis(ms).isZero()) {
                ms = Math.addExact(ms, 1);
            }
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("advance(): " + d + " is too far for the clock", e);
        }
        advance(tool, ms);
    }

    /** Loop thread: ms until the next timer, or -1. */
    static long nextDueMillis(Tool tool) {
        tool.refuseBorrowed("nextDue()", "its program's clock is its own");
        tool.checkLoopThread("nextDue()");
        return FutoInNative.tool_next_due(tool.ptr);
    }

    /* Tool.nowMillis() */
    static long nowMillis(Tool tool) {
        tool.refuseBorrowed("nowMillis()", "its program's clock is its own");
        tool.checkLoopThread("nowMillis()");
        return FutoInNative.tool_now(tool.ptr);
    }
}
