"""The load policy (issue 23: "loading is code execution"): what the flows
of a Tool, or of the whole process, may add by name. Tool(allow_languages=,
allow_modules=), Tool.set_load_policy() and futoin_async.set_load_policy()
over futoin_host_policy_set(); the rules themselves are the core's
(tests/test_policy.c). Steps of other languages adding steps in a Python
flow are checked too: here a C step, in tests/polyglot/ a Lua one."""
import pathlib
import shutil
import subprocess
import sys

import pytest

import futoin_async as fa
from futoin_async import AsyncSteps, InvalidStateError, Tool

ROOT = pathlib.Path(__file__).resolve().parents[3]
PKG = pathlib.Path(fa.__file__).resolve().parent
C_FRAGMENTS = ROOT / "tests" / "polyglot" / "fragments" / "c" / "polyglot_fragments.c"
HYPOT = ("c", "libm.so.6", "double hypot(double, double)")


@pytest.fixture
def app(tmp_path, monkeypatch):
    """A package pol_app (pol_app.steps.double and .ping, pol_app.top) and a module
    pol_other (double) on sys.path."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "pol_app").mkdir()
    (tmp_path / "pol_app" / "__init__.py").write_text("def top(asi, v):\n    return v\n")
    (tmp_path / "pol_app" / "steps.py").write_text(
        "def double(asi, v):\n    return v * 2\n\ndef ping(asi):\n    return 'pong'\n")
    (tmp_path / "pol_other.py").write_text("def double(asi, v):\n    return v * 2\n")
    yield
    for name in ("pol_app", "pol_app.steps", "pol_other"):
        sys.modules.pop(name, None)


@pytest.fixture(scope="module")
def cfrag(tmp_path_factory):
    """The polyglot matrix's C fragments in a folder of their own, linked
    to the package's library."""
    if not C_FRAGMENTS.exists() or not shutil.which("cc"):
        pytest.skip("the C fragments or a C compiler are missing")
    d = tmp_path_factory.mktemp("cfrag")
    (d / "sub").mkdir()
    so = d / "libpolyglot_fragments.so"
    subprocess.run(["cc", "-std=c11", "-O1", "-shared", "-fPIC",
                    "-fvisibility=hidden", "-DFUTOIN_BUILDING_LIBRARY",
                    "-I", str(ROOT / "abi"), "-o", str(so), str(C_FRAGMENTS),
                    str(PKG / "libfutoin_async.so.0")], check=True)
    return so


def run_one(tool, first, named):
    """A root of `tool`: a step returning `first`, then the named step."""
    root = AsyncSteps(tool)
    root.add(lambda asi: first)
    root.add_foreign(*named)
    return root.run()


def refused(tool, named, first=2):
    """The named step's error: InvalidRequest, its info returned."""
    root = AsyncSteps(tool)
    root.add(lambda asi: first)
    root.add_foreign(*named)
    root.add(lambda asi, *v: pytest.fail("a step after the refused one ran"))
    with pytest.raises(fa.InvalidRequest) as ei:
        root.run()
    return ei.value.info


# ---- what the policy allows and refuses ---------------------------------------

def test_without_a_policy_everything_is_allowed(tool, app):
    assert run_one(tool, 21, ("python", "pol_other", "double")) == 42
    assert run_one(tool, (3.0, 4.0), HYPOT) == 5.0


def test_allowed_languages_and_modules_run(app):
    with Tool(allow_languages=("python", "c"),
              allow_modules=["python:pol_app.*", "python:pol_app", "c:libm.so.6"]) as tool:
        assert run_one(tool, 21, ("python", "pol_app.steps", "double")) == 42
        assert run_one(tool, 21, ("python", "pol_app", "top")) == 21
        assert run_one(tool, (3.0, 4.0), HYPOT) == 5.0


def test_a_language_not_listed_is_refused_naming_the_rule(app):
    with Tool(allow_languages=("python",)) as tool:
        assert refused(tool, HYPOT) == (
            "load policy of this tool: language 'c' is not allowed (languages: python)")
        # refused before its plug-in is looked for: no "no plug-in found"
        assert refused(tool, ("cobol", "payroll", "run")) == (
            "load policy of this tool: language 'cobol' is not allowed (languages: python)")
        assert run_one(tool, 21, ("python", "pol_other", "double")) == 42


def test_an_empty_list_allows_no_language(app):
    with Tool(allow_languages=()) as tool:
        assert refused(tool, ("python", "pol_other", "double")) == (
            "load policy of this tool: language 'python' is not allowed (languages: none)")


