"""Before a many-host run: can each host be driven? A TCP connect with a short timeout, then fio's
client asks each server for its facts (``fio --client=H,P`` with a null job: the line
``hostname=vm, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1``), all hosts in parallel
or, from :data:`BATCH_PROBE_MIN_HOSTS` on, through one client. :func:`judge_probe` turns what came
back into the host's facts or one problem (a different fio version: fio refuses mismatched protocol
versions, sometimes without a word). Pure: :func:`parse_probe_line`, :func:`judge_probe`,
:func:`judge_probes`, :func:`format_answered`; edges: :func:`check_hosts`, :func:`probe_host`,
:func:`probe_all`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import os
import re
import selectors
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from storbench.jsontypes import JSONObject

from ..process import proc, signals
from .inventory import Host
from .perhost import fio_lines

#: TCP connect timeout of the pre-flight reachability check
CONNECT_TIMEOUT_S = 3.0


#: how long fio's client may take to get a server's probe reply (about 1.3 s when healthy)
PROBE_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class HostFacts:
    """What a fio server says about itself in its probe reply."""

    hostname: str | None = None
    os: str | None = None
    arch: str | None = None
    fio_version: str | None = None
    big_endian: bool | None = None
    bits: int | None = None

    def to_meta(self) -> JSONObject:
        return {"hostname": self.hostname, "os": self.os, "arch": self.arch, "fio_version": self.fio_version}


_PROBE_RE = re.compile(r"^hostname=(?P<hostname>[^,]*), be=(?P<be>\d+), (?P<bits>\d+)-bit, (?P<rest>.*)$")


def parse_probe_line(text: str) -> HostFacts | None:
    """The first probe reply line in fio client output, or None (pure)."""
    for raw in text.replace("\r", "\n").splitlines():
        m = _PROBE_RE.match(raw.strip())
        if not m:
            continue
        fields: dict[str, str] = {}
        for part in m.group("rest").split(", "):
            key, sep, value = part.partition("=")
            if sep:
                fields[key.strip()] = value.strip()
        return HostFacts(
            hostname=m.group("hostname") or None,
            os=fields.get("os"),
            arch=fields.get("arch"),
            fio_version=fields.get("fio"),
            big_endian=m.group("be") == "1",
            bits=int(m.group("bits")),
        )
    return None


@dataclass(frozen=True)
class HostCheck:
    """One host's pre-flight outcome: its facts, or the one problem that leaves it out."""

    host: Host
    facts: HostFacts | None = None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class ProbeOutput:
    returncode: int | None  # None: no answer within the timeout
    stdout: str
    stderr: str


def judge_probe(host: Host, unreachable: str | None, probe: ProbeOutput | None, local_version: str) -> HostCheck:
    """Pure: the pre-flight verdict for one host."""
    if unreachable is not None:
        return HostCheck(host, problem=f"cannot reach {host.endpoint}: {unreachable} (is 'storbench agent' running there?)")
    assert probe is not None
    facts = parse_probe_line(probe.stdout)
    if facts is None:
        if probe.returncode is None:
            return HostCheck(
                host,
                problem=f"no fio probe reply from {host.endpoint} within {PROBE_TIMEOUT_S:g} s: not a fio server, "
                f"or a fio version other than {local_version} (fio refuses mismatched protocol versions)",
            )
        said = fio_lines(probe.stderr + "\n" + probe.stdout)
        detail = said[0] if said else f"exit status {probe.returncode}, no probe reply"
        return HostCheck(host, problem=f"{host.endpoint} did not answer as a fio server: {detail}")
    if facts.fio_version != local_version:
        return HostCheck(
            host,
            facts=facts,
            problem=f"{host.endpoint} runs {facts.fio_version or 'an unknown fio'} but this client runs {local_version}; "
            "fio's client and server must be the same version (install the same fio on both)",
        )
    return HostCheck(host, facts=facts)


