"""fio job files read as fio reads them (storbench.suites.fiofile): pure, no fio."""

from __future__ import annotations

import pytest

from storbench.errors import SuiteError
from storbench.jobs.jobfile import build_job, in_every_section
from storbench.model import Overrides, Target, workload_from_meta, workload_to_meta
from storbench.run.fioexec import output_format
from storbench.run.inventory import job_for_host, with_window_logs
from storbench.suites.fiofile import parse_job_file_text

#: fio's own examples/ssd-test.fio (3.33), its comments cut short: four jobs, each behind a stonewall
SSD_TEST = """\
# Do some important numbers on SSD drives
[global]
bs=4k
ioengine=libaio
iodepth=4
size=10g
direct=1
runtime=60
directory=/mount-point-of-ssd
filename=ssd.test.file

[seq-read]
rw=read
stonewall

[rand-read]
rw=randread
stonewall

[seq-write]
rw=write
stonewall

[rand-write]
rw=randwrite
stonewall
"""


def parse(text: str, environ: dict[str, str] | None = None, read=None):
    return parse_job_file_text(text, "jobs.fio", environ=environ or {}, read=read)


def test_every_stonewalled_job_is_a_workload_with_the_globals_applied():
    jf = parse(SSD_TEST)
    assert [w.name for w in jf.suite.workloads] == ["seq-read", "rand-read", "seq-write", "rand-write"]
    first = jf.suite.workloads[0]
    assert first.options == (
        ("bs", "4k"), ("ioengine", "libaio"), ("iodepth", "4"), ("size", "10g"), ("direct", "1"), ("runtime", "60"),
        ("rw", "read"),
    )  # fmt: skip
    assert [w.option("rw") for w in jf.suite.workloads] == ["read", "randread", "write", "randwrite"]
    assert all(not w.sections for w in jf.suite.workloads)
    assert jf.suite.name == "jobs.fio" and jf.suite.origin == "jobs.fio"
    assert first.description == "[seq-read] of jobs.fio (line 12)"
    # where the I/O went is the target's: said, one line per option, with the line it was on
    assert jf.notes == (
        "jobs.fio:9: directory=/mount-point-of-ssd replaced by the target (storbench decides where the I/O goes)",
        "jobs.fio:10: filename=ssd.test.file replaced by the target (storbench decides where the I/O goes)",
    )


def test_jobs_without_a_stonewall_run_together_as_one_workload():
    text = "; four depths at once\n[global]\nrw=randread\nbs=128k\n\n[file1]\niodepth=4\n[file2]\niodepth=32\n[file3]\niodepth=8\n"
    [w] = parse(text).suite.workloads
    assert w.name == "file1..file3"
    assert [name for name, _ in w.sections] == ["file1", "file2", "file3"]
    assert [dict(o)["iodepth"] for _, o in w.sections] == ["4", "32", "8"]
    assert w.options == w.sections[0][1]  # what the checks and the headline read
    assert w.description == "3 jobs of jobs.fio fio runs together (line 6): [file1], [file2], [file3]"
    # stored and read back whole
    assert workload_from_meta(workload_to_meta(w)) == w


def test_stonewall_in_global_makes_every_job_its_own_and_new_group_keeps_them_together():
    each = parse("[global]\nstonewall=1\nrw=read\n[a]\nbs=4k\n[b]\nbs=8k\n").suite.workloads
    assert [w.name for w in each] == ["a", "b"]
    together = parse("[a]\nrw=read\n[b]\nnew_group\nrw=write\n").suite.workloads
    assert [w.name for w in together] == ["a..b"]
    assert together[0].sections[1][1] == (("new_group", None), ("rw", "write"))
    off = parse("[a]\nrw=read\n[b]\nstonewall=0\nrw=write\n").suite.workloads
    assert [w.name for w in off] == ["a..b"]


def test_wait_for_starts_a_workload_after_the_job_it_waits_for():
    text = "[writers]\nrw=write\n[readers]\nnew_group\nwait_for=writers\nrw=randread\n"
    assert [w.name for w in parse(text).suite.workloads] == ["writers", "readers"]
    assert parse(text).suite.workloads[1].options == (("new_group", None), ("rw", "randread"))


