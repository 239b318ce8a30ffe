"""The commands a ZFS setup needs, as argument lists (``zpool create`` of its vdev layout, the
dataset or zvol, ``zfs get``, ``zpool destroy``) and whether ZFS set what the setup asked. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import UsageError
from ..units import parse_size
from .setup_fs import as_list
from .setups import Setup, ZfsLayout


def zpool_vdev_spec(vdev: str, devices: Sequence[str]) -> list[str]:
    """``mirror A B`` / ``mirror A B mirror C D`` / ``raidz1 A B C`` / ``A`` for ``zpool create``."""
    if vdev == "disk":
        return [devices[0]]
    if vdev == "mirror":
        return ["mirror", *devices[:2]]
    if vdev == "mirror-of-mirrors":
        return ["mirror", *devices[:2], "mirror", *devices[2:4]]
    return [vdev, *devices]  # raidz1 / raidz2: every device


def expected_vdevs(setup: Setup, devices: Sequence[str]) -> list[tuple[str, int]]:
    """(kind, member count) of each data vdev ``zpool status`` must show after :func:`zpool_create_argv`."""
    vdev = (setup.zfs or ZfsLayout()).vdev
    if vdev == "disk":
        return [("disk", 1)]
    if vdev == "mirror":
        return [("mirror", 2)]
    if vdev == "mirror-of-mirrors":
        return [("mirror", 2), ("mirror", 2)]
    return [(vdev, len(devices))]


def zpool_create_argv(setup: Setup, pool: str, device: str | Sequence[str]) -> list[str]:
    """A pool of the setup's vdev layout that the system never imports on its own
    (``cachefile=none``) and whose root dataset is not mounted (``-O mountpoint=none``)."""
    layout = setup.zfs or ZfsLayout()
    argv = ["zpool", "create", "-f", "-o", "cachefile=none"]
    for k, v in layout.pool_options:
        argv += ["-o", f"{k}={v}"]
    return [*argv, "-O", "mountpoint=none", pool, *zpool_vdev_spec(layout.vdev, as_list(device))]


def zfs_create_argv(setup: Setup, dataset: str, mountpoint: str | None) -> list[str]:
    """The benchmark dataset (mounted on ``mountpoint``) or, for a zvol image, the volume."""
    layout = setup.zfs or ZfsLayout()
    argv = ["zfs", "create"]
    if setup.image is not None and setup.image.format == "zvol":
        argv += ["-V", str(setup.image.size_bytes)]
        vbs = setup.image.option("volblocksize")
        if vbs is not None:
            argv += ["-o", f"volblocksize={parse_size(vbs)}"]
    else:
        if mountpoint is None:
            raise ValueError("a ZFS filesystem dataset needs a mountpoint")
        argv += ["-o", f"mountpoint={mountpoint}"]
    for k, v in layout.dataset_options:
        argv += ["-o", f"{k}={v}"]
    return [*argv, dataset]


def zfs_get_argv(dataset: str, properties: Sequence[str]) -> list[str]:
    return ["zfs", "get", "-Hp", "-o", "property,value", ",".join(properties), dataset]


def zpool_destroy_argv(pool: str) -> list[str]:
    return ["zpool", "destroy", "-f", pool]


def check_zfs_properties(setup: Setup, dataset: str, got: Mapping[str, str]) -> list[str]:
    """What ZFS did not set as asked: ``zfs get -Hp`` values (``got``) against the setup.

    Sizes are compared in bytes (``recordsize=16k`` vs ``16384``), words as words.
    Returns one phrase per mismatch (empty: everything took effect).  Pure.
    """
    wanted: list[tuple[str, str]] = list((setup.zfs or ZfsLayout()).dataset_options)
    if setup.image is not None and setup.image.format == "zvol":
        wanted.append(("volsize", str(setup.image.size_bytes)))
        vbs = setup.image.option("volblocksize")
        if vbs is not None:
            wanted.append(("volblocksize", str(parse_size(vbs))))
    problems = []
    for prop, value in wanted:
        have = got.get(prop)
        if have is None:
            problems.append(f"{dataset} has no property {prop!r}")
            continue
        if _same_zfs_value(value, have):
            continue
        problems.append(f"{dataset} {prop} is {have!r}, not {value!r}")
    return problems


def _same_zfs_value(wanted: str, have: str) -> bool:
    if wanted.lower() == have.lower():
        return True
    try:
        return parse_size(wanted) == parse_size(have)
    except UsageError:
        pass
    # "compression=zstd" shows as "zstd"; "compression=on" as "on" (or "lz4" on some versions)
    return have.lower().startswith(wanted.lower() + "-")
