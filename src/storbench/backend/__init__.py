"""What the storage back-end itself reported while fio ran, beside the block devices' counters.

A target's back-end is the system under its filesystem that keeps counters of its own: a ZFS
pool (per-vdev and per-member I/O, the ARC, the pool's state; :mod:`.zfs`), an NBD export
(its allocation map before the run: what was never written; :mod:`.nbd`), the userspace bridge
an iSCSI or NFS target went through (its CPU while fio ran; :mod:`.bridge`), a Ceph pool
(what its OSDs served during the run, what of an RBD image was never written; :mod:`.ceph`).  Each kind has a
pure module (records and how they are computed) and a sampler (the edge that runs the
commands while fio runs: :mod:`.zfs_sampler`); what they all hold is :mod:`.activity`, which the
members import (never this face).  :func:`sampler_for` picks the sampler for a
storage description; :func:`backend_to_dict` / :func:`backend_from_dict` are the stored,
versioned form.

May import: storage (the descriptions it samples under), targets, jobs, process (the samplers'
children) and errors; never run, study, store, render or commands.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from storbench.jsontypes import JSONMapping, JSONObject, JSONValue

from ..errors import StoreError
from ..model import versions
from ..storage.codec import decode_dataclass, encode_dataclasses
from .activity import BackendActivity, BackendSampler

if TYPE_CHECKING:  # each kind's records are imported where that kind is met (its sampler, the stored form)
    from ..model import Target
    from ..storage import StorageInfo
    from .zfs import ZfsActivity

#: Version of :func:`backend_to_dict`'s form.
FORMAT_VERSION = versions.BACKEND  # the history: storbench.model.versions


class _Samplers:
    """Several samplers around one run, as one (entered in order, left in reverse)."""

    def __init__(self, samplers: list[BackendSampler]) -> None:
        self.samplers = samplers

    def __enter__(self) -> _Samplers:
        for s in self.samplers:
            s.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        for s in reversed(self.samplers):
            s.__exit__(*exc)

    def activity(self) -> BackendActivity:
        parts: JSONObject = {}
        for s in self.samplers:
            got = s.activity()
            found = (("zfs", got.zfs), ("nbd", got.nbd), ("ceph", got.ceph), ("hardware", got.hardware), ("bridge", got.bridge),
                     ("nfs_server", got.nfs_server), ("rgw", got.rgw), ("bucket", got.bucket))  # fmt: skip
            parts.update({k: v for k, v in found if v is not None})
        return BackendActivity(**parts)


def held_requests(target: Target) -> tuple[str, Callable[[], int | None]] | None:
    """What counts the requests the server under ``target`` holds paused, in words and as a
    reading (how many now; None: not known): radosgw's objecter through the admin socket an
    ``s3://`` target names (a full cluster or pool pauses them); None for any other target."""
    if target.kind != "s3":
        return None
    from ..targets.s3 import parse_s3_spec

    socket = parse_s3_spec(target.path).admin_socket
    if socket is None:
        return None
    from .rgw_sampler import paused_requests

    return f"radosgw ({socket})", lambda: paused_requests(socket)


def stored_objects(target: Target) -> tuple[str, Callable[[], object | None]] | None:
    """What counts the objects the server under ``target`` holds, in words and as a reading (a
    comparable count now, the same word while the server does not answer; None: not known, such
    as a listing too long to count): an ``s3://`` bucket's count
    (:func:`.bucket_sampler.count_bucket`); None for any other target."""
    if target.kind != "s3":
        return None
    from ..targets.s3 import parse_s3_spec
    from .bucket_sampler import count_bucket

    def read() -> object | None:
        try:
            return count_bucket(target)[2]
        except ValueError:  # too many objects to list: not known
            return None
        except Exception:  # a gateway that does not answer: nothing more is stored
            return "unanswered"

    return f"the S3 server at {parse_s3_spec(target.path).host}", read


