"""The sync objects of FTN12 1.11: Mutex, Throttle, Limiter."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from . import _core
from ._errors import InvalidStateError
from ._tool import default_tool

if TYPE_CHECKING:
    from ._tool import Tool

_UNLIMITED: int = _core.futoin_bind_unlimited()  # futoin_async.UNLIMITED


class _SyncObject:
    _free: Callable[[int], int]

    def __init__(self, ptr: int, tool: Optional[Tool] = None) -> None:
        if not ptr:
            raise ValueError(f"{type(self).__name__}: invalid parameters")
        self.ptr = ptr
        self._tool = tool  # keeps the tool alive longer than the object

    def close(self) -> None:
        """Free the object (refused while a flow is inside or queued)."""
        if self.ptr:
            if type(self)._free(self.ptr) == 0:
                self.ptr = 0
            else:
                raise InvalidStateError(f"{type(self).__name__} is busy")

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "ptr", 0):
            type(self)._free(self.ptr)
            self.ptr = 0


def _count(what: str, v: Any, limit: int = 2**63 - 1) -> int:
    """A non-negative int argument (checked here: the C layer would name
    its C types in the message)."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{what} must be an int, not {type(v).__name__}")
    if v < 0 or v > limit:
        raise ValueError(f"{what} must be between 0 and {limit}, not {v}")
    return v


def _q(what: str, v: Optional[int]) -> int:
    """A queue limit: None is no limit."""
    return _UNLIMITED if v is None else _count(what, v)


def _d(what: str, v: Optional[int], default: int, limit: int = 2**63 - 1) -> int:
    """Any other optional number: None is its default."""
    return default if v is None else _count(what, v, limit)


_MS = 2**32 - 1  # periods are uint32 milliseconds


class Mutex(_SyncObject):
    """Mutex(max=1, max_queue=None): at most ``max`` flows inside; more
    wait in a queue of at most ``max_queue``, beyond which sync() fails
    with DefenseRejected. None: ``max`` 1, ``max_queue`` no limit."""
    _free = staticmethod(_core.futoin_bind_mutex_free)

    def __init__(self, max: Optional[int] = 1, max_queue: Optional[int] = None) -> None:
        super().__init__(_core.futoin_bind_mutex_new(
            _d("Mutex(max)", max, 1), _q("Mutex(max_queue)", max_queue)))


class Throttle(_SyncObject):
    """Throttle(max, period_ms=1000, max_queue=None, tool=None): at most
    ``max`` entries per period of ``period_ms`` milliseconds; more wait in
    a queue of at most ``max_queue``. None: ``period_ms`` 1000,
    ``max_queue`` no limit."""
    _free = staticmethod(_core.futoin_bind_throttle_free)

    def __init__(self, max: int, period_ms: Optional[int] = 1000,
                 max_queue: Optional[int] = None, tool: Optional[Tool] = None) -> None:
        tool = tool or default_tool()
        super().__init__(_core.futoin_bind_throttle_new(
            tool.ptr, _count("Throttle(max)", max),
            _d("Throttle(period_ms)", period_ms, 1000, _MS),
            _q("Throttle(max_queue)", max_queue)), tool)


class Limiter(_SyncObject):
    """Limiter(concurrent=1, max_queue=0, rate=1, period_ms=1000, burst=0,
    tool=None): a Mutex(concurrent, max_queue) and a Throttle(rate,
    period_ms, burst) in one (§1.11.7). The two queue limits, ``max_queue``
    and ``burst``, take None for no limit; ``concurrent``, ``rate`` and
    ``period_ms`` take None for their default."""
    _free = staticmethod(_core.futoin_bind_limiter_free)

    def __init__(self, concurrent: Optional[int] = 1, max_queue: Optional[int] = 0,
                 rate: Optional[int] = 1, period_ms: Optional[int] = 1000,
                 burst: Optional[int] = 0, tool: Optional[Tool] = None) -> None:
        tool = tool or default_tool()
        super().__init__(_core.futoin_bind_limiter_new(
            tool.ptr, _d("Limiter(concurrent)", concurrent, 1),
            _q("Limiter(max_queue)", max_queue), _d("Limiter(rate)", rate, 1),
            _d("Limiter(period_ms)", period_ms, 1000, _MS),
            _q("Limiter(burst)", burst)), tool)
