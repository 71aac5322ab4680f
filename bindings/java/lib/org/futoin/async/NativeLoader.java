package org.futoin.async;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads the native libraries once, before the first native call
 * (FutoInNativeJNI's static initializer calls {@link #load()}).
 *
 * <p>The jar carries {@code /native/<os>-<arch>/libfutoin_async.so.0} (the
 * runtime) and {@code libfutoin_java.so} (the JNI glue, which needs the
 * runtime by its soname). Both are extracted to a private temporary
 * directory and loaded with {@link System#load}: the runtime first, so that
 * the dynamic linker finds it already loaded (by soname) when the glue asks
 * for it — a process then has exactly one runtime, whichever language
 * loaded it first. The extracted files are deleted right after loading
 * (Linux keeps mapped files alive). When a libfutoin_async.so.0 is
 * mapped into the process already (the program that started this JVM is
 * written in C, Python or Lua), only the glue is loaded and binds to that
 * runtime: one process, one runtime.
 *
 * <p>Falls back to {@link System#loadLibrary} ({@code java.library.path},
 * system library path) when the jar has no libraries for this platform, or
 * always with {@code -Dfutoin.async.useSystemLibrary=true}.
 */
final class NativeLoader {
    private static boolean loaded;

    private NativeLoader() {
    }

    static synchronized void load() {
        if (loaded) {
            return;
        }
        UnsatisfiedLinkError bundled = null;
        if (!Boolean.getBoolean("futoin.async.useSystemLibrary")) {
            try {
                if (loadBundled()) {
                    loaded = true;
                    return;
                }
            } catch (IOException | UnsatisfiedLinkError e) {
                bundled = e instanceof UnsatisfiedLinkError ? (UnsatisfiedLinkError) e
                        : new UnsatisfiedLinkError("futoin-async: extracting native libraries: " + e);
            }
        }
        try {
            System.loadLibrary("futoin_java");
        } catch (UnsatisfiedLinkError e) {
            if (bundled != null) {
                e.addSuppressed(bundled);
            }
            throw e;
        }
        loaded = true;
    }

    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (os.startsWith("linux")) {
            os = "linux";
        }
        if (arch.equals("amd64") || arch.equals("x86_64")) {
            arch = "x86_64";
        } else if (arch.equals("arm64")) {
            arch = "aarch64";
        }
        return os + "-" + arch;
    }

    /**
     * Is a libfutoin_async.so.0 mapped into this process already (a C,
     * Python or Lua program that started this JVM, or another language
     * loaded first)? Then that copy is THE runtime: loading the jar's copy
     * too would make two runtimes in one process, and flows of one could
     * not take steps of the other. The glue then binds to it by soname.
     */
    static boolean runtimeLoaded() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
                int slash = line.lastIndexOf('/');
                if (slash >= 0 && line.startsWith("libfutoin_async.so.0", slash + 1)) {
                    String rest = line.substring(slash + 1 + "libfutoin_async.so.0".length());
                    if (rest.isEmpty() || rest.charAt(0) == '.' || rest.charAt(0) == ' ') {
                        return true;
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // no /proc: not Linux, and then nothing else loaded it either
        }
        return false;
    }

    private static boolean loadBundled() throws IOException {
        String base = "/native/" + platform() + "/";
        String[] libs = runtimeLoaded() ? new String[] {"libfutoin_java.so"}
                : new String[] {"libfutoin_async.so.0", "libfutoin_java.so"};
        if (NativeLoader.class.getResource(base + "libfutoin_java.so") == null) {
            return false;
        }
        Path dir = Files.createTempDirectory("futoin-async-");
        try {
            for (String lib : libs) {
                Path f = dir.resolve(lib);
                try (InputStream in = NativeLoader.class.getResourceAsStream(base + lib)) {
                    if (in == null) {
                        throw new UnsatisfiedLinkError("futoin-async: " + base + lib + " missing in the jar");
                    }
                    Files.copy(in, f, StandardCopyOption.REPLACE_EXISTING);
                }
            }
            for (String lib : libs) {
                System.load(dir.resolve(lib).toAbsolutePath().toString());
            }
        } finally {
            for (String lib : libs) {
                Files.deleteIfExists(dir.resolve(lib));
            }
            Files.deleteIfExists(dir);
        }
        return true;
    }
}
