package org.futoin.async;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * {@link Tool#setHooks} and {@link Tool#dump()} (futoin/sys/hooks.h,
 * futoin_tool_dump()): the binding hands each event on as a
 * {@link HookEvent} and the dump as a String; the events and their order are
 * the library's (tests/test_hooks.c). On a virtual-time Tool, so every time
 * is exact.
 */
public class WatchTest {
    private Tool tool;

    @Before
    public void setUp() {
        tool = new Tool(new Tool.Options().virtualTime(true));
    }

    @After
    public void tearDown() {
        tool.close();
    }

    /* "event rN kind... @ms", with Java steps named by their file:line
     * (lambdas have generated names) */
    private static String brief(HookEvent e) {
        StringBuilder b = new StringBuilder(e.event);
        if ("java".equals(e.language)) {
            b.append(' ').append(e.file.replaceAll(".*/", "")).append(':').append(e.line);
        } else if (e.function != null) {
            b.append(' ').append(e.function);
        }
        for (String s : new String[] {e.code, e.outcome, e.waitKind, e.waitLanguage}) {
            if (s != null) {
                b.append(' ').append(s);
            }
        }
        return b.append(" @").append(e.now).toString();
    }

    @Test
    public void theEventsOfAChainAHandledErrorAndAWait() {
        List<String> log = new ArrayList<>();
        List<Long> roots = new ArrayList<>();
        tool.setHooks(e -> {
            log.add(brief(e));
            roots.add(e.rootId);
        });
        AsyncSteps root = new AsyncSteps(tool);
        int first = new Throwable().getStackTrace()[0].getLineNumber() + 1;
        root.add(asi -> { asi.error("MyError", "it broke"); }, (asi, code) -> asi.success());
        int wait = new Throwable().getStackTrace()[0].getLineNumber() + 2; /* the body's first line */
        root.add(asi -> {
            asi.waitExternal();
            tool.deferred(30, () -> asi.success());
        });
        root.execute();
        tool.run();
        tool.advance(30);
        String f = "WatchTest.java:" + first;
        String w = "WatchTest.java:" + wait;
        List<String> java = new ArrayList<>();
        for (String l : log) {
            /* execute() of the binding ends the flow with a step of its
             * own (RootCtl), which is reported as any step */
            if (!l.contains("RootCtl.java")) {
                java.add(l);
            }
        }
        assertEquals(List.of(
                "flow_started @0",
                "step_entered " + f + " @0",
                "error_raised MyError @0",
                "error_handled MyError @0",
                "step_left " + f + " @0",
                "step_entered " + w + " @0",
                "wait_begun " + w + " foreign java @0",
                "wait_ended " + w + " foreign java @30",
                "step_left " + w + " @30",
                "flow_finished success @30"), java);
        assertTrue(roots.stream().allMatch(id -> id.equals(roots.get(0))));
        // cleared: nothing more is reported
        tool.setHooks(null);
        int n = log.size();
        try (AsyncSteps r = new AsyncSteps(tool)) {
            r.add(asi -> { });
            r.run();
        }
        assertEquals(n, log.size());
        root.close();
    }

    private static void has(String d, String regex) {
        assertTrue("no " + regex + " in:\n" + d, Pattern.compile(regex, Pattern.MULTILINE).matcher(d).find());
    }

    @Test
    public void theDumpNamesEachWaitingFlowsReasonAndOrigin() {
        try (Mutex mtx = new Mutex()) {
            AsyncSteps r1 = new AsyncSteps(tool);
            int sleepy = new Throwable().getStackTrace()[0].getLineNumber() + 1;
            r1.add(asi -> asi.setTimeout(5000));
            AsyncSteps r2 = new AsyncSteps(tool);
            int ext = new Throwable().getStackTrace()[0].getLineNumber() + 1;
            r2.add(asi -> asi.waitExternal());
            AsyncSteps r3 = new AsyncSteps(tool);
            int held = new Throwable().getStackTrace()[0].getLineNumber() + 1;
            r3.sync(mtx, asi -> asi.waitExternal());
            AsyncSteps r4 = new AsyncSteps(tool);
            int queued = new Throwable().getStackTrace()[0].getLineNumber() + 1;
            r4.sync(mtx, asi -> asi.waitExternal());
            r1.execute();
            r2.execute();
            r3.execute();
            tool.run();
            tool.advance(400);
            r4.execute();
            tool.run();
            tool.advance(600);
            String d = tool.dump();
            assertTrue(d, d.startsWith("futoin-dump version=1 now=1000 roots=4\n"));
            assertTrue(d, d.endsWith("end roots=4\n"));
            List<Long> ids = new ArrayList<>();
            Matcher m = Pattern.compile("^root=(\\d+) state=running", Pattern.MULTILINE).matcher(d);
            while (m.find()) {
                ids.add(Long.parseLong(m.group(1)));
            }
            ids.sort(null);
            assertEquals(d, 4, ids.size());
            long a = ids.get(0), b = ids.get(1), c = ids.get(2), e = ids.get(3);
            // on a timer
            has(d, "^root=" + a + " flow=0 wait=timer since=0 waited=1000 due=5000\nroot=" + a
                    + " flow=0 at=0 java .*WatchTest.java:" + sleepy + "\\)$");
            // on an external completion: a Java step, which Java completes
            has(d, "^root=" + b + " flow=0 wait=foreign since=0 waited=1000 language=java\nroot=" + b
                    + " flow=0 at=0 java .*WatchTest.java:" + ext + "\\)$");
            // the Mutex's holder waits in its section ...
            has(d, "^root=" + c + " flow=0 wait=foreign since=0 waited=1000 language=java\nroot=" + c
                    + " flow=0 at=0 java .*WatchTest.java:" + held + "\\)$");
            // ... and the other flow is first in its queue, since 400
            has(d, "^root=" + e + " flow=0 wait=sync since=400 waited=600 object=Mutex place=1 queued=1\nroot="
                    + e + " flow=0 section=java .*WatchTest.java:" + queued + "\\)$");
            // a freed root is no longer listed
            r2.close();
            d = tool.dump();
            assertTrue(d, d.startsWith("futoin-dump version=1 now=1000 roots=3\n"));
            assertFalse(d, Pattern.compile("^root=" + b + " ", Pattern.MULTILINE).matcher(d).find());
            r1.close();
            r3.close();
            r4.close();
            assertEquals("futoin-dump version=1 now=1000 roots=0\nend roots=0\n", tool.dump());
        }
    }
}
