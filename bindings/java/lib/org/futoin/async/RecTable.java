package org.futoin.async;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The Recs of the steps add() puts into the flows of one of this binding's
 * own Tools, by id: the runtime holds the id (with the table's index), not
 * a JNI global reference per step, which would cost the JVM's OopStorage
 * lock twice a step (glue/jni_rectab.c). C releases an id by pushing it
 * onto the freed stack of {@link #io}; Java drains that stack when it next
 * takes an id ({@link #put}), when a run of the tool ends, a root is freed
 * or a task runs, and before the loop idles (C's prepare handle calls
 * Dispatch.drainTable), clearing the slots ({@link #drain}): a finished
 * step's Rec, and what its lambda captured, is not kept. Loop thread only.
 */
final class RecTable {
    /* The layout of io (glue/jni_rectab.c). */
    private static final int NEXT = 0, NFREED = 8, FREED = 16;
    private static final int FIRST_CAP = 1024;
    /** Tables by index, for a step chained from another tool's flow. */
    private static final RecTable[] BY_INDEX = new RecTable[4096];

    private final long tool;
    final int index;
    Object[] recs;
    private ByteBuffer io;
    private int cap;
    private int[] free;
    private int nfree;
    private int top;

    private RecTable(long tool, int index, Object[] recs, ByteBuffer io, int cap) {
        this.tool = tool;
        this.index = index;
        this.recs = recs;
        this.io = io;
        this.cap = cap;
        this.free = new int[cap];
    }

    private static ByteBuffer buffer(int cap) {
        return ByteBuffer.allocateDirect(FREED + 5 * cap).order(ByteOrder.nativeOrder());
    }

    /** The table of Tool `tool` (an fj_tool*), or null: use global references. */
    static RecTable create(long tool) {
        Object[] recs = new Object[FIRST_CAP];
        ByteBuffer io = buffer(FIRST_CAP);
        int index = FutoInNative.rt_bind(tool, recs, io, FIRST_CAP);
        if (index <= 0 || index >= BY_INDEX.length) {
            return null;
        }
        RecTable t = new RecTable(tool, index, recs, io, FIRST_CAP);
        synchronized (BY_INDEX) {
            BY_INDEX[index] = t;
        }
        return t;
    }

    static RecTable of(int index) {
        synchronized (BY_INDEX) {
            return BY_INDEX[index];
        }
    }

    /** A slot for `rec`, its id returned (and kept in the Rec). */
    int put(Rec rec) {
        if (io.getInt(NFREED) != 0) {
            drain();
        }
        int id;
        if (nfree > 0) {
            id = free[--nfree];
        } else {
            if (top == cap) {
                grow();
            }
            id = top++;
        }
        recs[id] = rec;
        rec.table = this;
        rec.id = id;
        return id;
    }

    /** Takes back the slot {@link #put} just gave (C refused the add:
     *  the handle is not of a flow of this table's Tool). */
    void unput(int id) {
        Rec rec = (Rec) recs[id];
        recs[id] = null;
        free[nfree++] = id;
        rec.table = null;
        rec.id = -1;
    }

    /** The slots C released since the last drain are free again. */
    void drain() {
        ByteBuffer b = io;
        int n = b.getInt(NFREED);
        Object[] r = recs;
        for (int i = 0; i < n; ++i) {
            int id = b.getInt(FREED + 4 * i);
            r[id] = null;
            free[nfree++] = id;
        }
        b.putInt(NFREED, 0);
    }

    private void grow() {
        int n = cap * 2;
        if (n < 0) {
            throw new OutOfMemoryError("futoin: too many Java steps in one Tool");
        }
        Object[] r = Arrays.copyOf(recs, n);
        ByteBuffer b = buffer(n);
        for (int id = 0; id < cap; ++id) {
            b.put(FREED + 4 * n + id, io.get(FREED + 4 * cap + id));
        }
        if (FutoInNative.rt_bind(tool, r, b, n) != index) {
            throw new OutOfMemoryError("futoin: no global reference left for a Rec table");
        }
        recs = r;
        io = b;
        free = Arrays.copyOf(free, n);
        cap = n;
    }

    /** Slots taken and not released yet (tests). Loop thread. */
    int inUse() {
        return top - nfree - io.getInt(NFREED);
    }

    /** The handle of the step fj_chain_t() started. */
    long next() {
        return io.getLong(NEXT);
    }

    /** C is to call Dispatch.released() for slot `id` (Rec.notifyRelease). */
    void notifyRelease(int id) {
        io.put(FREED + 4 * cap + id, (byte) 1);
    }
}
