package org.futoin.async;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Polyglot flows: steps written in C, Python, Lua and Java in one flow, on
 * one loop thread (futoin/sys/host.h).
 *
 * <h2>Java steps in other languages' flows</h2>
 * The language host "java" turns a {@code public static} method of a
 * {@code public} class on the class path into a step. Module: the class's
 * fully qualified name; function: the method's name. The method must be
 * exactly
 * <pre>{@code
 * public static void name(AsyncSteps asi, Object... args)
 * }</pre>
 * {@code args} are the previous step's values (0 to 4), as in
 * {@link AsyncSteps}. A function named by a Java keyword (e.g. {@code catch})
 * resolves to the method with a trailing underscore ({@code catch_}).
 * The step behaves like any Java step: {@code success()}, {@code error()},
 * exceptions as {@code InternalError} with the stack trace, cancel
 * handlers, timeouts, {@code state()}.
 *
 * <p>In a C, Python or Lua program the JVM is started on first use by the
 * plug-in {@code libfutoin_host_java.so} (or the JVM already running in the
 * process is used), found through {@code JAVA_HOME} or the {@code java} on
 * {@code PATH}: options {@code -Xrs} and a class path of this jar and the
 * absolute entries of {@code CLASSPATH}, where the classes of the steps
 * are; extra options in {@code FUTOIN_JAVA_OPTIONS} (blank-separated). In
 * a Java program the binding registers the "java" host itself when it is
 * loaded.
 *
 * <h2>Other languages' steps in a Java flow</h2>
 * {@link AsyncSteps#addForeign(String, String, String)} adds a step of
 * another language by name, e.g. {@code asi.addForeign("python",
 * "pricing", "apply")}; the language's runtime is started in this process
 * on first use (its plug-in is found where the language's package is
 * installed: the venv or {@code PYTHONPATH}, {@code LUA_CPATH}; see the
 * top README, "Polyglot set-up").
 *
 * <h2>Errors across languages</h2>
 * An error's async stack (from the failing step to the root, across
 * languages) is {@link AsyncSteps#asyncStack()} in an error handler and
 * {@link FutoInError#asyncStack()} on the exception of an unhandled error;
 * its text is part of {@code printStackTrace()}.
 */
public final class Polyglot {
    private Polyglot() {
    }

    /** A resolved named step: one per class and method, reused. */
    static final class NamedStep implements RootCtl.ValuesStep {
        private static final MethodType TYPE = MethodType.methodType(void.class, AsyncSteps.class, Object[].class);
        final Method method;
        private final MethodHandle mh;
        private volatile long origin;

        NamedStep(Method method, MethodHandle mh) {
            this.method = method;
            this.mh = mh.asFixedArity().asType(TYPE);
        }

        @Override
        public void execute(AsyncSteps asi, Object[] values) throws Exception {
            try {
                mh.invokeExact(asi, values);
            } catch (Exception | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new RuntimeException(t);
            }
        }

        long origin() {
            long o = origin;
            if (o == 0) {
                o = origin = Origins.ofMethod(method.getDeclaringClass(), method.getName(), null);
            }
            return o;
        }
    }

    private static final ConcurrentHashMap<String, NamedStep> STEPS = new ConcurrentHashMap<>();

    /** The java host's resolve(): a Rec running the method, or why not. */
    static Object resolve(String module, String function) {
        String key = module + '\0' + function;
        NamedStep s = STEPS.get(key);
        if (s == null) {
            Object r = find(module, function);
            if (!(r instanceof NamedStep)) {
                return Values.cstr((String) r);
            }
            s = (NamedStep) r;
            NamedStep had = STEPS.putIfAbsent(key, s);
            if (had != null) {
                s = had;
            }
        }
        return new Rec(s, Rec.ALL, null, null, null);
    }

    private static String what(String module, String function) {
        return "java: cannot resolve " + module + "." + function + ": ";
    }

    /** A NamedStep, or the message saying why not. */
    private static Object find(String module, String function) {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        if (loader == null) {
            loader = ClassLoader.getSystemClassLoader();
        }
        Class<?> c;
        try {
            c = Class.forName(module, true, loader);
        } catch (ClassNotFoundException e) {
            return what(module, function) + "no class '" + module + "' on the class path";
        } catch (LinkageError e) {
            Throwable why = e instanceof ExceptionInInitializerError && e.getCause() != null ? e.getCause() : e;
            return what(module, function) + "class '" + module + "' failed to load: " + why;
        }
        Method m = method(c, function);
        if (m == null) {
            m = method(c, function + "_");
        }
        if (m == null) {
            return what(module, function) + "class '" + module + "' has no method 'public static void "
                    + function + "(AsyncSteps asi, Object... args)'";
        }
        if (!Modifier.isPublic(c.getModifiers())) {
            return what(module, function) + "class '" + module + "' is not public";
        }
        try {
            return new NamedStep(m, MethodHandles.publicLookup().unreflect(m));
        } catch (IllegalAccessException e) {
            return what(module, function) + e.getMessage();
        }
    }

    private static Method method(Class<?> c, String name) {
        for (Method m : c.getMethods()) {
            Class<?>[] p = m.getParameterTypes();
            if (m.getName().equals(name) && Modifier.isStatic(m.getModifiers()) && m.getReturnType() == void.class
                    && p.length == 2 && p[0] == AsyncSteps.class && p[1] == Object[].class) {
                return m;
            }
        }
        return null;
    }

    /** For the host plug-in (called through JNI): the binding's host table. */
    static long hostTable() {
        return FutoInNative.host_table_address();
    }

    /**
     * Steps made by the java host for other languages' flows that the
     * runtime has not released yet (0 when no such flow is alive).
     *
     * @return the count
     */
    public static long liveNamedSteps() {
        return FutoInNative.named_steps();
    }

    /**
     * JNI global references the binding holds (callbacks, custom values,
     * state maps, tools); back at its baseline when flows are done.
     *
     * @return the count
     */
    public static long globalRefs() {
        return FutoInNative.global_refs();
    }

    /* AsyncSteps.addForeign(language, module, function): futoin_host_add() */
    static AsyncSteps addForeign(AsyncSteps asi, String language, String module, String function) {
        long b = asi.flowCheck("addForeign()");
        Objects.requireNonNull(language, "addForeign(): language is null");
        Objects.requireNonNull(module, "addForeign(): module is null");
        Objects.requireNonNull(function, "addForeign(): function is null");
        FutoInNative.host_add(b, Values.cstr(Values.name(language, "addForeign() language")),
                Values.cstr(Values.name(module, "addForeign() module")),
                Values.cstr(Values.name(function, "addForeign() function")));
        return asi;
    }
}
