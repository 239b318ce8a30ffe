"""storbench.model.versions: the one table of stored forms is the one every writer and reader uses."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from storbench import activity, backend, serialize
from storbench.fio.logs import series_from_logs
from storbench.model import versions
from storbench.run import live
from storbench.storage import codec
from storbench.study import plan

SRC = Path(__file__).resolve().parents[2] / "src" / "storbench"


def test_every_stored_form_takes_its_version_from_the_table():
    assert serialize.FORMAT_VERSION == versions.RESULT == 2
    assert activity.ACTIVITY_FORMAT_VERSION == versions.ACTIVITY
    assert backend.FORMAT_VERSION == versions.BACKEND
    assert codec.FORMAT_VERSION == versions.STORAGE
    assert live.LIVE_VERSION == versions.LIVE
    assert plan.STUDY_FORMAT_VERSION == versions.STUDY
    assert series_from_logs({})["format_version"] == versions.SERIES


def test_no_module_keeps_a_version_number_of_its_own():
    """A literal version beside a stored form (``FORMAT_VERSION = 1``, ``"format_version": 1``) is
    a counter outside the table: every one is ``versions.X``."""
    found = []
    for path in SRC.rglob("*.py"):
        if path.name == "versions.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.endswith("VERSION") for t in node.targets):
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, int):
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}")
            if isinstance(node, ast.Dict):
                for k, v in zip(node.keys, node.values):
                    if isinstance(k, ast.Constant) and k.value == "format_version" and isinstance(v, ast.Constant):
                        found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert found == []


def test_the_schema_revision_is_the_newest_migration():
    revisions = sorted(p.name[:4] for p in (SRC / "store" / "migrations" / "versions").glob("0*.py"))
    assert versions.SCHEMA == revisions[-1]
    text = (SRC / "model" / "versions.py").read_text()
    for rev in revisions:  # each revision has its line of history
        assert re.search(rf"^#:\s+{rev}\s+\S", text, re.M), rev
