"""A Ceph cluster as a target's storage (pure): the records and the parsers of the CLIs' JSON.

An RBD image (``rbd:POOL/IMAGE``) or a RADOS pool (``rados:POOL``) is reached by fio's own
librbd/librados client, with no block device or filesystem on this machine; what describes
it is the cluster: its id and health, how many monitors and OSDs are up, the pool's
replication (``size``/``min_size``), placement groups and application, each OSD's object
store and the devices under it, and for an image its size, object size, features and how
much of it was ever written.  Every parser takes the JSON a command printed (``ceph status
-f json``, ``ceph osd pool ls detail -f json``, ``ceph osd metadata -f json``, ``rbd info
--format json``, ``rbd du``/``rbd status``/``rbd diff --format json``, ``rados df -f json``)
and raises ValueError naming what it expected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from storbench.jsontypes import JSONValue

from ._util import items, obj, to_int


@dataclass(frozen=True)
class CephOsd:
    """One OSD as ``ceph osd metadata`` describes it."""

    id: int
    objectstore: str | None = None  # bluestore, filestore
    devices: str | None = None  # the host's block devices under it ("vda", "sdb,nvme0n1")
    device_class: str | None = None  # hdd, ssd, nvme (bluestore_bdev_type / default_device_class)
    rotational: bool | None = None
    block_path: str | None = None  # bluestore's block (a file, a partition, an LV)
    block_size_bytes: int | None = None
    dedicated_db: bool | None = None  # RocksDB on a device of its own
    dedicated_wal: bool | None = None
    hostname: str | None = None
    version: str | None = None  # 16.2.15


@dataclass(frozen=True)
class CephPool:
    """A pool as ``ceph osd pool ls detail`` describes it."""

    name: str
    id: int | None = None
    type: str | None = None  # replicated, erasure
    size: int | None = None  # copies (replicated) or k+m (erasure)
    min_size: int | None = None
    pg_num: int | None = None
    applications: tuple[str, ...] = ()
    erasure_code_profile: str | None = None
    autoscale: str | None = None  # on, off, warn
    crush_rule: int | None = None


@dataclass(frozen=True)
class RbdImage:
    """An RBD image: ``rbd info`` (size, order, features), ``rbd du`` (used), ``rbd status`` (watchers)."""

    name: str
    size_bytes: int | None = None
    object_size_bytes: int | None = None
    features: tuple[str, ...] = ()
    format: int | None = None
    used_bytes: int | None = None  # provisioned space written (rbd du; exact with fast-diff)
    watchers: int | None = None


@dataclass(frozen=True)
class CephInfo:
    """The cluster under a Ceph target, and the pool (and image) the target names."""

    fsid: str | None = None
    health: str | None = None  # HEALTH_OK, HEALTH_WARN, HEALTH_ERR
    health_checks: tuple[str, ...] = ()  # "OSD_DOWN: 1 osds down"
    version: str | None = None  # of the daemons (ceph versions), else of this client
    mons: int | None = None
    quorum: int | None = None
    osds: int | None = None
    osds_up: int | None = None
    osds_in: int | None = None
    pgs: int | None = None
    pg_states: tuple[str, ...] = ()  # "32 active+clean"
    bytes_total: int | None = None
    bytes_used: int | None = None
    conf: str | None = None  # the configuration file storbench used
    client: str | None = None  # the client name (admin)
    pool: CephPool | None = None
    pool_objects: int | None = None
    osd_details: tuple[CephOsd, ...] = ()
    image: RbdImage | None = None


@dataclass(frozen=True)
class PoolCounters:
    """A pool's cumulative counters (``rados df``): what its OSDs served."""

    objects: int
    read_ops: int
    read_bytes: int
    write_ops: int
    write_bytes: int


def _json(text: str, what: str) -> JSONValue:
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise ValueError(f"not {what}'s JSON (no JSON in its output)")
    try:
        return json.JSONDecoder().raw_decode(text[start:])[0]
    except json.JSONDecodeError as exc:
        raise ValueError(f"not {what}'s JSON: {exc}") from None




def _flag(value: JSONValue) -> bool | None:
    return {"1": True, "0": False, 1: True, 0: False}.get(value)  # True == 1, False == 0 as keys


