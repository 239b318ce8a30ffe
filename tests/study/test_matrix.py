"""Storage setups and the study driver (``storbench matrix``).

Pure parts (setups TOML, ``--fs``, command construction, nbd job files), the
driver with a fake command runner (ZFS, which this machine cannot run), and real
studies on loop devices as root: filesystems, failures in the middle (mkfs, fio
killed, SIGTERM then --resume), write-cache setups and images through qemu-nbd.
After every real study: no loop device over its file, no mount, no qemu-nbd,
no temporary directory left.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from storbench.errors import SuiteError, UsageError
from storbench.jobs.jobfile import build_job
from storbench.model import Overrides, Target, Workload
from storbench.run import runner
from storbench.study import matrix as mx
from storbench.study.build import check_tools
from storbench.study.devsettings import DeviceSettings
from storbench.study.images import ImageError, mount_fstype, serve, start_export
from storbench.study.setup_fs import mkfs_argv
from storbench.study.setup_images import qemu_img_create_argv, qemu_nbd_argv, qsd_fuse_argv
from storbench.study.setup_zfs import zfs_create_argv, zpool_create_argv
from storbench.study.setups import (
    ImageSpec,
    Setup,
    SetupError,
    ZfsLayout,
    parse_setups_text,
    setup_from_table,
    setup_to_table,
    setups_from_fs_list,
)
from storbench.suites import builtin_catalog

from conftest import DATA, needs_fio, needs_root

WORKLOADS = ("rnd4k-q1t1-read", "rnd4k-q1t1-write")
WORKLOAD_ARGS = [a for w in WORKLOADS for a in ("--workload", w)]
SMALL = ["--size", "16m", "--runtime", "500ms"]

# --------------------------------------------------------------------------- setups files

FULL = """
[setup.ext4-plain]
description = "ext4 as mkfs makes it"
mkfs = "ext4"
mkfs_options = ["-E", "stride=16,stripe_width=64"]
mount_options = "noatime"

[setup.btrfs-zstd]
mkfs = "btrfs"
mount_options = "compress-force=zstd"

[setup.zfs-16k]
mkfs = "zfs"
zfs = { pool_options = { ashift = 12 }, dataset_options = { recordsize = "16k", compression = "lz4", primarycache = "metadata" } }

[setup.wt]
mkfs = "xfs"
device = { write_cache = "write through", scheduler = "none", read_ahead_kb = 128 }

[setup.qcow2-64k]
mkfs = "ext4"
image = { format = "qcow2", size = "1g", cluster_size = "64k", preallocation = "metadata", lazy_refcounts = true }

[setup.zvol-8k]
mkfs = "zfs"
image = { format = "zvol", size = "2g", volblocksize = "8k" }

[setup.raw-dir]
image = { format = "raw", size = "512m", directory = "/srv/images", cache = "none", aio = "native" }

