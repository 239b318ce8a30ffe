"""Object storage (an ``s3://`` target, fio's http engine): what a figure of requests means.

Checks (ids):

* ``object-request-bound`` (info) -- small objects (at most 64 KiB): the figure is the request
  rate, each request's fixed cost (HTTP, signing, the gateway, the object's metadata) outweighs its
  bytes; the latency floor (the fastest request) is quoted.
* ``object-request-delay`` (warning) -- small objects whose requests gather at Linux's delayed-ACK
  timer: the median between 38 and 50 ms and nine in ten at 30 ms or more (Nagle's algorithm on
  one side waiting for the other's delayed ACK; radosgw's beast frontend without ``tcp_nodelay=1``:
  a median of 43.8 ms per 4 KiB GET here, 0.9 ms with it; the first request of a connection is
  fast, so the fastest is no sign).
* ``object-overwrite`` (info) -- a time-based PUT loop issued more PUTs than its jobs have keys:
  the rest rewrote objects that existed, which a gateway handles otherwise than new ones.
* ``object-client-cpu`` (warning) -- fio's client at 85 % of a CPU or more (it signs each PUT's
  payload with SHA-256): the client set the pace, not the server.
* ``object-server-cache`` (warning) -- BlueStore's cache answered half or more of the bytes the
  OSDs under the bucket read (radosgw on a cluster storbench reached: its own counters, for a
  gateway here or elsewhere); without them, the objects a reading workload reads fit in the
  memory of the machine the gateway runs on (an endpoint on this machine: its RAM): the gateway's
  and the OSDs' caches answered, not their disks.
* ``object-404`` (invalid) -- radosgw's own counters (``admin_socket=`` on the target,
  :mod:`storbench.backend.rgw`) served fewer GETs than fio counted: the rest were answered 404 (no
  such object), which fio 3.33's http engine takes for zero-filled successes.
* ``object-server-errors`` (invalid) -- radosgw counted failed requests (beyond those 404s) during
  a repetition fio reported without an error.
* ``object-bucket-changed`` (warning) -- the bucket's own count (radosgw's, :mod:`storbench.backend.bucket`)
  changed by more than fio's PUTs and DELETEs can explain (a reading workload: at all): another
  client wrote to or deleted from the bucket during the repetition, and the gateway served it
  beside fio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storbench.model import Finding

from ._common import CheckInfo, finding, flag, integer, size, text

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

#: at most this object size, a request's fixed cost is the figure
SMALL_OBJECT_BYTES = 64 * 1024
#: small requests whose median sits here, nine in ten above DELAY_FLOOR_NS, wait for Linux's 40 ms
#: delayed-ACK timer (Nagle on the other side), not for the server's work
DELAY_MEDIAN_NS = (38_000_000, 50_000_000)
DELAY_FLOOR_NS = 30_000_000
CLIENT_CPU_PCT = 85.0

INFO = {
    "object-request-bound": CheckInfo(
        title="Small objects: a request rate",
        explanation="Each S3 request has a fixed cost (HTTP, SHA-256 signing, the gateway's work and the object's metadata) that outweighs a small object's bytes: the figure is requests per second, bounded by the request latency floor, not the storage's bandwidth.",
        evidence="An s3:// target with objects (bs) of at most 64 KiB; the fastest request's latency is quoted.",
        fix="Compare small-object figures as objects per second with other gateways; for bandwidth, use 1 MiB or larger objects.",
        severities=("info",),
    ),
    "object-request-delay": CheckInfo(
        title="Small requests wait for a delayed ACK",
        explanation="Small requests gather at about 40 ms, Linux's delayed-ACK timer: Nagle's algorithm on one side waits for the other's delayed ACK before it sends the rest of a request or answer. radosgw's beast frontend without tcp_nodelay=1 did this here: 4 KiB GETs took a median of 43.8 ms (23/s) instead of 0.9 ms (about 1,100/s).",
        evidence="An s3:// target, objects of at most 64 KiB, a direction's median request between 38 and 50 ms and its 10th percentile at 30 ms or more.",
        fix="Set tcp_nodelay=1 on the gateway (radosgw: rgw frontends = beast ... tcp_nodelay=1), and on any proxy in front of it.",
        severities=("warning",),
    ),
    "object-overwrite": CheckInfo(
        title="PUTs that overwrite",
        explanation="fio's http engine names an object after its job and offset, so a time-based PUT loop that gets round its size PUTs the same keys again: those PUTs replace objects rather than make new ones, which gateways handle otherwise (old data to remove, index entries to update). radosgw keeps a replaced object's data in the pool until its garbage collector runs (rgw_gc_obj_min_wait, 2 hours by default): here a 2 GiB OSD filled from 5 s loops of 16 MiB PUTs over 32 MiB of keys, and radosgw stopped serving.",
        evidence="An s3:// target, a time-based write job, and more PUTs than its jobs have keys (size / bs per job).",
        fix="Give the PUT workload a size of at least its PUT rate times its runtime to measure new objects only, or read the figure as overwrites.",
        severities=("info",),
    ),
    "object-client-cpu": CheckInfo(
        title="The client set the pace",
        explanation="fio's client used 85 % of a CPU or more: it signs each PUT's payload with SHA-256 and copies every object, so the figure is the client's limit, not the gateway's.",
        evidence="An s3:// target and a job's user plus system CPU at 85 % or more.",
        fix="Run more clients (numjobs, or --host on other machines) until the figure stops growing, and compare on equal client machines.",
        severities=("warning",),
    ),
}


INFO["object-bucket-changed"] = CheckInfo(
    title="Another client used the bucket",
    explanation="The server's own count of the bucket's objects changed during the repetition by more than fio's own PUTs and DELETEs can explain (during a workload that only read: at all). Another client wrote to or deleted from the same bucket meanwhile: the gateway, its index and its disks served that load beside fio's, and the figure is a shared one.",
    evidence="An s3:// target on a server that gives its bucket's totals on a HEAD (radosgw: X-RGW-Object-Count, X-RGW-Bytes-Used), counted before and after each repetition, against the PUTs and DELETEs fio counted.",
    fix="Benchmark a bucket (and a gateway) nobody else uses during the run, or run again when the other client has finished.",
    severities=("warning",),
)

INFO["object-server-cache"] = CheckInfo(
    title="The objects read fit in the server's memory",
    explanation="A GET workload reads the same objects again and again (its size per client): when they fit in the memory of the machine that serves them, the gateway's and the storage daemons' caches (Ceph's BlueStore cache, the page cache) answer, and the figure is memory's, not the disks'.",
    evidence="On a radosgw whose Ceph cluster storbench reached (--ceph-conf, or its admin socket): BlueStore's own counters, half or more of the bytes the OSDs read during a reading workload answered by its cache (any gateway, this machine or another). Otherwise: an endpoint on this machine (loopback or one of its addresses), and the objects read (size x clients) at most this machine's RAM.",
    fix="Read more objects than the server's caches hold (on Ceph, more than the OSDs' osd_memory_target together; elsewhere a size per client of RAM / clients or more), or read the figure as a cached one.",
    severities=("warning",),
)
INFO["object-404"] = CheckInfo(
    title="GETs answered 404, counted as reads",
    explanation="fio 3.33's http engine counts an S3 GET of an object that does not exist (HTTP 404) as a success and returns zeros: a GET job on keys never written reported 4,499 reads at 1,499 IOPS here while radosgw served none. radosgw's own counters, read around the repetition, served fewer GETs than fio counted.",
    evidence="An s3:// target with admin_socket= (radosgw's counters), and fio's GETs above the GETs radosgw served during the repetition.",
    fix="Read only objects that exist: storbench writes them first for its GET workloads and checks what it reads; a mixed or user workload's GETs are not checked, so give it keys it wrote (a PUT pass of the same size first).",
    severities=("invalid",),
)
INFO["object-server-errors"] = CheckInfo(
    title="The gateway failed requests fio counted as done",
    explanation="radosgw counted failed requests during a repetition that fio reported without an error: fio's figure includes requests the gateway did not carry out.",
    evidence="An s3:// target with admin_socket= (radosgw's counters): its failed_req grew during the repetition by more than the GETs it answered 404.",
    fix="Read the gateway's log for the failed requests (permissions, quota, a full pool, a missing bucket), mend the cause, run again.",
    severities=("invalid",),
)


#: endpoints that are this machine
_LOCAL_HOSTS = ("127.", "localhost", "::1", "[::1]")
#: the workloads that read objects
_READING = ("read", "randread", "rw", "readwrite", "randrw")
#: at least this share of the bytes the OSDs read answered by BlueStore's cache: a cached figure
CACHE_HIT_SHARE = 0.5


def _server_cache(ctx: CheckContext) -> Finding | None:
    rw = (text(ctx.options, "rw", "readwrite") or "read").split(":")[0]
    ceph = getattr(ctx.backend, "ceph", None)
    share = ceph.cache_hit_share if ceph is not None and rw in _READING else None
    if ceph is not None and share is not None:  # the OSDs' own word (radosgw on a cluster storbench reached): judged by it alone
        if share < CACHE_HIT_SHARE:
            return None
        from ..units import format_bytes

        hit, miss = ceph.osd_cache_hit_bytes or 0, ceph.osd_cache_miss_bytes or 0
        return finding("object-server-cache", "warning",
                       f"BlueStore's cache answered {100 * share:.0f} % of the bytes the OSDs under the bucket read during this "
                       f"repetition ({format_bytes(hit)} of {format_bytes(hit + miss)}): the figure is of the OSDs' memory more than of their devices",
                       "read more objects than the OSDs' caches hold together (osd_memory_target each), or read the figure as a cached one")  # fmt: skip
    area, mem = size(ctx.options, "size"), ctx.mem_bytes
    endpoint = ctx.storage.target.split("endpoint=", 1)[-1].split("&", 1)[0] if ctx.storage is not None else ""
    host = endpoint.split("://", 1)[-1].rsplit(":", 1)[0]
    if rw not in _READING or not area or not mem or not host.startswith(_LOCAL_HOSTS):
        return None
    read = area * (integer(ctx.options, "numjobs", default=1) or 1)
    if read > mem:
        return None
    from ..units import format_bytes

    return finding("object-server-cache", "warning",
                   f"the objects read ({format_bytes(read)}) fit in the memory of this machine, which serves them "
                   f"({format_bytes(mem)} of RAM): the gateway's and the storage daemons' caches answered, not their disks",
                   f"read more than {format_bytes(mem)} of objects (a size per client of at least {format_bytes(mem // (integer(ctx.options, 'numjobs', default=1) or 1))}), "
                   "or read the figure as a cached one")  # fmt: skip


def _fio_requests(ctx: CheckContext, direction: str) -> int:
    """The requests of ``direction`` fio counted in the latest repetition (its jobs, not an aggregate)."""
    latest = ctx.results[-1] if ctx.results else None
    if latest is None:
        return 0
    return sum(d.total_ios or 0 for j in latest.jobs if not j.is_aggregate for n, d in j.directions.items() if n == direction)


def _server(ctx: CheckContext) -> list[Finding]:
    """radosgw's own counters against fio's (``object-404``, ``object-server-errors``)."""
    rgw = getattr(ctx.backend, "rgw", None)
    if rgw is None:
        return []
    served, failed, requests = rgw.delta("get"), rgw.delta("failed_req"), rgw.delta("req")
    out: list[Finding] = []
    gets = _fio_requests(ctx, "read")
    missing = max(0, gets - served) if served is not None else 0
    if missing:
        out.append(finding("object-404", "invalid",
                           f"fio counted {gets:,} GETs but radosgw served {served:,}: {missing:,} were answered 404 (no such object), "
                           "which fio's http engine takes for zero-filled reads; the read figures are not of objects read",
                           "read only objects that exist (a PUT pass of the same keys first)"))  # fmt: skip
    if failed is not None and failed - missing > 0:
        of = f" of {requests:,}" if requests is not None else ""
        out.append(finding("object-server-errors", "invalid",
                           f"radosgw counted {failed - missing:,} failed request{'s' if failed - missing != 1 else ''}{of} "
                           "during this repetition, which fio reported without an error",
                           "read radosgw's log for them (permissions, quota, a full pool), mend the cause and run again"))  # fmt: skip
    return out


def _bucket_changed(ctx: CheckContext) -> Finding | None:
    """The bucket's own count against fio's PUTs and DELETEs (a listing of the run's own prefix is
    not the bucket's: only the server's totals are judged)."""
    bucket = getattr(ctx.backend, "bucket", None)
    change = bucket.delta_objects() if bucket is not None and bucket.source == "server" else None
    if bucket is None or change is None:
        return None
    puts, deletes = _fio_requests(ctx, "write"), _fio_requests(ctx, "trim")
    grew = bucket.delta_bytes() or 0
    if -deletes <= change <= puts and not (puts == deletes == 0 and grew != 0):
        return None
    from ..units import format_bytes

    did = f"{puts:,} PUTs and {deletes:,} DELETEs" if puts or deletes else "no PUT or DELETE (it only read)"
    moved = f"{change:+,} objects" + (f", {'+' if grew >= 0 else '-'}{format_bytes(abs(grew))}" if grew else "")
    return finding("object-bucket-changed", "warning",
                   f"{bucket.where} changed by {moved} during this repetition (the server's own count) while fio made {did}: "
                   "another client wrote to or deleted from it meanwhile, and the gateway served that beside fio",
                   "benchmark a bucket and gateway nobody else uses during the run, or run again when the other client has finished")  # fmt: skip


def _object_bytes(ctx: CheckContext) -> int | None:
    return size(ctx.options, "bs", "blocksize")


def _fastest_ns(ctx: CheckContext) -> dict[str, float]:
    """Per direction, the fastest request over every repetition and job."""
    out: dict[str, float] = {}
    for result in ctx.results:
        for job in result.jobs:
            if job.is_aggregate:
                continue
            for name, d in job.directions.items():
                lat = d.lat_ns or d.clat_ns
                if lat is not None and d.total_ios and lat.min_ns > 0:
                    out[name] = min(out.get(name, lat.min_ns), lat.min_ns)
    return out


def _request_bound(ctx: CheckContext, obj: int, fastest: dict[str, float]) -> Finding | None:
    if obj > SMALL_OBJECT_BYTES or not fastest:
        return None
    floors = ", ".join(f"{name} {ns / 1e6:.2f} ms" for name, ns in sorted(fastest.items()))
    return finding("object-request-bound", "info",
                   f"objects of {obj // 1024} KiB: the figure is a request rate, each request's fixed cost outweighing its "
                   f"bytes (the fastest request: {floors})",
                   "compare it as objects per second; for bandwidth, use objects of 1 MiB or more")  # fmt: skip


def _quantiles_ns(ctx: CheckContext) -> dict[str, tuple[float, float]]:
    """Per direction, the median over every repetition's jobs of (10th percentile, median) completion latency."""
    seen: dict[str, list[tuple[float, float]]] = {}
    for result in ctx.results:
        for job in result.jobs:
            for name, d in job.directions.items():
                stats = d.clat_ns or d.lat_ns
                pct = stats.percentiles if stats is not None else {}
                p10, p50 = pct.get("10.0"), pct.get("50.0")
                if not job.is_aggregate and p10 is not None and p50 is not None:
                    seen.setdefault(name, []).append((p10, p50))
    out = {}
    for name, pairs in seen.items():
        pairs.sort(key=lambda p: p[1])
        out[name] = pairs[len(pairs) // 2]
    return out


def _delay(ctx: CheckContext, obj: int) -> Finding | None:
    low, high = DELAY_MEDIAN_NS
    slow = {n: q for n, q in _quantiles_ns(ctx).items() if low <= q[1] <= high and q[0] >= DELAY_FLOOR_NS}
    if obj > SMALL_OBJECT_BYTES or not slow:
        return None
    said = ", ".join(f"{n} {p50 / 1e6:.1f} ms (nine in ten at {p10 / 1e6:.1f} ms or more)" for n, (p10, p50) in sorted(slow.items()))
    return finding("object-request-delay", "warning",
                   f"the median {obj // 1024} KiB request took {said}: Linux's 40 ms delayed-ACK timer, Nagle's algorithm "
                   "waiting for it, not the gateway's work",
                   "set tcp_nodelay=1 on the gateway (radosgw: rgw frontends = beast ... tcp_nodelay=1) and any proxy before it")  # fmt: skip


def _overwrite(ctx: CheckContext, obj: int) -> Finding | None:
    rw = text(ctx.options, "rw", "readwrite") or "read"
    area = size(ctx.options, "size")
    if rw not in ("write", "randwrite") or not flag(ctx.options, "time_based") or not area or area < obj:
        return None
    keys = (area // obj) * (integer(ctx.options, "numjobs", default=1) or 1)
    puts = max((sum(d.total_ios or 0 for j in r.jobs if not j.is_aggregate for n, d in j.directions.items() if n == "write")
                for r in ctx.results), default=0)  # fmt: skip
    if puts <= keys:
        return None
    return finding("object-overwrite", "info",
                   f"{puts} PUTs over {keys} keys in one repetition: {puts - keys} of them ({100 * (puts - keys) / puts:.0f} %) "
                   "replaced objects the loop had made; the figure is partly overwrites (whose old data a gateway such as "
                   "radosgw keeps in the pool until its garbage collector runs)",
                   f"give the workload a size of at least {puts * obj // (integer(ctx.options, 'numjobs', default=1) or 1) // 1024 // 1024 + 1} MiB "
                   "to PUT new objects only, or read the figure as overwrites")  # fmt: skip


def _client_cpu(ctx: CheckContext) -> Finding | None:
    busiest = max((j.usr_cpu_pct + j.sys_cpu_pct for r in ctx.results for j in r.jobs
                   if not j.is_aggregate and j.usr_cpu_pct is not None and j.sys_cpu_pct is not None), default=None)  # fmt: skip
    if busiest is None or busiest < CLIENT_CPU_PCT:
        return None
    return finding("object-client-cpu", "warning",
                   f"a fio job used {busiest:.0f} % of a CPU (user + system; it signs each PUT's payload with SHA-256): the client set the pace",
                   "add clients (numjobs, or --host on other machines) until the figure stops growing")  # fmt: skip


def check(ctx: CheckContext) -> list[Finding]:
    if ctx.storage is None or ctx.storage.target_kind != "s3":
        return []
    server = _server(ctx) + [f for f in (_bucket_changed(ctx), _server_cache(ctx)) if f is not None]
    obj = _object_bytes(ctx)
    if not obj:
        return server
    fastest = _fastest_ns(ctx)
    found = [_request_bound(ctx, obj, fastest), _delay(ctx, obj), _overwrite(ctx, obj), _client_cpu(ctx)]
    return server + [f for f in found if f is not None]
