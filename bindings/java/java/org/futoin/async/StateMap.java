package org.futoin.async;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A flow's {@code state()} map: one per root, in insertion order. Values
 * that are FTN12 values (numbers, booleans, strings, byte[] and the other
 * primitive arrays) are also written to the state shared by every language
 * of the flow (futoin_state_set), and {@link #get} reads that shared state
 * first, so state set in Python, Lua or C is read here and the other way
 * round. Other objects (and null) stay Java's own, as do
 * {@code error_info}, {@code last_exception} and {@code async_stack}.
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

    private static boolean reserved(Object key) {
        return "error_info".equals(key) || "last_exception".equals(key) || "async_stack".equals(key);
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
        long h = v instanceof AsyncSteps ? ((AsyncSteps) v).liveHandle()
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
        if (reserved(key)) {
            return;
        }
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
        Object mine = super.get(key);
        if (!(key instanceof String) || reserved(key)) {
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
        return super.containsKey(key) || get(key) != null;
    }

    @Override
    public Object put(String key, Object value) {
        Objects.requireNonNull(key, "state(): key is null");
        Object old = super.put(key, value);
        changed(key, value);
        return old;
    }

    @Override
    public Object remove(Object key) {
        if (!(key instanceof String)) {
            return null;
        }
        Object old = super.remove(key);
        changed((String) key, null);
        return old;
    }

    @Override
    public Object getOrDefault(Object key, Object dflt) {
        Object v = get(key);
        return v != null || super.containsKey(key) ? v : dflt;
    }

    @Override
    public Object putIfAbsent(String key, Object value) {
        Object cur = get(key);
        if (cur == null) {
            put(key, value);
        }
        return cur;
    }

    @Override
    public void putAll(Map<? extends String, ?> m) {
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
}
