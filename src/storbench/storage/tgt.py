"""A tgt iSCSI target's own word about a LUN: what stores it (its backing store: a file, a block
device, a zvol) and how (``rdwr``, ``aio``, ``sg``; its flags).

Where storbench runs beside the server (a ``tgtd`` in the same network namespace, listening on
the target's portal), it asks that tgtd with ``tgtadm`` over its management socket (the
``TGT_IPC_SOCKET`` of the tgtd's own environment, else tgt's default) and finds the LUN by its IQN
and number.  With the backing store's path storbench can describe what holds it on the server (a
ZFS dataset, whose ARC can answer the LUN's reads), as it does for a share of this machine.

* pure: :func:`parse_target_show` (``tgtadm --lld iscsi --mode target --op show``) and
  :func:`lun_of`;
* the edge: :func:`local_tgtds` (``/proc``: tgtd processes in this network namespace, their
  portals and management sockets) and :func:`backing_store` (the whole question, with why not).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

#: where tgtadm finds tgtd when nothing says otherwise (tgt 1.0.85: ``/var/run/tgtd/socket.0``)
DEFAULT_SOCKET = "/var/run/tgtd/socket.0"
TGTADM_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class TgtLun:
    """One LUN of a tgt target, as ``tgtadm --op show`` prints it."""

    lun: int
    type: str  # "disk", "controller", ...
    size_mb: int | None  # tgt's "Size: 1074 MB" (decimal megabytes)
    block_size: int | None
    readonly: bool | None
    backing_type: str | None  # "rdwr", "aio", "sg", "null"
    backing_path: str | None  # None for "None" (the controller LUN 0)
    backing_flags: str | None


@dataclass(frozen=True)
class TgtTarget:
    tid: int
    iqn: str
    luns: tuple[TgtLun, ...]


_TARGET_RE = re.compile(r"^Target (\d+): (\S+)\s*$")
_LUN_RE = re.compile(r"^\s+LUN: (\d+)\s*$")
_FIELD_RE = re.compile(r"^\s+([A-Za-z][A-Za-z -]*?):\s?(.*?)\s*$")
_SIZE_RE = re.compile(r"(\d+) MB, Block size: (\d+)")


def _yes(value: str | None) -> bool | None:
    return None if value is None else value.strip().lower() == "yes"


def parse_target_show(text: str) -> tuple[TgtTarget, ...]:
    """Every target and its LUNs from ``tgtadm --lld iscsi --mode target --op show``; lines it
    does not know (nexus, account and ACL information) are passed over."""
    targets: list[TgtTarget] = []
    tid: int | None = None
    iqn = ""
    luns: list[TgtLun] = []
    lun: dict[str, str] | None = None
    lun_no = 0

    def close_lun() -> None:
        nonlocal lun
        if lun is None:
            return
        size = _SIZE_RE.search(lun.get("Size", ""))
        path = lun.get("Backing store path")
        luns.append(TgtLun(
            lun=lun_no, type=lun.get("Type", ""), size_mb=int(size.group(1)) if size else None,
            block_size=int(size.group(2)) if size else None, readonly=_yes(lun.get("Readonly")),
            backing_type=lun.get("Backing store type") or None, backing_path=None if path in (None, "", "None") else path,
            backing_flags=lun.get("Backing store flags") or None,
        ))  # fmt: skip
        lun = None

    def close_target() -> None:
        nonlocal luns
        close_lun()
        if tid is not None:
            targets.append(TgtTarget(tid=tid, iqn=iqn, luns=tuple(luns)))
        luns = []

    for line in text.splitlines():
        if m := _TARGET_RE.match(line):
            close_target()
            tid, iqn = int(m.group(1)), m.group(2)
            continue
        if m := _LUN_RE.match(line):
            close_lun()
            lun, lun_no = {}, int(m.group(1))
            continue
        if lun is not None and (m := _FIELD_RE.match(line)):
            if line.startswith(" " * 12):  # a LUN's own fields are indented below its "LUN:" line
                lun[m.group(1)] = m.group(2)
            else:  # "Account information:" and what follows the LUNs
                close_lun()
    close_target()
    return tuple(targets)


def lun_of(targets: Sequence[TgtTarget], iqn: str, lun: int) -> TgtLun | None:
    for t in targets:
        if t.iqn == iqn:
            return next((x for x in t.luns if x.lun == lun), None)
    return None


@dataclass(frozen=True)
class LocalTgtd:
    """A tgtd in this network namespace: its pid, the iSCSI portals it listens on (``host:port``
    from its ``--iscsi portal=`` option; none said: every address on tgt's port 3260) and its
    management socket."""

    pid: int
    portals: tuple[str, ...]
    socket: str


def local_tgtds(proc: str = "/proc") -> list[LocalTgtd]:
    """Every ``tgtd`` in this process's network namespace (``/proc``)."""
    from ._util import local_processes

    return [LocalTgtd(pid=pid, portals=tuple(p for a in argv for p in re.findall(r"portal=([^,\s]+)", a)),
                      socket=environ.get("TGT_IPC_SOCKET") or DEFAULT_SOCKET)
            for pid, argv, environ in local_processes("tgtd", proc)]  # fmt: skip


def _serves(tgtd: LocalTgtd, host: str, port: int) -> bool:
    if not tgtd.portals:
        return port == 3260
    for portal in tgtd.portals:
        addr, _, p = portal.rpartition(":")
        if int(p or 3260) == port and addr.strip("[]") in (host, "0.0.0.0", "::"):
            return True
    return False


def backing_store(host: str, port: int, iqn: str, lun: int, proc: str = "/proc") -> tuple[TgtLun | None, str]:
    """The LUN as the tgtd beside storbench that serves ``host:port`` keeps it, and how storbench
    knows (or why it cannot: no such tgtd, tgtadm missing or refused, no such LUN)."""
    servers = [t for t in local_tgtds(proc) if _serves(t, host, port)]
    if not servers:
        return None, f"no tgtd beside storbench serves {host}:{port} (the LUN's backing store cannot be read)"
    tgtd = servers[0]
    from ..process import proc as proc_mod

    try:
        done = proc_mod.run(["tgtadm", "--lld", "iscsi", "--mode", "target", "--op", "show"], timeout_s=TGTADM_TIMEOUT_S,
                            env_extra={"TGT_IPC_SOCKET": tgtd.socket})  # fmt: skip
    except FileNotFoundError:
        return None, "tgtadm is not installed here (Debian package tgt)"
    except subprocess.TimeoutExpired:
        return None, f"tgtadm did not answer within {TGTADM_TIMEOUT_S:.0f} s (tgtd pid {tgtd.pid})"
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}").splitlines()[-1]
        return None, f"tgtadm (tgtd pid {tgtd.pid}): {last}"
    found = lun_of(parse_target_show(done.stdout), iqn, lun)
    if found is None:
        return None, f"tgtd (pid {tgtd.pid}) has no LUN {lun} of {iqn}"
    return found, f"tgtd (pid {tgtd.pid}) beside storbench"
