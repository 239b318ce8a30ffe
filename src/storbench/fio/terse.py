"""Pure reader of fio's terse output (``--output-format=terse``, versions 2 to 5) -> :class:`FioResult`.

One ``;``-separated line per job (fio's HOWTO, "TERSE OUTPUT")::

    3;fio-3.33;name;groupid;error;            (v2: 2;name;groupid;error)
    <read>;<write>[;<trim>][;<mixed>];        one block per direction, see below
    usr%;sys%;ctx;majf;minf;
    7 IO depth %s (1 .. >=64); 10 lat_us %s (2 .. 1000); 12 lat_ms %s (2 .. >=2000);
    [disk;ios_r;ios_w;merge_r;merge_w;ticks_r;ticks_w;in_queue;util%  (per disk, v3+)
      [;slaves;<the same 8 aggregated figures>]]...
    [;total_err;first_error  (continue_on_error)] [;description]

A direction block is 41 fields (47 in v5)::

    io_KiB;bw_KiB/s;iops;runtime_ms;
    slat min;max;mean;dev (usec); clat min;max;mean;dev (usec);
    20 percentile fields "1.000000%=46" (usec, unused ones "0%=0");
    lat min;max;mean;dev (usec);
    bw min;max;agg%;mean;dev (KiB/s);  v5: bw_samples; iops min;max;mean;dev;samples

Which blocks are there: read and write (v3), read, write and trim (v2, v4, v5); one
``mixed`` block *instead* of them with ``unified_rw_reporting=mixed``, one more ``mixed``
block after them with ``=both``.  The blocks are counted by reading them until the CPU
field (``12.5%``) comes.

Decisions (what terse cannot say, and how it is read):

* **Percentile columns**: fio fills them from the *total* latency when the job set
  ``lat_percentiles=1``, else from the completion latency; the line does not say which.
  They are attached to ``clat_ns`` (the HOWTO's name for them), so with
  ``lat_percentiles=1`` the ``clat_ns.percentiles`` silently hold total-latency
  percentiles.  Only where clat was not measured (``disable_clat``) and lat was, do they
  go to ``lat_ns``.  Values are whole microseconds, truncated.
* Latency ``min``/``max`` are truncated to whole microseconds; ``mean``/``stddev`` keep
  fio's 6 decimals.  All four zero = not measured (``None``): fio writes zeros there
  for gtod_reduce/disable_*lat.  ``samples`` is ``None`` (terse never says N).
* ``io_bytes`` = io KiB x 1024 and ``bw_bytes`` = KiB/s x 1024 (both truncated to whole
  KiB by fio); ``iops`` is fio's integer; ``total_ios``/``short_ios``/``drop_ios`` are
  not printed (``None``).  A direction with ``io == 0`` and ``runtime == 0`` is omitted.
* Bandwidth summaries are KiB/s (kB/s with ``kb_base=1000``, which the line does not
  record).  Before v5 terse gives no sample count, so ``bw_summary`` is ``None``
  (the model needs N); v5 fills ``bw_summary`` and ``iops_summary`` when samples > 0.
* ``latency_dist_pct``: ``"2us"`` .. ``"1000us"``, ``"2ms"`` .. ``">=2000ms"``; fio folds
  all nanosecond buckets into ``"2us"`` in terse.  Like the JSON reader, an all-zero map
  is empty.  ``iodepth_level_pct`` keys ``"1"`` .. ``">=64"``; terse has no submit/complete.
* Every job line repeats the disk list; :attr:`FioResult.disk_util` is taken from the
  first line that has one.  ``description`` goes to ``options["description"]``.
* Other lines (JSON of a ``terse,json`` run, warnings) are skipped; ``fio: ...`` lines are
  notes and ``fio: terminating on signal`` sets ``interrupted``.

Any ``str`` input either parses or raises :class:`FioParseError` with one short line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from decimal import Decimal

from ..errors import FioParseError
from ..model import DirectionStats, DiskUtil, FioResult, JobResult, LatencyStats, SampleSummary, pct_key

__all__ = ["looks_like_fio_terse", "parse_fio_terse"]

_EXCERPT = 60
_LINE = re.compile(r"^(?:[345];fio-|2;)")
_SNIFF = re.compile(r"^[ \t]*(?:[345];fio-[^;\n]*|2);[^\n]*$", re.M)
_MIN_FIELDS = 60  # every version's line has well over this many fields
_BLOCK = 41
_BLOCK_V5 = 47
_DEPTH_KEYS = ("1", "2", "4", "8", "16", "32", ">=64")
_LAT_US_KEYS = tuple(f"{b}us" for b in (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000))
_LAT_MS_KEYS = tuple(f"{b}ms" for b in (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000)) + (">=2000ms",)
#: direction names by version family and number of blocks printed
_NAMES = {
    (False, 1): ("mixed",),
    (False, 2): ("read", "write"),
    (False, 3): ("read", "write", "mixed"),
    (True, 1): ("mixed",),
    (True, 3): ("read", "write", "trim"),
    (True, 4): ("read", "write", "trim", "mixed"),
}


class _Bad(ValueError):
    """A terse line that does not have the documented shape."""


def looks_like_fio_terse(text: str) -> bool:
    """Cheap sniff: a line starting ``3;fio-`` (``4;``/``5;``, or ``2;``) with fio's many fields."""
    if not isinstance(text, str):
        return False
    return any(m.group(0).count(";") >= _MIN_FIELDS for m in _SNIFF.finditer(text))


