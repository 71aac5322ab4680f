package org.futoin.async;

import java.util.ArrayList;
import java.util.List;

import org.junit.runner.JUnitCore;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;

/**
 * Runs the suite and ends with "java: N passed, M failed" (what
 * tests/run_all.sh records). Test classes come from the arguments, or the
 * whole suite. Exit status 0 only if nothing failed.
 */
public final class RunAll {
    static final Class<?>[] SUITE = {
        ErrorsTest.class, ErrorStateTest.class, ValuesTest.class, CoreTest.class, MisuseTest.class, ThreadsTest.class,
        SyncTest.class, StopTest.class, InteropTest.class, SpecTest.class, PolyglotTest.class, ChainTest.class, RecTableTest.class, VersionTest.class, NativeLoaderTest.class, HostedTest.class,
        VirtualTimeTest.class, LoadPolicyTest.class, WatchTest.class, TraceTest.class,
        LeakTest.class,
    };

    private RunAll() {
    }

    public static void main(String[] args) throws ClassNotFoundException {
        List<Class<?>> classes = new ArrayList<>();
        for (String a : args) {
            classes.add(Class.forName(a.contains(".") ? a : "org.futoin.async." + a));
        }
        if (classes.isEmpty()) {
            classes.addAll(List.of(SUITE));
        }
        JUnitCore core = new JUnitCore();
        int run = 0;
        int failed = 0;
        for (Class<?> c : classes) {
            Result r = core.run(c);
            run += r.getRunCount();
            failed += r.getFailureCount();
            System.out.printf("%-14s %3d run, %d failed, %d ignored, %.1f s%n", c.getSimpleName(),
                    r.getRunCount(), r.getFailureCount(), r.getIgnoreCount(), r.getRunTime() / 1000.0);
            for (Failure f : r.getFailures()) {
                System.out.println("FAIL " + f.getTestHeader());
                String[] lines = f.getTrace().split("\n");
                for (int i = 0; i < Math.min(lines.length, 14); ++i) {
                    System.out.println(lines[i]);
                }
            }
        }
        System.out.println("java: " + (run - failed) + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }
}
