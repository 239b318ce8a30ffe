"""Pure: versioned JSON forms of the records, and the public machine-readable output.

Two different forms live here:

* The **stored form** (:func:`fio_result_to_dict` / :func:`fio_result_from_dict`) is
  the complete, lossless image of a :class:`~storbench.model.FioResult`: every field of
  every nested record, under the dataclass field names, with ``None`` kept as ``null``
  and mapping key order kept.  It carries ``"format_version"``; a reader refuses a
  version newer than :data:`FORMAT_VERSION`.  Fields absent from a stored dict take
  the dataclass default, so adding an OPTIONAL field to a record does not need a new
  format version; renaming, removing or changing the meaning of one does.

* The **public form** (:func:`result_record_to_public`, :func:`run_info_to_public`) is
  the contract scripts rely on (``storbench show --json`` and friends).  Its key names
  are fixed; new keys may be added after the contract keys, never renamed.

Functions here take and return plain data; no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from storbench.errors import StoreError
from storbench.jsontypes import JSONMapping, JSONObject, JSONValue
from storbench.model import (
    DIRECTIONS,
    DirectionStats,
    DiskUtil,
    FioResult,
    JobResult,
    LatencyStats,
    Measure,
    RunInfo,
    SampleSummary,
    SyncStats,
    versions,
)
from storbench.record import ResultRecord

#: Version of the stored form.  Bump when a stored key is renamed, removed or changes meaning.
FORMAT_VERSION = versions.RESULT  # the history: storbench.model.versions

_Codec = tuple[Callable[[Any], JSONValue], Callable[[JSONValue], Any]]  # (encode, decode): a field's value <-> JSON


# --------------------------------------------------------------------------- generic helpers


def _optional(codec: _Codec) -> _Codec:
    enc, dec = codec
    return (lambda v: None if v is None else enc(v), lambda v: None if v is None else dec(v))


_MAPPING: _Codec = (dict, dict)  # dict() keeps insertion order both ways
_STR_TUPLE: _Codec = (list, tuple)


def _record_codec(cls: type, codecs: Mapping[str, _Codec]) -> _Codec:
    """Encoder/decoder for dataclass ``cls``; fields not named in ``codecs`` are stored as is."""

    fields = dataclasses.fields(cls)  # once per class: encoding thousands of results asked for them each time
    plan = [(f.name, codecs[f.name][0] if f.name in codecs else None) for f in fields]
    required = {f.name for f in fields if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    decoders = [(f.name, codecs[f.name][1] if f.name in codecs else None) for f in fields]

    def encode(obj: Any) -> JSONObject:
        out: JSONObject = {}
        for name, enc in plan:
            value = getattr(obj, name)
            out[name] = enc(value) if enc is not None else value
        return out

    def decode(data: JSONValue) -> Any:
        if not isinstance(data, Mapping):
            raise StoreError(f"stored result is malformed: expected an object for {cls.__name__}, got {type(data).__name__}")
        kwargs: JSONObject = {}
        for name, dec in decoders:
            if name in data:
                value = data[name]
                kwargs[name] = dec(value) if dec is not None else value
            elif name in required:
                raise StoreError(f"stored result is malformed: {cls.__name__} lacks {name!r}")
        return cls(**kwargs)

    return encode, decode


def _tuple_of(codec: _Codec) -> _Codec:
    enc, dec = codec
    return (lambda items: [enc(i) for i in items], lambda items: tuple(dec(i) for i in items))


def _mapping_of(codec: _Codec) -> _Codec:
    enc, dec = codec
    return (
        lambda m: {k: enc(v) for k, v in m.items()},
        lambda m: {k: dec(v) for k, v in m.items()},
    )


# --------------------------------------------------------------------------- stored form

_LATENCY_PLAIN = _record_codec(LatencyStats, {"percentiles": _MAPPING,
                                             "bins": (lambda b: [list(p) for p in b], lambda b: tuple((int(v), int(c)) for v, c in b))})  # fmt: skip


def _latency_encode(obj: LatencyStats) -> JSONObject:
    out = _LATENCY_PLAIN[0](obj)
    if not out["bins"]:  # only json+ results carry a histogram: the stored form of the others is unchanged
        del out["bins"]
    return out


_LATENCY: _Codec = (_latency_encode, _LATENCY_PLAIN[1])
_SUMMARY = _record_codec(SampleSummary, {})
_DIRECTION = _record_codec(
    DirectionStats,
    {
        "lat_ns": _optional(_LATENCY),
        "clat_ns": _optional(_LATENCY),
        "slat_ns": _optional(_LATENCY),
        "bw_summary": _optional(_SUMMARY),
        "iops_summary": _optional(_SUMMARY),
    },
)
_SYNC = _record_codec(SyncStats, {"lat_ns": _optional(_LATENCY)})
_DISK = _record_codec(DiskUtil, {})
_JOB = _record_codec(
    JobResult,
    {
        "directions": _mapping_of(_DIRECTION),
        "sync": _optional(_SYNC),
        "iodepth_level_pct": _MAPPING,
        "iodepth_submit_pct": _MAPPING,
        "iodepth_complete_pct": _MAPPING,
        "latency_dist_pct": _MAPPING,
        "options": _MAPPING,
        # free-form fio JSON; stored as is (it must be JSON-compatible)
        "steadystate": _optional((dict, dict)),
    },
)
_FIO = _record_codec(
    FioResult,
    {
        "jobs": _tuple_of(_JOB),
        "global_options": _MAPPING,
        "disk_util": _tuple_of(_DISK),
        "notes": _STR_TUPLE,
        "measures": _tuple_of(_record_codec(Measure, {})),
    },
)


def fio_result_to_dict(result: FioResult) -> JSONObject:
    """The stored, JSON-compatible form of ``result``; :func:`fio_result_from_dict` inverts it exactly."""
    # a result with measures is version 2, so that a storbench that cannot show them refuses it
    # instead of showing a result without figures; every other result stays version 1
    version = FORMAT_VERSION if result.measures else 1
    return {"format_version": version, **_FIO[0](result)}


def fio_result_from_dict(data: JSONMapping) -> FioResult:
    """Rebuild a :class:`FioResult` from :func:`fio_result_to_dict` output (possibly via JSON).

    Raises :class:`StoreError` for a newer format version or a malformed dict.
    """
    if not isinstance(data, Mapping):
        raise StoreError(f"stored result is malformed: expected an object, got {type(data).__name__}")
    version = data.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise StoreError(f"stored result is malformed: format_version is {version!r}, expected an integer")
    if version > FORMAT_VERSION:
        raise StoreError(
            f"stored result has format version {version}, this storbench reads up to {FORMAT_VERSION}; upgrade storbench"
        )
    try:
        return _FIO[1](data)
    except StoreError:
        raise
    except (TypeError, ValueError, AttributeError) as exc:
        raise StoreError(f"stored result is malformed: {exc}") from exc


# --------------------------------------------------------------------------- public form


def _public_latency(lat: LatencyStats | None) -> JSONObject | None:
    if lat is None:
        return None
    return {
        "mean": lat.mean_ns,
        "stddev": lat.stddev_ns,
        "min": lat.min_ns,
        "max": lat.max_ns,
        "percentiles": dict(lat.percentiles),
    }


def _public_direction(d: DirectionStats) -> JSONObject:
    return {
        "iops": float(d.iops),
        "bw_bytes": float(d.bw_bytes),
        "io_bytes": int(d.io_bytes),
        "runtime_ms": int(d.runtime_ms),
        "lat_ns": _public_latency(d.lat_ns),
        "clat_ns": _public_latency(d.clat_ns),
        "slat_ns": _public_latency(d.slat_ns),
        # extras, after the contract keys
        "total_ios": d.total_ios,
    }


def _public_job(job: JobResult) -> JSONObject:
    out: JSONObject = {"name": job.name}
    names = [d for d in DIRECTIONS if d in job.directions]
    names += [d for d in job.directions if d not in DIRECTIONS]
    for name in names:
        out[name] = _public_direction(job.directions[name])
    # extras, after the contract keys
    if job.hostname is not None:
        out["hostname"] = job.hostname
    if job.is_aggregate:
        out["aggregate"] = True
    out["error"] = job.error
    out["cpu"] = {"usr_pct": job.usr_cpu_pct, "sys_pct": job.sys_cpu_pct, "ctx": job.ctx}
    if job.sync is not None:
        out["sync"] = {"total_ios": job.sync.total_ios, "lat_ns": _public_latency(job.sync.lat_ns)}
    return out


def result_record_to_public(rec: ResultRecord, stats: Mapping[str, JSONMapping] | None = None) -> JSONObject:
    """The public machine-readable form of one stored result (the output contract).

    Contract keys, in this order: ``run``, ``label``, ``target``, ``workload``, ``source``,
    ``fio_version``, ``options``, ``jobs``.  Each job has ``name`` and one object per
    direction that did I/O (``read``, ``write``, ``trim``, ``mixed``; a direction that
    did none is absent).  Each direction has ``iops`` and ``bw_bytes`` (floats),
    ``io_bytes`` and ``runtime_ms`` (ints) and ``lat_ns`` / ``clat_ns`` / ``slat_ns``:
    ``{"mean", "stddev", "min", "max", "percentiles"}`` in nanoseconds, or ``null``
    where fio did not measure that latency.

    Extra keys follow the contract keys: ``result``, ``repetition``, ``created_at``,
    ``host``; per job ``hostname`` and ``aggregate`` (only when set), ``error``,
    ``cpu`` and ``sync`` (only when fio reported it); per direction ``total_ios``;
    ``findings`` (``[{"check", "severity", "message", "fix"}]``) and, when given,
    ``stats``: per direction and metric the statistics over the repetitions of this
    workload in this run (``{"read": {"iops": {"n", "mean", "stderr", "ci95", "cv", ...}}}``);
    ``measures`` (only for results of another benchmark, such as a Phoronix Test Suite
    test or an application load): ``[{"unit", "value", "higher_is_better"}]``, their statistics under
    ``stats["result"][unit]``; with them ``tool`` (``"pgbench"``, ``"dbench"``, ``"pts"``) and, for a
    load, ``settings``: how it ran (pgbench: the server's fsync, synchronous_commit, ...,
    ``database_size`` in bytes; every load: ``client_cpu_s``, ``wall_s``);
    ``backend`` (only when sampled): what the storage back-end reported during the run
    (``{"format_version", "zfs": {"pool", "vdevs", "arc_hit_ratio", "before", "after", ...}}``);
    a run on many hosts: ``timing`` on each host's result (``runtime_ms``, ``behind_first_ms``,
    ...) and ``window`` on the aggregate (the seconds every host ran: ``start_ms``, ``end_ms``,
    ``seconds``, ``iops``, ``bw_bytes``, ``hosts``: each one's [name, start_ms, end_ms]), when measured.
    """
    out: JSONObject = {
        "run": rec.run_id,
        "label": rec.label,
        "target": rec.target,
        "workload": rec.workload,
        "source": rec.source,
        "fio_version": rec.fio.fio_version,
        "options": dict(rec.options),
        "jobs": [_public_job(job) for job in rec.fio.jobs],
        # extras
        "result": rec.result_id,
        "repetition": rec.repetition,
        "created_at": rec.created_at,
        "host": rec.host,
        "findings": [
            {"check": f.check, "severity": f.severity, "message": f.message, "fix": f.fix} for f in rec.findings
        ],
    }
    if rec.fio.measures:
        out["measures"] = [
            {"unit": m.unit, "value": m.value, "higher_is_better": m.higher_is_better} for m in rec.fio.measures
        ]
    if not rec.fio.jobs:  # another benchmark's result: which, and how it ran (a load's settings)
        out["tool"] = rec.fio.format
        if rec.fio.global_options:
            out["settings"] = dict(rec.fio.global_options)
    if stats is not None:
        out["stats"] = {d: dict(m) for d, m in stats.items()}
    if rec.backend is not None:
        from .backend import backend_to_dict

        out["backend"] = backend_to_dict(rec.backend)
    if rec.host is not None and isinstance(rec.series, Mapping):
        for key in ("timing", "window"):
            if rec.series.get(key):
                out[key] = rec.series[key]
    return out


def run_info_to_public(info: RunInfo) -> JSONObject:
    """The public machine-readable form of one run (``run`` is the id a user passes back)."""
    return {
        "run": info.run_id,
        "label": info.label,
        "kind": info.kind,
        "status": info.status,
        "created_at": info.created_at,
        "finished_at": info.finished_at,
        "suite": info.suite,
        "reason": info.reason,
        "storbench_version": info.storbench_version,
        "result_count": info.result_count,
    }
