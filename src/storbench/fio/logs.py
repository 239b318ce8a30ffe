"""Pure: fio's logs (``write_bw_log``, ``write_iops_log``, ``write_lat_log``).

A log line is ``time_ms, value, data_direction, block_size, offset_or_priority[, priority]``
(fio 3.x); bandwidth values are KiB/s, IOPS values are I/Os per second, latency
values nanoseconds.  A job writes one file per kind, named
``<prefix>_<kind>.<job>.log`` (``sb_bw.1.log``, ``randread_lat.2.log``).

Two sorts of log, read two ways:

* **Averaged** logs (``log_avg_msec`` > 0; ``storbench run`` writes them with 1000 ms):
  one line per window and direction, whose value is the window's rate or mean.
  They are small; :func:`per_second` sums them per whole second over jobs, and
  :func:`series_from_logs` is the form stored with each result.  These are read in
  plain Python (numpy only for texts over :data:`NUMPY_FROM_BYTES`), so a run does
  not pay numpy's import for a few dozen lines.

* **Per-I/O** logs (``log_avg_msec=0``): one line per I/O, millions of lines for a
  few seconds of a fast device.  :func:`summarize_io_logs` and
  :func:`latency_percentiles_per_second` read them as a stream of byte blocks
  (:data:`CHUNK_BYTES` at a time, never a whole file), parse each block with numpy
  and aggregate per second as they go:

  - second ``n`` holds the I/Os whose log time is in ``[(n - 1) s, n s)``, so the
    labels match an averaged log's (its line at 1000 ms covers the first second);
  - IOPS is the number of I/Os in the second, bandwidth the sum of their block
    sizes (a per-I/O bandwidth *value* is one I/O's own rate, which does not add up);
  - latency percentiles are exact order statistics (nearest rank: the smallest
    latency with at least p % of the second's I/Os at or below it) over the I/Os of
    every job in that second.

  Jobs are aligned on their timestamps, never by line position: the files are read
  in lockstep (always the one that is furthest behind in time), and a second's
  percentiles are computed once every job's log has gone past it, so only about
  one block per job and the seconds in flight are in memory.

Every I/O appears once in each per-I/O log of its job (``lat``, ``clat``, ``slat``,
``bw``, ``iops``), so a summary reads ONE log per job: the latency log asked for
(``lat`` by default), else any other per-I/O log of that job for IOPS and bandwidth.
Logs that would only repeat the same I/Os are not read at all.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO

from ..errors import FioParseError
from ..model import versions

if TYPE_CHECKING:
    import numpy as np
    from numpy import ndarray

    from storbench.jsontypes import JSONObject

DIRECTION_NAMES = {0: "read", 1: "write", 2: "trim"}
_LOG_NAME = re.compile(r"^(?P<prefix>.*)_(?P<kind>bw|iops|lat|clat|slat)\.(?P<job>\d+)\.log$")
LATENCY_KINDS = ("lat", "clat", "slat")

#: Bytes of log text parsed at once by the streaming readers.
CHUNK_BYTES = 4 << 20
_COMMA_TO_SPACE = bytes.maketrans(b",", b" ")

#: Averaged logs longer than this are parsed with numpy; shorter ones in plain Python.
NUMPY_FROM_BYTES = 1 << 20

#: A log given as its text, its bytes, or an iterable of byte blocks (cut anywhere,
#: e.g. :func:`file_blocks` of an open file).
LogSource = str | bytes | Iterable[bytes]


# --------------------------------------------------------------------------- names


def log_kind(filename: str) -> tuple[str, int] | None:
    """``("bw", 1)`` for ``sb_bw.1.log``; None for anything else."""
    m = _LOG_NAME.search(filename.rsplit("/", 1)[-1])
    return (m.group("kind"), int(m.group("job"))) if m else None


def _job_key(filename: str) -> tuple[str, int] | None:
    """(prefix, job number): the logs of one job share it."""
    m = _LOG_NAME.search(filename.rsplit("/", 1)[-1])
    return (m.group("prefix"), int(m.group("job"))) if m else None


# --------------------------------------------------------------------------- parsing


def _fromstring(data: str | bytes) -> np.ndarray | None:
    """Whitespace-separated integers, or None when something else is in the way
    (numpy < 2.4 stops early with a warning, later numpy raises)."""
    import warnings

    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # "could not be read to its end"
        try:
            return np.fromstring(data, dtype=np.int64, sep=" ")
        except (ValueError, DeprecationWarning):
            return None


def _ncols(first_line: str) -> int:
    first = first_line.strip()
    ncols = first.count(",") + 1
    if ncols < 3:
        raise FioParseError(f"not a fio log: first line {first[:60]!r} has {ncols} column(s), expected 5 or 6")
    return ncols


def parse_log(text: str) -> np.ndarray:
    """Rows of ``[time_ms, value, direction, bs, offset(, prio)]`` as int64."""
    import numpy as np

    first = text.split("\n", 1)[0].strip()
    if not first:
        return np.zeros((0, 5), dtype=np.int64)
    ncols = _ncols(first)
    flat = _fromstring(text.replace(",", " "))
    if flat is None:
        raise FioParseError(f"not a fio log: a line is not {ncols} integers (first line {first[:60]!r})")
    if flat.size % ncols:
        # a truncated last line (fio killed mid-write): drop it
        flat = flat[: flat.size - flat.size % ncols]
    return flat.reshape(-1, ncols)


def _parse_rows_python(text: str) -> list[tuple[int, int, int]]:
    """``(time_ms, value, direction)`` per line, for small logs (same rules as :func:`parse_log`)."""
    first = text.split("\n", 1)[0].strip()
    if not first:
        return []
    ncols = _ncols(first)
    tokens = text.replace(",", " ").split()
    try:
        numbers = [int(t) for t in tokens]
    except ValueError as exc:
        raise FioParseError(f"not a fio log: {exc}") from None
    usable = len(numbers) - len(numbers) % ncols  # a truncated last line is dropped
    return [(numbers[i], numbers[i + 1], numbers[i + 2]) for i in range(0, usable, ncols)]


def file_blocks(fh: BinaryIO, block_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Blocks of an open binary file (the caller opens and closes it)."""
    return iter(functools.partial(fh.read, block_bytes), b"")


