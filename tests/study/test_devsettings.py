"""Device settings: read, apply (verified), restore -- on a scratch sysfs tree and on a real loop device."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from storbench.study.devsettings import (
    DeviceSettings,
    DeviceSettingsError,
    SettingNotApplied,
    applied,
    apply_settings,
    parse_hdparm_w,
    parse_scheduler,
    read_settings,
    restore_settings,
    validate,
    write_attr,
)

from conftest import needs_root

# --------------------------------------------------------------------------- a scratch tree shaped like /sys


def make_sys(tmp_path: Path, kname: str = "loop0", *, wc="write back", sched="[none] mq-deadline kyber bfq", ra=128, vendor=None) -> Path:
    root = tmp_path / "sys"
    q = root / "block" / kname / "queue"
    q.mkdir(parents=True)
    (q / "write_cache").write_text(wc + "\n")
    (q / "scheduler").write_text(sched + "\n")
    (q / "read_ahead_kb").write_text(f"{ra}\n")
    if vendor is not None:
        (root / "block" / kname / "device").mkdir()
        (root / "block" / kname / "device" / "vendor").write_text(vendor + "\n")
    return root


class KernelLike:
    """A writer that behaves like sysfs: the scheduler list keeps its names and moves the
    brackets, unknown values are refused with EINVAL, read-ahead is kept in 4 KiB pages."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, str]] = []

    def __call__(self, path: str, value: str) -> None:
        self.writes.append((os.path.basename(path), value))
        name = os.path.basename(path)
        if name == "scheduler":
            _, names = parse_scheduler(Path(path).read_text())
            if value not in names:
                raise OSError(errno.EINVAL, "Invalid argument")
            Path(path).write_text(" ".join(f"[{n}]" if n == value else n for n in names) + "\n")
        elif name == "write_cache":
            if value not in ("write back", "write through"):
                raise OSError(errno.EINVAL, "Invalid argument")
            Path(path).write_text(value + "\n")
        elif name == "read_ahead_kb":
            Path(path).write_text(f"{int(value) // 4 * 4}\n")
        else:
            write_attr(path, value)


def test_parse_scheduler_and_hdparm():
    assert parse_scheduler("none [mq-deadline] kyber bfq\n") == ("mq-deadline", ("none", "mq-deadline", "kyber", "bfq"))
    assert parse_scheduler("[none] mq-deadline") == ("none", ("none", "mq-deadline"))
    assert parse_scheduler("none\n") == ("none", ("none",))  # no choice: no brackets
    assert parse_hdparm_w("\n/dev/sda:\n write-caching =  1 (on)\n") == "write back"
    assert parse_hdparm_w("\n/dev/sda:\n write-caching =  0 (off)\n") == "write through"
    with pytest.raises(ValueError):
        parse_hdparm_w("/dev/sda: not supported")


def test_read_settings(tmp_path):
    root = make_sys(tmp_path, sched="none [mq-deadline] kyber", ra=256)
    assert read_settings("loop0", sys_root=str(root)) == DeviceSettings("write back", "mq-deadline", 256)


def test_apply_returns_originals_and_restore_puts_them_back(tmp_path):
    root = make_sys(tmp_path)
    kernel = KernelLike()
    wanted = DeviceSettings(write_cache="write through", scheduler="kyber", read_ahead_kb=4096)
    original = apply_settings("loop0", wanted, sys_root=str(root), write=kernel)
    assert original == DeviceSettings("write back", "none", 128)
    assert read_settings("loop0", sys_root=str(root)) == wanted
    restore_settings("loop0", original, sys_root=str(root), write=kernel)
    assert read_settings("loop0", sys_root=str(root)) == DeviceSettings("write back", "none", 128)


def test_apply_touches_only_the_wanted_fields(tmp_path):
    root = make_sys(tmp_path)
    kernel = KernelLike()
    original = apply_settings("loop0", DeviceSettings(read_ahead_kb=0), sys_root=str(root), write=kernel)
    assert original == DeviceSettings(read_ahead_kb=128)
    assert kernel.writes == [("read_ahead_kb", "0")]
    restore_settings("loop0", original, sys_root=str(root), write=kernel)
    assert kernel.writes == [("read_ahead_kb", "0"), ("read_ahead_kb", "128")]
    # a value that is already so is not written
    kernel.writes.clear()
    apply_settings("loop0", DeviceSettings(write_cache="write back"), sys_root=str(root), write=kernel)
    assert kernel.writes == []


def test_applied_restores_after_the_body(tmp_path):
    root = make_sys(tmp_path)
    wanted = DeviceSettings("write through", "bfq", 512)
    with applied("loop0", wanted, sys_root=str(root), write=KernelLike()) as original:
        assert original == DeviceSettings("write back", "none", 128)
        assert read_settings("loop0", sys_root=str(root)) == wanted
    assert read_settings("loop0", sys_root=str(root)) == DeviceSettings("write back", "none", 128)


