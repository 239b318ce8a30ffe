"""The fio runs around the measured ones: ``--prefill``'s write pass, the test file written by
storbench where the filesystem will not let fio lay it out (smbnetfs), the short probe a size-based
job's duration is estimated from, and the removal of a test file only fio can reach (GlusterFS)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import FioParseError, TargetError
from ..jobs.jobfile import build_job
from ..model import JobSpec, Overrides, Target, Workload
from ..process import signals
from .failures import fio_failure_reason
from .fioexec import FioExecutor, run_fio
from .space import remove_test_files

if TYPE_CHECKING:
    from ..storage import StorageInfo
    from .outcome import Reporter


#: ``--prefill``: one sequential pass of incompressible 1 MiB writes over the test area.
PREFILL_WORKLOAD = Workload(
    name="prefill",
    description="storbench --prefill: one sequential write pass over the test area before the workloads",
    options=(("rw", "write"), ("bs", "1m"), ("ioengine", "psync"), ("refill_buffers", "1"), ("end_fsync", "1")),
    headline="bw",
    origin="storbench",
)


def test_file_name(spec: JobSpec) -> str:
    from ..jobs.jobfile import DEFAULT_TEST_FILE_NAME

    return os.path.basename(spec.test_files[0]) if spec.test_files else DEFAULT_TEST_FILE_NAME


def prefill_target(specs: Sequence[JobSpec], target: Target, storage: StorageInfo | None, executor: FioExecutor,
             reporter: Reporter) -> StorageInfo | None:  # fmt: skip
    """Run :data:`PREFILL_WORKLOAD` over the largest area the target's workloads use (its export
    or device where they name no size); one-line :class:`TargetError` when it fails."""
    sizes = [dict(s.options).get("size") for s in specs if s.target == target]
    known = [s for s in sizes if s and not s.endswith("%")]
    first = next(s for s in specs if s.target == target)
    from ..fio.json import parse_fio_json
    from ..units import parse_size

    size = max(known, key=parse_size) if known else None  # None: the whole file, device or export
    job = build_job(PREFILL_WORKLOAD, target, Overrides(size=size), test_file_name=test_file_name(first))
    started = time.monotonic()
    inv = run_fio(executor, job, lambda status: None)
    result = None
    try:
        result = parse_fio_json(inv.output_text)
    except FioParseError:
        pass
    reason = fio_failure_reason(inv, result)
    if reason is not None:
        raise TargetError(f"--prefill of {target.display} failed: {reason}")
    written = sum(j.directions["write"].io_bytes for j in result.jobs if "write" in j.directions) if result else 0
    from ..units import format_bytes

    note = f"--prefill: wrote {format_bytes(written)} of {target.display} sequentially (1 MiB writes) in {time.monotonic() - started:.1f} s before the workloads"
    reporter.note(note)
    return dataclasses.replace(storage, notes=tuple(storage.notes) + (note,)) if storage is not None else storage


def lay_out_where_fio_cannot(specs: Sequence[JobSpec], target: Target, storage: StorageInfo | None,
                              reporter: Reporter) -> StorageInfo | None:  # fmt: skip
    """On a network filesystem that refuses to grow a file with ftruncate (smbnetfs), write the
    test file storbench shares across the run's workloads itself, as large as the largest needs
    (see :mod:`storbench.run.layout`); the storage description gets a note saying so."""
    fs = getattr(storage, "filesystem", None)
    if target.kind != "dir" or fs is None or getattr(fs, "network", None) is None:
        return storage
    from ..units import parse_size
    from .layout import grows_by_truncate, write_file_when_answering

    ok, why = grows_by_truncate(target.path)
    if ok:
        return storage
    sizes: dict[str, int] = {}
    for spec in specs:
        if spec.target != target:
            continue
        size = dict(spec.options).get("size")
        if not size or size.endswith("%"):
            continue
        for path in spec.test_files:
            sizes[path] = max(sizes.get(path, 0), parse_size(size))
    notes = []
    for path, nbytes in sizes.items():
        try:
            write_file_when_answering(path, nbytes)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise TargetError(
                f"{fs.fstype} at {fs.mountpoint} refuses to grow a file with ftruncate ({why}), and writing the test file "
                f"{path} there failed too: {exc.strerror or exc}"
            ) from None
        from ..units import format_bytes

        notes.append(
            f"{fs.fstype} at {fs.mountpoint} refuses to grow a file with ftruncate ({why}), which fio's layout needs: "
            f"storbench wrote the {format_bytes(nbytes)} test file {path} itself"
        )
    for note in notes:
        reporter.note(note)
    return dataclasses.replace(storage, notes=tuple(storage.notes) + tuple(notes)) if notes and storage is not None else storage


#: what a seeding job leaves out of the reading job it seeds: it writes the whole area once
_NOT_SEEDED = frozenset({"rw", "readwrite", "time_based", "runtime", "timeout", "ramp_time", "rate", "rate_iops", "rate_min",
                         "rate_iops_min", "io_size", "io_limit", "number_ios", "rwmixread", "rwmixwrite", "percentage_random",
                         "loops", "startdelay", "thinktime"})  # fmt: skip


def _rw(spec: JobSpec) -> str:
    opts = dict(spec.options)
    return opts.get("rw") or opts.get("readwrite") or "read"


def deletes_objects(spec: JobSpec) -> bool:
    """A workload that deletes what it was given (an S3 target's trim is a DELETE): each
    repetition needs its objects written anew."""
    from ..targets import kind_of

    return kind_of(spec.target).reads_need_objects and _rw(spec) in ("trim", "randtrim")


def seed_objects(spec: JobSpec, executor: FioExecutor) -> tuple[int, int]:
    """Write every object ``spec`` will read or delete (same job name, block size, size and
    clones; sequential writes); (objects, bytes).  One-line :class:`TargetError` when it fails."""
    from ..fio.json import parse_fio_json
    from ..targets import kind_of

    kind = kind_of(spec.target)
    options = tuple((k, v) for k, v in spec.options if k not in _NOT_SEEDED and k not in kind.own_options
                    and k != "filename_format") + (("rw", "write"),)  # fmt: skip
    seed = Workload(name=spec.workload.name, description="storbench: the objects a reading workload asks for, written first",
                    options=options, origin="storbench")  # fmt: skip
    from .serverwatch import first_of, growth_watch, held_watch

    # a gateway that holds the PUTs paused (a full cluster) would leave fio waiting without end: its
    # paused requests (radosgw's admin socket), else a bucket that stops growing, end the wait
    watch = first_of(held_watch(spec.target), growth_watch(spec.target))
    inv = run_fio(executor, build_job(seed, spec.target, Overrides()), lambda status: None, watch)
    result = None
    with contextlib.suppress(FioParseError):
        result = parse_fio_json(inv.output_text)
    reason = fio_failure_reason(inv, result)
    if reason is not None or result is None:
        raise TargetError(f"writing the objects workload {spec.workload.name!r} reads on {spec.target.display} failed: {reason}")
    writes = [j.directions["write"] for j in result.jobs if "write" in j.directions and not j.is_aggregate]
    return sum(d.total_ios or 0 for d in writes), sum(d.io_bytes for d in writes)


def write_objects_first(specs: Sequence[JobSpec], target: Target, storage: StorageInfo | None, executor: FioExecutor,
                        reporter: Reporter) -> StorageInfo | None:  # fmt: skip
    """On a target whose reads fetch objects a write made (S3: one object per block and clone,
    :attr:`~storbench.targets.base.TargetKind.reads_need_objects`), write once, before the
    workloads, every object each workload that reads or deletes will ask for (:func:`seed_objects`).
    A GET then never asks for a key that does not exist (fio 3.33's http engine would count that
    404 as a zero-filled success).  One note per target."""
    from ..targets import kind_of

    if not kind_of(target).reads_need_objects:
        return storage
    from ..units import format_bytes

    started, objects, written = time.monotonic(), 0, 0
    for spec in specs:
        if spec.target != target or not spec.workload.is_fio or _rw(spec) in ("write", "randwrite"):
            continue
        n, nbytes = seed_objects(spec, executor)
        objects, written = objects + n, written + nbytes
    if not objects:
        return storage
    note = (f"wrote {objects} objects ({format_bytes(written)}) before the workloads that read or delete them, "
            f"in {time.monotonic() - started:.1f} s: every GET asks for an object that exists"
            + ("; a DELETE workload's objects are written anew before each of its repetitions" if any(deletes_objects(s) for s in specs if s.target == target) else ""))  # fmt: skip
    reporter.note(note)
    return dataclasses.replace(storage, notes=tuple(storage.notes) + (note,)) if storage is not None else storage


#: Removes a test file storbench cannot unlink itself (in a GlusterFS volume): fio reads 4 KiB and unlinks it.
CLEANUP_WORKLOAD = Workload(
    name="cleanup",
    description="storbench: remove the test file from a target without a local path",
    options=(("rw", "read"), ("bs", "4k"), ("io_size", "4k"), ("unlink", "1"), ("ioengine", "psync")),
    origin="storbench",
)


def remove_remote_test_files(specs: Sequence[JobSpec], executor: FioExecutor, reporter: Reporter | None = None) -> None:
    """Remove what storbench left where only its kind's client reaches (a GlusterFS volume's test
    file, an S3 prefix); what could not be removed is a note (``reporter``), never the run's failure."""
    from ..targets import kind_of

    done: set[str] = set()
    for spec in specs:
        if spec.target.path in done or not kind_of(spec.target).remote_test_file:
            continue
        done.add(spec.target.path)
        names = sorted({os.path.basename(f) for s in specs if s.target == spec.target for f in s.test_files} or {test_file_name(spec)})
        with signals.held():
            try:
                if not kind_of(spec.target).remove_remote(spec.target, names):
                    run_fio(executor, build_job(CLEANUP_WORKLOAD, spec.target, Overrides(size="4k")), lambda status: None)
            except TargetError as exc:  # the kind's own words: said
                if reporter is not None:
                    reporter.note(str(exc))
            except Exception:  # a server that is gone: nothing to remove it from
                pass


