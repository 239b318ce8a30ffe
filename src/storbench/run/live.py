"""A run's live state, published through the store so that ``storbench serve`` shows it from any
process or host that reads the same store.

:class:`LiveState` (pure) is what a run is doing now: its plan and ETA, the workload and
repetition running, fio's per-second rates (from its status lines), each result as it is
stored and each finding as it is judged.  :class:`LivePublisher` (the edge) writes it with
:meth:`storbench.store.Store.publish_live`: at once when a workload starts or ends, and at most
once every :data:`INTERVAL_S` seconds for fio's rates, so that a run pays one small write per
second.  A store that cannot take the write stops the publishing (said once), never the run.
:meth:`~storbench.store.Store.finish_run` removes the state.  :class:`LiveReporter` is the
runner's reporter that publishes it: a wrapper around any other reporter (the CLI's progress).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from storbench.jsontypes import JSONMapping, JSONObject

from ..model import versions

if TYPE_CHECKING:
    from ..activity import DeviceSample
    from ..fio.progress import Status
    from ..model import Target, Workload
    from ..record import ResultRecord
    from ..store.protocol import RunStore
    from .outcome import Reporter

#: Version of the published form (``state["version"]``).
LIVE_VERSION = versions.LIVE  # the history: storbench.model.versions
#: fio's rates are published at most this often (seconds): fio prints one a second, and the page
#: asks twice a second, so that a rate reaches it within a second of fio printing it
INTERVAL_S = 0.5
#: the per-second samples kept in the state (the live chart's width)
MAX_SAMPLES = 300
MAX_NOTES = 20

_DEC = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


def parse_rate_text(text: str | None) -> float | None:
    """fio's status bandwidth (``r=99.8MiB/s,w=1300KiB/s``) in bytes/s, summed over directions."""
    if not text:
        return None
    total, found = 0.0, False
    for m in re.finditer(r"[rwt]=([0-9.]+)([KMGTP]?)(i?)B/s", text):
        base = 1024 if m.group(3) else 1000  # MiB/s is binary, MB/s decimal
        power = "KMGTP".index(m.group(2)) + 1 if m.group(2) else 0
        total += float(m.group(1)) * base**power
        found = True
    return total if found else None


def parse_iops_text(text: str | None) -> float | None:
    """fio's status IOPS (``r=25.6k`` / ``r=758,w=325``), summed over directions."""
    if not text:
        return None
    values = [float(m.group(1)) * _DEC[m.group(2)] for m in re.finditer(r"[rwt]=([0-9.]+)([kKMG]?)", text)]
    return sum(values) if values else None


@dataclass
class LiveState:
    """What a run in progress is doing (mutable while it runs; :meth:`to_dict` is the published form)."""

    run_id: int
    total: int
    planned_s: float | None
    started_at: float
    kind: str = "run"
    #: a matrix study's label and setups ({"label", "setup", "setups"}), for the compare page at its end
    study: JSONObject | None = None
    index: int | None = None
    workload: str | None = None
    target: str | None = None
    repetition: int = 0
    workload_started_at: float | None = None
    percent: float | None = None
    eta_s: int | None = None
    rate_text: str | None = None
    iops_now: float | None = None
    bw_now: float | None = None
    #: the newest rate fio printed, held across workloads until the next: {"iops", "bw_bytes", "t_s", "index", "repetition"}
    last: JSONObject | None = None
    #: what each planned workload is (index -> "workload on target"), as they start
    names: dict[int, str] = field(default_factory=dict)
    #: the devices under the target now: the activity sampler's newest reading of each
    devices: list[JSONObject] = field(default_factory=list)
    #: seconds of the study's setups after this one (a matrix), from their plans
    study_after_s: float | None = None
    samples: list[list[float | int | None]] = field(default_factory=list)  # [t_s since start, iops, bw_bytes, index, repetition]
    results: list[JSONObject] = field(default_factory=list)
    findings: list[JSONObject] = field(default_factory=list)
    failures: list[JSONObject] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self, now: float) -> JSONObject:
        elapsed = max(0.0, now - self.started_at)
        eta_run = None if self.planned_s is None else max(0, round(self.planned_s - elapsed))
        return {
            "version": LIVE_VERSION,
            "run_id": self.run_id,
            "kind": self.kind,
            "study": self.study,
            "total": self.total,
            "planned_s": self.planned_s,
            "elapsed_s": round(elapsed, 1),
            "eta_run_s": eta_run,
            "eta_study_s": None if eta_run is None or self.study_after_s is None else round(eta_run + self.study_after_s),
            "published_at": now,
            "current": None if self.workload is None else {
                "index": self.index, "workload": self.workload, "target": self.target, "repetition": self.repetition,
                "percent": self.percent, "eta_s": self.eta_s, "rates": self.rate_text,
                "iops": self.iops_now, "bw_bytes": self.bw_now,
            },
            "last": self.last,
            "names": {str(i): n for i, n in self.names.items()},
            "devices": self.devices,
            "samples": self.samples[-MAX_SAMPLES:],
            "results": self.results,
            "findings": self.findings,
            "failures": self.failures,
            "notes": self.notes[-MAX_NOTES:],
        }  # fmt: skip