@pytest.mark.parametrize("exc_type", [RuntimeError, KeyboardInterrupt])
def test_applied_restores_on_exception(tmp_path, exc_type):
    root = make_sys(tmp_path)
    with pytest.raises(exc_type):
        with applied("loop0", DeviceSettings("write through", "kyber", 0), sys_root=str(root), write=KernelLike()):
            raise exc_type("boom")
    assert read_settings("loop0", sys_root=str(root)) == DeviceSettings("write back", "none", 128)


def test_applied_turns_sigterm_into_keyboard_interrupt_and_restores(tmp_path):
    root = make_sys(tmp_path)
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
        with applied("loop0", DeviceSettings(write_cache="write through"), sys_root=str(root), write=KernelLike()):
            os.kill(os.getpid(), signal.SIGTERM)
            signal.pause() if hasattr(signal, "pause") else None  # pragma: no cover - the handler raises first
    assert read_settings("loop0", sys_root=str(root)).write_cache == "write back"
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_signal_during_restore_waits_until_restore_is_done(tmp_path):
    root = make_sys(tmp_path)
    kernel = KernelLike()
    restoring = {"on": False}

    def writer(path: str, value: str) -> None:
        if restoring["on"]:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the middle of restoring
        kernel(path, value)

    with pytest.raises(KeyboardInterrupt):
        with applied("loop0", DeviceSettings("write through", "kyber", 0), sys_root=str(root), write=writer):
            restoring["on"] = True
    assert read_settings("loop0", sys_root=str(root)) == DeviceSettings("write back", "none", 128)


@pytest.mark.parametrize(
    "wanted, words",
    [
        (DeviceSettings(write_cache="writeback"), "write_cache 'writeback' is not one of"),
        (DeviceSettings(write_cache="on"), "write_cache 'on'"),
        (DeviceSettings(scheduler="cfq"), "scheduler 'cfq' is not available for this device (it lists none, mq-deadline, kyber, bfq)"),
        (DeviceSettings(scheduler="none mq-deadline"), "is not a scheduler name"),
        (DeviceSettings(read_ahead_kb=-1), "read_ahead_kb -1"),
        (DeviceSettings(read_ahead_kb="128"), "read_ahead_kb '128'"),  # type: ignore[arg-type]
        (DeviceSettings(read_ahead_kb=True), "read_ahead_kb True"),  # type: ignore[arg-type]
    ],
)
def test_bad_values_are_refused_before_anything_changes(tmp_path, wanted, words):
    root = make_sys(tmp_path)
    kernel = KernelLike()
    mixed = DeviceSettings(
        write_cache=wanted.write_cache or "write through",
        scheduler=wanted.scheduler or "kyber",
        read_ahead_kb=wanted.read_ahead_kb if wanted.read_ahead_kb is not None else 512,
    )
    with pytest.raises(DeviceSettingsError) as info:
        apply_settings("loop0", mixed, sys_root=str(root), write=kernel)
    assert words in str(info.value) and "\n" not in str(info.value)
    assert kernel.writes == []
    with pytest.raises(DeviceSettingsError):
        validate(wanted, ("none", "mq-deadline", "kyber", "bfq"))


def test_kernel_ignoring_a_write_is_an_error(tmp_path):
    """fio-plot's lesson: a write that silently does nothing must not count as applied."""
    root = make_sys(tmp_path)
    with pytest.raises(SettingNotApplied) as info:
        apply_settings("loop0", DeviceSettings(write_cache="write through"), sys_root=str(root), write=lambda p, v: None)
    msg = str(info.value)
    assert "write_cache is 'write back' after writing 'write through'" in msg and "did not take effect" in msg
    assert "\n" not in msg


def test_kernel_refusing_a_write_is_an_error(tmp_path):
    root = make_sys(tmp_path)

    def refuse(path: str, value: str) -> None:
        raise OSError(errno.EINVAL, "Invalid argument")

    with pytest.raises(SettingNotApplied, match="the kernel refused write_cache='write through' \\(Invalid argument\\)"):
        apply_settings("loop0", DeviceSettings(write_cache="write through"), sys_root=str(root), write=refuse)


def test_read_ahead_rounded_by_the_kernel_is_reported(tmp_path):
    root = make_sys(tmp_path)
    with pytest.raises(SettingNotApplied, match="whole pages"):
        apply_settings("loop0", DeviceSettings(read_ahead_kb=130), sys_root=str(root), write=KernelLike())
    assert read_settings("loop0", sys_root=str(root)).read_ahead_kb == 128  # put back


def test_a_failure_midway_puts_back_what_was_already_changed(tmp_path):
    root = make_sys(tmp_path)
    kernel = KernelLike()

    def ignore_read_ahead(path: str, value: str) -> None:
        if os.path.basename(path) != "read_ahead_kb":
            kernel(path, value)

    with pytest.raises(SettingNotApplied, match="read_ahead_kb"):
        with applied("loop0", DeviceSettings("write through", "kyber", 4096), sys_root=str(root), write=ignore_read_ahead):
            pytest.fail("the body must not run when a setting did not take")
    assert read_settings("loop0", sys_root=str(root)) == DeviceSettings("write back", "none", 128)


