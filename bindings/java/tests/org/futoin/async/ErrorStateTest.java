package org.futoin.async;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * The flow's error state (FTN12 §1.7: error_info, last_exception,
 * async_stack) seen through state() and through the accessors is one
 * value, the C core's, at every moment (README rule 6); and the state map
 * keeps it apart from the user's keys.
 */
public class ErrorStateTest {
    private Tool tool;
    private List<String> log;

    @Before
    public void setUp() {
        tool = new Tool();
        log = new ArrayList<>();
    }

    @After
    public void tearDown() {
        tool.close();
    }

    /** "where: state view | accessors" for both values. */
    private void snapshot(AsyncSteps asi, String where) {
        Map<String, Object> s = asi.state();
        Object viewLast = s.get("last_exception");
        Object last = asi.lastException();
        String lastText = last instanceof FutoInError ? ((FutoInError) last).code() : String.valueOf(last);
        log.add(where + ": error_info=" + s.get("error_info") + "/" + asi.errorInfo()
                + " last_exception=" + lastText + (viewLast == last ? "" : " (the view differs: " + viewLast + ")"));
    }

    @Test
    public void bothReadNullAfterAHandledBreak() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.error("MyError", "my info"), (asi, code) -> {
            snapshot(asi, "handler");
            asi.success();
        });
        root.add(asi -> snapshot(asi, "after the handled error"));
        root.loop(asi -> asi.breakLoop());
        root.add(asi -> snapshot(asi, "after the handled break"));
        root.repeat(3, (asi, i) -> asi.continueLoop());
        root.add(asi -> snapshot(asi, "after continueLoop"));
        root.run();
        snapshot(root, "root");
        assertEquals(List.of(
                "handler: error_info=my info/my info last_exception=MyError",
                "after the handled error: error_info=my info/my info last_exception=MyError",
                "after the handled break: error_info=null/null last_exception=null",
                "after continueLoop: error_info=null/null last_exception=null",
                "root: error_info=null/null last_exception=null"), log);
    }

    @Test
    public void breakInsideAHandledStepOfTheLoop() {
        AsyncSteps root = new AsyncSteps(tool);
        root.loop(asi -> {
            asi.add(a -> {
                throw new IOException("io");
            }, (a, code) -> {
                snapshot(a, "inner handler " + code);
                a.breakLoop(); // replaces the error with the break
            });
        });
        root.add(asi -> snapshot(asi, "after the loop"));
        root.run();
        assertEquals(List.of(
                "inner handler InternalError: error_info=java.io.IOException: io/java.io.IOException: io"
                        + " last_exception=java.io.IOException: io",
                "after the loop: error_info=null/null last_exception=null"), log);
    }

    @Test
    public void lastExceptionIsTheCurrentErrorsNotAnOlderOne() {
        IOException io = new IOException("first");
        Object[] seen = new Object[3];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            throw io;
        }, (asi, code) -> {
            seen[0] = asi.lastException();
            asi.success();
        });
        root.add(asi -> asi.setTimeout(1), (asi, code) -> {
            seen[1] = asi.lastException();
            seen[2] = asi.state().get("last_exception");
        });
        try {
            root.run();
            fail();
        } catch (Errors.Timeout e) {
            assertNull("an older exception is not the cause of a Timeout", e.getCause());
        }
        assertSame(io, seen[0]);
        assertEquals("Timeout", seen[1]);
        assertEquals("Timeout", seen[2]);
    }

    @Test
    public void asyncStackThroughStateAndAccessorAgree() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.add(a -> a.error("Deep")), (asi, code) -> {
            StackTraceElement[] frames = asi.asyncStack();
            assertTrue(frames.length >= 2);
            assertArrayEquals(frames, (StackTraceElement[]) asi.state().get("async_stack"));
            assertTrue(asi.state().containsKey("async_stack"));
            log.add("handled " + code);
            asi.success();
        });
        root.add(asi -> {
            /* the core keeps the stack of the last error until the next
             * one; the view and the accessor say the same */
            StackTraceElement[] frames = asi.asyncStack();
            Object view = asi.state().get("async_stack");
            if (frames.length == 0) {
                assertNull(view);
            } else {
                assertArrayEquals(frames, (StackTraceElement[]) view);
            }
        });
        root.run();
        assertEquals(List.of("handled Deep"), log);
    }

    @Test
    public void reservedNamesAreReadOnlyViewsNotEntries() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            asi.state().put("mine", 1);
            asi.error("Oops", "why");
        }, (asi, code) -> {
            Map<String, Object> s = asi.state();
            assertEquals("why", s.get("error_info"));
            assertTrue(s.containsKey("error_info"));
            assertEquals("only the user's keys are entries", List.of("mine"), new ArrayList<>(s.keySet()));
            assertEquals(1, s.size());
            for (String k : List.of("error_info", "last_exception", "async_stack")) {
                List<Runnable> writes = List.<Runnable>of(
                        () -> s.put(k, "x"),
                        () -> s.remove(k),
                        () -> s.putIfAbsent(k, "x"),
                        () -> s.putAll(Map.of(k, "x")),
                        () -> s.compute(k, (kk, v) -> "x"),
                        () -> s.computeIfAbsent(k, kk -> "x"),
                        () -> s.merge(k, "x", (a, b) -> b),
                        () -> s.replace(k, "x"));
                for (Runnable write : writes) {
                    try {
                        write.run();
                        fail("wrote " + k + " with write #" + writes.indexOf(write));
                    } catch (IllegalArgumentException expected) {
                        assertTrue(expected.getMessage(), expected.getMessage().contains(k));
                    }
                }
            }
            assertEquals("why", s.get("error_info"));
            s.clear(); // the user's keys only
            assertFalse(s.containsKey("mine"));
            assertEquals("why", s.get("error_info"));
            asi.success();
        });
        root.run();
        /* the root keeps its last error's info (as the C core does) */
        assertEquals("why", root.errorInfo());
        assertEquals(root.errorInfo(), root.state().get("error_info"));
        assertEquals(List.of(), new ArrayList<>(root.state().keySet()));
    }
}
