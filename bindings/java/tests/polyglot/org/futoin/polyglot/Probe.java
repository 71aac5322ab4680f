package org.futoin.polyglot;

import org.futoin.async.AsyncSteps;

/** Java steps that report what the JVM the host plug-in started sees
 *  (bindings/java/tests/polyglot/installed_test.c). */
public final class Probe {
    private Probe() {
    }

    /** success(the JVM's java.class.path).
     *  @param asi the step
     *  @param args ignored */
    public static void classPath(AsyncSteps asi, Object... args) {
        asi.success(System.getProperty("java.class.path"));
    }
}
