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

    /** The POM has what a repository asks of a release. */
    @Test
    public void pomDescribesTheProject() throws IOException {
        String pom = resource("/META-INF/maven/org.futoin/futoin-async/pom.xml");
        for (String element : new String[] {"url", "licenses", "developers", "scm"}) {
            assertTrue("pom.xml has no <" + element + ">", Pattern.compile("(?m)^  <" + element + ">").matcher(pom).find());
        }
        assertTrue(pom, pom.contains("<connection>scm:git:"));
        assertTrue(pom, pom.contains("<name>Apache License, Version 2.0</name>"));
    }

    /** Next to the jar: the javadoc jar (of the module) and the sources jar. */
    @Test
    public void javadocAndSourcesJarsShipNextToTheJar() throws IOException {
        String v = mesonVersion();
        Path jar;
        try {
            jar = Paths.get(Version.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (java.net.URISyntaxException e) {
            throw new AssertionError(e);
        }
        try (JarFile src = new JarFile(jar.resolveSibling("futoin-async-" + v + "-sources.jar").toFile());
             JarFile doc = new JarFile(jar.resolveSibling("futoin-async-" + v + "-javadoc.jar").toFile())) {
            for (String f : new String[] {"module-info.java", "org/futoin/async/AsyncSteps.java",
                    "org/futoin/async/Errors.java", "org/futoin/async/FutoInNative.java"}) {
                assertNotNull("the sources jar lacks " + f, src.getEntry(f));
            }
            assertNotNull("the javadoc jar has no module page", doc.getEntry("org.futoin.async/module-summary.html"));
        }
    }

    @Test
    public void runtimeIsOfTheSameVersion() throws IOException {
        assertEquals(mesonVersion(), Version.runtime());
    }
}
