"""The block-device data-safety guard: pure rules on hand-built facts, then real loop devices.

The real tests give every refusal rule a device that holds data and check, through
``storbench run``, exit 2, the one-line message naming the rule, and that every byte
of the device is unchanged (sha256 of the whole device, read with O_DIRECT).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

from storbench.errors import ExitCode, TargetError
from storbench.targets import resolve as resolve_target
from storbench.targets.guard import (
    RULES,
    BlockTargetRefused,
    DeviceFacts,
    check_block_target,
    findmnt_source_device,
    gather_device_facts,
    parse_blkid_export,
    parse_lsblk_mounts,
    parse_mountinfo_sources,
    parse_swaps,
    parse_wipefs_json,
    workload_writes,
)

from conftest import needs_fio, needs_root

# --------------------------------------------------------------------------- workload_writes


@pytest.mark.parametrize(
    "options, writes",
    [
        ({"rw": "read"}, False),
        ({"rw": "randread"}, False),
        ({"rw": "randread:8"}, False),
        ({}, False),  # fio's default is rw=read
        ({"rw": "read", "verify": "md5"}, False),  # verify-only pass over what it reads
        ({"rw": "write", "verify": "crc32c", "verify_only": None}, False),  # fio skips the writes
        ({"rw": "write", "verify": "crc32c", "verify_only": "1"}, False),
        ({"rw": "write", "verify": "crc32c", "verify_only": "0"}, True),
        ({"rw": "write"}, True),
        ({"rw": "randwrite"}, True),
        ({"rw": "rw"}, True),
        ({"rw": "readwrite"}, True),
        ({"readwrite": "randrw"}, True),  # the alias
        ({"rw": "randrw", "rwmixread": "99"}, True),
        ({"rw": "trim"}, True),
        ({"rw": "randtrim"}, True),
        ({"rw": "trimwrite"}, True),
        ({"rw": "randtrimwrite"}, True),
        ({"rw": "write", "verify": "md5"}, True),
        ({"rw": "read", "trim_percentage": "10"}, True),
        ({"rw": "read", "trim_percentage": "0"}, False),
        ({"rw": "read", "ioengine": "falloc"}, True),
        ({"rw": "read", "ioengine": "ftruncate"}, True),
        ({"rw": "bogus"}, True),  # unknown counts as writing
        ({"rw": None}, True),
    ],
)
def test_workload_writes(options, writes):
    assert workload_writes(options) is writes
    assert workload_writes(list(options.items())) is writes  # Workload.options form


def test_workload_writes_last_option_wins():
    assert workload_writes([("rw", "write"), ("rw", "read")]) is False
    assert workload_writes([("rw", "read"), ("readwrite", "write")]) is True


# --------------------------------------------------------------------------- pure rules

DEV = "/dev/loop1"
BLANK = DeviceFacts(path=DEV, realpath=DEV, is_block=True, kname="loop1")


def refusal(facts: DeviceFacts, *, writes: bool = True, destroy=(DEV,)) -> BlockTargetRefused:
    with pytest.raises(BlockTargetRefused) as info:
        check_block_target(facts, writes=writes, destroy=destroy, writing=("rnd4k-q1t1-write",))
    exc = info.value
    assert isinstance(exc, TargetError) and exc.exit_code == ExitCode.USAGE
    assert "\n" not in str(exc)
    assert f"[{exc.rule}]" in str(exc)
    return exc


def test_blank_device_with_destroy_data_is_allowed():
    check_block_target(BLANK, writes=True, destroy=(DEV,))
    check_block_target(BLANK, writes=True, destroy=("/dev/sdz", DEV))  # one value names it


@pytest.mark.parametrize(
    "change, rule, words",
    [
        ({"read_only": True}, "read-only", "blockdev --setrw /dev/loop1"),
        ({"holds_root": True}, "root-device", "root filesystem /"),
        ({"holds_database": True, "database": "/srv/r.sqlite"}, "database-device", "/srv/r.sqlite"),
        ({"mountpoints": (("loop1", "/mnt/data"),)}, "mounted", "loop1 at /mnt/data"),
        ({"mountpoints": (("loop1p1", "/mnt/p1"),)}, "mounted", "loop1p1 at /mnt/p1"),
        ({"mountpoints": (("loop1p2", "[SWAP]"),)}, "mounted", "loop1p2 as swap"),
        ({"holders": (("dm-0", "loop1"),)}, "holders", "dm-0 holds loop1"),
        ({"holders": (("md0", "loop1p2"),)}, "holders", "md0 holds loop1p2"),
        ({"busy": True}, "busy", "EBUSY"),
        ({"signatures": ("ext4",)}, "signature", "wipefs -a /dev/loop1"),
        ({"signatures": ("dos",)}, "signature", "dos"),
        ({"signatures": ("LVM2_member",)}, "signature", "LVM2_member"),
        ({"signatures": None, "unknown": ("wipefs failed: EPERM",)}, "unknown", "wipefs failed: EPERM"),
        ({"holds_root": None}, "unknown", "root device"),
        ({"busy": None}, "unknown", "exclusive open"),
        ({"mountpoints": None}, "unknown", "mounts"),
        ({"kname": None}, "unknown", "kernel name"),
    ],
)
def test_each_rule_refuses_with_its_message(change, rule, words):
    exc = refusal(dataclasses.replace(BLANK, **change))
    assert exc.rule == rule
    assert words in str(exc)
    assert str(exc).startswith("refusing to write to block device '/dev/loop1'")


@pytest.mark.parametrize("rule", ["read-only", "mounted", "holders", "busy", "signature", "destroy-data", "destroy-data-mismatch"])
def test_refusals_name_the_exact_flag(rule):
    facts = {
        "read-only": dataclasses.replace(BLANK, read_only=True),
        "mounted": dataclasses.replace(BLANK, mountpoints=(("loop1", "/mnt"),)),
        "holders": dataclasses.replace(BLANK, holders=(("dm-0", "loop1"),)),
        "busy": dataclasses.replace(BLANK, busy=True),
        "signature": dataclasses.replace(BLANK, signatures=("xfs",)),
    }.get(rule, BLANK)
    destroy = {"destroy-data": (), "destroy-data-mismatch": ("/dev/loop11",)}.get(rule, (DEV,))
    exc = refusal(facts, destroy=destroy)
    assert exc.rule == rule
    assert "--destroy-data /dev/loop1" in str(exc)


def test_no_destroy_data():
    exc = refusal(BLANK, destroy=())
    assert exc.rule == "destroy-data"
    assert "rnd4k-q1t1-write" in str(exc) and "pass --destroy-data /dev/loop1" in str(exc)


@pytest.mark.parametrize(
    "destroy",
    [
        ("/dev/loop11",),  # a typo: another device
        ("/dev/loop",),
        ("/dev/disk/by-id/usb-Some_Disk-0:0",),  # a symlink to the device
        ("/dev//loop1",),  # another spelling of it
        ("/dev/../dev/loop1",),
        ("loop1",),
        ("/dev/loop1 ",),
        ("/dev/LOOP1",),
    ],
)
def test_destroy_data_must_repeat_the_target_exactly(destroy):
    exc = refusal(BLANK, destroy=destroy)
    assert exc.rule == "destroy-data-mismatch"
    assert repr(destroy[0]) in str(exc)
    assert "spelled exactly as --target" in str(exc)


def test_target_given_as_symlink_allowed_when_repeated_exactly():
    link = "/dev/disk/by-id/nvme-SPARE"
    facts = dataclasses.replace(BLANK, path=link, realpath="/dev/nvme1n1", kname="nvme1n1")
    check_block_target(facts, writes=True, destroy=(link,))
    exc = refusal(facts, destroy=("/dev/nvme1n1",))  # the resolved name is another spelling
    assert exc.rule == "destroy-data-mismatch" and f"--destroy-data {link}" in str(exc)


def test_read_only_workloads_run_on_any_block_device():
    worst = dataclasses.replace(
        BLANK, read_only=True, holds_root=True, holds_database=True, mountpoints=(("loop1", "/"),),
        holders=(("dm-0", "loop1"),), busy=True, signatures=("ext4",), unknown=("x",),
    )  # fmt: skip
    check_block_target(worst, writes=False, destroy=())
    check_block_target(dataclasses.replace(BLANK, mountpoints=(("loop1", "/mnt/data"),)), writes=False, destroy=())


def test_not_a_block_device_refused_even_for_reads():
    exc = refusal(DeviceFacts(path="/tmp/x", realpath="/tmp/x", is_block=False), writes=False)
    assert exc.rule == "not-block"


def test_rule_order_root_before_everything_else():
    everything = dataclasses.replace(
        BLANK, holds_root=True, holds_database=True, mountpoints=(("loop1", "/"),), signatures=("ext4",)
    )
    assert refusal(everything, destroy=()).rule == "root-device"
    assert refusal(dataclasses.replace(everything, holds_root=False)).rule == "database-device"
    assert list(RULES).index("destroy-data") > list(RULES).index("signature")


# --------------------------------------------------------------------------- pure parsers


def test_parse_wipefs_and_blkid():
    wipefs = '{"signatures": [{"device": "loop0", "offset": "0x438", "type": "ext4", "uuid": "u", "label": null},' \
        '{"device": "loop0", "offset": "0x1fe", "type": "dos", "uuid": null, "label": null}]}'
    assert parse_wipefs_json(wipefs) == ("ext4", "dos")
    assert parse_wipefs_json("") == ()
    assert parse_wipefs_json('{"signatures": []}') == ()
    with pytest.raises(ValueError):
        parse_wipefs_json('{"x": 1}')
    assert parse_blkid_export("DEVNAME=/dev/loop0\nUUID=u\nTYPE=ext4\nUSAGE=filesystem\n") == ("ext4",)
    assert parse_blkid_export("DEVNAME=/dev/loop0\nPTUUID=78563412\nPTTYPE=dos\n") == ("dos",)
    assert parse_blkid_export("") == ()


def test_parse_lsblk_mountinfo_swaps_findmnt():
    lsblk = {
        "blockdevices": [
            {"kname": "loop0", "mountpoints": [None], "children": [
                {"kname": "loop0p1", "mountpoints": ["/mnt/a", "/mnt/b"]},
                {"kname": "loop0p2", "mountpoints": [None], "children": [{"kname": "dm-0", "mountpoints": ["/srv"]}]},
            ]},
        ]
    }  # fmt: skip
    assert parse_lsblk_mounts(json.dumps(lsblk)) == (("loop0p1", "/mnt/a"), ("loop0p1", "/mnt/b"), ("dm-0", "/srv"))
    mi = "42 27 7:0 / /tmp/with\\040space rw,relatime - ext4 /dev/loop0 rw\n27 1 254:0 / / rw - ext4 /dev/vda rw\n"
    assert parse_mountinfo_sources(mi) == (("7:0", "/dev/loop0", "/tmp/with space"), ("254:0", "/dev/vda", "/"))
    assert parse_swaps("Filename\tType\tSize\tUsed\tPriority\n/dev/loop3 partition 1020 0 -2\n") == ("/dev/loop3",)
    assert findmnt_source_device("/dev/sda2[/@home]") == "/dev/sda2"
    assert findmnt_source_device("tmpfs") is None and findmnt_source_device("tank/vm") is None


# --------------------------------------------------------------------------- real loop devices

IMG_MIB = 32
WRITE = "rnd4k-q1t1-write"
READ = "rnd4k-q1t1-read"


def _sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, check=check)


def device_sha256(dev: str) -> str:
    """sha256 of every byte of the device, read with O_DIRECT (no stale page cache)."""
    out = subprocess.run(["dd", f"if={dev}", "iflag=direct", "bs=1M", "status=none"], capture_output=True, check=True)
    assert len(out.stdout) == IMG_MIB * 1024 * 1024
    return hashlib.sha256(out.stdout).hexdigest()


def random_image(path: Path, seed: int) -> str:
    """An image full of a known random pattern (no signature); returns its sha256."""
    data = random.Random(seed).randbytes(IMG_MIB * 1024 * 1024)
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def mbr_image(path: Path, seed: int) -> None:
    """A random image with a DOS partition table: p1 sectors 2048-18431, p2 18432-end."""
    random_image(path, seed)

    def entry(start: int, count: int) -> bytes:
        return struct.pack("<B3sB3sII", 0, b"\xff\xff\xfe", 0x83, b"\xff\xff\xfe", start, count)

    sectors = IMG_MIB * 2048
    with open(path, "r+b") as fh:
        fh.seek(440)
        fh.write(b"\x12\x34\x56\x78\x00\x00" + entry(2048, 16384) + entry(18432, sectors - 18432) + bytes(32) + b"\x55\xaa")


class Devices:
    """Loop devices, mounts, dm devices and exclusive opens made by one test; all undone in teardown."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.loops: list[tuple[str, Path]] = []
        self.mounts: list[Path] = []
        self.dms: list[str] = []
        self.fds: list[int] = []
        self.swaps: list[str] = []

    def attach(self, image: Path, partitions: bool = False, read_only: bool = False) -> str:
        argv = ["losetup", "-f", "--show", "--direct-io=on"] + (["-P"] if partitions else []) + (["-r"] if read_only else []) + [str(image)]
        dev = _sh(*argv).stdout.strip()
        self.loops.append((dev, image))
        if partitions and not os.path.exists(dev + "p1"):
            _sh("partx", "-a", dev)  # this kernel's loop scan does not always see the table
        return dev

    def mount(self, dev: str, name: str) -> Path:
        mnt = self.tmp / name
        mnt.mkdir()
        _sh("mount", dev, str(mnt))
        self.mounts.append(mnt)
        return mnt

    def umount(self, mnt: Path) -> None:
        _sh("umount", str(mnt))
        self.mounts.remove(mnt)

    def hold_exclusive(self, dev: str) -> None:
        self.fds.append(os.open(dev, os.O_RDONLY | os.O_EXCL))

    def teardown(self) -> None:
        for fd in self.fds:
            os.close(fd)
        for swap in self.swaps:
            _sh("swapoff", swap, check=False)
        for mnt in reversed(self.mounts):
            _sh("umount", str(mnt), check=False)
        for name in self.dms:
            _sh("dmsetup", "remove", name, check=False)
        for dev, _ in self.loops:
            if os.path.exists(dev + "p1"):
                _sh("partx", "-d", dev, check=False)
            _sh("losetup", "-d", dev, check=False)
        # nothing left behind: a loop device another process has open at that moment (a pool scan of
        # another test's zfs-fuse, udev's probe) is detached when it lets go (losetup -d sets autoclear)
        for dev, image in self.loops:
            deadline = time.monotonic() + 10
            while _sh("losetup", "-j", str(image), check=False).stdout.strip() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _sh("losetup", "-j", str(image), check=False).stdout.strip() == "", f"{image} still attached"
            assert not os.path.exists(dev + "p1"), f"{dev}p1 still exists"
        for mnt in self.mounts + [m for m in self.tmp.iterdir() if m.is_dir()]:
            assert _sh("findmnt", "-n", str(mnt), check=False).stdout.strip() == "", f"{mnt} still mounted"
        for name in self.dms:
            assert not os.path.exists(f"/dev/mapper/{name}"), f"dm device {name} still exists"
        swaps = Path("/proc/swaps").read_text()
        for swap in self.swaps:
            assert swap not in swaps, f"{swap} still used as swap"


