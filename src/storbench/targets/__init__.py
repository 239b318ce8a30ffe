"""Target kinds: where a workload's I/O goes, one module per kind.

======================  ======================================================================
``local``               ``dir`` (storbench's test file inside) and ``file`` (an existing file);
                        mounted shares (NFS, SMB, sshfs, GlusterFS FUSE) are directories too
``block``               ``block``: a block device, writes guarded (:mod:`storbench.targets.guard`)
``nbd``                 ``nbd``: an NBD export through fio's nbd engine (``nbd://``, ``nbd+unix://``,
                        or the unix socket of an image ``storbench matrix`` serves)
``iscsi``               ``iscsi``: an iSCSI LUN (``iscsi://HOST[:PORT]/IQN/LUN``) through qemu-nbd, a userspace
                        bridge storbench runs for the run, and fio's nbd engine; writes guarded;
                        ``iscsi-fio`` (``...?client=fio``): fio's own libiscsi engine, no bridge
``nfs``                 ``nfs``: a directory of an NFS export (``nfs://HOST/EXPORT/``): storbench's test file
                        there, served through a qemu-nbd bridge for the run, fio's nbd engine; or an existing
                        file of an export (``nfs://HOST/EXPORT/PATH/FILE``), read as it is;
                        ``nfs-fio`` (``...?client=fio``): fio's own nfs engine, no bridge
``gluster``             ``gluster``: a GlusterFS volume through fio's gfapi engine (``gluster://HOST/VOLUME``)
``rbd``                 ``rbd``: an RBD image through fio's rbd engine (``rbd:POOL/IMAGE``), writes guarded
``rados``               ``rados``: a RADOS pool through fio's rados engine (``rados:POOL``), writes guarded
``s3``                  ``s3``: objects under a prefix of the run's own in an S3 bucket, through fio's http engine
                        (``s3://BUCKET[/PREFIX]?endpoint=http://HOST:PORT``); a bucket made only when named
``ceph``                what the two Ceph kinds share: ``--ceph-conf``, ``--ceph-client``, the cluster's description
======================  ======================================================================

Each kind (:class:`~storbench.targets.base.TargetKind`) says how a ``--target`` of its
sort is checked (:meth:`resolve`, the edge), which fio options place a job on it
(:meth:`place`, pure), what the storage description describes and which space to
measure.  Adding a kind is one module and one line in :data:`KINDS`.

May import: storage, process, model, units and errors; never run, study or commands.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

from storbench.errors import TargetError
from storbench.model import Target, Workload

from .base import Placement, ResolveContext, TargetKind, drop_for_kind, engine_for_kind, fio_filename
from .block import BLOCK
from .gluster import GLUSTER
from .iscsi import ISCSI, ISCSI_FIO
from .local import DIR, FILE
from .nbd import NBD
from .nfs import NFS, NFS_FIO
from .rados import RADOS
from .rbd import RBD
from .s3 import S3

#: Every kind; those named by a URI prefix are tried first, then the path kinds by what the path is.
KINDS: tuple[TargetKind, ...] = (NBD, ISCSI, ISCSI_FIO, NFS, NFS_FIO, GLUSTER, RBD, RADOS, S3, DIR, FILE, BLOCK)
_BY_NAME = {k.name: k for k in KINDS}
#: the kinds --ceph-conf, --ceph-client and --ceph-timeout apply to, in words ("rbd:, rados: and s3:")
_CEPH_KINDS = (lambda names: ", ".join(names[:-1]) + " and " + names[-1])([k.prefixes[0] for k in KINDS if k.ceph_access])


def kind_of(target: Target) -> TargetKind:
    try:
        return _BY_NAME[target.kind]
    except KeyError:
        raise ValueError(f"unknown target kind {target.kind!r} (expected {', '.join(_BY_NAME)})") from None


def claiming_kind(spec: str) -> TargetKind | None:
    """The URI kind a ``--target`` names by its prefix (``s3://``, ``rbd:``, ...), else None (a path). Pure."""
    return next((kind for kind in KINDS if kind.claims(spec)), None)


def kind_names() -> tuple[str, ...]:
    return tuple(_BY_NAME)


def resolve(
    spec: str,
    destroy: Sequence[str] = (),
    workloads: Sequence[Workload] = (),
    *,
    db_path: str | None = None,
    ceph_conf: str | None = None,
    ceph_client: str | None = None,
    ceph_timeout_s: int | None = None,
) -> Target:
    """Check a ``--target`` and say what kind it is (one-line :class:`TargetError` otherwise).

    ``destroy`` are what the user named with ``--destroy-data``; ``workloads`` are what will
    run there (a block device or an export may be written only when named, see
    :mod:`storbench.targets.guard`); ``db_path`` is the results database (a path or a
    ``sqlite:///`` URL), whose device is never written; ``ceph_conf``, ``ceph_client`` and
    ``ceph_timeout_s`` are ``--ceph-conf``, ``--ceph-client`` and ``--ceph-timeout`` (Ceph kinds only).
    """
    ctx = ResolveContext(destroy=tuple(destroy), workloads=tuple(workloads), db_path=db_path, ceph_conf=ceph_conf,
                         ceph_client=ceph_client, ceph_timeout_s=ceph_timeout_s)  # fmt: skip
    ceph_given = ceph_conf or ceph_client or ceph_timeout_s is not None
    for kind in KINDS:
        if kind.claims(spec):
            if ceph_given and not kind.ceph_access:
                raise TargetError(f"target {spec!r}: --ceph-conf, --ceph-client and --ceph-timeout apply only to {_CEPH_KINDS} targets")
            return kind.resolve(spec, ctx)
    if ceph_given:
        raise TargetError(f"target {spec!r}: --ceph-conf, --ceph-client and --ceph-timeout apply only to {_CEPH_KINDS} targets")
    if not os.path.exists(spec):
        if "://" in spec:
            scheme = spec.split("://", 1)[0]
            raise TargetError(
                f"target {spec!r}: {scheme}:// is not a kind of target storbench knows "
                f"(give a directory, a file, a block device, or {', '.join(p for k in KINDS for p in k.prefixes[:2])}...)"
            )
        raise TargetError(f"target {spec!r} does not exist (give an existing directory or regular file)")
    real = os.path.realpath(spec)
    if os.path.isdir(real):
        return DIR.resolve(spec, ctx)
    if os.path.isfile(real):
        return FILE.resolve(spec, ctx)
    if stat.S_ISBLK(os.stat(real).st_mode):
        return BLOCK.resolve(spec, ctx)
    raise TargetError(f"target {spec!r} is neither a directory nor a regular file")


__all__ = [
    "KINDS",
    "Placement",
    "ResolveContext",
    "TargetKind",
    "claiming_kind",
    "drop_for_kind",
    "engine_for_kind",
    "fio_filename",
    "kind_names",
    "kind_of",
    "resolve",
]