def test_a_module_outside_the_prefix_rule_is_refused(app):
    with Tool(allow_modules=("python:pol_app.*", "c:libm.so.6")) as tool:
        rules = "(no rule matches it; rules for python: python:pol_app.*)"
        # the package itself is not "pol_app.*", nor is another module
        assert refused(tool, ("python", "pol_app", "top")) == (
            f"load policy of this tool: python module 'pol_app' is not allowed {rules}")
        assert refused(tool, ("python", "pol_other", "double")) == (
            f"load policy of this tool: python module 'pol_other' is not allowed {rules}")
        assert refused(tool, ("python", "os", "system"), first="true") == (
            f"load policy of this tool: python module 'os' is not allowed {rules}")
        assert refused(tool, ("c", "libc.so.6", "int abs(int)")) == (
            "load policy of this tool: c module 'libc.so.6' is not allowed (no rule "
            "matches it; rules for c: c:libm.so.6)")
        assert run_one(tool, 21, ("python", "pol_app.steps", "double")) == 42


def test_a_language_without_rules_has_no_module_allowed(app):
    with Tool(allow_modules=("c:libm.so.6",)) as tool:
        assert refused(tool, ("python", "pol_other", "double")) == (
            "load policy of this tool: python module 'pol_other' is not allowed "
            "(no rule names python modules)")


def test_dot_dot_does_not_climb_out_of_a_folder_rule(cfrag):
    folder = cfrag.parent
    with Tool(allow_modules=(f"c:{folder}/*",)) as tool:
        assert run_one(tool, (42, "x"), ("c", str(cfrag), "echo")) == (42, "x")
        # the same file, reached through "..": refused, not loaded
        climbing = f"{folder}/sub/../{cfrag.name}"
        assert refused(tool, ("c", climbing, "echo")) == (
            f"load policy of this tool: c module '{climbing}' is not allowed (no rule "
            f"matches it; rules for c: c:{folder}/*)")


# ---- steps of another language in a Python flow ---------------------------------

def test_a_c_step_adding_a_python_step_is_held_to_the_tools_policy(app, cfrag):
    """The C fragment `catch` adds the named step under its own error
    handler (which turns the error into "caught <code> in c"): what a C
    step adds by name in this tool's flow passes the same policy."""
    with Tool(allow_languages=("python", "c"),
              allow_modules=(f"c:{cfrag}", "python:pol_app.*")) as tool:
        root = AsyncSteps(tool)
        root.add(lambda asi: ("python", "pol_other", "double"))
        root.add_foreign("c", str(cfrag), "catch")
        assert root.run() == "caught InvalidRequest in c"
        assert root.state.error_info == (
            "load policy of this tool: python module 'pol_other' is not allowed (no "
            "rule matches it; rules for python: python:pol_app.*)")
        # what the policy names runs from the C step as well
        root = AsyncSteps(tool)
        root.add(lambda asi: ("python", "pol_app", "top"))
        root.add_foreign("c", str(cfrag), "catch")
        assert root.run() == "caught InvalidRequest in c"
        root = AsyncSteps(tool)
        root.add(lambda asi: ("python", "pol_app.steps", "ping"))
        root.add_foreign("c", str(cfrag), "catch")
        assert root.run() == "pong"  # the named step ran: no error to catch


# ---- set once ---------------------------------------------------------------------

def test_a_second_policy_for_a_tool_is_refused_and_changes_nothing(app):
    with Tool(allow_languages=("python",)) as tool:
        with pytest.raises(InvalidStateError, match="has a load policy already"):
            tool.set_load_policy()  # allow everything: would widen it
        with pytest.raises(InvalidStateError, match="has a load policy already"):
            tool.set_load_policy(allow_languages=("python", "c"))
        assert refused(tool, HYPOT).startswith("load policy of this tool: language 'c'")


def test_set_load_policy_on_a_tool_made_without_one(tool, app):
    assert run_one(tool, (3.0, 4.0), HYPOT) == 5.0
    tool.set_load_policy(allow_modules=["python:pol_other"])
    assert refused(tool, HYPOT) == ("load policy of this tool: c module 'libm.so.6' is "
                                    "not allowed (no rule names c modules)")
    assert run_one(tool, 21, ("python", "pol_other", "double")) == 42
    with pytest.raises(InvalidStateError):
        tool.set_load_policy(allow_modules=["python:pol_other"])


def test_a_closed_tool_takes_no_policy():
    tool = Tool()
    tool.close()
    with pytest.raises(InvalidStateError, match="closed"):
        tool.set_load_policy(allow_languages=("c",))


def test_policies_are_per_tool(app):
    with Tool(allow_languages=("python",)) as strict, Tool() as free:
        assert refused(strict, HYPOT).startswith("load policy of this tool")
        assert run_one(free, (3.0, 4.0), HYPOT) == 5.0


# ---- bad input, refused where it is given -------------------------------------