#: the probe of a size-based job's speed (plan.py): this much of the area, this long
PROBE_SIZE = "32m"


PROBE_RUNTIME = "2s"


PROBE_FILE_NAME = "storbench.probe"


def probe_rate(executor: FioExecutor, spec: JobSpec) -> float | None:
    """Bytes per second (all jobs together) of ``spec``'s workload run for :data:`PROBE_RUNTIME`
    on :data:`PROBE_SIZE` of its target, time-based, without warm-up: the speed a size-based
    job's duration is estimated from.  Its own test file is removed; None when fio fails."""
    from ..fio.json import parse_fio_json

    opts = dict(spec.options)
    extra = (("time_based", "1"), ("ramp_time", "0"), ("startdelay", "0"))
    engine = opts.get("ioengine")
    job = build_job(spec.workload, spec.target, Overrides(size=PROBE_SIZE, runtime=PROBE_RUNTIME, extra=extra),
                    ioengine=engine, test_file_name=PROBE_FILE_NAME)  # fmt: skip
    try:
        inv = run_fio(executor, job, lambda status: None)
        result = parse_fio_json(inv.output_text)
    except (FioParseError, TargetError, OSError):
        return None
    finally:
        remove_test_files([job])
    if fio_failure_reason(inv, result) is not None:
        return None
    from ..metrics import direction_figures

    total = sum(f["bw_bytes"] or 0.0 for f in direction_figures(result).values() if "bw_bytes" in f)
    return total or None