[setup.raw-device]
mkfs = "none"
"""


def test_setups_file_is_read_into_records():
    setups = parse_setups_text(FULL, "s.toml")
    assert [s.name for s in setups] == ["ext4-plain", "btrfs-zstd", "zfs-16k", "wt", "qcow2-64k", "zvol-8k", "raw-dir", "raw-device"]
    by = {s.name: s for s in setups}
    assert by["ext4-plain"].mkfs_options == ("-E", "stride=16,stripe_width=64")
    assert by["btrfs-zstd"].mount_options == "compress-force=zstd"
    assert by["zfs-16k"].zfs == ZfsLayout(
        pool_options=(("ashift", "12"),),
        dataset_options=(("recordsize", "16k"), ("compression", "lz4"), ("primarycache", "metadata")),
    )
    assert by["wt"].device == DeviceSettings(write_cache="write through", scheduler="none", read_ahead_kb=128)
    q = by["qcow2-64k"].image
    assert q == ImageSpec(format="qcow2", size="1g", options=(("cluster_size", "64k"), ("preallocation", "metadata"), ("lazy_refcounts", "on")))
    assert q.cache == "none"  # the host page cache stays out unless asked for
    assert by["zvol-8k"].image.option("volblocksize") == "8k"
    assert by["raw-dir"].mkfs == "none" and not by["raw-dir"].uses_scratch
    assert by["raw-device"].image is None and by["raw-device"].uses_scratch


def test_setup_tables_round_trip():
    """What a study stores in its runs (for --resume) reads back as the same setups."""
    for setup in parse_setups_text(FULL, "s.toml") + setups_from_fs_list("ext4,btrfs-zstd,zfs-lz4,none"):
        assert setup_from_table(setup.name, setup_to_table(setup)) == setup


@pytest.mark.parametrize(
    "toml, words",
    [
        ('[setup.a]\nmkfs = "ntfs"', "s.toml: [setup.a] mkfs: 'ntfs' is not allowed (allowed: 'ext4', 'xfs', 'btrfs', 'zfs', 'none')"),
        ('[setup.a]\nmount_options = "x"', "s.toml: [setup.a] mkfs: is required"),
        ('[setup.a]\nmkfs = "ext4"\nmkfs_option = ["-b", "4096"]', "[setup.a] mkfs_option: unknown key (allowed: description, mkfs, mkfs_options"),
        ('[setup.a]\nmkfs = "ext4"\nmkfs_options = "-b 4096"', "[setup.a] mkfs_options: must be a list of strings"),
        ('[setup.a]\nmkfs = "zfs"\nmkfs_options = ["-o", "ashift=12"]', "mkfs_options: applies to mkfs ext4, xfs and btrfs, not 'zfs' (use zfs = { pool_options"),
        ('[setup.a]\nmkfs = "none"\nmount_options = "noatime"', "mount_options: applies to mkfs ext4, xfs and btrfs, not 'none'"),
        ('[setup.a]\nmkfs = "btrfs"\nmount_options = "compress=zstd, noatime"', "mount_options: must be one comma-separated string without spaces"),
        ('[setup.a]\nmkfs = "ext4"\nzfs = { dataset_options = { recordsize = "16k" } }', "[setup.a] zfs: applies only to mkfs = \"zfs\""),
        ('[setup.a]\nmkfs = "zfs"\nzfs = { vdev = "mirrors" }', "zfs.vdev: 'mirrors' is not a layout storbench builds (allowed: 'disk', 'mirror', 'mirror-of-mirrors', 'raidz1', 'raidz2')"),
        ('[setup.a]\nmkfs = "ext4"\nprofile = "raid1"', "[setup.a] profile: applies only to mkfs = \"btrfs\", not 'ext4'"),
        ('[setup.a]\nmkfs = "btrfs"\nprofile = "raid5"', "[setup.a] profile: 'raid5' is not allowed (allowed: 'single', 'raid1', 'raid10')"),
        ('[setup.a]\nmkfs = "zfs"\nzfs = { dataset_options = { mountpoint = "/x" } }', "zfs.dataset_options.mountpoint: is set by storbench"),
        ('[setup.a]\nmkfs = "zfs"\nzfs = { dataset_options = { "Record Size" = "16k" } }', "is not a ZFS property name"),
        ('[setup.a]\nmkfs = "ext4"\ndevice = { write_cache = "off" }', "device.write_cache: 'off' is not allowed (allowed: 'write back', 'write through')"),
        ('[setup.a]\nmkfs = "ext4"\ndevice = { read_ahead_kb = -1 }', "[setup.a] device: read_ahead_kb -1 is not a whole number >= 0"),
        ('[setup.a]\nmkfs = "ext4"\ndevice = { cache = "on" }', "device.cache: unknown key (allowed: write_cache, scheduler, read_ahead_kb)"),
        ('[setup.a]\nmkfs = "ext4"\nimage = { format = "vmdk" }', "image.format: 'vmdk' is not allowed (allowed: 'raw', 'qcow2', 'zvol')"),
        ('[setup.a]\nmkfs = "ext4"\nimage = { format = "qcow2", cluster_size = "48k" }', "image.cluster_size: '48k' must be a power of two"),
        ('[setup.a]\nmkfs = "ext4"\nimage = { format = "raw", cluster_size = "64k" }', "image.cluster_size: unknown key (allowed: format, size, directory, cache, aio, guest_fs, preallocation)"),
        ('[setup.a]\nmkfs = "ext4"\nimage = { format = "qcow2", preallocation = "sparse" }', "image.preallocation: 'sparse' is not allowed"),
        ('[setup.a]\nmkfs = "ext4"\nimage = { format = "qcow2", lazy_refcounts = "yes" }', "image.lazy_refcounts: must be true or false"),
        ('[setup.a]\nmkfs = "ext4"\nimage = { format = "qcow2", size = "lots" }', "image.size: invalid size 'lots'"),
        ('[setup.a]\nmkfs = "ext4"\nimage = { format = "raw", cache = "writeback", aio = "native" }', "image.aio: 'native' needs cache 'none' or 'directsync'"),
        ('[setup.a]\nmkfs = "ext4"\nimage = { format = "zvol" }', "image.format: 'zvol' lives in a ZFS pool: it needs mkfs = \"zfs\""),
        ('[setup.a]\nmkfs = "none"\nimage = { format = "raw" }', "mkfs: 'none' leaves no filesystem to hold the image file"),
        ('[setup.a]\nmkfs = "ext4"\nimage = { format = "raw", directory = "/srv" }', "image.directory: puts the image on a given directory, so mkfs = 'ext4' would build nothing"),
        ('[setup.a]\nimage = { format = "raw", directory = "srv" }', "image.directory: 'srv' must be an absolute path"),
        ('[setup.a]\nimage = { format = "raw", directory = "/srv" }\ndevice = { write_cache = "write back" }', "device: applies to the scratch device"),
        ('[setup."a b"]\nmkfs = "ext4"', "s.toml: [setup.a b]: a setup name may hold letters, digits"),
        ('[setups.a]\nmkfs = "ext4"', "s.toml: setups: unknown top-level key"),
        ("", "s.toml: defines no setup"),
        ('[setup.a\nmkfs = "ext4"', "s.toml: TOML syntax error"),
    ],
)
def test_setup_errors_are_one_line_naming_file_key_and_allowed_values(toml, words):
    with pytest.raises(SetupError) as info:
        parse_setups_text(toml, "s.toml")
    message = str(info.value)
    assert "\n" not in message
    assert words in message, message
    assert isinstance(info.value, UsageError)  # exit code 2


def test_fs_shorthands():
    setups = setups_from_fs_list("ext4,xfs,btrfs,btrfs-zstd,zfs,zfs-lz4,none")
    by = {s.name: s for s in setups}
    assert [s.mkfs for s in setups] == ["ext4", "xfs", "btrfs", "btrfs", "zfs", "zfs", "none"]
    assert by["btrfs-zstd"].mount_options == "compress-force=zstd"
    assert by["btrfs"].mount_options is None
    assert by["zfs-lz4"].zfs.dataset_options == (("compression", "lz4"),)
    with pytest.raises(SetupError, match=r"--fs: unknown filesystem 'ntfs' \(allowed: ext4, xfs, btrfs, btrfs-zstd"):
        setups_from_fs_list("ext4,ntfs")
    with pytest.raises(SetupError, match="'ext4' is given twice"):
        setups_from_fs_list("ext4,xfs,ext4")
    with pytest.raises(SetupError, match="comma-separated"):
        setups_from_fs_list("ext4,,xfs")


# --------------------------------------------------------------------------- commands


def test_mkfs_commands():
    assert mkfs_argv(Setup("a", "ext4"), "/dev/loop7") == [
        "mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", "/dev/loop7"
    ]  # fmt: skip
    # the user's own -E replaces storbench's (mke2fs keeps only the last -E)
    assert mkfs_argv(Setup("a", "ext4", mkfs_options=("-E", "stride=16")), "/dev/loop7") == [
        "mkfs.ext4", "-q", "-F", "-E", "stride=16", "/dev/loop7"
    ]  # fmt: skip
    assert mkfs_argv(Setup("a", "xfs", mkfs_options=("-d", "su=64k,sw=4")), "/dev/sdz") == ["mkfs.xfs", "-q", "-f", "-d", "su=64k,sw=4", "/dev/sdz"]
    assert mkfs_argv(Setup("a", "btrfs"), "/dev/sdz") == ["mkfs.btrfs", "-q", "-f", "/dev/sdz"]
    with pytest.raises(ValueError):
        mkfs_argv(Setup("a", "zfs"), "/dev/sdz")


def test_zfs_commands():
    [setup] = [s for s in parse_setups_text(FULL, "s") if s.name == "zfs-16k"]
    assert zpool_create_argv(setup, "storbench-ab12", "/dev/sdz") == [
        "zpool", "create", "-f", "-o", "cachefile=none", "-o", "ashift=12", "-O", "mountpoint=none", "storbench-ab12", "/dev/sdz"
    ]  # fmt: skip
    assert zfs_create_argv(setup, "storbench-ab12/bench", "/tmp/m") == [
        "zfs", "create", "-o", "mountpoint=/tmp/m", "-o", "recordsize=16k", "-o", "compression=lz4", "-o", "primarycache=metadata",
        "storbench-ab12/bench",
    ]  # fmt: skip
    [zvol] = [s for s in parse_setups_text(FULL, "s") if s.name == "zvol-8k"]
    assert zfs_create_argv(zvol, "p/image", None) == ["zfs", "create", "-V", str(2 << 30), "-o", "volblocksize=8192", "p/image"]


def test_image_commands():
    im = ImageSpec(format="qcow2", size="1g", options=(("cluster_size", "64k"), ("preallocation", "metadata"), ("lazy_refcounts", "on")))
    assert qemu_img_create_argv(im, "/m/a.qcow2") == [
        "qemu-img", "create", "-q", "-f", "qcow2", "-o", "cluster_size=65536,preallocation=metadata,lazy_refcounts=on", "/m/a.qcow2", str(1 << 30)
    ]  # fmt: skip
    assert qemu_img_create_argv(ImageSpec(format="raw", size="64m"), "/m/a.img") == ["qemu-img", "create", "-q", "-f", "raw", "/m/a.img", str(64 << 20)]
    assert qemu_nbd_argv(im, "/m/a.qcow2", "/t/s.sock") == ["qemu-nbd", "--socket=/t/s.sock", "-f", "qcow2", "--cache=none", "-t", "/m/a.qcow2"]
    zv = ImageSpec(format="zvol", size="1g", aio="native")
    assert qemu_nbd_argv(zv, "/dev/zvol/p/image", "/t/s.sock") == [
        "qemu-nbd", "--socket=/t/s.sock", "-f", "raw", "--cache=none", "--aio=native", "-t", "/dev/zvol/p/image"
    ]  # fmt: skip


# --------------------------------------------------------------------------- nbd job files


def test_nbd_target_job():
    w = builtin_catalog().workload("rnd4k-q1t1-write")
    spec = build_job(w, Target(kind="nbd", path="/tmp/x/s.sock"), Overrides(size="16m", runtime="1"), export_size="64m")
    lines = spec.job_text.splitlines()
    assert lines[0] == "# storbench: ioengine=libaio replaced by nbd: the target is an NBD export, fio's nbd engine is its client"
    assert lines[1] == "[rnd4k-q1t1-write]"
    opts = dict(spec.options)
    assert opts["ioengine"] == "nbd" and opts["uri"] == "nbd+unix:///?socket=/tmp/x/s.sock"
    assert opts["size"] == "16m" and "filename" not in opts
    assert next(k for k, _ in spec.options) == "ioengine"  # the engine stays where the workload put it
    assert spec.options[-1][0] == "uri"
    assert spec.test_files == ()
    # no --size: the workload's 1g is capped at the export's size, with a note
    capped = build_job(w, Target(kind="nbd", path="/tmp/x/s.sock"), Overrides(), export_size="64m")
    assert dict(capped.options)["size"] == "64m"
    assert "# storbench: size=1g capped at the NBD export's size 64m" in capped.job_text
    # no size anywhere: the export's
    bare = Workload("w", "", (("rw", "randread"),))
    assert dict(build_job(bare, Target(kind="nbd", path="/s.sock"), export_size="1g").options)["size"] == "1g"
    assert dict(build_job(bare, Target(kind="nbd", path="/s.sock")).options).get("size") is None
    assert not build_job(bare, Target(kind="nbd", path="/s.sock")).job_text.startswith("#")  # nothing was replaced
    with pytest.raises(SuiteError, match="'uri' is set by storbench"):
        build_job(Workload("w", "", (("uri", "nbd://x"),)), Target(kind="nbd", path="/s.sock"))


# --------------------------------------------------------------------------- the driver with a fake system (ZFS)

#: ``zpool status -P`` of a one-device pool, written in OpenZFS 2.1's format (no ZFS here to record it).
ZPOOL_STATUS_ONE_DISK = """  pool: {pool}
 state: ONLINE
config:

\tNAME            STATE     READ WRITE CKSUM
\t{pool}  ONLINE       0     0     0
\t  {dev}      ONLINE       0     0     0

