package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.List;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** Mutex, Throttle, Limiter (FTN12 §1.11) through sync(). The tool runs on
 *  virtual time: the holders' timers and the periods of Throttle and
 *  Limiter follow its clock, which root.run() moves from one due timer to
 *  the next, so the clock says when each section was entered. */
public class SyncTest {
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

    @Test
    public void mutexSerializesBranchesAndPassesValues() {
        try (Mutex m = new Mutex()) {
            AsyncSteps root = new AsyncSteps(tool);
            root.add(asi -> {
                Parallel p = asi.parallel();
                for (int b = 0; b < 3; ++b) {
                    int k = b;
                    p.add(br -> {
                        br.add(a -> a.success(k));
                        br.sync(m, (a, v) -> {
                            log.add("enter " + v + " at " + tool.nowMillis());
                            a.waitExternal();
                            tool.deferred(2, () -> {
                                log.add("leave " + v + " at " + tool.nowMillis());
                                a.success("r" + v);
                            });
                        });
                        br.add((a, r) -> log.add("after " + r));
                    });
                }
            });
            root.run();
            assertEquals(List.of("enter 0 at 0", "leave 0 at 2", "after r0", "enter 1 at 2",
                    "leave 1 at 4", "after r1", "enter 2 at 4", "leave 2 at 6", "after r2"), log);
        }
    }

    /* sync() takes a step of every arity add() takes: no value is lost */
    @Test
    public void syncPassesUpToFourValues() {
        try (Mutex m = new Mutex()) {
            AsyncSteps root = new AsyncSteps(tool);
            root.successStep(1, "two", 3.0, 4L)
                .sync(m, (asi, a, b, c, d) -> {
                    log.add("4: " + a + " " + b + " " + c + " " + d);
                    asi.success(a, b, c);
                })
                .sync(m, (asi, a, b, c) -> {
                    log.add("3: " + a + " " + b + " " + c);
                    asi.success(a, b, c, "x");
                }, (asi, code) -> log.add("never " + code))
                .sync(m, (asi, a, b, c, d) -> log.add("4h: " + d), (asi, code) -> log.add("never " + code))
                .successStep(7, 8, 9)
                .sync(m, (asi, a, b, c) -> log.add("3 again: " + c));
            root.run();
            assertEquals(List.of("4: 1 two 3.0 4", "3: 1 two 3.0", "4h: x", "3 again: 9"), log);
        }
    }

    @Test
    public void queueLimitRaisesDefenseRejected() {
        try (Mutex m = new Mutex(1, 0)) {
            AsyncSteps root = new AsyncSteps(tool);
            root.add(asi -> asi.parallel((a, code) -> log.add("par " + code))
                    .add(a -> a.sync(m, b -> {
                        Tool.Handle h = tool.deferred(5, b::success);
                        b.setCancel(c -> h.cancel());
                    }))
                    .add(a -> a.sync(m, b -> log.add("never"))));
            try {
                root.run();
                fail();
            } catch (Errors.DefenseRejected e) {
                assertTrue(e.info(), e.info().contains("queue limit"));
            }
            assertEquals(List.of("par DefenseRejected"), log);
        }
    }

    @Test
    public void closeWhileBusyIsRefused() {
        Mutex m = new Mutex();
        AsyncSteps root = new AsyncSteps(tool);
        root.sync(m, asi -> {
            try {
                m.close();
                log.add("closed?!");
            } catch (IllegalStateException e) {
                log.add("busy");
            }
        });
        root.run();
        assertEquals(List.of("busy"), log);
        assertTrue(m.isOpen());
        m.close();
        assertFalse(m.isOpen());
        try {
            new AsyncSteps(tool).sync(m, asi -> { });
            fail();
        } catch (IllegalStateException e) {
            assertTrue(e.getMessage().contains("Mutex is closed"));
        }
    }

    /* Order and counts, never "within N ms": the branches enter in the
     * order they queued, each exactly once, two per period of the
     * Throttle's own clock (the periods it has ended, read at each entry). */
    @Test
    public void throttleLetsMaxPerPeriod() {
        Throttle t = new Throttle(tool, 2, 30, Mutex.UNLIMITED);
        List<String> entries = new ArrayList<>();
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            Parallel p = asi.parallel();
            for (int i = 0; i < 5; ++i) {
                int k = i;
                p.add(b -> b.sync(t, c -> entries.add(k + "@" + FutoInNative.test_sync_periods(t.ptr())
                        + " at " + tool.nowMillis())));
            }
        });
        root.run();
        assertEquals(List.of("0@0 at 0", "1@0 at 0", "2@1 at 30", "3@1 at 30", "4@2 at 60"), entries);
        // freed with the tool
    }

    @Test
    public void limiterConcurrencyAndRate() {
        Limiter lim = new Limiter(tool, new Limiter.Options().concurrent(2).maxQueue(10).rate(10).periodMs(1000));
        int[] inside = {0};
        int[] peak = {0};
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            Parallel p = asi.parallel();
            for (int i = 0; i < 6; ++i) {
                p.add(b -> b.sync(lim, c -> {
                    log.add("in at " + tool.nowMillis());
                    peak[0] = Math.max(peak[0], ++inside[0]);
                    c.waitExternal();
                    tool.deferred(2, () -> {
                        inside[0]--;
                        c.success();
                    });
                }));
            }
        });
        root.run();
        assertEquals(2, peak[0]);
        // two at a time, each for 2 ms; 6 entries are within the rate of 10
        assertEquals(List.of("in at 0", "in at 0", "in at 2", "in at 2", "in at 4", "in at 4"), log);
        lim.close();
    }

    @Test
    public void syncObjectsOfAClosedToolAreClosed() {
        Tool t2 = new Tool();
        Throttle th = new Throttle(t2, 1);
        assertTrue(th.isOpen());
        t2.close();
        assertFalse(th.isOpen());
    }
}
