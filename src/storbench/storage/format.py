"""Rendering (pure): a storage description as lines of text, the device chain as one line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._util import format_bytes
from .block import DeviceInfo
from .records import FilesystemInfo, StorageInfo

if TYPE_CHECKING:  # the families' records are met only in descriptions that have them (imported there)
    from .ceph import CephInfo
    from .health import DriveHealth
    from .raid import RaidController
    from .zfs import ZfsInfo


def _onoff(value: bool | None) -> str:
    return "?" if value is None else ("on" if value else "off")


def _yesno(value: bool | None) -> str:
    return "?" if value is None else ("yes" if value else "no")


def _device_text(dev: DeviceInfo) -> str:
    parts: list[str] = [dev.type]
    if dev.transport and dev.type not in ("loop",):
        parts.append(dev.transport)
    if dev.size_bytes is not None:
        parts.append(format_bytes(dev.size_bytes))
    if dev.type == "loop":
        if dev.loop_backing_file:
            parts.append(f"backing {dev.loop_backing_file}")
        if dev.loop_dio is not None:
            parts.append(f"dio={_onoff(dev.loop_dio)}")
    if dev.zvol is not None:
        parts.append(f"zvol {dev.zvol.dataset}")
    if dev.model:
        parts.append(f"model {dev.model}")
    if not dev.parents or dev.type in ("disk", "nbd"):
        if dev.type != "loop":
            if dev.rotational is not None:
                parts.append(f"rotational={_yesno(dev.rotational)}")
            if dev.scheduler:
                parts.append(f"scheduler={dev.scheduler}")
            if dev.write_cache:
                parts.append(f"write cache={dev.write_cache}")
    return f"{dev.path or '/dev/' + dev.kname} ({', '.join(parts)})"


def chain_levels(devices: Sequence[DeviceInfo]) -> list[list[DeviceInfo]]:
    """Group the chain by depth from its tops (devices that are nobody's parent)."""
    by_kname = {d.kname: d for d in devices}
    all_parents = {p for d in devices for p in d.parents}
    tops = [d for d in devices if d.kname not in all_parents] or list(devices[:1])
    levels: list[list[DeviceInfo]] = []
    seen: set[str] = set()
    level = [d for d in tops]
    while level:
        level = [d for d in level if d.kname not in seen]
        if not level:
            break
        seen.update(d.kname for d in level)
        levels.append(level)
        nxt: list[DeviceInfo] = []
        for d in level:
            for p in d.parents:
                if p in by_kname and p not in seen and by_kname[p] not in nxt:
                    nxt.append(by_kname[p])
        level = nxt
    rest = [d for d in devices if d.kname not in seen]
    if rest:
        levels.append(rest)
    return levels


def format_chain(devices: Sequence[DeviceInfo]) -> str:
    """``/dev/loop0 (loop, ...) -> /dev/vda (disk, ...)``; devices side by side at one level are joined by ``+``."""
    return " -> ".join(" + ".join(_device_text(d) for d in level) for level in chain_levels(devices))


def _zfs_lines(z: ZfsInfo) -> list[str]:
    props = []
    if z.recordsize_bytes is not None:
        props.append(f"recordsize={format_bytes(z.recordsize_bytes)}")
    if z.volblocksize_bytes is not None:
        props.append(f"volblocksize={format_bytes(z.volblocksize_bytes)}")
    for key in ("compression", "sync", "logbias", "primarycache", "secondarycache", "atime", "dedup", "checksum", "encryption"):
        value = getattr(z, key)
        if value is not None:
            props.append(f"{key}={value}")
    if z.copies is not None and z.copies != 1:
        props.append(f"copies={z.copies}")
    if z.special_small_blocks_bytes:
        props.append(f"special_small_blocks={format_bytes(z.special_small_blocks_bytes)}")
    if z.compressratio is not None:
        props.append(f"compressratio={z.compressratio:.2f}x")
    lines = [f"zfs dataset {z.dataset} ({z.dataset_type or '?'}): {', '.join(props) or 'properties unknown'}"]
    pool = [f"zfs pool {z.pool}: {z.layout or 'layout unknown'}"]
    if z.pool_ashift is not None:
        pool.append(f"ashift={z.pool_ashift}")
    if z.pool_health or z.pool_state:
        pool.append(f"health={z.pool_health or z.pool_state}")
    if z.pool_size_bytes is not None:
        pool.append(f"size={format_bytes(z.pool_size_bytes)}")
    if z.pool_autotrim is not None:
        pool.append(f"autotrim={z.pool_autotrim}")
    if z.scan_active:
        pool.append(f"{z.scan_active} in progress")
    lines.append(", ".join(pool))
    if z.implementation or z.pool_version or z.unavailable:
        impl = [f"zfs implementation: {z.implementation or '?'}"]
        if z.pool_version:
            impl.append(f"pool version {z.pool_version}")
        if z.unavailable:
            impl.append(f"not available: {', '.join(z.unavailable)}")
        lines.append(", ".join(impl))
    if z.arc is not None and (z.arc.size_bytes is not None or z.arc.max_bytes is not None):
        arc = f"zfs ARC: {format_bytes(z.arc.size_bytes)} of at most {format_bytes(z.arc.max_bytes)}"
        if z.arc.hits is not None and z.arc.misses is not None:
            arc += f", {z.arc.hits} hits / {z.arc.misses} misses since start"
        lines.append(arc)
    return lines


def _filesystem_lines(fs: FilesystemInfo) -> list[str]:
    lines: list[str] = []
    if fs.btrfs is not None:
        b = fs.btrfs
        comp = "off"
        if b.compression:
            comp = f"{b.compression}{' (forced)' if b.compression_forced else ''}"
        parts = [f"compression={comp}"]
        if b.compression_property:
            parts.append(f"compression property={b.compression_property}")
        profiles = [f"{k} {v}" for k, v in (("data", b.data_profile), ("metadata", b.metadata_profile), ("system", b.system_profile)) if v]
        if profiles:
            parts.append(", ".join(profiles))
        if b.subvolume:
            parts.append(f"subvolume {b.subvolume}")
        if len(b.devices) > 1:
            parts.append(f"{len(b.devices)} devices")
        lines.append("btrfs: " + ", ".join(parts))
    if fs.xfs is not None:
        x = fs.xfs
        parts = [f"bsize={x.block_size_bytes}", f"agcount={x.agcount}"]
        if x.sunit_blocks:
            parts.append(f"sunit={x.sunit_blocks} blks ({format_bytes(x.stripe_unit_bytes)})")
            parts.append(f"swidth={x.swidth_blocks} blks ({format_bytes(x.stripe_width_bytes)})")
        else:
            parts.append("no stripe alignment")
        if x.log_location:
            log_size = None if x.log_blocks is None or x.log_block_size_bytes is None else x.log_blocks * x.log_block_size_bytes
            parts.append(f"log {x.log_location} {format_bytes(log_size)}")
        parts.append(f"isize={x.inode_size_bytes}")
        parts.extend(x.features)
        lines.append("xfs: " + ", ".join(parts))
    if fs.ext4 is not None:
        e = fs.ext4
        parts = [f"block size={e.block_size_bytes}"]
        if e.raid_stride_blocks or e.raid_stripe_width_blocks:
            parts.append(f"stride={e.raid_stride_blocks} blks, stripe width={e.raid_stripe_width_blocks} blks")
        if e.journal_size_bytes is not None:
            parts.append(f"journal {format_bytes(e.journal_size_bytes)}")
        if e.inode_size_bytes is not None:
            parts.append(f"inode size={e.inode_size_bytes}")
        if e.features:
            parts.append("features: " + " ".join(e.features))
        lines.append(f"{fs.fstype}: " + ", ".join(parts))
    if fs.zfs is not None:
        lines.extend(_zfs_lines(fs.zfs))
    if fs.network is not None:
        n = fs.network
        parts = [f"server {n.server or '?'}", f"share {n.share or '?'}"]
        if n.protocol_version:
            parts.append(f"vers={n.protocol_version}")
        if n.transport:
            parts.append(f"proto={n.transport}")
        if n.rsize_bytes:
            parts.append(f"rsize={format_bytes(n.rsize_bytes)}")
        if n.wsize_bytes:
            parts.append(f"wsize={format_bytes(n.wsize_bytes)}")
        if n.protocol:
            parts.append(f"protocol {n.protocol} ({n.client or '?'} client)")
        if n.cache_options:
            parts.append("client options " + ",".join(n.cache_options))
        if n.writes_wait_for_server is not None:
            parts.append(("writes wait for the server" if n.writes_wait_for_server else "writes acknowledged by the client")
                         + f": {n.write_ack_option}")  # fmt: skip
        lines.append(f"{fs.fstype}: " + ", ".join(parts))
        if n.server_fstype:
            lines.append(f"{fs.fstype} server (this machine): {n.share} is on {n.server_fstype}")
        if n.server_zfs is not None:
            lines.extend(f"server side: {line}" for line in _zfs_lines(n.server_zfs))
    return lines


def format_ceph(info: CephInfo) -> list[str]:
    """The cluster in a few lines: the cluster, the pool, the OSDs, the image."""
    head = [f"fsid {info.fsid or '?'}", info.health or "health ?"]
    if info.version:
        head.append(f"ceph {info.version}")
    head.append(f"{info.mons if info.mons is not None else '?'} mon")
    head.append(f"{info.osds if info.osds is not None else '?'} osd ({info.osds_up if info.osds_up is not None else '?'} up, "
                f"{info.osds_in if info.osds_in is not None else '?'} in)")  # fmt: skip
    if info.pg_states:
        head.append("pgs " + ", ".join(info.pg_states))
    lines = ["ceph cluster: " + ", ".join(head)]
    lines.extend(f"ceph health: {c}" for c in info.health_checks)
    p = info.pool
    if p is not None:
        bits = [p.type or "?", f"size {p.size}/min_size {p.min_size}", f"{p.pg_num} pgs"]
        if p.erasure_code_profile:
            bits.append(f"profile {p.erasure_code_profile}")
        bits.append("application " + (",".join(p.applications) or "none"))
        if info.pool_objects is not None:
            bits.append(f"{info.pool_objects} objects")
        lines.append(f"ceph pool {p.name}: " + ", ".join(bits))
    for o in info.osd_details:
        bits = [o.objectstore or "?", f"on {o.devices or '?'}", o.device_class or ("rotational" if o.rotational else "?")]
        if o.block_path:
            bits.append(f"block {o.block_path}")
        if o.dedicated_db is not None:
            bits.append("db on its own device" if o.dedicated_db else "db shared")
        if o.hostname:
            bits.append(f"host {o.hostname}")
        lines.append(f"ceph osd.{o.id}: " + ", ".join(bits))
    im = info.image
    if im is not None:
        bits = [f"size {format_bytes(im.size_bytes)}", f"objects of {format_bytes(im.object_size_bytes)}",
                "features " + (",".join(im.features) or "none")]  # fmt: skip
        if im.used_bytes is not None:
            bits.append("never written" if im.used_bytes == 0 else f"{format_bytes(im.used_bytes)} written")
        if im.watchers:
            bits.append(f"{im.watchers} watcher(s)")
        lines.append(f"rbd image {p.name + '/' if p else ''}{im.name}: " + ", ".join(bits))
    return lines


def format_drive(d: DriveHealth) -> str:
    """``drive /dev/nvme0 (NVMe, Samsung SSD 970 EVO 500GB, fw 2B2QEXE7): SMART passed, 35 °C, 3% used, ...``."""
    head = ", ".join(x for x in (d.protocol, d.model, f"fw {d.firmware}" if d.firmware else None) if x)
    bits = []
    if d.passed is not None:
        bits.append("SMART passed" if d.passed else "SMART FAILED")
    if d.temperature_c is not None:
        bits.append(f"{d.temperature_c} °C" + (f" (limit {d.temperature_limit_c} °C)" if d.temperature_limit_c else ""))
    for name, words in (("warning_temp_minutes", "min above warning temperature"), ("critical_temp_minutes", "min above critical temperature")):
        if getattr(d, name):
            bits.append(f"{getattr(d, name)} {words}")
    if d.percentage_used is not None:
        bits.append(f"{d.percentage_used}% used")
    if d.available_spare_pct is not None:
        bits.append(f"spare {d.available_spare_pct}%" + (f" (threshold {d.available_spare_threshold_pct}%)" if d.available_spare_threshold_pct is not None else ""))
    for name, words in (("media_errors", "media errors"), ("crc_errors", "CRC errors"), ("reallocated_sectors", "reallocated"), ("pending_sectors", "pending")):
        value = getattr(d, name)
        if value is not None:
            bits.append(f"{words} {value}")
    if d.bytes_written is not None:
        bits.append(f"{format_bytes(d.bytes_written)} written")
    if d.power_on_hours is not None:
        bits.append(f"{d.power_on_hours} h powered on")
    bits.extend(f"warning: {w}" for w in d.warnings)
    return f"drive {d.device}" + (f" ({head})" if head else "") + ": " + (", ".join(bits) or "no health data")


def format_controller(c: RaidController) -> list[str]:
    """The controller line, then one line per logical drive with its cache policy."""
    bits = [x for x in (f"status {c.status}" if c.status else None, f"cache {c.cache_status}" if c.cache_status else None,
                        c.cache_status_details, f"battery {c.battery}" if c.battery else None,
                        f"drive write cache {c.drive_write_cache}" if c.drive_write_cache else None) if x]  # fmt: skip
    lines = [f"RAID controller {c.name} ({c.tool})" + (": " + ", ".join(bits) if bits else "")]
    for d in c.logical_drives:
        policy = None
        if d.write_policy_current or d.write_policy_configured:
            policy = f"write {d.write_policy_current or '?'}"
            if d.write_policy_configured and d.write_policy_configured != d.write_policy_current:
                policy += f" (configured {d.write_policy_configured})"
        dbits = [x for x in (d.raid_level, d.size, d.state, policy, d.read_policy, f"disk cache {d.disk_cache}" if d.disk_cache else None,
                             f"caching {d.caching}" if d.caching else None) if x]  # fmt: skip
        lines.append(f"  {d.name}" + (f" = {d.os_device}" if d.os_device else "") + ": " + ", ".join(dbits))
    if c.physical_drives:
        from .raid import array_problems

        bad = [p for p in array_problems((c,)) if not p.logical]
        n = len(c.physical_drives)
        lines.append(f"  {n} member drive{'s' if n != 1 else ''}: "
                     + ("; ".join(f"{p.drive} {p.what}" for p in bad) if bad else "none reports a problem"))  # fmt: skip
    return lines


def storage_brief(info: StorageInfo) -> str:
    """What a target is, in a few words, for a list of runs: ``ext4 on loop0``, ``zfs tank/vm``,
    ``nfs4 from srv:/export``, ``iscsi export at 127.0.0.1:3260``, ``rbd pool/image (Ceph)``,
    ``block nvme0n1`` (the top of the chain: what fio met first)."""
    fs = info.filesystem
    tops = chain_levels(info.devices)[0] if info.devices else []
    top = "+".join(d.name for d in tops)
    if fs is not None:
        if fs.zfs is not None:
            return f"{fs.fstype} {fs.zfs.dataset}"
        if fs.network is not None or not top:
            return f"{fs.fstype} from {fs.source}"
        return f"{fs.fstype} on {top}"
    if info.export is not None:
        e = info.export
        return f"{e.protocol} export" + (f" at {e.server}" if e.server else "")
    if info.ceph is not None:
        return f"{info.target_kind} {info.target} (Ceph)"
    zvol = info.zfs
    if zvol is not None:
        return f"zvol {zvol.dataset}"
    return f"{info.target_kind} {top}" if top else info.target_kind


def format_storage(info: StorageInfo) -> list[str]:
    """A human description, one fact per line; the second line reads like
    ``ext4 (rw,relatime) on /dev/loop0 (loop, 64 MiB, backing /tmp/x.img, dio=on) -> /dev/vda (disk, virtio, ...)``.
    """
    lines = [f"target: {info.target} ({info.target_kind})"]
    chain = format_chain(info.devices) if info.devices else ""
    fs = info.filesystem
    if fs is not None:
        head = f"{fs.fstype} ({','.join(fs.options)})"
        if fs.zfs is not None:
            head += f" dataset {fs.zfs.dataset}"
        elif fs.network is not None:
            head += f" from {fs.source}"
        elif not info.devices:
            head += f" from {fs.source}"
        head += f" mounted at {fs.mountpoint}"
        if chain:
            head += (" over " if fs.zfs is not None else " on ") + chain
        lines.append(head)
        lines.extend(_filesystem_lines(fs))
    elif chain:
        lines.append(f"block device {chain}")
    if info.export is not None:
        e = info.export
        bits = [f"server {e.server or '?'}", f"export {e.export!r}" if e.export is not None else "export ?", f"size {format_bytes(e.size_bytes)}"]
        if e.read_only is not None:
            bits.append("read-only" if e.read_only else "read-write")
        bits.extend(e.details)
        lines.append(f"{e.protocol} export {e.uri}: " + ", ".join(bits))
        if e.server_path is not None:
            lines.append(f"{e.protocol} server (this machine): {e.server_path} is on {e.server_fstype or 'an unknown filesystem'}")
        if e.server_zfs is not None:
            lines.extend(f"server side: {line}" for line in _zfs_lines(e.server_zfs))
    if info.ceph is not None:
        lines.extend(format_ceph(info.ceph))
    for dev in info.devices:
        if dev.zvol is not None:
            lines.extend(_zfs_lines(dev.zvol))
    lines.extend(format_drive(d) for d in info.drives)
    for c in info.controllers:
        lines.extend(format_controller(c))
    h = info.host
    if h is not None:
        parts = [h.hostname or "?"]
        if h.distribution:
            parts.append(h.distribution)
        if h.kernel:
            parts.append(f"kernel {h.kernel}")
        if h.cpu_model or h.cpu_count:
            parts.append(f"{h.cpu_count or '?'} x {h.cpu_model or 'CPU'}")
        if h.mem_bytes is not None:
            parts.append(f"{format_bytes(h.mem_bytes)} RAM")
        if h.fio_version:
            parts.append(h.fio_version)
        lines.append("host: " + ", ".join(parts))
    lines.extend(f"note: {n}" for n in info.notes)
    return lines