def _blocks(source: LogSource) -> Iterator[bytes]:
    if isinstance(source, str):
        yield source.encode("ascii", errors="replace")
    elif isinstance(source, (bytes, bytearray, memoryview)):
        yield bytes(source)
    else:
        yield from source


def iter_log_rows(source: LogSource, *, chunk_bytes: int = CHUNK_BYTES, name: str = "log") -> Iterator[np.ndarray]:
    """Parsed rows of one log, a chunk at a time: int64 arrays of shape (n, ncols).

    ``source`` may be cut anywhere; lines are re-assembled across blocks and about
    ``chunk_bytes`` of text is parsed at once.  A truncated last line (fio killed
    mid-write) is dropped; any other line that is not ``ncols`` integers raises
    :class:`FioParseError`.
    """
    ncols: int | None = None
    line_no = 0

    def parse(buf: bytes) -> np.ndarray:
        nonlocal ncols, line_no
        if ncols is None:
            ncols = _ncols(buf[: buf.find(b"\n")].decode("ascii", errors="replace"))
        rows = _parse_block(buf, ncols, name, line_no)
        line_no += rows.shape[0]
        return rows

    rest = b""
    for block in _blocks(source):
        rest = rest + block if rest else block
        start = 0
        while len(rest) - start >= chunk_bytes:
            end = start + chunk_bytes
            cut = rest.rfind(b"\n", start, end) + 1 or rest.find(b"\n", end) + 1
            if not cut:
                break  # one line longer than chunk_bytes: wait for its end
            yield parse(rest[start:cut])
            start = cut
        rest = rest[start:]
    if rest.strip() and not rest.endswith(b"\n"):
        # the last line has no line end (fio killed mid-write): keep it only if it is whole
        head, newline, last = rest.rpartition(b"\n")
        if ncols is None:
            ncols = _ncols((head or last).split(b"\n", 1)[0].decode("ascii", errors="replace"))
        whole = last.count(b",") == ncols - 1 and last.rstrip()[-1:].isdigit()
        rest = head + newline + (last + b"\n" if whole else b"")
    if rest.strip():
        yield parse(rest)


