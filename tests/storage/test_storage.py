"""storbench.storage: golden tests of the pure parsers on recorded outputs, the edge with a fake
runner and a fake /sys, and real loop devices (as root).

Recorded outputs live in tests/data/storage (README.md there says which are real and which are
reconstructed: ZFS, NFS, SMB, md/LVM/dm-crypt do not exist on the recording machine).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from storbench.errors import StoreError
from storbench.storage import (
    FORMAT_VERSION,
    BtrfsInfo,
    DeviceInfo,
    FilesystemInfo,
    HostInfo,
    StorageInfo,
    SubprocessRunner,
    SysfsBlock,
    ZfsVdev,
    describe_target,
    device_from_sysfs,
    differences,
    format_bytes,
    format_storage,
    mount_for_path,
    network_info_from_mount,
    parse_btrfs_fi_df,
    parse_btrfs_fi_show,
    parse_btrfs_fi_usage,
    parse_btrfs_property,
    parse_cpuinfo_model,
    parse_dumpe2fs,
    parse_findmnt_json,
    parse_lsblk_json,
    parse_meminfo_total,
    parse_mountinfo,
    parse_network_source,
    parse_os_release,
    parse_scheduler,
    parse_size,
    parse_xfs_info,
    parse_zfs_get,
    parse_zpool_status,
    split_source,
    storage_from_dict,
    storage_to_dict,
    zfs_info_from,
    zpool_layout,
    zvol_dataset_from_path,
)

DATA = Path(__file__).parent.parent / "data" / "storage"


def read(name: str) -> str:
    return (DATA / name).read_text()


# =========================================================================== pure: findmnt / mountinfo


def test_findmnt_real_loop_mounts():
    (ext4,) = parse_findmnt_json(read("findmnt-ext4-loop.json"))
    assert (ext4.target, ext4.source, ext4.fstype) == ("/tmp/sbrec/m/ext4", "/dev/loop0", "ext4")
    assert ext4.options == ("rw", "relatime", "stripe=64")

    (xfs,) = parse_findmnt_json(read("findmnt-xfs-loop.json"))
    assert xfs.fstype == "xfs"
    assert "sunit=128" in xfs.options and "swidth=512" in xfs.options

    (btrfs,) = parse_findmnt_json(read("findmnt-btrfs-loop.json"))
    assert btrfs.options[:3] == ("rw", "relatime", "compress=zstd:3")

    (sub,) = parse_findmnt_json(read("findmnt-btrfs-subvol.json"))
    assert sub.source == "/dev/loop2[/vol1]"
    assert split_source(sub.source) == ("/dev/loop2", "/vol1")
    assert "subvol=/vol1" in sub.options


def test_findmnt_tree_is_flattened_and_deepest_mount_wins():
    entries = parse_findmnt_json(read("findmnt-tree.json"))
    targets = [e.target for e in entries]
    assert targets[0] == "/"
    assert "/sys/fs/cgroup/memory" in targets and "/tmp/sbrec/m/sub" in targets
    assert len(entries) == 23
    assert mount_for_path(entries, "/tmp/sbrec/m/xfs/a/file").target == "/tmp/sbrec/m/xfs"
    assert mount_for_path(entries, "/tmp/sbrec/m/xfsother").target == "/"
    assert mount_for_path(entries, "/sys/fs/cgroup/cpu").fstype == "cgroup"


def test_findmnt_rejects_other_json():
    with pytest.raises(ValueError):
        parse_findmnt_json('{"blockdevices": []}')


def test_mountinfo_matches_findmnt():
    entries = parse_mountinfo(read("mountinfo-loops.txt"))
    by_target = {e.target: e for e in entries}
    root = by_target["/"]
    assert root.source == "/dev/vda"
    # findmnt's OPTIONS = per-mount options + superblock options, "rw" once
    assert root.options == ("rw", "relatime", "discard", "resv_strict", "resuid=65534", "resgid=65534")
    assert by_target["/tmp/sbrec/m/sub"].source == "/dev/loop2[/vol1]"
    (findmnt_sub,) = parse_findmnt_json(read("findmnt-btrfs-subvol.json"))
    assert by_target["/tmp/sbrec/m/sub"].options == findmnt_sub.options


# =========================================================================== pure: lsblk


def test_lsblk_virtio_disk():
    (vda,) = parse_lsblk_json(read("lsblk-vda.json"))
    assert vda.kname == "vda" and vda.type == "disk" and vda.path == "/dev/vda"
    assert vda.size_bytes == 274877906944
    assert vda.transport == "virtio"  # lsblk's tran is null; subsystems says virtio
    assert vda.rotational is True
    assert vda.scheduler == "mq-deadline"
    assert vda.nr_requests == 256
    assert (vda.logical_block_size_bytes, vda.physical_block_size_bytes) == (512, 4096)
    assert vda.discard is True and vda.discard_max_bytes == 1073741824
    assert vda.read_ahead_kb == 8192
    assert vda.model is None and vda.vendor == "0x1af4"
    assert vda.parents == ()


def test_lsblk_loop_and_partition_chain():
    loop0 = parse_lsblk_json(read("lsblk-loop-ext4.json"))
    assert [(d.kname, d.type, d.size_bytes) for d in loop0] == [("loop0", "loop", 134217728)]
    part, loop3 = parse_lsblk_json(read("lsblk-loop-part.json"))
    assert (part.kname, part.type, part.size_bytes, part.parents) == ("loop3p1", "part", 66060288, ("loop3",))
    assert (loop3.kname, loop3.type, loop3.parents) == ("loop3", "loop", ())
    assert loop3.scheduler == "none"


def test_lsblk_md_raid1_lvm_crypt_chain():
    devs = parse_lsblk_json(read("lsblk-md-raid1-lvm-crypt.json"))
    assert [d.kname for d in devs] == ["dm-1", "dm-0", "md0", "sda1", "sdb1", "sda", "sdb"]
    assert [d.type for d in devs] == ["crypt", "lvm", "raid1", "part", "part", "disk", "disk"]
    by = {d.kname: d for d in devs}
    assert by["dm-1"].name == "cryptdata" and by["dm-1"].path == "/dev/mapper/cryptdata"
    assert by["dm-1"].parents == ("dm-0",)
    assert by["dm-0"].name == "vg0-data" and by["dm-0"].parents == ("md0",)
    assert by["md0"].parents == ("sda1", "sdb1")
    assert by["sda1"].parents == ("sda",)
    assert by["sda"].model == "Samsung SSD 870 EVO 2TB" and by["sda"].serial == "S6PNNS0T612345A"
    assert by["sdb"].model == "CT2000MX500SSD1"
    assert by["sda"].transport == "sata" and by["sda"].rotational is False
    assert by["dm-1"].scheduler is None and by["dm-1"].discard is False
    assert by["sda"].vendor == "ATA"  # lsblk pads it with spaces


def test_lsblk_forward_tree_and_old_string_values():
    # util-linux < 2.33 printed every value as a string; forward tree: children are holders
    text = json.dumps(
        {
            "blockdevices": [
                {
                    "name": "sda", "kname": "sda", "type": "disk", "size": "500107862016", "rota": "1",
                    "sched": "cfq", "rq-size": "128", "disc-max": "0", "log-sec": "512", "phy-sec": "4096",
                    "ra": "128", "tran": "sata", "model": "WDC WD5000AAKX-0",
                    "children": [{"name": "sda1", "kname": "sda1", "type": "part", "size": "500106813440", "rota": "1"}],
                }
            ]
        }
    )
    sda, sda1 = parse_lsblk_json(text, inverse=False)
    assert sda.size_bytes == 500107862016 and sda.rotational is True and sda.discard is False
    assert sda.nr_requests == 128 and sda.physical_block_size_bytes == 4096 and sda.scheduler == "cfq"
    assert sda.parents == () and sda1.parents == ("sda",)


def test_lsblk_nbd_type_and_dedup():
    text = json.dumps(
        {
            "blockdevices": [
                {"name": "md1", "kname": "md1", "type": "raid0", "children": [
                    {"name": "nbd0p1", "kname": "nbd0p1", "type": "part", "children": [{"name": "nbd0", "kname": "nbd0", "type": "disk"}]},
                    {"name": "nbd0p2", "kname": "nbd0p2", "type": "part", "children": [{"name": "nbd0", "kname": "nbd0", "type": "disk"}]},
                ]}
            ]
        }
    )
    devs = parse_lsblk_json(text)
    assert [d.kname for d in devs] == ["md1", "nbd0p1", "nbd0p2", "nbd0"]
    assert devs[-1].type == "nbd"


# =========================================================================== pure: xfs / ext4 / btrfs


def test_xfs_info_real():
    x = parse_xfs_info(read("xfs_info-loop.txt"))
    assert x.block_size_bytes == 4096 and x.sector_size_bytes == 512 and x.inode_size_bytes == 512
    assert (x.agcount, x.ag_blocks, x.data_blocks) == (2, 40960, 81920)
    assert (x.sunit_blocks, x.swidth_blocks) == (16, 64)
    assert (x.stripe_unit_bytes, x.stripe_width_bytes) == (64 * 1024, 256 * 1024)
    assert x.log_location == "internal"
    assert (x.log_blocks, x.log_block_size_bytes, x.log_version, x.log_sunit_blocks) == (16384, 4096, 2, 16)
    assert x.realtime == "none"
    assert {"crc=1", "reflink=1", "rmapbt=0", "ftype=1", "bigtime=1"} <= set(x.features)


def test_xfs_info_external_log_and_no_stripe():
    text = (
        "meta-data=/dev/sdb1              isize=512    agcount=4, agsize=65536 blks\n"
        "         =                       sectsz=4096  attr=2, projid32bit=1\n"
        "         =                       crc=1        finobt=1, sparse=1, rmapbt=0\n"
        "         =                       reflink=1\n"
        "data     =                       bsize=4096   blocks=262144, imaxpct=25\n"
        "         =                       sunit=0      swidth=0 blks\n"
        "naming   =version 2              bsize=4096   ascii-ci=0, ftype=1\n"
        "log      =external               bsize=4096   blocks=2560, version=2\n"
        "         =                       sectsz=4096  sunit=1 blks, lazy-count=1\n"
        "realtime =none                   extsz=4096   blocks=0, rtextents=0\n"
    )
    x = parse_xfs_info(text)
    assert x.log_location == "external" and x.log_blocks == 2560 and x.sector_size_bytes == 4096
    assert x.sunit_blocks == 0 and x.stripe_unit_bytes == 0
    with pytest.raises(ValueError):
        parse_xfs_info("nothing here\n")


def test_dumpe2fs_real():
    e = parse_dumpe2fs(read("dumpe2fs-h-loop.txt"))
    assert e.block_size_bytes == 1024 and e.block_count == 131072
    assert (e.raid_stride_blocks, e.raid_stripe_width_blocks) == (16, 64)
    assert e.inode_size_bytes == 256 and e.flex_bg_size == 16
    assert e.journal_size_bytes == 4 * 1024 * 1024
    assert "metadata_csum" in e.features and "has_journal" in e.features and len(e.features) == 15
    assert e.default_mount_options == ("user_xattr", "acl")
    assert e.state == "clean"
    with pytest.raises(ValueError):
        parse_dumpe2fs("dumpe2fs 1.47.0 (5-Feb-2023)\n")


def test_dumpe2fs_without_raid_hints():
    e = parse_dumpe2fs("Block size:               4096\nFilesystem features:      has_journal extent\nJournal size:             128M\n")
    assert e.raid_stride_blocks is None and e.raid_stripe_width_blocks is None
    assert e.journal_size_bytes == 128 * 1024 * 1024


def test_btrfs_fi_df_bytes_and_human_agree():
    exact = parse_btrfs_fi_df(read("btrfs-fi-df-b.txt"))
    assert [(s.kind, s.profile) for s in exact] == [("Data", "single"), ("System", "DUP"), ("Metadata", "DUP"), ("GlobalReserve", "single")]
    assert exact[0].total_bytes == 8388608 and exact[2].used_bytes == 131072
    human = parse_btrfs_fi_df(read("btrfs-fi-df-human.txt"))
    assert [s.total_bytes for s in human] == [s.total_bytes for s in exact]
    assert human[2].used_bytes == 144 * 1024


def test_btrfs_usage_show_and_property():
    usage = parse_btrfs_fi_usage(read("btrfs-fi-usage-b.txt"))
    assert [(s.kind, s.profile, s.total_bytes) for s in usage] == [
        ("Data", "single", 8388608),
        ("Metadata", "DUP", 33554432),
        ("System", "DUP", 8388608),
    ]
    assert parse_btrfs_fi_show(read("btrfs-fi-show-raw.txt")) == ("/dev/loop2",)
    assert parse_btrfs_property(read("btrfs-property-get-compression.txt")) == "zstd"
    assert parse_btrfs_property("") is None


def test_btrfs_raid1_two_devices():
    text = (
        "Label: none  uuid: 0d5e3b0e-3a76-4c1c-9b1b-5d2f7e0c2d11\n"
        "\tTotal devices 2 FS bytes used 1048576\n"
        "\tdevid    1 size 10737418240 used 2172649472 path /dev/sdc\n"
        "\tdevid    2 size 10737418240 used 2172649472 path /dev/sdd\n"
    )
    assert parse_btrfs_fi_show(text) == ("/dev/sdc", "/dev/sdd")
    df = parse_btrfs_fi_df("Data, RAID1: total=1073741824, used=0\nMetadata, RAID1C3: total=268435456, used=114688\n")
    assert [(s.profile, s.total_bytes) for s in df] == [("RAID1", 1073741824), ("RAID1C3", 268435456)]


# =========================================================================== pure: zfs


def test_zfs_get_four_columns_and_pool():
    props = parse_zfs_get(read("zfs-get-Hp-all-tank-vm.txt"))
    assert len(props) == 72
    by = {p.property: p for p in props}
    assert by["recordsize"].value == "65536" and by["recordsize"].source == "local"
    assert by["compression"].source == "inherited from tank"
    assert by["compressratio"].value == "1.38"
    pool = parse_zfs_get(read("zpool-get-Hp-all-tank.txt"))
    assert {p.property: p.value for p in pool}["ashift"] == "12"
    (status,) = parse_zpool_status(read("zpool-status-P-tank-mirror-log-cache.txt"))
    z = zfs_info_from("tank/vm", props, pool, status)
    assert (z.dataset, z.pool, z.dataset_type) == ("tank/vm", "tank", "filesystem")
    assert z.recordsize_bytes == 65536 and z.volblocksize_bytes is None
    assert (z.compression, z.sync, z.logbias, z.atime, z.dedup) == ("lz4", "standard", "latency", "off", "off")
    assert (z.primarycache, z.secondarycache, z.copies) == ("all", "all", 1)
    assert z.pool_ashift == 12 and z.pool_health == "ONLINE" and z.pool_size_bytes == 3985729650688
    assert z.layout == "mirror of 2 + log mirror of 2 + cache 1"


def test_zfs_get_two_columns_zvol():
    z = zfs_info_from("tank/vols/db", parse_zfs_get(read("zfs-get-Hp-o-property-value-tank-vols-db.txt")))
    assert z.dataset_type == "volume"
    assert z.volblocksize_bytes == 16384 and z.volsize_bytes == 20 * 1024**3
    assert z.recordsize_bytes is None and z.atime is None  # "-": not a property of volumes
    assert (z.compression, z.sync, z.primarycache, z.secondarycache, z.logbias) == ("zstd", "always", "metadata", "none", "throughput")
    assert z.vdevs == () and z.layout is None


def test_zpool_status_mirror_log_cache():
    (pool,) = parse_zpool_status(read("zpool-status-P-tank-mirror-log-cache.txt"))
    assert pool.pool == "tank" and pool.state == "ONLINE"
    assert [(v.role, v.kind, v.name, len(v.devices)) for v in pool.vdevs] == [
        ("data", "mirror", "mirror-0", 2),
        ("log", "mirror", "mirror-1", 2),
        ("cache", "disk", "/dev/disk/by-id/nvme-Samsung_SSD_970_EVO_Plus_500GB_S4EVNX0R612345K-part2", 1),
    ]
    assert pool.vdevs[0].devices[0] == "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K4RJ3N1F-part1"


def test_zpool_status_raidz2_special_spare():
    (pool,) = parse_zpool_status(read("zpool-status-P-backup-raidz2.txt"))
    assert [(v.role, v.kind) for v in pool.vdevs] == [("data", "raidz2"), ("special", "mirror"), ("spare", "disk")]
    assert pool.vdevs[0].devices == tuple(f"/dev/sd{c}1" for c in "abcdef")
    assert pool.vdevs[2].state == "AVAIL"
    assert zpool_layout(pool.vdevs) == "raidz2 of 6 + special mirror of 2 + spare 1"


def test_zpool_status_short_names_stripes_and_replacing():
    # spaces instead of tabs (as pasted in issues), a replacing group, trailing notes, two pools
    text = """  pool: fast
 state: DEGRADED
