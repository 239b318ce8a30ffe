"""The names of JSON data: the one place storbench's own types say ``Any``.

What comes out of ``json.loads`` (fio's ``--output-format=json``, a stored record's ``meta``, a live
state, a tool's ``--json`` report, a serve request's body) or ``tomllib`` (a suite, a setup, a hosts
file) has no type until the code that reads it checks each field, and what goes into ``json.dumps``
may hold any JSON value.  These aliases name
that edge.  Everywhere else an explicit ``Any`` is refused by mypy (``disallow_any_explicit`` in
``pyproject.toml``); the few modules allowed one are listed there, each with its reason.

Reading a field: check it (``isinstance``, :func:`storbench.storage._util.to_int`, the fio parsers'
number readers) before it becomes a typed record's value; a frozen record never holds a
``JSONValue`` where it has a type of its own.

May import: the standard library only (type names; every stage may import it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

#: any value as ``json.loads`` or ``tomllib`` gives it (str, int, float, bool, None, list, dict; a
#: TOML date), or one about to be written by ``json.dumps``: its reader checks it
JSONValue: TypeAlias = Any

#: a JSON object as ``json.loads`` gives it, or one being built for ``json.dumps``
JSONObject: TypeAlias = dict[str, Any]

#: a JSON object only read (a stored record's meta, fio's job object, a request's body)
JSONMapping: TypeAlias = Mapping[str, Any]

#: a JSON array
JSONList: TypeAlias = list[Any]
