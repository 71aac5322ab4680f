package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * The steps add() puts into the flows of an own Tool hold their Rec in the
 * Tool's RecTable (glue/jni_rectab.c), not in a JNI global reference each:
 * the slots must come back (counted in global_refs() as the references
 * they replace), the table must grow past its first size, and a waiting
 * step in a grown table must still learn of its release.
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
