package org.futoin.async;

/**
 * What {@link AsyncSteps#breakLoop(String)} and
 * {@link AsyncSteps#continueLoop(String)} throw to leave the loop body at
 * once (FTN12: they throw, like {@code error()}).
 *
 * <p>Unchecked, so that it can leave lambdas; public, so that code that
 * catches {@code RuntimeException} or {@code Throwable} around a call that
 * may break a loop can recognise it and let it go:
 *
 * <pre>{@code
 * try {
 *     work(asi);              // may call asi.breakLoop()
 * } catch (LoopSignal s) {
 *     throw s;                // not an error: let the loop see it
 * } catch (RuntimeException e) {
 *     ...
 * }
 * }</pre>
 *
 * <p><b>If it is swallowed</b>, the loop control still happens: the runtime
 * was told when {@code breakLoop()}/{@code continueLoop()} was called, not
 * when this exception reaches the binding. The step has ended there: the
 * rest of its callback runs as plain Java code, but any later call through
 * its handle ({@code success()}, {@code add()}, {@code error()}, another
 * break, ...) throws {@link IllegalStateException}, and the loop is left (or
 * goes on with its next iteration) when the callback returns. A signal
 * thrown out of another step's callback than the one that made it is not
 * loop control there: that step fails with {@code InternalError}.
 *
 * <p>It has no stack trace (it is flow control, as FTN12 defines it).
 */
public final class LoopSignal extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @serial true for breakLoop(), false for continueLoop() */
    private final boolean isBreak;
    /** @serial the loop's label, or null for the innermost loop */
    private final String label;
    /** The handle whose callback it leaves (not serialized). */
    final transient AsyncSteps from;

    LoopSignal(boolean isBreak, String label, AsyncSteps from) {
        super((isBreak ? "breakLoop(" : "continueLoop(") + (label == null ? "" : "\"" + label + "\"") + ")",
                null, false, false);
        this.isBreak = isBreak;
        this.label = label;
        this.from = from;
    }

    /**
     * @return true for {@code breakLoop()}, false for {@code continueLoop()}
     */
    public boolean isBreak() {
        return isBreak;
    }

    /**
     * @return the label of the loop it targets, or null for the innermost
     */
    public String label() {
        return label;
    }
}
