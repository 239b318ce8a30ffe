"""Hardware RAID controllers (pure): their logical drives' cache policy and their battery.

A controller's write cache is the biggest single factor in a write figure on a hardware RAID:
with WriteBack a write is acknowledged from the controller's memory, with WriteThrough only
once the drives have it.  Controllers fall back from the configured WriteBack to WriteThrough
by themselves when their battery (BBU) or capacitor (CacheVault) is failed, missing, charging
or in a learn cycle ("No Write Cache if Bad BBU"), and nothing says so unless someone asks.

Parsed here, each into :class:`RaidController` records:

* Broadcom/LSI **storcli** / Dell **perccli** JSON: ``storcli /call/vall show all J``
  (:func:`parse_storcli_vall`): the VD table's ``Cache`` code is the current policy
  (``RWBD``: read ahead, WriteBack, Direct; ``NRWTD``: no read ahead, WriteThrough, Direct;
  ``AWB``: always write back), ``Write Cache(initial setting)`` the configured one.
* **MegaCli** text: ``MegaCli64 -LDInfo -Lall -aALL`` / ``-LdPdInfo -aALL``
  (:func:`parse_megacli_ldinfo`: ``Default Cache Policy`` vs ``Current Cache Policy``),
  ``MegaCli64 -AdpBbuCmd -GetBbuStatus -aALL`` (:func:`parse_megacli_bbu`).
* HPE **ssacli** (hpssacli, hpacucli) text: ``ssacli ctrl all show config detail`` or
  ``ctrl all show status`` (:func:`parse_ssacli`): cache status (``Temporarily Disabled``),
  battery/capacitor status, the drives' write cache, each logical drive's caching.

:func:`cache_fallbacks` and :func:`battery_problems` say what is wrong, for the checks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ._util import json_error


@dataclass(frozen=True)
class LogicalDrive:
    """One logical (virtual) drive of a controller.  ``write_policy_*`` are ``WriteBack``,
    ``WriteThrough`` or ``AlwaysWriteBack``; None: the tool did not say."""

    name: str
    raid_level: str | None = None
    state: str | None = None
    size: str | None = None
    os_device: str | None = None
    write_policy_configured: str | None = None
    write_policy_current: str | None = None
    read_policy: str | None = None
    disk_cache: str | None = None  # the member drives' own cache: "Enabled", "Disabled", "Disk's Default"
    caching: str | None = None  # ssacli's "Caching"/"Array Accelerator": Enabled/Disabled


@dataclass(frozen=True)
class PhysicalDrive:
    """One member drive of a controller's arrays, as its tool reported it."""

    name: str  # MegaCli/storcli "[enclosure:slot]", ssacli "physicaldrive 1I:1:1"
    state: str | None = None  # MegaCli "Online, Spun Up", "Rebuild", "Failed"; storcli "Onln", "Rbld"; ssacli "OK", "Predictive Failure"
    model: str | None = None
    media_errors: int | None = None
    predictive_failures: int | None = None  # MegaCli's "Predictive Failure Count"
    smart_alert: bool | None = None  # MegaCli's "Drive has flagged a S.M.A.R.T alert"


@dataclass(frozen=True)
class RaidController:
    """One RAID controller as its tool reported it."""

    tool: str  # "storcli", "megacli", "ssacli"
    name: str
    status: str | None = None
    cache_status: str | None = None  # ssacli: "OK", "Temporarily Disabled", "Permanently Disabled"
    cache_status_details: str | None = None
    battery: str | None = None  # as the tool says it: "OK", "Optimal", "Failed (Replace ...)", "Learning"
    drive_write_cache: str | None = None  # ssacli's controller-wide "Drive Write Cache"
    logical_drives: tuple[LogicalDrive, ...] = ()
    physical_drives: tuple[PhysicalDrive, ...] = ()

    @property
    def tool_command(self) -> str:
        """The command a person types for this controller's tool (fix texts name the tool that was found)."""
        return {"storcli": "storcli", "megacli": "MegaCli64", "ssacli": "ssacli"}.get(self.tool, self.tool)


class RaidParseError(ValueError):
    """A controller tool's output storbench cannot read; the message says what was wrong."""


# --------------------------------------------------------------------------- RAID levels in words

_MEGACLI_LEVEL = re.compile(r"Primary-(\d+),\s*Secondary-(\d+),\s*RAID Level Qualifier-(\d+)", re.I)


