package org.futoin.async;

/**
 * A step that takes 4 values of the previous step (FTN12 {@code execute_callback}).
 * Missing values arrive as {@code null}; extra ones are ignored.
 * Values arrive as described in {@link AsyncSteps} (e.g. {@code Integer},
 * {@code Long}, {@code String}, {@code byte[]}, or the very object that was
 * passed on).
 *
 * <p>Any exception it throws ends the step with an error: a
 * {@link FutoInError} with its code, anything else as
 * {@code InternalError} (see {@link AsyncSteps#error(String, String)}).
 */
@FunctionalInterface
public interface Step4 {
    /**
     * Runs the step.
     *
     * @param asi the step's own handle, valid during this call (and until
     *        completion if the step waits, see {@link AsyncSteps#waitExternal()})
     * @param a the first value
     * @param b the second value
     * @param c the third value
     * @param d the fourth value
     * @throws Exception any exception ends the step with an error
     */
    void execute(AsyncSteps asi, Object a, Object b, Object c, Object d) throws Exception;
}
