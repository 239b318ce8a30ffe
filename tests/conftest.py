"""Shared test fixtures: an injected Env, a temporary database, a CLI runner."""

from __future__ import annotations

import io
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from storbench.cli import main
from storbench.context import Env

DATA = Path(__file__).parent / "data"


@dataclass
class CliResult:
    code: int
    out: str
    err: str


class Cli:
    """Runs ``storbench`` in-process with captured streams and a private database."""

    def __init__(self, tmp_path: Path) -> None:
        self.db = tmp_path / "results.sqlite"
        self.cwd = tmp_path

    def __call__(self, *args: str, cwd: Path | None = None, env_extra: dict | None = None) -> CliResult:
        out, err = io.StringIO(), io.StringIO()
        environ = dict(os.environ)
        environ["STORBENCH_DB"] = str(self.db)
        environ.pop("STORBENCH_DEBUG", None)
        environ.update(env_extra or {})
        env = Env(stdout=out, stderr=err, environ=environ, cwd=str(cwd or self.cwd), progress=False)
        code = main(list(args), env=env)
        return CliResult(int(code), out.getvalue(), err.getvalue())


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path)


needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
