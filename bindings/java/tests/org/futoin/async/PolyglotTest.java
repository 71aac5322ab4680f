package org.futoin.async;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.After;
import org.junit.Test;

/**
 * Polyglot flows with only Java and C in the process: named Java steps
 * (the "java" host the binding registers), C functions by declaration,
 * clear errors for what cannot be resolved, origins and async stacks of
 * Java steps, and state() over the store every language shares. The
 * matrix with Python and Lua is bindings/java/tests/polyglot (polyglot.sh).
 */
public class PolyglotTest extends ToolFixture {
    /** Named steps: public static void name(AsyncSteps, Object...). */
    public static final class Steps {
        private Steps() {
        }

        /** @param asi the step @param args two values, passed on swapped */
        public static void swap(AsyncSteps asi, Object... args) {
            asi.success(args[1], args[0]);
        }

        /** @param asi the step @param args ignored */
        public static void fail(AsyncSteps asi, Object... args) {
            throw asi.error("StepError", "from a named step");
        }

        /** A keyword as a function name: "catch" resolves to catch_.
         *  @param asi the step @param args ignored */
        public static void catch_(AsyncSteps asi, Object... args) {
            asi.success("caught");
        }

        /** Not a step: wrong parameters. @param asi the step */
        public static void noValues(AsyncSteps asi) {
        }
    }

    private static final String STEPS = "org.futoin.async.PolyglotTest$Steps";

    @After
    public void noMisuse() {
        assertEquals("misuse reports", 0, tool.misuseCount());
    }

    private static FutoInError runFailing(AsyncSteps root) {
        try {
            root.run();
        } catch (FutoInError e) {
            return e;
        }
        throw new AssertionError("the flow did not fail");
    }

    @Test
    public void javaStepsByName() {
        AsyncSteps root = new AsyncSteps(tool);
        root.successStep(1, "x").addForeign("java", STEPS, "swap").addForeign("java", STEPS, "catch");
        assertEquals("caught", root.run());
        root = new AsyncSteps(tool);
        root.successStep(1, "x").addForeign("java", STEPS, "swap");
        assertEquals(List.of("x", 1), root.run());
        assertEquals(0, Polyglot.liveNamedSteps());
    }

    @Test
    public void cFunctionsByDeclaration() {
        AsyncSteps root = new AsyncSteps(tool);
        root.successStep(3.0, 4.0).addForeign("c", "libm.so.6", "double hypot(double x, double y)");
        assertEquals(5.0, root.run());
    }

