package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.lang.ref.WeakReference;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * The steps add() puts into the flows of an own Tool hold their Rec in the
 * Tool's RecTable (glue/jni_rectab.c), not in a JNI global reference each:
 * the slots must come back (counted in global_refs() as the references
 * they replace), the table must grow past its first size, and a waiting
 * step in a grown table must still learn of its release. And a finished
 * step's Rec (with what its lambda captured) must not stay in the table
 * once the Tool's loop goes idle, whether or not anything is added to the
 * Tool later: on its own thread, while a run() waits, after runOnce(),
 * advance() and a root's close().
 */
public class RecTableTest {
    private Tool tool;

    @Before
    public void setUp() {
        tool = new Tool();
    }

    @After
    public void tearDown() {
        assertEquals("misuse reports", 0, tool.misuseCount());
        tool.close();
    }

    /** How many times {@link #collected} calls System.gc() at most. */
    private static final int GC_TRIES = 50;

    /**
     * Adds to `root` a step whose lambda alone holds a new object (and
     * `more` steps after it); returns a weak reference to that object.
     */
    private static WeakReference<Object> captured(AsyncSteps root, int more) {
        Object held = new byte[1 << 16];
        root.add(asi -> {
            if (held == null) {
                throw new AssertionError("never");
            }
        });
        for (int i = 0; i < more; ++i) {
            root.add(asi -> { });
        }
        return new WeakReference<>(held);
    }

    /** Whether `ref` is cleared within GC_TRIES calls of System.gc(). */
    private static boolean collected(WeakReference<?> ref) {
        for (int i = 0; i < GC_TRIES && ref.get() != null; ++i) {
            System.gc();
            Thread.yield();
        }
        return ref.get() == null;
    }

    @Test
    public void aFinishedStepsCaptureIsCollectedWhileItsOwnThreadIdles() throws Exception {
        try (Tool own = Tool.startThread("rectab-idle")) {
            @SuppressWarnings({"unchecked", "rawtypes"})
            WeakReference<Object>[] ref = new WeakReference[1];
            AsyncSteps root = own.call(() -> new AsyncSteps(own)).get();
            /* not Tool.promise(setup): the free of its root is a task
             * posted to the tool, which would hide the defect */
            /* The last step starts a timer whose callback starts a second
             * one, as in the run()-waits case below: the second fires
             * after a prepare phase that followed the release of every
             * step, on any machine. (Checked as soon as the promise
             * resolved, the test depended on the loop thread getting a CPU
             * within GC_TRIES collections.) A timer is not a task: neither
             * clears the table. */
            CountDownLatch turned = new CountDownLatch(1);
            own.call(() -> {
                ref[0] = captured(root, 3);
                root.add(asi -> own.deferred(1, () -> own.deferred(1, turned::countDown)));
                return root.promise();
            }).get().get();
            turned.await();
            /* nothing else reaches the tool: its thread goes idle */
            assertTrue("the finished step's capture is garbage while the loop idles", collected(ref[0]));
            root.close();
        }
    }

    @Test
    public void aFinishedStepsCaptureIsCollectedWhileRunWaits() {
        boolean[] seen = new boolean[2];
        AsyncSteps done = new AsyncSteps(tool);
        WeakReference<Object> ref = captured(done, 2);
        /* Two timers, the second started by the first: the check must not
         * depend on how fast the machine is. A loaded one can find the first
         * timer due before the loop ever waited (libuv runs timers before the
         * prepare handle that clears the slots); the second fires in a later
         * turn of the loop than the first (the tool's timers started by a
         * timer callback wait for the next turn), so at least one prepare
         * phase and one wait lie between them whatever the clock says. */
        done.add(asi -> tool.deferred(1, () -> tool.deferred(1, () -> {
            /* on the loop thread, inside run(), after the loop went idle
             * waiting for this timer */
            seen[0] = true;
            seen[1] = collected(ref);
        })));
        done.execute();
        tool.run();
        assertTrue(seen[0]);
        assertTrue("the finished step's capture is garbage while run() waits", seen[1]);
        done.close();
    }

