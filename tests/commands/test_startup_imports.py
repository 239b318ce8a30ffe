"""A command imports what it uses and no more (issue 50): ``storbench --help`` lists the commands
without importing them, ``list`` and ``show`` read the store without the runner, the hosts, the
curves, numpy or SQLAlchemy. What the start-up costs is measured in ``make bench`` (never asserted
here: it is the machine's); what decides it on every machine is which modules were imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import click
import pytest

from storbench.cli import cli as group
from storbench.commands import SUMMARIES

#: runs ``storbench ARGS`` in a fresh interpreter, then prints the modules it had imported
PROBE = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from storbench.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(sys.argv[1:])
    print(json.dumps({"code": code, "modules": sorted(sys.modules), "out": out.getvalue()}))
    """
)

#: what a command that only lists or reads never needs
HEAVY = ("storbench.run.runner", "storbench.run.hosts", "storbench.run.session", "storbench.curve", "storbench.study",
         "storbench.suites", "storbench.serve", "numpy", "sqlalchemy", "alembic", "plotly", "jinja2")  # fmt: skip


def imported(args: list[str], db: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60,
                          env={"STORBENCH_DB": db, "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def heavy_in(modules: list[str]) -> list[str]:
    return [m for m in modules if m in HEAVY or m.startswith(tuple(f"{h}." for h in HEAVY))]


def test_help_lists_every_command_without_importing_one(tmp_path):
    got = imported(["--help"], str(tmp_path / "s.sqlite"))
    assert got["code"] == 0
    commands = [m for m in got["modules"] if m.startswith("storbench.commands.") and m != "storbench.commands.common"]
    assert commands == []
    assert heavy_in(got["modules"]) == []
    assert "rich" not in got["modules"]
    for name in SUMMARIES:  # every command is listed
        assert f"\n  {name} " in got["out"]


def test_the_summaries_are_each_commands_own_help():
    """The table --help reads equals what each command says of itself, and names every command."""
    ctx = click.Context(group)
    names = group.list_commands(ctx)
    assert sorted(SUMMARIES) == names
    for name in names:
        cmd = group.get_command(ctx, name)
        assert cmd is not None
        for limit in (30, 45, 60, 74, 300):  # click's truncation of the help as of the summary alike
            assert click.Command(name, help=SUMMARIES[name]).get_short_help_str(limit) == cmd.get_short_help_str(limit), name


def test_help_reads_as_click_would_write_it_with_every_command_loaded():
    ctx = click.Context(group, info_name="storbench")
    lazy = group.get_help(ctx)
    for name in group.list_commands(ctx):
        group.get_command(ctx, name)  # every command loaded: click's own listing from their help
    formatter = ctx.make_formatter()
    click.Group.format_commands(group, ctx, formatter)
    assert formatter.getvalue().rstrip("\n") in lazy
    assert "Commands:" in lazy


@pytest.mark.parametrize("args", [["list"], ["list", "--limit", "5"], ["show", "1"], ["list", "--help"], ["show", "--help"]])
def test_reading_the_store_imports_no_runner_nor_sqlalchemy(tmp_path, args):
    db = str(tmp_path / "s.sqlite")
    imported(["import", "--help"], db)
    first = imported(["list"], db)  # the first command makes the store (SQLAlchemy and Alembic then)
    assert first["code"] == 0
    _seed(db)
    got = imported(args, db)
    assert got["code"] == 0
    assert heavy_in(got["modules"]) == []
    if args[:2] == ["show", "1"]:
        assert "seeded" in got["out"]  # it did read the run


def _seed(db: str) -> None:
    """One imported run in the store (through the real import command and a recorded fio output)."""
    from pathlib import Path

    fixture = sorted((Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "fio-json").glob("*.json"))[0]
    done = subprocess.run([sys.executable, "-m", "storbench", "import", str(fixture), "--label", "seeded"], capture_output=True,
                          text=True, timeout=60, env={"STORBENCH_DB": db, "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})  # fmt: skip
    assert done.returncode == 0, done.stderr