def sampler_for(storage: StorageInfo | None, target: Target | None = None, area_bytes: int | None = None) -> BackendSampler | None:
    """A context manager sampling the back-ends under ``storage`` and ``target`` (its
    ``activity()`` gives a :class:`BackendActivity`), or None when none keeps anything
    storbench reads: a ZFS pool under the storage, an NBD export as the target."""
    samplers: list[BackendSampler] = []
    zfs = getattr(storage, "zfs", None)
    if zfs is None:  # a share whose server is this machine, on ZFS: the server's pool and ARC
        network = getattr(getattr(storage, "filesystem", None), "network", None)
        zfs = getattr(network, "server_zfs", None)
    if zfs is None:  # an NFS export or iSCSI LUN stored on this machine's ZFS (targets/nfs.py, iscsi.py)
        zfs = getattr(getattr(storage, "export", None), "server_zfs", None)
    if zfs is not None:
        from .zfs_sampler import ZfsSampler

        samplers.append(ZfsSampler(zfs))
    if target is not None and getattr(target, "kind", None) == "nbd":
        from ..targets.nbd import nbd_uri
        from .nbd_sampler import NbdSampler

        samplers.append(NbdSampler(nbd_uri(target.path), area_bytes))
    if target is not None and getattr(target, "kind", None) in ("rbd", "rados"):
        from .ceph_sampler import CephSampler

        if target.kind == "rbd":
            from ..targets.rbd import parse_rbd_spec

            pool, image = parse_rbd_spec(target.path)
            samplers.append(CephSampler(target, pool, image=image, area_bytes=area_bytes))
        else:
            from ..jobs.jobfile import DEFAULT_TEST_FILE_NAME
            from ..targets.rados import parse_rados_spec

            samplers.append(CephSampler(target, parse_rados_spec(target.path), obj=DEFAULT_TEST_FILE_NAME, area_bytes=area_bytes))
    if target is not None and getattr(target, "kind", None) in ("iscsi", "nfs"):  # through a qemu-nbd bridge
        from ..targets.bridge import bridge_pid, bridge_socket
        from .bridge_sampler import BridgeSampler

        pid = bridge_pid(bridge_socket(target.kind, target.path))
        if pid is not None:
            samplers.append(BridgeSampler(pid))
    if target is not None and getattr(target, "kind", None) in ("nfs", "nfs-fio"):  # the ganesha beside storbench: its own counters
        from ..storage.ganesha import io_source
        from ..targets.nfs import check_nfs_uri, nfs_version

        source = io_source(check_nfs_uri(target.path)[1])
        if source is not None:
            from .nfs_server_sampler import GaneshaIoSampler

            version = "v4.0" if target.kind == "nfs-fio" and nfs_version(target.path) == 4 else "v3"
            samplers.append(GaneshaIoSampler(source[0], source[1], version))
    if target is not None and getattr(target, "kind", None) == "s3":  # the bucket's count; radosgw's counters, its pool's OSDs
        from ..targets.s3 import parse_s3_spec

        socket = parse_s3_spec(target.path).admin_socket
        if socket is not None:
            from .rgw_sampler import RgwSampler

            samplers.append(RgwSampler(socket))
        from .bucket_sampler import BucketSampler

        samplers.append(BucketSampler(target))
        data_pool = target.param("pool")
        if data_pool:  # the Ceph cluster under radosgw was reached (--ceph-conf, or through its admin socket)
            from .ceph_sampler import CephSampler

            samplers.append(CephSampler(target, data_pool))
    drives = getattr(storage, "drives", ())
    if drives:  # physical drives smartctl could read when the target was described
        from .hardware_sampler import HardwareSampler

        samplers.append(HardwareSampler([d.device for d in drives]))
    if not samplers:
        return None
    return samplers[0] if len(samplers) == 1 else _Samplers(samplers)


def backend_to_dict(activity: BackendActivity) -> JSONObject:
    return {"format_version": FORMAT_VERSION, **encode_dataclasses(activity)}


def _tuple(value: JSONValue) -> tuple:
    return tuple(_tuple(v) if isinstance(v, list) else v for v in value)


def _zfs_from(data: JSONMapping) -> ZfsActivity:
    from .zfs import PoolState, VdevIo, ZfsActivity

    def state(d: JSONValue) -> PoolState | None:
        if d is None:
            return None
        return PoolState(state=d.get("state"), scan=d.get("scan"), vdev_states=_tuple(d.get("vdev_states", [])))

    kwargs: JSONObject = {}
    for f in dataclasses.fields(ZfsActivity):
        if f.name not in data:
            continue
        value = data[f.name]
        if f.name in ("before", "after"):
            kwargs[f.name] = state(value)
        elif f.name == "vdevs":
            kwargs[f.name] = tuple(VdevIo(**v) for v in value)
        elif isinstance(value, list):
            kwargs[f.name] = _tuple(value)
        else:
            kwargs[f.name] = value
    return ZfsActivity(**kwargs)


def backend_from_dict(data: JSONMapping) -> BackendActivity:
    """Inverse of :func:`backend_to_dict`; :class:`StoreError` for a newer version or a malformed dict."""
    if not isinstance(data, Mapping):
        raise StoreError("stored back-end activity is malformed: expected an object")
    version = data.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise StoreError(f"stored back-end activity has format version {version!r}, this storbench reads up to {FORMAT_VERSION}")
    from .bridge import BridgeActivity
    from .bucket import BucketActivity
    from .ceph import CephActivity
    from .hardware import HardwareActivity
    from .nbd import NbdActivity
    from .nfs_server import NfsServerActivity
    from .rgw import RgwActivity

    try:
        zfs = _zfs_from(data["zfs"]) if data.get("zfs") is not None else None
        nbd = data.get("nbd")
        nbd = NbdActivity(**{**nbd, "problems": tuple(nbd.get("problems", ()))}) if nbd is not None else None
        ceph = data.get("ceph")
        ceph = CephActivity(**{**ceph, "problems": tuple(ceph.get("problems", ()))}) if ceph is not None else None
        hardware = decode_dataclass(HardwareActivity, data["hardware"], "backend.hardware") if data.get("hardware") is not None else None
        bridge = data.get("bridge")
        bridge = BridgeActivity(**{**bridge, "problems": tuple(bridge.get("problems", ()))}) if bridge is not None else None
        nfs = data.get("nfs_server")
        nfs = NfsServerActivity(**{**nfs, "problems": tuple(nfs.get("problems", ()))}) if nfs is not None else None
        rgw = data.get("rgw")
        rgw = RgwActivity(**{**rgw, "problems": tuple(rgw.get("problems", ()))}) if rgw is not None else None
        bucket = decode_dataclass(BucketActivity, data["bucket"], "backend.bucket") if data.get("bucket") is not None else None
    except (TypeError, KeyError, AttributeError) as exc:
        raise StoreError(f"stored back-end activity is malformed: {exc}") from None
    return BackendActivity(zfs=zfs, nbd=nbd, ceph=ceph, hardware=hardware, bridge=bridge, nfs_server=nfs, rgw=rgw, bucket=bucket)


__all__ = ["FORMAT_VERSION", "BackendActivity", "BackendSampler", "backend_from_dict", "backend_to_dict", "sampler_for"]