def test_a_later_global_adds_to_the_earlier_and_applies_only_after_it():
    text = "[global]\nbs=4k\nrw=read\n[a]\nstonewall\n[global]\nbs=64k\n[b]\nstonewall\nrw=write\n"
    a, b = parse(text).suite.workloads
    assert a.options == (("bs", "4k"), ("rw", "read"))
    assert b.options == (("bs", "64k"), ("rw", "write"))  # the job's own value replaces the default in place


def test_comments_blanks_and_spaces_as_fio_strips_them():
    text = "  [global]\n# a comment\n\t; another\nnumjobs=4\t; four clones\nsize = 1g # inline\n[j]\ntime_based\n"
    [w] = parse(text).suite.workloads
    assert w.options == (("numjobs", "4"), ("size", "1g"), ("time_based", None))


def test_environment_variables_expanded_and_an_unset_one_refused():
    text = "[j]\nrw=${RW}\nbs=${BS}k\nnumjobs=$ncpus\n"
    [w] = parse(text, {"RW": "randwrite", "BS": "16"}).suite.workloads
    assert w.options == (("rw", "randwrite"), ("bs", "16k"), ("numjobs", "$ncpus"))
    with pytest.raises(SuiteError) as exc:
        parse(text, {"RW": "read"})
    assert str(exc.value) == "jobs.fio:3: '${BS}k' uses ${BS}, which is not set in the environment (fio would read it as empty)"


def test_include_reads_options_from_another_file():
    files = {"common.fio": "bs=4k\nioengine=psync\n", "bad.fio": "[oops]\nrw=read\n"}

    def read(name, from_label):
        return name, files[name]

    [w] = parse("[j]\ninclude common.fio\nrw=read\n", read=read).suite.workloads
    assert w.options == (("bs", "4k"), ("ioengine", "psync"), ("rw", "read"))
    with pytest.raises(SuiteError, match=r"^bad.fio:1: an included file may hold options only"):
        parse("[j]\ninclude bad.fio\n", read=read)
    with pytest.raises(SuiteError, match=r"include nests deeper than 8"):
        parse("[j]\ninclude loop.fio\n", read=lambda name, _: (name, "include loop.fio\n"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rw=read\n[j]\n", "jobs.fio:1: option 'rw=read' outside of a [section] (fio says the same)"),
        ("[global]\nrw=read\n", "jobs.fio:1: defines no job section (only [global] ones, or nothing): fio would run nothing"),
        ("", "jobs.fio:1: defines no job section (only [global] ones, or nothing): fio would run nothing"),
        ("[j]\nrw=read\nexec_prerun=rm -rf /\n", "jobs.fio:3: exec_prerun: runs a program; storbench runs I/O workloads only"),
        ("[j]\nread_iolog=trace.log\n", "jobs.fio:2: read_iolog: replays an I/O log: import it with 'storbench trace import' and run it with 'storbench run --replay'"),
        ("[j]\nkb_base=1000\n", "jobs.fio:2: kb_base: storbench reads sizes with fio's default kb_base=1024"),
        ("[j]\nioengine=net\nhostname=h\n", "jobs.fio:2: ioengine=net does no I/O on a file or device (the target): storbench runs a job file on its target with an engine that does file or block I/O (e4defrag, falloc, filecreate, filedelete, filestat, ftruncate, io_uring, libaio, mmap, null, posixaio, psync, pvsync, pvsync2, splice, sync, vsync)"),
        ("[j]\nioengine=rbd\npool=rbd\n", "jobs.fio:2: ioengine=rbd is the engine of storbench's rbd:// targets, which set it and its options: leave them out of the job file and give --target rbd://POOL/IMAGE"),
        ("[j]\nrw=read\nblocksise=4k\n", "jobs.fio:3: unknown fio option 'blocksise' (did you mean 'blocksize'?) (storbench knows fio 3.33's options: 'fio --cmdhelp=all')"),
        ("[j]\nrw=read\nprofile=tiobench\n", "jobs.fio:3: profile=tiobench: fio's profiles write jobs of their own; give the jobs themselves"),
        ("[j]\nrw=\n", "jobs.fio:2: rw: the value is empty"),
        ("[j]\nRW=read\n", "jobs.fio:2: 'RW' is not a fio option name (lower-case letters, digits, '_' and '-' only)"),
        ("[j\nrw=read\n", "jobs.fio:1: '[j' is not a [section] line"),
    ],
)
def test_what_storbench_cannot_honour_is_one_line_naming_file_and_line(text, message):
    with pytest.raises(SuiteError) as exc:
        parse(text)
    assert str(exc.value) == message


