"""The host (pure): parsers of /etc/os-release, /proc/cpuinfo and /proc/meminfo."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class HostInfo:
    """The machine a result was measured on."""

    hostname: str | None
    kernel: str | None  # uname -r
    distribution: str | None  # /etc/os-release PRETTY_NAME
    cpu_model: str | None
    cpu_count: int | None
    mem_bytes: int | None
    fio_version: str | None = None  # as ``fio --version`` prints it ("fio-3.33")


def parse_os_release(text: str) -> dict[str, str]:
    """``/etc/os-release`` -> {KEY: value} (quotes and escapes removed)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[key.strip()] = re.sub(r"\\(.)", r"\1", value)
    return out


def parse_cpuinfo_model(text: str) -> str | None:
    """CPU model from ``/proc/cpuinfo`` (x86 ``model name``; ``Model``/``Hardware``/``cpu model`` elsewhere)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip().lower(), value.strip())
    for key in ("model name", "model", "cpu model", "hardware", "processor"):
        found = fields.get(key)
        if found and not found.isdigit():
            return found
    return None


def parse_meminfo_total(text: str) -> int | None:
    """``MemTotal:  24684092 kB`` -> bytes."""
    m = re.search(r"^MemTotal:\s*(\d+)\s*kB", text, re.MULTILINE)
    return int(m.group(1)) * 1024 if m else None

