"""Signals while run() waits in libuv with the GIL released.

Each scenario runs in a child interpreter: Python handles signals on the
main thread only, and pytest's own main thread must not be interrupted.
The signal comes from another thread while the flow waits for an
external event that never comes: the signal is what ends the wait (no
timeout, no deadline; without the wakeup path the loop would sleep
through it). Whether the signal lands while the loop waits or, under
load, while a step still runs, the outcome is the same: a step that
raises KeyboardInterrupt cancels the flow as Ctrl-C in the wait does.
"""
import os
import subprocess
import sys
import textwrap

import futoin_async

PRELUDE = """
import os, signal, sys, threading
from futoin_async import AsyncSteps, Tool, FutoInError

# Started with SIGINT ignored (a CI job run in the background inherits
# SIG_IGN), Python leaves it ignored and Ctrl-C never reaches the loop: the
# scenarios are about an interactive program, so install the handler an
# interactive start would have.
signal.signal(signal.SIGINT, signal.default_int_handler)

def kill_soon(sig):
    threading.Timer(0.1, lambda: os.kill(os.getpid(), sig)).start()
"""


def child(body: str) -> subprocess.CompletedProcess:
    code = PRELUDE + textwrap.dedent(body)
    pkg_parent = os.path.dirname(os.path.dirname(futoin_async.__file__))
    env = dict(os.environ, PYTHONPATH=pkg_parent)
    return subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, env=env)


def test_ctrl_c_while_waiting_cancels_and_raises():
    r = child("""
        log = []
        root = AsyncSteps(Tool())
        def step(asi):
            asi.wait_external()
            asi.set_cancel(lambda asi: log.append("cancelled"))
            kill_soon(signal.SIGINT)
        root.add(step, lambda asi, code: log.append("error " + code))
        root.add(lambda asi: log.append("next step"))
        try:
            root.run()
            print("returned", log)
        except KeyboardInterrupt:
            print("KeyboardInterrupt", log)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "KeyboardInterrupt ['cancelled']"


def test_ctrl_c_cancels_every_executing_root():
    r = child("""
        log = []
        tool = Tool()
        roots = [AsyncSteps(tool) for _ in range(3)]
        for i, root in enumerate(roots):
            def step(asi, i=i):
                asi.wait_external()
                asi.set_cancel(lambda asi: log.append(i))
                if i == len(roots) - 1:  # every root waits: no race with
                    kill_soon(signal.SIGINT)  # the steps, whatever the load
            root.add(step)
            root.execute()
        try:
            tool.run()
        except KeyboardInterrupt:
            print("KeyboardInterrupt", sorted(log))
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "KeyboardInterrupt [0, 1, 2]"


def test_signal_handler_runs_while_waiting_and_flow_goes_on():
    # A handler that does not raise runs at once, on the loop thread, and
    # may itself complete the waiting step.
    r = child("""
        waiting = []
        def on_usr1(signum, frame):
            waiting.pop().success("from handler")
        signal.signal(signal.SIGUSR1, on_usr1)
        root = AsyncSteps(Tool())
        def step(asi):
            asi.wait_external()
            waiting.append(asi)
            kill_soon(signal.SIGUSR1)
        root.add(step)
        try:
            print("result", root.run())
        except FutoInError as e:
            print("error", e.code)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "result from handler"


def test_exception_from_signal_handler_is_raised_from_run():
    r = child("""
        def on_usr1(signum, frame):
            raise RuntimeError("handler says stop")
        signal.signal(signal.SIGUSR1, on_usr1)
        log = []
        root = AsyncSteps(Tool())
        def step(asi):
            asi.wait_external()
            asi.set_cancel(lambda asi: log.append("cancelled"))
            kill_soon(signal.SIGUSR1)
        root.add(step)
        try:
            root.run()
            print("returned")
        except RuntimeError as e:
            print("RuntimeError", e, log)
        # the tool is usable afterwards
        print("again", AsyncSteps(root.tool).add(lambda asi: asi.success(5)).run())
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["RuntimeError handler says stop ['cancelled']",
                                     "again 5"]


def test_wakeup_fd_restored_after_run():
    r = child("""
        root = AsyncSteps(Tool())
        root.add(lambda asi: asi.success(1))
        root.run()
        print("wakeup", signal.set_wakeup_fd(-1))
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "wakeup -1"
