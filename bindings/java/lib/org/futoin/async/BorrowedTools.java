package org.futoin.async;

import java.lang.ref.WeakReference;
import java.util.HashMap;
import java.util.Map;

/**
 * The Tools by the address of their futoin_tool, and the borrowed ones:
 * a Tool over the loop of the program that hosts this JVM (see
 * {@link Tool}, "The loop of another program"), which is used only while
 * something proves that loop alive.
 */
final class BorrowedTools {
    /* Tools by the address of their futoin_tool: Java's own (while open)
     * and the borrowed ones (while referred to). */
    private static final Map<Long, WeakReference<Tool>> BY_CORE = new HashMap<>();

    static final String BORROWED_USE = "this Tool is the loop of the program that hosts this JVM: usable "
            + "only on its loop thread while a Java step or timer of it runs there, or while timers of it are pending";

    private BorrowedTools() {
    }

    static void registerOwn(Tool t) {
        long c = FutoInNative.tool_ptr(t.ptr);
        synchronized (BY_CORE) {
            BY_CORE.put(c, new WeakReference<>(t));
        }
    }

    static void unregisterOwn(Tool t, long p) {
        long c = FutoInNative.tool_ptr(p);
        synchronized (BY_CORE) {
            WeakReference<Tool> r = BY_CORE.get(c);
            if (r != null && r.get() == t) {
                BY_CORE.remove(c);
            }
        }
    }

    /** Is `core` the loop of a Tool of Java's own (not closed)? */
    static boolean ownedByJava(long core) {
        synchronized (BY_CORE) {
            WeakReference<Tool> r = BY_CORE.get(core);
            Tool t = r == null ? null : r.get();
            return t != null && t.core == 0;
        }
    }

    /**
     * The Tool of the loop `core` of a flow whose handle is live (loop
     * thread): a Tool of Java's own when it is one (a Java step added by
     * name runs without one), else the borrowed Tool of the hosting
     * program's loop: one object per loop while it is referred to; a loop
     * freed and another made at the same address gets the same object,
     * which holds nothing of the old one (no timer can be pending: they
     * keep the loop from being freed).
     */
    static Tool ofCore(long core) {
        synchronized (BY_CORE) {
            WeakReference<Tool> r = BY_CORE.get(core);
            Tool t = r == null ? null : r.get();
            if (t == null) {
                if (BY_CORE.size() >= 64) {
                    BY_CORE.values().removeIf(w -> w.get() == null);
                }
                t = new Tool(core);
                BY_CORE.put(core, new WeakReference<>(t));
            }
            return t;
        }
    }

    /** Borrowed: may this thread use the hosting program's loop now? The
     *  proofs that it is alive also prove this is its thread. */
    static boolean usable(Tool t) {
        Thread c = Thread.currentThread();
        if (t.firing == c) {
            return true;
        }
        if (FutoInNative.tool_borrowed_here(t.core)) {
            t.loopThread = c;
            return true;
        }
        synchronized (t.life) {
            return t.ptr != 0 && FutoInNative.tool_is_same_thread(t.ptr);
        }
    }

    /** Borrowed, loop thread: the first pending timer holds the loop. */
    static void holdForTimers(Tool t) {
        if (t.core != 0 && t.ptr == 0) {
            long p = FutoInNative.tool_borrow(t.core, t); /* holds the loop while timers are pending */
            synchronized (t.life) {
                t.ptr = p;
            }
        }
    }

    /** Borrowed, loop thread: the last timer is gone, let the loop go. */
    static void unborrowIfIdle(Tool t) {
        if (t.core != 0 && t.ptr != 0 && t.timers.isEmpty()) {
            long p;
            synchronized (t.life) {
                p = t.ptr;
                t.ptr = 0;
            }
            FutoInNative.tool_unborrow(p);
        }
    }
}
