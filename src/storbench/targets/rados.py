"""RADOS pools, reached with fio's own librados client (``ioengine=rados``): objects, no image.

``--target rados:POOL`` (with ``--ceph-conf PATH`` and ``--ceph-client NAME``, see
:mod:`.ceph`).  The job gets ``ioengine=rados pool=POOL clientname=CLIENT conf=CONF`` (the
engine reads ``/etc/ceph/ceph.conf`` otherwise, ignores ``CEPH_CONF``, and fio 3.33
segfaults when it cannot read it, so the configuration is always given) and writes one
object, named like storbench's test file (``storbench.testfile``), of the job's size.
The engine cannot sync (fio 3.33 segfaults on ``end_fsync=1``), so a workload's sync
options are left out, with a comment in the job saying so; a RADOS write is durable when
it is acknowledged.  The
engine creates that object even for a read workload, and cannot remove it (``unlink=1``
does nothing there), so storbench removes it after the run with ``rados rm``.

Writing to a pool is refused unless ``--destroy-data`` repeats the target exactly and the
pool holds no object storbench did not write (names that do not start with
``storbench.``): give storbench a pool of its own.  Reads are always allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from storbench.errors import TargetError
from storbench.model import Target

from . import ceph
from .base import Options, Placement, ResolveContext, refuse_unnamed_writes

if TYPE_CHECKING:
    from storbench.storage import StorageInfo

PREFIX = "rados:"
#: options that make fio issue syncs, which the rados engine cannot do (fio 3.33 segfaults on end_fsync=1)
SYNC_OPTIONS = frozenset({"fsync", "fdatasync", "end_fsync", "fsync_on_close", "write_barrier"})


def parse_rados_spec(spec: str) -> str:
    """``rados:POOL`` -> the pool; one-line TargetError otherwise."""
    return ceph.check_name("RADOS", spec, spec[len(PREFIX):] if spec.startswith(PREFIX) else "", "rados:POOL")


def parse_rados_ls(text: str) -> tuple[str, ...]:
    """``rados ls --all`` -> the object names (``NAMESPACE<TAB>NAME`` lines, the namespace empty by default)."""
    return tuple(line.split("\t")[-1] for line in text.splitlines() if line.strip())


class RadosKind(ceph.CephKind):
    name = "rados"
    prefixes = (PREFIX,)
    engine = "rados"
    own_options = frozenset({"pool", "clientname", "conf", "busy_poll"})
    needs_size = True
    noun = "a RADOS pool"
    remote_test_file = True

    def resolve(self, spec: str, ctx: ResolveContext) -> Target:
        pool = parse_rados_spec(spec)
        target = Target(kind="rados", path=spec, params=ceph.access_params(ctx))
        writing = refuse_unnamed_writes(spec, ctx, f"RADOS pool {pool}", harm="writing objects into it")
        rc, out, err = ceph.cli(target, "rados", "--pool", pool, "ls", "--all")
        if rc == 127:
            if writing:
                raise TargetError(f"refusing to write to RADOS pool {pool} [rados-foreign-objects]: storbench cannot list what it holds without the rados command (install ceph-common)")
            return target
        if rc != 0:
            if ceph.unreachable(rc, out, err):
                raise TargetError(f"cannot reach the Ceph cluster of {ceph.conf_of(target)}: {ceph.first_line(out, err, rc)}")
            raise TargetError(f"RADOS pool {pool}: {ceph.first_line(out, err, rc)} (create one for storbench: ceph osd pool create {pool})")
        foreign = [o for o in parse_rados_ls(out) if not o.startswith(ceph.OBJECT_PREFIX)]
        if writing and foreign:
            raise TargetError(
                f"refusing to write to RADOS pool {pool} [rados-foreign-objects]: it holds {len(foreign)} object(s) storbench "
                f"did not write ({', '.join(sorted(foreign)[:3])}{', ...' if len(foreign) > 3 else ''}); give storbench a pool of its own "
                f"(ceph osd pool create storbench-bench)"
            )
        return target

    def place(self, target: Target, options: Options, *, test_file_name: str, export_size: str | None) -> Placement:
        pool = parse_rados_spec(target.path)
        if not test_file_name.startswith(ceph.OBJECT_PREFIX):
            raise ValueError(f"invalid RADOS object name {test_file_name!r}")
        dropped = [k for k, v in options if k in SYNC_OPTIONS and v not in ("0",)]
        options[:] = [(k, v) for k, v in options if k not in SYNC_OPTIONS]
        notes = (f"{', '.join(dropped)} left out: fio's rados engine has no sync (fio 3.33 crashes on one), and a RADOS write is durable when acknowledged",) if dropped else ()
        return Placement(
            notes=notes,
            options=(("pool", pool), ("clientname", ceph.client_of(target)), ("conf", ceph.conf_of(target)),
                     ("filename", test_file_name)),
            env=ceph.fio_env(target),
        )

    def remove_remote(self, target: Target, names: Sequence[str]) -> bool:
        pool = parse_rados_spec(target.path)
        for name in names:
            ceph.cli(target, "rados", "--pool", pool, "rm", name)
        return True

    def describe(self, target: Target, fio_version: str | None) -> StorageInfo | None:
        from storbench.storage import StorageInfo, describe_host

        notes: list[str] = []
        host = describe_host(fio_version, notes=notes)
        info = ceph.describe_cluster(target, parse_rados_spec(target.path), notes)
        return StorageInfo(target=target.path, target_kind="rados", filesystem=None, devices=(), host=host,
                           notes=tuple(notes), ceph=info)  # fmt: skip


RADOS = RadosKind()
