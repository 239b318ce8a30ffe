"""Pure: storage setups (what ``storbench matrix`` builds on a scratch device) and their TOML.

A *setup* is one way of putting storage on a scratch device: a filesystem made
with given ``mkfs`` options and mounted with given mount options, a ZFS pool and
dataset with given properties, the raw device itself, or a VM disk image (raw,
qcow2 or a ZFS zvol) served by ``qemu-nbd`` -- plus, optionally, settings of the
scratch device (write cache, I/O scheduler, read-ahead) held while it is measured.
A study runs the same workloads on each setup in turn (:mod:`storbench.study.matrix`).

Setups file (``storbench matrix --setups FILE``)::

    [setup.ext4-plain]
    mkfs = "ext4"                                   # ext4 | xfs | btrfs | zfs | none
    mkfs_options = ["-E", "lazy_itable_init=0"]     # extra arguments to mkfs.X
    mount_options = "noatime"                       # mount -o

    [setup.btrfs-zstd]
    mkfs = "btrfs"
    mount_options = "compress-force=zstd"

    [setup.zfs-16k]
    mkfs = "zfs"
    zfs = { pool_options = { ashift = 12 }, dataset_options = { recordsize = "16k", compression = "lz4", primarycache = "metadata" } }

    [setup.wt]
    mkfs = "ext4"
    device = { write_cache = "write through", scheduler = "none", read_ahead_kb = 128 }

    [setup.qcow2-64k]
    mkfs = "ext4"                                   # the filesystem that holds the image file
    image = { format = "qcow2", size = "1g", cluster_size = "64k", preallocation = "metadata", lazy_refcounts = true }

    [setup.zvol-8k]
    mkfs = "zfs"
    image = { format = "zvol", size = "1g", volblocksize = "8k" }

    [setup.qcow2-on-nvme]
    image = { format = "qcow2", size = "1g", directory = "/mnt/nvme/images" }   # no scratch device used

Keys of a setup (anything else is an error naming the key and what is allowed):

``mkfs``           what goes on the scratch device: ``ext4``, ``xfs``, ``btrfs``, ``zfs``
                   (a pool of the one device and a dataset in it) or ``none`` (the raw device).
                   Required, except for an image on a given ``directory`` (which uses no scratch device).
``mkfs_options``   a list of extra arguments for ``mkfs.ext4``/``mkfs.xfs``/``mkfs.btrfs``.
                   storbench always passes ``-q`` and the force flag (``-F``/``-f``); for ext4 it adds
                   ``-E lazy_itable_init=0,lazy_journal_init=0`` (no background initialisation during the
                   measurement) unless the options contain their own ``-E``.
``mount_options``  one ``mount -o`` string (``"compress-force=zstd,noatime"``); not for zfs/none.
``zfs``            zfs only: ``pool_options`` (``zpool create -o``), ``dataset_options`` (``zfs create -o``
                   for the dataset or zvol) and ``vdev``: ``"disk"`` (the default: one device),
                   ``"mirror"`` (2 devices), ``"mirror-of-mirrors"`` (4: two mirrors striped, RAID 10),
                   ``"raidz1"`` / ``"raidz2"`` (every device of the study; at least 3 / 4).
``profile``        btrfs only: the data and metadata profile, ``"single"`` (the default: one device),
                   ``"raid1"`` (2 devices) or ``"raid10"`` (4); ``mkfs.btrfs -d P -m P`` over them.
``device``         settings of the scratch device while this setup is measured (see
                   :mod:`storbench.study.devsettings`): ``write_cache`` (``"write back"``/``"write through"``),
                   ``scheduler`` (a name the device lists), ``read_ahead_kb`` (whole number).  Restored after.
``image``          a VM disk image served by ``qemu-nbd``; fio reaches it with ``ioengine=nbd``:
                   ``format`` (``raw``, ``qcow2`` or ``zvol``), ``size`` (default ``1g``), the
                   format's creation options (raw: ``preallocation``; qcow2: ``cluster_size``,
                   ``preallocation``, ``lazy_refcounts``, ``compat``, ``extended_l2``, ``refcount_bits``,
                   ``compression_type``; zvol: ``volblocksize``), ``directory`` (raw/qcow2 only: put the
                   image file there instead of on the scratch filesystem), and qemu-nbd's ``cache``
                   (default ``"none"``: the host page cache does not serve the guest, as with
                   ``losetup --direct-io``) and ``aio`` (``threads``, ``native``, ``io_uring``).
                   The image file lives on the filesystem ``mkfs`` builds on the scratch device
                   (zvol: in the pool of ``mkfs = "zfs"``); it is removed afterwards.
                   ``guest_fs`` (``ext4``, the default, ``xfs`` or ``btrfs``): the filesystem a VM
                   would make on this disk, where the study's application loads (dbench, pgbench,
                   ...) run: made inside the image once fio's workloads are done
                   (:mod:`storbench.study.guest`).
``description``    free text.

``--fs LIST`` shorthands (:func:`setups_from_fs_list`): ``ext4``, ``xfs``, ``btrfs``,
``btrfs-zstd`` / ``btrfs-lzo`` / ``btrfs-zlib`` (btrfs mounted with ``compress-force=ALG``),
``zfs``, ``zfs-lz4`` / ``zfs-zstd`` / ``zfs-off`` (dataset ``compression=ALG``), the
multi-device layouts ``zfs-mirror``, ``zfs-raid10`` (mirror of mirrors), ``zfs-raidz1``,
``zfs-raidz2``, ``btrfs-raid1``, ``btrfs-raid10``, and ``none`` / ``raw`` (the raw device).

A study has one or more scratch devices (``--device``/``--devices``, ``--loop-file``/
``--loop-files``); a one-device setup uses the first, a multi-device one the first N
(:func:`devices_needed`); a setup that needs more than the study has is refused before
anything is touched.

Everything here is pure: text in, frozen records out.  The commands a setup needs are built
by kind (:mod:`.setup_fs`, :mod:`.setup_zfs`, :mod:`.setup_images`: ``*_argv``) and run by the
matrix.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from storbench.jsontypes import JSONMapping, JSONObject, JSONValue

from ..errors import UsageError
from ..units import fio_size, parse_size
from .devsettings import WRITE_CACHE_VALUES, DeviceSettings, DeviceSettingsError
from .devsettings import validate as validate_device_settings

__all__ = [
    "BTRFS_PROFILES",
    "FS_KINDS",
    "GUEST_FILESYSTEMS",
    "IMAGE_FORMATS",
    "NBD_AIO_MODES",
    "NBD_CACHE_MODES",
    "TOOL_PACKAGES",
    "ZFS_VDEVS",
    "ImageSpec",
    "Setup",
    "SetupError",
    "ZfsLayout",
    "load_setups_file",
    "parse_setups_text",
    "setup_from_table",
    "setup_to_table",
    "setups_from_fs_list",
]

#: What ``mkfs`` may be.
FS_KINDS: tuple[str, ...] = ("ext4", "xfs", "btrfs", "zfs", "none")
#: Image formats: files created with qemu-img, or a zvol in the setup's pool.
IMAGE_FORMATS: tuple[str, ...] = ("raw", "qcow2", "zvol")
#: qemu-nbd --cache and --aio values.
NBD_CACHE_MODES: tuple[str, ...] = ("none", "writeback", "writethrough", "directsync", "unsafe")
NBD_AIO_MODES: tuple[str, ...] = ("threads", "native", "io_uring")
#: The cache mode a setup gets when it names none: the host page cache stays out of the measurement.
DEFAULT_NBD_CACHE = "none"
DEFAULT_IMAGE_SIZE = "1g"

#: Creation options each file format accepts (qemu-img ``-o``), with their allowed values
#: (a tuple of words, "size" for a size, "bool", or "int").
IMAGE_OPTIONS: Mapping[str, JSONMapping] = {
    "raw": {"preallocation": ("off", "falloc", "full")},
    "qcow2": {
        "cluster_size": "size",
        "preallocation": ("off", "metadata", "falloc", "full"),
        "lazy_refcounts": "bool",
        "compat": ("0.10", "1.1", "v2", "v3"),
        "extended_l2": "bool",
        "refcount_bits": "int",
        "compression_type": ("zlib", "zstd"),
    },
    "zvol": {"volblocksize": "size"},
}
_IMAGE_COMMON_KEYS: tuple[str, ...] = ("format", "size", "directory", "cache", "aio", "guest_fs")
#: filesystems the guest filesystem of a study's loads inside an image may be
GUEST_FILESYSTEMS: tuple[str, ...] = ("ext4", "xfs", "btrfs")
DEFAULT_GUEST_FS = "ext4"

#: Debian packages of the tools a setup may need (for the "not installed" message).
TOOL_PACKAGES: Mapping[str, str] = {
    "wipefs": "util-linux",
    "losetup": "util-linux",
    "mount": "mount",
    "umount": "mount",
    "mkfs.ext4": "e2fsprogs",
    "mkfs.xfs": "xfsprogs",
    "mkfs.btrfs": "btrfs-progs",
    "zpool": "zfsutils-linux",
    "zfs": "zfsutils-linux",
    "qemu-img": "qemu-utils",
    "qemu-nbd": "qemu-utils",
    "qemu-storage-daemon": "qemu-system-common",
}

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_ZFS_PROP_RE = re.compile(r"^[a-z][a-z0-9_.:]*$")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
_SETUP_KEYS: tuple[str, ...] = ("description", "mkfs", "mkfs_options", "mount_options", "zfs", "profile", "device", "image")

#: ZFS vdev layouts of a setup and the devices each needs (raidz: at least that many; it
#: takes every device of the study).
ZFS_VDEVS: Mapping[str, int] = {"disk": 1, "mirror": 2, "mirror-of-mirrors": 4, "raidz1": 3, "raidz2": 4}
#: btrfs data/metadata profiles of a setup and the devices each needs.
BTRFS_PROFILES: Mapping[str, int] = {"single": 1, "raid1": 2, "raid10": 4}
_ZFS_KEYS: tuple[str, ...] = ("pool_options", "dataset_options", "vdev")
_DEVICE_KEYS: tuple[str, ...] = ("write_cache", "scheduler", "read_ahead_kb")


class SetupError(UsageError):
    """A setups file, a ``--fs`` list or a setup definition is invalid (one line)."""


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class ZfsLayout:
    """Properties of the setup's pool (``zpool create -o``) and dataset/zvol (``zfs create -o``)."""

    pool_options: tuple[tuple[str, str], ...] = ()
    dataset_options: tuple[tuple[str, str], ...] = ()
    vdev: str = "disk"


