"""Pure reader of fio's JSON output (``--output-format=json`` and ``json+``) -> :class:`FioResult`.

It accepts the output in every form real fio writes it:

* text around the JSON (warnings, ``fio: pid=..., err=22/...`` lines, the leading newline
  of client/server runs): kept as :attr:`FioResult.notes`, one stripped non-empty line each;
* several documents back to back (``--status-interval``): the **last complete** document
  with ``jobs``/``client_stats`` is the result.  An incomplete document after it (fio
  killed while writing) is ignored and mentioned in a ``storbench:`` note;
* ``json,normal`` mixes: the JSON is the result; the classic text result block after it
  (from a ``<job>: (groupid=N, jobs=N): err=`` line to the next document) is dropped
  from the notes except its ``fio:`` lines; fio's header lines before it are notes;
* client/server (``client_stats``, ``hostname``/``port``, the ``"All clients"`` aggregate);
* fio 2.x documents (``clat``/``slat``/``lat`` in microseconds, ``io_bytes`` in KiB).

Decisions (values are kept as fio printed them; :mod:`storbench.checks` judges them):

* "Not measured" is ``None``, never zeros: a latency distribution with ``N == 0`` (or,
  in fio 2.x which prints no ``N``, all zeros); a bandwidth/IOPS summary with no samples;
  a ``latency_ns/us/ms`` bucket map whose values are all zero reads as an empty mapping.
* A direction that did no I/O (``io_bytes == 0`` and ``total_ios == 0``) is omitted.
* ``sync``: ``None`` when it holds nothing (``total_ios == 0`` and lat ``N == 0``, as
  with ``sync=1``/O_SYNC); otherwise :class:`SyncStats` (fdatasync counts 0 ios but has
  latency samples, so it is kept).
* Counters missing from a ``disk_util`` entry read 0; md/dm entries (with ``aggr_*``
  keys) are ``aggregate=True`` and use their own counters, falling back to ``aggr_*``.
* ``json+`` bins are kept (:attr:`LatencyStats.bins`): percentiles of several jobs or hosts are
  computed from their merged histogram.  ``ETA`` lines (``Jobs: 1 (f=1): ...``) are not notes.
* A job entry must be an object with a ``jobname``; ``"jobs": []`` gives ``jobs == ()``.

Any ``str`` input either parses or raises :class:`FioParseError` with one short line.
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING

from ..errors import FioParseError
from ..model import (
    DIRECTIONS,
    DirectionStats,
    DiskUtil,
    FioResult,
    JobResult,
    LatencyStats,
    SampleSummary,
    SyncStats,
    pct_key,
)

if TYPE_CHECKING:
    from storbench.jsontypes import JSONList, JSONObject, JSONValue

__all__ = ["looks_like_fio_json", "parse_fio_json"]

_EXCERPT = 60
_RESULT_KEYS = ("jobs", "client_stats")
#: where a document may start: "{" at the start of a line, or a "{" directly followed by a
#: key only fio's top-level object has (error text written without a newline before it).
_DOC_START = re.compile(r'(?:^|(?<=\r))\{|\{(?=\s*"(?:fio version|jobs|client_stats)")', re.M)
_SNIFF_START = re.compile(r"^\s*\{", re.M)
_ETA_LINE = re.compile(r"^Jobs: \d+ \(")
_CLASSIC_START = re.compile(r"^\S.*: \(groupid=\d+, jobs=\d+\): err=")
_LAT_BUCKETS = (("latency_ns", "ns"), ("latency_us", "us"), ("latency_ms", "ms"))
#: (fio 3 key, fio 2.x key in usec) for the three latency distributions
_LAT_KEYS = (("lat_ns", "lat"), ("clat_ns", "clat"), ("slat_ns", "slat"))


def looks_like_fio_json(text: str) -> bool:
    """Cheap sniff: a line starting with ``{`` and a fio top-level key somewhere."""
    if not isinstance(text, str) or not (_SNIFF_START.search(text) or _DOC_START.search(text)):
        return False
    return any(key in text for key in ('"fio version"', '"client_stats"', '"jobs"'))


def find_fio_json(text: str) -> tuple[list[tuple[int, int, JSONObject]], list[tuple[int, int, str]]]:
    """Where fio result documents are in ``text``: ``(start, end, document)`` of each complete
    one (an object with ``jobs`` or ``client_stats``; offsets in characters), and ``(start,
    end, problem)`` of candidates that did not decode (truncated, malformed)."""
    docs, failures = _scan(text)
    found = [(s, e, d) for s, e, d in docs if isinstance(d, dict) and any(k in d for k in _RESULT_KEYS)]
    return found, failures


def status_snapshots(earlier: JSONObject, later: JSONObject) -> bool:
    """Whether two fio JSON documents are snapshots of one run (``--status-interval``): the same
    jobs, each further on (``elapsed`` grew), rather than two runs."""
    def jobs(d: JSONObject) -> list[tuple[JSONValue, JSONValue]]:
        return [(j.get("jobname"), j.get("elapsed")) for j in d.get("jobs", []) if isinstance(j, dict)]

    a, b = jobs(earlier), jobs(later)
    return bool(a) and [n for n, _ in a] == [n for n, _ in b] and all(
        isinstance(x, int) and isinstance(y, int) and y > x for (_, x), (_, y) in zip(a, b)
    )


def parse_fio_json(text: str) -> FioResult:
    """Parse fio JSON output (with any noise around it) into a :class:`FioResult`.

    Raises :class:`FioParseError` when the text holds no complete fio JSON document.
    """
    if not isinstance(text, str):
        raise FioParseError(f"fio output must be text, not {type(text).__name__}")
    docs, failures = _scan(text)
    results = [(s, e, d) for s, e, d in docs if isinstance(d, dict) and any(k in d for k in _RESULT_KEYS)]
    if not results:
        _raise_no_result(text, docs, failures)
    _, end, doc = results[-1]
    skipped = [(s, e) for s, e, _ in docs] + [(s, e) for s, e, _ in failures]
    notes = _notes(text, skipped)
    if any(s > end for s, _, _ in failures):
        notes.append("storbench: ignored an incomplete JSON document after the last complete one")
    if _MAY_HOLD_SURROGATES.search(text):
        doc, notes = _no_lone_surrogates(doc), _no_lone_surrogates(notes)
    try:
        return _result(doc, tuple(notes))
    except FioParseError:
        raise
    except (TypeError, ValueError, OverflowError, AttributeError, KeyError, RecursionError) as exc:
        raise FioParseError(f"unexpected structure in fio JSON: {_excerpt(str(exc))}") from None


# --------------------------------------------------------------------------- finding documents


def _scan(text: str) -> tuple[list[tuple[int, int, JSONValue]], list[tuple[int, int, str]]]:
    """Decode every JSON object that starts where a fio document may start.

    Returns ``(start, end, object)`` for decoded documents and ``(start, end, problem)``
    for candidates that failed (``end`` = end of the line where decoding stopped).
    """
    decoder = json.JSONDecoder()
    docs: list[tuple[int, int, JSONValue]] = []
    failures: list[tuple[int, int, str]] = []
    pos = 0
    # searched on from the end of each decoded document, never inside one: finding every candidate
    # of a 1 MB client document (64 hosts) first took 45 ms of the 56 ms this scan took
    while (match := _DOC_START.search(text, pos)) is not None:
        start = match.start()
        pos = match.end()
        try:
            obj, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            stop = text.find("\n", exc.pos)
            problem = _describe_failure(text, start, exc)
            failures.append((start, len(text) if stop < 0 else stop, problem))
            continue
        except (ValueError, RecursionError) as exc:  # int digit limit, absurd nesting
            reason = "nested too deeply" if isinstance(exc, RecursionError) else _excerpt(str(exc))
            failures.append((start, len(text), f"malformed fio JSON on line {_line_of(text, start)}: {reason}"))
            continue
        docs.append((start, end, obj))
        pos = end
    return docs, failures


def _describe_failure(text: str, start: int, exc: json.JSONDecodeError) -> str:
    rest = text[exc.pos :].strip()  # truncated: nothing, or one fragment without closers
    if not rest or ("\n" not in rest and not any(c in rest for c in "}]")):
        return f"truncated fio JSON: the document starting on line {_line_of(text, start)} ends early"
    return f"malformed fio JSON on line {exc.lineno}, column {exc.colno}: {exc.msg}"


def _raise_no_result(text: str, docs: JSONList, failures: JSONList) -> None:
    if failures:
        raise FioParseError(failures[-1][2])
    if docs:
        raise FioParseError("fio JSON has neither 'jobs' nor 'client_stats'")
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    detail = f" (starts with {_excerpt(first)!r})" if first else " (the text is empty)"
    raise FioParseError(f"not fio JSON output: no JSON object found{detail}")


def _notes(text: str, skipped: list[tuple[int, int]]) -> list[str]:
    """Stripped non-empty lines outside the decoded/failed documents, minus ETA lines and
    the classic text result block of ``json,normal`` output (its ``fio:`` lines stay)."""
    pieces, pos = [], 0
    for start, end in sorted(skipped):
        if start > pos:
            pieces.append(text[pos:start])
        pos = max(pos, end)
    pieces.append(text[pos:])
    notes: list[str] = []
    for piece in pieces:
        in_classic = False
        for raw in piece.splitlines():
            line = raw.strip()
            if not line or _ETA_LINE.match(line):
                continue
            in_classic = in_classic or bool(_CLASSIC_START.match(line))
            if not in_classic or line.startswith("fio:"):
                notes.append(line)
    return notes


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _excerpt(value: str) -> str:
    value = " ".join(value.split())
    return value if len(value) <= _EXCERPT else value[: _EXCERPT - 1] + "…"


# --------------------------------------------------------------------------- scalar coercion


def _num(value: JSONValue) -> float | None:
    """A finite number from a JSON number or numeric string, else ``None``."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)):
            result = float(value)
        elif isinstance(value, str):
            result = float(value.strip())
        else:
            return None
    except (ValueError, OverflowError):
        return None
    return result if math.isfinite(result) else None


def _int(value: JSONValue) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    number = _num(value)
    return None if number is None else round(number)


def _str(value: JSONValue) -> str | None:
    return value if isinstance(value, str) else None


def _dict(value: JSONValue) -> JSONObject:
    return value if isinstance(value, dict) else {}


def _list(value: JSONValue) -> JSONList:
    return value if isinstance(value, list) else []


def _pct_map(value: JSONValue) -> dict[str, float]:
    """fio's ``{"1": 100.0, ">=64": 0.0}`` maps, keys as given, non-numeric values dropped."""
    return {str(k): v for k, v in ((k, _num(v)) for k, v in _dict(value).items()) if v is not None}


# --------------------------------------------------------------------------- records


_SURROGATE = re.compile("[\ud800-\udfff]")
#: where a decoded document can hold a lone surrogate: the text has one, or a JSON escape of one
_MAY_HOLD_SURROGATES = re.compile(r"[\ud800-\udfff]|\\u[dD][89a-fA-F]")


def _no_lone_surrogates(value: JSONValue) -> JSONValue:
    """The document with U+FFFD for each lone surrogate (a ``"\\ud800"`` escape no fio writes):
    such text cannot be encoded as UTF-8, so it could be neither stored nor printed."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_no_lone_surrogates(k): _no_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_lone_surrogates(v) for v in value]
    return value


def _result(doc: JSONObject, notes: tuple[str, ...]) -> FioResult:
    client_mode = "client_stats" in doc
    entries = doc["client_stats"] if client_mode else doc.get("jobs")
    key = "client_stats" if client_mode else "jobs"
    if not isinstance(entries, list):
        raise FioParseError(f"fio JSON '{key}' is not a list")
    global_options = _options(doc.get("global options"))
    jobs = tuple(_job(entry, i, global_options, client_mode) for i, entry in enumerate(entries, 1))
    return FioResult(
        fio_version=_str(doc.get("fio version")) or _str(doc.get("fio_version")) or _str(doc.get("version")),
        jobs=jobs,
        format="json+" if _has_bins(entries) else "json",
        timestamp_s=_int(doc.get("timestamp")),
        time_text=_str(doc.get("time")),
        global_options=global_options,
        disk_util=tuple(d for d in map(_disk, _list(doc.get("disk_util"))) if d is not None),
        notes=notes,
        interrupted=any("terminating on signal" in note for note in notes),
    )


def _options(value: JSONValue) -> dict[str, str | None]:
    """fio's option object (or, defensively, a list of objects / ``"key=value"`` strings)."""
    items: list[tuple[JSONValue, JSONValue]] = []
    for part in value if isinstance(value, list) else [value]:
        if isinstance(part, dict):
            items.extend(part.items())
        elif isinstance(part, str) and part.strip():
            k, sep, v = part.partition("=")
            items.append((k.strip(), v.strip() if sep else None))
    options: dict[str, str | None] = {}
    for k, v in items:
        if v is None or isinstance(v, str):
            options[str(k)] = v
        elif isinstance(v, (int, float)):
            options[str(k)] = str(v)
    return options


def _job(entry: JSONValue, index: int, global_options: JSONObject, client_mode: bool) -> JobResult:
    if not isinstance(entry, dict) or not isinstance(entry.get("jobname"), str):
        raise FioParseError(f"fio JSON job entry {index} is not a job (an object with a 'jobname')")
    name = entry["jobname"]
    found = ((d, _direction(d, entry.get(d), name)) for d in DIRECTIONS)
    directions = {d: stats for d, stats in found if stats is not None}
    steadystate = entry.get("steadystate")
    return JobResult(
        name=name,
        groupid=_int(entry.get("groupid")) or 0,
        error=_int(entry.get("error")) or 0,
        directions=directions,
        sync=_sync(entry.get("sync")),
        usr_cpu_pct=_num(entry.get("usr_cpu")),
        sys_cpu_pct=_num(entry.get("sys_cpu")),
        ctx=_int(entry.get("ctx")),
        majf=_int(entry.get("majf")),
        minf=_int(entry.get("minf")),
        job_runtime_ms=_int(entry.get("job_runtime")),
        elapsed_s=_int(entry.get("elapsed")),
        iodepth_level_pct=_pct_map(entry.get("iodepth_level")),
        iodepth_submit_pct=_pct_map(entry.get("iodepth_submit")),
        iodepth_complete_pct=_pct_map(entry.get("iodepth_complete")),
        latency_dist_pct=_latency_buckets(entry),
        options={**global_options, **_options(entry.get("job options"))},
        hostname=_str(entry.get("hostname")),
        port=_int(entry.get("port")),
        is_aggregate=client_mode and name == "All clients",
        steadystate=dict(steadystate) if isinstance(steadystate, dict) else None,
        total_err=_int(entry.get("total_err")),
        first_error=_int(entry.get("first_error")),
    )


#: a direction's figures: present, each must be a finite number (NaN, Infinity, "NaN" are refused, never read as 0)
_FIGURES = ("io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime", "total_ios")
#: ... of which these count (bytes, I/Os, milliseconds): whole numbers, never negative
_COUNTS = frozenset({"io_bytes", "io_kbytes", "runtime", "total_ios"})


def _direction(direction: str, value: JSONValue, job_name: str = "") -> DirectionStats | None:
    """One direction; ``None`` when it did no I/O or carries no ``io_bytes``.  A figure that is
    present but not a finite number is a :class:`FioParseError` naming it."""
    if not isinstance(value, dict):
        return None
    for key in _FIGURES:
        raw = value.get(key)
        if key not in value or raw is None:
            continue
        number = _num(raw)
        shown = raw if not isinstance(raw, str) else _excerpt(raw)
        if number is None:
            raise FioParseError(f"job {job_name!r} {direction}: {key} is {shown!r}, not a finite number")
        if key in _COUNTS and (number < 0 or number != int(number)):
            raise FioParseError(f"job {job_name!r} {direction}: {key} is {shown!r}, not a whole number of at least 0")
    legacy = "io_kbytes" not in value and "bw_bytes" not in value  # fio 2.x: io_bytes in KiB
    io_bytes, io_kbytes = _int(value.get("io_bytes")), _int(value.get("io_kbytes"))
    if io_bytes is None and io_kbytes is not None:
        io_bytes = io_kbytes * 1024
    elif io_bytes is not None and legacy:
        io_bytes *= 1024
    total_ios = _int(value.get("total_ios"))
    if io_bytes is None or (io_bytes == 0 and not total_ios):
        return None
    bw_bytes = _num(value.get("bw_bytes"))
    if bw_bytes is None:
        bw_bytes = (_num(value.get("bw")) or 0.0) * 1024
    lat = {k: _latency(value[k], 1) if k in value else _latency(value.get(old), 1000) for k, old in _LAT_KEYS}
    return DirectionStats(
        direction=direction,
        io_bytes=io_bytes,
        bw_bytes=bw_bytes,
        iops=_num(value.get("iops")) or 0.0,
        runtime_ms=_int(value.get("runtime")) or 0,
        total_ios=total_ios,
        short_ios=_int(value.get("short_ios")),
        drop_ios=_int(value.get("drop_ios")),
        lat_ns=lat["lat_ns"],
        clat_ns=lat["clat_ns"],
        slat_ns=lat["slat_ns"],
        bw_summary=_summary(value, "bw_", "bw_dev", 1024.0, _num(value.get("bw_agg"))),
        iops_summary=_summary(value, "iops_", "iops_stddev", 1.0, None),
    )


def _latency(value: JSONValue, scale: float) -> LatencyStats | None:
    """A latency distribution in ns; ``None`` when fio did not measure it.

    ``scale`` converts fio's unit to ns (1 for ``*_ns``, 1000 for fio 2.x usec).
    """
    if not isinstance(value, dict):
        return None
    samples = _int(value.get("N"))
    numbers = [_num(value.get(k)) for k in ("min", "max", "mean", "stddev")]
    if any(n is None for n in numbers):
        return None
    if samples is not None and samples <= 0:
        return None
    if samples is None and not any(numbers):  # fio 2.x prints no N: all zeros = not measured
        return None
    lo, hi, mean, dev = (n * scale for n in numbers)  # type: ignore[operator]
    percentiles = {}
    for key, raw in _dict(value.get("percentile")).items():
        number = _num(raw)
        try:
            pkey = pct_key(key)
        except (ValueError, OverflowError, TypeError):
            continue
        if number is not None and pkey not in ("inf", "-inf", "nan"):
            percentiles[pkey] = number * scale
    return LatencyStats(lo, hi, mean, dev, samples=samples, percentiles=percentiles, bins=_bins(value.get("bins"), scale))


def _bins(value: JSONValue, scale: float) -> tuple[tuple[int, int], ...]:
    """json+'s ``"bins": {"<latency>": count}`` as ascending (ns, count) pairs; empty where absent,
    or where a key or count is not a whole number (fio writes only those)."""
    if not isinstance(value, dict) or scale != 1:  # fio 2.x's json+ (usec) bins are not read
        return ()
    out = []
    for key, count in value.items():
        try:
            ns, n = int(key), int(count)
        except (TypeError, ValueError):
            return ()
        if n < 0 or ns < 0:
            return ()
        if n:
            out.append((ns, n))
    return tuple(sorted(out))


def _summary(value: JSONObject, prefix: str, dev_key: str, scale: float, agg: float | None) -> SampleSummary | None:
    """fio's per-interval sample summary (``bw_*`` in KiB/s -> bytes/s, ``iops_*``)."""
    samples = _int(value.get(prefix + "samples"))
    numbers = [_num(value.get(prefix + k)) for k in ("min", "max", "mean")] + [_num(value.get(dev_key))]
    if not samples or samples <= 0 or any(n is None for n in numbers):
        return None
    lo, hi, mean, dev = (n * scale for n in numbers)  # type: ignore[operator]
    return SampleSummary(lo, hi, mean, dev, samples=samples, agg_pct=agg)


def _sync(value: JSONValue) -> SyncStats | None:
    if not isinstance(value, dict):
        return None
    total = _int(value.get("total_ios"))
    lat = _latency(value["lat_ns"], 1) if "lat_ns" in value else _latency(value.get("lat"), 1000)
    if not total and lat is None:
        return None
    return SyncStats(total_ios=total or 0, lat_ns=lat)


def _latency_buckets(entry: JSONObject) -> dict[str, float]:
    """``latency_ns/us/ms`` -> ``{"2ns": .., "750us": .., ">=2000ms": ..}``; empty if all zero."""
    buckets = {
        f"{bound}{unit}": pct
        for key, unit in _LAT_BUCKETS
        for bound, pct in _pct_map(entry.get(key)).items()
    }
    return buckets if any(buckets.values()) else {}


def _has_bins(entries: JSONList) -> bool:
    for entry in entries:
        for direction in DIRECTIONS:
            value = _dict(_dict(entry).get(direction))
            if any(isinstance(_dict(value.get(k)).get("bins"), dict) for k, _ in _LAT_KEYS):
                return True
    return False


def _disk(value: JSONValue) -> DiskUtil | None:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None

    def counter(key: str, aggr_key: str) -> int:
        own = _int(value.get(key))
        return own if own is not None else (_int(value.get(aggr_key)) or 0)

    util = _num(value.get("util"))
    return DiskUtil(
        name=value["name"],
        read_ios=counter("read_ios", "aggr_read_ios"),
        write_ios=counter("write_ios", "aggr_write_ios"),
        read_merges=counter("read_merges", "aggr_read_merges"),
        write_merges=counter("write_merges", "aggr_write_merge"),  # sic: fio's key
        read_ticks_ms=counter("read_ticks", "aggr_read_ticks"),
        write_ticks_ms=counter("write_ticks", "aggr_write_ticks"),
        in_queue_ms=counter("in_queue", "aggr_in_queue"),
        util_pct=util if util is not None else (_num(value.get("aggr_util")) or 0.0),
        aggregate=any(str(k).startswith("aggr_") for k in value),
        hostname=_str(value.get("hostname")),
    )
