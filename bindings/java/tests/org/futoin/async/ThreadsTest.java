package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.Test;

/** The loop thread, other threads, and the Tool as an Executor. */
public class ThreadsTest {
    @Test
    public void dedicatedThreadRunsFlowsAndTasks() throws Exception {
        Thread[] loop = new Thread[1];
        try (Tool tool = Tool.startThread("futoin-test-loop")) {
            Object v = tool.promise(root -> root.add(asi -> {
                loop[0] = Thread.currentThread();
                asi.success("on " + Thread.currentThread().getName());
            })).get();
            assertEquals("on futoin-test-loop", v);
            assertNotSame(Thread.currentThread(), loop[0]);
            CompletableFuture<Thread> ran = new CompletableFuture<>();
            tool.execute(() -> ran.complete(Thread.currentThread()));
            assertSame(loop[0], ran.get());
            assertEquals(7, (int) tool.call(() -> 7).get());
            assertFalse(tool.isLoopThread());
        }
        loop[0].join(); // the loop thread ends with close(): waited for, not timed
        assertFalse(loop[0].isAlive());
    }

    @Test
    public void rootRunFromAnotherThreadWaitsForADedicatedTool() throws Exception {
        try (Tool tool = Tool.startThread("futoin-run")) {
            AsyncSteps root = tool.call(() -> new AsyncSteps(tool)).get();
            tool.call(() -> root.add(asi -> asi.success(5))).get();
            assertEquals(5, root.run());
            root.close();
        }
    }

    @Test
    public void closeCancelsRunningFlows() throws Exception {
        CompletableFuture<Object> f;
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        Tool tool = Tool.startThread("futoin-close");
        CountDownLatch waiting = new CountDownLatch(1);
        f = tool.promise(root -> root.add(asi -> {
            asi.setCancel(a -> log.add("cancelled"));
            waiting.countDown();
        }));
        waiting.await(); // the step waits
        tool.close();
        assertTrue(f.isCancelled());
        assertEquals(List.of("cancelled"), log);
        assertTrue(tool.isClosed());
    }

    @Test
    public void completionsFromForkJoinPool() {
        try (Tool tool = new Tool()) {
            int n = 2000;
            AtomicInteger sum = new AtomicInteger();
            List<CompletableFuture<Object>> all = new ArrayList<>();
            for (int i = 0; i < n; ++i) {
                int k = i;
                AsyncSteps root = new AsyncSteps(tool);
                root.add(asi -> {
                    asi.waitExternal();
                    ForkJoinPool.commonPool().execute(() -> asi.success(k)); // posted by the runtime
                });
                root.add((asi, v) -> sum.addAndGet((Integer) v));
                all.add(root.promise());
            }
            tool.run();
            for (CompletableFuture<Object> f : all) {
                assertTrue(f.isDone() && !f.isCompletedExceptionally());
            }
            assertEquals(n * (n - 1) / 2, sum.get());
            assertEquals(0, tool.misuseCount());
        }
    }

