"""The stored form (pure): :func:`storage_to_dict` and its exact inverse :func:`storage_from_dict`, versioned."""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from collections.abc import Mapping
from typing import Any

from storbench.errors import StoreError
from storbench.jsontypes import JSONMapping, JSONObject, JSONValue

from ..model import versions
from .records import StorageInfo, record_types

#: Version of :func:`storage_to_dict`'s form.  Bump when a key is renamed, removed or changes meaning.
FORMAT_VERSION = versions.STORAGE  # the history: storbench.model.versions


def encode_dataclasses(value: Any) -> JSONValue:
    """Frozen records (and tuples of them) as JSON-compatible dicts and lists, field by field."""
    return _encode(value)


def _encode(value: Any) -> JSONValue:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    return value


_HINTS: dict[tuple[type, str], Any] = {}


def _hint(cls: type, f: dataclasses.Field) -> Any:
    """The type of field ``f`` of record ``cls`` (its annotation is text: ``from __future__ import
    annotations``), read in the record's module; a family the module names only for type checkers
    (ZFS, Ceph, RAID, ...) is imported here, the first time a stored value of it is read."""
    key = (cls, f.name)
    if key not in _HINTS:
        tp = f.type
        if isinstance(tp, str):
            module = vars(sys.modules[cls.__module__])
            try:
                tp = eval(tp, module)  # the record's own annotation text, read as typing.get_type_hints reads it
            except NameError:
                tp = eval(tp, {**record_types(), **module})
        _HINTS[key] = tp
    return _HINTS[key]


def _decode(tp: Any, value: JSONValue, where: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1:
            raise StoreError(f"stored storage description is malformed at {where}")
        return _decode(inner[0], value, where)
    if origin is tuple:
        if not isinstance(value, list):
            raise StoreError(f"stored storage description is malformed: {where} should be a list")
        (item_tp, _ellipsis) = typing.get_args(tp)
        return tuple(_decode(item_tp, v, f"{where}[{i}]") for i, v in enumerate(value))
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(value, Mapping):
            raise StoreError(f"stored storage description is malformed: {where} should be an object")
        kwargs: JSONObject = {}
        for f in dataclasses.fields(tp):
            if f.name in value:
                got = value[f.name]
                if (got is None and f.default is None) or (got == [] and f.default == ()):
                    kwargs[f.name] = f.default  # no ZFS, no drives: no need to know their record types
                else:
                    kwargs[f.name] = _decode(_hint(tp, f), got, f"{where}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise StoreError(f"stored storage description is malformed: {where} lacks {f.name!r}")
        return tp(**kwargs)
    if tp is bool:
        if not isinstance(value, bool):
            raise StoreError(f"stored storage description is malformed: {where} should be true/false")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise StoreError(f"stored storage description is malformed: {where} should be an integer")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise StoreError(f"stored storage description is malformed: {where} should be a number")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise StoreError(f"stored storage description is malformed: {where} should be a string")
        return value
    raise StoreError(f"stored storage description is malformed at {where}")  # pragma: no cover


def decode_dataclass(tp: Any, value: JSONValue, where: str) -> Any:
    """The record of type ``tp`` that :func:`encode_dataclasses` turned into ``value``; :class:`StoreError` if malformed."""
    return _decode(tp, value, where)


def storage_to_dict(info: StorageInfo) -> JSONObject:
    """JSON-compatible form of ``info`` with ``"format_version"``; :func:`storage_from_dict` inverts it exactly."""
    return {"format_version": FORMAT_VERSION, **_encode(info)}


def storage_from_dict(data: JSONMapping) -> StorageInfo:
    """Rebuild a :class:`StorageInfo` from :func:`storage_to_dict` output (possibly through JSON).

    Unknown keys are ignored and missing optional fields take their defaults, so adding
    an optional field needs no new version.  Raises :class:`StoreError` for a newer
    format version or a malformed dict.
    """
    if not isinstance(data, Mapping):
        raise StoreError(f"stored storage description is malformed: expected an object, got {type(data).__name__}")
    version = data.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise StoreError(f"stored storage description is malformed: format_version is {version!r}")
    if version > FORMAT_VERSION:
        raise StoreError(
            f"stored storage description has format version {version}, this storbench reads up to {FORMAT_VERSION}; upgrade storbench"
        )
    return _decode(StorageInfo, data, "storage")

