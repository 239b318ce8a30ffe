"""A drive's own word on its health (pure): ``smartctl --json`` turned into :class:`DriveHealth`.

smartctl reads ATA (and SATA behind SAT bridges and MegaRAID controllers), NVMe and SCSI/SAS
drives, and prints one JSON document per drive (``smartctl -j -a /dev/X``, smartmontools 7.0
and later).  What a benchmark needs from it is what changes a figure or says the drive is
failing: the temperature and its limit, the time spent above the warning and critical
temperatures (NVMe: the drive throttles there), media/CRC errors, reallocated and pending
sectors, wear (percentage used, spare), and the bytes written (to see what the run wrote).

:func:`health_changes` compares two readings (before and after a run) counter by counter.
Real outputs are the tests' data (``tests/data/hardware/``, each with where it came from).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from storbench.jsontypes import JSONMapping, JSONObject

from ._util import items, obj, to_int
from ._util import json_error as _json_error

#: NVMe data units are 1000 units of 512 bytes (NVMe base specification, SMART / Health log)
NVME_DATA_UNIT_BYTES = 512_000

#: NVMe critical warning bits (SMART / Health log byte 0)
CRITICAL_WARNING_BITS = {
    0: "available spare below its threshold",
    1: "temperature above or below a threshold",
    2: "reliability degraded by media or internal errors",
    3: "media placed in read-only mode",
    4: "volatile memory backup device failed",
}


@dataclass(frozen=True)
class DriveHealth:
    """One drive's SMART / health reading.  ``None``: the drive (or its protocol) does not report it.

    ``temperature_limit_c``: the temperature the drive says it should not exceed (ATA SCT
    ``op_limit_max``, SCSI ``drive_trip``); NVMe drives report their warning threshold only in
    the identify data smartctl does not print as JSON, but count ``warning_temp_minutes``.
    ``media_errors``: NVMe media and data integrity errors, ATA 187 Reported_Uncorrect, SCSI
    uncorrected read+write errors.  ``bytes_written``: NVMe data units written x 512,000, ATA
    241 Total_LBAs_Written x the logical block size.
    """

    device: str
    protocol: str | None = None  # "ATA", "NVMe", "SCSI"
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None
    passed: bool | None = None
    temperature_c: int | None = None
    temperature_limit_c: int | None = None
    warning_temp_minutes: int | None = None
    critical_temp_minutes: int | None = None
    critical_warning: int | None = None
    media_errors: int | None = None
    error_log_entries: int | None = None
    crc_errors: int | None = None
    reallocated_sectors: int | None = None
    pending_sectors: int | None = None
    percentage_used: int | None = None
    available_spare_pct: int | None = None
    available_spare_threshold_pct: int | None = None
    bytes_written: int | None = None
    power_on_hours: int | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        """The NVMe critical warning bits set, in words."""
        if not self.critical_warning:
            return ()
        return tuple(text for bit, text in CRITICAL_WARNING_BITS.items() if self.critical_warning & (1 << bit))


#: the counters that only grow; their growth during a run is news (name, words)
ERROR_COUNTERS = (
    ("media_errors", "media errors"),
    ("crc_errors", "interface CRC errors"),
    ("reallocated_sectors", "reallocated sectors"),
    ("pending_sectors", "pending sectors"),
)
THERMAL_COUNTERS = (
    ("warning_temp_minutes", "minutes above the warning temperature"),
    ("critical_temp_minutes", "minutes above the critical temperature"),
)


class HealthParseError(ValueError):
    """smartctl's output holds no reading of a drive; the message says why (smartctl's own words)."""




def _ata_raw(attrs: Mapping[int, JSONMapping], attr_id: int, name: str | None = None) -> int | None:
    attr = attrs.get(attr_id)
    if attr is None or (name is not None and attr.get("name") != name):
        return None
    raw = attr.get("raw")
    return to_int(raw.get("value")) if isinstance(raw, Mapping) else None


def _smartctl_problem(doc: JSONMapping) -> str | None:
    meta = obj(doc, "smartctl")
    errors = [e for m in items(meta, "messages") if isinstance(m, Mapping) and m.get("severity") == "error" and isinstance(e := m.get("string"), str)]
    if errors:
        return "; ".join(errors)
    return None


def parse_smartctl_json(text: str) -> DriveHealth:
    """One :class:`DriveHealth` from ``smartctl -j -a DEV``'s output.  Raises
    :class:`HealthParseError` when the output is not smartctl's JSON or holds no reading
    (smartctl's error messages, such as "Unable to detect device type", say why)."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise HealthParseError(f"not smartctl JSON ({_json_error(exc)})") from None
    if not isinstance(doc, Mapping) or not isinstance(doc.get("device"), Mapping):
        problem = _smartctl_problem(doc) if isinstance(doc, Mapping) else None
        raise HealthParseError(problem or "smartctl's JSON names no device")
    dev = doc["device"]
    protocol = dev.get("protocol") if isinstance(dev.get("protocol"), str) else None
    if not any(k in doc for k in ("smart_status", "temperature", "nvme_smart_health_information_log", "ata_smart_attributes", "scsi_error_counter_log")):
        raise HealthParseError(_smartctl_problem(doc) or "smartctl read no health data")
    temp, status, power = obj(doc, "temperature"), obj(doc, "smart_status"), obj(doc, "power_on_time")
    fields: JSONObject = {
        "device": str(dev.get("name") or dev.get("info_name") or "?"),
        "protocol": protocol,
        "model": doc.get("model_name") or doc.get("scsi_model_name") or doc.get("product"),
        "serial": doc.get("serial_number"),
        "firmware": doc.get("firmware_version") or doc.get("revision"),
        "passed": status.get("passed") if isinstance(status.get("passed"), bool) else None,
        "temperature_c": to_int(temp.get("current")),
        "temperature_limit_c": to_int(temp.get("op_limit_max")) or to_int(temp.get("drive_trip")),
        "power_on_hours": to_int(power.get("hours")),
    }
    nvme = doc.get("nvme_smart_health_information_log")
    if isinstance(nvme, Mapping):
        units = to_int(nvme.get("data_units_written"))
        fields.update(
            warning_temp_minutes=to_int(nvme.get("warning_temp_time")),
            critical_temp_minutes=to_int(nvme.get("critical_comp_time")),
            critical_warning=to_int(nvme.get("critical_warning")),
            media_errors=to_int(nvme.get("media_errors")),
            error_log_entries=to_int(nvme.get("num_err_log_entries")),
            percentage_used=to_int(nvme.get("percentage_used")),
            available_spare_pct=to_int(nvme.get("available_spare")),
            available_spare_threshold_pct=to_int(nvme.get("available_spare_threshold")),
            bytes_written=units * NVME_DATA_UNIT_BYTES if units is not None else None,
        )
        if fields["temperature_c"] is None:
            fields["temperature_c"] = to_int(nvme.get("temperature"))
        if fields["power_on_hours"] is None:
            fields["power_on_hours"] = to_int(nvme.get("power_on_hours"))
    table = doc.get("ata_smart_attributes", {}).get("table") if isinstance(doc.get("ata_smart_attributes"), Mapping) else None
    if isinstance(table, list):
        attrs = {a["id"]: a for a in table if isinstance(a, Mapping) and isinstance(a.get("id"), int)}
        lbas = _ata_raw(attrs, 241, "Total_LBAs_Written")
        block = to_int(doc.get("logical_block_size")) or 512
        fields.update(
            reallocated_sectors=_ata_raw(attrs, 5),
            pending_sectors=_ata_raw(attrs, 197),
            crc_errors=_ata_raw(attrs, 199),
            media_errors=_ata_raw(attrs, 187),
            bytes_written=lbas * block if lbas is not None else None,
        )
    scsi = doc.get("scsi_error_counter_log")
    if isinstance(scsi, Mapping):
        parts = [to_int(scsi.get(d, {}).get("total_uncorrected_errors")) for d in ("read", "write") if isinstance(scsi.get(d), Mapping)]
        if parts and all(p is not None for p in parts):
            fields["media_errors"] = sum(p for p in parts if p is not None)
        fields["reallocated_sectors"] = to_int(doc.get("scsi_grown_defect_list"))
    fields = {k: (v if not isinstance(v, str) else v.strip()) for k, v in fields.items()}
    return DriveHealth(**fields)


@dataclass(frozen=True)
class HealthChange:
    """One counter of one drive that changed between two readings."""

    device: str
    counter: str  # a DriveHealth field name
    words: str
    before: int
    after: int

    @property
    def grew_by(self) -> int:
        return self.after - self.before


def health_changes(before: DriveHealth, after: DriveHealth) -> tuple[HealthChange, ...]:
    """The error and thermal counters that grew from ``before`` to ``after`` (the same drive)."""
    out: list[HealthChange] = []
    for name, words in ERROR_COUNTERS + THERMAL_COUNTERS:
        b, a = getattr(before, name), getattr(after, name)
        if b is not None and a is not None and a > b:
            out.append(HealthChange(after.device, name, words, b, a))
    return tuple(out)


def written_during(before: DriveHealth, after: DriveHealth) -> int | None:
    """The bytes the drive says were written between the readings (NVMe counts in 512,000-byte units)."""
    if before.bytes_written is None or after.bytes_written is None:
        return None
    return max(0, after.bytes_written - before.bytes_written)
