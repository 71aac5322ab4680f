package org.futoin.async;

/**
 * An error handler (FTN12 {@code error_callback}), called on the loop thread
 * when the step it was added with, or anything that step added, fails.
 *
 * <p>It may recover with {@link AsyncSteps#success()} (the flow goes on
 * after the failed step), raise another error with
 * {@link AsyncSteps#error(String)}, add steps that run in place of the
 * failed step, or return to let the error go on to the outer handlers.
 * {@code asi.state()} holds {@code error_info} and {@code last_exception}
 * of the error (FTN12 §1.7).
 */
@FunctionalInterface
public interface ErrorHandler {
    /**
     * Handles an error.
     *
     * @param asi the failed step's handle for this call
     * @param code the error code, e.g. {@code "Timeout"} ({@link Errors})
     * @throws Exception ends the handler with that error instead
     */
    void handle(AsyncSteps asi, String code) throws Exception;
}