config:

        NAME                          STATE     READ WRITE CKSUM
        fast                          DEGRADED     0     0     0
          nvme0n1                     ONLINE       0     0     0
          nvme1n1                     ONLINE       0     0     0
          mirror-2                    DEGRADED     0     0     0
            sdx                       ONLINE       0     0     0
            replacing-1               DEGRADED     0     0     0
              old                     UNAVAIL      0     0     0  was /dev/sdy1
              sdz                     ONLINE       0     0     0  (resilvering)

errors: No known data errors

  pool: slow
 state: ONLINE
config:

        NAME        STATE     READ WRITE CKSUM
        slow        ONLINE       0     0     0
          raidz-0   ONLINE       0     0     0
            sda     ONLINE       0     0     0
            sdb     ONLINE       0     0     0
            sdc     ONLINE       0     0     0

errors: No known data errors
"""
    fast, slow = parse_zpool_status(text)
    assert fast.state == "DEGRADED"
    assert [(v.kind, v.devices) for v in fast.vdevs] == [
        ("disk", ("nvme0n1",)),
        ("disk", ("nvme1n1",)),
        ("mirror", ("sdx", "old", "sdz")),
    ]
    assert zpool_layout(fast.vdevs) == "2 disk + mirror of 3"
    assert zpool_layout(fast.vdevs[:2]) == "stripe of 2"
    assert slow.vdevs[0].kind == "raidz1" and len(slow.vdevs[0].devices) == 3


def test_zvol_dataset_from_path():
    assert zvol_dataset_from_path("/dev/zvol/tank/vols/db") == "tank/vols/db"
    assert zvol_dataset_from_path("/dev/zvol/tank/vols/db-part1") == "tank/vols/db"
    assert zvol_dataset_from_path("/dev/sda") is None


# =========================================================================== pure: small parsers


def test_network_sources():
    assert parse_network_source("nfs4", "nas01.example.lan:/export/bench") == ("nas01.example.lan", "/export/bench")
    assert parse_network_source("nfs", "[fd00::5]:/export") == ("fd00::5", "/export")
    assert parse_network_source("cifs", "//fs01.example.lan/bench") == ("fs01.example.lan", "bench")
    assert parse_network_source("smb3", "//10.0.0.2/share/sub") == ("10.0.0.2", "share/sub")
    assert parse_network_source("fuse.sshfs", "bench@host1:/srv/data") == ("host1", "/srv/data")
    assert parse_network_source("9p", "hostshare", ("rw", "trans=virtio")) == (None, "hostshare")
    assert parse_network_source("9p", "data", ("trans=tcp", "addr=10.1.1.1")) == ("10.1.1.1", "data")
    (nfs,) = parse_findmnt_json(read("findmnt-nfs4.json"))
    n = network_info_from_mount(nfs.fstype, nfs.source, nfs.options)
    assert (n.server, n.share, n.protocol_version, n.transport) == ("nas01.example.lan", "/export/bench", "4.2", "tcp")
    assert n.rsize_bytes == n.wsize_bytes == 1048576
    (cifs,) = parse_findmnt_json(read("findmnt-cifs.json"))
    c = network_info_from_mount(cifs.fstype, cifs.source, cifs.options)
    assert (c.server, c.share, c.protocol_version, c.rsize_bytes) == ("fs01.example.lan", "bench", "3.1.1", 4194304)


def test_small_parsers():
    assert parse_scheduler("none [mq-deadline] kyber bfq \n") == "mq-deadline"
    assert parse_scheduler("[none] mq-deadline") == "none"
    assert parse_scheduler("none") == "none"
    assert parse_size("4096k") == 4 * 1024 * 1024 and parse_size("8.00MiB") == 8 * 1024 * 1024
    assert parse_size("128M") == 134217728 and parse_size("0.00B") == 0 and parse_size("-") is None
    assert parse_os_release('NAME="Debian GNU/Linux"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')["PRETTY_NAME"] == (
        "Debian GNU/Linux 12 (bookworm)"
    )
    assert parse_cpuinfo_model("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\n") == "Intel(R) Xeon(R) Processor"
    assert parse_cpuinfo_model("processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n") is None
    assert parse_meminfo_total("MemTotal:       24684092 kB\nMemFree: 1 kB\n") == 24684092 * 1024
    assert format_bytes(67108864) == "64 MiB" and format_bytes(274877906944) == "256 GiB" and format_bytes(1536) == "1.5 KiB"


def test_device_from_sysfs_merges_and_stands_alone():
    (vda,) = parse_lsblk_json(read("lsblk-vda.json"))
    merged = device_from_sysfs(
        SysfsBlock(kname="vda", scheduler="[none] mq-deadline kyber bfq", write_cache="write through", nr_requests="64", discard_max_bytes="0"),
        vda,
    )
    assert (merged.scheduler, merged.write_cache, merged.nr_requests, merged.discard) == ("none", "write through", 64, False)
    assert merged.size_bytes == vda.size_bytes and merged.transport == "virtio"
    alone = device_from_sysfs(
        SysfsBlock(kname="dm-3", size_sectors="2048", dm_name="vg-lv", dm_uuid="LVM-abc", slaves=("sdb2",), rotational="0", write_cache="write back")
    )
    assert (alone.type, alone.name, alone.path, alone.size_bytes, alone.parents) == ("lvm", "vg-lv", "/dev/mapper/vg-lv", 1048576, ("sdb2",))
    part = device_from_sysfs(SysfsBlock(kname="sdb2", is_partition=True, partition_of="sdb"))
    assert (part.type, part.parents) == ("part", ("sdb",))
    loop = device_from_sysfs(SysfsBlock(kname="loop7", loop_backing_file="/img (deleted)", loop_dio="0"))
    assert (loop.type, loop.loop_dio) == ("loop", False)


# =========================================================================== the edge with a fake runner and a fake /sys


class FakeRunner:
    """Answers commands from a function of argv; records every argv (which must be a list of str)."""

    def __init__(self, answer: Callable[[list[str]], tuple[int, str, str] | None]) -> None:
        self.answer = answer
        self.calls: list[list[str]] = []

    def run(self, argv: list[str]) -> tuple[int, str, str]:
        assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
        self.calls.append(argv)
        got = self.answer(argv)
        return got if got is not None else (127, "", "not found")


def make_sysfs(root: Path, devices: dict[str, dict]) -> Path:
    """A fake /sys: class/block/<kname> -> devices/.../<kname> with queue files, slaves, partitions."""
    for kname, spec in devices.items():
        parent = spec.get("partition_of")
        real = root / "devices" / "block" / (f"{parent}/{kname}" if parent else kname)
        real.mkdir(parents=True, exist_ok=True)
        (real / "size").write_text(f"{spec.get('sectors', 2048)}\n")
        if parent:
            (real / "partition").write_text("1\n")
        else:
            q = real / "queue"
            q.mkdir(exist_ok=True)
            for name, value in spec.get("queue", {}).items():
                (q / name).write_text(f"{value}\n")
            (real / "slaves").mkdir(exist_ok=True)
            for s in spec.get("slaves", ()):
                (real / "slaves" / s).write_text("")
        link = root / "class" / "block" / kname
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(real)
    return root


def lsblk_disk_json(kname: str, path: str, model: str, rota: bool, tran: str, size: int) -> str:
    return json.dumps(
        {"blockdevices": [{"name": kname, "kname": kname, "path": path, "type": "disk", "size": size, "model": model,
                           "rota": rota, "tran": tran, "sched": "mq-deadline", "rq-size": 64, "disc-max": 0, "ra": 128}]}
    )


def test_describe_xfs_on_crypt_lvm_md_raid1(tmp_path: Path):
    sysfs = make_sysfs(
        tmp_path / "sys",
        {
            "dm-1": {"queue": {"scheduler": "none", "write_cache": "write through", "nr_requests": 128, "rotational": 0}, "slaves": ["dm-0"]},
            "dm-0": {"queue": {"scheduler": "none", "write_cache": "write through", "rotational": 0}, "slaves": ["md0"]},
            "md0": {"queue": {"scheduler": "none", "write_cache": "write through", "rotational": 0}, "slaves": ["sda1", "sdb1"]},
            "sda": {"queue": {"scheduler": "none [mq-deadline] kyber bfq", "write_cache": "write back", "nr_requests": 64, "rotational": 0}},
            "sdb": {"queue": {"scheduler": "none [mq-deadline] kyber bfq", "write_cache": "write through", "nr_requests": 64, "rotational": 0}},
            "sda1": {"partition_of": "sda"},
            "sdb1": {"partition_of": "sdb"},
        },
    )
    target = tmp_path / "bench"
    target.mkdir()
    findmnt = json.dumps({"filesystems": [{"target": "/srv/data", "source": "/dev/mapper/cryptdata", "fstype": "xfs",
                                           "options": "rw,noatime,attr2,inode64,logbufs=8,logbsize=32k,noquota"}]})

    def answer(argv: list[str]):
        if argv[0] == "findmnt":
            return 0, findmnt, ""
        if argv[0] == "lsblk" and argv[-1] == "/dev/mapper/cryptdata":
            return 0, read("lsblk-md-raid1-lvm-crypt.json"), ""
        if argv[:1] == ["xfs_info"] and argv[1] == "/srv/data":
            return 0, read("xfs_info-loop.txt"), ""
        return None

    runner = FakeRunner(answer)
    info = describe_target(str(target), fio_version="fio-3.33", runner=runner, sys_root=str(sysfs))
    assert info.target_kind == "dir" and info.filesystem.fstype == "xfs"
    assert info.filesystem.xfs.swidth_blocks == 64
    assert [d.kname for d in info.devices] == ["dm-1", "dm-0", "md0", "sda1", "sdb1", "sda", "sdb"]
    by = {d.kname: d for d in info.devices}
    assert by["sda"].write_cache == "write back" and by["sdb"].write_cache == "write through"  # from the fake /sys
    assert by["sda"].scheduler == "mq-deadline" and by["dm-1"].scheduler == "none"
    assert by["md0"].type == "raid1" and by["md0"].parents == ("sda1", "sdb1")
    assert info.host.fio_version == "fio-3.33"
    # every command was an argument list; one lsblk call answered the whole chain
    assert sum(1 for c in runner.calls if c[0] == "lsblk") == 1
    lines = format_storage(info)
    assert lines[1].startswith(
        "xfs (rw,noatime,attr2,inode64,logbufs=8,logbsize=32k,noquota) mounted at /srv/data on /dev/mapper/cryptdata (crypt, 100.0 GiB)"
        " -> /dev/mapper/vg0-data (lvm, 100 GiB) -> /dev/md0 (raid1, 1.8 TiB) -> /dev/sda1 (part, 1.8 TiB) + /dev/sdb1 (part, 1.8 TiB)"
        " -> /dev/sda (disk, sata, 1.8 TiB, model Samsung SSD 870 EVO 2TB, rotational=no, scheduler=mq-deadline, write cache=write back)"
        " + /dev/sdb (disk, sata, 1.8 TiB, model CT2000MX500SSD1, rotational=no, scheduler=mq-deadline, write cache=write through)"
    )
    assert lines[2].startswith("xfs: bsize=4096, agcount=2, sunit=16 blks (64 KiB), swidth=64 blks (256 KiB), log internal 64 MiB")
    assert_round_trip(info)


def test_describe_zfs_dataset(tmp_path: Path):
    disks = {
        "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K4RJ3N1F-part1": ("sdc", "WDC WD40EFRX-68N32N0", True, "sata"),
        "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K6YLHT2D-part1": ("sdd", "WDC WD40EFRX-68N32N0", True, "sata"),
        "/dev/disk/by-id/nvme-Samsung_SSD_970_EVO_Plus_500GB_S4EVNX0R612345K-part1": ("nvme0n1", "Samsung SSD 970 EVO Plus 500GB", False, "nvme"),
        "/dev/disk/by-id/nvme-Samsung_SSD_970_EVO_Plus_500GB_S4EVNX0R698765B-part1": ("nvme1n1", "Samsung SSD 970 EVO Plus 500GB", False, "nvme"),
        "/dev/disk/by-id/nvme-Samsung_SSD_970_EVO_Plus_500GB_S4EVNX0R612345K-part2": ("nvme0n1", "Samsung SSD 970 EVO Plus 500GB", False, "nvme"),
    }

    def answer(argv: list[str]):
        if argv[0] == "findmnt":
            return 0, read("findmnt-zfs.json"), ""
        if argv[:2] == ["zfs", "get"]:
            assert argv[-1] == "tank/vm" and "-Hp" in argv
            return 0, read("zfs-get-Hp-all-tank-vm.txt"), ""
        if argv[:2] == ["zpool", "get"]:
            assert argv[-1] == "tank"
            return 0, read("zpool-get-Hp-all-tank.txt"), ""
        if argv[:3] == ["zpool", "status", "-P"]:
            return 0, read("zpool-status-P-tank-mirror-log-cache.txt"), ""
        if argv[0] == "lsblk" and argv[-1] in disks:
            kname, model, rota, tran = disks[argv[-1]]
            return 0, lsblk_disk_json(kname, f"/dev/{kname}", model, rota, tran, 4000787030016 if rota else 500107862016), ""
        return None

    info = describe_target(str(tmp_path), runner=FakeRunner(answer), sys_root=str(tmp_path / "nosys"))
    fs = info.filesystem
    assert (fs.fstype, fs.source, fs.mountpoint) == ("zfs", "tank/vm", "/tank/vm")
    assert fs.zfs.recordsize_bytes == 65536 and fs.compression == "lz4" and fs.zfs.pool_ashift == 12
    assert [d.kname for d in info.devices] == ["sdc", "sdd", "nvme0n1", "nvme1n1"]  # data vdevs first, each device once
    assert info.devices[0].rotational is True and info.devices[2].transport == "nvme"
    assert any("sdc: no " in n for n in info.notes)  # the fake /sys is empty, and that is said
    lines = format_storage(info)
    assert lines[1].startswith("zfs (rw,noatime,xattr,noacl,casesensitive) dataset tank/vm mounted at /tank/vm over /dev/sdc (disk, sata")
    assert "zfs dataset tank/vm (filesystem): recordsize=64 KiB, compression=lz4, sync=standard, logbias=latency" in lines[2]
    assert lines[3] == "zfs pool tank: mirror of 2 + log mirror of 2 + cache 1, ashift=12, health=ONLINE, size=3.6 TiB, autotrim=off"
    assert_round_trip(info)


@pytest.mark.parametrize(
    "fixture, fstype, server, share",
    [("findmnt-nfs4.json", "nfs4", "nas01.example.lan", "/export/bench"), ("findmnt-cifs.json", "cifs", "fs01.example.lan", "bench")],
)
def test_describe_network_filesystems(tmp_path: Path, fixture: str, fstype: str, server: str, share: str):
    runner = FakeRunner(lambda argv: (0, read(fixture), "") if argv[0] == "findmnt" else None)
    info = describe_target(str(tmp_path), runner=runner, sys_root=str(tmp_path))
    assert info.filesystem.fstype == fstype
    assert (info.filesystem.network.server, info.filesystem.network.share) == (server, share)
    assert info.devices == ()
    assert any("is on another machine" in n for n in info.notes)
    assert any(line.startswith(f"{fstype}: server {server}, share {share}") for line in format_storage(info))
    assert [c[0] for c in runner.calls] == ["findmnt"]  # nothing else is asked of a network mount


def test_describe_zfs_without_zfs_tools(tmp_path: Path):
    runner = FakeRunner(lambda argv: (0, read("findmnt-zfs.json"), "") if argv[0] == "findmnt" else None)
    info = describe_target(str(tmp_path), runner=runner, sys_root=str(tmp_path))
    assert info.filesystem.zfs.dataset == "tank/vm" and info.filesystem.zfs.recordsize_bytes is None
    assert "zfs properties of tank/vm not read: zfs command not found" in info.notes
    assert "zpool properties of tank not read: zpool command not found" in info.notes


def test_describe_with_every_tool_missing_falls_back_to_proc_and_sys(tmp_path: Path):
    """No findmnt, no lsblk: /proc/self/mountinfo and the real /sys still give the filesystem and the device."""
    info = describe_target(str(tmp_path), runner=FakeRunner(lambda argv: None))
    assert any("findmnt command not found" in n for n in info.notes)
    expected = physical_kname_of(tmp_path)
    if expected is None:
        pytest.skip("tmp_path is not on a block device")
    assert info.filesystem is not None and info.filesystem.fstype
    assert info.devices and info.devices[0].kname == expected
    assert any("lsblk command not found" in n for n in info.notes)


def test_describe_missing_path_uses_nearest_parent(tmp_path: Path):
    runner = FakeRunner(lambda argv: (0, read("findmnt-nfs4.json"), "") if argv[0] == "findmnt" else None)
    info = describe_target(str(tmp_path / "not" / "yet"), runner=runner, sys_root=str(tmp_path))
    assert info.target_kind == "dir"
    assert any("does not exist; described" in n and str(tmp_path) in n for n in info.notes)


def test_subprocess_runner():
    runner = SubprocessRunner(timeout_s=0.5)
    assert runner.run(["storbench-no-such-program-xyz"]) == (127, "", "not found")
    rc, out, _ = runner.run(["echo", "a;b $(x) >c"])  # no shell: metacharacters are plain text
    assert (rc, out) == (0, "a;b $(x) >c\n")
    rc, _out, err = runner.run(["sleep", "5"])
    assert rc == 124 and "timed out" in err


# =========================================================================== records: dict form, format, differences


def assert_round_trip(info: StorageInfo) -> None:
    data = storage_to_dict(info)
    assert data["format_version"] == FORMAT_VERSION == 1
    text = json.dumps(data)
    assert storage_from_dict(json.loads(text)) == info
    assert storage_from_dict(data) == info


def sample_info(**changes) -> StorageInfo:
    loop = DeviceInfo(
        name="loop0", kname="loop0", type="loop", path="/dev/loop0", size_bytes=64 * 1024**2, rotational=False,
        scheduler="none", nr_requests=128, write_cache="write back", loop_backing_file="/tmp/x.img", loop_dio=True, parents=("vda",),
    )
    vda = DeviceInfo(
        name="vda", kname="vda", type="disk", path="/dev/vda", size_bytes=252 * 1024**3, transport="virtio", rotational=False,
        scheduler="none", nr_requests=256, write_cache="write back", discard=True, discard_max_bytes=1 << 30,
    )
    fs = FilesystemInfo(mountpoint="/mnt/x", source="/dev/loop0", fstype="ext4", options=("rw", "relatime"))
    host = HostInfo(hostname="h1", kernel="6.1.0", distribution="Debian GNU/Linux 12 (bookworm)", cpu_model="Xeon", cpu_count=2,
                    mem_bytes=8 * 1024**3, fio_version="fio-3.33")
    info = StorageInfo(target="/mnt/x", target_kind="dir", filesystem=fs, devices=(loop, vda), host=host, notes=("a note",))
    return dataclasses.replace(info, **changes)


def test_format_storage_reads_like_the_chain():
    lines = format_storage(sample_info())
    assert lines == [
        "target: /mnt/x (dir)",
        "ext4 (rw,relatime) mounted at /mnt/x on /dev/loop0 (loop, 64 MiB, backing /tmp/x.img, dio=on)"
        " -> /dev/vda (disk, virtio, 252 GiB, rotational=no, scheduler=none, write cache=write back)",
        "host: h1, Debian GNU/Linux 12 (bookworm), kernel 6.1.0, 2 x Xeon, 8 GiB RAM, fio-3.33",
        "note: a note",
    ]
    block = format_storage(sample_info(filesystem=None, target="/dev/loop0", target_kind="block"))
    assert block[1].startswith("block device /dev/loop0 (loop, 64 MiB")


def test_round_trip_and_versioning():
    info = sample_info()
    assert_round_trip(info)
    btrfs = sample_info(filesystem=FilesystemInfo(mountpoint="/m", source="/dev/loop0[/v]", fstype="btrfs", options=("compress=zstd:3",),
                                                  fsroot="/v", btrfs=BtrfsInfo(compression="zstd:3", devices=("/dev/loop0",))))
    assert_round_trip(btrfs)
    assert_round_trip(sample_info(host=None, notes=(), devices=()))
    with pytest.raises(StoreError, match="format version 2"):
        storage_from_dict({**storage_to_dict(info), "format_version": 2})
    with pytest.raises(StoreError):
        storage_from_dict({k: v for k, v in storage_to_dict(info).items() if k != "format_version"})
    bad = storage_to_dict(info)
    bad["devices"][0]["size_bytes"] = "64M"
    with pytest.raises(StoreError, match=r"devices\[0\].size_bytes"):
        storage_from_dict(bad)
    old = storage_to_dict(info)
    del old["devices"][1]["read_ahead_kb"]  # an optional field added later: the default fills in
    old["devices"][1]["some_future_key"] = 1
    assert storage_from_dict(old) == info


def test_differences_names_settings_not_identities():
    a = sample_info()
    loop_b = dataclasses.replace(a.devices[0], name="loop5", kname="loop5", path="/dev/loop5", loop_backing_file="/tmp/y.img")
    vda_b = dataclasses.replace(a.devices[1], scheduler="mq-deadline", write_cache="write through")
    fs_b = dataclasses.replace(a.filesystem, options=("rw", "noatime"))
    b = dataclasses.replace(a, devices=(loop_b, vda_b), filesystem=fs_b, target="/mnt/y")
    assert differences(a, b) == [
        ("filesystem.options", "rw,relatime", "rw,noatime"),
        ("devices[1].scheduler", "none", "mq-deadline"),
        ("devices[1].write_cache", "write back", "write through"),
    ]
    assert differences(a, a) == []
    c = dataclasses.replace(a, filesystem=None, target_kind="block")
    diffs = {path: (x, y) for path, x, y in differences(a, c)}
    assert diffs["target.kind"] == ("dir", "block") and diffs["filesystem.fstype"] == ("ext4", "-")


def test_differences_between_chains_of_different_shapes_compare_physical_devices():
    a = sample_info()
    vda = dataclasses.replace(a.devices[1], scheduler="mq-deadline")
    b = dataclasses.replace(a, devices=(vda,), filesystem=dataclasses.replace(a.filesystem, source="/dev/vda"))
    assert differences(a, b) == [
        ("devices.chain", "loop -> disk", "disk"),
        ("physical[0].scheduler", "none", "mq-deadline"),
    ]


def test_differences_zfs_and_btrfs_settings():
    props = parse_zfs_get(read("zfs-get-Hp-all-tank-vm.txt"))
    z1 = zfs_info_from("tank/vm", props, parse_zfs_get(read("zpool-get-Hp-all-tank.txt")))
    z2 = dataclasses.replace(z1, recordsize_bytes=1048576, compression="zstd", vdevs=(ZfsVdev("data", "raidz2", "raidz2-0", ("a", "b", "c", "d")),))
    fs1 = FilesystemInfo(mountpoint="/tank/vm", source="tank/vm", fstype="zfs", zfs=z1)
    a = sample_info(filesystem=fs1, devices=())
    b = sample_info(filesystem=dataclasses.replace(fs1, zfs=z2), devices=())
    assert differences(a, b) == [
        ("filesystem.compression", "lz4", "zstd"),
        ("filesystem.zfs.recordsize_bytes", "65536", "1048576"),
        ("filesystem.zfs.compression", "lz4", "zstd"),
        ("filesystem.zfs.layout", "-", "raidz2 of 4"),
    ]
    b1 = FilesystemInfo(mountpoint="/m", source="/dev/loop0", fstype="btrfs", options=("compress=zstd:3",),
                        btrfs=BtrfsInfo(compression="zstd:3", data_profile="single", metadata_profile="DUP"))
    b2 = dataclasses.replace(b1, options=("compress-force=lzo",),
                             btrfs=dataclasses.replace(b1.btrfs, compression="lzo", compression_forced=True, metadata_profile="single"))
    assert differences(sample_info(filesystem=b1), sample_info(filesystem=b2)) == [
        ("filesystem.options", "compress=zstd:3", "compress-force=lzo"),
        ("filesystem.compression", "zstd:3", "lzo"),
        ("filesystem.btrfs.compression_forced", "no", "yes"),
        ("filesystem.btrfs.metadata_profile", "DUP", "single"),
    ]


# =========================================================================== real loop devices (root)


def _have(*progs: str) -> bool:
    return all(shutil.which(p) for p in progs)


needs_loop = pytest.mark.skipif(
    os.geteuid() != 0 or not _have("losetup", "mount", "umount", "findmnt", "lsblk"),
    reason="needs root, losetup, mount and findmnt",
)

_IMAGES: list[Path] = []  # every image a test attached, checked at the end of the module


def sh(*argv: str) -> str:
    return subprocess.run(list(argv), check=True, capture_output=True, text=True, timeout=60).stdout


def attached_loops(image: Path) -> list[str]:
    out = subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True, timeout=30).stdout
    return [line.split(":", 1)[0] for line in out.splitlines() if line.strip()]


def physical_kname_of(path: Path) -> str | None:
    """Kernel name of the device under ``path``'s filesystem (found independently of storbench.storage)."""
    src = subprocess.run(["findmnt", "-n", "-o", "SOURCE", "-T", str(path)], capture_output=True, text=True).stdout.strip()
    src = src.split("[", 1)[0]
    if not src.startswith("/dev/"):
        return None
    st = os.stat(src)
    if not stat.S_ISBLK(st.st_mode):
        return None
    return os.path.basename(os.path.realpath(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"))


@pytest.fixture(scope="module", autouse=True)
def no_loop_left_behind() -> Iterator[None]:
    yield
    deadline = time.monotonic() + 10  # a detach waits for the last opener to close (autoclear)
    while any(attached_loops(img) for img in _IMAGES) and time.monotonic() < deadline:
        time.sleep(0.1)
    leftovers = {str(img): attached_loops(img) for img in _IMAGES}
    leftovers = {k: v for k, v in leftovers.items() if v}
    for loops in leftovers.values():
        for dev in loops:
            subprocess.run(["umount", dev], capture_output=True)
            subprocess.run(["losetup", "-d", dev], capture_output=True)
    assert not leftovers, f"loop devices left attached: {leftovers}"


@pytest.fixture
def loop_image(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """attach(size_mib, direct_io=True) -> /dev/loopN over a sparse image in tmp_path; detached at teardown."""
    attached: list[tuple[str, Path]] = []
    mounted: list[Path] = []

    def attach(size_mib: int = 64, direct_io: bool = True) -> str:
        image = tmp_path / f"disk{len(attached)}.img"
        with open(image, "wb") as fh:
            fh.truncate(size_mib * 1024 * 1024)
        _IMAGES.append(image)
        argv = ["losetup", "-f", "--show"] + (["--direct-io=on"] if direct_io else []) + [str(image)]
        dev = sh(*argv).strip()
        attached.append((dev, image))
        return dev

    def mount(dev: str, *options: str) -> Path:
        mnt = tmp_path / f"mnt{len(mounted)}"
        mnt.mkdir()
        argv = ["mount"] + (["-o", ",".join(options)] if options else []) + [dev, str(mnt)]
        sh(*argv)
        mounted.append(mnt)
        return mnt

    attach.mount = mount  # type: ignore[attr-defined]
    attach.image = lambda i=0: attached[i][1]  # type: ignore[attr-defined]
    try:
        yield attach
    finally:
        for mnt in reversed(mounted):
            if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
        for dev, image in reversed(attached):
            subprocess.run(["losetup", "-d", dev], capture_output=True)
            for left in attached_loops(image):  # in case the device name was reused or autoclear raced
                subprocess.run(["losetup", "-d", left], capture_output=True)
        # a device another process holds open (udev's probe, a device scan of the other worker) is
        # detached when it closes it (losetup -d sets autoclear): wait for that, a bounded while
        deadline = time.monotonic() + 10
        while any(attached_loops(image) for _dev, image in attached) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(attached_loops(image) for _dev, image in attached), "a loop device is still attached"


def check_loop_chain(info: StorageInfo, dev: str, image: Path, *, dio: bool = True) -> None:
    kname = os.path.basename(dev)
    top = info.devices[0]
    assert top.kname == kname and top.type == "loop" and top.path == dev
    assert top.loop_backing_file == str(image)
    assert top.loop_dio is dio
    assert top.scheduler is not None and top.write_cache in ("write back", "write through")
    physical = physical_kname_of(image.parent)
    if physical is not None:
        knames = [d.kname for d in info.devices]
        assert physical in knames, f"{physical} (under {image.parent}) not in {knames}"
        assert physical in top.parents
    assert len({d.kname for d in info.devices}) == len(info.devices)


@needs_loop
@pytest.mark.root
@pytest.mark.skipif(not _have("mkfs.ext4"), reason="mkfs.ext4 missing")
def test_real_ext4_on_loop(loop_image):
    dev = loop_image(64)
    sh("mkfs.ext4", "-q", "-F", "-E", "stride=16,stripe_width=32", dev)
    mnt = loop_image.mount(dev)
    info = describe_target(str(mnt), fio_version="fio-3.33")
    assert info.target_kind == "dir"
    fs = info.filesystem
    assert fs.fstype == "ext4" and fs.mountpoint == str(mnt) and fs.source == dev
    assert "rw" in fs.options
    assert fs.ext4 is not None and fs.ext4.raid_stride_blocks == 16 and fs.ext4.raid_stripe_width_blocks == 32
    assert fs.ext4.block_size_bytes in (1024, 4096)
    check_loop_chain(info, dev, loop_image.image())
    assert info.host.fio_version == "fio-3.33" and info.host.kernel == os.uname().release
    assert_round_trip(info)
    line = format_storage(info)[1]
    assert line.startswith(f"ext4 ({','.join(fs.options)}) mounted at {mnt} on {dev} (loop, 64 MiB, backing {loop_image.image()}, dio=on)")

    # a regular file on that filesystem
    f = mnt / "data.bin"
    f.write_bytes(b"\0" * 4096)
    finfo = describe_target(str(f))
    assert finfo.target_kind == "file" and finfo.target == str(f)
    assert finfo.filesystem.fstype == "ext4" and finfo.devices[0].kname == os.path.basename(dev)
    assert differences(info, finfo)[0] == ("target.kind", "dir", "file")


@needs_loop
@pytest.mark.root
@pytest.mark.skipif(not _have("mkfs.xfs", "xfs_info"), reason="xfsprogs missing")
def test_real_xfs_on_loop(loop_image):
    dev = loop_image(320)  # xfsprogs 6 refuses filesystems under 300 MB; the image is sparse
    sh("mkfs.xfs", "-q", "-f", "-d", "su=64k,sw=2,agcount=2", dev)
    mnt = loop_image.mount(dev)
    info = describe_target(str(mnt))
    fs = info.filesystem
    assert fs.fstype == "xfs"
    assert fs.xfs is not None and fs.xfs.block_size_bytes == 4096 and fs.xfs.agcount == 2
    assert fs.xfs.stripe_unit_bytes == 64 * 1024 and fs.xfs.stripe_width_bytes == 128 * 1024
    assert fs.xfs.log_location == "internal"
    check_loop_chain(info, dev, loop_image.image())
    assert_round_trip(info)


@needs_loop
@pytest.mark.root
@pytest.mark.skipif(not _have("mkfs.btrfs", "btrfs"), reason="btrfs-progs missing")
def test_real_btrfs_compressed_on_loop(loop_image):
    dev = loop_image(128)
    sh("mkfs.btrfs", "-q", "-f", "-m", "dup", "-d", "single", dev)
    mnt = loop_image.mount(dev, "compress=zstd")
    info = describe_target(str(mnt))
    fs = info.filesystem
    assert fs.fstype == "btrfs"
    assert any(o.startswith("compress=zstd") for o in fs.options)
    assert fs.btrfs.compression.startswith("zstd") and fs.btrfs.compression_forced is False
    assert fs.compression.startswith("zstd")
    assert (fs.btrfs.data_profile, fs.btrfs.metadata_profile) == ("single", "DUP")
    assert fs.btrfs.devices == (dev,)
    check_loop_chain(info, dev, loop_image.image())
    assert_round_trip(info)
    assert any(line.startswith("btrfs: compression=zstd") for line in format_storage(info))


@needs_loop
@pytest.mark.root
def test_real_block_device_target(loop_image):
    dev = loop_image(64, direct_io=False)
    info = describe_target(dev)
    assert info.target_kind == "block" and info.filesystem is None
    check_loop_chain(info, dev, loop_image.image(), dio=False)
    assert info.devices[0].size_bytes == 64 * 1024 * 1024
    assert not any("is mounted at" in n for n in info.notes)
    assert_round_trip(info)
    assert format_storage(info)[1].startswith(f"block device {dev} (loop, 64 MiB, backing {loop_image.image()}, dio=off)")


@needs_loop
@pytest.mark.root
def test_real_regular_file_target(tmp_path: Path):
    f = tmp_path / "plain.dat"
    f.write_bytes(b"x" * 1024)
    info = describe_target(str(f))
    assert info.target_kind == "file" and info.filesystem is not None
    expected = physical_kname_of(tmp_path)
    if expected is not None:
        assert info.devices[0].kname == expected
    assert_round_trip(info)
