package org.futoin.async;

/**
 * FTN12 {@code Mutex} (§2.3): at most {@code max} flows inside its sections
 * at once; the others wait in a FIFO queue. A flow that holds it may enter
 * again (counted). Close it once no flow uses it.
 */
public final class Mutex extends SyncObject {
    /**
     * No queue limit (the spec's {@code null}).
     */
    public static final long UNLIMITED = -1L;

    /** A Mutex(1) with an unlimited queue. */
    public Mutex() {
        this(1, UNLIMITED);
    }

    /**
     * @param max flows inside at once, at least 1
     * @param maxQueue flows allowed to wait, or {@link #UNLIMITED}; over it a
     *        flow gets {@code DefenseRejected}
     */
    public Mutex(int max, long maxQueue) {
        super(create(max, maxQueue), null, "Mutex");
    }

    private static long create(int max, long maxQueue) {
        if (max < 1 || maxQueue < -1) {
            throw new IllegalArgumentException("Mutex: max >= 1 and maxQueue >= 0 or UNLIMITED");
        }
        return FutoInNative.futoin_bind_mutex_new(max, maxQueue);
    }

    @Override
    int free(long p) {
        return FutoInNative.futoin_bind_mutex_free(p);
    }
}