def megacli_raid_level(text: str | None, span_depth: int | None = None) -> str | None:
    """MegaCli's ``Primary-P, Secondary-S, RAID Level Qualifier-Q`` (and the span depth) in words,
    as check_lsi_raid and LSI's manuals read them: P is the level within a span; a second level
    (``Secondary-3``, older firmware) or more than one span stripes the spans, so Primary-1 over
    two spans is RAID 10, Primary-5 RAID 50, Primary-6 RAID 60, Primary-0 RAID 00.  Text that is
    not in that form is returned as it is."""
    if text is None:
        return None
    m = _MEGACLI_LEVEL.search(text)
    if not m:
        return text.strip() or None
    primary, secondary = int(m.group(1)), int(m.group(2))
    spanned = secondary == 3 or (span_depth or 1) > 1
    if spanned and primary in (0, 1, 5, 6):
        return f"RAID {primary}0"
    if primary == 17:  # MegaCli's RAID 1E (an odd number of mirrored drives)
        return "RAID 1E"
    return f"RAID {primary}"


def raid_level_words(text: str | None) -> str | None:
    """storcli's ``RAID1``/``RAID10`` and ssacli's ``1+0``/``RAID 1+0``/``RAID 6 (ADG)`` as
    ``RAID 1``, ``RAID 10``, ``RAID 6``: one vocabulary whichever tool was found."""
    if text is None or not text.strip():
        return None
    t = text.strip()
    m = re.fullmatch(r"(?:RAID\s*)?(\d+)(?:\s*\+\s*(0))?(?:\s*\(ADG\))?", t, re.I)
    if not m:
        return t
    return f"RAID {m.group(1)}{m.group(2) or ''}"


# --------------------------------------------------------------------------- storcli / perccli JSON

_STORCLI_WRITE = (("AWB", "AlwaysWriteBack"), ("WB", "WriteBack"), ("WT", "WriteThrough"))


def storcli_cache_code(code: str) -> tuple[str | None, str | None]:
    """storcli's VD ``Cache`` code as (read policy, write policy): ``RWBD`` -> (ReadAhead, WriteBack)."""
    code = code.strip().upper()
    read = "NoReadAhead" if code.startswith("NR") else ("ReadAhead" if code.startswith("R") else None)
    rest = code[2:] if code.startswith("NR") else code[1:] if code.startswith("R") else code
    write = next((name for short, name in _STORCLI_WRITE if rest.startswith(short)), None)
    return read, write


def _policy_word(text: str | None) -> str | None:
    if not text:
        return None
    t = text.replace(" ", "").lower()
    if "alwayswriteback" in t:
        return "AlwaysWriteBack"
    if "writeback" in t or t == "wb":
        return "WriteBack"
    if "writethrough" in t or t == "wt":
        return "WriteThrough"
    return None


