"""The hardware's own word: SMART / NVMe health and RAID controllers, on real published outputs.

Every output is in tests/data/hardware with where it came from (README.md there).  The edge is
tested with the real smartctl where it can run here (it cannot read this VM's disks: its own
error is what storbench must turn into a note), and end to end with MegaCli64 / ssacli stand-ins
on PATH that print the recorded outputs, so that `storbench doctor` and `storbench run` are
exercised as a user on such a host would.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from storbench.backend import BackendActivity, backend_from_dict, backend_to_dict
from storbench.backend.hardware import HardwareActivity
from storbench.backend.hardware_sampler import HardwareSampler
from storbench.checks import PreflightContext, preflight
from storbench.storage import StorageInfo, storage_from_dict, storage_to_dict
from storbench.storage.block import DeviceInfo
from storbench.storage.format import format_storage
from storbench.storage.health import HealthParseError, health_changes, parse_smartctl_json
from storbench.storage.probe.hardware import describe_hardware, read_drive, smart_devices
from storbench.storage.raid import (
    RaidParseError,
    array_problems,
    battery_problems,
    cache_fallbacks,
    megacli_raid_level,
    parse_megacli_bbu,
    parse_megacli_ldinfo,
    parse_ssacli,
    parse_storcli_vall,
    raid_level_words,
    storcli_cache_code,
)

DATA = Path(__file__).parent.parent / "data" / "hardware"


def text(name: str) -> str:
    return (DATA / name).read_text()


def test_every_file_is_kept_as_found() -> None:
    """The README's checksums are those of the files: nothing was edited after it was recorded."""
    readme = text("README.md")
    listed = dict(line.split(" ")[::-1] for line in readme.split("```\n")[1].splitlines() if line.strip())
    files = sorted(p.name for p in DATA.iterdir() if p.name != "README.md")
    assert sorted(listed) == files
    for name in files:
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == listed[name], name
        assert f"`{name}`" in readme  # each has its provenance row


# --------------------------------------------------------------------------- smartctl -j


SMART_GOLDEN = {
    # file: (protocol, model, passed, temperature, limit, media, crc, reallocated, pending, used %, bytes written, hours)
    "scrutiny-smart-nvme.json": ("NVMe", "INTEL SSDPEKNW010T8", True, 36, None, 0, None, None, None, 0, 7773431 * 512_000, 2401),
    "scrutiny-smart-nvme-failed.json": ("NVMe", "Samsung SSD 970 EVO 500GB", True, 35, None, 7, None, None, None, 3, 65602088 * 512_000, 12798),
    "telegraf-smartctl-nvme.json": ("NVMe", "Sabrent Rocket 4.0 1TB", True, 48, None, 0, None, None, None, 4, 76471882 * 512_000, 8733),
    "scrutiny-smart-ata.json": ("ATA", "WDC WD140EDFZ-11A0VA0", True, 32, None, None, 0, 0, 0, None, None, 1730),
    "scrutiny-smart-ata-full.json": ("ATA", "Samsung SSD 860 EVO 500GB", True, 36, 70, 0, 0, 0, None, None, 64777770148 * 512, 14551),
    "scrutiny-smart-fail2.json": ("ATA", "Hitachi HDS721050DLE630", False, 25, None, None, 0, 1975, 8, None, None, 65592),
    "scrutiny-smart-megaraid0.json": ("ATA", "WD4000FYYX", True, 36, None, None, 0, 0, 0, None, 2754608750246 * 512, 37787),
    "scrutiny-smart-scsi.json": ("SCSI", "SEAGATE ST4000NM0043", True, 34, 68, 0, None, 56, None, None, None, 43549),
}


@pytest.mark.parametrize("name", sorted(SMART_GOLDEN))
def test_smartctl_json_golden(name: str) -> None:
    d = parse_smartctl_json(text(name))
    got = (d.protocol, d.model, d.passed, d.temperature_c, d.temperature_limit_c, d.media_errors, d.crc_errors,
           d.reallocated_sectors, d.pending_sectors, d.percentage_used, d.bytes_written, d.power_on_hours)  # fmt: skip
    assert got == SMART_GOLDEN[name]


