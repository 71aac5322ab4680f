"""Tool.set_hooks() and Tool.dump() (futoin/sys/hooks.h, futoin_tool_dump()):
the binding passes each event on as a dict and the dump as a str; the
events and their order are the library's (tests/test_hooks.c). Virtual
time, so every time is exact."""
import re

import pytest

from futoin_async import AsyncSteps, Mutex, Tool


@pytest.fixture
def vtool():
    with Tool(virtual_time=True) as t:
        yield t


def recorder(events):
    def rec(ev):
        short = [ev["event"], "r%d" % ev["root_id"]]
        if "function" in ev:
            short.append(ev["function"].rsplit(".", 1)[-1])
        for key in ("code", "outcome", "wait", "wait_language"):
            if key in ev:
                short.append(ev[key])
        events.append(" ".join(short) + " @%d" % ev["now"])
    return rec


def test_the_hook_events_of_a_chain_an_error_and_a_wait(vtool):
    events = []
    vtool.set_hooks({name: recorder(events) for name in Tool.HOOK_EVENTS})

    def first(asi):
        asi.error("MyError", "it broke")

    def recover(asi, code):
        asi.success()

    def wait(asi):
        asi.wait_external()
        vtool.deferred(30, lambda: asi.success())

    root = AsyncSteps(vtool).add(first, recover).add(wait)
    root.execute()
    vtool.run()
    vtool.advance(0.03)
    rid = events[0].split(" ")[1]
    # execute() of the binding ends the flow with a C step of its own
    # (tr_finished), which is reported as any step
    assert events == [
        f"flow_started {rid} @0",
        f"step_entered {rid} first @0",
        f"error_raised {rid} MyError @0",
        f"error_handled {rid} MyError @0",
        f"step_left {rid} first @0",
        f"step_entered {rid} wait @0",
        f"wait_begun {rid} wait foreign python @0",
        f"wait_ended {rid} wait foreign python @30",
        f"step_left {rid} wait @30",
        f"step_entered {rid} tr_finished @30",
        f"step_left {rid} tr_finished @30",
        f"flow_finished {rid} success @30"]

    # cleared: nothing more is reported
    vtool.set_hooks()
    AsyncSteps(vtool).add(lambda asi: None).run()
    assert len(events) == 12


def test_set_hooks_refuses_unknown_events_and_non_callables(vtool):
    with pytest.raises(ValueError, match="no event 'step_started'"):
        vtool.set_hooks(step_started=print)
    with pytest.raises(TypeError, match="cancel must be callable"):
        vtool.set_hooks(cancel=1)


def test_the_dump_names_each_waiting_flows_reason_and_origin(vtool):
    mtx = Mutex(1)

    def sleepy(asi):
        asi.set_timeout(5000)

    def wait_ext(asi):
        asi.wait_external()

    def guarded(asi):
        asi.wait_external()

    r1 = AsyncSteps(vtool).add(sleepy)
    r2 = AsyncSteps(vtool).add(wait_ext)
    r3 = AsyncSteps(vtool).add(lambda asi: asi.sync(mtx, guarded))
    r4 = AsyncSteps(vtool).add(lambda asi: asi.sync(mtx, guarded))
    for r in (r1, r2, r3):
        r.execute()
    vtool.run()
    vtool.advance(0.4)
    r4.execute()
    vtool.run()
    vtool.advance(0.6)
    d = vtool.dump()
    assert d.startswith("futoin-dump version=1 now=1000 roots=4\n")
    assert d.endswith("end roots=4\n")
    ids = [int(i) for i in re.findall(r"^root=(\d+) state=running", d, re.M)]
    assert len(ids) == 4
    a, b, c, e = sorted(ids)
    # on a timer
    assert re.search(rf"^root={a} flow=0 wait=timer since=0 waited=1000 due=5000\n"
                     rf"root={a} flow=0 at=0 python \S*sleepy \(\S*test_watch.py:\d+\)$",
                     d, re.M), d
    # on an external completion: a Python step, which Python completes
    assert re.search(rf"^root={b} flow=0 wait=foreign since=0 waited=1000 "
                     rf"language=python\nroot={b} flow=0 at=0 python \S*wait_ext ",
                     d, re.M), d
    # the Mutex's holder waits in its section ...
    assert re.search(rf"^root={c} flow=0 wait=foreign since=0 waited=1000 "
                     rf"language=python\nroot={c} flow=0 at=0 python \S*guarded ",
                     d, re.M), d
    # ... and the other flow is first in its queue, since 400
    assert re.search(rf"^root={e} flow=0 wait=sync since=400 waited=600 "
                     rf"object=Mutex place=1 queued=1\n"
                     rf"root={e} flow=0 section=python \S*guarded ", d, re.M), d

    # a freed root is no longer listed
    r2.free()
    d = vtool.dump()
    assert d.startswith("futoin-dump version=1 now=1000 roots=3\n"), d
    assert not re.search(rf"^root={b} ", d, re.M), d
    for r in (r1, r3, r4):
        r.free()
    assert vtool.dump() == "futoin-dump version=1 now=1000 roots=0\nend roots=0\n"
    mtx.close()
