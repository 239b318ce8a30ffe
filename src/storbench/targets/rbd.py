"""RBD images, reached with fio's own librbd client (``ioengine=rbd``): no kernel mapping.

``--target rbd:POOL/IMAGE`` (with ``--ceph-conf PATH`` and ``--ceph-client NAME`` where the
defaults do not fit, see :mod:`.ceph`).  The job gets ``ioengine=rbd pool=POOL rbdname=IMAGE
clientname=CLIENT`` (the workload's engine replaced, with a comment saying so) and fio's
environment ``CEPH_CONF``; its size is the image's where the workload and ``--size`` name
none, and is capped at it where they name more.  The image is checked with ``rbd info`` and described with the cluster
(``ceph status``, ``ceph osd pool ls detail``, ``ceph osd metadata``, ``rbd du``).

Writing to an image destroys what it holds: a workload that writes runs only when
``--destroy-data`` repeats the target exactly, as for block devices, and never while anyone
else has the image open (``rbd status`` lists a watcher: a kernel mapping, a VM, a running
fio); reads are always allowed.  Reads of never-written parts of an image are answered by
librbd from the object map without asking any OSD (about 150k IOPS of nothing here): the
``sparse-read`` check judges them, ``--prefill`` writes the area first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.errors import TargetError
from storbench.model import Target

from . import ceph
from .base import Options, Placement, ResolveContext, capped_size, refuse_unnamed_writes

if TYPE_CHECKING:
    from storbench.storage import StorageInfo

PREFIX = "rbd:"


def parse_rbd_spec(spec: str) -> tuple[str, str]:
    """``rbd:POOL/IMAGE`` -> (pool, image); one-line TargetError otherwise."""
    form = "rbd:POOL/IMAGE"
    body = spec[len(PREFIX):] if spec.startswith(PREFIX) else ""
    pool, _, image = body.partition("/")
    if not image or "/" in image:
        raise TargetError(f"RBD target {spec!r}: give {form} (names of letters, digits, '.', '_', '-')")
    return ceph.check_name("RBD", spec, pool, form), ceph.check_name("RBD", spec, image, form)


class RbdKind(ceph.CephKind):
    name = "rbd"
    prefixes = (PREFIX,)
    engine = "rbd"
    own_options = frozenset({"pool", "rbdname", "clientname", "clustername"})
    noun = "an RBD image"

    def resolve(self, spec: str, ctx: ResolveContext) -> Target:
        from storbench.storage.ceph import parse_rbd_info, parse_rbd_status

        pool, image = parse_rbd_spec(spec)
        target = Target(kind="rbd", path=spec, params=ceph.access_params(ctx))
        writing = refuse_unnamed_writes(spec, ctx, f"RBD image {pool}/{image}")
        rc, out, err = ceph.cli(target, "rbd", "info", "--format", "json", f"{pool}/{image}")
        if rc == 127:
            if writing:
                raise TargetError(
                    f"refusing to write to RBD image {pool}/{image} [rbd-in-use]: storbench cannot see who else has it open "
                    "without the rbd command (install ceph-common)"
                )
            return target
        if rc != 0:
            if ceph.unreachable(rc, out, err):
                raise TargetError(f"cannot reach the Ceph cluster of {ceph.conf_of(target)}: {ceph.first_line(out, err, rc)}")
            raise TargetError(f"RBD image {pool}/{image}: {ceph.first_line(out, err, rc)} (create it with rbd create --size 1G {pool}/{image})")
        try:
            size = parse_rbd_info(out).size_bytes
        except ValueError as exc:
            raise TargetError(f"RBD image {pool}/{image}: {exc}") from None
        if size:
            target = Target(kind="rbd", path=spec, params=target.params + (("size", str(size)),))
        if writing:
            rc, out, err = ceph.cli(target, "rbd", "status", "--format", "json", f"{pool}/{image}")
            try:
                watchers = parse_rbd_status(out) if rc == 0 else None
            except ValueError:
                watchers = None
            if watchers is None:
                raise TargetError(f"refusing to write to RBD image {pool}/{image} [rbd-in-use]: rbd status failed ({ceph.first_line(out, err, rc)}), so storbench cannot tell whether it is in use")
            if watchers:
                raise TargetError(
                    f"refusing to write to RBD image {pool}/{image} [rbd-in-use]: it is open elsewhere ({len(watchers)} watcher(s): "
                    f"{', '.join(watchers[:3])}; a kernel mapping, a VM or another benchmark); unmap or stop it first"
                )
        return target

    def place(self, target: Target, options: Options, *, test_file_name: str, export_size: str | None) -> Placement:
        pool, image = parse_rbd_spec(target.path)
        size = export_size or target.param("size")
        notes = capped_size(options, size, "the RBD image's")
        return Placement(
            options=(("pool", pool), ("rbdname", image), ("clientname", ceph.client_of(target))),
            notes=tuple(notes),
            env=ceph.fio_env(target),
        )

    def describe(self, target: Target, fio_version: str | None) -> StorageInfo | None:
        import dataclasses

        from storbench.storage import StorageInfo, describe_host
        from storbench.storage.ceph import parse_rbd_du, parse_rbd_info, parse_rbd_status

        notes: list[str] = []
        host = describe_host(fio_version, notes=notes)
        pool, image = parse_rbd_spec(target.path)
        info = ceph.describe_cluster(target, pool, notes)
        rc, out, err = ceph.cli(target, "rbd", "info", "--format", "json", f"{pool}/{image}")
        if rc == 0:
            try:
                img = parse_rbd_info(out)
                rc, out, err = ceph.cli(target, "rbd", "du", "--format", "json", f"{pool}/{image}")
                if rc == 0:
                    img = dataclasses.replace(img, used_bytes=parse_rbd_du(out, image))
                rc, out, err = ceph.cli(target, "rbd", "status", "--format", "json", f"{pool}/{image}")
                if rc == 0:
                    img = dataclasses.replace(img, watchers=len(parse_rbd_status(out)))
                info = dataclasses.replace(info, image=img)
            except ValueError as exc:
                notes.append(f"RBD image {pool}/{image} not described: {exc}")
        elif rc != 127:
            notes.append(f"RBD image {pool}/{image} not described: rbd info failed: {ceph.first_line(out, err, rc)}")
        return StorageInfo(target=target.path, target_kind="rbd", filesystem=None, devices=(), host=host,
                           notes=tuple(notes), ceph=info)  # fmt: skip


RBD = RbdKind()
