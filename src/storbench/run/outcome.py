"""What the execute loop is given and gives back: the :class:`Reporter` it tells (the CLI draws it,
tests ignore it: :class:`SilentReporter`), the :class:`ResultSink` it stores into, a run's
:class:`RunPlan`, and its :class:`RunOutcome` with each :class:`Failure`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..model import Overrides, Repeat, Target, Workload

if TYPE_CHECKING:
    from ..activity import DeviceSample
    from ..fio.progress import Status
    from ..record import ResultRecord


class Reporter(Protocol):
    """What the runner tells the person watching (the CLI draws it; tests ignore it)."""

    def workload_started(self, workload: Workload, target: Target, index: int, total: int, repetition: int) -> None: ...

    def status(self, status: Status) -> None: ...

    def devices_now(self, samples: Sequence[DeviceSample]) -> None: ...

    def workload_done(self, record: ResultRecord) -> None: ...

    def workload_failed(self, workload: Workload, target: Target, reason: str) -> None: ...

    def note(self, text: str) -> None: ...


class SilentReporter:
    def workload_started(self, workload, target, index, total, repetition) -> None:
        pass

    def status(self, status) -> None:
        pass

    def devices_now(self, samples) -> None:
        pass

    def workload_done(self, record) -> None:
        pass

    def workload_failed(self, workload, target, reason) -> None:
        pass

    def note(self, text) -> None:
        pass


class ResultSink(Protocol):
    def add_result(self, record: ResultRecord) -> int: ...


@runtime_checkable
class BatchSink(ResultSink, Protocol):
    """A sink that stores several records in one commit (the store: a 64-host repetition's 65
    records in one); :func:`storbench.run.measure.store_results` uses it where the sink is one."""

    def add_results(self, records: Sequence[ResultRecord]) -> list[int]: ...


@dataclass(frozen=True)
class RunPlan:
    workloads: tuple[Workload, ...]
    targets: tuple[Target, ...]
    overrides: Overrides = field(default_factory=Overrides)
    label: str | None = None
    keep_files: bool = False
    repeat: Repeat = field(default_factory=Repeat)


@dataclass(frozen=True)
class Failure:
    workload: str
    target: str
    reason: str
    #: no further workload ran after it (--hosts-required was not met)
    stopped_run: bool = False


@dataclass(frozen=True)
class RunOutcome:
    run_id: int
    stored: tuple[int, ...]
    failures: tuple[Failure, ...]
