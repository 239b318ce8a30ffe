"""Pure: stored records -> a comparison of configurations (figures, ratios, verdicts).

A *configuration* is one column of a comparison: the results of one run, split
further by target when the run tested several targets, and by fio server
(``ResultRecord.host``) for client/server runs.  Within a configuration the
records of one workload are its repetitions.

For every workload, direction and metric (see :data:`metrics.METRICS`) a
:class:`Row` holds each configuration's values (one per repetition, taken with
:func:`metrics.direction_figures`), their :class:`stats.Summary`, and each
configuration against the baseline with :func:`stats.compare_samples` (Welch's
t-test).  Nothing here does I/O; rendering lives in :mod:`storbench.render.compare`.

Honesty rules carried through from :mod:`storbench.stats.core`: a difference is called
"better" or "worse" only when the test is significant; with a single run on either
side there is no p-value and no verdict, so such a row can never be a regression.

One convention for every percentage compare states, in words, tables, the gate and serve
(:func:`lead_pct`): the faster configuration's lead over the slower, as a percentage of the
slower one's figure -- "xfs leads ext4 by 72.2%" is xfs doing 1.722 times the IOPS or
bandwidth, or taking 1/1.722 of the latency.  In a table against a baseline it is signed from
the column's side: +72.2% the column leads the baseline by that much, -72.2% the baseline leads
the column by that much.  So one pair is one number wherever it is said.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .metrics import MEASURE_DIRECTION, METRICS, direction_figures, measure_directions
from .model import DIRECTIONS, EACH_HOST_UP_TO
from .record import ResultRecord
from .stats import core as stats
from .stats.core import Summary, summarize

if TYPE_CHECKING:
    from .storage import StorageInfo

__all__ = [
    "METRIC_LABELS",
    "Cell",
    "Comparison",
    "Config",
    "Regression",
    "Row",
    "compare",
    "configurations",
    "format_p",
    "lead_pct",
    "metric_label",
    "regressions",
    "summary_sentences",
]

#: How a person reads each metric (used in sentences and reports).
METRIC_LABELS: Mapping[str, str] = {
    "iops": "IOPS",
    "bw_bytes": "bandwidth",
    "lat_mean_ns": "mean latency",
    "clat_p99_ns": "p99 latency",
}



def metric_label(metric: str) -> str:
    """How a person reads a metric: fio's by :data:`METRIC_LABELS`, another benchmark's
    figure (a :class:`~storbench.model.Measure`) by its unit, as that benchmark names it."""
    return METRIC_LABELS.get(metric, metric)


_HEADLINE_METRIC = {"iops": "iops", "bw": "bw_bytes", "lat": "lat_mean_ns"}

#: Transfer size (bandwidth / IOPS) from which a workload is judged by bandwidth
#: when its headline is not given (the same 64 KiB line as metrics.default_headline).
_BW_HEADLINE_FROM_BYTES = 64 * 1024


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Config:
    """One column of a comparison."""

    key: str  # unique, stable: "run3", "run3:/mnt/x" (several targets), "run3@host" (client/server)
    name: str  # what a person reads: the run's label (else "run 3"), plus target/host when needed
    run_ids: tuple[int, ...]
    target: str | None  # the target of every record, or None (imports, or records without one)
    host: str | None
    storage: StorageInfo | None  # the storage description of its first record


@dataclass(frozen=True)
class Cell:
    """One configuration's figure on one row."""

    config: str  # Config.key
    values: tuple[float, ...]  # the metric, one value per repetition
    summary: Summary  # stats.summarize(values)


@dataclass(frozen=True)
class Row:
    """One workload, direction and metric across every configuration."""

    workload: str
    direction: str  # read | write | trim | mixed
    metric: str  # iops | bw_bytes | lat_mean_ns | clat_p99_ns
    higher_is_better: bool
    cells: tuple[Cell | None, ...]  # aligned with Comparison.configs; None = no such figure
    versus: tuple[stats.SampleComparison | None, ...]  # each config vs the baseline (None for the baseline and missing cells)
    leader: str | None  # Config.key with the best mean, or None when fewer than 2 configs have the figure
    leader_significant: bool  # the leader beats every other config significantly (p < alpha)


