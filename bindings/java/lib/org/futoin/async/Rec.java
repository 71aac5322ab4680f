package org.futoin.async;

import java.util.ArrayList;

/**
 * What a callback handed to the runtime carries: the callable, its error
 * handler and how to call it. C holds one counted global reference to it
 * (the callback's {@code data}) until the runtime releases it, exactly once.
 * The C trampoline reads {@link #arity} (how many values to convert) and
 * {@link #notifyRelease} (whether Java wants to hear about the release)
 * straight from the fields.
 */
final class Rec {
    /** arity: a step of 0..4 values; ALL: an Object[] of all values. */
    static final int ALL = -1;

    final Object fn;
    final int arity;
    final ErrorHandler eh;
    final Tool tool;
    /** Kept alive with the callback (the sync object of sync()). */
    final Object keep;
    /** Read by C at release: call Dispatch.released(this). */
    boolean notifyRelease;
    /** The table holding this Rec as slot {@link #id} (RecTable), or null:
     *  C holds a global reference to it. */
    RecTable table;
    int id = -1;
    /** Step handles still waiting for an external completion. */
    private Object waiters;

    Rec(Object fn, int arity, ErrorHandler eh, Tool tool, Object keep) {
        this.fn = fn;
        this.arity = arity;
        this.eh = eh;
        this.tool = tool;
        this.keep = keep;
    }

    /** Loop thread: `asi` waits; it dies when this record is released. */
    @SuppressWarnings("unchecked")
    void addWaiter(AsyncSteps asi) {
        notifyRelease = true;
        if (table != null) {
            table.notifyRelease(id);
        }
        if (waiters == null) {
            waiters = asi;
        } else if (waiters instanceof AsyncSteps) {
            ArrayList<AsyncSteps> l = new ArrayList<>(2);
            l.add((AsyncSteps) waiters);
            l.add(asi);
            waiters = l;
        } else {
            ((ArrayList<AsyncSteps>) waiters).add(asi);
        }
    }

    /** Loop thread: the step is gone; its waiting handles are dead. */
    @SuppressWarnings("unchecked")
    void killWaiters() {
        Object w = waiters;
        waiters = null;
        if (w instanceof AsyncSteps) {
            StepStates.kill((AsyncSteps) w);
        } else if (w != null) {
            for (AsyncSteps a : (ArrayList<AsyncSteps>) w) {
                StepStates.kill(a);
            }
        }
    }
}
