import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;

import org.futoin.async.AsyncSteps;
import org.futoin.async.Tool;

/**
 * Lua steps under a Java host program, on two loop threads at once: each
 * Java thread has its own {@link Tool} and runs flows that add Lua steps by
 * name (bindings/lua/tests/polyglot/host_steps.lua). Every thread gets a
 * Lua state of its own (a global one thread sets is not seen by the other),
 * asi:tool() in Lua is that thread's tool with working timers (an
 * immediate, then a deferred callback) and new roots, and a Lua error
 * reaches Java as InternalError with its message and the Lua traceback in
 * error_info. At the end the process holds one libfutoin_async and one
 * libuv (/proc/self/maps).
 *
 * <p>Run by bindings/lua/polyglot.sh test (compiled against the jar of
 * FUTOIN_JAVA_POLYGLOT_OUT) twice: with the environment of
 * tests/polyglot/run.sh (LUA_PATH, LUA_CPATH), and under {@code env -i}
 * with the rock installed in a tree of its own (PATH, what
 * {@code luarocks path} sets); the library finds the Lua plug-in through
 * LUA_CPATH. Last line:
 * "lua-under-java: N passed, M failed".
 */
public final class HostThreads {
    private static int passed;
    private static int failed;

    private HostThreads() {
    }

    private static synchronized void check(boolean ok, String what) {
        if (ok) {
            ++passed;
        } else {
            ++failed;
            System.err.println("FAIL [lua under java] " + what);
        }
    }

    /** A flow on `tool`: a Java step giving `give`, then host_steps.fn;
     *  its result, or "error CODE: error_info". */
    private static Object luaStep(Tool tool, Object give, String fn) {
        String[] seen = new String[1];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> {
            asi.successStep(give);
            asi.addForeign("lua", "host_steps", fn);
        }, (asi, code) -> {
            seen[0] = "error " + code + ": " + asi.state().get("error_info");
            asi.success();
        });
        Object r = root.run();
        root.close();
        return seen[0] != null ? seen[0] : r;
    }

    private static void loopThread(String name, CyclicBarrier ready, Map<String, Object> out) {
        try {
            Tool tool = new Tool();
            ready.await();
            out.put("first", luaStep(tool, name, "mark"));
            out.put("second", luaStep(tool, name + "-again", "mark"));
            out.put("timers", luaStep(tool, 20, "timers"));
            out.put("fail", luaStep(tool, name, "fail"));
            tool.close();
            out.put("closed", true);
        } catch (Throwable e) {
            out.put("exception", e.toString());
        }
    }

    /** The distinct files of /proc/self/maps whose name holds `needle`. */
    private static Set<String> mapped(String needle) throws IOException {
        Set<String> out = new TreeSet<>();
        for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
            String[] f = line.trim().split("\\s+", 6);
            if (f.length == 6 && f[5].contains(needle)) {
                out.add(f[5]);
            }
        }
        return out;
    }

    private static boolean isInt(Object v, long want) {
        return (v instanceof Integer || v instanceof Long) && ((Number) v).longValue() == want;
    }

    public static void main(String[] args) throws Exception {
        CyclicBarrier ready = new CyclicBarrier(2);
        String[] names = {"left", "right"};
        Map<String, Map<String, Object>> outs = new ConcurrentHashMap<>();
        Thread[] threads = new Thread[names.length];
        for (int i = 0; i < names.length; ++i) {
            String name = names[i];
            Map<String, Object> out = new ConcurrentHashMap<>();
            outs.put(name, out);
            threads[i] = new Thread(() -> loopThread(name, ready, out), "loop-" + name);
            threads[i].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        for (String name : names) {
            Map<String, Object> out = outs.get(name);
            check(!out.containsKey("exception") && out.containsKey("closed"),
                    name + ": " + out.get("exception"));
            check("none".equals(out.get("first")) && name.equals(out.get("second")),
                    name + ": the Lua globals are not this thread's own: " + out.get("first") + ", "
                            + out.get("second"));
            Object t = out.get("timers");
            List<?> l = t instanceof List ? (List<?>) t : List.of();
            check(l.size() == 2 && isInt(l.get(0), 40) && "immediate,deferred,root".equals(l.get(1)),
                    name + ": asi:tool() timers and new_instance(): " + t);
            String fail = String.valueOf(out.get("fail"));
            check(fail.startsWith("error InternalError: ") && fail.contains("lua failed on " + name)
                    && fail.contains("stack traceback:"), name + ": a Lua error in Java: " + fail);
        }
        /* one libfutoin_async (the jar's; the rock's core.so bound to it by
         * soname) and one libuv (luv's is the system one, as the runtime's) */
        for (String lib : new String[] {"libfutoin_async.so", "libuv.so"}) {
            Set<String> paths = mapped(lib);
            check(paths.size() == 1, lib + " mapped " + paths.size() + " times: " + paths);
        }
        System.out.println("lua-under-java: " + passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }
}
