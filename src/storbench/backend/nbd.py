"""What an NBD export held before fio ran (pure): its allocation map from ``nbdinfo --map``.

A server answers a read of a never-written block (a hole, or an extent it knows is zero)
without reading anything: nbdkit's memory and file plugins, qemu-nbd over a sparse or
fresh qcow2 image.  The map before each workload says how much of the area read was never
written, which the ``sparse-read`` check judges (fix: ``--prefill``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .area import unwritten_share


@dataclass(frozen=True)
class Extent:
    """One line of ``nbdinfo --map``: ``offset length type description`` (type 3 = hole,zero)."""

    offset: int
    length: int
    flags: int
    description: str

    @property
    def unwritten(self) -> bool:
        return "hole" in self.description or "zero" in self.description


@dataclass(frozen=True)
class NbdActivity:
    """An export around one fio run: its size and how much of the first ``area_bytes`` was unwritten before."""

    uri: str
    size_bytes: int | None = None
    area_bytes: int | None = None  # the part of the export the workload uses (its size=), or all of it
    unwritten_before_bytes: int | None = None
    problems: tuple[str, ...] = ()

    @property
    def unwritten_ratio(self) -> float | None:
        return unwritten_share(self.unwritten_before_bytes, self.area_bytes)


def parse_nbdinfo_map(text: str) -> tuple[Extent, ...]:
    """``nbdinfo --map URI`` -> extents (``         0    67108864    3  hole,zero``); ValueError on other text."""
    out: list[Extent] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cols = line.split(None, 3)
        if len(cols) < 3 or not all(c.isdigit() for c in cols[:3]):
            raise ValueError(f"not an nbdinfo --map line: {line.strip()!r}")
        out.append(Extent(int(cols[0]), int(cols[1]), int(cols[2]), cols[3].strip() if len(cols) > 3 else ""))
    return tuple(out)


def unwritten_bytes(extents: Sequence[Extent], area_bytes: int) -> int:
    """Bytes of ``[0, area_bytes)`` that the map calls holes or zeros."""
    total = 0
    for e in extents:
        if not e.unwritten:
            continue
        start, end = e.offset, min(e.offset + e.length, area_bytes)
        if end > start:
            total += end - start
    return total
