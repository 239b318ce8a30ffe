"""The pitfall checks (storbench.checks): each triggered by real fio 3.33 outputs
(tests/data/fio-json) plus hand-built storage and activity records, each silent on a
clean run; the registry and docs/findings.md; and, as root, checks triggered by
measurements made here on loop devices."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from storbench.activity import ActivitySeries, CpuSample, DeviceTotals
from storbench.checks import (
    CHECKS,
    SUPERSEDED_BY,
    CheckContext,
    FileState,
    FsSpace,
    PreflightContext,
    format_checks_markdown,
    preflight,
    run_checks,
)
from storbench.fio.json import parse_fio_json
from storbench.model import SEVERITIES, Finding, FioResult
from storbench.run.devices import ActivitySampler
from storbench.storage import (
    BtrfsInfo,
    DeviceInfo,
    FilesystemInfo,
    StorageInfo,
    ZfsInfo,
    describe_target,
)

DATA = Path(__file__).parent.parent / "data" / "fio-json"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "findings.md"
MiB = 1024**2
GiB = 1024**3


# --------------------------------------------------------------------------- builders


def load(name: str) -> FioResult:
    return parse_fio_json((DATA / name).read_text())


def job_options(result: FioResult) -> dict[str, str | None]:
    """The job's options as fio echoed them, minus where the I/O went."""
    return {k: v for k, v in result.jobs[0].options.items() if k not in ("name", "directory", "filename")}


def stretched(result: FioResult, seconds: float) -> FioResult:
    """The same result as if it had run ``seconds`` (runtimes and bytes scaled, rates kept)."""
    jobs = []
    for job in result.jobs:
        dirs = {}
        for name, s in job.directions.items():
            factor = seconds * 1000 / s.runtime_ms
            dirs[name] = dataclasses.replace(
                s, runtime_ms=int(seconds * 1000), io_bytes=int(s.io_bytes * factor), total_ios=int((s.total_ios or 0) * factor)
            )
        jobs.append(dataclasses.replace(job, directions=dirs, job_runtime_ms=int(seconds * 1000), elapsed_s=int(seconds) + 1))
    return dataclasses.replace(result, jobs=tuple(jobs))


def with_iops(result: FioResult, iops: float) -> FioResult:
    job = result.jobs[0]
    read = dataclasses.replace(job.directions["read"], iops=iops, bw_bytes=iops * 4096)
    return dataclasses.replace(result, jobs=(dataclasses.replace(job, directions={"read": read}),))


def device(kname: str, **kw) -> DeviceInfo:
    defaults = dict(type="disk", path=f"/dev/{kname}", logical_block_size_bytes=512)
    defaults.update(kw)
    return DeviceInfo(name=kname, kname=kname, **defaults)


NVME = device("nvme0n1", transport="nvme", rotational=False, model="Samsung SSD 990 PRO", write_cache="write back")
HDD = device("sda", transport="sata", rotational=True, model="ST4000NM0035", write_cache="write back")
SATA_SSD = device("sdb", transport="sata", rotational=False, model="Samsung SSD 870 EVO", write_cache="write back")
VIRTIO = device("vda", transport="virtio", rotational=True, write_cache="write back")


def storage(fstype: str = "ext4", devices: tuple[DeviceInfo, ...] = (NVME,), *, target_kind: str = "dir", **fs_kw) -> StorageInfo:
    source = devices[0].path if devices else fstype
    fs = FilesystemInfo(mountpoint="/mnt/bench", source=source or "", fstype=fstype, options=("rw", "relatime"), **fs_kw)
    return StorageInfo(target="/mnt/bench", target_kind=target_kind, filesystem=fs, devices=devices)


def btrfs(compression: str | None = "zstd:3", forced: bool = True) -> StorageInfo:
    return storage("btrfs", (NVME,), btrfs=BtrfsInfo(compression=compression, compression_forced=forced))


def zfs(**kw) -> StorageInfo:
    info = dict(dataset="tank/bench", pool="tank", compression="lz4", primarycache="all", dedup="off", recordsize_bytes=128 * 1024)
    info.update(kw)
    return storage("zfs", (NVME,), zfs=ZfsInfo(**info))


