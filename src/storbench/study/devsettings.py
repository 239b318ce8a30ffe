"""Device settings as a study dimension: read, set, verify, and always put back.

Three settings of a whole block device (``X`` is its kernel name, ``loop1``, ``sda``):

``write_cache``
    ``"write back"`` (a volatile cache: the kernel sends flushes) or ``"write
    through"``.  For ATA/SATA disks (sysfs ``device/vendor`` is ``ATA``) storbench
    switches the drive's own cache with ``hdparm -W1``/``-W0 /dev/X`` and reads it
    with ``hdparm -W /dev/X``.  For every other device it writes
    ``/sys/block/X/queue/write_cache``.  Beware: on a real device with a volatile
    cache, writing ``write through`` there does not turn the cache off, it only tells
    the kernel not to send flushes (data written is then not durable on power loss);
    on loop devices and virtual disks it is the setting itself.
``scheduler``
    ``/sys/block/X/queue/scheduler``; the current one is the bracketed word
    (``none [mq-deadline] kyber``); a wanted one must be in that list.
``read_ahead_kb``
    ``/sys/block/X/queue/read_ahead_kb``, a whole number >= 0.  The kernel keeps it
    in pages, so a value that is not a multiple of the page size comes back rounded:
    that is reported as not applied.

Every write is read back: a setting the kernel refused or silently ignored raises
:class:`SettingNotApplied` (one line) instead of being recorded as applied.  (The
lesson of fio-plot, whose cache drop never happened and nobody noticed.)

All sysfs access goes through ``sys_root`` (``/sys`` by default) so tests use a
scratch directory shaped like it; the file writer and the command runner are
injectable too (``write=``, ``runner=``).  Use :func:`applied` around a measurement:
it restores the original values in ``finally`` -- also on Ctrl-C and on SIGTERM,
which it turns into KeyboardInterrupt while it is active -- and holds off both
signals while restoring.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ..errors import StorbenchError, UsageError
from ..process import proc, signals

WRITE_CACHE_VALUES: tuple[str, ...] = ("write back", "write through")
FIELDS: tuple[str, ...] = ("write_cache", "scheduler", "read_ahead_kb")


class DeviceSettingsError(UsageError):
    """A wanted setting that cannot be asked for (bad value, unknown device)."""


class SettingNotApplied(StorbenchError):
    """The kernel (or the drive) refused or ignored a setting, or a restore failed."""


@dataclass(frozen=True)
class DeviceSettings:
    """Settings of one device; ``None`` = not read / leave as it is."""

    write_cache: str | None = None  # "write back" or "write through"
    scheduler: str | None = None  # e.g. "none", "mq-deadline"
    read_ahead_kb: int | None = None

    def changed(self) -> tuple[str, ...]:
        """Names of the fields that are set (not None), in :data:`FIELDS` order."""
        return tuple(f for f in FIELDS if getattr(self, f) is not None)


# --------------------------------------------------------------------------- pure parsing


def parse_scheduler(text: str) -> tuple[str | None, tuple[str, ...]]:
    """``none [mq-deadline] kyber`` -> (``"mq-deadline"``, all listed names): the storage
    description's own reader (:func:`storbench.storage.block.scheduler_choices`)."""
    from ..storage.block import scheduler_choices

    return scheduler_choices(text)


def parse_write_cache(text: str) -> str:
    value = " ".join(text.split())
    if value not in WRITE_CACHE_VALUES:
        raise ValueError(f"unexpected write_cache value {text.strip()!r}")
    return value


def parse_hdparm_w(text: str) -> str:
    """``hdparm -W /dev/sda`` output (`` write-caching =  1 (on)``) -> ``"write back"``/``"write through"``."""
    m = re.search(r"write-caching\s*=\s*([01])", text)
    if not m:
        raise ValueError(f"no 'write-caching = 0|1' in hdparm output: {text.strip()[:120]!r}")
    return "write back" if m.group(1) == "1" else "write through"


