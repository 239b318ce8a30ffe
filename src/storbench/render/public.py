"""Pure: stored records in the public JSON form of ``--json`` (``storbench run/show --json``, ``storbench serve``'s API)."""

from __future__ import annotations

from collections.abc import Sequence

from ..metrics import repetition_stats
from ..record import ResultRecord
from ..serialize import result_record_to_public
from ..stats.core import reported_summary_dict
from .terminal import group_records


def records_to_public(records: Sequence[ResultRecord]) -> list[dict]:
    """Public records, each with the statistics over its workload's repetitions in its run."""
    stats_of: dict[int, dict] = {}
    for group in group_records(records):
        by_run: dict[int, list[ResultRecord]] = {}
        for rec in group:
            by_run.setdefault(rec.run_id, []).append(rec)
        for members in by_run.values():
            stats = {
                d: {m: reported_summary_dict(s) for m, s in metrics.items()}
                for d, metrics in repetition_stats([r.fio for r in members]).items()
            }
            for rec in members:
                stats_of[id(rec)] = stats
    out = [result_record_to_public(r, stats_of.get(id(r))) for r in records]
    # each finding names the workloads of its run that have it too (a run-wide one: all of them)
    covers: dict[tuple[int, str, str], list[str]] = {}
    for group in group_records(records):
        last = group[-1]
        for f in last.findings:
            names = covers.setdefault((last.run_id, f.check, f.severity), [])
            if last.workload not in names:
                names.append(last.workload)
    for rec, pub in zip(records, out):
        for f, fd in zip(rec.findings, pub["findings"]):
            fd["workloads"] = covers.get(
                (rec.run_id, f.check, f.severity), [rec.workload]
            )
    return out
