package org.futoin.async;

import static org.futoin.async.StepStates.DEAD;
import static org.futoin.async.StepStates.LIVE;
import static org.futoin.async.StepStates.LIVE_WAIT;
import static org.futoin.async.StepStates.LOST;
import static org.futoin.async.StepStates.ST;
import static org.futoin.async.StepStates.WAITING;

import java.util.Objects;

/**
 * How a step completes: {@code success()} / {@code error()} inside its own
 * callback ({@link #completing}), the same from outside it (another
 * thread, or a later event on the loop thread) for a step that waits
 * ({@link #external}: exactly one completion passes, a late one is dropped
 * quietly, README rule 3), or a {@code Throwable} leaving the callback
 * ({@link #fail}). The handle's states are {@link StepStates}'. Also the
 * bodies of {@link AsyncSteps}' success(), error() and of what makes a
 * step wait ({@code setTimeout()}, {@code setCancel()},
 * {@code waitExternal()}).
 */
final class Completions {
    private Completions() {
    }

    /**
     * Serializes completions from other threads with the loop thread's end
     * of a waiting step (its record released, its cancel handler, a root
     * freed): a completion either reaches the runtime while the step's
     * record is still that step's, or finds the handle dead. Without it a
     * late completion could be posted for a record the runtime has
     * recycled for another step.
     */
    static final Object LOCK = new Object();

    /** A native completion that says whether it was taken (try_success,
     *  try_error: 1 taken, 0 lost its race, < 0 misuse), run with the
     *  step's handle. */
    interface Completion {
        int run(long bsi);
    }

    /** The handle for success()/error() inside the step's own callback (on
     *  the loop thread), or 0 when the completion comes from outside it:
     *  another thread, or a later event on the loop thread (then see
     *  {@link #external}). */
    static long completing(AsyncSteps a, String what) {
        long b = a.handle();
        if (b == 0) {
            throw new IllegalStateException(what + ": the AsyncSteps root is closed");
        }
        if (a.kind != AsyncSteps.STEP) {
            if (a.kind == AsyncSteps.ROOT) {
                throw new IllegalStateException(what + ": is for steps, not for a root");
            }
            if (!a.onLoopThread()) {
                throw StepStates.wrongThread(a, what);
            }
            return b;
        }
        if (!a.onLoopThread()) {
            return 0;
        }
        int s = StepStates.of(a);
        if (s == WAITING || s == LOST) {
            return 0; /* its callback has returned */
        }
        if (s == DEAD) {
            throw StepStates.finished(what);
        }
        if (a.ended != null) {
            throw StepStates.endedBy(a, what);
        }
        KeptSuccess.apply(a);
        if (s != LIVE) {
            ST.setRelease(a, DEAD);
        }
        return b;
    }

    /** Tests only: runs between reading a waiting step's state and taking
     *  it, to widen the race with StepStates.leave() (ThreadsTest). */
    static volatile Runnable offThreadRaceHook;

    /**
     * Completes a waiting step from outside its callback (another thread,
     * or a later event on the loop thread): exactly one completion passes.
     * A step that ended by its timeout or a cancel meanwhile makes this a
     * late completion: false, quietly (README rule 3). A second completion,
     * or one of a step that did not wait, is misuse: IllegalStateException.
     */
    static boolean external(AsyncSteps a, String what, Completion c) {
        synchronized (LOCK) {
            for (;;) {
                int s = StepStates.of(a);
                if (s == LIVE_WAIT || s == WAITING) {
                    Runnable hook = offThreadRaceHook;
                    if (hook != null) {
                        hook.run();
                    }
                    if (ST.compareAndSet(a, s, DEAD)) {
                        /* the runtime decides (another thread's is posted to
                         * the loop thread): its timeout may have won already */
                        int rc = c.run(a.bsi);
                        if (rc == 1) {
                            return true;
                        }
                        if (rc == 0) {
                            ST.setRelease(a, LOST);
                            return false;
                        }
                        throw new IllegalStateException(what + ": refused by the runtime (" + rc + ")");
                    }
                    /* leave() moved LIVE_WAIT to WAITING meanwhile (it does
                     * not take the lock): still waiting, take it again */
                    continue;
                }
                if (s == LOST) {
                    return false;
                }
                if (s == DEAD) {
                    throw new IllegalStateException(what + ": this step has completed already (or finished"
                            + " without waiting); a second completion is misuse");
                }
                break;
            }
        }
        throw new IllegalStateException(what + ": called from thread \"" + Thread.currentThread().getName()
                + "\" for a step that does not wait; only a step that called waitExternal(), "
                + "setTimeout() or setCancel() may be completed from another thread");
    }

