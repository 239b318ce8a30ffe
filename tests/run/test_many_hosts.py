"""Many fio servers at once, for real (issue 41): 12 and 64 plain ``fio --server`` processes on
loopback addresses of their own, each in its own directory, probed by one fio client, one killed or frozen
mid-run; ``--hosts-required`` before and during a run; the aggregate marked partial.

At teardown every process of every server is stopped (found by its address and the test's own
port: a killed server's job processes are orphans of init) and the test checks that a server the
test did not harm had no job or connection process left by the run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_agent import free_port

from conftest import needs_fio

pytestmark = [needs_fio, pytest.mark.backend]


@dataclass
class Server:
    address: str
    port: int
    directory: Path
    proc: subprocess.Popen
    #: killed or frozen by the test: what is left of it is the test's doing, not the run's
    harmed: bool = False

    @property
    def endpoint(self) -> str:
        return f"{self.address}:{self.port}"


def _processes_of(address: str, port: int) -> list[int]:
    """Every live process of the fio server at ``address:port``: the server, its connection
    processes (each starts a session of its own) and their job processes, orphaned or not; found
    by the command line fio keeps (the port is the test's own)."""
    wanted = f"--server=ip:{address},{port}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if wanted in argv and stat[stat.rfind(")") + 2 :].split()[0] not in ("Z", "X"):
            found.append(int(entry))
    return found


def _signal_all(server: Server, sig: int) -> None:
    for p in _processes_of(server.address, server.port):
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, sig)


