"""Tests for storbench.compare and storbench.render.compare (pure: no fio, no database).

Records are built by hand with known figures; every mean, relative difference and
p-value is checked against numpy / scipy.stats.ttest_ind(equal_var=False) computed
here, independently of storbench.stats.core.  The Markdown view is a golden file:
run with STORBENCH_REGEN_GOLDEN=1 to rewrite tests/data/golden/compare.md, then
review the diff.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from rich.console import Console

from storbench.compare import (
    Cell,
    Comparison,
    Config,
    Regression,
    Row,
    compare,
    configurations,
    format_p,
    headline_rows,
    regressions,
    summary_sentences,
    verdict_lines,
)
from storbench.fio import parse_output
from storbench.model import DirectionStats, FioResult, JobResult, LatencyStats
from storbench.record import ResultRecord
from storbench.render.compare import (
    CSV_COLUMNS,
    compare_to_json,
    format_compare_csv,
    format_compare_markdown,
    format_compare_table,
)
from storbench.stats.core import VERDICT_BETTER, VERDICT_NOISE, VERDICT_SINGLE_RUN, VERDICT_WORSE, WELCH_T_TEST

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden"

pytestmark = pytest.mark.filterwarnings("error")


# --------------------------------------------------------------------------- building records


def _direction(name: str, iops: float, bs: int, lat: bool) -> DirectionStats:
    mean_ns = 1e9 / iops  # queue depth 1: latency is the inverse of IOPS
    lat_stats = (
        LatencyStats(min_ns=mean_ns / 2, max_ns=mean_ns * 5, mean_ns=mean_ns, stddev_ns=mean_ns / 10, percentiles={"99.0": 2 * mean_ns})
        if lat
        else None
    )
    return DirectionStats(
        direction=name,
        io_bytes=int(iops * bs),
        bw_bytes=iops * bs,
        iops=iops,
        runtime_ms=1000,
        total_ios=int(iops),
        clat_ns=lat_stats,
        lat_ns=lat_stats,
    )


def rec(
    run_id: int,
    workload: str,
    read: float | None = None,
    write: float | None = None,
    *,
    bs: int = 4096,
    lat: bool = True,
    target: str | None = "/t",
    host: str | None = None,
    rep: int = 0,
    storage=None,
) -> ResultRecord:
    dirs = {}
    if read is not None:
        dirs["read"] = _direction("read", read, bs, lat)
    if write is not None:
        dirs["write"] = _direction("write", write, bs, lat)
    result = FioResult(fio_version="fio-3.33", jobs=(JobResult(name=workload, directions=dirs),), format="json")
    return ResultRecord(run_id=run_id, workload=workload, target=target, fio=result, raw_output="{}", repetition=rep, host=host, storage=storage)


def reps(run_id: int, workload: str, reads=(), writes=None, **kw) -> list[ResultRecord]:
    writes = writes or [None] * len(reads)
    return [rec(run_id, workload, r, w, rep=i, **kw) for i, (r, w) in enumerate(zip(reads, writes))]


def cfg(key: str, name: str | None = None) -> Config:
    return Config(key=key, name=name or key, run_ids=(int(key.removeprefix("run")),), target="/t", host=None, storage=None)


def row_of(cmp: Comparison, workload: str, direction: str, metric: str) -> Row:
    [row] = [r for r in cmp.rows if (r.workload, r.direction, r.metric) == (workload, direction, metric)]
    return row


def welch_p(a, b) -> float:
    return float(scipy.stats.ttest_ind(a, b, equal_var=False).pvalue)


A = [1000.0, 1010.0, 990.0]
B = [1200.0, 1230.0, 1170.0]  # +20 %, clearly significant
C = [1005.0, 1100.0, 930.0]  # same mean region as A, noisy


# --------------------------------------------------------------------------- configurations


def test_one_config_per_run_named_by_label_or_run_number():
    records = reps(1, "w", A) + reps(2, "w", B) + reps(3, "w", C)
    groups = configurations(records, {1: "ext4", 2: "xfs"})
    configs = [c for c, _ in groups]
    assert [c.key for c in configs] == ["run1", "run2", "run3"]
    assert [c.name for c in configs] == ["ext4", "xfs", "run 3"]
    assert [c.run_ids for c in configs] == [(1,), (2,), (3,)]
    assert all(c.target == "/t" and c.host is None for c in configs)
    assert [len(m) for _, m in groups] == [3, 3, 3]


def test_a_run_with_two_targets_gives_two_configs():
    records = reps(5, "w", A, target="/mnt/a") + reps(5, "w", B, target="/mnt/b")
    groups = configurations(records, {5: "fs"})
    assert [(c.key, c.name, c.target) for c, _ in groups] == [
        ("run5:/mnt/a", "fs (/mnt/a)", "/mnt/a"),
        ("run5:/mnt/b", "fs (/mnt/b)", "/mnt/b"),
    ]
    cmp = compare(groups)
    assert len(cmp.configs) == 2 and cmp.baseline == "run5:/mnt/a"


def test_hosts_split_configs_and_storage_comes_from_the_first_record():
    records = [rec(4, "w", 100, host="srv1", storage="S1"), rec(4, "w", 200, host="srv2", storage="S2"), rec(4, "w", 110, host="srv1", rep=1)]
    groups = configurations(records, {4: "cs"})
    assert [(c.key, c.name, c.host, c.storage) for c, _ in groups] == [
        ("run4@srv1", "cs (srv1)", "srv1", "S1"),
        ("run4@srv2", "cs (srv2)", "srv2", "S2"),
    ]
    assert [len(m) for _, m in groups] == [2, 1]


def test_two_runs_with_the_same_label_are_told_apart():
    groups = configurations(reps(1, "w", A) + reps(2, "w", B), {1: "nightly", 2: "nightly"})
    assert [c.name for c, _ in groups] == ["nightly (run 1)", "nightly (run 2)"]
    assert len({c.key for c, _ in groups}) == 2


# --------------------------------------------------------------------------- compare: figures against scipy


def test_means_rel_diffs_and_p_values_match_scipy():
    groups = configurations(reps(1, "rnd", A) + reps(2, "rnd", B), {1: "ext4", 2: "xfs"})
    cmp = compare(groups)
    assert cmp.test == WELCH_T_TEST == "Welch's t-test" and cmp.alpha == 0.05
    assert cmp.baseline == "run1"
    row = row_of(cmp, "rnd", "read", "iops")
    base, other = row.cells
    assert base.values == tuple(A) and other.values == tuple(B)
    assert base.summary.mean == pytest.approx(np.mean(A), rel=1e-12)
    assert other.summary.stddev == pytest.approx(np.std(B, ddof=1), rel=1e-12)
    assert row.versus[0] is None
    v = row.versus[1]
    assert v.rel_diff_pct == pytest.approx(100 * (np.mean(B) - np.mean(A)) / np.mean(A), rel=1e-12)
    assert v.ratio == pytest.approx(np.mean(B) / np.mean(A), rel=1e-12)
    assert v.p_value == pytest.approx(welch_p(A, B), rel=1e-9)
    assert v.p_value < 0.05 and v.verdict == VERDICT_BETTER
    assert row.leader == "run2" and row.leader_significant
    # bandwidth = iops * 4096 here, so the same verdict; latency is lower-is-better
    bw = row_of(cmp, "rnd", "read", "bw_bytes")
    assert bw.cells[1].summary.mean == pytest.approx(np.mean(B) * 4096, rel=1e-12)
    assert bw.versus[1].verdict == VERDICT_BETTER
    lat = row_of(cmp, "rnd", "read", "lat_mean_ns")
    assert not lat.higher_is_better
    lat_a, lat_b = [1e9 / x for x in A], [1e9 / x for x in B]
    assert lat.versus[1].p_value == pytest.approx(welch_p(lat_a, lat_b), rel=1e-9)
    assert lat.versus[1].verdict == VERDICT_BETTER  # lower latency is better
    assert lat.leader == "run2"


def test_within_noise_is_not_called_a_difference():
    cmp = compare(configurations(reps(1, "w", A) + reps(2, "w", C), {}))
    row = row_of(cmp, "w", "read", "iops")
    v = row.versus[1]
    assert v.p_value == pytest.approx(welch_p(A, C), rel=1e-9)
    assert v.p_value > 0.05 and v.verdict == VERDICT_NOISE
    assert row.leader == "run2"  # best mean ...
    assert not row.leader_significant  # ... but not significantly


def test_worse_verdict_for_the_slower_config():
    cmp = compare(configurations(reps(1, "w", B) + reps(2, "w", A), {}))
    v = row_of(cmp, "w", "read", "iops").versus[1]
    assert v.verdict == VERDICT_WORSE
    assert v.rel_diff_pct == pytest.approx(100 * (np.mean(A) - np.mean(B)) / np.mean(B), rel=1e-12)


def test_single_runs_have_no_p_value_and_no_significant_leader():
    cmp = compare(configurations([rec(1, "w", 1000)] + [rec(2, "w", 3000)], {}))
    row = row_of(cmp, "w", "read", "iops")
    assert row.versus[1].verdict == VERDICT_SINGLE_RUN and row.versus[1].p_value is None
    assert row.versus[1].rel_diff_pct == pytest.approx(200.0)
    assert row.leader == "run2" and not row.leader_significant


def test_leader_must_beat_every_other_config_significantly():
    # run2 (B) beats run1 (A) clearly, but not run3 (B plus noise)
    noisy_b = [1150.0, 1300.0, 1100.0]
    cmp = compare(configurations(reps(1, "w", A) + reps(2, "w", B) + reps(3, "w", noisy_b), {}))
    row = row_of(cmp, "w", "read", "iops")
    assert row.leader == "run2"
    assert welch_p(A, B) < 0.05 and welch_p(noisy_b, B) > 0.05
    assert not row.leader_significant
    assert row.versus[1].verdict == VERDICT_BETTER
    assert row.versus[2].p_value == pytest.approx(welch_p(A, noisy_b), rel=1e-9)
    # without the close competitor the leader is significant
    cmp2 = compare(configurations(reps(1, "w", A) + reps(2, "w", B) + reps(3, "w", C), {}))
    assert row_of(cmp2, "w", "read", "iops").leader_significant


def test_missing_cells_and_row_order():
    records = (
        reps(1, "seq", [100.0, 101.0], bs=1 << 20)
        + reps(1, "rnd", A, writes=[500.0, 510.0, 490.0])
        + reps(2, "rnd", B, writes=[600.0, 610.0, 590.0])
        + reps(2, "only-b", [42.0, 43.0])
    )
    cmp = compare(configurations(records, {1: "old", 2: "new"}))
    order = [(r.workload, r.direction, r.metric) for r in cmp.rows]
    metrics = ["iops", "bw_bytes", "lat_mean_ns", "clat_p99_ns"]
    assert order == (
        [("seq", "read", m) for m in metrics]
        + [("rnd", "read", m) for m in metrics]
        + [("rnd", "write", m) for m in metrics]
        + [("only-b", "read", m) for m in metrics]
    )
    only = row_of(cmp, "only-b", "read", "iops")
    assert only.cells[0] is None and only.cells[1].values == (42.0, 43.0)
    assert only.versus == (None, None)
    assert only.leader is None and not only.leader_significant
    seq = row_of(cmp, "seq", "read", "bw_bytes")
    assert seq.cells[1] is None and seq.versus == (None, None) and seq.leader is None


def test_unmeasured_latency_gives_no_latency_rows():
    records = reps(1, "w", A, lat=False) + reps(2, "w", B, lat=False)
    cmp = compare(configurations(records, {}))
    assert {r.metric for r in cmp.rows} == {"iops", "bw_bytes"}


def test_a_figure_missing_in_one_repetition_gives_no_cell():
    records = [rec(1, "w", 1000, rep=0), rec(1, "w", 1010, rep=1, lat=False)] + reps(2, "w", B)
    cmp = compare(configurations(records, {}))
    lat = row_of(cmp, "w", "read", "lat_mean_ns")
    assert lat.cells[0] is None and lat.cells[1] is not None
    assert row_of(cmp, "w", "read", "iops").cells[0].values == (1000.0, 1010.0)


def test_baseline_selection():
    groups = configurations(reps(1, "w", A) + reps(2, "w", B), {})
    cmp = compare(groups, "run2")
    assert cmp.baseline == "run2"
    row = row_of(cmp, "w", "read", "iops")
    assert row.versus[1] is None
    assert row.versus[0].verdict == VERDICT_WORSE
    assert row.versus[0].p_value == pytest.approx(welch_p(B, A), rel=1e-9)
    with pytest.raises(ValueError, match=r"unknown baseline 'run9'.*run1, run2"):
        compare(groups, "run9")
    with pytest.raises(ValueError, match="no configurations"):
        compare([])
    with pytest.raises(ValueError, match="duplicate"):
        compare([groups[0], groups[0]])


def test_real_fio_outputs_randrw_rows():
    """Parsed fixtures (fio 3.33 randrw 70/30): read and write rows, figures as direction_figures gives them."""
    text = (DATA / "fio-json" / "h_randrw.json").read_text()
    result = parse_output(text)
    r1 = ResultRecord(run_id=1, workload="randrw", target="/t", fio=result, raw_output=text)
    r2 = ResultRecord(run_id=2, workload="randrw", target="/t", fio=result, raw_output=text)
    cmp = compare(configurations([r1, r2], {1: "a", 2: "b"}))
    directions = {r.direction for r in cmp.rows}
    assert directions == {"read", "write"}
    read = result.jobs[0].directions["read"]
    row = row_of(cmp, "randrw", "read", "iops")
    assert row.cells[0].values == (read.iops,)
    assert row.versus[1].rel_diff_pct == 0.0 and row.versus[1].verdict == VERDICT_SINGLE_RUN


# --------------------------------------------------------------------------- regressions


def _gate(base, cand, threshold=10.0, **kw):
    cmp = compare(configurations(reps(1, "w", base, **kw) + reps(2, "w", cand, **kw), {1: "old", 2: "new"}))
    return regressions(cmp, threshold)


def test_regression_when_significantly_worse_beyond_threshold():
    found = _gate(B, A, lat=False)  # new is ~16.7 % slower, clearly significant
    assert {r.metric for r in found} == {"iops", "bw_bytes"}
    r = next(r for r in found if r.metric == "iops")
    assert r == Regression("w", "read", "iops", "run2", pytest.approx(100 * (np.mean(A) / np.mean(B) - 1)), pytest.approx(welch_p(B, A), rel=1e-9),
                           pytest.approx(-100 * (np.mean(B) / np.mean(A) - 1)))  # fmt: skip
    assert r.rel_diff_pct < -10 and r.lead_pct < -10  # the baseline leads it by its lead_pct (the one convention)


def test_latency_regression_is_higher_latency():
    found = _gate(B, A)  # A has lower IOPS, so higher latency (1e9 / iops)
    lat = [r for r in found if r.metric == "lat_mean_ns"]
    assert len(lat) == 1 and lat[0].rel_diff_pct > 10


def test_gate_limited_to_chosen_metrics():
    cmp = compare(configurations(reps(1, "w", B) + reps(2, "w", A), {1: "old", 2: "new"}))
    every = regressions(cmp, 10.0)
    assert {r.metric for r in every} >= {"iops", "lat_mean_ns"}
    only_iops = regressions(cmp, 10.0, ["iops"])
    assert [r.metric for r in only_iops] == ["iops"]
    assert only_iops[0] == next(r for r in every if r.metric == "iops")
    assert regressions(cmp, 10.0, ["clat_p99_ns"]) == tuple(r for r in every if r.metric == "clat_p99_ns")


def test_no_regression_when_better():
    assert _gate(A, B) == ()


def test_no_regression_below_threshold():
    assert _gate(B, A, threshold=20.0) == ()


def test_no_regression_when_within_noise():
    worse_but_noisy = [700.0, 1300.0, 800.0]  # mean 933: 7 % below A, but p > 0.05
    assert welch_p(A, worse_but_noisy) > 0.05
    assert _gate(A, worse_but_noisy, threshold=1.0) == ()


def test_no_regression_on_single_runs_however_large():
    cmp = compare(configurations([rec(1, "w", 4000)] + [rec(2, "w", 1000)], {}))
    assert regressions(cmp, 0.0) == ()


def test_regression_threshold_must_be_a_number_from_zero():
    cmp = compare(configurations(reps(1, "w", A) + reps(2, "w", B), {}))
    with pytest.raises(ValueError):
        regressions(cmp, -1)
    with pytest.raises(ValueError):
        regressions(cmp, float("nan"))


# --------------------------------------------------------------------------- sentences


def test_sentence_for_a_significant_leader_with_scipy_p():
    cmp = compare(configurations(reps(1, "rnd4k", A) + reps(2, "rnd4k", B), {1: "ext4", 2: "xfs"}))
    [s] = summary_sentences(cmp)
    pct = 100 * (np.mean(B) / np.mean(A) - 1)
    p = format_p(welch_p(A, B))
    assert s == f"xfs leads rnd4k read IOPS by {pct:.1f}% over ext4 (Welch's t-test, p={p}, n=3 each)."


def test_sentence_within_noise_and_bandwidth_for_big_blocks():
    records = reps(1, "seq1m", A, bs=1 << 20) + reps(2, "seq1m", C, bs=1 << 20)
    cmp = compare(configurations(records, {1: "ext4", 2: "xfs"}))
    [s] = summary_sentences(cmp)
    assert s == f"ext4 and xfs are within noise on seq1m read bandwidth (p={format_p(welch_p(A, C))})."


def test_sentence_lower_latency_with_declared_headline():
    cmp = compare(configurations(reps(1, "journal", A) + reps(2, "journal", B), {1: "old", 2: "new"}))
    [s] = summary_sentences(cmp, {"journal": "lat"})
    lat_a, lat_b = [1e9 / x for x in A], [1e9 / x for x in B]
    pct = 100 * (np.mean(lat_a) / np.mean(lat_b) - 1)  # the faster's lead over the slower, as for IOPS
    assert s.startswith(f"new leads journal read mean latency by {pct:.1f}% over old (Welch's t-test, p=")


def test_sentences_for_single_runs_and_missing_figures():
    records = [rec(1, "w", 1000), rec(2, "w", 4000), rec(2, "x", 10)]
    cmp = compare(configurations(records, {1: "a", 2: "b"}))
    assert summary_sentences(cmp) == [
        "Single runs: no significance can be claimed for w read IOPS (a and b have one run; b leads a by 300.0%).",
        "x read IOPS was measured only in b.",
    ]


def test_sentence_with_three_configs_names_the_ones_within_noise():
    noisy_b = [1150.0, 1300.0, 1100.0]
    cmp = compare(configurations(reps(1, "w", A) + reps(2, "w", B) + reps(3, "w", noisy_b), {1: "a", 2: "b", 3: "c"}))
    [s] = summary_sentences(cmp)
    assert s == f"b has the best mean on w read IOPS, but is within noise of c (p={format_p(welch_p(noisy_b, B))})."


def test_format_p_never_rounds_across_alpha():
    assert format_p(0.41) == "0.41"
    assert format_p(0.003) == "0.003"
    assert format_p(0.0004) == "<0.001"
    assert format_p(0.0496) == "0.0496"  # "0.05" would look like not significant
    assert format_p(0.05) == "0.05"
    assert format_p(1.0) == "1"


# --------------------------------------------------------------------------- renderers


def _golden_comparison() -> Comparison:
    """ext4 (baseline), xfs (better on rnd4k, significantly ahead of everyone on rnd4k
    writes), zfs|lz4 (a single run), a sequential workload within noise, and a workload
    only xfs ran."""
    records = (
        reps(1, "rnd4k-q32t1-read", A)
        + reps(1, "seq1m-q8t1-read", [2000.0, 2010.0, 1990.0], bs=1 << 20, lat=False)
        + reps(2, "rnd4k-q32t1-read", B)
        + reps(2, "seq1m-q8t1-read", [2005.0, 2100.0, 1930.0], bs=1 << 20, lat=False)
        + [rec(1, "rnd4k-q1t1-write", None, w, rep=i) for i, w in enumerate([300.0, 310.0, 305.0])]
        + [rec(2, "rnd4k-q1t1-write", None, w, rep=i) for i, w in enumerate([400.0, 410.0, 395.0])]
        + [rec(2, "fsync-only", None, w, rep=i) for i, w in enumerate([50.0, 52.0])]
        + [rec(3, "rnd4k-q32t1-read", 900.0)]
    )
    return compare(configurations(records, {1: "ext4", 2: "xfs", 3: "zfs|lz4"}))


def test_markdown_golden():
    text = format_compare_markdown(_golden_comparison())
    path = GOLDEN / "compare.md"
    if os.environ.get("STORBENCH_REGEN_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), "run with STORBENCH_REGEN_GOLDEN=1 and review the diff"


def test_markdown_is_a_well_formed_table():
    text = format_compare_markdown(_golden_comparison())
    table = [line for line in text.splitlines() if line.startswith("|")]
    widths = {len(line.replace("\\|", "").split("|")) for line in table}
    assert len(widths) == 1  # every line has the same number of columns (escaped pipes aside)
    assert "zfs\\|lz4" in table[0]
    assert len(table) == 2 + len(_golden_comparison().rows)


def _terminal(cmp: Comparison, rows=None, width: int = 120) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, no_color=True)
    for line in verdict_lines(cmp):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    console.print(format_compare_table(cmp, rows))
    return buf.getvalue()


def test_terminal_table_shows_figures_differences_and_verdicts():
    cmp = _golden_comparison()
    out = _terminal(cmp)
    for text in ("ext4 (baseline)", "+20.0% better", "n=1", "noise", "★", "☆", "1000 ±1.0%"):
        assert text in out, text
    table = out[out.index("comparison:"):]
    assert max(len(line) for line in table.splitlines()) <= 120  # three configurations in 120 columns
    path = GOLDEN / "compare-terminal.txt"
    if os.environ.get("STORBENCH_REGEN_GOLDEN"):
        path.write_text(out, encoding="utf-8")
    assert out == path.read_text(encoding="utf-8"), "run with STORBENCH_REGEN_GOLDEN=1 and review the diff"


def test_verdict_lines_by_hand():
    cmp = _golden_comparison()
    lines = verdict_lines(cmp)
    # rnd4k-q32t1-read: xfs 1200 vs ext4 1000 (leads by 20%), zfs|lz4 a single run of 900 (1200 leads it by 33.3%)
    by = {line.split(":")[0]: line for line in lines}
    assert by["rnd4k-q32t1-read read IOPS"].startswith("rnd4k-q32t1-read read IOPS: xfs leads ext4 by 20.0% (significant")
    assert by["rnd4k-q32t1-read read IOPS"].endswith(", zfs|lz4 by 33.3% (one run: no significance)")
    assert "within noise" in by["seq1m-q8t1-read read bandwidth"]
    assert by["fsync-only write IOPS"] == "fsync-only write IOPS: only xfs has it"


def test_findings_that_put_a_figure_in_doubt_follow_its_verdict():
    """Two runs both flagged host-cpu-busy are not called different without saying so (issue 40)."""
    from storbench.compare import finding_caveats
    from storbench.model import Finding

    busy = Finding(check="host-cpu-busy", severity="warning", message="m", fix="f")
    note = Finding(check="no-ramp-time", severity="info", message="m", fix="f")
    one = [dataclasses.replace(r, findings=(busy, note)) for r in reps(1, "w", [1000.0, 1010.0, 990.0])]
    two = [dataclasses.replace(r, findings=(busy,)) for r in reps(2, "w", [2000.0, 2020.0, 1980.0])]
    host_only = [dataclasses.replace(rec(2, "w", 5.0, host="h1"), findings=(dataclasses.replace(busy, check="straggler"),))]
    groups = configurations(one + two + host_only, {1: "ext4", 2: "xfs"})
    caveats = finding_caveats({c.key: list(m) for c, m in groups})
    assert caveats == {("run1", "w"): ("host-cpu-busy",), ("run2", "w"): ("host-cpu-busy",)}  # info and a host's own left out
    [line] = verdict_lines(compare(groups), caveats=caveats)
    assert line.startswith("w read IOPS: xfs leads ext4 by 100.0% (significant")
    assert line.endswith(" — caveat: ext4 host-cpu-busy; xfs host-cpu-busy")
    assert verdict_lines(compare(groups))[0] == line.split(" — caveat")[0]  # without caveats: the verdict alone


def test_the_phoronix_form_of_a_figure():
    """compare --se: mean, SE ± the standard error, N runs, as the Phoronix Test Suite prints them."""
    from storbench.model import Measure

    def measured(run_id: int, values) -> list[ResultRecord]:
        return [ResultRecord(run_id=run_id, workload="dbench-128", target="/t", raw_output="", repetition=i,
                             fio=FioResult(fio_version=None, jobs=(), format="dbench", measures=(Measure("MB/s", v, True),)))
                for i, v in enumerate(values)]  # fmt: skip

    cmp = compare(configurations(measured(1, [96.1, 99.2, 98.1]) + measured(2, [204.8, 209.6, 207.5]), {1: "8k", 2: "64k"}))
    buf = io.StringIO()
    Console(file=buf, width=120, force_terminal=False, no_color=True).print(format_compare_table(cmp, se=True))
    out = buf.getvalue()
    se_8k = scipy.stats.sem([96.1, 99.2, 98.1])
    assert f"97.8 SE ±{se_8k:.2f}, N = 3" in out and "207.3 SE ±1.39, N = 3" in out
    assert "SE ± the standard error, N runs" in " ".join(out.split())


def test_four_configurations_fit_120_columns():
    records = [rec(i, f"workload-with-a-long-name-{w}", None, v * i, rep=r)
               for i in range(1, 5) for w in range(3) for r, v in enumerate([1000.0, 1010.0, 990.0])]  # fmt: skip
    cmp = compare(configurations(records, {1: "ext4-nvme0n1", 2: "xfs-nvme0n1", 3: "btrfs-nvme0n1", 4: "zfs-lz4-nvme0n1"}))
    out = _terminal(cmp, headline_rows(cmp))
    table = out[out.index("comparison:"):]
    assert max(len(line) for line in table.splitlines()) <= 120
    for name in ("ext4-nvme0n1", "zfs-lz4-nvme0n1"):
        assert name in out


def test_json_shape_and_values():
    cmp = _golden_comparison()
    data = compare_to_json(cmp)
    json.dumps(data, allow_nan=False)  # strict JSON
    assert set(data) == {"configs", "baseline", "test", "alpha", "rows"}
    assert data["baseline"] == "run1" and data["test"] == "Welch's t-test" and data["alpha"] == 0.05
    assert [c["key"] for c in data["configs"]] == ["run1", "run2", "run3"]
    assert data["configs"][2] == {"key": "run3", "name": "zfs|lz4", "run_ids": [3], "target": "/t", "host": None, "storage": None}
    row = data["rows"][0]
    assert (row["workload"], row["direction"], row["metric"]) == ("rnd4k-q32t1-read", "read", "iops")
    assert set(row) == {"workload", "direction", "metric", "higher_is_better", "leader", "leader_significant", "cells", "versus"}
    cell = row["cells"]["run2"]
    assert set(cell) == {"n", "mean", "stddev", "stderr", "ci95", "cv", "values"}
    assert cell["values"] == B and cell["n"] == 3 and cell["mean"] == pytest.approx(np.mean(B))
    lo, hi = scipy.stats.t.interval(0.95, 2, loc=np.mean(B), scale=scipy.stats.sem(B))
    assert cell["ci95"] == pytest.approx([lo, hi], rel=1e-9)
    v = row["versus"]["run2"]
    assert {"rel_diff_pct", "ratio", "p_value", "verdict", "diff_ci95"} <= set(v)
    assert v["p_value"] == pytest.approx(welch_p(A, B), rel=1e-9) and v["verdict"] == "better"
    assert row["versus"]["run1"] is None
    assert row["versus"]["run3"]["p_value"] is None and row["versus"]["run3"]["verdict"] == VERDICT_SINGLE_RUN
    assert row["cells"]["run3"]["stddev"] is None
    only = next(r for r in data["rows"] if r["workload"] == "fsync-only")
    assert only["cells"]["run1"] is None and only["leader"] is None


def test_csv_shape():
    cmp = _golden_comparison()
    lines = list(csv.DictReader(io.StringIO(format_compare_csv(cmp))))
    assert len(lines) == len(cmp.rows) * len(cmp.configs)
    assert tuple(lines[0]) == CSV_COLUMNS
    first = {line["config"]: line for line in lines[:3]}
    assert first["run1"]["baseline"] == "1" and first["run1"]["verdict"] == ""
    assert float(first["run2"]["mean"]) == pytest.approx(np.mean(B))
    assert float(first["run2"]["p_value"]) == pytest.approx(welch_p(A, B), rel=1e-9)
    assert first["run2"]["leader"] == "1" and first["run2"]["leader_significant"] == "0"  # zfs n=1
    assert first["run3"]["n"] == "1" and first["run3"]["stddev"] == ""
    missing = [line for line in lines if line["workload"] == "fsync-only" and line["config"] == "run1"]
    assert missing and all(line["n"] == "" and line["mean"] == "" for line in missing)


def test_hand_built_rows_render():
    """The renderers need only the dataclasses (the HTML report builds on the same API)."""
    from storbench.stats.core import compare_samples, summarize

    a, b = (1.0, 2.0, 3.0), (2.0, 3.0, 4.0)
    row = Row(
        workload="w",
        direction="read",
        metric="iops",
        higher_is_better=True,
        cells=(Cell("run1", a, summarize(a)), Cell("run2", b, summarize(b))),
        versus=(None, compare_samples(a, b, higher_is_better=True)),
        leader="run2",
        leader_significant=False,
    )
    cmp = Comparison(configs=(cfg("run1", "x"), cfg("run2", "y")), baseline="run1", rows=(row,), test=WELCH_T_TEST, alpha=0.05)
    md = format_compare_markdown(cmp)
    assert "| w | read | IOPS | 2.0 ± 1.0 (3) | 3.0 ± 1.0 (3) ☆ | +50.0% | within noise (p=" in md


def test_two_option_sweep_is_a_grid_the_partial_plotly_bundle_draws():
    """A bs x iodepth sweep (2 x 3): one square per point, coloured by the mean and labelled with it
    (the report's plotly.js bundle has bar and scatter traces only, no heatmap)."""
    import dataclasses

    from storbench.render.chartdata import find_sweeps, records_by_config
    from storbench.render.html import PLOTLY_TRACE_TYPES
    from storbench.render.html_charts import heatmap_figure

    records = []
    for bs in ("4k", "64k"):
        for qd in ("1", "8", "32"):
            for r, v in enumerate((1000.0, 1010.0)):
                x = rec(1, f"w@bs={bs},iodepth={qd}", v * int(qd) / (16 if bs == "64k" else 1), rep=r)
                records.append(dataclasses.replace(x, options={"rw": "randread", "bs": bs, "iodepth": qd}))
    cmp = compare(configurations(records, {1: "ext4"}))
    (sweep,) = find_sweeps(cmp, records_by_config(cmp, records))
    fig = heatmap_figure(cmp, sweep, cmp.configs[0].key, "read", "iops")
    (trace,) = fig["data"]
    assert trace["type"] in PLOTLY_TRACE_TYPES and trace["marker"]["symbol"] == "square"
    points = dict(zip(zip(trace["x"], trace["y"]), trace["marker"]["color"]))
    assert points == {(bs, qd): 1005.0 * int(qd) / (16 if bs == "64k" else 1) for bs in ("4k", "64k") for qd in ("1", "8", "32")}
    assert trace["text"][0] == "1005 (n=2)"


def test_no_workload_in_common_is_one_line():
    """Two runs that share no workload: one line naming what each ran, not a line per workload of "only X has it"."""
    records = [rec(1, "seq1m-q8t1-read", None, 1000.0), rec(1, "rnd4k-q32t1-read", None, 900.0), rec(2, "fsync-only", None, 50.0)]
    cmp = compare(configurations(records, {1: "ext4", 2: "xfs"}))
    assert verdict_lines(cmp) == ["no workload in common: ext4 ran seq1m-q8t1-read, rnd4k-q32t1-read; xfs ran fsync-only"]
