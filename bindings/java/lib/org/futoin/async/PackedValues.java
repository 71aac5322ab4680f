package org.futoin.async;

/**
 * The values of a {@code success()} or {@code successStep()} (FTN12
 * {@code FutoInArgs}: at most 4) in the form the native calls take: a tag
 * per value (one byte each in {@link #tags}), its raw bits and the object
 * C needs (see {@link Values}).
 */
final class PackedValues {
    int tags;
    final long[] bits = new long[4];
    final Object[] objs = new Object[4];

    /** Refuses more than 4 values. */
    static void tooMany() {
        throw new IllegalArgumentException("at most 4 values (FTN12 FutoInArgs)");
    }

    PackedValues(Object[] v) {
        if (v.length > 4) {
            tooMany();
        }
        for (int i = 0; i < v.length; ++i) {
            int t = Values.tag(v[i]);
            tags |= t << (8 * i);
            bits[i] = Values.bits(v[i], t);
            objs[i] = Values.obj(v[i], t);
        }
    }

    /** A completion from outside the step's callback (Completions.external). */
    int tryOn(long h) {
        return FutoInNative.try_success(h, tags, bits[0], bits[1], bits[2], bits[3],
                objs[0], objs[1], objs[2], objs[3]);
    }

    /** success() of the step `b`, in its callback. */
    void successOn(long b) {
        FutoInNative.success(b, tags, bits[0], bits[1], bits[2], bits[3], objs[0], objs[1], objs[2], objs[3]);
    }

    /** successStep(): adds a step that succeeds with these values. */
    void successStepOn(long b) {
        FutoInNative.success_step(b, tags, bits[0], bits[1], bits[2], bits[3], objs[0], objs[1], objs[2], objs[3]);
    }
}
