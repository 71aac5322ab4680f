package org.futoin.polyglot;

import org.futoin.async.AsyncSteps;

/** Java steps that fail with a plain Java exception. */
public final class Throwing {
    private Throwing() {
    }

    /** Throws a NullPointerException: InternalError with the stack trace.
     *  @param asi the step
     *  @param args ignored */
    public static void npe(AsyncSteps asi, Object... args) {
        throw new NullPointerException("boom in java");
    }
}
