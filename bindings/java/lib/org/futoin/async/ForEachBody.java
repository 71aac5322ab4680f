package org.futoin.async;

/**
 * The body of {@code forEach}: {@code func(as, key, value)}. For a list the
 * key is the index.
 *
 * @param <K> key type
 * @param <V> value type
 */
@FunctionalInterface
public interface ForEachBody<K, V> {
    /**
     * Runs one iteration.
     *
     * @param asi the iteration's handle
     * @param key the map key, or the list index
     * @param value the element
     * @throws Exception ends the loop with an error
     */
    void execute(AsyncSteps asi, K key, V value) throws Exception;
}
