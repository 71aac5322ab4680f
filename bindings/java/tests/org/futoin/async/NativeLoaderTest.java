package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import org.junit.Test;

/**
 * How the jar's native libraries are loaded (NativeLoader): only the glue
 * by path, the runtime through its soname, so a process has one
 * libfutoin_async and one libuv whichever copy was mapped first; and what
 * an error says once the extracted files are gone.
 *
 * <p>The one-runtime checks run in a child JVM (this one has its
 * libraries loaded already): {@link Probe} loads what it is told to first,
 * runs a flow, and prints the libfutoin_async and libuv files mapped into
 * its process, from /proc/self/maps.
 */
public class NativeLoaderTest {
    /** The child JVM's program. args: [a libfutoin_async to System.load() first] */
    public static final class Probe {
        private Probe() {
        }

        public static void main(String[] args) throws Exception {
            if (args.length > 0) {
                System.load(args[0]);
            }
            Object r;
            try (Tool tool = new Tool(); AsyncSteps root = new AsyncSteps(tool)) {
                root.add(asi -> asi.success(20)).add((asi, v) -> asi.success((Integer) v + 1));
                r = root.run();
            }
            System.out.println("result " + r);
            for (String f : mapped()) {
                System.out.println("mapped " + f);
            }
        }
    }

    /** The files mapped into this process whose names hold
     *  libfutoin_async or libuv. (A deleted file reads "path (deleted)".) */
    static TreeSet<String> mapped() throws IOException {
        TreeSet<String> out = new TreeSet<>();
        Version.runtime(); /* the binding is loaded */
        for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
            int slash = line.indexOf('/');
            if (slash < 0) {
                continue;
            }
            String f = line.substring(slash);
            String name = f.substring(f.lastIndexOf('/') + 1);
            if (name.startsWith("libfutoin_async") || name.startsWith("libuv.")) {
                out.add(f);
            }
        }
        return out;
    }

    /** Runs Probe in a child JVM on this one's class path; its output lines. */
    private static List<String> probe(String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Probe.class.getName());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("LD_LIBRARY_PATH");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals("probe failed:\n" + out, 0, p.waitFor());
        return List.of(out.split("\n"));
    }

    private static List<String> withPrefix(List<String> lines, String prefix) {
        List<String> out = new ArrayList<>();
        for (String l : lines) {
            if (l.startsWith(prefix)) {
                out.add(l.substring(prefix.length()));
            }
        }
        return out;
    }

    private static long count(List<String> files, String namePrefix) {
        return files.stream().filter(f -> f.substring(f.lastIndexOf('/') + 1).startsWith(namePrefix)).count();
    }

    @Test
    public void aRuntimeLoadedFirstFromAnotherFileIsTheOnlyOne() throws Exception {
        /* a copy of the runtime under a name of its own (as another
         * package might ship it), loaded before the binding */
        Path dir = Files.createTempDirectory("futoin-first-");
        Path copy = dir.resolve("libfutoin_async-from-another-package.so");
        try {
            try (InputStream in = NativeLoader.class.getResourceAsStream(
                    "/native/" + NativeLoader.platform() + "/libfutoin_async.so.0")) {
                assertNotNull("the jar has no runtime", in);
                Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
            }
            List<String> out = probe(copy.toString());
            assertTrue(out.toString(), out.contains("result 21"));
            List<String> files = withPrefix(out, "mapped ");
            assertEquals("libfutoin_async files mapped: " + files, 1, count(files, "libfutoin_async"));
            assertTrue("the runtime mapped is not the one loaded first: " + files, files.contains(copy.toString()));
            assertEquals("libuv files mapped: " + files, 1, count(files, "libuv."));
        } finally {
            Files.deleteIfExists(copy);
            Files.deleteIfExists(dir);
        }
    }

    @Test
    public void aloneTheJarBringsOneRuntimeAndLeavesNoFiles() throws Exception {
        List<String> out = probe();
        assertTrue(out.toString(), out.contains("result 21"));
        List<String> files = withPrefix(out, "mapped ");
        assertEquals("libfutoin_async files mapped: " + files, 1, count(files, "libfutoin_async"));
        assertEquals("libuv files mapped: " + files, 1, count(files, "libuv."));
        String core = files.stream().filter(f -> f.contains("libfutoin_async")).findFirst().orElse("");
        assertTrue("the runtime is not the jar's extracted copy: " + core,
                core.contains("/futoin-async-") && core.endsWith("/libfutoin_async.so.0 (deleted)"));
    }

    @Test
    public void thisJvmHasOneRuntime() throws IOException {
        TreeSet<String> files = mapped();
        assertEquals("libfutoin_async files mapped: " + files, 1,
                count(new ArrayList<>(files), "libfutoin_async"));
    }

    @Test
    public void aMissingLanguageIsNotLookedForInTheDeletedFolder() throws IOException {
        /* the folder the jar's runtime was extracted to, deleted since */
        String core = mapped().stream().filter(f -> f.contains("/libfutoin_async")).findFirst().orElse(null);
        assertNotNull("no libfutoin_async mapped", core);
        assertTrue("the runtime is not the jar's extracted copy: " + core, core.endsWith(" (deleted)"));
        String dir = core.substring(0, core.lastIndexOf('/'));
        assertFalse(dir + " still exists", Files.exists(Paths.get(dir)));
        String[] info = new String[2];
        try (Tool tool = new Tool(); AsyncSteps root = new AsyncSteps(tool)) {
            root.add(asi -> asi.addForeign("nosuchlanguage", "some.module", "fn"), (asi, code) -> {
                info[0] = code;
                info[1] = asi.errorInfo();
                asi.success();
            });
            root.run();
        }
        assertEquals("InvalidRequest", info[0]);
        assertTrue(info[1], info[1].contains("nosuchlanguage") && info[1].contains("some.module.fn"));
        assertFalse("error_info names the jar's deleted folder " + dir + ": " + info[1], info[1].contains(dir));
    }
}