@dataclass(frozen=True)
class Comparison:
    configs: tuple[Config, ...]
    baseline: str  # Config.key
    rows: tuple[Row, ...]  # workload order as first seen, then direction order, then METRICS order
    test: str  # stats.WELCH_T_TEST
    alpha: float

    def config(self, key: str) -> Config:
        for c in self.configs:
            if c.key == key:
                return c
        raise KeyError(key)

    @property
    def baseline_index(self) -> int:
        return [c.key for c in self.configs].index(self.baseline)


@dataclass(frozen=True)
class Regression:
    """A configuration significantly worse than the baseline by more than the threshold."""

    workload: str
    direction: str
    metric: str
    config: str  # Config.key
    rel_diff_pct: float  # signed change of the mean: negative for less IOPS, positive for more latency
    p_value: float | None
    lead_pct: float = 0.0  # how far the baseline leads it (:func:`lead_pct`, from the configuration's side: negative)


# --------------------------------------------------------------------------- grouping


def comparable(records: Sequence[ResultRecord]) -> list[ResultRecord]:
    """The records that are compared with each other: a multi-host run (``storbench run --host``)
    stores its aggregate (host ``all``, the run's figure) and one result per host; the aggregate is
    never ranked against its own hosts.  Among several runs, a multi-host run is its aggregate;
    a multi-host run compared alone is its hosts, side by side, up to :data:`EACH_HOST_UP_TO`
    of them (beyond, its aggregate: a report of 256 configurations answers nothing; without them,
    its aggregate too)."""
    with_aggregate = {r.run_id for r in records if r.host == "all"}
    if not with_aggregate:
        return list(records)
    hosts = {r.host for r in records if r.host not in (None, "all")}
    if len({r.run_id for r in records}) > 1 or len(hosts) > EACH_HOST_UP_TO or not hosts:
        return [r for r in records if r.run_id not in with_aggregate or r.host == "all"]
    return [r for r in records if r.host != "all"]


def configurations(
    records: Sequence[ResultRecord], run_names: Mapping[int, str]
) -> list[tuple[Config, list[ResultRecord]]]:
    """Group records into configurations, in the order records are first seen.

    One configuration per run; a run that tested several targets gives one per
    target (key ``run3:/mnt/x``, name ``label (/mnt/x)``), and records with a
    ``host`` (client/server runs) one per host (key ``run3@host``), after :func:`comparable`
    kept the aggregate apart from its own hosts.  ``run_names``
    maps a run id to what a person calls it (its label, else ``"run N"``); runs
    missing from it are called ``"run N"``.  When two runs share a name (two runs
    with the same label) the run is added to the name: ``"nightly (run 4)"``.
    """
    records = comparable(records)
    targets_of: dict[int, set[str | None]] = {}
    for rec in records:
        targets_of.setdefault(rec.run_id, set()).add(rec.target)
    base_name = {rid: run_names.get(rid) or f"run {rid}" for rid in targets_of}
    runs_named: dict[str, set[int]] = {}
    for rid, name in base_name.items():
        runs_named.setdefault(name, set()).add(rid)

    groups: dict[tuple[int, str | None, str | None], list[ResultRecord]] = {}
    for rec in records:
        split_target = len(targets_of[rec.run_id]) > 1
        groups.setdefault((rec.run_id, rec.target if split_target else None, rec.host), []).append(rec)

    out: list[tuple[Config, list[ResultRecord]]] = []
    for (rid, target_of_group, host), members in groups.items():
        key = f"run{rid}"
        qualifiers: list[str] = []
        if len(targets_of[rid]) > 1:
            key += f":{target_of_group or ''}"
            qualifiers.append(target_of_group or "no target")
        if host:
            key += f"@{host}"
            qualifiers.append(host)
        if len(runs_named[base_name[rid]]) > 1:
            qualifiers.append(f"run {rid}")
        name = base_name[rid] + (f" ({', '.join(qualifiers)})" if qualifiers else "")
        targets = {r.target for r in members}
        target = next(iter(targets)) if len(targets) == 1 else None
        storage = members[0].storage
        config = Config(key=key, name=name, run_ids=(rid,), target=target, host=host, storage=storage)
        out.append((config, members))
    return out


