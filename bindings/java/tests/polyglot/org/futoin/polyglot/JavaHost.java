package org.futoin.polyglot;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.futoin.async.AsyncSteps;
import org.futoin.async.FutoInError;
import org.futoin.async.LoadPolicy;
import org.futoin.async.Polyglot;
import org.futoin.async.Tool;

/**
 * The polyglot matrix with Java as the host program: steps of C, Python
 * and Lua ("polyglot_fragments" of each language, tests/polyglot/README.md)
 * in flows whose own steps are Java. Each cell checks values both ways,
 * an error crossing into a Java handler and a Java error caught by a
 * handler of the other language, cancel, timeout, shared state and the
 * async stack, and a step of the other language adding a Java step under
 * a Tool's load policy; then 10,000 mixed flows, after which Java's JNI global
 * references are back at their baseline and no named step is left.
 *
 * <p>Environment (tests/polyglot/run.sh): FUTOIN_POLYGLOT_LANGS (default
 * "c python lua"), FUTOIN_POLYGLOT_C_FRAGMENTS, PYTHONPATH, LUA_PATH,
 * LUA_CPATH (where the library finds the Python and Lua plug-ins; or
 * FUTOIN_HOST_PATH). Last line: "polyglot-java: N passed,
 * M failed".
 */
public final class JavaHost {
    private static int passed;
    private static int failed;
    private static String lang;
    private static Tool tool;

    private JavaHost() {
    }

    private static void check(boolean ok, String what) {
        if (ok) {
            ++passed;
        } else {
            ++failed;
            System.err.println("FAIL [java host x " + lang + "] " + what);
        }
    }

    private static String module(String l) {
        switch (l) {
            case "java": return "org.futoin.polyglot.Fragments";
            case "c": return System.getenv("FUTOIN_POLYGLOT_C_FRAGMENTS");
            default: return "polyglot_fragments";
        }
    }

    private static AsyncSteps fragment(AsyncSteps asi, String fn) {
        return asi.addForeign(lang, module(lang), fn);
    }

    /** Runs a root; its outcome, or the FutoInError it failed with. */
    private static Object run(AsyncSteps root) {
        try {
            return root.run();
        } catch (FutoInError e) {
            return e;
        }
    }

    private static boolean isInt(Object v, long want) {
        return (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte)
                && ((Number) v).longValue() == want;
    }

    private static String show(Object v) {
        if (v instanceof FutoInError) {
            return "error " + v;
        }
        if (v instanceof List) {
            List<String> s = new ArrayList<>();
            for (Object x : (List<?>) v) {
                s.add(show(x));
            }
            return s.toString();
        }
        if (v != null && v.getClass().isArray()) {
            return v.getClass().getSimpleName() + Arrays.deepToString(new Object[] {v});
        }
        return v == null ? "null" : v.getClass().getSimpleName() + " " + v;
    }

    private static long[] longs(Object v) {
        if (v instanceof long[]) {
            return (long[]) v;
        }
        if (v instanceof int[]) {
            return Arrays.stream((int[]) v).asLongStream().toArray();
        }
        return null;
    }

    // ---- cells ---------------------------------------------------------------

    static void values() {
        AsyncSteps root = new AsyncSteps(tool);
        root.successStep(42, 2.5, true, "héllo");
        fragment(root, "echo");
        Object r = run(root);
        List<?> l = r instanceof List ? (List<?>) r : List.of();
        check(l.size() == 4, "echo passed on " + show(r));
        if (l.size() == 4) {
            check(isInt(l.get(0), 42), "int came back as " + show(l.get(0)));
            check(Double.valueOf(2.5).equals(l.get(1)), "float came back as " + show(l.get(1)));
            check(Boolean.TRUE.equals(l.get(2)), "bool came back as " + show(l.get(2)));
            check("héllo".equals(l.get(3)), "str came back as " + show(l.get(3)));
        }
        root.close();

        root = new AsyncSteps(tool);
        root.successStep(new byte[] {0, 1, (byte) 0xff}, new long[] {1, 2, 3}, new double[] {0.5, 1.5});
        fragment(root, "echo");
        r = run(root);
        l = r instanceof List ? (List<?>) r : List.of();
        check(l.size() == 3, "echo of arrays passed on " + show(r));
        if (l.size() == 3) {
            check(Arrays.equals(new byte[] {0, 1, (byte) 0xff}, (l.get(0) instanceof byte[] ? (byte[]) l.get(0) : null)),
                    "bytes came back as " + show(l.get(0)));
            check(Arrays.equals(new long[] {1, 2, 3}, longs(l.get(1))), "int array came back as " + show(l.get(1)));
            check(Arrays.equals(new double[] {0.5, 1.5}, l.get(2) instanceof double[] ? (double[]) l.get(2) : null),
                    "float array came back as " + show(l.get(2)));
        }
        root.close();

        root = new AsyncSteps(tool);
        root.successStep(42, 2.5, true, "héllo");
        fragment(root, "describe");
        r = run(root);
        check("int:42,float:2.5,bool:true,str:héllo".equals(r), "describe: " + show(r));
        root.close();

        root = new AsyncSteps(tool);
        root.successStep(new byte[] {0, 1, (byte) 0xff}, new long[] {1, 2, 3}, new double[] {0.5, 1.5});
        fragment(root, "describe");
        r = run(root);
        check("bytes:0001ff,ints:1|2|3,floats:0.5|1.5".equals(r), "describe: " + show(r));
        root.close();
    }

