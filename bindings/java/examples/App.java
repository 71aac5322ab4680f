import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;

import org.futoin.async.AsyncSteps;
import org.futoin.async.Errors;
import org.futoin.async.Tool;

/**
 * A first flow: steps with values, an error handler that recovers, and a
 * CompletableFuture completed on a ForkJoinPool thread, awaited without
 * blocking the loop. Run: java -cp futoin-async.jar:app.jar App
 */
public class App {
    public static void main(String[] args) {
        try (Tool tool = new Tool(); AsyncSteps root = new AsyncSteps(tool)) {
            CompletableFuture<Integer> remote = new CompletableFuture<>();
            ForkJoinPool.commonPool().execute(() -> remote.complete(21));

            root.await(remote)
                .add((asi, v) -> asi.success((Integer) v * 2))
                .add((asi, v) -> asi.error(Errors.NOT_IMPLEMENTED, "answer is " + v),
                     (asi, code) -> asi.success(code + " / " + asi.state().get("error_info")));
            System.out.println("result: " + root.run());
        }
    }
}
