import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.futoin.async.AsyncSteps;
import org.futoin.async.Tool;

/**
 * A Java program of the installed jar (java with the jar and the user's
 * classes on CLASSPATH, tests/polyglot/installed/run.sh) hosting ONE flow
 * with steps of C, Python and Lua: the library finds the Python and Lua
 * plug-ins through VIRTUAL_ENV and LUA_CPATH, the C steps are the user's
 * shared object (args[0]).
 *
 * Prints "trail java ...", "cell java LANG ok" or "cell java LANG FAIL:
 * why" per language, "frame java LANG I LANGUAGE FUNCTION FILE LINE" for
 * each frame of the async stack LANG's error had in the handler, and "map
 * FILE" for every libfutoin_async*, libuv* and libfutoin_host_* file mapped
 * into the process.
 */
public final class JavaHost {
    private JavaHost() {
    }

    /** "frame java LANG I LANGUAGE FUNCTION FILE LINE" per frame: the class
     *  of an async frame is "language:qualifier" (or the language alone). */
    private static void printStack(String lang, StackTraceElement[] stack) {
        for (int i = 0; i < stack.length; ++i) {
            StackTraceElement f = stack[i];
            String cls = f.getClassName();
            int colon = cls.indexOf(':');
            String language = colon < 0 ? cls : cls.substring(0, colon);
            String function = (colon < 0 ? "" : cls.substring(colon + 1) + ".") + f.getMethodName();
            String file = f.getFileName() == null ? "?" : f.getFileName();
            System.out.println("frame java " + lang + " " + i + " " + language + " " + function + " "
                    + file.substring(file.lastIndexOf('/') + 1) + " " + Math.max(f.getLineNumber(), 0));
        }
    }

    public static void main(String[] args) throws Exception {
        String[][] others = {{"c", args[0]}, {"python", "user_steps"}, {"lua", "user_steps"}};
        String expected = "java>c>python>lua";
        Object[] values = {"", -1L};
        Map<String, String[]> errors = new HashMap<>();
        Map<String, StackTraceElement[]> stacks = new HashMap<>();
        try (Tool tool = new Tool(); AsyncSteps root = new AsyncSteps(tool)) {
            root.successStep("java", 1L);
            for (String[] o : others) {
                root.addForeign(o[0], o[1], "append");
            }
            root.add((asi, t, n) -> {
                values[0] = t;
                values[1] = n;
            });
            for (String[] o : others) {
                root.add(asi -> {
                    asi.addForeign(o[0], o[1], "fail");
                }, (asi, code) -> {
                    errors.put(o[0], new String[] {code, asi.errorInfo()});
                    stacks.put(o[0], asi.asyncStack());
                    asi.success();
                });
            }
            root.run();
        } catch (RuntimeException e) {
            System.out.println("unhandled " + e);
        }
        System.out.println("trail java " + values[0] + " " + values[1]);
        for (String[] o : others) {
            String lang = o[0];
            String[] e = errors.getOrDefault(lang, new String[] {null, null});
            if (!expected.equals(values[0]) || !(values[1] instanceof Number)
                    || ((Number) values[1]).longValue() != 1 + others.length) {
                System.out.println("cell java " + lang + " FAIL: values '" + values[0] + "' "
                        + values[1] + ", expected '" + expected + "' " + (1 + others.length));
            } else if (!"UserError".equals(e[0]) || !lang.equals(e[1])) {
                System.out.println("cell java " + lang + " FAIL: error '" + e[0] + "' '" + e[1]
                        + "', expected 'UserError' '" + lang + "'");
            } else {
                System.out.println("cell java " + lang + " ok");
            }
            printStack(lang, stacks.getOrDefault(lang, new StackTraceElement[0]));
        }
        List<String> seen = new ArrayList<>();
        for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
            int slash = line.indexOf('/');
            if (slash < 0) {
                continue;
            }
            String path = line.substring(slash);
            String base = path.substring(path.lastIndexOf('/') + 1);
            if ((base.startsWith("libfutoin_async") || base.startsWith("libuv.")
                    || base.startsWith("libuv-") || base.startsWith("libfutoin_host_"))
                    && !seen.contains(path)) {
                seen.add(path);
                System.out.println("map " + path);
            }
        }
    }
}