def parse_ceph_status(text: str) -> CephInfo:
    """``ceph status -f json`` -> the cluster part of :class:`CephInfo`."""
    doc = _json(text, "ceph status")
    if not isinstance(doc, dict) or "fsid" not in doc:
        raise ValueError("not ceph status's JSON (no fsid)")
    health = obj(doc, "health")
    checks = []
    for name, check in sorted(obj(health, "checks").items()):
        message = check.get("summary", {}).get("message") if isinstance(check, dict) else None
        checks.append(f"{name}: {message}" if message else name)
    osdmap = obj(doc, "osdmap")
    osdmap = obj(osdmap, "osdmap") or osdmap  # nautilus nests it once more
    pgmap = obj(doc, "pgmap")
    states = tuple(f"{s.get('count')} {s.get('state_name')}" for s in items(pgmap, "pgs_by_state") if isinstance(s, dict))
    monmap = obj(doc, "monmap")
    mons = to_int(monmap.get("num_mons"))
    if mons is None and isinstance(monmap.get("mons"), list):
        mons = len(monmap["mons"])
    return CephInfo(
        fsid=doc.get("fsid") if isinstance(doc.get("fsid"), str) else None,
        health=health.get("status") if isinstance(health.get("status"), str) else None,
        health_checks=tuple(checks),
        mons=mons,
        quorum=len(doc["quorum"]) if isinstance(doc.get("quorum"), list) else None,
        osds=to_int(osdmap.get("num_osds")),
        osds_up=to_int(osdmap.get("num_up_osds")),
        osds_in=to_int(osdmap.get("num_in_osds")),
        pgs=to_int(pgmap.get("num_pgs")),
        pg_states=states,
        bytes_total=to_int(pgmap.get("bytes_total")),
        bytes_used=to_int(pgmap.get("bytes_used")),
    )


def parse_pool_ls_detail(text: str, pool: str) -> CephPool | None:
    """``ceph osd pool ls detail -f json`` -> the pool named ``pool`` (None: no such pool)."""
    doc = _json(text, "ceph osd pool ls detail")
    if not isinstance(doc, list):
        raise ValueError("not ceph osd pool ls detail's JSON (expected a list of pools)")
    for p in doc:
        if isinstance(p, dict) and p.get("pool_name") == pool:
            raw_type = p.get("type")
            kind = {1: "replicated", 3: "erasure"}.get(raw_type) if isinstance(raw_type, int) else raw_type
            apps = obj(p, "application_metadata")
            return CephPool(
                name=pool,
                id=to_int(p.get("pool_id")),
                type=kind if isinstance(kind, str) else None,
                size=to_int(p.get("size")),
                min_size=to_int(p.get("min_size")),
                pg_num=to_int(p.get("pg_num")),
                applications=tuple(sorted(apps)),
                erasure_code_profile=p.get("erasure_code_profile") or None,
                autoscale=p.get("pg_autoscale_mode") if isinstance(p.get("pg_autoscale_mode"), str) else None,
                crush_rule=to_int(p.get("crush_rule")),
            )
    return None


def parse_osd_metadata(text: str) -> tuple[CephOsd, ...]:
    """``ceph osd metadata -f json`` (every OSD, or one) -> :class:`CephOsd` records by id."""
    doc = _json(text, "ceph osd metadata")
    items = doc if isinstance(doc, list) else [doc]
    out = []
    for o in items:
        if not isinstance(o, dict) or to_int(o.get("id")) is None:
            raise ValueError("not ceph osd metadata's JSON (an OSD without an id)")
        store = o.get("osd_objectstore")
        out.append(
            CephOsd(
                id=to_int(o["id"]),  # type: ignore[arg-type]
                objectstore=store if isinstance(store, str) else None,
                devices=(o.get("bluestore_bdev_devices") or o.get("devices")) or None,
                device_class=(o.get("bluestore_bdev_type") or o.get("default_device_class")) or None,
                rotational=_flag(o.get("bluestore_bdev_rotational", o.get("rotational"))),
                block_path=o.get("bluestore_bdev_path") or None,
                block_size_bytes=to_int(o.get("bluestore_bdev_size")),
                dedicated_db=_flag(o.get("bluefs_dedicated_db")),
                dedicated_wal=_flag(o.get("bluefs_dedicated_wal")),
                hostname=o.get("hostname") or None,
                version=o.get("ceph_version_short") or None,
            )
        )
    return tuple(sorted(out, key=lambda o: o.id))


