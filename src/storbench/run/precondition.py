"""Preconditioning before measurement, as the SNIA Solid State Storage Performance Test
Specification (PTS) prescribes: purge the device where it supports it, then write the whole
test area sequentially twice with 128 KiB blocks, so that every later measurement meets a
device in its written ("steady") state rather than fresh out of the box.

* **Purge**: ``blkdiscard`` of the exact block device (only when the kernel says the device
  discards: ``queue/discard_max_bytes`` > 0), never of anything else; a file is not purged
  (the filesystem decides where its blocks go), an export or image neither.
* **Workload independent preconditioning**: :data:`PRECONDITION_WORKLOAD`, two sequential
  passes (``loops=2``) of incompressible 128 KiB writes over the area the workloads use
  (their ``size``, else the whole device, file or export), queue depth 32, direct.

Writing is destroying: the caller has checked that the target may be written
(``--destroy-data`` naming the exact device, export, image or pool).
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from ..errors import FioParseError, TargetError
from ..model import Overrides, Target, Workload
from ..process import proc

if TYPE_CHECKING:
    from .fioexec import FioExecutor

__all__ = ["PRECONDITION_WORKLOAD", "discards", "precondition"]

PRECONDITION_WORKLOAD = Workload(
    name="precondition",
    description="SNIA PTS workload independent preconditioning: the area written sequentially twice, 128 KiB",
    options=(("rw", "write"), ("bs", "128k"), ("ioengine", "libaio"), ("iodepth", "32"), ("direct", "1"),
             ("loops", "2"), ("refill_buffers", "1"), ("end_fsync", "1")),
    headline="bw",
    origin="storbench",
)


def discards(device: str) -> bool:
    """True when the kernel says ``device`` (a block device path) takes discards."""
    name = os.path.basename(os.path.realpath(device))
    for path in (f"/sys/class/block/{name}/queue/discard_max_bytes",):
        try:
            with open(path) as fh:
                return int(fh.read().strip() or 0) > 0
        except (OSError, ValueError):
            continue
    return False


def precondition(target: Target, executor: FioExecutor, overrides: Overrides | None, workload: Workload) -> list[str]:
    """Purge (block devices that discard) and write the test area twice; the lines to say."""
    from ..fio.json import parse_fio_json
    from ..jobs.jobfile import build_job
    from .failures import fio_failure_reason
    from .fioexec import run_fio

    lines = []
    if target.kind == "block":
        if discards(target.path):
            started = time.monotonic()
            done = proc.run(["blkdiscard", target.path], timeout_s=600)
            if done.returncode != 0:
                raise TargetError(f"--precondition: blkdiscard {target.path} failed: {done.stderr.strip() or done.returncode}")
            lines.append(f"precondition: purged {target.path} with blkdiscard in {time.monotonic() - started:.1f} s")
        else:
            lines.append(f"precondition: {target.path} does not take discards (queue/discard_max_bytes is 0): not purged")
    size = (overrides.size if overrides is not None else None) or dict(workload.options).get("size")
    job = build_job(PRECONDITION_WORKLOAD, target, Overrides(size=size))
    started = time.monotonic()
    inv = run_fio(executor, job, lambda status: None)
    try:
        result = parse_fio_json(inv.output_text)
    except FioParseError:  # fio's own words say why, below
        result = None
    reason = fio_failure_reason(inv, result)
    if reason is not None:
        raise TargetError(f"--precondition of {target.display} failed: {reason}")
    written = sum(j.directions["write"].io_bytes for j in result.jobs if "write" in j.directions) if result else 0
    from ..units import format_bytes

    lines.append(f"precondition: wrote {format_bytes(written)} of {target.display} sequentially (128 KiB, twice over the area) in {time.monotonic() - started:.1f} s")
    return lines