def test_nvme_counters_and_warnings() -> None:
    d = parse_smartctl_json(text("scrutiny-smart-nvme-failed.json"))
    assert (d.warning_temp_minutes, d.critical_temp_minutes, d.error_log_entries) == (0, 0, 62)
    assert (d.available_spare_pct, d.available_spare_threshold_pct) == (99, 10)
    assert d.warnings == ()
    assert dataclasses.replace(d, critical_warning=0b1010).warnings == (
        "temperature above or below a threshold", "media placed in read-only mode")


@pytest.mark.parametrize(
    ("output", "words"),
    [
        ("", "not smartctl JSON"),
        ("smartctl 7.3 2022-02-28 r5338\n", "not smartctl JSON"),
        ('{"json_format_version": [1, 0], "smartctl": {"messages": [{"string": "/dev/sdz: No such device", "severity": "error"}], "exit_status": 2}}', "/dev/sdz: No such device"),
        ('{"device": {"name": "/dev/sda"}, "smartctl": {"messages": [{"string": "Read Device Identity failed", "severity": "error"}]}}', "Read Device Identity failed"),
        ("[1, 2]", "names no device"),
    ],
)
def test_smartctl_output_without_a_reading_says_why(output: str, words: str) -> None:
    with pytest.raises(HealthParseError, match=words):
        parse_smartctl_json(output)


def test_health_changes_name_what_grew() -> None:
    before = parse_smartctl_json(text("scrutiny-smart-nvme.json"))
    after = dataclasses.replace(before, media_errors=2, warning_temp_minutes=5, bytes_written=before.bytes_written + 512_000)
    changes = health_changes(before, after)
    assert [(c.counter, c.before, c.after, c.grew_by) for c in changes] == [("media_errors", 0, 2, 2), ("warning_temp_minutes", 0, 5, 5)]
    assert health_changes(before, before) == ()
    assert HardwareActivity((before,), (after,)).written_bytes() == {before.device: 512_000}


# --------------------------------------------------------------------------- RAID controllers


def test_storcli_vall_golden() -> None:
    (ctl,) = parse_storcli_vall(text("cloudpods-storcli-c0-vall-show-all-J.json"))
    assert ctl.tool == "storcli" and ctl.name == "controller 0"
    got = [(d.name, d.raid_level, d.os_device, d.write_policy_configured, d.write_policy_current, d.read_policy) for d in ctl.logical_drives]
    assert got[:3] == [
        ("c0/v0", "RAID 1", "/dev/sda", "WriteBack", "WriteBack", "ReadAhead"),
        ("c0/v1", "RAID 1", "/dev/sdb", "WriteBack", "WriteBack", "ReadAhead"),
        ("c0/v2", "RAID 0", "/dev/sdc", "WriteThrough", "WriteThrough", "NoReadAhead"),
    ]
    assert len(got) == 7
    assert cache_fallbacks((ctl,)) == ()  # every VD runs as configured: nothing to say


@pytest.mark.parametrize(
    ("code", "policy"),
    [("RWBD", ("ReadAhead", "WriteBack")), ("NRWTD", ("NoReadAhead", "WriteThrough")), ("RAWBC", ("ReadAhead", "AlwaysWriteBack")),
     ("NRWBD", ("NoReadAhead", "WriteBack")), ("?", (None, None))],
)
def test_storcli_cache_codes(code: str, policy: tuple) -> None:
    assert storcli_cache_code(code) == policy


def test_storcli_vd_that_fell_back_is_found() -> None:
    """The same document with VD 0 as a controller with a flat battery shows it (Cache RWBD -> NRWTD)."""
    doc = json.loads(text("cloudpods-storcli-c0-vall-show-all-J.json"))
    doc["Controllers"][0]["Response Data"]["/c0/v0"][0]["Cache"] = "NRWTD"
    (fallback,) = cache_fallbacks(parse_storcli_vall(json.dumps(doc)))
    assert (fallback.drive, fallback.os_device, fallback.configured, fallback.current) == ("c0/v0", "/dev/sda", "WriteBack", "WriteThrough")


