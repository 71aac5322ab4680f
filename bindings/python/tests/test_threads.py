"""Issue 11, "Threads": root.cancel() from any thread; success()/error()
from a worker return whether the completion was accepted; other step
methods from a worker raise RuntimeError.

No wait has a wall-clock deadline (no join/Event timeouts, no flow
timeout as a guard): the tests check order and counts, waiting for the
event itself, so a loaded machine cannot make them fail."""
import threading

import pytest

import futoin_async as fa
from futoin_async import AsyncSteps, FutoInError, Tool


def in_thread(fn, *args):
    box = {}

    def run():
        try:
            box["r"] = fn(*args)
        except BaseException as e:  # reported to the test thread
            box["e"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join()
    if "e" in box:
        raise box["e"]
    return box.get("r")


def test_root_cancel_from_another_thread(tool, capfd):
    loop_thread = threading.get_ident()
    seen = []
    root = AsyncSteps(tool)

    def step(asi):
        asi.set_cancel(lambda asi: seen.append(threading.get_ident()))  # waits
        threading.Thread(target=root.cancel, daemon=True).start()
    root.add(step, lambda asi, code: seen.append(code))
    with pytest.raises(BaseException) as ei:  # CancelledError is one, as asyncio's
        root.run()
    assert isinstance(ei.value, fa.CancelledError), repr(ei.value)
    assert seen == [loop_thread]  # the handler ran on the loop thread, once
    assert capfd.readouterr().err == ""


def test_root_cancel_from_the_main_thread_while_a_worker_runs_the_loop():
    tool = Tool()
    started = threading.Event()
    seen = []
    root = AsyncSteps(tool)

    def step(asi):
        asi.set_cancel(lambda asi: seen.append(threading.current_thread().name))
        started.set()
    root.add(step)
    root.execute(lambda code, info, last: seen.append(code))
    t = threading.Thread(target=tool.run, name="loop", daemon=True)
    t.start()
    started.wait()
    root.cancel()  # the main thread is not the loop thread now
    t.join()  # run() returns after a cross-thread cancel
    assert seen == ["loop"]


def test_success_and_error_from_a_worker_report_acceptance(tool, capfd):
    results = []

    def hand_off(asi):
        asi.wait_external()
        threading.Thread(target=lambda: results.append(asi.success("w")),
                         daemon=True).start()

    def fail_off(asi, v):
        asi.wait_external()
        threading.Thread(target=lambda: results.append(asi.error("MyError", "from worker")),
                         daemon=True).start()
    root = AsyncSteps(tool).add(hand_off).add(fail_off)
    with pytest.raises(FutoInError) as ei:
        root.run()
    assert ei.value.code == "MyError" and ei.value.info == "from worker"
    assert results == [True, True]  # neither raised in the worker
    assert capfd.readouterr().err == ""


def test_completion_that_lost_the_race_returns_false(tool, capfd):
    kept = []
    go = threading.Event()
    late = []

    def wait_short(asi):
        kept.append(asi)
        asi.set_timeout(5)  # ends by its timeout; nobody completes it in time

    def recover(asi, code):
        asi.success(code)

    def wait_for_worker(asi, code):
        kept.append(asi)
        asi.wait_external()
        go.set()

    def worker():
        go.wait()
        late.append(kept[0].success("too late"))
        late.append(kept[0].error("TooLate"))
        late.append(kept[1].success("in time"))
    th = threading.Thread(target=worker, daemon=True)
    th.start()
    root = AsyncSteps(tool).add(wait_short, recover).add(wait_for_worker)
    assert root.run() == "in time"
    th.join()
    assert late == [False, False, True]
    assert capfd.readouterr().err == ""  # no misuse line for a lost race
    stats = tool.stats()
    assert stats["late_completions"] == 2 and stats["misuse"] == 0


def test_other_step_methods_from_a_worker_raise(tool):
    errors = []
    kept = []

    def step(asi):
        asi.wait_external()
        kept.append(asi)

        def worker():
            for call in (lambda: asi.add(lambda asi: None),
                         lambda: asi.set_timeout(10),
                         lambda: asi.wait_external(),
                         lambda: asi.set_cancel(lambda asi: None),
                         lambda: asi.state,
                         lambda: asi.repeat(1, lambda asi, i: None),
                         lambda: asi.break_loop()):
                try:
                    call()
                    errors.append(None)
                except RuntimeError as e:
                    errors.append(type(e))
            asi.success()
        threading.Thread(target=worker, daemon=True).start()
    AsyncSteps(tool).add(step).run()
    assert errors == [RuntimeError] * 7, errors


def test_root_methods_from_a_worker_raise(tool):
    root = AsyncSteps(tool)
    for call in (lambda: root.add(lambda asi: None), root.execute, lambda: root.state,
                 lambda: AsyncSteps(tool)):
        with pytest.raises(RuntimeError):
            in_thread(call)
    assert in_thread(root.cancel) is False  # it was not executing
    assert root.run() is None  # ... so nothing was cancelled


def test_call_soon_threadsafe(tool):
    got = []
    root = AsyncSteps(tool)

    def step(asi):
        asi.wait_external()
        threading.Thread(target=lambda: tool.call_soon_threadsafe(
            lambda v: (got.append(threading.get_ident()), asi.success(v)), 7),
            daemon=True).start()
    root.add(step)
    assert root.run() == 7 and got == [threading.get_ident()]


def test_accepted_means_the_completion_decided_the_step(tool, capfd):
    # Workers race their completions against 1 ms timeouts: whatever
    # success() returned must be what the flow saw (True: the value went
    # on; False: the step timed out), with no misuse line either way.
    import random
    import time
    n = 200
    said = {}
    got = {}
    workers = []

    def make(i):
        def step(asi):
            asi.set_timeout(1)

            def worker():
                time.sleep(random.random() * 0.002)
                said[i] = asi.success(i)
            t = threading.Thread(target=worker, daemon=True)
            workers.append(t)
            t.start()

        def done(asi, v):
            got[i] = v

        def timed_out(asi, code):
            asi.success(code)
        return step, done, timed_out
    for i in range(n):
        step, done, timed_out = make(i)
        r = AsyncSteps(tool)
        r.add(lambda asi, step=step: asi.add(step), timed_out).add(done)
        r.execute()
    tool.run()
    for t in workers:
        t.join()
    assert len(said) == n and len(got) == n
    for i in range(n):
        assert got[i] == (i if said[i] else "Timeout"), (i, said[i], got[i])
    assert capfd.readouterr().err == ""
