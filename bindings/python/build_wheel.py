"""Makes the wheels bindings/python/build.sh ships portable and
self-contained, the way `auditwheel repair` would, with Debian's tools only
(the standard library, readelf, patchelf):

  python3 build_wheel.py repair WHEEL OUTDIR
      a wheel meson-python built (for the CPython that runs meson);
  python3 build_wheel.py pack PKGDIR OUTDIR
      the installed package folder futoin_async/ of a `meson install` for
      another CPython (meson.build's -Dpython=PATH), made a wheel first;
  python3 build_wheel.py pythons
      the CPythons >= 3.11 of this machine ("X.Y PATH" a line; why others
      were left out on stderr).

Both print the path of the wheel written to OUTDIR. What repair does:

- Every shared library an ELF of the wheel needs that is neither in the
  wheel nor glibc's own (libc, libm, libpthread, libdl, librt, ld-linux)
  is copied into futoin_async/ from where the dynamic linker finds it here
  (libuv.so.1, libffi.so.8), and so on for what those need. Unlike
  auditwheel, the copies KEEP their file names = sonames (auditwheel
  renames them libuv-<hash>.so.1.0.0 and rewrites the NEEDED entries): the
  dynamic linker binds a soname once per process, so the process holds ONE
  libuv and ONE libffi whoever mapped it first (luv, uvloop, the system's
  libfutoin_async, or this wheel), as it holds one libfutoin_async.so.0.
  The price: the copy is only used when no other libuv.so.1 is mapped yet,
  so every libuv.so.1 in a process must keep libuv's 1.x ABI (it does).
- Each ELF that needs a bundled library gets RUNPATH $ORIGIN (relative to
  its folder); no other RUNPATH is left.
- A bundled library linked for lazy binding (Debian's libffi.so.8) gets
  DT_FLAGS_1 NOW in a spare slot of its dynamic section: its symbols are
  bound at load time, as ours are (-z now). Its .got.plt stays outside
  GNU_RELRO, as Debian linked it.
- The wheel's tags: cpXY-cpXY from the extension module's suffix (SWIG's
  -builtin types need CPython's full API: one wheel per CPython, no abi3),
  manylinux_2_N_x86_64 from the newest GLIBC_2.N symbol version any ELF
  needs; RECORD is written anew.
"""

from __future__ import annotations

import base64
import hashlib
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile

NAME = "futoin_async"
DIST = "futoin_async"
#: what every Linux system has: glibc's own libraries (the manylinux set
#: this package needs)
SYSTEM_LIBS = re.compile(
    r"^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|"
    r"ld-linux-x86-64\.so\.2)$")
HERE = pathlib.Path(__file__).resolve().parent


def readelf(*args: str) -> str:
    return subprocess.run(["readelf", "-W", *args], capture_output=True, text=True,
                          check=True).stdout


def is_elf(path: pathlib.Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def dynamic(path: pathlib.Path) -> tuple[list[str], str | None, list[str]]:
    """(NEEDED, SONAME, RUNPATH entries) of an ELF."""
    out = readelf("-d", str(path))
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    soname = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", out)
    runpath = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^\]]*)\]", out)
    return needed, soname.group(1) if soname else None, \
        runpath.group(1).split(":") if runpath else []


def glibc_needed(path: pathlib.Path) -> int:
    """The newest GLIBC_2.N version the ELF needs (N)."""
    versions = re.findall(r"\bGLIBC_2\.(\d+)\b", readelf("-V", str(path)))
    return max((int(v) for v in versions), default=17)


