package org.futoin.async;

import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
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
 *
 * <p>{@code new Tool(new Tool.Options().virtualTime(true))} is a test tool
 * on a virtual clock that never waits on the wall clock: its clock
 * ({@link #nowMillis()}, from 0) moves only with {@link #advance(Duration)},
 * which runs every timer that falls due on the way, in due-time order;
 * {@link #nextDue()} says when the next one is due; {@link #run()} runs what
 * is due now and returns; {@link AsyncSteps#run()} advances from timer to
 * timer until its flow ends. See {@link Options#virtualTime(boolean)}.
 *
 * <p>A thread blocked in {@link #run()} (or {@link AsyncSteps#run()}) comes
 * back when the work is done, when another thread calls {@link #stop()}
 * (the flows are left as they are) or {@link #close()}, or when it is
 * interrupted: then the flows it waits for are cancelled, the interrupt
 * status stays set and run() throws {@link CancellationException}.
 *
 * <h2>The loop of another program</h2>
 * A Java step in a flow of a C, Python or Lua program (polyglot flows, see
 * {@link Polyglot}) runs on that program's loop: its {@link AsyncSteps#tool()}
 * is a Tool <em>borrowed</em> for that loop ({@link #isBorrowed()}), one
 * object per loop. Its timers work ({@link #immediate}, {@link #deferred},
 * {@link Handle#cancel()}, {@link #execute} and {@link #call} on the loop
 * thread); the program owns the loop, so it cannot be run, stopped or
 * closed from Java, and Java makes no roots, Throttles or Limiters on it
 * (use {@link AsyncSteps#newInstance()}). Nothing tells Java when that
 * program frees its loop, so a borrowed Tool is used only while something
 * proves the loop alive: on its loop thread while a Java step (or error
 * handler, cancel handler, loop body) of one of its flows runs, or a timer
 * of it fires, or while timers of it are pending (an idle root then keeps
 * the program from freeing the loop under them, until they have fired or
 * were cancelled). At any other time its methods throw
 * {@link IllegalStateException} instead of touching a loop that may be gone.
 */
public final class Tool implements Executor, AutoCloseable {
    long ptr;
    /* Own tools: the Recs of add()'s steps (null: global references). */
    RecTable recs;
    /* Borrowed: the futoin_tool* of the hosting program's loop (0: ours). */
    final long core;
    /* Borrowed: the thread a timer callback of it runs on now, or null. */
    volatile Thread firing;
    volatile Thread loopThread;
    final boolean dedicated;
    final boolean virtualTime;
    final Thread thread;
    final CountDownLatch terminated = new CountDownLatch(1);
    final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    final AtomicBoolean wake = new AtomicBoolean();
    /* guards the life of the loop and its runs (RunInterruptor too) */
    final Object life = new Object();
    volatile boolean closed;
    boolean closeAfterRun;
    /* close() asked for during a run is being carried out (loop thread) */
    boolean closingOnLoop;
    volatile boolean running;
    /* Runs are numbered (under `life`) so that a stop or an interrupt is
     * applied to the run it was meant for, never to a later one. */
    long runGen;
    volatile boolean stopRequested;
    final CountDownLatch closedLatch = new CountDownLatch(1);

    /** Executing roots, kept alive until they finish, in the order they
     *  started (loop thread; RootCtl has identity equality). */
    final Map<RootCtl, AsyncSteps> executing = new LinkedHashMap<>();
    /** Every root not freed yet (loop thread). */
    final Set<RootCtl> roots = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Throttles and Limiters made on this tool (loop thread). */
    final Set<SyncObject> syncs = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Pending timers and immediates (loop thread). */
    final Set<Handle> timers = Collections.newSetFromMap(new IdentityHashMap<>());

    /**
     * Options of {@link Tool#Tool(Options)}.
     *
     * <pre>{@code
     * Tool tool = new Tool(new Tool.Options().virtualTime(true));
     * }</pre>
     */
    public static final class Options {
        boolean virtualTime;

        /** The defaults: a tool on the wall clock. */
        public Options() {
        }

        /**
         * Virtual time, for tests: the tool never waits on the wall clock.
         * Its clock starts at 0 and moves only with {@link Tool#advance},
         * which runs what falls due on the way; every timer of the tool
         * follows it (step timeouts, {@link Tool#deferred}, Throttle and
         * Limiter periods). {@link Tool#run()} runs what is due now and
         * returns. What stays on the wall clock: the time slice that bounds
         * a burst of busy work, and trimming memory on idle.
         *
         * @param v true for a virtual clock (default false)
         * @return these options
         */
        public Options virtualTime(boolean v) {
            virtualTime = v;
            return this;
        }
    }

    /**
     * A tool whose loop runs on the caller's thread ({@link #run()}).
     */
    public Tool() {
        this(new Options(), null, "Tool()");
    }

    /**
     * A tool whose loop runs on the caller's thread ({@link #run()}), with
     * options (a virtual clock: {@link Options#virtualTime(boolean)}).
     *
     * @param options the options
     * @throws NullPointerException if options is null
     */
    public Tool(Options options) {
        this(Objects.requireNonNull(options, "Tool(options): options is null"), null, "Tool(options)");
    }

    /**
     * A tool whose loop runs on the caller's thread ({@link #run()}) and
     * whose flows may add by name only what {@code policy} allows (see
     * {@link #setLoadPolicy(LoadPolicy)}; it is this tool's policy from the
     * start, set once).
     *
     * @param policy what the flows of this tool may load by name
     * @throws NullPointerException if policy is null
     */
    public Tool(LoadPolicy policy) {
        this(new Options(), Objects.requireNonNull(policy, "Tool(policy): policy is null"), "Tool(policy)");
    }

    /**
     * A tool with options (a virtual clock) whose flows may add by name only
     * what {@code policy} allows (as {@link #Tool(LoadPolicy)}).
     *
     * @param options the options
     * @param policy what the flows of this tool may load by name
     * @throws NullPointerException if options or policy is null
     */
    public Tool(Options options, LoadPolicy policy) {
        this(Objects.requireNonNull(options, "Tool(options, policy): options is null"),
             Objects.requireNonNull(policy, "Tool(options, policy): policy is null"), "Tool(options, policy)");
    }

    private Tool(Options options, LoadPolicy policy, String what) {
        dedicated = false;
        virtualTime = options.virtualTime;
        thread = null;
        core = 0;
        loopThread = Thread.currentThread();
        ptr = FutoInNative.tool_new(this, false, virtualTime);
        recs = RecTable.create(ptr);
        BorrowedTools.registerOwn(this);
        terminated.countDown();
        if (policy != null) {
            policy.applyOrClose(this, what);
        }
    }

    /** A borrowed Tool over the hosting program's loop `core`. */
    Tool(long core) {
        dedicated = false;
        virtualTime = false;
        thread = null;
        this.core = core;
        terminated.countDown();
    }

    /**
     * @return true for the loop of the program that hosts this JVM (a C,
     *         Python or Lua program whose flow runs Java steps), lent to
     *         Java (see the class description)
     */
    public boolean isBorrowed() {
        return core != 0;
    }

    /** What a borrowed Tool refuses to do at all. */
    void refuseBorrowed(String what, String why) {
        if (core != 0) {
            throw new IllegalStateException(what + ": this Tool is the loop of the program that hosts this JVM; "
                    + why);
        }
    }

    private Tool(String name, boolean daemon) {
        dedicated = true;
        virtualTime = false;
        core = 0;
        CountDownLatch ready = new CountDownLatch(1);
        Throwable[] failed = new Throwable[1];
        thread = new Thread(() -> ToolRuns.loopMain(this, ready, failed), name);
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

    /**
     * A tool on a new thread whose flows may add by name only what
     * {@code policy} allows (see {@link #setLoadPolicy(LoadPolicy)}; set
     * before this returns, so before any flow of it can add a step).
     *
     * @param name the thread's name
     * @param daemon whether the thread lets the JVM exit while it runs
     * @param policy what the flows of this tool may load by name
     * @return the started tool
     * @throws NullPointerException if policy is null
     */
    public static Tool startThread(String name, boolean daemon, LoadPolicy policy) {
        Objects.requireNonNull(policy, "startThread(): policy is null");
        Tool t = new Tool(name, daemon);
        policy.applyOrClose(t, "startThread()");
        return t;
    }

    /**
     * Restricts what the flows of this tool may load by name: Java's
     * {@link AsyncSteps#addForeign(String, String, String)} and the steps
     * that steps of C, Python or Lua add by name in them. Adding a step by
     * name runs code (it loads a Java class, imports a Python module,
     * requires a Lua module or loads a shared object): never build step
     * names from input a user controls, or restrict them here. A step
     * outside the policy fails with {@code InvalidRequest} whose
     * error_info names the rule that refused it ("load policy of this
     * tool: language 'lua' is not allowed (languages: java, c)"), before
     * its language's plug-in is even looked for; the process's policy
     * ({@link LoadPolicy#setForProcess(LoadPolicy)}) applies as well.
     *
     * <p>Set once, before the flows add steps by name (steps added before
     * are not checked again): a second policy is refused and changes
     * nothing, so that code running in a flow cannot widen it.
     * {@link #Tool(LoadPolicy)} and
     * {@link #startThread(String, boolean, LoadPolicy)} set it as the tool
     * is made. Any thread.
     *
     * @param policy what the flows of this tool may load by name
     * @throws NullPointerException if policy is null
     * @throws IllegalStateException if this tool has a load policy
     *         already, is closed, or is borrowed (the program hosting this
     *         JVM sets its own)
     */
    public void setLoadPolicy(LoadPolicy policy) {
        Objects.requireNonNull(policy, "setLoadPolicy(): policy is null").setOn(this, "setLoadPolicy()");
    }

    // ---- threads ---------------------------------------------------------

    long ptr() {
        refuseBorrowed("Tool", "Java makes no roots, Throttles or Limiters on it (use asi.newInstance())");
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
        if (core != 0) {
            return BorrowedTools.usable(this);
        }
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
        if (core != 0) {
            if (!BorrowedTools.usable(this)) {
                throw new IllegalStateException(what + ": " + BorrowedTools.BORROWED_USE);
            }
            return;
        }
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

    // ---- running (ToolRuns) ---------------------------------------------

    /**
     * Runs the loop on this thread until nothing is left to do: no
     * executing flow, timer or task. This thread becomes the loop thread.
     * Not for a tool on its own thread, and not nested.
     *
     * <p>It returns early when another thread calls {@link #stop()} (the
     * flows are left as they are: a later run() goes on with them) or
     * {@link #close()}. When this thread is interrupted (also: when run()
     * is called with the interrupt status set), every flow executing on
     * the tool is cancelled (cancel handlers run, their promises fail with
     * CancellationException), run() returns at once and throws
     * {@link CancellationException}; the interrupt status stays set.
     *
     * @throws CancellationException if this thread was interrupted
     */
    public void run() {
        ToolRuns.runFor(this, null, "run()");
    }

    // ---- virtual time (VirtualClock) ------------------------------------

    /**
     * @return true for a tool on a virtual clock ({@link Options#virtualTime(boolean)});
     *         a borrowed Tool answers for the hosting program's loop
     */
    public boolean isVirtualTime() {
        return VirtualClock.isVirtualTime(this);
    }

    /**
     * Virtual time: moves the clock {@code ms} milliseconds on and runs
     * everything that falls due up to then, in due-time order (the timers
     * due at each time in the order they were started, then what they made
     * ready), including timers started on the way; the clock then stands at
     * the old time + ms. {@code advance(0)} runs what is due now, as
     * {@link #run()}. Never waits on the wall clock.
     *
     * <p>Loop thread, and not from inside the loop (a step, a callback, or
     * while run() runs).
     *
     * @param ms milliseconds, &gt;= 0
     * @throws IllegalArgumentException for a negative delay
     * @throws IllegalStateException on a tool on the wall clock, on another
     *         thread, from inside the loop, or a clock that would pass its end
     */
    public void advance(long ms) {
        VirtualClock.advance(this, ms);
    }

    /**
     * {@link #advance(long)} by a Duration; a fraction of a millisecond is
     * rounded up.
     *
     * @param d how far, not negative
     * @throws IllegalArgumentException for a negative or too long duration
     */
    public void advance(Duration d) {
        VirtualClock.advance(this, d);
    }

    /**
     * When the tool's next timer is due: the time from now ({@link #nowMillis()})
     * until it, zero when it is due already, so that
     * {@code advance(nextDue().get())} reaches it exactly. Timers of every
     * kind count. On a tool on the wall clock it answers for the wall clock.
     * Loop thread.
     *
     * @return the delay, or empty when no timer is pending
     */
    public Optional<Duration> nextDue() {
        long ms = VirtualClock.nextDueMillis(this);
        return ms < 0 ? Optional.empty() : Optional.of(Duration.ofMillis(ms));
    }

    /**
     * The tool's clock in milliseconds, which its timers are measured
     * against: from 0, moved only by {@link #advance} on a virtual-time
     * tool; libuv's loop time (monotonic, from an arbitrary point) on the
     * wall clock. Loop thread.
     *
     * @return the clock's time in ms
     */
    public long nowMillis() {
        return VirtualClock.nowMillis(this);
    }

    /* The listener of setHooks(), or null (read by Dispatch.hook()). */
    volatile java.util.function.Consumer<HookEvent> hooks;

    /**
     * Watches this tool's flows (futoin/sys/hooks.h): {@code listener} gets
     * every event (flow started/finished, step entered/left, error
     * raised/handled, cancel, wait begun/ended, sync acquired/released) on
     * the loop thread at the moment it happens, as a {@link HookEvent}.
     * {@code null} clears it. Any time on the loop thread, from inside the
     * listener too (the new one serves from the next event). The listener
     * must not change flows; what it throws goes to the thread's uncaught
     * exception handler.
     *
     * @param listener the events' listener, or null
     */
    public void setHooks(java.util.function.Consumer<HookEvent> listener) {
        refuseBorrowed("setHooks()", "that program sets its hooks");
        checkLoopThread("setHooks()");
        hooks = listener;
        if (FutoInNative.tool_set_hooks(ptr, listener != null) != 0) {
            hooks = null;
            throw new IllegalStateException("setHooks(): refused by the runtime");
        }
    }

    /**
     * A live dump (futoin_tool_dump()): every live root of this tool, what
     * each of its flows waits on and since when, its async stack and state
     * keys, one {@code root=<id> ...} line each (the format is documented in
     * futoin/async.h). Loop thread.
     *
     * @return the report
     */
    public String dump() {
        checkLoopThread("dump()");
        return new String(FutoInNative.tool_dump(ptr), java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * Makes the {@link #run()} in progress (on whichever thread) return
     * after the callback it is running, leaving the flows as they are:
     * they go on at the next run() (or are cancelled by {@link #close()}).
     * A {@link AsyncSteps#run()} whose flow is not done then cancels it and
     * throws CancellationException. Any thread; it does not wait.
     *
     * @return true if a run() was in progress and will return; false if
     *         none was (nothing is kept for a later run())
     * @throws IllegalStateException for a tool on its own thread (use
     *         {@link #close()})
     */
    public boolean stop() {
        return ToolRuns.stop(this);
    }

    /**
     * One non-blocking pass of the loop on this thread.
     *
     * @return true if work remains
     */
    public boolean runOnce() {
        return ToolRuns.runOnce(this);
    }

    // ---- Executor (ToolTasks) -------------------------------------------

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
        ToolTasks.execute(this, task);
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
        return ToolTasks.call(this, fn);
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
        return ToolTasks.promise(this, setup);
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
                BorrowedTools.unborrowIfIdle(tool);
            }
        }

        void fire() {
            rec = 0;
            tool.timers.remove(this);
            Thread outer = tool.firing;
            if (tool.core != 0) {
                tool.firing = Thread.currentThread(); /* its loop calls us: alive */
            }
            try {
                fn.run();
            } catch (Throwable t) {
                uncaught(t);
            } finally {
                if (tool.core != 0) {
                    tool.firing = outer;
                    BorrowedTools.unborrowIfIdle(tool);
                }
            }
        }
    }

    private Handle schedule(String what, long delayMs, Runnable fn) {
        checkLoopThread(what);
        Objects.requireNonNull(fn, what + ": callback is null");
        BorrowedTools.holdForTimers(this);
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
     * no exception can be thrown at the call site). By default it is
     * printed to {@code System.err}. Every report is counted
     * ({@link #misuseCount()}). A completion that lost the race to its
     * step's timeout or a cancel is not misuse and is not reported (its
     * success() returned false).
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
        if (core != 0) {
            checkLoopThread("misuseCount()");
            return FutoInNative.core_misuse_count(core);
        }
        return FutoInNative.tool_misuse_count(ptr());
    }

    /**
     * @return the {@code futoin_tool*} address (for other languages)
     */
    public long address() {
        return core != 0 ? core : FutoInNative.tool_ptr(ptr());
    }

    // ---- closing (ToolClose) --------------------------------------------

    /**
     * Closes the tool: every root is freed (running flows are cancelled:
     * their promises fail with CancellationException), Throttles and
     * Limiters made on it are freed, pending timers dropped, the loop
     * freed. A tool on its own thread is stopped and joined (unless called
     * on that thread: then it stops after the current callback). Otherwise
     * call it on the loop thread — inside run() it takes effect when run()
     * returns — or, while a run() is in progress on the loop thread, from
     * any other thread: it stops that run (as {@link #stop()}), which then
     * closes the tool, and waits until it is closed. Idempotent.
     */
    @Override
    public void close() {
        ToolClose.close(this);
    }

    /**
     * @return true once {@link #close()} was called
     */
    public boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        if (core != 0) {
            return String.format("Tool[borrowed 0x%x]", core);
        }
        return "Tool[" + (dedicated ? "thread " : "caller thread ") + loopThreadName() + (closed ? ", closed]" : "]");
    }
}
