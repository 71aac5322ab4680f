import os
import pathlib

import pytest

import futoin_async

HERE = pathlib.Path(__file__).resolve().parent
EXPECTED = HERE.parents[2] / "tests" / "expected"

# polyglot/: the python host's part of the polyglot matrix, which needs the
# other languages' plug-ins (bash bindings/python/polyglot.sh test runs it)
collect_ignore = ["polyglot"]

# The suite tests the installed package, never the source tree.
if os.environ.get("FUTOIN_PY_REQUIRE_INSTALLED"):
    assert not pathlib.Path(futoin_async.__file__).resolve().is_relative_to(
        HERE.parent), futoin_async.__file__


@pytest.fixture
def tool():
    return futoin_async.Tool()


@pytest.fixture
def vtool():
    """A Tool on virtual time: for tests about timers, whose order then
    depends on no stall of a loaded machine."""
    with futoin_async.Tool(virtual_time=True) as t:
        yield t


def drive(tool):
    """Run the tool until nothing is left: on virtual time, what is due
    now, then timer by timer until no timer is pending."""
    tool.run()
    while tool.virtual_time and tool.next_due() is not None:
        tool.advance(tool.next_due())


@pytest.fixture
def trace():
    return Trace()


class Trace(list):
    def __call__(self, *parts):
        self.append(" ".join(str(p) for p in parts))

    def expect(self, name):
        want = (EXPECTED / f"{name}.trace").read_text().splitlines()
        assert list(self) == want