@dataclass(frozen=True)
class ImageSpec:
    """A VM disk image and how qemu-nbd serves it.

    ``options`` are the format's creation options as given (``cluster_size=64k``);
    ``size`` is in fio's form (``1g``).  ``directory`` None: on the scratch filesystem.
    """

    format: str  # raw | qcow2 | zvol
    size: str = DEFAULT_IMAGE_SIZE
    options: tuple[tuple[str, str], ...] = ()
    directory: str | None = None
    cache: str = DEFAULT_NBD_CACHE
    aio: str | None = None
    guest_fs: str = DEFAULT_GUEST_FS  # where loads run: the filesystem made inside the image

    @property
    def qemu_format(self) -> str:
        """The ``-f`` qemu-nbd serves it as (a zvol is a raw block device)."""
        return "raw" if self.format == "zvol" else self.format

    @property
    def size_bytes(self) -> int:
        return parse_size(self.size)

    def option(self, key: str) -> str | None:
        return dict(self.options).get(key)

    def describe(self) -> str:
        """``qcow2 1g (cluster_size=64k, preallocation=metadata), qemu-nbd cache=none``."""
        opts = ", ".join(f"{k}={v}" for k, v in self.options)
        where = f" in {self.directory}" if self.directory else ""
        served = f"qemu-nbd cache={self.cache}" + (f" aio={self.aio}" if self.aio else "")
        return f"{self.format} {self.size}" + (f" ({opts})" if opts else "") + where + f", {served}"


