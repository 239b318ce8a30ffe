"""Which fio servers a run drives, read from ``--host HOST[:PORT]`` and a ``--hosts FILE`` TOML
inventory, and each host's own job text. Pure but for :func:`load_inventory`, which reads the file.

:func:`parse_host` reads ``--host`` (IPv4, ``[IPv6]:PORT``, names); :func:`parse_inventory` reads
an inventory::

    [host.hv-05]
    address = "10.0.0.5"   # required: IPv4, IPv6 (brackets optional) or a name
    port = 8765            # default 8765 (storbench agent's default)
    target = "/mnt/bench"  # the directory ON THAT HOST where the test file goes
    label = "hv-05"        # how results name this host (default: the section name)

Every mistake is one line naming the file, the host and the key. :func:`job_for_host` puts a
host's own ``target`` into the job text.
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from storbench.jsontypes import JSONMapping, JSONObject, JSONValue

from ..errors import UsageError

DEFAULT_PORT = 8765


_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


_HOSTNAME_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"


_HOSTNAME_RE = re.compile(rf"^{_HOSTNAME_LABEL}(?:\.{_HOSTNAME_LABEL})*\.?$")


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


def job_for_host(job_text: str, target: str | None, tag: str | None = None) -> str:
    """The job text with its ``filename`` moved into ``target`` (a host's own directory) and, with
    ``tag``, named for the host (``storbench.testfile.TAG``: :func:`file_tags`).

    The test file keeps its name otherwise; ``None`` for both leaves the text as is.  A job that
    names its files by ``filename_format`` (an S3 target's key bases, every host reaching one
    bucket) gets the tag after each base (``.../$jobname.$jobnum.TAG``).
    """
    if target is None and tag is None:
        return job_text
    from ..jobs.jobfile import fio_filename

    lines = job_text.split("\n")
    found = False
    for i, line in enumerate(lines):  # every section's (a job file's group has several)
        if line.startswith("filename_format=") and target is None:
            lines[i] = f"{line}.{tag}"
            found = True
        elif line.startswith("filename="):
            head, _, name = line[len("filename=") :].rpartition("/")
            name = f"{name}.{tag}" if tag else name
            if target is not None:
                lines[i] = "filename=" + fio_filename(target.rstrip("/") + "/" + name if target != "/" else "/" + name)
            else:
                lines[i] = "filename=" + (f"{head}/{name}" if head or line.startswith("filename=/") else name)
            found = True
    if not found:
        raise ValueError("job text has no filename= line" + (" (nor filename_format=)" if target is None else ""))
    return "\n".join(lines)


def shares_paths(hosts: Sequence[Host]) -> bool:
    """Whether two of ``hosts`` may reach one file: the same path on each (no target of their own,
    or the same one), which on a directory they share (an NFS export, a cluster filesystem) is one
    file.  storbench cannot tell a shared directory from alike local ones: alike paths count as
    shared.  Pure."""
    targets = [h.target for h in hosts]
    return len(targets) > 1 and (None in targets or len(set(targets)) < len(targets))


def file_tags(hosts: Sequence[Host]) -> dict[str, str]:
    """Each host's own suffix for the files it writes (display -> tag) where hosts may reach one
    directory (:func:`shares_paths`), else nothing: what fio's own client does on a shared
    filesystem (it prefixes each server's address to the file name).  One host's file is then its
    own, so each host removes it as its last job ends, with no host pulling a file from under
    another.  The tag is the host's name with anything but letters, digits, ``.``, ``_`` and ``-``
    made ``_``; ``hN`` (its place in the list) for all of them should two tags coincide.  Pure."""
    if not shares_paths(hosts):
        return {}
    tags = {h.display: re.sub(r"[^A-Za-z0-9._-]", "_", h.display) for h in hosts}
    if len(set(tags.values())) < len(tags):
        tags = {h.display: f"h{i}" for i, h in enumerate(hosts)}
    return tags


def with_window_logs(job_text: str, index: int) -> str:
    """The job text with per-second IOPS and bandwidth logs stamped with Unix time, named for host
    ``index`` (``sbhN``: two servers on one address would overwrite each other's ``sb`` logs)."""
    from ..jobs.jobfile import in_every_section

    lines = [f"write_iops_log=sbh{index}", f"write_bw_log=sbh{index}", *(f"{k}={v}" for k, v in WINDOW_LOG_OPTIONS)]
    return in_every_section(job_text, lines)


def filename_of(job_text: str) -> str | None:
    """The (escaped) ``filename`` value of a job text."""
    for line in reversed(job_text.split("\n")):
        if line.startswith("filename="):
            return line[len("filename=") :]
    return None


WINDOW_LOG_OPTIONS: tuple[tuple[str, str], ...] = (("log_avg_msec", "1000"), ("log_unix_epoch", "1"))
