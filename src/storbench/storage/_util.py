"""Small pure helpers shared by the parsers: tolerant int/bool/str, byte formatting (sizes with units:
:func:`storbench.units.read_size`)."""

from __future__ import annotations

from typing import Any


def to_int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def to_bool(value: Any) -> bool | None:
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


def to_str(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def format_bytes(n: int | None) -> str:
    """The storage description's sizes: :func:`storbench.units.format_bytes`, exact where
    possible (``67108864`` -> ``"64 MiB"``, ``1.8 TiB``), ``"?"`` for an unknown size."""
    from ..units import format_bytes as _format_bytes

    return _format_bytes(n, exact=True, missing="?")

