package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * Consecutive Java steps run in one up-call (Dispatch.chain over the
 * runtime's ext chain()): what a step sees must not depend on whether it
 * was chained, and whatever stops a chain (errors, sub-steps, waiting,
 * a cancel, another language's step) must still work as without it.
 */
public class ChainTest {
    private Tool tool;
    private List<String> log;

    @Before
    public void setUp() {
        tool = new Tool();
        log = new ArrayList<>();
    }

    @After
    public void tearDown() {
        assertEquals("misuse reports", 0, tool.misuseCount());
        tool.close();
    }

    /** Is this step running chained, inside an earlier step's up-call? */
    private static boolean chained() {
        return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
                .walk(s -> s.anyMatch(f -> f.getDeclaringClass() == Dispatch.class
                        && f.getMethodName().equals("chain")));
    }

    @Test
    public void consecutiveJavaStepsRunInOneUpCall() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> log.add("1 " + chained()));
        root.add(asi -> log.add("2 " + chained()));
        root.add(asi -> asi.success(5));
        root.add((asi, v) -> log.add("4 " + v + " " + chained()));
        root.run();
        assertEquals(List.of("1 false", "2 true", "4 5 true"), log);
    }

    @Test
    public void keptValuesArriveWithTheirTypesAsWithoutAChain() {
        Object[] sent = {1, 5L, (short) 3, (byte) 2, true, 1.5f, -7, (1L << 54), "text", null};
        AsyncSteps root = new AsyncSteps(tool);
        List<Object> got = new ArrayList<>();
        root.add(asi -> asi.success(sent[0]));
        for (int i = 1; i <= sent.length; ++i) {
            int k = i;
            root.add((asi, v) -> {
                got.add(v);
                if (k < sent.length) {
                    asi.success(sent[k]);
                }
            });
        }
        root.run();
        assertEquals(sent.length, got.size());
        for (int i = 0; i < sent.length; ++i) {
            assertEquals("value " + i, sent[i], got.get(i));
            if (sent[i] != null) {
                assertEquals("type of value " + i, sent[i].getClass(), got.get(i).getClass());
            }
        }
    }

    @Test
    public void anErrorInAChainedStepReachesItsOwnHandler() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.success(1));
        root.add((asi, v) -> {
            log.add("throws " + chained());
            asi.error("Boom", "from the second step");
        }, (asi, code) -> {
            log.add("handled " + code + ": " + asi.errorInfo());
            asi.success(2);
        });
        root.add((asi, v) -> log.add("after " + v));
        root.run();
        assertEquals(List.of("throws true", "handled Boom: from the second step", "after 2"), log);
    }

    @Test
    public void anUnhandledErrorInAChainedStepShowsItsStep() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> { });
        root.add(asi -> {
            throw new IllegalArgumentException("bad");
        });
        root.add(asi -> log.add("never"));
        try {
            root.run();
            fail("no error");
        } catch (FutoInError e) {
            assertEquals(Errors.INTERNAL_ERROR, e.code());
            assertTrue(e.info(), e.info().contains("IllegalArgumentException: bad"));
        }
        assertEquals(List.of(), log);
    }

    @Test
    public void subStepsWaitingAndOtherLanguagesEndAChainAndResume() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> log.add("a " + chained()));
        root.add(asi -> {
            log.add("b " + chained());
            asi.add(sub -> log.add("b.1 " + chained()));
            asi.add(sub -> log.add("b.2 " + chained()));
        });
        root.add(asi -> {
            log.add("c " + chained());
            asi.setTimeout(60_000); /* a guard against a hang, not a race */
            asi.waitExternal();
            tool.execute(() -> asi.success(7));
        });
        root.add((asi, v) -> log.add("d " + v + " " + chained()));
        root.add(asi -> log.add("e " + chained()));
        root.run();
        assertEquals(List.of("a false", "b true", "b.1 false", "b.2 true", "c false", "d 7 false",
                "e true"), log);
    }

    @Test
    public void aCancelInsideAChainedStepStopsTheFlow() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> log.add("a"));
        root.add(asi -> {
            log.add("b " + chained());
            root.cancel();
        });
        root.add(asi -> log.add("never"));
        try {
            root.run();
            fail("not cancelled");
        } catch (CancellationException expected) {
            // the flow ended as cancelled
        }
        assertEquals(List.of("a", "b true"), log);
    }

    @Test
    public void aChainedOverHandleIsFinished() {
        AsyncSteps[] first = new AsyncSteps[1];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> first[0] = asi);
        root.add(asi -> {
            try {
                first[0].success();
                log.add("accepted");
            } catch (IllegalStateException e) {
                log.add("refused " + chained());
            }
        });
        root.run();
        assertEquals(List.of("refused true"), log);
    }

    @Test
    public void longRunsYieldAndStillCountEveryStep() {
        int n = 10_000;
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.success(0));
        for (int i = 0; i < n; ++i) {
            root.add((asi, v) -> asi.success((Integer) v + 1));
        }
        assertEquals(n, root.run());
        boolean[] other = {false};
        AsyncSteps a = new AsyncSteps(tool);
        AsyncSteps b = new AsyncSteps(tool);
        a.add(asi -> asi.success(0));
        for (int i = 0; i < n; ++i) {
            a.add((asi, v) -> {
                if (other[0]) {
                    log.add("b ran while a was at step " + v);
                    other[0] = false;
                }
                asi.success((Integer) v + 1);
            });
        }
        b.add(asi -> other[0] = true);
        a.execute();
        b.execute();
        tool.run();
        assertFalse("b never ran during a's run of steps", log.isEmpty());
        assertFalse(log.get(0), log.get(0).endsWith(" " + n));
        a.close();
        b.close();
    }
}
