"""No injection: nothing a user writes in a suite file or on the command line can add a fio
option or a job section, and storbench never runs a shell.

fio reads a job file line by line: ``[name]`` starts a job, ``;`` and ``#`` start
comments, ``$VAR``/``${VAR}`` are expanded.  ``fio --showcmd`` prints how fio read
a job file, so the tests show what a naive job file would have done and that
storbench's never does it.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import needs_fio

SRC = Path(__file__).resolve().parents[2] / "src" / "storbench"

EVIL = "4k\n[evil]\nfilename=/etc/passwd"
#: (value, what fio would do with it in a naive ``bs=<value>`` line)
HOSTILE_VALUES = [
    EVIL,                                    # a new job section reading /etc/passwd
    "4k\r[evil]\rfilename=/etc/passwd",      # CR line ends
    "4k ; rw=write",                         # ';' starts a comment: the rest is dropped
    "4k # rw=write",                         # '#' likewise
    "${HOME}",                               # environment expansion
    "$HOME",
    "[evil]",                                # a value that is a section header
    "] x",
    "4k\x00filename=/etc/passwd",            # NUL
    "4k\x0bfilename=/etc/passwd",            # other control characters
]
HOSTILE_KEYS = ["bs\n[evil]", "bs=4k\nfilename", "[evil]", "rw;x", "rw#", "$rw", "bs ", "rw=randread"]
HOSTILE_NAMES = ["x]\n[evil", "x\n[evil]", "evil]", "[evil", "x;y", "x#y", "x$y", "x=y", "global", "x y"]


def showcmd(job_text: str, tmp_path: Path) -> str:
    """How fio itself reads ``job_text``: the equivalent command line."""
    job = tmp_path / "showcmd.fio"
    job.write_text(job_text)
    out = subprocess.run(["fio", "--showcmd", str(job)], capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


def suite(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(body, encoding="utf-8")
    return path


def toml(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def one_error_line(res) -> str:
    assert "Traceback" not in res.err and "internal error" not in res.err, res.err
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("storbench: error: "), res.err
    return lines[0]


def sections(job_text: str) -> list[str]:
    return [ln for ln in job_text.splitlines() if ln.startswith("[")]


def dry_run_jobs(stdout: str) -> list[str]:
    """The job texts printed by ``run --dry-run`` (each after a ``# workload`` line)."""
    return [chunk.split("\n", 1)[1] for chunk in stdout.split("# workload ")[1:]]


# --------------------------------------------------------------------------- the danger is real


@needs_fio
def test_a_naive_job_file_would_be_injected(tmp_path: Path) -> None:
    """Without the checks, EVIL in one value gives fio a second job that reads /etc/passwd."""
    assert showcmd(f"[x]\nbs={EVIL}\nsize=1m\n", tmp_path) == "fio --name=x --bs=4k --name=evil --size=1m --filename=/etc/passwd"
    assert "--rw=write" not in showcmd("[x]\nbs=4k ; rw=write\n", tmp_path)  # the comment swallowed it


# --------------------------------------------------------------------------- suite files: refused


@pytest.mark.parametrize("value", HOSTILE_VALUES, ids=repr)
def test_hostile_option_value_refused(cli, tmp_path: Path, value: str) -> None:
    path = suite(tmp_path, f'[workload.x]\ndescription = "d"\nfio = {{ rw = "randread", bs = {toml(value)} }}\n')
    for args in (("--dry-run",), ("--size", "16m", "--runtime", "1")):  # the dry run and a real run
        target = tmp_path / "t"
        target.mkdir(exist_ok=True)
        res = cli("run", "--suite-file", str(path), "--workload", "x", "--target", str(target), *args)
        assert res.code == 2, res
        line = one_error_line(res)
        assert "mine.toml" in line and "bs" in line, line
        assert res.out == "" and os.listdir(target) == []
    assert not cli.db.exists() or sqlite3.connect(cli.db).execute("select count(*) from runs").fetchone() == (0,)


@pytest.mark.parametrize("value", ["a\n[evil]\nfilename=/etc/passwd", "a ; b", "a # b", "${HOME}", "[evil]"], ids=repr)
def test_hostile_free_text_option_refused(cli, tmp_path: Path, value: str) -> None:
    """Options fio takes as free text (description, verify_pattern, wait_for) get the same checks."""
    for key in ("description", "verify_pattern", "wait_for", "cpus_allowed"):
        path = suite(tmp_path, f'[workload.x]\ndescription = "d"\nfio = {{ rw = "read", {key} = {toml(value)} }}\n')
        res = cli("run", "--suite-file", str(path), "--workload", "x", "--dry-run")
        assert res.code == 2 and key in one_error_line(res), res


@pytest.mark.parametrize("key", HOSTILE_KEYS, ids=repr)
def test_hostile_option_name_refused(cli, tmp_path: Path, key: str) -> None:
    path = suite(tmp_path, f'[workload.x]\ndescription = "d"\nfio = {{ rw = "randread", {toml(key)} = "4k" }}\n')
    res = cli("run", "--suite-file", str(path), "--workload", "x", "--dry-run")
    assert res.code == 2
    assert "mine.toml" in one_error_line(res)


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=repr)
def test_hostile_workload_and_suite_names_refused(cli, tmp_path: Path, name: str) -> None:
    as_workload = suite(tmp_path, f'[workload.{toml(name)}]\ndescription = "d"\nfio = {{ rw = "randread" }}\n')
    res = cli("run", "--suite-file", str(as_workload), "--workload", name, "--dry-run")
    assert res.code == 2 and "mine.toml" in one_error_line(res), res
    as_suite = suite(tmp_path, f'[suite.{toml(name)}]\ndescription = "d"\nworkloads = ["rnd4k-q1t1-read"]\n')
    res = cli("run", "--suite-file", str(as_suite), "--suite", name, "--dry-run")
    assert res.code == 2 and "mine.toml" in one_error_line(res), res