@pytest.fixture
def devices(tmp_path: Path):
    d = Devices(tmp_path)
    try:
        yield d
    finally:
        d.teardown()


def assert_refused(res, rule: str) -> None:
    assert res.code == ExitCode.USAGE, (res.code, res.err, res.out)
    lines = res.err.strip().splitlines()
    assert len(lines) == 1, res.err
    assert lines[0].startswith("storbench: error: refusing to write to block device"), lines[0]
    assert f"[{rule}]" in lines[0], lines[0]


def run_write(cli, dev: str, *extra: str):
    return cli("run", "--target", dev, "--workload", WRITE, "--size", "8m", "--runtime", "1", "--no-report", *extra)


def ext4_with_file(devices: Devices, image: Path) -> str:
    """An ext4 image holding a file, unmounted; returns its loop device."""
    with open(image, "wb") as fh:
        fh.truncate(IMG_MIB * 1024 * 1024)
    dev = devices.attach(image)
    _sh("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
    mnt = devices.mount(dev, "fill")
    (mnt / "precious.bin").write_bytes(random.Random(7).randbytes(1024 * 1024))
    devices.umount(mnt)
    return dev



@needs_root
@needs_fio
def test_mounted_device_refused_and_unchanged(cli, devices, tmp_path):
    dev = ext4_with_file(devices, tmp_path / "m.img")
    devices.mount(dev, "mnt")
    _sh("sync")
    before = device_sha256(dev)
    assert_refused(run_write(cli, dev, "--destroy-data", dev), "mounted")
    assert device_sha256(dev) == before


@needs_root
@needs_fio
def test_mounted_partition_refuses_the_disk_and_unchanged(cli, devices, tmp_path):
    image = tmp_path / "p.img"
    mbr_image(image, seed=11)
    dev = devices.attach(image, partitions=True)
    assert os.path.exists(dev + "p1") and os.path.exists(dev + "p2")
    _sh("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev + "p1")
    mnt = devices.mount(dev + "p1", "p1")
    (mnt / "precious.bin").write_bytes(b"x" * 65536)
    _sh("sync")
    before = device_sha256(dev)
    res = run_write(cli, dev, "--destroy-data", dev)
    assert_refused(res, "mounted")
    assert f"{os.path.basename(dev)}p1 at {mnt}" in res.err
    assert device_sha256(dev) == before


def _device_mapper_works() -> str | None:
    if shutil.which("dmsetup") is None:
        return "dmsetup is not installed"
    if not os.path.exists("/dev/mapper/control") or _sh("dmsetup", "version", check=False).returncode != 0:
        return "the kernel has no device-mapper (no /dev/mapper/control; dmsetup version fails)"
    return None


@needs_root
@needs_fio
def test_holder_refused_and_unchanged(cli, devices, tmp_path):
    why = _device_mapper_works()
    if why:
        pytest.skip(f"cannot make a real holder: {why}")
    image = tmp_path / "h.img"
    expected = random_image(image, seed=21)
    dev = devices.attach(image)
    name = f"sbguard-{os.getpid()}-{tmp_path.name}"[:100]
    subprocess.run(["dmsetup", "create", name], input=f"0 {IMG_MIB * 2048} linear {dev} 0\n", text=True, check=True, capture_output=True)
    devices.dms.append(name)
    res = run_write(cli, dev, "--destroy-data", dev)
    assert_refused(res, "holders")
    assert device_sha256(dev) == expected


@needs_root
def test_holders_read_from_sysfs(devices, tmp_path):
    """The holders fact, with a real device and a sysfs tree shaped like /sys saying dm-0 holds its p2."""
    image = tmp_path / "s.img"
    random_image(image, seed=22)
    dev = devices.attach(image)
    kname = os.path.basename(dev)
    st = os.stat(dev)
    sys_root = tmp_path / "sys"
    disk = sys_root / "devices" / "virtual" / "block" / kname
    (disk / "holders").mkdir(parents=True)
    (disk / f"{kname}p2" / "holders" / "dm-0").mkdir(parents=True)
    (disk / f"{kname}p2" / "partition").write_text("2\n")
    (disk / "ro").write_text("0\n")
    (disk / "dev").write_text(f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}\n")
    (sys_root / "class" / "block").mkdir(parents=True)
    (sys_root / "class" / "block" / kname).symlink_to(disk)
    (sys_root / "class" / "block" / f"{kname}p2").symlink_to(disk / f"{kname}p2")
    (sys_root / "dev" / "block").mkdir(parents=True)
    (sys_root / "dev" / "block" / f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}").symlink_to(disk)
    facts = gather_device_facts(dev, sys_root=str(sys_root))
    assert facts.holders == (("dm-0", f"{kname}p2"),)
    with pytest.raises(BlockTargetRefused) as info:
        check_block_target(facts, writes=True, destroy=(dev,))
    assert info.value.rule == "holders"


@needs_root
@needs_fio
def test_read_only_device_refused_and_unchanged(cli, devices, tmp_path):
    image = tmp_path / "ro.img"
    expected = random_image(image, seed=91)
    dev = devices.attach(image, read_only=True)
    assert Path(f"/sys/class/block/{os.path.basename(dev)}/ro").read_text().strip() == "1"
    assert_refused(run_write(cli, dev, "--destroy-data", dev), "read-only")
    assert device_sha256(dev) == expected


@needs_root
@needs_fio
def test_busy_device_refused_and_unchanged(cli, devices, tmp_path):
    image = tmp_path / "b.img"
    expected = random_image(image, seed=31)
    dev = devices.attach(image)
    devices.hold_exclusive(dev)  # what a mount in another namespace, ZFS or a VM does
    assert_refused(run_write(cli, dev, "--destroy-data", dev), "busy")
    assert device_sha256(dev) == expected
    # reading is allowed, and the guard does not try the exclusive claim then
    from storbench.suites import builtin_catalog

    target = resolve_target(dev, workloads=(builtin_catalog().workload(READ),))
    assert target.kind == "block" and target.path == dev
    assert gather_device_facts(dev, probe_exclusive=False).busy is None


@needs_root
@needs_fio
def test_swap_refused_and_unchanged(cli, devices, tmp_path):
    image = tmp_path / "w.img"
    random_image(image, seed=41)
    dev = devices.attach(image)
    _sh("mkswap", dev)
    if _sh("swapon", dev, check=False).returncode != 0:
        pytest.skip("swapon does not work here")
    devices.swaps.append(dev)
    # an active swap device is the kernel's to write (it swapped pages out to it during a clean run):
    # what storbench would have written first, and the kernel never does, is its header page
    header = _first_page(dev)
    res = run_write(cli, dev, "--destroy-data", dev)
    assert_refused(res, "mounted")
    assert "as swap" in res.err
    assert _first_page(dev) == header and b"SWAPSPACE2" in header


def _first_page(dev: str) -> bytes:
    fd = os.open(dev, os.O_RDONLY)
    try:
        return os.pread(fd, 4096, 0)
    finally:
        os.close(fd)


@needs_root
@needs_fio
def test_ext4_signature_refused_and_unchanged(cli, devices, tmp_path):
    dev = ext4_with_file(devices, tmp_path / "e.img")
    before = device_sha256(dev)
    res = run_write(cli, dev, "--destroy-data", dev)
    assert_refused(res, "signature")
    assert "ext4" in res.err and f"wipefs -a {dev}" in res.err
    assert device_sha256(dev) == before


@needs_root
@needs_fio
def test_no_destroy_data_refused_and_unchanged(cli, devices, tmp_path):
    image = tmp_path / "n.img"
    expected = random_image(image, seed=51)
    dev = devices.attach(image)
    res = run_write(cli, dev)
    assert_refused(res, "destroy-data")
    assert f"pass --destroy-data {dev}" in res.err and WRITE in res.err
    assert device_sha256(dev) == expected


@needs_root
@needs_fio
def test_destroy_data_naming_another_device_refused_and_unchanged(cli, devices, tmp_path):
    expected = random_image(tmp_path / "a.img", seed=61)
    dev = devices.attach(tmp_path / "a.img")
    random_image(tmp_path / "o.img", seed=62)
    other = devices.attach(tmp_path / "o.img")
    for wrong in (other, dev + "1"):  # another real device; a typo (/dev/loop11 for /dev/loop1)
        res = run_write(cli, dev, "--destroy-data", wrong)
        assert_refused(res, "destroy-data-mismatch")
        assert repr(wrong) in res.err and f"pass --destroy-data {dev}" in res.err
    assert device_sha256(dev) == expected


@needs_root
@needs_fio
def test_destroy_data_via_symlink_or_other_spelling_refused_and_unchanged(cli, devices, tmp_path):
    image = tmp_path / "l.img"
    expected = random_image(image, seed=71)
    dev = devices.attach(image)
    link = tmp_path / "disk-link"
    link.symlink_to(dev)
    for spelling in (str(link), dev.replace("/dev/", "/dev//"), dev.replace("/dev/", "/dev/../dev/")):
        assert os.path.realpath(spelling) == dev
        res = run_write(cli, dev, "--destroy-data", spelling)
        assert_refused(res, "destroy-data-mismatch")
    # and the other way round: target via the symlink, --destroy-data the device name
    assert_refused(run_write(cli, str(link), "--destroy-data", dev), "destroy-data-mismatch")
    assert device_sha256(dev) == expected


@needs_root
def test_database_device_refused(devices, tmp_path):
    """Real facts: the results database on a filesystem on the device (the CLI passes db_path)."""
    from storbench.suites import builtin_catalog

    dev = ext4_with_file(devices, tmp_path / "d.img")
    mnt = devices.mount(dev, "db")
    db = mnt / "results.sqlite"
    db.write_bytes(b"")
    facts = gather_device_facts(dev, db_path=f"sqlite:///{db}")
    assert facts.holds_database is True and facts.holds_root is False
    assert gather_device_facts(dev, db_path=str(tmp_path / "elsewhere.sqlite")).holds_database is False
    write = builtin_catalog().workload(WRITE)
    with pytest.raises(BlockTargetRefused) as info:
        resolve_target(dev, destroy=(dev,), workloads=(write,), db_path=str(db))
    assert info.value.rule == "database-device"


@needs_root
def test_database_on_a_partition_counts_for_the_disk(devices, tmp_path):
    image = tmp_path / "dp.img"
    mbr_image(image, seed=81)
    disk = devices.attach(image, partitions=True)
    _sh("mkfs.ext4", "-q", "-F", disk + "p1")
    mnt = devices.mount(disk + "p1", "dbp")
    db = mnt / "results.sqlite"
    assert gather_device_facts(disk, db_path=str(db)).holds_database is True  # db need not exist yet
    assert gather_device_facts(disk + "p2", db_path=str(db)).holds_database is False  # a sibling partition


def test_devices_below_a_filesystem_include_the_disk_of_a_partition_and_dm_slaves(tmp_path):
    """Which devices hold / : sysfs relations only (a scratch tree shaped like /sys)."""
    from storbench.targets.guard import _Sysfs

    root = tmp_path / "sys"
    blocks = root / "devices" / "pci" / "block"
    (blocks / "sda" / "sda2").mkdir(parents=True)
    (blocks / "sda" / "sda2" / "partition").write_text("2\n")
    (blocks / "sda" / "sda3").mkdir()
    (blocks / "sda" / "sda3" / "partition").write_text("3\n")
    (blocks / "sdb").mkdir()
    virt = root / "devices" / "virtual" / "block"
    (virt / "dm-0" / "slaves").mkdir(parents=True)
    (virt / "dm-1" / "slaves").mkdir(parents=True)
    cls = root / "class" / "block"
    cls.mkdir(parents=True)
    for name, where in {"sda": blocks / "sda", "sda2": blocks / "sda" / "sda2", "sda3": blocks / "sda" / "sda3",
                        "sdb": blocks / "sdb", "dm-0": virt / "dm-0", "dm-1": virt / "dm-1"}.items():  # fmt: skip
        (cls / name).symlink_to(where)
    (virt / "dm-0" / "slaves" / "sda3").symlink_to(blocks / "sda" / "sda3")  # LVM PV on sda3
    (virt / "dm-1" / "slaves" / "dm-0").symlink_to(virt / "dm-0")  # dm-crypt on the LV
    sysfs = _Sysfs(str(root))
    assert sysfs.below("sda2") == {"sda2", "sda"}
    assert sysfs.below("dm-1") == {"dm-1", "dm-0", "sda3", "sda"}
    assert "sdb" not in sysfs.below("dm-1") and "sda2" not in sysfs.below("dm-1")
    assert sysfs.partitions("sda") == ("sda2", "sda3")


@needs_root
@needs_fio
def test_root_device_refused(cli):
    source = _sh("findmnt", "-n", "-o", "SOURCE", "/").stdout.strip()
    root = findmnt_source_device(source)
    if root is None or not os.path.exists(root):
        pytest.skip(f"/ is not on a block device here ({source!r})")
    assert gather_device_facts(root).holds_root is True
    # no --destroy-data and --dry-run: even a broken guard could not write anything here
    res = cli("run", "--target", root, "--workload", WRITE, "--size", "8m", "--runtime", "1", "--dry-run")
    assert_refused(res, "root-device")


def _stored(res) -> list[dict]:
    assert res.code == 0, (res.code, res.err)
    return json.loads(res.out)


@needs_root
@needs_fio
def test_blank_device_with_destroy_data_runs_and_stores(cli, devices, tmp_path):
    image = tmp_path / "z.img"
    with open(image, "wb") as fh:
        fh.truncate(IMG_MIB * 1024 * 1024)
    dev = devices.attach(image)
    before = device_sha256(dev)
    records = _stored(run_write(cli, dev, "--destroy-data", dev, "--json"))
    assert len(records) == 1
    rec = records[0]
    assert rec["workload"] == WRITE and rec["target"] == dev
    assert rec["options"]["filename"] == dev and rec["jobs"][0]["write"]["io_bytes"] > 0
    assert device_sha256(dev) != before  # fio really wrote the device
    shown = cli("show", str(rec["run"]), "--json")
    assert shown.code == 0 and WRITE in shown.out


@needs_root
@needs_fio
def test_read_workload_runs_on_a_filesystem_without_destroy_data(cli, devices, tmp_path):
    dev = ext4_with_file(devices, tmp_path / "r.img")
    before = device_sha256(dev)
    res = cli("run", "--target", dev, "--workload", READ, "--size", "8m", "--runtime", "1", "--no-report", "--json")
    records = _stored(res)
    assert [r["workload"] for r in records] == [READ] and records[0]["target"] == dev
    assert device_sha256(dev) == before
    # a mixed run is refused as a whole: one writing workload is enough
    mixed = cli("run", "--target", dev, "--workload", READ, "--workload", WRITE, "--size", "8m", "--runtime", "1", "--no-report")
    assert_refused(mixed, "signature")
    assert device_sha256(dev) == before


@needs_root
@needs_fio
def test_read_workload_runs_on_a_mounted_device(cli, devices, tmp_path):
    dev = ext4_with_file(devices, tmp_path / "rm.img")
    devices.mount(dev, "mnt")
    res = cli("run", "--target", dev, "--workload", READ, "--size", "8m", "--runtime", "1", "--no-report", "--json")
    assert [r["workload"] for r in _stored(res)] == [READ]
