package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** The FTN12 API from Java, on a Tool run by the test's thread. */
public class CoreTest {
    private Tool tool;
    private List<String> log;

    @Before
    public void setUp() {
        tool = new Tool();
        log = new ArrayList<>();
    }

    @After
    public void tearDown() {
        assertEquals("misuse reports", 0, tool.misuseCount());
        tool.close();
    }

    private FutoInError runFailing(AsyncSteps root) {
        try {
            root.run();
        } catch (FutoInError e) {
            return e;
        }
        throw new AssertionError("the flow did not fail");
    }

    // ---- steps and values ----------------------------------------------------

    @Test
    public void chainingAndImplicitSuccess() {
        AsyncSteps root = new AsyncSteps(tool);
        assertSame(root, root.add(asi -> log.add("a")).add(asi -> log.add("b")));
        assertNull(root.run());
        assertEquals(List.of("a", "b"), log);
    }

    @Test
    public void resultOfRun() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.success(1, "x"));
        assertEquals(List.of(1, "x"), root.run());
    }

    @Test
    public void subStepsResultReachesNextStep() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.add(a -> a.add(b -> b.success("deep"))));
        root.add((asi, v) -> asi.success(v + "!"));
        assertEquals("deep!", root.run());
    }

    @Test
    public void successStep() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            asi.add(a -> log.add("sub"));
            asi.successStep(7, "seven");
        });
        root.add((asi, a, b) -> asi.success(a + "/" + b));
        assertEquals("7/seven", root.run());
        assertEquals(List.of("sub"), log);
    }

    // ---- errors ----------------------------------------------------------------

    @Test
    public void errorThrowsAndEndsTheStep() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            try {
                asi.error(Errors.INVALID_REQUEST, "bad");
            } catch (Errors.InvalidRequest e) {
                log.add("caught " + e.code() + " " + e.info());
                throw e;
            }
            log.add("not reached");
        });
        FutoInError e = runFailing(root);
        assertTrue(e instanceof Errors.InvalidRequest);
        assertEquals("bad", e.info());
        assertEquals(List.of("caught InvalidRequest bad"), log);
        assertEquals("bad", root.errorInfo());
        assertSame(e, root.lastException()); // its stack trace shows the error() call
    }

    @Test
    public void throwAsiErrorCompiles() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add((asi, v) -> {
            if (v == null) {
                throw asi.error("NoValue");
            }
        });
        assertEquals("NoValue", runFailing(root).code());
    }

    @Test
    public void errorHandlerRecovers() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.error("MyError", "details"), (asi, code) -> {
            log.add(code + " " + asi.state().get("error_info"));
            asi.success("recovered");
        });
        root.add((asi, v) -> asi.success(v));
        assertEquals("recovered", root.run());
        assertEquals(List.of("MyError details"), log);
    }

    @Test
    public void anyUnicodeInCodesAndInfo() {
        String code = "\u041e\u0448\u0438\u0431\u043a\u0430\uD83D\uDE00";
        String info = "caf\u00e9 \uD83D\uDE80";
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.error(code, info), (asi, c) -> log.add(c + " " + asi.state().get("error_info")));
        FutoInError e = runFailing(root);
        assertEquals(List.of(code + " " + info), log);
        assertEquals(code, e.code());
        assertEquals(info, root.errorInfo());
    }

    @Test
    public void errorHandlerAddsSteps() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.error("E1"), (asi, code) -> asi.add(a -> a.success("instead")));
        root.add((asi, v) -> asi.success(v));
        assertEquals("instead", root.run());
    }

    @Test
    public void thrownFutoInErrorKeepsItsCode() {
        Errors.Unauthorized mine = new Errors.Unauthorized("token expired");
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            throw mine;
        }, (asi, code) -> log.add(code + " " + asi.state().get("error_info") + " "
                + (asi.state().get("last_exception") == mine)));
        FutoInError e = runFailing(root);
        assertSame(mine, e);
        assertEquals(List.of("Unauthorized token expired true"), log);
    }

    @Test
    public void anyOtherThrowableIsInternalErrorWithItAsCause() {
        IllegalArgumentException boom = new IllegalArgumentException("boom");
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            throw boom;
        });
        FutoInError e = runFailing(root);
        assertTrue(e instanceof Errors.InternalError);
        assertSame(boom, e.getCause());
        assertSame(boom, root.lastException());
        /* error_info is the exception's text; its stack trace stays on it
         * (issue 18: it used to be the whole trace, printed twice) */
        assertEquals("java.lang.IllegalArgumentException: boom", root.errorInfo());
    }

    @Test
    public void internalErrorMessageIsTheInfoAndTheTraceIsPrintedOnce() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            throw new IOException("disk full");
        });
        FutoInError e = runFailing(root);
        assertEquals("InternalError: java.io.IOException: disk full", e.getMessage());
        assertEquals("java.io.IOException: disk full", e.info());
        java.io.StringWriter w = new java.io.StringWriter();
        e.printStackTrace(new java.io.PrintWriter(w));
        String text = w.toString();
        String site = "at org.futoin.async.CoreTest.lambda$internalErrorMessageIsTheInfoAndTheTraceIsPrintedOnce$";
        assertEquals(text, 1, text.split(java.util.regex.Pattern.quote(site), -1).length - 1);
        assertTrue(text, text.contains("Caused by: java.io.IOException: disk full"));
    }

    @Test
    public void checkedExceptionsToo() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            throw new IOException("disk");
        });
        FutoInError e = runFailing(root);
        assertEquals(Errors.INTERNAL_ERROR, e.code());
        assertTrue(e.getCause() instanceof IOException);
    }

    @Test
    public void errorInErrorHandlerReplacesTheError() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.error("First"), (asi, code) -> {
            throw new IllegalStateException("handler failed");
        });
        FutoInError e = runFailing(root);
        assertEquals(Errors.INTERNAL_ERROR, e.code());
        assertTrue(e.getCause() instanceof IllegalStateException);
    }

    @Test
    public void executeWithHandler() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.error(Errors.NOT_IMPLEMENTED, "later"));
        FutoInError[] got = new FutoInError[1];
        root.execute(e -> got[0] = e);
        tool.run();
        assertTrue(got[0] instanceof Errors.NotImplemented);
    }

    // ---- timeouts, cancel, external events ------------------------------------

    /** On virtual time: the clock says the timeout fired at 10 ms (the
     *  wall-clock timer path is covered by SpecTest's s1_3_timeout). */
    @Test
    public void timeoutCancelsAndFails() {
        tool.close();
        tool = new Tool(new Tool.Options().virtualTime(true));
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            asi.setCancel(a -> log.add("cancelled"));
            asi.setTimeout(10);
        }, (asi, code) -> log.add("onerror " + code + " at " + tool.nowMillis()));
        FutoInError e = runFailing(root);
        assertTrue(e instanceof Errors.Timeout);
        assertEquals(List.of("cancelled", "onerror Timeout at 10"), log);
    }

    @Test
    public void waitExternalCompletedLater() {
        tool.close();
        tool = new Tool(new Tool.Options().virtualTime(true)); // the clock says when
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            asi.waitExternal();
            tool.deferred(5, () -> asi.success("late"));
        });
        root.add((asi, v) -> asi.success(v + " at " + tool.nowMillis()));
        assertEquals("late at 5", root.run());
    }

    @Test
    public void rootCancelRunsCancelHandlers() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            asi.setCancel(a -> log.add("cancel 1"));
            asi.add(a -> {
                a.setCancel(b -> log.add("cancel 2"));
                tool.immediate(root::cancel);
            });
        });
        CompletableFuture<Object> f = root.promise();
        tool.run();
        assertTrue(f.isCancelled());
        assertEquals(List.of("cancel 2", "cancel 1"), log);
    }

    @Test
    public void cancellingThePromiseCancelsTheRoot() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.setCancel(a -> log.add("cancelled")));
        CompletableFuture<Object> f = root.promise();
        tool.immediate(() -> f.cancel(false));
        tool.run();
        assertEquals(List.of("cancelled"), log);
    }

    @Test
    public void rootRunsAgain() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.success(1));
        assertEquals(1, root.run());
        root.add(asi -> asi.success(2));
        assertEquals(2, root.run());
    }

    @Test
    public void closeARunningRootCancelsIt() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.setCancel(a -> log.add("cancelled")));
        CompletableFuture<Object> f = root.promise();
        tool.immediate(root::close);
        tool.run();
        assertTrue(f.isCancelled());
        assertEquals(List.of("cancelled"), log);
        assertFalse(root.isValid());
        root.close(); // idempotent
    }

    // ---- parallel and state ------------------------------------------------------

    @Test
    public void parallelBranchesShareState() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.parallel()
                .add(a -> a.state().put("a", 1))
                .add(a -> a.add(b -> b.state().put("b", 2))));
        root.add(asi -> asi.success(asi.state().get("a"), asi.state().get("b")));
        assertEquals(List.of(1, 2), root.run());
    }

    @Test
    public void parallelErrorCancelsSiblings() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.parallel((a, code) -> log.add("par " + code))
                .add(a -> a.setCancel(b -> log.add("sibling cancelled")))
                .add(a -> a.error("Branch")));
        assertEquals("Branch", runFailing(root).code());
        assertEquals(List.of("sibling cancelled", "par Branch"), log);
    }

    @Test
    public void stateIsOneMapPerRoot() {
        AsyncSteps root = new AsyncSteps(tool);
        root.state().put("k", "v");
        Map<String, Object> s = root.state();
        root.add(asi -> {
            assertSame(s, asi.state());
            asi.state().put("seen", asi.state().get("k"));
        });
        root.run();
        assertEquals("v", s.get("seen"));
        assertTrue(s instanceof LinkedHashMap);
        AsyncSteps other = new AsyncSteps(tool);
        assertNotEquals(System.identityHashCode(s), System.identityHashCode(other.state()));
    }

    // ---- loops -------------------------------------------------------------------

    @Test
    public void repeatBreakContinue() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.repeat(10, (a, i) -> {
            if (i % 2 == 1) {
                a.continueLoop();
            }
            if (i == 6) {
                a.breakLoop();
            }
            log.add("i" + i);
        }));
        root.run();
        assertEquals(List.of("i0", "i2", "i4"), log);
    }

    @Test
    public void labelledLoops() {
        AsyncSteps root = new AsyncSteps(tool);
        int[] outer = {0};
        root.add(asi -> asi.loop(o -> {
            if (outer[0]++ == 2) {
                o.breakLoop();
            }
            o.repeat(5, (in, j) -> {
                if (j == 1) {
                    in.add(s -> s.continueLoop("OUT"));
                }
                log.add(outer[0] + "." + j);
            });
        }, "OUT"));
        root.run();
        assertEquals(List.of("1.0", "1.1", "2.0", "2.1"), log);
    }

    @Test
    public void forEachMapListArray() {
        Map<String, Integer> m = new LinkedHashMap<>();
        m.put("a", 1);
        m.put("b", 2);
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            asi.forEach(m, (a, k, v) -> log.add(k + "=" + v));
            asi.forEach(List.of("x", "y"), (a, k, v) -> log.add(k + ":" + v));
            asi.forEach(new String[] {"z"}, (a, k, v) -> log.add(k + "-" + v));
        });
        root.run();
        assertEquals(List.of("a=1", "b=2", "0:x", "1:y", "0-z"), log);
    }

    @Test
    public void longLoopRunsInOneDownCall() {
        int[] n = {0};
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.repeat(200_000, (a, i) -> n[0]++));
        root.run();
        assertEquals(200_000, n[0]);
    }

    @Test
    public void deepChainOfSteps() {
        AsyncSteps root = new AsyncSteps(tool);
        for (int i = 0; i < 100_000; ++i) {
            root.add((asi, v) -> asi.success(v == null ? 1 : (Integer) v + 1));
        }
        assertEquals(100_000, root.run());
    }

    // ---- loop signals (issue 18: public, sane when caught) -----------------------

    @Test
    public void loopSignalIsPublicAndRecognisable() {
        AsyncSteps root = new AsyncSteps(tool);
        root.loop(outer -> outer.repeat(5, (asi, i) -> {
            try {
                asi.breakLoop("outer");
            } catch (RuntimeException e) {
                LoopSignal s = (LoopSignal) e; // a public type: recognised, let go
                log.add(i + " " + (s.isBreak() ? "break" : "continue") + " " + s.label());
                throw s;
            }
        }), "outer");
        root.add(asi -> log.add("after"));
        root.run();
        assertEquals(List.of("0 break outer", "after"), log);
        log.clear();
        AsyncSteps root2 = new AsyncSteps(tool);
        root2.repeat(3, (asi, i) -> {
            try {
                asi.continueLoop();
            } catch (LoopSignal s) {
                log.add(i + " " + (s.isBreak() ? "break" : "continue") + " " + s.label() + " " + s.getMessage());
                throw s;
            }
        });
        root2.run();
        assertEquals(List.of("0 continue null continueLoop()", "1 continue null continueLoop()",
                "2 continue null continueLoop()"), log);
    }

    @Test
    public void swallowedBreakStillBreaksAndTheHandleIsOver() {
        AsyncSteps root = new AsyncSteps(tool);
        root.repeat(5, (asi, i) -> {
            log.add("body " + i);
            try {
                asi.breakLoop();
            } catch (Throwable swallowed) {
                log.add("swallowed " + swallowed.getClass().getSimpleName());
            }
            try {
                asi.success();
            } catch (IllegalStateException e) {
                log.add("refused: " + e.getMessage().contains("already ended with breakLoop()"));
            }
            try {
                asi.add(a -> log.add("never"));
            } catch (IllegalStateException e) {
                log.add("add refused");
            }
        });
        root.add(asi -> log.add("after the loop"));
        root.run();
        assertEquals(List.of("body 0", "swallowed LoopSignal", "refused: true", "add refused", "after the loop"), log);
        assertEquals(0, tool.misuseCount());
    }

    @Test
    public void swallowedContinueStillContinues() {
        AsyncSteps root = new AsyncSteps(tool);
        root.repeat(3, (asi, i) -> {
            try {
                asi.continueLoop();
            } catch (LoopSignal swallowed) {
                log.add("iteration " + i);
            }
        });
        root.run();
        assertEquals(List.of("iteration 0", "iteration 1", "iteration 2"), log);
    }

    @Test
    public void aSignalThrownFromAnotherStepIsAnError() {
        LoopSignal[] kept = new LoopSignal[1];
        AsyncSteps root = new AsyncSteps(tool);
        root.loop(asi -> {
            try {
                asi.breakLoop();
            } catch (LoopSignal s) {
                kept[0] = s;
            }
        });
        root.add(asi -> {
            throw kept[0]; // not loop control here: no loop, not its step
        });
        FutoInError e = runFailing(root);
        assertTrue(e instanceof Errors.InternalError);
        assertSame(kept[0], e.getCause());
    }

    @Test
    public void swallowedErrorEndsTheStepAndLaterExceptionsAreNotLost() {
        List<Throwable> uncaught = new ArrayList<>();
        Thread.UncaughtExceptionHandler old = Thread.currentThread().getUncaughtExceptionHandler();
        Thread.currentThread().setUncaughtExceptionHandler((t, x) -> uncaught.add(x));
        try {
            AsyncSteps root = new AsyncSteps(tool);
            root.add(asi -> {
                try {
                    asi.error("First", "info");
                } catch (FutoInError swallowed) {
                    log.add("swallowed " + swallowed.code());
                }
                asi.add(a -> log.add("never")); // throws: the step is over
            });
            FutoInError e = runFailing(root);
            assertEquals("First", e.code());
        } finally {
            Thread.currentThread().setUncaughtExceptionHandler(old);
        }
        assertEquals(List.of("swallowed First"), log);
        assertEquals(1, uncaught.size());
        assertTrue(uncaught.get(0).getMessage(), uncaught.get(0).getMessage().contains("already ended with error()"));
    }

    // ---- promise / await ------------------------------------------------------------

    @Test
    public void promiseCompletesWithTheResult() throws Exception {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.success("done"));
        CompletableFuture<Object> f = root.promise();
        assertFalse(f.isDone());
        tool.run();
        assertEquals("done", f.get());
    }

    @Test
    public void promiseFailsWithTheFlowError() throws InterruptedException {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.error(Errors.SECURITY_ERROR, "no"));
        CompletableFuture<Object> f = root.promise();
        tool.run();
        try {
            f.get();
            fail();
        } catch (ExecutionException e) {
            assertTrue(e.getCause() instanceof Errors.SecurityError);
        }
    }

    @Test
    public void awaitAFutureCompletedByAnotherThread() {
        /* ForkJoinPool.execute(): CompletableFuture.supplyAsync() swaps the
         * common pool for a thread per task when its parallelism is 1 */
        CompletableFuture<String> work = new CompletableFuture<>();
        ForkJoinPool.commonPool().execute(() -> {
            sleep(20);
            work.complete("from " + Thread.currentThread().getName());
        });
        AsyncSteps root = new AsyncSteps(tool);
        Thread loop = Thread.currentThread();
        root.await(work).add((asi, v) -> {
            assertSame(loop, Thread.currentThread());
            asi.success(v);
        });
        String v = (String) root.run();
        assertTrue(v, v.startsWith("from ForkJoinPool"));
    }

    @Test
    public void awaitNullMeansNoValue() {
        AsyncSteps root = new AsyncSteps(tool);
        root.await(CompletableFuture.completedFuture(null)).add((asi, v) -> log.add("v=" + v));
        root.run();
        assertEquals(List.of("v=null"), log);
    }

    @Test
    public void awaitFailures() {
        CompletableFuture<Object> bad = new CompletableFuture<>();
        ForkJoinPool.commonPool().execute(() -> {
            sleep(5);
            bad.completeExceptionally(new Errors.CommError("link down"));
        });
        AsyncSteps root = new AsyncSteps(tool);
        root.await(bad);
        FutoInError e = runFailing(root);
        assertTrue(e instanceof Errors.CommError);
        assertEquals("link down", root.errorInfo());

        AsyncSteps root2 = new AsyncSteps(tool);
        IOException io = new IOException("io");
        root2.await(CompletableFuture.failedFuture(io), (asi, code) -> log.add(code));
        e = runFailing(root2);
        assertEquals(List.of(Errors.INTERNAL_ERROR), log);
        assertSame(io, e.getCause());
    }

    @Test
    public void cancellingTheFlowCancelsTheAwaitedFuture() {
        CompletableFuture<Object> never = new CompletableFuture<>();
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            asi.setTimeout(10);
            asi.await(never);
        });
        assertTrue(runFailing(root) instanceof Errors.Timeout);
        assertTrue(never.isCancelled());
    }

    @Test
    public void runThrowsCancellation() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            asi.waitExternal();
            tool.immediate(root::cancel);
        });
        try {
            root.run();
            fail();
        } catch (CancellationException expected) {
            // the root was cancelled
        }
    }

    // ---- misc ----------------------------------------------------------------------

    @Test
    public void newInstanceIsAnotherRoot() {
        AsyncSteps root = new AsyncSteps(tool);
        AsyncSteps other = root.newInstance();
        assertNotEquals(root.binary(), other.binary());
        assertNotEquals(root.rootId(), other.rootId());
        assertSame(tool, other.tool());
        other.add(asi -> asi.success(3));
        assertEquals(3, other.run());
    }

    @Test
    public void handleQueries() {
        AsyncSteps root = new AsyncSteps(tool);
        long[] ids = new long[2];
        root.add(asi -> {
            ids[0] = asi.rootId();
            assertTrue(asi.isValid());
            assertTrue(asi.toString().startsWith("AsyncSteps[step"));
        });
        ids[1] = root.rootId();
        root.run();
        assertEquals(ids[1], ids[0]);
        assertTrue(root.isValid());
        root.close();
        assertFalse(root.isValid());
        assertEquals("AsyncSteps[root, closed]", root.toString());
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