def activity(dev: str = "nvme0n1", read: int = 0, write: int = 0, cpu_busy_pct: float | None = None) -> ActivitySeries:
    cpu = ()
    if cpu_busy_pct is not None:
        cpu = tuple(
            CpuSample(t_s=float(i + 1), interval_s=1.0, user_pct=cpu_busy_pct / 2, system_pct=cpu_busy_pct / 2,
                      iowait_pct=0.0, steal_pct=0.0, idle_pct=100.0 - cpu_busy_pct)
            for i in range(3)
        )
    totals = {dev: DeviceTotals(reads=read // 4096, writes=write // 4096, read_bytes=read, write_bytes=write, discard_bytes=0)}
    return ActivitySeries(interval_s=1.0, devices=(dev,), samples=(), cpu=cpu, totals=totals, duration_s=120.0)


#: The reference run: 64 MiB, 4k random reads from disk (~10k IOPS, disk reads = fio reads).
REFERENCE = "p1_invalidate1_reference.json"
CLEAN_OPTIONS: dict[str, str | None] = {
    "rw": "randread",
    "bs": "4k",
    "size": "64m",
    "ioengine": "libaio",
    "iodepth": "1",
    "direct": "1",
    "randrepeat": "0",
    "refill_buffers": "1",
    "end_fsync": "1",
    "ramp_time": "5",
    "runtime": "120",
    "time_based": None,
    "filename": "/mnt/bench/storbench.testfile",
}


def clean(**changes) -> CheckContext:
    """A well-formed context: direct I/O, 2 minutes, ext4 on NVMe, device reads matching fio's."""
    result = stretched(load(REFERENCE), 120)
    read = result.jobs[0].directions["read"].io_bytes
    base = dict(
        workload="rnd4k",
        options=dict(CLEAN_OPTIONS),
        results=(result,),
        storage=storage(),
        activity=(activity(read=read),),
        files_before=(FileState("/mnt/bench/storbench.testfile", 64 * MiB, 64 * MiB),),
        files_after=(FileState("/mnt/bench/storbench.testfile", 64 * MiB, 64 * MiB),),
        fs_used_before=10 * GiB,
        fs_used_after=10 * GiB,
        mem_bytes=16 * GiB,
        test_file_created=True,
        headline="iops",
    )
    base.update(changes)
    return CheckContext(**base)


def opts(**changes: str | None) -> dict[str, str | None]:
    """CLEAN_OPTIONS with changes; a value of ``...`` (Ellipsis) removes the key."""
    out = dict(CLEAN_OPTIONS)
    for k, v in changes.items():
        if v is ...:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def by_id(findings: tuple[Finding, ...], check: str) -> Finding:
    hits = [f for f in findings if f.check == check]
    assert len(hits) == 1, (check, findings)
    return hits[0]


def ids(findings: tuple[Finding, ...]) -> set[str]:
    return {f.check for f in findings}


# --------------------------------------------------------------------------- one triggering case per check id


@dataclass(frozen=True)
class Case:
    build: Callable[[], CheckContext]
    severity: str
    evidence: tuple[str, ...]  # substrings the message must hold (the numbers that prove it)
    fix: str = ""  # a substring of the fix


def _tmpfs_direct() -> CheckContext:
    r = load("p2_tmpfs_direct_accepted_kernel618.json")
    tmpfs = StorageInfo("/dev/shm/x", "dir", FilesystemInfo("/dev/shm", "tmpfs", "tmpfs"), devices=())
    return clean(options=job_options(r), results=(r,), storage=tmpfs, activity=())


def _buffered_small() -> CheckContext:
    r = load(REFERENCE)  # buffered (no direct), 64 MiB, invalidate=1: read from disk
    return clean(options=job_options(r), results=(r,), activity=(activity("nvme0n1", read=64 * MiB),))


def _cached_read() -> CheckContext:
    r = load("p1_pagecache_invalidate0.json")  # 585k IOPS, disk read_ios 0
    return clean(options=job_options(r), results=(r,), activity=(activity("nvme0n1", read=0),))


def _zfs_arc() -> CheckContext:
    return clean(storage=zfs(), activity=())


def _pool_degraded() -> CheckContext:
    """zfs-fuse's own words: a mirror with one member taken offline (zpool offline tank loop2)."""
    from storbench.backend import BackendActivity
    from storbench.backend.zfs import zfs_activity
    from storbench.storage import parse_zpool_status

    degraded = parse_zpool_status((Path(__file__).parent.parent / "data" / "zfs-fuse" / "zfs-zpool-status-degraded.txt").read_text())[0]
    backend = BackendActivity(zfs=zfs_activity("tank", "tank/bench", status_before=degraded, status_after=degraded))
    return clean(storage=zfs(primarycache="metadata"), backend=backend)


HARDWARE = Path(__file__).parent.parent / "data" / "hardware"  # real published outputs; README.md there says where each is from


def _drive(name: str, **grown):
    """A real smartctl -j reading (tests/data/hardware), with counters changed as a later reading would show them."""
    from storbench.storage.health import parse_smartctl_json

    return dataclasses.replace(parse_smartctl_json((HARDWARE / name).read_text()), **grown)


def _with_drives(before, after, **changes) -> CheckContext:
    from storbench.backend import BackendActivity
    from storbench.backend.hardware import HardwareActivity

    st = dataclasses.replace(storage(), drives=(before,))
    return clean(storage=st, backend=BackendActivity(hardware=HardwareActivity((before,), (after,))), **changes)


def _nvme_throttled() -> CheckContext:
    before = _drive("telegraf-smartctl-nvme.json")  # warning_temp_time 0
    return _with_drives(before, dataclasses.replace(before, warning_temp_minutes=3, temperature_c=79))


def _ata_hot() -> CheckContext:
    d = _drive("scrutiny-smart-ata-full.json")  # its SCT limit: op_limit_max 70
    d = dataclasses.replace(d, temperature_c=71)
    return _with_drives(d, d)


def _errors_grew() -> CheckContext:
    before = _drive("scrutiny-smart-nvme-failed.json")  # media_errors 7
    after = dataclasses.replace(before, media_errors=9, bytes_written=before.bytes_written + 64 * MiB)
    return _with_drives(before, after)


def _drive_failing() -> CheckContext:
    d = _drive("scrutiny-smart-fail2.json")  # SMART FAILED, 8 pending, 1975 reallocated
    return _with_drives(d, d)


def _raid_controllers(*files: tuple[str, str]):
    from storbench.storage import raid

    parse = {"storcli": raid.parse_storcli_vall, "megacli": raid.parse_megacli_ldinfo, "ssacli": raid.parse_ssacli}
    return tuple(c for tool, name in files for c in parse[tool]((HARDWARE / name).read_text()))


def _raid_write_through() -> CheckContext:
    st = dataclasses.replace(storage(), controllers=_raid_controllers(("megacli", "blog-proxmox-MegaCli64_LDInfo_Lall_aAll.txt")))
    return clean(storage=st, options={**CLEAN_OPTIONS, "rw": "randwrite"})


def _raid_degraded() -> CheckContext:
    st = dataclasses.replace(storage(), controllers=_raid_controllers(("megacli", "blog-elatov-MegaCli-LDInfo-L0-a0-raid1-degraded.txt")))
    return clean(storage=st)


def _raid_battery_failed() -> CheckContext:
    st = dataclasses.replace(storage(), controllers=_raid_controllers(("ssacli", "wiki-hpacucli-ctrl-all-show-status-P400.txt")))
    return clean(storage=st)


def _pgbench_load(*, mem: int = 16 * GiB, cpus: int = 8, settings: dict | None = None, **options: str) -> CheckContext:
    """A real pgbench result (tests/data/loads: 2 clients, 2 threads, scale 4, PostgreSQL 15's
    settings as read back from its server) as the run stores it, with ``options`` and ``settings`` changed."""
    from storbench.loads import check_options, pgbench
    from storbench.storage import HostInfo

    loads = DATA.parent / "loads"
    logs = {p.name: p.read_text(encoding="utf-8") for p in loads.glob("debian12-pgbench-15-tpcb-2clients-t150.log.*")}
    parsed = pgbench.parse((loads / "debian12-pgbench-15-tpcb-2clients-t150.txt").read_text(encoding="utf-8"), logs)
    got = {**pgbench.settings(parsed), **pgbench.parse_settings((loads / "debian12-postgresql-15-settings.txt").read_text(encoding="utf-8")),
           "client_cpu_s": "1.2", "wall_s": "10.0", **(settings or {})}  # fmt: skip
    result = FioResult(fio_version=None, jobs=(), format="pgbench", global_options=got, measures=pgbench.measures(parsed))
    raw = {"clients": 2, "threads": 2, "scale": 4, "runtime": 600}
    raw.update({k: int(v) if v.isdigit() else v for k, v in options.items()})
    host = HostInfo("h", "6.18", "Debian 12", "cpu", cpus, mem)
    return CheckContext(workload="pg", options=dict(check_options(pgbench.TOOL, raw)), results=(result,), tool="pgbench",
                        storage=dataclasses.replace(storage(), host=host), mem_bytes=mem)  # fmt: skip


def _load_fits_in_ram() -> CheckContext:
    return _pgbench_load(mem=16 * GiB)  # the database: 70,819,175 bytes (pg_database_size)


def _load_fsync_off() -> CheckContext:
    return _pgbench_load(mem=64 * MiB, fsync="off", settings={"fsync": "off"})


def _load_client_cpu() -> CheckContext:
    return _pgbench_load(mem=64 * MiB, cpus=2, settings={"client_cpu_s": "17.5", "wall_s": "10.0"})


def _load_many_clients() -> CheckContext:
    return _pgbench_load(mem=64 * MiB, cpus=2, clients="128", threads="2")


def _load_short() -> CheckContext:
    return _pgbench_load(mem=64 * MiB, runtime="60")


def test_a_sound_load_has_no_findings_and_fio_checks_never_judge_one() -> None:
    ctx = _pgbench_load(mem=64 * MiB)  # a database larger than the RAM, durable, 10 min, 2 clients on 8 CPUs
    assert run_checks(ctx) == ()
    # three repetitions of it: the spread check judges tps, nothing else
    assert run_checks(dataclasses.replace(ctx, results=ctx.results * 3)) == ()
    slower = dataclasses.replace(ctx.results[0], measures=(dataclasses.replace(ctx.results[0].measures[0], value=2000.0),))
    [found] = run_checks(dataclasses.replace(ctx, results=(ctx.results[0], slower)))
    assert found.check == "high-variation" and found.message.startswith("tps varied by")


#: sshfs as started in tests/servers.py (recorded from /proc/PID/cmdline): no -o sync_write
SSHFS_ARGV = ("sshfs", "-p", "35001", "-o", "IdentityFile=/srv/lab/ssh/id_ed25519,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,BatchMode=yes",
              "root@127.0.0.1:/srv/lab/ssh/export", "/srv/lab/ssh/mnt")  # fmt: skip


def _sshfs_write() -> CheckContext:
    from storbench.storage import network_info_from_mount

    opts = ("rw", "nosuid", "nodev", "relatime", "user_id=0", "group_id=0")  # findmnt, shared/fixtures/backends/sshfs-findmnt-statf.txt
    net = network_info_from_mount("fuse.sshfs", "root@127.0.0.1:/srv/lab/ssh/export", opts, mountpoint="/srv/lab/ssh/mnt",
                                  target="/srv/lab/ssh/mnt", daemon_argv=SSHFS_ARGV)  # fmt: skip
    fs = FilesystemInfo(mountpoint="/srv/lab/ssh/mnt", source="root@127.0.0.1:/srv/lab/ssh/export", fstype="fuse.sshfs", options=opts, network=net)
    st = StorageInfo(target="/srv/lab/ssh/mnt", target_kind="dir", filesystem=fs, devices=())
    return clean(options={**CLEAN_OPTIONS, "rw": "randwrite"}, storage=st, activity=())


def _iscsi_write_cache_on() -> CheckContext:
    """An iSCSI LUN as storbench describes it after its MODE SENSE of tgt's caching page (WCE=1)."""
    from storbench.storage.network import ExportInfo

    uri = "iscsi://127.0.0.1:3260/iqn.2026-12.lab.storbench:disk1/1"
    export = ExportInfo(protocol="iscsi", uri=uri, server="127.0.0.1:3260", export="iqn.2026-12.lab.storbench:disk1/1",
                        size_bytes=64 << 20, details=("write_cache=on", "client=qemu-nbd bridge"))  # fmt: skip
    st = StorageInfo(target=uri, target_kind="iscsi", filesystem=None, devices=(), export=export)
    return clean(options={**CLEAN_OPTIONS, "rw": "randwrite", "ioengine": "nbd"}, storage=st, activity=())


def test_a_lun_with_its_cache_off_or_synced_writes_has_no_cache_finding() -> None:
    ctx = _iscsi_write_cache_on()
    off = dataclasses.replace(ctx.storage.export, details=("write_cache=off",))
    assert "lun-write-cache" not in ids(run_checks(dataclasses.replace(ctx, storage=dataclasses.replace(ctx.storage, export=off))))
    assert "lun-write-cache" not in ids(run_checks(dataclasses.replace(ctx, options={**ctx.options, "fsync": "1"})))
    assert "lun-write-cache" not in ids(run_checks(dataclasses.replace(ctx, options={**ctx.options, "rw": "randread"})))


def _share_of_local_zfs() -> CheckContext:
    """An sshfs share whose server is this machine, serving a zfs-fuse dataset (recorded zfs get)."""
    from storbench.storage import network_info_from_mount, parse_zfs_get, zfs_info_from
    from storbench.storage.zfs import ArcStats

    props = parse_zfs_get((Path(__file__).parent.parent / "data" / "zfs-fuse" / "sb-zfs-get-Hpo-all-filesystem.txt").read_text())
    server_zfs = dataclasses.replace(zfs_info_from("tst/b", props, implementation="zfs-fuse"), arc=ArcStats(max_bytes=100 * MiB))
    net = dataclasses.replace(
        network_info_from_mount("fuse.sshfs", "root@127.0.0.1:/tmp/zx/mnt/b", ("rw",), daemon_argv=SSHFS_ARGV),
        server_fstype="fuse.zfs", server_zfs=server_zfs,
    )  # fmt: skip
    fs = FilesystemInfo(mountpoint="/mnt/ssh", source="root@127.0.0.1:/tmp/zx/mnt/b", fstype="fuse.sshfs", network=net)
    st = StorageInfo(target="/mnt/ssh", target_kind="dir", filesystem=fs, devices=())
    return clean(storage=st, activity=())


def test_an_export_or_lun_stored_on_this_machines_zfs_names_the_servers_cache() -> None:
    """The server-cache finding for the protocols reached without a mount: an NFS export whose
    ganesha runs here with its directory on a zfs-fuse dataset, and an iSCSI LUN whose tgtd runs
    here with its backing file on it (the server's ARC can answer their reads)."""
    from storbench.storage.network import ExportInfo
    from storbench.storage.records import with_server_side

    share = _share_of_local_zfs()
    server_zfs = share.storage.filesystem.network.server_zfs
    served = StorageInfo(target="/tmp/zx/mnt/b/lun.img", target_kind="file", filesystem=FilesystemInfo(
        mountpoint="/tmp/zx/mnt/b", source="tst/b", fstype="fuse.zfs", zfs=server_zfs), devices=())  # fmt: skip
    for protocol, uri, what in (("nfs", "nfs://127.0.0.1/export/", "nfs export nfs://127.0.0.1/export/"),
                                ("iscsi", "iscsi://127.0.0.1:3260/iqn.a/1", "iscsi LUN iscsi://127.0.0.1:3260/iqn.a/1")):  # fmt: skip
        export = with_server_side(ExportInfo(protocol=protocol, uri=uri, server="127.0.0.1"), served, "/tmp/zx/mnt/b/lun.img")
        assert (export.server_path, export.server_fstype, export.server_zfs) == ("/tmp/zx/mnt/b/lun.img", "fuse.zfs", server_zfs)
        st = StorageInfo(target=uri, target_kind=protocol, filesystem=None, devices=(), export=export)
        (found,) = [f for f in run_checks(dataclasses.replace(share, storage=st)) if f.check == "server-cache"]
        assert found.severity == "warning" and found.message.startswith(
            f"{what} (stored in /tmp/zx/mnt/b/lun.img): on the server it is ZFS dataset tst/b (primarycache=all), and the 64.0 MiB test file fits its ARC")
        assert "zfs set primarycache=metadata tst/b" in found.fix
        from storbench.storage import format_storage, storage_from_dict, storage_to_dict

        assert f"{protocol} server (this machine): /tmp/zx/mnt/b/lun.img is on fuse.zfs" in format_storage(st)
        assert storage_from_dict(json.loads(json.dumps(storage_to_dict(st)))) == st  # stored and read back whole
        assert "server-cache" not in ids(run_checks(dataclasses.replace(share, storage=dataclasses.replace(st, export=dataclasses.replace(export, server_zfs=None)))))


def _hdd_fast() -> CheckContext:
    r = load(REFERENCE)  # 9,834 random 4k IOPS
    return clean(options=opts(), results=(r,), storage=storage(devices=(HDD,)), activity=(activity("sda", read=64 * MiB),))


def _misaligned() -> CheckContext:
    r = load("a_direct_misaligned.stdout")
    return clean(options=job_options(r), results=(r,), activity=())


def _zfs_direct_ignored() -> CheckContext:
    r = load(REFERENCE)
    return clean(options=opts(), results=(r,), storage=zfs(primarycache="all"), activity=(activity(read=0),))


def _zero_buffers_btrfs() -> CheckContext:
    r = load("p3_btrfs_zero_buffers_fallocate_none.json")  # 128 MiB of zeros, fallocate=none, end_fsync=1
    path = "/mnt/bench/zero.0.0"
    return clean(
        options=job_options(r),
        results=(r,),
        storage=btrfs(),
        activity=(),
        files_before=(),
        files_after=(FileState(path, 128 * MiB, 128 * MiB),),  # btrfs: st_blocks ignores compression
        fs_used_before=1 * GiB,
        fs_used_after=1 * GiB + 4 * MiB,  # FIO-FACTS: 4 MiB taken with fallocate=none
    )


def _prealloc_btrfs() -> CheckContext:
    r = load("p3_btrfs_zero_buffers_fallocate_none.json")
    options = {k: v for k, v in job_options(r).items() if k != "fallocate"}
    return clean(options=options, results=(r,), storage=btrfs(), activity=(), files_before=(), files_after=())


def _sparse() -> CheckContext:
    r = load("p4_sparse_file_direct_read.json")  # 537k IOPS, 1.4 us from a truncated file
    path = "/srv/bench/data/sparse.bin"
    return clean(
        options=job_options(r),
        results=(r,),
        activity=(activity(read=0),),
        files_before=(FileState(path, 256 * MiB, 0),),
        files_after=(FileState(path, 256 * MiB, 0),),
        test_file_created=False,
    )


def _osync_write_back() -> CheckContext:
    r = load("j_sync1_osync.json")
    return clean(options=job_options(r), results=(r,), activity=())


def _osync_write_through() -> CheckContext:
    r = load("j_sync1_osync.json")
    dev = dataclasses.replace(NVME, write_cache="write through")
    return clean(options=job_options(r), results=(r,), activity=(), storage=storage(devices=(dev,)))


def _short() -> CheckContext:
    return clean(results=(load(REFERENCE),), activity=())


def _no_ramp() -> CheckContext:
    return clean(options=opts(ramp_time=...))


def _flash_write() -> CheckContext:
    r = load("p8_buffered_write_direct.json")  # 512 MiB sequential direct writes
    return clean(options=opts(rw="write", bs="1m", size="512m", ramp_time=...), results=(stretched(r, 120),), activity=())


def _ss_missed() -> CheckContext:
    r = load("p6_steadystate.json")
    job = r.jobs[0]
    missed = dataclasses.replace(job, steadystate={**job.steadystate, "attained": 0})
    return clean(options=job_options(r), results=(dataclasses.replace(r, jobs=(missed,)),), activity=())


def _gtod() -> CheckContext:
    r = load("p7_gtod_reduce.json")
    return clean(options=job_options(r), results=(r,), activity=())


def _nofsync() -> CheckContext:
    r = load("p8_buffered_write_nofsync.json")  # 512 MiB buffered, nothing reached vda
    return clean(options=job_options(r), results=(r,), storage=storage(devices=(VIRTIO,)), activity=(activity("vda", write=0),))


def _variable() -> CheckContext:
    base = stretched(load(REFERENCE), 120)
    return clean(results=tuple(with_iops(base, x) for x in (9834.0, 11020.0, 8210.0)), activity=())


def _cpu_bound() -> CheckContext:
    r = load("p10_cpu_bound_null_engine.json")
    return clean(options=job_options(r), results=(r,), activity=())


def _host_busy() -> CheckContext:
    result = stretched(load(REFERENCE), 120)
    read = result.jobs[0].directions["read"].io_bytes
    return clean(activity=(activity(read=read, cpu_busy_pct=96.0),))


def _sync_depth() -> CheckContext:
    return clean(options=opts(ioengine=..., iodepth="8"))


def _randrepeat_default() -> CheckContext:
    return clean(options=opts(randrepeat=...))


def _libaio_fsync() -> CheckContext:
    r = load("j_fsync1_libaio.json")  # sync lat max 312 s in a sub-second run
    return clean(options=job_options(r), results=(r,), activity=())


def _cliff() -> CheckContext:
    """A real run on an NBD export slowed from 40 to 8 MB/s 5 s after fio started (tests/data/fio-logs)."""
    import json

    recorded = json.loads((Path(__file__).parent.parent / "data" / "fio-logs" / "cliff-nbd-rate-drop.json").read_text())
    result = parse_fio_json(json.dumps(recorded["result"]))
    return clean(results=(result,), series=(recorded["series"],), headline="bw", activity=())


CASES: dict[str, Case] = {
    "throughput-cliff": Case(_cliff, "warning", ("read bandwidth fell from 38.5 MiB/s to 8.0 MiB/s at 6 s", "after 154.1 MiB moved", "and stayed there"), "--precondition"),
    "memory-filesystem": Case(_tmpfs_direct, "invalid", ("tmpfs", "direct=1 does not change that")),
    "cache-small-file": Case(_buffered_small, "warning", ("64.0 MiB", "16.0 GiB"), "size=32g"),
    "page-cache": Case(_cached_read, "invalid", ("fio read 64.0 MiB", "(nvme0n1) read 0 B (0%)", "invalidate=0")),
    "zfs-arc": Case(_zfs_arc, "warning", ("tank/bench", "primarycache=all", "64.0 MiB", "16.0 GiB")),
    "faster-than-device": Case(_hdd_fast, "warning", ("9,834 IOPS", "one rotational disk (sda)", "about 1,000 IOPS")),
    "direct-rejected": Case(_misaligned, "invalid", ("error 22", "bs=1000", "512 B")),
    "direct-ignored": Case(_zfs_direct_ignored, "invalid", ("fio read 64.0 MiB", "read 0 B (0%)", "ZFS (tank/bench)")),
    "compressible-data": Case(_zero_buffers_btrfs, "invalid", ("zero_buffers=1", "compress-force=zstd:3", "grew by 4.0 MiB (3.1%)")),
    "btrfs-prealloc-uncompressed": Case(_prealloc_btrfs, "warning", ("zero_buffers=1", "fallocate=native", "without compressing")),
    "sparse-read": Case(_sparse, "invalid", ("256.0 MiB", "0 B of it", "(0%)", "537,114 IOPS", "1.4 µs")),
    "volatile-write-cache": Case(_osync_write_back, "warning", ("sync=1", "nvme0n1", "'write back'")),
    "write-cache-off": Case(_osync_write_through, "info", ("sync=1", "nvme0n1", "'write through'")),
    "short-run": Case(_short, "warning", ("1.7 s", "30 s")),
    "no-ramp-time": Case(_no_ramp, "info", ("ramp_time",)),
    "no-steady-state": Case(_flash_write, "info", ("nvme0n1", "without a steady-state criterion"), "ss=iops_slope:0.1% ss_dur=60 ss_ramp=30"),
    "steady-state-not-reached": Case(_ss_missed, "warning", ("iops:20.000000%", "4.036670%")),
    "latency-not-measured": Case(_gtod, "info", ("read latency", "gtod_reduce=1", "never zero")),
    "buffered-write-no-sync": Case(_nofsync, "warning", ("fio wrote 512.0 MiB", "0 B reached vda", "(0%)")),
    "high-variation": Case(_variable, "warning", ("over 3 repetitions", "9,834 / 11,020 / 8,210")),
    "fio-cpu-bound": Case(_cpu_bound, "warning", ("cpubound", "98.8%", "usr 98.8%")),
    "host-cpu-busy": Case(_host_busy, "warning", ("96.0%",)),
    "iodepth-no-effect": Case(_sync_depth, "warning", ("iodepth=8", "psync", "100.0% of I/O at depth 1")),
    "randrepeat-on": Case(_randrepeat_default, "info", ("randrepeat not set", "randread")),
    "impossible-latency": Case(_libaio_fsync, "invalid", ("sync latency maximum 312.27 s", "about 1 s", "libaio")),
    "lun-write-cache": Case(_iscsi_write_cache_on, "warning", ("iSCSI LUN iqn.2026-12.lab.storbench:disk1/1 on 127.0.0.1:3260 has its write cache on (WCE=1", "randwrite writes"), "write cache off"),
    "share-write-ack": Case(_sshfs_write, "warning", ("fuse.sshfs share from 127.0.0.1 at /srv/lab/ssh/mnt", "sshfs without -o sync_write", "randwrite figure"), "sshfs -o sync_write"),
    "server-cache": Case(_share_of_local_zfs, "warning", ("fuse.sshfs share of /tmp/zx/mnt/b from 127.0.0.1", "ZFS dataset tst/b (primarycache=all)", "64.0 MiB test file fits its ARC (at most 100.0 MiB)"), "zfs set primarycache=metadata tst/b"),
    "pool-not-healthy": Case(_pool_degraded, "warning", ("ZFS pool tank", "before the run the pool was DEGRADED", "mirror-0 was DEGRADED", "loop2 was OFFLINE"), "zpool online tank"),
    "drive-throttled": Case(_nvme_throttled, "warning", ("/dev/nvme0 spent 3 more minutes above the warning temperature during the run (0 -> 3)",), "cool the drive"),
    "drive-hot": Case(_ata_hot, "warning", ("/dev/sda at 71 °C (its limit 70 °C)",), "cool the drive"),
    "drive-errors-grew": Case(_errors_grew, "warning", ("/dev/nvme0: media errors 7 -> 9 during the run", "64.0 MiB to /dev/nvme0 written meanwhile"), "smartctl -x"),
    "drive-failing": Case(_drive_failing, "warning", ("/dev/sdc (Hitachi HDS721050DLE630): its SMART verdict is FAILED; 8 sectors pending reallocation",), "replace the drive"),
    "raid-cache-fallback": Case(_raid_write_through, "warning", ("a0/v24 on adapter 0 runs WriteThrough where WriteBack was configured",), "MegaCli64 -LDGetProp -Cache -LAll -aALL"),
    "raid-degraded": Case(_raid_degraded, "warning", ("a0/v0 on adapter 0 is Degraded", "the figures describe a degraded array"), "MegaCli64 -LdPdInfo -aALL"),
    "load-dataset-in-ram": Case(_load_fits_in_ram, "warning", ("the database is 67.5 MiB (scale 4)", "16.0 GiB of RAM"), "larger than the RAM"),
    "load-not-durable": Case(_load_fsync_off, "invalid", ("fsync = off",), "fsync = on"),
    "load-client-cpu-bound": Case(_load_client_cpu, "warning", ("pgbench's own processes used 1.75 CPUs", "of the 2 they could use"), "more threads"),
    "load-clients-over-cores": Case(_load_many_clients, "info", ("128 clients on 2 CPUs (64 per CPU)",), "scale the client count"),
    "load-short-run": Case(_load_short, "info", ("wrote for 60 s, less than checkpoint_timeout (300 s)",), "checkpoint_timeout"),
    "raid-battery": Case(_raid_battery_failed, "warning", ("the battery of Smart Array P400 in Slot 1 is Failed (Replace Batteries/Capacitors)",), "replace a failed battery"),
    "bridge-cpu-bound": Case(lambda: _busy_bridge(), "warning", ("used 96% of a CPU while fio ran (2.40 s of CPU in 2.50 s)",), "?client=fio"),
    "replay-fidelity": Case(lambda: _replay(), "info", ("timed replay of trace 'syn' (200 requests over 0.40 s): took 0.40 s", "read 100/100, write 100/100", "queue depth 4, 4 the deepest"), "as a replay of this trace"),
    "replay-drift": Case(lambda: _replay(span_s=0.3), "warning", ("took 0.40 s for a trace of 0.30 s (+34.3 %)",), "headroom"),
    "replay-incomplete": Case(lambda: _replay(ops={"read": 150}), "invalid", ("fio replayed 100 read operations of the trace's 150",), "extent"),
    "replay-fio-version": Case(lambda: _replay(), "info", ("fio 3.33 inflates the completion latency of a timed replay at queue depth 4 (fixed in 3.36",), "3.36 or later"),
    "trace-dropped-events": Case(lambda: _replay(lost=12), "warning", ("the capture lost 12 events",), "--buffer-kb"),
    "trace-cache-blind": Case(lambda: _replay(), "info", ("page-cache hits are not in it",), "same amount of memory"),
    "trace-open-loop": Case(lambda: _replay(), "info", ("issues each request at its recorded time",), "latency and drift"),
    "object-request-bound": Case(lambda: _s3("s3_get_4k_4jobs_radosgw.json", rw="randread", bs="4k", numjobs="4"), "info",
                                 ("objects of 4 KiB: the figure is a request rate", "the fastest request: read "), "objects per second"),
    "object-request-delay": Case(lambda: _s3("s3_get_4k_4jobs_radosgw.json", rw="randread", bs="4k", numjobs="4", p10_p50=(43_778_048.0, 43_778_048.0)),
                                 "warning", ("the median 4 KiB request took read 43.8 ms (nine in ten at 43.8 ms or more)",), "tcp_nodelay=1"),
    "object-overwrite": Case(lambda: _s3("s3_put_4k_radosgw.json", rw="write", bs="4k", numjobs="1"), "info",
                             ("PUTs over 512 keys in one repetition",), "to PUT new objects only"),
    "object-client-cpu": Case(lambda: _s3("s3_get_1m_radosgw.json", rw="randread", bs="1m", numjobs="1", cpu=(70.0, 25.0)), "warning",
                              ("a fio job used 95 % of a CPU",), "add clients"),
    "object-server-cache": Case(lambda: _s3("s3_get_1m_radosgw.json", rw="randread", bs="1m", numjobs="4"), "warning",
                                ("the objects read (8.0 MiB) fit in the memory of this machine", "(16.0 GiB of RAM)"), "at least 4.0 GiB"),
    "object-404": Case(lambda: _s3("s3_get_4k_4jobs_radosgw.json", rw="randread", bs="4k", numjobs="4", rgw=(100, 0)), "invalid",
                       (" GETs but radosgw served ", ": 100 were answered 404 (no such object)"), "a PUT pass of the same keys"),
    "object-server-errors": Case(lambda: _s3("s3_get_4k_4jobs_radosgw.json", rw="randread", bs="4k", numjobs="4", rgw=(0, 7)), "invalid",
                                 ("radosgw counted 7 failed requests of ", "which fio reported without an error"), "radosgw's log"),
    "object-bucket-changed": Case(lambda: _s3("s3_get_4k_4jobs_radosgw.json", rw="randread", bs="4k", numjobs="4", bucket=(5, 20480)), "warning",
                                  ("bucket bench changed by +5 objects, +20.0 KiB during this repetition (the server's own count) while fio made no PUT or DELETE (it only read)",
                                   "another client wrote to or deleted from it"), "a bucket and gateway nobody else uses"),
    "share-mount-limits": Case(lambda: _soft_small_nfs(), "warning", ("nfs4 share of /export/bench from nas01.example.lan at /mnt/bench", "it is mounted soft",
                                                                        "rsize=32.0 KiB is smaller than the workload's bs=1.0 MiB: each I/O is 32 requests"), "mount with hard"),
}


def _s3(name: str, *, rw: str, bs: str, numjobs: str, p10_p50: tuple[float, float] | None = None,
        cpu: tuple[float, float] | None = None, rgw: tuple[int, int] | None = None,
        bucket: tuple[int, int] | None = None, cache: tuple[int, int] | None = None) -> CheckContext:
    """A run recorded on radosgw (fio's http engine; tests/data/fio-json/s3_*.json), 2 s time-based on 2 MiB a job.
    ``rgw``: radosgw's counters around it (backend.rgw), (GETs it did not serve of fio's, failed requests
    beyond those), its perf dump's other counters those of tests/data/ceph/rgw-perf-dump.json.
    ``bucket``: how many objects and bytes the bucket's own count (tests/data/ceph/rgw-head-bucket.json
    before) changed by during it.  ``cache``: the bytes the OSDs under it read from BlueStore's
    cache and from their devices (backend.ceph)."""
    r = load(name)
    jobs = []
    for j in r.jobs:
        if p10_p50 is not None:
            j = dataclasses.replace(j, directions={n: dataclasses.replace(d, clat_ns=dataclasses.replace(
                d.clat_ns, percentiles={**d.clat_ns.percentiles, "10.0": p10_p50[0], "50.0": p10_p50[1]})) for n, d in j.directions.items()})  # fmt: skip
        if cpu is not None:
            j = dataclasses.replace(j, usr_cpu_pct=cpu[0], sys_cpu_pct=cpu[1])
        jobs.append(j)
    r = dataclasses.replace(r, jobs=tuple(jobs))
    st = StorageInfo(target="s3://bench?endpoint=http://127.0.0.1:7480", target_kind="s3", filesystem=None, devices=())
    options = {"rw": rw, "bs": bs, "numjobs": numjobs, "size": "2m", "time_based": None, "runtime": "2", "randrepeat": "0", "ramp_time": "1"}
    backend = None
    if rgw is not None:
        from storbench.backend import BackendActivity
        from storbench.backend.rgw import RgwActivity, parse_perf_dump

        before = parse_perf_dump((DATA.parent / "ceph" / "rgw-perf-dump.json").read_text())
        gets = sum(d.total_ios or 0 for j in r.jobs if not j.is_aggregate for n, d in j.directions.items() if n == "read")
        missing, failed = rgw
        after = {**before, "req": before["req"] + gets + failed, "get": before["get"] + gets - missing,
                 "failed_req": before["failed_req"] + missing + failed}  # fmt: skip
        backend = BackendActivity(rgw=RgwActivity(socket="/run/ceph/rgw.asok", before=before, after=after))
    if bucket is not None:
        from storbench.backend import BackendActivity
        from storbench.backend.bucket import BucketActivity, BucketCount, parse_bucket_headers

        head = parse_bucket_headers(json.loads((DATA.parent / "ceph" / "rgw-head-bucket.json").read_text()))
        after_count = BucketCount(objects=head.objects + bucket[0], bytes=head.bytes + bucket[1])
        backend = BackendActivity(bucket=BucketActivity(where="bucket bench", source="server", before=head, after=after_count))
    if cache is not None:
        from storbench.backend import BackendActivity
        from storbench.backend.ceph import CephActivity

        backend = BackendActivity(ceph=CephActivity(pool="default.rgw.buckets.data", osd_cache_hit_bytes=cache[0], osd_cache_miss_bytes=cache[1]))
    return clean(options=options, results=(r,), storage=st, activity=(), files_before=(), files_after=(), fs_used_before=None,
                 fs_used_after=None, backend=backend)  # fmt: skip


def _replay(*, mode: str = "timed", iodepth: str = "4", span_s: float | None = None, ops: dict | None = None,
            lost: int | None = 0, source: str = "tracefs") -> CheckContext:
    """A real timed replay (fio 3.33, iodepth 4) of tests/data/trace/synthetic-500iops.iolog: 200
    requests, 100 reads and 100 writes of 4 KiB, one each 2 ms over 398 ms; its reference as
    ``storbench run --replay`` makes it, changed where a case needs."""
    from storbench.trace.events import READ, WRITE, TraceMeta
    from storbench.trace.fidelity import replay_reference
    from storbench.trace.iolog import read_iolog

    trace = read_iolog(open(DATA.parent / "trace" / "synthetic-500iops.iolog"), TraceMeta(label="syn", source=source))
    ref = replay_reference(trace, 7, mode, (READ, WRITE), {}, 4)
    ref["lost_events"] = lost
    if span_s is not None:
        ref["span_s"] = span_s
    if ops is not None:
        ref["ops"] = {**ref["ops"], **ops}
    r = load("replay_timed_qd4_fio333.json")
    options = {"ioengine": "libaio", "direct": "1", "iodepth": iodepth, "rw": "randrw", "read_iolog": "/tmp/x.iolog",
               "size": "6m", "replay_redirect": "/mnt/bench/storbench.testfile"}
    return clean(workload="replay-syn-timed", options=options, results=(r,), activity=(), replay=ref, headline="lat")


def _soft_small_nfs() -> CheckContext:
    """The recorded NFSv4.2 mount (tests/data/storage/findmnt-nfs4.json) as if mounted -o soft,rsize=32768, read with 1 MiB blocks."""
    from storbench.storage import network_info_from_mount, parse_findmnt_json

    (entry,) = parse_findmnt_json((Path(__file__).parent.parent / "data" / "storage" / "findmnt-nfs4.json").read_text())
    options = tuple("soft" if o == "hard" else "rsize=32768" if o.startswith("rsize=") else o for o in entry.options)
    net = network_info_from_mount(entry.fstype, entry.source, options)
    fs = FilesystemInfo(mountpoint="/mnt/bench", source=entry.source, fstype=entry.fstype, options=options, network=net)
    st = StorageInfo(target="/mnt/bench", target_kind="dir", filesystem=fs, devices=())
    return clean(options={**CLEAN_OPTIONS, "rw": "read", "bs": "1m"}, storage=st, activity=())


def test_a_hard_mount_with_large_requests_has_no_mount_finding() -> None:
    """The same mount as recorded (hard, rsize=wsize=1 MiB): nothing for 1 MiB reads; 4 MiB writes are 4 requests each."""
    ctx = _soft_small_nfs()
    recorded = ("rw", "relatime", "vers=4.2", "rsize=1048576", "wsize=1048576", "hard", "proto=tcp")
    net = dataclasses.replace(ctx.storage.filesystem.network, cache_options=("hard",), rsize_bytes=1 << 20, wsize_bytes=1 << 20)
    fs = dataclasses.replace(ctx.storage.filesystem, options=recorded, network=net)
    hard = dataclasses.replace(ctx, storage=dataclasses.replace(ctx.storage, filesystem=fs))
    assert "share-mount-limits" not in ids(run_checks(hard))
    (f,) = [f for f in run_checks(dataclasses.replace(hard, options={**hard.options, "rw": "write", "bs": "4m"})) if f.check == "share-mount-limits"]
    assert f.message.endswith("wsize=1.0 MiB is smaller than the workload's bs=4.0 MiB: each I/O is 4 requests to the server")


def _busy_bridge() -> CheckContext:
    """A run through the qemu-nbd bridge that took 96% of a CPU (tests/checks/test_bridge_cpu.py reads its /proc line)."""
    from storbench.backend import BackendActivity
    from storbench.backend.bridge import BridgeActivity

    return clean(backend=BackendActivity(bridge=BridgeActivity(pid=3121, cpu_s=2.4, wall_s=2.5)))


def test_every_registered_check_has_a_triggering_case() -> None:
    assert set(CASES) == set(CHECKS)


@pytest.mark.parametrize("check", sorted(CASES))
def test_check_triggers_on_real_fio_output(check: str) -> None:
    case = CASES[check]
    ctx = case.build()
    found = run_checks(ctx)
    f = by_id(found, check)
    assert f.severity == case.severity
    assert f.severity in CHECKS[check].severities
    assert f.workload == ctx.workload
    for text in case.evidence:
        assert text in f.message, (text, f.message)
    assert case.fix in f.fix
    assert f.fix and "\n" not in f.fix and "\n" not in f.message


@pytest.mark.parametrize("check", sorted(CASES))
def test_check_is_silent_on_a_clean_run(check: str) -> None:
    assert check not in ids(run_checks(clean()))


def test_clean_run_has_no_findings_at_all() -> None:
    ctx = clean()
    assert run_checks(ctx) == ()
    # three repetitions of the same clean run: still nothing (cv 0, randrepeat=0)
    assert run_checks(dataclasses.replace(ctx, results=ctx.results * 3, activity=ctx.activity * 3)) == ()


def test_clean_run_on_typical_setup_has_no_warning_or_invalid() -> None:
    """fio defaults left alone (randrepeat, no ramp_time) are info at most."""
    found = run_checks(clean(options=opts(randrepeat=..., ramp_time=...)))
    assert found and all(f.severity == "info" for f in found), found


def test_findings_are_in_family_order_and_named_for_the_workload() -> None:
    r = load("j_fsync1_libaio.json")
    found = run_checks(clean(workload="journal", options=job_options(r), results=(r,), activity=()))
    order = list(CHECKS)
    positions = [order.index(f.check) for f in found]
    assert positions == sorted(positions)
    assert {f.workload for f in found} == {"journal"}
    assert all(f.severity in SEVERITIES for f in found)


# --------------------------------------------------------------------------- cache family, in detail


def test_page_cache_from_fio_disk_stats_without_activity() -> None:
    r = load("p1_pagecache_invalidate0.json")
    found = run_checks(clean(options=job_options(r), results=(r,), activity=()))
    f = by_id(found, "page-cache")
    assert "fio's own disk statistics count 0 reads on vda" in f.message
    assert "cache-small-file" not in ids(found)  # superseded by the proof
    assert "faster-than-device" not in ids(found)


def test_page_cache_silent_when_the_device_read_the_bytes() -> None:
    found = run_checks(_buffered_small())
    assert "page-cache" not in ids(found)
    assert "cache-small-file" in ids(found)


def test_page_cache_names_the_repetitions_that_hit_the_cache() -> None:
    cold, warm = load(REFERENCE), load("p1_pagecache_invalidate0.json")
    ctx = clean(
        options=job_options(cold),
        results=(cold, warm, warm),
        activity=(activity(read=64 * MiB), activity(read=0), activity(read=1 * MiB)),
    )
    f = by_id(run_checks(ctx), "page-cache")
    assert "in repetitions 2 and 3 of 3" in f.message


def test_activity_counts_the_top_of_the_chain_once() -> None:
    """ext4 on loop0 on vda: loop0's bytes count, vda's (the same bytes again) do not."""
    loop = device("loop0", type="loop", parents=("vda",), loop_backing_file="/var/img", loop_dio=True)
    st = storage(devices=(loop, VIRTIO))
    r = load(REFERENCE)
    series = ActivitySeries(
        interval_s=1.0,
        devices=("loop0", "vda"),
        samples=(),
        cpu=(),
        totals={
            "loop0": DeviceTotals(0, 0, 1 * MiB, 0, 0),  # the loop device read almost nothing
            "vda": DeviceTotals(0, 0, 64 * MiB, 0, 0),  # other traffic on the host disk
        },
    )
    f = by_id(run_checks(clean(options=job_options(r), results=(r,), storage=st, activity=(series,))), "page-cache")
    assert "(loop0) read 1.0 MiB (1.6%)" in f.message


def test_incomplete_activity_is_not_evidence() -> None:
    r = load("p1_pagecache_invalidate0.json")
    series = dataclasses.replace(activity(read=0), totals={"nvme0n1": DeviceTotals(0, 0, 0, 0, 0, complete=False)})
    stripped = dataclasses.replace(r, disk_util=())
    assert "page-cache" not in ids(run_checks(clean(options=job_options(r), results=(stripped,), activity=(series,))))


def test_cache_small_file_silent_for_big_files_and_unknown_ram() -> None:
    r = load(REFERENCE)
    assert "cache-small-file" not in ids(run_checks(clean(options=job_options(r), results=(r,), mem_bytes=16 * MiB)))
    assert "cache-small-file" not in ids(run_checks(clean(options=job_options(r), results=(r,), mem_bytes=None)))


def test_cache_small_file_not_for_writes_synced_one_by_one() -> None:
    r = load("j_fsync1.json")
    assert "cache-small-file" not in ids(run_checks(clean(options=job_options(r), results=(r,), activity=())))


def test_zfs_arc_silent_with_primarycache_metadata() -> None:
    assert "zfs-arc" not in ids(run_checks(clean(storage=zfs(primarycache="metadata"), activity=())))


def test_faster_than_device_bandwidth_on_sata_ssd() -> None:
    r = load("p8_buffered_write_direct.json")  # 1.24 GiB/s of direct sequential writes
    found = run_checks(clean(options=job_options(r), results=(r,), storage=storage(devices=(SATA_SSD,)), activity=()))
    f = by_id(found, "faster-than-device")
    assert "1.2 GiB/s" in f.message and "one SATA SSD (sdb)" in f.message and "600.0 MiB/s" in f.message


def test_faster_than_device_trusts_no_virtual_rotational_flag() -> None:
    """vda says rotational=1 (as here); virtio's flag is a guess, so the HDD limit does not apply."""
    r = load(REFERENCE)
    found = run_checks(clean(options=opts(), results=(r,), storage=storage(devices=(VIRTIO,)), activity=()))
    assert "faster-than-device" not in ids(found)


def test_faster_than_device_adds_up_the_disks_of_an_array() -> None:
    disks = tuple(device(f"sd{c}", transport="sas", rotational=True, model="HUH721212AL") for c in "abcdefghijkl")
    r = load(REFERENCE)  # 9,834 IOPS < 12 x 1000
    assert "faster-than-device" not in ids(run_checks(clean(options=opts(), results=(r,), storage=storage(devices=disks), activity=())))


def test_memory_filesystem_silent_for_the_null_engine() -> None:
    r = load("p10_cpu_bound_null_engine.json")
    assert "memory-filesystem" not in ids(run_checks(dataclasses.replace(_tmpfs_direct(), options=job_options(r), results=(r,))))


# --------------------------------------------------------------------------- direct family


def test_direct_rejected_on_open_by_ramfs() -> None:
    r = load("p2_odirect_rejected_ramfs.stdout")
    ramfs = StorageInfo("/mnt/ramfs", "dir", FilesystemInfo("/mnt/ramfs", "ramfs", "ramfs"), devices=())
    found = run_checks(clean(options=job_options(r), results=(r,), storage=ramfs, activity=()))
    f = by_id(found, "direct-rejected")
    assert "could not open the test file with O_DIRECT" in f.message and "ramfs filesystem" in f.message
    assert "memory-filesystem" in ids(found)


def test_direct_rejected_silent_for_other_errors() -> None:
    r = load("d_enospc.stdout")  # error 28
    assert "direct-rejected" not in ids(run_checks(clean(options=job_options(r), results=(r,), activity=())))


def test_direct_ignored_generic_filesystem() -> None:
    f = by_id(run_checks(clean(activity=(activity(read=0),))), "direct-ignored")
    assert "O_DIRECT was not honoured" in f.message and "fio read 4.5 GiB" in f.message


def test_direct_ignored_gives_way_to_sparse_read() -> None:
    found = run_checks(_sparse())
    assert "sparse-read" in ids(found)
    assert not ids(found) & {"direct-ignored", "faster-than-device", "fio-cpu-bound"}


# --------------------------------------------------------------------------- compression family


def test_compressible_data_warns_without_evidence() -> None:
    ctx = dataclasses.replace(_zero_buffers_btrfs(), fs_used_before=None, fs_used_after=None)
    f = by_id(run_checks(ctx), "compressible-data")
    assert f.severity == "warning" and "btrfs mounted with compress-force=zstd:3" in f.message


def test_compressible_data_evidence_from_allocated_size_on_zfs() -> None:
    r = load("p3_btrfs_zero_buffers_fallocate_none.json")
    ctx = clean(
        options=job_options(r),
        results=(r,),
        storage=zfs(),
        activity=(),
        files_before=(),
        files_after=(FileState("/tank/bench/zero.0.0", 128 * MiB, 512 * 1024),),
        fs_used_before=None,
        fs_used_after=None,
    )
    f = by_id(run_checks(ctx), "compressible-data")
    assert f.severity == "invalid"
    assert "takes 512.0 KiB on disk (0.4%)" in f.message and "ZFS compression=lz4 on tank/bench" in f.message


def test_compressible_data_no_evidence_from_unflushed_writes() -> None:
    """btrfs counts an unflushed file's space only at commit: 0 bytes right after the run is no proof."""
    base = _zero_buffers_btrfs()
    options = {k: v for k, v in base.options.items() if k != "end_fsync"}
    f = by_id(run_checks(dataclasses.replace(base, options=options)), "compressible-data")
    assert f.severity == "warning"


def test_compressible_data_is_info_where_nothing_compresses() -> None:
    f = by_id(run_checks(dataclasses.replace(_zero_buffers_btrfs(), storage=storage())), "compressible-data")
    assert f.severity == "info" and "a device or array under it may" in f.message


def test_fio_default_buffers_are_not_compressible() -> None:
    """Default (scramble_buffers=1, no refill): every block unique, btrfs could not compress it."""
    base = _zero_buffers_btrfs()
    options = {k: v for k, v in base.options.items() if k != "zero_buffers"}
    assert not ids(run_checks(dataclasses.replace(base, options=options))) & {"compressible-data", "btrfs-prealloc-uncompressed"}


def test_scramble_off_is_compressible_only_with_small_blocks() -> None:
    base = _zero_buffers_btrfs()
    options = {k: v for k, v in base.options.items() if k != "zero_buffers"}
    small = dataclasses.replace(base, options={**options, "scramble_buffers": "0", "bs": "4k"}, fs_used_after=None)
    assert by_id(run_checks(small), "compressible-data").severity == "warning"
    big = dataclasses.replace(base, options={**options, "scramble_buffers": "0", "bs": "1m"}, fs_used_after=None)
    f = by_id(run_checks(big), "compressible-data")  # every block the same: dedupable, but btrfs does not dedupe
    assert f.severity == "info" and "every block the same" in f.message


def test_dedupe_on_zfs_with_dedup() -> None:
    r = load("p8_buffered_write_end_fsync.json")
    ctx = clean(options={**job_options(r), "dedupe_percentage": "50"}, results=(r,), storage=zfs(compression="off", dedup="on"), activity=())
    f = by_id(run_checks(ctx), "compressible-data")
    assert f.severity == "warning" and "dedupe_percentage=50" in f.message and "dedup=on" in f.message


def test_btrfs_prealloc_is_info_for_incompressible_data() -> None:
    base = _prealloc_btrfs()
    options = {k: v for k, v in base.options.items() if k != "zero_buffers"}
    f = by_id(run_checks(dataclasses.replace(base, options=options)), "btrfs-prealloc-uncompressed")
    assert f.severity == "info"


def test_btrfs_prealloc_silent_without_compression_or_with_fallocate_none() -> None:
    base = _prealloc_btrfs()
    assert "btrfs-prealloc-uncompressed" not in ids(run_checks(dataclasses.replace(base, storage=btrfs(None, False))))
    assert "btrfs-prealloc-uncompressed" not in ids(run_checks(_zero_buffers_btrfs()))


# --------------------------------------------------------------------------- the other families


def test_sparse_read_silent_for_a_written_file_and_for_writes() -> None:
    base = _sparse()
    written = dataclasses.replace(base, files_before=(FileState("/srv/bench/data/sparse.bin", 256 * MiB, 256 * MiB),))
    assert "sparse-read" not in ids(run_checks(written))
    writing = dataclasses.replace(base, options={**base.options, "rw": "randwrite"})
    assert "sparse-read" not in ids(run_checks(writing))


def test_sparse_read_is_a_warning_where_zfs_compression_shrinks_files() -> None:
    f = by_id(run_checks(dataclasses.replace(_sparse(), storage=zfs())), "sparse-read")
    assert f.severity == "warning" and "compression=lz4" in f.message


def test_write_cache_needs_a_sync_workload_and_a_known_device() -> None:
    assert not ids(run_checks(clean())) & {"volatile-write-cache", "write-cache-off"}
    assert not ids(run_checks(dataclasses.replace(_osync_write_back(), storage=None))) & {"volatile-write-cache", "write-cache-off"}
    for name in ("j_fsync1.json", "j_fdatasync1.json"):
        r = load(name)
        assert "volatile-write-cache" in ids(run_checks(clean(options=job_options(r), results=(r,), activity=())))


def test_short_run_over_repetitions_mentions_the_total() -> None:
    r = load(REFERENCE)
    f = by_id(run_checks(clean(results=(r, r, r), activity=())), "short-run")
    assert "each of 3 repetitions measured for at most 1.7 s (5 s in all)" in f.message


def test_steady_state_options_silence_ramp_and_steady_state_checks() -> None:
    ctx = dataclasses.replace(_flash_write(), options={**_flash_write().options, "ss": "iops_slope:0.1%", "ss_dur": "60"})
    assert not ids(run_checks(ctx)) & {"no-ramp-time", "no-steady-state"}
    r = load("p6_steadystate.json")  # attained=1
    assert "steady-state-not-reached" not in ids(run_checks(clean(options=job_options(r), results=(r,), activity=())))


def test_no_steady_state_not_for_disks() -> None:
    ctx = dataclasses.replace(_flash_write(), storage=storage(devices=(HDD,)))
    found = ids(run_checks(ctx))
    assert "no-steady-state" not in found and "no-ramp-time" in found


def test_latency_not_measured_is_a_warning_when_latency_is_the_headline() -> None:
    f = by_id(run_checks(dataclasses.replace(_gtod(), headline="lat")), "latency-not-measured")
    assert f.severity == "warning"
    r = load("p7_disable_clat_lat.json")
    f = by_id(run_checks(clean(options=job_options(r), results=(r,), activity=())), "latency-not-measured")
    assert "disable_lat=1 and disable_clat=1" in f.message


def test_buffered_write_no_sync_from_fio_disk_stats_and_silent_when_flushed() -> None:
    r = load("p8_buffered_write_nofsync.json")
    f = by_id(run_checks(clean(options=job_options(r), results=(r,), activity=())), "buffered-write-no-sync")
    assert "its own disk statistics count 0 writes on vda" in f.message
    for name in ("p8_buffered_write_end_fsync.json", "p8_buffered_write_direct.json"):
        r = load(name)
        assert "buffered-write-no-sync" not in ids(run_checks(clean(options=job_options(r), results=(r,), activity=())))


def test_buffered_write_no_sync_supersedes_cpu_bound() -> None:
    found = ids(run_checks(_nofsync()))  # sys 91.4% + usr 1.6%: copying into the page cache
    assert "buffered-write-no-sync" in found and "fio-cpu-bound" not in found


def test_high_variation_matches_the_textbook_cv() -> None:
    values = (9834.0, 11020.0, 8210.0)
    cv = statistics.stdev(values) / statistics.mean(values)
    f = by_id(run_checks(_variable()), "high-variation")
    assert f"{cv * 100:.1f}% (coefficient of variation)" in f.message
    base = stretched(load(REFERENCE), 120)
    steady = clean(results=tuple(with_iops(base, x) for x in (9834.0, 9900.0, 9700.0)), activity=())
    assert "high-variation" not in ids(run_checks(steady))


def test_high_variation_of_latency_headline_and_unmeasured_latency() -> None:
    r = load("p7_gtod_reduce.json")
    ctx = clean(options=job_options(r), results=(r, load(REFERENCE)), activity=(), headline="lat")
    assert "high-variation" not in ids(run_checks(ctx))  # one repetition has no latency: cannot decide


def test_host_cpu_busy_not_when_fio_itself_is_the_load() -> None:
    from storbench.storage import HostInfo

    base = _host_busy()  # all CPUs 96% busy
    job = dataclasses.replace(base.results[0].jobs[0], usr_cpu_pct=45.0, sys_cpu_pct=50.0)
    result = dataclasses.replace(base.results[0], jobs=(job,))

    def on(cpus: int) -> CheckContext:
        host = HostInfo("h", "6.18", "Debian 12", "cpu", cpus, 16 * GiB)
        assert base.storage is not None
        return dataclasses.replace(base, results=(result,), storage=dataclasses.replace(base.storage, host=host))

    # one CPU, fio kept 95% of it busy: that is fio's own load, not contention
    assert "host-cpu-busy" not in ids(run_checks(on(1)))
    # two CPUs 96% busy, fio 47.5% of them: the rest went to other load
    f = by_id(run_checks(on(2)), "host-cpu-busy")
    assert "96.0% busy" in f.message and "fio's jobs 47.5% of 2 CPUs" in f.message


def test_iodepth_no_effect_for_buffered_libaio_and_not_for_direct() -> None:
    r = load("j_fsync1_libaio.json")
    f = by_id(run_checks(clean(options=job_options(r), results=(r,), activity=())), "iodepth-no-effect")
    assert "libaio without direct=1" in f.message
    assert "iodepth-no-effect" not in ids(run_checks(clean(options=opts(iodepth="32"))))
    assert "iodepth-no-effect" not in ids(run_checks(clean(options=opts(ioengine="io_uring", iodepth="32", direct="0"))))


def test_randrepeat_warns_over_repetitions_and_ignores_sequential() -> None:
    ctx = _randrepeat_default()
    f = by_id(run_checks(dataclasses.replace(ctx, results=ctx.results * 2, activity=ctx.activity * 2)), "randrepeat-on")
    assert f.severity == "warning" and "all 2 repetitions" in f.message
    assert "randrepeat-on" not in ids(run_checks(clean(options=opts(rw="read", randrepeat=...))))
    assert "randrepeat-on" in ids(run_checks(clean(options=opts(rw="read", randrepeat=..., percentage_random="50"))))


def test_impossible_latency_silent_for_psync_fsync() -> None:
    r = load("j_fsync1.json")
    assert "impossible-latency" not in ids(run_checks(clean(options=job_options(r), results=(r,), activity=())))


def test_superseding_ids_are_registered() -> None:
    for cid, by in SUPERSEDED_BY.items():
        assert cid in CHECKS and by <= set(CHECKS)


def test_context_needs_a_result_and_keeps_tuples() -> None:
    with pytest.raises(ValueError):
        clean(results=())
    ctx = clean(results=[load(REFERENCE)], activity=[None])
    assert isinstance(ctx.results, tuple) and isinstance(ctx.activity, tuple)
    run_checks(ctx)  # a None activity is fine


def test_file_state_and_fs_space_from_os_results(tmp_path: Path) -> None:
    p = tmp_path / "f"
    p.write_bytes(b"x" * 8192)
    st = os.stat(p)
    assert FileState.from_stat(str(p), st) == FileState(str(p), 8192, st.st_blocks * 512)
    vfs = os.statvfs(tmp_path)
    assert FsSpace.from_statvfs(vfs).used_bytes == (vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize


# --------------------------------------------------------------------------- preflight


def test_preflight_judges_each_workload_without_measurements() -> None:
    st = storage(devices=(VIRTIO,))
    ctx = PreflightContext(
        options_by_workload={
            "buffered-read": {"rw": "randread", "bs": "4k", "size": "1g"},
            "journal": {"rw": "write", "bs": "4k", "sync": "1", "direct": "1", "ioengine": "libaio", "size": "1g"},
            "clean": dict(CLEAN_OPTIONS),
        },
        storage=st,
        mem_bytes=16 * GiB,
    )
    found = preflight(ctx)
    assert [(f.workload, f.check) for f in found] == [
        ("buffered-read", "cache-small-file"),
        ("journal", "volatile-write-cache"),
    ]
    assert "1.0 GiB of test data" in found[0].message and "vda" in found[1].message


def test_preflight_memory_compression_and_arc() -> None:
    tmpfs = StorageInfo("/dev/shm/x", "dir", FilesystemInfo("/dev/shm", "tmpfs", "tmpfs"), devices=())
    assert [f.check for f in preflight(PreflightContext({"w": dict(CLEAN_OPTIONS)}, tmpfs, 16 * GiB))] == ["memory-filesystem"]
    zero = {"rw": "write", "bs": "1m", "size": "128m", "zero_buffers": "1", "end_fsync": "1"}
    found = preflight(PreflightContext({"zero": zero}, btrfs(), 64 * GiB))
    assert [f.check for f in found] == ["cache-small-file", "btrfs-prealloc-uncompressed"]
    found = preflight(PreflightContext({"zero": {**zero, "fallocate": "none", "direct": "1"}}, btrfs(), 64 * GiB))
    assert [(f.check, f.severity) for f in found] == [("compressible-data", "warning")]
    found = preflight(PreflightContext({"r": dict(CLEAN_OPTIONS)}, zfs(), 16 * GiB))
    assert [f.check for f in found] == ["zfs-arc"]


def test_preflight_only_emits_preflight_checks() -> None:
    every = {
        name: job_options(load(name))
        for name in ("p1_pagecache_invalidate0.json", "p3_btrfs_zero_buffers_fallocate_none.json", "j_sync1_osync.json", "p4_sparse_file_direct_read.json")
    }
    for st in (storage(), btrfs(), zfs(), storage(devices=(HDD,)), None):
        for f in preflight(PreflightContext(every, st, 8 * GiB)):
            assert CHECKS[f.check].preflight, f


# --------------------------------------------------------------------------- registry and docs


def test_registry_entries_are_complete() -> None:
    for cid, info in CHECKS.items():
        assert cid == cid.lower() and " " not in cid
        assert info.title and info.explanation.endswith(".") and info.evidence and info.fix
        assert info.severities and set(info.severities) <= set(SEVERITIES)


def test_docs_findings_md_is_generated_from_the_registry() -> None:
    text = format_checks_markdown()
    for cid, info in CHECKS.items():
        assert f"## `{cid}`" in text and info.explanation in text and info.fix in text
    if os.environ.get("STORBENCH_REGEN_DOCS"):
        DOCS.parent.mkdir(exist_ok=True)
        DOCS.write_text(text)
    assert DOCS.read_text() == text, "docs/findings.md is stale: rerun with STORBENCH_REGEN_DOCS=1"


# --------------------------------------------------------------------------- real runs (root, loop devices)

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (loop devices, mount)")
needs_tools = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("fio", "losetup", "mkfs.ext4", "mkfs.btrfs", "mount", "umount", "findmnt")),
    reason="needs fio, losetup, mkfs.ext4, mkfs.btrfs, mount, findmnt",
)


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, check=True, capture_output=True, text=True, timeout=120)