def _parse_block(buf: bytes, ncols: int, name: str, first_line: int) -> np.ndarray:
    """Whole lines -> (n, ncols) int64 (commas become spaces with ``bytes.translate``,
    then one ``numpy.fromstring``: about 100 MB/s here)."""
    import numpy as np

    nlines = buf.count(b"\n")
    if nlines == 0:
        return np.zeros((0, ncols), dtype=np.int64)
    flat = _fromstring(buf.translate(_COMMA_TO_SPACE))
    if flat is None or flat.size != nlines * ncols:
        for i, line in enumerate(buf.split(b"\n")[:-1]):
            parts = line.split(b",")
            if len(parts) != ncols or not all(p.strip().isdigit() for p in parts):
                shown = line[:60].decode("ascii", errors="replace")
                raise FioParseError(f"{name}: line {first_line + i + 1} is not a fio log line: {shown!r}")
        raise FioParseError(f"{name}: could not read {nlines} lines of {ncols} columns")
    return flat.reshape(nlines, ncols)


# --------------------------------------------------------------------------- averaged logs


def per_second(logs: Mapping[str, str], kind: str) -> dict[str, list[list[float]]]:
    """Per direction, ``[[t_s, value], ...]`` summed over jobs per whole second.

    For averaged logs (``log_avg_msec=1000``).  ``kind`` is "bw" (values converted to
    bytes/s) or "iops".  A line's second is its time rounded to the nearest second
    (half to even), so fio's slightly late timestamps (1001 ms) land where they belong.
    """
    sums: dict[int, dict[int, float]] = {}
    for name, text in logs.items():
        lk = log_kind(name)
        if lk is None or lk[0] != kind:
            continue
        if len(text) < NUMPY_FROM_BYTES:
            rows = _parse_rows_python(text)
            per_file: dict[int, dict[int, float]] = {}
            for t_ms, value, ddir in rows:
                bucket = per_file.setdefault(ddir, {})
                s = round(t_ms / 1000.0)
                bucket[s] = bucket.get(s, 0.0) + float(value)
            for ddir, secs in sorted(per_file.items()):
                per = sums.setdefault(ddir, {})
                for s, v in sorted(secs.items()):
                    per[s] = per.get(s, 0.0) + v
            continue
        import numpy as np

        arr = parse_log(text)
        if arr.size == 0:
            continue
        seconds = np.rint(arr[:, 0] / 1000.0).astype(np.int64)
        for ddir in np.unique(arr[:, 2]):
            mask = arr[:, 2] == ddir
            distinct, inverse = np.unique(seconds[mask], return_inverse=True)
            totals = np.bincount(inverse, weights=arr[mask, 1].astype(np.float64))
            per = sums.setdefault(int(ddir), {})
            for second, v in zip(distinct.tolist(), totals.tolist()):
                per[second] = per.get(second, 0.0) + v
    scale = 1024.0 if kind == "bw" else 1.0
    return {
        DIRECTION_NAMES.get(d, str(d)): [[float(s), v * scale] for s, v in sorted(per.items())]
        for d, per in sorted(sums.items())
    }


def series_from_logs(logs: Mapping[str, str]) -> JSONObject:
    """The stored form: ``{"format_version": 1, "interval_s": 1, "bw_bytes": {...}, "iops": {...}}``."""
    return {
        "format_version": versions.SERIES,
        "interval_s": 1,
        "bw_bytes": per_second(logs, "bw"),
        "iops": per_second(logs, "iops"),
    }


# --------------------------------------------------------------------------- per-I/O logs


