package org.futoin.async;

/**
 * A cancel handler ({@link AsyncSteps#setCancel(CancelHandler)}): called on
 * the loop thread when a waiting step is cancelled (root cancel, timeout,
 * an error elsewhere in a parallel). It should stop the external work the
 * step waits for. Its exceptions cannot reach any flow: they go to the
 * thread's uncaught-exception handler.
 */
@FunctionalInterface
public interface CancelHandler {
    /**
     * Cancels the external work.
     *
     * @param asi a handle for this call only
     * @throws Exception reported to the thread's uncaught-exception handler
     */
    void cancel(AsyncSteps asi) throws Exception;
}
