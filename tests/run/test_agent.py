"""storbench agent: a fio server started, reported and stopped cleanly (loopback only).

Every process a test starts is stopped in the fixture's teardown, by its own id
(the agent by PID, its fio by the process group it created).
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from storbench.commands.agent import server_option
from storbench.process.proc import group_members as _group_members

from conftest import needs_fio, needs_root


def free_port() -> int:
    """A TCP port nothing listens on right now (127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Agent:
    proc: subprocess.Popen
    port: int
    directory: Path | None
    lines: queue.Queue[str]
    fio_pid: int | None = None
    out: list[str] = field(default_factory=list)
    err_lines: list[str] = field(default_factory=list)

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.cleanup()

    def cleanup(self) -> None:
        """Kill whatever is left, by id: the agent's PID and its fio's process group."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        if self.fio_pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.fio_pid, signal.SIGKILL)


def _pump(stream, sink: queue.Queue, keep: list[str]) -> None:
    for line in iter(stream.readline, ""):
        keep.append(line.rstrip("\n"))
        sink.put(line.rstrip("\n"))
    stream.close()


def start_agent(
    cwd: Path, *args: str, directory: Path | None = None, port: int | None = None, wait: bool = True,
    prefix: tuple[str, ...] = (),
) -> Agent:
    """``python -m storbench agent --port P [--dir D] ARGS`` as a subprocess; waits for its banner.
    ``prefix`` runs it through another command (``ip netns exec NS``, which execs: same PID)."""
    port = port or free_port()
    argv = [*prefix, sys.executable, "-m", "storbench", "agent", "--port", str(port), *args]
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
        argv += ["--dir", str(directory)]
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    lines: queue.Queue[str] = queue.Queue()
    agent = Agent(proc, port, directory, lines)
    threading.Thread(target=_pump, args=(proc.stdout, lines, agent.out), daemon=True).start()
    threading.Thread(target=_pump, args=(proc.stderr, queue.Queue(), agent.err_lines), daemon=True).start()
    if not wait:
        return agent
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            if proc.poll() is not None:
                break
            continue
        m = re.search(r"fio pid (\d+)", line)
        if m:
            agent.fio_pid = int(m.group(1))
        if line.startswith("stop with"):
            return agent
    agent.cleanup()
    raise AssertionError(f"agent did not start: {agent.out} {agent.err_lines}")


@pytest.fixture
def agents(tmp_path: Path):
    """Start agents with ``agents(name)``; all are stopped (and their fio killed) at teardown."""
    started: list[Agent] = []

    def start(name: str, *args: str, **kw) -> Agent:
        kw.setdefault("directory", tmp_path / name)
        agent = start_agent(tmp_path, *args, **kw)
        started.append(agent)
        return agent

    yield start
    for agent in started:
        with contextlib.suppress(Exception):
            agent.stop()
        agent.cleanup()


# --------------------------------------------------------------------------- pure


def test_server_option_per_address_kind() -> None:
    assert server_option("127.0.0.1", 8765) == "--server=ip:127.0.0.1,8765"
    assert server_option("::1", 8765) == "--server=ip6:::1,8765"
    assert server_option("bench-01.lan", 9000) == "--server=bench-01.lan,9000"


# --------------------------------------------------------------------------- refusals (no fio needed)


@pytest.mark.parametrize("bind", ["0.0.0.0", "::", "[::]"])
def test_wildcard_bind_refused_without_the_flag(cli, bind) -> None:
    res = cli("agent", "--bind", bind, "--port", str(free_port()))
    assert res.code == 2
    assert res.err.count("\n") == 1
    assert "refusing to listen on" in res.err and "no authentication" in res.err
    assert "--i-know-it-is-unauthenticated" in res.err


@pytest.mark.parametrize("bind", ["999.1.1.1", "not a host", "[::1"])
def test_bad_bind_address_is_one_line(cli, bind) -> None:
    res = cli("agent", "--bind", bind)
    assert res.code == 2 and res.err.count("\n") == 1 and "--bind" in res.err


def test_missing_dir_refused(cli, tmp_path) -> None:
    res = cli("agent", "--dir", str(tmp_path / "nope"), "--port", str(free_port()))
    assert res.code == 2 and "is not an existing directory" in res.err


# --------------------------------------------------------------------------- the real thing


@needs_fio
def test_agent_prints_how_to_reach_it_and_sigterm_stops_everything(tmp_path, agents) -> None:
    agent = agents("a1")
    text = "\n".join(agent.out)
    assert f"server listening on 127.0.0.1:{agent.port}" in text
    assert f"storbench run --host 127.0.0.1:{agent.port}" in text
    assert "SECURITY" in text and "no authentication" in text
    assert f"ssh -L {agent.port}:127.0.0.1:{agent.port}" in text
    assert re.search(r"fio-3\.\d+", text)
    assert agent.fio_pid is not None and _group_members(agent.fio_pid)
    # fio really serves: a client reaches it
    probe = subprocess.run(["fio", f"--client=ip:127.0.0.1,{agent.port}", "--showcmd", "/dev/stdin"],
                           input="[p]\nioengine=null\nsize=4k\n", capture_output=True, text=True, timeout=30)
    assert "fio=fio-3" in probe.stdout
    assert agent.stop(signal.SIGTERM) == 0
    assert _group_members(agent.fio_pid) == []
    assert not _listening(agent.port)
    assert "fio server stopped" in "\n".join(agent.err_lines)


@needs_fio
def test_ctrl_c_exits_130_and_default_dir_is_removed(tmp_path, agents) -> None:
    agent = agents("unused", directory=None)
    made = [p for p in tmp_path.iterdir() if p.name.startswith("storbench-agent-")]
    assert len(made) == 1 and f"working directory: {made[0]}" in "\n".join(agent.out)
    assert agent.stop(signal.SIGINT) == 130
    assert _group_members(agent.fio_pid) == []
    assert not made[0].exists()


@needs_fio
def test_sigterm_during_a_client_job_stops_the_job_processes_too(tmp_path, agents) -> None:
    """fio's server forks per connection and per job; all of them go."""
    agent = agents("busy")
    job = tmp_path / "long.fio"
    job.write_text("[long]\nrw=read\nbs=4k\nsize=4m\nioengine=psync\ntime_based\nruntime=30\nfilename=storbench.testfile\n")
    client = subprocess.Popen(["fio", f"--client=ip:127.0.0.1,{agent.port}", str(job), "--output-format=json"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while len(_group_members(agent.fio_pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_group_members(agent.fio_pid)) >= 3  # server, connection, job
        assert agent.stop(signal.SIGTERM) == 0
        assert _group_members(agent.fio_pid) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(client.pid, signal.SIGKILL)
        client.wait(timeout=30)


@needs_fio
def test_port_in_use_is_an_error(tmp_path, agents) -> None:
    first = agents("first")
    second = agents("second", port=first.port, wait=False)
    assert second.proc.wait(timeout=30) == 1
    time.sleep(0.2)
    err = "\n".join(second.err_lines)
    # fio itself would share the port (SO_REUSEPORT) and split the connections
    assert f"storbench: error: cannot listen on 127.0.0.1 port {first.port}: address already in use" in err
    assert second.fio_pid is None


@pytest.fixture
def netns():
    """A network namespace with only its own loopback, removed afterwards."""
    name = f"sbtest-agent-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True, capture_output=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


@needs_fio
@needs_root
def test_wildcard_bind_with_the_flag_listens(tmp_path, agents, netns) -> None:
    """Every interface of a private namespace (only its loopback): nothing is exposed."""
    agent = agents("wild", "--bind", "0.0.0.0", "--i-know-it-is-unauthenticated", prefix=("ip", "netns", "exec", netns))
    # the banner comes after the agent connected to its server (through the namespace's 127.0.0.1)
    assert f"server listening on 0.0.0.0:{agent.port}" in "\n".join(agent.out)
    assert agent.stop() == 0
    assert _group_members(agent.fio_pid) == []


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError):
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    return False
