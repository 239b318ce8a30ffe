"""The job of an application load (pgbench, dbench, fs_mark, sysbench fileio) on one target (pure).

A load runs in a directory of its own under a directory target,
``TARGET/.storbench-load-<pid>-<workload>`` (:func:`load_directory`): storbench creates it before
the load and removes it after (after Ctrl-C too; a killed run's is removed at the next start on
that target, the PID in its name telling whose it was).  :func:`build_load_job` makes the
:class:`~storbench.model.JobSpec`: its options are the load's own with ``--runtime``/``--size``
applied, its text the exact command lines in order (what ``--dry-run`` prints) and what the load
creates there.
"""

from __future__ import annotations

import dataclasses
import re
import shlex

from storbench.errors import TargetError
from storbench.loads import tool as load_tool
from storbench.loads import with_overrides
from storbench.model import JobSpec, Overrides, Target, Workload
from storbench.units import parse_duration, parse_size

#: a load's directory under its target, with the PID of the storbench that made it
LOAD_DIR_PREFIX = ".storbench-load-"
LOAD_DIR_RE = re.compile(r"^\.storbench-load-(\d+)-")


def load_directory(target_path: str, workload: str, pid: int) -> str:
    return f"{target_path.rstrip('/') or '/'}/{LOAD_DIR_PREFIX}{pid}-{workload}".replace("//", "/")


def _size_text(size: str) -> str:
    """``--size`` (fio's form: 1g, 512m) as a load's size (1024M)."""
    n = parse_size(size)
    return f"{n // 2**20}M" if n % 2**20 == 0 else f"{max(1, n // 1024)}K"


def build_load_job(workload: Workload, target: Target, overrides: Overrides | None, *, pid: int) -> JobSpec:
    """The job of the load ``workload`` on the directory ``target``; :class:`TargetError` in one
    line for a target that is not a directory."""
    tool = load_tool(workload.tool)
    if target.kind != "dir":
        raise TargetError(
            f"workload {workload.name!r} runs {tool.name}, which needs a directory on a mounted filesystem; "
            f"{target.display} is a {target.kind} target (give a directory on it, or let 'storbench matrix' make a filesystem there)"
        )
    overrides = overrides or Overrides()
    runtime_s = parse_duration(overrides.runtime) if overrides.runtime is not None else None
    size = _size_text(overrides.size) if overrides.size is not None else None
    options = with_overrides(tool, [(k, v or "") for k, v in workload.options], runtime_s=runtime_s, size=size)
    directory = load_directory(target.path, workload.name, pid)
    steps = tool.steps(dict(options), directory)
    lines = [f"# storbench: {tool.name} in {directory} (made for this workload, removed after it)",
             f"# it creates: {steps.creates}"]  # fmt: skip
    if tool.server == "postgresql":
        lines.append(f"# before it: a private PostgreSQL cluster initdb'd in {directory}/data, listening on its socket in {directory} only")
    lines += [f"# prepare (not measured): {shlex.join(argv)}" for argv in steps.prepare]
    lines.append(shlex.join(steps.measure))
    lines += [f"# after it: {shlex.join(argv)}" for argv in steps.cleanup]
    frozen = tuple(options)
    return JobSpec(workload=dataclasses.replace(workload, options=frozen), target=target, job_text="\n".join(lines) + "\n",
                   test_files=(), options=frozen)  # fmt: skip
