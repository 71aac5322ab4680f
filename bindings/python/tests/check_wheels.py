"""The wheel check of the test command (bash bindings/python/test.sh
--wheels [OUT]): every wheel bindings/python/build.sh built into OUT.

Per wheel:
  - every ELF needs only libraries inside the wheel (by soname) or glibc's
    own (libc, libm, libpthread, libdl, librt, ld-linux), and its RUNPATH,
    if any, is $ORIGIN-relative only;
  - the bundled libraries keep their sonames as file names (libuv.so.1,
    libffi.so.8: one per process, whoever mapped it first);
  - its tag is the one its files call for (cpXY from the extension module,
    manylinux_2_N from the newest GLIBC_2.N needed), in its name and in
    its WHEEL file;
  - pip of a CPython of another X.Y refuses it;
and per CPython of its X.Y on this machine (Debian's /usr/bin/python3,
pyenv's, ...): a fresh venv, `pip install --no-index` of the wheel, and
the pytest suite (tests/) against the installed package. The CPythons the
package supports that this machine lacks are named as skipped (a fresh
Debian 12 has only 3.11). Venvs of another CPython than Debian's get
Debian's pytest (pure Python) through a .pth: no PyPI.

Prints a line per check ("ok ..." / "FAIL ..."), the suite's summary per
CPython, and last "python-wheels: N passed, M failed".
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
BINDING = HERE.parent
DEBIAN_PY = "/usr/bin/python3"
passed = failed = 0


def check(ok: bool, what: str, why: str = "") -> bool:
    global passed, failed
    if ok:
        passed += 1
        print(f"ok {what}")
    else:
        failed += 1
        print(f"FAIL {what}: {why}")
    sys.stdout.flush()
    return ok


def load_build_wheel():
    spec = importlib.util.spec_from_file_location("build_wheel", BINDING / "build_wheel.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def pytest_path(tmp: pathlib.Path) -> pathlib.Path:
    """A folder holding only Debian's pytest and its pure-Python
    dependencies (symlinks), for venvs of other CPythons."""
    d = tmp / "debian-pytest"
    if d.is_dir():
        return d
    d.mkdir()
    out = subprocess.run(
        [DEBIAN_PY, "-c", "import _pytest, pytest, pluggy, iniconfig, packaging, attr, "
         "attrs, py\nfor m in (_pytest, pytest, pluggy, iniconfig, packaging, attr, "
         "attrs, py): print(m.__file__)"],
        capture_output=True, text=True, check=True).stdout.split()
    for f in out:
        p = pathlib.Path(f)
        src = p.parent if p.name == "__init__.py" else p
        (d / src.name).symlink_to(src)
    return d


def suite(wheel: pathlib.Path, ver: str, py: str, tmp: pathlib.Path, n: int) -> None:
    """Install `wheel` into a fresh venv of `py` and run the suite there."""
    venv = tmp / f"venv-{ver}-{n}"
    label = f"{wheel.name} under {py} ({ver})"
    debian = os.path.realpath(py) == os.path.realpath(DEBIAN_PY)
    r = subprocess.run([py, "-m", "venv", *(["--system-site-packages"] if debian else []),
                        str(venv)], capture_output=True, text=True)
    if not check(r.returncode == 0, f"venv: {label}", r.stderr[-2000:]):
        return
    vpy = venv / "bin" / "python"
    if not debian:
        site = subprocess.run([str(vpy), "-c", "import sysconfig; print(sysconfig.get_paths()"
                               "['purelib'])"], capture_output=True, text=True,
                              check=True).stdout.strip()
        pathlib.Path(site, "debian-pytest.pth").write_text(f"{pytest_path(tmp)}\n")
    r = subprocess.run([str(vpy), "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                        str(wheel)], capture_output=True, text=True)
    if not check(r.returncode == 0, f"pip installs {label}", (r.stdout + r.stderr)[-2000:]):
        return
    log = tmp / f"pytest-{ver}-{n}.log"
    with open(log, "w") as f:
        r = subprocess.run([str(vpy), "-m", "pytest", "-p", "no:cacheprovider", "-q",
                            "-W", "ignore::DeprecationWarning:_pytest.assertion.rewrite",
                            str(HERE)], cwd=tmp, stdout=f, stderr=subprocess.STDOUT,
                           env=dict(os.environ, FUTOIN_PY_REQUIRE_INSTALLED="1"),
                           timeout=1800)
    text = log.read_text()
    summary = [line for line in text.splitlines()
               if re.search(r"\d+ (passed|failed|errors?)", line)]
    last = summary[-1].strip("= ") if summary else "no summary"
    bad = re.search(r"(\d+) (failed|errors?)", last)
    ok = r.returncode == 0 and not bad and "passed" in last
    if not ok:
        print("\n".join(line for line in text.splitlines()
                        if line.startswith(("FAILED", "ERROR")))[:4000])
    check(ok, f"pytest suite: {label}: {last}", f"see {log}" if not ok else "")


def check_wheel(bw, wheel: pathlib.Path, pythons: list, tmp: pathlib.Path) -> str:
    """The wheel's own checks; returns its CPython X.Y."""
    root = tmp / wheel.stem
    with zipfile.ZipFile(wheel) as z:
        z.extractall(root)
    elfs = sorted(p for p in root.rglob("*") if p.is_file() and bw.is_elf(p))
    sonames = {}
    for p in elfs:
        sonames[bw.dynamic(p)[1] or p.name] = p
    for p in elfs:
        rel = p.relative_to(root).as_posix()
        needed, soname, runpath = bw.dynamic(p)
        outside = [n for n in needed if n not in sonames and not bw.SYSTEM_LIBS.match(n)]
        check(not outside, f"{wheel.name}: {rel}: NEEDED {', '.join(needed)}",
              f"needs {outside} from outside the wheel")
        check(all(e.startswith("$ORIGIN") for e in runpath),
              f"{wheel.name}: {rel}: RUNPATH {':'.join(runpath) or '(none)'}",
              "an entry that is not $ORIGIN-relative")
        if soname and p.parent.name == "futoin_async" and not p.name.startswith("_core"):
            check(p.name == soname, f"{wheel.name}: {rel}: file named by its soname",
                  f"soname {soname}")
    m = re.match(r"futoin_async-[^-]+-(cp(\d)(\d+)-cp\d+-(manylinux_2_\d+_x86_64))\.whl$",
                 wheel.name)
    tag_file = re.search(r"^Tag: (\S+)$",
                         next(root.glob("*.dist-info")).joinpath("WHEEL").read_text(), re.M)
    want = bw.tags(root)
    check(bool(m) and m.group(1) == want and tag_file and tag_file.group(1) == want,
          f"{wheel.name}: tag {want}",
          f"name says {m.group(1) if m else '?'}, WHEEL says "
          f"{tag_file.group(1) if tag_file else '?'}")
    ver = f"{m.group(2)}.{m.group(3)}" if m else "?"
    other = next(((v, p) for v, p in pythons if v != ver), None)
    if other:
        r = subprocess.run([other[1], "-m", "pip", "install", "--dry-run", "--no-index",
                            "--no-deps", "--target", str(tmp / "refused"), str(wheel)],
                           capture_output=True, text=True)
        check(r.returncode != 0 and "not a supported wheel" in r.stdout + r.stderr,
              f"{wheel.name}: refused by CPython {other[0]}'s pip",
              (r.stdout + r.stderr)[-1000:])
    return ver


def main(argv: list[str]) -> int:
    out = pathlib.Path(argv[0] if argv else BINDING.parents[1] / "build" / "python").resolve()
    bw = load_build_wheel()
    pythons, skipped = bw.find_pythons()
    for why in skipped:
        print(f"skipped: {why}")
    versions = {v for v, _ in pythons}
    for v in bw.SUPPORTED:
        if v not in versions:
            print(f"skipped: CPython {v}: not on this machine (no wheel built or tested)")
    wheels = sorted(out.glob("futoin_async-*.whl"))
    check(bool(wheels), f"wheels in {out}", "none: run build.sh first")
    with tempfile.TemporaryDirectory(prefix="futoin-wheels.") as t:
        tmp = pathlib.Path(t)
        seen = set()
        for wheel in wheels:
            ver = check_wheel(bw, wheel, pythons, tmp)
            seen.add(ver)
            for n, (v, py) in enumerate(pythons):
                if v == ver:
                    suite(wheel, ver, py, tmp, n)
        for v in sorted(versions - seen):
            check(False, f"a wheel for CPython {v}", "build.sh built none")
    print(f"python-wheels: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
