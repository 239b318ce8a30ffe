"""mypy over src/ with the settings in pyproject.toml ([tool.mypy]): any error fails.

The whole package at mypy's defaults (with unused ignores and redundant casts reported), the pure
packages (model, stats, fio, checks, compare, units, metrics) as ``mypy --strict`` checks them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _mypy() -> list[str]:
    beside = Path(sys.executable).with_name("mypy")  # the venv's, installed by make install (the dev extra)
    if beside.exists():
        return [str(beside)]
    found = shutil.which("mypy")
    if found is None:
        pytest.fail("mypy is not installed: make install puts it in .venv (pip install -e '.[dev]')")
    return [found]


def test_mypy_finds_nothing(tmp_path):
    # a cache of its own per run: a cache shared with another checkout or version can mislead mypy
    res = subprocess.run([*_mypy(), "--cache-dir", str(tmp_path / "mypy-cache"), "--no-error-summary"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    errors = [line for line in res.stdout.splitlines() if ": error:" in line]
    assert res.returncode == 0 and not errors, res.stdout + res.stderr