def tcp_problem(host: Host, timeout_s: float = CONNECT_TIMEOUT_S) -> str | None:
    """Edge: None when a TCP connection to the host's port opens, else why not."""
    try:
        infos = socket.getaddrinfo(host.address, host.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"name does not resolve ({exc.strerror})"
    last = "no address"
    for family, kind, proto, _, addr in infos:
        with contextlib.closing(socket.socket(family, kind, proto)) as sock:
            sock.settimeout(timeout_s)
            try:
                sock.connect(addr)
                return None
            except TimeoutError:
                last = f"no answer within {timeout_s:g} s"
            except OSError as exc:
                last = (exc.strerror or str(exc)).lower()
    return last


_PROBE_JOB = "[storbench-probe]\nioengine=null\nrw=read\nbs=4k\nsize=4k\n"


def probe_host(fio_path: str, host: Host, timeout_s: float = PROBE_TIMEOUT_S) -> ProbeOutput:
    """Edge: ``fio --client=H,P --showcmd probe.fio``: the server answers with its probe
    reply (hostname, OS, arch, fio version) and prints the job as a command line; no I/O.

    The client is killed as soon as the reply's line is read: it would otherwise wait about a
    second more for the server to say goodbye (the server reaps its connection's process), which
    is most of a pre-flight's time (1.3 s -> 0.15-0.3 s a host here)."""
    try:
        said = _probe_client(fio_path, [host], timeout_s)
    except OSError as exc:
        return ProbeOutput(127, "", f"fio: {exc.strerror or exc}")
    text = said.text
    if parse_probe_line(text) is not None:
        return ProbeOutput(0, text, "")
    return ProbeOutput(said.returncode if said.returncode is not None and said.returncode >= 0 else None, text, "")


@dataclass(frozen=True)
class _ClientSaid:
    text: str
    returncode: int | None


def _probe_client(fio_path: str, hosts: Sequence[Host], timeout_s: float) -> _ClientSaid:
    """One fio client asking ``hosts`` for their probe replies (``--showcmd``: no I/O), killed as
    soon as every reply is in (or ``timeout_s`` passed); what it printed.  OSError when fio cannot
    be started."""
    with tempfile.TemporaryDirectory(prefix="storbench-probe-") as tmp:
        job = os.path.join(tmp, "probe.fio")
        with open(job, "w", encoding="utf-8") as fh:
            fh.write(_PROBE_JOB)
        argv = [fio_path, "--showcmd"]
        for host in hosts:
            argv += [host.client_option(), job]
        child, noted = proc.spawn(argv, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            signals.raise_noted(noted)
            said = _read_until_probe(child, timeout_s, replies=len(hosts))
        finally:
            proc.stop_group(child, ((signal.SIGKILL, 5.0),))
            assert child.stdout is not None
            child.stdout.close()
    return _ClientSaid(said.decode("utf-8", errors="replace"), child.returncode)


def _read_until_probe(child: subprocess.Popen, timeout_s: float, replies: int = 1) -> bytes:
    """What the client printed until ``replies`` probe reply lines had ended, it closed its
    output, or ``timeout_s`` passed (then the child is left for the caller to kill)."""
    assert child.stdout is not None
    fd = child.stdout.fileno()
    said = b""
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not sel.select(left):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                proc.wait(child, max(0.1, deadline - time.monotonic()))
                break
            said += chunk
            if len(_PROBE_LINE_END.findall(said)) >= replies:
                break
    return said


_PROBE_LINE_END = re.compile(rb"(?m)^hostname=[^\n]*\n")


def check_hosts(
    hosts: Sequence[Host],
    fio_path: str,
    local_version: str,
    *,
    connect: Callable[[Host], str | None] = tcp_problem,
    probe: Callable[[str, Host], ProbeOutput] = probe_host,
) -> list[HostCheck]:
    """Edge: reachability and fio version of every host, in parallel, in the hosts' order: asked
    over sockets of storbench's own in fio's protocol (:mod:`.fioprobe`) from
    :data:`NATIVE_PROBE_MIN_HOSTS` hosts on where the local fio's protocol version is known and
    nothing was injected, else by fio's client."""
    from . import fioprobe

    if not hosts:
        return []
    version = fioprobe.SERVER_VERSIONS.get(local_version)
    if version is not None and len(hosts) >= NATIVE_PROBE_MIN_HOSTS and connect is tcp_problem and probe is probe_host:

        answers = fioprobe.ask_all(hosts, version, CONNECT_TIMEOUT_S, PROBE_TIMEOUT_S)
        return [judge_probe(host, why, None if why else ProbeOutput(returncode=0 if line else None, stdout=line or "", stderr=""),
                            local_version)
                for host, (why, line) in zip(hosts, answers, strict=True)]  # fmt: skip
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(64, len(hosts))) as pool:
        unreachable = list(pool.map(connect, hosts))
    reachable = [h for h, why in zip(hosts, unreachable, strict=True) if why is None]
    together = probe_all(fio_path, reachable, local_version) if len(reachable) >= BATCH_PROBE_MIN_HOSTS else None
    if together is not None:
        return [judge_probe(h, why, None, local_version) if why else together[h] for h, why in zip(hosts, unreachable, strict=True)]

    def one(pair: tuple[Host, str | None]) -> HostCheck:
        host, why = pair
        return judge_probe(host, why, None if why else probe(fio_path, host), local_version)

    # one fio client a host: fio's start-up (its clock calibration, ~0.1 s of CPU) a host
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(16, len(hosts))) as pool:
        return list(pool.map(one, zip(hosts, unreachable, strict=True)))


