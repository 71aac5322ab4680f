import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

import org.futoin.async.AsyncSteps;
import org.futoin.async.Tool;

/**
 * Cost of one Java step of futoin-async next to a CompletableFuture chain of
 * the same length, in ONE JVM run (bench/java/run.sh).
 *
 *   futoin add()        a root with N steps `asi -> {}` (implicit success)
 *   futoin repeat()     one repeat(N) whose body is a Java lambda
 *   futoin success(v)   N steps `(asi, v) -> asi.success(v + 1)`
 *   CF thenApply        N x thenApply(v -> v + 1) on an incomplete future
 *   CF thenCompose      N x thenCompose(v -> completedFuture(v + 1)): the fair
 *                       peer of a chain of async steps passing a value (each
 *                       step is a function returning a future)
 *   CF thenApply, done  N x thenApply(v -> v + 1) on a completed future: the
 *                       cheapest form (each stage runs at once, inside the
 *                       thenApply() call, so "run" is ~0: compare build+run)
 *
 * Each line shows ns per step for "run" (execute + loop / complete +
 * propagation) and "build+run" (the add()/thenApply() calls included),
 * median of R rounds after W warm-up rounds. With -Djnifloor=LIB it also
 * prints the JNI floor (JniFloor.java, jni_floor.c).
 */
public final class Bench {
    private static final Object CONSUME = new Object();
    private static volatile Object sink;

    /** Returns {build ns, run ns} of one round. */
    interface Round {
        long[] run(int n);
    }

    private static long[] futoinAdd(Tool tool, int n) {
        long t0 = System.nanoTime();
        AsyncSteps root = new AsyncSteps(tool);
        for (int i = 0; i < n; ++i) {
            root.add(asi -> { });
        }
        long t1 = System.nanoTime();
        root.execute();
        tool.run();
        long t2 = System.nanoTime();
        root.close();
        return new long[] {t2 - t0, t2 - t1};
    }

    private static long[] futoinRepeat(Tool tool, int n) {
        long[] count = {0};
        long t0 = System.nanoTime();
        AsyncSteps root = new AsyncSteps(tool);
        root.repeat(n, (asi, i) -> count[0]++);
        long t1 = System.nanoTime();
        root.execute();
        tool.run();
        long t2 = System.nanoTime();
        root.close();
        if (count[0] != n) {
            throw new AssertionError("repeat ran " + count[0]);
        }
        return new long[] {t2 - t0, t2 - t1};
    }

    private static long[] futoinSuccess(Tool tool, int n) {
        Object[] last = new Object[1];
        long t0 = System.nanoTime();
        AsyncSteps root = new AsyncSteps(tool);
        for (int i = 0; i < n; ++i) {
            root.add((asi, v) -> asi.success(v == null ? 1 : (Integer) v + 1));
        }
        root.add((asi, v) -> last[0] = v);
        long t1 = System.nanoTime();
        root.execute();
        tool.run();
        long t2 = System.nanoTime();
        root.close();
        if (!Integer.valueOf(n).equals(last[0])) {
            throw new AssertionError("success chain gave " + last[0]);
        }
        return new long[] {t2 - t0, t2 - t1};
    }

    private static long[] cfApply(int n) {
        long t0 = System.nanoTime();
        CompletableFuture<Integer> start = new CompletableFuture<>();
        CompletableFuture<Integer> f = start;
        for (int i = 0; i < n; ++i) {
            f = f.thenApply(v -> v + 1);
        }
        long t1 = System.nanoTime();
        start.complete(0);
        int r = f.join();
        long t2 = System.nanoTime();
        if (r != n) {
            throw new AssertionError("thenApply gave " + r);
        }
        return new long[] {t2 - t0, t2 - t1};
    }

    private static long[] cfCompose(int n) {
        long t0 = System.nanoTime();
        CompletableFuture<Integer> start = new CompletableFuture<>();
        CompletableFuture<Integer> f = start;
        for (int i = 0; i < n; ++i) {
            f = f.thenCompose(v -> CompletableFuture.completedFuture(v + 1));
        }
        long t1 = System.nanoTime();
        start.complete(0);
        int r = f.join();
        long t2 = System.nanoTime();
        if (r != n) {
            throw new AssertionError("thenCompose gave " + r);
        }
        return new long[] {t2 - t0, t2 - t1};
    }

