"""State: the flow's state, a dict shared with the flow's steps in other
languages (the library's shared store)."""

from __future__ import annotations

from typing import Any

from . import _core

_state_get = _core._state_get
_state_put = _core._state_put
_state_reachable = _core._state_reachable
_state_error = _core._state_error
_UNREACHABLE: Any = object()


_MISSING: Any = object()


_ERROR_KEYS = frozenset(("error_info", "last_exception", "async_stack"))


class State(dict):
    """The flow's state: a dict whose keys are also attributes.

    ``error_info``, ``last_exception`` and ``async_stack`` (spec §1.7) are
    the flow's own, read live through the flow's handle: the same values as
    ``asi.error_info``, ``asi.last_exception`` and ``asi.async_stack`` at
    every moment (None before an error and once a loop took a
    ``break_loop()``/``continue_loop()``). They are read-only and not items
    of the dict (iterating does not show them).

    Shared with the flow's steps in other languages: assigning a value
    that crosses as an FTN12 value (``int``, ``float``, ``bool``, ``str``,
    ``bytes``, a list of numbers) under a ``str`` key also sets it in the
    library's shared store (``futoin_state_set``), and reading a key gives
    what another language set there since. Anything else stays in this
    dict only. A list is shared as a copy when assigned: changing it in
    place later changes only Python's. The state reaches the store through
    the step whose callback runs, or the handle it was last read through
    (``asi.state`` in a timer, ``root.state``); a value assigned where no
    handle reaches the store (a state object kept from a step, written from
    a timer) is kept, and published as soon as one does: when the flow
    next reads or writes its state, or the waiting step is completed.
    """

    __slots__ = ("_rootref", "_stepref", "_pub", "_pending")

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__()
        object.__setattr__(self, "_rootref", None)  # a root, for the store
        object.__setattr__(self, "_stepref", None)  # a step, for the store
        object.__setattr__(self, "_pub", {})        # key -> shared value seen
        object.__setattr__(self, "_pending", set())  # keys not yet published
        if args or kw:
            self.update(*args, **kw)

    def _flush(self) -> None:
        """Publish the values assigned while no handle reached the store,
        if one does now."""
        if not _state_reachable(self):
            return
        pending = list(self._pending)
        self._pending.clear()
        for key in pending:
            if dict.__contains__(self, key):
                self._publish(key, dict.__getitem__(self, key))
            else:
                _state_put(self, key, _MISSING, _MISSING, _MISSING)
                self._pub.pop(key, None)

    def _publish(self, key: str, value: Any) -> None:
        seen = _state_put(self, key, value, _MISSING, _UNREACHABLE)
        if seen is _UNREACHABLE:
            self._pending.add(key)  # kept: published when a handle reaches
            self._pub.pop(key, None)
        elif seen is _MISSING:
            self._pub.pop(key, None)
        else:
            self._pub[key] = seen

    def __getitem__(self, key: Any) -> Any:
        if type(key) is str:
            if key in _ERROR_KEYS:
                return _state_error(self, key)
            if self._pending:
                self._flush()
            if key not in self._pending:
                v = _state_get(self, key, _MISSING)
                if v is not _MISSING:
                    pub = self._pub.get(key, _MISSING)
                    if (type(pub) is type(v) and pub == v
                            and dict.__contains__(self, key)):
                        return dict.__getitem__(self, key)  # Python's own value
                    # set by another language since
                    dict.__setitem__(self, key, v)
                    self._pub[key] = list(v) if type(v) is list else v
                    return v
        return dict.__getitem__(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        if type(key) is str:
            if key in _ERROR_KEYS:
                raise TypeError(f"state[{key!r}] is read-only: the flow's last error")
            if self._pending:
                self._flush()
            self._publish(key, value)  # first: a refused name stores nothing
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: Any) -> None:
        if type(key) is str and key in _ERROR_KEYS:
            raise TypeError(f"state[{key!r}] is read-only: the flow's last error")
        shared = False
        if type(key) is str:
            if "\0" in key:
                raise ValueError("state: a name must not contain NUL characters")
            if self._pending:
                self._flush()
            if not _state_reachable(self):
                if dict.__contains__(self, key):
                    self._pending.add(key)  # removed from the store later
            elif _state_get(self, key, _MISSING) is not _MISSING:
                shared = True
                _state_put(self, key, _MISSING, _MISSING, _MISSING)
                self._pub.pop(key, None)
        if dict.__contains__(self, key):
            dict.__delitem__(self, key)
        elif not shared:
            raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        if type(key) is str:
            if key in _ERROR_KEYS:
                return _state_error(self, key) is not None
            if self._pending:
                self._flush()
            if key in self._pending:
                return dict.__contains__(self, key)
        return dict.__contains__(self, key) or (
            type(key) is str and _state_get(self, key, _MISSING) is not _MISSING)

    def get(self, key: Any, default: Any = None) -> Any:
        """The value of `key` (shared or Python's), else `default`."""
        try:
            return self[key]
        except KeyError:
            return default

    def pop(self, key: Any, *default: Any) -> Any:
        """Remove `key` (also from the shared store) and return its value."""
        try:
            v = self[key]
        except KeyError:
            if default:
                return default[0]
            raise
        del self[key]
        return v

    def setdefault(self, key: Any, default: Any = None) -> Any:
        """The value of `key`; set it to `default` first if there is none."""
        try:
            return self[key]
        except KeyError:
            self[key] = default
            return default

    def update(self, *args: Any, **kw: Any) -> None:
        """Set each item as ``self[key] = value`` does (shared where it can)."""
        for k, v in dict(*args, **kw).items():
            self[k] = v

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise AttributeError(name) from None