# --------------------------------------------------------------------------- comparing


def _values(records: Sequence[ResultRecord], direction: str, metric: str) -> tuple[float, ...] | None:
    """One value per repetition, or None when some repetition did not measure it
    (the rule of metrics.repetition_stats)."""
    out: list[float] = []
    for rec in records:
        v = direction_figures(rec.fio).get(direction, {}).get(metric)
        if v is None:
            return None
        out.append(float(v))
    return tuple(out) or None


def _beats(winner: Cell, other: Cell, higher_is_better: bool, alpha: float) -> bool:
    """True when ``winner`` is significantly better than ``other`` (Welch's t-test)."""
    c = stats.compare_samples(other.values, winner.values, higher_is_better=higher_is_better, alpha=alpha)
    return c.verdict == stats.VERDICT_BETTER


def compare(
    groups: Sequence[tuple[Config, Sequence[ResultRecord]]], baseline: str | None = None, *, alpha: float = 0.05
) -> Comparison:
    """Compare configurations workload by workload.

    ``groups`` comes from :func:`configurations` (or is built by hand); ``baseline``
    is a :attr:`Config.key`, by default the first configuration.  For each workload
    (in first-seen order), direction and metric that at least one configuration
    measured, a :class:`Row` holds every configuration's values and each
    configuration against the baseline (``stats.compare_samples(baseline values,
    config values)``, Welch's t-test at ``alpha``).

    A configuration has a cell only when every repetition of the workload measured
    the figure (as in ``metrics.repetition_stats``).  The leader is the
    configuration with the best mean (ties go to the earlier one); it is
    ``leader_significant`` only when it is significantly better than every other
    configuration with the figure, which needs at least 2 runs on each side.

    Raises ``ValueError`` for no groups, duplicate keys or an unknown baseline.
    """
    if not groups:
        raise ValueError("nothing to compare: no configurations")
    configs = tuple(c for c, _ in groups)
    keys = [c.key for c in configs]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"duplicate configuration key {dup!r}")
    base = keys[0] if baseline is None else baseline
    if base not in keys:
        raise ValueError(f"unknown baseline {base!r} (configurations: {', '.join(keys)})")
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    bi = keys.index(base)

    workloads: list[str] = []
    by_config: list[dict[str, list[ResultRecord]]] = []
    for _, records in groups:
        per: dict[str, list[ResultRecord]] = {}
        for rec in records:
            if rec.workload not in workloads:
                workloads.append(rec.workload)
            per.setdefault(rec.workload, []).append(rec)
        by_config.append(per)

    rows: list[Row] = []
    for workload in workloads:
        # another benchmark's figures (Measure) come after fio's, each under its unit; those
        # whose tool does not say which way is better cannot be ranked and get no row
        measured: dict[str, bool | None] = {}
        for per in by_config:
            for rec in per.get(workload, ()):
                for unit, hib in measure_directions(rec.fio).items():
                    measured.setdefault(unit, hib)
        series = [(d, m, hib) for d in DIRECTIONS for m, hib in METRICS]
        series += [(MEASURE_DIRECTION, unit, hib) for unit, hib in measured.items() if hib is not None]
        if True:
            for direction, metric, hib in series:
                cells: list[Cell | None] = []
                for ci, per in enumerate(by_config):
                    values = _values(per.get(workload, ()), direction, metric)
                    cells.append(None if values is None else Cell(keys[ci], values, summarize(values)))
                if all(c is None for c in cells):
                    continue
                base_cell = cells[bi]
                versus = tuple(
                    None
                    if i == bi or cell is None or base_cell is None
                    else stats.compare_samples(base_cell.values, cell.values, higher_is_better=hib, alpha=alpha)
                    for i, cell in enumerate(cells)
                )
                present = [c for c in cells if c is not None]
                leader: str | None = None
                significant = False
                if len(present) >= 2:
                    best = present[0]
                    for c in present[1:]:
                        if (c.summary.mean > best.summary.mean) if hib else (c.summary.mean < best.summary.mean):
                            best = c
                    leader = best.config
                    significant = all(_beats(best, c, hib, alpha) for c in present if c is not best)
                rows.append(
                    Row(
                        workload=workload,
                        direction=direction,
                        metric=metric,
                        higher_is_better=hib,
                        cells=tuple(cells),
                        versus=versus,
                        leader=leader,
                        leader_significant=significant,
                    )
                )
    return Comparison(configs=configs, baseline=base, rows=tuple(rows), test=stats.WELCH_T_TEST, alpha=float(alpha))


