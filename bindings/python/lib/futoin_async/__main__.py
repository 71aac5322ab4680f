"""python3 -m futoin_async [--host-path | --version]

--host-path  print the directory of the Python language host plug-in
             (libfutoin_host_python.so; found by the library through the
             venv, FUTOIN_HOST_PATH overrides for development)
--version    print the package's and the library's versions
"""
import sys

from . import __version__, host_path, version


def main(argv: list) -> int:
    if argv == ["--host-path"]:
        print(host_path())
        return 0
    if argv == ["--version"]:
        print(f"futoin_async {__version__}, libfutoin_async {version()}")
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
