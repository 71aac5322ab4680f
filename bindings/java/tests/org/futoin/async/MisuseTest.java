package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import org.junit.Test;

/** Bad input gives a clear Java exception at the call site, never a crash. */
public class MisuseTest extends ToolFixture {
    private interface Call {
        void run() throws Exception;
    }

    private static <T extends Throwable> T expect(Class<T> type, String fragment, Call c) {
        try {
            c.run();
        } catch (Throwable t) {
            if (!type.isInstance(t)) {
                throw new AssertionError("expected " + type.getSimpleName() + ", got " + t, t);
            }
            String m = String.valueOf(t.getMessage());
            assertTrue("message \"" + m + "\" should mention \"" + fragment + "\"", m.contains(fragment));
            return type.cast(t);
        }
        fail("expected " + type.getSimpleName());
        return null;
    }

    // ---- strings with a NUL character (README rule 5): refused, never cut ----

    private static final String NUL = "a\0b";

    /** Runs `body` as a step and returns what it threw. */
    private Throwable inStep(Step body) {
        Throwable[] got = new Throwable[1];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            try {
                body.execute(asi);
            } catch (Throwable t) {
                got[0] = t;
            }
        });
        root.run();
        root.close();
        return got[0];
    }

    private static void refused(Throwable t, String what) {
        assertTrue(String.valueOf(t), t instanceof IllegalArgumentException);
        assertTrue(t.getMessage(), t.getMessage().contains(what) && t.getMessage().contains("NUL"));
    }

    @Test
    public void nulInErrorCodesIsRefused() {
        refused(inStep(asi -> asi.error(NUL)), "error code");
        refused(inStep(asi -> asi.error("Code", NUL)), "error info");
        expect(IllegalArgumentException.class, "NUL", () -> new FutoInError(NUL));
        expect(IllegalArgumentException.class, "NUL", () -> new FutoInError("X", NUL));
        expect(IllegalArgumentException.class, "NUL", () -> FutoInError.of(NUL, null));
        expect(IllegalArgumentException.class, "NUL", () -> new Errors.Timeout(NUL));
        /* and from outside the step's callback */
        AsyncSteps root = new AsyncSteps(tool);
        Throwable[] got = new Throwable[1];
        root.add(asi -> {
            asi.waitExternal();
            tool.immediate(() -> {
                try {
                    asi.error(NUL);
                } catch (IllegalArgumentException e) {
                    got[0] = e;
                    asi.success();
                }
            });
        });
        root.run();
        refused(got[0], "error code");
    }

    @Test
    public void nulInLoopLabelsIsRefused() {
        refused(inStep(asi -> asi.loop(a -> a.breakLoop(), NUL)), "loop() label");
        refused(inStep(asi -> asi.repeat(1, (a, i) -> { }, NUL)), "repeat() label");
        refused(inStep(asi -> asi.forEach(List.of(1), (a, k, v) -> { }, NUL)), "repeat() label");
        List<Throwable> got = new ArrayList<>();
        AsyncSteps root = new AsyncSteps(tool);
        root.loop(asi -> {
            try {
                asi.breakLoop(NUL);
            } catch (IllegalArgumentException e) {
                got.add(e);
            }
            try {
                asi.continueLoop(NUL);
            } catch (IllegalArgumentException e) {
                got.add(e);
            }
            asi.breakLoop();
        }, "a");
        root.run();
        assertEquals(2, got.size());
        refused(got.get(0), "breakLoop() label");
        refused(got.get(1), "continueLoop() label");
    }

    @Test
    public void nulInStateKeysIsRefused() {
        AsyncSteps root = new AsyncSteps(tool);
        root.state().put("a", 1);
        java.util.Map<String, Object> st = root.state();
        expect(IllegalArgumentException.class, "state() key", () -> st.put(NUL, 2));
        expect(IllegalArgumentException.class, "state() key", () -> st.get(NUL));
        expect(IllegalArgumentException.class, "state() key", () -> st.remove(NUL));
        expect(IllegalArgumentException.class, "state() key", () -> st.containsKey(NUL));
        expect(IllegalArgumentException.class, "state() key", () -> st.putIfAbsent(NUL, 2));
        assertEquals(1, st.get("a"));
        assertEquals(1, st.size());
        refused(inStep(asi -> asi.state().put(NUL, 1)), "state() key");
    }

    @Test
    public void nulInForeignNamesIsRefused() {
        refused(inStep(asi -> asi.addForeign("py\0thon", "m", "f")), "addForeign() language");
        refused(inStep(asi -> asi.addForeign("c", "libm.so.6\0x", "f")), "addForeign() module");
        refused(inStep(asi -> asi.addForeign("c", "libm.so.6", "hypot\0")), "addForeign() function");
        expect(IllegalArgumentException.class, "addForeign() module",
                () -> new AsyncSteps(tool).addForeign("java", NUL, "f"));
    }

    @Test
    public void nullCallbacks() {
        AsyncSteps root = new AsyncSteps(tool);
        expect(NullPointerException.class, "add(): step is null", () -> root.add((Step) null));
        expect(NullPointerException.class, "onerror is null", () -> root.add(asi -> { }, null));
        expect(NullPointerException.class, "body is null", () -> root.loop(null));
        expect(NullPointerException.class, "body is null", () -> root.repeat(1, null));
        expect(NullPointerException.class, "onerror is null", () -> root.parallel(null));
        expect(NullPointerException.class, "stage is null", () -> root.await(null));
        expect(NullPointerException.class, "task is null", () -> tool.execute(null));
        expect(NullPointerException.class, "sync object is null", () -> root.sync(null, asi -> { }));
        expect(NullPointerException.class, "onError is null", () -> root.execute(null));
        List<Throwable> inStep = new ArrayList<>();
        root.add(asi -> {
            try {
                asi.setCancel(null);
            } catch (NullPointerException e) {
                inStep.add(e);
            }
            try {
                asi.error(null);
            } catch (NullPointerException e) {
                inStep.add(e);
            }
            try {
                asi.parallel().add((Step) null);
            } catch (NullPointerException e) {
                inStep.add(e);
            }
        });
        root.run();
        assertEquals(3, inStep.size());
    }

    @Test
    public void moreThanFourValues() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.success(1, 2, 3, 4, 5));
        FutoInError e = null;
        try {
            root.run();
        } catch (FutoInError err) {
            e = err;
        }
        assertTrue(e instanceof Errors.InternalError); // thrown in the step: the flow fails
        assertTrue(e.getCause() instanceof IllegalArgumentException);
        assertTrue(e.getCause().getMessage().contains("at most 4 values"));
        expect(IllegalArgumentException.class, "at most 4 values",
                () -> new AsyncSteps(tool).successStep(1, 2, 3, 4, 5));
    }

    @Test
    public void finishedStepHandle() {
        AsyncSteps[] kept = new AsyncSteps[1];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> kept[0] = asi);
        root.run();
        String msg = "this step has finished";
        expect(IllegalStateException.class, msg, () -> kept[0].success());
        expect(IllegalStateException.class, msg, () -> kept[0].success(1));
        expect(IllegalStateException.class, msg, () -> kept[0].error("X"));
        expect(IllegalStateException.class, msg, () -> kept[0].add(asi -> { }));
        expect(IllegalStateException.class, msg, () -> kept[0].state());
        expect(IllegalStateException.class, msg, () -> kept[0].waitExternal());
        expect(IllegalStateException.class, msg, () -> kept[0].setTimeout(1));
        expect(IllegalStateException.class, msg, () -> kept[0].breakLoop());
        assertTrue(!kept[0].isValid());
        assertEquals(0, tool.misuseCount()); // caught in Java, never reached the runtime
    }

    /* A waiting step that ended by its timeout: a completion now lost the
     * race, dropped quietly (README rule 3; it used to throw); any other
     * call through the handle is refused as for a finished step. */
    @Test
    public void waitingStepDiesWithItsStep() {
        AsyncSteps[] kept = new AsyncSteps[1];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            kept[0] = asi;
            asi.setTimeout(5);
        }, (asi, code) -> asi.success());
        root.run();
        assertFalse(kept[0].success());
        assertFalse(kept[0].success(1, 2));
        assertNull(kept[0].error("Late"));
        expect(IllegalStateException.class, "this step has finished", () -> kept[0].add(a -> { }));
        expect(IllegalStateException.class, "this step has finished", () -> kept[0].setTimeout(1));
        assertEquals(0, tool.misuseCount());
    }

    @Test
    public void parallelOfAFinishedStep() {
        Parallel[] kept = new Parallel[1];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> kept[0] = asi.parallel());
        root.run();
        expect(IllegalStateException.class, "has finished", () -> kept[0].add(asi -> { }));
    }

    @Test
    public void wrongThread() throws Exception {
        AsyncSteps root = new AsyncSteps(tool);
        AsyncSteps[] step = new AsyncSteps[1];
        CompletableFuture<Void> done = new CompletableFuture<>();
        root.add(asi -> {
            step[0] = asi;
            Throwable[] seen = new Throwable[3];
            Thread t = new Thread(() -> {
                try {
                    asi.success(); // not waiting: refused
                } catch (Throwable e) {
                    seen[0] = e;
                }
                try {
                    asi.add(a -> { });
                } catch (Throwable e) {
                    seen[1] = e;
                }
                try {
                    new AsyncSteps(tool);
                } catch (Throwable e) {
                    seen[2] = e;
                }
            }, "intruder");
            t.start();
            t.join();
            assertTrue(seen[0].getMessage(), seen[0].getMessage().contains("for a step that does not wait"));
            assertTrue(seen[1].getMessage(), seen[1].getMessage().contains("not the loop thread"));
            assertTrue(seen[1].getMessage(), seen[1].getMessage().contains("\"intruder\""));
            assertTrue(seen[2] instanceof IllegalStateException);
            done.complete(null);
        });
        root.run();
        done.get();
        /* a plain thread: ForkJoinTask.get() may run the task on the caller */
        Thread t = new Thread(() -> {
            expect(IllegalStateException.class, "not the loop thread", () -> root.add(asi -> { }));
            expect(IllegalStateException.class, "not the loop thread", () -> root.state());
            expect(IllegalStateException.class, "not the loop thread", () -> tool.immediate(() -> { }));
            done.obtrudeValue(null);
        });
        CompletableFuture<Void> fromThread = new CompletableFuture<>();
        t.setUncaughtExceptionHandler((th, e) -> fromThread.completeExceptionally(e));
        t.start();
        t.join();
        fromThread.complete(null);
        fromThread.get();
    }

    @Test
    public void rootOnlyAndStepOnlyCalls() {
        AsyncSteps root = new AsyncSteps(tool);
        expect(IllegalStateException.class, "not for a root", () -> root.success());
        expect(IllegalStateException.class, "not for a root", () -> root.error("X"));
        List<Throwable> seen = new ArrayList<>();
        root.add(asi -> {
            try {
                asi.execute();
            } catch (IllegalStateException e) {
                seen.add(e);
            }
            try {
                asi.cancel();
            } catch (IllegalStateException e) {
                seen.add(e);
            }
            try {
                asi.promise();
            } catch (IllegalStateException e) {
                seen.add(e);
            }
        });
        root.run();
        assertEquals(3, seen.size());
        assertTrue(seen.get(0).getMessage().contains("only a root"));
    }

    @Test
    public void executeTwice() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.waitExternal());
        root.execute();
        expect(IllegalStateException.class, "executing already", root::execute);
        root.cancel();
        tool.run();
    }

    @Test
    public void closedRootAndTool() {
        AsyncSteps root = new AsyncSteps(tool);
        root.close();
        expect(IllegalStateException.class, "root is closed", () -> root.add(asi -> { }));
        expect(IllegalStateException.class, "root is closed", root::execute);
        Tool t2 = new Tool();
        AsyncSteps r2 = new AsyncSteps(t2);
        t2.close();
        expect(IllegalStateException.class, "root is closed", () -> r2.add(asi -> { }));
        expect(IllegalStateException.class, "Tool is closed", () -> new AsyncSteps(t2));
        expect(java.util.concurrent.RejectedExecutionException.class, "closed", () -> t2.execute(() -> { }));
        expect(IllegalStateException.class, "closed", t2::run);
        t2.close(); // idempotent
    }

    @Test
    public void inFlowMisuseIsInternalError() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            asi.success();
            asi.success(); // reported by the runtime into the flow
        });
        try {
            root.run();
            fail();
        } catch (FutoInError e) {
            assertEquals(Errors.INTERNAL_ERROR, e.code());
            assertTrue(root.errorInfo(), root.errorInfo().contains("success() after success()"));
        }
    }

    @Test
    public void breakOutsideALoop() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.breakLoop("NOPE"));
        try {
            root.run();
            fail();
        } catch (FutoInError e) {
            assertEquals(Errors.INTERNAL_ERROR, e.code());
        }
    }

    @Test
    public void foreignValuePassedTwice() throws Exception {
        AsyncSteps root = new AsyncSteps(tool);
        ForeignValue[] fv = new ForeignValue[1];
        root.add(asi -> FutoInNative.test_add_foreign_producer(asi.binary()));
        root.add((asi, v) -> {
            fv[0] = (ForeignValue) v;
            asi.success(v);
        });
        root.add((asi, v) -> asi.success(fv[0])); // moved already
        try {
            root.run();
            fail();
        } catch (FutoInError e) {
            assertTrue(e.getCause() instanceof IllegalStateException);
            assertTrue(e.getCause().getMessage().contains("already passed on"));
        }
        assertTrue(!fv[0].isPresent());
    }

    @Test
    public void unsupportedRepeatAndTimeoutArguments() {
        AsyncSteps root = new AsyncSteps(tool);
        expect(IllegalArgumentException.class, "negative count", () -> root.repeat(-1, (a, i) -> { }));
        expect(IllegalArgumentException.class, "negative delay", () -> tool.deferred(-1, () -> { }));
        expect(IllegalArgumentException.class, "max >= 1", () -> new Mutex(0, 0));
    }

    @Test
    public void nestedRun() throws InterruptedException {
        AsyncSteps root = new AsyncSteps(tool);
        List<Throwable> seen = new ArrayList<>();
        root.add(asi -> {
            try {
                tool.run();
            } catch (IllegalStateException e) {
                seen.add(e);
            }
        });
        root.run();
        assertEquals(1, seen.size());
        assertTrue(seen.get(0).getMessage().contains("running already"));
    }

    @Test
    public void runOnAStepOrOnTheLoopOfADedicatedTool() throws ExecutionException, InterruptedException {
        try (Tool t = Tool.startThread("misuse-loop")) {
            CompletableFuture<Throwable> f = t.call(() -> {
                AsyncSteps r = new AsyncSteps(t);
                try {
                    r.run();
                    return null;
                } catch (IllegalStateException e) {
                    return e;
                } finally {
                    r.close();
                }
            });
            assertTrue(f.get().getMessage().contains("would block the loop thread"));
        }
    }

    /**
     * A root made by newInstance() through a handle no Tool of this binding
     * runs (here one wrapped with no Tool, as another language would hand
     * it over) has no Tool to execute it: execute(), promise() and run()
     * refuse with a clear error, before anything runs, and the root can
     * still take steps and be closed.
     */
    @Test
    public void aRootMadeFromAnAdoptedHandleOfOursRunsOnItsTool() {
        /* wrap() of one of our own handles finds the Java Tool of its loop:
         * newInstance() is a root of that Tool (the rootless case, a loop
         * hosted by another program, is HostedTest.aRootMadeWithoutAToolRefusesToExecute) */
        List<String> got = new ArrayList<>();
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            AsyncSteps other = AsyncSteps.wrap(asi.binary(), null).newInstance();
            assertSame(tool, other.tool());
            other.add(a -> got.add("ran"));
            other.execute();
            asi.success("done");
        });
        assertEquals("done", root.run());
        tool.run();
        assertEquals(List.of("ran"), got);
    }
}
