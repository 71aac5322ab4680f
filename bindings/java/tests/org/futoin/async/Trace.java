package org.futoin.async;

import static org.junit.Assert.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** A trace of lines, compared whole with tests/expected/NAME.trace. */
final class Trace {
    /** Every expected trace loaded so far (SpecTest.replaysEverySpecTrace). */
    static final Set<String> LOADED = Collections.synchronizedSet(new LinkedHashSet<>());

    final List<String> lines = new ArrayList<>();

    void add(Object... parts) {
        StringBuilder sb = new StringBuilder();
        for (Object p : parts) {
            if (sb.length() > 0) {
                sb.append(' ');
            }
            sb.append(p);
        }
        lines.add(sb.toString());
    }

    static Path expectedDir() {
        String d = System.getProperty("futoin.expected");
        if (d != null) {
            return Paths.get(d);
        }
        return Paths.get("tests", "expected");
    }

    static List<String> load(String name) {
        LOADED.add(name);
        try {
            return new ArrayList<>(Files.readAllLines(expectedDir().resolve(name + ".trace"),
                    StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new AssertionError("cannot read expected trace " + name + ": " + e);
        }
    }

    void expect(String name) {
        expect(load(name), name);
    }

    void expect(List<String> want, String what) {
        assertEquals(what, String.join("\n", want), String.join("\n", lines));
    }

    /** The lines of a "== name ==" section of a trace file. */
    static List<String> section(String name, String header) {
        List<String> all = load(name);
        List<String> out = new ArrayList<>();
        boolean in = false;
        for (String l : all) {
            if (l.startsWith("== ")) {
                in = l.equals(header);
            }
            if (in) {
                out.add(l);
            }
        }
        return out;
    }
}
