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
def trace():
    return Trace()


class Trace(list):
    def __call__(self, *parts):
        self.append(" ".join(str(p) for p in parts))

    def expect(self, name):
        want = (EXPECTED / f"{name}.trace").read_text().splitlines()
        assert list(self) == want
