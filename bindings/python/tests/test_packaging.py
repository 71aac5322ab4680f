"""ONE runtime per process: the wheel carries libfutoin_async.so.0 next to
_core, which links to it dynamically (RUNPATH $ORIGIN) instead of having
the runtime compiled in."""
import pathlib
import shutil
import subprocess

import pytest

import futoin_async
from futoin_async import _core

PKG = pathlib.Path(futoin_async.__file__).resolve().parent


def test_core_links_the_bundled_runtime():
    lib = PKG / "libfutoin_async.so.0"
    assert lib.is_file()
    maps = pathlib.Path("/proc/self/maps").read_text()
    loaded = {line.split()[-1] for line in maps.splitlines()
              if "libfutoin_async.so" in line}
    assert loaded == {str(lib)}  # exactly one runtime, the bundled copy


@pytest.mark.skipif(not shutil.which("readelf"), reason="binutils not installed")
def test_core_does_not_contain_the_runtime():
    core = pathlib.Path(_core.__file__)
    dyn = subprocess.run(["readelf", "-d", str(core)], capture_output=True,
                         text=True, check=True).stdout
    assert "[libfutoin_async.so.0]" in dyn and "$ORIGIN" in dyn
    syms = subprocess.run(["readelf", "--dyn-syms", "-W", str(core)],
                          capture_output=True, text=True, check=True).stdout
    defined = [line.split()[-1] for line in syms.splitlines()
               if "futoin_tool_new" in line and " UND " not in line]
    assert defined == []  # imported from libfutoin_async.so.0, not defined here
