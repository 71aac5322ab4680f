package org.futoin.polyglot;

import java.lang.reflect.Array;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

import org.futoin.async.AsyncSteps;
import org.futoin.async.TraceContext;

/**
 * The polyglot fragments in Java (module "org.futoin.polyglot.Fragments"
 * of the language "java", see tests/polyglot/README.md): the same steps in
 * every language. A Java step named by module and function is a
 * {@code public static void name(AsyncSteps asi, Object... args)}; "catch"
 * is a Java keyword, so its method is {@code catch_}.
 */
public final class Fragments {
    private Fragments() {
    }

    /** success() with exactly the values received. */
    public static void echo(AsyncSteps asi, Object... args) {
        switch (args.length) {
            case 0: asi.success(); break;
            case 1: asi.success(args[0]); break;
            case 2: asi.success(args[0], args[1]); break;
            case 3: asi.success(args[0], args[1], args[2]); break;
            default: asi.success(args[0], args[1], args[2], args[3]); break;
        }
    }

    /** success(one string: what this language saw, one entry per value). */
    public static void describe(AsyncSteps asi, Object... args) {
        List<String> parts = new ArrayList<>();
        for (Object v : args) {
            parts.add(describe(v));
        }
        asi.success(parts.isEmpty() ? "none" : String.join(",", parts));
    }

    private static String describe(Object v) {
        if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte
                || v instanceof BigInteger) {
            return "int:" + v;
        } else if (v instanceof Double || v instanceof Float) {
            return "float:" + number(((Number) v).doubleValue(), v instanceof Float);
        } else if (v instanceof Boolean) {
            return "bool:" + v;
        } else if (v instanceof String) {
            return "str:" + v;
        } else if (v instanceof byte[]) {
            StringBuilder sb = new StringBuilder("bytes:");
            for (byte b : (byte[]) v) {
                sb.append(String.format("%02x", b & 0xff));
            }
            return sb.toString();
        } else if (v instanceof double[] || v instanceof float[]) {
            List<String> xs = new ArrayList<>();
            for (int i = 0; i < Array.getLength(v); ++i) {
                xs.add(number(((Number) Array.get(v, i)).doubleValue(), v instanceof float[]));
            }
            return "floats:" + String.join("|", xs);
        } else if (v instanceof long[] || v instanceof int[] || v instanceof short[]) {
            List<String> xs = new ArrayList<>();
            for (int i = 0; i < Array.getLength(v); ++i) {
                xs.add(String.valueOf(Array.get(v, i)));
            }
            return "ints:" + String.join("|", xs);
        }
        return "other:" + (v == null ? "null" : v.getClass().getSimpleName());
    }

    /** Shortest text that reads back as the same number (2.5, 0.5, 3). */
    private static String number(double d, boolean single) {
        String s = single ? Float.toString((float) d) : Double.toString(d);
        return s.endsWith(".0") ? s.substring(0, s.length() - 2) : s;
    }

    /** error "FragmentError", error_info "java". */
    public static void fail(AsyncSteps asi, Object... args) {
        throw asi.error("FragmentError", "java");
    }

    /** Waits for ever; its cancel handler sets cancelled_java. */
    public static void wait(AsyncSteps asi, Object... args) {
        asi.setCancel(a -> a.state().put("cancelled_java", true));
    }

    /** success(shared state "key"). */
    public static void read_state(AsyncSteps asi, Object... args) {
        Object v = asi.state().get("key");
        if (v == null) {
            asi.success();
        } else {
            asi.success(v);
        }
    }

    /** shared state "from_java" = "java". */
    public static void write_state(AsyncSteps asi, Object... args) {
        asi.state().put("from_java", "java");
        asi.success();
    }

    /** catch(language, module, function): that step of another language,
     *  under a handler written in Java. */
    public static void catch_(AsyncSteps asi, Object... args) {
        if (args.length < 3 || !(args[0] instanceof String) || !(args[1] instanceof String)
                || !(args[2] instanceof String)) {
            throw asi.error("InvalidRequest", "java catch: three strings expected");
        }
        String lang = (String) args[0];
        String module = (String) args[1];
        String function = (String) args[2];
        asi.add(a -> a.addForeign(lang, module, function),
                (a, code) -> a.success("caught " + code + " in java"));
    }

    /** The C host's trace chain C -> Python -> Lua -> Java, its last link:
     *  records the trace context it sees in shared state "trace_java"
     *  ("<trace id> <span id> <parent span id>", or "none"). */
    public static void trace_nest(AsyncSteps asi, Object... args) {
        TraceContext t = asi.trace();
        asi.state().put("trace_java",
                t == null ? "none" : t.traceId() + " " + t.spanId() + " " + t.parentSpanId());
        asi.success();
    }
}
