"""Many hosts at once: which fio servers to drive, whether they can be driven, and what they did.

Pure parts (no I/O):

* :func:`parse_host` reads ``--host HOST[:PORT]`` (IPv4, ``[IPv6]:PORT``, names);
  :func:`parse_inventory` reads a ``--hosts FILE`` TOML inventory::

      [host.hv-05]
      address = "10.0.0.5"   # required: IPv4, IPv6 (brackets optional) or a name
      port = 8765            # default 8765 (storbench agent's default)
      target = "/mnt/bench"  # the directory ON THAT HOST where the test file goes
      label = "hv-05"        # how results name this host (default: the section name)

  Every mistake is one line naming the file, the host and the key.
* :func:`parse_probe_line` reads the line fio's client prints for each server it
  reaches (``hostname=vm, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1``);
  :func:`judge_probe` turns that into the host's facts or one problem (different fio
  version: fio refuses mismatched protocol versions, sometimes without a word).
* :func:`job_for_host` puts a host's own ``target`` into the job text;
  :func:`lost_hosts` names the hosts missing from a client/server result;
  :func:`host_timing` and :func:`straggler_findings` make a slow tail visible.

Edges: :func:`check_hosts` (TCP connect with a short timeout, then ``fio --client=H,P
--showcmd`` to read the server's fio version, all hosts in parallel) and
:class:`ClientFio`, the :class:`storbench.run.runner.FioExecutor` that runs ONE fio
client process for all hosts.

Facts this module is built on (fio 3.33, checked by hand and in tests):

* In client mode the JSON names each host as it was given to ``--client`` (``hostname``)
  with its ``port``; two servers on one address differ only by port.
* A server opens the client's ``--output`` path ON THE SERVER (truncating it; a
  directory missing there makes the server's job fail with "output file open
  error").  So ClientFio gives no ``--output``: the JSON is read from the client's
  stdout, with ``--eta=always`` (a frozen host is found by its ETA requests timing out); the
  client's notes around it ("client: host=X disconnected", "<host> fio: ...") are
  kept by the parser as notes.
* A server that dies mid-run is simply missing from ``client_stats``; fio exits 1
  and the other hosts' results are complete.  The client notices at once ("client:
  host=127.0.0.1 disconnected") or, when the connection hangs, after up to about
  40 s of "timeout on cmd SEND_ETA".  A server that cannot be reached at all is
  left out with exit status 0.
* Interval logs come back named ``sb_bw.1.log.<hostname>``: two servers on one
  address overwrite each other's, so client runs write none.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import ipaddress
import os
import re
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from storbench.jsontypes import JSONList, JSONMapping, JSONObject, JSONValue

from ..errors import FioMissingError, FioParseError, UsageError
from ..model import EACH_HOST_UP_TO, Finding, FioResult, versions
from ..process import proc, signals
from ..record import ResultRecord

if TYPE_CHECKING:
    from ..fio.progress import Status
    from .fioexec import FioInvocation

DEFAULT_PORT = 8765
#: TCP connect timeout of the pre-flight reachability check
CONNECT_TIMEOUT_S = 3.0
#: how long fio's client may take to get a server's probe reply (about 1.3 s when healthy)
PROBE_TIMEOUT_S = 20.0
#: a host whose headline metric is below this share of the hosts' median is a straggler
STRAGGLER_RATIO = 0.8

_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_HOSTNAME_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME_RE = re.compile(rf"^{_HOSTNAME_LABEL}(?:\.{_HOSTNAME_LABEL})*\.?$")


# --------------------------------------------------------------------------- hosts


@dataclass(frozen=True)
class Host:
    """One fio server to drive.

    ``address`` is an IPv4 or IPv6 address (without brackets) or a host name;
    ``target`` the directory on that host for the test file (None: the run's
    ``--target``, else the agent's working directory); ``name`` what results call
    this host (an inventory label or section name; None: ``address:port``).
    """

    address: str
    port: int = DEFAULT_PORT
    target: str | None = None
    name: str | None = None

    @property
    def is_ipv6(self) -> bool:
        return ":" in self.address

    @property
    def endpoint(self) -> str:
        """``10.0.0.5:8765``, ``[fd00::5]:8765``, ``hv-05.lan:8765``."""
        return f"[{self.address}]:{self.port}" if self.is_ipv6 else f"{self.address}:{self.port}"

    @property
    def display(self) -> str:
        return self.name or self.endpoint

    @property
    def fio_key(self) -> tuple[str, int]:
        """How fio's client/server JSON names this host: (``hostname``, ``port``)."""
        return (self.address, self.port)

    def client_option(self) -> str:
        """fio's ``--client=`` argument: ``ip6:`` for IPv6, ``ip:`` for IPv4, a name as is."""
        if self.is_ipv6:
            return f"--client=ip6:{self.address},{self.port}"
        if _is_ipv4(self.address):
            return f"--client=ip:{self.address},{self.port}"
        return f"--client={self.address},{self.port}"

    def to_meta(self) -> JSONObject:
        return {"address": self.address, "port": self.port, "target": self.target, "name": self.name}

    @classmethod
    def from_meta(cls, d: JSONMapping) -> Host:
        return cls(address=d["address"], port=int(d["port"]), target=d.get("target"), name=d.get("name"))


def _is_ipv4(text: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(text), ipaddress.IPv4Address)
    except ValueError:
        return False


def parse_address(text: str, what: str = "host") -> str:
    """An address as fio takes it: a valid IPv4/IPv6 address (brackets removed) or host name."""
    raw = text.strip()
    if raw.startswith("[") and raw.endswith("]"):
        raw = raw[1:-1]
        try:
            return str(ipaddress.IPv6Address(raw))
        except ValueError:
            raise UsageError(f"{what} {text!r}: {raw!r} in brackets is not an IPv6 address") from None
    if not raw:
        raise UsageError(f"{what} {text!r}: empty address")
    if ":" in raw:
        try:
            return str(ipaddress.IPv6Address(raw))
        except ValueError:
            raise UsageError(f"{what} {text!r} is not an IPv6 address or a host name") from None
    if re.fullmatch(r"[0-9.]+", raw):
        try:
            return str(ipaddress.IPv4Address(raw))
        except ValueError:
            raise UsageError(f"{what} {text!r} is not a valid IPv4 address") from None
    if len(raw) > 253 or not _HOSTNAME_RE.match(raw):
        raise UsageError(
            f"{what} {text!r} is not a host name (letters, digits, '-' and '.'), an IPv4 address or [IPv6]"
        )
    return raw.rstrip(".").lower()


def parse_port(value: JSONValue, what: str) -> int:
    if isinstance(value, bool):
        raise UsageError(f"{what}: port {value!r} is not a number")
    if isinstance(value, str):
        if not re.fullmatch(r"[0-9]{1,5}", value.strip()):
            raise UsageError(f"{what}: port {value!r} is not a number from 1 to 65535")
        value = int(value)
    if not isinstance(value, int) or not 1 <= value <= 65535:
        raise UsageError(f"{what}: port {value!r} is not a number from 1 to 65535")
    return value


def parse_host(text: str, default_port: int = DEFAULT_PORT) -> Host:
    """``--host`` value -> :class:`Host`: ``10.0.0.5``, ``10.0.0.5:8766``, ``[fd00::5]:8765``,
    ``hv-05.lan:8765``.  An IPv6 address always needs brackets (``2001:db8::1:8765``
    could be an address alone or an address and a port)."""
    raw = text.strip()
    what = f"--host {text!r}"
    if not raw:
        raise UsageError("--host needs a value: HOST or HOST:PORT")
    if raw.startswith("["):
        close = raw.find("]")
        if close < 0:
            raise UsageError(f"{what}: missing ']' after the IPv6 address")
        address = parse_address(raw[: close + 1], "--host")
        rest = raw[close + 1 :]
        if not rest:
            return Host(address, default_port)
        if not rest.startswith(":"):
            raise UsageError(f"{what}: expected ':PORT' after ']'")
        return Host(address, parse_port(rest[1:], what))
    if raw.count(":") > 1:
        raise UsageError(f"{what}: write an IPv6 address in brackets, [ADDRESS] or [ADDRESS]:PORT")
    host, sep, port = raw.partition(":")
    return Host(parse_address(host, "--host"), parse_port(port, what) if sep else default_port)


_INVENTORY_KEYS = ("address", "port", "target", "label")


def parse_host_list(text: str, source: str = "hosts file") -> tuple[Host, ...]:
    """A plain list of hosts, one ``HOST[:PORT]`` a line (``#`` starts a comment, blank lines are
    skipped), as pbench's and fio's own ``--client`` files are written; a mistake names its line."""
    hosts: list[Host] = []
    for number, line in enumerate(text.splitlines(), 1):
        value = line.split("#", 1)[0].strip()
        if not value:
            continue
        try:
            hosts.append(parse_host(value))
        except UsageError as exc:
            raise UsageError(f"{source}: line {number}: {exc.message.replace('--host ', '')}") from None
    if not hosts:
        raise UsageError(f"{source}: no hosts (one HOST[:PORT] a line, or [host.NAME] tables)")
    return tuple(hosts)


def parse_inventory(text: str, source: str = "hosts file") -> tuple[Host, ...]:
    """A ``--hosts`` file -> hosts, in file order: a TOML inventory (``[host.NAME]`` tables with an
    address, port, target and label) or a plain list (:func:`parse_host_list`).  One-line
    :class:`UsageError` for mistakes."""
    if not re.search(r"^\s*\[\s*host\b|^\s*[A-Za-z_]+\s*=", text, re.M):
        return parse_host_list(text, source)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{source}: not valid TOML: {exc}") from None
    unknown = [k for k in doc if k != "host"]
    if unknown:
        raise UsageError(f"{source}: unknown top-level key {unknown[0]!r} (hosts go in [host.NAME] tables)")
    table = doc.get("host")
    if not isinstance(table, dict) or not table:
        raise UsageError(f"{source}: no hosts (add [host.NAME] tables with address = \"...\")")
    hosts: list[Host] = []
    for key, entry in table.items():
        where = f"{source}: host {key!r}"
        if not _LABEL_RE.match(key):
            raise UsageError(f"{where}: name must be letters, digits, '.', '_' or '-' (at most 64)")
        if not isinstance(entry, dict):
            raise UsageError(f"{where}: must be a table ([host.{key}]) with address = \"...\"")
        extra = [k for k in entry if k not in _INVENTORY_KEYS]
        if extra:
            raise UsageError(f"{where}: unknown key {extra[0]!r} (known: {', '.join(_INVENTORY_KEYS)})")
        address = entry.get("address")
        if not isinstance(address, str):
            raise UsageError(f"{where}: address = \"...\" (a string) is required")
        address = parse_address(address, f"{where}: address")
        port = parse_port(entry.get("port", DEFAULT_PORT), where)
        target = entry.get("target")
        if target is not None:
            target = check_remote_target(target, where)
        label = entry.get("label", key)
        if not isinstance(label, str) or not _LABEL_RE.match(label):
            raise UsageError(f"{where}: label {label!r} must be letters, digits, '.', '_' or '-' (at most 64)")
        hosts.append(Host(address, port, target, label))
    return tuple(hosts)


def check_remote_target(value: JSONValue, what: str) -> str:
    """A directory path on a remote host, as a job file can carry it (never checked locally)."""
    from ..jobs.jobfile import fio_filename

    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{what}: target must be a non-empty directory path")
    try:
        fio_filename(value)
    except UsageError as exc:
        raise UsageError(f"{what}: {exc}") from None
    return value


def combine_hosts(hosts: Iterable[Host]) -> tuple[Host, ...]:
    """All hosts of ``--host`` and ``--hosts``; the same server or name twice is a mistake."""
    out: list[Host] = []
    seen_keys: dict[tuple[str, int], Host] = {}
    seen_names: dict[str, Host] = {}
    for host in hosts:
        if host.fio_key in seen_keys:
            raise UsageError(f"host {host.endpoint} is given twice ({seen_keys[host.fio_key].display} and {host.display})")
        if host.display in seen_names:
            raise UsageError(f"two hosts are named {host.display!r}; give them different labels")
        seen_keys[host.fio_key] = host
        seen_names[host.display] = host
        out.append(host)
    return tuple(out)


def load_inventory(path: str) -> tuple[Host, ...]:
    """Edge: read a ``--hosts`` file."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise UsageError(f"cannot read hosts file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"hosts file {path} is not UTF-8 text") from None
    return parse_inventory(text, path)


# --------------------------------------------------------------------------- job text per host


def job_for_host(job_text: str, target: str | None) -> str:
    """The job text with its ``filename`` moved into ``target`` (a host's own directory).

    The test file keeps its name (``storbench.testfile``); ``None`` leaves the text as is.
    """
    if target is None:
        return job_text
    from ..jobs.jobfile import fio_filename

    lines = job_text.split("\n")
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("filename="):
            name = lines[i][len("filename=") :].rsplit("/", 1)[-1]
            lines[i] = "filename=" + fio_filename(target.rstrip("/") + "/" + name if target != "/" else "/" + name)
            return "\n".join(lines)
    raise ValueError("job text has no filename= line")


def with_window_logs(job_text: str, index: int) -> str:
    """The job text with per-second IOPS and bandwidth logs stamped with Unix time, named for host
    ``index`` (``sbhN``: two servers on one address would overwrite each other's ``sb`` logs)."""
    lines = [f"write_iops_log=sbh{index}", f"write_bw_log=sbh{index}", *(f"{k}={v}" for k, v in WINDOW_LOG_OPTIONS)]
    return job_text.rstrip("\n") + "\n" + "\n".join(lines) + "\n"


def filename_of(job_text: str) -> str | None:
    """The (escaped) ``filename`` value of a job text."""
    for line in reversed(job_text.split("\n")):
        if line.startswith("filename="):
            return line[len("filename=") :]
    return None


# --------------------------------------------------------------------------- pre-flight


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


def _fio_lines(text: str) -> list[str]:
    out = []
    for raw in text.replace("\r", "\n").splitlines():
        line = raw.strip()
        m = re.match(r"^(?:<[^>]*>\s*)?fio:\s*(.*)$", line)
        if m and m.group(1):
            out.append(m.group(1))
    return out


def _client_lines(text: str) -> list[str]:
    """fio's client notes about a connection: ``client: host=X disconnected``,
    ``client <X>: timeout on SEND_ETA``."""
    return [
        line.strip()
        for line in text.replace("\r", "\n").splitlines()
        if re.match(r"^client(?::| <[^>]*>:) ", line.strip())
    ]


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
        said = _fio_lines(probe.stderr + "\n" + probe.stdout)
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
    """Edge: reachability and fio version of every host, in parallel, in the hosts' order."""

    if not hosts:
        return []
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


# --------------------------------------------------------------------------- results per host


def lost_hosts(hosts: Sequence[Host], output_text: str, stderr_text: str) -> dict[str, str]:
    """Pure: hosts (by display name) that are missing from a client/server result, with
    fio's words about them when it said any.  Empty when the output holds no result at
    all (the whole workload failed; the runner says so)."""
    from ..fio.json import parse_fio_json

    try:
        result = parse_fio_json(output_text)
    except FioParseError:
        return {}
    present = {(j.hostname, j.port) for j in result.jobs if j.hostname and not j.is_aggregate}
    if not present:
        return {}
    said = _fio_lines(stderr_text + "\n" + output_text) + _client_lines(stderr_text + "\n" + output_text)
    missing = [h for h in hosts if h.fio_key not in present]
    out: dict[str, str] = {}
    for host in missing:
        about = [s for s in said if host.endpoint in s or f"{host.address}:{host.port}" in s]
        # a line naming only the address is about this host when no other missing host has it
        if not about and sum(1 for m in missing if m.address == host.address) == 1:
            about = [s for s in said if re.search(rf"(?<![\w.:]){re.escape(host.address)}(?![\w.])", s)]
        if about:
            out[host.display] = f"no result from this host: fio said: {'; '.join(dict.fromkeys(about))}"
        else:
            out[host.display] = "no result from this host: the connection to its fio server was lost (server killed, host down or network gone)"
    return out


def host_outputs(output_text: str, names: Mapping[tuple[str, int], str]) -> dict[str, str]:
    """Pure: each host's own part of a client run's JSON, by host name: the document with only
    that host's ``client_stats`` entries.  A host's record keeps this, the aggregate the whole
    output (every host keeping the whole output made a 256-host run store 256 copies of 3 MB)."""
    import json

    from ..fio.json import find_fio_json

    docs, _ = find_fio_json(output_text)
    if not docs:
        return {}
    doc = docs[-1][2]
    rest = {k: v for k, v in doc.items() if k != "client_stats"}
    entries: dict[str, JSONList] = {}
    for entry in doc.get("client_stats") or ():
        if isinstance(entry, dict) and (name := names.get((str(entry.get("hostname")), _port(entry.get("port"))))):
            entries.setdefault(name, []).append(entry)
    return {name: json.dumps({**rest, "client_stats": mine}, indent=2) for name, mine in entries.items()}


def _port(value: JSONValue) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


def host_timing(per_host: Sequence[tuple[str, FioResult]]) -> dict[str, JSONObject]:
    """Pure: when each host finished, relative to the others (``series["timing"]`` of its record).

    Client mode reports no timestamps per host, so the time a host took is its jobs'
    ``job_runtime`` (the longest job; direction runtimes where fio gives none).  With
    a ``runtime`` limit every host takes about as long; with a size limit a slow host
    takes longer, and ``behind_first_ms`` shows the tail.
    """
    took: dict[str, int | None] = {}
    for name, result in per_host:
        values = [j.job_runtime_ms for j in result.jobs if j.job_runtime_ms]
        if not values:
            values = [d.runtime_ms for j in result.jobs for d in j.directions.values() if d.runtime_ms]
        took[name] = max(values) if values else None
    known = [v for v in took.values() if v is not None]
    first = min(known) if known else None
    last = max(known) if known else None
    return {
        name: {
            "format_version": versions.HOST_TIMING,
            "runtime_ms": value,
            "first_done_ms": first,
            "last_done_ms": last,
            "behind_first_ms": None if value is None or first is None else value - first,
            "hosts": len(per_host),
        }
        for name, value in took.items()
    }


#: hosts whose start or end differs by more than this share of the runtime (and by more than one
#: logging interval) did not run together
APART_SHARE = 0.10
#: the hosts' interval logs: one second a row, stamped with Unix time (ClientFio asks for them)
WINDOW_LOG_OPTIONS: tuple[tuple[str, str], ...] = (("log_avg_msec", "1000"), ("log_unix_epoch", "1"))
INTERVAL_MS = 1000


@dataclass(frozen=True)
class CommonWindow:
    """The interval in which every host was running (Unix ms), and the aggregate over it: the
    hosts' IOPS and bandwidth summed second by second inside it, then averaged."""

    start_ms: int
    end_ms: int
    iops: float
    bw_bytes: float
    #: each host's first and last second: (host, start_ms, end_ms)
    spans: tuple[tuple[str, int, int], ...]

    @property
    def seconds(self) -> float:
        return max(0, self.end_ms - self.start_ms) / 1000

    def to_dict(self) -> JSONObject:
        return {"format_version": versions.HOST_TIMING, "start_ms": self.start_ms, "end_ms": self.end_ms, "seconds": self.seconds,
                "iops": self.iops, "bw_bytes": self.bw_bytes, "hosts": [list(s) for s in self.spans]}  # fmt: skip


def common_window(series: Mapping[str, Sequence[tuple[int, float, float]]]) -> CommonWindow | None:
    """Pure: from each host's :func:`storbench.fio.logs.epoch_series` (a row per second: the
    interval's end in Unix ms, IOPS, bytes/s), the window every host ran in and the aggregate over
    it; None without two hosts with logs.  A host's span is from its first interval's start to its
    last interval's end; the window's aggregate counts the seconds wholly inside it."""
    spans = [(h, rows[0][0] - INTERVAL_MS, rows[-1][0]) for h, rows in series.items() if rows]
    if len(spans) < 2:
        return None
    start, end = max(s for _, s, _ in spans), min(e for _, _, e in spans)
    slack = INTERVAL_MS // 10  # the hosts' rows end a few ms apart
    iops = bw = 0.0
    for rows in series.values():
        inside = [(i, b) for t, i, b in rows if t - INTERVAL_MS >= start - slack and t <= end + slack]
        if inside:
            iops += sum(i for i, _ in inside) / len(inside)
            bw += sum(b for _, b in inside) / len(inside)
    return CommonWindow(start_ms=start, end_ms=end, iops=iops, bw_bytes=bw, spans=tuple(sorted(spans, key=lambda s: s[1])))


def window_findings(workload: str, window: CommonWindow | None, fio_sum_iops: float | None) -> list[Finding]:
    """Pure: a ``hosts-not-together`` finding when the hosts' starts or ends differ by more than
    :data:`APART_SHARE` of the runtime (and a logging interval), naming the late hosts and how far
    fio's "All clients" sum is from the aggregate over the window they all ran."""
    if window is None:
        return []
    first_start = min(s for _, s, _ in window.spans)
    last_end = max(e for _, _, e in window.spans)
    runtime_ms = max(e - s for _, s, e in window.spans)
    allowed = max(INTERVAL_MS, APART_SHARE * runtime_ms)
    late = [(h, s - first_start) for h, s, _ in window.spans if s - first_start > allowed]
    early = [(h, last_end - e) for h, _, e in window.spans if last_end - e > allowed]
    if not late and not early:
        return []
    said = [f"{h} started {d / 1000:.1f} s after the first" for h, d in late[:3]]
    said += [f"{h} ended {d / 1000:.1f} s before the last" for h, d in early[:3]]
    more = len(late) + len(early) - len(said)
    if window.seconds <= 0:
        how = "no second had every host running: fio's sum adds up runs that never overlapped"
    else:
        how = f"every host ran together for {window.seconds:.1f} s, in which they did {window.iops:,.0f} IOPS together"
        if fio_sum_iops:
            over = (fio_sum_iops - window.iops) / window.iops * 100 if window.iops else None
            how += f"; fio's sum of each host over its own runtime says {fio_sum_iops:,.0f}" + (f" ({over:+.0f} %)" if over is not None else "")
    return [
        Finding(
            check="hosts-not-together",
            severity="warning",
            message=f"{'; '.join(said)}{f' (and {more} more)' if more > 0 else ''}: {how}",
            fix="start the hosts together (a slow connection, a busy server, a late startdelay), or judge the aggregate over the common window",
            workload=workload,
        )
    ]


def partial_findings(workload: str, measured: int, missing: Mapping[str, str]) -> list[Finding]:
    """Pure: a ``hosts-partial`` finding when the aggregate holds fewer hosts than were asked for
    (left out before the run, lost or failed during it), naming them: it is not the figure of
    the hosts asked for, and compares with runs on all of them only as a partial figure."""
    if not missing:
        return []
    named = sorted(missing.items(), key=lambda kv: host_sort_key(kv[0]))
    said = "; ".join(f"{h}: {why}" for h, why in named[:3]) + (f" (and {len(named) - 3} more)" if len(named) > 3 else "")
    return [
        Finding(
            check="hosts-partial",
            severity="warning",
            message=f"partial aggregate: {measured} of {measured + len(missing)} hosts measured; missing {said}",
            fix="bring the missing hosts back and run again (--hosts-required all stops a run that loses one)",
            workload=workload,
        )
    ]


def straggler_findings(workload: str, headline: str, per_host: Sequence[tuple[str, FioResult]]) -> list[Finding]:
    """Pure: hosts whose headline metric is far below the hosts' median (or, for a
    latency headline, far above it).  Needs at least two hosts with the metric."""
    from ..metrics import headline_metric, headline_value

    values = [(name, headline_value(result, headline)) for name, result in per_host]
    known = [(n, v) for n, v in values if v is not None]
    if len(known) < 2:
        return []
    median = statistics.median(v for _, v in known)
    if median <= 0:
        return []
    lower_is_better = headline_metric(headline) == "lat_mean_ns"
    slow = []
    for name, value in known:
        share = value / median
        if (share > 1 / STRAGGLER_RATIO) if lower_is_better else (share < STRAGGLER_RATIO):
            slow.append((name, share))
    if not slow:
        return []
    metric = {"iops": "IOPS", "bw_bytes": "bandwidth", "lat_mean_ns": "mean latency"}[headline_metric(headline)]
    parts = ", ".join(f"{n} ({s:.0%} of the median)" for n, s in slow)
    return [
        Finding(
            check="straggler",
            severity="warning",
            message=f"{metric} of {parts} is far {'above' if lower_is_better else 'below'} the median of "
            f"{len(known)} hosts; the aggregate is held back by the slowest host",
            fix="look at that host: its storage, load, network path or fio settings differ from the others",
            workload=workload,
        )
    ]




def host_sort_key(name: str | None) -> tuple:
    """Hosts in the order a person counts them: ``127.0.0.9`` before ``127.0.0.10``."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name or ""))


def format_host_lines(records: Sequence[ResultRecord], each_up_to: int = EACH_HOST_UP_TO,
                      every_host: str | None = None) -> list[str]:  # fmt: skip
    """Pure: per workload and repetition, the aggregate first (with the window every host ran),
    then each host a line, or beyond ``each_up_to`` hosts one line of min/median/max with the
    slowest hosts named (``every_host``: how to see them all, said once)."""
    from ..metrics import direction_figures
    from ..units import fmt_bw, fmt_iops

    def figures(rec: ResultRecord) -> tuple[float, float]:
        per = direction_figures(rec.fio)
        return sum(f["iops"] or 0 for f in per.values()), sum(f["bw_bytes"] or 0 for f in per.values())

    def timing_tail(rec: ResultRecord) -> str:
        timing = (rec.series or {}).get("timing") if isinstance(rec.series, Mapping) else None
        if not timing or timing.get("runtime_ms") is None:
            return ""
        tail = f"  took {timing['runtime_ms'] / 1000:.1f} s"
        if timing.get("behind_first_ms"):
            tail += f" (+{timing['behind_first_ms'] / 1000:.1f} s after the first)"
        return tail

    lines: list[str] = []
    by_key: dict[tuple[str, int], list[ResultRecord]] = {}
    for rec in records:
        if rec.host is not None:
            by_key.setdefault((rec.workload, rec.repetition), []).append(rec)
    summarised = False
    for (workload, repetition), members in by_key.items():
        lines.append(f"{workload}" + (f" #{repetition + 1}" if repetition else "") + ":")
        hosts = sorted((r for r in members if r.host != "all"), key=lambda r: host_sort_key(r.host))
        for rec in (r for r in members if r.host == "all"):
            iops, bw = figures(rec)
            window = (rec.series or {}).get("window") if isinstance(rec.series, Mapping) else None
            tail = timing_tail(rec)
            if window and window.get("seconds", 0) > 0:
                tail += f"  all ran together {window['seconds']:.1f} s: {fmt_iops(window['iops'])} IOPS {fmt_bw(window['bw_bytes'])}"
            elif window:
                tail += "  no second had every host running"
            lines.append(f"  {f'all {len(hosts)} hosts':<24} {fmt_iops(iops):>10} IOPS {fmt_bw(bw):>12}{tail}")
        if len(hosts) <= each_up_to:
            for rec in hosts:
                iops, bw = figures(rec)
                lines.append(f"  {rec.host:<24} {fmt_iops(iops):>10} IOPS {fmt_bw(bw):>12}{timing_tail(rec)}")
            continue
        ranked = sorted(hosts, key=lambda r: figures(r)[0])
        values = [figures(r)[0] for r in ranked]
        slowest = ", ".join(f"{r.host} {fmt_iops(v)}" for r, v in zip(ranked[:3], values[:3], strict=False))
        lines.append(f"  {len(hosts)} hosts, IOPS each: min {fmt_iops(values[0])} · median {fmt_iops(statistics.median(values))} · "
                     f"max {fmt_iops(values[-1])} ({ranked[-1].host}); slowest: {slowest}")  # fmt: skip
        summarised = True
    if summarised and every_host:
        lines.append(f"every host: {every_host}")
    return lines


# --------------------------------------------------------------------------- the executor


class ClientFio:
    """A :class:`storbench.run.runner.FioExecutor` that runs each job on every host at once:
    ONE ``fio --client=H1,P1 job1 --client=H2,P2 job2 ... --output-format=json``.

    ``remote`` tells the runner that test files and filesystems are not local (no
    local space measurement, no local test-file removal: see :meth:`remove_test_files`).
    """

    remote = True

    def __init__(self, hosts: Sequence[Host], fio_path: str = "fio", left_out: Mapping[str, str] | None = None,
                 version: str | None = None) -> None:  # fmt: skip
        resolved = shutil.which(fio_path)
        if resolved is None:
            raise FioMissingError(
                f"fio not found ({fio_path!r} is not on PATH); install it with 'apt-get install fio' or 'make install'"
            )
        if not hosts:
            raise UsageError("no hosts to run on")
        self.path = resolved
        self.hosts = tuple(hosts)
        #: hosts asked for but left out by the pre-flight (display -> why): every aggregate is partial
        self.left_out: Mapping[str, str] = dict(left_out or {})
        #: test files every host removed itself (their last job ran with unlink=1 and ended well)
        self.removed: set[str] = set()
        self._version: str | None = version

    @property
    def host_names(self) -> dict[tuple[str, int], str]:
        return {h.fio_key: h.display for h in self.hosts}

    def version(self) -> str:
        if self._version is None:
            out = proc.run([self.path, "--version"], timeout_s=30, c_locale=False)
            self._version = out.stdout.strip() or "unknown"
        return self._version

    def argv(self, job_paths: Sequence[str]) -> list[str]:
        argv = [self.path]
        for host, path in zip(self.hosts, job_paths):
            argv += [host.client_option(), path]
        # ETA requests on: they are how fio's client notices a host that stops answering mid-run
        # (a frozen or half-dead server: "timeout on cmd SEND_ETA", dropped after ~40 s, the other
        # hosts' results printed); with --eta=never it waits for that host for ever
        return argv + ["--output-format=json+", "--eta=always"]

    def run(self, job_text: str, on_status: Callable[[Status], None], env: Mapping[str, str] | None = None,
            watch: Callable[[], str | None] | None = None) -> FioInvocation:
        """``watch`` is never given (the runner watches servers for local runs only: the hosts reach them, not this one)."""
        from .fioexec import FioInvocation, stop_fio

        if env:  # fio's client cannot hand an environment to its servers (runner.run_fio refuses such jobs first)
            raise ValueError(f"fio's client mode cannot pass an environment ({', '.join(env)})")
        if not self.hosts:  # every host was lost by earlier workloads: fio without --client would run HERE
            return FioInvocation(returncode=1, output_text="", stderr_text="fio: every host was lost earlier in this run; nothing to run on",
                                 stdout_text="", left_out=dict(self.left_out))  # fmt: skip

        with tempfile.TemporaryDirectory(prefix=f"storbench-fio-{os.getpid()}-client-") as tmp:
            paths = []
            for i, host in enumerate(self.hosts):
                path = os.path.join(tmp, f"job-{i}.fio")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(with_window_logs(job_for_host(job_text, host.target), i))
                paths.append(path)
            out_path, err_path = os.path.join(tmp, "stdout.json"), os.path.join(tmp, "stderr.txt")
            interrupted = False
            with open(out_path, "w+b") as out, open(err_path, "w+b") as err:
                client, noted = proc.spawn(self.argv(paths), stdout=out, stderr=err, cwd=tmp)
                try:
                    signals.raise_noted(noted)  # a signal while it was forked: it is ours to stop now
                    client.wait()
                except BaseException:
                    interrupted = True
                    stop_fio(client)
                    raise
                out.seek(0)
                err.seek(0)
                output_text = out.read().decode("utf-8", errors="replace")
                stderr_text = err.read().decode("utf-8", errors="replace")
            lost = lost_hosts(self.hosts, output_text, stderr_text)
            if client.returncode == 0 and not lost and "\nunlink=1\n" in job_text and (name := filename_of(job_text)):
                self.removed.add(name)
            left_out = dict(self.left_out)
            self._drop(lost)
            return FioInvocation(
                returncode=client.returncode,
                output_text=output_text,
                stderr_text=stderr_text,
                stdout_text="",  # the JSON is the client's stdout: see output_text
                interrupted=interrupted,
                host_names=self.host_names,
                lost_hosts=lost,
                host_series=self._host_series(tmp),
                left_out=left_out,
            )

    def _drop(self, lost: Mapping[str, str]) -> None:
        """Hosts lost during a workload are not asked again in this run (a frozen host would hold
        every later workload and the cleanup for fio's ~40 s of timeouts): their later aggregates
        are partial, and their test file is left to them."""
        if not lost:
            return
        self.hosts = tuple(h for h in self.hosts if h.display not in lost)
        self.left_out = {**self.left_out, **{h: f"lost during an earlier workload ({why})" for h, why in lost.items()}}

    def _host_series(self, tmp: str) -> dict[str, tuple[tuple[int, float, float], ...]]:
        """Each host's per-second figures from the logs its server sent back (``sbhN_iops.J.log.HOST``)."""
        from ..fio.logs import epoch_series

        names = os.listdir(tmp)
        out = {}
        for i, host in enumerate(self.hosts):
            texts: dict[str, list[str]] = {"iops": [], "bw": []}
            for name in names:
                m = re.match(rf"^sbh{i}_(iops|bw)\.\d+\.log\.", name)
                if m:
                    with open(os.path.join(tmp, name), encoding="ascii", errors="replace") as fh:
                        texts[m.group(1)].append(fh.read())
            if texts["iops"]:
                try:
                    out[host.display] = epoch_series(texts["iops"], texts["bw"])
                except FioParseError:
                    continue  # a log cut short: that host has no series (its result stands)
        return out

    def _tiny_job(self, name: str, options: Sequence[str], filename_for: Callable[[Host], str]) -> tuple[int, str, str]:
        """Run a small job on every host (probes, cleanup); (returncode, stdout, stderr)."""
        with tempfile.TemporaryDirectory(prefix=f"storbench-fio-{os.getpid()}-client-") as tmp:
            paths = []
            for i, host in enumerate(self.hosts):
                path = os.path.join(tmp, f"{name}-{i}.fio")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(f"[{name}]\n" + "".join(o + "\n" for o in options) + f"filename={filename_for(host)}\n")
                paths.append(path)
            child, noted = proc.spawn(self.argv(paths), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp, text=True)
            try:
                signals.raise_noted(noted)
                out, err = child.communicate(timeout=120)
            except BaseException:
                proc.stop_group(child, ((signal.SIGKILL, 5.0),))
                raise
            return child.returncode, out, err

    def probe_ioengine(self, default_target: str) -> str:
        """The first of io_uring, libaio, posixaio that fio accepts on EVERY host (a 4 KiB
        read of a probe file in each host's target directory, removed afterwards)."""
        from ..errors import FioRunError
        from ..fio.json import parse_fio_json
        from ..jobs.jobfile import fio_filename
        from .engines import AUTO_ENGINES

        def probe_file(host: Host) -> str:
            where = (host.target or default_target).rstrip("/") or "/"
            return fio_filename(("" if where == "/" else where) + "/storbench-probe")  # no dot: see run/engines.py

        reasons = []
        for engine in AUTO_ENGINES:
            _, out, err = self._tiny_job(
                "storbench-probe", [f"ioengine={engine}", "rw=read", "bs=4k", "size=4k", "unlink=1"], probe_file
            )
            try:
                result = parse_fio_json(out)
            except FioParseError:
                reasons.append(f"{engine}: {(_fio_lines(err + out) or ['no result'])[0]}")
                continue
            hosts = {(j.hostname, j.port): j.error for j in result.jobs if j.hostname and not j.is_aggregate}
            bad = [h.display for h in self.hosts if hosts.get(h.fio_key, -1) != 0]
            if not bad:
                return engine
            reasons.append(f"{engine}: fails on {', '.join(bad)}")
        raise FioRunError("ioengine probe", "none of io_uring, libaio, posixaio works on every host (" + "; ".join(reasons) + ")")

    def remove_test_files(self, job_texts: Iterable[str]) -> list[str]:
        """Remove the test files the jobs used, ON EACH HOST: a 4 KiB read of each file
        with ``unlink=1`` (fio deletes it at the end; a missing file is created and
        deleted).  Returns problems, one line each (the run's results stand anyway)."""
        texts = list(job_texts)
        files = list(dict.fromkeys(f for f in (filename_of(t) for t in texts) if f and f not in self.removed))
        problems = [f"the test file {f} is left on {host}, lost during the run: remove it there"
                    for host, why in self.left_out.items() if why.startswith("lost during")
                    for f in dict.fromkeys(x for x in (filename_of(t) for t in texts) if x)]  # fmt: skip
        if not self.hosts:
            return problems
        for escaped in files:
            def for_host(host: Host, escaped: str = escaped) -> str:
                text = job_for_host(f"[x]\nfilename={escaped}\n", host.target)
                return filename_of(text) or escaped

            try:
                code, out, err = self._tiny_job(
                    "storbench-cleanup", ["ioengine=psync", "rw=read", "bs=4k", "size=4k", "io_size=4k", "unlink=1"], for_host
                )
            except (OSError, subprocess.SubprocessError) as exc:
                problems.append(f"could not remove test file {escaped} on the hosts: {exc}")
                continue
            if code != 0 and not _only_already_gone(out):
                said = _fio_lines(err + out)
                problems.append(f"could not remove test file {escaped} on every host: {said[0] if said else f'fio exit status {code}'}")
        return problems


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


def _only_already_gone(output_text: str) -> bool:
    """Pure: a cleanup job's JSON where every host either removed the file or found it gone
    already (ENOENT: servers sharing one directory, the first one removed it)."""
    import errno

    from ..fio.json import parse_fio_json

    try:
        result = parse_fio_json(output_text)
    except FioParseError:
        return False
    errors = [j.error for j in result.jobs if j.hostname and not j.is_aggregate]
    return bool(errors) and all(e in (0, errno.ENOENT) for e in errors)


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
