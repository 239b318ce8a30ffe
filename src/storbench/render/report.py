"""The report of stored runs, assembled once (pure): :func:`comparison_of` (the runs' results as
configurations, compared against a baseline) and :func:`report_html` (the self-contained page).
``storbench report``, the report ``storbench run``/``curve``/``matrix`` leave behind and
``storbench serve``'s report pages all go through these two; each reads the records, run infos
and metadata from the store at its own edge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from storbench.jsontypes import JSONMapping

from ..compare import Comparison, Config, compare, configurations
from ..errors import UsageError
from ..model import RunInfo
from ..record import ResultRecord


def comparison_of(records: Sequence[ResultRecord], runs: Mapping[int, RunInfo], baseline: str | None = None) -> Comparison:
    """The runs' results as configurations (one per run, or per target of a run that had several),
    compared against ``baseline`` (a configuration's key, a label or a run id; default: the first).
    One line, a :class:`UsageError`, when there is nothing to report or the baseline names nothing."""
    if not records:
        which = ", ".join(f"run {r}" for r in runs)
        raise UsageError(f"nothing to report: {which} {'has' if len(runs) == 1 else 'have'} no stored results")
    groups = configurations(records, {rid: info.label or f"run {rid}" for rid, info in runs.items()})
    key = baseline_key([c for c, _ in groups], baseline) if baseline is not None else None
    return compare(groups, baseline=key)


def baseline_key(configs: Sequence[Config], ref: str) -> str:
    """A configuration named by its key ("run3"), its name (a label), or a run id ("3")."""
    for c in configs:
        if ref in (c.key, c.name):
            return c.key
    by_run = [c for c in configs if ref.isdigit() and int(ref) in c.run_ids]
    if len(by_run) == 1:
        return by_run[0].key
    choices = ", ".join(f"{c.name!r} ({c.key})" for c in configs)
    raise UsageError(f"--baseline {ref!r} names no configuration of this report (choose from {choices})")


def report_html(records: Sequence[ResultRecord], runs: Mapping[int, RunInfo], metas: Mapping[int, JSONMapping], *,
                baseline: str | None = None, title: str | None = None, generated_at: str | None = None) -> str:  # fmt: skip
    """The HTML report of ``records`` (the runs' results, in order) with their run infos and
    metadata (curves, steady-state windows)."""
    from .html import format_html_report

    cmp = comparison_of(records, runs, baseline)
    return format_html_report(records, cmp, title=title, generated_at=generated_at, runs=runs, metas=metas)