# --------------------------------------------------------------------------- the regression gate


def regressions(cmp: Comparison, threshold_pct: float, metrics: Sequence[str] | None = None) -> tuple[Regression, ...]:
    """Rows on which a configuration is significantly worse than the baseline by more than ``threshold_pct``.

    A regression needs both: the verdict against the baseline is "worse" (Welch's
    t-test, p < alpha) *and* the relative difference is beyond the threshold - lower
    by more than ``threshold_pct`` percent for IOPS and bandwidth, higher by more than
    it for latencies.  "within noise", inconclusive and single-run rows never count: a
    gate that fails on noise teaches people to ignore it.  Every row is tested on its
    own (no correction for testing many rows), so the threshold is what keeps small,
    chance differences out; ``metrics`` limits the gate to some metrics (e.g. only
    ``iops`` and ``bw_bytes``, since tail latencies are the noisiest and each extra
    metric tested is another chance of a false alarm).  Raises ``ValueError`` for a
    negative or non-finite threshold.
    """
    if not (isinstance(threshold_pct, (int, float)) and math.isfinite(threshold_pct) and threshold_pct >= 0):
        raise ValueError(f"threshold_pct must be a number >= 0, got {threshold_pct!r}")
    found: list[Regression] = []
    for row in cmp.rows:
        if metrics is not None and row.metric not in metrics:
            continue
        for config, v in zip(cmp.configs, row.versus):
            if v is None or v.verdict != stats.VERDICT_WORSE or v.rel_diff_pct is None:
                continue
            lead = lead_pct(v.ratio, row.higher_is_better)
            if lead is not None and lead < -threshold_pct:  # the baseline leads it by more than the threshold
                found.append(Regression(row.workload, row.direction, row.metric, config.key, v.rel_diff_pct, v.p_value, lead))
    return tuple(found)


def lead_pct(ratio: float | None, higher_is_better: bool) -> float | None:
    """The one percentage of a pair (see the module doc), from a candidate's side: ``ratio`` is
    candidate / reference (IOPS, bandwidth, a latency); +P: the candidate leads by P % of the
    reference's figure (it is 1 + P/100 times as fast), -P: the reference leads the candidate by
    P % of the candidate's.  None when the ratio is unknown or not above 0.  Pure::

        lead_pct(1.722, True) == 72.2      # 1,722 vs 1,000 IOPS
        lead_pct(0.5807, True) == -72.2    # 1,000 vs 1,722 IOPS: the reference leads by 72.2 %
        lead_pct(0.5807, False) == 72.2    # 581 µs vs 1 ms: the candidate is 1.722 times as fast
    """
    if ratio is None or not math.isfinite(ratio) or ratio <= 0:
        return None
    speed = ratio if higher_is_better else 1.0 / ratio
    return 100.0 * (speed - 1.0) if speed >= 1.0 else -100.0 * (1.0 / speed - 1.0)


def _lead_of(leader: Cell, other: Cell, higher_is_better: bool) -> float | None:
    """How far ``leader`` leads ``other`` (:func:`lead_pct`, >= 0 for the better mean)."""
    if other.summary.mean == 0:
        return None
    return lead_pct(leader.summary.mean / other.summary.mean, higher_is_better)


# --------------------------------------------------------------------------- plain words


