package org.futoin.async;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * A flow's {@code state()} map: one per root, in insertion order. Values
 * that are FTN12 values (numbers, booleans, strings, byte[] and the other
 * primitive arrays) are also written to the state shared by every language
 * of the flow (futoin_state_set), and {@link #get} reads that shared state
 * first, so state set in Python, Lua or C is read here and the other way
 * round. Other objects (and null) stay Java's own.
 *
 * <p>The names {@code error_info}, {@code last_exception} and
 * {@code async_stack} (FTN12 §1.7) are not entries: {@code get} reads them
 * from the runtime through the live handle each time (ErrorState: what
 * the accessors return, so both always agree), {@code containsKey} says
 * whether they are set, and every write of them is refused with
 * IllegalArgumentException, as the runtime refuses them
 * (futoin_state_set). Iteration, size and the views show the user's keys
 * only. A key with a NUL character is refused everywhere (a C name would
 * end there).
 *
 * <p>The shared state is reached through the handle the map was last
 * asked for ({@code asi.state()}); a map kept from a step that has
 * finished works on Java's copy until a live handle asks for it again,
 * and then writes what changed meanwhile to the shared state.
 * Keys set only by other languages are listed (keySet, entrySet) once
 * Java has read them; get, put, remove, putAll, putIfAbsent, getOrDefault,
 * containsKey and clear are shared, other bulk operations and views work
 * on Java's copy.
 */
final class StateMap extends LinkedHashMap<String, Object> {
    private static final long serialVersionUID = 1L;
    /** The handle state() was last asked through (loop thread): a step's
     *  AsyncSteps, or a root's RootCtl (never the root's AsyncSteps, which
     *  must stay collectable while its flow's state holds this map). */
    transient Object via;
    /** Keys changed while no live handle could share them. */
    private transient Set<String> dirty;

    /** A key to write: not null, no NUL, not a reserved name. */
    private static String writable(String key) {
        Objects.requireNonNull(key, "state(): key is null");
        if (ErrorState.reserved(Values.name(key, "state() key"))) {
            throw new IllegalArgumentException("state(): \"" + key + "\" is the flow's error state, read-only"
                    + " (asi.errorInfo(), asi.lastException(), asi.asyncStack())");
        }
        return key;
    }

    /** A key to read: a String key with a NUL is refused. */
    private static void readable(Object key) {
        if (key instanceof String) {
            Values.name((String) key, "state() key");
        }
    }

    private static boolean shareable(Object v) {
        if (v == null) {
            return false;
        }
        int t = Values.tag(v);
        return t != Values.CUSTOM && t != Values.FOREIGN;
    }

    /** A live handle of the flow, with what changed meanwhile shared; or 0. */
    private long live() {
        Object v = via;
        long h = v instanceof AsyncSteps ? liveHandle((AsyncSteps) v)
                : v instanceof RootCtl ? ((RootCtl) v).liveHandle() : 0;
        if (h != 0 && dirty != null) {
            Set<String> d = dirty;
            dirty = null;
            for (String k : d) {
                share(h, k, super.get(k));
            }
        }
        return h;
    }

    private static void share(long h, String key, Object v) {
        if (shareable(v)) {
            int t = Values.tag(v);
            FutoInNative.state_set(h, Values.cstr(key), t, Values.bits(v, t), Values.obj(v, t));
        } else {
            FutoInNative.state_set(h, Values.cstr(key), 0, 0, null);
        }
    }

    private void changed(String key, Object v) {
        long h = live();
        if (h != 0) {
            share(h, key, v);
        } else {
            if (dirty == null) {
                dirty = new LinkedHashSet<>();
            }
            dirty.add(key);
        }
    }

    @Override
    public Object get(Object key) {
        readable(key);
        if (ErrorState.reserved(key)) {
            long h = live();
            return h == 0 ? null : ErrorState.get(h, key);
        }
        Object mine = super.get(key);
        if (!(key instanceof String)) {
            return mine;
        }
        long h = live();
        if (h == 0) {
            return mine;
        }
        Object shared = FutoInNative.state_get(h, Values.cstr((String) key));
        if (shared == null || Objects.deepEquals(shared, mine)) {
            return mine; /* Java's own object, or Java's copy is current */
        }
        super.put((String) key, shared); /* another language set it */
        return shared;
    }

    @Override
    public boolean containsKey(Object key) {
        readable(key);
        return (!ErrorState.reserved(key) && super.containsKey(key)) || get(key) != null;
    }

    @Override
    public Object put(String key, Object value) {
        Object old = super.put(writable(key), value);
        changed(key, value);
        return old;
    }

    @Override
    public Object remove(Object key) {
        if (!(key instanceof String)) {
            return null;
        }
        Object old = super.remove(writable((String) key));
        changed((String) key, null);
        return old;
    }

    @Override
    public boolean remove(Object key, Object value) {
        if (key instanceof String) {
            writable((String) key);
        }
        return super.remove(key, value);
    }

    @Override
    public Object replace(String key, Object value) {
        return super.replace(writable(key), value);
    }

    @Override
    public boolean replace(String key, Object oldValue, Object newValue) {
        return super.replace(writable(key), oldValue, newValue);
    }

    @Override
    public Object compute(String key, BiFunction<? super String, ? super Object, ?> fn) {
        return super.compute(writable(key), fn);
    }

    @Override
    public Object computeIfAbsent(String key, Function<? super String, ?> fn) {
        return super.computeIfAbsent(writable(key), fn);
    }

    @Override
    public Object computeIfPresent(String key, BiFunction<? super String, ? super Object, ?> fn) {
        return super.computeIfPresent(writable(key), fn);
    }

    @Override
    public Object merge(String key, Object value, BiFunction<? super Object, ? super Object, ?> fn) {
        return super.merge(writable(key), value, fn);
    }

    @Override
    public Object getOrDefault(Object key, Object dflt) {
        Object v = get(key);
        return v != null || super.containsKey(key) ? v : dflt;
    }

    @Override
    public Object putIfAbsent(String key, Object value) {
        Object cur = get(writable(key));
        if (cur == null) {
            put(key, value);
        }
        return cur;
    }

    @Override
    public void putAll(Map<? extends String, ?> m) {
        for (String k : m.keySet()) {
            writable(k); /* all or nothing */
        }
        for (Map.Entry<? extends String, ?> e : m.entrySet()) {
            put(e.getKey(), e.getValue());
        }
    }

    @Override
    public void clear() {
        for (String k : keySet().toArray(new String[0])) {
            remove(k);
        }
    }

    /* AsyncSteps.state() */
    static Map<String, Object> state(AsyncSteps asi) {
        long b = asi.check("state()");
        StateMap s = asi.state;
        if (s == null) {
            s = asi.state = (StateMap) FutoInNative.state(b);
        }
        s.via = asi.kind == AsyncSteps.ROOT ? asi.ctl : asi;
        return s;
    }

    /** A step's or borrowed handle while it may be used here and now, else 0. */
    static long liveHandle(AsyncSteps asi) {
        long b = asi.handle();
        if (b == 0 || (asi.kind == AsyncSteps.STEP && StepStates.of(asi) == StepStates.DEAD) || !asi.onLoopThread()) {
            return 0;
        }
        KeptSuccess.apply(asi);
        return b;
    }
}
