"""The load policy: what the flows of a Tool (or of the whole process) may
load by name with add_foreign(), an allow-list of languages and of
"language:module" rules (futoin_host_policy_set() of futoin/sys/host.h)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Optional

from . import _core
from ._errors import InvalidStateError

# A language name as the library takes one (futoin__host_language_ok():
# 1 to 32 ASCII letters, digits, "_" or "-").
_LANGUAGE = re.compile(r"[A-Za-z0-9_-]{1,32}", re.ASCII)

_EBUSY = -16     # FUTOIN_EBUSY
_EINVAL = -22    # FUTOIN_EINVAL
_ENOMEM = -12    # FUTOIN_ENOMEM


def _strings(value: Any, what: str) -> Optional[tuple[str, ...]]:
    """`value` (None, or an iterable of str) as a tuple, or TypeError /
    ValueError naming `what` and the entry."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, bytearray)) or not isinstance(value, Iterable):
        raise TypeError(f"{what} must be an iterable of str (a tuple, a list), "
                        f"not {type(value).__name__}")
    out = tuple(value)
    for i, e in enumerate(out):
        if type(e) is not str:
            raise TypeError(f"{what}[{i}] must be str, not {type(e).__name__}")
        if "\0" in e:
            raise ValueError(f"{what}[{i}] must not contain NUL characters: {e!r}")
    return out


def _check_language(name: str, what: str) -> None:
    if not _LANGUAGE.fullmatch(name):
        raise ValueError(f"{what}: {name!r} is not a language name (1 to 32 "
                         "letters, digits, '_' or '-')")


def _check_rule(rule: str, what: str) -> None:
    language, colon, module = rule.partition(":")
    if not colon or not language:
        raise ValueError(f"{what}: {rule!r} is not a rule 'language:module' "
                         "(e.g. 'lua:pricing', 'java:org.example.*')")
    _check_language(language, f"{what} {rule!r}")
    if not module:
        raise ValueError(f"{what}: {rule!r} names no module")
    if "*" in module[:-1]:
        raise ValueError(f"{what}: {rule!r}: '*' is only allowed last (a prefix "
                         "rule, e.g. 'java:org.example.*')")


def _checked(allow_languages: Any, allow_modules: Any, where: str
             ) -> tuple[Optional[tuple[str, ...]], Optional[tuple[str, ...]]]:
    """Both lists checked, as tuples (None: not restricted)."""
    languages = _strings(allow_languages, f"{where}: allow_languages")
    modules = _strings(allow_modules, f"{where}: allow_modules")
    for i, name in enumerate(languages or ()):
        _check_language(name, f"{where}: allow_languages[{i}]")
    for i, rule in enumerate(modules or ()):
        _check_rule(rule, f"{where}: allow_modules[{i}]")
    return languages, modules


def _apply(tool: Any, languages: Optional[tuple[str, ...]],
           modules: Optional[tuple[str, ...]], where: str) -> None:
    """futoin_host_policy_set() of `tool` (None: the process), with the
    library's refusals as exceptions."""
    rc = _core._load_policy_set(tool, languages, modules)
    if rc == 0:
        return
    if rc == _EBUSY:
        whose = "this Tool" if tool is not None else "this process"
        raise InvalidStateError(
            f"{where}: {whose} has a load policy already; it is set once, so "
            "that code running in a flow cannot widen it")
    if rc == _ENOMEM:
        raise MemoryError(f"{where}: out of memory")
    if rc == _EINVAL:  # what _checked() lets through is what the library takes
        raise ValueError(f"{where}: the library refused the policy")
    raise RuntimeError(f"{where}: futoin_host_policy_set() failed ({rc})")


def set_load_policy(*, allow_languages: Optional[Iterable[str]] = None,
                    allow_modules: Optional[Iterable[str]] = None) -> None:
    """Restrict what every flow of this process may load by name
    (``add_foreign()``, and steps other languages add in them), in addition
    to each Tool's own policy (``Tool(allow_languages=...,
    allow_modules=...)``): a step must pass both.

    ``allow_languages``: the languages a step may be written in
    (``("python", "c")``); None allows all, ``()`` none.
    ``allow_modules``: rules ``"language:name"``; None allows every module
    of an allowed language. When given, a step's module must match a rule
    of its language: the exact name (``"lua:pricing"``,
    ``"c:libm.so.6"``) or a prefix followed by ``"*"``
    (``"java:org.example.*"``, ``"python:*"``; ``"*"`` only last; a prefix
    rule never matches a name containing ``".."``).

    A step outside the policy fails with ``InvalidRequest`` whose
    ``info`` names the rule ("load policy of this process: language 'lua'
    is not allowed (languages: python, c)"); its language's plug-in is not
    even looked for. Set once per process (whichever language sets it):
    a second call raises InvalidStateError and changes nothing. Lists
    that are not iterables of str raise TypeError; a NUL character, a
    name that is not a language name, a rule without "language:" or with
    a "*" before its end raise ValueError."""
    languages, modules = _checked(allow_languages, allow_modules, "set_load_policy()")
    _apply(None, languages, modules, "set_load_policy()")
