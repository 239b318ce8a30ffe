"""storbench curve on a device with a known response: nbdkit's delay filter makes every read
wait 1 ms, and with -t THREADS the server answers at most THREADS reads at a time, so IOPS
grow as depth / 1 ms until the threads run out (THREADS / 1 ms), and beyond that only the
latency grows.  The curve's steps, its knee and the SLA ceiling are asserted against that
model; the pure rules (curve.py) are asserted on hand-made points."""

from __future__ import annotations

import json
import shutil

import pytest

from storbench.curve.model import (
    CurvePlan,
    Point,
    ceiling_verdict,
    find_knee,
    format_knee,
    iops_at,
    iso_latency,
    next_probe,
    parse_load,
    parse_rate,
    rate_options,
    sla_bracket,
    stop_reason,
)
from storbench.errors import UsageError
from storbench.model import Target
from storbench.render.html import embedded

from conftest import needs_fio, needs_root
from servers import Nbdkit

MS = 1e6


def pt(qd: int, iops: float, p99_ms: float, p50_ms: float | None = None) -> Point:
    return Point((("iodepth", str(qd)),), iops, iops * 4096, p99_ms * MS / 2, {"99.0": p99_ms * MS, "50.0": (p50_ms or p99_ms / 2) * MS})


# --------------------------------------------------------------------------- the rules, by hand


def test_load_steps_are_every_combination_by_outstanding_io():
    steps = parse_load(["iodepth=1,4,16", "numjobs=1,4"])
    assert [dict(s) for s in steps] == [
        {"iodepth": "1", "numjobs": "1"}, {"iodepth": "1", "numjobs": "4"}, {"iodepth": "4", "numjobs": "1"},
        {"iodepth": "4", "numjobs": "4"}, {"iodepth": "16", "numjobs": "1"}, {"iodepth": "16", "numjobs": "4"},
    ]  # fmt: skip
    assert parse_rate("10%..100%") == [pytest.approx(x / 10) for x in range(1, 11)]
    assert parse_rate("20%..100%/40") == [0.2, 0.6, 1.0]
    for bad, words in ((["bs=4k,8k"], "OPTION one of iodepth, numjobs"), (["iodepth=0,2"], "whole numbers from 1"),
                       (["iodepth=1,1"], "given twice")):  # fmt: skip
        with pytest.raises(UsageError, match=words):
            parse_load(bad)
    with pytest.raises(UsageError, match=r"LOW%\.\.HIGH%"):
        parse_rate("fast")


def test_the_knee_is_where_load_turns_into_queueing():
    # 1k -> 2k -> 4k -> 4.1k (+2.5%, p99 x2) -> 4.1k: the knee is QD4
    points = [pt(1, 1000, 1.2), pt(2, 2000, 1.3), pt(4, 4000, 1.5), pt(8, 4100, 3.0), pt(16, 4150, 6.2)]
    knee = find_knee(points)
    assert knee is not None and knee.point.step == (("iodepth", "4"),)
    assert knee.gain_beyond_pct == pytest.approx(3.75) and knee.p99_rise_beyond_pct == pytest.approx(313.3, abs=0.1)
    assert format_knee(knee, points) == "knee at iodepth=4: 4000 IOPS, p99 1.50 ms; beyond it +4% IOPS for +313% p99"
    assert find_knee(points[:3]) is None  # still growing


def test_stop_rules():
    assert stop_reason([pt(1, 1000, 1.0), pt(2, 2000, 25.0)], ("p99", 20 * MS)) == "p99 25.00 ms is above the limit 20.00 ms at iodepth=2"
    flat = [pt(1, 1000, 1), pt(2, 1010, 2), pt(4, 1015, 4)]
    assert stop_reason(flat, None).startswith("throughput stopped growing: the last 2 steps added +1.0%, +0.5% IOPS")
    assert stop_reason(flat[:2], None) is None


