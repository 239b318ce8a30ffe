"""Pure: a parsed PTS result file -> storbench results, one per system, workload and trial.

* Each **system** (``<System>/Identifier``) becomes a configuration: its results carry the
  identifier as their target, so ``storbench compare`` gives one column per system.
* Each **result** becomes a workload.  Its name is the test's title and option description
  (``BlogBench: Test: Read``).  Results that only differ by their ``Scale`` keep their own
  names (``... [Seconds]``).
* Each **trial** (a value of ``RawString``) becomes a repetition, so the mean, standard
  error and N are storbench's own statistics over the same values PTS averaged.  An
  entry without ``RawString`` (one trial, or PTS >= 7 with all trials equal) is one
  repetition of ``Value``.
* Figures: **pts/fio** results map onto fio's own figures: PTS reports each option set
  twice, as ``MB/s`` (fio's ``bw=`` figure in MiB/s, by the profile's results parser) and
  ``IOPS``; both become one workload whose direction (read or write) has ``bw_bytes`` (MB/s
  x 2^20) and ``iops``; the other figure is derived from the block size when only one was
  reported.  Workload names are those of storbench's ``pts-fio`` suite (``rand-read-4k``),
  so ``storbench run --suite pts-fio`` lines up with a published PTS result; options other
  than that suite's (another engine, buffered I/O) are added to the name.  **pts/dbench**'s
  ``Client Count: N`` in MB/s is workload ``dbench-N``, the ``pts-disk`` suite's (its figure
  ``MB/s``, as storbench's dbench load reports it).  Every other
  test's figure is a :class:`~storbench.model.Measure` under its unit, with PTS's HIB/LIB.
* What cannot be a figure is named, never dropped silently: PASS/FAIL results, line
  graphs and images, values that are not numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from storbench.jsontypes import JSONObject

from ..model import DirectionStats, FioResult, JobResult, Measure
from ..units import parse_size
from .resultfile import PtsEntry, PtsResult, PtsResultFile

__all__ = [
    "FIO_ENGINES",
    "FIO_TYPES",
    "PtsImport",
    "PtsRecord",
    "PtsWorkload",
    "map_result_file",
]

#: pts/fio's "Type" menu (test-definition.xml of pts/fio 1.x and 2.x) -> fio's rw=
FIO_TYPES: Mapping[str, str] = {
    "Random Read": "randread",
    "Random Write": "randwrite",
    "Sequential Read": "read",
    "Sequential Write": "write",
}
#: pts/fio's "Engine" menu -> fio's ioengine=
FIO_ENGINES: Mapping[str, str] = {
    "IO_uring": "io_uring",
    "POSIX AIO": "posixaio",
    "Sync": "sync",
    "Linux AIO": "libaio",
    "Windows AIO": "windowsaio",
}
_YES_NO = {"Yes": "1", "No": "0"}
#: PTS's MB/s for fio is the number fio prints as MiB/s (results-definition.xml strips "MiB/s")
PTS_FIO_MB = 1 << 20

_NOT_FIGURES = {
    "PASS_FAIL",
    "MULTI_PASS_FAIL",
    "IMAGE_COMPARISON",
    "LINE_GRAPH",
    "FILLED_LINE_GRAPH",
    "TEST_COUNT_PASS",
    "NO_RESULT",
}


@dataclass(frozen=True)
class PtsWorkload:
    """One storbench workload made of one PTS result (two, for pts/fio's MB/s and IOPS)."""

    name: str
    test: str
    title: str
    app_version: str
    arguments: str
    description: str
    scales: tuple[str, ...]
    proportion: str
    pts_values: Mapping[
        str, tuple[str, ...]
    ]  # system -> the Value(s) PTS printed, per scale
    options: tuple[tuple[str, str | None], ...] = ()  # fio options, for pts/fio

    def to_meta(self) -> JSONObject:
        return {
            "workload": self.name, "test": self.test, "title": self.title, "app_version": self.app_version,
            "arguments": self.arguments, "description": self.description, "scales": list(self.scales),
            "proportion": self.proportion, "values": {k: list(v) for k, v in self.pts_values.items()},
        }  # fmt: skip


@dataclass(frozen=True)
class PtsRecord:
    """One repetition: one trial of one system in one workload."""

    workload: str
    system: str
    repetition: int
    fio: FioResult
    options: tuple[tuple[str, str | None], ...] = ()
    raw_output: str = (
        ""  # what the file says of it: the result's header and the system's entry
    )


def _raw(results: list[PtsResult], system: str, repetition: int, trials: int) -> str:
    lines = []
    for r in results:
        lines.append(
            f"PTS result {r.test or '(no test id)'} {r.title!r} {r.app_version}, arguments {r.arguments!r}, "
            f"{r.description!r}, {r.scale} ({r.proportion.strip() or 'no proportion'}, {r.display_format})"
        )
        for e in r.entries:
            if e.system == system:
                lines.append(
                    f"  entry {system!r}: Value {e.value}, RawString {':'.join(e.raw) or '(empty)'}"
                )
    lines.append(f"  this result: run {repetition + 1} of {trials}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class PtsImport:
    records: tuple[PtsRecord, ...]
    workloads: tuple[PtsWorkload, ...]
    said: tuple[
        str, ...
    ] = ()  # what import tells the user: results not imported, values it reads differently
    systems_without_results: tuple[str, ...] = field(default_factory=tuple)


def _description_parts(description: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in description.split(" - "):
        name, sep, value = part.partition(": ")
        if sep:
            out[name.strip()] = value.strip()
    return out


def _fio_options(result: PtsResult) -> tuple[tuple[str, str | None], ...] | None:
    """The fio options a pts/fio result names, or None when it is not a readable pts/fio result."""
    if result.test_base != "pts/fio" and result.title != "Flexible IO Tester":
        return None
    parts = _description_parts(result.description)
    rw = FIO_TYPES.get(parts.get("Type", ""))
    bs_text = parts.get("Block Size", "")
    m = re.fullmatch(r"(\d+)\s*([KMG])B", bs_text)
    if rw is None or m is None:
        return None
    options: list[tuple[str, str | None]] = [("rw", rw)]
    if parts.get("Engine") in FIO_ENGINES:
        options.append(("ioengine", FIO_ENGINES[parts["Engine"]]))
    for key in ("Buffered", "Direct"):
        if parts.get(key) in _YES_NO:
            options.append((key.lower(), _YES_NO[parts[key]]))
    options.append(("bs", f"{m.group(1)}{m.group(2).lower()}"))
    return tuple(options)


def _fio_name(options: Mapping[str, str | None]) -> str:
    rw = options["rw"] or ""
    base = f"{'rand' if rw.startswith('rand') else 'seq'}-{'read' if rw.endswith('read') else 'write'}-{options['bs']}"
    extra = []
    if options.get("ioengine", "libaio") != "libaio":
        extra.append(str(options["ioengine"]))
    if options.get("direct", "1") != "1":
        extra.append("nodirect")
    if options.get("buffered", "0") != "0":
        extra.append("buffered")
    return "-".join([base, *extra])


#: pts/dbench's "Client Count" option (``Client Count: 12``; older profiles ``12 Clients``)
_DBENCH_CLIENTS = re.compile(r"^(?:Client Count: (\d+)|(\d+) Clients?)$")


def _dbench_name(result: PtsResult) -> str | None:
    """``dbench-N`` (the ``pts-disk`` suite's workload of that client count) for a pts/dbench
    result in MB/s, so that a storbench run of that suite lines up with the import; else None."""
    if (result.test_base != "pts/dbench" and result.title.lower() != "dbench") or result.scale != "MB/s":
        return None
    m = _DBENCH_CLIENTS.match(result.description.strip())
    return f"dbench-{m.group(1) or m.group(2)}" if m else None


def _trials(entry: PtsEntry) -> tuple[float, ...] | None:
    """The trials' values of an entry (RawString, else Value), or None when one is not a number."""
    texts = entry.raw or (entry.value,)
    try:
        return tuple(float(t) for t in texts)
    except ValueError:
        return None


def _decimals(text: str) -> int:
    return len(text.split(".", 1)[1]) if "." in text else 0


def _name_of(result: PtsResult) -> str:
    title = result.title or result.test or result.arguments.strip() or "PTS result"
    return f"{title}: {result.description}" if result.description else title


def map_result_file(pts: PtsResultFile) -> PtsImport:
    """Every numeric result of ``pts`` as repetitions; see the module docstring for the rules."""
    said: list[str] = []
    # group results: pts/fio's MB/s and IOPS of one option set are one workload
    groups: list[
        tuple[str, list[PtsResult], tuple[tuple[str, str | None], ...] | None]
    ] = []
    by_key: dict[tuple, int] = {}
    for result in pts.results:
        label = _name_of(result)
        if result.display_format in _NOT_FIGURES:
            value = result.entries[0].value if result.entries else ""
            shown = value if len(value) <= 20 else value[:20] + "..."
            said.append(
                f"{label} [{result.scale}]: a {result.display_format} result ({shown!r}), not a figure; not imported"
            )
            continue
        fio = _fio_options(result)
        if fio is not None and result.scale in ("MB/s", "IOPS"):
            key: tuple = (
                "fio",
                result.test_base,
                result.arguments.strip(),
                result.description,
                result.app_version,
            )
        else:
            fio = None
            key = (
                "pts",
                result.test_base,
                result.arguments.strip(),
                result.description,
                result.app_version,
                result.scale,
            )
        if key in by_key and (
            fio is not None
            and all(r.scale != result.scale for r in groups[by_key[key]][1])
        ):
            groups[by_key[key]][1].append(result)
            continue
        if (
            key in by_key
        ):  # PTS itself would collapse these (same comparison hash); storbench keeps both
            said.append(
                f"{label} [{result.scale}]: a second result with the same test, options and unit; kept as its own workload"
            )
        by_key[key] = len(groups)
        groups.append((label, [result], fio))

    names: dict[str, int] = {}
    workloads: list[PtsWorkload] = []
    records: list[PtsRecord] = []
    order = [s.identifier for s in pts.systems]
    for label, results, fio in groups:
        if fio is not None:
            name = _fio_name(dict(fio))
        elif (dbench := _dbench_name(results[0])) is not None:
            name = dbench
        else:
            name = label
            if name in names or any(
                label == other and results[0].scale != rs[0].scale
                for other, rs, _ in groups
            ):
                name = f"{label} [{results[0].scale}]"
        if name in names:
            names[name] += 1
            name = f"{name} #{names[name]}"
        else:
            names[name] = 1
        first = results[0]
        pts_values: dict[str, tuple[str, ...]] = {}
        per_system: dict[str, dict[str, list[float]]] = {}  # system -> scale -> trials
        for result in results:
            for entry in result.entries:
                trials = _trials(entry)
                if trials is None:
                    said.append(
                        f"{name} on {entry.system}: value {entry.value!r} (runs {':'.join(entry.raw)!r}) is not a number; not imported"
                    )
                    continue
                if entry.system not in order:
                    said.append(
                        f"{name}: an entry for {entry.system!r}, which is not one of the file's systems; imported under that name"
                    )
                    order.append(entry.system)
                scales = per_system.setdefault(entry.system, {})
                if result.scale in scales:
                    said.append(
                        f"{name} on {entry.system}: {len(result.entries)} entries for the same system; their values are taken as more repetitions"
                    )
                scales.setdefault(result.scale, []).extend(trials)
                pts_values[entry.system] = pts_values.get(entry.system, ()) + (
                    entry.value,
                )
                mean = sum(trials) / len(trials)
                tolerance = 0.5 * 10 ** -_decimals(entry.value) + 1e-9 * abs(mean)
                try:
                    printed = float(entry.value)
                except ValueError:
                    printed = mean
                if abs(printed - mean) > tolerance:
                    said.append(
                        f"{name} on {entry.system}: PTS gives {entry.value}, the mean of its {len(trials)} runs is {mean:.6g} "
                        "(the test reports its best or worst run); storbench keeps the runs"
                    )
        workloads.append(
            PtsWorkload(
                name=name, test=first.test, title=first.title, app_version=first.app_version,
                arguments=first.arguments.strip(), description=first.description,
                scales=tuple(r.scale for r in results), proportion=first.proportion.strip(),
                pts_values=pts_values, options=fio or (),
            )
        )  # fmt: skip
        for system in [s for s in order if s in per_system]:
            scales = per_system[system]
            if fio is not None:
                made = _fio_records(name, system, dict(fio), scales, said)
            else:
                made = [
                    PtsRecord(name, system, i, FioResult(fio_version=None, jobs=(), format="pts", measures=(
                        Measure(unit=first.scale or "value", value=v, higher_is_better=first.higher_is_better),)))
                    for i, v in enumerate(scales[first.scale])
                ]  # fmt: skip
            for rec in made:
                records.append(
                    replace(
                        rec, raw_output=_raw(results, system, rec.repetition, len(made))
                    )
                )
        if first.higher_is_better is None:
            said.append(
                f"{name}: PTS does not say whether more or less {first.scale or 'of it'} is better (Proportion {first.proportion.strip()!r}); stored and shown, not ranked by storbench compare"
            )
    with_results = {r.system for r in records}
    idle = tuple(s.identifier for s in pts.systems if s.identifier not in with_results)
    return PtsImport(
        records=tuple(records),
        workloads=tuple(workloads),
        said=tuple(said),
        systems_without_results=idle,
    )


def _fio_records(
    name: str,
    system: str,
    options: dict,
    scales: Mapping[str, list[float]],
    said: list[str],
) -> list[PtsRecord]:
    rw = options["rw"]
    direction = "read" if rw.endswith("read") else "write"
    bs = float(parse_size(options["bs"]))
    mbs, iops = scales.get("MB/s"), scales.get("IOPS")
    notes: tuple[str, ...] = ("imported from a Phoronix Test Suite pts/fio result",)
    if mbs is not None and iops is not None and len(mbs) != len(iops):
        said.append(
            f"{name} on {system}: {len(mbs)} MB/s runs but {len(iops)} IOPS runs; the first {min(len(mbs), len(iops))} of each are paired"
        )
        n = min(len(mbs), len(iops))
        mbs, iops = mbs[:n], iops[:n]
    if iops is None:
        assert mbs is not None
        iops = [v * PTS_FIO_MB / bs for v in mbs]
        notes += ("IOPS derived from PTS's MB/s and the block size",)
    if mbs is None:
        mbs = [v * bs / PTS_FIO_MB for v in iops]
        notes += ("bandwidth derived from PTS's IOPS and the block size",)
    out = []
    opts = tuple(options.items())
    for i, (mb, io) in enumerate(zip(mbs, iops)):
        d = DirectionStats(
            direction=direction,
            io_bytes=0,
            bw_bytes=mb * PTS_FIO_MB,
            iops=io,
            runtime_ms=0,
        )
        job = JobResult(name=name, directions={direction: d}, options=dict(options))
        out.append(
            PtsRecord(
                name,
                system,
                i,
                FioResult(fio_version=None, jobs=(job,), format="pts", notes=notes),
                opts,
            )
        )
    return out