    @Test
    public void aFinishedStepsCaptureIsCollectedAfterRunOnce() {
        AsyncSteps root = new AsyncSteps(tool);
        WeakReference<Object> ref = captured(root, 2);
        root.execute();
        while (tool.runOnce()) {
            // until nothing is left
        }
        assertTrue("the finished step's capture is garbage after runOnce()", collected(ref));
        root.close();
    }

    @Test
    public void aFinishedStepsCaptureIsCollectedAfterAdvance() {
        try (Tool vt = new Tool(new Tool.Options().virtualTime(true))) {
            AsyncSteps root = new AsyncSteps(vt);
            WeakReference<Object> ref = captured(root, 2);
            root.execute();
            vt.advance(0);
            assertTrue("the finished step's capture is garbage after advance()", collected(ref));
            root.close();
        }
    }

    @Test
    public void anUnrunStepsCaptureIsCollectedAfterItsRootIsClosed() {
        AsyncSteps root = new AsyncSteps(tool);
        WeakReference<Object> ref = captured(root, 2);
        root.close(); /* never executed: close() releases its steps */
        assertTrue("a closed root's step's capture is garbage", collected(ref));
    }

    @Test
    public void slotsAreCountedAndComeBackAfterTheTableGrew() {
        assertNotNull("an own Tool has a Rec table", tool.recs);
        long refs = FutoInNative.global_refs();
        int n = 3000; /* the table starts with 1,024 slots */
        Object[] last = new Object[1];
        AsyncSteps root = new AsyncSteps(tool);
        for (int i = 0; i < n; ++i) {
            root.add((asi, v) -> asi.success(v == null ? 1 : (Integer) v + 1));
        }
        root.add((asi, v) -> last[0] = v);
        assertEquals("one slot per queued step", refs + n + 1, FutoInNative.global_refs());
        root.run();
        assertEquals(n, last[0]);
        for (Object r : tool.recs.recs) {
            assertNull("a finished step's Rec is not kept", r);
        }
        root.close(); /* and with it the root's own reference (execute()) */
        assertEquals(refs, FutoInNative.global_refs());
    }

    @Test
    public void aWaitingStepInAGrownTableLearnsOfItsCancel() {
        long refs = FutoInNative.global_refs();
        AsyncSteps[] waiting = new AsyncSteps[1];
        AsyncSteps root = new AsyncSteps(tool);
        for (int i = 0; i < 1500; ++i) {
            root.add(asi -> { });
        }
        root.add(asi -> {
            asi.waitExternal();
            waiting[0] = asi;
            tool.immediate(() -> root.cancel());
        });
        root.add(asi -> { throw new AssertionError("must not run"); });
        root.execute();
        tool.run();
        assertNotNull(waiting[0]);
        assertEquals("its handle heard of the release (Dispatch.released)",
                     StepStates.LOST, StepStates.of(waiting[0]));
        assertFalse("a completion after the cancel is late", waiting[0].success());
        root.close();
        assertEquals(refs, FutoInNative.global_refs());
    }

    @Test
    public void aStepOfABorrowedHandleOfAnotherToolRunsFromThatTable() {
        try (Tool other = new Tool()) {
            AsyncSteps root = new AsyncSteps(tool);
            Object[] got = new Object[2];
            root.add(asi -> {
                /* the same flow seen through a handle that names `other`:
                 * its steps keep global references (other's table is for
                 * other's flows only), chained from this one */
                AsyncSteps.wrap(asi.binary(), other).add(a -> a.success(7));
            });
            root.add((asi, v) -> got[0] = v);
            root.run();
            assertEquals(7, got[0]);
            root.close();
        }
    }

    /* Runs `fn` on `t`'s own thread and waits for it. */
    private static <T> T on(Tool t, java.util.function.Supplier<T> fn) throws Exception {
        return t.call(fn).get();
    }