def test_sla_bracket_bisection_and_noise():
    points = [pt(1, 1000, 1.2), pt(2, 2000, 1.6), pt(4, 4000, 2.5), pt(8, 4100, 5.0)]
    inside, outside = sla_bracket(points, "p99", 2 * MS)
    assert inside.iops == 2000 and outside.iops == 4000
    # beyond the limit with fewer IOPS than the best step within it: that step still bounds it
    late = [pt(1, 1000, 1.2), pt(8, 3300, 1.9), pt(16, 3250, 4.0)]
    assert [p.iops for p in sla_bracket(late, "p99", 2 * MS)] == [3300, 3250]
    assert next_probe(2000, 4000, 0) == 3000
    assert next_probe(3950, 4000, 1) is None  # bracket under 2% of the upper rate
    assert next_probe(2000, 4000, 6) is None  # probes used up
    assert ceiling_verdict(2 * MS, [1.9 * MS, 2.05 * MS, 1.95 * MS])  # the limit is inside mean ± 2 sd
    assert not ceiling_verdict(2 * MS, [1.50 * MS, 1.52 * MS, 1.49 * MS])
    from storbench.curve.model import Ceiling, format_ceiling

    broke = Ceiling("p99", 3 * MS, 3435.0, pt(8, 3435, 2.93), repeated_ns=(5.2 * MS, 6.0 * MS, 7.0 * MS), probes=0)
    assert not broke.confirmed
    assert format_ceiling(broke) == (
        "SLA p99 <= 3.00 ms: at most 3435 IOPS (p99 6.07 ms ± 901.8 µs over 3 runs: NOT confirmed, the repeated runs "
        "broke the limit; the first run was luck or the load is noisy); 0 probes"
    )
    # the limit held at every step: one thing said (it printed "at most" and "at least the last step" at once)
    held = Ceiling("p99", 2 * MS, 64918.0, pt(32, 64918, 1.1), repeated_ns=(1.0 * MS, 1.1 * MS, 1.2 * MS), open_ended=True)
    text = format_ceiling(held)
    assert text.startswith("SLA p99 <= 2.00 ms: at least 64.9k IOPS: the limit held at every step") and "at most" not in text
    assert rate_options({"rw": "randrw", "rwmixread": "70", "numjobs": "2"}, 10000) == (("rate_iops", "3500,1500"),)
    assert rate_options({"rw": "randread"}, 2500.4) == (("rate_iops", "2500"),)


# --------------------------------------------------------------------------- on the delayed export

needs_nbdkit = pytest.mark.skipif(shutil.which("nbdkit") is None, reason="needs nbdkit (tests/setup-system.sh)")


def test_curves_side_by_side_at_the_same_latency():
    # worked by hand: a reaches 2 ms at 200 IOPS and 4 ms at 300, so 3 ms is halfway: 250
    a = [(100.0, 1 * MS), (200.0, 2 * MS), (300.0, 4 * MS)]
    b = [(150.0, 1 * MS), (250.0, 3 * MS)]
    assert iops_at(a, 3 * MS) == 250.0
    assert iops_at(a, 0.5 * MS) is None  # above the level at every step
    assert iops_at(a, 9 * MS) == 300.0  # never above it: at least the last step
    assert iops_at([(10.0, None), (20.0, 1 * MS), (40.0, 3 * MS)], 2 * MS) == 30.0  # unmeasured steps skipped
    # the common level is the highest p99 every curve reaches: b's 3 ms
    assert iso_latency([("a", a), ("b", b)]) == "at the same p99 (3.00 ms, the highest every curve reaches): a 250 IOPS, b 250 (+0%)"
    # at a given level (the SLA's), most IOPS first, shares against the first
    assert iso_latency([("b", b), ("a", a)], "p99", 2 * MS) == "at the same p99 (2.00 ms): b 200 IOPS, a 200 (+0%)"
    line = iso_latency([("slow", [(1000.0, 5 * MS)]), ("fast", [(20_000.0, 1 * MS), (40_000.0, 2 * MS)])], "p99", 1.5 * MS)
    assert line == "at the same p99 (1.50 ms): fast 30.0k IOPS, slow above it at every step"
    # a noisy curve (btrfs on a loop device here): p99 above 2 ms at QD2 and QD8, under it at QD16
    # and QD32; as the SLA ceiling, the most IOPS within the level counts: QD32's
    noisy = [(3642.0, 1.32 * MS), (4410.0, 2.47 * MS), (9674.0, 1.99 * MS), (11_400.0, 3.16 * MS), (30_300.0, 1.40 * MS), (49_100.0, 1.65 * MS)]
    assert iops_at(noisy, 2 * MS) == 49_100.0
    # from the best step within the level towards the first later one beyond it, never below the best
    assert iops_at([(100.0, 1 * MS), (300.0, 3 * MS), (200.0, 5 * MS)], 2 * MS) == 200.0
    assert iops_at([(100.0, 1 * MS), (300.0, 1.5 * MS), (200.0, 5 * MS)], 2 * MS) == 300.0
    assert iso_latency([("a", a)]) is None and iso_latency([("a", a), ("x", [(1.0, None)])]) is None


