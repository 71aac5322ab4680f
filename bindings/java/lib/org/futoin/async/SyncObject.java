package org.futoin.async;

/**
 * A synchronization object for {@link AsyncSteps#sync(SyncObject, Step)}
 * (FTN12 §1.11): {@link Mutex}, {@link Throttle} or {@link Limiter}. The
 * values that come into the sync() step reach its critical section, and the
 * section's values reach the step after it; the object is released when the
 * section completes, fails or is cancelled. Queue limits raise
 * {@code DefenseRejected}. Flows of one thread only (its tool's loop).
 *
 * <p>{@link #close()} frees it; it is refused while a flow is inside or
 * queued. Throttles and Limiters are also freed with their {@link Tool}.
 */
public abstract sealed class SyncObject implements AutoCloseable permits Mutex, Throttle, Limiter {
    private long ptr;
    final Tool tool;

    SyncObject(long ptr, Tool tool, String what) {
        if (ptr == 0) {
            throw new IllegalArgumentException(what + ": invalid parameters");
        }
        this.ptr = ptr;
        this.tool = tool;
        if (tool != null) {
            tool.syncs.add(this);
        }
    }

    long ptr() {
        if (ptr == 0) {
            throw new IllegalStateException(getClass().getSimpleName() + " is closed");
        }
        return ptr;
    }

    abstract int free(long p);

    /**
     * Frees the object.
     *
     * @throws IllegalStateException while a flow is inside or queued (then
     *         nothing is freed), or when called off the tool's loop thread
     */
    @Override
    public void close() {
        if (ptr == 0) {
            return;
        }
        if (tool != null) {
            tool.checkLoopThread(getClass().getSimpleName() + ".close()");
        }
        if (free(ptr) != 0) {
            throw new IllegalStateException(getClass().getSimpleName()
                    + ".close(): a flow is still inside or queued");
        }
        ptr = 0;
        if (tool != null) {
            tool.syncs.remove(this);
        }
    }

    void closeQuietly() {
        try {
            close();
        } catch (RuntimeException busy) {
            Tool.uncaught(busy);
        }
    }

    /**
     * @return true until closed
     */
    public boolean isOpen() {
        return ptr != 0;
    }
}
