package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

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

    @Test
    public void versionFromTheRuntime() {
        assertEquals("0.2.0", FutoInNative.futoin_async_version());
    }
}
