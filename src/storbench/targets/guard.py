"""The data-safety guard for block-device targets.

A write workload on a block device destroys what is on it, so storbench writes to
a device only when every rule below says it is safe *and* the user said so.

* The pure part: :func:`workload_writes` (does a workload write?) and
  :func:`check_block_target` (may this device be used, given its facts?).  No I/O.
* The edge: :func:`gather_device_facts` reads the facts (sysfs, ``lsblk``,
  ``/proc/self/mountinfo``, ``/proc/swaps``, ``wipefs -n``, ``blkid -p``,
  ``findmnt -T``) into a frozen :class:`DeviceFacts`.  It only ever opens the
  device read-only (``wipefs -n`` and ``blkid -p`` read it; the "busy" probe opens
  it ``O_RDONLY|O_EXCL`` and closes it at once) and never raises: a fact it cannot
  read is ``None`` and named in :attr:`DeviceFacts.unknown`.

Rules (checked in this order; the first that holds is the refusal, one line)
-----------------------------------------------------------------------------
Read-only workloads (see :func:`workload_writes`) may run on any existing block
device, mounted or not.  A workload that writes runs only when:

1. ``read-only``     the kernel does not mark the device read-only;
2. ``root-device``   it does not hold ``/`` (the device under ``findmnt -T /``
   and every device below it: a partition's disk, a device-mapper device's slaves);
3. ``database-device`` likewise for the storbench results database;
4. ``mounted``       neither it nor any partition or device stacked on it is
   mounted or used as swap;
5. ``holders``       nothing holds it or its partitions (``/sys/class/block/X/holders``:
   LVM, md, dm-crypt, bcache ...);
6. ``busy``          the kernel lets us claim it (an ``O_EXCL`` open succeeds; it
   fails with EBUSY while anything -- even a mount in another namespace, ZFS or a
   VM -- claims it);
7. ``signature``     ``wipefs``/``blkid`` find no signature on it (filesystem, RAID
   member, LVM PV, partition table, swap ...);
8. ``unknown``       every fact above could be read (a device storbench cannot
   check is never written);
9. ``destroy-data``  ``--destroy-data`` was given, and
10. ``destroy-data-mismatch`` one of its values is *exactly* the ``--target`` text.

The ``--destroy-data`` rule, precisely
--------------------------------------
``--destroy-data`` must repeat the ``--target`` argument character for character
(``--target /dev/loop1 --destroy-data /dev/loop1``).  No normalisation is done:
a symlink to the device (``/dev/disk/by-id/...`` when the target was given as
``/dev/sdb``), another spelling (``/dev//loop1``, ``/dev/../dev/loop1``) or another
device (``/dev/loop11`` for ``/dev/loop1``) is refused.  Because the two strings are
identical they name the same device, the one whose facts were checked, and the
runner hands fio that device's resolved path (:attr:`DeviceFacts.realpath`), so a
symlink that changes later cannot redirect the writes.  A target given as a
symlink (``--target /dev/disk/by-id/X``) is allowed when ``--destroy-data`` repeats
the same symlink text.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import TargetError
from ..units import fio_bool

# --------------------------------------------------------------------------- which workloads write

#: ``rw`` values (and their ``readwrite`` alias) that write or trim.
WRITING_RW: frozenset[str] = frozenset(
    {"write", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim", "trimwrite", "randtrimwrite"}
)
#: ``rw`` values that only read.
READING_RW: frozenset[str] = frozenset({"read", "randread"})
#: I/O engines whose "reads" are not reads (they allocate, truncate, defragment or run programs).
WRITING_ENGINES: frozenset[str] = frozenset({"ftruncate", "falloc", "e4defrag", "filecreate", "filedelete", "exec"})

def _flag(value: str | None) -> bool:
    """A fio boolean (:func:`storbench.units.fio_bool`): a valueless flag is on, an unreadable value off."""
    return bool(fio_bool(value))


def workload_writes(options: Mapping[str, str | None] | Iterable[tuple[str, str | None]]) -> bool:
    """Whether a workload with these fio options may write or trim its target.  Pure.

    Writes: ``rw``/``readwrite`` with a write or trim direction (``write``,
    ``randwrite``, ``rw``/``readwrite``, ``randrw``, ``trim``, ``randtrim``,
    ``trimwrite``, ``randtrimwrite``; a ``:N`` suffix is ignored); ``trim_percentage``
    above 0 (trims during verification); an engine in :data:`WRITING_ENGINES`; an
    ``rw`` value storbench does not know (unknown counts as writing).
    Does not write: ``rw=read``/``randread`` (fio's default when ``rw`` is absent),
    also with ``verify`` (then fio only verifies what it reads), and any ``rw`` with
    ``verify_only`` (fio skips the workload and only reads back).  A later option
    wins over an earlier one of the same name, as in fio.
    """
    opts: dict[str, str | None] = dict(options.items() if isinstance(options, Mapping) else options)
    rw_value: str | None = "read"
    for key in ("rw", "readwrite"):
        if key in opts:
            rw_value = opts[key]
    base = (rw_value or "").strip().lower().split(":", 1)[0]
    trim_pct = opts.get("trim_percentage")
    if trim_pct is not None:
        try:
            if int(trim_pct.strip().rstrip("%")) > 0:
                return True
        except ValueError:
            return True
    if (opts.get("ioengine") or "").strip().lower() in WRITING_ENGINES:
        return True
    if "verify_only" in opts and _flag(opts["verify_only"]):
        return False
    if base in READING_RW:
        return False
    return True  # a writing rw value, or one storbench does not know


# --------------------------------------------------------------------------- facts


@dataclass(frozen=True)
class DeviceFacts:
    """What the guard knows about one block-device target.

    ``None`` in a fact means "could not be read" (why: :attr:`unknown`); a device
    with an unknown fact is never written.  The defaults describe a blank, unused
    device, so tests can build facts by hand and change one thing.

    ``mountpoints`` pairs a kernel name with where it is mounted (``("loop1p1",
    "/mnt/x")``; swap shows as ``"[SWAP]"``): the device itself, its partitions and
    devices stacked on it.  ``holders`` pairs a holder with the device it holds
    (``("dm-0", "loop1p2")``).  ``signatures`` are wipefs/blkid type names
    (``"ext4"``, ``"dos"``, ``"LVM2_member"``).
    """

    path: str  # as the user gave it (--target)
    realpath: str  # os.path.realpath(path): the device fio is given
    is_block: bool
    kname: str | None = None  # kernel name, e.g. "loop1", "nvme0n1p2"
    mountpoints: tuple[tuple[str, str], ...] | None = ()
    holders: tuple[tuple[str, str], ...] | None = ()
    signatures: tuple[str, ...] | None = ()
    holds_root: bool | None = False
    holds_database: bool | None = False
    read_only: bool | None = False
    busy: bool | None = False  # an O_EXCL open failed with EBUSY
    database: str | None = None  # the database path the check was made for
    unknown: tuple[str, ...] = field(default_factory=tuple)  # what could not be read, and why


#: Rule ids, in the order they are checked.
RULES: tuple[str, ...] = (
    "not-block",
    "read-only",
    "root-device",
    "database-device",
    "mounted",
    "holders",
    "busy",
    "signature",
    "unknown",
    "destroy-data",
    "destroy-data-mismatch",
)


class BlockTargetRefused(TargetError):
    """A block-device target the guard refuses; ``rule`` is one of :data:`RULES`."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule


def destroy_flag(facts: DeviceFacts) -> str:
    """The exact flag that allows writes to this target (after every other rule holds)."""
    return f"--destroy-data {facts.path}"


def _refuse(facts: DeviceFacts, rule: str, detail: str, how: str) -> BlockTargetRefused:
    return BlockTargetRefused(
        rule, f"refusing to write to block device {facts.path!r} [{rule}]: {detail}; {how}"
    )


def _list(items: Iterable[str]) -> str:
    return ", ".join(items)


def check_block_target(
    facts: DeviceFacts, *, writes: bool, destroy: Sequence[str], writing: Sequence[str] = ()
) -> None:
    """Raise :class:`BlockTargetRefused` (a one-line :class:`TargetError`) unless the
    workloads may run on this device.  Pure.

    ``writes``: whether any workload writes (:func:`workload_writes`); ``destroy``:
    the ``--destroy-data`` values; ``writing``: names of the writing workloads, for
    the message.  See the module doc for the rules and their order.
    """
    if not facts.is_block:
        raise BlockTargetRefused(
            "not-block", f"target {facts.path!r} is not a block device [not-block]; give a block device, a directory or a file"
        )
    if not writes:
        return  # reading does not change the device
    flag = destroy_flag(facts)
    if facts.read_only:
        raise _refuse(
            facts, "read-only", "the kernel marks it read-only",
            f"run only read workloads on it, or make it writable (blockdev --setrw {facts.realpath}) and pass {flag}",
        )
    if facts.holds_root:
        raise _refuse(
            facts, "root-device", "it holds the root filesystem /",
            "storbench never writes to it; give a spare device, or a directory for a test through the filesystem",
        )
    if facts.holds_database:
        where = f" {facts.database}" if facts.database else ""
        raise _refuse(
            facts, "database-device", f"it holds the storbench results database{where}",
            "store results elsewhere (STORBENCH_DB=PATH or --db) or give another device",
        )
    if facts.mountpoints:
        where = _list(f"{k} at {m}" if m != "[SWAP]" else f"{k} as swap" for k, m in facts.mountpoints)
        raise _refuse(
            facts, "mounted", f"it is in use: {where}",
            f"unmount it (and its partitions; swapoff for swap), then pass {flag}",
        )
    if facts.holders:
        held = _list(f"{h} holds {k}" for h, k in facts.holders)
        raise _refuse(
            facts, "holders", f"it is held by a device stacked on it ({held}: LVM, md, dm-crypt ...)",
            f"take those down first (vgchange -an, mdadm --stop, dmsetup remove), then pass {flag}",
        )
    if facts.busy:
        raise _refuse(
            facts, "busy", "another program has claimed it (an exclusive open fails with EBUSY)",
            f"stop what uses it (a mount in another namespace, ZFS, a VM, swap), then pass {flag}",
        )
    if facts.signatures:
        raise _refuse(
            facts, "signature", f"it holds data: wipefs/blkid find {_list(dict.fromkeys(facts.signatures))}",
            f"if that data may be destroyed, erase the signatures (wipefs -a {facts.realpath}), then pass {flag}",
        )
    unknown = [
        name for name, value in (
            ("mounts", facts.mountpoints), ("holders", facts.holders), ("signatures", facts.signatures),
            ("root device", facts.holds_root), ("database device", facts.holds_database),
            ("read-only flag", facts.read_only), ("exclusive open", facts.busy), ("kernel name", facts.kname),
        ) if value is None
    ]  # fmt: skip
    if unknown:
        why = f" ({_list(facts.unknown)})" if facts.unknown else ""
        raise _refuse(
            facts, "unknown", f"storbench cannot check its {_list(unknown)}{why}",
            "run as root with util-linux (lsblk, wipefs, blkid, findmnt) installed",
        )
    names = f" ({_list(writing)})" if writing else ""
    if not destroy:
        raise _refuse(
            facts, "destroy-data", f"write workloads{names} destroy the data on it",
            f"to allow that, pass {flag}; or run only read workloads",
        )
    if facts.path not in destroy:
        given = _list(repr(d) for d in destroy)
        raise _refuse(
            facts, "destroy-data-mismatch", f"--destroy-data names {given}, not the target as given",
            f"pass {flag}, spelled exactly as --target (symlinks and other names of a device are not accepted)",
        )


# --------------------------------------------------------------------------- pure parsers of tool output


def parse_wipefs_json(text: str) -> tuple[str, ...]:
    """``wipefs -n --json DEV`` -> signature types (empty output: none).  ValueError on other text."""
    if not text.strip():
        return ()
    data = json.loads(text)
    sigs = data.get("signatures")
    if not isinstance(sigs, list):
        raise ValueError("not wipefs JSON: no 'signatures' list")
    return tuple(str(s.get("type") or "unknown") for s in sigs if isinstance(s, dict))


def parse_blkid_export(text: str) -> tuple[str, ...]:
    """``blkid -p -o export DEV`` -> the TYPE / PTTYPE values (a filesystem, RAID member, partition table ...)."""
    out: list[str] = []
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key in ("TYPE", "PTTYPE") and value:
            out.append(value)
    return tuple(out)


def parse_lsblk_mounts(text: str) -> tuple[tuple[str, str], ...]:
    """``lsblk -J -o KNAME,MOUNTPOINTS DEV`` -> (kname, mountpoint) for the device and every child."""
    data = json.loads(text)
    devices = data.get("blockdevices")
    if not isinstance(devices, list):
        raise ValueError("not lsblk JSON: no 'blockdevices' list")
    out: list[tuple[str, str]] = []

    def walk(items: list) -> None:
        for item in items:
            if not isinstance(item, dict):
                continue
            kname = str(item.get("kname") or item.get("name") or "?")
            points = item.get("mountpoints")
            if points is None:
                points = [item.get("mountpoint")]
            for p in points:
                if p:
                    out.append((kname, str(p)))
            walk(item.get("children") or [])

    walk(devices)
    return tuple(out)


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def parse_mountinfo_sources(text: str) -> tuple[tuple[str, str, str], ...]:
    """``/proc/self/mountinfo`` -> (major:minor, source, mountpoint) of every mount."""
    out: list[tuple[str, str, str]] = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        lf, rf = left.split(), right.split()
        if not sep or len(lf) < 5 or len(rf) < 2:
            continue
        out.append((lf[2], _unescape(rf[1]), _unescape(lf[4])))
    return tuple(out)


def parse_swaps(text: str) -> tuple[str, ...]:
    """``/proc/swaps`` -> the swap files and devices in use."""
    return tuple(_unescape(line.split()[0]) for line in text.splitlines()[1:] if line.split())


def findmnt_source_device(source: str) -> str | None:
    """findmnt's SOURCE (``/dev/sda2``, ``/dev/sda2[/@]``) -> the device path, or None (tmpfs, nfs ...)."""
    source = source.strip()
    if "[" in source and source.endswith("]"):
        source = source[: source.index("[")]
    return source if source.startswith("/dev/") else None


# --------------------------------------------------------------------------- the edge

Run = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def _run(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    from ..process import proc

    return proc.run(argv, timeout_s=30, c_locale=False)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


class _Sysfs:
    """Block-device relations from sysfs (``sys_root`` is ``/sys`` or a test tree shaped like it)."""

    def __init__(self, sys_root: str) -> None:
        self.root = sys_root

    def dir(self, kname: str) -> str:
        return os.path.join(self.root, "class", "block", kname)

    def kname_of_devnum(self, dev: int) -> str | None:
        link = os.path.join(self.root, "dev", "block", f"{os.major(dev)}:{os.minor(dev)}")
        return os.path.basename(os.path.realpath(link)) if os.path.exists(link) else None

    def partitions(self, kname: str) -> tuple[str, ...]:
        base = os.path.realpath(self.dir(kname))
        try:
            names = sorted(os.listdir(base))
        except OSError:
            return ()
        return tuple(n for n in names if os.path.exists(os.path.join(base, n, "partition")))

    def holders(self, kname: str) -> tuple[str, ...] | None:
        try:
            return tuple(sorted(os.listdir(os.path.join(self.dir(kname), "holders"))))
        except FileNotFoundError:
            return ()
        except OSError:
            return None

    def below(self, kname: str) -> set[str]:
        """``kname`` and every device under it: its slaves (recursively) and a partition's disk."""
        seen: set[str] = set()
        todo = [kname]
        while todo:
            k = todo.pop()
            if k in seen:
                continue
            seen.add(k)
            d = self.dir(k)
            if os.path.exists(os.path.join(d, "partition")):
                todo.append(os.path.basename(os.path.dirname(os.path.realpath(d))))
            try:
                todo.extend(os.listdir(os.path.join(d, "slaves")))
            except OSError:
                pass
        return seen

    def majmin(self, kname: str) -> str | None:
        text = _read(os.path.join(self.dir(kname), "dev"))
        return text.strip() if text else None


def _devices_holding(path: str, sysfs: _Sysfs, run: Run) -> set[str] | None:
    """Kernel names of the device(s) under the filesystem holding ``path`` and everything
    below them; an empty set for a filesystem without a block device (tmpfs, nfs);
    None when it cannot be told."""
    probe = path
    while not os.path.exists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    found: set[str] = set()
    known = False
    try:
        kname = sysfs.kname_of_devnum(os.stat(probe).st_dev)
        known = True
        if kname:
            found.add(kname)
    except OSError:
        pass
    try:  # btrfs and others report an anonymous st_dev: ask findmnt for the source
        out = run(["findmnt", "-n", "-o", "SOURCE", "-T", probe])
        if out.returncode == 0:
            known = True
            for line in out.stdout.splitlines():
                dev = findmnt_source_device(line)
                if dev and os.path.exists(dev):
                    st = os.stat(os.path.realpath(dev))
                    if stat.S_ISBLK(st.st_mode):
                        k = sysfs.kname_of_devnum(st.st_rdev) or os.path.basename(os.path.realpath(dev))
                        found.add(k)
    except (OSError, subprocess.SubprocessError):
        pass
    if not known:
        return None
    below: set[str] = set()
    for k in found:
        below |= sysfs.below(k)
    return below


def _sqlite_path(db: str) -> str | None:
    """A database path or ``sqlite:///`` URL -> the local file; None for a server URL."""
    if "://" not in db:
        return os.path.abspath(db)
    if db.startswith("sqlite:///"):
        rest = db[len("sqlite:///"):].split("?", 1)[0]
        return os.path.abspath("/" + rest.lstrip("/")) if rest.startswith("/") else os.path.abspath(rest)
    return None


def gather_device_facts(
    path: str,
    *,
    db_path: str | None = None,
    sys_root: str = "/sys",
    proc_root: str = "/proc",
    run: Run = _run,
    probe_exclusive: bool = True,
) -> DeviceFacts:
    """Read the guard's facts about the device at ``path``.  Never raises, never writes.

    ``db_path``: the results database (a path or a ``sqlite:///`` URL).
    ``probe_exclusive=False`` skips the momentary exclusive claim (``busy`` is then
    None): the runner skips it when nothing will write, so a device that is only read
    is not disturbed.  ``sys_root``, ``proc_root`` and ``run`` are for tests.
    """
    real = os.path.realpath(path)
    unknown: list[str] = []
    try:
        st = os.stat(real)
    except OSError as exc:
        return DeviceFacts(path=path, realpath=real, is_block=False, unknown=(f"stat: {exc.strerror}",))
    if not stat.S_ISBLK(st.st_mode):
        return DeviceFacts(path=path, realpath=real, is_block=False)
    sysfs = _Sysfs(sys_root)
    kname = sysfs.kname_of_devnum(st.st_rdev)
    if kname is None:
        unknown.append(f"no {sys_root}/dev/block entry for {real}")
        return DeviceFacts(
            path=path, realpath=real, is_block=True, kname=None, mountpoints=None, holders=None,
            signatures=None, holds_root=None, holds_database=None, read_only=None, busy=None, unknown=tuple(unknown),
        )  # fmt: skip
    parts = sysfs.partitions(kname)
    family = (kname, *parts)

    # read-only flag
    ro_text = _read(os.path.join(sysfs.dir(kname), "ro"))
    read_only = None if ro_text is None else ro_text.strip() == "1"
    if read_only is None:
        unknown.append(f"cannot read {sysfs.dir(kname)}/ro")

    # holders of the device and of its partitions
    held: list[tuple[str, str]] = []
    holders: list[tuple[str, str]] | None = held
    for k in family:
        hs = sysfs.holders(k)
        if hs is None:
            holders = None
            unknown.append(f"cannot list {sysfs.dir(k)}/holders")
            break
        held.extend((h, k) for h in hs)

    # mounts: mountinfo by device number or source, swaps, and lsblk for stacked devices
    mounted: list[tuple[str, str]] = []
    mounts: list[tuple[str, str]] | None = mounted
    numbers = {sysfs.majmin(k): k for k in family}
    numbers.pop(None, None)
    by_path = {f"/dev/{k}": k for k in family}
    text = _read(os.path.join(proc_root, "self", "mountinfo"))
    if text is None:
        mounts = None
        unknown.append("cannot read /proc/self/mountinfo")
    else:
        for majmin, source, mountpoint in parse_mountinfo_sources(text):
            name = numbers.get(majmin) or by_path.get(os.path.realpath(source) if source.startswith("/") else source)
            if name:
                mounted.append((name, mountpoint))
        for swap in parse_swaps(_read(os.path.join(proc_root, "swaps")) or ""):
            name = by_path.get(os.path.realpath(swap))
            if name:
                mounted.append((name, "[SWAP]"))
    try:
        out = run(["lsblk", "-J", "-o", "KNAME,MOUNTPOINTS", real])
        if out.returncode == 0 and mounts is not None:
            mounted.extend(parse_lsblk_mounts(out.stdout))
        elif out.returncode != 0 and mounts is None:
            unknown.append(f"lsblk failed: {out.stderr.strip()[:120]}")
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        if mounts is None:
            unknown.append(f"lsblk: {exc}")
    if mounts is not None:
        mounts = list(dict.fromkeys(mounts))

    # signatures: wipefs and blkid both read only; either working is enough
    found: list[str] = []
    signatures: list[str] | None = None
    worked = False
    try:  # a device we cannot read has unknown contents, whatever the tools say
        os.close(os.open(real, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK))
        readable = True
    except OSError as exc:
        readable = False
        unknown.append(f"cannot read the device: {exc.strerror}")
    try:
        out = run(["wipefs", "-n", "--json", real])
        if out.returncode == 0:
            found.extend(parse_wipefs_json(out.stdout))
            worked = True
        else:
            unknown.append(f"wipefs failed: {out.stderr.strip()[:120]}")
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        unknown.append(f"wipefs: {exc}")
    try:
        out = run(["blkid", "-p", "-o", "export", real])
        if out.returncode == 0 or (out.returncode == 2 and not out.stderr.strip()):  # 2 alone: nothing found
            found.extend(parse_blkid_export(out.stdout))
            worked = True
        else:
            unknown.append(f"blkid failed: {out.stderr.strip()[:120]}")
    except (OSError, subprocess.SubprocessError) as exc:
        unknown.append(f"blkid: {exc}")
    if worked and readable:
        unknown = [u for u in unknown if not u.startswith(("wipefs", "blkid"))]
        signatures = list(dict.fromkeys(found))

    # the devices under / and under the database
    root_devs = _devices_holding("/", sysfs, run)
    holds_root = None if root_devs is None else kname in root_devs
    if holds_root is None:
        unknown.append("cannot tell which device holds /")
    holds_db: bool | None = False
    db_file = _sqlite_path(db_path) if db_path else None
    if db_file:
        db_devs = _devices_holding(db_file, sysfs, run)
        holds_db = None if db_devs is None else kname in db_devs
        if holds_db is None:
            unknown.append(f"cannot tell which device holds {db_file}")

    # busy: can the kernel's exclusive claim be taken?  (read-only open, closed at once)
    busy: bool | None = None
    if not probe_exclusive:
        unknown.append("exclusive open not tried (nothing writes)")
    else:
        try:
            os.close(os.open(real, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC | os.O_NONBLOCK))
            busy = False
        except OSError as exc:
            if exc.errno == errno.EBUSY:
                busy = True
            else:
                unknown.append(f"exclusive open: {exc.strerror}")

    return DeviceFacts(
        path=path,
        realpath=real,
        is_block=True,
        kname=kname,
        mountpoints=None if mounts is None else tuple(mounts),
        holders=None if holders is None else tuple(holders),
        signatures=None if signatures is None else tuple(signatures),
        holds_root=holds_root,
        holds_database=holds_db,
        read_only=read_only,
        busy=busy,
        database=db_file,
        unknown=tuple(unknown),
    )