def test_a_curve_plan_is_checked_and_stored_as_given():
    plan = CurvePlan(loads=("iodepth=1,4", "numjobs=1,2"), sla="p99=2ms", stop_at="p99=50ms")
    steps, shares, stop, limit = plan.parsed()
    assert steps == [(("iodepth", "1"), ("numjobs", "1")), (("iodepth", "1"), ("numjobs", "2")),
                     (("iodepth", "4"), ("numjobs", "1")), (("iodepth", "4"), ("numjobs", "2"))]  # fmt: skip
    assert shares == [] and stop == ("p99", 50 * MS) and limit == ("p99", 2 * MS)
    assert CurvePlan.from_meta(plan.meta()) == plan
    assert CurvePlan(rate="25%,50%").parsed()[1] == [0.25, 0.5]
    with pytest.raises(UsageError, match="give either --load or --rate, not both"):
        CurvePlan(loads=("iodepth=1",), rate="10%..20%").parsed()


@needs_fio
@needs_nbdkit
def test_curve_knee_and_ceiling_on_a_delayed_export(cli, tmp_path):
    """Two exports with a 1 ms read delay, 4 and 8 server threads."""
    with Nbdkit(tmp_path / "a", ["-t", "4", "memory", "64M"], filters=["delay"], params=["rdelay=1ms"]) as four, \
         Nbdkit(tmp_path / "b", ["-t", "8", "memory", "64M"], filters=["delay"], params=["rdelay=1ms"]) as eight:  # fmt: skip
        r = cli("curve", "--target", four.uri, "--target", eight.uri, "--destroy-data", four.uri, "--destroy-data", eight.uri,
                "--precondition", "--size", "16m", "--runtime", "500ms", "--load", "iodepth=1,4,8,16,32", "--sla", "p50=2ms",
                "--label", "delayed", "--json", "--no-report")  # fmt: skip
        assert r.code == 0, r.err
    data = json.loads(r.out)
    assert "precondition: wrote 32.0 MiB of nbd://127.0.0.1" in r.err
    a, b = data["curves"]
    for curve, threads in ((a, 4), (b, 8)):
        by = {p["step"]["iodepth"]: p for p in curve["points"]}
        assert list(by) == ["1", "4", "8", "16", "32"] or curve["stopped"].startswith("throughput stopped growing")
        # QD1: one read at a time, each at least 1 ms, so never more than 1,000 a second (how far
        # below is the machine's to decide: a busy 2-core machine starves the server)
        assert by["1"]["p50_ns"] >= 1.0 * MS and 0 < by["1"]["iops"] <= 1000
        # QD4: four at a time, never more than four reads a millisecond
        assert 0 < by["4"]["iops"] <= 1.05 * 4 * 1000
        # every step obeys Little's law: outstanding I/O = IOPS x mean latency
        for qd, p in by.items():
            assert 0.6 * int(qd) <= p["iops"] * p["lat_mean_ns"] / 1e9 <= 1.15 * int(qd), (qd, p)
        # QD16: never more than the threads allow (threads / 1 ms), the rest waits in the queue
        assert by["16"]["iops"] <= 1.05 * threads * 1000
        assert by["16"]["p50_ns"] >= 0.8 * (16 / threads) * MS
    # 4 threads: the curve flattens once the 4 threads are busy, and that is its knee, at no more
    # than 4 / 1 ms.  At which depth it flattens is the machine's to decide (QD4 when it is quiet;
    # QD8 or QD16 when a busy 2-core machine starves the server at the lower depth; the 8-thread
    # export flattened at QD4 beside a machine running 256 fio servers; under the CPU and disk hog the
    # 4-thread export's starved server kept gaining a little to QD32, and no knee was found), so the
    # knee is judged as one of the measured steps and by the server's ceiling, never by its step
    # or by whether there is one; no step ever passes the ceiling
    for curve, threads in ((a, 4), (b, 8)):
        assert max(p["iops"] for p in curve["points"]) <= 1.05 * threads * 1000
        knee = curve["knee"]
        if knee is None:
            continue
        [at] = [p for p in curve["points"] if p["step"] == knee["step"]]
        assert knee["iops"] == at["iops"] and knee["iops"] <= 1.05 * threads * 1000, knee
    # the SLA ceiling of the 4-thread export: between the last step within p50 <= 2 ms and the first beyond
    c = a["sla_ceiling"]
    inside = max((p for p in a["points"] if p["p50_ns"] <= 2 * MS), key=lambda p: p["iops"])
    after = a["points"][a["points"].index(inside) + 1:]
    outside = next(p for p in after if p["p50_ns"] > 2 * MS)
    assert inside["iops"] <= c["iops"] <= max(outside["iops"], inside["iops"])
    # else the step beyond adds nothing to bisect (a bracket narrower than SLA_RESOLUTION of its upper
    # rate).  The test once said "more than 1.02 times the step within", which differs from
    # storbench's (hi - lo) / hi >= 2 % between 1.02 and 1.0204 times: a loaded clean-clone run
    # expected a probe there and storbench, by its own rule, made none
    from storbench.curve.model import next_probe

    bisected = outside["iops"] > inside["iops"] and next_probe(inside["iops"], outside["iops"], 0) is not None
    assert (c["probes"] >= 1) == bisected and len(c["repeated_ns"]) == 3
    assert c["confirmed"] == (c["within_noise"] or sum(c["repeated_ns"]) / 3 <= 2 * MS)
    # every probe and the repeated ceiling are stored results of the run
    names = [x["workload"] for x in data["results"]]
    assert sum("@sla_probe=" in n for n in names) == a["sla_ceiling"]["probes"] + b["sla_ceiling"]["probes"]
    # the repeated ceiling, named by what it ran: a rate cap (sla_ceiling=N) or a step again as it was (sla_repeat=...)
    assert sum("@sla_ceiling=" in n or "@sla_repeat=" in n for n in names) == 6
    # compared point by point: one configuration per export
    cmp = json.loads(cli("compare", str(data["run"]), "--json").out)
    assert len(cmp["configs"]) == 2
    row = next(x for x in cmp["rows"] if x["workload"] == "curve-randread-4k@iodepth=16" and x["metric"] == "iops")
    means = {k: cell["mean"] for k, cell in row["cells"].items() if cell}
    assert row["leader"] == max(means, key=means.get)  # the leader is the one with more IOPS at QD16
    # (which export answers more at QD16 is the machine's to decide: beside busy.sh the 8-thread one
    # gave 2,350 IOPS to the 4-thread one's 3,221; each stays under its own ceiling, above)
    # side by side at the same latency, the SLA's p50 of 2 ms: each export's figure is the one its
    # own stored points give (which leads depends on the machine's load: a busy 2-core machine
    # brought the 8-thread export down to the 4-thread one's 3k IOPS in a full run)
    per_target = [(c["target"], [(p["iops"], p["p50_ns"]) for p in c["points"]]) for c in (a, b)]
    assert data["iso"] == iso_latency(per_target, "p50", 2 * MS) and data["iso"].startswith("at the same p50 (2.00 ms): ")
    assert {part.split(" ")[0] for part in data["iso"].split(": ", 1)[1].split(", ")} == {a["target"], b["target"]}
    assert [n for n in cmp["notes"] if n.startswith("at the same p99 (") and "the highest every curve reaches" in n]
    # show and both reports carry the knee and the ceiling; the HTML draws both curves on one chart
    shown = cli("show", str(data["run"])).out
    assert f"knee at iodepth={a['knee']['step']['iodepth']}" in shown and "SLA p50 <= 2.00 ms: at most" in shown
    assert cli("report", str(data["run"]), "-o", str(tmp_path / "c.html")).code == 0
    page = (tmp_path / "c.html").read_text()
    figures = embedded(page, "storbench-figures")
    (chart,) = [f for f in figures if f["layout"]["title"]["text"].startswith("p99 latency against IOPS")]
    lines = [t for t in chart["data"] if t["mode"] == "lines+markers"]
    assert len(lines) == 2 and [len(t["x"]) for t in lines] == [len(a["points"]), len(b["points"])]


