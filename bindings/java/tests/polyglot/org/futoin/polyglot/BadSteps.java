package org.futoin.polyglot;

import org.futoin.async.AsyncSteps;

/** A class whose static initializer fails, and methods of the wrong
 *  shape: the java host must say so where the step is resolved. */
public final class BadSteps {
    static {
        if (System.getProperty("futoin.badsteps.ok") == null) {
            throw new IllegalStateException("BadSteps refuses to load");
        }
    }

    private BadSteps() {
    }

    /** Not a step: no Object... parameter.
     *  @param asi unused */
    public static void noValues(AsyncSteps asi) {
    }
}
