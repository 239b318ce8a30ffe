"""The command runner and the per-call probe state: notes, caches, mounts, sysfs and device names."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Sequence
from typing import Protocol

from ..block import DeviceInfo, SysfsBlock, device_from_sysfs, parse_lsblk_json
from ..mounts import (
    FindmntEntry,
    mount_for_path,
    parse_findmnt_json,
    parse_mountinfo,
)


class CommandRunner(Protocol):
    """Runs one program: ``run(["findmnt", "-J", ...]) -> (returncode, stdout, stderr)``."""

    def run(self, argv: list[str]) -> tuple[int, str, str]: ...


class SubprocessRunner:
    """The real :class:`CommandRunner`: an argument list (never a shell), ``LC_ALL=C``, a timeout.

    A missing program gives ``(127, "", "not found")``; a timeout gives
    ``(124, partial stdout, "timed out after N s")``.
    """

    def __init__(self, timeout_s: float = 10.0) -> None:
        self.timeout_s = timeout_s

    def run(self, argv: list[str]) -> tuple[int, str, str]:
        from storbench.process import proc as processes

        try:
            proc = processes.run(argv, timeout_s=self.timeout_s, errors="replace")
        except FileNotFoundError:
            return 127, "", "not found"
        except PermissionError as exc:
            return 126, "", str(exc)
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            return 124, out, f"timed out after {self.timeout_s:g} s"
        return proc.returncode, proc.stdout, proc.stderr


def _error_line(stderr: str | None) -> str:
    """The first line of ``stderr`` that says something (skipping banners like ``dumpe2fs 1.47.0 (5-Feb-2023)``)."""
    lines = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    for line in lines:
        if not re.fullmatch(r"[\w.+-]+ v?\d+(\.\d+)+\S*( \(.*\))?", line):
            return line
    return lines[0] if lines else ""


def read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def _read_line(path: str) -> str | None:
    text = read_text(path)
    return None if text is None else text.strip()


class Probe:
    """One describe_target call: the runner, sysfs root, the notes and the caches."""

    def __init__(self, runner: CommandRunner, sys_root: str) -> None:
        self.runner = runner
        self.sys_root = sys_root
        self.notes: list[str] = []
        self.missing: set[str] = set()
        self.lsblk: dict[str, DeviceInfo] = {}  # kname -> what lsblk said
        self.lsblk_ok = True  # False once lsblk is known to be missing
        self.start_cache: dict[str, str | None] = {}  # device path -> kname
        self.zvol_hints: dict[str, str] = {}  # kname -> dataset, for targets named /dev/zvol/POOL/VOL

    # ----------------------------------------------------------------- commands

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def run_first(self, argvs: Sequence[list[str]], what: str) -> tuple[int, str] | None:
        """(index, stdout) of the first of ``argvs`` that succeeds -- the same question asked
        in the forms different versions of a tool accept (OpenZFS's ``zpool status -P``, then
        zfs-fuse's plain ``zpool status``); None after noting why the last one failed."""
        for i, argv in enumerate(argvs):
            last = i == len(argvs) - 1
            if last:
                out = self.run(argv, what)
                return None if out is None else (i, out)
            if argv[0] in self.missing:
                return self.run_first(argvs[-1:], what)
            try:
                rc, out, _err = self.runner.run(list(argv))
            except Exception:
                continue
            if rc == 127:
                self.missing.add(argv[0])
                return self.run_first(argvs[-1:], what)
            if rc == 0:
                return i, out
        return None

    def run(self, argv: list[str], what: str) -> str | None:
        """stdout of ``argv``, or None after noting why not."""
        prog = argv[0]
        if prog in self.missing:
            self.note(f"{what} not read: {prog} command not found")
            return None
        try:
            rc, out, err = self.runner.run(list(argv))
        except Exception as exc:  # a broken runner must not break a benchmark run
            self.note(f"{what} not read: {prog} could not run ({exc})")
            return None
        if rc == 127:
            self.missing.add(prog)
            self.note(f"{what} not read: {prog} command not found")
            return None
        if rc != 0:
            first = _error_line(err)
            self.note(f"{what} not read: {' '.join(argv)} exited {rc}{': ' + first if first else ''}")
            return None
        return out

    # ----------------------------------------------------------------- mounts

    def find_mount(self, path: str) -> FindmntEntry | None:
        out = self.run(["findmnt", "-J", "-T", path, "-o", "TARGET,SOURCE,FSTYPE,OPTIONS"], f"filesystem of {path}")
        if out is not None:
            try:
                entries = parse_findmnt_json(out)
            except ValueError as exc:
                self.note(f"findmnt output for {path} not understood: {exc}")
                entries = ()
            if entries:
                return entries[-1]
        text = read_text("/proc/self/mountinfo")
        if text is None:
            self.note("filesystem unknown: findmnt failed and /proc/self/mountinfo is unreadable")
            return None
        return mount_for_path(parse_mountinfo(text), os.path.realpath(path))

    # ----------------------------------------------------------------- sysfs

    def sysfs(self, kname: str) -> SysfsBlock:
        base = os.path.join(self.sys_root, "class", "block", kname)
        if not os.path.exists(base):
            base = os.path.join(self.sys_root, "block", kname)
        if not os.path.exists(base):
            self.note(f"{kname}: no {os.path.join(self.sys_root, 'class/block', kname)}")
            return SysfsBlock(kname=kname)
        is_partition = os.path.exists(os.path.join(base, "partition"))
        partition_of = None
        disk_dir = base
        if is_partition:
            disk_dir = os.path.dirname(os.path.realpath(base))
            partition_of = os.path.basename(disk_dir)
        queue = os.path.join(disk_dir, "queue")
        try:
            slaves = tuple(sorted(os.listdir(os.path.join(base, "slaves"))))
        except OSError:
            slaves = ()

        def q(name: str) -> str | None:
            return _read_line(os.path.join(queue, name))

        raw = SysfsBlock(
            kname=kname,
            size_sectors=_read_line(os.path.join(base, "size")),
            scheduler=q("scheduler"),
            nr_requests=q("nr_requests"),
            write_cache=q("write_cache"),
            discard_max_bytes=q("discard_max_bytes"),
            read_ahead_kb=q("read_ahead_kb"),
            rotational=q("rotational"),
            logical_block_size=q("logical_block_size"),
            physical_block_size=q("physical_block_size"),
            model=_read_line(os.path.join(disk_dir, "device", "model")),
            vendor=_read_line(os.path.join(disk_dir, "device", "vendor")),
            serial=_read_line(os.path.join(disk_dir, "device", "serial")) or _read_line(os.path.join(disk_dir, "serial")),
            loop_backing_file=_read_line(os.path.join(base, "loop", "backing_file")),
            loop_dio=_read_line(os.path.join(base, "loop", "dio")),
            dm_name=_read_line(os.path.join(base, "dm", "name")),
            dm_uuid=_read_line(os.path.join(base, "dm", "uuid")),
            md_level=_read_line(os.path.join(base, "md", "level")),
            is_partition=is_partition,
            partition_of=partition_of,
            slaves=slaves,
        )
        if raw.scheduler is None and raw.rotational is None:
            self.note(f"{kname}: queue settings unreadable under {queue}")
        return raw

    # ----------------------------------------------------------------- devices

    def kname_of(self, dev_path: str) -> str | None:
        """Kernel name of a device (``/dev/mapper/vg-lv`` -> ``dm-0``); lsblk first, then stat + sysfs.

        lsblk's answer (the device and all its ancestors, ``-s``) is kept for :meth:`device`.
        """
        if dev_path in self.start_cache:
            return self.start_cache[dev_path]
        kname = None
        if self.lsblk_ok:
            out = self.run(["lsblk", "-J", "-b", "-O", "-s", dev_path], f"device details of {dev_path}")
            if out is None:
                self.lsblk_ok = "lsblk" not in self.missing
            else:
                try:
                    devs = parse_lsblk_json(out)
                except ValueError as exc:
                    self.note(f"lsblk output for {dev_path} not understood: {exc}")
                    devs = ()
                for dev in devs:
                    self.lsblk.setdefault(dev.kname, dev)
                if devs:
                    kname = devs[0].kname
        if kname is None:
            kname = self._kname_from_stat(dev_path)
        self.start_cache[dev_path] = kname
        return kname

    def _kname_from_stat(self, dev_path: str) -> str | None:
        real = os.path.realpath(dev_path)
        try:
            st = os.stat(real)
        except OSError as exc:
            self.note(f"{dev_path}: {exc.strerror or exc}")
            return None
        if not stat.S_ISBLK(st.st_mode):
            self.note(f"{dev_path} is not a block device")
            return None
        link = os.path.join(self.sys_root, "dev", "block", f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
        if os.path.exists(link):
            return os.path.basename(os.path.realpath(link))
        return os.path.basename(real)

    def device(self, kname: str) -> DeviceInfo:
        if kname not in self.lsblk and self.lsblk_ok:
            self.kname_of(f"/dev/{kname}")
        return device_from_sysfs(self.sysfs(kname), self.lsblk.get(kname))

    def _kname_from_st_dev(self, mountpoint: str) -> str | None:
        try:
            st_dev = os.stat(mountpoint).st_dev
        except OSError:
            return None
        link = os.path.join(self.sys_root, "dev", "block", f"{os.major(st_dev)}:{os.minor(st_dev)}")
        return os.path.basename(os.path.realpath(link)) if os.path.exists(link) else None
