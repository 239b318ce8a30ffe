"""ruff over the whole tree, with the selection in pyproject.toml ([tool.ruff.lint]): any finding fails."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff() -> list[str]:
    beside = Path(sys.executable).with_name("ruff")  # the venv's, installed by make install (the dev extra)
    if beside.exists():
        return [str(beside)]
    found = shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed: make install puts it in .venv (pip install -e '.[dev]')")
    return [found]


def test_ruff_finds_nothing():
    res = subprocess.run([*_ruff(), "check", "--output-format", "concise", "src", "tests", "benchmarks"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
