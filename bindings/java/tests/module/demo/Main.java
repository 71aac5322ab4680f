package demo;

import org.futoin.async.AsyncSteps;
import org.futoin.async.Tool;

/** The binding used from a named module: prints "result: 42". */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        try (Tool tool = new Tool(); AsyncSteps root = new AsyncSteps(tool)) {
            root.add(asi -> asi.success(21)).add((asi, v) -> asi.success((Integer) v * 2));
            System.out.println("result: " + root.run() + " in module " + Main.class.getModule().getName()
                    + " with " + Tool.class.getModule());
        }
    }
}
