"""Pure: ``/metrics`` in Prometheus's text exposition format (version 0.0.4).

The last stored result of each workload, target and host (its IOPS and bandwidth per direction,
the headline columns of the store), and the figures of each run in progress (fio's current rates,
its percent done and the run's ETA).  Units are those Prometheus names: bytes per second, seconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _escape(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**labels: Any) -> str:
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items() if v is not None) + "}"


def _number(value: float) -> str:
    return repr(float(value)) if value == value else "NaN"


FAMILIES = (
    ("storbench_result_iops", "gauge", "I/O operations per second of the last stored result of a workload on a target"),
    ("storbench_result_bandwidth_bytes_per_second", "gauge", "Bandwidth of the last stored result of a workload on a target"),
    ("storbench_result_run_id", "gauge", "The run the last stored result of a workload on a target belongs to"),
    ("storbench_live_iops", "gauge", "fio's current IOPS in a run in progress"),
    ("storbench_live_bandwidth_bytes_per_second", "gauge", "fio's current bandwidth in a run in progress"),
    ("storbench_live_workload_percent", "gauge", "How far the running workload is, as fio says"),
    ("storbench_live_eta_seconds", "gauge", "The run's expected time left"),
    ("storbench_live_results", "gauge", "Results a run in progress has stored so far"),
)


def format_metrics(last: Sequence[Mapping[str, Any]], live: Sequence[Mapping[str, Any]]) -> str:
    """The exposition text: ``last`` from :meth:`Store.last_results`, ``live`` the published live states."""
    samples: dict[str, list[str]] = {name: [] for name, _, _ in FAMILIES}
    for r in last:
        base = {"workload": r["workload"], "target": r.get("target") or "", "host": r.get("host") or "", "label": r.get("label") or ""}
        for direction in ("read", "write"):
            iops, bw = r.get(f"{direction}_iops"), r.get(f"{direction}_bw_bytes")
            if iops is not None:
                samples["storbench_result_iops"].append(f"storbench_result_iops{_labels(**base, direction=direction)} {_number(iops)}")
            if bw is not None:
                samples["storbench_result_bandwidth_bytes_per_second"].append(
                    f"storbench_result_bandwidth_bytes_per_second{_labels(**base, direction=direction)} {_number(bw)}")
        samples["storbench_result_run_id"].append(f"storbench_result_run_id{_labels(**base)} {_number(r['run_id'])}")
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
