package org.futoin.async;

import java.util.Objects;

/**
 * The parallel step returned by {@link AsyncSteps#parallel()}: every step
 * added here is a branch that runs as a flow of its own; the step after the
 * parallel one runs when all branches have finished. When a branch fails,
 * the others are cancelled and the error goes to the parallel step's error
 * handler (and on). Branches pass results through {@code asi.state()}.
 *
 * <p>Usable while the step (or root) that created it may add steps.
 */
public final class Parallel {
    private final long bsi;
    private final AsyncSteps parent;
    private final Tool tool;

    Parallel(long bsi, AsyncSteps parent, Tool tool) {
        this.bsi = bsi;
        this.parent = parent;
        this.tool = tool;
    }

    private Parallel addRec(Object fn, int arity, ErrorHandler eh) {
        parent.checkParent("parallel().add()");
        Objects.requireNonNull(fn, "parallel().add(): step is null");
        FutoInNative.add(bsi, new Rec(fn, arity, eh, tool, null), arity, eh != null);
        return this;
    }

    /**
     * Adds a branch.
     * @param step the branch's first step
     * @return this
     */
    public Parallel add(Step step) {
        return addRec(step, 0, null);
    }

    /**
     * Adds a branch.
     * @param step the branch's first step
     * @param onerror its error handler
     * @return this
     */
    public Parallel add(Step step, ErrorHandler onerror) {
        return addRec(step, 0, Objects.requireNonNull(onerror, "parallel().add(): onerror is null"));
    }

    /**
     * Adds a branch that takes one value.
     * @param step the step
     * @return this
     */
    public Parallel add(Step1 step) {
        return addRec(step, 1, null);
    }

    /**
     * Adds a branch that takes one value.
     * @param step the step
     * @param onerror its error handler
     * @return this
     */
    public Parallel add(Step1 step, ErrorHandler onerror) {
        return addRec(step, 1, Objects.requireNonNull(onerror, "parallel().add(): onerror is null"));
    }

    /**
     * @return the {@code FutoInAsyncSteps*} of the parallel step
     */
    public long binary() {
        parent.checkParent("parallel().binary()");
        return bsi;
    }
}