def parse_rbd_info(text: str) -> RbdImage:
    """``rbd info --format json POOL/IMAGE`` -> :class:`RbdImage` (size, object size, features)."""
    doc = _json(text, "rbd info")
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
        raise ValueError("not rbd info's JSON (no image name)")
    obj = to_int(doc.get("object_size"))
    if obj is None and to_int(doc.get("order")) is not None:
        obj = 1 << to_int(doc.get("order"))  # type: ignore[operator]
    features = items(doc, "features")
    return RbdImage(name=doc["name"], size_bytes=to_int(doc.get("size")), object_size_bytes=obj,
                    features=tuple(str(f) for f in features), format=to_int(doc.get("format")))  # fmt: skip


def parse_rbd_du(text: str, image: str) -> int | None:
    """``rbd du --format json POOL/IMAGE`` -> the image's used bytes (None: not listed)."""
    doc = _json(text, "rbd du")
    if not isinstance(doc, dict) or not isinstance(doc.get("images"), list):
        raise ValueError("not rbd du's JSON (no images)")
    for im in doc["images"]:
        if isinstance(im, dict) and im.get("name") == image and im.get("snapshot") in (None, ""):
            return to_int(im.get("used_size"))
    return None


def parse_rbd_status(text: str) -> tuple[str, ...]:
    """``rbd status --format json POOL/IMAGE`` -> the watchers' addresses (a mapping, a VM, a running fio)."""
    doc = _json(text, "rbd status")
    if not isinstance(doc, dict) or not isinstance(doc.get("watchers"), list):
        raise ValueError("not rbd status's JSON (no watchers list)")
    return tuple(str(w.get("address", "?")) if isinstance(w, dict) else str(w) for w in doc["watchers"])


def parse_rbd_diff(text: str) -> tuple[tuple[int, int], ...]:
    """``rbd diff --format json POOL/IMAGE`` -> the written extents (offset, length) in the object map."""
    doc = _json(text, "rbd diff")
    if not isinstance(doc, list):
        raise ValueError("not rbd diff's JSON (expected a list of extents)")
    out = []
    for e in doc:
        if not isinstance(e, dict) or to_int(e.get("offset")) is None or to_int(e.get("length")) is None:
            raise ValueError("not rbd diff's JSON (an extent without offset or length)")
        if str(e.get("exists", "true")) == "true":
            out.append((to_int(e["offset"]), to_int(e["length"])))
    return tuple(out)  # type: ignore[arg-type]


def written_within(extents: Sequence[tuple[int, int]], area_bytes: int) -> int:
    """Bytes of ``[0, area_bytes)`` that ``extents`` cover."""
    total = 0
    for offset, length in extents:
        end = min(offset + length, area_bytes)
        if end > offset:
            total += end - offset
    return total


def parse_rados_df(text: str, pool: str) -> PoolCounters | None:
    """``rados df -f json`` -> the counters of ``pool`` (None: not listed)."""
    doc = _json(text, "rados df")
    if not isinstance(doc, dict) or not isinstance(doc.get("pools"), list):
        raise ValueError("not rados df's JSON (no pools)")
    for p in doc["pools"]:
        if isinstance(p, dict) and p.get("name") == pool:
            values = [to_int(p.get(k)) for k in ("num_objects", "read_ops", "read_bytes", "write_ops", "write_bytes")]
            if any(v is None for v in values):
                raise ValueError(f"rados df's JSON lacks a counter for pool {pool}")
            return PoolCounters(*values)  # type: ignore[arg-type]
    return None


def parse_ceph_versions(text: str) -> str | None:
    """``ceph versions -f json`` -> the daemons' version ("16.2.15 pacific"), or "mixed: ..." when they differ."""
    doc = _json(text, "ceph versions")
    overall = doc.get("overall") if isinstance(doc, dict) else None
    if not isinstance(overall, dict) or not overall:
        return None
    names = []
    for full in overall:
        bits = full.split()
        names.append(f"{bits[2]} {bits[4]}" if len(bits) >= 5 and bits[0] == "ceph" else full)
    return names[0] if len(names) == 1 else "mixed: " + ", ".join(sorted(names))


