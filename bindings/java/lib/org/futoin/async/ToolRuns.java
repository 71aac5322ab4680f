package org.futoin.async;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;

/**
 * The runs of a {@link Tool}'s loop: {@code run()} (and a root's
 * {@code run()}), {@code runOnce()}, {@code stop()}, and the loop of a
 * Tool on its own thread. Runs are numbered (under {@code life}) so that
 * a stop or an interrupt is applied to the run it was meant for.
 */
final class ToolRuns {
    private ToolRuns() {
    }

    static void loopMain(Tool tool, CountDownLatch ready, Throwable[] failed) {
        try {
            tool.loopThread = Thread.currentThread();
            tool.ptr = FutoInNative.tool_new(tool, true, false);
            tool.recs = RecTable.create(tool.ptr);
            BorrowedTools.registerOwn(tool);
        } catch (Throwable t) {
            failed[0] = t;
            tool.terminated.countDown();
            ready.countDown();
            return;
        }
        ready.countDown();
        try {
            tool.running = true;
            FutoInNative.tool_run(tool.ptr, 0); /* until shutdownOnLoop() lets go */
        } catch (Throwable t) {
            Tool.uncaught(t);
        } finally {
            tool.running = false;
            try {
                ToolClose.freeNative(tool);
            } finally {
                tool.terminated.countDown();
            }
        }
    }

    /**
     * The loop until nothing is left to do, a stop() or an interrupt, which
     * cancels `only` (root.run()) or every executing flow (null).
     */
    static void runFor(Tool tool, RootCtl only, String what) {
        tool.refuseBorrowed(what, "that program runs it");
        if (tool.dedicated) {
            throw new IllegalStateException(what + ": this Tool runs on its own thread");
        }
        long gen = enter(tool, what);
        RunInterruptor intr = new RunInterruptor(tool, gen, only);
        try {
            do {
                ToolTasks.drain(tool);
                if (tool.stopRequested) {
                    break;
                }
                int rc;
                intr.blocking();
                try {
                    rc = FutoInNative.tool_run(tool.ptr, gen);
                } finally {
                    intr.done();
                }
                if (rc != 0) {
                    throw new IllegalStateException(what + ": refused by the runtime");
                }
            } while (!tool.stopRequested && !tool.tasks.isEmpty());
        } finally {
            leaveRun(tool);
        }
        if (intr.cancelled) {
            Thread.currentThread().interrupt(); /* kept set, whatever cleared it meanwhile */
            throw new CancellationException(what + ": interrupted; "
                    + (only != null ? "its flow was" : "the executing flows were") + " cancelled");
        }
    }

    /* Tool.stop() */
    static boolean stop(Tool tool) {
        tool.refuseBorrowed("stop()", "that program runs it");
        if (tool.dedicated) {
            throw new IllegalStateException("stop(): this Tool runs on its own thread; close() stops it");
        }
        synchronized (tool.life) {
            return tool.running && requestStop(tool, tool.runGen);
        }
    }

    /** Under `life`: stop run `gen` if it is the one in progress. */
    static boolean requestStop(Tool tool, long gen) {
        if (!tool.running || gen != tool.runGen || tool.closed || tool.ptr == 0) {
            return false;
        }
        tool.stopRequested = true;
        FutoInNative.tool_stop(tool.ptr, gen);
        return true;
    }

    /* Tool.runOnce() */
    static boolean runOnce(Tool tool) {
        tool.refuseBorrowed("runOnce()", "that program runs it");
        if (tool.dedicated) {
            throw new IllegalStateException("runOnce(): this Tool runs on its own thread");
        }
        enter(tool, "runOnce()");
        try {
            ToolTasks.drain(tool);
            int rc = FutoInNative.tool_run_nowait(tool.ptr);
            if (rc < 0) {
                throw new IllegalStateException("runOnce(): refused by the runtime");
            }
            return rc > 0 || !tool.tasks.isEmpty();
        } finally {
            leaveRun(tool);
        }
    }

    static long enter(Tool tool, String what) {
        long gen;
        synchronized (tool.life) {
            if (tool.closed) {
                throw new IllegalStateException(what + ": the Tool is closed");
            }
            if (tool.running) {
                throw new IllegalStateException(what + ": the loop is running already (nested, or on another thread)");
            }
            tool.running = true;
            tool.stopRequested = false;
            gen = ++tool.runGen;
        }
        tool.loopThread = Thread.currentThread();
        return gen;
    }

    /** The end of run(), runOnce() and advance(), on the loop thread. */
    static void leaveRun(Tool tool) {
        boolean close;
        if (tool.recs != null) {
            tool.recs.drain(); /* no Rec of a finished step stays reachable */
        }
        synchronized (tool.life) {
            tool.running = false;
            close = tool.closeAfterRun;
            tool.closeAfterRun = false;
            tool.closingOnLoop = close;
        }
        if (close) {
            ToolClose.closeNow(tool);
        }
    }
}
