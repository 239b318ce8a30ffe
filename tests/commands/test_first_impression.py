"""The first minute, golden: what storbench prints and writes for the default quick run (its
CrystalDiskMark grid), a three-filesystem study (its verdict lines and a 120-column
comparison) and a single-run study, rendered from real runs of this machine stored in
tests/data/first-impression/runs.sqlite.gz (see its README).

Regenerate with STORBENCH_REGEN_GOLDEN=1 and read the diff."""

from __future__ import annotations

import gzip
import os
import re
import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).parent.parent / "data" / "first-impression"
GOLDEN = Path(__file__).parent.parent / "data" / "golden" / "first-impression"


@pytest.fixture()
def runs(cli, tmp_path):
    with gzip.open(DATA / "runs.sqlite.gz", "rb") as src, open(cli.db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return cli


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("STORBENCH_REGEN_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name}: run with STORBENCH_REGEN_GOLDEN=1 and review the diff"


def _report(runs, tmp_path, *refs: str) -> str:
    out = tmp_path / "r.md"
    res = runs("report", *refs, "-o", str(out), "--format", "markdown")
    assert res.code == 0, res.err
    text = out.read_text(encoding="utf-8")
    return re.sub(r"_generated [^_]+_", "_generated (time)_", text)


def test_quick_run_reads_at_a_glance(runs, tmp_path):
    shown = runs("show", "1")
    assert shown.code == 0, shown.err
    grid = shown.out[shown.out.index("CrystalDiskMark grid (quick)") - 40:]
    grid = grid[grid.index("\n") + 1:]  # from the title line on
    lines = grid.splitlines()
    lines = lines[: next(i for i, ln in enumerate(lines) if ln.startswith("MB/s = ")) + 1]
    text = "\n".join(lines) + "\n"
    golden("quick-grid.txt", text)
    # the grid: four tests, read and write, MB/s (decimal), IOPS and latency, the means of 3 runs
    assert [ln.split()[0] + " " + ln.split()[1] for ln in lines if ln.strip().startswith(("SEQ", "RND"))] == [
        "SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]  # fmt: skip
    # the short-run warning is said once for the run; the high-variation fix once for its 5 workloads
    assert shown.out.count("[short-run]") == 1 and "every workload (8) [short-run]" in shown.out
    assert shown.out.count("fix: run more repetitions") == 1 and "5 workloads [high-variation]:" in shown.out
    golden("quick-report.md", _report(runs, tmp_path, "1"))


def test_three_filesystem_study_reads_as_verdicts(runs, tmp_path):
    res = runs("compare", "--label-prefix", "fs3/")
    assert res.code == 0, res.err
    golden("study-compare.txt", res.out)
    lines = res.out.splitlines()
    # one verdict line per workload first
    assert [ln.split(" ")[0] for ln in lines[:4]] == ["gitlab", "app", "nas", "vm"]
    assert lines[0].startswith("gitlab read IOPS: fs3/xfs leads fs3/ext4 by 4.0% (within noise, p = 0.8), fs3/btrfs by 203.5% (significant, p = 0.034)")
    assert "the configurations differ in (the study's variable): filesystem.fstype: ext4 (fs3/ext4) / xfs (fs3/xfs) / btrfs (fs3/btrfs)" in res.out
    assert "not like for like" not in res.out  # same fio, kernel, sizes: like for like
    table = res.out[res.out.index("comparison:"):]
    assert max(len(ln) for ln in table.splitlines()) <= 120
    golden("study-report.md", _report(runs, tmp_path, "--label-prefix", "fs3/"))


def test_single_run_study(runs, tmp_path):
    """One setup of the study alone: its figures at a glance, no verdicts against nothing."""
    text = _report(runs, tmp_path, "fs3/xfs")
    golden("single-setup-report.md", text)
    summary = text[text.index("## Summary"):text.index("## gitlab")]
    assert "**headline figures**" in summary and "| gitlab | read |" in summary
    assert "leads" not in summary and "baseline" not in summary
