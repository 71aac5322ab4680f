"""Async stacks across languages: where each step of a failed flow was
written, whatever its language."""

from __future__ import annotations

import functools
import traceback
import types
import weakref
from typing import Any, Iterable, NamedTuple, Optional


class AsyncFrame(NamedTuple):
    """One frame of an async stack: a step, where it was written."""

    language: str            #: "python", "c", "lua", "java", ...
    function: Optional[str]  #: qualified name, or None
    file: Optional[str]      #: source file (or shared object), or None
    line: int                #: 1-based, 0 when unknown

    def __str__(self) -> str:
        where = f'File "{self.file}"' if self.file else "File ?"
        if self.line:
            where += f", line {self.line}"
        return f"[{self.language}] {where}, in {self.function or '?'}"


class AsyncStack(list):
    """The async stack of an error: AsyncFrame items, innermost (the
    failing step) first, down to a step at the root's level, across
    languages and parallel() branches. A deep stack keeps its innermost
    and outermost frames; ``elided`` frames were left out after frame
    ``elided_after``. ``format()`` renders it as a Python traceback does
    (most recent step last)."""

    code: str = ""          #: the error code the stack was recorded for
    elided: int = 0
    elided_after: int = 0

    def __init__(self, frames: Iterable[AsyncFrame] = (), code: str = "",
                 elided: int = 0, elided_after: int = 0) -> None:
        super().__init__(frames)
        self.code = code
        self.elided = elided
        self.elided_after = elided_after

    def format(self) -> str:
        lines = [f"Async stack of {self.code or 'the error'} (most recent step last):"]
        for i in range(len(self) - 1, -1, -1):
            lines.append(f"  {self[i]}")
            if self.elided and i == self.elided_after:
                lines.append(f"  ... {self.elided} more frames ...")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def _make_stack(frames: list, code: str, elided: int, elided_after: int) -> AsyncStack:
    return AsyncStack([AsyncFrame(*f) for f in frames], code, elided, elided_after)


# ---- where a Python step was written -------------------------------------------

# owner -> (qualified name, file, line): the strings the library reads
# while it records an async stack must live as long as the step's data,
# which holds the owner (the function, a callable's type, the coroutine).
_FRAMES: "weakref.WeakKeyDictionary[Any, tuple]" = weakref.WeakKeyDictionary()


def _qualified(module: Optional[str], qualname: Optional[str]) -> str:
    qualname = qualname or "?"
    return f"{module}.{qualname}" if module else qualname


def _code_frame(name: str, code: Optional[types.CodeType]) -> tuple:
    if code is None:
        return (name, None, 0)
    return (name, code.co_filename, code.co_firstlineno)


def _owner_of(obj: Any) -> Any:
    """What a step's callable is, for its frame: a bound method's function,
    a Task's coroutine; the object itself otherwise."""
    if isinstance(obj, types.MethodType):
        return obj.__func__
    get_coro = getattr(obj, "get_coro", None)  # an asyncio Task
    if get_coro is not None and callable(get_coro):
        coro = get_coro()
        if coro is not None:
            return coro
    return obj


def _frame_new(obj: Any) -> tuple:
    """(module.qualname, file, first line) of a step's callable."""
    if isinstance(obj, types.FunctionType):
        given = obj.__dict__.get("_futoin_origin")
        if given is not None:  # a step the binding made (add_foreign's guard)
            return tuple(given)
        return _code_frame(_qualified(obj.__module__, obj.__qualname__), obj.__code__)
    if isinstance(obj, functools.partial):
        return _frame_new(_owner_of(obj.func))
    if isinstance(obj, (types.CoroutineType, types.GeneratorType)):
        code = obj.cr_code if isinstance(obj, types.CoroutineType) else obj.gi_code
        frame = obj.cr_frame if isinstance(obj, types.CoroutineType) else obj.gi_frame
        module = frame.f_globals.get("__name__") if frame is not None else None
        return _code_frame(_qualified(module, obj.__qualname__), code)
    if isinstance(obj, (types.BuiltinFunctionType, type)):
        return (_qualified(getattr(obj, "__module__", None) or "builtins",
                           obj.__qualname__), None, 0)
    call = getattr(type(obj), "__call__", None)
    if isinstance(call, types.FunctionType):  # a callable object: its __call__
        return _code_frame(_qualified(call.__module__, call.__qualname__), call.__code__)
    t = type(obj)
    return (_qualified(t.__module__, t.__qualname__), None, 0)


def _frame_of(obj: Any) -> tuple:
    """The frame of a Python step's callable (or awaitable) for an async
    stack: (qualified "module.function", file, line), the line of the
    definition; a suspended coroutine's, the line it waits at. Cached
    per owner while it lives (the library reads the strings)."""
    owner = _owner_of(obj)
    try:
        frame = _FRAMES.get(owner)
    except TypeError:  # not weakly referenceable: by its type
        owner = type(owner)
        frame = _FRAMES.get(owner)
    if frame is None:
        frame = _FRAMES[owner] = _frame_new(owner)
    if isinstance(owner, types.CoroutineType) and owner.cr_frame is not None:
        return (frame[0], frame[1], owner.cr_frame.f_lineno)
    return frame


# ---- the text of a Python error in another language ------------------------------

def _error_text(exc: BaseException) -> str:
    """error_info of a Python exception that fails a step with
    InternalError: its text (or its type's name) on the first line, then
    its traceback as Python prints it, for every language to read."""
    first = str(exc) or type(exc).__name__
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__,
                                            limit=-32))
    return f"{first}\n{tb.rstrip()}"
