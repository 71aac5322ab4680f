package org.futoin.async;

/**
 * The kept success(): a {@code success()} with no value, or with one small
 * scalar, made inside a step's own callback is not sent to the runtime at
 * once. It is kept in {@code AsyncSteps.pending} and the trampoline applies
 * it when the callback returns (glue/jni_steps.c, after_step), or it goes
 * to the next Java step as it is when the runtime lets that one run in the
 * same up-call ({@link #chainNext}, Dispatch.chain): a JNI down-call saved
 * per step. Any other call that reaches the runtime through the handle
 * applies it first ({@link #apply}), so the runtime sees every call in
 * order. Loop thread only.
 *
 * <p>{@code pending}: 0 nothing kept; {@link #NO_VALUES}; else the value's
 * tag in the top 8 bits and its bits (sign-extended from 56) below.
 */
final class KeptSuccess {
    /** {@code pending} of a kept success() with no values. */
    static final long NO_VALUES = 0xFEL << 56;
    private static final long LOW56 = (1L << 56) - 1;

    private KeptSuccess() {
    }

    /** Apply a kept success() now, if there is one. */
    static void apply(AsyncSteps a) {
        long p = a.pending;
        if (p == 0) {
            return;
        }
        a.pending = 0;
        if (p == NO_VALUES) {
            FutoInNative.success0(a.bsi);
        } else {
            FutoInNative.success1(a.bsi, (int) (p >>> 56), (p << 8) >> 8, null);
        }
    }

    /** The kept success() for the trampoline; the callback has returned. */
    static long take(AsyncSteps a) {
        long p = a.pending;
        a.pending = 0;
        return p;
    }

    /** The tag of a kept success()'s value (0: none). */
    static int tag(long p) {
        return p == NO_VALUES || p == 0 ? 0 : (int) (p >>> 56);
    }

    /** The payload of a kept success()'s value. */
    static long bits(long p) {
        return (p << 8) >> 8;
    }

    /** May success() be kept for the trampoline? Loop thread, in the callback. */
    private static boolean canKeep(AsyncSteps a) {
        return a.kind == AsyncSteps.STEP && a.pending == 0 && StepStates.of(a) == StepStates.LIVE;
    }

    /** success() in the step's callback: kept if it may be (true), else the
     *  caller sends it. */
    static boolean keepNoValues(AsyncSteps a) {
        if (!canKeep(a)) {
            return false;
        }
        a.pending = NO_VALUES;
        return true;
    }

    /** success(value) in the step's callback, the value of tag `tag`: kept
     *  if it may be and the value fits (true), else the caller sends it. */
    static boolean keepValue(AsyncSteps a, Object value, int tag) {
        if (!canKeep(a)) {
            return false;
        }
        long k = keepable(tag, Values.bits(value, tag));
        if (k == 0) {
            return false;
        }
        a.pending = k;
        return true;
    }

    /** A scalar that fits the kept form, or 0. */
    private static long keepable(int tag, long bits) {
        switch (tag) {
            case Values.INT32:
            case Values.INT16:
            case Values.INT8:
            case Values.BOOL:
            case Values.FLOAT:
                return ((long) tag << 56) | (bits & LOW56);
            case Values.INT64:
                return bits >= -(1L << 55) && bits < (1L << 55) ? ((long) tag << 56) | (bits & LOW56) : 0;
            default:
                return 0;
        }
    }

    /**
     * After a step's callback returned: complete the step as its kept
     * success() (or implicit success) asks and start the next step, if that
     * is a Java step the runtime lets run now (ext chain(), see
     * Dispatch.chain). Returns the next step's Rec, its handle in
     * {@code a.chained}, or null having done nothing. Loop thread.
     */
    static Rec chainNext(AsyncSteps a) {
        if (a.kind != AsyncSteps.STEP || StepStates.of(a) != StepStates.LIVE) {
            return null;
        }
        if (a.rec.table == null) {
            return (Rec) FutoInNative.chain(a.bsi, a);
        }
        long d = FutoInNative.chain_t(a.bsi);
        if (d < 0) {
            return null;
        }
        RecTable t = a.rec.table;
        int index = (int) (d >>> 32);
        if (t.index != index) {
            t = RecTable.of(index); /* a step added through another tool's handle */
        }
        a.chained = t.next();
        return (Rec) t.recs[(int) d];
    }
}
