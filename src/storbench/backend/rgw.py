"""What a Ceph radosgw served during one fio run of an S3 target: its own request counters.

fio 3.33's http engine counts an S3 GET of an object that does not exist (HTTP 404) as a success
and returns zeros, and fio cannot see a request the gateway failed in any other way it hides; the
gateway's own counters can.  With ``admin_socket=PATH`` on the target
(``s3://BUCKET?endpoint=...&admin_socket=/run/ceph/ceph-client.rgw.NAME.asok``), storbench reads
radosgw's ``perf dump`` (section ``rgw``: ``req``, ``failed_req``, ``get``, ``get_b``, ``put``,
``put_b``, ...) before and after each repetition; the difference is what the gateway did for it,
beside what fio counted (:mod:`storbench.checks.objects`: ``object-server-errors``).

Pure: :class:`RgwActivity`, :func:`parse_perf_dump`, :func:`format_rgw_activity`.  The edge: :mod:`.rgw_sampler`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

#: the counters kept (radosgw 16's names): requests, failed ones, GETs and PUTs served and their bytes
COUNTERS = ("req", "failed_req", "get", "get_b", "put", "put_b")


@dataclass(frozen=True)
class RgwActivity:
    """radosgw's counters before and after one run (``{name: value}`` of :data:`COUNTERS`), and what
    could not be read."""

    socket: str
    before: Mapping[str, int] | None = None
    after: Mapping[str, int] | None = None
    problems: tuple[str, ...] = ()

    def delta(self, name: str) -> int | None:
        """What the gateway counted of ``name`` during the run (None: not read); a counter that went
        down (the gateway restarted) is None too."""
        if self.before is None or self.after is None or name not in self.before or name not in self.after:
            return None
        change = self.after[name] - self.before[name]
        return change if change >= 0 else None


def _json(text: str, what: str) -> object:
    """An admin socket's answer read as JSON; ValueError naming ``what`` it is not."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not {what} (JSON): {exc}") from None


def parse_perf_dump(text: str) -> dict[str, int]:
    """``ceph --admin-daemon SOCKET perf dump`` -> the ``rgw`` section's :data:`COUNTERS`.  A
    counter radosgw gives as ``{"avgcount": N, "sum": S}`` is its count.  ValueError for what is not
    radosgw's perf dump."""
    doc = _json(text, "a perf dump")
    section = doc.get("rgw") if isinstance(doc, dict) else None
    if not isinstance(section, dict):
        raise ValueError("not radosgw's perf dump: no 'rgw' section (is the socket a radosgw's?)")
    out: dict[str, int] = {}
    for name in COUNTERS:
        value = section.get(name)
        if isinstance(value, dict):
            value = value.get("avgcount")
        if isinstance(value, int) and not isinstance(value, bool):
            out[name] = value
    if "req" not in out:
        raise ValueError("radosgw's perf dump has no 'req' counter")
    return out


def parse_paused(text: str) -> int:
    """``ceph --admin-daemon SOCKET objecter_requests`` -> how many of radosgw's requests to its
    cluster its objecter holds paused (``"paused": 1``): a cluster or pool flagged full (or
    ``ceph osd pause``) pauses them, and radosgw then leaves its clients' requests unanswered.
    0 when none is.  ValueError for what is not an objecter's requests."""
    doc = _json(text, "objecter_requests")
    ops = doc.get("ops") if isinstance(doc, dict) else None
    if not isinstance(ops, list):
        raise ValueError("not radosgw's objecter_requests: no 'ops' list")
    return sum(1 for op in ops if isinstance(op, dict) and op.get("paused") not in (0, False, None))


def format_rgw_activity(activity: RgwActivity) -> list[str]:
    """``radosgw (its counters): 9,692 requests, 0 failed; 9,692 GETs served (37.9 MiB), 0 PUTs (0 B)``,
    or what could not be read."""
    from ..units import format_bytes

    if activity.problems:
        return list(activity.problems)
    req, failed = activity.delta("req"), activity.delta("failed_req")
    if req is None:
        return [f"radosgw's counters at {activity.socket} went down during the run (did it restart?): not compared"]
    parts = [f"{req:,} requests, {failed if failed is not None else '?'} failed"]
    for name, what in (("get", "GETs served"), ("put", "PUTs")):
        count, size = activity.delta(name), activity.delta(f"{name}_b")
        if count is not None:
            parts.append(f"{count:,} {what}" + (f" ({format_bytes(size)})" if size is not None else ""))
    return ["radosgw (its own counters): " + "; ".join(parts)]
