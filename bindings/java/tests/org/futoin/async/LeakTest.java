package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;

import org.junit.Test;

/**
 * Nothing leaks: after 100,000 flows ending in success, error and cancel
 * (with values, custom objects, error handlers, cancel handlers, timeouts,
 * awaited futures completed by other threads), the number of live JNI
 * global references the glue holds is back at its baseline, exactly, and
 * the Java heap is back at its baseline after GC.
 */
public class LeakTest {
    private static final int FLOWS = 100_000;
    private static final int BATCH = 1_000;

    private static long usedHeapAfterGc() {
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 5; ++i) {
            System.gc();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            best = Math.min(best, mem.getHeapMemoryUsage().getUsed());
        }
        return best;
    }

    /** One batch of flows: a third succeed, a third fail, a third are cancelled. */
    private static void batch(Tool tool, int base, int[] outcomes) {
        List<AsyncSteps> roots = new ArrayList<>(BATCH);
        for (int i = 0; i < BATCH; ++i) {
            int n = base + i;
            AsyncSteps root = new AsyncSteps(tool);
            roots.add(root);
            switch (n % 3) {
                case 0: // success, with values and a custom object
                    root.add(asi -> asi.success("v" + n, new int[] {n}, new Object()))
                        .add((asi, a, b, c) -> asi.add(x -> x.success(a, c)))
                        .add((asi, a, c) -> asi.state().put("last", c));
                    if (n % 2 == 0) {
                        root.await(CompletableFuture.supplyAsync(() -> n, ForkJoinPool.commonPool()));
                    }
                    root.execute(e -> outcomes[3]++);
                    break;
                case 1: // error, caught once then unhandled
                    root.add(asi -> asi.add(x -> {
                        throw new IllegalStateException("boom " + n);
                    }), (asi, code) -> asi.error(Errors.INVALID_REQUEST, code));
                    root.execute(e -> outcomes[1]++);
                    break;
                default: // cancel: waiting steps with cancel handlers and a timeout
                    root.add(asi -> {
                        asi.setCancel(x -> outcomes[2]++);
                        asi.setTimeout(60_000);
                        asi.parallel().add(x -> x.waitExternal()).add(x -> x.setCancel(y -> { }));
                    });
                    root.execute(e -> outcomes[3]++);
                    tool.immediate(root::cancel);
                    break;
            }
        }
        tool.run();
        for (AsyncSteps r : roots) {
            r.close();
        }
    }

    @Test
    public void globalRefsAndHeapReturnToBaseline() {
        int[] outcomes = new int[4];
        try (Tool tool = new Tool()) {
            batch(tool, 0, outcomes); // warm-up: classes, JIT, pools
            outcomes[0] = outcomes[1] = outcomes[2] = outcomes[3] = 0;
            long refs0 = FutoInNative.global_refs();
            long heap0 = usedHeapAfterGc();
            for (int b = 0; b < FLOWS / BATCH; ++b) {
                batch(tool, b * BATCH, outcomes);
            }
            long refs1 = FutoInNative.global_refs();
            long heap1 = usedHeapAfterGc();
            System.out.printf("LeakTest: %d flows: global refs %d -> %d, heap %d KiB -> %d KiB%n",
                    FLOWS, refs0, refs1, heap0 >> 10, heap1 >> 10);
            assertEquals("errors", FLOWS / 3, outcomes[1]);
            assertEquals("cancel handlers", FLOWS / 3, outcomes[2]);
            assertEquals("unexpected unhandled errors", 0, outcomes[3]);
            assertEquals("live JNI global references", refs0, refs1);
            assertTrue("heap grew by " + ((heap1 - heap0) >> 10) + " KiB", heap1 - heap0 < (1 << 20));
            assertEquals(0, tool.misuseCount());
        }
    }

    @Test
    public void rootsNobodyClosesAreFreedAfterGc() throws InterruptedException {
        try (Tool tool = new Tool()) {
            long refs0 = FutoInNative.global_refs();
            List<PhantomReference<AsyncSteps>> gone = new ArrayList<>();
            ReferenceQueue<AsyncSteps> q = new ReferenceQueue<>();
            for (int i = 0; i < 10_000; ++i) {
                AsyncSteps root = new AsyncSteps(tool);
                root.state().put("k", new Object()); // a state map: one global ref
                root.add(asi -> asi.success(new Object()));
                root.execute();
                gone.add(new PhantomReference<>(root, q));
            }
            tool.run();
            assertTrue(FutoInNative.global_refs() > refs0);
            assertTrue(tool.roots.size() > 0);
            /* Counted, not timed: a full GC finds every unreachable root at
             * once (refersTo(null) once it cleared the reference); a root
             * still referenced after several is a leak. */
            int gcs = 0;
            while (gcs < 10 && !gone.stream().allMatch(r -> r.refersTo(null))) {
                System.gc();
                ++gcs;
            }
            assertTrue("roots still reachable after " + gcs + " full GCs",
                    gone.stream().allMatch(r -> r.refersTo(null)));
            /* The cleaner thread now runs each root's clean-up, which
             * posts the free to the loop: wait for that event (the JDK runs
             * the clean-up of every cleared reference), run the loop. */
            while (!tool.roots.isEmpty()) {
                tool.run();
                if (!tool.roots.isEmpty()) {
                    Thread.sleep(1); // the cleaner thread's turn; not an ordering
                }
            }
            assertEquals(0, tool.roots.size());
            assertEquals(refs0, FutoInNative.global_refs());
        }
    }
}