def is_terse_line(line: str) -> bool:
    """Whether one line is a terse record (``3;fio-3.33;name;...`` with fio's many fields)."""
    m = _SNIFF.match(line.strip())
    return m is not None and m.group(0).count(";") >= _MIN_FIELDS


def parse_fio_terse(text: str) -> FioResult:
    """Parse fio's terse output (every job line, noise around it skipped) into a :class:`FioResult`.

    Raises :class:`FioParseError` (one line) when no line is a complete terse record.
    """
    if not isinstance(text, str):
        raise FioParseError(f"fio output must be text, not {type(text).__name__}")
    jobs: list[JobResult] = []
    disks: tuple[DiskUtil, ...] = ()
    notes: list[str] = []
    version: str | None = None
    problem: str | None = None
    interrupted = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if "fio: terminating on signal" in line:
            interrupted = True
        if line.startswith("fio:"):
            notes.append(line)
            continue
        if not _LINE.match(line):
            continue
        try:
            record = _record(line.split(";"))
        except (ValueError, ArithmeticError, LookupError, TypeError, AttributeError) as exc:
            problem = problem or f"line {number}: {_excerpt(str(exc))}"
            continue
        jobs.append(record.job)
        version = version or record.version
        disks = disks or record.disks
    if not jobs:
        if problem:
            raise FioParseError(f"malformed fio terse output, {problem}")
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        if not first:
            raise FioParseError("not fio terse output: the text is empty")
        raise FioParseError(f"not fio terse output: no terse job line (starts with {_excerpt(first)!r})")
    return FioResult(
        fio_version=version,
        jobs=tuple(jobs),
        format="terse",
        disk_util=disks,
        notes=tuple(notes),
        interrupted=interrupted,
    )


# --------------------------------------------------------------------------- one line


@dataclass(frozen=True)
class _Record:
    job: JobResult
    version: str | None
    disks: tuple[DiskUtil, ...]


def _record(fields: list[str]) -> _Record:
    if len(fields) < _MIN_FIELDS:
        raise _Bad(f"only {len(fields)} fields")
    terse_version = int(fields[0])
    if terse_version == 2:
        version, name, groupid, error = None, fields[1], fields[2], fields[3]
        pos = 4
    else:
        version, name, groupid, error = fields[1], fields[2], fields[3], fields[4]
        pos = 5
    size = _BLOCK_V5 if terse_version == 5 else _BLOCK
    blocks: list[list[str]] = []
    while pos < len(fields) and not fields[pos].endswith("%"):
        if len(blocks) == 4 or pos + size > len(fields):
            raise _Bad("direction blocks do not end in the CPU fields")
        blocks.append(fields[pos : pos + size])
        pos += size
    names = _NAMES.get((terse_version != 3, len(blocks)))
    if names is None:
        raise _Bad(f"{len(blocks)} direction blocks in a version {terse_version} line")
    directions = {}
    for direction, block in zip(names, blocks):
        stats = _direction(direction, block, terse_version == 5)
        if stats is not None:
            directions[direction] = stats

    cpu, depth, lat_us, lat_ms = (fields[pos : pos + 5], fields[pos + 5 : pos + 12],
                                  fields[pos + 12 : pos + 22], fields[pos + 22 : pos + 34])
    if len(lat_ms) != 12:
        raise _Bad("the line ends before its latency buckets")
    rest = fields[pos + 34 :]
    disks, rest = _disks(rest) if terse_version >= 3 else ((), rest)
    total_err = first_error = None
    if len(rest) >= 2 and _is_int(rest[0]) and _is_int(rest[1]):
        total_err, first_error = int(rest[0]), int(rest[1])
        rest = rest[2:]
    options = {"description": ";".join(rest)} if rest and any(rest) else {}

    buckets = {k: _pct(v) for k, v in zip(_LAT_US_KEYS + _LAT_MS_KEYS, lat_us + lat_ms)}
    job = JobResult(
        name=name,
        groupid=int(groupid),
        error=int(error),
        directions=directions,
        usr_cpu_pct=_pct(cpu[0]),
        sys_cpu_pct=_pct(cpu[1]),
        ctx=int(cpu[2]),
        majf=int(cpu[3]),
        minf=int(cpu[4]),
        iodepth_level_pct={k: _pct(v) for k, v in zip(_DEPTH_KEYS, depth)},
        latency_dist_pct=buckets if any(buckets.values()) else {},
        options=options,
        total_err=total_err,
        first_error=first_error,
    )
    return _Record(job=job, version=version, disks=disks)


