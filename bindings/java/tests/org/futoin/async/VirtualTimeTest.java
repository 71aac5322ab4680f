package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * Virtual time: {@code new Tool(new Tool.Options().virtualTime(true))} never
 * waits on the wall clock. Its clock ({@link Tool#nowMillis()}, from 0)
 * moves only with {@link Tool#advance}, which runs every timer that falls
 * due on the way in due-time order; {@link Tool#nextDue()} says when the
 * next one is; run() runs what is due now; a root's run() advances from
 * timer to timer until it ends. Assertions are on the virtual clock and on
 * traces, never on the wall clock.
 */
public class VirtualTimeTest {
    private Tool tool;
    private List<String> log;

    @Before
    public void setUp() {
        tool = new Tool(new Tool.Options().virtualTime(true));
        log = new ArrayList<>();
    }

    @After
    public void tearDown() {
        tool.close();
    }

    private Runnable at(String name) {
        return () -> log.add(name + " at " + tool.nowMillis());
    }

    private long nextDueMs() {
        return tool.nextDue().orElseThrow().toMillis();
    }

    @Test
    public void theClockStartsAtZeroAndMovesOnlyWithAdvance() {
        assertTrue(tool.isVirtualTime());
        try (Tool wall = new Tool()) {
            assertFalse(wall.isVirtualTime());
        }
        assertEquals(0, tool.nowMillis());
        tool.run();
        assertEquals(0, tool.nowMillis());
        assertEquals(Optional.empty(), tool.nextDue());
        tool.advance(1500);
        assertEquals(1500, tool.nowMillis());
        tool.advance(Duration.ZERO);
        tool.advance(Duration.ofNanos(1)); // a fraction is rounded up
        assertEquals(1501, tool.nowMillis());
        tool.advance(Duration.ofSeconds(2));
        assertEquals(3501, tool.nowMillis());
    }

    @Test
    public void timersFireInDueOrderAndFifoAmongEquals() {
        tool.deferred(30, at("c"));
        tool.deferred(10, at("a1"));
        tool.deferred(20, at("b"));
        tool.deferred(10, at("a2"));
        assertEquals(10, nextDueMs());
        tool.run();
        assertEquals(List.of(), log);
        tool.advance(25);
        assertEquals(List.of("a1 at 10", "a2 at 10", "b at 20"), log);
        assertEquals(5, nextDueMs());
        tool.advance(5);
        assertEquals(List.of("a1 at 10", "a2 at 10", "b at 20", "c at 30"), log);
        assertEquals(Optional.empty(), tool.nextDue());
    }

    @Test
    public void timersStartedDuringAnAdvanceFireInTheirTurn() {
        tool.deferred(10, () -> {
            at("start").run();
            tool.immediate(at("imm"));
            tool.deferred(0, at("zero"));
            tool.deferred(5, at("five"));
            tool.deferred(100, at("hundred"));
        });
        tool.deferred(12, at("twelve"));
        tool.advance(20);
        assertEquals(List.of("start at 10", "imm at 10", "zero at 10", "twelve at 12", "five at 15"), log);
        assertEquals(90, nextDueMs());
        tool.advance(tool.nextDue().get());
        assertEquals("hundred at 110", log.get(log.size() - 1));
        assertEquals(Optional.empty(), tool.nextDue());
    }

    @Test
    public void aMinuteTimeoutCompletedAfterThirtySeconds() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            log.add("wait at " + tool.nowMillis());
            asi.setCancel(a -> log.add("cancelled"));
            asi.setTimeout(Duration.ofMinutes(1));
            tool.deferred(30_000, () -> {
                log.add("complete at " + tool.nowMillis());
                asi.success("done");
            });
        });
        root.add((asi, v) -> log.add("after " + v + " at " + tool.nowMillis()));
        AtomicReference<Object> result = new AtomicReference<>("none");
        root.promise().thenAccept(result::set);
        tool.run();
        assertEquals(List.of("wait at 0"), log);
        assertEquals(Duration.ofSeconds(30), tool.nextDue().get());
        tool.advance(Duration.ofSeconds(30));
        assertEquals(List.of("wait at 0", "complete at 30000", "after done at 30000"), log);
        assertEquals(null, result.get());
        assertEquals("the step's timeout went with the wait", Optional.empty(), tool.nextDue());
        root.close();
    }

    private static List<String> halfTimeoutFlow(Tool t, long unit) {
        List<String> trace = new ArrayList<>();
        try (AsyncSteps root = new AsyncSteps(t)) {
            root.add(asi -> {
                trace.add("wait");
                asi.setTimeout(2 * unit);
                t.deferred(unit, () -> {
                    trace.add("complete");
                    asi.success("done");
                });
            });
            root.add((asi, v) -> trace.add("after " + v));
            root.run();
        }
        return trace;
    }

    /** On the wall clock scaled down to 60 ms / 30 ms: both timers sit in
     *  one heap, so even a stalled loop fires the completion first. */
    @Test
    public void theHalfTimeoutFlowHasTheSameTraceOnBothClocks() {
        List<String> wall;
        try (Tool w = new Tool()) {
            wall = halfTimeoutFlow(w, 30);
        }
        assertEquals(List.of("wait", "complete", "after done"), wall);
        assertEquals(wall, halfTimeoutFlow(tool, 30_000));
        assertEquals(30_000, tool.nowMillis());
    }

    @Test
    public void rootRunAdvancesFromTimerToTimer() {
        try (AsyncSteps root = new AsyncSteps(tool)) {
            root.add(asi -> {
                asi.setTimeout(60_000);
                tool.deferred(10_000, at("tick"));
            });
            FutoInError e = assertThrows(FutoInError.class, root::run);
            assertEquals(Errors.TIMEOUT, e.code());
        }
        assertEquals(List.of("tick at 10000"), log);
        assertEquals(60_000, tool.nowMillis());
        assertEquals(Optional.empty(), tool.nextDue());
    }

    @Test
    public void rootRunRefusesToWaitForAnEventNoTimerBrings() {
        try (AsyncSteps root = new AsyncSteps(tool)) {
            root.add(asi -> asi.waitExternal());
            IllegalStateException e = assertThrows(IllegalStateException.class, root::run);
            assertTrue(e.getMessage(), e.getMessage().contains("no timer"));
            root.cancel();
        }
    }

    @Test
    public void postsAndCompletionsFromAnotherThreadRun() throws InterruptedException {
        AtomicReference<AsyncSteps> held = new AtomicReference<>();
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            asi.setTimeout(60_000);
            asi.waitExternal();
            held.set(asi);
        });
        root.add((asi, v) -> log.add("after " + v + " at " + tool.nowMillis()));
        root.execute();
        tool.run();
        tool.advance(100);
        boolean[] accepted = new boolean[1];
        Thread worker = new Thread(() -> {
            tool.execute(() -> log.add("posted at " + tool.nowMillis()));
            accepted[0] = held.get().success("from thread");
        });
        worker.start();
        worker.join(); // the loop never waits for it: run() takes what it posted
        assertTrue(accepted[0]);
        assertEquals(List.of(), log);
        tool.run();
        assertEquals(List.of("posted at 100", "after from thread at 100"), log);
        assertEquals(Optional.empty(), tool.nextDue());
        root.close();
    }

    @Test
    public void throttleAndLimiterPeriodsFollowTheVirtualClock() {
        List<AsyncSteps> roots = new ArrayList<>();
        try (Throttle thr = new Throttle(tool, 1, 1000, 10);
                Limiter lim = new Limiter(tool, new Limiter.Options().concurrent(3).maxQueue(3).rate(2)
                        .periodMs(500).burst(1))) {
            for (String n : new String[] {"a", "b", "c"}) {
                AsyncSteps r = new AsyncSteps(tool).sync(thr, asi -> log.add(n + " in at " + tool.nowMillis()));
                r.execute();
                roots.add(r);
            }
            tool.run();
            assertEquals(List.of("a in at 0"), log);
            tool.advance(999);
            assertEquals(List.of("a in at 0"), log);
            tool.advance(1);
            tool.advance(5000);
            assertEquals(List.of("a in at 0", "b in at 1000", "c in at 2000"), log);
            assertEquals(Optional.empty(), tool.nextDue());
            log.clear();
            for (String n : new String[] {"d", "e", "f"}) {
                AsyncSteps r = new AsyncSteps(tool).sync(lim, asi -> log.add(n + " in at " + tool.nowMillis()));
                r.execute();
                roots.add(r);
            }
            tool.run();
            tool.advance(499);
            assertEquals(List.of("d in at 6000", "e in at 6000"), log);
            tool.advance(1);
            assertEquals(List.of("d in at 6000", "e in at 6000", "f in at 6500"), log);
            for (AsyncSteps r : roots) {
                r.close();
            }
        }
    }

    @Test
    public void badInputIsRefused() throws InterruptedException {
        assertThrows(IllegalArgumentException.class, () -> tool.advance(-1));
        assertThrows(IllegalArgumentException.class, () -> tool.advance(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> tool.advance(Duration.ofSeconds(Long.MAX_VALUE)));
        assertThrows(NullPointerException.class, () -> tool.advance((Duration) null));
        assertThrows(NullPointerException.class, () -> new Tool((Tool.Options) null));
        assertEquals(0, tool.nowMillis());
        try (Tool wall = new Tool()) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> wall.advance(1));
            assertTrue(e.getMessage(), e.getMessage().contains("wall clock"));
        }
        // not from inside the loop
        AtomicReference<String> inside = new AtomicReference<>();
        try (AsyncSteps root = new AsyncSteps(tool)) {
            root.add(asi -> inside.set(assertThrows(IllegalStateException.class, () -> tool.advance(1))
                    .getMessage()));
            root.run();
        }
        assertTrue(inside.get(), inside.get().contains("not from inside the loop"));
        // not from another thread
        AtomicReference<Throwable> elsewhere = new AtomicReference<>();
        Thread th = new Thread(() -> {
            try {
                tool.advance(1);
            } catch (Throwable t) {
                elsewhere.set(t);
            }
        });
        th.start();
        th.join();
        assertTrue(String.valueOf(elsewhere.get()), elsewhere.get() instanceof IllegalStateException
                && elsewhere.get().getMessage().contains("not the loop thread"));
        assertEquals(0, tool.nowMillis());
        Tool closed = new Tool(new Tool.Options().virtualTime(true));
        closed.close();
        assertThrows(IllegalStateException.class, () -> closed.advance(1));
        assertThrows(IllegalStateException.class, closed::nextDue);
    }

    /** Virtual time and a load policy together: both are taken (the policy
     *  is set once, so a second one is refused). */
    @Test
    public void aVirtualToolTakesALoadPolicyToo() {
        try (Tool t = new Tool(new Tool.Options().virtualTime(true),
                LoadPolicy.newBuilder().allowLanguages("java").build())) {
            assertTrue(t.isVirtualTime());
            assertThrows(IllegalStateException.class, () -> t.setLoadPolicy(LoadPolicy.newBuilder().build()));
            t.deferred(1000, () -> log.add("at " + t.nowMillis()));
            t.advance(1000);
            assertEquals(List.of("at 1000"), log);
        }
    }
}
