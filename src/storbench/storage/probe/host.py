"""The host a result is measured on (edge): uname, /etc/os-release, /proc."""

from __future__ import annotations

import os

from ..host import HostInfo, parse_cpuinfo_model, parse_meminfo_total, parse_os_release
from .base import read_text


def describe_host(
    fio_version: str | None = None, *, proc_root: str = "/proc", etc_root: str = "/etc", notes: list[str] | None = None
) -> HostInfo:
    """The host's facts from ``uname``, ``/etc/os-release``, ``/proc/cpuinfo`` and ``/proc/meminfo``."""
    notes = notes if notes is not None else []
    uname = os.uname()
    distribution = None
    os_release = read_text(os.path.join(etc_root, "os-release"))
    if os_release is None:
        os_release = read_text("/usr/lib/os-release") if etc_root == "/etc" else None
    if os_release is None:
        notes.append("distribution unknown: /etc/os-release is unreadable")
    else:
        distribution = parse_os_release(os_release).get("PRETTY_NAME")
    cpuinfo = read_text(os.path.join(proc_root, "cpuinfo"))
    cpu_model = parse_cpuinfo_model(cpuinfo) if cpuinfo is not None else None
    if cpu_model is None:
        notes.append("CPU model unknown: /proc/cpuinfo has no model name")
    meminfo = read_text(os.path.join(proc_root, "meminfo"))
    mem = parse_meminfo_total(meminfo) if meminfo is not None else None
    if mem is None:
        notes.append("memory size unknown: /proc/meminfo is unreadable")
    return HostInfo(
        hostname=uname.nodename,  # what gethostname() returns on Linux, without importing socket
        kernel=uname.release,
        distribution=distribution,
        cpu_model=cpu_model,
        cpu_count=os.cpu_count(),
        mem_bytes=mem,
        fio_version=fio_version,
    )

