package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;

import org.junit.After;
import org.junit.Test;

/**
 * Ending a run from another thread: root.cancel() (README rule 2),
 * Tool.stop(), Tool.close(), and interrupts of a thread blocked on a flow
 * (run(), promise().get()). Every wait here is for an event (latches,
 * joins), never for time.
 */
public class StopTest {
    private final List<String> log = Collections.synchronizedList(new ArrayList<>());

    @After
    public void clearInterrupt() {
        Thread.interrupted(); // never leak an interrupt into the next test
    }

    /** A step that waits until cancelled; `waiting` opens once it waits. */
    private Step waitsForever(String name, CountDownLatch waiting) {
        return asi -> {
            asi.setCancel(a -> log.add(name + " cancelled"));
            waiting.countDown();
        };
    }

    /** A root on `tool` whose one step waits until cancelled (logging
     *  "NAME cancelled"); `waiting` opens once it waits. */
    private AsyncSteps waitingRoot(Tool tool, String name, CountDownLatch waiting) {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(waitsForever(name, waiting));
        return root;
    }

    /** Runs `action` on a new thread once `ready` opened. */
    private static Thread after(CountDownLatch ready, Runnable action) {
        Thread t = new Thread(() -> {
            try {
                ready.await();
            } catch (InterruptedException e) {
                return;
            }
            action.run();
        }, "futoin-test-other");
        t.start();
        return t;
    }

    // ---- rule 2: cancel() -----------------------------------------------------

    @Test
    public void cancelReturnsWhetherItCancelled() {
        try (Tool tool = new Tool()) {
            AsyncSteps root = new AsyncSteps(tool);
            assertFalse("not executing", root.cancel());
            List<Boolean> got = new ArrayList<>();
            root.add(asi -> {
                asi.setCancel(a -> log.add("cancelled"));
                tool.immediate(() -> {
                    got.add(root.cancel());
                    got.add(root.cancel());
                });
            });
            try {
                root.run();
                fail("run() of a cancelled root must throw");
            } catch (CancellationException expected) {
                // rule 2
            }
            assertEquals(List.of(true, false), got);
            assertEquals(List.of("cancelled"), log);
            AsyncSteps done = new AsyncSteps(tool);
            done.add(asi -> asi.success(1));
            assertEquals(1, done.run());
            assertFalse("finished", done.cancel());
        }
    }

    @Test
    public void cancelFromAnotherThreadDecidesTheOutcome() throws Exception {
        try (Tool tool = Tool.startThread("futoin-cancel")) {
            CountDownLatch waiting = new CountDownLatch(1);
            AsyncSteps root = tool.call(() -> new AsyncSteps(tool)).get();
            CompletableFuture<Object> f = tool.call(() -> {
                root.add(waitsForever("step", waiting));
                return root.promise();
            }).get();
            waiting.await();
            assertTrue(root.cancel());
            assertFalse("decided already", root.cancel());
            try {
                f.get();
                fail();
            } catch (CancellationException expected) {
                // the outcome is the cancel's
            }
            tool.call(() -> null).get(); // the loop applied it meanwhile
            assertEquals(List.of("step cancelled"), log);
            assertFalse("finished", root.cancel());
            tool.execute(root::close);
        }
    }

    @Test
    public void successValuesWithoutRun() throws Exception {
        try (Tool tool = new Tool()) {
            AsyncSteps root = new AsyncSteps(tool);
            root.add(asi -> asi.success(6, 7));
            CompletableFuture<Object> f = root.promise();
            tool.run();
            assertEquals(List.of(6, 7), f.get());
        }
        try (Tool tool = Tool.startThread("futoin-values")) {
            assertEquals("v", tool.promise(root -> root.add(asi -> asi.success("v"))).get());
        }
    }

    // ---- Tool.stop() / close() from another thread ---------------------------

    @Test
    public void stopFromAnotherThreadReturnsRunAndLeavesTheFlows() throws Exception {
        Tool tool = new Tool();
        CountDownLatch waiting = new CountDownLatch(1);
        CompletableFuture<Object> f = waitingRoot(tool, "step", waiting).promise();
        boolean[] stopped = new boolean[1];
        Thread other = after(waiting, () -> stopped[0] = tool.stop());
        tool.run(); // returns: stopped from the other thread
        other.join();
        assertTrue(stopped[0]);
        assertFalse("the flow is left as it is", f.isDone());
        assertEquals(List.of(), log);
        assertFalse("no run in progress: nothing to stop", tool.stop());
        tool.close(); // cancels it
        assertTrue(f.isCancelled());
        assertEquals(List.of("step cancelled"), log);
    }

