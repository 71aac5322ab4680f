package org.futoin.async;

/**
 * A flow's error state (FTN12 §1.7) read from the runtime each time: what
 * {@code asi.errorInfo()}, {@code asi.lastException()},
 * {@code asi.asyncStack()} and the read-only names of {@code state()}
 * return, so that they always agree with each other and with the C core
 * (after a handled breakLoop()/continueLoop() all read null). Loop thread,
 * with a live handle of the flow.
 */
final class ErrorState {
    static final String ERROR_INFO = "error_info";
    static final String LAST_EXCEPTION = "last_exception";
    static final String ASYNC_STACK = "async_stack";

    private ErrorState() {
    }

    /** Is `key` one of the names state() reads from here? */
    static boolean reserved(Object key) {
        return ERROR_INFO.equals(key) || LAST_EXCEPTION.equals(key) || ASYNC_STACK.equals(key);
    }

    /** The value of a reserved name, as the accessor of that name says. */
    static Object get(long h, Object key) {
        if (ERROR_INFO.equals(key)) {
            return info(h);
        }
        if (LAST_EXCEPTION.equals(key)) {
            return lastException(h);
        }
        StackTraceElement[] s = AsyncStack.of(h, null);
        return s.length == 0 ? null : s;
    }

    /** error_info of the last error, or null. */
    static String info(long h) {
        return Values.fromUtf8(FutoInNative.error_info(h));
    }

    /** The code of the last error, or null. */
    static String code(long h) {
        return Values.fromUtf8(FutoInNative.error_code(h));
    }

    /**
     * The Java exception behind the last error, or null. The runtime keeps
     * the last language exception object until another one replaces it, so
     * one kept for an older error (a Timeout after a handled exception) is
     * not this error's: it counts only when it says what the error says.
     */
    static Throwable cause(long h) {
        Object o = FutoInNative.last_exception(h);
        if (!(o instanceof Throwable)) {
            return null;
        }
        String code = code(h);
        String info = info(h);
        if (o instanceof FutoInError) {
            FutoInError e = (FutoInError) o;
            return e.code().equals(code) && java.util.Objects.equals(e.info(), info) ? e : null;
        }
        return Errors.INTERNAL_ERROR.equals(code) && infoOf((Throwable) o).equals(info) ? (Throwable) o : null;
    }

    /** last_exception: the Java exception behind the last error, else its code, else null. */
    static Object lastException(long h) {
        Throwable t = cause(h);
        return t != null ? t : code(h);
    }

    /** The error_info of a Java exception that becomes InternalError: its
     *  text ({@code toString()}), not its stack trace, which stays on the
     *  exception; a NUL (which C strings cannot hold) is shown as \0. */
    static String infoOf(Throwable t) {
        return t.toString().replace("\0", "\\0");
    }
}
