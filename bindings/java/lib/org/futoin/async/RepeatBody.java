package org.futoin.async;

/**
 * The body of {@link AsyncSteps#repeat(int, RepeatBody)}: {@code func(as, i)}.
 */
@FunctionalInterface
public interface RepeatBody {
    /**
     * Runs one iteration.
     *
     * @param asi the iteration's handle
     * @param i the iteration, from 0
     * @throws Exception ends the loop with an error
     */
    void execute(AsyncSteps asi, int i) throws Exception;
}