@dataclass(frozen=True)
class IoLogSummary:
    """Per-second figures of per-I/O logs (``log_avg_msec=0``), all jobs together.

    Series are per direction, ``[[t_s, value], ...]``; ``lat_ns`` rows are
    ``[t_s, p_1, p_2, ...]`` for :attr:`percentiles`.  A second in which a direction
    completed no I/O is absent from that direction's series.
    """

    iops: Mapping[str, list[list[float]]]
    bw_bytes: Mapping[str, list[list[float]]]
    latency_kind: str | None  #: the log kind the percentiles come from ("lat", "clat", "slat"), None if none
    percentiles: tuple[float, ...]
    lat_ns: Mapping[str, list[list[float]]]
    jobs: int
    ios: int  #: I/Os counted
    logs_read: tuple[str, ...]  #: the logs that were read (the others repeat the same I/Os)
    interval_s: int = 1
    notes: tuple[str, ...] = field(default_factory=tuple)


def _percentile_ranks(n: int, percentiles: Sequence[float]) -> list[int]:
    """0-based nearest-rank indices: ceil(p / 100 * n) - 1, at least 0, with p taken
    as the decimal it is written as (99.9 is 999/1000 exactly, not its binary float)."""
    from fractions import Fraction

    return [max(0, min(n - 1, math.ceil(Fraction(repr(float(p))) * n / 100) - 1)) for p in percentiles]


class _Stream:
    """One log being read: its rows chunk by chunk and how far in time it has got."""

    def __init__(self, name: str, source: LogSource, *, counts: bool, latency: bool, chunk_bytes: int) -> None:
        self.name = name
        self.rows = iter_log_rows(source, chunk_bytes=chunk_bytes, name=name)
        self.counts = counts
        self.latency = latency
        self.last_second = -1  # the last second seen; seconds before it are complete in this log
        self.lines = 0


class _Accumulator:
    def __init__(self, percentiles: Sequence[float]) -> None:
        import numpy as np

        self.np = np
        self.percentiles = tuple(float(p) for p in percentiles)
        self.ios: dict[int, np.ndarray] = {}  # direction -> I/Os per second index
        self.nbytes: dict[int, np.ndarray] = {}
        self.pending: dict[int, dict[int, list[np.ndarray]]] = {}  # second -> direction -> latencies
        self.lat: dict[int, list[list[float]]] = {}
        self.finished_before = 0  # seconds below this have their percentiles
        self.total_ios = 0

    def add_counts(self, seconds: np.ndarray, ddirs: np.ndarray, sizes: np.ndarray, one_dir: int | None) -> None:
        np = self.np
        groups = [(one_dir, slice(None))] if one_dir is not None else [(int(d), ddirs == d) for d in np.unique(ddirs)]
        for ddir, sel in groups:
            secs = seconds[sel]
            n = int(secs.max()) + 1
            counts = np.bincount(secs, minlength=n)
            nbytes = np.bincount(secs, weights=sizes[sel].astype(np.float64), minlength=n)
            for store, add in ((self.ios, counts), (self.nbytes, nbytes)):
                have = store.get(ddir)
                if have is None:
                    have = np.zeros(n, dtype=add.dtype)
                elif have.size < n:
                    have = np.concatenate((have, np.zeros(n - have.size, dtype=add.dtype)))
                have[:n] += add
                store[ddir] = have
            self.total_ios += int(secs.size)

    def add_latencies(self, seconds: np.ndarray, ddirs: np.ndarray, values: np.ndarray, one_dir: int | None, name: str) -> None:
        np = self.np
        if int(seconds[0]) < self.finished_before:
            raise FioParseError(
                f"{name}: an I/O at {int(seconds[0])} s comes after second {self.finished_before} was complete "
                "(the log is not in time order)"
            )
        values = values.astype(np.int32) if values.size and int(values.max()) < 2**31 else values.copy()
        groups = [(one_dir, None)] if one_dir is not None else [(int(d), ddirs == d) for d in np.unique(ddirs)]
        for ddir, mask in groups:
            secs = seconds if mask is None else seconds[mask]
            vals = values if mask is None else values[mask]
            edges = np.flatnonzero(np.diff(secs)) + 1
            starts = np.concatenate(([0], edges))
            ends = np.concatenate((edges, [secs.size]))
            for a, b in zip(starts.tolist(), ends.tolist()):
                self.pending.setdefault(int(secs[a]), {}).setdefault(ddir, []).append(vals[a:b])

    def finish_before(self, second: int) -> None:
        """Percentiles of every pending second below ``second`` (all logs are past them)."""
        np = self.np
        for s in sorted(k for k in self.pending if k < second):
            for ddir, parts in sorted(self.pending.pop(s).items()):
                vals = parts[0] if len(parts) == 1 else np.concatenate(parts)
                ranks = _percentile_ranks(vals.size, self.percentiles)
                picked = np.partition(vals, sorted(set(ranks)))
                self.lat.setdefault(ddir, []).append([float(s + 1)] + [float(picked[r]) for r in ranks])
        self.finished_before = max(self.finished_before, second)


