package org.futoin.async;

/**
 * FTN12 {@code Limiter} (§2.5): a Mutex(concurrent, maxQueue) around a
 * Throttle(rate, periodMs, burst). Its timer runs on {@code tool}, which
 * frees it on close. Loop thread.
 *
 * <pre>{@code
 * Limiter lim = new Limiter(tool, new Limiter.Options().concurrent(2).rate(10).periodMs(1000));
 * }</pre>
 */
public final class Limiter extends SyncObject {
    /** Limiter options; the defaults are the spec's. */
    public static final class Options {
        int concurrent = 1;
        long maxQueue = 0;
        int rate = 1;
        long periodMs = 1000;
        long burst = 0;

        /** The spec's defaults: 1 at once, no queue, 1 entry per 1000 ms. */
        public Options() {
        }

        /**
         * @param v flows inside at once (default 1)
         * @return this
         */
        public Options concurrent(int v) {
            concurrent = v;
            return this;
        }

        /**
         * @param v flows waiting for a slot (default 0)
         * @return this
         */
        public Options maxQueue(long v) {
            maxQueue = v;
            return this;
        }

        /**
         * @param v entries per period (default 1)
         * @return this
         */
        public Options rate(int v) {
            rate = v;
            return this;
        }

        /**
         * @param v the period in ms (default 1000)
         * @return this
         */
        public Options periodMs(long v) {
            periodMs = v;
            return this;
        }

        /**
         * @param v flows waiting for the rate (default 0)
         * @return this
         */
        public Options burst(long v) {
            burst = v;
            return this;
        }
    }

    /**
     * @param tool the tool whose loop runs the timer
     * @param o the options
     */
    public Limiter(Tool tool, Options o) {
        super(create(tool, o), tool, "Limiter");
    }

    private static long create(Tool tool, Options o) {
        tool.checkLoopThread("new Limiter()");
        tool.refuseBorrowed("new Limiter()", "it would outlive Java's use of it; make it on a Tool of Java's own");
        if (o.concurrent < 1 || o.rate < 1 || o.periodMs < 1 || o.periodMs > 0xFFFFFFFFL
                || o.maxQueue < -1 || o.burst < -1) {
            throw new IllegalArgumentException("Limiter: concurrent, rate, periodMs >= 1; queues >= 0");
        }
        return FutoInNative.futoin_bind_limiter_new(tool.address(), o.concurrent, o.maxQueue, o.rate,
                o.periodMs, o.burst);
    }

    @Override
    int free(long p) {
        return FutoInNative.futoin_bind_limiter_free(p);
    }
}
