"""Pure parsing of fio's live status lines (``--eta=always --eta-newline=1``).

fio writes lines such as::

    Jobs: 1 (f=1): [r(1)][60.0%][r=99.8MiB/s][r=25.6k IOPS][eta 00m:02s]
    Jobs: 4 (f=4): [m(4)][100.0%][r=3032KiB/s,w=1300KiB/s][r=758,w=325 IOPS][eta 00m:00s]

separated by carriage returns and/or newlines.  Early lines carry only ``Jobs: 1 (f=1)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PCT = re.compile(r"\]\[(\d+(?:\.\d+)?)%\]")
_BW = re.compile(r"\[((?:[rwt]=[0-9.]+[KMGTP]?i?B/s,?)+)\]")
_IOPS = re.compile(r"\[((?:[rwt]=[0-9.]+[kKMG]?,?)+) IOPS\]")
_ETA = re.compile(r"\[eta\s+(?:(\d+)d:)?(?:(\d+)h:)?(\d+)m:(\d+)s\]")


@dataclass(frozen=True)
class Status:
    percent: float | None
    eta_s: int | None
    bw_text: str | None  # as fio prints it, e.g. "r=99.8MiB/s"
    iops_text: str | None  # e.g. "r=25.6k"


def split_status_chunks(buffer: str) -> tuple[list[str], str]:
    """Split accumulated output on CR/LF; return complete lines and the unfinished rest."""
    parts = re.split(r"[\r\n]+", buffer)
    return [p for p in parts[:-1] if p.strip()], parts[-1]


def parse_status_line(line: str) -> Status | None:
    """Parse one status line; None for anything that is not a ``Jobs:`` line."""
    line = line.strip()
    if not line.startswith("Jobs:"):
        return None
    pct = _PCT.search(line)
    bw = _BW.search(line)
    iops = _IOPS.search(line)
    eta = _ETA.search(line)
    eta_s = None
    if eta:
        d, h, m, s = (int(g) if g else 0 for g in eta.groups())
        eta_s = ((d * 24 + h) * 60 + m) * 60 + s
    return Status(
        percent=float(pct.group(1)) if pct else None,
        eta_s=eta_s,
        bw_text=bw.group(1) if bw else None,
        iops_text=iops.group(1) if iops else None,
    )