def test_a_failed_restore_is_raised_with_the_body_error_chained(tmp_path):
    root = make_sys(tmp_path)
    kernel = KernelLike()
    state = {"stuck": False}

    def writer(path: str, value: str) -> None:
        if not state["stuck"]:
            kernel(path, value)

    with pytest.raises(SettingNotApplied) as info:
        with applied("loop0", DeviceSettings(write_cache="write through"), sys_root=str(root), write=writer):
            state["stuck"] = True
            raise RuntimeError("fio failed")
    assert "could not restore write_cache (wanted 'write back'" in str(info.value)
    assert "set it back by hand" in str(info.value)
    assert isinstance(info.value.__context__, RuntimeError)


def test_partition_or_missing_device(tmp_path):
    root = make_sys(tmp_path)
    (root / "block" / "loop0p1").mkdir()
    with pytest.raises(DeviceSettingsError, match="not a partition"):
        read_settings("loop0p1", sys_root=str(root))
    with pytest.raises(DeviceSettingsError):
        read_settings("../etc", sys_root=str(root))


def test_ata_disk_uses_hdparm(tmp_path):
    root = make_sys(tmp_path, "sda", wc="write back", vendor="ATA")
    drive = {"cache": 1}
    calls: list[list[str]] = []

    def hdparm(argv):
        calls.append(list(argv))
        assert argv[0] == "hdparm" and argv[-1] == "/dev/sda"
        if argv[1] in ("-W0", "-W1"):
            drive["cache"] = int(argv[1][2])
            return f"\n/dev/sda:\n setting drive write-caching to {drive['cache']}\n"
        assert argv[1] == "-W"
        return f"\n/dev/sda:\n write-caching =  {drive['cache']} ({'on' if drive['cache'] else 'off'})\n"

    with applied("sda", DeviceSettings(write_cache="write through"), sys_root=str(root), runner=hdparm, write=KernelLike()) as original:
        assert original.write_cache == "write back"
        assert drive["cache"] == 0
    assert drive["cache"] == 1
    assert ["hdparm", "-W0", "/dev/sda"] in calls and ["hdparm", "-W1", "/dev/sda"] in calls
    # the sysfs file was not used for the drive's cache
    assert (root / "block" / "sda" / "queue" / "write_cache").read_text() == "write back\n"


def test_ata_drive_ignoring_hdparm_is_an_error(tmp_path):
    root = make_sys(tmp_path, "sda", vendor="ATA")

    def stubborn(argv):
        return "\n/dev/sda:\n write-caching =  1 (on)\n"

    with pytest.raises(SettingNotApplied, match="after hdparm -W0 /dev/sda"):
        apply_settings("sda", DeviceSettings(write_cache="write through"), sys_root=str(root), runner=stubborn)


# --------------------------------------------------------------------------- a real loop device


@pytest.fixture
def loop_kname(tmp_path):
    image = tmp_path / "ds.img"
    with open(image, "wb") as fh:
        fh.truncate(16 * 1024 * 1024)
    dev = subprocess.run(["losetup", "-f", "--show", str(image)], check=True, capture_output=True, text=True).stdout.strip()
    try:
        yield os.path.basename(dev)
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
        # detached when its last opener closes it (another worker's probe may hold it a moment): waited for, as storbench does
        deadline = time.monotonic() + 10
        while (left := subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True).stdout.strip()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == ""


@needs_root
def test_real_loop_device_settings_toggled_and_restored(loop_kname):
    original = read_settings(loop_kname)
    assert original.write_cache in ("write back", "write through")
    other_wc = "write through" if original.write_cache == "write back" else "write back"
    _, schedulers = parse_scheduler(Path(f"/sys/block/{loop_kname}/queue/scheduler").read_text())
    other_sched = next((s for s in schedulers if s != original.scheduler), original.scheduler)
    other_ra = 512 if original.read_ahead_kb != 512 else 256
    wanted = DeviceSettings(write_cache=other_wc, scheduler=other_sched, read_ahead_kb=other_ra)
    with applied(loop_kname, wanted) as saved:
        assert saved == original
        assert Path(f"/sys/block/{loop_kname}/queue/write_cache").read_text().strip() == other_wc
        assert read_settings(loop_kname) == wanted
    assert read_settings(loop_kname) == original


@needs_root
def test_real_kernel_rounding_is_caught_and_restored(loop_kname):
    original = read_settings(loop_kname)
    page_kb = os.sysconf("SC_PAGESIZE") // 1024
    with pytest.raises(SettingNotApplied, match="did not take effect"):
        apply_settings(loop_kname, DeviceSettings(read_ahead_kb=page_kb * 10 + 1))
    assert read_settings(loop_kname) == original


@needs_root
def test_real_unlisted_scheduler_refused(loop_kname):
    original = read_settings(loop_kname)
    with pytest.raises(DeviceSettingsError, match="not available"):
        apply_settings(loop_kname, DeviceSettings(scheduler="cfq"))
    assert read_settings(loop_kname) == original