def system_path(soname: str) -> pathlib.Path:
    """Where the dynamic linker finds `soname` here (x86-64)."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if m and m.group(1) == soname and "x86-64" in m.group(2):
            return pathlib.Path(m.group(3)).resolve()
    raise SystemExit(f"build_wheel.py: {soname} is needed but not installed")


def bind_now(path: pathlib.Path) -> bool:
    """Give a lazily bound ELF64 DT_FLAGS_1 |= DF_1_NOW. Uses an existing
    DT_FLAGS_1 entry, else the first spare DT_NULL slot of its dynamic
    section when at least one DT_NULL stays after it. True if it is (now)
    bound at load time."""
    DT_NULL, DT_FLAGS, DT_BIND_NOW, DT_FLAGS_1 = 0, 30, 24, 0x6ffffffb
    DF_BIND_NOW, DF_1_NOW = 0x8, 0x1
    data = bytearray(path.read_bytes())
    if data[4] != 2 or data[5] != 1:
        return False  # ELF64 little-endian only (x86-64)
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    dyn_off = dyn_size = None
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 2:  # PT_DYNAMIC
            dyn_off, dyn_size = p_offset, p_filesz
    if dyn_off is None:
        return False
    entries = [struct.unpack_from("<qQ", data, dyn_off + 16 * i) for i in range(dyn_size // 16)]
    for tag, val in entries:
        if tag == DT_BIND_NOW or (tag == DT_FLAGS and val & DF_BIND_NOW) or \
                (tag == DT_FLAGS_1 and val & DF_1_NOW):
            return True
    for i, (tag, val) in enumerate(entries):
        if tag == DT_FLAGS_1:
            struct.pack_into("<qQ", data, dyn_off + 16 * i, DT_FLAGS_1, val | DF_1_NOW)
            break
    else:
        first_null = next(i for i, (tag, _) in enumerate(entries) if tag == DT_NULL)
        if first_null + 1 >= len(entries):
            return False  # no spare slot: left as it is
        struct.pack_into("<qQ", data, dyn_off + 16 * first_null, DT_FLAGS_1, DF_1_NOW)
    path.write_bytes(bytes(data))
    return True


def patchelf(*args: str) -> None:
    subprocess.run(["patchelf", *args], check=True)


def bundle(root: pathlib.Path) -> list[str]:
    """Copy what the wheel's ELFs need from the system into futoin_async/,
    soname kept; RUNPATH $ORIGIN where needed. Returns the bundled names."""
    pkg = root / NAME
    bundled: list[str] = []
    todo = [p for p in sorted(root.rglob("*")) if p.is_file() and is_elf(p)]
    provided = {dynamic(p)[1] or p.name for p in todo}
    while todo:
        elf = todo.pop(0)
        needed, _, runpath = dynamic(elf)
        wants_origin = False
        for lib in needed:
            if SYSTEM_LIBS.match(lib):
                continue
            if lib not in provided:
                src = system_path(lib)
                dst = pkg / lib
                shutil.copyfile(src, dst)
                os.chmod(dst, 0o755)
                if not bind_now(dst):
                    print(f"build_wheel.py: {lib}: lazy binding kept (no spare "
                          "dynamic slot)", file=sys.stderr)
                provided.add(lib)
                bundled.append(lib)
                todo.append(dst)
            wants_origin = True
        rel = os.path.relpath(pkg, elf.parent)
        want = "$ORIGIN" if rel == "." else f"$ORIGIN/{rel}"
        if wants_origin and runpath != [want]:
            patchelf("--set-rpath", want, str(elf))
        elif not wants_origin and runpath:
            patchelf("--remove-rpath", str(elf))
    return bundled


def tags(root: pathlib.Path) -> str:
    core = next((root / NAME).glob("_core.*.so"))
    m = re.match(r"_core\.cpython-(\d+)-x86_64-linux-gnu\.so$", core.name)
    if not m:
        raise SystemExit(f"build_wheel.py: {core.name}: not a CPython x86-64 extension")
    glibc = max(glibc_needed(p) for p in root.rglob("*") if p.is_file() and is_elf(p))
    return f"cp{m.group(1)}-cp{m.group(1)}-manylinux_2_{glibc}_x86_64"


def record_line(root: pathlib.Path, path: pathlib.Path) -> str:
    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path.relative_to(root).as_posix()},sha256={digest},{len(data)}"


def write_wheel(root: pathlib.Path, version: str, outdir: pathlib.Path) -> pathlib.Path:
    tag = tags(root)
    info = root / f"{DIST}-{version}.dist-info"
    (info / "WHEEL").write_text(
        "Wheel-Version: 1.0\nGenerator: bindings/python/build_wheel.py\n"
        f"Root-Is-Purelib: false\nTag: {tag}\n")
    record = info / "RECORD"
    files = sorted(p for p in root.rglob("*") if p.is_file() and p != record)
    record.write_text("".join(record_line(root, p) + "\n" for p in files)
                      + f"{record.relative_to(root).as_posix()},,\n")
    out = outdir / f"{DIST}-{version}-{tag}.whl"
    out.unlink(missing_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        # the package first, dist-info (and RECORD) last, as wheels do
        for p in [p for p in files if info not in p.parents] + \
                 [p for p in files if info in p.parents] + [record]:
            zi = zipfile.ZipInfo(p.relative_to(root).as_posix(), (2020, 1, 1, 0, 0, 0))
            zi.external_attr = (0o755 if os.access(p, os.X_OK) else 0o644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, p.read_bytes())
    return out


def project() -> dict:
    """name, version and the rest of METADATA, from pyproject.toml."""
    import tomllib
    with open(HERE / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def metadata(version: str) -> str:
    p = project()
    return (f"Metadata-Version: 2.1\nName: {p['name'].replace('_', '-')}\n"
            f"Version: {version}\nSummary: {p['description']}\n"
            f"License: {p['license']['text']}\nRequires-Python: {p['requires-python']}\n")


def repair(wheel: pathlib.Path, outdir: pathlib.Path) -> pathlib.Path:
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        with zipfile.ZipFile(wheel) as z:
            z.extractall(root)
        for p in root.rglob("*"):  # zipfile drops the modes
            if p.is_file() and is_elf(p):
                os.chmod(p, 0o755)
        (info,) = root.glob("*.dist-info")
        version = info.name[len(DIST) + 1:-len(".dist-info")]
        bundle(root)
        return write_wheel(root, version, outdir)


def pack(pkgdir: pathlib.Path, outdir: pathlib.Path) -> pathlib.Path:
    version = project()["version"]
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        shutil.copytree(pkgdir, root / NAME, symlinks=False)
        info = root / f"{DIST}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(metadata(version))
        bundle(root)
        return write_wheel(root, version, outdir)


# ---- the CPythons of this machine ---------------------------------------------

#: the CPython versions this package supports (3.11 and newer, as released)
SUPPORTED = ("3.11", "3.12", "3.13")

_PROBE = ("import sys, sysconfig, os; v = sysconfig.get_config_var; "
          "print(sys.implementation.name, '%d.%d' % sys.version_info[:2], "
          "int(bool(v('Py_ENABLE_SHARED'))), "
          "int(os.path.isfile(os.path.join(sysconfig.get_paths()['include'], 'Python.h'))))")


def find_pythons() -> tuple[list[tuple[str, str]], list[str]]:
    """Every CPython >= 3.11 with its headers on this machine: ([(X.Y,
    path)], with Debian's /usr/bin/python3 first), and why others were
    left out. Looks at /usr/bin/python3, pyenv's versions ($PYENV_ROOT or
    ~/.pyenv), /usr/bin, /usr/local/bin and PATH's python3.X."""
    cands = ["/usr/bin/python3"]
    pyenv = pathlib.Path(os.environ.get("PYENV_ROOT") or pathlib.Path.home() / ".pyenv")
    cands += sorted(str(p) for p in pyenv.glob("versions/*/bin/python3"))
    for d in ["/usr/bin", "/usr/local/bin"] + os.environ.get("PATH", "").split(":"):
        # pyenv's shims are scripts that pick a version: its versions are above
        if d.startswith("/") and pathlib.Path(d) != pyenv / "shims":
            cands += sorted(str(p) for p in pathlib.Path(d).glob("python3.[0-9]*")
                            if re.fullmatch(r"python3\.\d+", p.name))
    found: list[tuple[str, str]] = []
    skipped: list[str] = []
    seen: set = set()
    for c in cands:
        real = os.path.realpath(c)
        if real in seen or not os.access(real, os.X_OK):
            continue
        seen.add(real)
        try:
            impl, ver, shared, headers = subprocess.run(
                [c, "-I", "-c", _PROBE], capture_output=True, text=True, timeout=60,
                check=True).stdout.split()
        except (OSError, subprocess.SubprocessError, ValueError):
            skipped.append(f"{c}: does not run")
            continue
        if impl != "cpython" or tuple(map(int, ver.split("."))) < (3, 11):
            continue  # not one this package is for
        if headers != "1":
            skipped.append(f"{c} ({ver}): no Python.h (the -dev package is missing)")
            continue
        if shared != "1":
            skipped.append(f"{c} ({ver}): no shared libpython (the plug-in cannot embed it)")
        found.append((ver, c))
    return found, skipped


def main(argv: list[str]) -> int:
    if argv == ["pythons"]:
        found, skipped = find_pythons()
        for ver, path in found:
            print(ver, path)
        for why in skipped:
            print(f"skipped: {why}", file=sys.stderr)
        return 0
    if len(argv) == 3 and argv[0] in ("repair", "pack"):
        src, out = pathlib.Path(argv[1]).resolve(), pathlib.Path(argv[2]).resolve()
        print((repair if argv[0] == "repair" else pack)(src, out))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
