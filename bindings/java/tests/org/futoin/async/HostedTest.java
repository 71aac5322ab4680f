package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

import org.junit.Test;

/**
 * Java steps in a flow of a C program (the java host, as the plug-in
 * serves C, Python and Lua programs): a tool and a root of C's own
 * (FutoInNative.test_c_hosted, glue/jni_testhooks.c) run a Java step added
 * by name. Its {@code asi.tool()} is the program's loop, lent to Java: its
 * timers work, it is refused once nothing proves the loop alive, and
 * pending timers keep the program from freeing it.
 */
public class HostedTest {
    /** The steps, resolved by name ("org.futoin.async.HostedTest$Steps"). */
    public static final class Steps {
        private Steps() {
        }

        static Tool tool;
        static Tool again;
        static final List<String> refused = new ArrayList<>();
        static int fired;

        private static void refused(String what, Runnable r) {
            try {
                r.run();
                refused.add(what + " allowed");
            } catch (IllegalStateException e) {
                refused.add(what + (e.getMessage().contains("the program that hosts this JVM") ? " refused"
                        : " refused: " + e.getMessage()));
            }
        }

        /** immediate, a cancelled deferred, deferred, execute; then success(their order). */
        public static void timers(AsyncSteps asi, Object... args) {
            Tool t = asi.tool();
            tool = t;
            again = asi.tool();
            List<String> order = new ArrayList<>();
            asi.waitExternal();
            /* far off: a stall before the cancelling immediate must not fire it */
            Tool.Handle never = t.deferred(60_000, () -> order.add("a cancelled timer ran"));
            t.immediate(() -> {
                order.add("immediate" + (t.isLoopThread() ? "" : " off the loop thread"));
                never.cancel();
                t.deferred(1, () -> {
                    order.add("deferred");
                    t.execute(() -> {
                        order.add("execute");
                        asi.success(String.join(",", order));
                    });
                });
            });
        }

        /** What a borrowed Tool refuses even while its loop is alive. */
        public static void refusals(AsyncSteps asi, Object... args) {
            Tool t = asi.tool();
            refused.clear();
            refused("run()", t::run);
            refused("runOnce()", t::runOnce);
            refused("stop()", t::stop);
            refused("close()", t::close);
            refused("new AsyncSteps()", () -> new AsyncSteps(t));
            refused("new Throttle()", () -> new Throttle(t, 1));
            /* the load policy is its program's to set */
            refused("setLoadPolicy()", () -> t.setLoadPolicy(LoadPolicy.newBuilder().allowLanguages().build()));
            asi.success(String.join(",", refused));
        }

        /** Throws an exception with a cause, from a method below the step. */
        public static void throwing(AsyncSteps asi, Object... args) throws java.io.IOException {
            readDisk();
        }

        private static void readDisk() throws java.io.IOException {
            throw new java.io.IOException("disk full", new IllegalStateException("no space"));
        }

        /** Throws from 20 calls below the step. */
        public static void deep(AsyncSteps asi, Object... args) {
            down(20);
        }

        private static void down(int n) {
            if (n == 0) {
                throw new UnsupportedOperationException("at the bottom");
            }
            down(n - 1);
        }

        /** newInstance() on the program's loop: a root with no Java Tool. */
        public static void rootless(AsyncSteps asi, Object... args) {
            AsyncSteps other = asi.newInstance();
            List<String> got = new ArrayList<>();
            other.add(a -> got.add("ran"));
            Runnable[] calls = {other::execute, () -> other.execute(e -> got.add("onError")),
                    other::promise, other::run};
            for (Runnable c : calls) {
                try {
                    c.run();
                    got.add("allowed");
                } catch (IllegalStateException e) {
                    got.add(e.getMessage().contains("no Tool") ? "refused" : e.getMessage());
                }
            }
            other.close();
            other.close(); // idempotent
            asi.success(String.join(",", got));
        }

        /** A timer that outlives its step. */
        public static void leaveATimer(AsyncSteps asi, Object... args) {
            asi.tool().deferred(1, () -> ++fired);
            asi.success("left");
        }
    }

    private static final String STEPS = Steps.class.getName();

    private static String hosted(String function, int mode, long[] core) {
        return FutoInNative.test_c_hosted(STEPS, function, mode, core);
    }