def format_p(p: float, alpha: float = 0.05) -> str:
    """A p-value with two significant digits ("0.41", "0.003"), "<0.001" below 0.001, and
    more digits when two would put it on the wrong side of ``alpha`` (0.0496 -> "0.0496")."""
    if p < 0.001:
        return "<0.001"
    for digits in range(2, 8):
        text = f"{p:.{digits}g}"
        if (float(text) < alpha) == (p < alpha):
            return text
    return repr(p)


def _p_eq(p: float, alpha: float) -> str:
    text = format_p(p, alpha)
    return f"p{text}" if text.startswith("<") else f"p={text}"


def _names(names: Sequence[str]) -> str:
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _ns(cells: Sequence[Cell]) -> str:
    ns = [c.summary.n for c in cells]
    return f"n={ns[0]} each" if len(set(ns)) == 1 else "n=" + "/".join(str(n) for n in ns)


def _headline_rows(cmp: Comparison, headlines: Mapping[str, str] | None) -> list[Row]:
    """One row per workload and direction: the one for the metric a person judges it by."""
    by_key: dict[tuple[str, str], dict[str, Row]] = {}
    for row in cmp.rows:
        by_key.setdefault((row.workload, row.direction), {})[row.metric] = row
    chosen: list[Row] = []
    for (workload, _direction), metrics in by_key.items():
        if _direction == MEASURE_DIRECTION:  # another benchmark's figures: each is its own headline
            chosen.extend(metrics.values())
            continue
        declared = (headlines or {}).get(workload)
        metric = _HEADLINE_METRIC.get(declared or "")
        if metric is None or metric not in metrics:
            metric = _transfer_size_headline(metrics)
        if metric is not None and metric in metrics:
            chosen.append(metrics[metric])
    return chosen


def headline_rows(cmp: Comparison, headlines: Mapping[str, str] | None = None) -> list[Row]:
    """The rows a person judges each workload by: one per workload and direction (fio's), and
    every figure of another benchmark (see :func:`summary_sentences` for the rule)."""
    return _headline_rows(cmp, headlines)


def _transfer_size_headline(metrics: Mapping[str, Row]) -> str | None:
    """IOPS when the mean transfer size (bandwidth / IOPS) is below 64 KiB, else bandwidth."""
    iops, bw = metrics.get("iops"), metrics.get("bw_bytes")
    if iops is None or bw is None:
        return "iops" if iops is not None else ("bw_bytes" if bw is not None else None)
    for ci, cb in zip(iops.cells, bw.cells):
        if ci is not None and cb is not None and ci.summary.mean > 0:
            return "bw_bytes" if cb.summary.mean / ci.summary.mean >= _BW_HEADLINE_FROM_BYTES else "iops"
    return "iops"


def _pct(x: float) -> str:
    return f"{x:.1f}%"