@needs_fio
@needs_nbdkit
def test_rate_steps_hold_their_share_of_the_maximum(cli, tmp_path):
    """--rate: the unthrottled maximum first, then fio's rate_iops at 25% and 50% of it; on
    the delayed export (1 ms per read, QD1 from the workload) each step holds its rate."""
    with Nbdkit(tmp_path / "r", ["memory", "16M"], filters=["delay"], params=["rdelay=1ms"]) as n:
        r = cli("curve", "--target", n.uri, "--rate", "25%,50%", "--size", "8m", "--runtime", "500ms", "--json", "--no-report")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    names = [x["workload"] for x in data["results"]]
    assert names[0] == "curve-randread-4k@rate_iops=max"
    # progress says each step's place in the curve (it said "[1/1]" for every step)
    started = [ln.split("]")[0] + "]" for ln in r.err.splitlines() if ln.startswith("[") and "curve-randread-4k@" in ln]
    assert started == ["[1/3]", "[2/3]", "[3/3]"], r.err
    top = data["results"][0]["jobs"][0]["read"]["iops"]
    (curve,) = data["curves"]
    assert [p["step"]["rate"] for p in curve["points"]] == ["25%", "50%"]
    for p, share in zip(curve["points"], (0.25, 0.50)):
        assert int(p["step"]["rate_iops"]) == round(share * top)  # what storbench asked of fio: its share of the maximum
        # fio holds the cap from above; a starved machine may fall short of it (a hog run of 23f5cbd:
        # 309 IOPS at a cap of 380), so the step's figure is judged against the cap, never above it
        assert 0 < p["iops"] <= int(p["step"]["rate_iops"]) * 1.15


