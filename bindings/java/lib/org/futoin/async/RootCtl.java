package org.futoin.async;

import java.util.Arrays;
import java.util.Collections;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The life of one root: its native handle, whether it executes, how its
 * outcome is delivered (future, unhandled-error handler) and its release.
 *
 * <p>Also the {@link java.lang.ref.Cleaner} action of its AsyncSteps object,
 * so it must never refer to that object: an executing root is kept alive
 * by {@link Tool#executing} instead, and a root nobody refers to any more
 * is freed on the loop thread (the cleaner thread only posts the free).
 * Everything else runs on the loop thread, except {@link #cancelFromAnyThread}.
 *
 * <p>Its phase decides the outcome exactly once: IDLE, RUNNING (executing),
 * CANCELLING (a cancel() claimed it; the loop thread applies it). A cancel
 * from another thread claims it atomically, so cancel() returns true only
 * if the root was executing and its outcome is the cancellation, even when
 * its last step finishes before the posted cancel reaches the loop.
 */
final class RootCtl implements Runnable {
    /** Internal: the last step a run appends, gets all values. */
    @FunctionalInterface
    interface ValuesStep {
        void execute(AsyncSteps asi, Object[] values) throws Exception;
    }

    static final int IDLE = 0, RUNNING = 1, CANCELLING = 2;

    volatile long bsi;
    final Tool tool;
    final AtomicInteger phase = new AtomicInteger(IDLE);
    boolean freeWhenDone;
    private CompletableFuture<Object> future;
    private Consumer<? super FutoInError> onError;

    RootCtl(long bsi, Tool tool) {
        this.bsi = bsi;
        this.tool = tool;
    }

    /** execute(): the outcome goes to `fut` and/or `handler`. */
    void start(AsyncSteps root, Consumer<? super FutoInError> handler, CompletableFuture<Object> fut) {
        if (phase.get() != IDLE) {
            throw new IllegalStateException("execute(): the root is executing already");
        }
        long b = bsi;
        FutoInNative.add(b, new Rec((ValuesStep) this::finished, Rec.ALL, null, tool, null), Rec.ALL, false);
        phase.set(RUNNING);
        onError = handler;
        future = fut;
        tool.executing.put(this, root);
        try {
            FutoInNative.execute(b, new Rec(this, 0, null, tool, null));
        } catch (RuntimeException e) {
            settle();
            throw e;
        }
    }

    /** For StateMap: the root's handle while it may be used now, else 0. */
    long liveHandle() {
        return bsi != 0 && tool != null && tool.isLoopThread() ? bsi : 0;
    }

    /** Not executing any more: the phase it was in (IDLE: it was not). */
    private int settle() {
        int was = phase.getAndSet(IDLE);
        if (was == IDLE) {
            return IDLE;
        }
        tool.executing.remove(this);
        if (freeWhenDone) {
            ToolTasks.post(tool, this::freeOnLoop);
        }
        return was;
    }

    private static CancellationException cancellation() {
        return new CancellationException("AsyncSteps cancelled");
    }

    private void finished(AsyncSteps asi, Object[] values) {
        CompletableFuture<Object> f = future;
        future = null;
        onError = null;
        int was = settle();
        if (was == IDLE) {
            return;
        }
        if (was == CANCELLING) {
            if (f != null) {
                f.completeExceptionally(cancellation()); /* the cancel() that returned true won */
            }
            return;
        }
        if (f != null) {
            f.complete(values.length == 0 ? null
                    : values.length == 1 ? values[0]
                    : Collections.unmodifiableList(Arrays.asList(values)));
        }
    }

    /** execute()'s unhandled-error callback. */
    void unhandled(long handle, String code) {
        CompletableFuture<Object> f = future;
        Consumer<? super FutoInError> h = onError;
        future = null;
        onError = null;
        int was = settle();
        if (was == IDLE) {
            return;
        }
        if (was == CANCELLING) {
            if (f != null) {
                f.completeExceptionally(cancellation());
            }
            return;
        }
        FutoInError err = errorOf(handle, code);
        if (f != null) {
            f.completeExceptionally(err);
        }
        if (h != null) {
            try {
                h.accept(err);
            } catch (Throwable t) {
                Tool.uncaught(t);
            }
        } else if (f == null) {
            System.err.println("futoin: unhandled error in AsyncSteps: " + err);
        }
    }

    /** The exception of a flow's error: the one the flow failed with, when
     *  it has the same code and is of the code's class (its stack trace
     *  shows where), else a new one of the code's class (a standard code's
     *  subclass, so that it can be caught by class however it was raised)
     *  with the Java exception as cause. */
    static FutoInError errorOf(long handle, String code) {
        String info = ErrorState.info(handle);
        Throwable last = ErrorState.cause(handle);
        FutoInError e = Errors.create(code, info, last);
        if (last instanceof FutoInError && ((FutoInError) last).code().equals(code)
                && last.getClass() == e.getClass()) {
            e = (FutoInError) last;
        }
        StackTraceElement[] stack = AsyncStack.of(handle, code);
        if (stack.length > 0) {
            e.attachAsyncStack(stack);
        }
        return e;
    }

    /** The root was cancelled (cancel(), close(), its tool closed). */
    void cancelled() {
        CompletableFuture<Object> f = future;
        future = null;
        onError = null;
        if (settle() != IDLE && f != null) {
            f.completeExceptionally(cancellation());
        }
    }

    /** cancel() on the loop thread: true if it was executing and this call
     *  cancelled it. */
    boolean cancelOnLoop() {
        if (bsi != 0 && phase.compareAndSet(RUNNING, CANCELLING)) {
            applyCancel();
            return true;
        }
        return false;
    }

    /** cancel() from another thread: claims the outcome now, cancels on the
     *  loop thread. True if it was executing and this call cancelled it. */
    boolean cancelFromAnyThread() {
        if (bsi != 0 && phase.compareAndSet(RUNNING, CANCELLING)) {
            ToolTasks.post(tool, this::applyCancel);
            return true;
        }
        return false;
    }

    /** Loop thread: cancel the native flow of a claimed cancel (if it has
     *  not ended meanwhile). */
    private void applyCancel() {
        long b = bsi;
        if (b != 0 && phase.get() == CANCELLING) {
            FutoInNative.cancel(b);
            cancelled();
        }
    }

    /** Free the native root (cancelling a running flow). Loop thread. */
    void freeOnLoop() {
        long b = bsi;
        if (b == 0) {
            return;
        }
        bsi = 0;
        if (tool != null) { /* a root newInstance() made with no Tool */
            tool.roots.remove(this);
        }
        try {
            synchronized (Completions.LOCK) { /* no completion mid-free */
                FutoInNative.free(b);
            }
        } finally {
            if (tool != null && tool.recs != null) {
                tool.recs.drain(); /* the steps it released, outside any run */
            }
            cancelled();
        }
    }

    /**
     * AsyncSteps.run() of this root ({@code root}): executes it and runs
     * its tool's loop on this thread until the flow is done (a Tool on its
     * own thread: waits for it); the flow's values, or its error thrown.
     */
    Object runUntilDone(AsyncSteps root) {
        CompletableFuture<Object> f;
        if (tool.isDedicated()) {
            if (tool.isLoopThread()) {
                throw new IllegalStateException("run(): would block the loop thread; use promise() or execute()");
            }
            f = awaitOnItsThread(root);
        } else {
            f = root.promise();
            ToolRuns.runFor(tool, this, "run()"); /* throws CancellationException when interrupted */
            if (tool.isVirtualTime()) {
                /* a virtual clock: on from one due timer to the next */
                while (!f.isDone() && bsi != 0) {
                    long ms = VirtualClock.nextDueMillis(tool);
                    if (ms < 0) {
                        throw new IllegalStateException("run(): the flow still waits and no timer of the "
                                + "virtual-time Tool is left to advance to (an event from another thread? "
                                + "join it first)");
                    }
                    tool.advance(ms);
                }
            }
            if (!f.isDone() && bsi != 0) {
                cancelOnLoop(); /* the loop was stopped: nobody would drive the flow */
            }
        }
        if (!f.isDone()) {
            throw new IllegalStateException("run(): the loop stopped before the flow finished");
        }
        try {
            return f.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException) {
                throw (RuntimeException) e.getCause();
            }
            throw e;
        }
    }

    /** run() of a root of a tool on its own thread: start it there and wait. */
    private CompletableFuture<Object> awaitOnItsThread(AsyncSteps root) {
        CompletableFuture<CompletableFuture<Object>> started = tool.call(root::promise);
        try {
            CompletableFuture<Object> f = started.get();
            try {
                f.get(); /* FlowFuture: an interrupt here cancels the flow */
            } catch (ExecutionException | CancellationException settled) {
                // rethrown by run()
            }
            return f;
        } catch (InterruptedException e) {
            started.thenAccept(f -> f.cancel(false)); /* cancels the root, once it started */
            Thread.currentThread().interrupt();
            throw new CancellationException("run(): interrupted; its flow was cancelled");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException) {
                throw (RuntimeException) e.getCause();
            }
            throw new IllegalStateException("run(): " + e.getCause(), e.getCause());
        }
    }

    /** Cleaner: the AsyncSteps object is unreachable. Any thread. */
    @Override
    public void run() {
        ToolTasks.post(tool, this::freeOnLoop); /* dropped if the tool freed it already */
    }
}