def _umount(mnt: Path) -> None:
    if subprocess.run(["umount", str(mnt)], capture_output=True, timeout=60).returncode != 0:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=60)


@dataclass(frozen=True)
class LoopFs:
    device: str  # /dev/loopN
    name: str  # loopN
    mountpoint: Path


@contextlib.contextmanager
def _loop_fs(tmp_path: Path, size_bytes: int, mkfs: list[str], mount_opts: str | None = None) -> Iterator[LoopFs]:
    """A filesystem on a direct-I/O loop device; unmounted and detached whatever happens."""
    with contextlib.ExitStack() as cleanup:
        image = tmp_path / "disk.img"
        with open(image, "wb") as f:
            f.truncate(size_bytes)
        dev = _run(["losetup", "-f", "--show", "--direct-io=on", str(image)]).stdout.strip()
        cleanup.callback(subprocess.run, ["losetup", "-d", dev], capture_output=True, timeout=60)
        name = os.path.basename(dev)
        assert Path(f"/sys/block/{name}/loop/dio").read_text().strip() == "1"
        _run([*mkfs, dev])
        mnt = tmp_path / "mnt"
        mnt.mkdir()
        _run(["mount", *(["-o", mount_opts] if mount_opts else []), dev, str(mnt)])
        cleanup.callback(_umount, mnt)
        yield LoopFs(dev, name, mnt)


