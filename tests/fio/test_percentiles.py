"""Percentiles of several jobs and hosts: merged from fio's histograms, never averaged.

fio computes a percentile from its latency histogram (json+ ``bins``): the first bin value at
which the cumulative I/O count reaches p% of all I/Os, for one job and, with group_reporting,
for the merged histogram of a group.  storbench does the same for a workload's jobs reported
apart and for a multi-host run's hosts; where the output holds no histogram (classic text,
plain JSON of several jobs) the union's p99 is left out, never shown as a mean of p99s.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storbench.fio import parse_output
from storbench.fio.json import parse_fio_json
from storbench.metrics import direction_figures, merged_percentile, union_p99
from storbench.model import DirectionStats, LatencyStats

from conftest import needs_fio

DATA = Path(__file__).parent.parent / "data"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "fixtures"


def _jsonplus() -> DirectionStats:
    result = parse_fio_json((DATA / "fio-json" / "b_jsonplus.json").read_text())
    return result.jobs[0].directions["read"]


def test_one_histogram_gives_fios_own_percentiles():
    """On a real json+ output, every percentile fio printed is reproduced from its bins exactly."""
    d = _jsonplus()
    assert len(d.clat_ns.bins) > 100 and sum(c for _, c in d.clat_ns.bins) == d.clat_ns.samples
    for key, value in d.clat_ns.percentiles.items():
        assert merged_percentile([d.clat_ns.bins], float(key)) == value, key


def _scaled(d: DirectionStats, factor: int) -> DirectionStats:
    bins = tuple((v * factor, c) for v, c in d.clat_ns.bins)
    lat = LatencyStats(d.clat_ns.min_ns * factor, d.clat_ns.max_ns * factor, d.clat_ns.mean_ns * factor, 0.0,
                       samples=d.clat_ns.samples, percentiles={"99.0": merged_percentile([bins], 99.0)}, bins=bins)  # fmt: skip
    return DirectionStats(direction="read", io_bytes=d.io_bytes, bw_bytes=d.bw_bytes, iops=d.iops, runtime_ms=d.runtime_ms,
                          total_ios=d.total_ios, clat_ns=lat)  # fmt: skip


def test_the_p99_of_a_union_is_not_the_mean_of_the_p99s():
    """Two jobs of equal I/O counts, one ten times slower (the issue's memory file beside a delayed
    export): the union's p99 is the slow job's p98, far above the mean of the two p99s."""
    fast = _scaled(_jsonplus(), 1)
    slow = _scaled(_jsonplus(), 10)
    union = union_p99([fast, slow])
    mean_of_p99s = (fast.clat_ns.percentiles["99.0"] + slow.clat_ns.percentiles["99.0"]) / 2
    assert union == merged_percentile([slow.clat_ns.bins], 98.0)
    assert union > 1.5 * mean_of_p99s
    # the union's quantile lies between the jobs' own (any two distributions)
    assert fast.clat_ns.percentiles["99.0"] <= union <= slow.clat_ns.percentiles["99.0"]


def test_several_jobs_without_a_histogram_have_no_p99():
    """Classic text of 4 jobs without group_reporting: no histogram, so no p99 for the workload
    (it was the I/O-weighted mean of the four jobs' p99s)."""
    path = DATA / "fio-text" / "public" / "12-fio3.25-4jobs-no-group-reporting-crlf.txt"
    result = parse_output(path.read_text(errors="replace"))
    assert len(result.jobs) == 4 and all("99.0" in j.directions["write"].clat_ns.percentiles for j in result.jobs)
    assert direction_figures(result)["write"]["clat_p99_ns"] is None
    # one job's own p99 stays what fio printed
    one = parse_output((DATA / "fio-text" / "public" / "05-fio3.1-randrw-libaio.txt").read_text())
    assert direction_figures(one)["read"]["clat_p99_ns"] == one.jobs[0].directions["read"].clat_ns.percentiles["99.0"]


@needs_fio
def test_a_real_run_of_two_jobs_reported_apart_is_merged(cli, tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text(
        '[workload.apart]\ndescription = "two jobs"\n'
        'fio = { rw = "randread", bs = "4k", ioengine = "psync", numjobs = 2, size = "8m", runtime = "500ms", time_based = true }\n'
        '[workload.together]\ndescription = "two jobs, one report"\n'
        'fio = { rw = "randread", bs = "4k", ioengine = "psync", numjobs = 2, size = "8m", runtime = "500ms", time_based = true, group_reporting = true }\n'
    )
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--suite-file", str(suite), "--workload", "apart", "--workload", "together", "--target", str(target),
              "--no-report", "--json")  # fmt: skip
    assert res.code == 0, res.err
    by = {r["workload"]: r for r in json.loads(res.out)}
    from storbench.store import Store

    with Store.open(f"sqlite:///{cli.db}") as store:
        stored = {r.workload: r for r in store.results(1)}
    apart = stored["apart"].fio
    assert apart.format == "json+" and len(apart.jobs) == 2  # storbench asked fio for its histograms
    dirs = [j.directions["read"] for j in apart.jobs]
    p99 = direction_figures(apart)["read"]["clat_p99_ns"]
    assert p99 == merged_percentile([d.clat_ns.bins for d in dirs], 99.0)
    own = sorted(d.clat_ns.percentiles["99.0"] for d in dirs)
    assert own[0] <= p99 <= own[1]
    assert by["apart"]["stats"]["read"]["clat_p99_ns"]["mean"] == p99
    # group_reporting: one report, fio's own p99, plain JSON (no histogram needed)
    together = stored["together"].fio
    assert together.format == "json" and len(together.jobs) == 1
    assert direction_figures(together)["read"]["clat_p99_ns"] == together.jobs[0].directions["read"].clat_ns.percentiles["99.0"]


def test_stored_form_of_results_without_a_histogram_is_unchanged():
    from storbench.serialize import fio_result_from_dict, fio_result_to_dict

    one = parse_output((DATA / "fio-text" / "public" / "05-fio3.1-randrw-libaio.txt").read_text())
    assert "bins" not in json.dumps(fio_result_to_dict(one))
    plus = parse_fio_json((DATA / "fio-json" / "b_jsonplus.json").read_text())
    back = fio_result_from_dict(json.loads(json.dumps(fio_result_to_dict(plus))))
    assert back == plus and back.jobs[0].directions["read"].clat_ns.bins


@pytest.mark.parametrize("p", [50.0, 90.0, 99.0, 99.9])
def test_merged_percentile_is_the_nearest_rank_of_the_expanded_samples(p):
    """An independent reading: expand both histograms into their samples, sort, take rank ceil(p% x N)."""
    import math

    a, b = _jsonplus().clat_ns.bins, _scaled(_jsonplus(), 3).clat_ns.bins
    samples = sorted(v for bins in (a, b) for v, c in bins for _ in range(c))
    rank = max(1, math.ceil(p / 100 * len(samples)))
    assert merged_percentile([a, b], p) == samples[rank - 1]