@needs_fio
@needs_root
def test_curve_on_a_block_device_is_guarded_and_preconditioned(cli, tmp_path):
    """A loop device: --precondition writes, so the curve needs --destroy-data naming the
    device (refused in one line, nothing written); with it, the device is purged and written
    twice, then each step is a stored result on the device."""
    import subprocess

    image = tmp_path / "disk.img"
    image.write_bytes(b"\0" * (32 << 20))
    dev = subprocess.run(["losetup", "-f", "--show", str(image)], check=True, capture_output=True, text=True).stdout.strip()
    try:
        args = ("curve", "--target", dev, "--precondition", "--load", "iodepth=1,4", "--size", "16m", "--runtime", "300ms", "--json", "--no-report")
        refused = cli(*args)
        assert refused.code == 2 and refused.err.count("\n") == 1 and f"--destroy-data {dev}" in refused.err, refused.err
        assert image.read_bytes()[: 1 << 20].count(0) == 1 << 20  # nothing was written
        r = cli(*args, "--destroy-data", dev)
        assert r.code == 0, r.err
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
    assert f"precondition: wrote 32.0 MiB of {dev} sequentially" in r.err
    data = json.loads(r.out)
    (curve,) = data["curves"]
    assert curve["target"] == dev and [p["step"] for p in curve["points"]] == [{"iodepth": "1"}, {"iodepth": "4"}]
    by_id = {x["result"]: x for x in data["results"]}
    for point in curve["points"]:
        rec = by_id[point["result"]]
        assert rec["target"] == dev and rec["options"]["filename"] == dev and rec["options"]["direct"] == "1"
        assert point["iops"] == pytest.approx(rec["jobs"][0]["read"]["iops"]) and point["p99_ns"] > 0


@pytest.mark.parametrize(
    ("target", "engine"),
    [
        (Target(kind="dir", path="/srv/t"), "libaio"),
        (Target(kind="block", path="/dev/sdz"), "libaio"),
        (Target(kind="nbd", path="nbd://127.0.0.1:10809"), "nbd"),
        (Target(kind="gluster", path="gluster://127.0.0.1/gv0"), "gfapi"),
        (Target(kind="rbd", path="rbd:rbd/img1", params=(("conf", "/c/ceph.conf"), ("client", "bench"), ("size", str(64 << 20)))), "rbd"),
        (Target(kind="rados", path="rados:bench", params=(("conf", "/c/ceph.conf"), ("client", "admin"))), "rados"),
    ],
)
def test_every_target_kind_takes_a_curves_steps(target, engine):
    """A step's options (the load, or a rate) go into the job of every kind's engine; the real
    runs of curves are on nbdkit, qemu-nbd, a loop device, ext4 and RBD (test_ceph, test_matrix)."""
    from storbench.curve.runner import CurveRunner
    from storbench.model import Overrides
    from storbench.suites import builtin_catalog

    workload = builtin_catalog().workload("curve-randread-4k")
    runner = CurveRunner(1, workload, target, Overrides(size="16m"), executor=None, store=None, reporter=None, telemetry=None,
                         repeat=1, clock=lambda: "t", cwd="/tmp")  # fmt: skip
    spec = runner._spec("curve-randread-4k@iodepth=16", (("iodepth", "16"),))
    lines = spec.job_text.splitlines()
    assert f"ioengine={engine}" in lines and "iodepth=16" in lines and "iodepth=1" not in lines
    rated = runner._spec("curve-randread-4k@rate=50%", (("rate_iops", "2500"),))
    assert "rate_iops=2500" in rated.job_text.splitlines()
    assert len(runner.made) == 2  # both steps' files are removed at the end
