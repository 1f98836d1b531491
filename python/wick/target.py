"""Conversion for a target device: ``wick.convert(..., target="nnapi:27")``.

The report of what an NNAPI feature level takes comes from the NNAPI delegate's own decision
code (src/delegates/nnapi/nnapi_ops.c), run in its planning mode (``plan_level=N``: no NNAPI
library is opened, every partition is declined at prepare, so the model runs on the CPU and the
delegation report is the plan).  There is no second list of NNAPI's rules here.

No torch needed: ``plan(tflite_bytes, level)`` works on any .tflite file.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

__all__ = ["TargetReport", "TargetWarning", "parse_target", "plan"]

# The feature levels NNAPI has had, for messages (the delegate takes any level from 27 up).
LEVELS = {
    27: "Android 8.1",
    28: "Android 9",
    29: "Android 10",
    30: "Android 11",
    31: "Android 12",
    1000006: "feature level 6",
    1000007: "feature level 7",
    1000008: "feature level 8",
}
ACCEPTED = '"nnapi" (= "nnapi:27") or "nnapi:N" with N an NNAPI feature level: ' + ", ".join(
    f"{n} ({name})" for n, name in LEVELS.items()
)


class TargetWarning(UserWarning):
    """wick.convert(..., target=...): the target would not run every operator of the model."""


def parse_target(target: str) -> tuple[str, int]:
    """``"nnapi"`` or ``"nnapi:N"`` -> ("nnapi", N); anything else raises ValueError naming the
    accepted forms.  "nnapi" alone means level 27, the first (every device with NNAPI)."""
    if not isinstance(target, str):
        raise ValueError(f"target must be a string, {ACCEPTED}; got {target!r}")
    name, sep, level = target.strip().partition(":")
    if name.strip().lower() == "nnapi":
        if not sep:
            return "nnapi", 27
        level = level.strip()
        if level.isdigit() and int(level) in LEVELS:
            return "nnapi", int(level)
    raise ValueError(f"unknown target {target!r}: the accepted targets are {ACCEPTED}")


@dataclass(frozen=True)
class Declined:
    """One operator the target would not take: its index in the file, TFLite name, and why
    (the delegate's reason)."""

    index: int
    op: str
    reason: str


@dataclass
class TargetReport:
    """What NNAPI at ``level`` would run of a file, from the delegate's planning mode.

    ``total`` operators (of the signature planned; folded ones included), ``taken`` of them in
    ``partitions`` (lists of operator indices, each a partition NNAPI would compile), and
    ``declined``: every other operator with the reason.  ``notes``: the operators NNAPI would
    take but run as something other than the operator itself, with the delegate's note (a GELU
    composed of NNAPI operations, and its error bound), in the same form as ``declined``.
    ``lowerings`` counts what the converter lowered differently for the target (e.g.
    ``{"HARD_SWISH": 19}``).  ``str(report)`` is the compact text wick.convert prints."""

    target: str
    level: int
    total: int
    taken: int
    partitions: list[list[int]]
    declined: list[Declined]
    ops: list[str] = field(default_factory=list)  # TFLite name of each operator, by index
    lowerings: dict[str, int] = field(default_factory=dict)
    notes: list[Declined] = field(default_factory=list)

    @property
    def runs_whole(self) -> bool:
        """True when every operator would run on NNAPI, in one partition."""
        return self.taken == self.total and len(self.partitions) <= 1

    def __str__(self) -> str:
        name = LEVELS.get(self.level, "")
        head = (
            f"{self.target}: NNAPI feature level {self.level}"
            f"{f' ({name})' if name else ''} would run {self.taken} of {self.total} operators "
            f"in {len(self.partitions)} partition{'' if len(self.partitions) == 1 else 's'}"
        )
        lines = [head]
        for k, nodes in enumerate(self.partitions):
            counts = Counter(self.ops[i] for i in nodes)
            what = ", ".join(f"{n} {op}" for op, n in counts.most_common())
            many = "" if len(nodes) == 1 else "s"
            lines.append(f"  partition {k}: {len(nodes)} operator{many} ({what})")
        # one line per distinct (op, reason), with the operator indices
        groups: dict[tuple[str, str], list[int]] = {}
        for d in self.declined:
            groups.setdefault((d.op, d.reason), []).append(d.index)
        if groups:
            lines.append("  not taken:")
        for (op, reason), where in groups.items():
            at = ", ".join(str(i) for i in where[:8]) + (", ..." if len(where) > 8 else "")
            lines.append(f"    {len(where)} x {op} (#{at}): {reason}")
        noted: dict[tuple[str, str], list[int]] = {}
        for d in self.notes:
            noted.setdefault((d.op, d.reason), []).append(d.index)
        if noted:
            lines.append("  taken as another form (the delegate's note):")
        for (op, note), where in noted.items():
            at = ", ".join(str(i) for i in where[:8]) + (", ..." if len(where) > 8 else "")
            lines.append(f"    {len(where)} x {op} (#{at}): {note}")
        if self.lowerings:
            done = ", ".join(f"{op} x{n}" for op, n in sorted(self.lowerings.items()))
            lines.append(f"  lowered for the target: {done}")
        return "\n".join(lines)


def plan(model, level: int, *, signature: str | None = None, target: str | None = None):
    """The TargetReport of a .tflite file (path or bytes) at NNAPI feature level ``level``,
    computed by the NNAPI delegate in planning mode (no library opened, nothing run)."""
    from .runtime import load

    rt = load(model, delegate=f"nnapi:plan_level={int(level)}", signature=signature)
    records = [r for r in rt.delegation if r.parent < 0]  # the signature's operators
    partitions: dict[int, list[int]] = {}
    declined, notes = [], []
    for r in records:
        if r.partition >= 0 and "planned only" in r.reason:
            partitions.setdefault(r.partition, []).append(r.index)
            if r.note:
                notes.append(Declined(r.index, r.op, r.note))
        else:
            reason = r.reason[len("nnapi: ") :] if r.reason.startswith("nnapi: ") else r.reason
            declined.append(Declined(r.index, r.op, reason))
    parts = [partitions[k] for k in sorted(partitions)]
    return TargetReport(
        target=target or f"nnapi:{level}",
        level=int(level),
        total=len(records),
        taken=sum(len(p) for p in parts),
        partitions=parts,
        declined=declined,
        ops=[r.op for r in records],
        notes=notes,
    )
