"""Phoronix Test Suite result files imported: every real composite.xml in ../shared/fixtures/pts
(BlogBench, pjdfstest, 7-Zip, zstd, systemd-boot/Tachyon: PTS 5.2 to 10.8), and a pts/fio
result assembled in the same format (tests/data/pts/fio-ext4-zfs.xml: no public one exists).

Figures were checked by hand against the files: the mean of each entry's RawString is the
Value PTS printed, its standard error is what OpenBenchmarking prints as "SE +/-", and
storbench compare's Welch p-values are scipy's on the same trials.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from scipy import stats as scipy_stats

from storbench.model import FioResult, Measure
from storbench.pts import map_result_file, parse_result_file
from storbench.serialize import fio_result_from_dict, fio_result_to_dict
from storbench.stats.core import summarize

PTS = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "pts"
FIO_XML = Path(__file__).parent.parent / "data" / "pts" / "fio-ext4-zfs.xml"
MIB = 1 << 20

pytestmark = pytest.mark.skipif(not PTS.is_dir(), reason="needs ../shared/fixtures beside the project")


def mapped(name: str):
    return map_result_file(parse_result_file((PTS / name).read_text()))


def raw_trials(text: str, system: str, description: str) -> list[float]:
    """The RawString of one system in one result, read with a regex (independent of storbench's parser)."""
    for block in re.findall(r"<Result>(.*?)</Result>", text, re.DOTALL):
        if f"<Description>{description}</Description>" not in block:
            continue
        for entry in re.findall(r"<Entry>(.*?)</Entry>", block, re.DOTALL):
            if f"<Identifier>{system}</Identifier>" in entry:
                raw = re.search(r"<RawString>(.*?)</RawString>", entry).group(1)
                return [float(x) for x in raw.split(":")]
    raise AssertionError(f"no entry {system!r} in {description!r}")


# --------------------------------------------------------------------------- the parser and mapping, on every real file


@pytest.mark.parametrize(
    "name, systems, results, workloads, records",
    [
        ("04-ec2-large-7zip-10runs.xml", 10, 1, 1, 30),  # 10 systems x 3 trials
        ("05-gce-blogbench-pts820.xml", 1, 2, 2, 6),
        ("06-qemu-blogbench-pts521.xml", 1, 1, 1, 3),
        ("07-gce-pjdfstest-passfail.xml", 1, 2, 1, 1),  # the PASS_FAIL result is not a figure
        ("08-gce-systemd-tachyon-2sys-sparse.xml", 2, 4, 4, 6),  # 3 single systemd values + 3 Tachyon trials
        ("09-zstd-install-time-emptyid.xml", 1, 16, 16, 45),  # 14 x 3 trials + install time + 2 install sizes
        ("10-ub-flags-zstd-20sys.xml", 20, 14, 14, 1946),
    ],
)
def test_every_real_file_counts(name, systems, results, workloads, records):
    pts = parse_result_file((PTS / name).read_text())
    m = map_result_file(pts)
    assert (len(pts.systems), len(pts.results), len(m.workloads), len(m.records)) == (systems, results, workloads, records)
    # a repetition per trial: the per-system counts add up to the RawString lengths
    text = (PTS / name).read_text()
    assert len(m.records) == sum(
        max(1, len([x for x in re.search(r"<RawString>(.*?)</RawString>", e).group(1).split(":") if x]))
        for e in re.findall(r"<Entry>(.*?)</Entry>", text, re.DOTALL)
        if "<Value>PASS</Value>" not in e
    )


def test_blogbench_mean_se_and_n_as_pts_printed():
    pts = parse_result_file((PTS / "05-gce-blogbench-pts820.xml").read_text())
    assert pts.title == "2018-11-24-1439" and pts.test_client == "Phoronix Test Suite v8.2.0 (Rakkestad)"
    system = pts.systems[0]
    assert system.identifier == "PersistentDisk"
    assert dict(system.hardware)["Disk"] == "54GB PersistentDisk"
    assert dict(system.hardware)["Processor"] == "Intel Xeon @ 2.30GHz (4 Cores / 8 Threads)"
    assert dict(system.software)["File-System"] == "ext4"
    assert system.attributes["disk-mount-options"] == "data=ordered,relatime,rw"
    m = map_result_file(pts)
    assert [w.name for w in m.workloads] == ["BlogBench: Test: Read", "BlogBench: Test: Write"]
    read = [r for r in m.records if r.workload == "BlogBench: Test: Read"]
    assert [r.fio.measures for r in read] == [
        (Measure("Final Score", v, True),) for v in (1609305.0, 1644845.0, 1639597.0)
    ]
    assert [r.repetition for r in read] == [0, 1, 2]
    s = summarize([r.fio.measures[0].value for r in read])
    # by hand: mean 4893747 / 3 = 1631249 (PTS's Value); deviations -21944, 13596, 8348;
    # sd = sqrt(736079456 / 2) = 19184.36; SE = sd / sqrt(3) = 11076.10
    assert s.n == 3 and s.mean == 1631249.0
    assert s.stddev == pytest.approx(19184.36, abs=0.01)
    assert s.stderr == pytest.approx(11076.10, abs=0.01)
    assert m.said == ()


def test_pass_fail_is_named_not_dropped():
    m = mapped("07-gce-pjdfstest-passfail.xml")
    assert [w.name for w in m.workloads] == ["Pjdfstest"]
    (rec,) = m.records
    assert rec.fio.measures == (Measure("Seconds", 264.0, False),)
    assert m.said == ("Pjdfstest [Test Pass / Fail]: a PASS_FAIL result ('PASS'), not a figure; not imported",)


def test_module_results_and_duplicate_entries():
    m = mapped("09-zstd-install-time-emptyid.xml")
    names = [w.name for w in m.workloads]
    assert names[:2] == ["Zstd Compression: Compression Level: 3 - Compression Speed",
                         "Zstd Compression: Compression Level: 3 - Decompression Speed"]  # fmt: skip
    size = [r for r in m.records if r.workload == "Zstd Compression: Test Install Size"]
    assert [r.fio.measures[0].value for r in size] == [229036.0, 229040.0]
    assert [r.fio.measures[0].higher_is_better for r in size] == [False, False]
    (time,) = [r for r in m.records if r.workload == "Zstd Compression: Test Install Time"]
    assert time.fio.measures[0].unit == "Seconds"
    assert m.said == (
        "Zstd Compression: Test Install Size on GVNO3: 2 entries for the same system; their values are taken as more repetitions",
    )


def test_sparse_systems_keep_their_own_results():
    m = mapped("08-gce-systemd-tachyon-2sys-sparse.xml")
    by = {}
    for r in m.records:
        by.setdefault(r.workload, set()).add(r.system)
    assert by == {
        "Systemd Total Boot Time: Test: Total": {"2018-11-25 08:09"},
        "Systemd Total Boot Time: Test: Kernel": {"2018-11-25 08:09"},
        "Systemd Total Boot Time: Test: Userspace": {"2018-11-25 08:09"},
        "Tachyon: Total Time": {"Intel Xeon"},
    }


# --------------------------------------------------------------------------- pts/fio onto fio's figures


def test_pts_fio_maps_onto_fio_figures():
    m = map_result_file(parse_result_file(FIO_XML.read_text()))
    assert [w.name for w in m.workloads] == ["rand-read-4k", "seq-write-1m-io_uring", "rand-write-4k"]
    assert m.workloads[0].scales == ("MB/s", "IOPS")
    assert dict(m.workloads[0].options) == {"rw": "randread", "ioengine": "libaio", "buffered": "0", "direct": "1", "bs": "4k"}
    ext4 = [r for r in m.records if r.workload == "rand-read-4k" and r.system == "ext4 NVMe"]
    d = [r.fio.jobs[0].directions["read"] for r in ext4]
    assert [x.bw_bytes for x in d] == [812 * MIB, 807 * MIB, 815 * MIB]  # PTS's MB/s is fio's MiB/s
    assert [x.iops for x in d] == [207872, 206592, 208640]
    # only MB/s reported: IOPS from the block size, and said so in the result's notes
    rw = [r for r in m.records if r.workload == "rand-write-4k" and r.system == "zfs NVMe"]
    assert [r.fio.jobs[0].directions["write"].iops for r in rw] == [188 * 256, 201 * 256, 179 * 256]
    assert "IOPS derived from PTS's MB/s and the block size" in rw[0].fio.notes


def test_pts_fio_names_are_the_pts_fio_suite_names():
    from storbench.suites import builtin_catalog

    suite = builtin_catalog().suite("pts-fio")
    assert {"rand-read-4k", "rand-write-4k"} <= {w.name for w in suite.workloads}


# --------------------------------------------------------------------------- the stored form


def test_measures_round_trip_as_format_version_2():
    result = FioResult(fio_version=None, jobs=(), format="pts", measures=(Measure("Final Score", 9323.0, True),))
    stored = json.loads(json.dumps(fio_result_to_dict(result)))
    assert stored["format_version"] == 2
    assert fio_result_from_dict(stored) == result
    assert fio_result_to_dict(FioResult(fio_version="fio-3.33", jobs=(), format="json"))["format_version"] == 1


# --------------------------------------------------------------------------- storbench import / show / compare


def test_import_show_and_compare_a_real_file(cli):
    r = cli("import", str(PTS / "04-ec2-large-7zip-10runs.xml"), "--json")
    assert r.code == 0, r.err
    assert "04-ec2-large-7zip-10runs.xml: Phoronix Test Suite result, 10 system(s) x 1 workload(s) -> run 1 (30 results" in r.err
    data = json.loads(r.out)
    assert len(data) == 30
    first = data[0]
    assert first["workload"] == "7-Zip Compression: Compress Speed Test" and first["target"] == "7zip-run-0"
    assert first["measures"] == [{"unit": "MIPS", "value": first["measures"][0]["value"], "higher_is_better": True}]
    assert first["stats"]["result"]["MIPS"]["n"] == 3

    shown = cli("show", "1")
    assert shown.code == 0
    assert "Phoronix Test Suite result '7zip'" in shown.out
    assert "system '7zip-run-9'" in shown.out

    c = cli("compare", "1", "--json")
    assert c.code == 0, c.err
    cmp = json.loads(c.out)
    assert len(cmp["configs"]) == 10
    (row,) = [x for x in cmp["rows"] if x["metric"] == "MIPS"]
    text = (PTS / "04-ec2-large-7zip-10runs.xml").read_text()
    base = raw_trials(text, "7zip-run-0", "Compress Speed Test")
    other = raw_trials(text, "7zip-run-1", "Compress Speed Test")
    assert base == [4909.0, 4905.0, 4926.0]  # the file's RawString 4909:4905:4926, Value 4913
    keys = [c["key"] for c in cmp["configs"]]
    assert row["cells"][keys[0]]["mean"] == pytest.approx(4913.33, abs=0.01)
    expected = scipy_stats.ttest_ind(base, other, equal_var=False).pvalue
    assert row["versus"][keys[1]]["p_value"] == pytest.approx(expected, rel=1e-9)
    assert row["versus"][keys[1]]["verdict"] == "within noise"


def test_compare_systems_of_a_pts_fio_result(cli):
    r = cli("import", str(FIO_XML))
    assert r.code == 0, r.err
    c = cli("compare", "1", "--json")
    cmp = json.loads(c.out)
    names = [x["name"] for x in cmp["configs"]]
    assert names == ["ext4-vs-zfs-fio (ext4 NVMe)", "ext4-vs-zfs-fio (zfs NVMe)"]
    row = next(x for x in cmp["rows"] if x["workload"] == "rand-read-4k" and x["metric"] == "iops")
    assert row["direction"] == "read" and row["leader"] == cmp["configs"][0]["key"] and row["leader_significant"]
    t = cli("compare", "1")
    assert "the systems differ in:" in t.out
    assert "File-System: ext4 (ext4-vs-zfs-fio (ext4 NVMe)) / zfs (ext4-vs-zfs-fio (zfs NVMe))" in t.out


def test_directory_of_pts_results(cli, tmp_path):
    results = tmp_path / "test-results"
    for name, src in (("blogbench", "05-gce-blogbench-pts820.xml"), ("pjdfs", "07-gce-pjdfstest-passfail.xml")):
        (results / name).mkdir(parents=True)
        shutil.copy(PTS / src, results / name / "composite.xml")
        (results / name / "system-logs").mkdir()
    r = cli("import", str(results))
    assert r.code == 0, r.err
    assert "imported 7 result(s) from 2 file(s)" in r.out
    assert "composite.xml: Pjdfstest [Test Pass / Fail]: a PASS_FAIL result ('PASS'), not a figure; not imported" in r.err
    one = cli("import", str(results / "blogbench"))
    assert "imported 6 result(s) from 1 file(s)" in one.out


@pytest.mark.parametrize(
    "text, message",
    [
        ("<?xml version=\"1.0\"?>\n<PhoronixTestSuite>\n  <TestInformation><Title>x</Title></TestInformation>\n</PhoronixTestSuite>\n",
         "a Phoronix Test Suite file, but not a result file: it holds TestInformation"),
        ("<?xml version=\"1.0\"?>\n<PhoronixTestSuite>\n  <Result><Title>x</Result>\n",
         "not a readable Phoronix Test Suite result file: XML error at line 3"),
        (('<?xml version="1.0"?>\n<!DOCTYPE PhoronixTestSuite [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>\n'
          "<PhoronixTestSuite><System><Identifier>&b;</Identifier></System></PhoronixTestSuite>\n"),
         "the XML uses EntitiesForbidden, which storbench refuses"),
    ],
)
def test_bad_pts_files_are_one_line_and_store_nothing(cli, tmp_path, text, message):
    path = tmp_path / "composite.xml"
    path.write_text(text)
    r = cli("import", str(path))
    assert r.code != 0
    assert message in r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err
    assert "no runs" in cli("list").out or cli("list").out.count("import") == 0


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_own_fio_runs_beside_a_published_pts_result(cli, tmp_path):
    """Two real fio runs of a job named as the pts-fio suite names it line up with the PTS systems."""
    outputs = []
    for i in range(2):
        out = tmp_path / f"rand-read-4k.{i}.json"
        subprocess.run(
            ["fio", "--name=rand-read-4k", "--rw=randread", "--bs=4k", "--size=16m", "--runtime=500ms", "--time_based",
             f"--filename={tmp_path / 'data'}", "--output-format=json", f"--output={out}"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        outputs.append(str(out))
    assert cli("import", *outputs, "--label", "mine").code == 0
    assert cli("import", str(FIO_XML)).code == 0
    c = json.loads(cli("compare", "mine", "2", "--json").out)
    assert [x["name"] for x in c["configs"]] == ["mine", "ext4-vs-zfs-fio (ext4 NVMe)", "ext4-vs-zfs-fio (zfs NVMe)"]
    row = next(x for x in c["rows"] if x["workload"] == "rand-read-4k" and x["direction"] == "read" and x["metric"] == "iops")
    assert [cell["n"] for cell in row["cells"].values()] == [2, 3, 3]  # my two runs and both PTS systems' trials
    assert row["cells"]["run2:ext4 NVMe"]["mean"] == pytest.approx((207872 + 206592 + 208640) / 3)


DBENCH_XML = Path(__file__).parent.parent / "data" / "pts" / "dbench-zfs-recordsize.xml"


def test_pts_dbench_maps_onto_the_pts_disk_suites_workloads():
    imported = map_result_file(parse_result_file(DBENCH_XML.read_text()))
    assert [w.name for w in imported.workloads] == ["dbench-1", "dbench-128"]
    by = {(r.workload, r.system): [] for r in imported.records}
    for r in imported.records:
        by[(r.workload, r.system)].append(r.fio.measures[0])
    assert all(m.unit == "MB/s" and m.higher_is_better for ms in by.values() for m in ms)
    # seed 002's figures are the means of each system's three trials
    assert summarize([m.value for m in by[("dbench-128", "raw 8k")]]).mean == pytest.approx(97.8, abs=0.05)
    assert summarize([m.value for m in by[("dbench-128", "raw 64k")]]).mean == pytest.approx(207.3, abs=0.05)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("dbench") is None, reason="dbench is installed by tests/setup-system.sh")
def test_an_imported_pts_dbench_meets_a_storbench_dbench_run_in_one_table(cli, tmp_path):
    assert cli("import", str(DBENCH_XML), "--label", "seed002").code == 0
    target = tmp_path / "t"
    target.mkdir()
    run = cli("run", "--workload", "dbench-1", "--target", str(target), "--runtime", "2s", "--repeat", "2", "--label", "mine",
              "--no-report")  # fmt: skip
    assert run.code == 0, run.err
    c = json.loads(cli("compare", "mine", "seed002", "--json").out)
    # one table: storbench's run, then each PTS system, marked as imported
    assert [x["name"] for x in c["configs"]] == ["mine", "seed002, imported (raw 8k)", "seed002, imported (raw 64k)"]
    row = next(x for x in c["rows"] if x["workload"] == "dbench-1" and x["metric"] == "MB/s")
    assert [cell["n"] for cell in row["cells"].values()] == [2, 3, 3]
    assert row["cells"]["run1:raw 8k"]["mean"] == pytest.approx(42.2, abs=0.05)
    assert row["cells"]["run2"]["mean"] > 0
    assert row["versus"]["run1:raw 8k"]["verdict"] in ("better", "worse", "within noise")
    # the two imported systems compare with each other as in seed 002: 64k ahead at 128 clients
    wide = next(x for x in c["rows"] if x["workload"] == "dbench-128" and x["metric"] == "MB/s")
    assert [k for k, v in wide["cells"].items() if v] == ["run1:raw 8k", "run1:raw 64k"] and wide["leader"] == "run1:raw 64k" and wide["leader_significant"]
    # comparing imports alone marks nothing
    alone = json.loads(cli("compare", "seed002", "--json").out)
    assert [x["name"] for x in alone["configs"]] == ["seed002 (raw 8k)", "seed002 (raw 64k)"]
