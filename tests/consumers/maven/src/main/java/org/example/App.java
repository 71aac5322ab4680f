package org.example;

import org.futoin.async.AsyncSteps;
import org.futoin.async.Tool;
import org.futoin.async.Version;

/** The Maven consumer's program: one flow through the dependency. */
public final class App {
    private App() {
    }

    /**
     * Runs 21 * 2 as two steps and prints the result and the binding's version.
     *
     * @param args unused
     */
    public static void main(String[] args) {
        try (Tool tool = new Tool(); AsyncSteps root = new AsyncSteps(tool)) {
            root.add(asi -> asi.success(21))
                .add((asi, v) -> asi.success((Integer) v * 2));
            Object result = root.run();
            System.out.println("maven consumer got " + result);
            System.out.println("futoin-async " + Version.binding());
        }
    }
}
