"""What a run imports before its first fio starts (issue 24: start-up to the first fio exec).

The start-up figure itself is measured in ``make bench`` (never asserted here: it is the
machine's); what is asserted is what decides it on every machine: the modules a run of a
local directory has imported at the moment its first fio job is started.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import storbench.model as model
from storbench.entry import runs_fio_here
from storbench.model import results

from conftest import needs_fio

#: records fio's first job spawn: which storbench modules were imported then
PROBE = textwrap.dedent(
    """
    import json, subprocess, sys

    seen = []
    versions = []  # for each fio --version started: was the CLI imported by then?
    real_init = subprocess.Popen.__init__

    def init(self, args, *a, **k):
        argv = [str(x) for x in args] if not isinstance(args, (str, bytes)) else [str(args)]
        is_fio = any(x.endswith("/fio") or x == "fio" for x in argv)  # maybe behind setpriv --pdeathsig
        if is_fio and argv[-1] == "--version":
            versions.append("storbench.cli" in sys.modules)
        # its first job (a job file)
        if not seen and is_fio and argv[-1].endswith(".fio"):
            seen.append(argv)
            with open(OUT, "w") as f:  # storbench leaves with os._exit: written here, not after main()
                modules = sorted(m for m in sys.modules if m.startswith("storbench"))
                json.dump({"argv": argv, "modules": modules, "versions": versions}, f)
        return real_init(self, args, *a, **k)

    subprocess.Popen.__init__ = init
    sys.argv = ["storbench", *sys.argv[2:]]
    from storbench.entry import main

    sys.exit(main())
    """
)


def test_result_records_keep_their_public_names():
    """``storbench.model``'s result names are the ones in :mod:`storbench.model.results`."""
    for name in sorted(model.RESULT_NAMES):
        assert getattr(model, name) is getattr(results, name), name
        assert name in dir(model)
    from storbench.model import Finding, FioResult  # the way users and plugins import them
    from storbench.record import ResultRecord

    assert (Finding.__module__, FioResult.__module__) == ("storbench.model.results",) * 2
    assert ResultRecord.__module__ == "storbench.record"  # one floor up: it holds the storage records
    assert "ResultRecord" not in model.RESULT_NAMES
    assert FioResult.__name__ == "FioResult"
    try:
        model.NotARecord  # noqa: B018  (the attribute access is what is tested)
    except AttributeError as exc:
        assert "NotARecord" in str(exc)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "--suite", "quick", "--target", "/mnt"], True),
        (["--db", "/tmp/r.sqlite", "run", "--workload", "x"], True),
        (["--db=postgresql://h/db", "run"], True),
        (["run", "--dry-run", "--target", "/mnt"], False),
        (["run", "--show-plan"], False),
        (["run", "--host", "a", "--host", "b"], False),
        (["run", "--hosts=hosts.txt"], False),
        (["run", "--help"], False),
        (["list"], False),
        (["--db", "run"], False),  # "run" is --db's value here; no command follows
        (["--version"], False),
        (["--no-such-option", "run"], False),
        ([], False),
    ],
)
def test_which_words_start_fio_version_before_the_cli(argv, expected):
    assert runs_fio_here(argv) is expected


@needs_fio
def test_a_run_starts_its_first_fio_before_importing_what_comes_after_it(tmp_path: Path):
    target = tmp_path / "t"
    target.mkdir()
    out = tmp_path / "probe.json"
    script = "OUT = " + repr(str(out)) + "\n" + PROBE
    argv = [
        "--db", str(tmp_path / "r.sqlite"), "run", "--workload", "seq1m-q8t1-read", "--target", str(target),
        "--size", "8m", "--runtime", "300ms", "--label", "startup", "--json",
    ]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-c", script, "probe", *argv], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    probe = json.loads(out.read_text())
    assert probe["argv"][-1].endswith("job.fio"), probe["argv"]  # the workload's own fio
    assert probe["versions"] == [False]  # one fio --version, started before the CLI was imported
    modules = set(probe["modules"] or ())
    assert "storbench.run.runner" in modules  # the snapshot is the run's, taken at its first fio job
    # the result records, parsing fio's JSON, network ceilings, the checks, the store, the renderers:
    # all needed only once the first fio has run (a local directory meets no ZFS, Ceph or share)
    late = {
        "storbench.model.results", "storbench.fio.json", "storbench.net", "storbench.checks", "storbench.store",
        "storbench.render", "storbench.serialize", "storbench.storage.zfs", "storbench.storage.ceph",
    }  # fmt: skip
    assert modules & late == set()
    # and the run itself was measured and stored as always
    (record,) = json.loads(proc.stdout)
    assert record["workload"] == "seq1m-q8t1-read" and record["jobs"][0]["read"]["io_bytes"] > 0
    assert sorted(p.name for p in target.iterdir()) == []
