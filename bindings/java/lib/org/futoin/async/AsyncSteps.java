package org.futoin.async;

import java.lang.ref.Cleaner;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * FTN12 AsyncSteps over libfutoin_async: a root flow you build and run, and
 * the handle ({@code asi}) every step, error handler and loop body gets.
 *
 * <pre>{@code
 * try (Tool tool = new Tool(); AsyncSteps root = new AsyncSteps(tool)) {
 *     root.add(asi -> asi.success(21))
 *         .add((asi, v) -> asi.success((Integer) v * 2),
 *              (asi, code) -> System.out.println("failed: " + code));
 *     Object result = root.run();          // 42
 * }
 * }</pre>
 *
 * <h2>Values</h2>
 * {@code success(…)} takes at most 4 values (FTN12 {@code FutoInArgs}); they
 * cross as FTN12 binary values, so a step in another language gets them as
 * its own types: {@code Integer} (INT32), {@code Long} (INT64),
 * {@code Double}, {@code Float}, {@code Boolean}, {@code String} (UTF-8),
 * {@code byte[]} and the other primitive arrays. Any other object, and
 * {@code null}, travels as a custom value that holds a JNI global reference
 * and comes back as the very same object; the reference is released
 * exactly once. Steps of the next level get the values as arguments
 * ({@link Step1} … {@link Step4}); values of other languages that Java has
 * no form for arrive as {@link ForeignValue} and can be passed on.
 *
 * <h2>Errors</h2>
 * {@link #error(String, String)} reports the error and throws a
 * {@link FutoInError}, which ends the step (the trampoline knows it was
 * reported). Throwing a {@code FutoInError} does the same; any other
 * {@code Throwable} becomes {@code InternalError} with its text
 * ({@code toString()}) as {@code error_info} and the {@code Throwable}
 * kept as the flow's {@code last_exception} (and as the cause of the
 * flow's error). {@link #breakLoop()} and {@link #continueLoop()} throw a
 * {@link LoopSignal}. Any code can be raised; see {@link FutoInError}.
 *
 * <h2>Threads</h2>
 * A root and its steps live on the loop thread of their {@link Tool}. From
 * another thread only these are allowed: {@code success()} / {@code error()}
 * of a step that waits ({@link #waitExternal()}, {@link #setTimeout},
 * {@link #setCancel}) — posted to the loop thread by the runtime; one that
 * lost the race to the step's timeout or a cancel returns false / null,
 * quietly — and {@link #cancel()} / {@link #close()} of a root, marshalled
 * to the loop thread. Anything else throws {@link IllegalStateException}
 * at the call. An interrupt of a thread blocked in {@link #run()} cancels
 * the flow (see {@link Tool}).
 *
 * <h2>Handles</h2>
 * A step's handle is valid while its callback runs; a step that waits keeps
 * it until it completes (or is cancelled). A call through the handle of a
 * finished step throws {@link IllegalStateException}. A root is
 * {@link AutoCloseable}: {@link #close()} frees it (cancelling it if it
 * runs); a root nobody refers to is freed after it was garbage collected;
 * an executing root is kept alive by its tool until it finishes.
 */
public final class AsyncSteps implements AutoCloseable {
    static final Cleaner CLEANER = Cleaner.create();

    static final int ROOT = 0, STEP = 1, BORROWED = 2;

    /* The fields that are not private are shared with the package-private
     * classes that hold the rest of the implementation, one concern each:
     * StepStates (a step handle's states, the checks of every call),
     * KeptSuccess (a success() kept for the trampoline), Completions
     * (success()/error() inside the callback or from outside it),
     * AwaitStep (the step of await()), Loops (loop(), repeat(), forEach(),
     * break and continue), Roots (execute(), promise(), run(), cancel(),
     * close(), newInstance() of a root); PackedValues holds values in the
     * form the native calls take; RootCtl a root's life and run(). */
    final long bsi;                /* steps and borrowed handles */
    final RootCtl ctl;             /* roots: bsi lives here (0 once freed) */
    final Tool tool;               /* null for a foreign borrowed handle */
    final Rec rec;                 /* steps: the record that runs them */
    final int kind;
    /* the loop thread of a step of a flow without a Tool of ours, or null */
    private final Thread loop;
    /* a step's state (StepStates.LIVE ... LOST), only through StepStates.ST */
    int st;
    /* its cancel handler's record: a waiting step dies with that one too */
    Rec cancelRec;
    StateMap state;
    /* What ended the step inside its callback ("error()", "breakLoop()",
     * "continueLoop()") when its exception was caught, so later flow calls
     * through the handle are refused; null otherwise. Loop thread. */
    String ended;
    /* A success() kept for the trampoline (KeptSuccess), or 0. */
    long pending;
    /* The next step's handle, written by FutoInNative.chain() (glue/jni_steps.c). */
    @SuppressWarnings("unused")
    long chained;

    /**
     * A new root on {@code tool}. Loop thread of the tool.
     *
     * @param tool the tool whose loop runs the flow
     */
    public AsyncSteps(Tool tool) {
        Objects.requireNonNull(tool, "AsyncSteps(tool): tool is null");
        tool.checkLoopThread("new AsyncSteps(tool)");
        this.tool = tool;
        this.bsi = 0;
        this.rec = null;
        this.kind = ROOT;
        this.loop = null;
        this.ctl = new RootCtl(FutoInNative.root_new(tool.ptr()), tool);
        tool.roots.add(ctl);
        CLEANER.register(this, ctl);
    }

    /** A step handle, made by the trampolines (on the loop thread). */
    AsyncSteps(long bsi, Tool tool, Rec rec) {
        this.bsi = bsi;
        this.tool = tool;
        this.rec = rec;
        this.kind = STEP;
        this.ctl = null;
        /* a step of a flow no Tool of ours runs (a C, Python or Lua host):
         * the thread that runs it is the loop thread, no JNI call to ask */
        this.loop = tool == null ? Thread.currentThread() : null;
    }

    AsyncSteps(long bsi, Tool tool, boolean owned) {
        this.tool = tool;
        this.loop = null;
        this.rec = null;
        if (owned) {
            this.kind = ROOT;
            this.bsi = 0;
            this.ctl = new RootCtl(bsi, tool);
            if (tool != null) {
                tool.roots.add(ctl);
            }
        } else {
            this.kind = BORROWED;
            this.bsi = bsi;
            this.ctl = null;
        }
    }

    /**
     * Adopt a {@code FutoInAsyncSteps*} of any FTN12 implementation (FTN12
     * {@code wrap()}), e.g. one another language handed over. The caller
     * keeps ownership; the object is valid as long as the handle is.
     *
     * @param address the {@code FutoInAsyncSteps*}
     * @param tool the Tool the handle belongs to, or null if it is not one
     *        of this binding's (thread checks then ask the handle)
     * @return a borrowed handle
     */
    public static AsyncSteps wrap(long address, Tool tool) {
        if (address == 0) {
            throw new IllegalArgumentException("wrap(): null handle");
        }
        return new AsyncSteps(address, tool, false);
    }

    // ---- checks (StepStates) ---------------------------------------------

    /** The native handle: a root's (0 once freed), a step's, a borrowed one. */
    long handle() {
        return kind == ROOT ? ctl.bsi : bsi;
    }

    /** Is the caller on the thread that runs this handle's flow? */
    boolean onLoopThread() {
        Tool t = tool;
        if (t != null) {
            return t.isLoopThread();
        }
        if (loop != null) {
            return loop == Thread.currentThread();
        }
        long b = handle();
        return b != 0 && FutoInNative.is_same_thread(b);
    }

    long check(String what) {
        return StepStates.check(this, what);
    }

    long flowCheck(String what) {
        return StepStates.flowCheck(this, what);
    }

    long checkRoot(String what) {
        return StepStates.checkRoot(this, what);
    }

    // ---- adding steps (AddSteps) ----------------------------------------

    /**
     * Adds a step (FTN12 {@code add(func)}).
     *
     * @param step the step; ignores the values of the previous step
     * @return this, for chaining
     */
    public AsyncSteps add(Step step) {
        return AddSteps.addRec(this, "add()", step, 0, null);
    }

    /**
     * Adds a step with an error handler.
     *
     * @param step the step
     * @param onerror called when the step (or what it added) fails
     * @return this, for chaining
     */
    public AsyncSteps add(Step step, ErrorHandler onerror) {
        return AddSteps.addRec(this, "add()", step, 0, Objects.requireNonNull(onerror, "add(): onerror is null"));
    }

    /**
     * Adds a step that takes one value.
     * @param step the step
     * @return this
     */
    public AsyncSteps add(Step1 step) {
        return AddSteps.addRec(this, "add()", step, 1, null);
    }

    /**
     * Adds a step that takes one value.
     * @param step the step
     * @param onerror the error handler
     * @return this
     */
    public AsyncSteps add(Step1 step, ErrorHandler onerror) {
        return AddSteps.addRec(this, "add()", step, 1, Objects.requireNonNull(onerror, "add(): onerror is null"));
    }

    /**
     * Adds a step that takes two values.
     * @param step the step
     * @return this
     */
    public AsyncSteps add(Step2 step) {
        return AddSteps.addRec(this, "add()", step, 2, null);
    }

    /**
     * Adds a step that takes two values.
     * @param step the step
     * @param onerror the error handler
     * @return this
     */
    public AsyncSteps add(Step2 step, ErrorHandler onerror) {
        return AddSteps.addRec(this, "add()", step, 2, Objects.requireNonNull(onerror, "add(): onerror is null"));
    }

    /**
     * Adds a step that takes three values.
     * @param step the step
     * @return this
     */
    public AsyncSteps add(Step3 step) {
        return AddSteps.addRec(this, "add()", step, 3, null);
    }

    /**
     * Adds a step that takes three values.
     * @param step the step
     * @param onerror the error handler
     * @return this
     */
    public AsyncSteps add(Step3 step, ErrorHandler onerror) {
        return AddSteps.addRec(this, "add()", step, 3, Objects.requireNonNull(onerror, "add(): onerror is null"));
    }

    /**
     * Adds a step that takes four values.
     * @param step the step
     * @return this
     */
    public AsyncSteps add(Step4 step) {
        return AddSteps.addRec(this, "add()", step, 4, null);
    }

    /**
     * Adds a step that takes four values.
     * @param step the step
     * @param onerror the error handler
     * @return this
     */
    public AsyncSteps add(Step4 step, ErrorHandler onerror) {
        return AddSteps.addRec(this, "add()", step, 4, Objects.requireNonNull(onerror, "add(): onerror is null"));
    }

    /**
     * Adds a parallel step (FTN12 {@code parallel()}): its branches run as
     * separate flows; the next step runs when all have finished. Pass
     * results through {@link #state()}.
     *
     * @return the parallel step, to add branches to
     */
    public Parallel parallel() {
        return AddSteps.parallel(this);
    }

    /**
     * A parallel step with an error handler (called once, for the first
     * failing branch; the other branches are cancelled).
     *
     * @param onerror the error handler
     * @return the parallel step
     */
    public Parallel parallel(ErrorHandler onerror) {
        return AddSteps.parallel(this, onerror);
    }

    /** For Parallel: is the step that made it still usable? */
    void checkParent(String what) {
        flowCheck(what);
    }

    /**
     * Adds a step synchronized against a {@link Mutex}, {@link Throttle} or
     * {@link Limiter} (FTN12 {@code sync()}): the step (and what it adds)
     * runs holding the object; it gets the values of the step before.
     *
     * @param obj the sync object
     * @param step the critical section
     * @return this
     */
    public AsyncSteps sync(SyncObject obj, Step step) {
        return AddSteps.syncRec(this, obj, step, 0, null);
    }

    /**
     * @param obj the sync object
     * @param step the critical section
     * @param onerror the error handler
     * @return this
     */
    public AsyncSteps sync(SyncObject obj, Step step, ErrorHandler onerror) {
        return AddSteps.syncRec(this, obj, step, 0, Objects.requireNonNull(onerror, "sync(): onerror is null"));
    }

    /**
     * @param obj the sync object
     * @param step the critical section
     * @return this
     */
    public AsyncSteps sync(SyncObject obj, Step1 step) {
        return AddSteps.syncRec(this, obj, step, 1, null);
    }

    /**
     * @param obj the sync object
     * @param step the critical section
     * @param onerror the error handler
     * @return this
     */
    public AsyncSteps sync(SyncObject obj, Step1 step, ErrorHandler onerror) {
        return AddSteps.syncRec(this, obj, step, 1, Objects.requireNonNull(onerror, "sync(): onerror is null"));
    }

    /**
     * @param obj the sync object
     * @param step the critical section
     * @return this
     */
    public AsyncSteps sync(SyncObject obj, Step2 step) {
        return AddSteps.syncRec(this, obj, step, 2, null);
    }

    /**
     * @param obj the sync object
     * @param step the critical section
     * @param onerror the error handler
     * @return this
     */
    public AsyncSteps sync(SyncObject obj, Step2 step, ErrorHandler onerror) {
        return AddSteps.syncRec(this, obj, step, 2, Objects.requireNonNull(onerror, "sync(): onerror is null"));
    }

    /**
     * @param obj the sync object
     * @param step the critical section, given the three values before it
     * @return this
     */
    public AsyncSteps sync(SyncObject obj, Step3 step) {
        return AddSteps.syncRec(this, obj, step, 3, null);
    }

    /**
     * @param obj the sync object
     * @param step the critical section, given the three values before it
     * @param onerror the error handler
     * @return this
     */
    public AsyncSteps sync(SyncObject obj, Step3 step, ErrorHandler onerror) {
        return AddSteps.syncRec(this, obj, step, 3, Objects.requireNonNull(onerror, "sync(): onerror is null"));
    }

    /**
     * @param obj the sync object
     * @param step the critical section, given the four values before it
     * @return this
     */
    public AsyncSteps sync(SyncObject obj, Step4 step) {
        return AddSteps.syncRec(this, obj, step, 4, null);
    }

    /**
     * @param obj the sync object
     * @param step the critical section, given the four values before it
     * @param onerror the error handler
     * @return this
     */
    public AsyncSteps sync(SyncObject obj, Step4 step, ErrorHandler onerror) {
        return AddSteps.syncRec(this, obj, step, 4, Objects.requireNonNull(onerror, "sync(): onerror is null"));
    }

    /**
     * Adds a step that only succeeds with {@code values} (FTN12
     * {@code successStep()}): {@code add(asi -> asi.success(values…))}.
     *
     * @param values at most 4 values
     * @return this
     */
    public AsyncSteps successStep(Object... values) {
        return AddSteps.successStep(this, values);
    }

    /**
     * Adds a step that waits for {@code stage} without blocking the loop
     * thread (FTN12 {@code await()}): its result becomes the step's value
     * ({@code null}: no value), its exception the step's error (a
     * {@link FutoInError} keeps its code, anything else is
     * {@code InternalError}), and cancelling the flow cancels the stage's
     * future. The stage may complete on any thread (a ForkJoinPool worker,
     * an HTTP client thread…).
     *
     * @param stage the stage to wait for
     * @return this
     */
    public AsyncSteps await(CompletionStage<?> stage) {
        return await(stage, null);
    }

    /**
     * {@link #await(CompletionStage)} with an error handler for the step.
     *
     * @param stage the stage to wait for
     * @param onerror the error handler, or null
     * @return this
     */
    public AsyncSteps await(CompletionStage<?> stage, ErrorHandler onerror) {
        Objects.requireNonNull(stage, "await(): stage is null");
        return AddSteps.addRec(this, "await()", AwaitStep.of(stage), 0, onerror);
    }

    // ---- completing a step (Completions) --------------------------------

    /**
     * Completes the step successfully with no values.
     *
     * <p>Inside the step's own callback it returns true (misuse there, such
     * as a second success(), is the flow's InternalError). A step that
     * waits ({@link #waitExternal()}, {@link #setTimeout}, {@link #setCancel})
     * may be completed from outside its callback, on any thread: exactly
     * one completion is taken; one that lost the race to the step's
     * timeout or a cancel of its flow returns false and is dropped quietly
     * (a normal outcome, never an exception). A second completion, or a
     * completion of a step that finished without waiting, throws
     * {@link IllegalStateException}.
     *
     * @return true if the completion was taken, false if it came late
     */
    public boolean success() {
        return Completions.success(this);
    }

    /**
     * Completes the step with one value (see {@link #success()} for the
     * return value and the threads).
     *
     * @param value the value (see "Values" above)
     * @return true if the completion was taken, false if it came late
     */
    public boolean success(Object value) {
        return Completions.success(this, value);
    }

    /**
     * @param a first value
     * @param b second value
     * @return true if the completion was taken, false if it came late
     */
    public boolean success(Object a, Object b) {
        return Completions.successN(this, new Object[] {a, b});
    }

    /**
     * @param a first value
     * @param b second value
     * @param c third value
     * @return true if the completion was taken, false if it came late
     */
    public boolean success(Object a, Object b, Object c) {
        return Completions.successN(this, new Object[] {a, b, c});
    }

    /**
     * @param a first value
     * @param b second value
     * @param c third value
     * @param d fourth value
     * @return true if the completion was taken, false if it came late
     */
    public boolean success(Object a, Object b, Object c, Object d) {
        return Completions.successN(this, new Object[] {a, b, c, d});
    }

    /**
     * Completes the step with the given values; more than 4 is refused with
     * {@link IllegalArgumentException}.
     *
     * @param values the values
     * @return true if the completion was taken, false if it came late
     */
    public boolean success(Object... values) {
        if (values.length > 4) {
            PackedValues.tooMany();
        }
        return Completions.successN(this, values);
    }

    /**
     * Completes the step with an error (FTN12 {@code error()}).
     *
     * <p>Inside the step's own callback it reports the error to the flow
     * and throws it, which ends the step (FTN12: "throws FutoIn.Error
     * immediately"); it is declared to return the exception so that
     * {@code throw asi.error(…)} shows the compiler where the code ends.
     *
     * <p>From outside the callback — a worker thread, or a later event on
     * the loop thread completing a step that waits — there is no step code
     * to end: it reports the error and returns it unthrown if the
     * completion was taken, or returns null when it came late (the step's
     * timeout or a cancel won the race: dropped quietly, never an
     * exception). A second completion throws IllegalStateException.
     *
     * @param code the error code ({@link Errors} or your own: any non-empty
     *        string without a NUL character)
     * @return outside the callback: the reported error, or null if late
     * @throws FutoInError inside the callback, always: {@code Errors.Timeout}
     *         for "Timeout" …, a plain FutoInError for other codes
     * @throws IllegalArgumentException for an empty code or a NUL in it
     */
    public FutoInError error(String code) {
        return error(code, null);
    }

    /**
     * {@link #error(String)} with an {@code error_info}.
     *
     * @param code the error code
     * @param info the error_info (see {@link #errorInfo()}), or null; no NUL
     *        character
     * @return outside the callback: the reported error, or null if late
     * @throws FutoInError inside the callback, always
     */
    public FutoInError error(String code, String info) {
        return Completions.error(this, code, info);
    }

    /**
     * Sets a timeout: if the step has not completed after {@code ms}, it
     * fails with {@code Timeout}. Implies waiting (no implicit success).
     *
     * @param ms milliseconds
     */
    public void setTimeout(long ms) {
        Completions.setTimeout(this, ms);
    }

    /**
     * @param timeout the timeout (millisecond resolution)
     */
    public void setTimeout(Duration timeout) {
        setTimeout(timeout.toMillis());
    }

    /**
     * Sets the handler that cancels the external work this step waits for.
     * Implies waiting (no implicit success).
     *
     * @param handler the cancel handler
     */
    public void setCancel(CancelHandler handler) {
        Completions.setCancel(this, handler);
    }

    /** The step waits for an external event: no implicit success; complete
     *  it later with {@link #success()} or {@link #error(String)}, from any
     *  thread. */
    public void waitExternal() {
        Completions.waitExternal(this);
    }

    // ---- loops (Loops) --------------------------------------------------

    /**
     * Runs {@code body} until {@link #breakLoop()} (FTN12 {@code loop()}).
     *
     * @param body the loop body
     * @return this
     */
    public AsyncSteps loop(Step body) {
        return loop(body, null);
    }

    /**
     * A labelled loop.
     *
     * @param body the loop body
     * @param label the label for break/continue of inner loops, or null
     * @return this
     */
    public AsyncSteps loop(Step body, String label) {
        return Loops.loop(this, body, label);
    }

    /**
     * Runs {@code body(asi, i)} for i = 0 … count-1 (FTN12 {@code repeat()}).
     *
     * @param count how many times
     * @param body the loop body
     * @return this
     */
    public AsyncSteps repeat(int count, RepeatBody body) {
        return repeat(count, body, null);
    }

    /**
     * A labelled repeat.
     *
     * @param count how many times
     * @param body the loop body
     * @param label the label, or null
     * @return this
     */
    public AsyncSteps repeat(int count, RepeatBody body, String label) {
        return Loops.repeat(this, count, body, label);
    }

    /**
     * {@code body(asi, key, value)} for every entry of a map, in its
     * iteration order, taken when this is called (FTN12 {@code forEach()}).
     *
     * @param <K> key type
     * @param <V> value type
     * @param map the map
     * @param body the loop body
     * @return this
     */
    public <K, V> AsyncSteps forEach(Map<K, V> map, ForEachBody<? super K, ? super V> body) {
        return forEach(map, body, null);
    }

    /**
     * A labelled forEach over a map.
     *
     * @param <K> key type
     * @param <V> value type
     * @param map the map
     * @param body the loop body
     * @param label the label, or null
     * @return this
     */
    public <K, V> AsyncSteps forEach(Map<K, V> map, ForEachBody<? super K, ? super V> body, String label) {
        return Loops.forEach(this, map, body, label);
    }

    /**
     * {@code body(asi, index, element)} for every element, taken when this
     * is called.
     *
     * @param <V> element type
     * @param list the elements
     * @param body the loop body
     * @return this
     */
    public <V> AsyncSteps forEach(Iterable<V> list, ForEachBody<? super Integer, ? super V> body) {
        return forEach(list, body, null);
    }

    /**
     * A labelled forEach over elements.
     *
     * @param <V> element type
     * @param list the elements
     * @param body the loop body
     * @param label the label, or null
     * @return this
     */
    public <V> AsyncSteps forEach(Iterable<V> list, ForEachBody<? super Integer, ? super V> body, String label) {
        return Loops.forEach(this, list, body, label);
    }

    /**
     * forEach over an array.
     *
     * @param <V> element type
     * @param array the elements
     * @param body the loop body
     * @return this
     */
    public <V> AsyncSteps forEach(V[] array, ForEachBody<? super Integer, ? super V> body) {
        return forEach(Arrays.asList(array), body, null);
    }

    /**
     * Leaves the innermost loop (FTN12 {@code break()}); ends the body by
     * throwing a {@link LoopSignal} (see there for what happens if it is
     * caught).
     *
     * @throws LoopSignal always
     */
    public void breakLoop() {
        breakLoop(null);
    }

    /**
     * Leaves loops up to and including the one named {@code label}.
     *
     * @param label the loop's label, or null for the innermost
     * @throws LoopSignal always
     * @throws IllegalArgumentException for a label with a NUL character
     */
    public void breakLoop(String label) {
        Loops.loopControl(this, "breakLoop()", label, false);
    }

    /**
     * Goes on with the next iteration of the innermost loop; ends the body
     * by throwing a {@link LoopSignal}.
     *
     * @throws LoopSignal always
     */
    public void continueLoop() {
        continueLoop(null);
    }

    /**
     * Goes on with the next iteration of the loop named {@code label}.
     *
     * @param label the loop's label, or null for the innermost
     * @throws LoopSignal always
     * @throws IllegalArgumentException for a label with a NUL character
     */
    public void continueLoop(String label) {
        Loops.loopControl(this, "continueLoop()", label, true);
    }

    // ---- state (StateMap) -----------------------------------------------

    /**
     * The flow's state (FTN12 {@code state()}): one map per root, shared by
     * every step and parallel branch (and by Java steps in flows of other
     * languages). Loop thread only.
     *
     * <p>{@code get("error_info")}, {@code get("last_exception")} and
     * {@code get("async_stack")} read the flow's error state from the
     * runtime each time: the same as {@link #errorInfo()},
     * {@link #lastException()} and {@link #asyncStack()} (null when
     * empty), at every moment. They are not entries (iteration and size
     * show the user's keys) and cannot be written
     * ({@link IllegalArgumentException}); neither can a key with a NUL.
     *
     * @return the state map (insertion-ordered)
     */
    public Map<String, Object> state() {
        return StateMap.state(this);
    }

    // ---- trace context (Traces) ------------------------------------------

    /**
     * Makes {@code traceparent} (a W3C {@code traceparent} header value) the
     * trace context of this flow's root, from now on, for the steps of every
     * language and for flows started with {@link #newInstance()}; null
     * clears it. Each step is a span under the span of the frame it runs in
     * (see {@link #trace()}). Loop thread only.
     *
     * @param traceparent e.g. {@code "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, or null
     * @throws IllegalArgumentException for a bad value, saying what is
     *         wrong (the context is left as it was)
     */
    public void setTrace(String traceparent) {
        Traces.set(this, traceparent);
    }

    /**
     * The flow's trace context as this step sees it: the trace id, this
     * step's own span id and the span it runs under. Loop thread only.
     *
     * @return the context, or null when the flow has none
     */
    public TraceContext trace() {
        return Traces.get(this);
    }

    // ---- polyglot (Polyglot) --------------------------------------------

    /**
     * Adds a step written in another language (or in Java, or C), named
     * by module and function (futoin_host_add()): e.g.
     * {@code asi.addForeign("python", "pricing", "apply")},
     * {@code asi.addForeign("lua", "rules", "discount")},
     * {@code asi.addForeign("c", "/path/libsteps.so", "double hypot(double, double)")},
     * {@code asi.addForeign("java", "org.example.Steps", "total")}.
     * It gets the previous step's values and passes its own on, like any
     * step. The language's runtime is started in this process on first use
     * (its plug-in {@code libfutoin_host_<language>.so} is found where the
     * language's package is installed: the venv or {@code PYTHONPATH},
     * {@code LUA_CPATH}; see the top README, "Polyglot set-up"), or the one
     * already running is used. When
     * the language, module or function cannot be had, the step is added
     * all the same and fails with {@code InvalidRequest}, its error_info
     * naming the language, module and function and why.
     *
     * @param language "c", "python", "lua", "java", ...
     * @param module the module (Python), module or file (Lua), class (Java)
     *        or shared object (C)
     * @param function the function's name (C: a name or a declaration)
     * @return this, for chaining
     */
    public AsyncSteps addForeign(String language, String module, String function) {
        return Polyglot.addForeign(this, language, module, function);
    }

    /**
     * The async stack of the flow's last error: frames[0] is the step that
     * failed, the last one a step at the root's level, across languages and
     * parallel() branches. Each frame's class is the language and the
     * function's qualifier ({@code "python:polyglot_fragments"}), its method
     * the function, with the source file and line when known. Meant for
     * error handlers; empty when no stack was recorded.
     *
     * @return the frames, innermost first
     */
    public StackTraceElement[] asyncStack() {
        return AsyncStack.of(check("asyncStack()"), null);
    }

    /**
     * @return the error_info of the flow's last error, or null
     */
    public String errorInfo() {
        return ErrorState.info(check("errorInfo()"));
    }

    /**
     * @return the flow's last exception: the Java {@code Throwable} behind
     *         the last error (the {@link FutoInError} of {@code error()}
     *         included), else the last error code, or null
     */
    public Object lastException() {
        return ErrorState.lastException(check("lastException()"));
    }

    // ---- roots (Roots) --------------------------------------------------

    /** Starts the flow (FTN12 {@code execute()}); an unhandled error is
     *  printed to {@code System.err}. */
    public void execute() {
        Roots.execute(this);
    }

    /**
     * Starts the flow; an unhandled error goes to {@code onError} (on the
     * loop thread).
     *
     * @param onError gets the error, as {@link #promise()} would fail with it
     */
    public void execute(Consumer<? super FutoInError> onError) {
        Roots.execute(this, onError);
    }

    /**
     * Starts the flow and returns its outcome (FTN12 {@code promise()}):
     * completed (on the loop thread) with the last step's values — null, the
     * value, or an unmodifiable List of several —, exceptionally with the
     * {@link FutoInError} of an unhandled error, or with a
     * {@link CancellationException} when the root is cancelled. Cancelling
     * the future cancels the root (from any thread).
     *
     * @return the outcome
     */
    public CompletableFuture<Object> promise() {
        return Roots.promise(this);
    }

    /**
     * Executes the flow and runs its tool's loop on this thread until the
     * flow is done (a Tool on its own thread: waits for it). Returns what
     * {@link #promise()} would complete with. Its success values can also
     * be had without run(): {@link #promise()}.
     *
     * <p>If this thread is interrupted meanwhile (or enters with its
     * interrupt status set), the flow is cancelled, the interrupt status
     * stays set and run() throws {@link CancellationException}. If the
     * loop is stopped ({@link Tool#stop()} or {@link Tool#close()} from
     * another thread) before the flow is done, the flow is cancelled too.
     *
     * <p>On a virtual-time Tool the clock is advanced from one due timer to
     * the next until the flow is done, without waiting; if it still waits
     * when no timer is left (for another thread, say: join it first),
     * IllegalStateException.
     *
     * @return null, the value, or a List of values
     * @throws FutoInError the unhandled error
     * @throws CancellationException if the root was cancelled (also by an
     *         interrupt of this thread)
     */
    public Object run() {
        return Roots.run(this);
    }

    /**
     * Cancels the flow (FTN12 {@code cancel()}): cancel handlers run (on the
     * loop thread), {@link #promise()} fails and {@link #run()} throws with
     * {@link CancellationException}. Any thread: from another thread the
     * cancel is decided at once and carried out on the loop thread.
     *
     * @return true if the root was executing and this call cancelled it;
     *         false if it was not executing (not started, finished, or
     *         cancelled already)
     */
    public boolean cancel() {
        return Roots.cancel(this);
    }

    /**
     * Frees the root (cancelling it if it runs). Any thread: from another
     * thread it is marshalled to the loop thread. Idempotent.
     */
    @Override
    public void close() {
        Roots.close(this);
    }

    /**
     * A new root on the same tool (FTN12 {@code newInstance()}).
     *
     * <p>Through a handle no {@link Tool} of this binding runs (a step of a
     * flow another language hosts, or a handle {@link #wrap wrapped} with
     * no Tool) the new root has no Tool ({@link #tool()} is null): it can
     * take steps, be handed over ({@link #binary()}) and be closed, but
     * {@link #execute()}, {@link #promise()} and {@link #run()} throw
     * {@link IllegalStateException}, since nothing here runs its loop.
     *
     * @return a new root
     */
    public AsyncSteps newInstance() {
        return Roots.newInstance(this);
    }

    // ---- queries ---------------------------------------------------------

    /**
     * @return true while the handle may be used (FTN12 {@code cast()})
     */
    public boolean isValid() {
        long b = handle();
        if (b == 0 || (kind == STEP && StepStates.of(this) == StepStates.DEAD)) {
            return false;
        }
        return !onLoopThread() || FutoInNative.is_valid(b);
    }

    /**
     * @return the root's id (FTN12 {@code rootId()})
     */
    public long rootId() {
        return FutoInNative.root_id(check("rootId()"));
    }

    /**
     * @return the {@code FutoInAsyncSteps*} address (FTN12 {@code binary()})
     */
    public long binary() {
        return check("binary()");
    }

    /**
     * The Tool whose loop runs this flow. For a Java step in a flow of a
     * C, Python or Lua program that is the program's loop, lent to Java
     * ({@link Tool#isBorrowed()}: its timers work, see {@link Tool}).
     *
     * @return the Tool, or null for a handle of another FTN12
     *         implementation
     * @throws IllegalStateException for the handle of a finished step of
     *         a flow without a Tool of Java's own, or off its loop thread
     */
    public Tool tool() {
        Tool t = tool;
        if (t != null) {
            return t;
        }
        long core = FutoInNative.async_tool(check("tool()"));
        return core == 0 ? null : BorrowedTools.ofCore(core);
    }

    @Override
    public String toString() {
        long b = handle();
        String k = kind == ROOT ? "root" : kind == STEP ? "step" : "borrowed";
        return b == 0 ? "AsyncSteps[" + k + ", closed]" : String.format("AsyncSteps[%s 0x%x]", k, b);
    }

}
