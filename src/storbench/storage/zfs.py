"""ZFS (pure): dataset and pool records, ``zfs get``/``zpool get``/``zpool status`` parsers, the layout line."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..units import read_size
from ._util import to_int
from .mounts import ZFS_FSTYPES as ZFS_FSTYPES  # the fstype set lives with the others

#: ZFS dataset properties storbench records (``zfs get``); all but ``type`` are settings.
ZFS_DATASET_PROPERTIES: tuple[str, ...] = (
    "type",
    "recordsize",
    "volblocksize",
    "volsize",
    "compression",
    "sync",
    "primarycache",
    "secondarycache",
    "logbias",
    "atime",
    "relatime",
    "dedup",
    "checksum",
    "copies",
    "special_small_blocks",
    "encryption",
    "compressratio",
    "used",
    "logicalused",
)
#: Properties that exist only for volumes (zvols) or only for filesystems: not "unavailable" elsewhere.
ZFS_VOLUME_ONLY: frozenset[str] = frozenset({"volblocksize", "volsize"})
ZFS_FILESYSTEM_ONLY: frozenset[str] = frozenset({"recordsize", "atime", "relatime"})


#: ZFS pool properties storbench records (``zpool get``).
ZPOOL_PROPERTIES: tuple[str, ...] = ("ashift", "health", "size", "autotrim", "version")



@dataclass(frozen=True)
class ZfsVdev:
    """One top-level vdev of a pool, from ``zpool status -P``.

    ``role``: ``data``, ``log``, ``cache``, ``special``, ``dedup`` or ``spare``.
    ``kind``: ``mirror``, ``raidz1``/``raidz2``/``raidz3``, ``draid``, or ``disk``
    for a single device (a stripe member, a single log, a cache device).
    ``devices`` are the leaf devices as zpool printed them (full paths with ``-P``).
    """

    role: str
    kind: str
    name: str
    devices: tuple[str, ...]
    state: str | None = None
    #: (device, state) for members that are not ONLINE (OFFLINE, FAULTED, UNAVAIL, REMOVED ...)
    unhealthy: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ZfsProperty:
    """One line of ``zfs get -H`` / ``zpool get -H`` (``name`` and ``source`` only in the 4-column form)."""

    property: str
    value: str
    name: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class ZfsInfo:
    """A ZFS dataset (filesystem or zvol) and its pool.

    Sizes are bytes (``zfs get -p``); switches keep ZFS's words (``on``, ``off``,
    ``standard``, ``all``, ``latency`` ...).
    """

    dataset: str
    pool: str
    dataset_type: str | None = None  # "filesystem" or "volume"
    recordsize_bytes: int | None = None
    volblocksize_bytes: int | None = None  # zvols only
    volsize_bytes: int | None = None  # zvols only
    compression: str | None = None
    sync: str | None = None
    primarycache: str | None = None
    secondarycache: str | None = None
    logbias: str | None = None
    atime: str | None = None
    relatime: str | None = None
    dedup: str | None = None
    checksum: str | None = None
    copies: int | None = None
    special_small_blocks_bytes: int | None = None
    encryption: str | None = None
    pool_ashift: int | None = None  # 0 = chosen automatically per vdev at creation
    pool_health: str | None = None
    pool_size_bytes: int | None = None
    pool_autotrim: str | None = None
    pool_state: str | None = None  # "state:" of zpool status
    vdevs: tuple[ZfsVdev, ...] = ()
    compressratio: float | None = None  # "1.73x" -> 1.73, when described
    used_bytes: int | None = None
    logicalused_bytes: int | None = None
    pool_version: str | None = None  # "23" (zfs-fuse, legacy pools); None/"-" for feature-flag pools
    pool_scan: str | None = None  # the scan:/scrub: line of zpool status ("scrub in progress since ...")
    implementation: str | None = None  # "OpenZFS" (kernel) or "zfs-fuse"
    #: properties storbench asks for that this ZFS does not have (zfs-fuse: sync, logicalused, ...)
    unavailable: tuple[str, ...] = ()
    arc: ArcStats | None = None  # the host's ARC when the description was taken

    @property
    def layout(self) -> str | None:
        return zpool_layout(self.vdevs)

    @property
    def scan_active(self) -> str | None:
        """``scrub`` or ``resilver`` while one runs, else None."""
        return scan_activity(self.pool_scan)


@dataclass(frozen=True)
class ArcStats:
    """The ARC's counters (OpenZFS ``/proc/spl/kstat/zfs/arcstats``, zfs-fuse ``/zfs-kstat/zfs/arcstats/*``).

    Counts are since the module (or daemon) started; ``data_hits``/``data_misses`` are the
    demand and prefetch *data* lookups (what a file read asks), ``hits``/``misses`` every lookup.
    """

    size_bytes: int | None = None
    max_bytes: int | None = None  # c_max
    target_bytes: int | None = None  # c
    hits: int | None = None
    misses: int | None = None
    data_hits: int | None = None
    data_misses: int | None = None


@dataclass(frozen=True)
class ZpoolStatus:
    """The parts of ``zpool status [-P] POOL`` storbench uses."""

    pool: str
    state: str | None
    vdevs: tuple[ZfsVdev, ...]
    scan: str | None = None  # "scrub in progress since ...", "resilvered 1.2G in ...", "none requested"


def scan_activity(scan: str | None) -> str | None:
    """``scrub`` or ``resilver`` when the scan line says one is in progress, else None."""
    if not scan:
        return None
    m = re.search(r"\b(scrub|resilver)\w* in progress", scan)
    return m.group(1) if m else None


def parse_ratio(text: str | None) -> float | None:
    """``1.73x`` / ``1.73`` -> 1.73; None if not a ratio."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)x?\s*", text)
    return float(m.group(1)) if m else None


