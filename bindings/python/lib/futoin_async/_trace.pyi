# A private module of futoin_async: what it defines is typed where the
# package exports it (__init__.pyi). Empty, so that type checkers and
# stubtest read the package's stubs, not this module's source.
