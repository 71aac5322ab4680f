package org.futoin.async;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The life of an {@link AsyncSteps} handle and the checks every call
 * through one makes before it reaches the runtime.
 *
 * <p>A step handle is in one of these states ({@code AsyncSteps.st}):
 * LIVE (its callback runs), LIVE_WAIT (and it waits), WAITING (returned,
 * waits), DEAD (finished normally or completed: another completion is
 * misuse), LOST (it waited and ended by its timeout or a cancel without a
 * completion: a completion now is late, dropped quietly). Written on the
 * loop thread; a completion from outside the callback moves
 * LIVE_WAIT/WAITING to DEAD by compare-and-set, so exactly one completion
 * gets through Java ({@link Completions}). Roots and borrowed handles have
 * no state of their own: the runtime checks them.
 */
final class StepStates {
    static final int LIVE = 0, LIVE_WAIT = 1, WAITING = 2, DEAD = 3, LOST = 4;
    /** {@code AsyncSteps.st}, read and written only through this. */
    static final VarHandle ST;

    static {
        try {
            ST = MethodHandles.lookup().findVarHandle(AsyncSteps.class, "st", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private StepStates() {
    }

    /** The state of a step handle. */
    static int of(AsyncSteps a) {
        return (int) ST.getAcquire(a);
    }

    static IllegalStateException finished(String what) {
        return new IllegalStateException(what + ": this step has finished; its AsyncSteps handle is no longer valid");
    }

    static IllegalStateException endedBy(AsyncSteps a, String what) {
        return new IllegalStateException(what + ": this step already ended with " + a.ended
                + " (its exception was caught); the step is over, return from the callback");
    }

    static IllegalStateException wrongThread(AsyncSteps a, String what) {
        return new IllegalStateException(what + ": called from thread \"" + Thread.currentThread().getName()
                + "\", not the loop thread" + (a.tool == null ? "" : " \"" + a.tool.loopThreadName() + "\""));
    }

    /** The handle for a loop-thread call, or an exception. */
    static long check(AsyncSteps a, String what) {
        long b = a.handle();
        if (b == 0) {
            throw new IllegalStateException(what + ": the AsyncSteps root is closed");
        }
        if (a.kind == AsyncSteps.STEP && of(a) >= DEAD) {
            throw finished(what);
        }
        if (!a.onLoopThread()) {
            throw wrongThread(a, what);
        }
        KeptSuccess.apply(a);
        return b;
    }

    /** check() for a call that acts on the flow (adds, waits, completes):
     *  refused once the step ended with a caught error/loop signal. */
    static long flowCheck(AsyncSteps a, String what) {
        long b = check(a, what);
        if (a.ended != null) {
            throw endedBy(a, what);
        }
        return b;
    }

    /** check() for what only a root can do. */
    static long checkRoot(AsyncSteps a, String what) {
        if (a.kind != AsyncSteps.ROOT) {
            throw new IllegalStateException(what + ": only a root can do this, not a step");
        }
        return check(a, what);
    }

    /** The step waits for a completion (setTimeout, setCancel, waitExternal). */
    static void waits(AsyncSteps a) {
        if (a.kind == AsyncSteps.STEP) {
            ST.compareAndSet(a, LIVE, LIVE_WAIT);
        }
    }

    /** After its callback: the handle dies, or waits for a completion. */
    static void leave(AsyncSteps a) {
        int s = of(a);
        if (s == LIVE || (a.ended != null && s == LIVE_WAIT && ST.compareAndSet(a, LIVE_WAIT, DEAD))) {
            ST.setRelease(a, DEAD); /* an error or a loop signal ended it: no waiting */
        } else if (s == LIVE_WAIT && ST.compareAndSet(a, LIVE_WAIT, WAITING)) {
            a.rec.addWaiter(a);
            if (a.cancelRec != null) {
                a.cancelRec.addWaiter(a);
            }
        }
    }

    /** Its step is gone (released, cancelled): a waiting handle lost its
     *  chance (a completion now is late), any other is finished. Under
     *  Completions.LOCK (or for a handle nobody else has). */
    static void kill(AsyncSteps a) {
        for (;;) {
            int s = of(a);
            int to = s == LIVE_WAIT || s == WAITING ? LOST : s == LIVE ? DEAD : s;
            if (to == s || ST.compareAndSet(a, s, to)) {
                return;
            }
        }
    }
}
