"""Repetitions and convergence: how many times a workload runs (a fixed count, or until the
headline's relative standard error is low enough: ``--until-rse``), whether a resumed workload
already has them all, and the finding when it never settled."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from ..model import Repeat

if TYPE_CHECKING:
    from ..model import Finding, FioResult
    from ..record import ResultRecord


#: each workload once (a frozen record: one instance serves every call)
ONCE = Repeat()


def repetitions(repeat: Repeat, start: int = 0) -> Iterator[int]:
    limit = repeat.max_runs if repeat.until_rse_pct is not None else repeat.count
    yield from range(start, max(1, limit))


def settled(repeat: Repeat, records: Sequence[ResultRecord], headline: str) -> bool:
    """Whether stored repetitions already satisfy the repeat rule (for --resume)."""
    decision = next_step(repeat, [r.fio for r in records], headline)
    return decision is not None and not decision.again


def next_step(repeat: Repeat, results: Sequence[FioResult], headline: str):
    """None: keep going (fixed count not reached); else the stats module's decision."""
    from ..metrics import headline_value
    from ..stats.core import RepeatDecision, should_repeat

    if repeat.until_rse_pct is None:
        done = len(results) >= repeat.count
        return RepeatDecision(again=False, reason=f"{len(results)} of {repeat.count} runs", converged=True) if done else None
    values = [v for v in (headline_value(r, headline) for r in results) if v is not None]
    if len(values) < len(results):
        # the headline metric is not measured (e.g. latency with gtod_reduce): fixed count instead
        done = len(results) >= repeat.min_runs
        reason = f"headline metric not measured; stopped after {len(results)} runs (min-runs)"
        return RepeatDecision(again=not done, reason=reason, converged=done)
    return should_repeat(values, target_rse_pct=repeat.until_rse_pct, min_runs=repeat.min_runs, max_runs=repeat.max_runs)


def not_converged(workload: str, reason: str, repeat: Repeat) -> Finding:
    from ..model import Finding

    return Finding(
        check="repeat-not-converged",
        severity="warning",
        message=f"the headline metric did not settle: {reason}",
        fix=f"raise --max-runs above {repeat.max_runs}, lengthen --runtime, or find the noise source (other load, thermal throttling, garbage collection)",
        workload=workload,
    )


def with_finding(record: ResultRecord, finding: Finding) -> ResultRecord:
    return dataclasses.replace(record, findings=tuple(record.findings) + (finding,))
