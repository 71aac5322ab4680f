"""Handles kept past their step, their root or their tool (issue 18 items
4 and 7): every call through them is safe (a documented value or
InvalidStateError), never a crash; a late completion returns False from
any thread (rule 3)."""
import subprocess
import sys
import textwrap
import threading

import pytest

from futoin_async import AsyncSteps, InvalidStateError, Mutex, Tool


def in_thread(fn):
    box = []

    def run():
        try:
            box.append(("ok", fn()))
        except BaseException as e:  # noqa: B902 - reported to the caller
            box.append(("raised", e))
    t = threading.Thread(target=run)
    t.start()
    t.join()
    kind, v = box[0]
    if kind == "raised":
        raise v
    return v


@pytest.mark.parametrize("where", ["loop", "worker"])
def test_success_through_a_kept_handle_after_close_does_not_crash(where):
    """The report's program (it ended with SIGSEGV): run in a process of
    its own so that a crash is a failure, not the end of the suite."""
    src = textwrap.dedent(f"""
        import threading
        import futoin_async as fa
        tool = fa.Tool()
        kept = []
        def step(asi):
            kept.append(asi)
            asi.wait_external()
        root = fa.AsyncSteps(tool)
        root.add(step)
        root.execute()
        tool.run_nowait()
        tool.close()
        out = []
        call = lambda: out.append(kept[0].success("late"))
        if {where!r} == "loop":
            call()
        else:
            t = threading.Thread(target=call)
            t.start()
            t.join()
        print(out)
    """)
    r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True)
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert r.stdout.strip() == "[False]"  # its flow was cancelled by close()


def kept_handles(tool):
    """A waiting step's handle, a finished step's handle and a parallel()
    handle, kept past their callbacks, and the root."""
    kept = {}

    def finished(asi):
        kept["finished"] = asi

    def waiting(asi):
        kept["waiting"] = asi
        kept["parallel"] = asi.parallel()
        kept["parallel"].add(lambda asi: None)
        asi.wait_external()
    root = AsyncSteps(tool).add(finished).add(lambda asi: asi.add(waiting))
    root.execute()
    while "waiting" not in kept:
        tool.run_nowait()
    kept["root"] = root
    return kept


def every_call(h, tool):
    """(name, call) for every public method and property of AsyncSteps."""
    return [
        ("add", lambda: h.add(lambda asi: None)),
        ("add_foreign", lambda: h.add_foreign("python", "os", "getcwd")),
        ("await_", lambda: h.await_(None)),
        ("parallel", lambda: h.parallel()),
        ("success_step", lambda: h.success_step(1)),
        ("set_timeout", lambda: h.set_timeout(10)),
        ("set_cancel", lambda: h.set_cancel(lambda asi: None)),
        ("wait_external", lambda: h.wait_external()),
        ("loop", lambda: h.loop(lambda asi: None)),
        ("repeat", lambda: h.repeat(1, lambda asi, i: None)),
        ("for_each", lambda: h.for_each([1], lambda asi, k, v: None)),
        ("break_loop", lambda: h.break_loop()),
        ("continue_loop", lambda: h.continue_loop()),
        ("sync", lambda: h.sync(Mutex(), lambda asi: None)),
        ("execute", lambda: h.execute()),
        ("new_instance", lambda: h.new_instance()),
        ("state", lambda: h.state),
        ("error_info", lambda: h.error_info),
        ("last_exception", lambda: h.last_exception),
        ("async_stack", lambda: h.async_stack),
        ("root_id", lambda: h.root_id),
        ("binary", lambda: h.binary()),
        ("is_ours", lambda: h.is_ours()),
        ("is_same_thread", lambda: h.is_same_thread()),
        ("run", lambda: h.run()),
        ("promise", lambda: h.promise()),
        ("is_valid", lambda: h.is_valid()),
        ("repr", lambda: repr(h)),
        ("tool", lambda: h.tool),
        ("success", lambda: h.success(1)),
        ("error", lambda: h.error("Late")),
        ("cancel", lambda: h.cancel()),
        ("free", lambda: h.free()),
    ]


