package org.futoin.async;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What other threads hand to a {@link Tool}'s loop thread: the tasks of
 * {@code execute()} (a queue the loop drains a bounded batch at a time),
 * {@code call()} and {@code promise(setup)}.
 */
final class ToolTasks {
    private static final int DRAIN_BUDGET = 1024;

    private ToolTasks() {
    }

    /* Tool.execute() */
    static void execute(Tool tool, Runnable task) {
        Objects.requireNonNull(task, "execute(): task is null");
        if (tool.core != 0) {
            /* no other thread can know the loop is still there */
            if (!BorrowedTools.usable(tool)) {
                throw new RejectedExecutionException("execute(): " + BorrowedTools.BORROWED_USE);
            }
            tool.immediate(task);
            return;
        }
        synchronized (tool.life) {
            if (tool.closed) {
                throw new RejectedExecutionException("Tool is closed");
            }
            tool.tasks.add(task);
            if (!tool.wake.getAndSet(true)) {
                FutoInNative.tool_post(tool.ptr);
            }
        }
    }

    /** execute() for internal marshalling (cancel, free from other
     *  threads); dropped once the tool is closed (it freed everything). */
    static void post(Tool tool, Runnable task) {
        try {
            execute(tool, task);
        } catch (RejectedExecutionException closedAlready) {
            // nothing left to do
        }
    }

    /** Loop thread: run the queued tasks (a bounded batch per call). */
    static void drain(Tool tool) {
        tool.wake.set(false);
        RecTable rt = tool.recs;
        if (rt != null) {
            rt.drain(); /* a Tool on its own thread has no end of run to do it */
        }
        for (int n = 0; n < DRAIN_BUDGET; ++n) {
            Runnable r = tool.tasks.poll();
            if (r == null) {
                return;
            }
            try {
                r.run();
            } catch (Throwable t) {
                Tool.uncaught(t);
            }
        }
        synchronized (tool.life) {
            if (!tool.closed && !tool.tasks.isEmpty() && !tool.wake.getAndSet(true)) {
                FutoInNative.tool_post(tool.ptr);
            }
        }
    }

    /* Tool.call() */
    static <T> CompletableFuture<T> call(Tool tool, Supplier<? extends T> fn) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Runnable r = () -> {
            try {
                f.complete(fn.get());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        };
        onLoop(tool, r);
        return f;
    }

    /* Tool.promise(setup) */
    static CompletableFuture<Object> promise(Tool tool, Consumer<? super AsyncSteps> setup) {
        Objects.requireNonNull(setup, "promise(): setup is null");
        CompletableFuture<Object> f = new FlowFuture();
        Runnable r = () -> {
            AsyncSteps root = null;
            try {
                root = new AsyncSteps(tool);
                setup.accept(root);
                Roots.promiseInto(root, f);
                Roots.freeWhenDone(root);
            } catch (Throwable t) {
                if (root != null) {
                    root.close();
                }
                f.completeExceptionally(t);
            }
        };
        onLoop(tool, r);
        return f;
    }

    /** call() and promise(setup): at once on the loop thread, else through execute(). */
    private static void onLoop(Tool tool, Runnable r) {
        if (tool.isLoopThread()) {
            r.run();
        } else {
            execute(tool, r);
        }
    }
}
