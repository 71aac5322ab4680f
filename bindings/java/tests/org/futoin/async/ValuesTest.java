package org.futoin.async;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.Test;

/** Java values <-> FTN12 binary values, through real steps (and C steps). */
public class ValuesTest extends ToolFixture {
    /** `v` passed from one Java step to the next (and through a C step). */
    private Object roundTrip(Object v, boolean viaC) {
        Object[] got = new Object[1];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.success(v));
        if (viaC) {
            FutoInNative.test_add_c_pass(root.binary()); // a C step at the same level
        }
        root.add((asi, x) -> got[0] = x);
        root.run();
        root.close();
        return got[0];
    }

    private void same(Object v) {
        for (boolean viaC : new boolean[] {false, true}) {
            Object r = roundTrip(v, viaC);
            if (v != null && v.getClass().isArray()) {
                assertSame(v.getClass(), r.getClass());
                assertTrue(Arrays.deepEquals(new Object[] {v}, new Object[] {r}));
            } else {
                assertEquals(v, r);
                if (v != null) {
                    assertSame(v.getClass(), r.getClass());
                }
            }
        }
    }

    @Test
    public void scalarsKeepTheirJavaType() {
        same(42);
        same(-7L);
        same(Long.MIN_VALUE);
        same((short) -3);
        same((byte) -128);
        same(3.25);
        same(1.5f);
        same(true);
        same(false);
        same(Double.NaN);
    }

    @Test
    public void strings() {
        same("");
        same("plain");
        same("a\u0000b");          // embedded zero: length is authoritative
        same("h\u00e9 \uD83D\uDE00"); // BMP and a supplementary character
        assertEquals("x", roundTrip('x', false));
    }

    @Test
    public void primitiveArrays() {
        same(new byte[] {1, -2, 3});
        same(new byte[0]);
        same(new short[] {1, -2});
        same(new int[] {1, Integer.MIN_VALUE});
        same(new long[] {Long.MAX_VALUE, -1});
        same(new float[] {1.5f});
        same(new double[] {0.25, -1e300});
        same(new boolean[] {true, false, true});
        same(new char[] {'a', '\u00e9'});
    }

    @Test
    public void bigIntegers() {
        assertEquals(5L, roundTrip(BigInteger.valueOf(5), false));
        BigInteger big = new BigInteger("18446744073709551615"); // UINT64 max
        assertEquals(big, roundTrip(big, true));
        BigInteger huge = BigInteger.ONE.shiftLeft(70); // no FTN12 form: custom
        assertSame(huge, roundTrip(huge, true));
    }

    @Test
    public void otherObjectsTravelAsThemselves() {
        Object o = new Object();
        assertSame(o, roundTrip(o, false));
        assertSame(o, roundTrip(o, true));
        List<String> l = new ArrayList<>(List.of("a"));
        assertSame(l, roundTrip(l, true));
        Object[] arr = {1, "x"};
        assertSame(arr, roundTrip(arr, false)); // one value, not spread
        assertNull(roundTrip(null, false));
        assertNull(roundTrip(null, true));
    }

    @Test
    public void fourValues() {
        Object[] got = new Object[4];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.success(1, "two", 3.0, new int[] {4}));
        root.add((asi, a, b, c, d) -> {
            got[0] = a;
            got[1] = b;
            got[2] = c;
            got[3] = d;
        });
        root.run();
        assertEquals(1, got[0]);
        assertEquals("two", got[1]);
        assertEquals(3.0, got[2]);
        assertArrayEquals(new int[] {4}, (int[]) got[3]);
    }

    @Test
    public void missingValuesAreNullExtraIgnored() {
        Object[] got = new Object[3];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.success(1));
        root.add((asi, a, b) -> {
            got[0] = a;
            got[1] = b;
            asi.success(1, 2, 3);
        });
        root.add((asi, a) -> got[2] = a);
        root.run();
        assertEquals(1, got[0]);
        assertNull(got[1]);
        assertEquals(1, got[2]);
    }

    @Test
    public void valuesOfOtherLanguages() {
        List<Object> got = new ArrayList<>();
        AsyncSteps root = new AsyncSteps(tool);
        for (int kind = 0; kind < 3; ++kind) {
            int k = kind;
            root.add(asi -> FutoInNative.test_add_c_values(asi.binary(), k));
            root.add((asi, a, b, c, d) -> got.addAll(Arrays.asList(a, b, c, d)));
        }
        root.run();
        assertEquals("h\u00e9\uD83D\uDE00", got.get(0));   // STRING16
        assertEquals("x\uD83D\uDE00", got.get(1));         // STRING32
        assertEquals(250, got.get(2));                     // UINT8
        assertEquals(65000, got.get(3));                   // UINT16
        assertEquals(4000000000L, got.get(4));             // UINT32
        assertEquals(new BigInteger("18446744073709551615"), got.get(5)); // UINT64
        assertArrayEquals(new long[] {1, 4000000000L}, (long[]) got.get(6)); // ARRAY|UINT32
        assertArrayEquals(new byte[] {-1, 2}, (byte[]) got.get(7));         // ARRAY|INT8
        assertArrayEquals(new boolean[] {true, false, true}, (boolean[]) got.get(8));
        assertEquals("a\u0000b", got.get(9));
        assertEquals(Long.MIN_VALUE, got.get(10));
        assertTrue(got.get(11) instanceof ForeignValue);   // ARRAY|STRING: no Java form
        ForeignValue fv = (ForeignValue) got.get(11);
        assertEquals(0x12, fv.typeFlags());
        fv.close();
        assertEquals(-1, fv.typeFlags());
    }
}