@dataclass(frozen=True)
class OsdCounters:
    """The OSDs' cumulative client-operation counters (``ceph tell osd.* perf dump``), summed over OSDs.

    Read at once, unlike ``rados df``'s pool counters, which the OSDs report to the manager
    every few seconds (a 2 s run's reads show there seconds later)."""

    osds: int
    read_ops: int
    read_bytes: int
    read_latency_s: float  # the sum over those operations
    write_ops: int
    write_bytes: int
    write_latency_s: float
    #: read-modify-write operations (``op_rw``: a class method, a compare-and-set; radosgw's bucket
    #: index updates and object overwrites), and the bytes they wrote
    rw_ops: int = 0
    rw_bytes: int = 0
    #: what BlueStore read from its cache and from the device (``bluestore_buffer_hit_bytes`` /
    #: ``_miss_bytes``; None: no BlueStore section in the dump)
    cache_hit_bytes: int | None = None
    cache_miss_bytes: int | None = None


def parse_osd_perf_dump(text: str) -> OsdCounters:
    """``ceph tell osd.* perf dump -f json`` (or ``... perf dump osd``) -> :class:`OsdCounters`:
    one JSON object, or ``osd.N: {...}`` per OSD when there are several; the ``bluestore``
    section's cache hits and misses where the dump has it."""
    decoder = json.JSONDecoder()
    found: list[dict] = []
    stores: list[dict] = []
    i = 0
    while True:
        start = text.find("{", i)
        if start < 0:
            break
        try:
            doc, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not ceph tell osd perf dump's JSON: {exc}") from None
        if isinstance(doc, dict) and isinstance(doc.get("osd"), dict):
            found.append(doc["osd"])
            if isinstance(doc.get("bluestore"), dict):
                stores.append(doc["bluestore"])
        i = end
    if not found:
        raise ValueError("not ceph tell osd perf dump's JSON (no osd section)")

    def total(key: str) -> int:
        return sum(to_int(d.get(key)) or 0 for d in found)

    def seconds(key: str) -> float:
        return sum(float(d.get(key, {}).get("sum", 0.0)) if isinstance(d.get(key), dict) else 0.0 for d in found)

    return OsdCounters(osds=len(found), read_ops=total("op_r"), read_bytes=total("op_r_out_bytes"), read_latency_s=seconds("op_r_latency"),
                       write_ops=total("op_w"), write_bytes=total("op_w_in_bytes"), write_latency_s=seconds("op_w_latency"),
                       rw_ops=total("op_rw"), rw_bytes=total("op_rw_in_bytes"),
                       cache_hit_bytes=sum(to_int(b.get("bluestore_buffer_hit_bytes")) or 0 for b in stores) if stores else None,
                       cache_miss_bytes=sum(to_int(b.get("bluestore_buffer_miss_bytes")) or 0 for b in stores) if stores else None)  # fmt: skip


def parse_rados_stat(text: str) -> int | None:
    """``rados -p POOL stat OBJECT`` -> the object's size in bytes (``... mtime ..., size 8388608``)."""
    _head, sep, size = text.strip().rpartition(", size ")
    if not sep or not size.strip().isdigit():
        raise ValueError(f"not rados stat's answer: {text.strip()[:80]!r}")
    return int(size.strip())


def parse_bucket_placement(text: str) -> tuple[str, str | None]:
    """``radosgw-admin bucket stats --bucket B`` -> (its placement rule, its own data pool when
    it has an explicit placement, else None: the zone's rule says).  ValueError otherwise."""
    doc = _json(text, "radosgw-admin bucket stats")
    if not isinstance(doc, dict) or "bucket" not in doc:
        raise ValueError("not radosgw-admin bucket stats (no 'bucket')")
    rule = doc.get("placement_rule")
    explicit = doc.get("explicit_placement")
    pool = explicit.get("data_pool") if isinstance(explicit, dict) else None
    return (rule if isinstance(rule, str) and rule else "default-placement"), (pool if isinstance(pool, str) and pool else None)