@pytest.mark.parametrize("description", ["a\n[evil]", "a\rb", "a\x00b"], ids=repr)
def test_multi_line_description_refused(cli, tmp_path: Path, description: str) -> None:
    path = suite(tmp_path, f'[workload.x]\ndescription = {toml(description)}\nfio = {{ rw = "randread" }}\n')
    res = cli("run", "--suite-file", str(path), "--workload", "x", "--dry-run")
    assert res.code == 2 and "description" in one_error_line(res)


# --------------------------------------------------------------------------- command line: refused


@pytest.mark.parametrize(
    "args",
    [
        ("--size", EVIL),
        ("--size", "4k;rw=write"),
        ("--runtime", "1\n[evil]"),
        ("--runtime", "${HOME}"),
        ("--sweep", f"bs={EVIL}"),
        ("--sweep", "bs=4k;rw=write"),
        ("--sweep", "bs=${HOME}"),
        ("--sweep", "rw\n[evil]=read"),
        ("--label", "ok\n[evil]\nfilename=/etc/passwd"),
        ("--label", "ok\rnext"),
    ],
    ids=repr,
)
def test_hostile_command_line_values_refused(cli, tmp_path: Path, args: tuple[str, str]) -> None:
    res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(tmp_path), *args, "--dry-run")
    assert res.code == 2, res
    one_error_line(res)


@pytest.mark.parametrize("name", ["t\n[evil]", "t;x", "t#x", "t$x", "t\\x"], ids=repr)
def test_hostile_target_paths_refused(cli, tmp_path: Path, name: str) -> None:
    target = tmp_path / name
    target.mkdir()
    res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(target), "--dry-run")
    assert res.code == 2, res
    assert "target path" in one_error_line(res)
    assert os.listdir(target) == []


# --------------------------------------------------------------------------- what IS accepted stays inert


@needs_fio
def test_accepted_special_characters_stay_inside_their_value(cli, tmp_path: Path) -> None:
    """'=' and brackets inside a value, ':' in a target path: accepted, and fio reads them as
    one job with exactly these options (fio --showcmd on storbench's own job text)."""
    target = tmp_path / "dir:with=odd[chars]"
    target.mkdir()
    path = suite(
        tmp_path,
        '[workload.odd]\ndescription = "a [b] = c; but only in storbench\'s own description"\n'
        'fio = { rw = "randread", bs = "4k", description = "x=y [z] w]", verify_pattern = "0xdeadbeef", size = "1m" }\n',
    )
    res = cli("run", "--suite-file", str(path), "--workload", "odd", "--target", str(target), "--dry-run")
    assert res.code == 0, res.err
    [job] = dry_run_jobs(res.out)
    assert sections(job) == ["[odd]"]
    read = showcmd(job, tmp_path)
    assert read.startswith('fio --name=odd --rw=randread --bs=4k --description="x=y [z] w]" --verify_pattern=0xdeadbeef '), read
    assert read.count("--name=") == 1 and read.endswith("odd[chars]/storbench.testfile"), read


