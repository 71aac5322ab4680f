package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.List;

import org.junit.Test;

/** The exception classes are generated from the library's one list. */
public class ErrorsTest {
    @Test
    public void oneClassPerStandardCode() throws ClassNotFoundException {
        int n = FutoInNative.futoin_error_count();
        assertEquals(n, Errors.CODES.size());
        for (int i = 0; i < n; ++i) {
            String code = FutoInNative.futoin_error_code_at(i);
            assertEquals(code, Errors.CODES.get(i));
            Class<?> c = Class.forName("org.futoin.async.Errors$" + code);
            assertTrue(FutoInError.class.isAssignableFrom(c));
            FutoInError e = FutoInError.of(code, "info " + i);
            assertSame(c, e.getClass());
            assertEquals(code, e.code());
            assertEquals("info " + i, e.info());
            assertEquals(code + ": info " + i, e.getMessage());
        }
    }

    @Test
    public void otherCodesArePlainFutoInError() {
        FutoInError e = FutoInError.of("MyError", null);
        assertSame(FutoInError.class, e.getClass());
        assertEquals("MyError", e.getMessage());
        assertNull(e.info());
    }

    @Test
    public void constantsAndClasses() {
        assertEquals("Timeout", Errors.TIMEOUT);
        assertEquals(Errors.INVALID_REQUEST, new Errors.InvalidRequest("x").code());
        assertTrue(new Errors.Timeout() instanceof RuntimeException);
        Throwable cause = new Exception("c");
        assertSame(cause, new Errors.InternalError("x", cause).getCause());
    }

    /* README rule 4: any non-empty code without a NUL can be raised from a
     * step, reaches handlers unchanged, and is recognised by name
     * (e.is(code), code()); a standard code also by its class. */
    @Test
    public void anyCodeIsRaisedAndRecognisedByName() {
        String longCode = "L".repeat(500);
        List<String> codes = List.of("NotFound", "My.Custom-Code_1", "\u041e\u0448\u0438\u0431\u043a\u0430 \ud83d\ude00",
                "x", longCode, "Timeout", "InternalError", "LoopBreakish", " spaced code ");
        try (Tool tool = new Tool()) {
            for (String code : codes) {
                List<String> seen = new ArrayList<>();
                AsyncSteps root = new AsyncSteps(tool);
                root.add(asi -> asi.add(a -> a.error(code, "info of " + code), (a, c) -> {
                    seen.add(c); // the handler gets it unchanged
                    throw new FutoInError(c, "again"); // thrown, not error(): the same
                }));
                try {
                    root.run();
                    fail(code);
                } catch (FutoInError e) {
                    assertTrue(code, e.is(code));
                    assertEquals(code, e.code());
                    assertEquals("again", e.info());
                    assertFalse(e.is(code + "!"));
                    assertEquals(Errors.CODES.contains(code), e.getClass() != FutoInError.class);
                    if (code.equals("Timeout")) {
                        assertTrue(e instanceof Errors.Timeout);
                    }
                }
                assertEquals(List.of(code), seen);
                root.close();
            }
        }
    }

    @Test
    public void emptyCodeIsRefused() {
        try {
            new FutoInError("");
            fail();
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage().contains("empty"));
        }
        try (Tool tool = new Tool()) {
            AsyncSteps root = new AsyncSteps(tool);
            root.add(asi -> asi.error(""));
            try {
                root.run();
                fail();
            } catch (Errors.InternalError e) {
                assertTrue(e.getCause() instanceof IllegalArgumentException);
            }
        }
    }

    @Test
    public void versionFromTheRuntime() {
        assertEquals("0.3.0", FutoInNative.futoin_async_version());
    }
}
