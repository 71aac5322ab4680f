package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import org.junit.Test;

/**
 * The load policy (issue 23: "loading is code execution"): what the flows
 * of a Tool, or of the whole process, may add by name. LoadPolicy,
 * {@code new Tool(policy)}, {@code Tool.startThread(name, daemon, policy)},
 * {@code Tool.setLoadPolicy()} and {@code LoadPolicy.setForProcess()} over
 * futoin_host_policy_set(); the rules themselves are the core's
 * (tests/test_policy.c). Steps of C and Java adding steps by name in a Java
 * flow are held to it here; Python's and Lua's in the polyglot matrix
 * (bindings/java/tests/polyglot, JavaHost's "load policy" cell).
 */
public class LoadPolicyTest {
    /** Named steps: public static void name(AsyncSteps, Object...). */
    public static final class Steps {
        private Steps() {
        }

        /** @param asi the step @param args one int, passed on doubled */
        public static void twice(AsyncSteps asi, Object... args) {
            asi.success(((Number) args[0]).intValue() * 2);
        }

        /** @param asi the step @param args ignored; passes on 42 */
        public static void answer(AsyncSteps asi, Object... args) {
            asi.success(42);
        }

        /** Adds the step named by (language, module, function).
         *  @param asi the step @param args the name */
        public static void addNamed(AsyncSteps asi, Object... args) {
            asi.addForeign((String) args[0], (String) args[1], (String) args[2]);
        }
    }

    /** Another class of the same package: outside a rule naming Steps. */
    public static final class Other {
        private Other() {
        }

        /** @param asi the step @param args ignored */
        public static void ping(AsyncSteps asi, Object... args) {
            asi.success("pong");
        }
    }

    private static final String STEPS = Steps.class.getName();
    private static final String OTHER = Other.class.getName();
    private static final String[] HYPOT = {"c", "libm.so.6", "double hypot(double, double)"};
    private static final String[] TWICE = {"java", STEPS, "twice"};

    /** The polyglot matrix's C fragments (build.sh puts them among the test classes). */
    private static File cfrag() {
        URL u = LoadPolicyTest.class.getResource("/cfrag/libpolyglot_fragments.so");
        assertNotNull("build.sh did not build cfrag/libpolyglot_fragments.so", u);
        try {
            return Paths.get(u.toURI()).toFile();
        } catch (URISyntaxException e) {
            throw new AssertionError(e);
        }
    }

    private static Object runOne(Tool tool, Object first, String... named) {
        try (AsyncSteps root = new AsyncSteps(tool)) {
            root.successStep(first).addForeign(named[0], named[1], named[2]);
            return root.run();
        }
    }

    /** The named step's error: InvalidRequest, its info returned; no later step runs. */
    private static String refused(Tool tool, Object first, String... named) {
        try (AsyncSteps root = new AsyncSteps(tool)) {
            root.successStep(first).addForeign(named[0], named[1], named[2]);
            root.add(asi -> fail("a step after the refused one ran"));
            try {
                root.run();
            } catch (FutoInError e) {
                assertEquals(e.info(), "InvalidRequest", e.code());
                return e.info();
            }
            throw new AssertionError("not refused: " + String.join(" ", named));
        }
    }

    private static LoadPolicy.Builder policy() {
        return LoadPolicy.newBuilder();
    }

    // ---- what the policy allows and refuses ------------------------------------

    private static Object hypot(Tool tool) {
        try (AsyncSteps root = new AsyncSteps(tool)) {
            root.successStep(3.0, 4.0).addForeign(HYPOT[0], HYPOT[1], HYPOT[2]);
            return root.run();
        }
    }

    @Test
    public void withoutAPolicyEverythingIsAllowed() {
        try (Tool tool = new Tool()) {
            assertEquals(42, runOne(tool, 21, TWICE));
            assertEquals("pong", runOne(tool, 0, "java", OTHER, "ping"));
            assertEquals(5.0, hypot(tool));
        }
    }

