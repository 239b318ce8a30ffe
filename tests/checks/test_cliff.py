"""A cliff mid-run (``throughput-cliff``): found on an NBD export whose speed drops while fio runs
(nbdkit's rate filter re-reads its rate file), never on steady series.

The rule (storbench.checks.cliff): the single least-squares change point of the per-second
series, with both levels at least 30% apart, each side at least 3 s and sustained, and
Welch's p < 0.01.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from storbench.checks.cliff import find_cliff

from servers import Nbdkit, when_fio_runs

DATA = Path(__file__).parent.parent / "data"
needs_nbd = pytest.mark.skipif(shutil.which("nbdkit") is None or shutil.which("fio") is None, reason="needs nbdkit and fio")


# --------------------------------------------------------------------------- the rule, pure


def test_a_step_down_is_found_with_both_levels_and_its_time():
    series = [[t, 2.1e9 if t < 41 else 4.5e8] for t in range(1, 80)]
    c = find_cliff(series, direction="write", metric="bw_bytes")
    assert c is not None and c.at_s == 41 and c.before == pytest.approx(2.1e9) and c.after == pytest.approx(4.5e8)
    assert c.bytes_before == pytest.approx(2.1e9 * 39)  # seconds 2..40: the first is partial and left out


@pytest.mark.parametrize("shape", ["steady", "noisy", "one-dip", "one-spike", "slow-drift", "short"])
def test_no_cliff_on_series_without_one(shape):
    import random

    rng = random.Random(7)
    base = 10_000.0
    series = {
        "steady": [[t, base] for t in range(30)],
        "noisy": [[t, base * (1 + rng.uniform(-0.15, 0.15))] for t in range(60)],
        "one-dip": [[t, base * (0.2 if t == 20 else 1.0)] for t in range(40)],
        "one-spike": [[t, base * (3.0 if t in (10, 11) else 1.0)] for t in range(40)],
        "slow-drift": [[t, base * (1 - 0.004 * t)] for t in range(60)],  # 24% over a minute: no step
        "short": [[t, base if t < 3 else base / 4] for t in range(6)],
    }[shape]
    assert find_cliff(series) is None


def test_no_cliff_in_any_stored_series_of_the_test_data():
    """Every per-second series recorded in tests/data (real runs of fio) but the one cliff recorded on purpose."""
    from storbench.fio.logs import series_from_logs

    seen = 0
    prefixes = sorted({p.name.split("_", 1)[0] for p in (DATA / "fio-logs").glob("*_*.log")})
    for prefix in prefixes:
        logs = {p.name: p.read_text() for p in (DATA / "fio-logs").glob(f"{prefix}_*.log")}
        series = series_from_logs(logs)
        for metric in ("iops", "bw_bytes"):
            for direction, points in series[metric].items():
                seen += 1
                assert find_cliff(points, direction=direction, metric=metric) is None, (prefix, metric, direction)
    assert seen >= 2


# --------------------------------------------------------------------------- for real: an NBD export slowed mid-run


def _rate_file(path: Path, bits_per_s: str) -> None:
    tmp = path.with_suffix(".new")
    tmp.write_text(bits_per_s + "\n")
    os.replace(tmp, path)  # atomically, as nbdkit-rate-filter asks


@needs_nbd
def test_the_cliff_is_found_on_an_export_slowed_mid_run(cli, tmp_path):
    rate = tmp_path / "rate"
    _rate_file(rate, "320M")  # 40 MB/s
    with Nbdkit(tmp_path / "nbd", ["memory", "256M"], filters=["rate"], params=["rate=320M", f"rate-file={rate}"]) as n:
        changed = {}

        def slow_down() -> None:
            changed["at"] = time.monotonic()
            _rate_file(rate, "64M")  # 8 MB/s

        watcher = when_fio_runs(slow_down, 5.0)
        started = time.monotonic()
        res = cli("run", "--target", n.uri, "--workload", "seq1m-q1t1-read", "--runtime", "10s", "--repeat", "1",
                  "--no-report", "--json")  # fmt: skip
        watcher.join()
    assert res.code == 0, res.err
    (rec,) = json.loads(res.out)
    (f,) = [f for f in rec["findings"] if f["check"] == "throughput-cliff"]
    assert f["severity"] == "warning"
    # the levels: 40 MB/s before, 8 MB/s after (the rate filter's, within 25%)
    import re

    m = re.search(r"read bandwidth fell from ([\d.]+) MiB/s to ([\d.]+) MiB/s at (\d+) s, after [\d.]+ MiB moved", f["message"])
    assert m, f["message"]
    before, after, at_s = (float(m.group(i)) for i in (1, 2, 3))
    assert 40e6 / 2**20 * 0.75 < before < 40e6 / 2**20 * 1.25, f["message"]
    assert 8e6 / 2**20 * 0.75 < after < 8e6 / 2**20 * 1.25, f["message"]
    # when: the rate file changed about 5 s after fio started (within 2 s, by fio's own clock)
    assert changed and abs(at_s - 5.0) <= 2.0, (at_s, f["message"])
    assert time.monotonic() - started < 60


@needs_nbd
def test_no_cliff_on_an_export_held_at_one_rate(cli, tmp_path):
    with Nbdkit(tmp_path / "nbd", ["memory", "256M"], filters=["rate"], params=["rate=160M"]) as n:
        res = cli("run", "--target", n.uri, "--workload", "seq1m-q1t1-read", "--runtime", "6s", "--repeat", "1",
                  "--no-report", "--json")  # fmt: skip
    assert res.code == 0, res.err
    (rec,) = json.loads(res.out)
    from storbench.store import Store

    with Store.open(f"sqlite:///{cli.db}") as store:
        (stored,) = store.results(1)
    assert len(stored.series["bw_bytes"]["read"]) >= 5  # the series was there to judge
    assert not [f for f in rec["findings"] if f["check"] == "throughput-cliff"], rec["findings"]
