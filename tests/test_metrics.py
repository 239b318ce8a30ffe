"""storbench.metrics: one headline value, whoever judges the repetitions."""

from __future__ import annotations

import math

from storbench.checks import CheckContext
from storbench.checks.variation import _variation
from storbench.metrics import headline_value
from storbench.model import DirectionStats, FioResult, JobResult, LatencyStats, Repeat
from storbench.run.repeat import next_step as _next_step
from storbench.units import fmt_ns


def _mix(read_lat_us: float, write_lat_us: float, read_ios: int = 7000, write_ios: int = 3000) -> FioResult:
    """A 70/30 random mix over 1 s: reads and writes with their own mean latency and I/O count."""

    def direction(name: str, lat_us: float, ios: int) -> DirectionStats:
        lat = LatencyStats(min_ns=lat_us * 500, max_ns=lat_us * 3000, mean_ns=lat_us * 1000, stddev_ns=lat_us * 100, samples=ios)
        return DirectionStats(direction=name, io_bytes=ios * 4096, bw_bytes=ios * 4096.0, iops=float(ios), runtime_ms=1000,
                              total_ios=ios, lat_ns=lat, clat_ns=lat)  # fmt: skip

    job = JobResult(name="mix", directions={"read": direction("read", read_lat_us, read_ios), "write": direction("write", write_lat_us, write_ios)})
    return FioResult(fio_version="fio-3.33", jobs=(job,), format="json")


def test_a_70_30_mix_has_its_io_weighted_latency_as_headline():
    """0.1 ms reads x 7000 and 1 ms writes x 3000: 0.37 ms, not the 0.55 ms an unweighted mean says."""
    assert math.isclose(headline_value(_mix(100, 1000), "lat"), 370_000.0)
    assert math.isclose(headline_value(_mix(100, 1000), "iops"), 10_000.0)
    assert math.isclose(headline_value(_mix(100, 1000), "bw"), 10_000 * 4096.0)


def test_until_rse_and_the_variation_finding_judge_the_same_numbers():
    """Three repetitions whose writes slow down: the unweighted means (0.55, 0.65, 0.75 ms) and
    the weighted ones (0.37, 0.40, 0.43 ms) differ; the variation finding shows the weighted ones,
    and --until-rse's decision is taken on them (its relative standard error)."""
    reps = (_mix(100, 1000), _mix(100, 1100), _mix(100, 1200))
    values = [headline_value(r, "lat") for r in reps]
    assert [round(v) for v in values] == [370_000, 400_000, 430_000]
    found = _variation(CheckContext(workload="mix", options={"rw": "randrw", "rwmixread": "70"}, results=reps, headline="lat"))
    assert found is not None and found.check == "high-variation"
    assert " / ".join(fmt_ns(v) for v in values) in found.message
    decision = _next_step(Repeat(count=3, until_rse_pct=1.0, min_runs=3, max_runs=10), reps, "lat")
    mean = sum(values) / 3
    rse_pct = math.sqrt(sum((v - mean) ** 2 for v in values) / 2) / math.sqrt(3) / mean * 100  # 4.33 % on these
    assert decision.again and f"{rse_pct:.1f}" in decision.reason, decision.reason


def test_unified_both_reporting_counts_the_mix_once():
    """unified_rw_reporting=both prints read, write and the mixed total: the headline counts each I/O once."""
    r = _mix(100, 1000)
    (job,) = r.jobs
    d = job.directions
    mixed = DirectionStats(direction="mixed", io_bytes=d["read"].io_bytes + d["write"].io_bytes, bw_bytes=d["read"].bw_bytes + d["write"].bw_bytes,
                           iops=10_000.0, runtime_ms=1000, total_ios=10_000, lat_ns=LatencyStats(0, 0, 370_000.0, 0))  # fmt: skip
    both = FioResult(fio_version="fio-3.33", jobs=(JobResult(name="mix", directions={**d, "mixed": mixed}),), format="json")
    assert headline_value(both, "iops") == 10_000.0 and math.isclose(headline_value(both, "lat"), 370_000.0)