#: from this many reachable hosts on, one fio client probes them all (see :func:`probe_all`)
BATCH_PROBE_MIN_HOSTS = 9
#: from this many hosts on, storbench asks them itself (:mod:`.fioprobe`): a fio server answers a
#: probe in a few ms or, when its connection handler polled first, after its 1 s wait, so the
#: native probe takes 0-1 s at any count; fio's client took about 0.3 s at 16 servers here,
#: 1.4-3.1 s at 64 and 14 s at 256
NATIVE_PROBE_MIN_HOSTS = 32


def probe_all(fio_path: str, hosts: Sequence[Host], local_version: str,
              timeout_s: float = PROBE_TIMEOUT_S) -> dict[Host, HostCheck] | None:  # fmt: skip
    """Edge: every host probed by ONE fio client (``--client=H1 --showcmd probe.fio --client=H2
    probe.fio ...``), killed once every reply is in.  Each fio process spends ~0.1 s of CPU
    calibrating its clock before it does anything, so a probe a host costs 25 s of CPU at 256
    hosts; one client costs it once.

    fio's reply lines do not say which server sent them, so the answer holds only when it is
    unambiguous: a reply from every host, all the same fio (this client's), OS and architecture;
    each host then gets those facts (its machine name too when all names are one, else none).
    Otherwise None: the caller probes host by host, which names the one that differs."""
    try:
        said = _probe_client(fio_path, hosts, timeout_s)
    except OSError:
        return None
    return judge_probes(hosts, said.text, local_version)


def judge_probes(hosts: Sequence[Host], text: str, local_version: str) -> dict[Host, HostCheck] | None:
    """Pure: :func:`probe_all`'s verdict from the client's output (None: probe host by host)."""
    replies = [parse_probe_line(m.group(0)) for m in re.finditer(r"(?m)^hostname=.*$", text)]
    facts = [f for f in replies if f is not None]
    if len(facts) != len(hosts) or any(f.fio_version != local_version for f in facts):
        return None
    if len({(f.os, f.arch, f.bits, f.big_endian) for f in facts}) != 1:
        return None
    names = {f.hostname for f in facts}
    common = facts[0] if len(names) == 1 else dataclasses.replace(facts[0], hostname=None)
    return {h: HostCheck(h, facts=common) for h in hosts}


def format_answered(checks: Sequence[HostCheck], each_up_to: int | None = None) -> list[str]:
    """Pure: the hosts that will run, a line each up to ``each_up_to`` hosts, else one line
    grouping them by what they said (fio version, OS, architecture, machine names)."""
    ok = [c for c in checks if c.ok and c.facts is not None]
    if len(ok) <= (BATCH_PROBE_MIN_HOSTS - 1 if each_up_to is None else each_up_to):  # as many as are probed one by one
        return [f"host {c.host.display}: {c.facts.hostname or '?'} ({c.facts.os or '?'} {c.facts.arch or '?'}), {c.facts.fio_version}"
                for c in ok if c.facts is not None]  # fmt: skip
    groups: dict[tuple[str | None, str | None, str | None], list[HostCheck]] = {}
    for c in ok:
        assert c.facts is not None
        groups.setdefault((c.facts.fio_version, c.facts.os, c.facts.arch), []).append(c)
    lines = []
    for (version, os_name, arch), members in groups.items():
        names = sorted({c.facts.hostname for c in members if c.facts is not None and c.facts.hostname})
        said = f"machine {names[0]}" if len(names) == 1 else (f"{len(names)} machine names" if names else "machine names not told apart")
        lines.append(f"{len(members)} hosts answered: {version} on {os_name or '?'} {arch or '?'} ({said}; "
                     f"{members[0].host.display} ... {members[-1].host.display})")  # fmt: skip
    return lines


@dataclass(frozen=True)
class Preflight:
    """The hosts that will run and the ones left out (with why)."""

    checks: tuple[HostCheck, ...] = field(default_factory=tuple)

    @property
    def usable(self) -> tuple[Host, ...]:
        return tuple(c.host for c in self.checks if c.ok)

    @property
    def left_out(self) -> tuple[HostCheck, ...]:
        return tuple(c for c in self.checks if not c.ok)

    def meta(self) -> list[JSONObject]:
        return [
            {**c.host.to_meta(), "display": c.host.display, "facts": c.facts.to_meta() if c.facts else None, "problem": c.problem}
            for c in self.checks
        ]
