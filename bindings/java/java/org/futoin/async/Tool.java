package org.futoin.async;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The AsyncTool (FTN12 §2.6): one libuv event loop on one thread, the
 * <em>loop thread</em>, where every flow of this tool runs.
 *
 * <ul>
 * <li>{@code new Tool()}: the loop runs on the caller's thread, in
 * {@link #run()} (until nothing is left to do) or {@link #runOnce()}; the
 * creating thread is the loop thread until another one calls run().</li>
 * <li>{@link #startThread(String)}: the loop runs on a dedicated thread
 * until {@link #close()}; build and start flows with
 * {@link #promise(Consumer)} or {@link #execute(Runnable)} from anywhere.</li>
 * </ul>
 *
 * <p>It is an {@link Executor}: {@link #execute(Runnable)} runs the task on
 * the loop thread, after the current callback, from any thread. It is
 * {@link AutoCloseable}: {@link #close()} frees every root (cancelling
 * running flows), the Throttles and Limiters made on it, pending timers,
 * and the loop; a Tool is not freed by the garbage collector.
 */
public final class Tool implements Executor, AutoCloseable {
    private static final int DRAIN_BUDGET = 1024;

    private long ptr;
    private volatile Thread loopThread;
    private final boolean dedicated;
    private final Thread thread;
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean wake = new AtomicBoolean();
    private final Object life = new Object();
    private volatile boolean closed;
    private boolean closeAfterRun;
    private volatile boolean running;

    /** Executing roots, kept alive until they finish (loop thread). */
    final Map<RootCtl, AsyncSteps> executing = new IdentityHashMap<>();
    /** Every root not freed yet (loop thread). */
    final Set<RootCtl> roots = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Throttles and Limiters made on this tool (loop thread). */
    final Set<SyncObject> syncs = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Pending timers and immediates (loop thread). */
    private final Set<Handle> timers = Collections.newSetFromMap(new IdentityHashMap<>());

    /**
     * A tool whose loop runs on the caller's thread ({@link #run()}).
     */
    public Tool() {
        dedicated = false;
        thread = null;
        loopThread = Thread.currentThread();
        ptr = FutoInNative.tool_new(this, false);
        terminated.countDown();
    }

    private Tool(String name, boolean daemon) {
        dedicated = true;
        CountDownLatch ready = new CountDownLatch(1);
        Throwable[] failed = new Throwable[1];
        thread = new Thread(() -> loopMain(ready, failed), name);
        thread.setDaemon(daemon);
        thread.start();
        try {
            ready.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Tool: interrupted while starting", e);
        }
        if (failed[0] != null) {
            throw new IllegalStateException("Tool: the loop thread failed to start", failed[0]);
        }
    }

    /**
     * A tool whose loop runs on a new daemon thread until {@link #close()}.
     *
     * @param name the thread's name
     * @return the started tool
     */
    public static Tool startThread(String name) {
        return new Tool(name, true);
    }

    /**
     * A tool on a new thread.
     *
     * @param name the thread's name
     * @param daemon whether the thread lets the JVM exit while it runs
     * @return the started tool
     */
    public static Tool startThread(String name, boolean daemon) {
        return new Tool(name, daemon);
    }

    private void loopMain(CountDownLatch ready, Throwable[] failed) {
        try {
            loopThread = Thread.currentThread();
            ptr = FutoInNative.tool_new(this, true);
        } catch (Throwable t) {
            failed[0] = t;
            terminated.countDown();
            ready.countDown();
            return;
        }
        ready.countDown();
        try {
            running = true;
            FutoInNative.tool_run(ptr); /* until shutdownOnLoop() lets go */
        } catch (Throwable t) {
            uncaught(t);
        } finally {
            running = false;
            try {
                freeNative();
            } finally {
                terminated.countDown();
            }
        }
    }

    // ---- threads ---------------------------------------------------------

    long ptr() {
        if (closed && ptr == 0) {
            throw new IllegalStateException("Tool is closed");
        }
        return ptr;
    }

    boolean isDedicated() {
        return dedicated;
    }

    String loopThreadName() {
        Thread t = loopThread;
        return t == null ? "?" : t.getName();
    }

    /**
     * FTN12 {@code is_same_thread()}.
     *
     * @return true on the loop thread
     */
    public boolean isLoopThread() {
        Thread c = Thread.currentThread();
        if (c == loopThread) {
            return true;
        }
        /* The loop may have moved (run() on another thread, a native
         * thread driving it): ask the runtime, and remember. */
        synchronized (life) {
            if (ptr != 0 && FutoInNative.tool_is_same_thread(ptr)) {
                loopThread = c;
                return true;
            }
        }
        return false;
    }

    void checkLoopThread(String what) {
        if (closed) {
            throw new IllegalStateException(what + ": the Tool is closed");
        }
        if (!isLoopThread()) {
            throw new IllegalStateException(what + ": called from thread \"" + Thread.currentThread().getName()
                    + "\", not the loop thread \"" + loopThreadName() + "\"");
        }
    }

    static void uncaught(Throwable t) {
        Thread c = Thread.currentThread();
        c.getUncaughtExceptionHandler().uncaughtException(c, t);
    }

    // ---- running ---------------------------------------------------------

    /**
     * Runs the loop on this thread until nothing is left to do: no
     * executing flow, timer or task. This thread becomes the loop thread.
     * Not for a tool on its own thread, and not nested.
     */
    public void run() {
        if (dedicated) {
            throw new IllegalStateException("run(): this Tool runs on its own thread");
        }
        enter("run()");
        try {
            do {
                drain();
                if (FutoInNative.tool_run(ptr) != 0) {
                    throw new IllegalStateException("run(): refused by the runtime");
                }
            } while (!tasks.isEmpty());
        } finally {
            leaveRun();
        }
    }

    /**
     * One non-blocking pass of the loop on this thread.
     *
     * @return true if work remains
     */
    public boolean runOnce() {
        if (dedicated) {
            throw new IllegalStateException("runOnce(): this Tool runs on its own thread");
        }
        enter("runOnce()");
        try {
            drain();
            int rc = FutoInNative.tool_run_nowait(ptr);
            if (rc < 0) {
                throw new IllegalStateException("runOnce(): refused by the runtime");
            }
            return rc > 0 || !tasks.isEmpty();
        } finally {
            leaveRun();
        }
    }

    private void enter(String what) {
        synchronized (life) {
            if (closed) {
                throw new IllegalStateException(what + ": the Tool is closed");
            }
            if (running) {
                throw new IllegalStateException(what + ": the loop is running already (nested, or on another thread)");
            }
            running = true;
        }
        loopThread = Thread.currentThread();
    }

    private void leaveRun() {
        boolean close;
        synchronized (life) {
            running = false;
            close = closeAfterRun;
        }
        if (close) {
            close();
        }
    }

    // ---- Executor --------------------------------------------------------

    /**
     * Runs {@code task} on the loop thread after the current callback. Any
     * thread; never runs the task inline. A task's exception goes to the
     * loop thread's uncaught-exception handler. A tool that runs on the
     * caller's thread runs tasks while some thread is in {@link #run()}.
     *
     * @param task the task
     * @throws RejectedExecutionException once the tool is closed
     */
    @Override
    public void execute(Runnable task) {
        Objects.requireNonNull(task, "execute(): task is null");
        synchronized (life) {
            if (closed) {
                throw new RejectedExecutionException("Tool is closed");
            }
            tasks.add(task);
            if (!wake.getAndSet(true)) {
                FutoInNative.tool_post(ptr);
            }
        }
    }

    /** execute() for internal marshalling (cancel, free from other
     *  threads); dropped once the tool is closed (it freed everything). */
    void post(Runnable task) {
        try {
            execute(task);
        } catch (RejectedExecutionException closedAlready) {
            // nothing left to do
        }
    }

    /** Loop thread: run the queued tasks (a bounded batch per call). */
    void drain() {
        wake.set(false);
        for (int n = 0; n < DRAIN_BUDGET; ++n) {
            Runnable r = tasks.poll();
            if (r == null) {
                return;
            }
            try {
                r.run();
            } catch (Throwable t) {
                uncaught(t);
            }
        }
        synchronized (life) {
            if (!closed && !tasks.isEmpty() && !wake.getAndSet(true)) {
                FutoInNative.tool_post(ptr);
            }
        }
    }

    /**
     * Runs {@code fn} on the loop thread and returns its result: at once on
     * the loop thread, else through {@link #execute(Runnable)}.
     *
     * @param <T> result type
     * @param fn what to run
     * @return the result, completed on the loop thread
     */
    public <T> CompletableFuture<T> call(Supplier<? extends T> fn) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Runnable r = () -> {
            try {
                f.complete(fn.get());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        };
        if (isLoopThread()) {
            r.run();
        } else {
            execute(r);
        }
        return f;
    }

    /**
     * Builds a root on the loop thread with {@code setup}, starts it, and
     * frees it when it is done. Any thread.
     *
     * <pre>{@code
     * Object v = tool.promise(root -> root.add(asi -> asi.success(1))).get();
     * }</pre>
     *
     * @param setup adds the steps
     * @return the flow's outcome, as {@link AsyncSteps#promise()}
     */
    public CompletableFuture<Object> promise(Consumer<? super AsyncSteps> setup) {
        Objects.requireNonNull(setup, "promise(): setup is null");
        CompletableFuture<Object> f = new CompletableFuture<>();
        Runnable r = () -> {
            AsyncSteps root = null;
            try {
                root = new AsyncSteps(this);
                setup.accept(root);
                root.promiseInto(f);
                root.freeWhenDone();
            } catch (Throwable t) {
                if (root != null) {
                    root.close();
                }
                f.completeExceptionally(t);
            }
        };
        if (isLoopThread()) {
            r.run();
        } else {
            execute(r);
        }
        return f;
    }

    // ---- timers (FTN12 AsyncTool) -----------------------------------------

    /**
     * A scheduled callback of {@link #immediate} / {@link #deferred}.
     * Loop thread.
     */
    public static final class Handle {
        private final Tool tool;
        private final Runnable fn;
        private long rec;

        private Handle(Tool tool, Runnable fn) {
            this.tool = tool;
            this.fn = fn;
        }

        /**
         * @return true while the callback is scheduled (FTN12 {@code is_valid})
         */
        public boolean isValid() {
            return rec != 0;
        }

        /**
         * Cancels the callback; no-op if it ran or was cancelled (FTN12 {@code cancel}).
         */
        public void cancel() {
            if (rec != 0) {
                tool.checkLoopThread("Handle.cancel()");
                long r = rec;
                rec = 0;
                tool.timers.remove(this);
                FutoInNative.tool_cancel_timer(tool.ptr, r);
            }
        }

        void fire() {
            rec = 0;
            tool.timers.remove(this);
            try {
                fn.run();
            } catch (Throwable t) {
                uncaught(t);
            }
        }
    }

    private Handle schedule(String what, long delayMs, Runnable fn) {
        checkLoopThread(what);
        Objects.requireNonNull(fn, what + ": callback is null");
        Handle h = new Handle(this, fn);
        h.rec = FutoInNative.tool_schedule(ptr, delayMs, h);
        timers.add(h);
        return h;
    }

    /**
     * Schedules {@code fn} after the current callback (FTN12
     * {@code immediate}). Loop thread; from other threads use
     * {@link #execute(Runnable)}.
     *
     * @param fn the callback
     * @return its handle
     */
    public Handle immediate(Runnable fn) {
        return schedule("immediate()", -1, fn);
    }

    /**
     * Schedules {@code fn} after {@code delayMs} (FTN12 {@code deferred}).
     * Loop thread.
     *
     * @param delayMs the delay in milliseconds
     * @param fn the callback
     * @return its handle
     */
    public Handle deferred(long delayMs, Runnable fn) {
        if (delayMs < 0) {
            throw new IllegalArgumentException("deferred(): negative delay");
        }
        return schedule("deferred()", delayMs, fn);
    }

    private volatile Consumer<String> misuseHandler;

    /**
     * Where misuse goes that the runtime reports outside any Java call (so
     * no exception can be thrown at the call site), e.g. a completion from
     * another thread that arrived after its step had finished. By default
     * it is printed to {@code System.err}, except for completions from
     * other threads that lost a race against a timeout or cancel: those
     * are a normal outcome. Every report is counted ({@link #misuseCount()}).
     *
     * @param handler gets the message, on the thread that misused the API;
     *        null restores the default
     */
    public void onMisuse(Consumer<String> handler) {
        misuseHandler = handler;
    }

    void misuse(String message) {
        Consumer<String> h = misuseHandler;
        if (h != null) {
            h.accept(message);
        } else if (!message.contains("from another thread") && !message.contains("already completed")) {
            System.err.println("futoin: InternalError: " + message);
        }
    }

    /**
     * @return misuses the runtime reported on this tool so far
     */
    public long misuseCount() {
        return FutoInNative.tool_misuse_count(ptr());
    }

    /**
     * @return the {@code futoin_tool*} address (for other languages)
     */
    public long address() {
        return FutoInNative.tool_ptr(ptr());
    }

    // ---- closing -----------------------------------------------------------

    /** Loop thread: free roots, sync objects and timers. */
    private void releaseAll() {
        drain();
        for (RootCtl c : new ArrayList<>(roots)) {
            c.freeOnLoop();
        }
        for (SyncObject s : new ArrayList<>(syncs)) {
            s.closeQuietly();
        }
        for (Handle h : new ArrayList<>(timers)) {
            h.cancel();
        }
    }

    private void freeNative() {
        long p;
        synchronized (life) {
            closed = true;
            p = ptr;
        }
        if (p == 0) {
            return;
        }
        tasks.clear();
        int rc = FutoInNative.tool_free(p);
        if (rc != 0) {
            throw new IllegalStateException("Tool.close(): roots of other owners are still alive (" + rc + ")");
        }
        synchronized (life) {
            ptr = 0;
        }
    }

    /**
     * Closes the tool: every root is freed (running flows are cancelled:
     * their promises fail with CancellationException), Throttles and
     * Limiters made on it are freed, pending timers dropped, the loop
     * freed. A tool on its own thread is stopped and joined (unless called
     * on that thread: then it stops after the current callback). Otherwise
     * call it on the loop thread; inside run() it takes effect when run()
     * returns. Idempotent.
     */
    @Override
    public void close() {
        if (dedicated) {
            synchronized (life) {
                if (!closed) {
                    tasks.add(this::shutdownOnLoop);
                    if (!wake.getAndSet(true)) {
                        FutoInNative.tool_post(ptr);
                    }
                    closed = true;
                }
            }
            if (Thread.currentThread() != thread) {
                try {
                    terminated.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return;
        }
        synchronized (life) {
            if (closed) {
                return;
            }
            if (running) {
                if (Thread.currentThread() != loopThread) {
                    throw new IllegalStateException("close(): the loop runs on thread \"" + loopThreadName() + "\"");
                }
                closeAfterRun = true;
                return;
            }
            if (!isLoopThreadLocked()) {
                throw new IllegalStateException("close(): call it on the loop thread \"" + loopThreadName() + "\"");
            }
        }
        releaseAll();
        freeNative();
    }

    private boolean isLoopThreadLocked() {
        return Thread.currentThread() == loopThread
                || (ptr != 0 && FutoInNative.tool_is_same_thread(ptr));
    }

    /** A tool on its own thread: let the loop end (loop thread). */
    private void shutdownOnLoop() {
        releaseAll();
        FutoInNative.tool_release_loop(ptr);
    }

    /**
     * @return true once {@link #close()} was called
     */
    public boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "Tool[" + (dedicated ? "thread " : "caller thread ") + loopThreadName() + (closed ? ", closed]" : "]");
    }
}
