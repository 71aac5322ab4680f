package org.futoin.async;

import java.lang.ref.Cleaner;

/**
 * A value another language (or C) passed on that Java has no own form for:
 * most often a custom object of that language. Java cannot look inside;
 * it can pass the value on ({@code asi.success(fv)}) so that a later step
 * of that language gets it back unchanged — the value is then moved, and
 * this object is empty.
 *
 * <p>The value is released exactly once: by whoever ends up with it after
 * it was passed on, or by {@link #close()} (or, as a fallback, when this
 * object is garbage collected — the other language's cleanup then runs on
 * the JVM's cleaner thread).
 */
public final class ForeignValue implements AutoCloseable {
    static final Cleaner CLEANER = Cleaner.create();

    /** Owns the native holder; run once (close, GC or never if moved out). */
    private static final class Holder implements Runnable {
        private long ptr;

        Holder(long ptr) {
            this.ptr = ptr;
        }

        @Override
        public synchronized void run() {
            if (ptr != 0) {
                FutoInNative.foreign_free(ptr);
                ptr = 0;
            }
        }

        synchronized long get() {
            return ptr;
        }
    }

    private final Holder holder;
    private final Cleaner.Cleanable cleanable;

    ForeignValue(long ptr) {
        holder = new Holder(ptr);
        cleanable = CLEANER.register(this, holder);
    }

    /** The holder address for passing it on (0 once closed). */
    long holderAddress() {
        return holder.get();
    }

    /**
     * @return the FTN12 type flags of the value (e.g. 0x01 for a custom
     *         object), or -1 once it was passed on or closed
     */
    public int typeFlags() {
        long p = holder.get();
        return p == 0 ? -1 : FutoInNative.foreign_flags(p);
    }

    /**
     * @return the value's pointer payload as an address (for diagnostics),
     *         or 0 once it was passed on or closed
     */
    public long address() {
        long p = holder.get();
        return p == 0 ? 0 : FutoInNative.foreign_address(p);
    }

    /**
     * @return true until the value was passed on or closed
     */
    public boolean isPresent() {
        return typeFlags() >= 0;
    }

    /** Releases the value (its own language's cleanup runs now) unless it
     *  was passed on already. Idempotent. */
    @Override
    public void close() {
        cleanable.clean();
    }

    @Override
    public String toString() {
        int f = typeFlags();
        return f < 0 ? "ForeignValue[released]"
                : String.format("ForeignValue[flags=0x%02x, address=0x%x]", f, address());
    }
}
