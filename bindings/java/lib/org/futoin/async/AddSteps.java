package org.futoin.async;

import java.util.Objects;

/**
 * How {@link AsyncSteps} adds a step to its flow: add() (a step of 0 to 4
 * values, with an error handler or not), sync() (the same, holding a
 * Mutex, Throttle or Limiter), parallel() and successStep().
 */
final class AddSteps {
    private AddSteps() {
    }

    /** add() and await(): a step of `arity` values, run by its Rec. */
    static AsyncSteps addRec(AsyncSteps asi, String what, Object fn, int arity, ErrorHandler eh) {
        long b = asi.flowCheck(what);
        Objects.requireNonNull(fn, what + ": step is null");
        Tool t = asi.tool;
        RecTable rt = t == null ? null : t.recs;
        Rec rec = new Rec(fn, arity, eh, t, null);
        if (rt != null) {
            int id = rt.put(rec);
            if (FutoInNative.add_t(b, rt.index, id, arity, eh != null)) {
                return asi;
            }
            /* the handle's flow is not this Tool's (wrap() with another
             * Tool): its loop would release the slot, racing with ours */
            rt.unput(id);
            FutoInNative.add(b, rec, arity, eh != null);
        } else {
            FutoInNative.add(b, rec, arity, eh != null);
        }
        return asi;
    }

    /* AsyncSteps.parallel() */
    static Parallel parallel(AsyncSteps asi) {
        long b = asi.flowCheck("parallel()");
        return new Parallel(FutoInNative.parallel(b, null), asi, asi.tool);
    }

    /* AsyncSteps.parallel(onerror) */
    static Parallel parallel(AsyncSteps asi, ErrorHandler onerror) {
        long b = asi.flowCheck("parallel()");
        Objects.requireNonNull(onerror, "parallel(): onerror is null");
        return new Parallel(FutoInNative.parallel(b, new Rec(null, 0, onerror, asi.tool, null)), asi, asi.tool);
    }

    /** sync(): the same, the Rec holding the sync object. */
    static AsyncSteps syncRec(AsyncSteps asi, SyncObject obj, Object fn, int arity, ErrorHandler eh) {
        long b = asi.flowCheck("sync()");
        Objects.requireNonNull(obj, "sync(): sync object is null");
        Objects.requireNonNull(fn, "sync(): step is null");
        FutoInNative.add_sync(b, obj.ptr(), new Rec(fn, arity, eh, asi.tool, obj), arity, eh != null);
        return asi;
    }

    /* AsyncSteps.successStep(values) */
    static AsyncSteps successStep(AsyncSteps asi, Object... values) {
        long b = asi.flowCheck("successStep()");
        new PackedValues(values).successStepOn(b);
        return asi;
    }
}
