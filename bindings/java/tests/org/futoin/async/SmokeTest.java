package org.futoin.async;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class SmokeTest {
    @Test
    public void twoSteps() {
        try (Tool tool = new Tool()) {
            AsyncSteps root = new AsyncSteps(tool);
            root.add(asi -> asi.success(21)).add((asi, v) -> asi.success((Integer) v * 2));
            assertEquals(42, root.run());
        }
    }
}
