"""AsyncSteps.wrap() over a foreign FTN12 implementation: the library's own
25-slot test implementation (tests/foreign/), built here as a small shared
object and driven through ctypes (PyDLL: the GIL stays held)."""
import ctypes
import pathlib
import shutil
import subprocess

import pytest

from futoin_async import AsyncSteps, FutoInError

ROOT = pathlib.Path(__file__).resolve().parents[3]
FOREIGN = ROOT / "tests" / "foreign" / "foreign_as.c"


@pytest.fixture(scope="module")
def foreign(tmp_path_factory):
    if not FOREIGN.exists() or not shutil.which("cc"):
        pytest.skip("tests/foreign/foreign_as.c or a C compiler is missing")
    so = tmp_path_factory.mktemp("foreign") / "libforeign_as.so"
    subprocess.run(["cc", "-std=c11", "-O1", "-shared", "-fPIC",
                    "-D_POSIX_C_SOURCE=200809L", "-I", str(ROOT / "abi"),
                    "-o", str(so), str(FOREIGN)], check=True)
    lib = ctypes.PyDLL(str(so))
    lib.foreign_loop_new.restype = ctypes.c_void_p
    lib.foreign_root_new.restype = ctypes.c_void_p
    lib.foreign_root_new.argtypes = [ctypes.c_void_p]
    lib.foreign_run.argtypes = [ctypes.c_void_p]
    lib.foreign_loop_free.argtypes = [ctypes.c_void_p]
    lib.foreign_live_roots.argtypes = [ctypes.c_void_p]
    lib.foreign_live_roots.restype = ctypes.c_size_t
    return lib


def test_wrap_foreign(foreign, trace):
    loop = foreign.foreign_loop_new()
    root = AsyncSteps.wrap(foreign.foreign_root_new(loop), owned=True)
    assert not root.is_ours()
    def s1(asi):
        trace("s1")
        asi.state.x = 1
        asi.add(lambda asi: asi.success(2, "two", [1, 2]))
    def s2(asi, a, b, c):
        trace("s2", a, b, c, asi.state.x)
        asi.error("MyError", "why")
    def eh(asi, code):
        trace("eh", code)
        asi.success("recovered")
    root.add(s1).add(s2, eh).add(lambda asi, v: trace("s3", v))
    root.repeat(2, lambda asi, i: trace("rep", i))
    errors = []
    root.execute(lambda code, info, last: errors.append(code))
    foreign.foreign_run(loop)
    assert trace == ["s1", "s2 2 two [1, 2] 1", "eh MyError", "s3 recovered",
                     "rep 0", "rep 1"]
    assert errors == []
    root.add(lambda asi: (_ for _ in ()).throw(ValueError("boom")))
    root.execute(lambda code, info, last: errors.append((code, info)))
    foreign.foreign_run(loop)
    ((code, info),) = errors
    assert code == "InternalError" and info.splitlines()[:2] == [
        "boom", "Traceback (most recent call last):"]  # then the traceback
    root.free()
    assert foreign.foreign_live_roots(loop) == 0
    foreign.foreign_loop_free(loop)
