"""Benchmarking pitfalls, found in a run's records (or before it).  Pure: no I/O.

Each check is a small function over records that returns :class:`storbench.model.Finding`
objects: a stable check id, a severity (``info``, ``warning``, ``invalid``), a plain
sentence of what happened with the numbers that prove it, and the one-line fix.
``invalid`` means the figure is not a measurement of the target and must not be used.

Each family of pitfall is one module of this package (``cache``, ``direct``, ``compression``,
...), named once, in :data:`FAMILIES` (the order its findings are reported in).  A family
module has ``INFO`` (its check ids, each with title, explanation, evidence, fix and
severities), ``check(ctx)`` (after a repetition) and, when it can judge before the run,
``preflight_workload`` (per workload) or ``preflight_target`` (once per target): the
registry, the preflight lists and ``docs/findings.md`` are derived from those.

Entry points: :func:`run_checks` (after a repetition, over all repetitions so far),
:func:`preflight` (before running: the checks that need no measurement -- cache size,
memory filesystems, ZFS ARC, compression, write cache), :data:`CHECKS` (every id with
its explanation, for the README and ``storbench doctor``) and
:func:`format_checks_markdown` (``docs/findings.md``).

The edge that measures what the records hold (``os.stat``, ``os.statvfs``, the activity
sampler) is the runner's; :meth:`FileState.from_stat` and :meth:`FsSpace.from_statvfs`
only convert what it read.

May import: the records (:mod:`storbench.model`, :mod:`storbench.activity`), storage, stats, loads,
metrics (the figures a result is judged by, one meaning everywhere), trace (a replay's fidelity),
units and errors: pure,
no edge; never run, store, render or commands.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from types import MappingProxyType

from storbench.model import SEVERITIES, Finding

from ._common import CheckInfo
from .context import CheckContext, FileState, FsSpace, PreflightContext

__all__ = [
    "CHECKS",
    "SUPERSEDED_BY",
    "CheckContext",
    "CheckInfo",
    "FileState",
    "FsSpace",
    "PreflightContext",
    "format_checks_markdown",
    "preflight",
    "run_checks",
]


# --------------------------------------------------------------------------- registry

#: The check families, in the order their findings are reported: the one place they are named.
FAMILIES = tuple(
    importlib.import_module(f"{__name__}.{name}")
    for name in (
        "cache", "direct", "compression", "sparse", "writecache", "duration", "latency", "fsync", "variation",
        "cliff", "cpu", "queue", "randrepeat", "impossible", "pool", "share", "objects", "replay", "hardware", "loads",
    )
)  # fmt: skip
#: The families that judge an application load's result (its options are not fio's): its own
#: pitfalls and the spread of its repetitions.
LOAD_FAMILIES = tuple(f for f in FAMILIES if f.__name__.rsplit(".", 1)[-1] in ("loads", "variation"))
#: The families that also run before a run (they need no measurement): those with a
#: ``preflight_workload``, in the order above; the sparse-file check last, as it always was.
PREFLIGHT_FAMILIES = tuple(
    sorted((f for f in FAMILIES if hasattr(f, "preflight_workload")), key=lambda f: f.__name__.endswith(".sparse"))
)
#: The families whose before-the-run findings are about the target, not a workload (said once):
#: those with a ``preflight_target``.
PREFLIGHT_TARGET_FAMILIES = tuple(f for f in FAMILIES if hasattr(f, "preflight_target"))

#: Every check id with its title, explanation, evidence, fix and severities.
CHECKS: Mapping[str, CheckInfo] = MappingProxyType({cid: info for fam in FAMILIES for cid, info in fam.INFO.items()})

#: A finding is dropped when one of these, which names its cause more precisely, was
#: found for the same workload (a cache that answered also makes fio CPU-bound and the
#: figure faster than the device; a proven cache hit makes the size warning redundant).
SUPERSEDED_BY: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "cache-small-file": frozenset({"page-cache"}),
        "zfs-arc": frozenset({"page-cache", "direct-ignored"}),
        "direct-ignored": frozenset({"sparse-read"}),
        "faster-than-device": frozenset({"page-cache", "direct-ignored", "sparse-read", "memory-filesystem"}),
        "fio-cpu-bound": frozenset(
            {"page-cache", "direct-ignored", "sparse-read", "memory-filesystem", "buffered-write-no-sync"}
        ),
    }
)


def _drop_superseded(found: list[Finding]) -> list[Finding]:
    ids = {f.check for f in found}
    return [f for f in found if not (SUPERSEDED_BY.get(f.check, frozenset()) & ids)]


# --------------------------------------------------------------------------- entry points


def run_checks(ctx: CheckContext) -> tuple[Finding, ...]:
    """Every post-run check over ``ctx``, in family order, each finding naming ``ctx.workload``."""
    found: list[Finding] = []
    for family in FAMILIES if ctx.tool == "fio" else LOAD_FAMILIES:
        found.extend(family.check(ctx))
    return tuple(dataclasses.replace(f, workload=ctx.workload) for f in _drop_superseded(found))


def preflight(ctx: PreflightContext) -> tuple[Finding, ...]:
    """The checks that need no measurement: the target's own (the drives, the RAID controller)
    once, then every workload's (in the mapping's order)."""
    out: list[Finding] = [f for family in PREFLIGHT_TARGET_FAMILIES for f in family.preflight_target(ctx.storage)]
    for workload, options in ctx.options_by_workload.items():
        found: list[Finding] = []
        for family in PREFLIGHT_FAMILIES:
            found.extend(family.preflight_workload(options, ctx.storage, ctx.mem_bytes))
        out.extend(dataclasses.replace(f, workload=workload) for f in found)
    return tuple(out)


# --------------------------------------------------------------------------- documentation

_DOC_HEADER = """\
# Findings

<!-- Generated from storbench.checks.CHECKS by format_checks_markdown(); edit the registry, not this file.
     tests/checks/test_checks.py fails when they differ (STORBENCH_REGEN_DOCS=1 rewrites this file). -->

After every repetition storbench checks the result, the fio options, the storage under the
target and what the devices did during the run, and reports each pitfall it finds as a
finding: the check id, a severity, what happened with the numbers that prove it, and the fix.

Severities: **info** is worth knowing; **warning** means the figure may mislead;
**invalid** means the figure is not a measurement of the target (it measured a cache, memory
or nothing, or it is impossible): do not use it.  Checks marked *before the run* also run in
`storbench doctor`, from the options and the storage alone.
"""


def format_checks_markdown() -> str:
    """``docs/findings.md``: a summary table and one section per check id, from :data:`CHECKS`."""
    lines = [_DOC_HEADER, "| check | what | severity | before the run |", "|---|---|---|---|"]
    for cid, info in CHECKS.items():
        lines.append(f"| `{cid}` | {info.title} | {', '.join(info.severities)} | {'yes' if info.preflight else ''} |")
    for cid, info in CHECKS.items():
        lines += [
            "",
            f"## `{cid}`",
            "",
            f"**{info.title}.** {info.explanation}",
            "",
            f"- Evidence: {info.evidence}",
            f"- Fix: {info.fix}",
            f"- Severity: {', '.join(info.severities)}" + ("; also before the run." if info.preflight else "."),
        ]
    return "\n".join(lines) + "\n"


def _check_registry() -> None:
    for cid, info in CHECKS.items():
        bad = [s for s in info.severities if s not in SEVERITIES]
        if bad or not (info.title and info.explanation and info.evidence and info.fix):
            raise AssertionError(f"check {cid!r} is incompletely registered")


_check_registry()
