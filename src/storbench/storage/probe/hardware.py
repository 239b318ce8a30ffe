"""The edge that asks the hardware itself: smartctl for each physical drive under a target, and
the RAID controller tools (storcli/perccli, MegaCli, ssacli) where they are installed.

Every tool is optional: a missing one is skipped silently (most hosts have no RAID controller
tool, and a virtual disk has no SMART); a tool that is installed but fails adds a note naming
the device and smartctl's (or the tool's) own words.  The parsing is pure
(:mod:`storbench.storage.health`, :mod:`storbench.storage.raid`).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..block import DeviceInfo
from .base import CommandRunner

if TYPE_CHECKING:  # the readers are imported when a drive or a controller tool is there to read
    from ..health import DriveHealth
    from ..raid import RaidController

#: kernel names of block devices that are never a physical drive with SMART
_VIRTUAL = re.compile(r"^(loop|nbd|zram|ram|rbd|zd|dm-|md|sr|fd|nullb|pmem)")

Which = Callable[[str], "str | None"]


def smart_devices(devices: Sequence[DeviceInfo]) -> list[str]:
    """The device paths smartctl can read: the chain's physical disks (no parents; not a loop,
    network, memory, device-mapper or md device; not a virtio disk, which has no SMART)."""
    out: list[str] = []
    for d in devices:
        if d.parents or d.type not in ("disk", "nvme") or _VIRTUAL.match(d.kname) or d.transport == "virtio":
            continue
        out.append(d.path or f"/dev/{d.kname}")
    return list(dict.fromkeys(out))


def read_drive(runner: CommandRunner, path: str) -> DriveHealth | str | None:
    """``smartctl -j -a PATH`` as a :class:`DriveHealth`, or the reason it could not be read
    (smartctl's own words), or None when smartctl is not installed."""
    try:
        rc, out, err = runner.run(["smartctl", "-j", "-a", path])
    except Exception as exc:  # a broken runner must not break a benchmark run
        return f"smartctl could not run for {path}: {exc}"
    if rc == 127:
        return None
    from ..health import HealthParseError, parse_smartctl_json

    # smartctl's exit status is a bit mask: bits 0-1 mean it could not read the device at all;
    # the higher bits report the drive's state (failing, errors logged) and still come with data
    try:
        health = parse_smartctl_json(out)
    except HealthParseError as exc:
        return f"smartctl could not read {path}: {exc}" if out.strip() else f"smartctl could not read {path}: {err.strip() or f'exit status {rc}'}"
    return dataclasses.replace(health, device=path)  # the path asked, which a later reading asks again


def read_drives(runner: CommandRunner, paths: Sequence[str], notes: list[str]) -> tuple[DriveHealth, ...]:
    """One reading per path (in order); what could not be read is a note."""
    drives: list[DriveHealth] = []
    for path in paths:
        got = read_drive(runner, path)
        if got is None:
            return tuple(drives)  # smartctl is not installed: nothing to ask
        if isinstance(got, str):
            notes.append(got)
        else:
            drives.append(got)
    return tuple(drives)


#: (tool names to look for, the argument lists to run, how to read them)
_STORCLI = ("storcli64", "storcli", "perccli64", "perccli")
_MEGACLI = ("MegaCli64", "MegaCli", "megacli")
_SSACLI = ("ssacli", "hpssacli", "hpacucli")


def _first(which: Which, names: Sequence[str]) -> str | None:
    return next((n for n in names if which(n)), None)


def read_controllers(runner: CommandRunner, notes: list[str], which: Which = shutil.which) -> tuple[RaidController, ...]:
    """Every RAID controller the installed tools report (none when no tool is installed)."""
    storcli, megacli, ssacli = _first(which, _STORCLI), _first(which, _MEGACLI), _first(which, _SSACLI)
    if not (storcli or megacli or ssacli):
        return ()
    from ..raid import (
        RaidParseError,
        parse_megacli_bbu,
        parse_megacli_ldinfo,
        parse_ssacli,
        parse_storcli_vall,
        with_batteries,
    )

    out: list[RaidController] = []

    def ask(argv: list[str], parse: Callable[[str], object], what: str) -> object | None:
        try:
            rc, text, err = runner.run(argv)
        except Exception as exc:
            notes.append(f"{what} not read: {argv[0]} could not run ({exc})")
            return None
        if rc != 0 and not text.strip():
            notes.append(f"{what} not read: {argv[0]} exited {rc} ({err.strip().splitlines()[0] if err.strip() else 'no output'})")
            return None
        try:
            return parse(text)
        except (RaidParseError, ValueError) as exc:
            notes.append(f"{what} not read: {exc}")
            return None

    if tool := storcli:
        got = ask([tool, "/call/vall", "show", "all", "J"], parse_storcli_vall, "RAID controller cache policy")
        out.extend(got or ())  # type: ignore[arg-type]
    if tool := megacli:
        got = ask([tool, "-LDInfo", "-Lall", "-aALL", "-NoLog"], parse_megacli_ldinfo, "RAID controller cache policy")
        if got:
            bbu = ask([tool, "-AdpBbuCmd", "-GetBbuStatus", "-aALL", "-NoLog"], parse_megacli_bbu, "RAID controller battery")
            out.extend(with_batteries(got, bbu) if isinstance(bbu, dict) else got)  # type: ignore[arg-type]
    if tool := ssacli:
        got = ask([tool, "ctrl", "all", "show", "config", "detail"], parse_ssacli, "Smart Array controller")
        out.extend(got or ())  # type: ignore[arg-type]
    return tuple(out)


def describe_hardware(
    runner: CommandRunner, devices: Sequence[DeviceInfo], notes: list[str], which: Which = shutil.which
) -> tuple[tuple[DriveHealth, ...], tuple[RaidController, ...]]:
    """The drives' health and the RAID controllers under a target's device chain."""
    paths = smart_devices(devices)
    drives = read_drives(runner, paths, notes) if paths and which("smartctl") else ()
    controllers = read_controllers(runner, notes, which) if any(not d.parents for d in devices) else ()
    return drives, controllers