def parse_zone_data_pool(text: str, rule: str, storage_class: str = "STANDARD") -> str:
    """``radosgw-admin zone get`` -> the data pool of placement ``rule`` (``default-placement``,
    or ``RULE/CLASS``) and its storage class.  ValueError naming what is missing."""
    doc = _json(text, "radosgw-admin zone get")
    placements = doc.get("placement_pools") if isinstance(doc, dict) else None
    if not isinstance(placements, list):
        raise ValueError("not radosgw-admin zone get (no 'placement_pools')")
    name, _, cls = rule.partition("/")
    for entry in placements:
        if isinstance(entry, dict) and entry.get("key") == name:
            classes = (entry.get("val") or {}).get("storage_classes") or {}
            pool = (classes.get(cls or storage_class) or {}).get("data_pool")
            if isinstance(pool, str) and pool:
                return pool
            raise ValueError(f"zone {doc.get('name', '?')}'s placement {name} has no data pool for storage class {cls or storage_class}")
    raise ValueError(f"zone {doc.get('name', '?')} has no placement {name!r}")


@dataclass(frozen=True)
class RgwDaemon:
    """One radosgw the cluster's service map knows (``ceph service dump``)."""

    name: str  #: its id (client.rgw.NAME)
    hostname: str | None = None
    version: str | None = None  #: 16.2.15
    zone: str | None = None
    frontends: tuple[str, ...] = ()  #: "beast endpoint=0.0.0.0:7480 tcp_nodelay=1"
    mem_total_bytes: int | None = None  #: its machine's memory

    def ports(self) -> tuple[int, ...]:
        """The TCP ports its frontends listen on (beast ``port=``/``endpoint=HOST:PORT``/``ssl_*``,
        civetweb ``port=7480+443s``)."""
        found: list[int] = []
        for frontend in self.frontends:
            for key, value in re.findall(r"\b(port|endpoint|ssl_port|ssl_endpoint)=(\S+)", frontend):
                if key.endswith("endpoint"):  # HOST[:PORT], [V6][:PORT]; no port: 80, or 443 for ssl
                    rest = value.partition("]")[2] if value.startswith("[") else value
                    _, sep, port = rest.rpartition(":")
                    found.append(int(port) if sep and port.isdigit() else (443 if key.startswith("ssl") else 80))
                else:
                    found.extend(int(p.rstrip("s")) for p in value.split("+") if p.rstrip("s").isdigit())
        return tuple(dict.fromkeys(found))

    def nodelay(self) -> bool | None:
        """Whether its beast frontend sets ``tcp_nodelay=1`` (None: no beast frontend)."""
        beast = [f for f in self.frontends if f.split()[:1] == ["beast"]]
        if not beast:
            return None
        return all(re.search(r"\btcp_nodelay=1\b", f) is not None for f in beast)


def parse_rgw_daemons(text: str) -> tuple[RgwDaemon, ...]:
    """``ceph service dump -f json`` -> the radosgw daemons of its service map (none: an empty
    tuple).  ValueError for what is not a service dump."""
    doc = _json(text, "ceph service dump")
    services = doc.get("services") if isinstance(doc, dict) else None
    if not isinstance(services, dict):
        raise ValueError("not ceph service dump (no 'services')")
    daemons = ((services.get("rgw") or {}).get("daemons") or {}) if isinstance(services.get("rgw"), dict) else {}
    out = []
    for key, entry in daemons.items():
        if not isinstance(entry, dict):
            continue  # "summary"
        meta = entry.get("metadata") or {}
        frontends = tuple(v for k, v in sorted(meta.items()) if k.startswith("frontend_config#") and isinstance(v, str))
        mem = to_int(meta.get("mem_total_kb"))
        out.append(RgwDaemon(name=str(meta.get("id") or key), hostname=meta.get("hostname") or None,
                             version=meta.get("ceph_version_short") or None, zone=meta.get("zone_name") or None,
                             frontends=frontends, mem_total_bytes=mem * 1024 if mem is not None else None))  # fmt: skip
    return tuple(out)
