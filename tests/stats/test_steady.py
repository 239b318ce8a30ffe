"""SNIA's steady-state rule (steady.py) on known series, figures checked by hand."""

from __future__ import annotations

import pytest

from storbench.stats.steady import fit_line, steady_state


def test_settled_series():
    # window 100, 102, 98, 101, 99: average 100, range 4 -> 4%, slope -0.3/round -> |-1.2| / 100 = 1.2%
    s = steady_state([60, 80, 95, 100, 102, 98, 101, 99])
    assert s.settled and s.window == (3, 7)
    assert s.average == pytest.approx(100.0)
    assert s.range_share == pytest.approx(0.04)
    assert s.slope == pytest.approx(-0.3) and s.slope_share == pytest.approx(0.012)
    assert s.reason == "steady over rounds 4-8: range 4.0% (<= 20%), slope 1.2% (<= 10%) of the average"


def test_drifting_series_fails_on_the_slope_only():
    # 100, 103, 106, 109, 112: average 106, range 12 -> 11.3% (fine), rise 3 x 4 = 12 -> 11.3% > 10%
    s = steady_state([100, 103, 106, 109, 112])
    assert not s.settled
    assert s.range_share == pytest.approx(12 / 106) and s.slope_share == pytest.approx(12 / 106)
    assert s.reason == "not steady over rounds 1-5: slope 11.3% > 10% of the average"


def test_noisy_series_fails_on_the_range_only():
    # 80, 120, 120, 80, 100: average 100, range 40%; the fitted line is flat (sxy = 40 - 20 + 0 - 20 + 0 = 0)
    s = steady_state([80, 120, 120, 80, 100])
    assert not s.settled and s.range_share == pytest.approx(0.40)
    assert s.slope == pytest.approx(0.0) and s.slope_share == pytest.approx(0.0)
    assert s.reason == "not steady over rounds 1-5: range 40.0% > 20% of the average"


def test_a_step_settles_once_the_window_is_past_it():
    step = [50] * 4 + [100] * 4
    assert not steady_state(step).settled  # window 50, 100, 100, 100, 100: range 50 / 90 = 56%
    assert steady_state(step + [100]).settled  # the window is past the step


def test_too_few_rounds_and_the_fit():
    s = steady_state([1, 2, 3])
    assert not s.settled and s.window is None and s.reason == "3 of the 5 rounds a window needs"
    assert fit_line([1.0, 3.0, 5.0]) == pytest.approx((2.0, 1.0))


# --------------------------------------------------------------------------- real rounds on a loop device

import json  # noqa: E402
import subprocess  # noqa: E402

from conftest import needs_fio, needs_root  # noqa: E402


@needs_fio
@needs_root
def test_until_steady_on_a_loop_device_reads_its_own_rounds_back(cli, tmp_path):
    """Rounds of a rate-capped read (fio's rate_iops holds 500 IOPS) on a loop device, after
    --precondition (purge, then the area written twice, guarded as every write): the run stops at the first round whose 5-round window passes SNIA's rule (at 5 on a quiet machine),
    and the verdict it stored is the rule applied to the IOPS storbench reads back."""
    suite = tmp_path / "s.toml"
    suite.write_text(
        '[suite.s]\ndescription = "steady"\nworkloads = ["capped"]\n'
        '[workload.capped]\ndescription = "500 IOPS"\nfio = { rw = "randread", bs = "4k", size = "16m", rate_iops = 500, '
        'runtime = "500ms", time_based = true, ioengine = "psync" }\n'
    )
    image = tmp_path / "disk.img"
    image.write_bytes(b"\0" * (32 << 20))
    dev = subprocess.run(["losetup", "-f", "--show", str(image)], check=True, capture_output=True, text=True).stdout.strip()
    try:
        # a block device: --precondition needs its exact name (it writes), then purges and writes it twice
        refused = cli("run", "--until", "steady", "--precondition", "--suite-file", str(suite), "--suite", "s", "--target", dev, "--no-report")
        assert refused.code == 2 and refused.err.count("\n") == 1 and "--destroy-data" in refused.err, refused.err
        r = cli("run", "--until", "steady", "--precondition", "--suite-file", str(suite), "--suite", "s", "--target", dev,
                "--destroy-data", dev, "--no-report", "--json")  # fmt: skip
        assert r.code == 0, r.err
        with open(image, "rb") as fh:  # the preconditioning writes reached the device (a zero image is no longer all zero)
            assert fh.read(1 << 20).count(0) < (1 << 20)
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
    assert f"precondition: purged {dev} with blkdiscard" in r.err or f"precondition: {dev} does not take discards" in r.err
    assert f"precondition: wrote 32.0 MiB of {dev} sequentially (128 KiB, twice over the area)" in r.err  # the whole device
    records = json.loads(r.out)
    n = len(records)
    assert [x["repetition"] for x in records] == list(range(n)) and 5 <= n <= 25
    series = [x["jobs"][0]["read"]["iops"] for x in records]
    # held at 500 (fio's rate), never above; how far below a round falls is the machine's to decide
    # (a CI machine's stall made one round 171 IOPS among rounds of 499, and the run went on)
    assert all(0 < v <= 525 for v in series), series
    verdict = steady_state(series)
    # it never stopped before the first round the rule held
    assert not any(steady_state(series[:k]).settled for k in range(5, n))
    if verdict.settled:  # and stopped there
        assert verdict.window == (n - 5, n - 1)
        assert f"capped: steady over rounds {n - 4}-{n}: range" in r.err
    else:  # a machine too unsteady for 25 rounds: all 25 ran, and the run said so
        assert n == 25 and "capped: did not settle in 25 rounds" in r.err, r.err
    from storbench.store import Store

    store = Store.open(f"sqlite:///{cli.db}")
    try:
        stored = store.run_meta(records[0]["run"])["steady"]["capped"]
    finally:
        store.close()
    assert stored["settled"] == verdict.settled and stored["series"] == series
    assert stored["window"] == [n - 5, n - 1] == list(verdict.window)
    assert stored["range_share"] == pytest.approx(verdict.range_share) and stored["results"] == [x["result"] for x in records]
