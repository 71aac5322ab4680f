"""The polyglot matrix with Python as the host program (tests/polyglot/README.md).

Python steps and steps of another language F ("polyglot_fragments" of C,
Lua, Java, and Python itself by name) in one flow on one loop thread. Each
cell: values both ways, an error of F caught in Python and a Python error
caught in F, cancel, timeout, shared state, the async stack, and 10,000
mixed flows after which nothing is left behind.

Run by ``bindings/python/polyglot.sh test`` (pytest with ``-p
no:faulthandler``: a JVM started later in the process owns SIGSEGV, and
pytest would restore its own handler over it at the end). Environment as
tests/polyglot/run.sh exports it: PYTHONPATH (the
package and tests/polyglot/fragments/python), LUA_PATH, LUA_CPATH,
FUTOIN_JAVA_CLASSPATH, FUTOIN_POLYGLOT_C_FRAGMENTS; FUTOIN_POLYGLOT_LANGS
picks the fragment languages (default "c lua java python").
"""
import gc
import os
import sys
import traceback

import pytest

import futoin_async as fa
from futoin_async import AsyncSteps, Tool, _core

LANGS = os.environ.get("FUTOIN_POLYGLOT_LANGS", "c lua java python").split()
C_FRAGMENTS = os.environ.get("FUTOIN_POLYGLOT_C_FRAGMENTS", "")
HELLO = "h\u00e9llo"
BATCHES = [
    ((42, 2.5, True, HELLO), "int:42,float:2.5,bool:true,str:h\u00e9llo"),
    ((b"\x00\x01\xff", [1, 2, 3], [0.5, 1.5]), "bytes:0001ff,ints:1|2|3,floats:0.5|1.5"),
]


def module_of(lang):
    if lang == "java":
        return "org.futoin.polyglot.Fragments"
    if lang == "c":
        return C_FRAGMENTS
    return "polyglot_fragments"


@pytest.fixture(scope="module")
def tool():
    t = Tool()
    yield t
    t.close()


def values_step(*values):
    def give(asi):
        asi.success(*values)
    return give


def typed(values):
    """Values with their exact types (True is not 1 here)."""
    return [(type(v).__name__, [(type(e).__name__, e) for e in v] if isinstance(v, list) else v)
            for v in values]


# ---- values ---------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("batch", range(len(BATCHES)))
def test_values_echo(tool, lang, batch):
    values, _ = BATCHES[batch]
    root = AsyncSteps(tool)
    root.add(values_step(*values))
    root.add_foreign(lang, module_of(lang), "echo")
    got = root.run()
    assert typed(got) == typed(values)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("batch", range(len(BATCHES)))
def test_values_describe(tool, lang, batch):
    values, text = BATCHES[batch]
    root = AsyncSteps(tool)
    root.add(values_step(*values))
    root.add_foreign(lang, module_of(lang), "describe")
    assert root.run() == text


# ---- errors ---------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_error_of_lang_caught_in_python(tool, lang):
    seen = []

    def step(asi):
        asi.add_foreign(lang, module_of(lang), "fail")

    def handler(asi, code):
        seen.append((code, asi.error_info))
        asi.success("handled")

    root = AsyncSteps(tool)
    root.add(step, handler)
    assert root.run() == "handled"
    assert seen == [("FragmentError", lang)]


@pytest.mark.parametrize("lang", LANGS)
def test_error_of_python_caught_in_lang(tool, lang):
    root = AsyncSteps(tool)
    root.add(values_step("python", "polyglot_fragments", "fail"))
    root.add_foreign(lang, module_of(lang), "catch")
    assert root.run() == f"caught FragmentError in {lang}"


@pytest.mark.parametrize("lang", [lang for lang in LANGS if lang != "python"])
def test_a_step_of_lang_is_held_to_the_load_policy_of_this_tool(lang):
    """F's `catch` adds a Python step by name in a flow of a Tool whose
    load policy allows F's fragments and Python's polyglot_fragments only:
    a module outside it is refused, the refusal caught by F's handler; what
    it allows runs."""
    with Tool(allow_languages=("python", lang),
              allow_modules=(f"{lang}:{module_of(lang)}", "python:polyglot_fragments")) as t:
        root = AsyncSteps(t)
        root.add(values_step("python", "os", "getcwd"))
        root.add_foreign(lang, module_of(lang), "catch")
        assert root.run() == f"caught InvalidRequest in {lang}"
        assert root.state.error_info == (
            "load policy of this tool: python module 'os' is not allowed (no rule "
            "matches it; rules for python: python:polyglot_fragments)")
        root = AsyncSteps(t)
        root.state["key"] = 42
        root.add(values_step("python", "polyglot_fragments", "read_state"))
        root.add_foreign(lang, module_of(lang), "catch")
        assert root.run() == 42


