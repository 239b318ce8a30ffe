"""Who runs a stored run, and whether that process is still there (edge: reads ``/proc``).

A run records its owner when it is created or resumed: the host name, the PID, the
process's start time (clock ticks since boot, ``/proc/PID/stat`` field 22) and the boot id,
so a PID the kernel gave to another process since, or a machine rebooted since, is not
mistaken for the run's.  A run still ``running`` whose owner is gone was killed (SIGKILL,
the OOM killer, a power cut) or lost its store in the middle; :func:`gone` says so for
runs of this host.  Another host's runs cannot be checked from here (None).

storbench's fio temporary directories and a run's scratch directory carry their owner's PID
(``storbench-fio-<pid>-*``, ``.storbench-scratch-<pid>-*``); :func:`remove_dead_temp_dirs`
removes those whose PID is gone.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
from collections.abc import Callable

from storbench.jsontypes import JSONMapping, JSONObject

#: the prefix of fio's working directory (job file, output, logs) for the process ``pid``
TEMP_PREFIX = "storbench-fio-"
_TEMP_RE = re.compile(r"^storbench-fio-(\d+)-")
#: a run's scratch directory in the current directory (``runner.scratch_target``)
SCRATCH_RE = re.compile(r"^\.storbench-scratch-(\d+)-")


def _boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            return fh.read().strip()
    except OSError:
        return None


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot; None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces: count after the last ')'
    fields = text[text.rfind(")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 of the whole line
    except (IndexError, ValueError):
        return None


def this_process() -> JSONObject:
    """The owner record of the current process."""
    pid = os.getpid()
    return {"host": socket.gethostname(), "pid": pid, "start_ticks": start_ticks(pid), "boot_id": _boot_id()}


def gone(owner: JSONMapping | None) -> bool | None:
    """True when the owner process is no longer running (on this host, this boot); False when it
    is; None when it cannot be told from here (another host, no owner recorded)."""
    if not owner or owner.get("host") != socket.gethostname():
        return None
    pid = owner.get("pid")
    if not isinstance(pid, int):
        return None
    if owner.get("boot_id") and _boot_id() and owner["boot_id"] != _boot_id():
        return True  # the machine rebooted since
    ticks = start_ticks(pid)
    if ticks is None:
        return True
    recorded = owner.get("start_ticks")
    return recorded is not None and ticks != recorded  # the PID now names another process


def pid_gone(pid: int) -> bool:
    return start_ticks(pid) is None


def remove_dead_temp_dirs(directory: str | None = None, pattern: re.Pattern[str] = _TEMP_RE,
                          before_remove: Callable[[str], None] | None = None) -> list[str]:  # fmt: skip
    """Remove ``storbench-fio-<pid>-*`` directories under the temporary directory (or those
    ``pattern`` names under ``directory``: a scratch directory, a load's directory on a target)
    whose PID is gone: a killed run's job files, outputs and logs, its test file; ``before_remove``
    is called with each first (a PostgreSQL server left running in a load's directory is stopped);
    the paths removed."""
    directory = directory or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        m = pattern.match(name)
        path = os.path.join(directory, name)
        if m and int(m.group(1)) != os.getpid() and pid_gone(int(m.group(1))) and os.path.isdir(path) and not os.path.islink(path):
            if before_remove is not None:
                before_remove(path)
            shutil.rmtree(path, ignore_errors=True)
            if not os.path.exists(path):
                removed.append(path)
    return removed