def test_options_left_out_are_said_never_dropped_silently():
    text = "[global]\nthreads=1\nwrite_bw_log=bw\nunlink=1\nname=x\n[j]\nrw=read\n"
    jf = parse(text)
    assert jf.suite.workloads[0].options == (("rw", "read"),)
    assert jf.notes == (
        "jobs.fio:2: threads=1 left out: an option of fio's tiobench profile, which does nothing without profile=tiobench (did you mean 'thread'?)",
        "jobs.fio:3: write_bw_log=bw left out: storbench writes fio's per-second logs itself",
        "jobs.fio:4: unlink=1 left out: storbench removes the test files it made (and never a file it did not)",
        "jobs.fio:5: name=x replaced by the target (storbench decides where the I/O goes)",
    )


def test_section_names_become_workload_names_a_job_section_can_carry():
    text = "[Random Read 4K]\nrw=randread\nstonewall\n[random-read-4k]\nrw=randread\nstonewall\n[global-ish]\nbs=8k\n[x]\nrw=read\nstonewall\n"
    names = [w.name for w in parse(text).suite.workloads]
    assert names == ["random-read-4k", "random-read-4k-2", "x"]  # [global-ish] is a global section, as fio reads it


# --------------------------------------------------------------------------- the job fio is given


def test_a_group_is_one_job_file_with_every_section_placed_and_scaled():
    [w] = parse("[global]\nrw=randread\nsize=10g\nruntime=60\ndirectory=/data1\n[a]\niodepth=4\n[b]\niodepth=32\n").suite.workloads
    spec = build_job(w, Target("dir", "/mnt/t"), Overrides(size="16m", runtime="1s", extra=(("log_avg_msec", "1000"),)))
    assert spec.job_text == (
        "[a]\nrw=randread\nsize=16m\nruntime=1s\niodepth=4\nlog_avg_msec=1000\nfilename=/mnt/t/storbench.testfile\n"
        "\n"
        "[b]\nrw=randread\nsize=16m\nruntime=1s\niodepth=32\nlog_avg_msec=1000\nfilename=/mnt/t/storbench.testfile\n"
    )
    assert spec.test_files == ("/mnt/t/storbench.testfile",)
    # several jobs reported apart: fio's histograms, for the group's merged p99
    assert output_format(spec.job_text) == "json+"
    assert output_format(spec.job_text + "group_reporting\n") == "json"
    assert output_format(spec.job_text + "group_reporting\nnew_group\n") == "json+"
    # what storbench adds after the job is built goes into every section
    assert in_every_section(spec.job_text, ["unlink=1"]).count("unlink=1") == 2
    assert with_window_logs(spec.job_text, 3).count("write_iops_log=sbh3") == 2
    moved = job_for_host(spec.job_text, "/srv/h1")
    assert moved.count("filename=/srv/h1/storbench.testfile") == 2 and "/mnt/t" not in moved


def test_in_every_section_keeps_a_lone_section_as_it_was_followed_by_the_lines():
    assert in_every_section("[a]\nrw=read\n", ["unlink=1"]) == "[a]\nrw=read\nunlink=1\n"
    assert in_every_section("# storbench: note\n[a]\nrw=read\n\n[b]\nrw=write\n", ["x=1"]) == (
        "# storbench: note\n[a]\nrw=read\nx=1\n\n[b]\nrw=write\nx=1\n"
    )
