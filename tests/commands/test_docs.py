"""Every storbench command in README.md and docs/*.md as written: each parses against the real CLI
(every option exists, every value is accepted); `--help` and the docs name the same options; and
the README's own walk-throughs are executed, under one rule that makes them small:

* ``/mnt/NAME`` (a filesystem you would mount) is a new directory ``mnt/NAME`` in the test's
  temporary directory; ``-o FILE`` writes there too;
* every ``run`` gets ``--size 8m --runtime 200ms --no-report``; a run of the default suite
  (no ``--suite``/``--workload``) runs two of its workloads (rnd4k-q1t1-read, seq1m-q1t1-read).

Commands that need what this machine cannot have as written (a block device ``/dev/X``, a NAS
``nas.lan``, a Ceph cluster of that name) are parsed only; their paths run for real in the
back-end tests (test_guard, test_nbd, test_ceph, test_share_study, test_matrix, ...).
``docs/testing.md`` says so.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from storbench.cli import cli as storbench_cli

from conftest import needs_fio

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"```[a-z]*\n(.*?)```", re.S)


def documented_commands() -> list[tuple[str, int, str]]:
    """(file, line, command) for every ``storbench ...`` line of a code block (continuations joined)."""
    out = []
    for path in DOCS:
        text = path.read_text()
        for m in _BLOCK.finditer(text):
            first = text[: m.start(1)].count("\n") + 1
            lines = m.group(1).splitlines()
            i = 0
            while i < len(lines):
                line = lines[i].strip()
                start = i
                while line.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    line = line[:-1] + " " + lines[i].strip()
                i += 1
                if line.startswith("$ "):
                    line = line[2:]
                if line.startswith(("storbench ", ".venv/bin/storbench ")):
                    out.append((path.name, first + start, line))
    return out


COMMANDS = documented_commands()


def _argv(line: str) -> list[str]:
    return shlex.split(line, comments=True)[1:]


def test_the_docs_hold_commands_of_every_kind():
    verbs = {_argv(c)[0] for _, _, c in COMMANDS}
    assert {"run", "compare", "report", "import", "matrix", "curve", "list", "net", "agent", "doctor"} <= verbs, verbs
    assert len(COMMANDS) >= 40


@pytest.mark.parametrize("where,line,command", COMMANDS, ids=[f"{f}:{n}" for f, n, _ in COMMANDS])
def test_every_documented_command_parses(where, line, command):
    argv = _argv(command)
    with storbench_cli.make_context("storbench", list(argv), resilient_parsing=False) as ctx:
        sub = storbench_cli.get_command(ctx, argv[0])
        assert sub is not None, f"{where}:{line}: no command {argv[0]!r}"
        try:
            sub.make_context(argv[0], argv[1:], parent=ctx)
        except click.ClickException as exc:
            pytest.fail(f"{where}:{line}: {command!r} does not parse: {exc.format_message()}")


def test_help_and_the_docs_name_the_same_options():
    """Every option a command takes is documented somewhere; every option a documented command
    uses is the command's (the parse test above checks that one per command)."""
    docs = "".join(p.read_text() for p in DOCS)
    with storbench_cli.make_context("storbench", ["list"]) as ctx:
        commands = {name: storbench_cli.get_command(ctx, name) for name in storbench_cli.list_commands(ctx)}
    assert len(commands) >= 14 and None not in commands.values()
    missing = [f"storbench {name} {opt}" for name, cmd in sorted(commands.items())
               for param in cmd.params for opt in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ()))
               if opt.startswith("--") and opt != "--help" and opt not in docs]  # fmt: skip
    assert missing == []


# --------------------------------------------------------------------------- executed as written


def _block_after(heading: str, lang: str = "sh") -> list[str]:
    text = (ROOT / "README.md").read_text()
    start = text.index(heading)
    m = re.compile(rf"```{lang}\n(.*?)```", re.S).search(text, start)
    assert m is not None
    return [ln.strip() for ln in m.group(1).splitlines() if ln.strip()]


def _small(argv: list[str], tmp: Path) -> list[str]:
    out = []
    for i, a in enumerate(argv):
        if a.startswith("/mnt/"):
            local = tmp / a.lstrip("/")
            local.mkdir(parents=True, exist_ok=True)
            a = str(local)
        elif i > 0 and argv[i - 1] == "-o":
            a = str(tmp / a)
        out.append(a)
    if out[0] == "run":
        out += ["--size", "8m", "--runtime", "200ms", "--no-report"]
        if not {"--suite", "--workload"} & set(argv):
            out += ["--workload", "rnd4k-q1t1-read", "--workload", "seq1m-q1t1-read"]
    return out


@needs_fio
def test_the_readme_compare_and_report_walkthrough_runs(cli, tmp_path):
    lines = _block_after("## Compare and report")
    assert lines[0].startswith("storbench run --label ext4")
    outs = {}
    for line in lines:
        argv = _small(_argv(line), tmp_path)
        res = cli(*argv)
        assert res.code == 0, (line, res.err)
        outs[argv[0] + (argv[-1] if argv[0] == "report" else "")] = res
    # what the text around it promises: the verdict line per workload, then the table with mean ±sd%
    compare = outs["compare"].out
    for workload in ("rnd4k-q1t1-read", "seq1m-q1t1-read"):
        assert re.search(rf"^{workload} read (IOPS|bandwidth): (ext4|xfs) leads (ext4|xfs) by \d+\.\d% ", compare, re.M), compare
    assert re.search(r"±\d+\.\d%", compare)
    html = (tmp_path / "fs.html").read_text()
    assert html.startswith("<!DOCTYPE html>") or "<html" in html[:500]
    md = (tmp_path / "fs.md").read_text()
    assert "| " in md and ".png)" in md
    assert all((tmp_path / p).exists() for p in re.findall(r"\(([^)\s]+\.png)\)", md))


@needs_fio
def test_the_readme_suite_file_walkthrough_runs(cli, tmp_path):
    toml = "\n".join(_block_after("## Your own workloads and suites", "toml"))
    (tmp_path / "mine.toml").write_text(toml + "\n")
    for line in _block_after("## Your own workloads and suites"):
        argv = _small(_argv(line), tmp_path)
        argv = [str(tmp_path / a) if a == "mine.toml" else a for a in argv]
        res = cli(*argv)
        assert res.code == 0, (line, res.err)
        assert "my-randread" in res.out
        if "--suite" in argv:
            assert "gitlab" in res.out  # a built-in workload named by the user's suite
