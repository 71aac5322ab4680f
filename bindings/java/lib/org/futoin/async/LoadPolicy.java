package org.futoin.async;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What flows may load by name: an allow-list of languages and of modules
 * (futoin/sys/host.h, {@code futoin_host_policy_set()}), in the manner of
 * GraalVM's {@code Context.Builder} and its {@code HostAccess} policies.
 *
 * <p>Adding a step by name ({@link AsyncSteps#addForeign(String, String,
 * String)}, and the steps that steps of other languages add by name)
 * <em>runs code</em>: it starts a language's runtime and loads the module
 * named (a Java class, a Python module, a Lua module, a shared object).
 * Step names are code, not data: never build one from input a user
 * controls, or restrict what a flow may load with a policy:
 * <pre>{@code
 * LoadPolicy policy = LoadPolicy.newBuilder()
 *         .allowLanguages("java", "c", "python")
 *         .allowModules("java:org.example.*", "c:libm.so.6", "python:pricing")
 *         .build();
 * try (Tool tool = new Tool(policy)) {
 *     // a flow adding ("lua", "x", "f") or ("python", "os", "system") now
 *     // fails that step with InvalidRequest: "load policy of this tool:
 *     // language 'lua' is not allowed (languages: java, c, python)"
 * }
 * }</pre>
 *
 * <ul>
 * <li>Languages: those a step may be written in. Not given: all; given
 * empty ({@code allowLanguages()}): none.</li>
 * <li>Modules: rules {@code "language:name"}, the exact name
 * ({@code "lua:pricing"}, {@code "c:libm.so.6"},
 * {@code "c:/opt/app/lib/libsteps.so"}) or a prefix followed by {@code *}
 * ({@code "java:org.example.*"} matches {@code org.example.Totals} and
 * {@code org.example.sub.X}, not {@code org.example}; {@code "python:*"}
 * every Python module). Not given: every module of an allowed language;
 * given, a language without rules has no module allowed. A {@code *} is
 * only allowed last, and a prefix rule never matches a name containing
 * {@code ".."}.</li>
 * </ul>
 *
 * <p>A step outside the policy fails with {@code InvalidRequest} whose
 * error_info names the rule that refused it, before its language's plug-in
 * is even looked for. A policy is applied to a tool by
 * {@link Tool#Tool(LoadPolicy)}, {@link Tool#startThread(String, boolean,
 * LoadPolicy)} or {@link Tool#setLoadPolicy(LoadPolicy)}, and to every flow
 * of the process by {@link #setForProcess(LoadPolicy)}; each is set once, so
 * code running in a flow cannot widen it. Immutable and thread-safe.
 */
public final class LoadPolicy {
    /* A language name as the library takes one: 1 to 32 ASCII letters,
     * digits, '_' or '-'. */
    private static final Pattern LANGUAGE = Pattern.compile("[A-Za-z0-9_-]{1,32}");

    private final List<String> languages; /* null: all */
    private final List<String> modules;   /* null: all */

    private LoadPolicy(List<String> languages, List<String> modules) {
        this.languages = languages == null ? null : Collections.unmodifiableList(new ArrayList<>(languages));
        this.modules = modules == null ? null : Collections.unmodifiableList(new ArrayList<>(modules));
    }

    /**
     * @return a builder of a policy that allows everything until told
     *         otherwise
     */
    public static Builder newBuilder() {
        return new Builder();
    }

    /**
     * @return the languages allowed, or empty when every language is
     */
    public Optional<List<String>> languages() {
        return Optional.ofNullable(languages);
    }

    /**
     * @return the module rules, or empty when every module of an allowed
     *         language is allowed
     */
    public Optional<List<String>> modules() {
        return Optional.ofNullable(modules);
    }

    @Override
    public String toString() {
        return "LoadPolicy[languages=" + (languages == null ? "all" : languages) + ", modules="
                + (modules == null ? "all" : modules) + "]";
    }

    /**
     * Builds a {@link LoadPolicy}. Each entry is checked where it is given:
     * a null array or entry throws NullPointerException, a bad one
     * IllegalArgumentException naming it (a NUL character, a name that is
     * not a language name, a rule without {@code "language:"}, with an
     * empty name or with a {@code *} before its end).
     */
    public static final class Builder {
        private List<String> languages;
        private List<String> modules;

        private Builder() {
        }

        /**
         * Allows steps in these languages (added to those of earlier
         * calls). Once called, a language it was not given is refused;
         * called with none, no language is allowed.
         *
         * @param names language names: "c", "python", "lua", "java", ...
         * @return this builder
         * @throws NullPointerException if names or one of them is null
         * @throws IllegalArgumentException for a name that is not a
         *         language name
         */
        public Builder allowLanguages(String... names) {
            languages = joined(languages, checked(names, "allowLanguages()", false));
            return this;
        }

        /**
         * Allows the modules these rules match (added to those of earlier
         * calls). Once called, a module no rule of its language matches is
         * refused.
         *
         * @param rules {@code "language:name"} or {@code "language:prefix*"}
         * @return this builder
         * @throws NullPointerException if rules or one of them is null
         * @throws IllegalArgumentException for a rule of a bad shape
         */
        public Builder allowModules(String... rules) {
            modules = joined(modules, checked(rules, "allowModules()", true));
            return this;
        }

        /** `to` (null: a new list) with `add` appended. */
        private static List<String> joined(List<String> to, List<String> add) {
            List<String> out = to == null ? new ArrayList<>() : to;
            out.addAll(add);
            return out;
        }

        /**
         * @return the policy (the builder can go on being used)
         */
        public LoadPolicy build() {
            return new LoadPolicy(languages, modules);
        }

        private static List<String> checked(String[] entries, String what, boolean rules) {
            Objects.requireNonNull(entries, what + ": the array is null");
            List<String> out = new ArrayList<>(entries.length);
            for (int i = 0; i < entries.length; ++i) {
                String e = entries[i];
                String at = what + ": entry " + i;
                Objects.requireNonNull(e, at + " is null");
                Values.name(e, at);
                if (rules) {
                    checkRule(e, at);
                } else if (!LANGUAGE.matcher(e).matches()) {
                    throw new IllegalArgumentException(at + ": '" + e
                            + "' is not a language name (1 to 32 letters, digits, '_' or '-')");
                }
                out.add(e);
            }
            return out;
        }

        private static void checkRule(String rule, String at) {
            int colon = rule.indexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException(at + ": '" + rule
                        + "' is not a rule 'language:module' (e.g. 'lua:pricing', 'java:org.example.*')");
            }
            String language = rule.substring(0, colon);
            String module = rule.substring(colon + 1);
            if (!LANGUAGE.matcher(language).matches()) {
                throw new IllegalArgumentException(at + ": '" + rule + "': '" + language
                        + "' is not a language name");
            }
            if (module.isEmpty()) {
                throw new IllegalArgumentException(at + ": '" + rule + "' names no module");
            }
            int star = module.indexOf('*');
            if (star >= 0 && star != module.length() - 1) {
                throw new IllegalArgumentException(at + ": '" + rule
                        + "': '*' is only allowed last (a prefix rule, e.g. 'java:org.example.*')");
            }
        }
    }

    /**
     * Restricts what every flow of this process may load by name, in every
     * language, on top of each tool's own policy (a step must pass both).
     * Set once per process, whichever language sets it.
     *
     * @param policy the policy
     * @throws NullPointerException if policy is null
     * @throws IllegalStateException if the process has a load policy
     *         already
     */
    public static void setForProcess(LoadPolicy policy) {
        Objects.requireNonNull(policy, "setForProcess(): policy is null");
        policy.apply(0, "LoadPolicy.setForProcess()", "this process");
    }

    /** futoin_host_policy_set() of the futoin_tool* `core` (0: the process). */
    void apply(long core, String what, String whose) {
        int rc = FutoInNative.policy_set(core, packed(languages), count(languages), packed(modules),
                count(modules));
        if (rc == -16) { /* FUTOIN_EBUSY */
            throw new IllegalStateException(what + ": " + whose
                    + " has a load policy already; it is set once, so that code running in a flow cannot widen it");
        } else if (rc == -12) { /* FUTOIN_ENOMEM */
            throw new OutOfMemoryError(what + ": out of native memory");
        } else if (rc == -22) { /* FUTOIN_EINVAL: what the builder lets through is what the library takes */
            throw new IllegalArgumentException(what + ": the library refused the policy " + this);
        } else if (rc != 0) {
            throw new IllegalStateException(what + ": futoin_host_policy_set() failed (" + rc + ")");
        }
    }

    /** Tool.setLoadPolicy(): this policy, set once, on a Tool of Java's own. */
    void setOn(Tool tool, String what) {
        tool.refuseBorrowed(what, "that program sets its load policy");
        synchronized (tool.life) { /* ToolClose.freeNative() takes `life` before it frees */
            if (tool.closed || tool.ptr == 0) {
                throw new IllegalStateException(what + ": the Tool is closed");
            }
            apply(FutoInNative.tool_ptr(tool.ptr), what, "this Tool");
        }
    }

    /** A new tool's first policy; the tool is closed if it cannot be set. */
    void applyOrClose(Tool tool, String what) {
        try {
            setOn(tool, what);
        } catch (RuntimeException | Error e) {
            tool.close();
            throw e;
        }
    }

    private static int count(List<String> l) {
        return l == null ? -1 : l.size();
    }

    /** The entries as UTF-8, each followed by a NUL; null for null. */
    private static byte[] packed(List<String> l) {
        if (l == null) {
            return null;
        }
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (String s : l) {
            b.writeBytes(s.getBytes(StandardCharsets.UTF_8));
            b.write(0);
        }
        return b.toByteArray();
    }
}
