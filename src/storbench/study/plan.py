"""Pure: what a study is -- its setups, workloads and scratch -- how it is stored in each of its
runs' meta and read back (``--resume``), what became of it, and its labels.

May import: the records (:mod:`storbench.model`), units, errors, the curve model
and the setups (:mod:`storbench.study.setups`).
Reads the store only through the two functions at the end (``list_runs``/``run_meta``)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from storbench.jsontypes import JSONMapping

from ..curve.model import CurvePlan
from ..errors import UsageError
from ..model import Overrides, Repeat, RunInfo, Workload, versions, workload_from_meta, workload_to_meta
from ..units import fio_size, parse_size
from .setup_fs import devices_needed
from .setups import Setup, setup_from_table, setup_to_table

if TYPE_CHECKING:
    from storbench.jsontypes import JSONObject

#: Version of the study plan stored in each run's meta (``meta["study"]``).
STUDY_FORMAT_VERSION = versions.STUDY  # the history: storbench.model.versions
#: mkfs.xfs refuses filesystems smaller than 300 MB.
XFS_MIN_BYTES = 300 * 1000 * 1000
MIN_LOOP_BYTES = 64 * 1024 * 1024


class StudyStore(Protocol):
    """The two store calls a study's plan is read back with."""

    def list_runs(self, *, label_prefix: str | None = ...) -> Sequence[RunInfo]: ...

    def run_meta(self, run_id: int) -> JSONObject: ...


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Scratch:
    """Where setups are built: devices the user gave, loop files storbench makes, or none
    (every setup is an image on a given directory).

    ``device``: ``paths`` are the devices as given (``--device`` or ``--devices``; ``path`` is
    the first).  ``loop``: one file at ``path`` (``--loop-file``), or ``count`` new files in a
    directory storbench makes under ``path`` (``--loop-files N``), each ``size`` large.
    """

    kind: str  # "device" | "loop" | "none"
    path: str | None = None
    size: str | None = None  # a loop file's size (fio form)
    destroy: tuple[str, ...] = ()  # --destroy-data values (never stored)
    paths: tuple[str, ...] = ()  # kind "device": every device, in order
    count: int = 0  # kind "loop" with --loop-files: how many files

    @property
    def device_count(self) -> int:
        if self.kind == "device":
            return len(self.paths) or (1 if self.path else 0)
        if self.kind == "loop":
            return self.count or 1
        return 0

    def meta(self) -> dict:
        return {"kind": self.kind, "path": self.path, "size": self.size, "paths": list(self.paths), "count": self.count}


@dataclass(frozen=True)
class Study:
    """What a study runs: its label, setups and workloads, and how."""

    label: str
    setups: tuple[Setup, ...]
    workloads: tuple[Workload, ...]
    overrides: Overrides = field(default_factory=Overrides)
    repeat: Repeat = field(default_factory=Repeat)
    suite: str | None = None
    keep_files: bool = False
    prefill: bool = False  # one sequential write pass over each setup's test area before its workloads
    curve: CurvePlan | None = None  # matrix --curve: the one workload's load raised step by step on every setup

    def meta(self, scratch: Scratch) -> dict:
        return {
            "format_version": STUDY_FORMAT_VERSION,
            "label": self.label,
            "setups": [{"name": s.name, **setup_to_table(s)} for s in self.setups],
            "workloads": [workload_to_meta(w) for w in self.workloads],
            "overrides": {"size": self.overrides.size, "runtime": self.overrides.runtime,
                          "default_size": self.overrides.default_size, "extra": [list(e) for e in self.overrides.extra]},
            "repeat": dataclasses.asdict(self.repeat),
            "suite": self.suite,
            "keep_files": self.keep_files,
            "prefill": self.prefill,
            "curve": self.curve.meta() if self.curve is not None else None,
            "scratch": scratch.meta(),
        }

    @classmethod
    def from_meta(cls, meta: JSONMapping) -> Study:
        """The study stored by :meth:`meta`; :class:`UsageError` when it cannot be read back."""
        try:
            setups = []
            for table in meta["setups"]:
                table = dict(table)
                name = table.pop("name")
                setups.append(setup_from_table(name, table, label=f"stored study {meta['label']!r}"))
            workloads = tuple(workload_from_meta(w) for w in meta["workloads"])
            ov = meta["overrides"]
            overrides = Overrides(
                size=ov["size"], runtime=ov["runtime"], default_size=ov.get("default_size", "1g"),
                extra=tuple((k, v) for k, v in ov.get("extra", [])),
            )  # fmt: skip
            return cls(
                label=meta["label"], setups=tuple(setups), workloads=workloads, overrides=overrides,
                repeat=Repeat(**meta["repeat"]), suite=meta.get("suite"), keep_files=bool(meta.get("keep_files")),
                prefill=bool(meta.get("prefill", False)),
                curve=CurvePlan.from_meta(meta["curve"]) if meta.get("curve") else None,
            )  # fmt: skip
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"this study cannot be resumed: its stored plan is incomplete ({exc})") from None


