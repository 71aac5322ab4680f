"""Every FTN12 error code as an exception class, by name.

``futoin_async.errors.<Code>`` is the class of error code ``Code``: the
standard codes' classes (``errors.Timeout is futoin_async.Timeout``, also
a ``TimeoutError``), and for any other code a ``FutoInError`` subclass
made on first use and kept, so that identity comparisons and ``except``
work::

    from futoin_async import errors

    def step(asi):
        raise errors.NotFound("no such id")   # fails the step with NotFound

    try:
        root.run()
    except errors.NotFound as e:              # a flow that failed with
        print(e.code, e.info)                 # "NotFound", in any language

A code that is not a Python identifier is reached with
``getattr(errors, "Some Error")``. An empty code, or one with a NUL
character, is a ValueError.
"""

from typing import Any

from . import _error_class


def __getattr__(name: str) -> Any:
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)  # module protocol lookups (__path__, ...)
    cls = _error_class(name)
    globals()[name] = cls  # found directly next time
    return cls
