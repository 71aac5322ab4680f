package org.futoin.async;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;

/**
 * Java value <-> FTN12 binary value, the Java half (the C half is
 * glue/jni_values.c). A value crosses as a tag (an FTN12 type-flag byte),
 * the raw bits of a scalar and, for strings, arrays and objects, one
 * object. Classifying here is cheap ({@code instanceof}); doing it from C
 * would cost a JNI call per test.
 *
 * <pre>
 * Java                 FTN12                  back in Java
 * Integer              INT32                  Integer
 * Long                 INT64                  Long
 * Short / Byte         INT16 / INT8           Short / Byte
 * Double / Float       DOUBLE / FLOAT         Double / Float
 * Boolean              BOOL                   Boolean
 * String, Character    STRING (UTF-8)         String
 * BigInteger           INT64, else UINT64     Long / BigInteger (UINT64 > Long.MAX_VALUE)
 * byte[]               ARRAY|UINT8            byte[]
 * short[] int[] long[] ARRAY|INT16/32/64      the same array type
 * float[] double[]     ARRAY|FLOAT/DOUBLE     the same array type
 * boolean[] char[]     ARRAY|BOOL / UINT16    boolean[] / char[]
 * ForeignValue         moved back as it came  (another language's value)
 * anything else, null  CUSTOM (global ref)    the same object
 * </pre>
 * From other languages: UINT8/UINT16 arrive as Integer, UINT32 as Long,
 * STRING16/STRING32 as String, ARRAY|INT8 as byte[], ARRAY|UINT32 and
 * ARRAY|UINT64 as long[]; anything else as a {@link ForeignValue}.
 */
final class Values {
    static final int CUSTOM = 0x01, STRING = 0x02, STRING16 = 0x03, STRING32 = 0x04,
            BOOL = 0x05, INT8 = 0x06, INT16 = 0x07, INT32 = 0x08, INT64 = 0x09,
            UINT8 = 0x0A, UINT16 = 0x0B, UINT32 = 0x0C, UINT64 = 0x0D,
            FLOAT = 0x0E, DOUBLE = 0x0F, ARRAY = 0x10, FOREIGN = 0xFF;

    private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

    private Values() {
    }

    /** The tag of a Java value. */
    static int tag(Object v) {
        if (v instanceof Integer) {
            return INT32;
        } else if (v instanceof Long) {
            return INT64;
        } else if (v instanceof String) {
            return STRING;
        } else if (v instanceof Double) {
            return DOUBLE;
        } else if (v instanceof Boolean) {
            return BOOL;
        } else if (v instanceof byte[]) {
            return ARRAY | UINT8;
        } else if (v instanceof int[]) {
            return ARRAY | INT32;
        } else if (v instanceof long[]) {
            return ARRAY | INT64;
        } else if (v instanceof double[]) {
            return ARRAY | DOUBLE;
        } else if (v instanceof Float) {
            return FLOAT;
        } else if (v instanceof Short) {
            return INT16;
        } else if (v instanceof Byte) {
            return INT8;
        } else if (v instanceof Character) {
            return STRING;
        } else if (v instanceof short[]) {
            return ARRAY | INT16;
        } else if (v instanceof float[]) {
            return ARRAY | FLOAT;
        } else if (v instanceof boolean[]) {
            return ARRAY | BOOL;
        } else if (v instanceof char[]) {
            return ARRAY | UINT16;
        } else if (v instanceof BigInteger) {
            BigInteger b = (BigInteger) v;
            if (b.bitLength() < 64) {
                return INT64;
            }
            return b.signum() > 0 && b.compareTo(U64_MAX) <= 0 ? UINT64 : CUSTOM;
        } else if (v instanceof ForeignValue) {
            return FOREIGN;
        }
        return CUSTOM;
    }

    /** The raw bits of a scalar of `tag`. */
    static long bits(Object v, int tag) {
        switch (tag) {
            case INT32: return (Integer) v;
            case INT64: return v instanceof Long ? (Long) v : ((BigInteger) v).longValue();
            case UINT64: return ((BigInteger) v).longValue();
            case DOUBLE: return Double.doubleToRawLongBits((Double) v);
            case FLOAT: return Float.floatToRawIntBits((Float) v);
            case BOOL: return ((Boolean) v) ? 1 : 0;
            case INT16: return (Short) v;
            case INT8: return (Byte) v;
            case FOREIGN: {
                long p = ((ForeignValue) v).holderAddress();
                if (p == 0) {
                    throw new IllegalStateException("ForeignValue was already passed on or closed");
                }
                return p;
            }
            default: return 0;
        }
    }

    /** The object C needs for `tag`: UTF-8 bytes, the array, the object. */
    static Object obj(Object v, int tag) {
        switch (tag) {
            case STRING: return v.toString().getBytes(StandardCharsets.UTF_8);
            case CUSTOM: return v;
            default: return (tag & ARRAY) != 0 && tag != FOREIGN ? v : null;
        }
    }

    /** A value that arrived from C. */
    static Object decode(int tag, long bits, Object o) {
        switch (tag) {
            case INT32: return (int) bits;
            case INT64: return bits;
            case STRING: return o instanceof String ? o : new String((byte[]) o, StandardCharsets.UTF_8);
            case DOUBLE: return Double.longBitsToDouble(bits);
            case BOOL: return bits != 0;
            case CUSTOM: return o;
            case FLOAT: return Float.intBitsToFloat((int) bits);
            case INT16: return (short) bits;
            case INT8: return (byte) bits;
            case UINT8:
            case UINT16: return (int) bits;
            case UINT32: return bits;
            case UINT64: return bits >= 0 ? (Object) bits : new BigInteger(Long.toUnsignedString(bits));
            case STRING16: return new String((char[]) o);
            case STRING32: return codePoints((int[]) o);
            case FOREIGN: return new ForeignValue(bits);
            default: return o; /* arrays */
        }
    }

    private static String codePoints(int[] cps) {
        StringBuilder sb = new StringBuilder(cps.length);
        for (int cp : cps) {
            if (Character.isValidCodePoint(cp)) {
                sb.appendCodePoint(cp);
            } else {
                sb.append('\uFFFD');
            }
        }
        return sb.toString();
    }

    /** UTF-8 bytes of a C string argument (code, info, label), or null. */
    static byte[] cstr(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * A string that becomes a C string (error code, loop label, state key,
     * language / module / function name): one with a NUL character would
     * be cut there, so it is refused (README rule 5).
     *
     * @param s the string, or null (passed through)
     * @param what names the argument in the message
     * @return s
     * @throws IllegalArgumentException if s contains a NUL character
     */
    static String name(String s, String what) {
        if (s != null && s.indexOf('\0') >= 0) {
            throw new IllegalArgumentException(what + " contains a NUL character: \""
                    + s.replace("\0", "\\0") + "\"");
        }
        return s;
    }

    /** A String, or the UTF-8 bytes of one (an error code from C). */
    static String str(Object o) {
        return o instanceof String ? (String) o : fromUtf8((byte[]) o);
    }

    static String fromUtf8(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }
}