@dataclass(frozen=True)
class Setup:
    """One storage setup of a study (see the module doc for each field)."""

    name: str
    mkfs: str
    mkfs_options: tuple[str, ...] = ()
    mount_options: str | None = None
    zfs: ZfsLayout | None = None
    device: DeviceSettings | None = None
    image: ImageSpec | None = None
    description: str | None = None
    profile: str | None = None  # btrfs: data and metadata profile (None = mkfs.btrfs's default for one device)

    @property
    def min_devices(self) -> int:
        """Scratch devices this setup needs at least (0: an image on a given directory)."""
        if not self.uses_scratch:
            return 0
        if self.zfs is not None:
            return ZFS_VDEVS[self.zfs.vdev]
        if self.profile is not None:
            return BTRFS_PROFILES[self.profile]
        return 1

    @property
    def layout_words(self) -> str | None:
        """``zfs mirror-of-mirrors`` / ``btrfs raid10``; None for one-device setups."""
        if self.zfs is not None and self.zfs.vdev != "disk":
            return f"zfs {self.zfs.vdev}"
        if self.profile is not None and self.profile != "single":
            return f"btrfs {self.profile}"
        return None

    @property
    def uses_scratch(self) -> bool:
        """Whether this setup is built on the scratch device (not only on a given directory)."""
        return not (self.image is not None and self.image.directory is not None)

    @property
    def fs_kind(self) -> str:
        """What ``mkfs`` builds: a filesystem type, ``zfs`` or ``none``."""
        return self.mkfs

    def summary(self) -> str:
        """One line saying what the setup is, for notes and progress lines."""
        parts = []
        if self.mkfs == "none" and self.image is None:
            parts.append("raw device")
        elif self.mkfs != "none":
            fs = self.mkfs + (f" ({' '.join(self.mkfs_options)})" if self.mkfs_options else "")
            parts.append(fs)
        if self.layout_words:
            parts.append(self.layout_words.split(" ", 1)[1])
        if self.mount_options:
            parts.append(f"mount -o {self.mount_options}")
        if self.zfs is not None:
            props = [f"{k}={v}" for k, v in self.zfs.pool_options + self.zfs.dataset_options]
            if props:
                parts.append(" ".join(props))
        if self.image is not None:
            parts.append("image " + self.image.describe())
        if self.device is not None:
            parts.append("device " + ", ".join(f"{f}={getattr(self.device, f)!r}" for f in self.device.changed()))
        return "; ".join(parts)


