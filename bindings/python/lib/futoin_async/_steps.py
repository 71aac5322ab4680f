"""The methods of AsyncSteps written in Python (run(), wrap(),
add_foreign(), for_each(), ...), added to the C type itself."""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterable, Mapping, Optional

from . import _core
from ._errors import CancelledError, InvalidStateError
from ._sync import _count
from ._tool import _tools


# The C type itself (see glue/py_types.c for why it is not subclassed here);
# the methods below are written in Python and added to it by _extend().
AsyncSteps = _core.AsyncSteps


def _steps_enter(self: AsyncSteps) -> AsyncSteps:
    return self


def _steps_exit(self: AsyncSteps, *exc: Any) -> None:
    self.free()


def wrap(cls: type, ptr: int, owned: bool = False) -> AsyncSteps:
    """Adopt a ``FutoInAsyncSteps*`` (an int address) of any FTN12
    implementation. ``owned=True`` makes it a root that this object
    frees; otherwise the caller keeps ownership."""
    _count("wrap(ptr)", ptr, 2**64 - 1)
    if not ptr:
        raise ValueError("wrap(ptr): NULL handle")
    tool = None
    if _core.futoin_bind_is_ours(ptr):
        probe = cls._wrap(cls, ptr)
        tool = _tools.get(probe._tool_ptr())
    return cls._wrap(cls, ptr, owned, tool)


def add_sync(self: AsyncSteps, obj: Any, step: Callable[..., Any],
             onerror: Optional[Callable[[AsyncSteps, str], Any]] = None) -> AsyncSteps:
    """Same as ``sync(obj, step, onerror)`` (FTN12's name)."""
    return self.sync(obj, step, onerror)


def for_each(self: AsyncSteps, collection: Iterable[Any] | Mapping[Any, Any],
             body: Callable[[AsyncSteps, Any, Any], Any],
             label: Optional[str] = None) -> AsyncSteps:
    """forEach: ``body(asi, key, value)`` for a mapping's items or a
    sequence's (index, value) pairs."""
    if isinstance(collection, Mapping):
        items = list(collection.items())
    else:
        items = list(enumerate(collection))
    return self.repeat(len(items), lambda asi, i: body(asi, *items[i]), label)


def forEach(self: AsyncSteps, collection: Iterable[Any] | Mapping[Any, Any],
            body: Callable[[AsyncSteps, Any, Any], Any],
            label: Optional[str] = None) -> AsyncSteps:
    """FTN12's name of for_each()."""
    # for_each is deleted from this module once it is on the type (below):
    # reach it through the object, never as a module global
    return self.for_each(collection, body, label)


def add_foreign(self: AsyncSteps, language: str, module: str, function: str,
                onerror: Optional[Callable[[AsyncSteps, str], Any]] = None) -> AsyncSteps:
    """Add a step written in another language: ``function`` of ``module``
    in ``language`` ("c", "lua", "java", "python", or any language whose
    host plug-in the library finds: its installed package's, through the
    ecosystem's settings such as LUA_CPATH or CLASSPATH), started in this
    process on first use. It gets the previous step's values and passes its own on, as any
    step. ``onerror(asi, code)`` (Python) handles its errors. What cannot
    be had (no such language, module or function, a runtime that is not
    installed) makes a step that fails with InvalidRequest, its
    ``error_info`` naming the language, module and function and why; so
    does a step the load policy does not allow (``Tool.set_load_policy()``,
    ``futoin_async.set_load_policy()``), its ``error_info`` naming the
    rule. The module is imported and run: a step name is code, not data.

    Python: an importable module and a function (or a dotted path) in it.
    Lua: ``require(module)`` and a field of what it returns. Java: a class
    on the class path and a public static method ``name(AsyncSteps asi,
    Object... args)``. C: a shared object and a bare step function name
    or a C declaration (``"double hypot(double, double)"``).
    Returns self."""
    for what, v in (("language", language), ("module", module), ("function", function)):
        if type(v) is not str:
            raise TypeError(f"add_foreign(): {what} must be str, not {type(v).__name__}")
    if onerror is None:
        return self._add_foreign(language, module, function)

    def foreign(asi: AsyncSteps, *values: Any) -> None:
        if values:
            asi.success_step(*values)
        asi._add_foreign(language, module, function)

    foreign.__qualname__ = f"add_foreign[{language}:{module}.{function}]"
    # its frame in an async stack: the caller's function at the line of
    # this call (the guard's own code is the binding's)
    caller = sys._getframe(1)
    foreign._futoin_origin = (  # type: ignore[attr-defined]
        f"{caller.f_globals.get('__name__', '?')}.{caller.f_code.co_qualname}",
        caller.f_code.co_filename, caller.f_lineno)
    return self.add(foreign, onerror)


def new_instance(self: AsyncSteps) -> AsyncSteps:
    """A new root on the same tool (a borrowed Tool's too: it runs on the
    loop of the program that hosts the flow)."""
    tool = self.tool if self.is_ours() else None
    if tool is not None:
        child = AsyncSteps(tool)
        # The engine's newInstance() continues a traced flow under the
        # span of this handle (futoin/trace.h); this root is the Tool's
        # own, so it continues it the same way: this handle's traceparent.
        text = _core.futoin_bind_trace_get(self.binary())
        if text:
            _core.futoin_bind_trace_set(child.binary(), text.partition(" ")[0])
        return child
    return self._new_instance()


def run(self: AsyncSteps) -> Any:
    """execute() this root and run its tool until idle.

    Returns the last step's values (None, one value, or a tuple).
    Raises the unhandled error (FutoInError or its subclass for the
    code, the Python exception that caused it as ``__cause__``), or
    CancelledError if the flow was cancelled. KeyboardInterrupt and
    SystemExit raised in a step cancel the flow and are re-raised here.

    On a virtual-time Tool the clock is advanced from one due timer to
    the next until the root ends, without waiting; InvalidStateError if
    it still waits when no timer is left (for another thread, say: join
    it first).
    """
    tool = self.tool
    if tool is None:
        raise InvalidStateError("run(): not a root of this library's Tool")
    box: list = []
    self._execute(lambda exc, value: box.append((exc, value)))
    tool.run()
    if tool.virtual_time:
        while not box:
            ms = tool._next_due_ms()
            if ms is None:
                raise InvalidStateError(
                    "run(): the flow still waits and no timer of the virtual-"
                    "time Tool is left to advance to (an event from another "
                    "thread? join it first)")
            tool._advance_ms(ms)
    if not box:
        raise CancelledError("the flow did not finish")
    exc, value = box[0]
    if exc is not None:
        raise exc
    return value


def _methods(**fns: Any) -> dict:
    """Methods for _core._extend(): named as AsyncSteps' own."""
    for name, fn in fns.items():
        f = fn.__func__ if isinstance(fn, classmethod) else fn
        f.__name__ = name
        f.__qualname__ = f"AsyncSteps.{name}"
        f.__module__ = __package__
    return fns


_core._extend(AsyncSteps, _methods(
    __enter__=_steps_enter, __exit__=_steps_exit, wrap=classmethod(wrap),
    add_sync=add_sync, for_each=for_each, forEach=forEach,
    new_instance=new_instance, run=run, add_foreign=add_foreign))
del wrap, add_sync, for_each, forEach, new_instance, run, add_foreign
