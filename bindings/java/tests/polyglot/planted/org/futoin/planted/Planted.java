package org.futoin.planted;

import org.futoin.async.AsyncSteps;

/** A step class polyglot.sh plants in a C program's current folder and
 *  behind relative CLASSPATH entries (issue 23 item 7): the Java host
 *  plug-in must not load it from there, only from an absolute entry.
 *  polyglot.sh builds it on its own (OUTDIR/planted, planted.jar), not into
 *  host-test, which is on the class path of the tests. */
public final class Planted {
    private Planted() {
    }

    /** success(the first value received).
     *  @param asi the step
     *  @param args the values received */
    public static void echo(AsyncSteps asi, Object... args) {
        asi.success(args.length > 0 ? args[0] : null);
    }
}
