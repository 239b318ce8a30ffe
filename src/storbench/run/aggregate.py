"""A client/server result split per host, and fio's "All clients" aggregate given the hosts'
merged latency distributions (from their json+ histograms). Pure."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import FioResult, JobResult, LatencyStats


def per_host_results(
    result: FioResult, names: Mapping[tuple[str, int], str] | None = None
) -> list[tuple[str | None, FioResult]]:
    """Split a client/server result into one result per host plus the aggregate
    (host None); an ordinary result gives an empty list.  Pure.

    A host is fio's (``hostname``, ``port``): two servers on one address (SSH
    tunnels, loopback) are two hosts.  It is named ``names[(hostname, port)]``
    when given, else ``hostname``, else ``hostname:port`` where the address is shared;
    hosts in ``names`` come first, in its order.
    """
    if not any(j.hostname for j in result.jobs):
        return []
    # fio gives a host's port as an int; a job read without one (port None) is still a host of its own
    given: dict[tuple[str | None, int | None], str] = {key: name for key, name in (names or {}).items()}
    out: list[tuple[str | None, FioResult]] = []
    keys = list(dict.fromkeys((j.hostname, j.port) for j in result.jobs if j.hostname and not j.is_aggregate))
    order = {key: i for i, key in enumerate(given)}  # fio lists hosts as they finish: keep the given order
    keys.sort(key=lambda key: order.get(key, len(order)))
    shared = {h for h, _ in keys if sum(1 for k, _ in keys if k == h) > 1}
    for key in keys:
        hostname, port = key
        name = given.get(key) or (f"{hostname}:{port}" if hostname in shared else hostname)
        jobs = tuple(j for j in result.jobs if (j.hostname, j.port) == key and not j.is_aggregate)
        # disk_util names the host but not the port: shared addresses keep every entry of that address
        disks = tuple(d for d in result.disk_util if getattr(d, "hostname", None) in (hostname, None))
        out.append((name, dataclasses.replace(result, jobs=jobs, disk_util=disks)))
    aggregate = tuple(_with_hosts_latency(j, [h for h in result.jobs if not h.is_aggregate]) for j in result.jobs if j.is_aggregate)
    if aggregate:
        out.append((None, dataclasses.replace(result, jobs=aggregate, disk_util=())))
    return out


def _with_hosts_latency(aggregate: JobResult, hosts: Sequence[JobResult]) -> JobResult:
    """fio's "All clients" entry carries no latency: give each of its directions the hosts' merged
    distribution (from their json+ histograms: :func:`storbench.metrics.merge_latency`), as
    group_reporting would have computed it; left as it is where a histogram is missing."""
    directions = dict(aggregate.directions)
    for name, d in aggregate.directions.items():
        parts = [h.directions[name] for h in hosts if name in h.directions]
        clat, lat = (_merged_latency(getattr(d, kind), [getattr(p, kind) for p in parts]) for kind in ("clat_ns", "lat_ns"))
        if clat is not None or lat is not None:
            directions[name] = dataclasses.replace(d, clat_ns=clat if clat is not None else d.clat_ns,
                                                   lat_ns=lat if lat is not None else d.lat_ns)  # fmt: skip
    return dataclasses.replace(aggregate, directions=directions)


def _merged_latency(own: LatencyStats | None, hosts: Sequence[LatencyStats | None]) -> LatencyStats | None:
    """The hosts' latencies merged where the aggregate has no distribution of its own (None: it has
    one, or a host has none, or there are no hosts)."""
    from ..metrics import merge_latency

    if own is not None and own.percentiles:
        return None
    given = [h for h in hosts if h is not None]
    return merge_latency(given) if hosts and len(given) == len(hosts) else None
