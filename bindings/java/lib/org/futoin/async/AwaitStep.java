package org.futoin.async;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * The step {@code await(stage)} adds: it waits for a
 * {@link CompletionStage} without blocking the loop thread, cancelling the
 * stage's future when the flow is cancelled, and completes with the
 * stage's outcome, which may arrive on any thread.
 */
final class AwaitStep {
    private AwaitStep() {
    }

    /** The step that waits for `stage`. */
    static Step of(CompletionStage<?> stage) {
        return asi -> {
            CompletableFuture<?> f = stage.toCompletableFuture();
            asi.setCancel(a -> f.cancel(false));
            asi.waitExternal();
            f.whenComplete((value, ex) -> completeWith(asi, value, ex));
        };
    }

    /** The outcome of an awaited stage; on any thread. A completion that
     *  lost its race to the step's timeout or a cancel is dropped. */
    private static void completeWith(AsyncSteps asi, Object value, Throwable ex) {
        if (ex == null) {
            if (value == null) {
                asi.success();
            } else {
                asi.success(value);
            }
            return;
        }
        Throwable t = ex instanceof CompletionException && ex.getCause() != null ? ex.getCause() : ex;
        if (t instanceof CancellationException) {
            t = new Errors.InternalError("awaited stage was cancelled", t);
        }
        final Throwable err = t;
        final String code = err instanceof FutoInError ? ((FutoInError) err).code() : Errors.INTERNAL_ERROR;
        final String info = err instanceof FutoInError ? ((FutoInError) err).info() : ErrorState.infoOf(asi, err);
        Runnable onLoop = () -> Completions.externalError(asi, "await()", code, info, err);
        Tool tool = asi.tool;
        if (tool != null && !asi.onLoopThread()) {
            try {
                tool.execute(onLoop); // keeps the Throwable for last_exception
            } catch (RuntimeException closed) {
                // the tool is closed: the flow is gone
            }
        } else {
            onLoop.run();
        }
    }
}