errors: No known data errors
"""
#: a recorded mirror pool (with log and cache), renamed to the pool the fake creates
ZPOOL_STATUS_MIRROR = (DATA / "storage" / "zpool-status-P-tank-mirror-log-cache.txt").read_text().replace("tank", "storbench-test")
#: recorded form of ``zfs get -Hp -o property,value ...`` of a zvol: volblocksize 16384, volsize 20 GiB, compression zstd
ZFS_GET_ZVOL = (DATA / "storage" / "zfs-get-Hp-o-property-value-tank-vols-db.txt").read_text()


class FakeSystem:
    """Answers like the real tools would; records every command."""

    def __init__(self, tmp_path: Path, *, zfs_get: str = "recordsize\t16384\ncompression\tlz4\nprimarycache\tmetadata\n",
                 zpool_status: str | None = None, fail: str | None = None) -> None:  # fmt: skip
        self.calls: list[list[str]] = []
        self.pools: set[str] = set()
        self.mounted: set[str] = set()  # ZFS datasets mount themselves
        self.loops: dict[str, str] = {}
        self.zfs_get = zfs_get
        self.zpool_status = zpool_status
        self.fail = fail
        self.dev_root = tmp_path / "dev"
        self.servers: list[FakeServer] = []
        self.system = mx.System(
            run=self.run, which=lambda name: f"/usr/sbin/{name}", sys_root=str(tmp_path / "sys"), dev_root=str(self.dev_root),
            serve=self.serve, export=self.export, is_mount=lambda p: p in self.mounted, pool_name=lambda: "storbench-test",
            zfs_implementation=lambda: "OpenZFS",
        )  # fmt: skip

    def run(self, argv):
        argv = list(argv)
        self.calls.append(argv)
        if self.fail and argv[0] == self.fail:
            return 1, "", f"cannot create '{argv[-1]}': invalid property value"
        match argv[:2]:
            case ["losetup", "-f"]:
                dev = f"/dev/loop{99 - len(self.loops)}"  # the scratch device is loop99, a guest's loop98
                self.loops[dev] = argv[-1]
                return 0, f"{dev}\n", ""
            case ["losetup", "-j"]:
                return 0, "".join(f"{d}: []: ({f})\n" for d, f in self.loops.items() if f == argv[-1]), ""
            case ["losetup", "-d"]:
                self.loops.pop(argv[-1], None)
                return 0, "", ""
            case ["zpool", "create"]:
                self.pools.add(argv[-2])
                return 0, "", ""
            case ["zpool", "status"]:
                text = self.zpool_status or ZPOOL_STATUS_ONE_DISK.format(pool=argv[-1], dev=self.dev_path)
                return 0, text, ""
            case ["zpool", "list"]:
                return (0, argv[-1] + "\n", "") if argv[-1] in self.pools else (1, "", f"cannot open '{argv[-1]}': no such pool")
            case ["zpool", "destroy"]:
                self.pools.discard(argv[-1])
                self.mounted.clear()
                return 0, "", ""
            case ["zfs", "create"]:
                self.mounted.update(a.split("=", 1)[1] for a in argv if a.startswith("mountpoint="))
                if "-V" in argv:  # udev makes the zvol's device node
                    node = self.dev_root / "zvol" / argv[-1]
                    node.parent.mkdir(parents=True, exist_ok=True)
                    node.touch()
                return 0, "", ""
            case ["zfs", "get"]:
                return 0, self.zfs_get, ""
            case ["qemu-img", "create"]:
                Path(argv[-2]).touch()
                return 0, "", ""
        return 0, "", ""

    dev_path = "/dev/loop99"

    def serve(self, image, path, sock):
        server = FakeServer(["qemu-nbd", f"--socket={sock}", "-f", image.qemu_format, f"--cache={image.cache}", "-t", path])
        self.servers.append(server)
        return server

    def export(self, image, path, export_path):
        server = FakeServer(qsd_fuse_argv(image, path, export_path))
        self.servers.append(server)
        return server

    def commands(self) -> list[str]:
        return [" ".join(c) for c in self.calls if c[:2] not in (["losetup", "-j"], ["zpool", "list"])]


class FakeServer:
    def __init__(self, argv):
        self.argv = argv
        self.stopped = False

    def stop(self):
        self.stopped = True
        sock = next((a.split("=", 1)[1] for a in self.argv if a.startswith("--socket=")), "")
        short = os.path.dirname(sock)
        if os.path.basename(short).startswith("sb-nbd-") and os.path.isdir(short):  # as NbdServer.stop (idempotent)
            os.rmdir(short)


class FakeFio:
    """A real fio 3.33 JSON result for every job."""

    path = "fio"
    remote = False

    def __init__(self) -> None:
        self.jobs: list[str] = []
        self.output = (DATA / "fio-json" / "h_randrw.json").read_text()

    def version(self) -> str:
        return "fio-3.33"

    def run(self, job_text, on_status):
        self.jobs.append(job_text)
        return runner.FioInvocation(returncode=0, output_text=self.output, stderr_text="", stdout_text="")


class NoStorage(runner.NoTelemetry):
    """No storage description, no sampling (the Telemetry protocol's every part: NoTelemetry's)."""


def _store(tmp_path: Path):
    from storbench.store import Store

    return Store.open(f"sqlite:///{tmp_path / 'r.sqlite'}")


def _study(setups, label="z") -> mx.Study:
    catalog = builtin_catalog()
    return mx.Study(label=label, setups=tuple(setups), workloads=tuple(catalog.workload(n) for n in WORKLOADS),
                    overrides=Overrides(size="16m", runtime="1"))  # fmt: skip


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """storbench's temporary directories (the matrix's, fio's) go here, so a test can see they are gone."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def test_zfs_study_with_a_fake_system(tmp_path, private_tmp):
    """A ZFS dataset setup and a zvol image setup: the commands, the checks, the teardown."""
    setups = parse_setups_text(
        """
[setup.zfs-16k]
mkfs = "zfs"
zfs = { pool_options = { ashift = 12 }, dataset_options = { recordsize = "16k", compression = "lz4", primarycache = "metadata" } }
""", "s")  # fmt: skip
    fake = FakeSystem(tmp_path)
    store = _store(tmp_path)
    events = []
    fio = FakeFio()
    outcome = mx.run_study(
        _study(setups), mx.Scratch(kind="loop", path=str(tmp_path / "loop.img"), size="400m"),
        store=store, executor=fio, reporter=runner.SilentReporter(), clock=lambda: "2026-01-01T00:00:00+00:00",
        system=fake.system, observe=lambda e, i: events.append((e, dict(i))), telemetry=NoStorage(),
    )  # fmt: skip
    [setup] = outcome.setups
    assert setup.status == "complete" and setup.stored == 2
    mnt = fake.calls[[c[:2] for c in fake.calls].index(["zfs", "create"])][3].split("=", 1)[1]
    assert fake.commands() == [
        "zpool status -x",  # ZFS answers, before anything is touched
        f"losetup -f --show --direct-io=on {tmp_path / 'loop.img'}",
        "wipefs -a -q /dev/loop99",
        "zpool create -f -o cachefile=none -o ashift=12 -O mountpoint=none storbench-test /dev/loop99",
        "zpool status -P storbench-test",
        f"zfs create -o mountpoint={mnt} -o recordsize=16k -o compression=lz4 -o primarycache=metadata storbench-test/bench",
        "zfs get -Hp -o property,value recordsize,compression,primarycache storbench-test/bench",
        "zpool destroy -f storbench-test",
        "wipefs -a -q /dev/loop99",
        "losetup -d /dev/loop99",
    ]
    assert [e for e, _ in events] == ["scratch-ready", "setup-ready", "setup-done", "before-detach"]
    assert all(f"filename={mnt}/storbench.testfile" in job for job in fio.jobs)
    [info] = store.list_runs()
    assert info.label == "z/zfs-16k" and info.status == "complete" and info.result_count == 2
    meta = store.run_meta(info.run_id)
    assert meta["setup"] == {"name": "zfs-16k", **setup_to_table(setups[0])}
    assert mx.Study.from_meta(meta["study"]).setups == tuple(setups)
    assert not (tmp_path / "loop.img").exists()
    assert os.listdir(private_tmp) == []
    store.close()


def test_zvol_image_setup_with_a_fake_system(tmp_path, private_tmp):
    """A zvol checked against a recorded ``zfs get`` output, served by (fake) qemu-nbd, reached with ioengine=nbd."""
    [setup] = parse_setups_text(
        '[setup.zvol]\nmkfs = "zfs"\nzfs = { dataset_options = { compression = "zstd" } }\nimage = { format = "zvol", size = "20g", volblocksize = "16k" }',
        "s",
    )
    fake = FakeSystem(tmp_path, zfs_get=ZFS_GET_ZVOL)
    store = _store(tmp_path)
    fio = FakeFio()
    outcome = mx.run_study(
        _study([setup]), mx.Scratch(kind="loop", path=str(tmp_path / "loop.img"), size="400m"),
        store=store, executor=fio, reporter=runner.SilentReporter(), clock=lambda: "t", system=fake.system, telemetry=NoStorage(),
    )  # fmt: skip
    assert outcome.setups[0].status == "complete"
    assert "zfs create -V 21474836480 -o volblocksize=16384 -o compression=zstd storbench-test/image" in fake.commands()
    assert "zfs get -Hp -o property,value compression,volsize,volblocksize storbench-test/image" in fake.commands()
    [server] = fake.servers
    assert server.stopped and server.argv[-1] == str(fake.dev_root / "zvol" / "storbench-test" / "image")
    assert all("ioengine=nbd" in job and "uri=nbd+unix:///?socket=" in job for job in fio.jobs)
    [rec, _] = store.results(outcome.setups[0].run_id)
    assert rec.space["image"]["format"] == "zvol" and rec.space["image"]["served_with"][:2] == server.argv[:2]
    assert "storbench-test" not in fake.pools
    store.close()


def _load_study(setups, label="g") -> mx.Study:
    """fio's 4k random write and fs_mark (a short load: 3 loops of 1,000 files of 4 KiB, no sync)."""
    catalog = builtin_catalog()
    workloads = (catalog.workload("rnd4k-q1t1-write"), catalog.workload("fsmark-4k-nosync"))
    return mx.Study(label=label, setups=tuple(setups), workloads=workloads, overrides=Overrides(size="16m", runtime="1"))


