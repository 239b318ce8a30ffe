"""Block devices (pure): the device record, lsblk JSON and raw /sys attributes turned into it."""

from __future__ import annotations

import dataclasses
import json
import re
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from storbench.jsontypes import JSONValue

from ._util import to_bool, to_int, to_str

if TYPE_CHECKING:
    from .zfs import ZfsInfo


@dataclass(frozen=True)
class DeviceInfo:
    """One block device of the chain under a target.

    ``name`` is lsblk's NAME (``vg0-data`` for device-mapper), ``kname`` the kernel
    name (``dm-1``).  ``type`` is lsblk's TYPE (``disk``, ``part``, ``loop``, ``lvm``,
    ``crypt``, ``dm``, ``raid1`` ..., ``md``), with ``nbd`` for network block devices.
    ``parents`` are the knames of the devices this one is built on (``slaves``; for a
    partition its disk; for a loop device the device holding its backing file; for a
    zvol the pool's devices).  ``transport`` is lsblk's TRAN, or ``virtio`` for virtio
    disks (which lsblk reports without a transport).  ``rotational`` is what the
    kernel believes, which virtual disks often get wrong.
    """

    name: str
    kname: str
    type: str
    path: str | None = None
    size_bytes: int | None = None
    model: str | None = None
    vendor: str | None = None
    serial: str | None = None
    transport: str | None = None
    rotational: bool | None = None
    scheduler: str | None = None
    nr_requests: int | None = None
    logical_block_size_bytes: int | None = None
    physical_block_size_bytes: int | None = None
    write_cache: str | None = None  # "write back" / "write through"
    discard: bool | None = None
    discard_max_bytes: int | None = None
    read_ahead_kb: int | None = None
    loop_backing_file: str | None = None
    loop_dio: bool | None = None
    zvol: ZfsInfo | None = None  # the dataset behind a zvol (zd*)
    parents: tuple[str, ...] = ()


@dataclass(frozen=True)
class SysfsBlock:
    """Raw attributes of one block device under /sys (strings as read; None = unreadable)."""

    kname: str
    size_sectors: str | None = None
    scheduler: str | None = None
    nr_requests: str | None = None
    write_cache: str | None = None
    discard_max_bytes: str | None = None
    read_ahead_kb: str | None = None
    rotational: str | None = None
    logical_block_size: str | None = None
    physical_block_size: str | None = None
    model: str | None = None
    vendor: str | None = None
    serial: str | None = None
    loop_backing_file: str | None = None
    loop_dio: str | None = None
    dm_name: str | None = None
    dm_uuid: str | None = None
    md_level: str | None = None
    is_partition: bool = False
    partition_of: str | None = None
    slaves: tuple[str, ...] = ()


def scheduler_choices(text: str) -> tuple[str | None, tuple[str, ...]]:
    """``none [mq-deadline] kyber`` -> (``"mq-deadline"``, every listed name); a device without a
    choice prints one word (``none``), which is then the scheduler."""
    names: list[str] = []
    current = None
    for word in text.split():
        m = re.fullmatch(r"\[(.+)\]", word)
        name = m.group(1) if m else word
        names.append(name)
        if m:
            current = name
    if current is None and len(names) == 1:
        current = names[0]
    return current, tuple(names)


def parse_scheduler(text: str | None) -> str | None:
    """``"none [mq-deadline] kyber bfq"`` -> ``"mq-deadline"`` (:func:`scheduler_choices`)."""
    return None if text is None else scheduler_choices(text)[0]


def _lsblk_type(raw_type: str | None, kname: str) -> str:
    kind = (raw_type or "").strip() or "disk"
    if kind == "disk" and kname.startswith("nbd"):
        return "nbd"
    return kind


def _transport(tran: JSONValue, subsystems: JSONValue) -> str | None:
    tran = to_str(tran)
    if tran:
        return tran
    subs = (to_str(subsystems) or "").split(":")
    if "virtio" in subs:
        return "virtio"
    return None


