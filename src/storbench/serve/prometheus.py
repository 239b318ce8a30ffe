"""Pure: ``/metrics`` in Prometheus's text exposition format (version 0.0.4).

Per workload, target and host, the result of the newest complete run that has it, as ``storbench
show`` gives it: the mean over that run's repetitions of IOPS, bandwidth, mean latency and p99
(:func:`storbench.metrics.repetition_stats`, the numbers of ``show --json``'s ``stats``), the
median latency, the repetitions counted and when the run ended; and the figures of each run that
is alive now (fio's current rates, its percent done and the run's ETA).  A run that is still
going, was stopped or was killed is not exported as a result; a live state is exported only while
its run is running (not one left by a killed process).  Units are Prometheus's: bytes per second,
seconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from storbench.jsontypes import JSONMapping, JSONObject

from ..metrics import MEASURE_DIRECTION

if TYPE_CHECKING:
    from ..record import ResultRecord


def _escape(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**labels: object) -> str:
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items() if v is not None) + "}"


def _number(value: float) -> str:
    return repr(float(value)) if value == value else "NaN"


FAMILIES = (
    ("storbench_result_iops", "gauge", "I/O operations per second of a workload on a target: the mean over the repetitions of its newest complete run"),
    ("storbench_result_bandwidth_bytes_per_second", "gauge", "Bandwidth of a workload on a target: the mean over the repetitions of its newest complete run"),
    ("storbench_result_latency_mean_seconds", "gauge", "Mean I/O latency of a workload on a target (mean over the repetitions)"),
    ("storbench_result_latency_seconds", "gauge", "Completion latency percentiles of a workload on a target (mean over the repetitions)"),
    ("storbench_result_measure", "gauge", "A figure of another benchmark (an application load: pgbench's tps, dbench's MB/s; a PTS import) in its own unit (label unit): the mean over the repetitions"),
    ("storbench_result_repetitions", "gauge", "How many repetitions the exported figures are the mean of"),
    ("storbench_result_timestamp_seconds", "gauge", "When the run the figures come from ended (Unix time)"),
    ("storbench_result_run_id", "gauge", "The run the exported figures of a workload on a target come from"),
    ("storbench_live_iops", "gauge", "fio's current IOPS in a run in progress"),
    ("storbench_live_bandwidth_bytes_per_second", "gauge", "fio's current bandwidth in a run in progress"),
    ("storbench_live_workload_percent", "gauge", "How far the running workload is, as fio says"),
    ("storbench_live_eta_seconds", "gauge", "The run's expected time left"),
    ("storbench_live_results", "gauge", "Results a run in progress has stored so far"),
)


def result_figures(last: Sequence[JSONMapping], records: Mapping[int, Sequence[ResultRecord]], ended: Mapping[int, float | None]) -> list[JSONObject]:
    """For each of ``last`` (:meth:`Store.last_results`: the newest result of each workload, target
    and host among complete runs), the figures of its run's repetitions of it: ``records`` are the
    runs' results by run id, ``ended`` each run's end as Unix time."""
    from ..metrics import repetition_stats, summary_jobs

    out = []
    for r in last:
        reps = [rec for rec in records.get(r["run_id"], ()) if (rec.workload, rec.target, rec.host) == (r["workload"], r.get("target"), r.get("host"))]
        if not reps:
            continue
        stats = repetition_stats([rec.fio for rec in reps])
        p50: dict[str, float] = {}
        for direction in stats:
            values = []
            for rec in reps:
                dirs = [j.directions[direction] for j in summary_jobs(rec.fio) if direction in j.directions]
                lat = (dirs[0].clat_ns or dirs[0].lat_ns) if len(dirs) == 1 else None
                if lat is not None and "50.0" in lat.percentiles:
                    values.append(lat.percentiles["50.0"])
            if len(values) == len(reps):
                p50[direction] = sum(values) / len(values)
        out.append({**{k: r.get(k) for k in ("workload", "target", "host", "label", "run_id")}, "repetitions": len(reps),
                    "ended_s": ended.get(r["run_id"]), "stats": {d: {m: s.mean for m, s in ms.items()} for d, ms in stats.items()},
                    "p50_ns": p50})  # fmt: skip
    return out


def format_metrics(figures: Sequence[JSONMapping], live: Sequence[JSONMapping]) -> str:
    """The exposition text: ``figures`` from :func:`result_figures`, ``live`` the live states of runs alive now."""
    samples: dict[str, list[str]] = {name: [] for name, _, _ in FAMILIES}

    def add(name: str, labels: JSONMapping, value: float | None) -> None:
        if value is not None:
            samples[name].append(f"{name}{_labels(**labels)} {_number(value)}")

    for r in figures:
        base = {"workload": r["workload"], "target": r.get("target") or "", "host": r.get("host") or "", "label": r.get("label") or ""}
        for direction, by_metric in r["stats"].items():
            if direction == MEASURE_DIRECTION:
                for unit, value in by_metric.items():
                    add("storbench_result_measure", {**base, "unit": unit}, value)
                continue
            labels = {**base, "direction": direction}
            add("storbench_result_iops", labels, by_metric.get("iops"))
            add("storbench_result_bandwidth_bytes_per_second", labels, by_metric.get("bw_bytes"))
            lat = by_metric.get("lat_mean_ns")
            add("storbench_result_latency_mean_seconds", labels, lat / 1e9 if lat is not None else None)
            p50, p99 = r["p50_ns"].get(direction), by_metric.get("clat_p99_ns")
            add("storbench_result_latency_seconds", {**labels, "quantile": "0.5"}, p50 / 1e9 if p50 is not None else None)
            add("storbench_result_latency_seconds", {**labels, "quantile": "0.99"}, p99 / 1e9 if p99 is not None else None)
        add("storbench_result_repetitions", base, r["repetitions"])
        add("storbench_result_timestamp_seconds", base, r.get("ended_s"))
        add("storbench_result_run_id", base, r["run_id"])
    for state in live:
        current = state.get("current") or {}
        base = {"run_id": state.get("run_id"), "workload": current.get("workload") or "", "target": current.get("target") or ""}
        for name, value in (("storbench_live_iops", current.get("iops")), ("storbench_live_bandwidth_bytes_per_second", current.get("bw_bytes")),
                            ("storbench_live_workload_percent", current.get("percent")), ("storbench_live_eta_seconds", state.get("eta_run_s"))):
            if value is not None:
                samples[name].append(f"{name}{_labels(**base)} {_number(value)}")
        samples["storbench_live_results"].append(f"storbench_live_results{_labels(run_id=state.get('run_id'))} {_number(len(state.get('results', [])))}")
    lines: list[str] = []
    for name, kind, help_text in FAMILIES:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} {kind}")
        lines.extend(samples[name])
    return "\n".join(lines) + "\n"
