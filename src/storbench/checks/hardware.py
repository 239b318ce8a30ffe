"""The hardware's own word: what the drives and the RAID controller say about the run.

Checks (ids):

* ``drive-throttled`` -- a drive's time above its warning or critical temperature grew while
  fio ran (NVMe ``warning_temp_time`` / ``critical_comp_time``, read with smartctl before and
  after every workload): an NVMe drive throttles there, so the figure is a hot drive's.
* ``drive-hot`` -- a drive was at or above the temperature limit it reports (ATA SCT
  ``op_limit_max``, SCSI ``drive_trip``), or its NVMe critical warning for temperature is set.
* ``drive-errors-grew`` -- media, CRC, reallocated or pending-sector counters grew during the
  run: the drive retried or remapped, and the figure includes it.
* ``drive-failing`` -- the drive's own SMART verdict is FAILED, an NVMe critical warning for
  spare, reliability, read-only or backup is set, or sectors are pending: measure another drive.
* ``raid-cache-fallback`` -- a RAID logical drive configured for write-back caching runs
  write-through (a controller falls back when its battery or capacitor is failed, missing,
  charging or learning), or a Smart Array's cache is disabled: every write waits for the drives.
* ``raid-battery`` -- the controller's battery or capacitor is failed, missing, charging or in a
  learn cycle: the write cache is (or may at any moment be) off.
* ``raid-degraded`` -- a logical drive is degraded, partially degraded, offline or rebuilding, or a
  member drive failed, is rebuilding or predicts its own failure: the figures describe a degraded
  array (reads reconstructed from parity or one mirror, a rebuild competing for the drives).

Fix texts name the tool that was found (storcli, MegaCli64 or ssacli), not another vendor's.

The readings come from ``smartctl -j -a``, ``storcli /call/vall show all J``, MegaCli and ssacli
(:mod:`storbench.storage.health`, :mod:`storbench.storage.raid`), where those tools are installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.model import Finding
from storbench.storage import StorageInfo
from storbench.storage.health import DriveHealth
from storbench.storage.raid import CacheFallback, RaidController, array_problems, battery_problems, cache_fallbacks
from storbench.units import format_bytes

from ._common import CheckInfo, Options, finding, join, writes

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

INFO = {
    "drive-throttled": CheckInfo(
        title="The drive ran hot enough to throttle",
        explanation="The drive's own count of time above its warning (or critical) temperature grew during the run; NVMe drives reduce their speed there, so the figure is that of a throttled drive, not of the drive.",
        evidence="smartctl -j -a before and after the workload: NVMe warning_temp_time or critical_comp_time (minutes) grew.",
        fix="Cool the drive (airflow, a heatsink), pause between workloads, and run again; compare with the drive's temperature (smartctl -A) during the run.",
        severities=("warning",),
    ),
    "drive-hot": CheckInfo(
        title="The drive was at its temperature limit",
        explanation="The drive reported a temperature at or above the limit it states for itself, or its temperature warning is set: it may throttle or err, and its figures are not those of a drive in its operating range.",
        evidence="smartctl -j -a: temperature.current >= op_limit_max (ATA) or drive_trip (SCSI), or NVMe critical_warning bit 1.",
        fix="Cool the drive and run again; check its airflow and the room's temperature.",
        severities=("warning",),
        preflight=True,
    ),
    "drive-errors-grew": CheckInfo(
        title="The drive's error counters grew during the run",
        explanation="Media errors, interface CRC errors, reallocated or pending sectors grew while fio ran: the drive retried, remapped or resent I/O, which the figure includes.",
        evidence="smartctl -j -a before and after the workload: NVMe media_errors, ATA 187, 5, 197 or 199, SCSI uncorrected errors or grown defects grew.",
        fix="Check the drive (smartctl -x) and its cable (CRC errors are usually the cable or backplane); do not use the figure to judge the model.",
        severities=("warning",),
    ),
    "drive-failing": CheckInfo(
        title="The drive reports that it is failing",
        explanation="The drive's own SMART verdict is FAILED, a critical warning (spare, reliability, read-only, backup) is set, or it has sectors waiting to be reallocated: its figures describe a failing drive.",
        evidence="smartctl -j -a: smart_status.passed false, NVMe critical_warning bits 0, 2, 3 or 4, or ATA 197 Current_Pending_Sector > 0.",
        fix="Replace the drive (or measure a healthy one of the same model) before drawing conclusions.",
        severities=("warning",),
        preflight=True,
    ),
    "raid-cache-fallback": CheckInfo(
        title="The RAID controller runs write-through where write-back was configured",
        explanation="The logical drive was configured for write-back caching but runs write-through now (controllers fall back when the battery or capacitor is failed, missing, charging or learning), or the controller's cache is disabled: every write waits for the drives, the largest single factor in a hardware RAID's write figures.",
        evidence="storcli /call/vall show all J (Write Cache(initial setting) vs the VD's Cache code), MegaCli -LDInfo (Default vs Current Cache Policy), ssacli (Cache Status).",
        fix="Fix the battery or capacitor (storcli /c0/bbu show all; /c0/cv show all), or wait for its charge or learn cycle to end, then check the current policy (storcli /c0/vall show) before running again; forcing write-back without a battery (storcli /c0/vall set wrcache=awb) risks data on power loss.",
        severities=("warning",),
        preflight=True,
    ),
    "raid-degraded": CheckInfo(
        title="The RAID array is degraded or rebuilding",
        explanation="A logical drive runs without its full redundancy (Degraded, Partially Degraded, Offline, Interim Recovery) or is rebuilding, or a member drive failed, is rebuilding or predicts its own failure: reads are reconstructed from parity or served by one side of a mirror, and a rebuild competes with the workload for the drives. The figures describe a degraded array, not the array.",
        evidence="storcli /call/vall show all J (VD State Dgrd/Pdgd/OfLn/Rec, member State Rbld/Offln/UBad), MegaCli -LDInfo/-LdPdInfo (State, Firmware state, Predictive Failure Count, S.M.A.R.T alert), ssacli (logical drive and physicaldrive Status).",
        fix="Replace the failed or failing drive and let the rebuild finish (the controller's tool shows its progress), then run again; compare only figures of arrays in the same state.",
        severities=("warning",),
        preflight=True,
    ),
    "raid-battery": CheckInfo(
        title="The RAID controller's battery is not ready",
        explanation="The controller's battery or capacitor is failed, missing, charging or in a learn cycle: its write cache is off or may switch off during the run.",
        evidence="MegaCli -AdpBbuCmd -GetBbuStatus (Battery State, isSOHGood, learn cycle, charger status), ssacli Battery/Capacitor Status.",
        fix="Replace a failed battery; wait for a charge or learn cycle to end (storcli /c0/bbu show status), then run again.",
        severities=("warning",),
        preflight=True,
    ),
}


def _degrees(d: DriveHealth) -> str:
    return f"{d.temperature_c} °C" if d.temperature_c is not None else "?"


def _state_findings(drives: tuple[DriveHealth, ...]) -> list[Finding]:
    out: list[Finding] = []
    hot = [d for d in drives if (d.temperature_c is not None and d.temperature_limit_c and d.temperature_c >= d.temperature_limit_c)
           or (d.critical_warning or 0) & 0b10]  # fmt: skip
    if hot:
        what = join(f"{d.device} at {_degrees(d)}" + (f" (its limit {d.temperature_limit_c} °C)" if d.temperature_limit_c else " (temperature warning set)") for d in hot)
        out.append(finding("drive-hot", "warning", f"{what}: a drive at its temperature limit may throttle or err",
                           "cool the drive and run again; check its airflow (smartctl -A shows its temperature)"))  # fmt: skip
    failing: list[str] = []
    for d in drives:
        why = []
        if d.passed is False:
            why.append("its SMART verdict is FAILED")
        bits = [w for w in d.warnings if "temperature" not in w]
        if bits:
            why.append("critical warning: " + ", ".join(bits))
        if d.pending_sectors:
            why.append(f"{d.pending_sectors} sectors pending reallocation")
        if why:
            failing.append(f"{d.device} ({d.model or 'drive'}): {'; '.join(why)}")
    if failing:
        out.append(finding("drive-failing", "warning", f"{join(failing)}: its figures describe a failing drive",
                           "replace the drive, or measure a healthy one of the same model, before drawing conclusions"))  # fmt: skip
    return out


#: per tool: (see the battery, see the current cache policy, see the arrays and a rebuild's progress)
_TOOL_COMMANDS = {
    "storcli": ("storcli /c0/bbu show all (or /c0/cv show all)", "storcli /c0/vall show", "storcli /c0/vall show and storcli /c0/eall/sall show rebuild"),
    "megacli": ("MegaCli64 -AdpBbuCmd -GetBbuStatus -aALL", "MegaCli64 -LDGetProp -Cache -LAll -aALL", "MegaCli64 -LdPdInfo -aALL and MegaCli64 -PDRbld -ShowProg -PhysDrv [E:S] -aALL"),
    "ssacli": ("ssacli ctrl all show status", "ssacli ctrl all show config detail", "ssacli ctrl all show config"),
}


def _commands(controllers: tuple[RaidController, ...], which: int) -> str:
    """The command (``which``: 0 battery, 1 cache policy, 2 arrays) of every tool among ``controllers``."""
    tools = dict.fromkeys(c.tool for c in controllers if c.tool in _TOOL_COMMANDS)
    return "; ".join(_TOOL_COMMANDS[t][which] for t in tools) or "the controller's tool"


def _controller_findings(controllers: tuple[RaidController, ...], options: Options | None) -> list[Finding]:
    out: list[Finding] = []
    fallbacks: tuple[CacheFallback, ...] = ()
    if options is None or writes(options):
        fallbacks = cache_fallbacks(controllers)
    if fallbacks:
        what = join(
            f"{f.drive}{f' ({f.os_device})' if f.os_device else ''} on {f.controller} runs {f.current} where {f.configured} was configured"
            if f.configured != "controller cache" else f"{f.controller}'s {f.current}"
            for f in fallbacks
        )
        fell = tuple(c for c in controllers if c.name in {f.controller for f in fallbacks})
        out.append(finding("raid-cache-fallback", "warning", f"{what}: every write waits for the drives, so write figures are the drives' without the controller's cache",
                           f"fix or recharge the battery/capacitor ({_commands(fell, 0)}), check the current policy ({_commands(fell, 1)}), then run again"))  # fmt: skip
    bad = battery_problems(controllers)
    if bad:
        flat = tuple(c for c in controllers if c.name in {name for name, _ in bad})
        out.append(finding("raid-battery", "warning", f"the battery of {join(f'{c} is {state}' for c, state in bad)}: the write cache is off or may switch off during the run",
                           f"replace a failed battery, or wait for its charge or learn cycle to end ({_commands(flat, 0)}), then run again"))  # fmt: skip
    problems = array_problems(controllers)
    if problems:
        what = join(
            (f"{p.drive}{f' ({p.os_device})' if p.os_device else ''} on {p.controller} is {p.what}" if p.logical
             else f"member drive {p.drive} on {p.controller}: {p.what}")
            for p in problems
        )  # fmt: skip
        hurt = tuple(c for c in controllers if c.name in {p.controller for p in problems})
        out.append(finding("raid-degraded", "warning", f"{what}: the figures describe a degraded array, not the array",
                           f"replace the failed or failing drive and let the rebuild finish ({_commands(hurt, 2)}), then run again"))  # fmt: skip
    return out


def preflight_target(storage: StorageInfo | None) -> list[Finding]:
    """Once per target, before the run: the drives' and controllers' state."""
    if storage is None:
        return []
    return _state_findings(storage.drives) + _controller_findings(storage.controllers, None)


def check(ctx: CheckContext) -> list[Finding]:
    out: list[Finding] = []
    storage = ctx.storage
    hw = getattr(ctx.backend, "hardware", None)
    drives = hw.after if hw is not None and hw.after else (storage.drives if storage is not None else ())
    out.extend(_state_findings(tuple(drives)))
    if hw is not None:
        changes = hw.changes()
        thermal = [c for c in changes if c.counter in ("warning_temp_minutes", "critical_temp_minutes")]
        errors = [c for c in changes if c not in thermal]
        if thermal:
            out.append(finding("drive-throttled", "warning",
                               join(f"{c.device} spent {c.grew_by} more {c.words} during the run ({c.before} -> {c.after})" for c in thermal)
                               + ": NVMe drives throttle there, so this figure is a throttled drive's",
                               "cool the drive (airflow, a heatsink) or pause between workloads, and run again"))  # fmt: skip
        if errors:
            written = hw.written_bytes()
            wrote = join(f"{format_bytes(n)} to {dev}" for dev, n in written.items() if n)
            out.append(finding("drive-errors-grew", "warning",
                               join(f"{c.device}: {c.words} {c.before} -> {c.after}" for c in errors) + " during the run"
                               + (f" (the drives counted {wrote} written meanwhile)" if wrote else "") + ": the figure includes the drive's retries and remapping",
                               "check the drive (smartctl -x) and its cable (CRC errors are usually the cable); do not use this figure to judge the model"))  # fmt: skip
    if storage is not None:
        out.extend(_controller_findings(storage.controllers, ctx.options))
    return out
