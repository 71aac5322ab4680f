import org.futoin.async.AsyncSteps;

/**
 * Java steps of tests/debian/check.sh's polyglot flows, and its Java host
 * program: {@code java -cp /usr/share/java/futoin-async.jar:CLASSES DebSteps}
 * runs 20, a Python step (times two), a Lua step (plus two) and prints the
 * result and the binding's version.
 */
public final class DebSteps {
    private DebSteps() {
    }

    /**
     * The value times two.
     *
     * @param asi the step
     * @param args the value (a Long)
     */
    public static void twice(AsyncSteps asi, Object... args) {
        asi.success(((Number) args[0]).longValue() * 2);
    }

    /**
     * The value plus two.
     *
     * @param asi the step
     * @param args the value (a Long)
     */
    public static void addTwo(AsyncSteps asi, Object... args) {
        asi.success(((Number) args[0]).longValue() + 2);
    }

    /**
     * The Java host: 20, Python's double, Lua's add_two; prints the result
     * and the binding's version.
     *
     * @param args unused
     */
    public static void main(String[] args) {
        try (org.futoin.async.Tool tool = new org.futoin.async.Tool();
             AsyncSteps root = new AsyncSteps(tool)) {
            root.add(asi -> asi.success(20L))
                .addForeign("python", "deb_steps", "double")
                .addForeign("lua", "deb_steps", "add_two");
            System.out.println("java host got " + root.run());
            System.out.println("java futoin-async " + org.futoin.async.Version.binding());
        }
    }
}