def summary_sentences(cmp: Comparison, headlines: Mapping[str, str] | None = None) -> list[str]:
    """Plain sentences about the headline figure of each workload and direction.

    Only one metric per workload and direction is put into words, the one a person
    judges the workload by: ``headlines`` maps a workload name to its headline
    ("iops", "bw" or "lat", e.g. ``metrics.default_headline`` of the options it ran
    with); a workload not in it is judged by IOPS when its mean transfer size
    (bandwidth / IOPS) is below 64 KiB and by bandwidth otherwise.  The table
    shows every metric.

    * a significant leader: "xfs leads rnd4k-q32t1-read read IOPS by 23.4% over ext4
      (Welch's t-test, p=0.003, n=3 each)." (with more than two configurations, over
      the runner-up; the lead as :func:`lead_pct` says it, for a latency too);
    * no significant difference: "ext4 and xfs are within noise on seq1m-q8t1-read
      read bandwidth (p=0.41)."; with more than two, the best one and those it does
      not beat;
    * single runs: "Single runs: no significance can be claimed for ... (a leads b by
      300.0%)."
    * a figure only one configuration has: "... was measured only in a."
    """
    names = {c.key: c.name for c in cmp.configs}
    order = {c.key: i for i, c in enumerate(cmp.configs)}
    out: list[str] = []
    for row in _headline_rows(cmp, headlines):
        what = (
            f"{row.workload} ({row.metric})"
            if row.direction == MEASURE_DIRECTION
            else f"{row.workload} {row.direction} {METRIC_LABELS[row.metric]}"
        )
        present = [c for c in row.cells if c is not None]
        if len(present) < 2:
            out.append(f"{what} was measured only in {names[present[0].config]}.")
            continue
        leader = next(c for c in present if c.config == row.leader)
        others = [c for c in present if c is not leader]
        hib = row.higher_is_better
        # the runner-up: the best mean among the others
        runner = others[0]
        for c in others[1:]:
            if (c.summary.mean > runner.summary.mean) if hib else (c.summary.mean < runner.summary.mean):
                runner = c
        if any(c.summary.n < 2 for c in present):
            single = [names[c.config] for c in present if c.summary.n < 2]
            out.append(
                f"Single runs: no significance can be claimed for {what} "
                f"({_names(single)} {'has' if len(single) == 1 else 'have'} one run; "
                f"{_lead_words(names[leader.config], names[runner.config], _lead_of(leader, runner, hib))})."
            )
            continue
        if row.leader_significant:
            vs = stats.compare_samples(runner.values, leader.values, higher_is_better=hib, alpha=cmp.alpha)
            assert vs.p_value is not None
            lead = _lead_of(leader, runner, hib)
            by = f" by {_pct(lead)} over" if lead is not None else " over"
            out.append(
                f"{names[leader.config]} leads {what}{by} {names[runner.config]} "
                f"({cmp.test}, {_p_eq(vs.p_value, cmp.alpha)}, {_ns(present)})."
            )
            continue
        # not significant against at least one other configuration
        tied: list[tuple[Cell, stats.SampleComparison]] = []
        for c in others:
            vs = stats.compare_samples(c.values, leader.values, higher_is_better=hib, alpha=cmp.alpha)
            if vs.verdict != stats.VERDICT_BETTER:
                tied.append((c, vs))
        tied.sort(key=lambda t: order[t[0].config])
        ps = [vs.p_value for _, vs in tied]
        if len(present) == 2:
            pair = sorted(present, key=lambda c: order[c.config])
            p = ps[0]
            detail = f" ({_p_eq(p, cmp.alpha)})" if p is not None else " (the test could not decide)"
            out.append(f"{names[pair[0].config]} and {names[pair[1].config]} are within noise on {what}{detail}.")
        else:
            parts = [
                names[c.config] + (f" ({_p_eq(vs.p_value, cmp.alpha)})" if vs.p_value is not None else "")
                for c, vs in tied
            ]
            out.append(
                f"{names[leader.config]} has the best mean on {what}, but is within noise of {_names(parts)}."
            )
    return out


def _lead_words(leader: str, runner: str, lead: float | None) -> str:
    """ "a leads b by 23.4%" (:func:`lead_pct`), "a equals b", "a leads b" (b's figure is 0)."""
    if lead is None:
        return f"{leader} leads {runner}"
    if lead == 0:
        return f"{leader} equals {runner}"
    return f"{leader} leads {runner} by {_pct(lead)}"


# --------------------------------------------------------------------------- verdicts: one line per workload


def _verdict_what(row: Row) -> str:
    if row.direction == MEASURE_DIRECTION:
        return f"{row.workload} ({row.metric})"
    return f"{row.workload} {row.direction} {METRIC_LABELS[row.metric]}"


def _significance(loser: Cell, leader: Cell, hib: bool, alpha: float) -> str:
    if leader.summary.n < 2 or loser.summary.n < 2:
        return "one run: no significance"
    vs = stats.compare_samples(loser.values, leader.values, higher_is_better=hib, alpha=alpha)
    if vs.p_value is None:
        return "the test could not decide"
    word = "significant" if vs.verdict == stats.VERDICT_BETTER else "within noise"
    p = format_p(vs.p_value, alpha)
    return f"{word}, p {p if p.startswith('<') else '= ' + p}".replace("p <", "p < ").replace("<  ", "< ")


