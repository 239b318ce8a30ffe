"""The watch of the server under a target (storbench.run.serverwatch) and fio stopped by it
(storbench.run.fioexec): the rules on an injected probe and clock, then real fio and a real port.
The servers killed for real (tgtd, nfs-ganesha) are in tests/targets/test_protocol_faults.py."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

from storbench.run.serverwatch import ServerWatch, connect_problem

from conftest import needs_fio


class Probes:
    """Answers given in turn (None: the server answered), then the last one for ever."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.asked = 0

    def __call__(self, host: str, port: int) -> str | None:
        self.asked += 1
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_server_that_answered_then_refuses_three_times_in_a_row_stops_fio():
    clock = Clock()
    probes = Probes(None, None, "connection refused", None, "connection refused")
    watch = ServerWatch("the iSCSI target", "127.0.0.1", 3260, probe=probes, clock=clock)
    watch.start()  # answered
    assert watch.check() is None and probes.asked == 1  # within the interval: not asked again
    clock.now += 1.0
    assert watch.check() is None  # answered
    clock.now += 1.0
    assert watch.check() is None  # refused once
    clock.now += 1.0
    assert watch.check() is None  # answered again: the count starts anew
    for _ in range(2):
        clock.now += 1.0
        assert watch.check() is None
    clock.now += 1.0
    assert watch.check() == ("the iSCSI target at 127.0.0.1:3260 stopped answering during the workload (connection refused, "
                             "3 tries 1 s apart); fio was stopped, its figures are not kept")  # fmt: skip
    assert probes.asked == 7


def test_a_server_that_never_answered_is_never_judged():
    """A port storbench chose (NFS's 2049) where the server listens elsewhere must not fail a run."""
    clock = Clock()
    watch = ServerWatch("the NFS server", "nas.lan", 2049, probe=Probes("connection refused"), clock=clock)
    assert watch.gone() is None
    for _ in range(10):
        clock.now += 1.0
        assert watch.check() is None


def test_the_next_workload_is_not_started_on_a_server_still_gone():
    clock = Clock()
    watch = ServerWatch("the NFS server", "::1", 2049, probe=Probes(None, "no answer within 2 s"), clock=clock)
    assert watch.gone() is None  # answered: the workload runs
    assert watch.gone() == "not run: the NFS server at [::1]:2049 is not answering (no answer within 2 s); it answered earlier in this run"


def test_connect_problem_on_a_real_port():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert connect_problem("127.0.0.1", port) is None
    assert connect_problem("127.0.0.1", port) == "connection refused"  # closed now


@needs_fio
def test_real_fio_stopped_by_its_watch_leaves_no_process(tmp_path: Path):
    """A 60 s job whose watch says its server is gone after about a second: fio stops within the
    short ladder, the invocation says why, and neither fio nor its job process (a session of
    its own: fio calls setsid) is left."""
    from storbench.run.fioexec import SubprocessFio
    from storbench.run.runner import fio_failure_reason

    started = time.monotonic()
    calls = []

    def watch() -> str | None:
        calls.append(time.monotonic())
        return "the test's server is gone" if time.monotonic() - started > 1.0 else None

    job = f"[w]\nfilename={tmp_path / 'f'}\nsize=4m\nrw=randread\nbs=4k\ntime_based=1\nruntime=60\nioengine=psync\n"
    inv = SubprocessFio().run(job, lambda status: None, watch=watch)
    elapsed = time.monotonic() - started
    assert inv.stopped_reason == "the test's server is gone"
    assert fio_failure_reason(inv, None) == "the test's server is gone"
    assert calls  # asked while fio ran (how often depends on how busy the machine is)
    assert elapsed < 60  # stopped, not waited for: the job alone runs 60 s
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
    assert [pid for pid in left if int(pid) != os.getpid()] == []


def test_a_deadline_stops_a_job_whose_requests_never_come_back():
    """A server that answers connections but not the requests in flight (radosgw on a nearly full
    pool): the watch gives its reason once the limit has passed, and the server's own word first."""
    from storbench.run.serverwatch import with_deadline

    now = [100.0]
    watch = with_deadline(None, 65.0, "stuck", clock=lambda: now[0])
    now[0] = 165.0
    assert watch() is None
    now[0] = 165.1
    assert watch() == "stuck"
    first = with_deadline(lambda: "gone", 65.0, "stuck", clock=lambda: now[0])
    assert first() == "gone"
