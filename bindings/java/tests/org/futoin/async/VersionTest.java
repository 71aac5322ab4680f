package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Properties;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.Test;

/**
 * One version (README "Rules worth knowing"): the jar the tests run
 * against reports the project's version from the top meson.build, in
 * Version.binding(), its manifest, its POM and pom.properties, and runs on
 * a runtime of that version.
 */
public class VersionTest {
    /** The version in the top meson.build (-Dfutoin.meson, set by test.sh). */
    static String mesonVersion() throws IOException {
        String p = System.getProperty("futoin.meson");
        Path meson = p != null ? Paths.get(p) : Trace.expectedDir().resolve("../../meson.build");
        String text = Files.readString(meson, StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("(?m)^\\s*version:\\s*'([^']+)'").matcher(text);
        assertTrue("no version: in " + meson, m.find());
        return m.group(1);
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = Version.class.getResourceAsStream(name)) {
            assertNotNull("missing in the jar: " + name, in);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    public void bindingReportsTheProjectVersion() throws IOException {
        String want = mesonVersion();
        assertEquals(want, Version.binding());
        /* the manifest of the jar Version came from (the package's own
         * attributes come from whichever class of it loaded first, here
         * a test class from a directory) */
        Path jar;
        try {
            jar = Paths.get(Version.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (java.net.URISyntaxException e) {
            throw new AssertionError(e);
        }
        assertTrue("Version is not loaded from a jar: " + jar, jar.toString().endsWith(".jar"));
        try (JarFile jf = new JarFile(jar.toFile())) {
            assertEquals("manifest Implementation-Version", want,
                    jf.getManifest().getMainAttributes().getValue("Implementation-Version"));
        }
    }

    @Test
    public void pomInTheJarCarriesTheProjectVersion() throws IOException {
        String want = mesonVersion();
        Properties props = new Properties();
        props.load(new java.io.StringReader(resource("/META-INF/maven/org.futoin/futoin-async/pom.properties")));
        assertEquals(want, props.getProperty("version"));
        String pom = resource("/META-INF/maven/org.futoin/futoin-async/pom.xml");
        Matcher m = Pattern.compile("(?m)^  <version>([^<]+)</version>").matcher(pom);
        assertTrue(m.find());
        assertEquals(want, m.group(1));
    }

    @Test
    public void runtimeIsOfTheSameVersion() throws IOException {
        assertEquals(mesonVersion(), Version.runtime());
    }
}