def test_megacli_ldinfo() -> None:
    (ok,) = parse_megacli_ldinfo(text("percona-MegaCli64_LdPdInfo_aALL_886223.txt"))
    (vd,) = ok.logical_drives
    assert (ok.name, vd.name, vd.state, vd.write_policy_configured, vd.write_policy_current, vd.disk_cache) == (
        "adapter 0", "a0/v0", "Optimal", "WriteBack", "WriteBack", "Disk's Default")
    assert cache_fallbacks((ok,)) == ()
    (bad,) = parse_megacli_ldinfo(text("blog-proxmox-MegaCli64_LDInfo_Lall_aAll.txt"))
    (fallback,) = cache_fallbacks((bad,))
    assert (fallback.controller, fallback.drive, fallback.configured, fallback.current) == ("adapter 0", "a0/v24", "WriteBack", "WriteThrough")


def test_megacli_bbu() -> None:
    assert parse_megacli_bbu(text("percona-MegaCli64_AdpBbuCmd_GetBbuStatus.txt")) == {"0": "Optimal"}
    failed = text("percona-MegaCli64_AdpBbuCmd_GetBbuStatus.txt").replace("isSOHGood: Yes", "isSOHGood: No")
    assert parse_megacli_bbu(failed) == {"0": "Failed (state of health not good)"}
    charging = text("percona-MegaCli64_AdpBbuCmd_GetBbuStatus.txt").replace("Charger Status: Complete", "Charger Status: In Progress").replace("isSOHGood: Yes\n", "")
    assert parse_megacli_bbu(charging) == {"0": "Charging (In Progress)"}


def test_ssacli() -> None:
    ctls = parse_ssacli(text("percona-hpaculi-002.txt"))
    assert [(c.name, c.status, c.cache_status, c.battery, c.drive_write_cache) for c in ctls] == [
        ("Smart Array P410i in Slot 0 (Embedded)", "OK", "OK", "OK", "Disabled"),
        ("Smart Array P800 in Slot 1", "OK", "OK", "OK", "Disabled"),
    ]
    (ld,) = ctls[0].logical_drives
    assert (ld.name, ld.raid_level, ld.state, ld.size, ld.os_device, ld.caching) == ("logicaldrive 1", "RAID 10", "OK", "410.1 GB", "/dev/cciss/c0d0", "Enabled")
    assert cache_fallbacks(ctls) == () and battery_problems(ctls) == ()
    assert [c.name for c in parse_ssacli(text("percona-hpaculi-003.txt"))] == ["Smart Array P410i in Slot 0 (Embedded)", "Smart Array P800 in Slot 1"]
    failed = parse_ssacli(text("wiki-hpacucli-ctrl-all-show-status-P400.txt"))
    assert battery_problems(failed) == (("Smart Array P400 in Slot 1", "Failed (Replace Batteries/Capacitors)"),)
    assert [f.current for f in cache_fallbacks(failed)] == ["cache Temporarily Disabled"]


@pytest.mark.parametrize(
    ("raw", "span_depth", "words"),
    [
        ("Primary-0, Secondary-0, RAID Level Qualifier-0", 1, "RAID 0"),
        ("Primary-1, Secondary-0, RAID Level Qualifier-0", 1, "RAID 1"),
        ("Primary-1, Secondary-0, RAID Level Qualifier-0", 2, "RAID 10"),  # spans striped (newer firmware)
        ("Primary-1, Secondary-3, RAID Level Qualifier-0", 2, "RAID 10"),  # older firmware says it in Secondary
        ("Primary-5, Secondary-0, RAID Level Qualifier-3", 1, "RAID 5"),
        ("Primary-5, Secondary-0, RAID Level Qualifier-3", 3, "RAID 50"),
        ("Primary-6, Secondary-0, RAID Level Qualifier-3", 1, "RAID 6"),
        ("Primary-6, Secondary-3, RAID Level Qualifier-3", 2, "RAID 60"),
        ("Primary-0, Secondary-0, RAID Level Qualifier-0", 4, "RAID 00"),
        ("Primary-17, Secondary-0, RAID Level Qualifier-0", 1, "RAID 1E"),
        ("something else", 1, "something else"),
    ],
)
def test_megacli_raid_levels_in_words(raw: str, span_depth: int, words: str) -> None:
    assert megacli_raid_level(raw, span_depth) == words


def test_raid_levels_in_one_vocabulary_whichever_tool() -> None:
    assert [raid_level_words(t) for t in ("RAID1", "RAID10", "RAID 1+0", "1+0", "RAID 6 (ADG)", "5", "JBOD", " ")] == [
        "RAID 1", "RAID 10", "RAID 10", "RAID 10", "RAID 6", "RAID 5", "JBOD", None]  # fmt: skip


