package example;

import org.futoin.async.AsyncSteps;

/**
 * A user's Java steps, compiled against the jar and found through
 * CLASSPATH (this class's folder next to the jar): any program with that
 * CLASSPATH runs them, Java or not.
 */
public final class UserSteps {
    private UserSteps() {
    }

    /** append(trail, n): passes on (trail + "&gt;java", n + 1). */
    public static void append(AsyncSteps asi, Object... args) {
        asi.success(args[0] + ">java", ((Number) args[1]).longValue() + 1);
    }

    /** fail(): error UserError, error_info "java". */
    public static void fail(AsyncSteps asi, Object... args) {
        throw asi.error("UserError", "java");
    }
}