    @Test
    public void aStepInACProgramsFlowGetsThatProgramsLoop() {
        long refs = Polyglot.globalRefs();
        long[] core = new long[1];
        assertEquals("ok:immediate,deferred,execute", hosted("timers", 0, core));
        assertNotNull(Steps.tool);
        assertTrue(Steps.tool.isBorrowed());
        assertEquals(core[0], Steps.tool.address());
        assertSame("one Tool per loop", Steps.tool, Steps.again);
        assertEquals(refs, Polyglot.globalRefs());
    }

    @Test
    public void theProgramsLoopIsRefusedOnceNothingProvesItAlive() {
        long[] core = new long[1];
        assertEquals("ok:immediate,deferred,execute", hosted("timers", 0, core));
        Tool t = Steps.tool; /* the program has freed its loop by now */
        assertFalse(t.isLoopThread());
        try {
            t.immediate(() -> fail("ran"));
            fail("immediate() on a loop that may be gone");
        } catch (IllegalStateException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("the program that hosts this JVM"));
        }
        try {
            t.deferred(1, () -> fail("ran"));
            fail("deferred() on a loop that may be gone");
        } catch (IllegalStateException e) {
            assertTrue(e.getMessage(), e.getMessage().startsWith("deferred()"));
        }
        try {
            t.execute(() -> fail("ran"));
            fail("execute() on a loop that may be gone");
        } catch (RejectedExecutionException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("the program that hosts this JVM"));
        }
        assertFalse(t.isClosed());
        assertTrue(t.toString(), t.toString().startsWith("Tool[borrowed 0x"));
    }

    @Test
    public void aRootMadeWithoutAToolRefusesToExecute() {
        long[] core = new long[1];
        assertEquals("ok:refused,refused,refused,refused", hosted("rootless", 0, core));
    }

    @Test
    public void whatABorrowedToolNeverDoes() {
        long[] core = new long[1];
        assertEquals("ok:run() refused,runOnce() refused,stop() refused,close() refused,"
                + "new AsyncSteps() refused,new Throttle() refused,setLoadPolicy() refused", hosted("refusals", 0, core));
    }

    @Test
    public void aJavaExceptionCarriesItsTraceIntoTheProgramsErrorInfo() {
        long[] core = new long[1];
        String r = hosted("throwing", 0, core);
        String[] lines = r.split("\n");
        assertEquals(r, "error:InternalError:java.io.IOException: disk full", lines[0]);
        assertTrue(r, lines[1].startsWith("\tat " + STEPS + ".readDisk(HostedTest.java:"));
        assertTrue(r, lines[2].startsWith("\tat " + STEPS + ".throwing(HostedTest.java:"));
        assertEquals(r, "Caused by: java.lang.IllegalStateException: no space", lines[3]);
        assertEquals(r, 4, lines.length); /* the binding's dispatch is left out */
    }

    @Test
    public void theTraceInErrorInfoIsBounded() {
        long[] core = new long[1];
        String r = hosted("deep", 0, core);
        String[] lines = r.split("\n");
        assertEquals(r, "error:InternalError:java.lang.UnsupportedOperationException: at the bottom", lines[0]);
        assertEquals(r, 1 + ErrorState.TRACE_FRAMES + 1, lines.length);
        for (int i = 1; i <= ErrorState.TRACE_FRAMES; ++i) {
            assertTrue(r, lines[i].startsWith("\tat " + STEPS + ".down(HostedTest.java:"));
        }
        /* 21 frames of down() and deep() above the dispatch: 8 shown */
        assertEquals(r, "\t... 14 more", lines[lines.length - 1]);
    }

    @Test
    public void inJavasOwnFlowsErrorInfoIsTheExceptionsText() throws Exception {
        try (Tool tool = new Tool(); AsyncSteps root = new AsyncSteps(tool)) {
            String[] info = new String[1];
            root.add(asi -> asi.addForeign("java", STEPS, "throwing"), (asi, code) -> {
                info[0] = asi.errorInfo();
                asi.success();
            });
            root.run();
            assertEquals("java.io.IOException: disk full", info[0]);
        }
    }

    @Test
    public void pendingTimersKeepTheProgramFromFreeingItsLoop() {
        long refs = Polyglot.globalRefs();
        long[] core = new long[1];
        Steps.fired = 0;
        /* the flow is done while the timer waits: freeing the loop is
         * refused (":busy"); it fires when the program runs it again */
        assertEquals("ok:left:busy", hosted("leaveATimer", 1, core));
        assertEquals(1, Steps.fired);
        assertEquals(refs, Polyglot.globalRefs());
    }
}
