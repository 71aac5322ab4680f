"""A Java step in a Python program's flow (issue 23): its asi.tool() is the
Python Tool's loop, lent to Java, and its timers run there
(org.futoin.polyglot.Probe.timers: an immediate, a deferred cancelled
before it is due, a deferred, an execute(), in that order).

Run by bindings/java/polyglot.sh test with the environment of
tests/polyglot/run.sh (PYTHONPATH with the wheel) and CLASSPATH naming
the jar (where the library finds the Java plug-in) and the Java test
classes. Last line
"java-in-python: N passed, M failed".
"""
import sys

import futoin_async as fa

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL java-in-python:", what, file=sys.stderr)


tool = fa.Tool()
for n in range(3):  # the same loop, flow after flow
    root = fa.AsyncSteps(tool)
    root.add_foreign("java", "org.futoin.polyglot.Probe", "timers")
    try:
        got = root.run()
    except Exception as e:  # the check below says what went wrong
        got = (repr(e), None)
    check(isinstance(got, tuple) and got[0] == "immediate,deferred,execute",
          "flow %d: %r" % (n, got))
tool.close()
print("java-in-python: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