def parse_storcli_vall(text: str) -> tuple[RaidController, ...]:
    """Controllers from ``storcli /call/vall show all J`` (or ``/c0/vall``)."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise RaidParseError(f"storcli output is not JSON ({json_error(exc)})") from None
    controllers = doc.get("Controllers") if isinstance(doc, Mapping) else None
    if not isinstance(controllers, list):
        raise RaidParseError("storcli JSON has no 'Controllers' list")
    out: list[RaidController] = []
    for i, ctl in enumerate(controllers):
        if not isinstance(ctl, Mapping):
            continue
        status = ctl.get("Command Status", {}) if isinstance(ctl.get("Command Status"), Mapping) else {}
        number = status.get("Controller", i)
        data = ctl.get("Response Data", {})
        if status.get("Status") not in (None, "Success") or not isinstance(data, Mapping):
            raise RaidParseError(f"storcli controller {number}: {status.get('Description') or status.get('Status')}")
        drives: list[LogicalDrive] = []
        members: dict[str, PhysicalDrive] = {}
        for key, rows in data.items():
            if re.fullmatch(r"PDs for VD \d+", key) and isinstance(rows, list):
                for pd in rows:
                    if isinstance(pd, Mapping) and pd.get("EID:Slt"):
                        name = f"[{pd['EID:Slt']}]"
                        members[name] = PhysicalDrive(name=name, state=pd.get("State"), model=(pd.get("Model") or "").strip() or None)
                continue
            m = re.fullmatch(r"/c(\d+)/v(\d+)", key)
            if not m or not isinstance(rows, list) or not rows or not isinstance(rows[0], Mapping):
                continue
            row = rows[0]
            props = data.get(f"VD{m.group(2)} Properties", {})
            props = props if isinstance(props, Mapping) else {}
            read, write = storcli_cache_code(str(row.get("Cache", "")))
            drives.append(
                LogicalDrive(
                    name=f"c{m.group(1)}/v{m.group(2)}",
                    raid_level=raid_level_words(row.get("TYPE")),
                    state=row.get("State"),
                    size=row.get("Size"),
                    os_device=props.get("OS Drive Name"),
                    write_policy_configured=_policy_word(props.get("Write Cache(initial setting)")),
                    write_policy_current=write,
                    read_policy=read,
                    disk_cache=props.get("Disk Cache Policy"),
                )
            )
        out.append(RaidController(tool="storcli", name=f"controller {number}", logical_drives=tuple(drives),
                                  physical_drives=tuple(members.values())))  # fmt: skip
    return tuple(out)


# --------------------------------------------------------------------------- MegaCli text

_KV = re.compile(r"^\s*([^:]+?)\s*:\s*(.*?)\s*$")


def _count(text: str | None) -> int | None:
    return int(text) if text is not None and text.strip().isdigit() else None


def _megacli_pd(fields: Mapping[str, str]) -> PhysicalDrive:
    enclosure, slot = fields.get("Enclosure Device ID", "?"), fields.get("Slot Number", "?")
    alert = fields.get("Drive has flagged a S.M.A.R.T alert", "").strip().lower()
    inquiry = " ".join(fields.get("Inquiry Data", "").split()[:2]) or None
    return PhysicalDrive(
        name=f"[{enclosure}:{slot}]",
        state=fields.get("Firmware state"),
        model=inquiry,
        media_errors=_count(fields.get("Media Error Count")),
        predictive_failures=_count(fields.get("Predictive Failure Count")),
        smart_alert=True if alert == "yes" else False if alert == "no" else None,
    )


def parse_megacli_ldinfo(text: str) -> tuple[RaidController, ...]:
    """Controllers from ``MegaCli64 -LDInfo -Lall -aALL`` or ``-LdPdInfo -aALL`` text (the latter
    with each array's member drives: firmware state, media errors, predictive failures)."""
    controllers: dict[str, list[LogicalDrive]] = {}
    members: dict[str, dict[str, PhysicalDrive]] = {}
    adapter = "0"
    current: dict[str, str] | None = None
    pd: dict[str, str] | None = None
    name = ""

    def close_pd() -> None:
        nonlocal pd
        if pd is not None:
            drive = _megacli_pd(pd)
            members.setdefault(adapter, {})[drive.name] = drive
        pd = None

    def close() -> None:
        close_pd()
        if current is not None:
            span_depth = _count(current.get("Span Depth"))
            controllers.setdefault(adapter, []).append(
                LogicalDrive(
                    name=name,
                    raid_level=megacli_raid_level(current.get("RAID Level"), span_depth),
                    state=current.get("State"),
                    size=current.get("Size"),
                    write_policy_configured=_policy_word(current.get("Default Cache Policy", "").split(",")[0]),
                    write_policy_current=_policy_word(current.get("Current Cache Policy", "").split(",")[0]),
                    read_policy=(current.get("Current Cache Policy", "").split(",") + ["", ""])[1].strip() or None,
                    disk_cache=current.get("Disk Cache Policy"),
                )
            )

    for line in text.splitlines():
        if m := re.match(r"^\s*Adapter\s*#?\s*(\d+)", line):
            close()
            current, adapter = None, m.group(1)
            controllers.setdefault(adapter, [])
            continue
        if m := re.match(r"^\s*Virtual Drive\s*:\s*(\d+)", line):
            close()
            current, name = {}, f"a{adapter}/v{m.group(1)}"
            continue
        if re.match(r"^\s*PD: \d+ Information", line):
            close()  # the array's own fields end where its first drive begins
            current, pd = None, {}
            continue
        if re.match(r"^\s*Exit Code", line):
            close()
            current = None
            continue
        fields = pd if pd is not None else current
        if fields is not None and (m := _KV.match(line)) and m.group(1) not in fields:
            fields[m.group(1)] = m.group(2)
    close()
    drives = [d for ds in controllers.values() for d in ds]
    if not drives:
        raise RaidParseError("MegaCli output shows no 'Virtual Drive:' block")
    return tuple(RaidController(tool="megacli", name=f"adapter {a}", logical_drives=tuple(ds),
                                physical_drives=tuple(members.get(a, {}).values()))
                 for a, ds in controllers.items())  # fmt: skip


def parse_megacli_bbu(text: str) -> dict[str, str]:
    """The battery state per adapter from ``MegaCli64 -AdpBbuCmd -GetBbuStatus -aALL``:
    ``Optimal``, ``Failed``, ``Learning``, ``Charging``, ``Discharging`` ... in MegaCli's words
    where it gives one, else judged from its flags (``isSOHGood: No`` is a failed battery)."""
    out: dict[str, str] = {}
    adapter: str | None = None
    seen: dict[str, str] = {}

    def close() -> None:
        if adapter is None:
            return
        words = []
        state = seen.get("Battery State") or seen.get("Battery state")
        if state:
            words.append(state)
        if seen.get("isSOHGood", "").lower() == "no":
            words.append("Failed (state of health not good)")
        if seen.get("Learn Cycle Active", "").lower() == "yes":
            words.append("Learning")
        if seen.get("Battery Replacement required", "").lower() == "yes":
            words.append("Replacement required")
        charger = seen.get("Charger Status") or seen.get("Charging Status")
        if not words and charger and charger.lower() not in ("complete", "none"):
            words.append(f"Charging ({charger})")
        if not words and seen.get("isSOHGood", "").lower() == "yes":
            words.append("Optimal")
        if words:
            out[adapter] = ", ".join(dict.fromkeys(words))

    for line in text.splitlines():
        if m := re.match(r"^\s*BBU status for Adapter\s*:\s*(\d+)", line):
            close()
            adapter, seen = m.group(1), {}
            continue
        if adapter is not None and (m := _KV.match(line)) and m.group(2):
            seen.setdefault(m.group(1), m.group(2))
    close()
    if not out:
        raise RaidParseError("MegaCli output shows no 'BBU status for Adapter:' block with a state")
    return out


def with_batteries(controllers: tuple[RaidController, ...], batteries: Mapping[str, str]) -> tuple[RaidController, ...]:
    """MegaCli controllers (``adapter N``) with their battery state from :func:`parse_megacli_bbu`."""
    return tuple(replace(c, battery=batteries.get(c.name.removeprefix("adapter "), c.battery)) for c in controllers)


# --------------------------------------------------------------------------- ssacli text

_SSA_CONTROLLER = re.compile(r"^(\S.*?\bin Slot \S+.*?)\s*(?:\(sn: .*\))?\s*$")


def parse_ssacli(text: str) -> tuple[RaidController, ...]:
    """Controllers from ``ssacli ctrl all show config detail`` or ``ctrl all show status``."""
    out: list[RaidController] = []
    ctl: dict[str, str] | None = None
    ctl_name = ""
    drives: list[LogicalDrive] = []
    ld: dict[str, str] | None = None
    ld_name = ""
    pds: dict[str, PhysicalDrive] = {}
    pd: dict[str, str] | None = None
    pd_name = ""

    def close_ld() -> None:
        nonlocal ld
        if ld is not None:
            drives.append(
                LogicalDrive(
                    name=f"logicaldrive {ld_name}",
                    raid_level=raid_level_words(ld.get("Fault Tolerance")),
                    state=ld.get("Status"),
                    size=ld.get("Size"),
                    os_device=ld.get("Disk Name"),
                    caching=ld.get("Caching") or ld.get("Array Accelerator") or ld.get("LD Acceleration Method"),
                )
            )
        ld = None

    def close_pd() -> None:
        nonlocal pd
        if pd is not None:
            pds[pd_name] = PhysicalDrive(name=pd_name, state=pd.get("Status"), model=" ".join(pd.get("Model", "").split()) or None)
        pd = None

    def close_ctl() -> None:
        nonlocal ctl, drives, pds
        close_ld()
        close_pd()
        if ctl is not None:
            battery = ctl.get("Battery/Capacitor Status")
            if battery is None and ctl.get("Cache Board Present", "").lower() == "true" and "Battery/Capacitor Count" in ctl:
                battery = "missing" if ctl["Battery/Capacitor Count"] == "0" else None
            out.append(
                RaidController(
                    tool="ssacli",
                    name=ctl_name,
                    status=ctl.get("Controller Status"),
                    cache_status=ctl.get("Cache Status"),
                    cache_status_details=ctl.get("Cache Status Details"),
                    battery=battery,
                    drive_write_cache=ctl.get("Drive Write Cache"),
                    logical_drives=tuple(drives),
                    physical_drives=tuple(pds.values()),
                )
            )
        ctl, drives, pds = None, [], {}

    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace() and (m := _SSA_CONTROLLER.match(line)):
            close_ctl()
            ctl, ctl_name = {}, m.group(1)
            continue
        if ctl is None:
            continue
        stripped = line.strip()
        if m := re.match(r"^Logical Drive:\s*(\S+)", stripped):
            close_ld()
            close_pd()
            ld, ld_name = {}, m.group(1)
            continue
        if m := re.match(r"^physicaldrive\s+(\S+)\s*(?:\((.*)\))?$", stripped, re.I):
            close_ld()
            close_pd()
            pd_name = f"physicaldrive {m.group(1)}"
            if m.group(2):  # "physicaldrive 1I:1:1 (port 1I:box 1:bay 1, SAS, 146 GB, OK)": its status last
                status = m.group(2).rsplit(",", 1)[-1].strip()
                pds.setdefault(pd_name, PhysicalDrive(name=pd_name, state=status))
            else:  # the drive's own block of fields follows
                pd = {}
            continue
        if re.match(r"^(Array:|Mirror Group|Enclosure|Expander|SEP|Port Name|unassigned)", stripped, re.I):
            close_ld()
            close_pd()
            continue
        if (m := _KV.match(line)) is not None:
            key, value = m.group(1), m.group(2)
            target = pd if pd is not None else ld if ld is not None else ctl
            target.setdefault(key, value)
    close_ctl()
    if not out:
        raise RaidParseError("ssacli output shows no 'Smart Array ... in Slot N' controller")
    return tuple(out)


# --------------------------------------------------------------------------- judgements


@dataclass(frozen=True)
class CacheFallback:
    """A logical drive running another write policy than its configured one."""

    controller: str
    drive: str
    os_device: str | None
    configured: str
    current: str


def cache_fallbacks(controllers: tuple[RaidController, ...]) -> tuple[CacheFallback, ...]:
    """Logical drives configured for write-back caching that run write-through now, and
    ssacli controllers whose cache is disabled (its logical drives then run without it)."""
    out: list[CacheFallback] = []
    for c in controllers:
        for d in c.logical_drives:
            if d.write_policy_configured in ("WriteBack", "AlwaysWriteBack") and d.write_policy_current == "WriteThrough":
                out.append(CacheFallback(c.name, d.name, d.os_device, d.write_policy_configured, d.write_policy_current))
        if c.cache_status and "disabled" in c.cache_status.lower():
            out.append(CacheFallback(c.name, "all logical drives", None, "controller cache", f"cache {c.cache_status}"))
    return tuple(out)


_BATTERY_OK = ("ok", "optimal", "charged", "present")

#: logical-drive states that mean the array runs without its full redundancy or is rebuilding, in each
#: tool's words (MegaCli: Degraded, Partially Degraded, Offline; storcli: Dgrd, Pdgd, OfLn, Rec;
#: ssacli: Failed, Interim Recovery Mode, Ready for Rebuild, Rebuilding, Recovering)
_VD_DEGRADED = re.compile(r"degrad|^dgrd$|^pdgd$|offline|^ofln$|^rec$|fail|interim recovery|rebuil|recover", re.I)
#: member-drive states that are not a healthy member (MegaCli Firmware state, storcli State, ssacli Status)
_PD_BAD = re.compile(r"fail|rebuil|^rbld$|offline|^offln$|unconfigured\(bad\)|^ubad$|missing|predictive", re.I)


@dataclass(frozen=True)
class ArrayProblem:
    """A logical drive that is degraded or rebuilding, or a member drive that failed, is
    rebuilding or predicts its own failure."""

    controller: str
    tool: str
    drive: str  # "a0/v0", "logicaldrive 1", or a member "[1:0]"
    os_device: str | None
    what: str  # "Degraded", "Rebuild", "predictive failure count 107, SMART alert"
    logical: bool


def array_problems(controllers: tuple[RaidController, ...]) -> tuple[ArrayProblem, ...]:
    """Every logical drive not at full redundancy and every member drive that is not healthy."""
    out: list[ArrayProblem] = []
    for c in controllers:
        for d in c.logical_drives:
            if d.state and _VD_DEGRADED.search(d.state.strip()):
                out.append(ArrayProblem(c.name, c.tool, d.name, d.os_device, d.state.strip(), True))
        for pd in c.physical_drives:
            why = []
            if pd.state and _PD_BAD.search(pd.state.strip()):
                why.append(pd.state.strip())
            if pd.predictive_failures:
                why.append(f"predictive failure count {pd.predictive_failures}")
            if pd.smart_alert:
                why.append("SMART alert flagged")
            if why:
                if pd.media_errors:
                    why.append(f"{pd.media_errors} media errors")
                out.append(ArrayProblem(c.name, c.tool, pd.name, None, ", ".join(why), False))
    return tuple(out)


def battery_problems(controllers: tuple[RaidController, ...]) -> tuple[tuple[str, str], ...]:
    """(controller, battery words) for each battery that is failed, missing, learning or charging."""
    return tuple(
        (c.name, c.battery) for c in controllers if c.battery and c.battery.strip().lower() not in _BATTERY_OK
    )