    @Test
    public void aStopIsNotKeptForTheNextRun() {
        try (Tool tool = new Tool()) {
            assertFalse(tool.stop());
            AsyncSteps root = new AsyncSteps(tool);
            root.add(asi -> {
                asi.waitExternal();
                tool.deferred(1, asi::success);
            }).add(asi -> asi.success("done"));
            assertEquals("done", root.run());
        }
    }

    @Test
    public void rootRunStoppedFromAnotherThreadCancelsItsFlow() throws Exception {
        try (Tool tool = new Tool()) {
            CountDownLatch waiting = new CountDownLatch(1);
            AsyncSteps root = waitingRoot(tool, "step", waiting);
            Thread other = after(waiting, tool::stop);
            try {
                root.run();
                fail();
            } catch (CancellationException expected) {
                // nobody would drive it any more
            }
            other.join();
            assertEquals(List.of("step cancelled"), log);
            assertFalse(Thread.currentThread().isInterrupted());
        }
    }

    @Test
    public void closeFromAnotherThreadWhileRunning() throws Exception {
        Tool tool = new Tool();
        CountDownLatch waiting = new CountDownLatch(1);
        CompletableFuture<Object> f = waitingRoot(tool, "step", waiting).promise();
        boolean[] closedWhenReturned = new boolean[1];
        Thread other = after(waiting, () -> {
            tool.close(); // waits until the loop thread closed it
            closedWhenReturned[0] = tool.isClosed() && f.isCancelled();
        });
        tool.run();
        other.join();
        assertTrue(closedWhenReturned[0]);
        assertTrue(tool.isClosed());
        assertEquals(List.of("step cancelled"), log);
    }

    @Test
    public void stopIsForACallerThreadTool() {
        try (Tool tool = Tool.startThread("futoin-stop")) {
            tool.stop();
            fail();
        } catch (IllegalStateException e) {
            assertTrue(e.getMessage().contains("close()"));
        }
    }

    // ---- interrupts --------------------------------------------------------------

    @Test
    public void interruptCancelsRootRun() throws Exception {
        try (Tool tool = new Tool()) {
            CountDownLatch waiting = new CountDownLatch(1);
            AsyncSteps root = waitingRoot(tool, "step", waiting);
            AsyncSteps other = waitingRoot(tool, "other", new CountDownLatch(1));
            CompletableFuture<Object> of = other.promise();
            Thread me = Thread.currentThread();
            Thread t = after(waiting, me::interrupt);
            try {
                root.run();
                fail();
            } catch (CancellationException expected) {
                assertTrue(expected.getMessage().contains("interrupted"));
            }
            assertTrue("the interrupt status stays set", Thread.interrupted());
            t.join();
            assertEquals("only the flow run() waited for", List.of("step cancelled"), log);
            assertFalse(of.isDone());
            other.close();
            assertTrue(of.isCancelled());
        }
    }

    @Test
    public void interruptCancelsToolRun() throws Exception {
        try (Tool tool = new Tool()) {
            CountDownLatch waiting = new CountDownLatch(2);
            List<CompletableFuture<Object>> fs = new ArrayList<>();
            for (String n : List.of("a", "b")) {
                fs.add(waitingRoot(tool, n, waiting).promise());
            }
            Thread me = Thread.currentThread();
            Thread t = after(waiting, me::interrupt);
            try {
                tool.run();
                fail();
            } catch (CancellationException expected) {
                assertTrue(expected.getMessage().contains("interrupted"));
            }
            assertTrue(Thread.interrupted());
            t.join();
            assertTrue(fs.get(0).isCancelled() && fs.get(1).isCancelled());
            assertEquals(List.of("a cancelled", "b cancelled"), log);
        }
    }