def result_summary(record: ResultRecord) -> JSONObject:
    """A stored result as the live page lists it: its id, place and figures per direction."""
    from ..metrics import direction_figures

    return {
        "result_id": record.result_id,
        "workload": record.workload,
        "target": record.target,
        "host": record.host,
        "repetition": record.repetition,
        "figures": {d: {k: v for k, v in f.items()} for d, f in direction_figures(record.fio).items()},
    }


class LivePublisher:
    """Keeps a :class:`LiveState` and writes it to ``store`` (see the module's text)."""

    def __init__(self, store: RunStore, run_id: int, *, total: int, planned_s: float | None, kind: str = "run",
                 study: JSONMapping | None = None, clock: Callable[[], float] = time.time,
                 interval_s: float = INTERVAL_S) -> None:  # fmt: skip
        self.store = store
        self.clock = clock
        self.interval_s = interval_s
        self.state = LiveState(run_id=run_id, total=total, planned_s=planned_s, started_at=clock(), kind=kind,
                               study=dict(study) if study is not None else None)  # fmt: skip
        self.last_published: float | None = None
        #: why publishing stopped (the store refused a write), once it has
        self.broken: str | None = None
        self._publish(force=True)

    def _publish(self, force: bool = False) -> None:
        if self.broken is not None:
            return
        now = self.clock()
        if not force and self.last_published is not None and now - self.last_published < self.interval_s:
            return
        try:
            self.store.publish_live(self.state.run_id, self.state.to_dict(now))
        except Exception as exc:  # the run goes on; only its live view stops
            self.broken = f"live view stopped: {exc}"
            return
        self.last_published = now

    def plan(self, seconds: float, after_s: float | None = None) -> None:
        """The run's plan known once it has started (a matrix setup's, after its build): ``seconds``
        from now, and ``after_s`` for the study's setups after this one."""
        s = self.state
        s.planned_s = max(0.0, self.clock() - s.started_at) + seconds
        s.study_after_s = after_s
        self._publish(force=True)

    def started(self, workload: str, target: str, index: int, total: int, repetition: int) -> None:
        s = self.state
        s.index, s.workload, s.target, s.repetition = index, workload, target, repetition
        s.names[index] = f"{workload} on {target}"
        s.total = max(s.total, total)
        s.workload_started_at, s.percent, s.eta_s, s.rate_text, s.iops_now, s.bw_now = self.clock(), None, None, None, None, None
        self._publish(force=True)

    def status(self, status: Status) -> None:
        s = self.state
        s.percent, s.eta_s = status.percent, status.eta_s
        s.rate_text = " ".join(x for x in (status.bw_text, f"{status.iops_text} IOPS" if status.iops_text else None) if x) or s.rate_text
        iops, bw = parse_iops_text(status.iops_text), parse_rate_text(status.bw_text)
        if iops is not None or bw is not None:
            t = round(self.clock() - s.started_at, 1)
            s.iops_now, s.bw_now = iops, bw
            s.last = {"iops": iops, "bw_bytes": bw, "t_s": t, "index": s.index, "repetition": s.repetition}
            s.samples.append([t, iops, bw, s.index, s.repetition])
            del s.samples[:-MAX_SAMPLES]
        self._publish()

    def devices_now(self, samples: Sequence[DeviceSample]) -> None:
        """The activity sampler's newest reading of each device (:class:`storbench.activity.DeviceSample`)."""
        self.state.devices = [{"device": d.device, "util_pct": d.util_pct, "queue": d.avg_queue_size,
                               "read_bytes_per_s": d.read_bytes_per_s, "write_bytes_per_s": d.write_bytes_per_s,
                               "t_s": d.t_s} for d in samples]  # fmt: skip

    def done(self, record: ResultRecord) -> None:
        self.state.results.append(result_summary(record))
        seen = {(f["check"], f["workload"]) for f in self.state.findings}
        for f in record.findings:
            if (f.check, record.workload) not in seen:
                self.state.findings.append({"check": f.check, "severity": f.severity, "message": f.message, "fix": f.fix, "workload": record.workload})
        self._publish(force=True)

    def failed(self, workload: str, target: str, reason: str) -> None:
        self.state.failures.append({"workload": workload, "target": target, "reason": reason})
        self._publish(force=True)

    def note(self, text: str) -> None:
        self.state.notes.append(text)
        self._publish()


