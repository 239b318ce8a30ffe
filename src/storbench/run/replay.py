"""Edge: a replay's traces read from the store, their logs written for fio, the captured device refused.

``storbench run --replay TRACE`` makes the trace's workloads (:func:`storbench.trace.replay.replay_workloads`);
:func:`write_logs` writes each one's v3 iolog into a directory of the run's own (removed with it)
and names it in the workload's ``read_iolog``, also for a resumed run, whose logs are written anew
from the stored trace.
"""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..model import Workload

if TYPE_CHECKING:
    from ..store.trace_reads import TraceReads
    from ..trace.events import Trace, TraceMeta


def replay_workloads_of(store: TraceReads, refs: Sequence[str], modes: Sequence[str], reads_only: bool,
                        fio_version: str | None) -> tuple[tuple[Workload, ...], list[TraceMeta]]:  # fmt: skip
    """The workloads of every trace named (an id, a label or ``last``), and the traces' meta (each
    trace's events are let go once its workloads are made: a million requests are not kept)."""
    out: list[Workload] = []
    metas = []
    for ref in refs:
        made, meta = _replays_of(store, ref, modes, reads_only, fio_version)
        out += made
        metas.append(meta)
    names = [w.name for w in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise UsageError(f"--replay: two traces make the workload {dup!r} (the same label): name them by id, or relabel one")
    return tuple(out), metas


def resolve_suite_replays(store: TraceReads, workloads: Sequence[Workload],
                          fio_version: str | None) -> tuple[tuple[Workload, ...], list[TraceMeta]]:  # fmt: skip
    """Each suite workload that names a trace (``replay = "db"``, still ``pending``) made the
    replay it names, under its own name; the traces' meta."""
    out: list[Workload] = []
    metas = []
    for w in workloads:
        ask = w.replay or {}
        pending = ask.get("pending")
        if pending is None:
            out.append(w)
            continue
        (made,), meta = _replays_of(store, str(pending), (str(ask["mode"]),), bool(ask.get("reads_only")), fio_version)
        out.append(replace(made, name=w.name, description=w.description, origin=w.origin))
        metas.append(meta)
    return tuple(out), metas


def _replays_of(store: TraceReads, ref: str, modes: Sequence[str], reads_only: bool,
                fio_version: str | None) -> tuple[tuple[Workload, ...], TraceMeta]:  # fmt: skip
    """One stored trace's replay workloads and its meta; its events are let go on return (a
    million requests are not kept while the run goes on)."""
    from ..trace.replay import replay_workloads

    row = store.find_trace(ref)
    trace = store.load_trace(row.trace_id)
    return replay_workloads(trace, row.trace_id, modes=modes, reads_only=reads_only, fio_version=fio_version), trace.meta


def write_logs(store: TraceReads, workloads: Sequence[Workload], directory: str) -> tuple[Workload, ...]:
    """``workloads`` with each replay's ``read_iolog`` naming its log, written into ``directory``."""
    from ..trace.events import OPS
    from ..trace.iolog import write_iolog_v3
    from ..trace.replay import IOLOG_OPTION

    loaded: dict[int, Trace] = {}
    out = []
    for w in workloads:
        ref = w.replay
        if ref is None:
            out.append(w)
            continue
        trace_id = int(ref["trace_id"])
        if trace_id not in loaded:
            loaded.clear()  # one trace's events at a time
            loaded[trace_id] = store.load_trace(trace_id)
        kinds = [OPS.index(k) for k in ref.get("kinds", OPS)]
        path = Path(directory) / f"{w.name}.iolog"
        with open(path, "w") as f:
            for chunk in write_iolog_v3(loaded[trace_id], kinds=kinds):
                f.write(chunk)
        options = tuple((k, str(path) if k == IOLOG_OPTION else v) for k, v in w.options)
        out.append(replace(w, options=options))
    return tuple(out)


def refuse_the_source(traces: Sequence[TraceMeta], targets: Sequence[str]) -> None:
    """A trace never replays onto the device it was captured from (on this host): the device a
    target is or lies on, known by what it is (a loop device's backing file, a disk's WWID), not
    by its name, which the kernel gives again."""
    from ..capture.device import device_identity

    here = socket.gethostname()
    for meta in traces:
        identity, host = meta.identity, meta.host
        if not identity or (host is not None and host != here):
            continue
        for target in targets:
            try:
                st = os.stat(target)
            except OSError:
                continue
            number = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
            sysdev = Path("/sys/dev/block") / f"{os.major(number)}:{os.minor(number)}"
            if sysdev.exists() and device_identity(sysdev.resolve().name) == identity:
                raise UsageError(f"--replay: {target} is on {meta.device}, the device trace {meta.label!r} was captured from; a replay never runs on its source")


#: target kinds a replayed log cannot go to: fio's engine there reads and writes objects, not
#: offsets of one file, device, export or image (no replay_redirect)
NOT_REPLAYABLE: frozenset[str] = frozenset({"s3", "rados"})


def refuse_unredirectable(targets: Sequence[str]) -> None:
    """One line for a target a trace cannot be replayed onto, before it is reached."""
    from ..targets import KINDS

    for target in targets:
        kind = next((k for k in KINDS if k.claims(target)), None)
        if kind is not None and kind.name in NOT_REPLAYABLE:
            raise UsageError(
                f"--replay: {target} is a {kind.name} target: a trace replays onto one file, device, export or image "
                "(fio's replay_redirect), which objects are not; replay onto a block device, a file, a directory, "
                "an NBD export, an iSCSI LUN or an RBD image"
            )