@pytest.fixture
def ext4_loop(tmp_path: Path) -> Iterator[LoopFs]:
    mkfs = ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"]
    with _loop_fs(tmp_path, 128 * MiB, mkfs) as fs:
        yield fs


@pytest.fixture
def btrfs_zstd_loop(tmp_path: Path) -> Iterator[LoopFs]:
    with _loop_fs(tmp_path, 256 * MiB, ["mkfs.btrfs", "-q", "-f"], "compress-force=zstd") as fs:
        yield fs


def _fio(*args: str) -> FioResult:
    proc = subprocess.run(["fio", "--output-format=json", *args], capture_output=True, text=True, timeout=120)
    result = parse_fio_json(proc.stdout)
    assert result.error == 0, (proc.stdout, proc.stderr)
    return result


def _measured(fs: LoopFs, fio_args: list[str], files: list[Path]) -> tuple[FioResult, ActivitySeries, tuple, tuple, int, int]:
    """Run fio as the runner does: space before, sampler around fio, space after."""
    before = tuple(FileState.from_stat(str(p), os.stat(p)) for p in files if p.exists())
    used_before = FsSpace.from_statvfs(os.statvfs(fs.mountpoint)).used_bytes
    with ActivitySampler([fs.name], interval_s=0.1) as sampler:
        result = _fio(*fio_args)
    after = tuple(FileState.from_stat(str(p), os.stat(p)) for p in files if p.exists())
    used_after = FsSpace.from_statvfs(os.statvfs(fs.mountpoint)).used_bytes
    return result, sampler.series(), before, after, used_before, used_after