    private static long[] cfApplyDone(int n) {
        long t0 = System.nanoTime();
        CompletableFuture<Integer> f = CompletableFuture.completedFuture(0);
        for (int i = 0; i < n; ++i) {
            f = f.thenApply(v -> v + 1);
        }
        long t1 = System.nanoTime();
        int r = f.join();
        long t2 = System.nanoTime();
        if (r != n) {
            throw new AssertionError("thenApply gave " + r);
        }
        return new long[] {t2 - t0, t2 - t1};
    }

    private static double median(List<Double> v) {
        List<Double> s = new ArrayList<>(v);
        Collections.sort(s);
        return s.get(s.size() / 2);
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int warm = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 7;
        String[] names = {"futoin add() step", "futoin repeat() body", "futoin step + success(v)",
            "CF thenApply", "CF thenCompose", "CF thenApply, done"};
        try (Tool tool = new Tool()) {
            Round[] all = {
                k -> futoinAdd(tool, k), k -> futoinRepeat(tool, k), k -> futoinSuccess(tool, k),
                Bench::cfApply, Bench::cfCompose, Bench::cfApplyDone,
            };
            List<List<Double>> build = new ArrayList<>();
            List<List<Double>> run = new ArrayList<>();
            for (int i = 0; i < all.length; ++i) {
                build.add(new ArrayList<>());
                run.add(new ArrayList<>());
            }
            // interleaved: every round runs every line once
            for (int r = 0; r < warm + rounds; ++r) {
                for (int i = 0; i < all.length; ++i) {
                    long[] t = all[i].run(n);
                    if (r >= warm) {
                        build.get(i).add((double) t[0] / n);
                        run.get(i).add((double) t[1] / n);
                    }
                }
            }
            System.out.printf("java %s (%s), N=%,d, warm-up %d, median of %d interleaved rounds%n",
                    System.getProperty("java.version"), System.getProperty("java.vm.name"), n, warm, rounds);
            System.out.printf("%-26s %14s %16s%n", "per step", "run ns", "build+run ns");
            double[] runMed = new double[all.length];
            double[] bothMed = new double[all.length];
            for (int i = 0; i < all.length; ++i) {
                runMed[i] = median(run.get(i));
                bothMed[i] = median(build.get(i));
                System.out.printf("%-26s %14.1f %16.1f%n", names[i], runMed[i], bothMed[i]);
            }
            System.out.printf("ratios, build+run (futoin / peer): add() step / thenApply %.2f, / thenCompose %.2f,"
                    + " / thenApply done %.2f; success(v) / thenApply %.2f, / thenCompose %.2f%n",
                    bothMed[0] / bothMed[3], bothMed[0] / bothMed[4], bothMed[0] / bothMed[5],
                    bothMed[2] / bothMed[3], bothMed[2] / bothMed[4]);
            System.out.printf("ratios, run (futoin / peer): add() step / thenApply %.2f, / thenCompose %.2f;"
                    + " success(v) / thenApply %.2f, / thenCompose %.2f%n",
                    runMed[0] / runMed[3], runMed[0] / runMed[4], runMed[2] / runMed[3], runMed[2] / runMed[4]);
            if (System.getProperty("jnifloor") != null) {
                double[] f = JniFloor.run(System.getProperty("jnifloor"));
                System.out.printf("%-26s %14.1f%n", "JNI up-call (2 args)", f[0]);
                System.out.printf("%-26s %14.1f%n", "JNI up-call (5 args)", f[1]);
                System.out.printf("%-26s %14.1f%n", "JNI global ref new+delete", f[2]);
            }
            boolean met = runMed[0] <= 250 && runMed[1] <= 250 && runMed[2] <= 250;
            System.out.printf("target: <= 250 ns per Java step (run) -> %s (add %.0f, repeat %.0f, success %.0f ns)%n",
                    met ? "MET" : "NOT MET", runMed[0], runMed[1], runMed[2]);
        }
        sink = CONSUME;
    }
}
