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
 * <p>The jar carries {@code /native/<os>-<arch>/libfutoin_java.so} (the JNI
 * glue) and {@code libfutoin_async.so.0} (the runtime, which the glue needs
 * by its soname, DT_NEEDED, found through its RUNPATH {@code $ORIGIN}).
 * Both are extracted to a private temporary directory and only the glue is
 * loaded by path ({@link System#load}); the runtime comes in through the
 * glue's dependency, so the dynamic linker decides which copy serves: one
 * that is mapped already (a C, Python or Lua program that started this
 * JVM, a wheel or a rock loaded first, whatever its file is called) is
 * used as it is, and only otherwise the copy next to the glue. A process
 * has exactly one runtime (and one libuv), whichever package loaded it
 * first. The extracted files and their directory are deleted right after
 * loading (Linux keeps mapped files alive).
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

    private static boolean loadBundled() throws IOException {
        String base = "/native/" + platform() + "/";
        /* the glue, and next to it the runtime its DT_NEEDED names: loaded
         * only if no libfutoin_async.so.0 is mapped yet (RUNPATH $ORIGIN) */
        String[] libs = {"libfutoin_java.so", "libfutoin_async.so.0"};
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
            System.load(dir.resolve("libfutoin_java.so").toAbsolutePath().toString());
        } finally {
            for (String lib : libs) {
                Files.deleteIfExists(dir.resolve(lib));
            }
            Files.deleteIfExists(dir);
        }
        return true;
    }
}