def test_megacli_levels_and_states_of_published_outputs() -> None:
    """Published outputs: the levels in words, the degraded arrays and the failing member found."""
    levels = {name: [(d.raid_level, d.state) for c in parse_megacli_ldinfo(text(name)) for d in c.logical_drives] for name in (
        "percona-MegaCli64_LdPdInfo_aALL_886223.txt", "blog-proxmox-MegaCli64_LDInfo_Lall_aAll.txt",
        "blog-elatov-MegaCli-LDInfo-L0-a0-raid1-degraded.txt", "blog-megacli-LDInfo-Lall-Aall-raid1-degraded.txt",
        "go-snapshot-MegaCli-LDInfo-Lall-aALL-raid5-degraded.txt")}  # fmt: skip
    assert levels == {
        "percona-MegaCli64_LdPdInfo_aALL_886223.txt": [("RAID 10", "Optimal")],
        "blog-proxmox-MegaCli64_LDInfo_Lall_aAll.txt": [("RAID 0", "Optimal")],
        "blog-elatov-MegaCli-LDInfo-L0-a0-raid1-degraded.txt": [("RAID 1", "Degraded")],
        "blog-megacli-LDInfo-Lall-Aall-raid1-degraded.txt": [("RAID 1", "Degraded")],
        "go-snapshot-MegaCli-LDInfo-Lall-aALL-raid5-degraded.txt": [("RAID 5", "Degraded")],
    }
    for name in ("percona-MegaCli64_LdPdInfo_aALL_886223.txt", "blog-proxmox-MegaCli64_LDInfo_Lall_aAll.txt"):
        assert array_problems(parse_megacli_ldinfo(text(name))) == ()
    (raid5,) = array_problems(parse_megacli_ldinfo(text("go-snapshot-MegaCli-LDInfo-Lall-aALL-raid5-degraded.txt")))
    assert (raid5.controller, raid5.tool, raid5.drive, raid5.what, raid5.logical) == ("adapter 0", "megacli", "a0/v0", "Degraded", True)
    # -LdPdInfo lists the members: an Optimal RAID 1 whose first drive predicts its failure
    (ctl,) = parse_megacli_ldinfo(text("blog-megacli-LdPdInfo-Aall-raid1-predictive-failure.txt"))
    assert [(p.name, p.state, p.model, p.media_errors, p.predictive_failures, p.smart_alert) for p in ctl.physical_drives] == [
        ("[1:0]", "Online, Spun Up", "SEAGATE ST3300657SS", 72605, 107, True),
        ("[1:1]", "Online, Spun Up", "SEAGATE ST3300657SS", 0, 0, False),
    ]
    (member,) = array_problems((ctl,))
    assert (member.drive, member.what, member.logical) == ("[1:0]", "predictive failure count 107, SMART alert flagged, 72605 media errors", False)
    (percona,) = parse_megacli_ldinfo(text("percona-MegaCli64_LdPdInfo_aALL_886223.txt"))
    assert len(percona.physical_drives) == 4 and {p.state for p in percona.physical_drives} == {"Online, Spun Up"}


def test_member_drives_of_storcli_and_ssacli() -> None:
    (ctl,) = parse_storcli_vall(text("cloudpods-storcli-c0-vall-show-all-J.json"))
    assert ctl.physical_drives[0] == dataclasses.replace(ctl.physical_drives[0], name="[8:0]", state="Onln", model="SAMSUNG MZ7LH480HAHQ-00005")
    assert array_problems((ctl,)) == ()
    doc = json.loads(text("cloudpods-storcli-c0-vall-show-all-J.json"))
    data = doc["Controllers"][0]["Response Data"]
    data["/c0/v0"][0]["State"], data["PDs for VD 0"][0]["State"] = "Dgrd", "Rbld"  # storcli's words for a rebuilding RAID 1
    found = array_problems(parse_storcli_vall(json.dumps(doc)))
    assert [(p.drive, p.what, p.logical) for p in found] == [("c0/v0", "Dgrd", True), ("[8:0]", "Rbld", False)]
    p410i, _p800 = parse_ssacli(text("percona-hpaculi-002.txt"))
    assert len(p410i.physical_drives) == 6 and {p.state for p in p410i.physical_drives} == {"OK"}
    assert p410i.physical_drives[0].model == "HP EH0146FAWJB"
    # the same drive as ssacli shows a failing one: in the array's list and in its own block
    failing = text("percona-hpaculi-002.txt").replace("physicaldrive 1I:1:2 (port 1I:box 1:bay 2, SAS, 146 GB, OK)",
                                                       "physicaldrive 1I:1:2 (port 1I:box 1:bay 2, SAS, 146 GB, Predictive Failure)", 1)  # fmt: skip
    failing = failing.replace("Bay: 2\n         Status: OK", "Bay: 2\n         Status: Predictive Failure", 1)
    assert [(p.drive, p.what) for p in array_problems(parse_ssacli(failing))] == [("physicaldrive 1I:1:2", "Predictive Failure")]


