"""The one process module: every child and outside command goes through storbench.process.proc."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storbench.process import proc

SRC = Path(__file__).resolve().parents[2] / "src" / "storbench"


def test_no_process_is_started_anywhere_else():
    """No Popen, subprocess.run, os.system, shell=True, process-group signals or a parent-death signal
    outside process/proc.py (type annotations may name Popen)."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "proc.py" and path.parent == SRC / "process":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if re.search(r"subprocess\.(Popen|run|call|check_call|check_output)\(|os\.(system|popen|spawn\w*|killpg|fork)\(|shell=True|prctl\(", code):
                offenders.append(f"{path.relative_to(SRC)}:{n}: {line.strip()}")
    assert offenders == []


def test_spawn_execs_the_program_itself_and_refuses_a_missing_one_as_popen_would(tmp_path):
    """The parent-death signal is set by setpriv exec'ing the program (vfork: no Python between
    fork and exec): the child is the program, under the same pid; a program that is not there
    is the same error Popen gives, not setpriv's exit status."""
    child, _ = proc.spawn(["sleep", "30"])
    try:
        deadline = time.monotonic() + 10
        while (cmdline := Path(f"/proc/{child.pid}/cmdline").read_bytes().split(b"\0")[:2]) != [b"sleep", b"30"]:
            assert time.monotonic() < deadline, cmdline  # setpriv execs it at once
            time.sleep(0.01)
    finally:
        proc.stop_group(child)
    with pytest.raises(FileNotFoundError) as missing:
        proc.spawn(["storbench-no-such-program"])
    assert missing.value.filename == "storbench-no-such-program"
    (tmp_path / "not-executable").write_text("#!/bin/sh\n")
    with pytest.raises(PermissionError):
        proc.spawn(["./not-executable"], cwd=tmp_path)
    with pytest.raises(FileNotFoundError):
        proc.spawn(["./absent"], cwd=tmp_path)


ASK_PDEATHSIG = ("import ctypes, time; s = ctypes.c_int(); ctypes.CDLL('libc.so.6').prctl(2, ctypes.byref(s)); "
                 "print(s.value, flush=True); time.sleep(30)")  # PR_GET_PDEATHSIG


def test_spawn_starts_a_new_session_with_the_parent_death_signal():
    child, noted = proc.spawn([sys.executable, "-c", ASK_PDEATHSIG], stdout=subprocess.PIPE, text=True)
    try:
        assert noted == []
        assert child.stdout.readline().strip() == str(int(signal.SIGTERM))  # it dies if storbench does
        with open(f"/proc/{child.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        assert int(fields[2]) == int(fields[3]) == child.pid  # its own process group and session
    finally:
        proc.stop_group(child)
        child.stdout.close()
    assert child.returncode == -signal.SIGTERM


def test_stop_group_climbs_the_ladder_for_a_child_that_ignores_sigterm():
    child, _ = proc.spawn([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(30)"],
                          stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert child.stdout.readline().strip() == "ready"
    started = time.monotonic()
    proc.stop_group(child, ((signal.SIGTERM, 0.5), (signal.SIGKILL, 5.0)))
    assert child.returncode == -signal.SIGKILL
    assert time.monotonic() - started < 5.5  # bounded by the ladder, never a hang
    child.stdout.close()


#: a child that forks a grandchild ignoring SIGTERM (as a fio server's connection and job processes
#: outlive it), prints both pids, and exits on SIGTERM itself
PARENT_AND_STUBBORN_CHILD = (
    "import os, signal, sys, time\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(30); os._exit(0)\n"
    "print(os.getpid(), pid, flush=True); time.sleep(30)\n"
)


def test_stop_group_until_the_group_is_gone_kills_what_outlives_the_child():
    child, _ = proc.spawn([sys.executable, "-c", PARENT_AND_STUBBORN_CHILD], stdout=subprocess.PIPE, text=True)
    parent_pid, grandchild_pid = map(int, child.stdout.readline().split())
    assert parent_pid == child.pid and sorted(proc.group_members(child.pid)) == sorted([parent_pid, grandchild_pid])
    proc.stop_group(child, ((signal.SIGTERM, 1.0), (signal.SIGKILL, 10.0)), until_group_gone=True)
    assert child.returncode == -signal.SIGTERM  # the child went on the first signal ...
    assert proc.group_members(child.pid) == []  # ... and the grandchild that ignored it is gone too
    child.stdout.close()


def test_run_uses_the_c_locale_and_closes_stdin():
    done = proc.run([sys.executable, "-c", "import os, sys; print(os.environ.get('LC_ALL'), sys.stdin.read() == '')"], timeout_s=30)
    assert done.returncode == 0 and done.stdout.split() == ["C", "True"]


def test_run_checked_names_the_command_and_its_last_words():
    with pytest.raises(proc.CommandError, match=r"exited with status 3: the disk is on fire$") as err:
        proc.run_checked([sys.executable, "-c", "import sys; print('x', file=sys.stderr); print('the disk is on fire', file=sys.stderr); sys.exit(3)"],
                         timeout_s=30)  # fmt: skip
    assert err.value.returncode == 3 and err.value.argv[0] == sys.executable
    with pytest.raises(proc.CommandError, match=r"^no-such-program-storbench did not finish: not installed$"):
        proc.run_checked(["no-such-program-storbench"], timeout_s=5)
    with pytest.raises(proc.CommandError, match=r"did not finish: timed out after 0.2 s$"):
        proc.run_checked([sys.executable, "-c", "import time; time.sleep(5)"], timeout_s=0.2)


def test_a_fio_still_running_when_storbench_exits_is_killed_with_its_group(monkeypatch):
    """The exit hook of run/fioexec.py: whatever path left a fio running (one seen hung in a lock
    after its parent-death SIGTERM), it and what it forked are killed when storbench exits."""
    from storbench.run import fioexec

    child, _ = proc.spawn([sys.executable, "-c", PARENT_AND_STUBBORN_CHILD], stdout=subprocess.PIPE, text=True)
    assert len(child.stdout.readline().split()) == 2  # the child and the grandchild that ignores SIGTERM run
    monkeypatch.setitem(fioexec._RUNNING, child.pid, child)
    fioexec._kill_running_fio()
    assert child.wait(timeout=10) == -signal.SIGKILL and proc.group_members(child.pid) == []
    child.stdout.close()