def parse_zpool_get_table(text: str) -> tuple[ZfsProperty, ...]:
    """``zpool get PROPS POOL`` without ``-H`` (zfs-fuse has no options): a table under
    ``NAME PROPERTY VALUE SOURCE``; values are as printed (``588M``, not bytes)."""
    out: list[ZfsProperty] = []
    for line in text.splitlines():
        cols = line.split(None, 3)
        if len(cols) < 3 or cols[:3] == ["NAME", "PROPERTY", "VALUE"]:
            continue
        out.append(ZfsProperty(name=cols[0], property=cols[1], value=cols[2], source=cols[3].strip() if len(cols) > 3 else None))
    return tuple(out)


def parse_arcstats(text: str) -> ArcStats:
    """The ARC counters from OpenZFS's kstat table (``name type data`` rows after two header
    lines) or from ``name value`` lines (zfs-fuse keeps one file per counter; the edge joins them)."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        cols = line.split()
        if len(cols) == 3 and cols[1].isdigit() and re.fullmatch(r"-?[0-9]+", cols[2]):
            values[cols[0]] = int(cols[2])
        elif len(cols) == 2 and re.fullmatch(r"-?[0-9]+", cols[1]):
            values[cols[0]] = int(cols[1])

    def total(*names: str) -> int | None:
        got = [values[n] for n in names if n in values]
        return sum(got) if got else None

    return ArcStats(
        size_bytes=values.get("size"),
        max_bytes=values.get("c_max"),
        target_bytes=values.get("c"),
        hits=values.get("hits"),
        misses=values.get("misses"),
        data_hits=total("demand_data_hits", "prefetch_data_hits"),
        data_misses=total("demand_data_misses", "prefetch_data_misses"),
    )


@dataclass(frozen=True)
class IostatRow:
    """One row of ``zpool iostat -v``: a pool, a top-level vdev (``depth`` 1) or a leaf (``depth`` 2+),
    with its operations and bytes per second as zpool printed them (3 significant digits)."""

    name: str
    depth: int
    read_ops: float
    write_ops: float
    read_bytes: float
    write_bytes: float


_HUMAN = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}


def parse_human(text: str) -> float | None:
    """zpool's ``19.5K`` / ``3.98K`` / ``695`` / ``-`` -> a number (binary multiples); None for ``-``."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([KMGTP]?)", text.strip())
    if not m:
        return None
    return float(m.group(1)) * _HUMAN[m.group(2)]