    @Test
    public void allowedLanguagesAndModulesRun() {
        LoadPolicy p = policy().allowLanguages("java", "c").allowModules("java:" + STEPS, "c:libm.so.6").build();
        try (Tool tool = new Tool(p)) {
            assertEquals(42, runOne(tool, 21, TWICE));
            assertEquals(5.0, hypot(tool));
        }
    }

    @Test
    public void aLanguageNotListedIsRefusedNamingTheRule() {
        try (Tool tool = new Tool(policy().allowLanguages("java").build())) {
            assertEquals("load policy of this tool: language 'c' is not allowed (languages: java)",
                    refused(tool, 3.0, HYPOT));
            /* refused before its plug-in is looked for: no "no plug-in found" */
            assertEquals("load policy of this tool: language 'cobol' is not allowed (languages: java)",
                    refused(tool, 1, "cobol", "payroll", "run"));
            assertEquals(42, runOne(tool, 21, TWICE));
        }
    }

    @Test
    public void anEmptyListAllowsNoLanguage() {
        try (Tool tool = new Tool(policy().allowLanguages().build())) {
            assertEquals("load policy of this tool: language 'java' is not allowed (languages: none)",
                    refused(tool, 21, TWICE));
        }
    }

    @Test
    public void aModuleOutsideItsRulesIsRefused() {
        LoadPolicy p = policy().allowModules("java:" + STEPS, "java:org.example.*", "c:libm.so.6").build();
        String rules = "(no rule matches it; rules for java: java:" + STEPS + ", java:org.example.*)";
        try (Tool tool = new Tool(p)) {
            assertEquals("load policy of this tool: java module '" + OTHER + "' is not allowed " + rules,
                    refused(tool, 1, "java", OTHER, "ping"));
            assertEquals("load policy of this tool: java module 'java.lang.Runtime' is not allowed " + rules,
                    refused(tool, 1, "java", "java.lang.Runtime", "exec"));
            /* a prefix rule: not the package itself */
            assertEquals("load policy of this tool: java module 'org.example' is not allowed " + rules,
                    refused(tool, 1, "java", "org.example", "f"));
            assertEquals("load policy of this tool: c module 'libc.so.6' is not allowed (no rule matches it; "
                    + "rules for c: c:libm.so.6)", refused(tool, -3, "c", "libc.so.6", "int abs(int)"));
            assertEquals(42, runOne(tool, 21, TWICE));
        }
    }

    @Test
    public void aPrefixRuleAllowsWhatStartsWithIt() {
        try (Tool tool = new Tool(policy().allowModules("java:org.futoin.async.LoadPolicyTest$*").build())) {
            assertEquals(42, runOne(tool, 21, TWICE));
            assertEquals("pong", runOne(tool, 0, "java", OTHER, "ping"));
        }
    }

    @Test
    public void aLanguageWithoutRulesHasNoModuleAllowed() {
        try (Tool tool = new Tool(policy().allowModules("c:libm.so.6").build())) {
            assertEquals("load policy of this tool: java module '" + STEPS + "' is not allowed "
                    + "(no rule names java modules)", refused(tool, 21, TWICE));
        }
    }

    @Test
    public void dotDotDoesNotClimbOutOfAFolderRule() {
        File so = cfrag();
        String folder = so.getParent();
        try (Tool tool = new Tool(policy().allowModules("c:" + folder + "/*").build())) {
            assertEquals(List.of(42, "x"), runOne2(tool, 42, "x", "c", so.getPath(), "echo"));
            /* the same file, reached through "..": refused, not loaded */
            String climbing = folder + "/sub/../" + so.getName();
            assertEquals("load policy of this tool: c module '" + climbing + "' is not allowed (no rule "
                    + "matches it; rules for c: c:" + folder + "/*)", refused(tool, 1, "c", climbing, "echo"));
        }
    }

    private static Object runOne2(Tool tool, Object a, Object b, String... named) {
        try (AsyncSteps root = new AsyncSteps(tool)) {
            root.successStep(a, b).addForeign(named[0], named[1], named[2]);
            return root.run();
        }
    }

    // ---- steps adding steps by name in a Java flow -----------------------------

