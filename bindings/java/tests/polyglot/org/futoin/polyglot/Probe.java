package org.futoin.polyglot;

import java.util.ArrayList;
import java.util.List;

import org.futoin.async.AsyncSteps;
import org.futoin.async.Tool;

/** Java steps that report what a Java step sees in a flow of a C, Python
 *  or Lua program (installed_test.c, plugin_test.c, hosted_timers.py and
 *  hosted_timers.lua). */
public final class Probe {
    private Probe() {
    }

    /** success(the JVM's java.class.path).
     *  @param asi the step
     *  @param args ignored */
    public static void classPath(AsyncSteps asi, Object... args) {
        asi.success(System.getProperty("java.class.path"));
    }

    /** The hosting program's loop through asi.tool(): an immediate, a
     *  deferred cancelled before it is due, a deferred and an execute(),
     *  then success("immediate,deferred,execute" as they ran, the loop's
     *  address).
     *  @param asi the step
     *  @param args ignored */
    public static void timers(AsyncSteps asi, Object... args) {
        Tool t = asi.tool();
        if (t == null || !t.isBorrowed()) {
            throw asi.error("InternalError", "asi.tool() is " + t + ", not the hosting program's loop");
        }
        List<String> order = new ArrayList<>();
        asi.waitExternal();
        /* far off: a stall before the cancelling immediate must not fire it */
        Tool.Handle never = t.deferred(60_000, () -> order.add("a cancelled timer ran"));
        t.immediate(() -> {
            order.add(t.isLoopThread() ? "immediate" : "immediate off the loop thread");
            never.cancel();
            t.deferred(1, () -> {
                order.add("deferred");
                t.execute(() -> {
                    order.add("execute");
                    asi.success(String.join(",", order), t.address());
                });
            });
        });
    }
}