def parse_zpool_iostat(text: str) -> tuple[tuple[IostatRow, ...], ...]:
    """``zpool iostat [-v] POOL [INTERVAL]`` -> one tuple of rows per report, in order.

    The first report is the average since the pool was imported; each later one the
    rates over one interval.  Rows are ``name alloc free read write read write``; depth
    comes from the indentation (two spaces a level).  Reports end at a dashed line after
    rows, or at the next header; ``-T`` timestamp lines and blank lines are skipped.
    """
    reports: list[tuple[IostatRow, ...]] = []
    rows: list[IostatRow] = []

    def flush() -> None:
        nonlocal rows
        if rows:
            reports.append(tuple(rows))
        rows = []

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("capacity") or stripped.startswith("pool ") or stripped.startswith("pool\t"):
            flush()
            continue
        if set(stripped) <= {"-", " "}:
            continue
        cols = stripped.split()
        if len(cols) != 7:
            continue  # a timestamp line (-T), or something else
        nums = [parse_human(c) for c in cols[3:]]
        if any(n is None for n in nums):
            continue
        indent = len(line) - len(line.lstrip(" "))
        rows.append(IostatRow(cols[0], indent // 2, *nums))  # type: ignore[arg-type]
    flush()
    return tuple(reports)


def parse_zfs_get(text: str) -> tuple[ZfsProperty, ...]:
    """``zfs get -H[p] [-o property,value] ...`` or ``zpool get -H[p] ...`` -> properties.

    Handles the 2-column form (``-o property,value``) and the default 4-column form
    (name, property, value, source; the source may contain spaces: ``inherited from tank``).
    """
    out: list[ZfsProperty] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) == 2:
            out.append(ZfsProperty(property=cols[0].strip(), value=cols[1].strip()))
        elif len(cols) >= 4:
            out.append(
                ZfsProperty(name=cols[0].strip(), property=cols[1].strip(), value=cols[2].strip(), source="\t".join(cols[3:]).strip())
            )
        elif len(cols) == 3:  # -o name,property,value
            out.append(ZfsProperty(name=cols[0].strip(), property=cols[1].strip(), value=cols[2].strip()))
    return tuple(out)


_ZPOOL_SECTIONS = {"logs": "log", "log": "log", "cache": "cache", "spares": "spare", "special": "special", "dedup": "dedup"}


_IS_NUMBER = re.compile(r"[0-9]+")


def _vdev_kind(name: str) -> str | None:
    """``mirror-0`` -> mirror, ``raidz2-1`` -> raidz2, ``raidz-0`` -> raidz1, ``draid2:4d:12c:1s-0`` -> draid2; None for a leaf."""
    m = re.fullmatch(r"(mirror|raidz[123]?|draid[123]?(?::[\w:]+)?|replacing|spare)-\d+", name)
    if not m:
        return None
    kind = m.group(1)
    if kind == "raidz":
        return "raidz1"
    if kind.startswith("draid"):
        return kind.split(":", 1)[0] if kind != "draid" else "draid1"
    return kind


def parse_zpool_status(text: str) -> tuple[ZpoolStatus, ...]:
    """``zpool status [-P] [POOL]`` -> pools with their top-level vdevs.

    The ``config:`` block is a tree drawn by indentation (two spaces a level under a
    leading tab): the pool line, then top-level vdevs (``mirror-0``, ``raidz2-0`` or a
    bare device for a stripe), then their devices; ``logs``, ``cache``, ``special``,
    ``dedup`` and ``spares`` start sections at the pool's indentation.  Nested
    ``replacing-N``/``spare-N`` groups are flattened into their top-level vdev.
    """
    pools: list[ZpoolStatus] = []
    name: str | None = None
    state: str | None = None
    in_config = False
    base_indent: int | None = None
    role = "data"
    vdevs: list[ZfsVdev] = []
    current: dict | None = None

    def flush_vdev() -> None:
        nonlocal current
        if current is not None:
            vdevs.append(
                ZfsVdev(role=current["role"], kind=current["kind"], name=current["name"], devices=tuple(current["devices"]),
                        state=current["state"], unhealthy=tuple(current["unhealthy"]))
            )  # fmt: skip
        current = None

    scan: str | None = None

    def flush_pool() -> None:
        nonlocal name, state, vdevs, scan
        flush_vdev()
        if name is not None:
            pools.append(ZpoolStatus(pool=name, state=state, vdevs=tuple(vdevs), scan=scan))
        name, state, vdevs, scan = None, None, [], None

    for raw in text.splitlines():
        line = raw.expandtabs(8)
        stripped = line.strip()
        m = re.match(r"^\s*pool:\s*(\S+)", line)
        if m:
            flush_pool()
            name, in_config, base_indent, role = m.group(1), False, None, "data"
            continue
        m = re.match(r"^\s*state:\s*(\S+)", line)
        if m and not in_config:
            state = m.group(1)
            continue
        m = re.match(r"^\s*(?:scan|scrub):\s*(.*)", line)
        if m and not in_config:
            scan = m.group(1).strip()
            continue
        if re.match(r"^\s*config:", line):
            in_config = True
            continue
        if re.match(r"^\s*errors:", line):
            in_config = False
            continue
        if not in_config or not stripped:
            continue
        words = stripped.split()
        if words[0] == "NAME" and "STATE" in words:
            continue
        indent = len(line) - len(line.lstrip())
        if base_indent is None:
            if name is None or words[0] == name:
                base_indent = indent
                if name is None:
                    name = words[0]
            continue
        rel = indent - base_indent
        if rel <= 0:
            flush_vdev()
            role = _ZPOOL_SECTIONS.get(words[0], role)
            continue
        dev_state = words[1] if len(words) > 1 else None
        kind = _vdev_kind(words[0])
        if rel <= 2:
            flush_vdev()
            if kind is not None and kind not in ("replacing", "spare"):
                current = {"role": role, "kind": kind, "name": words[0], "devices": [], "state": dev_state, "unhealthy": []}
            elif kind is not None:  # a replacing/spare group at top level: a single-device vdev being swapped
                current = {"role": role, "kind": "disk", "name": words[0], "devices": [], "state": dev_state, "unhealthy": []}
            else:
                vdevs.append(ZfsVdev(role=role, kind="disk", name=words[0], devices=(words[0],), state=dev_state))
            continue
        if current is not None and kind is None:
            current["devices"].append(words[0])
            if dev_state and dev_state.upper() != "ONLINE" and not _IS_NUMBER.fullmatch(dev_state):
                current["unhealthy"].append((words[0], dev_state))
    flush_pool()
    return tuple(pools)


def zpool_layout(vdevs: Sequence[ZfsVdev]) -> str | None:
    """One line for a pool's shape: ``mirror``, ``2 x raidz2``, ``stripe of 3``, ``mirror + log mirror + cache 1``."""
    if not vdevs:
        return None

    def group(role_vdevs: list[ZfsVdev]) -> str:
        kinds = [v.kind for v in role_vdevs]
        if all(k == "disk" for k in kinds):
            n = len(kinds)
            return "single disk" if n == 1 else f"stripe of {n}"
        parts: list[str] = []
        for kind in dict.fromkeys(kinds):
            if kind == "disk":
                parts.append(f"{kinds.count(kind)} disk")
                continue
            count = kinds.count(kind)
            width = max(len(v.devices) for v in role_vdevs if v.kind == kind)
            parts.append(f"{kind} of {width}" if count == 1 else f"{count} x {kind} of {width}")
        return " + ".join(parts)

    pieces: list[str] = []
    for role in ("data", "special", "dedup", "log", "cache", "spare"):
        rv = [v for v in vdevs if v.role == role]
        if not rv:
            continue
        if role == "data":
            pieces.append(group(rv))
        elif role in ("cache", "spare"):
            pieces.append(f"{role} {sum(len(v.devices) for v in rv)}")
        else:
            pieces.append(f"{role} {group(rv)}")
    return " + ".join(pieces)


def zfs_info_from(
    dataset: str,
    dataset_props: Sequence[ZfsProperty] = (),
    pool_props: Sequence[ZfsProperty] = (),
    status: ZpoolStatus | None = None,
    *,
    implementation: str | None = None,
    unavailable: Sequence[str] = (),
    arc: ArcStats | None = None,
) -> ZfsInfo:
    """Build :class:`ZfsInfo` from parsed ``zfs get``, ``zpool get`` and ``zpool status`` output.

    Pool sizes may come as bytes (``-p``) or as zpool prints them (``588M``, zfs-fuse).
    """
    ds = {p.property: p.value for p in dataset_props if p.name in (None, dataset)}
    pool_name = dataset.split("/", 1)[0].split("@", 1)[0]
    pp = {p.property: p.value for p in pool_props if p.name in (None, pool_name)}

    def val(d: Mapping[str, str], key: str) -> str | None:
        v = d.get(key)
        return None if v in (None, "-", "") else v

    def size(d: Mapping[str, str], key: str) -> int | None:
        return read_size(val(d, key))

    return ZfsInfo(
        dataset=dataset,
        pool=pool_name,
        dataset_type=val(ds, "type"),
        recordsize_bytes=size(ds, "recordsize"),
        volblocksize_bytes=size(ds, "volblocksize"),
        volsize_bytes=size(ds, "volsize"),
        compression=val(ds, "compression"),
        sync=val(ds, "sync"),
        primarycache=val(ds, "primarycache"),
        secondarycache=val(ds, "secondarycache"),
        logbias=val(ds, "logbias"),
        atime=val(ds, "atime"),
        relatime=val(ds, "relatime"),
        dedup=val(ds, "dedup"),
        checksum=val(ds, "checksum"),
        copies=to_int(val(ds, "copies")),
        special_small_blocks_bytes=size(ds, "special_small_blocks"),
        encryption=val(ds, "encryption"),
        pool_ashift=to_int(val(pp, "ashift")),
        pool_health=val(pp, "health"),
        pool_size_bytes=size(pp, "size"),
        pool_autotrim=val(pp, "autotrim"),
        pool_state=status.state if status else None,
        vdevs=status.vdevs if status else (),
        compressratio=parse_ratio(val(ds, "compressratio")),
        used_bytes=size(ds, "used"),
        logicalused_bytes=size(ds, "logicalused"),
        pool_version=val(pp, "version"),
        pool_scan=status.scan if status else None,
        implementation=implementation,
        unavailable=tuple(unavailable),
        arc=arc,
    )


def unavailable_properties(props: Sequence[ZfsProperty], dataset_type: str | None) -> tuple[str, ...]:
    """The properties of :data:`ZFS_DATASET_PROPERTIES` that a ``zfs get all`` listing lacks
    (this ZFS does not have them), leaving out those that do not apply to the dataset's type."""
    have = {p.property for p in props}
    skip = ZFS_VOLUME_ONLY if dataset_type != "volume" else ZFS_FILESYSTEM_ONLY
    return tuple(p for p in ZFS_DATASET_PROPERTIES if p not in have and p not in skip)


def arc_hit_ratio(before: ArcStats | None, after: ArcStats | None) -> tuple[int, int, float] | None:
    """(hits, misses, hits / (hits + misses)) of the data lookups between two ARC readings
    (all lookups where the data counters are missing); None when unknown or nothing was looked up."""
    if before is None or after is None:
        return None
    for h0, h1, m0, m1 in ((before.data_hits, after.data_hits, before.data_misses, after.data_misses),
                           (before.hits, after.hits, before.misses, after.misses)):  # fmt: skip
        if None in (h0, h1, m0, m1):
            continue
        hits, misses = h1 - h0, m1 - m0  # type: ignore[operator]
        if hits < 0 or misses < 0:
            return None  # the ARC was reset (module reloaded, daemon restarted)
        if hits + misses == 0:
            return None
        return hits, misses, hits / (hits + misses)
    return None


def zvol_dataset_from_path(path: str) -> str | None:
    """``/dev/zvol/tank/vols/db`` -> ``tank/vols/db`` (partitions ``-part1`` keep their dataset)."""
    m = re.match(r"^/dev/zvol/(.+?)(?:-part\d+)?$", path)
    return m.group(1) if m else None