def validate(wanted: DeviceSettings, schedulers: Sequence[str] | None = None) -> None:
    """Raise :class:`DeviceSettingsError` for a value that cannot be asked for.  Pure.

    ``schedulers``: the names the device lists (the scheduler is checked only when given).
    """
    if wanted.write_cache is not None and wanted.write_cache not in WRITE_CACHE_VALUES:
        raise DeviceSettingsError(
            f"write_cache {wanted.write_cache!r} is not one of {', '.join(repr(v) for v in WRITE_CACHE_VALUES)}"
        )
    if wanted.read_ahead_kb is not None:
        if isinstance(wanted.read_ahead_kb, bool) or not isinstance(wanted.read_ahead_kb, int) or wanted.read_ahead_kb < 0:
            raise DeviceSettingsError(f"read_ahead_kb {wanted.read_ahead_kb!r} is not a whole number >= 0")
    if wanted.scheduler is not None:
        if not isinstance(wanted.scheduler, str) or not re.fullmatch(r"[A-Za-z0-9_-]+", wanted.scheduler):
            raise DeviceSettingsError(f"scheduler {wanted.scheduler!r} is not a scheduler name")
        if schedulers is not None and wanted.scheduler not in schedulers:
            raise DeviceSettingsError(
                f"scheduler {wanted.scheduler!r} is not available for this device (it lists {', '.join(schedulers) or 'none'})"
            )


# --------------------------------------------------------------------------- the edge: sysfs and hdparm

Runner = Callable[[Sequence[str]], str]
Writer = Callable[[str, str], None]


def run_command(argv: Sequence[str]) -> str:
    """Run a command (no shell) and return its stdout; one-line :class:`SettingNotApplied` on failure."""
    try:
        out = proc.run(argv, timeout_s=30, c_locale=False)
    except FileNotFoundError:
        raise SettingNotApplied(f"{argv[0]} is not installed (Debian package {argv[0]})") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise SettingNotApplied(f"{' '.join(argv)} failed: {exc}") from None
    if out.returncode != 0:
        why = (out.stderr or out.stdout).strip().splitlines()
        raise SettingNotApplied(f"{' '.join(argv)} failed: {why[-1] if why else f'exit {out.returncode}'}")
    return out.stdout


def write_attr(path: str, value: str) -> None:
    """Write one sysfs attribute with a single write(2), so the kernel's refusal surfaces here."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, (value + "\n").encode())
    finally:
        os.close(fd)


def queue_dir(kname: str, sys_root: str = "/sys") -> str:
    """``<sys_root>/block/<kname>/queue``; :class:`DeviceSettingsError` when there is none (a partition)."""
    if not re.fullmatch(r"[A-Za-z0-9_.:!+-]+", kname or ""):
        raise DeviceSettingsError(f"{kname!r} is not a kernel device name (like 'sda' or 'loop1')")
    path = os.path.join(sys_root, "block", kname, "queue")
    if not os.path.isdir(path):
        raise DeviceSettingsError(
            f"{kname} has no {path} (device settings belong to a whole disk, not a partition)"
        )
    return path


def _read_attr(kname: str, name: str, sys_root: str) -> str:
    path = os.path.join(queue_dir(kname, sys_root), name)
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise SettingNotApplied(f"cannot read {path}: {exc.strerror or exc}") from None


def is_ata(kname: str, sys_root: str = "/sys") -> bool:
    """An ATA/SATA disk (the SCSI layer reports vendor ``ATA``): its cache is switched with hdparm."""
    try:
        with open(os.path.join(sys_root, "block", kname, "device", "vendor"), encoding="utf-8") as fh:
            return fh.read().strip() == "ATA"
    except OSError:
        return False


def _read_write_cache(kname: str, sys_root: str, runner: Runner) -> str:
    if is_ata(kname, sys_root):
        try:
            return parse_hdparm_w(runner(["hdparm", "-W", f"/dev/{kname}"]))
        except ValueError as exc:
            raise SettingNotApplied(f"{kname}: cannot read the drive's write cache: {exc}") from None
    text = _read_attr(kname, "write_cache", sys_root)
    try:
        return parse_write_cache(text)
    except ValueError as exc:
        raise SettingNotApplied(f"{kname}: {exc}") from None


def read_settings(kname: str, sys_root: str = "/sys", runner: Runner = run_command) -> DeviceSettings:
    """The device's current write cache, scheduler and read-ahead."""
    current, _ = parse_scheduler(_read_attr(kname, "scheduler", sys_root))
    ra_text = _read_attr(kname, "read_ahead_kb", sys_root).strip()
    try:
        read_ahead = int(ra_text)
    except ValueError:
        raise SettingNotApplied(f"{kname}: unexpected read_ahead_kb {ra_text!r}") from None
    return DeviceSettings(
        write_cache=_read_write_cache(kname, sys_root, runner),
        scheduler=current,
        read_ahead_kb=read_ahead,
    )


