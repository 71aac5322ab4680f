package org.futoin.async;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The loops of {@link AsyncSteps} (FTN12 {@code loop()}, {@code repeat()},
 * {@code forEach()}) and leaving or going on with them ({@code break()},
 * {@code continue()}: a {@link LoopSignal}).
 */
final class Loops {
    private Loops() {
    }

    /* AsyncSteps.loop(body, label) */
    static AsyncSteps loop(AsyncSteps steps, Step body, String label) {
        long b = steps.flowCheck("loop()");
        Objects.requireNonNull(body, "loop(): body is null");
        FutoInNative.loop(b, new Rec(body, 0, null, steps.tool, null),
                Values.cstr(Values.name(label, "loop() label")));
        return steps;
    }

    /* AsyncSteps.repeat(count, body, label) */
    static AsyncSteps repeat(AsyncSteps steps, int count, RepeatBody body, String label) {
        long b = steps.flowCheck("repeat()");
        Objects.requireNonNull(body, "repeat(): body is null");
        if (count < 0) {
            throw new IllegalArgumentException("repeat(): negative count");
        }
        FutoInNative.repeat(b, new Rec(body, 0, null, steps.tool, null), count,
                Values.cstr(Values.name(label, "repeat() label")));
        return steps;
    }

    /* AsyncSteps.forEach(map, body, label) */
    static <K, V> AsyncSteps forEach(AsyncSteps steps, Map<K, V> map, ForEachBody<? super K, ? super V> body,
                                     String label) {
        Objects.requireNonNull(map, "forEach(): map is null");
        Objects.requireNonNull(body, "forEach(): body is null");
        List<Map.Entry<K, V>> items = new ArrayList<>(map.size());
        for (Map.Entry<K, V> e : map.entrySet()) {
            items.add(new AbstractMap.SimpleImmutableEntry<>(e));
        }
        return repeat(steps, items.size(),
                (asi, i) -> body.execute(asi, items.get(i).getKey(), items.get(i).getValue()), label);
    }

    /* AsyncSteps.forEach(list, body, label) */
    static <V> AsyncSteps forEach(AsyncSteps steps, Iterable<V> list, ForEachBody<? super Integer, ? super V> body,
                                  String label) {
        Objects.requireNonNull(list, "forEach(): list is null");
        Objects.requireNonNull(body, "forEach(): body is null");
        List<V> items = new ArrayList<>();
        list.forEach(items::add);
        return repeat(steps, items.size(), (asi, i) -> body.execute(asi, i, items.get(i)), label);
    }

    /** breakLoop() and continueLoop(): end the body with a LoopSignal. */
    static void loopControl(AsyncSteps steps, String what, String label, boolean cont) {
        long b = steps.flowCheck(what);
        FutoInNative.loopControl(b, Values.cstr(Values.name(label, what + " label")), cont);
        if (steps.kind == AsyncSteps.STEP) {
            steps.ended = what;
        }
        throw new LoopSignal(!cont, label, steps);
    }
}
