"""Block-device targets: a device fio opens with ``filename=`` (reads always; writes guarded).

Writing destroys what is on the device, so a workload that writes runs only when the
data-safety guard (:mod:`storbench.targets.guard`) lets it: not mounted, no holders, no signature,
not the device of ``/`` or of the results database, and ``--destroy-data`` repeating the
target exactly.  fio gets the device that was checked (its real path), not a name that
could be re-pointed later.
"""

from __future__ import annotations

from collections.abc import Sequence

from storbench.model import Target

from .base import ResolveContext, TargetKind


class BlockKind(TargetKind):
    name = "block"
    noun = "a block device"

    def resolve(self, spec: str, ctx: ResolveContext) -> Target:
        from storbench.targets.guard import check_block_target, gather_device_facts, workload_writes

        writing = [w.name for w in ctx.workloads if workload_writes(w.options)]
        facts = gather_device_facts(spec, db_path=ctx.db_path, probe_exclusive=bool(writing))
        check_block_target(facts, writes=bool(writing), destroy=tuple(ctx.destroy), writing=writing)
        return Target(kind="block", path=facts.realpath)

    def space_paths(self, target: Target, test_files: Sequence[str]) -> tuple[list[str], str] | None:
        return None  # a device has no filesystem of its own to measure


BLOCK = BlockKind()