def _set_one(kname: str, name: str, value: str | int, sys_root: str, runner: Runner, write: Writer) -> None:
    """Write one setting and read it back; :class:`SettingNotApplied` when it did not take."""
    if name == "write_cache" and is_ata(kname, sys_root):
        runner(["hdparm", "-W1" if value == "write back" else "-W0", f"/dev/{kname}"])
        how = f"hdparm -W{1 if value == 'write back' else 0} /dev/{kname}"
    else:
        path = os.path.join(queue_dir(kname, sys_root), name)
        how = f"writing {value!r} to {path}"
        try:
            write(path, str(value))
        except OSError as exc:
            raise SettingNotApplied(
                f"{kname}: the kernel refused {name}={value!r} ({exc.strerror or exc}) when {how}"
            ) from None
    now = read_settings(kname, sys_root, runner)
    got = getattr(now, name)
    if got != value:
        hint = ""
        if name == "read_ahead_kb":
            hint = " (read-ahead is kept in whole pages: use a multiple of the page size in KiB)"
        raise SettingNotApplied(
            f"{kname}: {name} is {got!r} after {how}, not {value!r}: the setting did not take effect{hint}"
        )


def apply_settings(
    kname: str,
    wanted: DeviceSettings,
    sys_root: str = "/sys",
    runner: Runner = run_command,
    *,
    write: Writer = write_attr,
) -> DeviceSettings:
    """Set the wanted (non-None) settings, verifying each; return the ORIGINAL values of
    exactly those fields (the others None), ready for :func:`restore_settings`.

    Validates everything before changing anything.  If a later setting fails, the ones
    already changed are put back before the error is raised.
    """
    original_all = read_settings(kname, sys_root, runner)
    _, listed = parse_scheduler(_read_attr(kname, "scheduler", sys_root))
    validate(wanted, listed)
    original = DeviceSettings(**{f: getattr(original_all, f) if getattr(wanted, f) is not None else None for f in FIELDS})
    done: dict[str, object] = {}
    try:
        for name in wanted.changed():
            value = getattr(wanted, name)
            if getattr(original_all, name) == value:
                continue  # already so: nothing to write (and nothing to restore)
            done[name] = getattr(original, name)
            _set_one(kname, name, value, sys_root, runner, write)
    except BaseException:
        restore_settings(kname, DeviceSettings(**done), sys_root, runner, write=write)  # type: ignore[arg-type]
        raise
    return original


def restore_settings(
    kname: str,
    original: DeviceSettings,
    sys_root: str = "/sys",
    runner: Runner = run_command,
    *,
    write: Writer = write_attr,
) -> None:
    """Put back every non-None field of ``original``, verifying each.

    Tries every field even when one fails, then raises one :class:`SettingNotApplied`
    naming what is left changed and how to fix it by hand.
    """
    problems: list[str] = []
    for name in original.changed():
        value = getattr(original, name)
        try:
            current = getattr(read_settings(kname, sys_root, runner), name)
            if current != value:
                _set_one(kname, name, value, sys_root, runner, write)
        except StorbenchError as exc:
            problems.append(f"{name} (wanted {value!r}: {exc})")
    if problems:
        raise SettingNotApplied(
            f"{kname}: could not restore {'; '.join(problems)}; set it back by hand"
        )


@contextlib.contextmanager
def applied(
    kname: str,
    wanted: DeviceSettings,
    sys_root: str = "/sys",
    runner: Runner = run_command,
    *,
    write: Writer = write_attr,
) -> Iterator[DeviceSettings]:
    """Apply ``wanted`` (verified) for the ``with`` body and restore the original values
    afterwards, whatever happens; yields the original values.

    A failed restore raises :class:`SettingNotApplied` (chained to the body's own
    exception, if any): a device left with changed settings must not go unnoticed.
    A signal arriving during the restore is re-raised as KeyboardInterrupt after it.
    """
    with signals.as_interrupt(catch_int=False):
        original = apply_settings(kname, wanted, sys_root, runner, write=write)
        try:
            yield original
        finally:
            with signals.held() as pending:
                restore_settings(kname, original, sys_root, runner, write=write)
            if pending:
                raise KeyboardInterrupt("SIGTERM" if "SIGTERM" in pending else "Ctrl-C")