def _plan(names: Sequence[str], latency: str | None) -> tuple[dict[str, tuple[bool, bool]], int, str | None]:
    """Which logs to read: {name: (counts from it, latencies from it)}, the job count,
    and the latency kind that will be used."""
    by_job: dict[tuple[str, int], dict[str, str]] = {}
    for name in names:
        key, lk = _job_key(name), log_kind(name)
        if key is None or lk is None:
            continue
        by_job.setdefault(key, {})[lk[0]] = name
    kind = latency
    if kind is not None and not any(kind in kinds for kinds in by_job.values()):
        kind = None
    plan: dict[str, tuple[bool, bool]] = {}
    for kinds in by_job.values():
        if kind is not None and kind in kinds:
            plan[kinds[kind]] = (True, True)
            continue
        for k in ("lat", "clat", "slat", "bw", "iops"):
            if k in kinds:
                plan[kinds[k]] = (True, False)
                break
    return plan, len(by_job), kind


def summarize_io_logs(
    logs: Mapping[str, LogSource],
    *,
    percentiles: Sequence[float] = (50.0, 99.0),
    latency: str | None = "lat",
    chunk_bytes: int = CHUNK_BYTES,
) -> IoLogSummary:
    """Per-second IOPS, bandwidth and latency percentiles of per-I/O logs (``log_avg_msec=0``).

    ``logs`` maps file names (``<prefix>_<kind>.<job>.log``) to their contents as
    text, bytes or byte blocks; pass the logs of ONE workload (all its jobs).  Logs
    whose name fio would not write are ignored.  ``latency`` names the latency log
    kind the percentiles come from (None: no percentiles).  See the module docs for
    what a second holds and how jobs are aligned.
    """
    if latency is not None and latency not in LATENCY_KINDS:
        raise ValueError(f"latency must be one of {LATENCY_KINDS} or None, not {latency!r}")
    if any(not 0 < p <= 100 for p in percentiles):
        raise ValueError(f"percentiles must be in (0, 100], got {tuple(percentiles)}")
    plan, jobs, kind = _plan(list(logs), latency)
    acc = _Accumulator(percentiles)
    np = acc.np
    streams = [
        _Stream(name, logs[name], counts=c, latency=lat, chunk_bytes=chunk_bytes) for name, (c, lat) in sorted(plan.items())
    ]
    lines = 0
    active = list(streams)
    while active:
        stream = min(active, key=lambda s: s.last_second)  # the log furthest behind in time
        rows = next(stream.rows, None)
        if rows is None:
            active.remove(stream)
        elif rows.shape[0]:
            lines += rows.shape[0]
            times = rows[:, 0]
            if times.size > 1 and bool((times[1:] < times[:-1]).any()):
                rows = rows[np.argsort(times, kind="stable")]
                times = rows[:, 0]
            seconds = times // 1000
            ddirs = rows[:, 2]
            one_dir = int(ddirs[0]) if int(ddirs.min()) == int(ddirs.max()) else None
            if stream.counts:
                acc.add_counts(seconds, ddirs, rows[:, 3], one_dir)
            if stream.latency:
                acc.add_latencies(seconds, ddirs, rows[:, 1], one_dir, stream.name)
            stream.last_second = max(stream.last_second, int(seconds[-1]))
        behind = [s.last_second for s in active if s.latency]
        acc.finish_before(min(behind) if behind else 2**62)

    def series(store: Mapping[int, ndarray], scale: float = 1.0) -> dict[str, list[list[float]]]:
        out = {}
        for ddir in sorted(store):
            counts = acc.ios[ddir]
            values = store[ddir]
            out[DIRECTION_NAMES.get(ddir, str(ddir))] = [
                [float(s + 1), float(values[s]) * scale] for s in np.flatnonzero(counts).tolist()
            ]
        return out

    notes = []
    if latency is not None and kind is None:
        notes.append(f"no {latency} log among the logs given: no latency percentiles")
    return IoLogSummary(
        iops=series(acc.ios),
        bw_bytes=series(acc.nbytes),
        latency_kind=kind,
        percentiles=acc.percentiles,
        lat_ns={DIRECTION_NAMES.get(d, str(d)): rows for d, rows in sorted(acc.lat.items())},
        jobs=jobs,
        ios=acc.total_ios,
        logs_read=tuple(s.name for s in streams),
        notes=tuple(notes),
    )


