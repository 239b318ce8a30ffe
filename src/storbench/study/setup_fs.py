"""The commands a filesystem setup needs on its scratch devices, as argument lists: the tools, wiping
the old signatures, how many devices, ``mkfs.X`` (ext4, xfs, btrfs with its profile) and ``mount``. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from .setups import Setup, SetupError


def setup_tools(setup: Setup) -> tuple[str, ...]:
    """The programs building and tearing down this setup needs."""
    tools: list[str] = []
    if setup.uses_scratch:
        tools.append("wipefs")
    if setup.mkfs in ("ext4", "xfs", "btrfs"):
        tools += [f"mkfs.{setup.mkfs}", "mount", "umount"]
    elif setup.mkfs == "zfs":
        tools += ["zpool", "zfs"]
    if setup.image is not None:
        if setup.image.format != "zvol":
            tools.append("qemu-img")
        tools.append("qemu-nbd")
    return tuple(dict.fromkeys(tools))


def wipe_argv(device: str) -> list[str]:
    """Erase every signature (filesystem, ZFS label, partition table) so the next build starts blank."""
    return ["wipefs", "-a", "-q", device]


def devices_needed(setup: Setup, available: int) -> int:
    """How many of the study's ``available`` devices ``setup`` is built on (the first ones):
    its minimum, or every device for raidz.  Raises :class:`SetupError` (one line) when the
    study has too few."""
    need = setup.min_devices
    if need > available:
        what = setup.layout_words or setup.mkfs
        flags = f"--loop-files {need} --loop-size SIZE, or --devices with {need} devices (each named by --destroy-data)"
        raise SetupError(
            f"setup {setup.name!r} ({what}) needs {need} scratch device{'s' if need != 1 else ''}, the study has "
            f"{available}: give {flags}; nothing was changed"
        )
    if setup.zfs is not None and setup.zfs.vdev.startswith("raidz"):
        return available
    return need


def as_list(devices: str | Sequence[str]) -> list[str]:
    return [devices] if isinstance(devices, str) else list(devices)


def mkfs_argv(setup: Setup, device: str | Sequence[str]) -> list[str]:
    """``mkfs.X -q FORCE [defaults] OPTIONS DEVICE...`` for ext4/xfs/btrfs (btrfs: every device
    of its profile, ``-d P -m P``)."""
    devices = as_list(device)
    if setup.mkfs == "ext4":
        base = ["mkfs.ext4", "-q", "-F"]
        if "-E" not in setup.mkfs_options:
            base += ["-E", "lazy_itable_init=0,lazy_journal_init=0"]
    elif setup.mkfs == "xfs":
        base = ["mkfs.xfs", "-q", "-f"]
    elif setup.mkfs == "btrfs":
        base = ["mkfs.btrfs", "-q", "-f"]
        if setup.profile is not None:
            base += ["-d", setup.profile, "-m", setup.profile]
    else:
        raise ValueError(f"mkfs_argv: setup {setup.name!r} has mkfs {setup.mkfs!r}, which is not made with mkfs.X")
    if setup.mkfs != "btrfs" and len(devices) != 1:
        raise ValueError(f"mkfs_argv: {setup.mkfs} goes on one device, not {len(devices)}")
    return [*base, *setup.mkfs_options, *devices]


def mount_argv(setup: Setup, device: str, mountpoint: str) -> list[str]:
    return ["mount", *(["-o", setup.mount_options] if setup.mount_options else []), device, mountpoint]
