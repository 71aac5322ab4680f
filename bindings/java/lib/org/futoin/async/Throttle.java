package org.futoin.async;

/**
 * FTN12 {@code Throttle} (§2.4): at most {@code max} entries into its
 * sections per period; the others wait for the next period. Its period
 * timer runs on {@code tool}, which frees it on close. Loop thread.
 */
public final class Throttle extends SyncObject {
    /**
     * A Throttle with a 1 s period and an unlimited queue.
     *
     * @param tool the tool whose loop runs the timer
     * @param max entries per period, at least 1
     */
    public Throttle(Tool tool, int max) {
        this(tool, max, 1000, Mutex.UNLIMITED);
    }

    /**
     * @param tool the tool whose loop runs the timer
     * @param max entries per period, at least 1
     * @param periodMs the period, at least 1 ms
     * @param maxQueue flows allowed to wait, or {@link Mutex#UNLIMITED}
     */
    public Throttle(Tool tool, int max, long periodMs, long maxQueue) {
        super(create(tool, max, periodMs, maxQueue), tool, "Throttle");
    }

    private static long create(Tool tool, int max, long periodMs, long maxQueue) {
        tool.checkLoopThread("new Throttle()");
        tool.refuseBorrowed("new Throttle()", "it would outlive Java's use of it; make it on a Tool of Java's own");
        if (max < 1 || periodMs < 1 || periodMs > 0xFFFFFFFFL || maxQueue < -1) {
            throw new IllegalArgumentException("Throttle: max >= 1, periodMs >= 1, maxQueue >= 0 or UNLIMITED");
        }
        return FutoInNative.futoin_bind_throttle_new(tool.address(), max, periodMs, maxQueue);
    }

    @Override
    int free(long p) {
        return FutoInNative.futoin_bind_throttle_free(p);
    }
}
