"""Python steps of tests/debian/check.sh's polyglot flows (installed into
/usr/local/lib/python3.N/dist-packages of the throwaway root: where a
Debian user's own modules go, found with no variable set)."""


def double(asi, value):
    """The value times two."""
    asi.success(value * 2)


def add_two(asi, value):
    """The value plus two."""
    asi.success(value + 2)
