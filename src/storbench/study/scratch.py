"""Edge: the scratch devices setups are built on -- a real device that passed the data-safety
guard (``--device DEV --destroy-data DEV``) or loop files storbench creates, attaches with direct
I/O, detaches and removes (``--loop-file``/``--loop-files``).

May import: the plan, the build stage's :class:`~storbench.study.build.System` and
:class:`~storbench.study.build.Teardown`, the target guard, units and errors."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import TargetError
from ..units import parse_size
from .build import Observer, System, Teardown, attach_loop_device, critical, rmdir_quiet
from .plan import Scratch


@dataclass(frozen=True)
class ScratchDevice:
    """The device setups are built on: its path (what mkfs is given) and kernel name."""

    path: str | None
    kname: str | None


def check_scratch_device(path: str, destroy: Sequence[str], *, db_path: str | None, sys_root: str = "/sys") -> ScratchDevice:
    """The guard for ``--device``: every rule of :mod:`storbench.targets.guard` except that a signature
    is accepted when ``--destroy-data`` names the device exactly (the matrix wipes it anyway)."""
    from ..targets.guard import BlockTargetRefused, check_block_target, gather_device_facts

    facts = gather_device_facts(path, db_path=db_path, sys_root=sys_root, probe_exclusive=True)
    named = path in destroy
    try:
        check_block_target(
            dataclasses.replace(facts, signatures=()) if named else facts,
            writes=True, destroy=tuple(destroy), writing=("storbench matrix",),
        )  # fmt: skip
    except BlockTargetRefused as exc:
        if exc.rule in ("signature", "destroy-data", "destroy-data-mismatch"):
            found = f" (it holds {', '.join(dict.fromkeys(facts.signatures))})" if facts.signatures else ""
            raise BlockTargetRefused(
                exc.rule,
                f"refusing to use block device {path!r} [{exc.rule}]: storbench matrix wipes it and builds every "
                f"setup on it, destroying its data{found}; pass --destroy-data {path}, spelled exactly as --device",
            ) from None
        raise
    return ScratchDevice(path=facts.realpath, kname=facts.kname)


def loop_files(scratch: Scratch, td: Teardown, keep_files: bool) -> list[str]:
    """The loop file (``--loop-file``), or the paths of ``count`` new files in a directory
    storbench makes under ``scratch.path`` (``--loop-files N``; removed with them)."""
    if not scratch.count:
        return [os.path.abspath(scratch.path or "")]
    parent = os.path.abspath(scratch.path or ".")
    with critical():
        try:
            folder = tempfile.mkdtemp(prefix=".storbench-loops-", dir=parent)
        except OSError as exc:
            raise TargetError(f"cannot make the loop files' directory in {parent}: {exc.strerror or exc}") from None
        if not keep_files:
            td.add(f"remove {folder}", lambda: rmdir_quiet(folder))
    return [os.path.join(folder, f"disk{i}.img") for i in range(scratch.count)]


def attach_loop(scratch: Scratch, system: System, td: Teardown, observe: Observer, keep_files: bool) -> ScratchDevice:
    path = os.path.abspath(scratch.path or "")
    if os.path.lexists(path):
        raise TargetError(f"--loop-file {path} exists; give a new path (storbench creates the file and removes it afterwards)")
    size = parse_size(scratch.size or "0")
    with critical():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as exc:
            raise TargetError(f"cannot create --loop-file {path}: {exc.strerror or exc}") from None
        if not keep_files:
            td.add(f"remove {path}", lambda: _unlink(path))
    try:
        os.ftruncate(fd, size)
    except OSError as exc:
        raise TargetError(f"cannot make --loop-file {path} {scratch.size} large: {exc.strerror or exc}") from None
    finally:
        os.close(fd)

    dev = attach_loop_device(path, system, td, observe, direct_io=True)
    kname = os.path.basename(dev)
    return ScratchDevice(path=dev, kname=kname)


def loop_direct_io(kname: str, sys_root: str = "/sys") -> bool | None:
    """Whether the loop device reads its backing file with direct I/O (``loop/dio``); None: cannot tell."""
    try:
        with open(os.path.join(sys_root, "block", kname, "loop", "dio"), encoding="ascii") as fh:
            return fh.read().strip() == "1"
    except OSError:
        return None


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