@pytest.mark.parametrize("lang", LANGS)
def test_unhandled_error_of_lang_raises_from_run(tool, lang):
    root = AsyncSteps(tool)
    root.add_foreign(lang, module_of(lang), "fail")
    with pytest.raises(fa.FutoInError) as ei:
        root.run()
    assert (ei.value.code, ei.value.info) == ("FragmentError", lang)


# ---- cancel and timeout ---------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_cancel_runs_the_cancel_handler_of_lang(tool, lang):
    root = AsyncSteps(tool)
    root.add_foreign(lang, module_of(lang), "wait")
    tool.call_later(0.02, root.cancel)
    with pytest.raises(fa.CancelledError):
        root.run()
    assert root.state[f"cancelled_{lang}"] is True


@pytest.mark.parametrize("lang", LANGS)
def test_timeout_around_a_wait_of_lang(tool, lang):
    seen = []

    def step(asi):
        asi.set_timeout(30)
        asi.add_foreign(lang, module_of(lang), "wait")

    def handler(asi, code):
        seen.append((code, asi.state.get(f"cancelled_{lang}")))
        asi.success()

    root = AsyncSteps(tool)
    root.add(step, handler)
    root.run()
    assert seen == [("Timeout", True)]


# ---- state ------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_state_crosses_both_ways(tool, lang):
    seen = []

    def set_key(asi):
        asi.state["key"] = 42

    def keep(asi, *values):
        seen.append(values)

    def read_from(asi):
        seen.append(asi.state[f"from_{lang}"])

    root = AsyncSteps(tool)
    root.add(set_key)
    root.add_foreign(lang, module_of(lang), "read_state")
    root.add(keep)
    root.add_foreign(lang, module_of(lang), "write_state")
    root.add(read_from)
    root.run()
    assert seen == [(42,), lang]
    assert root.state[f"from_{lang}"] == lang  # through the root, after the flow


def test_state_set_on_the_root_before_execute_is_shared(tool):
    lang = LANGS[0]
    root = AsyncSteps(tool)
    root.state["key"] = 7
    root.add_foreign(lang, module_of(lang), "read_state")
    assert root.run() == 7


# ---- the async stack ----------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_async_stack_across_languages(tool, lang):
    stacks = []

    def python_outer(asi):
        asi.add_foreign(lang, module_of(lang), "fail")

    def handler(asi, code):
        stacks.append(asi.async_stack)
        asi.success()

    root = AsyncSteps(tool)
    root.add(python_outer, handler)
    root.run()
    (stack,) = stacks
    assert stack.code == "FragmentError"
    assert stack[0].language == lang
    assert stack[0].function and "fail" in stack[0].function
    later = [f for f in stack[1:] if f.language == "python"]
    assert later and later[0].function.endswith("python_outer")
    assert later[0].file == __file__ and later[0].line > 0
    text = stack.format()
    assert f"[{lang}]" in text and "in " + later[0].function in text
    # the same stack on the exception run() raises, shown by its traceback
    root = AsyncSteps(tool)
    root.add(python_outer)
    with pytest.raises(fa.FutoInError) as ei:
        root.run()
    assert ei.value.async_stack is not None
    assert ei.value.async_stack[0].language == lang
    shown = "".join(traceback.format_exception(ei.value))
    assert f"[{lang}]" in shown and "python_outer" in shown


# ---- nothing left behind -----------------------------------------------------------

def _mixed_flows(tool, lang, n):
    mod = module_of(lang)

    def fail_step(asi):
        asi.add_foreign(lang, mod, "fail")

    def handler(asi, code):
        asi.success(code)

    for i in range(n):
        root = AsyncSteps(tool)
        kind = i % 3
        if kind == 0:
            root.add(values_step(42, 2.5, True, HELLO))
            root.add_foreign(lang, mod, "echo")
            assert root.run() == (42, 2.5, True, HELLO)
        elif kind == 1:
            root.add(fail_step, handler)
            assert root.run() == "FragmentError"
        else:
            root.add_foreign(lang, mod, "wait")
            root.execute(lambda *a: None)
            tool.call_soon(root.cancel)
            tool.run()
        root.free()


@pytest.mark.parametrize("lang", LANGS)
def test_10000_flows_leave_nothing_behind(tool, lang):
    _mixed_flows(tool, lang, 300)  # warm up: caches, interned strings, JIT
    gc.collect()
    blocks = sys.getallocatedblocks()
    objects = len(gc.get_objects())
    _mixed_flows(tool, lang, 10_000)
    gc.collect()
    # a leak of one object per flow would show as thousands
    assert len(gc.get_objects()) - objects < 100
    assert sys.getallocatedblocks() - blocks < 500
    assert _core._pending_releases() == 0
    starts, stops, live = _core._host_counters()
    assert live == 0  # python steps made by name, all released