BAD = [
    # (kwargs, exception, message pattern)
    (dict(allow_languages="python"), TypeError,
     r"allow_languages must be an iterable of str \(a tuple, a list\), not str"),
    (dict(allow_modules=b"c:libm.so.6"), TypeError, "allow_modules must be an iterable"),
    (dict(allow_languages=42), TypeError, "not int"),
    (dict(allow_languages=("python", 3)), TypeError, r"allow_languages\[1\] must be str, not int"),
    (dict(allow_modules=("c:libm.so.6", None)), TypeError,
     r"allow_modules\[1\] must be str, not NoneType"),
    (dict(allow_languages=("py\0thon",)), ValueError,
     r"allow_languages\[0\] must not contain NUL characters"),
    (dict(allow_modules=("python:os\0x",)), ValueError,
     r"allow_modules\[0\] must not contain NUL characters"),
    (dict(allow_languages=("no/such",)), ValueError, "'no/such' is not a language name"),
    (dict(allow_languages=("",)), ValueError, "'' is not a language name"),
    (dict(allow_modules=("libm.so.6",)), ValueError,
     r"'libm.so.6' is not a rule 'language:module'"),
    (dict(allow_modules=(":libm.so.6",)), ValueError, "is not a rule 'language:module'"),
    (dict(allow_modules=("c:",)), ValueError, "'c:' names no module"),
    (dict(allow_modules=("py thon:x",)), ValueError, "'py thon' is not a language name"),
    (dict(allow_modules=("java:org.*.Totals",)), ValueError,
     r"allow_modules\[0\]: 'java:org.\*.Totals': '\*' is only allowed last"),
    (dict(allow_modules=("java:*x",)), ValueError, "only allowed last"),
]


@pytest.mark.parametrize("kwargs, exc, says", BAD)
def test_bad_input_to_tool_is_refused_and_makes_no_tool(kwargs, exc, says):
    before = set(fa._tool._tools.keys())
    with pytest.raises(exc, match=says) as ei:
        Tool(**kwargs)
    assert str(ei.value).startswith("Tool(): ")
    # no tool was registered (a Tool of an earlier test may have been
    # collected meanwhile: _tools is weak, so it can only shrink by that)
    assert set(fa._tool._tools.keys()) - before == set()


@pytest.mark.parametrize("kwargs, exc, says", BAD)
def test_bad_input_to_set_load_policy_is_refused_and_sets_nothing(tool, app, kwargs, exc,
                                                                 says):
    with pytest.raises(exc, match=says) as ei:
        tool.set_load_policy(**kwargs)
    assert str(ei.value).startswith("Tool.set_load_policy(): ")
    tool.set_load_policy(allow_languages=("c",))  # the first one that is taken
    assert refused(tool, ("python", "pol_other", "double")).startswith(
        "load policy of this tool: language 'python'")


def test_any_iterable_of_str_is_a_list(app):
    with Tool(allow_languages=(x for x in ("python",)),
              allow_modules={"python:pol_other"}) as tool:
        assert run_one(tool, 21, ("python", "pol_other", "double")) == 42
        assert refused(tool, HYPOT).startswith("load policy of this tool: language 'c'")


# ---- the process's policy (a process of its own: it is set once for good) -------

PROCESS_SCRIPT = r"""
import sys
import futoin_async as fa
from futoin_async import AsyncSteps, Tool

def outcome(tool, named, first):
    root = AsyncSteps(tool)
    root.add(lambda asi: first)
    root.add_foreign(*named)
    try:
        return repr(root.run())
    except fa.FutoInError as e:
        return f"{e.code}: {e.info}"

hypot = ("c", "libm.so.6", "double hypot(double, double)")
for bad in (dict(allow_languages="c"), dict(allow_modules=("c:*x",))):
    try:
        fa.set_load_policy(**bad)
    except (TypeError, ValueError) as e:
        print(type(e).__name__, e)
print(outcome(Tool(), hypot, (3.0, 4.0)))  # nothing was set
fa.set_load_policy(allow_languages=["python", "c"], allow_modules=["c:libm.so.6", "python:*"])
try:
    fa.set_load_policy()
except fa.InvalidStateError as e:
    print("InvalidStateError", e)
print(outcome(Tool(), hypot, (3.0, 4.0)))
print(outcome(Tool(), ("c", "libc.so.6", "int abs(int)"), -3))
print(outcome(Tool(), ("lua", "pricing", "apply"), 1))
# the tool's policy applies as well
print(outcome(Tool(allow_languages=("python",)), hypot, (3.0, 4.0)))
"""


def test_the_process_policy_applies_to_every_tool_and_is_set_once():
    r = subprocess.run([sys.executable, "-c", PROCESS_SCRIPT], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "TypeError set_load_policy(): allow_languages must be an iterable of str "
        "(a tuple, a list), not str",
        "ValueError set_load_policy(): allow_modules[0]: 'c:*x': '*' is only allowed "
        "last (a prefix rule, e.g. 'java:org.example.*')",
        "5.0",
        "InvalidStateError set_load_policy(): this process has a load policy already; it "
        "is set once, so that code running in a flow cannot widen it",
        "5.0",
        "InvalidRequest: load policy of this process: c module 'libc.so.6' is not allowed "
        "(no rule matches it; rules for c: c:libm.so.6)",
        "InvalidRequest: load policy of this process: language 'lua' is not allowed "
        "(languages: python, c)",
        "InvalidRequest: load policy of this tool: language 'c' is not allowed "
        "(languages: python)",
    ]