def _real_context(workload: str, options: dict, fs: LoopFs, measured: tuple, *, created: bool) -> CheckContext:
    result, series, before, after, used_before, used_after = measured
    st = describe_target(str(fs.mountpoint))
    assert st.devices and st.devices[0].kname == fs.name, st
    return CheckContext(
        workload=workload,
        options=options,
        results=(result,),
        storage=st,
        activity=(series,),
        files_before=before,
        files_after=after,
        fs_used_before=used_before,
        fs_used_after=used_after,
        mem_bytes=st.host.mem_bytes if st.host else None,
        test_file_created=created,
        headline="bw",
    )


def _as_options(args: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for a in args:
        key, sep, value = a.lstrip("-").partition("=")
        out[key] = value if sep else None
    return out


@needs_root
@needs_tools
@pytest.mark.root
def test_real_cached_buffered_read_is_page_cache(ext4_loop: LoopFs) -> None:
    data = ext4_loop.mountpoint / "cached.bin"
    _fio("--name=lay", f"--filename={data}", "--rw=write", "--bs=1m", "--size=32m", "--direct=1")
    _fio("--name=warm", f"--filename={data}", "--rw=read", "--bs=1m", "--size=32m", "--invalidate=1")  # now cached
    args = [f"--filename={data}", "--rw=read", "--bs=1m", "--size=32m", "--direct=0", "--invalidate=0", "--ioengine=psync"]
    measured = _measured(ext4_loop, ["--name=cached", *args], [data])
    ctx = _real_context("cached", _as_options(args), ext4_loop, measured, created=True)
    found = run_checks(ctx)
    f = by_id(found, "page-cache")
    assert f.severity == "invalid"
    assert f"fio read 32.0 MiB but the device under the file ({ext4_loop.name}) read" in f.message
    assert "invalidate=0" in f.message
    assert "cache-small-file" not in ids(found)  # the proof supersedes the size warning (RAM here: GiBs)


@needs_root
@needs_tools
@pytest.mark.root
def test_real_zero_buffers_on_btrfs_compress_force(btrfs_zstd_loop: LoopFs) -> None:
    fs = btrfs_zstd_loop
    data = fs.mountpoint / "zeros.bin"
    args = [f"--filename={data}", "--rw=write", "--bs=1m", "--size=64m", "--zero_buffers=1", "--fallocate=none", "--end_fsync=1"]
    measured = _measured(fs, ["--name=zeros", *args], [data])
    ctx = _real_context("zeros", _as_options(args), fs, measured, created=True)
    assert ctx.storage is not None and ctx.storage.filesystem is not None
    assert ctx.storage.filesystem.btrfs is not None and ctx.storage.filesystem.btrfs.compression_forced
    f = by_id(run_checks(ctx), "compressible-data")
    assert f.severity == "invalid", f
    assert "fio wrote 64.0 MiB and the file grew by 64.0 MiB, but the filesystem's used space grew by" in f.message
    assert "compress-force=zstd" in f.message

    # the same with fio's default fallocate: btrfs does not compress the preallocated file
    data2 = fs.mountpoint / "prealloc.bin"
    args2 = [f"--filename={data2}", "--rw=write", "--bs=1m", "--size=32m", "--zero_buffers=1", "--end_fsync=1"]
    measured2 = _measured(fs, ["--name=prealloc", *args2], [data2])
    found = run_checks(_real_context("prealloc", _as_options(args2), fs, measured2, created=True))
    f = by_id(found, "btrfs-prealloc-uncompressed")
    assert f.severity == "warning" and "fallocate=native" in f.message
    assert "compressible-data" not in ids(found)
    os.sync()
    used = FsSpace.from_statvfs(os.statvfs(fs.mountpoint)).used_bytes - measured2[4]
    assert used >= 24 * MiB, f"btrfs compressed the preallocated file after all ({used} bytes): revisit the check"


@needs_root
@needs_tools
@pytest.mark.root
def test_real_sparse_file_read(ext4_loop: LoopFs) -> None:
    data = ext4_loop.mountpoint / "sparse.bin"
    with open(data, "wb") as f:
        f.truncate(64 * MiB)
    args = [f"--filename={data}", "--rw=randread", "--bs=4k", "--direct=1", "--ioengine=psync", "--runtime=1", "--time_based"]
    measured = _measured(ext4_loop, ["--name=sparse", *args], [data])
    found = run_checks(_real_context("sparse", _as_options(args), ext4_loop, measured, created=False))
    f = by_id(found, "sparse-read")
    assert f.severity == "invalid"
    assert "a file you gave" in f.message and "is 64.0 MiB but only 0 B of it was allocated" in f.message
    assert "direct-ignored" not in ids(found)  # the device read nothing, and sparse-read says why


@needs_root
@needs_tools
@pytest.mark.root
def test_real_loop_write_back_cache_under_o_sync(ext4_loop: LoopFs) -> None:
    knob = Path(f"/sys/block/{ext4_loop.name}/queue/write_cache")
    knob.write_text("write back")
    assert knob.read_text().strip() == "write back"  # check that what we asked for happened
    data = ext4_loop.mountpoint / "journal.bin"
    args = [f"--filename={data}", "--rw=write", "--bs=4k", "--size=4m", "--sync=1", "--direct=1", "--ioengine=psync"]
    measured = _measured(ext4_loop, ["--name=journal", *args], [data])
    ctx = _real_context("journal", _as_options(args), ext4_loop, measured, created=True)
    loop_dev = ctx.storage.device(ext4_loop.name) if ctx.storage else None
    assert loop_dev is not None and loop_dev.write_cache == "write back"
    f = by_id(run_checks(ctx), "volatile-write-cache")
    assert f.severity == "warning" and ext4_loop.name in f.message and "sync=1" in f.message
    # and before the run, from the storage alone
    pre = preflight(PreflightContext({"journal": _as_options(args)}, ctx.storage, ctx.mem_bytes))
    assert "volatile-write-cache" in {p.check for p in pre}


@contextlib.contextmanager
def _memory_mount(tmp_path: Path, fstype: str) -> Iterator[Path]:
    mnt = tmp_path / fstype
    mnt.mkdir()
    _run(["mount", "-t", fstype, "-o", "size=16m", fstype, str(mnt)])
    try:
        yield mnt
    finally:
        _umount(mnt)


@needs_root
@needs_tools
@pytest.mark.root
def test_real_memory_filesystems(tmp_path: Path) -> None:
    args = ["--rw=read", "--bs=4k", "--size=4m", "--direct=1", "--ioengine=psync"]
    # tmpfs accepts O_DIRECT on this kernel (6.6+) and still serves from memory
    with _memory_mount(tmp_path, "tmpfs") as mnt:
        result = _fio("--name=shm", f"--directory={mnt}", *args)
        st = describe_target(str(mnt))
        assert st.filesystem is not None and st.filesystem.fstype == "tmpfs" and not st.devices
        ctx = CheckContext("shm", _as_options(args), (result,), storage=st, mem_bytes=st.host.mem_bytes if st.host else None)
        f = by_id(run_checks(ctx), "memory-filesystem")
        assert f.severity == "invalid" and "on tmpfs" in f.message and "direct=1 does not change that" in f.message
    # ramfs refuses to open with O_DIRECT: fio stops with error 22
    with _memory_mount(tmp_path, "ramfs") as mnt:
        proc = subprocess.run(
            ["fio", "--output-format=json", "--name=ram", f"--directory={mnt}", *args], capture_output=True, text=True, timeout=120
        )
        result = parse_fio_json(proc.stdout)
        assert proc.returncode != 0 and result.error == 22
        st = describe_target(str(mnt))
        found = run_checks(CheckContext("ram", _as_options(args), (result,), storage=st))
        f = by_id(found, "direct-rejected")
        assert f.severity == "invalid" and "the ramfs filesystem does not support O_DIRECT" in f.message
        assert "memory-filesystem" in ids(found)


def test_real_fixture_outputs_parse_as_json_documents() -> None:
    """Guard for the helpers above: every fixture used here is real fio output."""
    for name in ("p1_invalidate1_reference.json", "p4_sparse_file_direct_read.json", "j_fsync1_libaio.json"):
        doc = json.loads((DATA / name).read_text())
        assert doc["fio version"] == "fio-3.33"


def test_object_server_cache_takes_bluestores_own_word_where_the_cluster_was_reached() -> None:
    """The OSDs' cache hits and misses (the tests' radosgw: 393,296,046 and 495,983,407 bytes over a
    1 MiB GET run) decide, for a gateway here or elsewhere; under half from the cache, the RAM
    rule (the same objects fit this machine's memory) is not applied."""
    found = run_checks(_s3("s3_get_1m_radosgw.json", rw="randread", bs="1m", numjobs="4", cache=(600 * 2**20, 400 * 2**20)))
    [cached] = [f for f in found if f.check == "object-server-cache"]
    assert cached.message.startswith("BlueStore's cache answered 60 % of the bytes the OSDs under the bucket read during this repetition "
                                     "(600.0 MiB of 1000.0 MiB)"), cached.message
    found = run_checks(_s3("s3_get_1m_radosgw.json", rw="randread", bs="1m", numjobs="4", cache=(393_296_046, 495_983_407)))
    assert "object-server-cache" not in {f.check for f in found}  # 44 %: the devices answered most
    found = run_checks(_s3("s3_put_4k_radosgw.json", rw="write", bs="4k", numjobs="1", cache=(600, 400)))
    assert "object-server-cache" not in {f.check for f in found}  # PUTs read nothing
