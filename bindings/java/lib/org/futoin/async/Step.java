package org.futoin.async;

/**
 * A step (FTN12 {@code execute_callback}) that ignores the values of the
 * previous step, or a loop body.
 *
 * <p>Returning without calling {@link AsyncSteps#success()},
 * {@link AsyncSteps#add(Step)}, {@link AsyncSteps#waitExternal()} or
 * similar completes the step successfully with no values (implicit
 * success, FTN12 §1.6). Any exception it throws ends the step with an
 * error: a {@link FutoInError} with its own code, anything else as
 * {@code InternalError} with the stack trace text as {@code error_info}.
 *
 * <p>Steps that take values: {@link Step1} … {@link Step4}.
 */
@FunctionalInterface
public interface Step {
    /**
     * Runs the step.
     *
     * @param asi the step's own handle, valid during this call (and until
     *        completion if the step waits, see {@link AsyncSteps#waitExternal()})
     * @throws Exception any exception ends the step with an error
     */
    void execute(AsyncSteps asi) throws Exception;
}
