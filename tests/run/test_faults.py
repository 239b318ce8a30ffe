"""Interrupted studies: Ctrl-C, SIGTERM and the kernel killing fio, with real fio and a real SQLite file.

What must hold each time: results that finished stay stored (and only complete
ones), the run says why it is incomplete, test files and fio's temporary files are
gone, no fio process outlives storbench, and ``run --resume`` finishes only what
is missing.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from storbench.errors import Interrupted
from storbench.jobs.jobfile import build_job
from storbench.model import Overrides, Target
from storbench.run import runner
from storbench.suites import builtin_catalog

from conftest import DATA, needs_fio

WORKLOADS = ("rnd4k-q1t1-read", "rnd4k-q1t1-write", "seq1m-q1t1-read")


def _sql(db: Path, query: str) -> list[tuple]:
    try:
        con = sqlite3.connect(db)
        try:
            return con.execute(query).fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return []


def _count(db: Path) -> int:
    found = _sql(db, "select count(*) from results")
    return found[0][0] if found else 0


def _children(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the processes whose parent is ``pid``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            out.append((int(entry), cmd))
    return out


def _processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that mention ``text`` (fio's job file lives in our TMPDIR)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in cmd and "pytest" not in cmd:
                found.append(cmd)
    return found


class Study:
    """``python -m storbench run`` as a separate process with its own database, target and TMPDIR."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path
        self.db = tmp_path / "r.sqlite"
        self.target = tmp_path / "t"
        self.tmpdir = tmp_path / "tmp"  # fio's storbench-fio-* directories go here
        self.target.mkdir()
        self.tmpdir.mkdir()
        self.env = dict(os.environ, STORBENCH_DB=str(self.db), TMPDIR=str(self.tmpdir))
        self.env.pop("STORBENCH_DEBUG", None)

    def start(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "storbench", "run", "--target", str(self.target), "--no-report", *args],
            env=self.env, cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            # as from a shell: SIGINT is not ignored in the child
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "storbench", *args], env=self.env, cwd=self.root,
            capture_output=True, text=True, timeout=180,
        )

    def wait_for_results(self, n: int, proc: subprocess.Popen, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while _count(self.db) < n:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no result stored in time"
            time.sleep(0.05)

    def assert_clean(self) -> None:
        assert sorted(os.listdir(self.target)) == [], "test files left behind"
        assert sorted(os.listdir(self.tmpdir)) == [], "fio's temporary directories left behind"
        deadline = time.monotonic() + 5  # a killed process group takes a moment to vanish
        while _processes_mentioning(str(self.tmpdir)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _processes_mentioning(str(self.tmpdir)) == [], "fio processes outlived storbench"

    def stored(self) -> list[tuple[str, int, bool]]:
        rows = _sql(self.db, "select workload, repetition, result_json from results order by id")
        return [(w, r, json.loads(j)["interrupted"]) for w, r, j in rows]


def _one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    errors = [ln for ln in stderr.splitlines() if ln.startswith("storbench: ")]
    assert len(errors) == 1, stderr
    return errors[0]


# --------------------------------------------------------------------------- Ctrl-C and SIGTERM


@pytest.mark.slow
@needs_fio
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_mid_suite_keeps_what_finished_then_resume_finishes(tmp_path: Path, sig: signal.Signals) -> None:
    study = Study(tmp_path)
    workloads = [a for w in WORKLOADS for a in ("--workload", w)]
    proc = study.start(*workloads, "--size", "16m", "--runtime", "2", "--label", "study")
    study.wait_for_results(1, proc)
    time.sleep(0.5)  # well inside the second workload's fio run
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    how = "Ctrl-C" if sig == signal.SIGINT else "SIGTERM"
    line = _one_error_line(err)
    assert line.startswith(f"storbench: error: interrupted ({how}) during workload 'rnd4k-q1t1-write'"), line
    [(status, reason)] = _sql(study.db, "select status, reason from runs")
    assert status == "incomplete" and f"interrupted ({how})" in reason
    # only what finished is stored: the first workload, complete (fio was not interrupted in it)
    assert study.stored() == [("rnd4k-q1t1-read", 0, False)]
    study.assert_clean()

    res = study.cli("run", "--resume", "study", "--json", "--no-report")
    assert res.returncode == 0, res.stderr
    records = json.loads(res.stdout)
    assert Counter(r["workload"] for r in records) == {w: 1 for w in WORKLOADS}
    # the resumed run added exactly the two missing workloads, in suite order
    assert [w for w, _, _ in study.stored()] == list(WORKLOADS)
    assert _sql(study.db, "select status, reason from runs") == [("complete", None)]
    study.assert_clean()


@pytest.mark.slow
@needs_fio
def test_fio_killed_by_the_kernel_is_a_failed_workload_and_resume_redoes_it(tmp_path: Path) -> None:
    """SIGKILL on the fio process (what the OOM killer does) mid-workload."""
    study = Study(tmp_path)
    workloads = [a for w in WORKLOADS for a in ("--workload", w)]
    proc = study.start(*workloads, "--size", "16m", "--runtime", "3", "--label", "killed")
    study.wait_for_results(1, proc)
    deadline = time.monotonic() + 30
    fio = []
    while not fio:  # the second workload's fio, by its parent pid
        assert time.monotonic() < deadline and proc.poll() is None
        fio = [pid for pid, cmd in _children(proc.pid) if "fio" in cmd.split(" ")[0] and str(study.tmpdir) in cmd]
        time.sleep(0.02)
    time.sleep(0.5)  # laid out and measuring
    os.kill(fio[0], signal.SIGKILL)
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == 1, err
    assert "FAILED rnd4k-q1t1-write" in err
    line = _one_error_line(err)
    assert line.startswith("storbench: error: 1 of 3 workload(s) failed; first: workload 'rnd4k-q1t1-write' on "), line
    assert "fio was killed by signal 9 (SIGKILL)" in line
    # the later workload ran; the killed one left nothing in the results
    assert study.stored() == [("rnd4k-q1t1-read", 0, False), ("seq1m-q1t1-read", 0, False)]
    [(status, reason)] = _sql(study.db, "select status, reason from runs")
    assert status == "incomplete"
    assert "rnd4k-q1t1-write" in reason and "killed by signal 9" in reason
    study.assert_clean()  # fio's orphaned job process was stopped too

    res = study.cli("run", "--resume", "killed", "--no-report")
    assert res.returncode == 0, res.stderr
    assert [w for w, _, _ in study.stored()] == ["rnd4k-q1t1-read", "seq1m-q1t1-read", "rnd4k-q1t1-write"]
    assert _sql(study.db, "select status from runs") == [("complete",)]
    study.assert_clean()


# --------------------------------------------------------------------------- in-process, deterministic


def _specs(tmp_path: Path, names=WORKLOADS):
    catalog = builtin_catalog()
    target = Target(kind="dir", path=str(tmp_path))
    return [build_job(catalog.workload(n), target, Overrides(size="16m", runtime="1")) for n in names]


class _FakeFio:
    """Returns a real fio JSON result for every job; ``during(n)`` runs inside the n-th call."""

    remote = False
    path = "fio"

    def __init__(self, during=None) -> None:
        self.calls = 0
        self.during = during or (lambda n: None)
        self.output = (DATA / "fio-json" / "h_randrw.json").read_text()

    def version(self) -> str:
        return "fio-3.33"

    def run(self, job_text, on_status):
        self.calls += 1
        self.during(self.calls)
        return runner.FioInvocation(returncode=0, output_text=self.output, stderr_text="", stdout_text="")


class _Sink:
    def __init__(self) -> None:
        self.records = []

    def add_result(self, record) -> int:
        self.records.append(record)
        return len(self.records)


def _execute(specs, fio, sink):
    return runner.execute(specs, runner.ExecuteContext(run_id=1, executor=fio, sink=sink, reporter=runner.SilentReporter(),
                                                       clock=lambda: "2024-01-01T00:00:00Z"))  # fmt: skip


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_whose_exception_python_swallowed_still_stops_the_run(tmp_path: Path, sig) -> None:
    """Python drops an exception raised by a signal handler while it runs an at-fork
    callback or a finalizer ("Exception ignored in ...").  subprocess forks for every
    fio run, so a SIGTERM landing there was lost and the study ran on to exit 0."""

    def swallowed(n: int) -> None:
        if n == 1:
            try:
                os.kill(os.getpid(), sig)
                time.sleep(0.1)  # the handler runs here
            except KeyboardInterrupt:
                pass  # what Python does with it inside os.fork()'s at-fork callbacks

    fio, sink = _FakeFio(swallowed), _Sink()
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with pytest.raises(Interrupted, match=r"interrupted \((SIGTERM|Ctrl-C)\) during workload 'rnd4k-q1t1-write'"):
        _execute(_specs(tmp_path), fio, sink)
    assert fio.calls == 1, "workloads were started after the signal"
    assert [r.workload for r in sink.records] == ["rnd4k-q1t1-read"]  # what finished is kept
    # the handlers are put back afterwards, and the next run starts with no stop request
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
    fio2, sink2 = _FakeFio(), _Sink()
    outcome = _execute(_specs(tmp_path), fio2, sink2)
    assert fio2.calls == 3 and len(outcome.stored) == 3 and not outcome.failures


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_a_child_is_started_is_noted_then_raised(sig) -> None:
    """A clean run was stopped with Ctrl-C as fio was being forked: Python printed "Exception
    ignored in: <function _releaseLock>" and a traceback (the handler raised inside logging's
    at-fork callback).  While a child is started the signal is now only noted, and raised once
    the caller holds the child; nothing is printed, and the handlers are put back."""
    from storbench.process import signals

    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with signals.as_interrupt():
        with signals.spawning() as noted:
            os.kill(os.getpid(), sig)
            time.sleep(0.05)  # the handler runs here: noted, not raised
        assert noted == [signals.name(sig)]
        with pytest.raises(KeyboardInterrupt) as caught:
            signals.raise_noted(noted)
        assert signals.how(caught.value) == signals.name(sig) and signals.stop_requested == [signals.name(sig)]
        signals.raise_noted([])  # nothing noted: nothing raised
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers and signals.stop_requested == []


@pytest.mark.parametrize(
    "returncode, expect",
    [
        (-9, "fio was killed by signal 9 (SIGKILL)"),
        (-15, "fio was killed by signal 15 (SIGTERM)"),
        (-11, "fio was killed by signal 11 (SIGSEGV)"),
    ],
)
def test_failure_reason_names_the_killing_signal(returncode: int, expect: str) -> None:
    inv = runner.FioInvocation(returncode=returncode, output_text="", stderr_text="", stdout_text="Jobs: 1 (f=1)\n")
    reason = runner.fio_failure_reason(inv, None)
    assert reason is not None and reason.startswith(expect) and "\n" not in reason


def test_killed_fio_with_partial_output_is_still_a_failure() -> None:
    """A status-interval document written before the kill parses, but is not a result."""
    partial = (DATA / "fio-json" / "status_interval.json").read_text()
    inv = runner.FioInvocation(returncode=-9, output_text=partial, stderr_text="", stdout_text="")
    from storbench.fio.json import parse_fio_json

    assert runner.fio_failure_reason(inv, parse_fio_json(partial)).startswith("fio was killed by signal 9")


# --------------------------------------------------------------------------- storbench itself killed


@pytest.mark.slow
@needs_fio
def test_storbench_killed_leaves_a_run_that_is_called_interrupted_reconciled_and_resumed_as_one(tmp_path: Path) -> None:
    """SIGKILL on storbench (no handler runs): the run stays 'running' in the store.  list and show
    call it interrupted (its PID is gone), the next run marks it incomplete and removes what the
    killed one left (fio's temporary directory, the scratch directory), and --resume adds the
    missing workloads to the SAME configuration (the scratch directory stored by its role)."""
    study = Study(tmp_path)
    workloads = [a for w in WORKLOADS for a in ("--workload", w)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "storbench", "run", "--no-report", *workloads, "--size", "16m", "--runtime", "2", "--label", "k9"],
        env=study.env, cwd=study.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    study.wait_for_results(1, proc)
    time.sleep(0.5)  # inside the second workload
    proc.kill()
    proc.communicate(timeout=30)
    left = sorted(os.listdir(study.tmpdir)), sorted(n for n in os.listdir(study.root) if n.startswith(".storbench-scratch-"))
    assert left[0] and left[0][0].startswith(f"storbench-fio-{proc.pid}-"), left
    assert left[1] and left[1][0].startswith(f".storbench-scratch-{proc.pid}-"), left
    assert _sql(study.db, "select status from runs") == [("running",)]  # as the killed process left it

    listed = study.cli("list", "--json")
    assert listed.returncode == 0, listed.stderr
    [run] = json.loads(listed.stdout)
    assert run["status"] == "interrupted" and f"pid {proc.pid}" in run["reason"], run
    shown = study.cli("show", "k9")
    assert "interrupted" in shown.stdout and f"pid {proc.pid}" in shown.stdout, shown.stdout

    res = study.cli("run", "--resume", "k9", "--no-report")
    assert res.returncode == 0, res.stderr
    assert "note: run 1 was left running by a storbench process that is gone: marked incomplete" in res.stderr
    assert [w for w, _, _ in study.stored()] == list(WORKLOADS)
    assert _sql(study.db, "select status from runs") == [("complete",)]
    # one configuration: every result has the same stored target, the scratch directory's role
    assert _sql(study.db, "select distinct target from results") == [(f"{study.root}/.storbench-scratch",)]
    # what the killed process left is gone, and so is the resumed run's own
    assert os.listdir(study.tmpdir) == []
    assert [n for n in os.listdir(study.root) if n.startswith(".storbench-scratch")] == []


@pytest.mark.slow
@needs_fio
def test_an_interrupted_run_says_how_to_resume_it(tmp_path: Path) -> None:
    study = Study(tmp_path)
    proc = study.start("--workload", "rnd4k-q1t1-read", "--size", "16m", "--runtime", "3", "--label", "hint")
    deadline = time.monotonic() + 60
    while not os.listdir(study.tmpdir):  # fio has started
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert _one_error_line(err).endswith("; storbench run --resume 1 finishes it"), err
