"""Small pure helpers shared by the parsers: sizes with units, tolerant int/bool/str, byte formatting."""

from __future__ import annotations

import re
from typing import Any

_SIZE_UNITS = {
    "": 1,
    "B": 1,
    "K": 1024,
    "KB": 1024,
    "KIB": 1024,
    "M": 1024**2,
    "MB": 1024**2,
    "MIB": 1024**2,
    "G": 1024**3,
    "GB": 1024**3,
    "GIB": 1024**3,
    "T": 1024**4,
    "TB": 1024**4,
    "TIB": 1024**4,
    "P": 1024**5,
    "PIB": 1024**5,
}


def parse_size(text: str | None) -> int | None:
    """``"4096"`` / ``"4096k"`` / ``"8.00MiB"`` / ``"128M"`` -> bytes (binary units); None if not a size."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
    if not m:
        return None
    unit = m.group(2).upper()
    if unit not in _SIZE_UNITS:
        return None
    return round(float(m.group(1)) * _SIZE_UNITS[unit])


def _int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def _bool(value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on", "y"):
        return True
    if text in ("0", "false", "no", "off", "n"):
        return False
    return None


def _str(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def format_bytes(n: int | None) -> str:
    """The storage description's sizes: :func:`storbench.units.format_bytes`, exact where
    possible (``67108864`` -> ``"64 MiB"``, ``1.8 TiB``), ``"?"`` for an unknown size."""
    from ..units import format_bytes as _format_bytes

    return _format_bytes(n, exact=True, missing="?")