    @Test
    public void aCStepAddingAJavaStepIsHeldToTheToolsPolicy() {
        /* the C fragment `catch` adds the step its values name under an
         * error handler of its own, which makes the error "caught <code> in c" */
        String c = cfrag().getPath();
        LoadPolicy p = policy().allowLanguages("java", "c").allowModules("c:" + c, "java:" + STEPS).build();
        try (Tool tool = new Tool(p)) {
            try (AsyncSteps root = new AsyncSteps(tool)) {
                root.successStep("java", OTHER, "ping").addForeign("c", c, "catch");
                assertEquals("caught InvalidRequest in c", root.run());
                assertEquals("load policy of this tool: java module '" + OTHER + "' is not allowed (no rule "
                        + "matches it; rules for java: java:" + STEPS + ")", root.state().get("error_info"));
            }
            /* what the policy names runs when the C step adds it */
            try (AsyncSteps root = new AsyncSteps(tool)) {
                root.successStep("java", STEPS, "answer").addForeign("c", c, "catch");
                assertEquals(42, root.run());
            }
        }
        /* the same C step, a tool without a policy: Other.ping runs */
        try (Tool tool = new Tool(); AsyncSteps root = new AsyncSteps(tool)) {
            root.successStep("java", OTHER, "ping").addForeign("c", c, "catch");
            assertEquals("pong", root.run());
        }
    }

    @Test
    public void aJavaStepAddingAStepByNameIsHeldToTheToolsPolicy() {
        try (Tool tool = new Tool(policy().allowLanguages("java").allowModules("java:" + STEPS).build())) {
            try (AsyncSteps root = new AsyncSteps(tool)) {
                root.successStep(HYPOT[0], HYPOT[1], HYPOT[2]).addForeign("java", STEPS, "addNamed");
                root.add(asi -> fail("a step after the refused one ran"));
                FutoInError e = null;
                try {
                    root.run();
                } catch (FutoInError x) {
                    e = x;
                }
                assertNotNull("not refused", e);
                assertEquals("InvalidRequest", e.code());
                assertEquals("load policy of this tool: language 'c' is not allowed (languages: java)", e.info());
            }
            try (AsyncSteps root = new AsyncSteps(tool)) {
                root.successStep("java", STEPS, "answer").addForeign("java", STEPS, "addNamed");
                assertEquals(42, root.run());
            }
        }
    }

    // ---- set once --------------------------------------------------------------

    @Test
    public void aSecondPolicyForAToolIsRefusedAndChangesNothing() {
        try (Tool tool = new Tool(policy().allowLanguages("java").build())) {
            for (LoadPolicy wider : new LoadPolicy[] {policy().build(), policy().allowLanguages("java", "c").build()}) {
                try {
                    tool.setLoadPolicy(wider);
                    fail("a second policy was taken");
                } catch (IllegalStateException e) {
                    assertEquals("setLoadPolicy(): this Tool has a load policy already; it is set once, so that "
                            + "code running in a flow cannot widen it", e.getMessage());
                }
            }
            assertTrue(refused(tool, 3.0, HYPOT).startsWith("load policy of this tool: language 'c'"));
        }
    }