# What a call may give back through a closed handle instead of raising
# InvalidStateError (a RuntimeError).
ALLOWED = {
    "is_valid": {False},
    "repr": None,  # any text
    "tool": None,  # the (closed) Tool, or None
    "free": {None},
    "success": {False},  # a late completion (waiting step) ...
    "error": {False},
    "cancel": {False},  # a root that does not execute
}


def check(name, call, results, worker):
    try:
        v = in_thread(call) if worker else call()
    except RuntimeError as e:  # InvalidStateError, or "from another thread"
        assert worker or isinstance(e, InvalidStateError), (name, e)
        results[name] = "raised"
        return
    allowed = ALLOWED.get(name, set())
    assert name in ALLOWED, (name, v)
    assert allowed is None or v in allowed, (name, v)
    results[name] = v


@pytest.mark.parametrize("worker", [False, True], ids=["loop", "worker"])
@pytest.mark.parametrize("which", ["waiting", "finished", "parallel", "root"])
def test_every_call_through_a_handle_after_close_is_safe(which, worker):
    tool = Tool()
    h = kept_handles(tool)[which]
    tool.close()
    results = {}
    for name, call in every_call(h, tool):
        check(name, call, results, worker)
    assert results["is_valid"] is False
    if which == "waiting":
        # close() cancelled its flow: a late completion (rule 3)
        assert results["success"] is False and results["error"] is False
    elif which == "finished" or which == "parallel":
        assert results["success"] == "raised" and results["error"] == "raised"
    else:
        assert results["cancel"] is False and results["add"] == "raised"


def test_timers_and_the_tool_after_close_are_safe():
    tool = Tool()
    handle = tool.call_later(10, lambda: None)
    key = tool.deferred(10000, lambda: None)
    tool.close()
    handle.cancel()  # as asyncio's: never raises
    assert handle.cancelled()
    assert tool.cancel(key) is False
    for call in (lambda: tool.call_soon(lambda: None), lambda: tool.call_later(1, print),
                 lambda: tool.immediate(lambda: None), lambda: tool.deferred(1, print),
                 lambda: tool.call_soon_threadsafe(print), tool.run, tool.run_nowait,
                 tool.stats, tool.uv_loop, lambda: AsyncSteps(tool)):
        with pytest.raises(InvalidStateError):
            call()
    with pytest.raises(InvalidStateError):
        in_thread(lambda: tool.call_soon_threadsafe(print))
    tool.close()  # idempotent
    assert tool.closed


def test_a_late_completion_from_a_worker_after_its_record_is_reused(tool):
    """The step's pooled record serves other steps after its quarantine:
    the kept handle must neither raise nor complete whatever step now
    lives there (rule 3: a late completion returns False)."""
    kept = []

    def short(asi):
        kept.append(asi)
        asi.set_timeout(1)
    root = AsyncSteps(tool).add(short, lambda asi, code: asi.success())
    root.run()
    for i in range(3000):  # more steps than the quarantine holds
        AsyncSteps(tool).add(lambda asi: asi.add(lambda asi: None)).run()
    got = []

    def waiting(asi):
        asi.set_timeout(60000)
        got.append(in_thread(lambda: (kept[0].success("stale"), kept[0].error("Stale"))))
        asi.success("mine")
    assert AsyncSteps(tool).add(waiting).run() == "mine"
    assert got == [(False, False)]
    stats = tool.stats()
    assert stats["late_completions"] == 2 and stats["misuse"] == 0


def test_a_second_completion_through_an_ended_handle_is_misuse(tool):
    kept = []

    def waiting(asi):
        kept.append(asi)
        asi.wait_external()
        tool.call_soon(lambda: asi.success())
    AsyncSteps(tool).add(waiting).run()
    with pytest.raises(InvalidStateError):
        kept[0].success()
    with pytest.raises(InvalidStateError):
        in_thread(lambda: kept[0].error("Again"))