@dataclass(frozen=True)
class SetupOutcome:
    """What became of one setup: its run and status (``complete``, ``incomplete``, ``failed``)."""

    setup: str
    run_id: int | None
    status: str
    reason: str | None = None
    skipped: bool = False  # resumed study: the run was complete already
    stored: int = 0  # results stored by this invocation


@dataclass(frozen=True)
class StudyOutcome:
    label: str
    setups: tuple[SetupOutcome, ...]

    @property
    def run_ids(self) -> tuple[int, ...]:
        return tuple(o.run_id for o in self.setups if o.run_id is not None)

    @property
    def problems(self) -> tuple[SetupOutcome, ...]:
        return tuple(o for o in self.setups if o.status != "complete")


def check_scratch_plan(setups: Sequence[Setup], scratch: Scratch) -> None:
    if any(s.uses_scratch for s in setups) and scratch.kind == "none":
        first = next(s for s in setups if s.uses_scratch)
        raise UsageError(f"setup {first.name!r} is built on a scratch device: give --device DEV --destroy-data DEV or --loop-file PATH --loop-size SIZE")
    for s in setups:
        if s.uses_scratch:
            devices_needed(s, scratch.device_count)  # refuses, in one line, a setup needing more devices
    if scratch.kind == "loop":
        size = parse_size(scratch.size or "0")
        if size < MIN_LOOP_BYTES:
            raise UsageError(f"--loop-size {scratch.size} is too small: give at least 64m")
        xfs = [s.name for s in setups if s.mkfs == "xfs"]
        if xfs and size < XFS_MIN_BYTES:
            raise UsageError(f"--loop-size {scratch.size} is too small for setup {xfs[0]!r}: mkfs.xfs needs at least 300 MB (give --loop-size 400m)")


# --------------------------------------------------------------------------- study runs in the store


def study_runs(store: StudyStore, label: str) -> dict[str, RunInfo]:
    """The newest run of each setup of study ``label`` (by setup name)."""
    out: dict[str, RunInfo] = {}
    for info in store.list_runs(label_prefix=f"{label}/"):  # newest first
        meta = store.run_meta(info.run_id)
        study = meta.get("study") if isinstance(meta, dict) else None
        if not isinstance(study, dict) or study.get("label") != label:
            continue
        name = meta.get("setup_name")
        if isinstance(name, str) and name not in out:
            out[name] = info
    return out


def stored_study(store: StudyStore, label: str) -> tuple[Study, Scratch]:
    """The plan of study ``label`` from its newest run (``--resume``)."""
    for info in store.list_runs(label_prefix=f"{label}/"):
        meta = store.run_meta(info.run_id)
        study = meta.get("study") if isinstance(meta, dict) else None
        if isinstance(study, dict) and study.get("label") == label:
            sm = study.get("scratch") or {}
            scratch = Scratch(
                kind=sm.get("kind", "none"), path=sm.get("path"), size=sm.get("size"),
                paths=tuple(sm.get("paths") or ()), count=int(sm.get("count") or 0),
            )  # fmt: skip
            return Study.from_meta(study), scratch
    raise UsageError(f"no study labelled {label!r} is stored (see 'storbench list --label-prefix {label}/')")

# --------------------------------------------------------------------------- labels


def default_label(clock: Callable[[], str]) -> str:
    """``matrix-20261130-133909`` from the clock's ISO time."""
    digits = re.sub(r"[^0-9]", "", clock())[:14]
    return f"matrix-{digits[:8]}-{digits[8:14]}" if len(digits) >= 14 else f"matrix-{digits or 'study'}"


def validate_label(label: str) -> str:
    if not label or re.search(r"[\x00-\x1f\x7f]", label):
        raise UsageError("--label must be one line of text")
    if label.endswith("/"):
        raise UsageError(f"--label {label!r} must not end with '/' (setup names are added after a '/')")
    return label


def loop_size(text: str) -> str:
    """``--loop-size`` in fio's form, checked."""
    return fio_size(text)


def setup_label(study_label: str, setup_name: str) -> str:
    return f"{study_label}/{setup_name}"
