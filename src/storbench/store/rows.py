"""Stored rows back into records, with no SQLAlchemy: shared by the store (:mod:`.database`) and
the read-only reader (:mod:`.reader`) so that both give the same records for the same rows.

A row is anything with the table's column names as attributes (an SQLAlchemy ``Row``, a
psycopg ``namedtuple_row``, a named tuple from sqlite3).  Also here: PostgreSQL's reversible
NUL escape, a run's owner check, and the migration files' revisions read as text.

May import: model, serialize, storage, activity, backend, errors and the store's owner module.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from storbench.errors import StoreError
from storbench.jsontypes import JSONMapping, JSONObject, JSONValue
from storbench.model import Finding, RunInfo
from storbench.record import ResultRecord
from storbench.serialize import fio_result_from_dict

if TYPE_CHECKING:
    from storbench.storage import StorageInfo

#: PostgreSQL text cannot hold NUL: it is stored as _NUL_ESCAPE + "0" (and _NUL_ESCAPE doubled)
_NUL_ESCAPE = "\uf8ff"
_NUL_DECODE = re.compile("\uf8ff(\uf8ff|0)")

Decode = Callable[[str | None], str | None]



def max_run_id(postgres: bool) -> int:
    """The largest id a run can have (``runs.id`` is an INTEGER: 32 bits on PostgreSQL, 64 on
    SQLite): a larger number given for a run is only ever a label ("no run matches"), never an
    id the database refuses to compare ("integer out of range")."""
    return 2**31 - 1 if postgres else 2**63 - 1


def nul_escape(value: str | None) -> str | None:
    """Text PostgreSQL can store: NUL -> U+F8FF "0", U+F8FF -> U+F8FF U+F8FF (reversible, prefix-preserving)."""
    if value is None or ("\x00" not in value and _NUL_ESCAPE not in value):
        return value
    return value.replace(_NUL_ESCAPE, _NUL_ESCAPE * 2).replace("\x00", _NUL_ESCAPE + "0")


def nul_unescape(value: str | None) -> str | None:
    if value is None or _NUL_ESCAPE not in value:
        return value
    return _NUL_DECODE.sub(lambda m: _NUL_ESCAPE if m.group(1) == _NUL_ESCAPE else "\x00", value)


def same_text(value: str | None) -> str | None:
    return value


def owner_gone(owner: JSONValue) -> TypeGuard[JSONObject]:
    from .owner import gone

    return isinstance(owner, dict) and gone(owner) is True


def gone_reason(owner: JSONMapping) -> str:
    return (f"its storbench process (pid {owner.get('pid')} on {owner.get('host')}) is gone "
            "(killed, crashed or its machine restarted) before the run ended")  # fmt: skip


def meta_of(text: str | None) -> JSONObject:
    """A run's free JSON as a dict ({} when it is not a JSON object)."""
    try:
        meta = json.loads(text or "{}")
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


_REVISION_LINE = re.compile(r"^revision\s*(?::[^=\n]*)?=\s*[\"']([^\"'\n]+)[\"']\s*$", re.M)
_DOWN_REVISION_LINE = re.compile(r"^down_revision\s*(?::[^=\n]*)?=\s*(?:None|[\"']([^\"'\n]+)[\"'])\s*$", re.M)


@functools.cache
def plain_revisions(location: str) -> tuple[frozenset[str], str] | None:
    """Known revisions and the single head, read from the version files' text.

    Opening a database that is already at head (every command but the first) then
    needs no alembic import.  ``None`` when a file does not spell its revision as
    plain ``revision = "..."`` / ``down_revision = "..."`` lines, or the history is not
    one line: alembic itself decides then.
    """
    parents: dict[str, str | None] = {}
    for path in sorted(Path(location, "versions").glob("*.py")):
        try:
            body = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        revs, downs = _REVISION_LINE.findall(body), _DOWN_REVISION_LINE.findall(body)
        if len(revs) != 1 or len(downs) != 1 or revs[0] in parents:
            return None
        parents[revs[0]] = downs[0] or None
    children = [p for p in parents.values() if p is not None]
    heads = [r for r in parents if r not in children]
    if len(heads) != 1 or len(set(children)) != len(children) or not set(children) <= set(parents):
        return None
    return frozenset(parents), heads[0]


def storage_of_json(text: str) -> StorageInfo:
    """A stored storage description (``storage_json``), decoded once per distinct text."""
    return _storage_from_json(text)


@functools.lru_cache(maxsize=64)
def _storage_from_json(text: str) -> StorageInfo:
    """The results of a run (and of every run on the same machine) share one storage
    description: decode each distinct text once (StorageInfo is immutable)."""
    from ..storage import storage_from_dict

    return storage_from_dict(json.loads(text))


def _extras_from_json(row: Any) -> JSONObject:
    from ..activity import activity_from_dict
    from ..backend import backend_from_dict

    def load(text: str | None) -> JSONValue:
        return None if text is None else json.loads(text)

    storage_text = getattr(row, "storage_json", None)
    activity = load(getattr(row, "activity_json", None))
    findings = load(getattr(row, "findings_json", None))
    backend = load(getattr(row, "backend_json", None))
    if findings is not None and int(findings.get("format_version", 1)) > 1:
        raise StoreError("stored findings have a newer format version; upgrade storbench")
    return {
        "storage": _storage_from_json(storage_text) if storage_text is not None else None,
        "activity": activity_from_dict(activity) if activity is not None else None,
        "findings": tuple(Finding(**f) for f in findings["findings"]) if findings else (),
        "space": load(getattr(row, "space_json", None)),
        "series": load(getattr(row, "series_json", None)),
        "backend": backend_from_dict(backend) if backend is not None else None,
    }


def record_from_row(row: Any, dec: Decode, display: str) -> ResultRecord:
    """A ``results`` row as the record that was stored (``dec`` undoes the backend's text escape;
    ``display`` names the database in errors)."""
    try:
        fio = fio_result_from_dict(json.loads(row.result_json))
        options = json.loads(row.options_json)
        extras = _extras_from_json(row)
    except json.JSONDecodeError as exc:
        raise StoreError(f"database {display}: result {row.id} is not valid JSON: {exc}") from exc
    except StoreError as exc:
        raise StoreError(f"database {display}: result {row.id}: {exc}") from exc
    return ResultRecord(
        run_id=row.run_id,
        workload=dec(row.workload) or "",  # NOT NULL columns: dec gives text for text
        target=dec(row.target),
        fio=fio,
        raw_output=dec(row.raw_output) or "",
        label=dec(row.label),
        source=dec(row.source),
        options=options,
        job_text=dec(row.job_text),
        repetition=row.repetition,
        result_id=row.id,
        created_at=row.created_at,
        host=dec(row.host),
        **extras,
    )


def run_info_from_row(row: Any, dec: Decode) -> RunInfo:
    """A ``runs`` row with its ``result_count`` as a :class:`RunInfo`; a run still ``running``
    whose process on this host is gone is told as ``interrupted``."""
    status, reason = row.status, dec(row.reason)
    if status == "running":  # is its process still there? (this host's runs; see store/owner.py)
        owner = meta_of(row.meta_json).get("owner")
        if owner_gone(owner):
            status, reason = "interrupted", gone_reason(owner)
    return RunInfo(
        run_id=row.id,
        label=dec(row.label),
        kind=row.kind,
        status=status,
        created_at=row.created_at,
        finished_at=row.finished_at,
        suite=dec(row.suite),
        reason=reason,
        storbench_version=row.storbench_version,
        result_count=int(row.result_count),
    )
