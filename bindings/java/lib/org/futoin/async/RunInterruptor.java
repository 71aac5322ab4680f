package org.futoin.async;

import java.io.IOException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.spi.AbstractInterruptibleChannel;
import java.util.ArrayList;

/**
 * Hears of an interrupt of the thread blocked in {@link Tool#run()} (or
 * {@link AsyncSteps#run()}): the JDK calls {@link #implCloseChannel()} from
 * {@code Thread.interrupt()} (on the interrupting thread) while this
 * thread is between {@code begin()} and {@code end()}, or at once when it
 * enters with its interrupt status set. What it does is posted to the loop
 * thread: cancel the flows the run waits for, then stop the run. One per
 * run of the loop (ToolRuns.runFor).
 */
final class RunInterruptor extends AbstractInterruptibleChannel {
    private final Tool tool;
    private final long gen;
    private final RootCtl only;
    /** Loop thread: the interrupt cancelled the flows of this run. */
    boolean cancelled;

    /** For run `gen` of `tool`, waiting for `only` (null: every executing flow). */
    RunInterruptor(Tool tool, long gen, RootCtl only) {
        this.tool = tool;
        this.gen = gen;
        this.only = only;
    }

    void blocking() {
        begin();
    }

    void done() {
        try {
            end(true);
        } catch (AsynchronousCloseException interrupted) {
            // seen: the posted task cancels and stops
        }
    }

    @Override
    protected void implCloseChannel() throws IOException {
        ToolTasks.post(tool, this::onLoop);
    }

    private void onLoop() {
        synchronized (tool.life) {
            if (!tool.running || gen != tool.runGen) {
                return; /* that run is over: nothing to interrupt */
            }
        }
        cancelled = true;
        if (only != null) {
            only.cancelOnLoop();
        } else {
            for (RootCtl c : new ArrayList<>(tool.executing.keySet())) {
                c.cancelOnLoop();
            }
        }
        synchronized (tool.life) {
            ToolRuns.requestStop(tool, gen);
        }
    }
}
