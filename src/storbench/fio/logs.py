"""Pure: fio's interval logs (``write_bw_log``, ``write_iops_log``, ``write_lat_log``).

A log line is ``time_ms, value, data_direction, block_size, offset[, priority]``
(fio 3.x); bandwidth values are KiB/s, IOPS values are I/Os per second, latency
values nanoseconds.  Parsing is columnar (numpy), so logs with millions of lines
are read without a per-line Python loop.

Several jobs write one log each; :func:`per_second` aligns them on their
timestamps (whole seconds), not by position, and sums bandwidth/IOPS across jobs.
"""

from __future__ import annotations

import re
from typing import Mapping

import numpy as np

from ..errors import FioParseError

DIRECTION_NAMES = {0: "read", 1: "write", 2: "trim"}
_LOG_NAME = re.compile(r"_(bw|iops|lat|clat|slat)\.(\d+)\.log$")


def parse_log(text: str) -> np.ndarray:
    """Rows of ``[time_ms, value, direction, bs, offset(, prio)]`` as int64."""
    first = text.split("\n", 1)[0].strip()
    if not first:
        return np.zeros((0, 5), dtype=np.int64)
    ncols = first.count(",") + 1
    if ncols < 3:
        raise FioParseError(f"not a fio log: first line {first[:60]!r} has {ncols} column(s), expected 5 or 6")
    flat = np.fromstring(text.replace(",", " "), dtype=np.int64, sep=" ")  # type: ignore[call-overload]
    if flat.size % ncols:
        # a truncated last line (fio killed mid-write): drop it
        flat = flat[: flat.size - flat.size % ncols]
    return flat.reshape(-1, ncols)


def log_kind(filename: str) -> tuple[str, int] | None:
    """``("bw", 1)`` for ``sb_bw.1.log``; None for anything else."""
    m = _LOG_NAME.search(filename)
    return (m.group(1), int(m.group(2))) if m else None


def per_second(logs: Mapping[str, str], kind: str) -> dict[str, list[list[float]]]:
    """Per direction, ``[[t_s, value], ...]`` summed over jobs per whole second.

    ``kind`` is "bw" (values converted to bytes/s) or "iops".
    """
    sums: dict[int, dict[int, float]] = {}
    for name, text in logs.items():
        lk = log_kind(name)
        if lk is None or lk[0] != kind:
            continue
        rows = parse_log(text)
        if rows.size == 0:
            continue
        seconds = np.rint(rows[:, 0] / 1000.0).astype(np.int64)
        for ddir in np.unique(rows[:, 2]):
            mask = rows[:, 2] == ddir
            secs, inverse = np.unique(seconds[mask], return_inverse=True)
            totals = np.bincount(inverse, weights=rows[mask, 1].astype(np.float64))
            per = sums.setdefault(int(ddir), {})
            for s, v in zip(secs.tolist(), totals.tolist()):
                per[s] = per.get(s, 0.0) + v
    scale = 1024.0 if kind == "bw" else 1.0
    return {
        DIRECTION_NAMES.get(d, str(d)): [[float(s), v * scale] for s, v in sorted(per.items())]
        for d, per in sorted(sums.items())
    }


def series_from_logs(logs: Mapping[str, str]) -> dict:
    """The stored form: ``{"format_version": 1, "interval_s": 1, "bw_bytes": {...}, "iops": {...}}``."""
    return {
        "format_version": 1,
        "interval_s": 1,
        "bw_bytes": per_second(logs, "bw"),
        "iops": per_second(logs, "iops"),
    }
