"""End-to-end: ``storbench compare`` on runs made by the real fio, and the regression gate.

The gate is tested with a real, deterministic regression: the same workload throttled
with fio's ``rate_iops`` (2000 vs 500 IOPS), which fio holds to within a few I/Os as
long as the storage can do more.  The workload reads its freshly laid-out file through
the page cache (``direct=0, invalidate=0``): on a disk shared with other busy tests,
direct reads were seen to fall to ~200 IOPS, far below either limit.  Latency
measurement is switched off so that only the throttled figures (IOPS, bandwidth) are
compared: latency under a rate limit depends on CPU idle states and other load, and a
gate test must not flake.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import Cli, needs_fio

pytestmark = needs_fio
SMALL = ("--size", "16m", "--runtime", "500ms")


def _run(cli: Cli, *args: str) -> None:
    res = cli("run", *SMALL, *args)
    assert res.code == 0, res.err


@pytest.fixture(scope="module")
def ab(tmp_path_factory) -> Cli:
    """Two labelled runs of the same workload on two directories, 3 repetitions each."""
    base = tmp_path_factory.mktemp("ab")
    cli = Cli(base)
    for label in ("a", "b"):
        target = base / f"t-{label}"
        target.mkdir()
        _run(cli, "--workload", "rnd4k-q1t1-read", "--target", str(target), "--label", label, "--repeat", "3")
    return cli


def _rate_suite(path: Path, iops: int) -> Path:
    path.write_text(
        "[workload.capped]\n"
        f'description = "4k random reads held at {iops} IOPS by fio\'s rate_iops"\n'
        'fio = { rw = "randread", bs = "4k", ioengine = "psync", direct = 0, invalidate = 0, time_based = true, '
        f"rate_iops = {iops}, disable_lat = 1, disable_clat = 1, disable_slat = 1 }}\n"
    )
    return path


@pytest.fixture(scope="module")
def rates(tmp_path_factory) -> Cli:
    """fast and slow with 5 repetitions (one starved repetition of a busy machine does not hide a
    4x difference from Welch's test), fast2 with 3; one-run fast1/slow1."""
    base = tmp_path_factory.mktemp("rates")
    cli = Cli(base)
    target = base / "t"
    target.mkdir()
    fast = _rate_suite(base / "fast.toml", 2000)
    slow = _rate_suite(base / "slow.toml", 500)
    for label, suite, repeat in (("fast", fast, "5"), ("slow", slow, "5"), ("fast2", fast, "3"), ("fast1", fast, "1"), ("slow1", slow, "1")):
        _run(cli, "--suite-file", str(suite), "--workload", "capped", "--target", str(target), "--label", label, "--repeat", repeat)
    return cli


# --------------------------------------------------------------------------- compare two runs


def test_compare_two_labelled_runs(ab):
    res = ab("compare", "a", "b")
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    # the answer first: one verdict line per workload, then the table
    # findings that put the figure in doubt (a busy host, a cache) follow the verdict when the runs had any
    assert re.fullmatch(r"rnd4k-q1t1-read read IOPS: [ab] leads [ab] by \d+\.\d% \((significant|within noise), p (= |< )[\d.]+\)"
                        r"( — caveat: [ab] [a-z, -]+(; [ab] [a-z, -]+)?)?", lines[0]), lines[0]
    assert "a (baseline)" in res.out and "read IOPS" in res.out
    assert re.search(r"[+-]\d+\.\d% (better|worse|noise)", res.out)
    assert re.search(r"\d(?:\.\d+)?[kMG]? ±\d+\.\d%", res.out)  # mean ±sd as a share of the mean (8806 or 13.5k: the machine decides)
    assert max(len(line) for line in lines) <= 120
    # only the headline figure per workload by default; every metric with --all-metrics
    assert "p99 latency" not in res.out
    assert "read p99 latency" in ab("compare", "a", "b", "--all-metrics").out
    assert "no significance" not in res.out


def test_compare_markdown(ab):
    res = ab("compare", "a", "b", "--markdown")
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    assert lines[0].startswith("- **rnd4k-q1t1-read read IOPS: ")  # the verdict first
    head = lines.index("| workload | dir | metric | a (baseline) | b | b vs a | verdict |")
    assert lines[head + 1] == "|---|---|---|--:|--:|--:|---|"
    assert lines[head + 2].startswith("| rnd4k-q1t1-read | read | IOPS | ")
    assert "Welch's t-test against a" in res.out
    assert any(line.startswith("- ") and "rnd4k-q1t1-read read IOPS" in line for line in lines)


def test_compare_json_figures_equal_show_json(ab):
    res = ab("compare", "a", "b", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert [c["name"] for c in data["configs"]] == ["a", "b"]
    assert data["baseline"] == data["configs"][0]["key"]
    assert data["test"] == "Welch's t-test" and data["alpha"] == 0.05
    rows = {(r["direction"], r["metric"]): r for r in data["rows"] if r["workload"] == "rnd4k-q1t1-read"}
    assert ("read", "iops") in rows and ("read", "lat_mean_ns") in rows
    for config in data["configs"]:
        [run_id] = config["run_ids"]
        shown = json.loads(ab("show", str(run_id), "--json").out)
        assert len(shown) == 3
        stats = shown[0]["stats"]["read"]
        for metric in ("iops", "bw_bytes", "lat_mean_ns", "clat_p99_ns"):
            cell = rows[("read", metric)]["cells"][config["key"]]
            for key in ("n", "mean", "stddev", "stderr", "ci95", "cv"):
                assert cell[key] == stats[metric][key], (metric, key)
        assert rows[("read", "iops")]["cells"][config["key"]]["values"] == [r["jobs"][0]["read"]["iops"] for r in shown]
    v = rows[("read", "iops")]["versus"][data["configs"][1]["key"]]
    assert v["verdict"] in ("better", "worse", "within noise") and 0 <= v["p_value"] <= 1
    assert data["summary"] and data["notes"] == []


def test_compare_baseline_by_label(ab):
    res = ab("compare", "a", "b", "--baseline", "b")
    assert res.code == 0, res.err
    assert "b (baseline)" in res.out and "a vs b" in res.out
    data = json.loads(ab("compare", "a", "b", "--baseline", "b", "--json").out)
    assert data["baseline"] == data["configs"][1]["key"]


def test_compare_csv_and_output_file(ab, tmp_path):
    out = tmp_path / "cmp.md"
    res = ab("compare", "a", "b", "--markdown", "-o", str(out))
    assert res.code == 0, res.err
    assert res.out == "" and "wrote the comparison to" in res.err
    assert "\n| workload | dir | metric | a (baseline) | b |" in out.read_text()
    csv_res = ab("compare", "a", "b", "--csv")
    assert csv_res.code == 0
    assert csv_res.out.splitlines()[0].startswith("workload,direction,metric,higher_is_better,config,")
    assert len(csv_res.out.splitlines()) == 1 + 4 * 2  # 4 metrics of one direction, 2 configs


def test_label_prefix_adds_runs(ab):
    res = ab("compare", "--label-prefix", "", "--json")  # every labelled run
    assert res.code == 0, res.err
    assert [c["name"] for c in json.loads(res.out)["configs"]] == ["a", "b"]


def test_compare_usage_errors_are_one_line(ab):
    res = ab("compare", "a", "b", "--baseline", "nope")
    assert res.code == 2 and res.err.count("\n") == 1
    assert "unknown baseline 'nope'" in res.err and "'a', 'b'" in res.err
    res = ab("compare", "a")
    assert res.code == 2 and res.err.count("\n") == 1 and "at least two configurations" in res.err
    res = ab("compare")
    assert res.code == 2 and "give the runs to compare" in res.err
    res = ab("compare", "a", "zzz")
    assert res.code == 2 and "no run matches 'zzz'" in res.err
    res = ab("compare", "a", "b", "--json", "--csv")
    assert res.code == 2 and "only one of" in res.err


def _recorded(cli: Cli, base: str, other: str) -> dict[str, float]:
    """``other`` against ``base`` in percent, by metric, as the compare JSON gives it from what the runs
    recorded (``lead_pct``: compare's one convention, what its table, verdicts and gate print).  fio's ``rate_iops`` caps are 2000 and 500, but a busy machine may fall short of the
    faster one: the text is checked against the runs, not against the caps."""
    data = json.loads(cli("compare", base, other, "--baseline", base, "--json").out)
    key = data["configs"][1]["key"]
    return {row["metric"]: row["versus"][key]["lead_pct"] for row in data["rows"] if row["metric"] in ("iops", "bw_bytes")}


# --------------------------------------------------------------------------- the regression gate


def _verdicts(cli: Cli, base: str, other: str) -> dict[str, str]:
    """``other``'s Welch verdict against ``base`` per metric, as the compare JSON gives it."""
    data = json.loads(cli("compare", base, other, "--baseline", base, "--json").out)
    key = data["configs"][1]["key"]
    return {row["metric"]: row["versus"][key]["verdict"] for row in data["rows"] if row["metric"] in ("iops", "bw_bytes")}


def test_gate_fails_on_a_real_significant_regression(rates):
    res = rates("compare", "fast", "slow", "--baseline", "fast", "--fail-if-worse", "10")
    recorded, verdicts = _recorded(rates, "fast", "slow"), _verdicts(rates, "fast", "slow")
    assert recorded["iops"] < -10 and recorded["bw_bytes"] < -10  # 500 IOPS against (at most) 2000
    # the table is printed before the gate fails
    assert "fast (baseline)" in res.out and f"{recorded['iops']:+.1f}%" in res.out
    # the gate follows what the runs recorded: with 5 repetitions each, 4x apart, Welch's test finds
    # the difference unless a machine starved several of them (then nothing may be called worse)
    if set(verdicts.values()) != {"worse"}:
        assert res.code == 0 and "nothing is significantly worse than 'fast' by more than 10%" in res.out, (verdicts, res.err)
        return
    assert res.code == 3, res.err
    assert f"{recorded['iops']:+.1f}% worse" in res.out
    assert res.err.count("\n") == 1
    one = r"capped read (iops|bw_bytes) -\d+\.\d% \(p(<0\.001|=0\.0\d+)\) in 'slow' vs 'fast'"
    assert re.fullmatch(rf"storbench: error: regression: {one}; {one}\n", res.err), res.err
    assert f"read iops {recorded['iops']:+.1f}%" in res.err and f"read bw_bytes {recorded['bw_bytes']:+.1f}%" in res.err


def test_gate_metric_limits_what_the_gate_judges(rates):
    res = rates("compare", "fast", "slow", "--baseline", "fast", "--fail-if-worse", "10", "--gate-metric", "iops")
    assert res.code == (3 if _verdicts(rates, "fast", "slow")["iops"] == "worse" else 0), res.err
    assert "bw_bytes" not in res.err and ("read iops" in res.err) is (res.code == 3)
    alone = rates("compare", "fast", "slow", "--gate-metric", "iops")
    assert alone.code == 2 and "--gate-metric goes with --fail-if-worse" in alone.err


def test_gate_on_the_same_configuration_follows_what_the_runs_recorded(rates):
    """fast against fast2 (one configuration, capped at 2,000 IOPS): on a quiet machine nothing is
    worse and the gate passes; a busy machine may starve fast2's repetitions below the cap, and
    then the gate fails on exactly the metrics the runs recorded as significantly worse by more
    than 10% (never on a shape the machine decided that the runs do not show)."""
    res = rates("compare", "fast", "fast2", "--fail-if-worse", "10")
    data = json.loads(rates("compare", "fast", "fast2", "--fail-if-worse", "10", "--json").out)
    key = data["configs"][1]["key"]
    versus = {r["metric"]: r["versus"][key] for r in data["rows"] if r["metric"] in ("iops", "bw_bytes")}
    assert f"{versus['iops']['lead_pct']:+.1f}%" in res.out  # the table shows what the runs recorded
    worse = {m for m, v in versus.items() if v["verdict"] == "worse" and v["lead_pct"] < -10}
    assert {r["metric"] for r in data["regressions"]} == worse
    if not worse:  # the quiet machine's answer
        assert res.code == 0, res.err
        assert "nothing is significantly worse than 'fast' by more than 10%" in res.out
    else:
        assert res.code == 3 and res.err.startswith("storbench: error: regression: "), (versus, res.err)


def test_gate_never_fails_on_single_runs(rates):
    res = rates("compare", "fast1", "slow1", "--fail-if-worse", "10")
    assert res.code == 0, res.err
    recorded = _recorded(rates, "fast1", "slow1")
    assert f"{recorded['iops']:+.1f}%" in res.out and "n=1" in res.out
    assert "with single runs no significance can be claimed; use --repeat 3 or more" in res.out
    assert "rows with a single run cannot fail the gate" in res.out
    # whichever of the two single runs the machine made faster leads, by what the runs recorded
    leader, other = ("fast1", "slow1") if recorded["iops"] < 0 else ("slow1", "fast1")
    lead = _recorded(rates, other, leader)["iops"]
    assert f"capped read IOPS: {leader} leads {other} by {lead:.1f}% (one run: no significance)" in res.out


def test_gate_in_json_lists_the_regressions(rates):
    res = rates("compare", "fast", "slow", "--fail-if-worse", "10", "--json")
    data = json.loads(res.out)
    worse = {m for m, v in _verdicts(rates, "fast", "slow").items() if v == "worse"}  # what the runs recorded
    assert res.code == (3 if worse else 0)
    assert {(r["metric"], r["config"]) for r in data["regressions"]} == {(m, data["configs"][1]["key"]) for m in worse}
    recorded = {m: v for m, v in _recorded(rates, "fast", "slow").items() if m in worse}
    assert {r["metric"]: r["lead_pct"] for r in data["regressions"]} == pytest.approx(recorded)
