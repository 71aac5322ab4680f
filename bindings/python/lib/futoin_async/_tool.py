"""Tool (AsyncTool): one libuv event loop, with asyncio-style scheduling,
and the thread's default tool."""

from __future__ import annotations

import signal
import socket
import threading
import weakref
from typing import Any, Callable, Iterable, Mapping, Optional

from . import _core, _policy
from ._errors import InvalidStateError


_tools: "weakref.WeakValueDictionary[int, Tool]" = weakref.WeakValueDictionary()
_local = threading.local()


class TimerHandle:
    """What ``Tool.call_soon()``/``call_later()`` return, as asyncio's."""

    __slots__ = ("_tool", "_key", "_cancelled")

    def __init__(self, tool: Tool, key: int) -> None:
        self._tool = tool
        self._key = key
        self._cancelled = False

    def cancel(self) -> None:
        """Cancel the call if it has not run yet."""
        if not self._cancelled:
            self._cancelled = True
            self._tool.cancel(self._key)

    def cancelled(self) -> bool:
        """True once cancel() was called."""
        return self._cancelled


class Tool(_core.ToolBase):
    """AsyncTool: one libuv event loop.

    ``run()`` drives it (the GIL is released while it waits);
    ``Tool(uv_loop=addr)`` attaches to an existing ``uv_loop_t*`` instead
    of owning one. A context manager: leaving ``with Tool() as tool:``
    closes it (cancels what still executes, frees the loop).

    ``Tool(virtual_time=True)`` is a test tool that never waits on the
    wall clock: its clock (``time()``, seconds from 0) moves only when
    ``advance(seconds)`` moves it, which runs every timer that falls due
    on the way, in due-time order (step timeouts, ``call_later()``,
    ``deferred()``, Throttle and Limiter periods, ``asyncio.sleep()`` in
    its event loop). ``run()`` then runs what is due now and returns;
    ``root.run()`` advances the clock from timer to timer until the root
    ends. See the README ("Virtual time").

    ``allow_languages`` / ``allow_modules``: the tool's load policy, what
    its flows may add by name (see ``set_load_policy()``), e.g.
    ``Tool(allow_languages=("python", "c"), allow_modules=("python:myapp.*",
    "c:libm.so.6"))``. Without them everything is allowed.
    """

    def __init__(self, uv_loop: int = 0, *, virtual_time: bool = False,
                 allow_languages: Optional[Iterable[str]] = None,
                 allow_modules: Optional[Iterable[str]] = None) -> None:
        policy = _policy._checked(allow_languages, allow_modules, "Tool()")
        super().__init__(uv_loop, virtual_time=virtual_time)
        _tools[self.ptr] = self
        self._sig_w: Optional[int] = None  # wakeup fd (owned by the C tool)
        if policy != (None, None):
            _policy._apply(self, *policy, "Tool()")

    @classmethod
    def _borrow(cls, ptr: int) -> Tool:
        """The borrowed Tool of the futoin_tool* `ptr` of a program in
        another language (see glue/py_borrowed.c)."""
        t = cls.__new__(cls)
        t._borrow_init(ptr)
        t._sig_w = -1  # no signal handling of ours in that program
        return t

    def __repr__(self) -> str:
        if self.closed:
            return "<futoin_async.Tool (closed)>"
        if self.borrowed:
            return f"<futoin_async.Tool 0x{self.ptr:x} (borrowed)>"
        return f"<futoin_async.Tool 0x{self.ptr:x}>"

    def __enter__(self) -> Tool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Cancel the executing roots, free every root made on the tool
        (those still referenced become closed handles), drop pending calls
        and free the loop. Idempotent; the tool is unusable afterwards.
        Coroutines of its event loop that can no longer run are closed.
        A borrowed Tool only lets go: its own timers and roots go, its
        tool stays its program's."""
        if not self.closed and not self.borrowed:
            _tools.pop(self.ptr, None)
        loop = self._tloop
        super().close()
        if loop is not None:
            loop._tool_closed()

    #: The events of set_hooks(), as futoin/sys/hooks.h names them.
    HOOK_EVENTS = frozenset((
        "flow_started", "flow_finished", "step_entered", "step_left",
        "error_raised", "error_handled", "cancel", "wait_begun", "wait_ended",
        "sync_acquired", "sync_released"))

    def set_hooks(self, hooks: Optional[Mapping[str, Callable[[dict[str, Any]], object]]] = None,
                  /, **by_name: Callable[[dict[str, Any]], object]) -> None:
        """Watch this tool's flows (futoin/sys/hooks.h): for each event
        named (``HOOK_EVENTS``), call ``fn(event)`` on the loop thread at
        the moment it happens, with a dict: ``event``, ``root_id``, ``now``
        (tool time, ms) and, when the event has them, ``language``,
        ``function``, ``file``, ``line`` (the step's origin, as async
        stacks name it), ``code``, ``info``, ``outcome`` (``"success"``,
        ``"error"``, ``"cancelled"``), ``wait`` (``"timer"``,
        ``"external"``, ``"sync"``, ``"foreign"``), ``due``, ``sync``,
        ``wait_language``. ``set_hooks()`` with nothing (or ``None``)
        clears them. Any time on the loop thread, from inside a hook too
        (the new ones serve from the next event). A hook must not change
        flows; an exception in it is reported as unraisable."""
        table = dict(hooks or {}, **by_name)
        for name, fn in table.items():
            if name not in self.HOOK_EVENTS:
                raise ValueError(f"set_hooks(): no event {name!r} (one of "
                                 f"{', '.join(sorted(self.HOOK_EVENTS))})")
            if not callable(fn):
                raise TypeError(f"set_hooks(): {name} must be callable, not "
                                f"{type(fn).__name__}")
        self._set_hooks(table or None)

    def dump(self) -> str:
        """A live dump (futoin_tool_dump()): every live root of the tool,
        what each flow waits on and since when, its async stack and state
        keys, one ``root=<id> ...`` line each (format: futoin/async.h).
        On the loop thread."""
        return self._dump()

    def set_load_policy(self, *, allow_languages: Optional[Iterable[str]] = None,
                        allow_modules: Optional[Iterable[str]] = None) -> None:
        """Restrict what the flows of this tool may load by name: the
        ``add_foreign()`` of Python steps and the steps that steps of other
        languages add by name in them. Loading a step by name runs code (it
        imports a Python module, requires a Lua module, loads a Java class
        or a shared object): never build step names from input a user
        controls, or restrict them here.

        ``allow_languages``: the languages a step may be written in
        (``("python", "c")``); None allows all, ``()`` none.
        ``allow_modules``: rules ``"language:name"``; None allows every
        module of an allowed language. When given, a step's module must
        match a rule of its language: the exact name (``"lua:pricing"``,
        ``"c:libm.so.6"``, ``"c:/opt/app/lib/libsteps.so"``) or a prefix
        followed by ``"*"`` (``"java:org.example.*"`` matches
        ``org.example.Totals``, not ``org.example``; ``"python:*"`` every
        Python module). A ``"*"`` is only allowed last, and a prefix rule
        never matches a name containing ``".."``.

        A step outside the policy fails with ``InvalidRequest``, its
        ``info`` naming the rule that refused it ("load policy of this
        tool: language 'lua' is not allowed (languages: python, c)"),
        before its language's plug-in is even looked for. The process's
        policy (``futoin_async.set_load_policy()``) applies as well.

        Set once, before the flows add steps by name (steps added before
        are not checked again): a second call raises InvalidStateError and
        changes nothing, so code running in a flow cannot widen it; so does
        a borrowed Tool (its program sets its policy) or a closed one.
        Lists that are not iterables of str (a bare str included) raise
        TypeError; a NUL character, a name that is not a language name, a
        rule without ``"language:"`` or with a ``"*"`` before its end raise
        ValueError. ``Tool(allow_languages=..., allow_modules=...)`` sets
        it when the tool is made."""
        languages, modules = _policy._checked(allow_languages, allow_modules,
                                              "Tool.set_load_policy()")
        _policy._apply(self, languages, modules, "Tool.set_load_policy()")

    def run(self) -> None:
        """Run the loop until nothing is left to do. The GIL is released
        while it waits. On the main thread Ctrl-C (any signal whose Python
        handler raises) interrupts the wait at once: the executing roots
        are cancelled and the exception is raised here. The first
        unhandled error of a root executed without an unhandled callback
        is raised here too."""
        if self.closed:
            raise InvalidStateError("the Tool is closed")
        if (threading.current_thread() is not threading.main_thread()
                or self._sig_w == -1):
            return super().run()
        if self._sig_w is None:
            r, w = socket.socketpair()
            r.setblocking(False)
            w.setblocking(False)
            self._sig_w = w.fileno()
            self._watch_signals(r.detach(), w.detach())  # the tool owns both
        try:
            old = signal.set_wakeup_fd(self._sig_w, warn_on_full_buffer=False)
        except ValueError:  # not the main interpreter
            self._sig_w = -1
            return super().run()
        if old != -1:
            # Someone else (asyncio, or an outer run()) owns the wakeup fd:
            # leave it to them.
            signal.set_wakeup_fd(old)
            return super().run()
        try:
            return super().run()
        finally:
            signal.set_wakeup_fd(-1)

    # -- virtual time (seconds, as asyncio's clock) ---------------------------

    def advance(self, seconds: float) -> None:
        """Virtual time: move the clock ``seconds`` on (an int or float >= 0,
        rounded to the millisecond as ``call_later()`` rounds its delay) and
        run everything that falls due up to then, in due-time order, timers
        started on the way included; then the clock stands at the old time
        + ``seconds``. ``advance(0)`` runs what is due now, as ``run()``.
        Raises as ``run()`` does (the first unhandled error of a root
        executed without an unhandled callback: the clock then stays where
        that error came).

        On the loop thread, and not from inside the loop (a step or a
        callback). ValueError for a negative, NaN or infinite delay;
        InvalidStateError on a Tool on the wall clock."""
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise TypeError("advance(seconds): a number of seconds (int or float), "
                            f"not {type(seconds).__name__}")
        if seconds != seconds or seconds in (float("inf"), float("-inf")):
            raise ValueError(f"advance(seconds): not a finite delay: {seconds!r}")
        if seconds < 0:
            raise ValueError("advance(seconds): the clock only moves forward "
                             f"(a delay >= 0), not {seconds!r}")
        ms = seconds * 1000 if isinstance(seconds, int) else int(round(seconds * 1000))
        self._advance_ms(ms)

    def next_due(self) -> Optional[float]:
        """Seconds from now until the next timer of the tool is due (0.0
        when it is due already), or None when no timer is pending:
        ``tool.advance(tool.next_due())`` reaches it exactly. On a Tool on
        the wall clock it answers for the wall clock. Loop thread."""
        ms = self._next_due_ms()
        return None if ms is None else ms / 1000

    def time(self) -> float:
        """The tool's clock in seconds, which its timers are measured
        against: from 0, moved only by ``advance()`` on a virtual-time
        Tool; libuv's loop time (monotonic, from an arbitrary point) on
        the wall clock. Loop thread."""
        return self._now_ms() / 1000

    # -- asyncio-style scheduling (seconds) ------------------------------------

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        """Call ``callback(*args)`` on the loop thread after the current
        callback, as asyncio's ``call_soon``."""
        fn = (lambda: callback(*args)) if args else callback
        return TimerHandle(self, self.immediate(fn))

    def call_later(self, delay: float, callback: Callable[..., Any],
                   *args: Any) -> TimerHandle:
        """Call ``callback(*args)`` after ``delay`` seconds (a float, as
        asyncio's ``call_later``; FTN12's ``deferred()`` takes ms)."""
        if delay != delay or delay < 0:
            delay = 0
        delay = min(delay, 4294967.0)  # libuv timers: uint32 milliseconds
        fn = (lambda: callback(*args)) if args else callback
        return TimerHandle(self, self.deferred(int(round(delay * 1000)), fn))

    def call_soon_threadsafe(self, callback: Callable[..., Any], *args: Any) -> None:
        """Call ``callback(*args)`` on the loop thread; from any thread
        (cannot be cancelled)."""
        self._post((lambda: callback(*args)) if args else callback)

    # FTN12-style name
    def call_immediate(self, fn: Callable[[], Any]) -> int:
        """FTN12 ``sched_immediate``: same as ``immediate(fn)``."""
        return self.immediate(fn)


AsyncTool = Tool


def default_tool() -> Tool:
    """The calling thread's default Tool (created on first use)."""
    t = getattr(_local, "tool", None)
    if t is None or t.closed:
        t = _local.tool = Tool()
    return t