def _direction(direction: str, f: list[str], v5: bool) -> DirectionStats | None:
    io_kib, bw_kib, iops, runtime = int(f[0]), int(f[1]), int(f[2]), int(f[3])
    if io_kib == 0 and runtime == 0:
        return None
    percentiles = {}
    for item in f[12:32]:
        pct, _, value = item.partition("%=")
        if float(pct) > 0:
            percentiles[pct_key(pct)] = _scaled(value, 1000)
    bw_summary = iops_summary = None
    if v5:
        bw_samples, iops_samples = int(f[41]), int(f[46])
        if bw_samples > 0:
            low, high, mean, dev = (_scaled(f[i], 1024) for i in (36, 37, 39, 40))
            bw_summary = SampleSummary(low, high, mean, dev, samples=bw_samples, agg_pct=_pct(f[38]))
        if iops_samples > 0:
            low, high, mean, dev = (float(x) for x in f[42:46])
            iops_summary = SampleSummary(low, high, mean, dev, samples=iops_samples)
    clat, lat = _latency(f[8:12], percentiles), _latency(f[32:36], {})
    if clat is None and lat is not None and any(percentiles.values()):
        lat = _latency(f[32:36], percentiles)  # clat not measured: they can only be lat's
    return DirectionStats(
        direction=direction,
        io_bytes=io_kib * 1024,
        bw_bytes=float(bw_kib * 1024),
        iops=float(iops),
        runtime_ms=runtime,
        slat_ns=_latency(f[4:8], {}),
        clat_ns=clat,
        lat_ns=lat,
        bw_summary=bw_summary,
        iops_summary=iops_summary,
    )


def _latency(f: list[str], percentiles: dict[str, float]) -> LatencyStats | None:
    """usec fields -> ns; all zero (or not finite) = not measured."""
    values = [_scaled(x, 1000) for x in f]
    if not any(values) or not all(math.isfinite(v) for v in values):
        return None
    lo, hi, mean, dev = values
    return LatencyStats(lo, hi, mean, dev, samples=None, percentiles=percentiles)


def _scaled(value: str, scale: int) -> float:
    """A printed decimal times ``scale``, without binary rounding noise (``3.807316`` -> ``3807.316``)."""
    return float(Decimal(value.strip()) * scale)


def _disks(rest: list[str]) -> tuple[tuple[DiskUtil, ...], list[str]]:
    """Leading ``name;8 figures`` groups (a ``slaves;8 figures`` group marks the one before as md/dm)."""
    disks: list[DiskUtil] = []
    while len(rest) >= 9 and not _is_int(rest[0]) and rest[8].endswith("%") and all(map(_is_int, rest[1:8])):
        if rest[0] == "slaves" and disks:
            disks[-1] = replace(disks[-1], aggregate=True)
        else:
            r = [int(x) for x in rest[1:8]]
            disks.append(DiskUtil(rest[0], r[0], r[1], r[2], r[3], r[4], r[5], r[6], _pct(rest[8])))
        rest = rest[9:]
    return tuple(disks), rest


def _pct(value: str) -> float:
    return float(value.rstrip("%"))


def _is_int(value: str) -> bool:
    return value.lstrip("-").isdigit() and value.isascii()


def _excerpt(value: str) -> str:
    value = " ".join(value.split())
    return value if len(value) <= _EXCERPT else value[: _EXCERPT - 1] + "…"
