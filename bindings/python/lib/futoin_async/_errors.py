"""FutoInError, the class of every error code, and the exceptions of the
package's own (CancelledError, InvalidStateError); how a flow's unhandled
error becomes the exception run() and ``await`` raise."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Optional

from . import _core

if TYPE_CHECKING:
    from ._stack import AsyncStack


# error_info of a Python exception that failed a step goes on after its
# first line with its traceback (_stack._error_text())
_TRACEBACK_MARK = "\nTraceback (most recent call last):"


class _ErrorMeta(type):
    """``FutoInError(code, info)`` makes an instance of the code's class
    (``Timeout``, ``errors.NotFound``...), so that an error is caught by
    its name however it was made."""

    def __call__(cls, *args: Any, **kw: Any) -> Any:
        if cls is FutoInError:
            code = args[0] if args else kw.get("code")
            if type(code) is str:
                _check_code(code)
                sub = _error_class(code)
                if sub is not FutoInError:
                    rest = list(args[1:])
                    if "info" in kw:
                        rest.append(kw.pop("info"))
                    kw.pop("code", None)
                    if kw or len(rest) > 1:
                        raise TypeError("FutoInError(code, info=None)")
                    return sub(*rest)
        return super().__call__(*args, **kw)


def _check_code(code: str) -> None:
    if not code:
        raise ValueError("an error code must not be empty")
    if "\0" in code:
        raise ValueError("an error code must not contain NUL characters")


class FutoInError(Exception, metaclass=_ErrorMeta):
    """An FTN12 error: ``code`` (e.g. ``"Timeout"``) and ``info``.

    Every code has its class (``futoin_async.errors.<Code>``: the standard
    ones below, any other made on first use and kept), and an error of a
    code is an instance of its class however it was made:
    ``FutoInError("NotFound", "x")`` is an ``errors.NotFound``, and so is
    what run() raises for a flow that failed with "NotFound" in any
    language. The classes take ``info`` only: ``raise
    errors.NotFound("no such id")`` fails the step with that code.

    ``asi.error(code, info)`` is not caught as a FutoInError in step code:
    it reports the error to the flow and leaves the calling code with a
    private BaseException (as ``break_loop()`` does), which ``except
    Exception:`` and ``except FutoInError:`` do not stop (``finally:``
    blocks and ``with`` exits run). The flow's error handlers, run() and
    ``await`` see the FutoInError.
    """

    #: where the error was raised, across languages (set on the exception
    #: a flow's unhandled error raises from run()/await), or None
    async_stack: Optional[AsyncStack] = None

    def __init__(self, code: str, info: Optional[str] = None) -> None:
        _check_code(code)
        super().__init__(code, info)
        self.code = code
        self.info = info

    def __str__(self) -> str:
        info = self.info
        if info is not None and self.__cause__ is not None:
            # the traceback of a Python exception (error_info carries it for
            # the other languages) is shown by Python as the cause's
            info = info.split(_TRACEBACK_MARK, 1)[0]
        return self.code if info is None else f"{self.code}: {info}"

    def __reduce__(self) -> Any:
        return (_make_error, (self.code, self.info))


class Errors:
    """The standard FTN12 error codes (str constants), from the library's
    single list."""


# Standard codes -> class; extra Python bases where Python has the meaning.
_EXTRA_BASES: dict = {
    "Timeout": (TimeoutError,),
    "NotImplemented": (NotImplementedError,),
    "ConnectError": (ConnectionError,),
    "CommError": (ConnectionError,),
    "Unauthorized": (PermissionError,),
    "InvalidRequest": (ValueError,),
}
# code -> its class: the standard ones, and every other code once used
# (kept, so that the class of a code is always the same object)
_ERROR_CLASSES: dict = {}


def _code_class(code: str, doc: str, module: str) -> type:
    def __init__(self: FutoInError, info: Optional[str] = None) -> None:
        FutoInError.__init__(self, code, info)

    return type(code, (FutoInError,) + _EXTRA_BASES.get(code, ()), {
        "__init__": __init__,
        "__doc__": doc,
        "__module__": module,
    })


def _error_class(code: str) -> type:
    """The class of error code `code` (made on first use, then kept)."""
    cls = _ERROR_CLASSES.get(code)
    if cls is None:
        _check_code(code)
        cls = _ERROR_CLASSES[code] = _code_class(
            code, f"FTN12 error {code!r} (made on first use).", __package__ + ".errors")
    return cls


# the standard codes' classes, by code (the package exports them by name)
_STANDARD_CLASSES: dict = {}
for _i in range(_core.futoin_error_count()):
    _code = _core.futoin_error_code_at(_i)
    setattr(Errors, _code, _code)
    _ERROR_CLASSES[_code] = _STANDARD_CLASSES[_code] = globals()[_code] = _code_class(
        _code, f"FTN12 standard error {_code!r}: "
        f"{_core.futoin_error_description_at(_i)}.", __package__)
del _i, _code

ConnectError: type = _ERROR_CLASSES["ConnectError"]
CommError: type = _ERROR_CLASSES["CommError"]
UnknownInterface: type = _ERROR_CLASSES["UnknownInterface"]
NotSupportedVersion: type = _ERROR_CLASSES["NotSupportedVersion"]
Unauthorized: type = _ERROR_CLASSES["Unauthorized"]
InternalError: type = _ERROR_CLASSES["InternalError"]
InvalidRequest: type = _ERROR_CLASSES["InvalidRequest"]
DefenseRejected: type = _ERROR_CLASSES["DefenseRejected"]
PleaseReconnect: type = _ERROR_CLASSES["PleaseReconnect"]
SecurityError: type = _ERROR_CLASSES["SecurityError"]
Timeout: type = _ERROR_CLASSES["Timeout"]


def _make_error(code: str, info: Optional[str] = None) -> FutoInError:
    return _error_class(code)(info) if code else FutoInError("InternalError", info)


class CancelledError(asyncio.CancelledError):
    """The flow was cancelled (``root.cancel()``, from any thread, or by
    whoever else cancels it): raised by ``run()`` and ``await root``.
    Ctrl-C cancels too, but raises ``KeyboardInterrupt``."""


class InvalidStateError(RuntimeError, asyncio.InvalidStateError):
    """The API was misused: a call outside the step it belongs to, on a
    root while it executes (or a root-only call on a step), through the
    handle of a finished step, ``execute()`` twice..."""


class _Unwind(BaseException):
    """asi.error(), break_loop() and continue_loop() leave the calling code
    with this once the flow knows the outcome; the step trampoline drops
    it. A BaseException, as asyncio.CancelledError is: ``except
    Exception``/``except FutoInError`` in step code do not stop it. After
    asi.error() it carries the error (``args[0]``)."""


def _flow_error(code: str, info: Optional[str], last: Any,
                stack: Optional[AsyncStack] = None) -> BaseException:
    """The exception run()/await raise for a flow's unhandled error, with
    the flow's async stack (``async_stack``, and as a note its traceback
    shows)."""
    if isinstance(last, FutoInError) and last.code == code:
        # the very exception the step raised (asi.error() or raise)
        err: FutoInError = last
    else:
        err = _make_error(code, info)
        if isinstance(last, BaseException):
            err.__cause__ = last
    if stack is not None and "async_stack" not in err.__dict__:
        err.async_stack = stack
        err.add_note(stack.format())
    return err
