"""Async stacks across languages: where each step of a failed flow was
written, whatever its language."""

from __future__ import annotations

from typing import Iterable, NamedTuple, Optional


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