    /* Regression: a completion that read LIVE_WAIT while the loop thread's
     * leave() moved the step to WAITING lost its compare-and-set and was
     * refused as "a step that does not wait", so the flow waited forever
     * (completionsFromForkJoinPool hung about once in 15 runs). */
    @Test
    public void completionRacingTheEndOfItsCallbackGetsThrough() throws Exception {
        CountDownLatch readState = new CountDownLatch(1);
        CountDownLatch left = new CountDownLatch(1);
        Completions.offThreadRaceHook = () -> {
            readState.countDown();
            try {
                left.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        List<Throwable> refused = Collections.synchronizedList(new ArrayList<>());
        try (Tool tool = new Tool()) {
            AsyncSteps root = new AsyncSteps(tool);
            root.add(asi -> {
                asi.setTimeout(10_000); // waits; fails the flow if the completion is lost
                Thread t = new Thread(() -> {
                    try {
                        asi.success(7);
                    } catch (Throwable e) {
                        refused.add(e);
                        left.countDown();
                    }
                });
                t.start();
                try {
                    // the worker has read LIVE_WAIT; leave() runs when this
                    // callback returns, and only then may the worker go on
                    readState.await();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                tool.execute(left::countDown);
            });
            root.add((asi, v) -> asi.success((Integer) v * 6));
            CompletableFuture<Object> done = root.promise();
            tool.run();
            assertEquals(Collections.emptyList(), refused);
            assertTrue(done.isDone());
            assertEquals(42, done.get());
            assertEquals(0, tool.misuseCount());
        } finally {
            Completions.offThreadRaceHook = null;
        }
    }

    /* From outside the step's callback error() reports the error and
     * returns it (it used to throw on every thread; README rule 3: it says
     * whether it was taken, and never throws because of the race). */
    @Test
    public void errorFromAnotherThread() throws Exception {
        try (Tool tool = new Tool()) {
            AsyncSteps root = new AsyncSteps(tool);
            Object[] got = new Object[1];
            Thread[] worker = new Thread[1];
            root.add(asi -> {
                asi.waitExternal();
                worker[0] = new Thread(() -> {
                    try {
                        got[0] = asi.error(Errors.COMM_ERROR, "remote");
                    } catch (Throwable t) {
                        got[0] = t;
                    }
                });
                worker[0].start();
            });
            try {
                root.run();
                fail();
            } catch (Errors.CommError e) {
                assertEquals("remote", e.info());
            }
            worker[0].join();
            assertTrue(String.valueOf(got[0]), got[0] instanceof Errors.CommError);
            assertEquals("remote", ((FutoInError) got[0]).info());
        }
    }

    /* README rule 3: a completion from a worker that lost the race to the
     * step's timeout or to a cancel of its flow is dropped quietly: false
     * (error(): null), never an exception, never misuse. */
    @Test
    public void lateCompletionsFromAWorkerReturnFalse() throws Exception {
        try (Tool tool = new Tool()) {
            AsyncSteps[] kept = new AsyncSteps[2];
            List<String> log = new ArrayList<>();
            AsyncSteps root = new AsyncSteps(tool);
            root.add(asi -> {
                kept[0] = asi;
                asi.setTimeout(1);
            }, (asi, code) -> {
                log.add("handled " + code);
                asi.success();
            });
            root.add(asi -> {
                kept[1] = asi;
                asi.setCancel(a -> log.add("cancelled"));
                tool.immediate(root::cancel);
            });
            CompletableFuture<Object> f = root.promise();
            tool.run();
            assertTrue(f.isCancelled());
            assertEquals(List.of("handled Timeout", "cancelled"), log);
            Object[] got = new Object[5];
            Thread w = new Thread(() -> {
                try {
                    got[0] = kept[0].success(1);
                    got[1] = kept[0].error("Late");
                    got[2] = kept[1].success();
                    got[3] = kept[1].error("Late", "too late");
                    got[4] = kept[1].success(1, 2, 3);
                } catch (Throwable t) {
                    got[0] = t;
                }
            });
            w.start();
            w.join();
            assertEquals(Arrays.asList(false, null, false, null, false), Arrays.asList(got));
            assertEquals(0, tool.misuseCount());
        }
    }

    /* Only true misuse throws: a second completion, or completing a step
     * that did not wait. */
    @Test
    public void secondCompletionFromAWorkerIsMisuse() throws Exception {
        try (Tool tool = new Tool()) {
            AsyncSteps[] kept = new AsyncSteps[1];
            AsyncSteps root = new AsyncSteps(tool);
            root.add(asi -> {
                kept[0] = asi;
                asi.waitExternal();
            });
            root.add((asi, v) -> asi.success(v));
            CompletableFuture<Object> f = root.promise();
            Object[] got = new Object[3];
            Thread w = new Thread(() -> {
                got[0] = kept[0].success(7);
                try {
                    kept[0].success(8);
                } catch (IllegalStateException e) {
                    got[1] = e.getMessage();
                }
                try {
                    kept[0].error("Again");
                } catch (IllegalStateException e) {
                    got[2] = e.getMessage();
                }
            });
            tool.immediate(w::start);
            tool.run();
            w.join();
            assertEquals(7, f.get());
            assertEquals(true, got[0]);
            assertTrue(String.valueOf(got[1]), String.valueOf(got[1]).contains("second completion"));
            assertTrue(String.valueOf(got[2]), String.valueOf(got[2]).contains("second completion"));
        }
    }

    @Test
    public void onlyOneCompletionPasses() throws Exception {
        try (Tool tool = new Tool()) {
            AsyncSteps root = new AsyncSteps(tool);
            AtomicInteger refused = new AtomicInteger();
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            root.add(asi -> {
                asi.waitExternal();
                for (int t = 0; t < 4; ++t) {
                    Thread th = new Thread(() -> {
                        try {
                            go.await();
                            asi.success(1);
                        } catch (IllegalStateException e) {
                            refused.incrementAndGet();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                    threads.add(th);
                    th.start();
                }
                go.countDown();
            });
            assertEquals(1, root.run());
            for (Thread th : threads) {
                th.join(); // every completion has been tried
            }
            assertEquals(3, refused.get());
            assertEquals(0, tool.misuseCount());
        }
    }

    /** Completions from other threads racing timeouts and cancels: every
     *  flow settles exactly once, nothing crashes, nothing leaks, no late
     *  completion throws or counts as misuse, and what a completion
     *  returned agrees with how its flow ended. */
    @Test
    public void completionsRacingTimeoutsAndCancels() throws InterruptedException {
        long refs = FutoInNative.global_refs();
        try (Tool tool = new Tool()) {
            AtomicInteger reports = new AtomicInteger();
            tool.onMisuse(m -> reports.incrementAndGet());
            int n = 3000;
            java.util.concurrent.atomic.AtomicIntegerArray taken = new java.util.concurrent.atomic.AtomicIntegerArray(n);
            String[] outcome = new String[n];
            List<Throwable> thrown = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch workers = new CountDownLatch(n);
            for (int i = 0; i < n; ++i) {
                int k = i;
                AsyncSteps root = new AsyncSteps(tool);
                root.add(asi -> {
                    asi.setTimeout(k % 3 == 0 ? 1 : 500);
                    ForkJoinPool.commonPool().execute(() -> {
                        try {
                            boolean ok = k % 2 == 0 ? asi.success(k) : asi.error("Late") != null;
                            taken.set(k, ok ? 1 : 2);
                        } catch (Throwable t) {
                            thrown.add(t);
                        } finally {
                            workers.countDown();
                        }
                    });
                    if (k % 7 == 0) {
                        tool.immediate(root::cancel);
                    }
                });
                root.promise().whenComplete((v, e) -> {
                    tool.execute(root::close);
                    outcome[k] = e == null ? "ok"
                            : e instanceof java.util.concurrent.CancellationException ? "cancelled"
                            : ((FutoInError) e).code();
                });
            }
            tool.run();
            workers.await();
            assertEquals(Collections.emptyList(), thrown);
            int[] count = new int[4];
            for (int k = 0; k < n; ++k) {
                String o = outcome[k];
                boolean t = taken.get(k) == 1;
                if ("ok".equals(o) || "Late".equals(o)) {
                    assertTrue("flow " + k + " ended " + o + " but its completion was not taken", t);
                    count["ok".equals(o) ? 0 : 1]++;
                } else if ("Timeout".equals(o)) {
                    assertFalse("flow " + k + " timed out but its completion was taken", t);
                    count[2]++;
                } else {
                    assertEquals("flow " + k, "cancelled", o);
                    count[3]++;
                }
            }
            System.out.printf("race: %d ok, %d failed, %d timed out, %d cancelled, %d misuse%n",
                    count[0], count[1], count[2], count[3], tool.misuseCount());
            assertEquals(0, tool.misuseCount());
            assertEquals(0, reports.get());
        }
        assertEquals(refs, FutoInNative.global_refs());
    }

    @Test
    public void rootCancelFromAnotherThread() throws Exception {
        try (Tool tool = new Tool()) {
            AsyncSteps root = new AsyncSteps(tool);
            List<String> log = new ArrayList<>();
            root.add(asi -> {
                asi.setCancel(a -> log.add("cancelled on " + Thread.currentThread().getName()));
                ForkJoinPool.commonPool().execute(root::cancel); // marshalled to the loop
            });
            CompletableFuture<Object> f = root.promise();
            tool.run();
            assertTrue(f.isCancelled());
            assertEquals(List.of("cancelled on " + Thread.currentThread().getName()), log);
        }
    }

    @Test
    public void futureCancelFromAnotherThread() throws Exception {
        try (Tool tool = Tool.startThread("futoin-fcancel")) {
            CountDownLatch started = new CountDownLatch(1);
            CompletableFuture<Object> f = tool.promise(root -> root.add(asi -> {
                asi.waitExternal();
                started.countDown();
            }));
            started.await();
            f.cancel(false);
            try {
                f.get();
                fail();
            } catch (CancellationException expected) {
                // cancelled
            }
            assertEquals(0, (int) tool.call(() -> tool.executing.size()).get());
        }
    }

    @Test
    public void executorTasksRunInOrderAfterTheCurrentCallback() {
        try (Tool tool = new Tool()) {
            List<String> log = new ArrayList<>();
            AsyncSteps root = new AsyncSteps(tool);
            root.add(asi -> {
                tool.execute(() -> log.add("task 1"));
                tool.execute(() -> log.add("task 2"));
                log.add("step");
                asi.waitExternal();
                tool.execute(asi::success);
            });
            root.run();
            assertEquals(List.of("step", "task 1", "task 2"), log);
        }
    }

    @Test
    public void tasksFromOtherThreadsWhileRunning() throws Exception {
        try (Tool tool = new Tool()) {
            AtomicInteger n = new AtomicInteger();
            AsyncSteps root = new AsyncSteps(tool);
            root.add(asi -> {
                asi.waitExternal();
                ForkJoinPool.commonPool().execute(() -> {
                    for (int i = 0; i < 5000; ++i) {
                        tool.execute(n::incrementAndGet);
                    }
                    tool.execute(asi::success);
                });
            });
            root.run();
            assertEquals(5000, n.get());
        }
    }

    @Test
    public void timersAndHandles() {
        try (Tool tool = new Tool()) {
            List<String> log = new ArrayList<>();
            Tool.Handle[] h = new Tool.Handle[3];
            h[0] = tool.deferred(20, () -> log.add("late"));
            h[1] = tool.deferred(1, () -> log.add("early"));
            h[2] = tool.immediate(() -> {
                log.add("now");
                h[0].cancel();
            });
            assertTrue(h[0].isValid() && h[1].isValid() && h[2].isValid());
            tool.run();
            assertEquals(List.of("now", "early"), log);
            assertFalse(h[0].isValid() || h[1].isValid() || h[2].isValid());
            h[0].cancel(); // no-op
        }
    }

    @Test
    public void closeDropsPendingTimers() {
        long refs = FutoInNative.global_refs();
        Tool tool = new Tool();
        tool.deferred(100_000, () -> fail("must not run"));
        assertEquals(refs + 2, FutoInNative.global_refs()); // the tool + the timer
        tool.close();
        assertEquals(refs, FutoInNative.global_refs());
    }

    @Test
    public void runMovesTheLoopToAnotherThread() throws Exception {
        Tool tool = new Tool();
        AsyncSteps[] root = new AsyncSteps[1];
        Thread other = new Thread(() -> {
            tool.run(); // nothing to do, but this thread becomes the loop thread
            root[0] = new AsyncSteps(tool);
            root[0].add(asi -> asi.success(Thread.currentThread().getName()));
            assertEquals("mover", root[0].run());
            tool.close();
        }, "mover");
        other.start();
        other.join();
        assertTrue(tool.isClosed());
    }

    @Test
    public void nativeLoopThreadIsAttachedOnceAndDetachedAtItsEnd() throws Exception {
        long att = FutoInNative.attached_threads();
        long det = FutoInNative.detached_threads();
        try (Tool tool = new Tool()) {
            List<String> names = new ArrayList<>();
            List<CompletableFuture<Object>> fs = new ArrayList<>();
            for (int i = 0; i < 3; ++i) {
                AsyncSteps root = new AsyncSteps(tool);
                root.add(asi -> {
                    names.add(Thread.currentThread().getName());
                    asi.add(a -> a.success(a.state().size()));
                });
                fs.add(root.promise());
            }
            // a pthread the JVM does not know runs the loop: the trampolines attach it
            assertEquals(0, FutoInNative.test_run_on_native_thread(tool.address()));
            for (CompletableFuture<Object> f : fs) {
                assertEquals(0, f.get());
            }
            assertEquals(List.of("futoin-native-loop", "futoin-native-loop", "futoin-native-loop"), names);
            tool.run(); // back to this thread, so that close() is allowed here
        }
        assertEquals(att + 1, FutoInNative.attached_threads());
        assertEquals(det + 1, FutoInNative.detached_threads());
    }

    @Test
    public void closeFromAnotherThreadIsRefusedForACallerThreadTool() throws Exception {
        Tool tool = new Tool();
        Throwable[] seen = new Throwable[1];
        Thread t = new Thread(() -> {
            try {
                tool.close();
            } catch (IllegalStateException e) {
                seen[0] = e;
            }
        });
        t.start();
        t.join();
        assertTrue(seen[0] != null && seen[0].getMessage().contains("loop thread"));
        tool.close();
    }

    @Test
    public void closeInsideRunTakesEffectAfterRun() {
        Tool tool = new Tool();
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> tool.close());
        root.run();
        assertTrue(tool.isClosed());
    }

}
