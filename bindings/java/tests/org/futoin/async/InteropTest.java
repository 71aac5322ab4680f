package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

/**
 * Steps of "another language" (C steps from the test hooks) in one flow with
 * Java steps: custom values of each side cross the other unharmed and are
 * released exactly once.
 */
public class InteropTest extends ToolFixture {
    @Test
    public void foreignCustomValuePassesThroughJava() {
        int cleaned = FutoInNative.test_foreign_cleanups();
        int seen = FutoInNative.test_foreign_seen();
        AsyncSteps root = new AsyncSteps(tool);
        String[] desc = new String[1];
        root.add(asi -> FutoInNative.test_add_foreign_producer(asi.binary()));
        root.add((asi, v) -> {
            ForeignValue fv = (ForeignValue) v;
            desc[0] = fv.toString();
            assertEquals(0x01, fv.typeFlags());
            asi.success(fv); // moved back as it came
            assertTrue(!fv.isPresent());
        });
        FutoInNative.test_add_foreign_consumer(root.binary());
        root.run();
        assertTrue(desc[0], desc[0].startsWith("ForeignValue[flags=0x01"));
        assertEquals(seen + 1, FutoInNative.test_foreign_seen());
        assertEquals(cleaned + 1, FutoInNative.test_foreign_cleanups()); // by the runtime, once
    }

    @Test
    public void foreignCustomValueDroppedByJavaIsReleasedOnce() {
        int cleaned = FutoInNative.test_foreign_cleanups();
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> FutoInNative.test_add_foreign_producer(asi.binary()));
        root.add((asi, v) -> ((ForeignValue) v).close());
        root.run();
        assertEquals(cleaned + 1, FutoInNative.test_foreign_cleanups());
        // a step that ignores values never wraps them: the runtime cleans up
        AsyncSteps root2 = new AsyncSteps(tool);
        root2.add(asi -> FutoInNative.test_add_foreign_producer(asi.binary()));
        root2.add(asi -> { });
        root2.run();
        assertEquals(cleaned + 2, FutoInNative.test_foreign_cleanups());
    }

    @Test
    public void javaObjectThroughCStepsIsTheSameObjectAndReleasedOnce() {
        long refs = FutoInNative.global_refs();
        Object mine = new StringBuilder("mine");
        Object[] got = new Object[1];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.success(mine, 1));
        FutoInNative.test_add_c_pass(root.binary());
        FutoInNative.test_add_c_pass(root.binary());
        root.add((asi, a, b) -> got[0] = a);
        root.run();
        root.close();
        assertSame(mine, got[0]);
        assertEquals(refs, FutoInNative.global_refs());
    }

    @Test
    public void wrapAHandleOfTheSameFlow() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            AsyncSteps w = AsyncSteps.wrap(asi.binary(), null); // as another language would
            w.add(a -> a.success("via wrap"));
        });
        root.add((asi, v) -> asi.success(v));
        assertEquals("via wrap", root.run());
    }
}