    /**
     * Misuse: a step handle of a flow of Tool A wrapped with another own
     * Tool B (whose loop thread, when the add is made, is A's thread, so
     * the thread checks pass). The step must work, and its Rec must not go
     * into B's table: the flow is A's, its steps are released on A's loop,
     * which would write B's table from a thread that is not B's once B's
     * loop runs elsewhere (a data race), and B's table index outlives
     * nothing of A's flow. After both tools close, every slot and
     * reference is back.
     */
    @Test
    public void aStepAddedThroughAHandleWrappedWithAnotherToolTakesNoSlotOfIt() throws Exception {
        long refs = FutoInNative.global_refs();
        Object[] got = new Object[1];
        int[] inB = {-1, -1};
        try (Tool a = Tool.startThread("rectab-A")) {
            /* B's loop thread is A's thread until another thread runs it */
            Tool b = on(a, () -> new Tool());
            AsyncSteps root = on(a, () -> new AsyncSteps(a));
            CompletableFuture<Object> done = on(a, () -> {
                root.add(asi -> {
                    AsyncSteps w = AsyncSteps.wrap(asi.binary(), b);
                    w.add(x -> x.success(7));
                    w.add((x, v) -> x.success((Integer) v + 1), (x, code) -> { });
                    inB[0] = b.recs.inUse(); /* two steps queued in A's flow */
                });
                root.add((asi, v) -> got[0] = v);
                return root.promise();
            });
            done.get();
            assertEquals("the steps added through the wrapped handle ran", 8, got[0]);
            assertEquals("a step of A's flow holds no slot of B's table", 0, inB[0]);
            int[] inA = new int[1];
            on(a, () -> {
                root.close();
                inA[0] = a.recs.inUse();
                inB[1] = b.recs.inUse();
                b.close();
                return null;
            });
            assertEquals("A's slots are back", 0, inA[0]);
            assertEquals("B's slots are back", 0, inB[1]);
        }
        assertEquals("every slot and reference is back", refs, FutoInNative.global_refs());
    }

    /**
     * The same misuse with B's loop then moved to another thread (the test
     * thread runs it) while A's flow still holds steps added through the
     * handle wrapped with B: A releases them on its thread while B adds and
     * releases steps of its own flow on the test thread. B's table must
     * stay consistent: B's own steps each run their own lambda, and every
     * slot and reference is back after both tools close.
     */
    @Test
    public void wrappedStepsReleasedOnAnotherToolsThreadLeaveItsTableConsistent() throws Exception {
        long refs = FutoInNative.global_refs();
        final int waiting = 200;
        final int own = 5000;
        AsyncSteps[] held = new AsyncSteps[waiting];
        int[] bad = new int[1];
        int[] ran = new int[1];
        try (Tool a = Tool.startThread("rectab-A2")) {
            Tool b = on(a, () -> new Tool());
            AsyncSteps[] roots = new AsyncSteps[waiting];
            java.util.concurrent.CountDownLatch parked = new java.util.concurrent.CountDownLatch(waiting);
            on(a, () -> {
                for (int i = 0; i < waiting; ++i) {
                    final int k = i;
                    roots[i] = new AsyncSteps(a);
                    roots[i].add(asi -> AsyncSteps.wrap(asi.binary(), b).add(x -> {
                        x.waitExternal();
                        held[k] = x;
                        parked.countDown();
                    }));
                    roots[i].execute();
                }
                return null;
            });
            parked.await();
            b.run(); /* nothing to do: B's loop thread is now this one */
            /* B's loop moves to this thread; A completes its waiting steps
             * (released on A's thread) while B runs a flow of its own */
            AsyncSteps broot = new AsyncSteps(b);
            for (int i = 0; i < own; ++i) {
                final int k = i;
                broot.add((asi, v) -> {
                    if ((v == null ? 0 : (Integer) v) != k) {
                        ++bad[0];
                    }
                    ++ran[0];
                    asi.add(x -> x.success(k + 1));
                });
            }
            broot.execute();
            a.execute(() -> {
                for (AsyncSteps x : held) {
                    x.success();
                }
            });
            b.run();
            assertEquals(own, ran[0]);
            assertEquals("B's steps ran their own lambdas", 0, bad[0]);
            broot.close();
            on(a, () -> {
                for (AsyncSteps r : roots) {
                    r.close();
                }
                return null;
            });
            assertEquals("B's slots are back", 0, b.recs.inUse());
            b.close();
        }
        assertEquals("every slot and reference is back", refs, FutoInNative.global_refs());
    }
}
