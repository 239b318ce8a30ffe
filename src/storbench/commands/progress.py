"""The run's progress on stderr (the runner's Reporter for the CLI): one bar per workload with
its ETA, the whole run's ETA and fio's current rates; each result's line and its findings, a
finding that holds for several workloads said once.  ``run``, ``curve`` and ``matrix`` draw
through it; the live state for ``storbench serve`` is :class:`storbench.run.live.LiveReporter`,
which wraps it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .common import App

if TYPE_CHECKING:
    from ..record import ResultRecord


class CliReporter:
    """Live progress on stderr: one bar per workload with ETA and fio's current rates."""

    def __init__(self, app: App, show_progress: bool, planned_s: float | None = None) -> None:
        import time

        self.app = app
        #: the run's expected duration (plan.py) and its start: the whole run's ETA beside the workload's
        self.planned_s = planned_s
        self.started = time.monotonic()
        self._console = None
        self.show = show_progress
        self.progress = None
        self.task = None
        #: (check, severity) -> how many workloads had it (said once, see workload_done)
        self.said: dict[tuple[str, str], int] = {}

    @property
    def console(self):
        """The console of progress and notes, made when first printed to (rich's import, 30 ms,
        is then not in the run's start-up)."""
        if self._console is None:
            self._console = self.app.console(err=True)
        return self._console

    def __enter__(self):
        if self.show:
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
            )

            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("eta {task.fields[eta]}"),
                TextColumn("run eta {task.fields[run_eta]}"),
                TextColumn("{task.fields[rate]}"),
                console=self.console,
                transient=True,
            )
            self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.__exit__(*exc)

    def workload_started(self, workload, target, index, total, repetition) -> None:
        desc = f"[{index + 1}/{total}] {workload.name}" + (f" #{repetition + 1}" if repetition else "")
        if self.progress is not None:
            if self.task is not None:
                self.progress.remove_task(self.task)
            self.task = self.progress.add_task(desc, total=100.0, eta="?", rate="", run_eta=self._run_eta())
        else:
            self.app.err(f"{desc} on {target.display} ...")

    def _run_eta(self) -> str:
        import time

        if not self.planned_s:
            return "?"
        left = max(0, round(self.planned_s - (time.monotonic() - self.started)))
        return f"{left // 60}m{left % 60:02d}s"

    def status(self, status) -> None:
        if self.progress is None or self.task is None:
            return
        fields = {"run_eta": self._run_eta()}
        if status.eta_s is not None:
            fields["eta"] = f"{status.eta_s // 60}m{status.eta_s % 60:02d}s"
        rate = " ".join(x for x in (status.bw_text, f"{status.iops_text} IOPS" if status.iops_text else None) if x)
        if rate:
            fields["rate"] = rate
        if status.percent is not None:
            self.progress.update(self.task, completed=status.percent, **fields)
        elif fields:
            self.progress.update(self.task, **fields)

    def devices_now(self, samples) -> None:
        pass  # the terminal shows fio's own rate; storbench serve's live page shows the devices

    def workload_done(self, record: ResultRecord) -> None:
        from ..render.terminal import direction_rows
        from ..units import fmt_bw, fmt_iops, fmt_ns

        parts = []
        for _job, d in direction_rows(record):
            lat = d.lat_ns or d.clat_ns
            parts.append(
                f"{d.direction} {fmt_iops(d.iops)} IOPS {fmt_bw(d.bw_bytes)} lat {fmt_ns(lat.mean_ns if lat else None)}"
            )
        if not record.fio.jobs:  # an application load: its figures
            from ..units import fmt_measure

            parts = [f"{fmt_measure(m.value)} {m.unit}" for m in record.fio.measures[:3]]
        rep = f" #{record.repetition + 1}" if record.repetition else ""
        self.console.print(f"  done {record.workload}{rep}: " + "; ".join(parts), highlight=False, markup=False)
        for f in record.findings:
            if f.severity == "info":
                continue
            key = (f.check, f.severity)
            if f.severity != "invalid" and key in self.said:
                self.said[key] += 1  # said already for this run: counted, summed up at the end
                continue
            self.said.setdefault(key, 1)
            self.console.print(f"    {f.severity}: {f.message}", highlight=False, markup=False)


    def note(self, text: str) -> None:
        self.console.print(f"  {text}", highlight=False, markup=False)

    def workload_failed(self, workload, target, reason) -> None:
        self.console.print(f"  FAILED {workload.name} on {target.display}: {reason}", highlight=False, markup=False)
