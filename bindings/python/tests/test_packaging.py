"""ONE runtime per process: the wheel carries libfutoin_async.so.0 next to
_core, which links to it dynamically (RUNPATH $ORIGIN) instead of having
the runtime compiled in."""
import ast
import importlib.metadata
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import futoin_async
from futoin_async import _core

PKG = pathlib.Path(futoin_async.__file__).resolve().parent
ROOT = pathlib.Path(__file__).resolve().parents[3]


def project_version():
    """The project's version, from the top meson.build (tests/run_all.sh
    copies it next to bindings/ with the sources it builds from)."""
    top = ROOT / "meson.build"
    assert top.is_file(), f"{top} is missing: copy the top meson.build too"
    m = re.search(r"project\(\s*'futoin_async'.*?\bversion:\s*'([^']+)'",
                  top.read_text(), re.S)
    assert m, "no version in the top meson.build's project()"
    return m.group(1)


def test_the_package_carries_the_project_version():
    want = project_version()
    assert futoin_async.__version__ == want
    assert importlib.metadata.version("futoin_async") == want  # the wheel's
    assert futoin_async.version() == want  # the bundled library's


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


def installed_objects():
    return [next(PKG.glob("_core*.so")), PKG / "libfutoin_async.so.0",
            PKG / "futoin-hosts" / "libfutoin_host_python.so"]


@pytest.mark.skipif(not shutil.which("readelf"), reason="binutils not installed")
@pytest.mark.parametrize("obj", installed_objects(), ids=lambda p: p.name.split(".")[0])
def test_every_shared_object_is_hardened(obj):
    """The hardening of runtime/meson.build (tests/abi/check_hardening.sh),
    read back from each installed file: full RELRO (GNU_RELRO + BIND_NOW),
    a non-executable stack, the stack protector and _FORTIFY_SOURCE
    (checked libc variants, and no unbounded string copy or sprintf left
    unchecked; an snprintf whose format has no conversion is bounded
    anyway and the compiler keeps it plain)."""
    def readelf(*opts):
        return subprocess.run(["readelf", "-W", *opts, str(obj)], capture_output=True,
                              text=True, check=True).stdout
    prog, dyn, syms = readelf("-l"), readelf("-d"), readelf("--dyn-syms")
    assert "GNU_RELRO" in prog
    assert re.search(r"\(FLAGS\).*\bBIND_NOW\b|\(FLAGS_1\).*\bNOW\b", dyn), dyn
    stack = [line.split() for line in prog.splitlines() if "GNU_STACK" in line]
    assert stack and "E" not in stack[0][-2], stack
    assert "__stack_chk_fail" in syms
    checked = set(re.findall(r"\b__(\w+)_chk\b", syms)) - {"stack"}
    assert checked, "no __*_chk call: built without _FORTIFY_SOURCE"
    plain = set(re.findall(r"\s(sprintf|vsprintf|strcpy|strcat|stpcpy)(?:@|$)", syms, re.M))
    assert plain == set()


MAPPED = """
import sys
first = sys.argv[1]
if first == "system":
    import ctypes  # _ctypes maps the system's libffi.so.8
    ctypes.CDLL("libuv.so.1", mode=ctypes.RTLD_GLOBAL)  # by soname: the system's
import futoin_async
assert futoin_async.AsyncSteps().add(lambda asi: 41).add(lambda asi, v: v + 1).run() == 42
if first == "wheel":
    import ctypes  # needs libffi.so.8: the one mapped
    ctypes.CDLL("libuv.so.1", mode=ctypes.RTLD_GLOBAL)  # what luv or uvloop would need
for lib in ("libuv.so", "libffi.so"):
    print(lib, sorted({l.split()[-1] for l in open("/proc/self/maps")
                       if "/" in l and l.split()[-1].rsplit("/", 1)[-1].startswith(lib)}))
"""


@pytest.mark.parametrize("first", ["wheel", "system"])
def test_the_wheel_bundles_libuv_and_libffi_one_per_process(first, tmp_path):
    """Issue 23: the wheel needs nothing outside itself but glibc: it carries
    libuv.so.1 and libffi.so.8 next to libfutoin_async.so.0, named by their
    sonames (auditwheel would rename them), so that a process maps ONE of
    each, whoever loaded it first: the wheel's when the package comes first,
    the one already mapped (luv, uvloop, the system's core) otherwise."""
    for lib in ("libuv.so.1", "libffi.so.8"):
        assert (PKG / lib).is_file(), f"{lib} is not in the wheel"
    script = tmp_path / "mapped.py"
    script.write_text(MAPPED)
    r = subprocess.run([sys.executable, str(script), first], capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    mapped = {line.split(" ", 1)[0]: ast.literal_eval(line.split(" ", 1)[1])
              for line in r.stdout.splitlines()}
    for lib in ("libuv.so", "libffi.so"):
        assert len(mapped[lib]) == 1, mapped
        (path,) = mapped[lib]
        assert path.startswith(str(PKG)) == (first == "wheel"), mapped