#: findings that put a verdict in doubt: said beside it (the figure may not be the storage's)
CAVEAT_SEVERITIES = ("warning", "invalid")
#: warnings about how a run was done, not about what its figure measured: the report says them,
#: a verdict does not repeat them (the spread is already in its p-value)
NOT_CAVEATS = frozenset({"short-run", "high-variation", "randrepeat-on", "latency-not-measured", "iodepth-no-effect",
                         "steady-state-not-reached", "throughput-cliff", "btrfs-prealloc-uncompressed"})  # fmt: skip


def finding_caveats(records_by_config: Mapping[str, Sequence[ResultRecord]]) -> dict[tuple[str, str], tuple[str, ...]]:
    """Pure: per (configuration key, workload), the ids of the warning and invalid findings of its
    records that say the figure may not be the storage's (the aggregate's, for a many-hosts run;
    not :data:`NOT_CAVEATS`), in the order first found."""
    out: dict[tuple[str, str], dict[str, None]] = {}
    for key, records in records_by_config.items():
        for rec in records:
            if rec.host not in (None, "all"):
                continue
            for f in rec.findings:
                if f.severity in CAVEAT_SEVERITIES and f.check not in NOT_CAVEATS:
                    out.setdefault((key, rec.workload), {})[f.check] = None
    return {k: tuple(v) for k, v in out.items()}


def verdict_lines(cmp: Comparison, headlines: Mapping[str, str] | None = None,
                  caveats: Mapping[tuple[str, str], Sequence[str]] | None = None) -> list[str]:  # fmt: skip
    """The answer a study exists for, one line per workload (a mixed workload on its larger
    direction), on the figure a person judges the workload by (the rule of
    :func:`summary_sentences`): the leader, by how much it leads each other configuration
    (the runner-up first; :func:`lead_pct`, the one convention) and whether that is real::

        gitlab read IOPS: xfs leads ext4 by 19.0% (significant, p = 0.002), btrfs by 400.0% (significant, p < 0.001)

    A latency leads by being lower, in the same convention (1 ms vs 1.19 ms: "leads by 19.0%").
    A figure only one configuration has says so; with single runs nothing is called significant. ``caveats``
    (:func:`finding_caveats`): the findings of each configuration's workload that put its figure
    in doubt, said after the verdict ("caveat: run 2 host-cpu-busy; run 3 page-cache").
    """
    names = {c.key: c.name for c in cmp.configs}
    out: list[str] = []
    if cmp.rows and not any(sum(c is not None for c in row.cells) >= 2 for row in cmp.rows):
        ran = {c.key: list(dict.fromkeys(row.workload for row in cmp.rows for cell in row.cells if cell is not None and cell.config == c.key))
               for c in cmp.configs}  # fmt: skip
        return ["no workload in common: " + "; ".join(f"{names[k]} ran {', '.join(ws)}" for k, ws in ran.items() if ws)]
    # one line per workload: a mixed workload is judged on its larger direction (the most
    # I/O in the first configuration that has the figure); another benchmark's figures each
    chosen: list[Row] = []
    for row in _headline_rows(cmp, headlines):
        same = next((i for i, r in enumerate(chosen) if r.workload == row.workload and r.direction != MEASURE_DIRECTION
                     and row.direction != MEASURE_DIRECTION and r.metric == row.metric), None)  # fmt: skip
        if same is None:
            chosen.append(row)
            continue

        def size(r: Row) -> float:
            first = next((c for c in r.cells if c is not None), None)
            return first.summary.mean if first is not None else 0.0

        if size(row) > size(chosen[same]):
            chosen[same] = row
    for row in chosen:
        what = _verdict_what(row)
        present = [c for c in row.cells if c is not None]
        if len(present) < 2:
            out.append(f"{what}: only {names[present[0].config]} has it")
            continue
        hib = row.higher_is_better
        leader = next(c for c in present if c.config == row.leader)
        others = sorted((c for c in present if c is not leader), key=lambda c: -c.summary.mean if hib else c.summary.mean)
        parts = []
        for c in others:
            lead = _lead_of(leader, c, hib)
            by = f" by {_pct(lead)}" if lead is not None else ""
            parts.append(f"{names[c.config]}{by} ({_significance(c, leader, hib, cmp.alpha)})")
        doubts = [f"{names[c.config]} {', '.join(caveats[(c.config, row.workload)])}" for c in present
                  if caveats and caveats.get((c.config, row.workload))]  # fmt: skip
        out.append(f"{what}: {names[leader.config]} leads " + ", ".join(parts) + (f" — caveat: {'; '.join(doubts)}" if doubts else ""))
    return out


