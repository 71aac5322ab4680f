import java.util.concurrent.CompletableFuture;

import org.futoin.async.AsyncSteps;
import org.futoin.async.Tool;

/**
 * One kind of Java op, N times, for bench/callgrind.sh (instructions per op:
 * the runner runs this under callgrind with N and 2N and divides the
 * difference by N, so JVM start-up, class loading and the warm-up cancel).
 *
 *   java -cp futoin-async.jar:DIR CallgrindOps KIND N WARM
 *
 * KIND:
 *   step       a root of N steps {@code asi -> {}}: add + execute + run per step
 *   success    a root of N steps {@code (asi, v) -> asi.success(v + 1)}
 *   thenApply  the language's own primitive: N x {@code thenApply(v -> v + 1)}
 *              on an incomplete CompletableFuture, then completed
 *   thenApplyDone  the cheapest form: N x {@code thenApply(v -> v + 1)} on a
 *              completed future (each stage runs at once, nothing waits)
 *   thenCompose  the fair peer of a chain of async steps passing a value:
 *              N x {@code thenCompose(v -> completedFuture(v + 1))} on an
 *              incomplete future, then completed (each step returns a future)
 *
 * Each kind first runs twice with WARM (the warm-up: the JIT compiles the
 * paths, pools grow; the runner passes the same WARM to both runs), then
 * once with N; the last line is {@code OPS N}.
 */
public final class CallgrindOps {
    private CallgrindOps() {
    }

    private static void step(Tool tool, int n) {
        AsyncSteps root = new AsyncSteps(tool);
        for (int i = 0; i < n; ++i) {
            root.add(asi -> { });
        }
        root.execute();
        tool.run();
        root.close();
    }

    private static void success(Tool tool, int n) {
        Object[] last = new Object[1];
        AsyncSteps root = new AsyncSteps(tool);
        for (int i = 0; i < n; ++i) {
            root.add((asi, v) -> asi.success(v == null ? 1 : (Integer) v + 1));
        }
        root.add((asi, v) -> last[0] = v);
        root.execute();
        tool.run();
        root.close();
        if (!Integer.valueOf(n).equals(last[0])) {
            throw new AssertionError("success chain gave " + last[0]);
        }
    }

    private static void thenApply(Tool tool, int n) {
        CompletableFuture<Integer> start = new CompletableFuture<>();
        CompletableFuture<Integer> f = start;
        for (int i = 0; i < n; ++i) {
            f = f.thenApply(v -> v + 1);
        }
        start.complete(0);
        if (f.join() != n) {
            throw new AssertionError("thenApply gave " + f.join());
        }
    }

    /** The cheapest form: each thenApply() on a completed future runs at once. */
    private static void thenApplyDone(Tool tool, int n) {
        CompletableFuture<Integer> f = CompletableFuture.completedFuture(0);
        for (int i = 0; i < n; ++i) {
            f = f.thenApply(v -> v + 1);
        }
        if (f.join() != n) {
            throw new AssertionError("thenApply gave " + f.join());
        }
    }

    /** The fair peer: a chain of N async steps passing a value, each step a
     *  function returning a future (here an already completed one). */
    private static void thenCompose(Tool tool, int n) {
        CompletableFuture<Integer> start = new CompletableFuture<>();
        CompletableFuture<Integer> f = start;
        for (int i = 0; i < n; ++i) {
            f = f.thenCompose(v -> CompletableFuture.completedFuture(v + 1));
        }
        start.complete(0);
        if (f.join() != n) {
            throw new AssertionError("thenCompose gave " + f.join());
        }
    }

    interface Kind {
        void run(Tool tool, int n);
    }

    /** Runs KIND with WARM, then with N: see the class comment. */
    public static void main(String[] args) {
        Kind k = null;
        if (args.length == 3) {
            switch (args[0]) {
                case "step": k = CallgrindOps::step; break;
                case "success": k = CallgrindOps::success; break;
                case "thenApply": k = CallgrindOps::thenApply; break;
                case "thenApplyDone": k = CallgrindOps::thenApplyDone; break;
                case "thenCompose": k = CallgrindOps::thenCompose; break;
                default: break;
            }
        }
        if (k == null) {
            System.err.println("usage: CallgrindOps step|success|thenApply|thenApplyDone|thenCompose N WARM");
            System.exit(2);
        }
        int n = Integer.parseInt(args[1]);
        int warm = Integer.parseInt(args[2]);
        try (Tool tool = new Tool()) {
            /* twice: the first warm-up takes paths the counted run does
             * not (a growing pool or Rec table, free lists filling); the
             * second runs, and lets the JIT compile, the paths of the
             * steady state the counted run is in */
            k.run(tool, warm);
            k.run(tool, warm);
            k.run(tool, n);
        }
        System.out.println("OPS " + n);
    }
}