def parse_lsblk_json(text: str, *, inverse: bool = True) -> tuple[DeviceInfo, ...]:
    """``lsblk -J -b -O [-s] DEV`` -> devices, top first, each kname once.

    With ``inverse`` (``-s``), an entry's ``children`` are the devices it is built on
    (its parents); without it they are the devices built on it.  Accepts both the
    typed JSON of util-linux >= 2.33 and the all-strings JSON of older versions.
    Device order is breadth first from the roots.  Raises ValueError on text that is
    not lsblk JSON.
    """
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("blockdevices"), list):
        raise ValueError("not lsblk JSON: no 'blockdevices' list")
    order: list[str] = []
    base: dict[str, dict] = {}
    parents: dict[str, list[str]] = {}

    queue: deque[tuple[dict, str | None]] = deque((item, None) for item in data["blockdevices"])
    while queue:
        item, container = queue.popleft()
        if not isinstance(item, dict):
            continue
        kname = to_str(item.get("kname")) or to_str(item.get("name")) or ""
        if not kname:
            continue
        kname = kname.rsplit("/", 1)[-1]
        if kname not in base:
            base[kname] = item
            parents[kname] = []
            order.append(kname)
        if container is not None:
            if inverse:
                if kname not in parents[container]:
                    parents[container].append(kname)
            elif container not in parents[kname]:
                parents[kname].append(container)
        for child in item.get("children") or []:
            queue.append((child, kname))

    out: list[DeviceInfo] = []
    for kname in order:
        item = base[kname]
        disc_max = to_int(item.get("disc-max"))
        name = to_str(item.get("name")) or kname
        out.append(
            DeviceInfo(
                name=name.rsplit("/", 1)[-1] if name.startswith("/dev/") else name,
                kname=kname,
                type=_lsblk_type(to_str(item.get("type")), kname),
                path=to_str(item.get("path")),
                size_bytes=to_int(item.get("size")),
                model=to_str(item.get("model")),
                vendor=to_str(item.get("vendor")),
                serial=to_str(item.get("serial")),
                transport=_transport(item.get("tran"), item.get("subsystems")),
                rotational=to_bool(item.get("rota")),
                scheduler=to_str(item.get("sched")),
                nr_requests=to_int(item.get("rq-size")),
                logical_block_size_bytes=to_int(item.get("log-sec")),
                physical_block_size_bytes=to_int(item.get("phy-sec")),
                discard=None if disc_max is None else disc_max > 0,
                discard_max_bytes=disc_max,
                read_ahead_kb=to_int(item.get("ra")),
                parents=tuple(parents[kname]),
            )
        )
    return tuple(out)


def lsblk_mountpoints(text: str) -> tuple[str, ...]:
    """Mount points of the first device in ``lsblk -J`` output (``mountpoints`` or ``mountpoint``)."""
    data = json.loads(text)
    devs = data.get("blockdevices") or []
    if not devs:
        return ()
    first = devs[0]
    points = first.get("mountpoints")
    if points is None:
        points = [first.get("mountpoint")]
    return tuple(p for p in points if p)


def device_from_sysfs(raw: SysfsBlock, base: DeviceInfo | None = None) -> DeviceInfo:
    """Merge sysfs attributes into ``base`` (from lsblk) or build a device from sysfs alone.

    sysfs wins for the queue settings (it is what the kernel uses now); lsblk wins for
    names, type, model and transport.
    """
    kname = raw.kname
    if base is None:
        if kname.startswith("loop"):
            kind = "loop"
        elif kname.startswith("dm-"):
            uuid = raw.dm_uuid or ""
            prefix = uuid.split("-", 1)[0].upper() if "-" in uuid else ""
            kind = {"LVM": "lvm", "CRYPT": "crypt", "MPATH": "mpath"}.get(prefix, "part" if prefix.startswith("PART") else "dm")
        elif kname.startswith("md"):
            kind = raw.md_level or "md"
        elif kname.startswith("nbd"):
            kind = "nbd"
        elif raw.is_partition:
            kind = "part"
        else:
            kind = "disk"
        sectors = to_int(raw.size_sectors)
        base = DeviceInfo(
            name=raw.dm_name or kname,
            kname=kname,
            type=kind,
            path=f"/dev/mapper/{raw.dm_name}" if raw.dm_name else f"/dev/{kname}",
            size_bytes=None if sectors is None else sectors * 512,
            model=to_str(raw.model),
            vendor=to_str(raw.vendor),
            serial=to_str(raw.serial),
        )
        parents: tuple[str, ...] = tuple(raw.slaves) or ((raw.partition_of,) if raw.partition_of else ())
    else:
        parents = base.parents or tuple(raw.slaves) or ((raw.partition_of,) if raw.partition_of else ())
    disc_max = to_int(raw.discard_max_bytes)
    return dataclasses.replace(
        base,
        rotational=to_bool(raw.rotational) if raw.rotational is not None else base.rotational,
        scheduler=parse_scheduler(raw.scheduler) if raw.scheduler is not None else base.scheduler,
        nr_requests=to_int(raw.nr_requests) if raw.nr_requests is not None else base.nr_requests,
        logical_block_size_bytes=to_int(raw.logical_block_size) or base.logical_block_size_bytes,
        physical_block_size_bytes=to_int(raw.physical_block_size) or base.physical_block_size_bytes,
        write_cache=to_str(raw.write_cache) or base.write_cache,
        discard_max_bytes=disc_max if disc_max is not None else base.discard_max_bytes,
        discard=(disc_max > 0) if disc_max is not None else base.discard,
        read_ahead_kb=to_int(raw.read_ahead_kb) if raw.read_ahead_kb is not None else base.read_ahead_kb,
        loop_backing_file=to_str(raw.loop_backing_file) or base.loop_backing_file,
        loop_dio=to_bool(raw.loop_dio) if raw.loop_dio is not None else base.loop_dio,
        model=base.model or to_str(raw.model),
        serial=base.serial or to_str(raw.serial),
        parents=parents,
    )

