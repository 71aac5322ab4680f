package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.lang.ref.WeakReference;

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
            @SuppressWarnings("unchecked")
            WeakReference<Object>[] ref = new WeakReference[1];
            AsyncSteps root = own.call(() -> new AsyncSteps(own)).get();
            /* not Tool.promise(setup): the free of its root is a task
             * posted to the tool, which would hide the defect */
            own.call(() -> {
                ref[0] = captured(root, 3);
                return root.promise();
            }).get().get();
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
        done.add(asi -> tool.deferred(1, () -> {
            /* on the loop thread, inside run(), after the loop went idle
             * waiting for this timer */
            seen[0] = true;
            seen[1] = collected(ref);
        }));
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
                 * its steps go to other's table, chained from this one */
                AsyncSteps.wrap(asi.binary(), other).add(a -> a.success(7));
            });
            root.add((asi, v) -> got[0] = v);
            root.run();
            assertEquals(7, got[0]);
            root.close();
        }
    }
}
