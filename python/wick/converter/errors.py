"""ConversionError and the helpers that point an error at the user's source line.

Every unsupported construct raises ConversionError naming the ATen op, the user's source line
(taken from the FX node's ``stack_trace`` meta: the innermost frame outside torch itself) and a
hint.  The converter never writes a file that computes something else.
"""

from __future__ import annotations

import re

_FRAME = re.compile(
    r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)\n\s*(?P<code>[^\n]*)'
)


class ConversionError(Exception):
    """A model (or part of one) that wick cannot convert faithfully."""

    def __init__(
        self,
        message: str,
        *,
        op: str | None = None,
        source: str | None = None,
        hint: str | None = None,
    ):
        self.op = op
        self.source = source
        self.hint = hint
        parts = [message]
        if op:
            parts.append(f"  op: {op}")
        if source:
            parts.append(f"  at: {source}")
        if hint:
            parts.append(f"  hint: {hint}")
        super().__init__("\n".join(parts))


def user_frame(stack_trace: str | None) -> str | None:
    """The most useful 'file:line: code' from an FX stack trace: the innermost frame that is not
    inside torch (so a model built from nn.Conv2d points at the model's forward), else the
    innermost frame."""
    if not stack_trace:
        return None
    frames = list(_FRAME.finditer(stack_trace))
    if not frames:
        return None

    def is_torch(f):
        path = f.group("file").replace("\\", "/")
        return "/torch/" in path or "/torch_" in path

    chosen = None
    for f in reversed(frames):
        if not is_torch(f):
            chosen = f
            break
    if chosen is None:
        chosen = frames[-1]
    code = chosen.group("code").strip()
    return f"{chosen.group('file')}:{chosen.group('line')} in {chosen.group('func')}: {code}"
