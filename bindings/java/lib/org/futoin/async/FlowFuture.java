package org.futoin.async;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The future of a flow ({@link AsyncSteps#promise()},
 * {@link Tool#promise}): a thread blocked in {@code get()} that is
 * interrupted cancels the flow (cancelling the future cancels the root)
 * before {@link InterruptedException} reaches it, as a blocking call that
 * gives up must not leave its work running unobserved. A timed-out
 * {@code get(timeout)} cancels nothing. {@code join()} is not interruptible
 * (as in any CompletableFuture).
 */
final class FlowFuture extends CompletableFuture<Object> {
    @Override
    public Object get() throws InterruptedException, ExecutionException {
        try {
            return super.get();
        } catch (InterruptedException e) {
            cancel(false);
            throw e;
        }
    }

    @Override
    public Object get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
        try {
            return super.get(timeout, unit);
        } catch (InterruptedException e) {
            cancel(false);
            throw e;
        }
    }
}