@pytest.mark.skipif(shutil.which("fs_mark") is None, reason="fs_mark is installed by tests/setup-system.sh")
def test_loads_run_in_a_guest_filesystem_made_inside_a_qcow2_image(tmp_path, private_tmp):
    """fio reaches the image over NBD; then qemu-nbd stops, qemu-storage-daemon exports the image
    as a file, a loop device goes on it, ext4 on that, and the load runs there (fake system: the
    commands and their order; the load itself runs for real in the guest mountpoint)."""
    [setup] = parse_setups_text('[setup.q]\nmkfs = "ext4"\nimage = { format = "qcow2", size = "64m", cache = "writeback" }', "s")
    fake = FakeSystem(tmp_path)
    store = _store(tmp_path)
    fio = FakeFio()
    said: list[str] = []
    outcome = mx.run_study(
        _load_study([setup]), mx.Scratch(kind="loop", path=str(tmp_path / "loop.img"), size="400m"),
        store=store, executor=fio, reporter=runner.SilentReporter(), clock=lambda: "t", system=fake.system,
        telemetry=NoStorage(), say=said.append,
    )  # fmt: skip
    [o] = outcome.setups
    assert o.status == "complete", o.reason
    nbd, qsd = fake.servers
    assert nbd.argv[0] == "qemu-nbd" and nbd.stopped and qsd.stopped
    image = nbd.argv[-1]
    tmpdir = Path(image).parent.parent  # the study's directory: mnt-q holds the image
    assert image == str(tmpdir / "mnt-q" / "storbench-q.qcow2")
    export = str(tmpdir / ".storbench-q.export")
    guest = str(tmpdir / "guest-q")
    assert qsd.argv == [
        "qemu-storage-daemon",
        "--blockdev", f"driver=file,node-name=file,filename={image},cache.direct=off,cache.no-flush=off",
        "--blockdev", "driver=qcow2,node-name=disk,file=file",
        "--export", f"type=fuse,id=guest,node-name=disk,mountpoint={export},writable=on,writethrough=off",
    ]  # fmt: skip
    cmds = fake.commands()
    guest_part = cmds[cmds.index(f"losetup -f --show {export}"):]
    assert guest_part == [
        f"losetup -f --show {export}",  # buffered: see storbench.study.guest
        "mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/loop98",
        f"mount /dev/loop98 {guest}",
        "losetup -d /dev/loop98",  # teardown: the guest first (its mount was not real here), then the setup
        "wipefs -a -q /dev/loop99",
        "losetup -d /dev/loop99",
    ]
    assert len(fio.jobs) == 1 and "ioengine=nbd" in fio.jobs[0]  # fio's workload ran over NBD, before the guest was made
    fio_rec, load_rec = store.results(o.run_id)
    # one configuration: fio over NBD and the load in the guest are both the image's
    assert [(r.workload, r.target) for r in (fio_rec, load_rec)] == [("rnd4k-q1t1-write", "storbench-matrix/image-q"), ("fsmark-4k-nosync", "storbench-matrix/image-q")]
    assert load_rec.fio.measures[0].unit == "files/s" and load_rec.fio.measures[0].value > 0
    assert load_rec.space["image"]["guest_fs"] == "ext4" and load_rec.space["image"]["guest_made_with"][0] == " ".join(qsd.argv) + " (in the background)"
    assert "served_with" in fio_rec.space["image"] and "guest_fs" not in fio_rec.space["image"]
    assert any("application loads run in a guest ext4 made inside the image (qcow2 64m" in line for line in said), said
    assert fake.loops == {} and os.listdir(private_tmp) == []
    store.close()


def test_loads_in_a_zvol_go_on_a_guest_filesystem_made_on_the_zvol(tmp_path, private_tmp):
    """A zvol is a block device: the guest filesystem (xfs here) is made on it, no export."""
    [setup] = parse_setups_text(
        '[setup.zv]\nmkfs = "zfs"\nimage = { format = "zvol", size = "20g", volblocksize = "16k", guest_fs = "xfs" }', "s"
    )
    fake = FakeSystem(tmp_path, zfs_get=ZFS_GET_ZVOL.replace("\ncompression\tzstd", ""))
    store = _store(tmp_path)
    outcome = mx.run_study(
        _load_study([setup]), mx.Scratch(kind="loop", path=str(tmp_path / "loop.img"), size="400m"),
        store=store, executor=FakeFio(), reporter=runner.SilentReporter(), clock=lambda: "t", system=fake.system, telemetry=NoStorage(),
    )  # fmt: skip
    [o] = outcome.setups
    assert o.status == "complete", o.reason
    zvol = str(fake.dev_root / "zvol" / "storbench-test" / "image")
    cmds = fake.commands()
    assert f"mkfs.xfs -q -f {zvol}" in cmds and [s.argv[0] for s in fake.servers] == ["qemu-nbd"]
    assert cmds.index(f"mkfs.xfs -q -f {zvol}") < cmds.index("zpool destroy -f storbench-test")
    assert [r.target for r in store.results(o.run_id)] == ["storbench-matrix/image-zv"] * 2
    store.close()


def test_a_study_with_loads_and_images_needs_qemu_storage_daemon():
    setups = parse_setups_text('[setup.q]\nmkfs = "ext4"\nimage = { format = "qcow2", size = "64m", guest_fs = "btrfs" }', "s")
    scratch = mx.Scratch(kind="loop", path="/x/loop.img", size="400m")
    has = {"wipefs", "mkfs.ext4", "mount", "umount", "qemu-img", "qemu-nbd", "losetup", "mkfs.btrfs"}
    which = lambda name: f"/usr/bin/{name}" if name in has else None  # noqa: E731
    check_tools(setups, scratch, which)  # fio alone: no guest filesystem
    with pytest.raises(UsageError) as info:
        check_tools(setups, scratch, which, with_loads=True)
    assert str(info.value) == (
        "setup 'q' needs qemu-storage-daemon, which is not installed (Debian package qemu-system-common); nothing was changed"
    )
    assert [s.image.guest_fs for s in setups] == ["btrfs"]
    assert setup_to_table(setups[0])["image"]["guest_fs"] == "btrfs"
    with pytest.raises(SetupError, match=r"image.guest_fs: 'zfs' is not allowed \(allowed: 'ext4', 'xfs', 'btrfs'\)"):
        parse_setups_text('[setup.q]\nmkfs = "ext4"\nimage = { format = "raw", guest_fs = "zfs" }', "s")


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"zfs_get": ZFS_GET_ZVOL.replace("volblocksize\t16384", "volblocksize\t8192")}, "storbench-test/image volblocksize is '8192', not '16384'"),
        ({"zpool_status": ZPOOL_STATUS_MIRROR}, "zpool storbench-test was created as mirror mirror-0, not one vdev of /dev/loop99"),
        ({"fail": "zfs"}, "zfs create -V 21474836480 -o volblocksize=16384 -o compression=zstd storbench-test/image failed: cannot create"),
    ],
)
def test_zfs_that_did_not_do_as_asked_fails_the_setup_and_tears_down(tmp_path, private_tmp, kwargs, words):
    [setup] = parse_setups_text(
        '[setup.zvol]\nmkfs = "zfs"\nzfs = { dataset_options = { compression = "zstd" } }\nimage = { format = "zvol", size = "20g", volblocksize = "16k" }',
        "s",
    )
    fake = FakeSystem(tmp_path, **kwargs)
    store = _store(tmp_path)
    outcome = mx.run_study(
        _study([setup]), mx.Scratch(kind="loop", path=str(tmp_path / "loop.img"), size="400m"),
        store=store, executor=FakeFio(), reporter=runner.SilentReporter(), clock=lambda: "t", system=fake.system, telemetry=NoStorage(),
    )  # fmt: skip
    [o] = outcome.setups
    assert o.status == "failed" and words in o.reason, o.reason
    assert "zpool destroy -f storbench-test" in fake.commands() and not fake.pools
    assert fake.loops == {} and os.listdir(private_tmp) == []
    [info] = store.list_runs()
    assert info.status == "failed" and words in info.reason
    store.close()


class Interrupting(FakeSystem):
    """Ctrl-C/SIGTERM (or a broken pipe's SystemExit) arriving while one command runs."""

    def __init__(self, tmp_path, at: list[str], exc: BaseException | None = None, *, real_signal: bool = False) -> None:
        super().__init__(tmp_path)
        self.at = at
        self.exc = exc
        self.real_signal = real_signal

    def run(self, argv):
        out = super().run(argv)
        if list(argv[: len(self.at)]) == self.at:
            self.at = ["(done)"]
            if self.real_signal:
                os.kill(os.getpid(), signal.SIGTERM)  # delivered here, in the main thread
            else:
                raise self.exc
        return out


@pytest.mark.parametrize("exc", [KeyboardInterrupt("SIGTERM"), KeyboardInterrupt("Ctrl-C")], ids=["SIGTERM", "Ctrl-C"])
def test_interrupt_while_building_tears_down_and_keeps_the_study(tmp_path, private_tmp, exc):
    fake = Interrupting(tmp_path, ["zfs", "create"], exc)
    store = _store(tmp_path)
    scratch = mx.Scratch(kind="loop", path=str(tmp_path / "loop.img"), size="400m")
    with pytest.raises(mx.Interrupted) as info:
        mx.run_study(
            _study(setups_from_fs_list("zfs,zfs-lz4")), scratch, store=store, executor=FakeFio(), reporter=runner.SilentReporter(),
            clock=lambda: "t", system=fake.system, telemetry=NoStorage(),
        )  # fmt: skip
    how = str(exc)
    assert str(info.value).startswith(f"interrupted ({how}) in setup 'zfs' (before its workloads ran); 0 result(s) stored")
    assert str(info.value).endswith("continue with 'storbench matrix --resume z'")
    assert fake.commands()[-3:] == ["zpool destroy -f storbench-test", "wipefs -a -q /dev/loop99", "losetup -d /dev/loop99"]
    assert fake.loops == {} and not fake.pools and os.listdir(private_tmp) == [] and not (tmp_path / "loop.img").exists()
    [info_] = store.list_runs()
    assert info_.label == "z/zfs" and info_.status == "incomplete" and info_.reason.startswith(f"interrupted ({how})")
    # --resume builds it again and finishes both setups
    fake2 = FakeSystem(tmp_path)
    again = mx.run_study(
        _study(setups_from_fs_list("zfs,zfs-lz4")), scratch, store=store, executor=FakeFio(), reporter=runner.SilentReporter(),
        clock=lambda: "t", system=fake2.system, telemetry=NoStorage(), resume=True,
    )  # fmt: skip
    assert [(o.setup, o.status, o.stored) for o in again.setups] == [("zfs", "complete", 2), ("zfs-lz4", "complete", 2)]
    assert [i.run_id for i in store.list_runs()] == [2, 1]  # the interrupted run was continued, not repeated
    store.close()