def _wait_listening(servers: list[Server], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    for s in servers:
        while True:
            with contextlib.closing(socket.socket()) as sock:
                sock.settimeout(0.5)
                if sock.connect_ex((s.address, s.port)) == 0:
                    break
            assert time.monotonic() < deadline, f"fio server {s.endpoint} did not listen within {timeout_s} s"
            time.sleep(0.05)


@pytest.fixture
def servers(request, tmp_path: Path) -> Iterator[list[Server]]:
    """fio servers on 127.0.41.1-N (N: the test's parameter, else 12), one port, a directory
    each; at the end every process of each (found by its address and the test's own port, the
    orphaned job processes of a killed server too) is stopped, and none may be left."""
    port = free_port()
    started: list[Server] = []
    try:
        for i in range(1, getattr(request, "param", 12) + 1):
            directory = tmp_path / f"s{i}"
            directory.mkdir()
            address = f"127.0.41.{i}"
            proc = subprocess.Popen(["fio", f"--server=ip:{address},{port}"], cwd=directory, start_new_session=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
            started.append(Server(address, port, directory, proc))
        _wait_listening(started)
        yield started
    finally:
        def below(s: Server) -> list[int]:
            return [p for p in _processes_of(s.address, s.port) if p != s.proc.pid]

        def leftover() -> dict[str, list[int]]:
            return {s.endpoint: b for s in started if not s.harmed and (b := below(s))}

        deadline = time.monotonic() + 15  # a server reaps its connection's process a moment after the client left
        while (left := leftover()) and time.monotonic() < deadline:
            time.sleep(0.2)
        for s in started:
            _signal_all(s, signal.SIGCONT)  # a frozen one too
            _signal_all(s, signal.SIGKILL)
            s.proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while (gone := [s.endpoint for s in started if _processes_of(s.address, s.port)]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert gone == []  # nothing of any server is left running
        # the run left no job or connection process on a server that lived
        assert left == {}


def _hosts_file(tmp_path: Path, servers: list[Server], extra: tuple[str, ...] = ()) -> Path:
    path = tmp_path / "hosts.txt"
    path.write_text("# the test's fio servers\n" + "".join(f"{s.endpoint}\n" for s in servers) + "".join(f"{e}\n" for e in extra))
    return path


def _rows(db: Path, sql: str) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql).fetchall()


@pytest.mark.slow
@pytest.mark.parametrize("servers", [64], indirect=True)
def test_a_host_killed_mid_run_leaves_a_partial_aggregate_and_stops_a_run_that_needs_all(cli, tmp_path, servers) -> None:
    victim = servers[40]
    killed = threading.Event()

    def kill_when_running() -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if any(victim.directory.glob("storbench.testfile*")):  # its job has started (its file is named for it)
                time.sleep(0.5)
                victim.harmed = True
                _signal_all(victim, signal.SIGKILL)  # the server, its connection and job processes
                killed.set()
                return
            time.sleep(0.05)

    watcher = threading.Thread(target=kill_when_running, daemon=True)
    watcher.start()
    res = cli("run", "--hosts", str(_hosts_file(tmp_path, servers)), "--hosts-required", "all", "--workload", "rnd4k-q1t1-read",
              "--workload", "seq-read", "--size", "4m", "--runtime", "3", "--repeat", "1", "--no-report", "--json")  # fmt: skip
    watcher.join(timeout=5)
    assert killed.is_set()
    # one fio client probed all 64: one line for them
    assert "64 hosts answered: fio-" in res.err and f"; {servers[0].endpoint} ... {servers[-1].endpoint})" in res.err
    assert res.code == 1, res.err
    lost = [ln.strip() for ln in res.err.splitlines() if victim.endpoint in ln and "FAILED" in ln]
    assert len(lost) == 1 and lost[0].startswith(f"FAILED rnd4k-q1t1-read on .: host {victim.endpoint}: no result from this host"), res.err
    assert res.err.splitlines()[-1] == ("storbench: error: workload 'rnd4k-q1t1-read' on .: only 63 host(s) measured workload "
                                        "'rnd4k-q1t1-read' (--hosts-required 64): the run stops here; what was measured is stored")  # fmt: skip
    # what was measured is stored: 63 hosts and their aggregate of the first workload, nothing of the second
    rows = _rows(cli.db, "select workload, host from results order by id")
    assert {w for w, _ in rows} == {"rnd4k-q1t1-read"}
    assert sorted(h for _, h in rows) == sorted([s.endpoint for s in servers if s is not victim] + ["all"]), res.err
    assert _rows(cli.db, "select status from runs") == [("incomplete",)]
    # each host keeps its own part of fio's output, the aggregate the whole of it (not 63 copies)
    raws = dict(_rows(cli.db, "select host, raw_output from results"))
    for s in servers:
        if s is not victim:
            assert {(e["hostname"], e["port"]) for e in json.loads(raws[s.endpoint])["client_stats"]} == {(s.address, s.port)}
    assert len(raws["all"]) > 5 * max(len(v) for k, v in raws.items() if k != "all")
    # the aggregate says it is partial, in --json too
    aggregate = next(r for r in json.loads(res.out) if r["host"] == "all")
    # the window every host that lived ran in, from each one's per-second log, in --json too
    # (a host whose job logged no whole second on a busy machine has no span: a subset, never the dead one)
    spans = {span[0] for span in aggregate["window"]["hosts"]}
    assert len(spans) >= 2 and spans <= {s.endpoint for s in servers if s is not victim}
    assert all("runtime_ms" in r["timing"] for r in json.loads(res.out) if r["host"] != "all")
    [partial] = [f for f in aggregate["findings"] if f["check"] == "hosts-partial"]
    assert partial["message"].startswith(f"partial aggregate: 63 of 64 hosts measured; missing {victim.endpoint}: no result from this host")
    # show: the aggregate's row says it too
    shown = cli("show", "1")
    assert "hosts-partial" in shown.out
    # the test files were removed on the hosts that lived (one fio job on each, unlink=1)
    assert [sorted(os.listdir(s.directory)) for s in servers if s is not victim] == [[]] * 63


@pytest.mark.slow
@pytest.mark.parametrize("servers", [32], indirect=True)
def test_hosts_sharing_one_directory_are_each_measured_and_leave_nothing(cli, tmp_path, servers) -> None:
    """Issue 54: fio servers sharing one directory (the clients of one NFS export; here every
    server reports this machine's host name) each write a test file of their own, named for the
    host, and remove it as their last job ends: every host measured at every repetition, nothing
    left (at 256 servers: benchmarks/hosts.py, 256 of 256 stored)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    argv = ["run", "--hosts", str(_hosts_file(tmp_path, servers)), "--target", str(shared), "--workload", "rnd4k-q1t1-read",
            "--size", "4m", "--runtime", "1", "--repeat", "2", "--no-report", "--json"]  # fmt: skip
    kept = cli(*argv, "--keep-files")
    assert kept.code == 0, kept.err
    # one host name for all 32 (fio's probe reports this machine's): the files are named by address and port
    assert f"32 hosts answered: fio-3.33 on Linux x86-64 (machine {socket.gethostname()}; " in kept.err, kept.err
    hosts = [r["host"] for r in json.loads(kept.out)]
    assert sorted(hosts) == sorted([s.endpoint for s in servers] * 2 + ["all", "all"])
    assert sorted(p.name for p in shared.iterdir()) == sorted(f"storbench.testfile.{s.endpoint.replace(':', '_')}" for s in servers)
    assert [os.listdir(s.directory) for s in servers] == [[]] * 32  # nothing in a server's own working directory
    again = cli(*argv)
    assert again.code == 0, again.err
    assert sorted(r["host"] for r in json.loads(again.out)) == sorted(hosts)
    assert list(shared.iterdir()) == []  # each host removed its own file as its last repetition ended


@pytest.mark.slow
def test_hosts_required_before_the_run_and_a_left_out_host_in_the_aggregate(cli, tmp_path, servers) -> None:
    nobody = f"127.0.41.200:{servers[0].port}"  # nothing listens there
    hosts = str(_hosts_file(tmp_path, servers[:9], extra=(nobody,)))
    res = cli("run", "--hosts", hosts, "--hosts-required", "all", "--workload", "rnd4k-q1t1-read", "--size", "4m", "--runtime", "1",
              "--repeat", "1", "--no-report")  # fmt: skip
    assert res.code == 1
    assert res.err.splitlines()[-1].startswith(
        f"storbench: error: 9 of 10 hosts can run, --hosts-required is 10: the run does not start; first left out: host {nobody}: cannot reach"
    ), res.err
    assert _rows(cli.db, "select count(*) from results") == [(0,)] if cli.db.exists() else True
    for bad in ("0", "11", "most", "²"):
        wrong = cli("run", "--hosts", hosts, "--hosts-required", bad, "--workload", "rnd4k-q1t1-read", "--no-report")
        assert wrong.code == 2 and wrong.err.count("\n") == 1 and "give 'all' or a number of hosts from 1 to 10" in wrong.err, wrong.err
    # nine are enough: the run goes on, and its aggregate says which host it lacks
    res = cli("run", "--hosts", hosts, "--hosts-required", "9", "--workload", "rnd4k-q1t1-read", "--size", "4m", "--runtime", "1",
              "--repeat", "1", "--no-report", "--json")  # fmt: skip
    assert res.code == 0, res.err
    assert f"host {nobody}: left out: cannot reach" in res.err
    records = json.loads(res.out)
    assert sorted(r["host"] for r in records) == sorted([s.endpoint for s in servers[:9]] + ["all"])
    aggregate = next(r for r in records if r["host"] == "all")
    [partial] = [f for f in aggregate["findings"] if f["check"] == "hosts-partial"]
    assert partial["message"].startswith(f"partial aggregate: 9 of 10 hosts measured; missing {nobody}: left out before the run: cannot reach")


@pytest.mark.slow
def test_a_host_that_stops_answering_mid_run_is_named_within_a_bound(cli, tmp_path, servers) -> None:
    """A frozen server (every process of it stopped, its connections open): fio's client finds it by
    its ETA requests timing out, drops it and prints the others' results; storbench names it."""
    frozen = servers[3]
    stopped = threading.Event()

    def freeze_when_running() -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if any(frozen.directory.glob("storbench.testfile*")):
                time.sleep(0.5)
                frozen.harmed = True
                _signal_all(frozen, signal.SIGSTOP)
                stopped.set()
                return
            time.sleep(0.05)

    watcher = threading.Thread(target=freeze_when_running, daemon=True)
    watcher.start()
    started = time.monotonic()
    try:
        res = cli("run", "--hosts", str(_hosts_file(tmp_path, servers)), "--workload", "rnd4k-q1t1-read", "--workload", "seq-read",
                  "--size", "4m", "--runtime", "3", "--repeat", "1", "--no-report", "--json")  # fmt: skip
        took = time.monotonic() - started
    finally:
        watcher.join(timeout=5)
        _signal_all(frozen, signal.SIGCONT)
    assert stopped.is_set()
    assert took < 150, took  # fio's client gives a silent host about 40 s, once: later workloads leave it out
    assert res.code == 1, res.err
    named = [ln.strip() for ln in res.err.splitlines() if "FAILED" in ln and frozen.endpoint in ln]
    assert len(named) == 1 and named[0].startswith(f"FAILED rnd4k-q1t1-read on .: host {frozen.endpoint}: no result from this host"), res.err
    records = json.loads(res.out)
    lived = sorted([s.endpoint for s in servers if s is not frozen] + ["all"])
    for workload in ("rnd4k-q1t1-read", "seq-read"):  # both workloads ran on the 11 others
        assert sorted(r["host"] for r in records if r["workload"] == workload) == lived
    first, second = (next(r for r in records if r["host"] == "all" and r["workload"] == w) for w in ("rnd4k-q1t1-read", "seq-read"))
    assert any(f["check"] == "hosts-partial" and f"missing {frozen.endpoint}: no result" in f["message"] for f in first["findings"])
    assert any(f["check"] == "hosts-partial" and f"missing {frozen.endpoint}: lost during an earlier workload" in f["message"]
               for f in second["findings"])  # fmt: skip
    # its test file could not be removed: said, by name and host
    assert f"the test file ./storbench.testfile.{frozen.endpoint.replace(':', '_')} is left on {frozen.endpoint}, lost during the run: remove it there" in res.err


@contextlib.contextmanager
def _cpu_capped(pid: int, share: float) -> Iterator[None]:
    """``pid`` (and every process it starts from now on) held to ``share`` of one CPU by a CPU
    cgroup of the test's own (cgroup v1 ``cpu``, or v2 ``cpu.max``), removed at the end."""
    quota = str(int(100_000 * share))
    v1, v2 = Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup")
    if (v1 / "cpu.cfs_quota_us").exists():
        group, limit = v1 / f"storbench-test-{os.getpid()}", [("cpu.cfs_period_us", "100000"), ("cpu.cfs_quota_us", quota)]
        parent = v1
    elif "cpu" in (v2 / "cgroup.subtree_control").read_text(errors="replace").split() if (v2 / "cgroup.subtree_control").exists() else False:
        group, limit, parent = v2 / f"storbench-test-{os.getpid()}", [("cpu.max", f"{quota} 100000")], v2
    else:
        pytest.skip("no CPU cgroup this test can make (cgroup v1 cpu, or v2 with the cpu controller enabled)")
    try:
        group.mkdir()
        for name, value in limit:
            (group / name).write_text(value)
        (group / "cgroup.procs").write_text(str(pid))
    except OSError as exc:
        with contextlib.suppress(OSError):
            group.rmdir()
        pytest.skip(f"cannot make a CPU cgroup here: {exc}")
    try:
        yield
    finally:
        for p in (group / "cgroup.procs").read_text().split():  # back to the parent, so that the group can go
            with contextlib.suppress(OSError):
                (parent / "cgroup.procs").write_text(p)
        deadline = time.monotonic() + 10
        while True:
            try:
                group.rmdir()
                break
            except OSError:
                assert time.monotonic() < deadline, f"cgroup {group} could not be removed"
                time.sleep(0.1)


@pytest.mark.slow
@pytest.mark.parametrize("servers", [3], indirect=True)
def test_a_host_held_to_three_hundredths_of_a_cpu_is_named_the_straggler(cli, tmp_path, servers) -> None:
    """Three real fio servers, one of them (its server process and so every connection and job
    process it starts) held to three hundredths of a CPU: on a CPU-bound job (4 KiB random reads
    from the page cache, not invalidated first) that host is named in the straggler finding, the
    others not. So little, that it stays the slowest however busy the machine is (the others get
    their share of it, ten times more on two busy cores); not less, as every second of fio's start
    on that host is then tens (its job's clock is not calibrated: gettimeofday)."""
    slow = servers[1]
    path = tmp_path / "cached.toml"
    path.write_text('[workload.cached-read]\ndescription = "4 KiB random reads from the page cache: CPU-bound"\n'
                    'fio = { rw = "randread", bs = "4k", direct = "0", invalidate = "0", ioengine = "psync", clocksource = "gettimeofday" }\n')  # fmt: skip
    with _cpu_capped(slow.proc.pid, 0.03):
        res = cli("run", "--hosts", str(_hosts_file(tmp_path, servers)), "--suite-file", str(path), "--workload", "cached-read",
                  "--size", "2m", "--runtime", "2", "--repeat", "1", "--no-report", "--json")  # fmt: skip
    assert res.code == 0, res.err
    records = json.loads(res.out)
    iops = {r["host"]: r["stats"]["read"]["iops"]["mean"] for r in records}  # said when it fails
    aggregate = next(r for r in records if r["host"] == "all")
    [straggler] = [f for f in aggregate["findings"] if f["check"] == "straggler"]
    assert slow.endpoint in straggler["message"], (straggler, iops)
    assert not any(s.endpoint in straggler["message"] for s in servers if s is not slow), (straggler, iops)