@pytest.mark.parametrize(
    ("parse", "output", "words"),
    [
        (parse_storcli_vall, "CLI Version = 007.3503\n", "not JSON"),
        (parse_storcli_vall, "{}", "no 'Controllers' list"),
        (parse_storcli_vall, '{"Controllers": [{"Command Status": {"Controller": 0, "Status": "Failure", "Description": "Controller 0 not found"}}]}', "Controller 0 not found"),
        (parse_megacli_ldinfo, "Exit Code: 0x00\n", "no 'Virtual Drive:'"),
        (parse_megacli_bbu, "Adapter 0: Get BBU Status Failed.\n", "no 'BBU status for Adapter:'"),
        (parse_ssacli, "Error: No controllers detected.\n", "no 'Smart Array"),
    ],
)
def test_unreadable_controller_output_says_what(parse, output: str, words: str) -> None:
    with pytest.raises(RaidParseError, match=words):
        parse(output)


# --------------------------------------------------------------------------- the edge


class Replay:
    """A CommandRunner answering the hardware tools with the recorded outputs."""

    def __init__(self, answers: dict[tuple[str, ...], tuple[int, str, str]]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    def run(self, argv: list[str]) -> tuple[int, str, str]:
        assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
        self.calls.append(argv)
        return self.answers.get(tuple(argv), (127, "", "not found"))


NVME = DeviceInfo(name="nvme0n1", kname="nvme0n1", type="disk", path="/dev/nvme0n1", transport="nvme")
LOOP = DeviceInfo(name="loop0", kname="loop0", type="loop", path="/dev/loop0", parents=("vda",))
VDA = DeviceInfo(name="vda", kname="vda", type="disk", path="/dev/vda", transport="virtio")


def test_only_physical_drives_are_asked() -> None:
    part = DeviceInfo(name="nvme0n1p1", kname="nvme0n1p1", type="part", parents=("nvme0n1",))
    assert smart_devices((part, NVME, LOOP, VDA, DeviceInfo(name="zram0", kname="zram0", type="disk"))) == ["/dev/nvme0n1"]


def test_describe_hardware_from_the_tools_outputs() -> None:
    runner = Replay({
        ("smartctl", "-j", "-a", "/dev/nvme0n1"): (0, text("telegraf-smartctl-nvme.json"), ""),
        ("MegaCli64", "-LDInfo", "-Lall", "-aALL", "-NoLog"): (0, text("blog-proxmox-MegaCli64_LDInfo_Lall_aAll.txt"), ""),
        ("MegaCli64", "-AdpBbuCmd", "-GetBbuStatus", "-aALL", "-NoLog"): (0, text("percona-MegaCli64_AdpBbuCmd_GetBbuStatus.txt"), ""),
    })
    notes: list[str] = []
    drives, controllers = describe_hardware(runner, (NVME,), notes, which=lambda name: name in ("smartctl", "MegaCli64"))
    assert [(d.device, d.model, d.temperature_c) for d in drives] == [("/dev/nvme0n1", "Sabrent Rocket 4.0 1TB", 48)]
    assert [(c.name, c.battery, c.logical_drives[0].write_policy_current) for c in controllers] == [("adapter 0", "Optimal", "WriteThrough")]
    assert notes == []
    assert all(call[0] in ("smartctl", "MegaCli64") for call in runner.calls)


def test_a_tool_that_fails_is_a_note_not_an_error() -> None:
    runner = Replay({
        ("smartctl", "-j", "-a", "/dev/nvme0n1"): (2, "", "Smartctl open device: /dev/nvme0n1 failed: Permission denied"),
        ("ssacli", "ctrl", "all", "show", "config", "detail"): (1, "", "Error: No controllers detected."),
    })
    notes: list[str] = []
    drives, controllers = describe_hardware(runner, (NVME,), notes, which=lambda name: name in ("smartctl", "ssacli"))
    assert (drives, controllers) == ((), ())
    assert notes == [
        "smartctl could not read /dev/nvme0n1: Smartctl open device: /dev/nvme0n1 failed: Permission denied",
        "Smart Array controller not read: ssacli exited 1 (Error: No controllers detected.)",
    ]


@pytest.mark.skipif(shutil.which("smartctl") is None, reason="smartmontools is installed by tests/setup-system.sh")
def test_real_smartctl_on_what_it_cannot_read() -> None:
    """The real smartctl on a device with no SMART: its own words become the reason, nothing raises."""
    from storbench.storage.probe.base import SubprocessRunner

    got = read_drive(SubprocessRunner(), "/dev/null")
    assert got == "smartctl could not read /dev/null: /dev/null: Unable to detect device type"


def test_sampler_reads_before_and_after() -> None:
    before, after = text("scrutiny-smart-nvme.json"), json.loads(text("scrutiny-smart-nvme.json"))
    after["nvme_smart_health_information_log"]["warning_temp_time"] = 4
    outputs = iter([before, json.dumps(after)])

    class Twice:
        def run(self, argv):
            return (0, next(outputs), "")

    clock = iter([100.0, 100.0, 101.0, 101.0, 102.0])
    with HardwareSampler(["/dev/nvme0"], runner=Twice(), clock=lambda: next(clock)) as sampler:
        pass
    hw = sampler.activity().hardware
    assert [(c.device, c.counter, c.before, c.after) for c in hw.changes()] == [("/dev/nvme0", "warning_temp_minutes", 0, 4)]
    # the next workload right after: its "before" is that "after" (one smartctl call, not two)
    outputs = iter([json.dumps(after)])
    with HardwareSampler(["/dev/nvme0"], runner=Twice(), clock=lambda: 103.0) as second:
        pass
    assert second.activity().hardware.before == hw.after and second.activity().hardware.changes() == ()
    # stored and read back whole
    activity = BackendActivity(hardware=hw)
    assert backend_from_dict(json.loads(json.dumps(backend_to_dict(activity)))) == activity


def test_storage_description_with_hardware_round_trips_and_reads() -> None:
    drives = (parse_smartctl_json(text("scrutiny-smart-fail2.json")),)
    controllers = parse_megacli_ldinfo(text("blog-proxmox-MegaCli64_LDInfo_Lall_aAll.txt")) + parse_ssacli(text("wiki-hpacucli-ctrl-all-show-status-P400.txt"))
    info = StorageInfo(target="/srv", target_kind="dir", filesystem=None, devices=(), drives=drives, controllers=controllers)
    assert storage_from_dict(json.loads(json.dumps(storage_to_dict(info)))) == info
    lines = format_storage(info)
    assert "drive /dev/sdc (ATA, Hitachi HDS721050DLE630, fw MS1OA650): SMART FAILED, 25 °C, CRC errors 0, reallocated 1975, pending 8, 65592 h powered on" in lines
    assert "  a0/v24: RAID 0, 1.817 TB, Optimal, write WriteThrough (configured WriteBack), ReadAhead, disk cache Disk's Default" in lines
    assert "RAID controller Smart Array P400 in Slot 1 (ssacli): status OK, cache Temporarily Disabled, battery Failed (Replace Batteries/Capacitors)" in lines
    # before the run the target's findings are said once, not once per workload
    found = preflight(PreflightContext(options_by_workload={"a": {"rw": "write"}, "b": {"rw": "randwrite"}}, storage=info))
    assert [(f.check, f.workload) for f in found] == [("drive-failing", None), ("raid-cache-fallback", None), ("raid-battery", None)]


# --------------------------------------------------------------------------- end to end


def _stand_ins(tmp_path: Path) -> dict[str, str]:
    """MegaCli64 and ssacli on PATH that print the recorded outputs (this machine has no controller)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scripts = {
        "MegaCli64": f"""case "$1" in -LDInfo) cat {DATA / "blog-proxmox-MegaCli64_LDInfo_Lall_aAll.txt"};; -AdpBbuCmd) cat {DATA / "percona-MegaCli64_AdpBbuCmd_GetBbuStatus.txt"};; *) exit 1;; esac""",
        "ssacli": f"cat {DATA / 'wiki-hpacucli-ctrl-all-show-status-P400.txt'}",
    }
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", STORBENCH_DB=str(tmp_path / "results.sqlite"))
    env.pop("STORBENCH_DEBUG", None)
    return env


def test_doctor_judges_a_degraded_array_from_a_megacli_stand_in(tmp_path: Path) -> None:
    """A MegaCli64 that prints a published Degraded RAID 5: doctor says RAID 5 (not MegaCli's
    Primary/Secondary/Qualifier), finds the degraded array and names MegaCli's commands."""
    env = _stand_ins(tmp_path)
    (tmp_path / "bin" / "ssacli").unlink()
    degraded = DATA / "go-snapshot-MegaCli-LDInfo-Lall-aALL-raid5-degraded.txt"
    (tmp_path / "bin" / "MegaCli64").write_text(
        f"""#!/bin/sh\ncase "$1" in -LDInfo) cat {degraded};; -AdpBbuCmd) cat {DATA / "percona-MegaCli64_AdpBbuCmd_GetBbuStatus.txt"};; *) exit 1;; esac\n""")
    target = tmp_path / "t"
    target.mkdir()
    proc = subprocess.run([sys.executable, "-m", "storbench", "doctor", "--target", str(target)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "  a0/v0: RAID 5, 50.937 TB, Degraded, write WriteBack, ReadAhead, disk cache Enabled" in out
    assert "Primary-5" not in out and "no pitfalls found" not in out
    assert out.count("[raid-degraded]") == 1
    assert "a0/v0 on adapter 0 is Degraded: the figures describe a degraded array" in out
    assert "MegaCli64 -LdPdInfo -aALL" in out and "storcli" not in out


def test_doctor_shows_controllers_and_their_findings_once(tmp_path: Path) -> None:
    env = _stand_ins(tmp_path)
    target = tmp_path / "t"
    target.mkdir()
    proc = subprocess.run([sys.executable, "-m", "storbench", "doctor", "--target", str(target)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "RAID controller adapter 0 (megacli): battery Optimal" in out
    assert "  a0/v24: RAID 0, 1.817 TB, Optimal, write WriteThrough (configured WriteBack)" in out
    assert "RAID controller Smart Array P400 in Slot 1 (ssacli): status OK, cache Temporarily Disabled, battery Failed (Replace Batteries/Capacitors)" in out
    assert out.count("[raid-cache-fallback]") == 1 and out.count("[raid-battery]") == 1
    assert "a0/v24 on adapter 0 runs WriteThrough where WriteBack was configured" in out


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is installed by make install")
def test_run_records_the_controllers_and_judges_write_workloads(tmp_path: Path) -> None:
    env = _stand_ins(tmp_path)
    target = tmp_path / "t"
    target.mkdir()
    base = [sys.executable, "-m", "storbench"]
    run = subprocess.run([*base, "run", "--target", str(target), "--size", "8m", "--runtime", "1", "--workload", "seq1m-q8t1-read",
                          "--workload", "rnd4k-q1t1-write", "--json"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr
    results = {r["workload"]: r for r in json.loads(run.stdout)}
    checks = {w: {f["check"] for f in r["findings"]} for w, r in results.items()}
    assert "raid-cache-fallback" in checks["rnd4k-q1t1-write"] and "raid-cache-fallback" not in checks["seq1m-q8t1-read"]
    assert "raid-battery" in checks["seq1m-q8t1-read"]
    shown = subprocess.run([*base, "show", str(results["seq1m-q8t1-read"]["run"])], env=env, capture_output=True, text=True, timeout=60)
    assert "RAID controller Smart Array P400 in Slot 1 (ssacli): status OK, cache Temporarily Disabled" in shown.stdout  # stored with the result