def test_a_signal_while_the_next_setups_run_is_created_ends_that_run_too(tmp_path, private_tmp, monkeypatch):
    """SIGTERM lands while the second setup's run is being created (between two setups): that run
    is marked incomplete like the first, never left 'running' with no result (issue 25: sig4/xfs)."""
    fake = FakeSystem(tmp_path)
    store = _store(tmp_path)
    created = []
    original = type(store).create_run

    def create_run(self, *args, **kwargs):
        run_id = original(self, *args, **kwargs)
        created.append(run_id)
        if len(created) == 2:
            os.kill(os.getpid(), signal.SIGTERM)  # delivered while the signal is held
        return run_id

    monkeypatch.setattr(type(store), "create_run", create_run)
    scratch = mx.Scratch(kind="loop", path=str(tmp_path / "loop.img"), size="400m")
    with pytest.raises(mx.Interrupted) as info:
        mx.run_study(
            _study(setups_from_fs_list("zfs,zfs-lz4")), scratch, store=store, executor=FakeFio(), reporter=runner.SilentReporter(),
            clock=lambda: "t", system=fake.system, telemetry=NoStorage(),
        )  # fmt: skip
    assert "interrupted (SIGTERM) in setup 'zfs-lz4'" in str(info.value)
    by_label = {i.label: i for i in store.list_runs()}
    assert by_label["z/zfs"].status == "complete"
    assert by_label["z/zfs-lz4"].status == "incomplete" and by_label["z/zfs-lz4"].reason.startswith("interrupted (SIGTERM)")
    assert fake.loops == {} and not fake.pools
    store.close()


def test_a_signal_during_teardown_waits_until_teardown_is_done(tmp_path, private_tmp):
    fake = Interrupting(tmp_path, ["zpool", "destroy"], real_signal=True)
    store = _store(tmp_path)
    with pytest.raises(mx.Interrupted, match=r"^interrupted \(SIGTERM\) after setup 'zfs'"):
        mx.run_study(
            _study(setups_from_fs_list("zfs,xfs")), mx.Scratch(kind="loop", path=str(tmp_path / "loop.img"), size="400m"),
            store=store, executor=FakeFio(), reporter=runner.SilentReporter(), clock=lambda: "t", system=fake.system,
            telemetry=NoStorage(),
        )  # fmt: skip
    # the rest of the teardown ran after the signal; the next setup did not start
    assert fake.commands()[-3:] == ["zpool destroy -f storbench-test", "wipefs -a -q /dev/loop99", "losetup -d /dev/loop99"]
    assert not any(c.startswith("mkfs.xfs") for c in fake.commands())
    assert [(i.label, i.status) for i in store.list_runs()] == [("z/zfs", "complete")]
    assert fake.loops == {} and os.listdir(private_tmp) == []
    store.close()


def test_system_exit_mid_run_still_tears_down(tmp_path, private_tmp):
    """rich raises SystemExit when stderr is a closed pipe: the setup must still be torn down."""

    class ExitingFio(FakeFio):
        def run(self, job_text, on_status):
            raise SystemExit(1)

    fake = FakeSystem(tmp_path)
    store = _store(tmp_path)
    with pytest.raises(SystemExit):
        mx.run_study(
            _study(setups_from_fs_list("zfs")), mx.Scratch(kind="loop", path=str(tmp_path / "loop.img"), size="400m"),
            store=store, executor=ExitingFio(), reporter=runner.SilentReporter(), clock=lambda: "t", system=fake.system,
            telemetry=NoStorage(),
        )  # fmt: skip
    assert fake.commands()[-3:] == ["zpool destroy -f storbench-test", "wipefs -a -q /dev/loop99", "losetup -d /dev/loop99"]
    assert fake.loops == {} and os.listdir(private_tmp) == []
    [info] = store.list_runs()
    assert info.status == "failed" and info.reason == "storbench stopped: SystemExit: 1"
    store.close()


def test_a_failed_teardown_stops_the_study_and_names_what_is_left(tmp_path, private_tmp, monkeypatch):
    """umount refused (a process outside storbench in the mountpoint): no next setup, and one line saying what is left."""

    class BusyMount(FakeSystem):
        def run(self, argv):
            if argv[0] == "mount":
                self.mounted.add(argv[-1])
            if argv[0] == "umount":
                self.calls.append(list(argv))
                return 32, "", f"umount: {argv[-1]}: target is busy."
            return super().run(argv)

    monkeypatch.setattr(mx, "UMOUNT_TRIES", 2)
    fake = BusyMount(tmp_path)
    store = _store(tmp_path)
    with pytest.raises(mx.SetupFailed) as info:
        mx.run_study(
            _study(setups_from_fs_list("ext4,xfs")), mx.Scratch(kind="loop", path=str(tmp_path / "loop.img"), size="400m"),
            store=store, executor=FakeFio(), reporter=runner.SilentReporter(), clock=lambda: "t", system=fake.system,
            telemetry=NoStorage(),
        )  # fmt: skip
    message = str(info.value)
    mnt = next(c[-1] for c in fake.calls if c[0] == "mount")
    assert "\n" not in message
    assert message.startswith(f"setup 'ext4': teardown failed, the study stops: umount {mnt}: umount {mnt} failed: umount: {mnt}: target is busy.")
    assert f"teardown incomplete, left behind: remove {private_tmp}" in message and "still mounted" in message
    assert not any(c[0] == "mkfs.xfs" for c in fake.calls)  # the study stopped
    assert fake.loops == {}  # what could be undone was
    [run] = store.list_runs()
    assert run.status == "incomplete" and "teardown left: umount" in run.reason and run.result_count == 2
    store.close()


def test_missing_tools_are_refused_before_anything_changes(tmp_path, private_tmp):
    fake = FakeSystem(tmp_path)
    fake.system.which = lambda name: None if name in ("zpool", "zfs") else f"/usr/sbin/{name}"
    store = _store(tmp_path)
    with pytest.raises(UsageError) as info:
        mx.run_study(
            _study(setups_from_fs_list("ext4,zfs")), mx.Scratch(kind="loop", path=str(tmp_path / "loop.img"), size="400m"),
            store=store, executor=FakeFio(), reporter=runner.SilentReporter(), clock=lambda: "t", system=fake.system,
        )  # fmt: skip
    assert str(info.value) == (
        "setup 'zfs' needs zpool and zfs, which are not installed (Debian package zfsutils-linux and the ZFS kernel module); "
        "nothing was changed"
    )
    assert fake.calls == [] and not (tmp_path / "loop.img").exists() and store.list_runs() == []
    store.close()


@pytest.mark.skipif(shutil.which("zpool") is not None, reason="zpool is installed here")
def test_real_zfs_study_is_refused_in_one_line(cli, tmp_path, private_tmp):
    res = cli("matrix", "--loop-file", str(tmp_path / "loop.img"), "--loop-size", "400m", "--fs", "ext4,zfs", *WORKLOAD_ARGS)
    assert res.code == 2
    assert res.err == (
        "storbench: error: setup 'zfs' needs zpool and zfs, which are not installed (Debian package zfsutils-linux "
        "and the ZFS kernel module); nothing was changed\n"
    )
    assert not (tmp_path / "loop.img").exists() and os.listdir(private_tmp) == []


def test_command_line_mistakes(cli, tmp_path):
    loop = ["--loop-file", str(tmp_path / "l.img"), "--loop-size", "400m"]
    cases = [
        ([*loop, *WORKLOAD_ARGS], "give the setups with either --fs LIST or --setups FILE"),
        ([*loop, "--fs", "ext4", "--setups", "x.toml"], "give the setups with either --fs LIST or --setups FILE"),
        (["--device", "/dev/loop0", *loop, "--fs", "ext4"], "give one of --device, --devices, --loop-file and --loop-files, not --device and --loop-file"),
        (["--devices", "/dev/loop0,/dev/loop1", "--destroy-data", "/dev/loop0", "--fs", "zfs-mirror"], "--destroy-data must name every device exactly as given; missing: /dev/loop1"),
        (["--loop-files", "2", "--fs", "zfs-mirror"], "--loop-files needs --loop-size"),
        (["--loop-files", "2", "--loop-size", "128m", "--fs", "zfs-raid10"], "setup 'zfs-raid10' (zfs mirror-of-mirrors) needs 4 scratch devices, the study has 2"),
        (["--loop-files", "1", "--loop-size", "128m", "--fs", "btrfs-raid1"], "setup 'btrfs-raid1' (btrfs raid1) needs 2 scratch devices, the study has 1"),
        (["--loop-file", "x.img", "--fs", "ext4"], "--loop-file needs --loop-size"),
        (["--loop-file", "x.img", "--loop-size", "10m", "--fs", "ext4"], "--loop-size 10m is too small: give at least 64m"),
        (["--loop-file", "x.img", "--loop-size", "200m", "--fs", "xfs"], "mkfs.xfs needs at least 300 MB"),
        (["--fs", "ext4"], "setup 'ext4' is built on a scratch device: give --device DEV --destroy-data DEV or --loop-file"),
        ([*loop, "--destroy-data", "/dev/loop0", "--fs", "ext4"], "--destroy-data goes with --device"),
        ([*loop, "--resume", "nope", "--fs", "ext4"], "--resume takes the setups and workloads of the stored study; do not also give --fs"),
        (["--resume", "nope"], "no study labelled 'nope' is stored"),
        ([*loop, "--fs", "ext4", "--label", "a/"], "must not end with '/'"),
        ([*loop, "--fs", "ext4", "--load", "iodepth=1,2"], "--load goes with --curve"),
        ([*loop, "--fs", "ext4", "--curve", *WORKLOAD_ARGS], "--curve raises the load on one workload; 2 were given"),
        ([*loop, "--fs", "ext4", "--curve", "--suite", "quick"], "--curve raises the load on one workload: give --workload NAME, not --suite"),
        ([*loop, "--fs", "ext4", "--curve", "--sweep", "bs=4k,8k"], "--curve is a sweep of its own"),
        ([*loop, "--fs", "ext4", "--curve", "--load", "iodepth=1", "--rate", "10%..50%"], "give either --load or --rate, not both"),
        ([*loop, "--fs", "ext4", "--curve", "--sla", "p99=fast"], "--sla 'p99=fast': 'fast' is not a duration"),
    ]
    for args, words in cases:
        res = cli("matrix", *args)
        assert res.code == 2, (args, res.err)
        assert res.err.count("\n") == 1 and words in res.err, (args, res.err)
    assert not (tmp_path / "l.img").exists()