    @Test
    public void setLoadPolicyOnAToolMadeWithoutOne() {
        try (Tool tool = new Tool()) {
            assertEquals("pong", runOne(tool, 0, "java", OTHER, "ping"));
            tool.setLoadPolicy(policy().allowModules("java:" + STEPS).build());
            assertEquals("load policy of this tool: java module '" + OTHER + "' is not allowed (no rule "
                    + "matches it; rules for java: java:" + STEPS + ")", refused(tool, 0, "java", OTHER, "ping"));
            assertEquals(42, runOne(tool, 21, TWICE));
            try {
                tool.setLoadPolicy(policy().allowModules("java:" + STEPS).build());
                fail("set twice");
            } catch (IllegalStateException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("has a load policy already"));
            }
        }
    }

    @Test
    public void aClosedToolTakesNoPolicy() {
        Tool tool = new Tool();
        tool.close();
        try {
            tool.setLoadPolicy(policy().allowLanguages("c").build());
            fail("a closed tool took a policy");
        } catch (IllegalStateException e) {
            assertEquals("setLoadPolicy(): the Tool is closed", e.getMessage());
        }
    }

    @Test
    public void policiesArePerTool() {
        try (Tool strict = new Tool(policy().allowLanguages("c").build()); Tool free = new Tool()) {
            assertTrue(refused(strict, 21, TWICE).startsWith("load policy of this tool"));
            assertEquals(42, runOne(free, 21, TWICE));
        }
    }

    @Test
    public void aToolOnItsOwnThreadHasItsPolicyFromTheStart() throws Exception {
        Tool tool = Tool.startThread("policy-test", true, policy().allowLanguages("c").build());
        try {
            Object r = tool.promise(root -> root.successStep(21).addForeign(TWICE[0], TWICE[1], TWICE[2]))
                    .handle((v, e) -> e instanceof CompletionException ? e.getCause() : e != null ? e : v)
                    .get(60, TimeUnit.SECONDS);
            assertTrue(String.valueOf(r), r instanceof FutoInError);
            assertEquals("load policy of this tool: language 'java' is not allowed (languages: c)",
                    ((FutoInError) r).info());
            try {
                tool.setLoadPolicy(policy().build());
                fail("set twice");
            } catch (IllegalStateException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("has a load policy already"));
            }
        } finally {
            tool.close();
        }
    }

    // ---- the value: immutable, checked where an entry is given -----------------

    @Test
    public void aPolicyIsAnImmutableValue() {
        LoadPolicy.Builder b = policy();
        LoadPolicy all = b.build();
        assertEquals(Optional.empty(), all.languages());
        assertEquals(Optional.empty(), all.modules());
        LoadPolicy some = b.allowLanguages("java").allowLanguages("c").allowModules("c:libm.so.6").build();
        b.allowLanguages("lua").allowModules("lua:x");
        assertEquals(Optional.of(List.of("java", "c")), some.languages());
        assertEquals(Optional.of(List.of("c:libm.so.6")), some.modules());
        assertEquals(Optional.empty(), all.languages());
        try {
            some.languages().get().add("python");
            fail("the list can be changed");
        } catch (UnsupportedOperationException e) {
            /* expected */
        }
        assertEquals("LoadPolicy[languages=[java, c], modules=[c:libm.so.6]]", some.toString());
        assertEquals("LoadPolicy[languages=all, modules=all]", all.toString());
    }

    /** (languages?, entries, message) of entries refused with IllegalArgumentException. */
    private static final Object[][] BAD = {
        {true, new String[] {"ja\0va"}, "allowLanguages(): entry 0 contains a NUL character: \"ja\\0va\""},
        {false, new String[] {"c:libm.so.6", "java:org\0.x"},
            "allowModules(): entry 1 contains a NUL character: \"java:org\\0.x\""},
        {true, new String[] {"no/such"}, "allowLanguages(): entry 0: 'no/such' is not a language name"},
        {true, new String[] {""}, "allowLanguages(): entry 0: '' is not a language name"},
        {true, new String[] {"x".repeat(33)}, "is not a language name"},
        {false, new String[] {"libm.so.6"}, "allowModules(): entry 0: 'libm.so.6' is not a rule 'language:module'"},
        {false, new String[] {":libm.so.6"}, "is not a rule 'language:module'"},
        {false, new String[] {""}, "allowModules(): entry 0: '' is not a rule 'language:module'"},
        {false, new String[] {"c:"}, "allowModules(): entry 0: 'c:' names no module"},
        {false, new String[] {"py thon:x"}, "'py thon' is not a language name"},
        {false, new String[] {"java:org.*.Totals"},
            "allowModules(): entry 0: 'java:org.*.Totals': '*' is only allowed last"},
        {false, new String[] {"java:*x"}, "'*' is only allowed last"},
    };

    @Test
    public void badEntriesAreRefusedWhereTheyAreGivenAndAddNothing() {
        for (Object[] bad : BAD) {
            LoadPolicy.Builder b = policy().allowLanguages("c").allowModules("c:libm.so.6");
            String[] entries = (String[]) bad[1];
            try {
                if ((Boolean) bad[0]) {
                    b.allowLanguages(entries);
                } else {
                    b.allowModules(entries);
                }
                fail("taken: " + String.join(",", entries));
            } catch (IllegalArgumentException e) {
                assertTrue(e.getMessage() + " does not say " + bad[2], e.getMessage().contains((String) bad[2]));
            }
            /* nothing of the refused call was added, the builder goes on */
            LoadPolicy p = b.build();
            assertEquals(Optional.of(List.of("c")), p.languages());
            assertEquals(Optional.of(List.of("c:libm.so.6")), p.modules());
        }
    }

    private static void npe(Runnable r, String says) {
        try {
            r.run();
            fail("no NullPointerException: " + says);
        } catch (NullPointerException e) {
            assertEquals(says, e.getMessage());
        }
    }

    @Test
    public void nullsAreRefusedNamingTheArgument() {
        npe(() -> policy().allowLanguages((String[]) null), "allowLanguages(): the array is null");
        npe(() -> policy().allowLanguages("c", null), "allowLanguages(): entry 1 is null");
        npe(() -> policy().allowModules((String[]) null), "allowModules(): the array is null");
        npe(() -> policy().allowModules((String) null), "allowModules(): entry 0 is null");
        npe(() -> new Tool((LoadPolicy) null), "Tool(policy): policy is null");
        npe(() -> Tool.startThread("x", true, null), "startThread(): policy is null");
        npe(() -> LoadPolicy.setForProcess(null), "setForProcess(): policy is null");
        try (Tool tool = new Tool()) {
            npe(() -> tool.setLoadPolicy(null), "setLoadPolicy(): policy is null");
            tool.setLoadPolicy(policy().allowLanguages("c").build()); /* nothing was set before */
            assertTrue(refused(tool, 21, TWICE).startsWith("load policy of this tool: language 'java'"));
        }
    }

    // ---- the process's policy (a JVM of its own: it is set once for good) ------

    /** The child JVM's program: prints one line per outcome. */
    public static final class ProcessPolicy {
        private ProcessPolicy() {
        }

        private static String outcome(Tool tool, Object first, String... named) {
            try (tool; AsyncSteps root = new AsyncSteps(tool)) {
                root.successStep(first).addForeign(named[0], named[1], named[2]);
                return String.valueOf(root.run());
            } catch (FutoInError e) {
                return e.code() + ": " + e.info();
            }
        }

        public static void main(String[] args) {
            System.out.println(outcome(new Tool(), 21, TWICE)); /* nothing set yet */
            LoadPolicy.setForProcess(LoadPolicy.newBuilder().allowLanguages("java", "c")
                    .allowModules("c:libm.so.6", "java:" + STEPS).build());
            try {
                LoadPolicy.setForProcess(LoadPolicy.newBuilder().build());
            } catch (IllegalStateException e) {
                System.out.println("IllegalStateException " + e.getMessage());
            }
            System.out.println(outcome(new Tool(), 21, TWICE));
            System.out.println(outcome(new Tool(), 0, "java", OTHER, "ping"));
            System.out.println(outcome(new Tool(), 1, "lua", "pricing", "apply"));
            /* the tool's policy applies as well */
            System.out.println(outcome(new Tool(LoadPolicy.newBuilder().allowLanguages("c").build()), 21, TWICE));
        }
    }

    @Test
    public void theProcessPolicyAppliesToEveryToolAndIsSetOnce() throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), ProcessPolicy.class.getName()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(out, 0, p.waitFor());
        assertEquals(List.of(
                "42",
                "IllegalStateException LoadPolicy.setForProcess(): this process has a load policy already; it is set "
                        + "once, so that code running in a flow cannot widen it",
                "42",
                "InvalidRequest: load policy of this process: java module '" + OTHER + "' is not allowed (no rule "
                        + "matches it; rules for java: java:" + STEPS + ")",
                "InvalidRequest: load policy of this process: language 'lua' is not allowed (languages: java, c)",
                "InvalidRequest: load policy of this tool: language 'java' is not allowed (languages: c)"),
                List.of(out.split("\n")));
        assertFalse(out.contains("Exception in thread"));
    }
}
