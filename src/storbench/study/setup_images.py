"""The commands a VM image setup needs, as argument lists: ``qemu-img create``, ``qemu-nbd`` serving
it, ``qemu-storage-daemon`` exporting it over FUSE for a guest filesystem, and that filesystem's
``mkfs``. Pure."""

from __future__ import annotations

from collections.abc import Mapping

from ..units import parse_size
from .setups import GUEST_FILESYSTEMS, IMAGE_OPTIONS, ImageSpec


def qemu_img_create_argv(image: ImageSpec, path: str) -> list[str]:
    """``qemu-img create -q -f FMT [-o k=v,...] PATH SIZE`` (sizes in bytes, so qemu reads them as meant)."""
    if image.format == "zvol":
        raise ValueError("a zvol is created with zfs create -V, not qemu-img")
    opts = []
    for k, v in image.options:
        kind = IMAGE_OPTIONS[image.format][k]
        opts.append(f"{k}={parse_size(v) if kind == 'size' else v}")
    return ["qemu-img", "create", "-q", "-f", image.format, *(["-o", ",".join(opts)] if opts else []), path, str(image.size_bytes)]


def qemu_nbd_argv(image: ImageSpec, path: str, socket_path: str) -> list[str]:
    """qemu-nbd serving ``path`` on a unix socket until it is stopped (``-t``: not only one client)."""
    return [
        "qemu-nbd", f"--socket={socket_path}", "-f", image.qemu_format,
        f"--cache={image.cache}", *([f"--aio={image.aio}"] if image.aio else []),
        "-t", path,
    ]  # fmt: skip


#: qemu-nbd's ``--cache`` modes as block-layer options: (``cache.direct``, ``cache.no-flush``,
#: the export's ``writethrough``), so that the guest filesystem sees the disk fio measured
_CACHE_OPTIONS: Mapping[str, tuple[bool, bool, bool]] = {
    "none": (True, False, False),
    "writeback": (False, False, False),
    "writethrough": (False, False, True),
    "directsync": (True, False, True),
    "unsafe": (False, True, False),
}


def qsd_fuse_argv(image: ImageSpec, path: str, export_path: str) -> list[str]:
    """``qemu-storage-daemon`` exporting the image (or zvol) at ``path`` as the regular file
    ``export_path`` over FUSE, writable, with the cache and aio modes qemu-nbd serves it with:
    the guest filesystem of a study's loads goes on a loop device over that file."""
    direct, no_flush, writethrough = _CACHE_OPTIONS[image.cache]
    on = {True: "on", False: "off"}
    driver = "host_device" if image.format == "zvol" else "file"
    file_node = f"driver={driver},node-name=file,filename={_qemu_escape(path)},cache.direct={on[direct]},cache.no-flush={on[no_flush]}"
    return [
        "qemu-storage-daemon",
        "--blockdev", file_node + (f",aio={image.aio}" if image.aio else ""),
        "--blockdev", f"driver={image.qemu_format},node-name=disk,file=file",
        "--export", f"type=fuse,id=guest,node-name=disk,mountpoint={_qemu_escape(export_path)},writable=on,writethrough={on[writethrough]}",
    ]  # fmt: skip


def _qemu_escape(value: str) -> str:
    """A value inside qemu's ``key=value,...`` option string: a comma is written twice."""
    return value.replace(",", ",,")


def guest_mkfs_argv(fs: str, device: str) -> list[str]:
    """``mkfs.X -q FORCE DEVICE`` for a guest filesystem (ext4 initialised now, not in the background)."""
    if fs == "ext4":
        return ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", device]
    if fs in ("xfs", "btrfs"):
        return [f"mkfs.{fs}", "-q", "-f", device]
    raise ValueError(f"guest_mkfs_argv: {fs!r} is not one of {', '.join(GUEST_FILESYSTEMS)}")


def guest_tools(image: ImageSpec) -> tuple[str, ...]:
    """The programs a guest filesystem inside ``image`` needs (a zvol is a block device already)."""
    export = () if image.format == "zvol" else ("qemu-storage-daemon", "losetup")
    return (*export, f"mkfs.{image.guest_fs}", "mount", "umount")