# --------------------------------------------------------------------------- is it like for like?

#: job options that place a job or log it, not what it measures
_PLACEMENT_OPTIONS = frozenset({
    "filename", "directory", "name", "uri", "pool", "rbdname", "clientname", "clustername", "volume", "brick",
    "hostname", "port", "unlink", "filename_format", "exitall_on_error", "log_avg_msec", "per_job_logs", "nfs_url",
    "log_hist_msec", "log_max_value", "log_offset", "log_prio", "log_unix_epoch",
    # a replayed trace: where its requests go, and the log storbench wrote for the run (a path of its own)
    "replay_redirect", "read_iolog",
})  # fmt: skip
#: storage description fields that are settings of the host or of fio, not of the storage under test
_CONFOUNDERS = ("host.",)


@dataclass(frozen=True)
class Difference:
    """A way the compared configurations differ.

    ``variable`` differences are the study's own: the storage under test (filesystem,
    devices, pool, share, cluster settings).  The others (a different kernel, fio version,
    CPU, memory, or the same workload run with other options) mean the comparison is not like
    for like, and are shown as warnings.
    """

    field: str  # "filesystem.fstype", "host.kernel", "fio version", "option size"
    values: tuple[str, ...]  # one per configuration, aligned with Comparison.configs ("-": not known)
    variable: bool
    workload: str | None = None  # for job options: the workload whose options differ


def config_differences(cmp: Comparison, records_by_config: Mapping[str, Sequence[ResultRecord]]) -> tuple[Difference, ...]:
    """How the configurations differ (pure): storage settings (via
    :func:`storbench.storage.differences` against the first described configuration), fio
    versions, and the job options of each workload measured by several configurations."""
    from .storage import differences

    keys = [c.key for c in cmp.configs]
    out: list[Difference] = []
    described = [c for c in cmp.configs if c.storage is not None]
    if len(described) > 1:
        ref = described[0]
        table: dict[str, dict[str, str]] = {}
        for c in described[1:]:
            for name, va, vb in differences(ref.storage, c.storage):
                table.setdefault(name, {ref.key: va})[c.key] = vb
        for name, values in table.items():
            row = tuple(values.get(k, values[ref.key]) if cmp.config(k).storage is not None else "-" for k in keys)
            out.append(Difference(name, row, variable=not name.startswith(_CONFOUNDERS)))
    versions = []
    for k in keys:
        found = sorted({r.fio.fio_version for r in records_by_config.get(k, ()) if r.fio.fio_version})
        versions.append(", ".join(found) or "-")
    known = {v for v in versions if v != "-"}
    if len(known) > 1 and not any(d.field == "host.fio_version" for d in out):
        out.append(Difference("fio version", tuple(versions), variable=False))
    workloads = list(dict.fromkeys(r.workload for k in keys for r in records_by_config.get(k, ())))
    for w in workloads:
        # a configuration whose records carry no options (an import of bare outputs) is not known
        firsts = [next((r for r in records_by_config.get(k, ()) if r.workload == w and r.options), None) for k in keys]
        have = [r for r in firsts if r is not None]
        if len(have) < 2:
            continue
        options = list(dict.fromkeys(o for r in have for o in r.options if o not in _PLACEMENT_OPTIONS and "log" not in o))
        for o in options:
            shown = tuple("-" if r is None else ("(not set)" if o not in r.options else (r.options[o] or "(set)")) for r in firsts)  # fmt: skip
            if len({v for v, r in zip(shown, firsts) if r is not None}) > 1:
                out.append(Difference(f"option {o}", shown, variable=False, workload=w))
    return tuple(out)
