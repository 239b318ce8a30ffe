"""The probes of local filesystems (edge): btrfs, XFS and ext2/3/4 settings from their own tools."""

from __future__ import annotations

from ..localfs import (
    BtrfsInfo,
    Ext4Info,
    XfsInfo,
    btrfs_info_from,
    parse_btrfs_fi_df,
    parse_btrfs_fi_show,
    parse_btrfs_property,
    parse_dumpe2fs,
    parse_xfs_info,
)
from ..mounts import FindmntEntry, split_source
from .base import Probe


def describe_btrfs(probe: Probe, entry: FindmntEntry, target: str) -> BtrfsInfo:
    df = probe.run(["btrfs", "filesystem", "df", "-b", entry.target], f"btrfs profiles of {entry.target}")
    spaces = parse_btrfs_fi_df(df) if df else ()
    prop = None
    if "btrfs" not in probe.missing:
        out = probe.run(["btrfs", "property", "get", target, "compression"], f"btrfs compression property of {target}")
        prop = parse_btrfs_property(out) if out else None
    show = None if "btrfs" in probe.missing else probe.run(
        ["btrfs", "filesystem", "show", "--raw", entry.target], f"btrfs devices of {entry.target}"
    )
    return btrfs_info_from(entry.options, spaces, compression_property=prop, devices=parse_btrfs_fi_show(show) if show else ())


def describe_xfs(probe: Probe, entry: FindmntEntry) -> XfsInfo | None:
    out = probe.run(["xfs_info", entry.target], f"xfs geometry of {entry.target}")
    if out:
        try:
            return parse_xfs_info(out)
        except ValueError as exc:
            probe.note(f"xfs_info output not understood: {exc}")
    return None


def describe_ext(probe: Probe, entry: FindmntEntry) -> Ext4Info | None:
    source, _ = split_source(entry.source)
    kind = entry.fstype
    if not source.startswith("/dev/"):
        probe.note(f"{kind} superblock not read: source {entry.source!r} is not a device")
        return None
    out = probe.run(["dumpe2fs", "-h", source], f"{kind} superblock of {source}")
    if out is None and "dumpe2fs" in probe.missing:
        out = probe.run(["tune2fs", "-l", source], f"{kind} superblock of {source}")
    if out:
        try:
            return parse_dumpe2fs(out)
        except ValueError as exc:
            probe.note(f"dumpe2fs output not understood: {exc}")
    return None