def latency_percentiles_per_second(
    logs: Mapping[str, LogSource],
    percentiles: Sequence[float] = (50.0, 99.0),
    kind: str = "lat",
    *,
    chunk_bytes: int = CHUNK_BYTES,
) -> dict[str, list[list[float]]]:
    """Per direction, ``[[t_s, p50_ns, p99_ns], ...]``: latency percentiles over time of
    per-I/O latency logs, all jobs' I/Os of each second together (see
    :func:`summarize_io_logs`; only the ``kind`` logs are read)."""
    chosen = {name: src for name, src in logs.items() if (log_kind(name) or ("", 0))[0] == kind}
    summary = summarize_io_logs(chosen, percentiles=percentiles, latency=kind, chunk_bytes=chunk_bytes)
    return dict(summary.lat_ns)


def io_log_summary_to_dict(summary: IoLogSummary) -> JSONObject:
    """A JSON-ready form (``format_version`` 1)."""
    return {
        "format_version": versions.SERIES,
        "interval_s": summary.interval_s,
        "iops": dict(summary.iops),
        "bw_bytes": dict(summary.bw_bytes),
        "latency_kind": summary.latency_kind,
        "percentiles": list(summary.percentiles),
        "lat_ns": dict(summary.lat_ns),
        "jobs": summary.jobs,
        "ios": summary.ios,
        "logs_read": list(summary.logs_read),
        "notes": list(summary.notes),
    }



# --------------------------------------------------------------------------- many hosts: epoch-stamped logs


def epoch_series(iops_logs: Iterable[str], bw_logs: Iterable[str] = ()) -> tuple[tuple[int, float, float], ...]:
    """One host's per-second figures from its jobs' ``log_unix_epoch=1`` logs (``log_avg_msec=1000``):
    ``(interval end in Unix ms, IOPS, bytes/s)`` per second, the host's jobs and directions added
    up (each job's rows put in the second their end falls in).  Bandwidth logs are in KiB/s."""
    by_second: dict[int, list[float]] = {}
    for kind, texts in (("iops", iops_logs), ("bw", bw_logs)):
        for text in texts:
            for t_ms, value, _direction in _parse_rows_python(text):
                slot = by_second.setdefault(round(t_ms / 1000), [0.0, 0.0, 0.0])
                slot[0] = max(slot[0], float(t_ms))
                if kind == "iops":
                    slot[1] += value
                else:
                    slot[2] += value * 1024.0
    return tuple((int(v[0]), v[1], v[2]) for _, v in sorted(by_second.items()))