@needs_fio
def test_hostile_label_is_stored_verbatim_and_never_reaches_fio(cli, tmp_path: Path, monkeypatch) -> None:
    """A real fio run with a label full of fio syntax: stored as given, absent from the job file."""
    import subprocess as sp

    calls = []
    real_popen = sp.Popen

    class Recording(real_popen):  # every process storbench starts, as it started it
        def __init__(self, args, *a, **kw):
            calls.append((args, kw.get("shell", False)))
            super().__init__(args, *a, **kw)

    monkeypatch.setattr(sp, "Popen", Recording)
    label = "[evil] filename=/etc/passwd ; # ${HOME} $ncpus = ]"
    target = tmp_path / "t"
    target.mkdir()
    res = cli("run", "--workload", "rnd4k-q1t1-read", "--target", str(target), "--size", "16m", "--runtime", "1",
              "--label", label, "--json", "--no-report")
    assert res.code == 0, res.err
    [rec] = json.loads(res.out)
    assert rec["label"] == label
    con = sqlite3.connect(cli.db)
    (stored_label,) = con.execute("select label from runs").fetchone()
    (result_label, job_text) = con.execute("select label, job_text from results").fetchone()
    assert stored_label == result_label == label
    assert sections(job_text) == ["[rnd4k-q1t1-read]"]
    assert "evil" not in job_text and "passwd" not in job_text and "HOME" not in job_text
    assert showcmd(job_text, tmp_path).count("--name=") == 1
    assert os.listdir(target) == []
    # every process was started from an argument list, without a shell
    assert calls, "no process was recorded"
    for args, shell in calls:
        assert isinstance(args, (list, tuple)) and shell is False, (args, shell)
    assert any(Path(str(a[0])).name == "fio" for a, _ in calls)


# --------------------------------------------------------------------------- no shell anywhere in src/

SHELL_CALLS = {("os", "system"), ("os", "popen"), ("os", "execl"), ("os", "execlp"), ("os", "spawnl"),
               ("subprocess", "getoutput"), ("subprocess", "getstatusoutput"), ("pty", "spawn"),
               ("asyncio", "create_subprocess_shell")}
PROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output"}


def _python_files() -> list[Path]:
    files = sorted(SRC.rglob("*.py"))
    assert len(files) > 20
    return files


def test_no_shell_in_src_text() -> None:
    """A plain text search, as the issue asks: no shell=True, os.system or os.popen anywhere."""
    offenders = []
    for path in _python_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"shell\s*=\s*True|os\.system\s*\(|os\.popen\s*\(|getoutput\s*\(|create_subprocess_shell", line):
                offenders.append(f"{path.relative_to(SRC)}:{n}: {line.strip()}")
    assert offenders == []


def test_every_process_call_in_src_passes_an_argument_list() -> None:
    """Syntax-level: no shell helpers, no shell= other than False, and no string (literal,
    f-string, concatenation or %/format) as the command of subprocess.run/Popen/..."""
    offenders = []
    for path in _python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            where = f"{path.relative_to(SRC)}:{node.lineno}"
            if (owner, name) in SHELL_CALLS:
                offenders.append(f"{where}: {owner}.{name}")
            for kw in node.keywords:
                if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                    offenders.append(f"{where}: shell={ast.unparse(kw.value)}")
            if owner == "subprocess" and name in PROCESS_CALLS and node.args:
                cmd = node.args[0]
                stringy = (
                    (isinstance(cmd, ast.Constant) and isinstance(cmd.value, str))
                    or isinstance(cmd, ast.JoinedStr)
                    or (isinstance(cmd, ast.BinOp) and isinstance(cmd.op, (ast.Add, ast.Mod)))
                    or (isinstance(cmd, ast.Call) and isinstance(cmd.func, ast.Attribute) and cmd.func.attr in ("format", "join"))
                )
                if stringy:
                    offenders.append(f"{where}: {ast.unparse(cmd)[:60]}")
    assert offenders == []


def test_the_scans_would_catch_a_shell() -> None:
    """The two scans above really detect what they look for."""
    bad = 'import os, subprocess\nsubprocess.run("fio " + job, shell=True)\nos.system("ls")\nsubprocess.Popen(f"fio {x}")\n'
    tree = ast.parse(bad)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert any(any(k.arg == "shell" for k in c.keywords) for c in calls)
    assert re.search(r"shell\s*=\s*True", bad) and re.search(r"os\.system\s*\(", bad)
    assert any(isinstance(c.args[0], ast.JoinedStr) for c in calls if c.args)
