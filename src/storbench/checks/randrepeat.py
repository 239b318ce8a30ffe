"""The same random offsets on every run.

Check (id): ``randrepeat-on`` -- fio seeds its random offsets the same way on every run
unless ``randrepeat=0`` (its default is ``randrepeat=1``).  A random workload then
touches the same blocks in the same order every repetition, and caches in arrays,
controllers and SSDs (and the page cache with buffered I/O) warmed by one run help the
next.  A warning when this run had several repetitions, info for a single one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.model import Finding

from ._common import CheckInfo, finding, fix_of, flag, has, is_random, rw_mode

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

INFO = {
    "randrepeat-on": CheckInfo(
        title="Same random offsets every run",
        explanation="With randrepeat=1 (fio's default) every run of a random workload touches the same offsets in the same order, so caches in arrays, controllers and SSDs warmed by one repetition help the next.",
        evidence="A random workload (randread, randwrite, randrw, percentage_random) without randrepeat=0: warning with two or more repetitions, info with one.",
        fix="Set randrepeat=0.",
        severities=("info", "warning"),
    ),
}


def _randrepeat(ctx: CheckContext) -> Finding | None:
    if not is_random(ctx.options) or has(ctx.options, "read_iolog"):  # a replay's offsets are its log's
        return None
    if has(ctx.options, "randrepeat") and not flag(ctx.options, "randrepeat", default=True):
        return None
    setting = "randrepeat=1" if has(ctx.options, "randrepeat") else "randrepeat not set (fio's default is 1)"
    n = len(ctx.results)
    if n > 1:
        return finding(
            "randrepeat-on",
            "warning",
            f"{setting}: all {n} repetitions of this {rw_mode(ctx.options)} workload used the same random offsets in "
            "the same order, so caches warmed by one repetition (array, controller, SSD) helped the next",
            fix_of(INFO["randrepeat-on"]),
        )
    return finding(
        "randrepeat-on",
        "info",
        f"{setting}: every run of this {rw_mode(ctx.options)} workload touches the same offsets in the same order, "
        "so a repeated or later run finds them warm in array, controller and SSD caches",
        fix_of(INFO["randrepeat-on"]),
    )


def check(ctx: CheckContext) -> list[Finding]:
    found = _randrepeat(ctx)
    return [found] if found is not None else []