    static void errors() {
        String[] seen = new String[2];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> fragment(asi, "fail"), (asi, code) -> {
            seen[0] = code;
            seen[1] = String.valueOf(asi.state().get("error_info"));
            asi.success();
        });
        Object r = run(root);
        check(!(r instanceof FutoInError), "the Java handler did not take it: " + show(r));
        check("FragmentError".equals(seen[0]), "code " + seen[0]);
        check(lang.equals(seen[1]), "error_info " + seen[1]);
        root.close();

        /* a Java error caught by a handler written in the other language */
        root = new AsyncSteps(tool);
        root.successStep("java", "org.futoin.polyglot.Fragments", "fail");
        fragment(root, "catch");
        r = run(root);
        check(("caught FragmentError in " + lang).equals(r), "catch gave " + show(r));
        root.close();

        /* the async stack: the other language's frame, then Java's */
        root = new AsyncSteps(tool);
        root.add(asi -> fragment(asi, "fail"));
        r = run(root);
        check(r instanceof FutoInError, "fail did not fail: " + show(r));
        if (r instanceof FutoInError) {
            StackTraceElement[] st = ((FutoInError) r).asyncStack();
            check(st.length >= 2, "async stack " + Arrays.toString(st));
            if (st.length >= 2) {
                check(st[0].getClassName().equals(lang) || st[0].getClassName().startsWith(lang + ":"),
                        "frame 0 is " + st[0]);
                check(st[0].getMethodName().contains("fail"), "frame 0 names " + st[0]);
                boolean java = false;
                for (int i = 1; i < st.length; ++i) {
                    java |= st[i].getClassName().startsWith("java:") && st[i].getFileName() != null
                            && st[i].getLineNumber() > 0;
                }
                check(java, "no later Java frame with file:line in " + Arrays.toString(st));
            }
            StringWriter w = new StringWriter();
            ((FutoInError) r).printStackTrace(new PrintWriter(w));
            String text = w.toString();
            if (System.getenv("FUTOIN_POLYGLOT_VERBOSE") != null) {
                System.out.print(text);
            }
            check(text.contains("async stack of FragmentError") && text.contains("at " + lang)
                    && text.contains("at java:org.futoin.polyglot.JavaHost."), "printStackTrace shows no async stack:\n" + text);
        }
        root.close();
    }

    static boolean cancelled(AsyncSteps root) {
        return Boolean.TRUE.equals(root.state().get("cancelled_" + lang));
    }

    static void cancelTimeout() {
        AsyncSteps root = new AsyncSteps(tool);
        fragment(root, "wait");
        AtomicReference<Object> out = new AtomicReference<>();
        root.promise().whenComplete((v, e) -> out.set(e != null ? e : v));
        tool.deferred(20, root::cancel);
        tool.run();
        check(out.get() instanceof java.util.concurrent.CancellationException, "cancel: outcome " + show(out.get()));
        check(cancelled(root), "cancel: the " + lang + " cancel handler did not run");
        root.close();

        String[] seen = new String[1];
        root = new AsyncSteps(tool);
        root.add(asi -> {
            asi.setTimeout(30);
            fragment(asi, "wait");
        }, (asi, code) -> {
            seen[0] = code;
            asi.success();
        });
        Object r = run(root);
        check("Timeout".equals(seen[0]), "timeout: Java handler saw " + seen[0] + ", outcome " + show(r));
        check(cancelled(root), "timeout: the " + lang + " cancel handler did not run");
        root.close();
    }

    static void state() {
        Object[] seen = new Object[2];
        AsyncSteps root = new AsyncSteps(tool);
        root.add(asi -> asi.state().put("key", 42));
        fragment(root, "read_state");
        root.add((asi, v) -> seen[0] = v);
        fragment(root, "write_state");
        root.add(asi -> seen[1] = asi.state().get("from_" + lang));
        Object r = run(root);
        check(!(r instanceof FutoInError), "state: " + show(r));
        check(isInt(seen[0], 42), "read_state gave " + show(seen[0]));
        check(lang.equals(seen[1]), "from_" + lang + " is " + show(seen[1]));
        Map<String, Object> s = root.state();
        check(lang.equals(s.get("from_" + lang)), "root.state() reads from_" + lang + " as " + show(s.get("from_" + lang)));
        root.close();
    }

    /**
     * The load policy: lang's {@code catch} adds a Java step by name in a
     * flow of a Tool whose policy allows lang's fragments and Java's
     * Fragments only: a class outside it is refused (the refusal caught by
     * lang's handler, error_info naming the rule); what it allows runs.
     */
    static void policy() {
        String fragments = "org.futoin.polyglot.Fragments";
        LoadPolicy p = LoadPolicy.newBuilder().allowLanguages("java", lang)
                .allowModules(lang + ":" + module(lang), "java:" + fragments).build();
        try (Tool strict = new Tool(p)) {
            try (AsyncSteps root = new AsyncSteps(strict)) {
                root.successStep("java", "java.lang.Runtime", "exec");
                fragment(root, "catch");
                Object r = run(root);
                check(("caught InvalidRequest in " + lang).equals(r), "policy: catch gave " + show(r));
                Object info = root.state().get("error_info");
                check(("load policy of this tool: java module 'java.lang.Runtime' is not allowed (no rule "
                        + "matches it; rules for java: java:" + fragments + ")").equals(info),
                        "policy: error_info " + show(info));
            }
            try (AsyncSteps root = new AsyncSteps(strict)) {
                root.state().put("key", 42);
                root.successStep("java", fragments, "read_state");
                fragment(root, "catch");
                Object r = run(root);
                check(isInt(r, 42), "policy: the allowed Java step gave " + show(r));
            }
        }
    }

    /** 10,000 flows of every kind: Java's references come back. */
    static void many() {
        long refs0 = Polyglot.globalRefs();
        for (int i = 0; i < 10_000; ++i) {
            AsyncSteps root = new AsyncSteps(tool);
            Object r;
            switch (i % 3) {
                case 0:
                    root.successStep(42, 2.5, true, "héllo");
                    fragment(root, "echo");
                    r = run(root);
                    if (!(r instanceof List)) {
                        check(false, "flow " + i + ": " + show(r));
                        root.close();
                        return;
                    }
                    break;
                case 1:
                    root.add(asi -> fragment(asi, "fail"), (asi, code) -> asi.success());
                    r = run(root);
                    if (r instanceof FutoInError) {
                        check(false, "flow " + i + ": " + show(r));
                        root.close();
                        return;
                    }
                    break;
                default:
                    fragment(root, "wait");
                    root.promise();
                    tool.immediate(root::cancel);
                    tool.run();
                    break;
            }
            root.close();
        }
        tool.run();
        check(Polyglot.globalRefs() == refs0, "JNI global refs " + refs0 + " -> " + Polyglot.globalRefs());
        check(Polyglot.liveNamedSteps() == 0, "named Java steps alive: " + Polyglot.liveNamedSteps());
        check(tool.misuseCount() == 0, "misuse reported: " + tool.misuseCount());
    }

    public static void main(String[] args) {
        String langs = System.getenv().getOrDefault("FUTOIN_POLYGLOT_LANGS", "c python lua");
        tool = new Tool();
        for (String l : langs.trim().split("[ ,]+")) {
            if (l.isEmpty()) {
                continue;
            }
            lang = l;
            int before = failed;
            try {
                values();
                errors();
                cancelTimeout();
                state();
                policy();
                many();
            } catch (RuntimeException e) {
                check(false, "threw " + e);
                e.printStackTrace();
            }
            System.out.println("java host x " + lang + ": " + (failed == before ? "ok" : "FAILED"));
        }
        tool.close();
        System.out.println("polyglot-java: " + passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }
}
