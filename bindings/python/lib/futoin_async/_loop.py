"""ToolEventLoop: asyncio's event loop over a Tool's own libuv loop.

An ``async def`` step (or ``await_()``) needs an asyncio event loop. When
asyncio drives the flow (``await root``, ``root.promise()``) that is
asyncio's. Otherwise the flow runs on the Tool's libuv loop alone:
``Tool.run()`` in a Python program, or the loop of a C, Lua or Java
program that hosts the flow (a borrowed Tool). The coroutine then runs in
this event loop, whose every callback is a timer of that Tool: ``call_soon``
an immediate, ``call_later``/``call_at`` a deferred call, and which is the
running loop (``asyncio.get_running_loop()``) while its callbacks run. So
``asyncio.sleep``, futures, tasks, ``wait_for``, ``timeout``, ``gather``,
``run_in_executor`` (and ``to_thread``) work as in any event loop, and
``add_reader``/``add_writer`` watch file descriptors with libuv (uv_poll).
What needs asyncio's own transports (sockets, pipes, subprocesses, TLS,
signal handlers) raises NotImplementedError: drive such flows from asyncio.

The loop never runs by itself: ``run_forever()``/``run_until_complete()``
refuse (the Tool runs: ``Tool.run()``, or the host program's loop), and so
does ``close()`` (``Tool.close()`` closes it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import selectors
import time
from asyncio import events
from typing import Any, Callable, Optional

from . import _core
from ._errors import InvalidStateError

_get_running_loop = events._get_running_loop
_set_running_loop = events._set_running_loop

# libuv timers take uint32 milliseconds
_MAX_MS = 2**32 - 1


def _run(loop: ToolEventLoop, handle: events.Handle) -> None:
    """Run `handle` with `loop` as the running loop of this thread."""
    prev = _get_running_loop()
    if prev is not loop:
        _set_running_loop(loop)
    try:
        handle._run()
    except (SystemExit, KeyboardInterrupt) as exc:
        if not _kept_by_task(loop, handle, exc):
            raise
    finally:
        if prev is not loop:
            _set_running_loop(prev)


def _kept_by_task(loop: ToolEventLoop, handle: events.Handle,
                  exc: BaseException) -> bool:
    """Is `exc` (KeyboardInterrupt, SystemExit) out of `handle` one that a
    task keeps, and that nothing of Python's could re-raise?

    asyncio's Task keeps such an exception as its own (for whoever awaits
    it: an ``async def`` step's task fails the step with InternalError
    naming it) and raises it again, to stop the loop that runs it. Under
    Tool.run() that is what happens (the glue keeps it for run(), which
    re-raises it). A program in another language runs a borrowed Tool's
    loop, though: nothing here can stop it or re-raise the exception, and
    the glue would print it as "Exception ignored" although the task's
    awaiter has it already. So it is dropped then (a task nobody awaits
    reports it as asyncio does any exception of such a task: "Task
    exception was never retrieved" once collected); an exception no task
    keeps (a call_soon() callback's own) is still printed: nobody else
    would see it."""
    if not loop._tool.borrowed or _core._in_run():
        return False
    task = getattr(handle._callback, "__self__", None)  # Task step or wakeup
    return (isinstance(task, asyncio.Future) and task.done()
            and not task.cancelled() and task._exception is exc)


class _Soon(events.Handle):
    """call_soon(): a Tool immediate."""

    __slots__ = ()

    def __call__(self) -> None:
        if not self._cancelled:
            _run(self._loop, self)


class _Later(events.TimerHandle):
    """call_at()/call_later(): a Tool deferred call, cancelled with it."""

    __slots__ = ("_key",)

    def __call__(self) -> None:
        self._key = None
        self._scheduled = False
        if not self._cancelled:
            _run(self._loop, self)


class ToolEventLoop(asyncio.BaseEventLoop):
    """asyncio's event loop API over ``tool``'s own libuv loop (see the
    module's docstring). Made by ``Tool.event_loop()``, one per Tool."""

    def __init__(self, tool: Any) -> None:
        super().__init__()
        self._tool = tool
        self._virtual = bool(getattr(tool, "virtual_time", False))
        # fd -> [reader Handle or None, writer Handle or None]
        self._fds: dict = {}

    def __repr__(self) -> str:
        return f"<ToolEventLoop of {self._tool!r}>"

    def __del__(self) -> None:
        """Closed with its Tool; nothing to warn about."""

    # -- what runs it -------------------------------------------------------

    def time(self) -> float:
        """The Tool's virtual clock on a virtual-time Tool (so that
        ``asyncio.sleep()`` and ``call_at()`` follow ``Tool.advance()``);
        otherwise ``time.monotonic()``."""
        if self._virtual:
            return self._tool.time()
        return time.monotonic()

    def is_running(self) -> bool:
        return _get_running_loop() is self

    def is_closed(self) -> bool:
        return self._closed or self._tool.closed

    def run_forever(self) -> None:
        raise RuntimeError("a Tool's event loop runs inside the Tool: call "
                           "Tool.run() (or let the host program run its loop)")

    def run_until_complete(self, future: Any) -> Any:
        raise RuntimeError("a Tool's event loop runs inside the Tool: execute "
                           "a flow and call Tool.run(), or await from asyncio")

    def stop(self) -> None:
        raise RuntimeError("a Tool's event loop runs inside the Tool: it stops "
                           "when the Tool has nothing left to do")

    def close(self) -> None:
        raise RuntimeError("a Tool's event loop is closed with its Tool: call "
                           "Tool.close()")

    def _tool_closed(self) -> None:
        """The Tool was closed: its pending calls are gone. Tasks that can
        never run again have their coroutines closed (their ``finally:``
        blocks run) and are not reported as destroyed while pending."""
        for fd in list(self._fds):
            self._fds.pop(fd, None)
        self._closed = True
        self._ready.clear()
        executor, self._default_executor = self._default_executor, None
        if executor is not None:
            executor.shutdown(wait=False)
        for task in asyncio.all_tasks(self):
            task._log_destroy_pending = False
            try:
                task.get_coro().close()
            except BaseException as exc:  # noqa: B902 - reported, not raised
                self.call_exception_handler({
                    "message": "closing a coroutine of a closed Tool",
                    "exception": exc, "task": task})

    # -- callbacks ----------------------------------------------------------

    def call_soon(self, callback: Callable[..., Any], *args: Any,
                  context: Any = None) -> events.Handle:
        self._check_closed()
        handle = _Soon(callback, args, self, context)
        self._tool.immediate(handle)
        return handle

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any,
                context: Any = None) -> events.TimerHandle:
        self._check_closed()
        if when is None:
            raise TypeError("call_at(): when must be a number")
        handle = _Later(when, callback, args, self, context)
        delay = when - self.time()
        ms = 0 if not delay > 0 else min(math.ceil(delay * 1000), _MAX_MS)
        handle._key = self._tool.deferred(ms, handle)
        handle._scheduled = True
        return handle

    def _timer_handle_cancelled(self, handle: events.TimerHandle) -> None:
        key = getattr(handle, "_key", None)
        if key is not None:
            handle._key = None
            self._tool.cancel(key)

    def call_soon_threadsafe(self, callback: Callable[..., Any], *args: Any,
                             context: Any = None) -> events.Handle:
        self._check_closed()
        handle = _Soon(callback, args, self, context)
        self._tool._post(handle)
        return handle

    def run_in_executor(self, executor: Any, func: Callable[..., Any],
                        *args: Any) -> asyncio.Future:
        """As asyncio's. The Tool is held meanwhile: a borrowed Tool's
        program cannot free its tool before the result is back."""
        self._check_closed()
        if executor is None:
            executor = self._default_executor
            if executor is None:
                executor = concurrent.futures.ThreadPoolExecutor(
                    thread_name_prefix="futoin_async")
                self._default_executor = executor
        fut = self.create_future()
        tool = self._tool
        tool._hold()

        def deliver(cf: concurrent.futures.Future) -> None:  # loop thread
            try:
                if fut.cancelled():
                    return
                if cf.cancelled():
                    fut.cancel()
                    return
                exc = cf.exception()
                if exc is not None:
                    fut.set_exception(exc)
                else:
                    fut.set_result(cf.result())
            finally:
                tool._unhold()  # last: the hold proves a borrowed tool alive

        def done(cf: concurrent.futures.Future) -> None:  # any thread
            if not self.is_closed():
                try:
                    self.call_soon_threadsafe(deliver, cf)
                except (RuntimeError, InvalidStateError):
                    pass  # the Tool closed meanwhile: nobody waits

        try:
            cf = executor.submit(func, *args)
        except BaseException:
            tool._unhold()
            raise
        fut.add_done_callback(lambda f: cf.cancel() if f.cancelled() else None)
        cf.add_done_callback(done)
        return fut

    # -- file descriptors (libuv's uv_poll) --------------------------------------

    def _watch(self, fd: int) -> None:
        r, w = self._fds.get(fd, (None, None))
        events_ = (selectors.EVENT_READ if r else 0) | (selectors.EVENT_WRITE if w else 0)
        if not events_:
            self._fds.pop(fd, None)
        self._tool._poll(fd, events_, self._on_fd)

    def _on_fd(self, fd: int, mask: int) -> None:
        r, w = self._fds.get(fd, (None, None))
        if r is not None and mask & selectors.EVENT_READ:
            _run(self, r)
        r, w = self._fds.get(fd, (None, None))
        if w is not None and mask & selectors.EVENT_WRITE:
            _run(self, w)

    def _add(self, fd: Any, i: int, callback: Callable[..., Any], args: tuple) -> None:
        self._check_closed()
        fd = selectors._fileobj_to_fd(fd)
        entry = self._fds.setdefault(fd, [None, None])
        old = entry[i]
        entry[i] = events.Handle(callback, args, self, None)
        if old is not None:
            old.cancel()
        self._watch(fd)

    def _remove(self, fd: Any, i: int) -> bool:
        if self.is_closed():
            return False
        fd = selectors._fileobj_to_fd(fd)
        entry = self._fds.get(fd)
        if entry is None or entry[i] is None:
            return False
        entry[i].cancel()
        entry[i] = None
        self._watch(fd)
        return True

    def add_reader(self, fd: Any, callback: Callable[..., Any], *args: Any) -> None:
        self._add(fd, 0, callback, args)

    def remove_reader(self, fd: Any) -> bool:
        return self._remove(fd, 0)

    def add_writer(self, fd: Any, callback: Callable[..., Any], *args: Any) -> None:
        self._add(fd, 1, callback, args)

    def remove_writer(self, fd: Any) -> bool:
        return self._remove(fd, 1)



_NO_TRANSPORTS = ("a Tool's event loop has no asyncio transports (sockets, "
                  "pipes, subprocesses, TLS, signal handlers): drive the flow "
                  "from asyncio (await root, root.promise()) to use them")


def _not_implemented(name: str, coroutine: bool) -> Callable[..., Any]:
    if coroutine:
        async def method(self: ToolEventLoop, *args: Any, **kw: Any) -> Any:
            raise NotImplementedError(f"{name}(): {_NO_TRANSPORTS}")
    else:
        def method(self: ToolEventLoop, *args: Any, **kw: Any) -> Any:  # type: ignore[misc]
            raise NotImplementedError(f"{name}(): {_NO_TRANSPORTS}")
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Not available: {_NO_TRANSPORTS}."
    return method


for _name in ("create_connection", "create_server", "create_unix_connection",
              "create_unix_server", "create_datagram_endpoint",
              "connect_accepted_socket", "connect_read_pipe", "connect_write_pipe",
              "subprocess_exec", "subprocess_shell", "sendfile", "start_tls",
              "sock_recv", "sock_recv_into", "sock_recvfrom", "sock_recvfrom_into",
              "sock_sendall", "sock_sendto", "sock_connect", "sock_accept",
              "sock_sendfile"):
    setattr(ToolEventLoop, _name, _not_implemented(_name, True))
for _name in ("add_signal_handler", "remove_signal_handler"):
    setattr(ToolEventLoop, _name, _not_implemented(_name, False))
del _name