    private static void unresolved(Tool tool, String language, String module, String function, String... why) {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> fail("a step after an unresolved one ran"));
        AsyncSteps r2 = new AsyncSteps(tool);
        r2.addForeign(language, module, function).add(asi -> fail("ran after an unresolved step"));
        FutoInError e = runFailing(r2);
        assertEquals("InvalidRequest", e.code());
        List<String> parts = new ArrayList<>(List.of(language, module));
        parts.addAll(List.of(why));
        for (String part : parts) {
            assertTrue("'" + part + "' not in: " + e.info(), e.info().contains(part));
        }
        root.close();
        r2.close();
    }

    @Test
    public void whatCannotBeResolvedFailsWithInvalidRequestNamingIt() {
        unresolved(tool, "java", "org.example.NoSuchClass", "run", "run", "no class");
        unresolved(tool, "java", STEPS, "no_such_step", "no_such_step", "no method");
        unresolved(tool, "java", STEPS, "noValues", "noValues", "no method");
        unresolved(tool, "c", "libm.so.6", "double no_such_function(double)", "no_such_function", "no function");
        unresolved(tool, "nosuchlanguage", "no.such.module", "f",
                "adding no.such.module.f: no host for language 'nosuchlanguage'",
                "no plug-in libfutoin_host_nosuchlanguage.so found", "Searched: ");
        assertEquals(0, Polyglot.liveNamedSteps());
    }

    @Test
    public void addForeignChecksItsArguments() {
        AsyncSteps root = new AsyncSteps(tool);
        try {
            root.addForeign("java", null, "f");
            fail("null module accepted");
        } catch (NullPointerException e) {
            assertTrue(e.getMessage().contains("addForeign(): module is null"));
        }
        root.close();
    }

    @Test
    public void asyncStackOfJavaStepsHasFunctionsFilesAndLines() {
        int[] lines = new int[2];
        StackTraceElement[][] inHandler = new StackTraceElement[1][];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            lines[0] = new Throwable().getStackTrace()[0].getLineNumber();
            asi.add(a -> {
                lines[1] = new Throwable().getStackTrace()[0].getLineNumber();
                a.addForeign("java", STEPS, "fail");
            }, (a, code) -> {
                inHandler[0] = a.asyncStack();
            });
        });
        FutoInError e = runFailing(root);
        assertEquals("StepError", e.code());
        StackTraceElement[] st = e.asyncStack();
        assertEquals(3, st.length);
        assertEquals("java:org.futoin.async.PolyglotTest$Steps", st[0].getClassName());
        assertEquals("fail", st[0].getMethodName());
        assertEquals("PolyglotTest.java", st[0].getFileName());
        assertTrue(st[0].getLineNumber() > 0);
        assertEquals("java:org.futoin.async.PolyglotTest", st[1].getClassName());
        assertTrue(st[1].getMethodName(), st[1].getMethodName().startsWith("lambda$"));
        assertEquals("PolyglotTest.java", st[1].getFileName());
        assertEquals(lines[1], st[1].getLineNumber());
        assertEquals(lines[0], st[2].getLineNumber());
        assertArrayEquals(st, inHandler[0]);

        StringWriter w = new StringWriter();
        e.printStackTrace(new PrintWriter(w));
        assertTrue(w.toString(), w.toString().contains("async stack of StepError (innermost first)\n"
                + "\t\tat java:org.futoin.async.PolyglotTest$Steps.fail(PolyglotTest.java:"));
    }

    @Test
    public void asyncStackOfAnotherErrorIsNotAttached() {
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.error("First"), (asi, code) -> asi.success());
        root.add(asi -> asi.error("Second"));
        FutoInError e = runFailing(root);
        assertEquals("Second", e.code());
        assertEquals(1, e.asyncStack().length);
    }

    private static Object shared(AsyncSteps asi, String name) {
        return FutoInNative.state_get(asi.binary(), Values.cstr(name));
    }

    @Test
    public void stateWritesFtn12ValuesToTheSharedStore() {
        List<Object> seen = new ArrayList<>();
        Object mine = new Object();
        byte[] bytes = {1, 2, 3};
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            Map<String, Object> s = asi.state();
            s.put("n", 42);
            s.put("text", "héllo");
            s.put("bytes", bytes);
            s.put("obj", mine);
            seen.add(shared(asi, "n"));
            seen.add(shared(asi, "text"));
            seen.add(shared(asi, "obj")); // Java's own: not shared
            assertSame(bytes, s.get("bytes")); // Java's copy is current: the same array
            assertSame(mine, s.get("obj"));
            // another language sets "n"
            FutoInNative.state_set(asi.binary(), Values.cstr("n"), Values.INT64, 7, null);
            seen.add(s.get("n"));
            s.remove("text");
            seen.add(shared(asi, "text"));
            // a map kept from this step, used after it ended: shared on next use
            asi.add(a -> s.put("later", true));
        });
        root.add(asi -> {
            seen.add(asi.state().get("later"));
            seen.add(shared(asi, "later"));
        });
        root.run();
        assertEquals(List.of(42, "héllo"), seen.subList(0, 2));
        assertNull(seen.get(2));
        assertEquals(7L, seen.get(3));
        assertNull(seen.get(4));
        assertEquals(List.of(true, true), seen.subList(5, 7));
        assertEquals(7L, root.state().get("n"));
        assertNull(root.state().get("error_info"));
    }
}