def test_study_from_the_command_line_options():
    """--fs, workloads, --size/--runtime and --sweep become the stored plan; a default label from the clock."""
    from types import SimpleNamespace

    from storbench.commands.matrix import _new_study

    app = SimpleNamespace(env=SimpleNamespace(clock=lambda: "2026-11-30T13:39:09+00:00"))
    study = _new_study(app, "ext4,btrfs-zstd", None, None, WORKLOADS, None, "16m", "1", ("bs=4k,64k",), 2, None, False)
    assert study.label == "matrix-20261130-133909"
    assert [s.name for s in study.setups] == ["ext4", "btrfs-zstd"]
    assert [w.name for w in study.workloads] == [
        "rnd4k-q1t1-read@bs=4k", "rnd4k-q1t1-read@bs=64k", "rnd4k-q1t1-write@bs=4k", "rnd4k-q1t1-write@bs=64k"
    ]  # fmt: skip
    assert study.overrides.size == "16m" and study.overrides.runtime == "1" and study.repeat.count == 2
    assert mx.Study.from_meta(study.meta(mx.Scratch(kind="loop", path="/x", size="400m"))) == study


def test_a_used_label_needs_resume(tmp_path, private_tmp):
    fake = FakeSystem(tmp_path)
    store = _store(tmp_path)
    kwargs = dict(store=store, executor=FakeFio(), reporter=runner.SilentReporter(), clock=lambda: "t", system=fake.system, telemetry=NoStorage())
    scratch = mx.Scratch(kind="loop", path=str(tmp_path / "loop.img"), size="400m")
    mx.run_study(_study(setups_from_fs_list("zfs")), scratch, **kwargs)
    with pytest.raises(UsageError, match="study 'z' already has 1 run"):
        mx.run_study(_study(setups_from_fs_list("zfs")), scratch, **kwargs)
    again = mx.run_study(_study(setups_from_fs_list("zfs")), scratch, resume=True, **kwargs)
    assert again.setups[0].skipped
    store.close()


# --------------------------------------------------------------------------- real studies on loop devices (root)


def _losetup_of(path: Path) -> str:
    return subprocess.run(["losetup", "-j", str(path)], capture_output=True, text=True).stdout.strip()


def _mounts_under(text: str) -> list[str]:
    out = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if text in line]


def _qemu_nbd_mentioning(text: str) -> list[str]:
    out = subprocess.run(["pgrep", "-a", "qemu-nbd"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if text in line]


def assert_clean(loop_file: Path, tmp: Path) -> None:
    """Nothing of the study is left: loop device, mounts, qemu-nbd, temporary directories, the file."""
    assert _losetup_of(loop_file) == "", "a loop device over the study's file is still attached"
    assert _mounts_under(str(tmp)) == [], "a mount was left"
    assert _qemu_nbd_mentioning(str(tmp)) == [], "qemu-nbd outlived the study"
    assert sorted(os.listdir(tmp)) == [], "temporary directories were left"
    assert not loop_file.exists(), "the loop file was left"


needs_tools = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "wipefs", "losetup")),
    reason="needs e2fsprogs, xfsprogs, btrfs-progs and util-linux",
)
needs_qemu = pytest.mark.skipif(shutil.which("qemu-nbd") is None or shutil.which("qemu-img") is None, reason="needs qemu-utils")



def _sql(db: Path, query: str) -> list[tuple]:
    """Rows, or [] while the database is still being made."""
    try:
        con = sqlite3.connect(db)
        try:
            return con.execute(query).fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return []


def _runs(db: Path) -> list[tuple]:
    return _sql(db, "select id, label, status, reason from runs order by id")


def _results(db: Path) -> list[tuple]:
    return _sql(db, "select run_id, workload from results order by id")


def _records_by_label(cli, label_prefix: str):
    from storbench.store import Store

    store = Store.open(f"sqlite:///{cli.db}")
    try:
        out = {}
        for info in store.list_runs(label_prefix=label_prefix):
            out[info.label] = (info, store.results(info.run_id))
        return out
    finally:
        store.close()


@needs_root
@needs_fio
@needs_tools
def test_filesystem_matrix(cli, tmp_path, private_tmp):
    loop = tmp_path / "scratch.img"
    res = cli("matrix", "--loop-file", str(loop), "--loop-size", "400m", "--fs", "ext4,xfs,btrfs,btrfs-zstd",
              *WORKLOAD_ARGS, *SMALL, "--label", "fs")  # fmt: skip
    assert res.code == 0, res.err
    runs = _records_by_label(cli, "fs/")
    assert sorted(runs) == ["fs/btrfs", "fs/btrfs-zstd", "fs/ext4", "fs/xfs"]
    for label, (info, records) in runs.items():
        assert info.status == "complete", (label, info.reason)
        assert Counter(r.workload for r in records) == {w: 1 for w in WORKLOADS}
        fs = records[0].storage.filesystem
        expected = label.split("/")[1].split("-")[0]
        assert fs.fstype == expected, (label, fs.fstype)
        loopdev = records[0].storage.devices[0]
        assert loopdev.type == "loop" and loopdev.loop_backing_file == str(loop) and loopdev.loop_dio is True
        assert any(n.startswith(f"setup {label.split('/')[1]}: wipefs -a -q /dev/loop") for n in records[0].storage.notes)
    btrfs_zstd = runs["fs/btrfs-zstd"][1][0].storage.filesystem
    assert btrfs_zstd.btrfs.compression.startswith("zstd") and btrfs_zstd.btrfs.compression_forced
    assert btrfs_zstd.compression.startswith("zstd")
    assert runs["fs/btrfs"][1][0].storage.filesystem.compression is None
    # the comparison of the study is printed, and its report written
    assert "comparison: fs/ext4 vs fs/xfs vs fs/btrfs vs fs/btrfs-zstd" in res.out
    assert (tmp_path / "storbench-study-fs.html").exists()
    assert_clean(loop, private_tmp)


@needs_root
@needs_fio
@needs_tools
def test_a_setup_whose_mkfs_fails(cli, tmp_path, private_tmp):
    setups = tmp_path / "s.toml"
    setups.write_text('[setup.ext4]\nmkfs = "ext4"\n\n[setup.bad]\nmkfs = "ext4"\nmkfs_options = ["-O", "no_such_feature"]\n\n[setup.xfs]\nmkfs = "xfs"\n')
    loop = tmp_path / "scratch.img"
    res = cli("matrix", "--loop-file", str(loop), "--loop-size", "400m", "--setups", str(setups), *WORKLOAD_ARGS, *SMALL,
              "--label", "mk", "--no-report")  # fmt: skip
    assert res.code == 1, res.err
    errors = [ln for ln in res.err.splitlines() if ln.startswith("storbench:")]
    assert len(errors) == 1 and "Traceback" not in res.err
    assert errors[0].startswith("storbench: error: 1 of 3 setup(s) did not complete; first: setup 'bad' (failed): setup 'bad': mkfs.ext4 -q -F ")
    assert "-O no_such_feature /dev/loop" in errors[0] and "failed: Invalid filesystem option set: no_such_feature" in errors[0] and "--resume mk" in errors[0]
    runs = _records_by_label(cli, "mk/")
    assert runs["mk/bad"][0].status == "failed" and runs["mk/bad"][1] == []
    assert "mkfs.ext4" in runs["mk/bad"][0].reason
    for ok in ("mk/ext4", "mk/xfs"):  # before and after the failing setup
        assert runs[ok][0].status == "complete" and len(runs[ok][1]) == 2
    assert "setup bad: run" in res.out and "failed" in res.out
    assert_clean(loop, private_tmp)


def _fio_children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid and cmd and os.path.basename(cmd[0].decode()) == "fio" and any(
            a.startswith(b"--output=") for a in cmd
        ):
            found.append(int(entry))
    return found