# --------------------------------------------------------------------------- validation helpers


class _Where:
    """Names what a message is about: ``FILE: [setup.NAME] key``."""

    def __init__(self, label: str, name: str | None = None) -> None:
        self.label = label
        self.name = name

    def error(self, key: str | None, problem: str) -> SetupError:
        if self.name is None:
            return SetupError(f"{self.label}: {key}: {problem}" if key else f"{self.label}: {problem}")
        head = f"{self.label}: [setup.{self.name}]"
        return SetupError(f"{head} {key}: {problem}" if key else f"{head}: {problem}")


def _allowed(items: Sequence[str]) -> str:
    return ", ".join(repr(i) for i in items)


def _text(where: _Where, key: str, value: JSONValue, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise where.error(key, f"must be a string, not {type(value).__name__} {value!r}")
    if _CONTROL_RE.search(value):
        raise where.error(key, "contains a line break or control character")
    if not allow_empty and not value.strip():
        raise where.error(key, "is empty")
    return value


def _choice(where: _Where, key: str, value: JSONValue, allowed: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise where.error(key, f"{value!r} is not allowed (allowed: {_allowed(allowed)})")
    return value


def _size(where: _Where, key: str, value: JSONValue) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise where.error(key, f"must be a size like \"64k\" or \"1g\", not {value!r}")
    try:
        n = parse_size(value)
    except UsageError as exc:
        raise where.error(key, str(exc)) from None
    if n <= 0:
        raise where.error(key, f"{value!r} must be larger than 0")
    return fio_size(value)


def _check_keys(where: _Where, key: str | None, table: JSONMapping, allowed: Sequence[str]) -> None:
    for k in table:
        if k not in allowed:
            shown = f"{key}.{k}" if key else k
            raise where.error(shown, f"unknown key (allowed: {', '.join(allowed)})")


def _table(where: _Where, key: str, value: JSONValue) -> JSONMapping:
    if not isinstance(value, dict):
        raise where.error(key, f"must be a table like {key} = {{ ... }}, not {type(value).__name__}")
    return value


def _prop_value(where: _Where, key: str, value: JSONValue) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int):
        return str(value)
    return _text(where, key, value)


def _zfs_props(where: _Where, key: str, value: JSONValue) -> tuple[tuple[str, str], ...]:
    table = _table(where, key, value)
    out = []
    for prop, v in table.items():
        if not _ZFS_PROP_RE.match(prop):
            raise where.error(f"{key}.{prop}", "is not a ZFS property name (lower-case letters, digits, '_', '.', ':')")
        if prop in ("mountpoint", "canmount") and key.endswith("dataset_options"):
            raise where.error(f"{key}.{prop}", "is set by storbench (it mounts the dataset on its own temporary directory)")
        if prop in ("cachefile", "altroot") and key.endswith("pool_options"):
            raise where.error(f"{key}.{prop}", "is set by storbench (the pool is created for the study and destroyed after it)")
        out.append((prop, _prop_value(where, f"{key}.{prop}", v)))
    return tuple(out)


# --------------------------------------------------------------------------- one setup


def setup_from_table(name: str, table: JSONValue, label: str = "setup") -> Setup:
    """Validate one ``[setup.NAME]`` table; :class:`SetupError` (one line) on anything wrong."""
    where = _Where(label, name)
    if not _NAME_RE.match(name):
        raise _Where(label).error(
            f"[setup.{name}]" if not _CONTROL_RE.search(name) else "[setup]",
            "a setup name may hold letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)",
        )
    if not isinstance(table, dict):
        raise _Where(label).error(f"setup.{name}", "must be a table ([setup.NAME] with keys under it)")
    _check_keys(where, None, table, _SETUP_KEYS)

    description = _text(where, "description", table["description"]) if "description" in table else None

    image = _image(where, table["image"]) if "image" in table else None
    if "mkfs" in table:
        mkfs = _choice(where, "mkfs", table["mkfs"], FS_KINDS)
    elif image is not None and image.directory is not None:
        mkfs = "none"
    else:
        raise where.error("mkfs", f"is required (allowed: {_allowed(FS_KINDS)})")

    mkfs_options: tuple[str, ...] = ()
    if "mkfs_options" in table:
        raw = table["mkfs_options"]
        if not isinstance(raw, list):
            raise where.error("mkfs_options", 'must be a list of strings like ["-E", "stride=16"]')
        mkfs_options = tuple(_text(where, f"mkfs_options[{i}]", v) for i, v in enumerate(raw))
        if mkfs not in ("ext4", "xfs", "btrfs"):
            raise where.error("mkfs_options", f"applies to mkfs ext4, xfs and btrfs, not {mkfs!r}"
                              + (" (use zfs = { pool_options = {...} })" if mkfs == "zfs" else ""))

    mount_options = None
    if "mount_options" in table:
        mount_options = _text(where, "mount_options", table["mount_options"])
        if re.search(r"\s", mount_options):
            raise where.error("mount_options", "must be one comma-separated string without spaces, e.g. \"compress-force=zstd,noatime\"")
        if mkfs not in ("ext4", "xfs", "btrfs"):
            raise where.error("mount_options", f"applies to mkfs ext4, xfs and btrfs, not {mkfs!r}"
                              + (" (use zfs = { dataset_options = {...} })" if mkfs == "zfs" else ""))

    zfs = None
    if "zfs" in table:
        if mkfs != "zfs":
            raise where.error("zfs", f"applies only to mkfs = \"zfs\", not {mkfs!r}")
        zt = _table(where, "zfs", table["zfs"])
        _check_keys(where, "zfs", zt, _ZFS_KEYS)
        vdev = "disk"
        if "vdev" in zt:
            vdev = _text(where, "zfs.vdev", zt["vdev"])
            if vdev == "single":
                vdev = "disk"
            if vdev not in ZFS_VDEVS:
                raise where.error("zfs.vdev", f"{vdev!r} is not a layout storbench builds (allowed: {_allowed(tuple(ZFS_VDEVS))})")
        zfs = ZfsLayout(
            pool_options=_zfs_props(where, "zfs.pool_options", zt.get("pool_options", {})),
            dataset_options=_zfs_props(where, "zfs.dataset_options", zt.get("dataset_options", {})),
            vdev=vdev,
        )
    elif mkfs == "zfs":
        zfs = ZfsLayout()

    profile = None
    if "profile" in table:
        if mkfs != "btrfs":
            raise where.error("profile", f"applies only to mkfs = \"btrfs\", not {mkfs!r}"
                              + (" (use zfs = { vdev = \"mirror\" })" if mkfs == "zfs" else ""))
        profile = _choice(where, "profile", table["profile"], tuple(BTRFS_PROFILES))
        if profile == "single":
            profile = None
        if profile is not None and any(o in ("-d", "-m", "--data", "--metadata") for o in mkfs_options):
            raise where.error("mkfs_options", "sets the profile that profile = ... sets already; give one of them")

    device = None
    if "device" in table:
        dt = _table(where, "device", table["device"])
        _check_keys(where, "device", dt, _DEVICE_KEYS)
        if not dt:
            raise where.error("device", f"names no setting (allowed: {', '.join(_DEVICE_KEYS)})")
        if "write_cache" in dt:
            _choice(where, "device.write_cache", dt["write_cache"], WRITE_CACHE_VALUES)
        device = DeviceSettings(
            write_cache=dt.get("write_cache"), scheduler=dt.get("scheduler"), read_ahead_kb=dt.get("read_ahead_kb")
        )
        try:
            validate_device_settings(device)
        except DeviceSettingsError as exc:
            raise where.error("device", str(exc)) from None

    if image is not None:
        if image.directory is not None and mkfs != "none":
            raise where.error(
                "image.directory",
                f"puts the image on a given directory, so mkfs = {mkfs!r} would build nothing it uses; drop one of them",
            )
        if image.format == "zvol" and mkfs != "zfs":
            raise where.error("image.format", f"'zvol' lives in a ZFS pool: it needs mkfs = \"zfs\", not {mkfs!r}")
        if image.format != "zvol" and mkfs in ("none",) and image.directory is None:
            raise where.error("mkfs", "'none' leaves no filesystem to hold the image file: give ext4, xfs, btrfs or zfs, or image.directory")
    if device is not None and image is not None and image.directory is not None:
        raise where.error("device", "applies to the scratch device, which an image on a given directory does not use")

    return Setup(
        name=name, mkfs=mkfs, mkfs_options=mkfs_options, mount_options=mount_options, zfs=zfs,
        device=device, image=image, description=description, profile=profile,
    )


def _image(where: _Where, value: JSONValue) -> ImageSpec:
    table = _table(where, "image", value)
    if "format" not in table:
        raise where.error("image.format", f"is required (allowed: {_allowed(IMAGE_FORMATS)})")
    fmt = _choice(where, "image.format", table["format"], IMAGE_FORMATS)
    specific = IMAGE_OPTIONS[fmt]
    _check_keys(where, "image", table, tuple(_IMAGE_COMMON_KEYS) + tuple(specific))
    size = _size(where, "image.size", table["size"]) if "size" in table else DEFAULT_IMAGE_SIZE
    options: list[tuple[str, str]] = []
    for key, kind in specific.items():
        if key not in table:
            continue
        v = table[key]
        full = f"image.{key}"
        if kind == "size":
            text = _size(where, full, v)
            n = parse_size(text)
            if n & (n - 1):
                raise where.error(full, f"{v!r} must be a power of two (e.g. 8k, 64k)")
        elif kind == "bool":
            if not isinstance(v, bool):
                raise where.error(full, f"must be true or false, not {v!r}")
            text = "on" if v else "off"
        elif kind == "int":
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise where.error(full, f"must be a whole number above 0, not {v!r}")
            text = str(v)
        else:
            text = _choice(where, full, str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v, kind)
        options.append((key, text))
    directory = None
    if "directory" in table:
        if fmt == "zvol":
            raise where.error("image.directory", "a zvol lives in the setup's ZFS pool, not in a directory")
        directory = _text(where, "image.directory", table["directory"])
        if not directory.startswith("/"):
            raise where.error("image.directory", f"{directory!r} must be an absolute path")
    cache = _choice(where, "image.cache", table["cache"], NBD_CACHE_MODES) if "cache" in table else DEFAULT_NBD_CACHE
    aio = _choice(where, "image.aio", table["aio"], NBD_AIO_MODES) if "aio" in table else None
    if aio == "native" and cache not in ("none", "directsync"):
        raise where.error("image.aio", f"'native' needs cache 'none' or 'directsync' (qemu refuses it with cache {cache!r})")
    guest_fs = _choice(where, "image.guest_fs", table["guest_fs"], GUEST_FILESYSTEMS) if "guest_fs" in table else DEFAULT_GUEST_FS
    return ImageSpec(format=fmt, size=size, options=tuple(options), directory=directory, cache=cache, aio=aio, guest_fs=guest_fs)


# --------------------------------------------------------------------------- files and --fs


def parse_setups_text(text: str, label: str = "setups") -> tuple[Setup, ...]:
    """Every ``[setup.NAME]`` of a setups file, in file order."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SetupError(f"{label}: TOML syntax error: {exc}") from None
    for key in doc:
        if key != "setup":
            raise _Where(label).error(key, "unknown top-level key (a setups file holds [setup.NAME] tables)")
    tables = doc.get("setup")
    if not isinstance(tables, dict) or not tables:
        raise _Where(label).error(None, "defines no setup (add [setup.NAME] tables with mkfs = ...)")
    return tuple(setup_from_table(name, table, label) for name, table in tables.items())


def load_setups_file(path: str) -> tuple[Setup, ...]:
    """Read and validate a setups file (edge-free apart from reading it)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise SetupError(f"{path}: cannot read setups file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SetupError(f"{path}: not UTF-8 text (byte {exc.start}); TOML files are UTF-8") from None
    return parse_setups_text(text, path)


_BTRFS_ALGS = ("zstd", "lzo", "zlib")
_ZFS_ALGS = ("lz4", "zstd", "gzip", "zle", "off")
#: ``--fs`` names of the multi-device layouts.
_LAYOUT_SHORTHANDS: Mapping[str, tuple[str, str]] = {
    "zfs-mirror": ("zfs", "mirror"),
    "zfs-raid10": ("zfs", "mirror-of-mirrors"),
    "zfs-raidz1": ("zfs", "raidz1"),
    "zfs-raidz2": ("zfs", "raidz2"),
    "btrfs-raid1": ("btrfs", "raid1"),
    "btrfs-raid10": ("btrfs", "raid10"),
}
FS_SHORTHANDS: tuple[str, ...] = (
    "ext4", "xfs", "btrfs", *(f"btrfs-{a}" for a in _BTRFS_ALGS), "zfs", *(f"zfs-{a}" for a in _ZFS_ALGS),
    *_LAYOUT_SHORTHANDS, "none", "raw",
)


def setups_from_fs_list(text: str) -> tuple[Setup, ...]:
    """``--fs ext4,xfs,btrfs,btrfs-zstd`` -> setups named as given.

    ``btrfs-ALG`` is btrfs mounted with ``compress-force=ALG``; ``zfs-ALG`` a ZFS
    dataset with ``compression=ALG``; ``none``/``raw`` the raw device.
    """
    names = [n.strip() for n in text.split(",")]
    if not text.strip() or any(not n for n in names):
        raise SetupError(f"--fs {text!r}: give a comma-separated list, e.g. ext4,xfs,btrfs,btrfs-zstd")
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise SetupError(f"--fs {text!r}: {dup!r} is given twice")
    out = []
    for name in names:
        if name not in FS_SHORTHANDS:
            raise SetupError(f"--fs: unknown filesystem {name!r} (allowed: {', '.join(FS_SHORTHANDS)})")
        if name in _LAYOUT_SHORTHANDS:
            fs, layout = _LAYOUT_SHORTHANDS[name]
            if fs == "zfs":
                out.append(Setup(name=name, mkfs="zfs", zfs=ZfsLayout(vdev=layout)))
            else:
                out.append(Setup(name=name, mkfs="btrfs", profile=layout))
        elif name in ("none", "raw"):
            out.append(Setup(name=name, mkfs="none"))
        elif name.startswith("btrfs-"):
            out.append(Setup(name=name, mkfs="btrfs", mount_options=f"compress-force={name.split('-', 1)[1]}"))
        elif name.startswith("zfs-"):
            out.append(Setup(name=name, mkfs="zfs", zfs=ZfsLayout(dataset_options=(("compression", name.split("-", 1)[1]),))))
        elif name == "zfs":
            out.append(Setup(name=name, mkfs="zfs", zfs=ZfsLayout()))
        else:
            out.append(Setup(name=name, mkfs=name))
    return tuple(out)


def setup_to_table(setup: Setup) -> JSONObject:
    """The ``[setup.NAME]`` table that :func:`setup_from_table` reads back as the same setup
    (stored in each run of a study, so ``--resume`` rebuilds exactly what was planned)."""
    table: JSONObject = {"mkfs": setup.mkfs}
    if setup.description:
        table["description"] = setup.description
    if setup.mkfs_options:
        table["mkfs_options"] = list(setup.mkfs_options)
    if setup.mount_options:
        table["mount_options"] = setup.mount_options
    if setup.zfs is not None and (setup.zfs.pool_options or setup.zfs.dataset_options or setup.zfs.vdev != "disk"):
        table["zfs"] = {"pool_options": dict(setup.zfs.pool_options), "dataset_options": dict(setup.zfs.dataset_options)}
        if setup.zfs.vdev != "disk":
            table["zfs"]["vdev"] = setup.zfs.vdev
    if setup.profile is not None:
        table["profile"] = setup.profile
    if setup.device is not None:
        table["device"] = {f: getattr(setup.device, f) for f in setup.device.changed()}
    if setup.image is not None:
        im = setup.image
        t: JSONObject = {"format": im.format, "size": im.size, "cache": im.cache}
        for k, v in im.options:
            kind = IMAGE_OPTIONS[im.format][k]
            t[k] = (v == "on") if kind == "bool" else int(v) if kind == "int" else v
        if im.directory:
            t["directory"] = im.directory
        if im.aio:
            t["aio"] = im.aio
        if im.guest_fs != DEFAULT_GUEST_FS:
            t["guest_fs"] = im.guest_fs
        table["image"] = t
        if im.directory:
            del table["mkfs"]
    return table