    @Test
    public void runEnteredWithTheInterruptStatusSet() {
        try (Tool tool = new Tool()) {
            AsyncSteps root = waitingRoot(tool, "step", new CountDownLatch(1));
            Thread.currentThread().interrupt();
            try {
                root.run();
                fail();
            } catch (CancellationException expected) {
                // at once: the status was set
            }
            assertTrue(Thread.interrupted());
            AsyncSteps next = new AsyncSteps(tool);
            next.add(asi -> asi.success(2));
            assertEquals("a later run is not affected", 2, next.run());
        }
    }

    @Test
    public void interruptOfPromiseGetCancelsTheFlow() throws Exception {
        try (Tool tool = Tool.startThread("futoin-get")) {
            CountDownLatch waiting = new CountDownLatch(1);
            CountDownLatch cancelled = new CountDownLatch(1);
            CompletableFuture<Object> f = tool.promise(root -> root.add(asi -> {
                asi.setCancel(a -> cancelled.countDown());
                waiting.countDown();
            }));
            Thread me = Thread.currentThread();
            Thread t = after(waiting, me::interrupt);
            try {
                f.get();
                fail();
            } catch (InterruptedException expected) {
                // the Future idiom: the status is cleared, the exception says it
            }
            t.join();
            assertTrue(f.isCancelled());
            cancelled.await(); // the flow's cancel handler ran (on the loop thread)
        }
    }

    /**
     * Subtasks of a scope blocked on flows: the scope's shutdown interrupts
     * them, and each interrupt cancels the flow its subtask waited for.
     * Java 17 has no StructuredTaskScope (a preview from 21); its shutdown()
     * interrupts the subtasks' threads as ExecutorService.shutdownNow() does,
     * so this is the same path.
     */
    @Test
    public void shuttingDownAScopeOfSubtasksCancelsTheFlowsTheyWaitFor() throws Exception {
        try (Tool tool = Tool.startThread("futoin-scope")) {
            CountDownLatch waiting = new CountDownLatch(2);
            CountDownLatch entered = new CountDownLatch(2);
            List<String> cancelledFlows = Collections.synchronizedList(new ArrayList<>());
            java.util.concurrent.ExecutorService scope =
                    java.util.concurrent.Executors.newFixedThreadPool(2);
            List<CompletableFuture<Object>> flows = new ArrayList<>();
            List<java.util.concurrent.Future<String>> subtasks = new ArrayList<>();
            for (String n : List.of("a", "b")) {
                CompletableFuture<Object> f = tool.promise(root -> root.add(asi -> {
                    asi.setCancel(x -> cancelledFlows.add(n));
                    waiting.countDown();
                }));
                flows.add(f);
                subtasks.add(scope.submit(() -> {
                    entered.countDown(); // started: an interrupt from here on reaches get()
                    try {
                        f.get();
                        return n + " completed";
                    } catch (InterruptedException e) {
                        return n + " interrupted";
                    }
                }));
            }
            waiting.await(); // both flows wait
            entered.await(); // both subtasks run (shutdownNow() drops tasks not started)
            scope.shutdownNow();
            List<String> outcomes = new ArrayList<>();
            for (java.util.concurrent.Future<String> s : subtasks) {
                outcomes.add(s.get());
            }
            assertEquals(List.of("a interrupted", "b interrupted"), outcomes);
            for (CompletableFuture<Object> f : flows) {
                assertTrue(f.isCancelled());
            }
            tool.call(() -> null).get(); // the cancel handlers ran before this
            List<String> sorted = new ArrayList<>(cancelledFlows);
            Collections.sort(sorted);
            assertEquals(List.of("a", "b"), sorted);
        }
    }

    @Test
    public void interruptOfRunOnAToolOfItsOwnThread() throws Exception {
        try (Tool tool = Tool.startThread("futoin-run-intr")) {
            CountDownLatch waiting = new CountDownLatch(1);
            CountDownLatch cancelled = new CountDownLatch(1);
            AsyncSteps root = tool.call(() -> new AsyncSteps(tool)).get();
            tool.call(() -> root.add(asi -> {
                asi.setCancel(a -> cancelled.countDown());
                waiting.countDown();
            })).get();
            Thread me = Thread.currentThread();
            Thread t = after(waiting, me::interrupt);
            try {
                root.run();
                fail();
            } catch (CancellationException expected) {
                // with the status set
            }
            assertTrue(Thread.interrupted());
            t.join();
            cancelled.await();
            tool.execute(root::close);
        } catch (ExecutionException e) {
            throw new AssertionError(e);
        }
    }
}
