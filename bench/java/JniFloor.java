import java.util.Arrays;

/** See jni_floor.c: ns per JNI up-call and per global-ref pair. */
public final class JniFloor {
    private static long sink;

    private JniFloor() {
    }

    static native double measure(int n, int mode, Object o);

    static void cb2(Object o, long i) {
        sink += i;
    }

    static void cb5(Object o, long i, int t, long b, Object x) {
        sink += i + b;
    }

    /** @return {up-call 2 args, up-call 5 args, global ref pair}, medians */
    static double[] run(String lib) {
        System.load(lib);
        double[][] r = new double[3][9];
        for (int k = 0; k < 9; ++k) {
            for (int m = 0; m < 3; ++m) {
                r[m][k] = measure(1_000_000, m, "x");
            }
        }
        double[] med = new double[3];
        for (int m = 0; m < 3; ++m) {
            Arrays.sort(r[m]);
            med[m] = r[m][4];
        }
        return med;
    }
}
