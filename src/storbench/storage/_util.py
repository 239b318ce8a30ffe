"""Small pure helpers shared by the parsers: tolerant int/bool/str, byte formatting (sizes with units:
:func:`storbench.units.read_size`)."""

from __future__ import annotations

import os
import re

from storbench.jsontypes import JSONList, JSONObject, JSONValue


def to_int(value: JSONValue) -> int | None:
    """An integer a tool printed (JSON or text), or None: an int as it is, a float that is a
    whole number, a string of a signed integer (blanks around it allowed); never a bool, a
    fraction or a word (``"12k"``, ``"1.5"``, ``"-"`` are None).  The one reader of tool
    output's integers (lsblk, findmnt, zfs, ceph, smartctl)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    return None


def to_bool(value: JSONValue) -> bool | None:
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


def to_str(value: JSONValue) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def format_bytes(n: int | None) -> str:
    """The storage description's sizes: :func:`storbench.units.format_bytes`, exact where
    possible (``67108864`` -> ``"64 MiB"``, ``1.8 TiB``), ``"?"`` for an unknown size."""
    from ..units import format_bytes as _format_bytes

    return _format_bytes(n, exact=True, missing="?")



def obj(doc: JSONValue, key: str) -> JSONObject:
    """``doc[key]`` where ``doc`` is a JSON object and that is an object too, else ``{}``: a tool's
    JSON read field by field without trusting its shape (JSON edge: its values are ``Any``)."""
    value = doc.get(key) if isinstance(doc, dict) else None
    return value if isinstance(value, dict) else {}


def items(doc: JSONValue, key: str) -> JSONList:
    """``doc[key]`` where that is a JSON array, else ``[]`` (see :func:`obj`)."""
    value = doc.get(key) if isinstance(doc, dict) else None
    return value if isinstance(value, list) else []


def json_error(exc: ValueError) -> str:
    """Where :func:`json.loads` failed: ``Expecting value at line 1`` (its message and line), or the
    error's own words for a ValueError that is not a :class:`json.JSONDecodeError`."""
    import json

    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}"
    return str(exc)


def local_processes(program: str, proc: str = "/proc") -> list[tuple[int, list[str], dict[str, str]]]:
    """(pid, argv, environment) of every running ``program`` (by its argv[0]'s name) in this
    process's network namespace, read from ``proc``: the servers storbench can ask beside it
    (nfs-ganesha, tgtd).  An unreadable process is passed over."""
    try:
        mine = os.readlink(os.path.join(proc, "self", "ns", "net"))
    except OSError:
        return []
    out = []
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        try:
            with open(os.path.join(proc, name, "cmdline"), "rb") as fh:
                argv = [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
            if not argv or os.path.basename(argv[0]) != program or os.readlink(os.path.join(proc, name, "ns", "net")) != mine:
                continue
            try:
                with open(os.path.join(proc, name, "environ"), "rb") as fh:
                    environ = dict(e.decode(errors="replace").split("=", 1) for e in fh.read().split(b"\0") if b"=" in e)
            except OSError:
                environ = {}
        except OSError:
            continue
        out.append((int(name), argv, environ))
    return out
