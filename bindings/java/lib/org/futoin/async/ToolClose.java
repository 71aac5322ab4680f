package org.futoin.async;

import java.util.ArrayList;

/**
 * Closing a {@link Tool}: its roots, Throttles, Limiters and timers freed
 * on the loop thread, then the loop; a Tool on its own thread stopped and
 * joined; a close() from another thread while a run() is in progress
 * carried out by that run when it returns.
 */
final class ToolClose {
    private ToolClose() {
    }

    /** Loop thread: free roots, sync objects and timers. */
    private static void releaseAll(Tool tool) {
        ToolTasks.drain(tool);
        for (RootCtl c : new ArrayList<>(tool.roots)) {
            c.freeOnLoop();
        }
        for (SyncObject s : new ArrayList<>(tool.syncs)) {
            s.closeQuietly();
        }
        for (Tool.Handle h : new ArrayList<>(tool.timers)) {
            h.cancel();
        }
    }

    static void freeNative(Tool tool) {
        long p;
        synchronized (tool.life) {
            tool.closed = true;
            p = tool.ptr;
        }
        if (p == 0) {
            return;
        }
        tool.tasks.clear();
        BorrowedTools.unregisterOwn(tool, p);
        int rc = FutoInNative.tool_free(p);
        if (rc != 0) {
            throw new IllegalStateException("Tool.close(): roots of other owners are still alive (" + rc + ")");
        }
        synchronized (tool.life) {
            tool.ptr = 0;
        }
    }

    /** Loop thread: free everything; other threads waiting in close()
     *  go on when it is done (or failed). */
    static void closeNow(Tool tool) {
        try {
            releaseAll(tool);
            freeNative(tool);
        } finally {
            tool.closedLatch.countDown();
        }
    }

    /* Tool.close() */
    static void close(Tool tool) {
        tool.refuseBorrowed("close()", "that program frees it");
        if (tool.dedicated) {
            synchronized (tool.life) {
                if (!tool.closed) {
                    tool.tasks.add(() -> shutdownOnLoop(tool));
                    if (!tool.wake.getAndSet(true)) {
                        FutoInNative.tool_post(tool.ptr);
                    }
                    tool.closed = true;
                }
            }
            if (Thread.currentThread() != tool.thread) {
                try {
                    tool.terminated.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return;
        }
        boolean wait;
        synchronized (tool.life) {
            if (tool.closed) {
                return;
            }
            if (tool.running) {
                tool.closeAfterRun = true;
                if (Thread.currentThread() == tool.loopThread) {
                    return; /* when run() returns */
                }
                ToolRuns.requestStop(tool, tool.runGen);
                wait = true;
            } else if (tool.closingOnLoop) {
                wait = true; /* the loop thread is closing it now */
            } else if (!isLoopThreadLocked(tool)) {
                throw new IllegalStateException("close(): call it on the loop thread \"" + tool.loopThreadName()
                        + "\" (or from any thread while it runs)");
            } else {
                wait = false;
            }
        }
        if (wait) {
            /* the run returns, closes the tool on its thread, then we go on */
            try {
                tool.closedLatch.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        closeNow(tool);
    }

    private static boolean isLoopThreadLocked(Tool tool) {
        return Thread.currentThread() == tool.loopThread
                || (tool.ptr != 0 && FutoInNative.tool_is_same_thread(tool.ptr));
    }

    /** A tool on its own thread: let the loop end (loop thread). */
    private static void shutdownOnLoop(Tool tool) {
        releaseAll(tool);
        FutoInNative.tool_release_loop(tool.ptr);
    }
}
