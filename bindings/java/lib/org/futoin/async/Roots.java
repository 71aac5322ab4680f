package org.futoin.async;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * What a root does through its {@link AsyncSteps}: execute(), promise(),
 * run(), cancel(), close() and newInstance(), with their checks; the
 * root's life itself (its native handle, its outcome, its release) is
 * {@link RootCtl}'s.
 */
final class Roots {
    private Roots() {
    }

    /* AsyncSteps.execute() */
    static void execute(AsyncSteps root) {
        root.checkRoot("execute()");
        needTool(root, "execute()");
        root.ctl.start(root, null, null);
    }

    /* AsyncSteps.execute(onError) */
    static void execute(AsyncSteps root, Consumer<? super FutoInError> onError) {
        root.checkRoot("execute()");
        needTool(root, "execute()");
        root.ctl.start(root, Objects.requireNonNull(onError, "execute(): onError is null"), null);
    }

    /* AsyncSteps.promise() */
    static CompletableFuture<Object> promise(AsyncSteps root) {
        root.checkRoot("promise()");
        needTool(root, "promise()");
        CompletableFuture<Object> f = new FlowFuture();
        promiseInto(root, f);
        return f;
    }

    /** Tool.promise(setup): free the root once it is done. */
    static void freeWhenDone(AsyncSteps root) {
        root.ctl.freeWhenDone = true;
    }

    static void promiseInto(AsyncSteps root, CompletableFuture<Object> f) {
        root.ctl.start(root, null, f);
        f.whenComplete((v, e) -> {
            if (f.isCancelled()) {
                cancel(root);
            }
        });
    }

    /* AsyncSteps.run() */
    static Object run(AsyncSteps root) {
        if (root.kind != AsyncSteps.ROOT) {
            throw new IllegalStateException("run(): only a root can do this, not a step");
        }
        needTool(root, "run()");
        return root.ctl.runUntilDone(root);
    }

    /** execute(), promise() and run() drive the root through its Tool. */
    private static void needTool(AsyncSteps root, String what) {
        if (root.tool == null) {
            throw new IllegalStateException(what + ": this root has no Tool: newInstance() made it"
                    + " through a handle no Tool of this binding runs (a flow of another"
                    + " language's host, or a handle wrapped with no Tool), and nothing here"
                    + " can run its loop; add the steps to the running flow instead, or make"
                    + " the root on a Tool (new AsyncSteps(tool))");
        }
    }

    /* AsyncSteps.cancel() */
    static boolean cancel(AsyncSteps root) {
        if (root.kind != AsyncSteps.ROOT) {
            throw new IllegalStateException("cancel(): only a root can do this, not a step");
        }
        if (root.ctl.bsi == 0) {
            return false;
        }
        if (root.tool != null && !root.tool.isLoopThread()) {
            return root.ctl.cancelFromAnyThread();
        }
        return root.ctl.cancelOnLoop();
    }

    /* AsyncSteps.close() */
    static void close(AsyncSteps root) {
        if (root.kind != AsyncSteps.ROOT || root.ctl.bsi == 0) {
            return;
        }
        if (root.tool != null && !root.tool.isLoopThread()) {
            ToolTasks.post(root.tool, root.ctl::freeOnLoop);
            return;
        }
        root.ctl.freeOnLoop();
    }

    /* AsyncSteps.newInstance() */
    static AsyncSteps newInstance(AsyncSteps root) {
        long b = root.check("newInstance()");
        /* the field, or the Java Tool owning the handle's loop (a handle of
         * ours adopted with wrap()); a borrowed Tool makes no roots */
        Tool t = root.tool != null ? root.tool : root.tool();
        if (t != null && !t.isBorrowed()) {
            AsyncSteps n = new AsyncSteps(t);
            /* The engine's newInstance() continues a traced flow under the
             * span of this handle (futoin/trace.h); this root is the Tool's
             * own, so it continues it the same way: this handle's
             * traceparent. */
            String tp = Traces.traceparentOf(b);
            if (tp != null) {
                FutoInNative.futoin_bind_trace_set(n.handle(), tp);
            }
            return n;
        }
        return new AsyncSteps(FutoInNative.new_instance(b), null, true);
    }
}