    /** An error of a waiting step from outside its callback; `exc` becomes
     *  last_exception when taken on the loop thread. */
    static boolean externalError(AsyncSteps a, String what, String code, String info, Throwable exc) {
        byte[] c = Values.cstr(code);
        byte[] i = Values.cstr(info);
        return external(a, what, h -> FutoInNative.try_error(h, c, i, exc));
    }

    /** A Throwable left a step: the flow's error (unless this step's
     *  error()/breakLoop()/continueLoop() made it: reported already). */
    static void fail(AsyncSteps a, Throwable t) {
        if ((t instanceof LoopSignal && ((LoopSignal) t).from == a)
                || (t instanceof FutoInError && ((FutoInError) t).reportedBy == a)) {
            return;
        }
        long b = a.handle();
        if (b == 0) {
            return;
        }
        if (a.ended != null) {
            /* the step ended with an error or a loop signal that was caught;
             * nothing can fail it now, so the exception is not lost: it goes
             * where uncaught exceptions go */
            Tool.uncaught(t);
            return;
        }
        KeptSuccess.apply(a); /* success() then a throw: the runtime sees both, in order */
        String code;
        String info;
        if (t instanceof FutoInError) {
            code = ((FutoInError) t).code();
            info = ((FutoInError) t).info();
        } else {
            code = Errors.INTERNAL_ERROR;
            info = ErrorState.infoOf(a, t); /* its text; the trace stays on t (or, hosted: its top) */
        }
        try {
            FutoInNative.handle_error(b, Values.cstr(code), Values.cstr(info), t);
        } catch (Throwable again) {
            Tool.uncaught(again);
        }
    }

    /* AsyncSteps.success() */
    static boolean success(AsyncSteps a) {
        long b = completing(a, "success()");
        if (b != 0) {
            if (!KeptSuccess.keepNoValues(a)) {
                FutoInNative.success0(b);
            }
            return true;
        }
        return external(a, "success()",
                h -> FutoInNative.try_success(h, 0, 0, 0, 0, 0, null, null, null, null));
    }

    /* AsyncSteps.success(value) */
    static boolean success(AsyncSteps a, Object value) {
        long b = completing(a, "success()");
        if (b != 0) {
            int t = Values.tag(value);
            if (!KeptSuccess.keepValue(a, value, t)) {
                FutoInNative.success1(b, t, Values.bits(value, t), Values.obj(value, t));
            }
            return true;
        }
        return external(a, "success()", new PackedValues(new Object[] {value})::tryOn);
    }

    /** success() with several values. */
    static boolean successN(AsyncSteps a, Object[] values) {
        long b = completing(a, "success()");
        if (b != 0) {
            new PackedValues(values).successOn(b);
            return true;
        }
        return external(a, "success()", new PackedValues(values)::tryOn);
    }

    /* AsyncSteps.error(code, info) */
    static FutoInError error(AsyncSteps a, String code, String info) {
        FutoInError e = Errors.create(code, info, null); /* checks code and info */
        long b = completing(a, "error()");
        if (b != 0) {
            e.reportedBy = a;
            FutoInNative.handle_error(b, Values.cstr(code), Values.cstr(info), e);
            if (a.kind == AsyncSteps.STEP) {
                a.ended = "error()";
            }
            throw e;
        }
        return externalError(a, "error()", code, info, a.onLoopThread() ? e : null) ? e : null;
    }

    /* AsyncSteps.setTimeout(ms) */
    static void setTimeout(AsyncSteps a, long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("setTimeout(): negative timeout");
        }
        FutoInNative.set_timeout(a.flowCheck("setTimeout()"), ms);
        StepStates.waits(a);
    }

    /* AsyncSteps.setCancel(handler) */
    static void setCancel(AsyncSteps a, CancelHandler handler) {
        long b = a.flowCheck("setCancel()");
        Objects.requireNonNull(handler, "setCancel(): handler is null");
        Rec r = new Rec(handler, 0, null, a.tool, null);
        FutoInNative.set_cancel(b, r);
        a.cancelRec = r;
        StepStates.waits(a);
    }

    /* AsyncSteps.waitExternal() */
    static void waitExternal(AsyncSteps a) {
        FutoInNative.wait_external(a.flowCheck("waitExternal()"));
        StepStates.waits(a);
    }
}
