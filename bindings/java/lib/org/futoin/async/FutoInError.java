package org.futoin.async;

/**
 * An FTN12 error: a {@link #code() code} (e.g. {@code "Timeout"}) and an
 * optional {@link #info() error_info}.
 *
 * <p>Unchecked on purpose: FTN12 errors are flow control of a step, raised
 * from inside lambdas; a checked exception would force a {@code try} into
 * every step.
 *
 * <p><b>Any code</b> (a non-empty string without a NUL character) can be
 * raised and reaches handlers unchanged. Each standard code has its own
 * subclass in {@link Errors} ({@code Errors.Timeout},
 * {@code Errors.InvalidRequest}, …), caught by class; any other code is a
 * plain {@code FutoInError}, recognised by name:
 *
 * <pre>{@code
 * try {
 *     root.run();
 * } catch (Errors.Timeout e) {          // a standard code: its class
 *     ...
 * } catch (FutoInError e) {
 *     if (e.is("NotFound")) { ... }     // any code: by name
 *     else throw e;
 * }
 * }</pre>
 *
 * In an error handler the code is the handler's {@code code} argument.
 *
 * <ul>
 * <li>{@link AsyncSteps#error(String, String)} reports the error to the flow
 * and throws one of these, which ends the step; the trampoline knows it was
 * reported already.</li>
 * <li>Throwing one yourself in a step (e.g. {@code throw new
 * Errors.Unauthorized("token expired")}) does the same.</li>
 * <li>{@link AsyncSteps#promise()} completes exceptionally with one, whose
 * cause is the exception the flow failed with, if any.</li>
 * </ul>
 */
public class FutoInError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @serial the error code */
    private final String code;
    /** @serial the error_info, or null */
    private final String info;
    /** Set by AsyncSteps.error() inside a step's callback: the handle that
     *  reported it to the flow (its trampoline then ignores it). */
    transient Object reportedBy;
    /** The async stack of the flow's error, or null. */
    private transient StackTraceElement[] asyncStack;

    /**
     * @param code the error code
     */
    public FutoInError(String code) {
        this(code, null, null);
    }

    /**
     * @param code the error code
     * @param info the error_info, or null
     */
    public FutoInError(String code, String info) {
        this(code, info, null);
    }

    /**
     * @param code the error code: not empty, no NUL character
     * @param info the error_info, or null; no NUL character
     * @param cause the exception behind it, or null
     * @throws NullPointerException if code is null
     * @throws IllegalArgumentException for an empty code or a NUL character
     *         (a C string would end there: never cut silently)
     */
    public FutoInError(String code, String info, Throwable cause) {
        super(checkedCode(code) + (info == null ? "" : ": " + info), cause);
        this.code = code;
        this.info = Values.name(info, "error info");
    }

    private static String checkedCode(String code) {
        if (code == null) {
            throw new NullPointerException("FutoInError: code is null");
        }
        if (code.isEmpty()) {
            throw new IllegalArgumentException("error code is empty");
        }
        return Values.name(code, "error code");
    }

    /**
     * @return the error code, e.g. {@code "Timeout"}
     */
    public String code() {
        return code;
    }

    /**
     * Whether this is the error {@code code}: {@code e.is("NotFound")}.
     * Works for every code, standard or not (for a standard code the
     * subclass in {@link Errors} can be caught as well).
     *
     * @param code an error code
     * @return true if this error's code is {@code code}
     */
    public boolean is(String code) {
        return this.code.equals(code);
    }

    /**
     * @return the error_info, or null
     */
    public String info() {
        return info;
    }

    /**
     * The async stack of the flow's error, when this is the error a flow
     * ended with ({@link AsyncSteps#promise()}, {@link AsyncSteps#run()},
     * {@code execute(onError)}): frames[0] is the step that failed, the
     * last one a step at the root's level, across languages (see
     * {@link AsyncSteps#asyncStack()}). {@link #printStackTrace()} shows it
     * as a suppressed {@link AsyncStackTrace}.
     *
     * @return the frames, innermost first; empty when none was recorded
     */
    public StackTraceElement[] asyncStack() {
        StackTraceElement[] s = asyncStack;
        return s == null ? new StackTraceElement[0] : s.clone();
    }

    /** Once: the flow's async stack, also as a suppressed exception. */
    synchronized void attachAsyncStack(StackTraceElement[] stack) {
        if (asyncStack == null) {
            asyncStack = stack;
            addSuppressed(new AsyncStackTrace(code, stack));
        }
    }

    /**
     * Carries a flow's async stack in the text of
     * {@link Throwable#printStackTrace()}: its stack trace is the async
     * stack (language and function as class and method), not where it was
     * made.
     */
    public static final class AsyncStackTrace extends RuntimeException {
        private static final long serialVersionUID = 1L;

        AsyncStackTrace(String code, StackTraceElement[] stack) {
            super("async stack of " + code + " (innermost first)", null, true, true);
            setStackTrace(stack);
        }
    }

    /**
     * The exception class of a code: {@code of("Timeout", null)} is an
     * {@link Errors.Timeout}.
     *
     * @param code the error code
     * @param info the error_info, or null
     * @return a new, unthrown exception
     */
    public static FutoInError of(String code, String info) {
        return Errors.create(code, info, null);
    }
}
