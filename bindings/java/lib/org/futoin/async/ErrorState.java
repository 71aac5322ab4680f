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
        Throwable t = (Throwable) o;
        return Errors.INTERNAL_ERROR.equals(code) && info != null
                && (info.equals(infoOf(t)) || info.equals(infoWithTrace(t))) ? t : null;
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

    /** Frames of a trace that error_info of a hosted flow shows, at most. */
    static final int TRACE_FRAMES = 8;
    /** Causes it names, at most. */
    static final int TRACE_CAUSES = 3;

    /**
     * The error_info of a Java exception that becomes InternalError in a
     * flow of a C, Python or Lua program (its loop is no Tool of Java's own),
     * where the exception object cannot be shown: its text, then the top of
     * its trace as printStackTrace() writes it, from where it was thrown
     * down to the step (the binding's dispatch below is left out), at most
     * {@value #TRACE_FRAMES} frames, and the text of its causes. In Java's
     * own flows: {@link #infoOf(Throwable)}, the trace stays on the
     * exception (last_exception).
     */
    static String infoOf(AsyncSteps a, Throwable t) {
        if (a.tool != null) {
            return infoOf(t);
        }
        /* a Java step added by name runs without a Tool: whose loop is it? */
        long b = a.handle();
        long core = b == 0 ? 0 : FutoInNative.async_tool(b);
        return core != 0 && BorrowedTools.ownedByJava(core) ? infoOf(t) : infoWithTrace(t);
    }

    static String infoWithTrace(Throwable t) {
        StringBuilder sb = new StringBuilder(t.toString());
        StackTraceElement[] st = t.getStackTrace();
        int n = 0;
        while (n < st.length && !dispatch(st[n])) {
            ++n;
        }
        for (int i = 0; i < Math.min(n, TRACE_FRAMES); ++i) {
            sb.append("\n\tat ").append(st[i]);
        }
        if (n > TRACE_FRAMES) {
            sb.append("\n\t... ").append(n - TRACE_FRAMES).append(" more");
        }
        Throwable c = t.getCause();
        for (int i = 0; c != null && c != t && i < TRACE_CAUSES; ++i, c = c.getCause()) {
            sb.append("\nCaused by: ").append(c);
        }
        return sb.toString().replace("\0", "\\0");
    }

    /** A frame of the binding that ran the step (where its trace is cut). */
    private static boolean dispatch(StackTraceElement e) {
        String c = e.getClassName();
        return c.equals("org.futoin.async.Dispatch") || c.equals("org.futoin.async.Polyglot$NamedStep");
    }
}