def is_fresh(state: JSONMapping, now: float, stale_s: float = 30.0) -> bool:
    """A published state newer than ``stale_s`` seconds (a run killed without finishing leaves an old one)."""
    published = state.get("published_at")
    return isinstance(published, (int, float)) and now - published <= stale_s


class PendingStore(Protocol):
    """A store still opening on another thread (:class:`storbench.run.session.PendingStore`)."""

    def ready(self) -> bool: ...

    def failure(self, wait: bool = False) -> BaseException | None: ...

    def get(self) -> tuple[RunStore, int]: ...


class LiveReporter:
    """A reporter that also publishes the run's live state: every call goes to ``inner`` (the
    CLI's progress, or nothing) and to a :class:`LivePublisher` once the run has a store and an
    id (:meth:`publish`).  A run whose store opens while its first fio starts calls
    :meth:`publish_when_ready` instead: what happens before the store is open is queued and
    published, in order, once it is (fio's status lines arrive on another thread: a lock)."""

    def __init__(self, inner: Reporter, planned_s: float | None = None) -> None:
        self.inner = inner
        self.planned_s = planned_s
        self.live: LivePublisher | None = None
        self._pending: tuple[PendingStore, int] | None = None
        self._queued: list[Callable[[LivePublisher], None]] = []
        self._lock = threading.Lock()

    def __enter__(self) -> LiveReporter:
        if hasattr(self.inner, "__enter__"):
            self.inner.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if hasattr(self.inner, "__exit__"):
            self.inner.__exit__(*exc)

    def publish(self, store: RunStore, run_id: int, total: int, kind: str = "run", study: JSONMapping | None = None) -> None:
        """From now on, publish the run's live state through ``store``."""
        self.live = LivePublisher(store, run_id, total=total, planned_s=self.planned_s, kind=kind, study=study)

    def publish_when_ready(self, pending: PendingStore, total: int) -> None:
        """:meth:`publish` once ``pending`` has opened the store; what happens before is published then."""
        self._pending = (pending, total)

    def flush(self) -> None:
        """What waited for the store (see :meth:`publish_when_ready`), published now."""
        if self.live is None and self._pending is not None and self._queued:
            with self._lock:
                if not self._queued:
                    return
                call = self._queued.pop()
            self._live(call)

    def _live(self, call: Callable[[LivePublisher], None]) -> None:
        """``call`` on the publisher: now, or queued until the store has opened."""
        if self.live is None and self._pending is not None:
            with self._lock:
                if self._pending is not None:
                    pending, total = self._pending
                    self._queued.append(call)
                    if not pending.ready() or pending.failure() is not None:
                        return
                    store, run_id = pending.get()
                    self.publish(store, run_id, total=total)
                    self._pending = None
                    queued, self._queued = self._queued, []
                    for queued_call in queued:
                        self._publish(queued_call)
                    return
        self._publish(call)

    def _publish(self, call: Callable[[LivePublisher], None]) -> None:
        live = self.live
        if live is None:
            return
        was = live.broken
        call(live)
        if live.broken and not was:
            self.inner.note(f"note: {live.broken}")

    # the runner's Reporter protocol: each call published, then passed on
    def workload_started(self, workload: Workload, target: Target, index: int, total: int, repetition: int) -> None:
        self._live(lambda live: live.started(workload.name, target.display, index, total, repetition))
        self.inner.workload_started(workload, target, index, total, repetition)

    def status(self, status: Status) -> None:
        self._live(lambda live: live.status(status))
        self.inner.status(status)

    def devices_now(self, samples: Sequence[DeviceSample]) -> None:
        self._live(lambda live: live.devices_now(samples))
        self.inner.devices_now(samples)

    def plan(self, seconds: float, after_s: float | None = None) -> None:
        """The live state's plan, once known (a matrix setup's, after its build: :meth:`LivePublisher.plan`)."""
        self._live(lambda live: live.plan(seconds, after_s))

    def workload_done(self, record: ResultRecord) -> None:
        self._live(lambda live: live.done(record))
        self.inner.workload_done(record)

    def workload_failed(self, workload: Workload, target: Target, reason: str) -> None:
        self._live(lambda live: live.failed(workload.name, target.display, reason))
        self.inner.workload_failed(workload, target, reason)

    def note(self, text: str) -> None:
        self._live(lambda live: live.note(text))
        self.inner.note(text)