@needs_root
@needs_fio
@needs_tools
def test_fio_killed_mid_run(cli, tmp_path, private_tmp):
    """SIGKILL on fio (what the OOM killer does) in the first setup's first workload: that workload
    fails, the study goes on, everything is torn down; --resume re-runs only that workload."""
    loop = tmp_path / "scratch.img"
    killed: list[int] = []
    stop = threading.Event()

    def killer() -> None:
        while not stop.is_set() and not killed:
            pids = _fio_children(os.getpid())
            if pids:
                time.sleep(0.5)  # laid out and measuring
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
            time.sleep(0.02)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        res = cli("matrix", "--loop-file", str(loop), "--loop-size", "400m", "--fs", "ext4,xfs", *WORKLOAD_ARGS,
                  "--size", "16m", "--runtime", "2", "--label", "kill", "--no-report")  # fmt: skip
    finally:
        stop.set()
        thread.join(5)
    assert killed
    assert res.code == 1, res.err
    [line] = [ln for ln in res.err.splitlines() if ln.startswith("storbench:")]
    assert line.startswith("storbench: error: 1 of 2 setup(s) did not complete; first: setup 'ext4' (incomplete): 1 of 2 workload(s) failed")
    assert "fio was killed by signal 9 (SIGKILL)" in line
    runs = _records_by_label(cli, "kill/")
    assert [r.workload for r in runs["kill/ext4"][1]] == ["rnd4k-q1t1-write"]
    assert runs["kill/ext4"][0].status == "incomplete"
    assert runs["kill/xfs"][0].status == "complete" and len(runs["kill/xfs"][1]) == 2
    assert_clean(loop, private_tmp)

    res = cli("matrix", "--resume", "kill", "--no-report", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert [(s["setup"], s["status"], s["skipped"], s["stored"]) for s in data["setups"]] == [
        ("ext4", "complete", False, 1), ("xfs", "complete", True, 0)
    ]  # fmt: skip
    runs = _records_by_label(cli, "kill/")
    assert [r.workload for r in runs["kill/ext4"][1]] == ["rnd4k-q1t1-write", "rnd4k-q1t1-read"]
    assert len(runs) == 2  # resumed in the same runs
    assert_clean(loop, private_tmp)


@needs_root
@needs_fio
@needs_tools
def test_sigterm_mid_study_then_resume(tmp_path, private_tmp):
    db = tmp_path / "r.sqlite"
    loop = tmp_path / "scratch.img"
    env = dict(os.environ, STORBENCH_DB=str(db), TMPDIR=str(private_tmp))
    env.pop("STORBENCH_DEBUG", None)
    argv = [sys.executable, "-m", "storbench", "matrix"]
    proc = subprocess.Popen(
        [*argv, "--loop-file", str(loop), "--loop-size", "400m", "--fs", "ext4,xfs,btrfs", *WORKLOAD_ARGS,
         "--size", "16m", "--runtime", "1", "--label", "term", "--no-report"],
        env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not any(label == "term/xfs" for _, label, _, _ in _runs(db)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the second setup never started"
            time.sleep(0.05)
        time.sleep(1.0)  # inside the second setup (two workloads of 1 s): building it or running fio
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:  # a failed assertion: stop it the way a user would
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=90)
    assert proc.returncode == 130, err
    [line] = [ln for ln in err.splitlines() if ln.startswith("storbench:")]
    assert line.startswith("storbench: error: interrupted (SIGTERM)") and ("of setup 'xfs'" in line or "in setup 'xfs'" in line), line
    assert "torn down" in line and "storbench matrix --resume term" in line
    runs = _runs(db)
    assert [(label, status) for _, label, status, _ in runs] == [("term/ext4", "complete"), ("term/xfs", "incomplete")]
    ext4_results = [r for r in _results(db) if r[0] == runs[0][0]]
    assert len(ext4_results) == 2
    assert_clean(loop, private_tmp)

    done = subprocess.run([*argv, "--resume", "term", "--no-report"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "setup ext4: run 1, skipped (complete already)" in done.stdout
    runs = _runs(db)
    assert [(label, status) for _, label, status, _ in runs] == [("term/ext4", "complete"), ("term/xfs", "complete"), ("term/btrfs", "complete")]
    counts = Counter(run_id for run_id, _ in _results(db))
    assert counts == {runs[0][0]: 2, runs[1][0]: 2, runs[2][0]: 2}  # nothing ran twice
    assert [r for r in _results(db) if r[0] == runs[0][0]] == ext4_results
    assert_clean(loop, private_tmp)


@needs_root
@needs_fio
@needs_tools
def test_write_cache_setups_are_applied_and_restored(tmp_path, private_tmp):
    """write through, then write back (and read-ahead), on a loop device whose own setting the test
    flips when the scratch device is ready (so one of the two setups must change it and put it back):
    each run's storage description shows the setting it ran with, and the device has its own setting
    again after each setup and before it is detached.  The test puts the kernel's value back at the end."""
    setups = parse_setups_text(
        '[setup.wt]\nmkfs = "ext4"\ndevice = { write_cache = "write through" }\n\n'
        '[setup.wb]\nmkfs = "ext4"\ndevice = { write_cache = "write back", read_ahead_kb = 512 }\n',
        "s",
    )
    seen: dict[str, list[str]] = {}
    kernel: dict[str, str] = {}

    def attr(kname: str, name: str) -> Path:
        return Path(f"/sys/block/{kname}/queue/{name}")

    def observe(event, info):
        kname = info.get("kname")
        if not kname:
            return
        seen.setdefault(event, []).append(f"{attr(kname, 'write_cache').read_text().strip()}/{attr(kname, 'read_ahead_kb').read_text().strip()}")
        if event == "scratch-ready":
            kernel["wc"] = attr(kname, "write_cache").read_text().strip()
            flipped = "write through" if kernel["wc"] == "write back" else "write back"
            attr(kname, "write_cache").write_text(flipped)
            seen["own"] = [f"{attr(kname, 'write_cache').read_text().strip()}/{attr(kname, 'read_ahead_kb').read_text().strip()}"]
        if event == "before-detach":
            attr(kname, "write_cache").write_text(kernel["wc"])  # leave the loop device as the kernel made it

    store = _store(tmp_path)
    loop = tmp_path / "scratch.img"
    outcome = mx.run_study(
        _study(setups, label="wc"), mx.Scratch(kind="loop", path=str(loop), size="400m"),
        store=store, executor=runner.SubprocessFio(), reporter=runner.SilentReporter(),
        clock=lambda: "2026-01-01T00:00:00+00:00", observe=observe,
    )  # fmt: skip
    assert [o.status for o in outcome.setups] == ["complete", "complete"]
    [own] = seen["own"]
    assert own != seen["scratch-ready"][0]  # the flip took
    ra = own.split("/")[1]
    assert seen["setup-ready"] == [f"write through/{ra}", "write back/512"]  # as each setup asked
    assert seen["setup-done"] == [own, own]  # restored after each setup
    assert seen["before-detach"] == [own]  # and still so when the loop device is detached
    by_label = {info.label: store.results(info.run_id) for info in store.list_runs()}
    for label, wanted in (("wc/wt", "write through"), ("wc/wb", "write back")):
        for rec in by_label[label]:
            assert rec.storage.devices[0].type == "loop"
            assert rec.storage.devices[0].write_cache == wanted, label
            assert any("(restored afterwards)" in n for n in rec.storage.notes)
    store.close()
    assert_clean(loop, private_tmp)


@needs_root
@needs_fio
@needs_tools
@needs_qemu
def test_raw_vs_qcow2_through_qemu_nbd(cli, tmp_path, private_tmp):
    images = tmp_path / "images"
    images.mkdir()
    setups = tmp_path / "s.toml"
    setups.write_text(
        '[setup.raw]\nmkfs = "ext4"\nimage = { format = "raw", size = "64m" }\n\n'
        f'[setup.qcow2]\nimage = {{ format = "qcow2", size = "64m", cluster_size = "8k", lazy_refcounts = true, directory = "{images}" }}\n'
    )
    loop = tmp_path / "scratch.img"
    res = cli("matrix", "--loop-file", str(loop), "--loop-size", "400m", "--setups", str(setups), *WORKLOAD_ARGS, *SMALL,
              "--label", "img", "--no-report")  # fmt: skip
    assert res.code == 0, res.err
    assert "ioengine=libaio replaced by nbd" in res.err
    runs = _records_by_label(cli, "img/")
    assert sorted(runs) == ["img/qcow2", "img/raw"]
    for label, (info, records) in runs.items():
        assert info.status == "complete"
        assert [r.workload for r in records] == list(WORKLOADS)
        for rec in records:
            assert rec.options["ioengine"] == "nbd" and rec.options["uri"].startswith("nbd+unix:///?socket=")
            assert rec.fio.error == 0 and rec.fio.jobs[0].directions["read" if rec.workload.endswith("read") else "write"].iops > 0
            image = rec.space["image"]
            assert image["format"] == label.split("/")[1]
            assert image["served_with"][0] == "qemu-nbd" and "--cache=none" in image["served_with"]
    raw = runs["img/raw"][1][0]
    assert raw.storage.filesystem.fstype == "ext4" and raw.storage.devices[0].type == "loop"  # the image's filesystem
    qcow2 = runs["img/qcow2"][1][0]
    assert qcow2.space["image"]["options"] == {"cluster_size": "8k", "lazy_refcounts": "on"}
    assert qcow2.space["image"]["created_with"][:5] == ["qemu-img", "create", "-q", "-f", "qcow2"]
    assert "cluster_size=8192,lazy_refcounts=on" in qcow2.space["image"]["created_with"]
    assert os.listdir(images) == []  # the image was removed
    assert_clean(loop, private_tmp)


def _processes_mentioning(program: str, text: str) -> list[str]:
    out = subprocess.run(["pgrep", "-a", program], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if text in line]


@needs_root
@needs_fio
@needs_tools
@needs_qemu
@pytest.mark.skipif(shutil.which("qemu-storage-daemon") is None or shutil.which("dbench") is None,
                    reason="needs qemu-system-common and dbench (tests/setup-system.sh installs them)")  # fmt: skip
def test_dbench_runs_in_a_guest_filesystem_inside_raw_and_qcow2_images(cli, tmp_path, private_tmp):
    """Seed 002's kind of study: fio on each image over NBD, then dbench inside the image, on the
    ext4 a VM would have made there (qemu-storage-daemon's FUSE export, a loop device, mkfs)."""
    images = tmp_path / "images"
    images.mkdir()
    setups = tmp_path / "s.toml"
    setups.write_text(
        '[setup.raw]\nmkfs = "ext4"\nimage = { format = "raw", size = "160m" }\n\n'
        f'[setup.qcow2]\nimage = {{ format = "qcow2", size = "160m", cluster_size = "64k", directory = "{images}" }}\n'
    )
    loop = tmp_path / "scratch.img"
    res = cli("matrix", "--loop-file", str(loop), "--loop-size", "400m", "--setups", str(setups), "--keep-files",
              "--workload", "rnd4k-q1t1-write", "--workload", "dbench-1", "--size", "16m", "--runtime", "2s",
              "--label", "vm", "--no-report")  # fmt: skip
    assert res.code == 0, res.err
    said = res.out + res.err
    assert "not run on this setup" not in said
    assert said.count("application loads run in a guest ext4 made inside the image") == 2, said
    runs = _records_by_label(cli, "vm/")
    assert sorted(runs) == ["vm/qcow2", "vm/raw"]
    for label, (info, records) in runs.items():
        name = label.split("/")[1]
        assert info.status == "complete", info.reason
        fio_rec, dbench = records
        assert fio_rec.workload == "rnd4k-q1t1-write" and fio_rec.options["ioengine"] == "nbd"
        assert dbench.workload == "dbench-1" and dbench.target == fio_rec.target == f"storbench-matrix/image-{name}"
        [mb] = [m for m in dbench.fio.measures if m.unit == "MB/s"]
        assert mb.value > 0
        made = dbench.space["image"]["guest_made_with"]
        assert made[0].startswith("qemu-storage-daemon --blockdev driver=file,node-name=file,filename=")
        assert f"driver={name},node-name=disk" in made[0] and "cache.direct=on" in made[0]  # qemu-nbd's cache=none
        assert made[1].startswith("losetup -f --show ") and made[2].startswith("mkfs.ext4 -q -F")
        assert dbench.space["image"]["guest_fs"] == "ext4" and dbench.space["image"]["format"] == name
        # described as the image is: the host filesystem under it, with the guest's notes
        assert dbench.storage.filesystem.fstype == fio_rec.storage.filesystem.fstype
        assert [d.name for d in dbench.storage.devices] == [d.name for d in fio_rec.storage.devices]
        if name == "raw":  # on the study's scratch loop device (the qcow2 is in a directory of the test's)
            assert dbench.storage.filesystem.fstype == "ext4" and dbench.storage.devices[0].type == "loop"
        assert any("application loads run in a guest ext4" in n for n in dbench.storage.notes)
    # --keep-files kept the last setup's image (in its directory): ext4 is inside it, and qcow2 is whole
    [kept] = list(images.iterdir())
    assert subprocess.run(["qemu-img", "check", "-q", str(kept)], capture_output=True).returncode == 0
    raw = tmp_path / "guest.raw"
    subprocess.run(["qemu-img", "convert", "-O", "raw", str(kept), str(raw)], check=True)
    probe = subprocess.run(["blkid", "-p", "-o", "value", "-s", "TYPE", str(raw)], capture_output=True, text=True)
    assert probe.stdout.strip() == "ext4"
    kept.unlink()
    raw.unlink()
    assert _losetup_of(loop) == ""
    loop.unlink()  # --keep-files keeps the scratch file too
    assert _processes_mentioning("qemu-storage-d", str(tmp_path)) == []  # (pgrep matches 15 characters of the name)
    assert [m for m in _mounts_under(str(tmp_path))] == []
    assert_clean(loop, private_tmp)


@needs_root
@pytest.mark.skipif(shutil.which("qemu-storage-daemon") is None or shutil.which("qemu-img") is None,
                    reason="needs qemu-system-common and qemu-utils")  # fmt: skip
def test_fuse_export_serves_the_image_and_leaves_nothing_even_when_killed(tmp_path):
    image = tmp_path / "a.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(image), "16M"], check=True)
    spec = ImageSpec(format="qcow2", size="16m")
    export_path = tmp_path / "a.export"
    export = start_export(spec, str(image), str(export_path))
    try:
        assert mount_fstype(str(export_path)) == "fuse" and export_path.stat().st_size == 16 << 20
        with open(export_path, "r+b") as fh:  # what is written through the export is in the image
            fh.write(b"storbench" * 100)
        assert os.getpgid(export.pid) == export.pid  # its own process group
    finally:
        export.stop()
    assert mount_fstype(str(export_path)) is None and not export_path.exists() and export.proc.poll() is not None
    back = subprocess.run(["qemu-io", "-f", "qcow2", "-c", "read -P 0x73 0 1", str(image)], capture_output=True, text=True)
    assert "read 1/1 bytes" in back.stdout, back.stdout + back.stderr  # 's', the first byte written
    # killed: its FUSE mount stays behind, dead, until stop() unmounts it
    export = start_export(spec, str(image), str(export_path))
    os.kill(export.pid, signal.SIGKILL)
    export.proc.wait()
    assert mount_fstype(str(export_path)) == "fuse"
    export.stop()
    assert mount_fstype(str(export_path)) is None and not export_path.exists()
    # a missing image: one line, nothing left
    with pytest.raises(ImageError) as info:
        start_export(spec, str(tmp_path / "missing.qcow2"), str(export_path))
    assert "\n" not in str(info.value) and "exited with status" in str(info.value)
    assert mount_fstype(str(export_path)) is None and not export_path.exists()


@needs_root
@needs_qemu
def test_qemu_nbd_server_starts_and_stops(tmp_path):
    image = tmp_path / "a.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(image), "16M"], check=True)
    spec = ImageSpec(format="qcow2", size="16m")
    sock = tmp_path / "s.sock"
    with serve(spec, str(image), str(sock)) as server:
        assert sock.exists() and server.running
        assert Path(f"/proc/{server.pid}").exists()
        assert os.getpgid(server.pid) == server.pid  # its own process group
    assert not sock.exists() and server.proc.poll() is not None
    with pytest.raises(ImageError) as info:
        with serve(spec, str(tmp_path / "missing.qcow2"), str(sock)):
            pass
    assert "\n" not in str(info.value) and "exited with status" in str(info.value)
    assert not sock.exists() and _qemu_nbd_mentioning(str(tmp_path)) == []


@needs_root
@needs_fio
@needs_tools
@needs_qemu
def test_matrix_curve_on_a_filesystem_and_an_nbd_image(cli, tmp_path, private_tmp):
    """matrix --curve: the one workload's load raised on every setup (ext4 on the loop device,
    a raw image served by qemu-nbd: two target kinds), each step stored in the setup's run,
    compared step by step, the curves side by side at the SLA's latency and on one chart."""
    setups = tmp_path / "s.toml"
    setups.write_text('[setup.ext4]\nmkfs = "ext4"\n\n[setup.raw]\nmkfs = "ext4"\nimage = { format = "raw", size = "64m" }\n')
    loop = tmp_path / "scratch.img"
    report = tmp_path / "curve.html"
    res = cli("matrix", "--loop-file", str(loop), "--loop-size", "200m", "--setups", str(setups), "--curve",
              "--load", "iodepth=1,4", "--sla", "p99=10s", *SMALL, "--repeat", "1", "--label", "cv", "--report", str(report))  # fmt: skip
    assert res.code == 0, res.err
    runs = _records_by_label(cli, "cv/")
    assert sorted(runs) == ["cv/ext4", "cv/raw"]
    from storbench.store import Store

    store = Store.open(f"sqlite:///{cli.db}")
    try:
        metas = {label: store.run_meta(info.run_id) for label, (info, _records) in runs.items()}
    finally:
        store.close()
    last_iops = {}
    for label, (info, records) in runs.items():
        assert info.status == "complete", (label, info.reason)
        steps = [r.workload for r in records if "@iodepth=" in r.workload]
        assert steps == ["curve-randread-4k@iodepth=1", "curve-randread-4k@iodepth=4"]
        ceiling = [r for r in records if "@sla_repeat=" in r.workload]
        assert len(ceiling) == 3  # the limit held at every step: the last step again as it was (no cap), three times
        engine = "nbd" if label == "cv/raw" else "libaio"
        assert {r.options["ioengine"] for r in records} == {engine}
        (curve,) = metas[label]["curve_result"]["curves"]
        assert curve["setup"] == label.split("/")[1] and [p["step"] for p in curve["points"]] == [{"iodepth": "1"}, {"iodepth": "4"}]
        by_id = {r.result_id: r for r in records}
        for p in curve["points"]:  # each point is its stored result's figures
            assert p["iops"] == pytest.approx(by_id[p["result"]].fio.jobs[0].directions["read"].iops)
        assert curve["sla_ceiling"]["open_ended"] is True  # the limit held at every step: "at least", said once
        last_iops[label.split("/")[1]] = max(p["iops"] for p in curve["points"])  # every step is within 10 s: the best counts
    # compared step by step (the ceiling runs are each setup's own), then side by side at the SLA's 10 s.
    # Where every setup ran the same steps (the last one again as its ceiling, uncapped: the same step),
    # all are compared step by step and none is left to show; a setup whose probes ran at its own rates
    # (a busy machine can make a step miss the limit) is said to be in show and the report
    names = {label: {r.workload for r in records} for label, (_info, records) in runs.items()}
    if len({frozenset(v) for v in names.values()}) == 1:
        assert "compared step by step" not in res.out
    else:
        assert "compared step by step: 2 load step(s) every setup ran" in res.out
    # the compare table names every workload all setups ran: both load steps, and the SLA ceiling's repeat
    # only where every setup's best step was the same one (which step does most IOPS is the machine's to say:
    # on a busy machine ext4 on a loop device can do more at iodepth=1 than at 4)
    common = set.intersection(*names.values())
    assert {"curve-randread-4k@iodepth=1", "curve-randread-4k@iodepth=4"} <= common
    for workload in common:
        assert workload in res.out, workload
    (iso,) = [ln for ln in res.out.splitlines() if ln.startswith("at the same p99 (10.00 s): ")]
    first, second = sorted(last_iops, key=lambda k: -last_iops[k])
    assert iso.index(first) < iso.index(second)
    share = (last_iops[second] / last_iops[first] - 1) * 100
    assert f"({share:+.0f}%)" in iso
    # the report draws both curves on one chart
    from storbench.render.html import embedded

    figures = embedded(report.read_text(), "storbench-figures")
    (chart,) = [f for f in figures if f["layout"]["title"]["text"].startswith("p99 latency against IOPS")]
    assert sorted(t["name"] for t in chart["data"] if t["mode"] == "lines+markers") == ["ext4", "raw"]
    assert_clean(loop, private_tmp)
