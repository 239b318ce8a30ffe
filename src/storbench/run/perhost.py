"""What each host of a client/server run did, read from fio's output: the hosts missing from it
(:func:`lost_hosts`), each host's own JSON (:func:`host_outputs`), when each ran
(:func:`host_timing`), the seconds every host ran together (:func:`common_window`), and the
findings that make a slow tail or a partial aggregate visible (:func:`straggler_findings`,
:func:`partial_findings`, :func:`window_findings`), with the lines ``show`` prints for many hosts
(:func:`format_host_lines`). Pure.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from storbench.jsontypes import JSONList, JSONObject, JSONValue

from ..model import EACH_HOST_UP_TO, Finding, FioResult, versions
from ..record import ResultRecord
from .inventory import Host

#: a straggler finding names this many hosts, the worst first, and counts the others
STRAGGLERS_NAMED = 5
#: a host whose headline metric is below this share of the hosts' median is a straggler
STRAGGLER_RATIO = 0.8


def lost_hosts(hosts: Sequence[Host], output_text: str, stderr_text: str) -> dict[str, str]:
    """Pure: hosts (by display name) that are missing from a client/server result, with
    fio's words about them when it said any.  Empty when the output holds no result at
    all (the whole workload failed; the runner says so)."""
    from ..fio.json import find_fio_json

    docs, _ = find_fio_json(output_text)  # which hosts answered, without the whole parse
    if not docs:
        return {}
    present = {(str(e.get("hostname")), _port(e.get("port"))) for e in docs[-1][2].get("client_stats") or ()
               if isinstance(e, dict) and e.get("hostname") and e.get("jobname") != "All clients"}  # fmt: skip
    if not present:
        return {}
    missing = [h for h in hosts if h.fio_key not in present]
    if not missing:  # fio's words are read only when some host is missing (0.11 s of 1 MB at 64 hosts)
        return {}
    said = fio_lines(stderr_text + "\n" + output_text) + client_lines(stderr_text + "\n" + output_text)
    out: dict[str, str] = {}
    for host in missing:
        about = [s for s in said if host.endpoint in s or f"{host.address}:{host.port}" in s]
        # a line naming only the address is about this host when no other missing host has it
        if not about and sum(1 for m in missing if m.address == host.address) == 1:
            about = [s for s in said if re.search(rf"(?<![\w.:]){re.escape(host.address)}(?![\w.])", s)]
        if about:
            out[host.display] = f"no result from this host: fio said: {'; '.join(dict.fromkeys(about))}"
        else:
            out[host.display] = "no result from this host: the connection to its fio server was lost (server killed, host down or network gone)"
    return out


def host_outputs(output_text: str, names: Mapping[tuple[str, int], str]) -> dict[str, str]:
    """Pure: each host's own part of a client run's JSON, by host name: the document with only
    that host's ``client_stats`` entries.  A host's record keeps this, the aggregate the whole
    output (every host keeping the whole output made a 256-host run store 256 copies of 3 MB)."""

    from ..fio.json import find_fio_json

    docs, _ = find_fio_json(output_text)
    if not docs:
        return {}
    doc = docs[-1][2]
    rest = {k: v for k, v in doc.items() if k != "client_stats"}
    entries: dict[str, JSONList] = {}
    for entry in doc.get("client_stats") or ():
        if isinstance(entry, dict) and (name := names.get((str(entry.get("hostname")), _port(entry.get("port"))))):
            entries.setdefault(name, []).append(entry)
    # compact: with indent=2, Python's own encoder took 0.33 s for 64 hosts' parts, the C one 0.05 s
    return {name: json.dumps({**rest, "client_stats": mine}, separators=(",", ":")) for name, mine in entries.items()}


def _port(value: JSONValue) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


def host_timing(per_host: Sequence[tuple[str, FioResult]]) -> dict[str, JSONObject]:
    """Pure: when each host finished, relative to the others (``series["timing"]`` of its record).

    Client mode reports no timestamps per host, so the time a host took is its jobs'
    ``job_runtime`` (the longest job; direction runtimes where fio gives none).  With
    a ``runtime`` limit every host takes about as long; with a size limit a slow host
    takes longer, and ``behind_first_ms`` shows the tail.
    """
    took: dict[str, int | None] = {}
    for name, result in per_host:
        values = [j.job_runtime_ms for j in result.jobs if j.job_runtime_ms]
        if not values:
            values = [d.runtime_ms for j in result.jobs for d in j.directions.values() if d.runtime_ms]
        took[name] = max(values) if values else None
    known = [v for v in took.values() if v is not None]
    first = min(known) if known else None
    last = max(known) if known else None
    return {
        name: {
            "format_version": versions.HOST_TIMING,
            "runtime_ms": value,
            "first_done_ms": first,
            "last_done_ms": last,
            "behind_first_ms": None if value is None or first is None else value - first,
            "hosts": len(per_host),
        }
        for name, value in took.items()
    }


#: hosts whose start or end differs by more than this share of the runtime (and by more than one
#: logging interval) did not run together
APART_SHARE = 0.10


#: the hosts' interval logs: one second a row, stamped with Unix time (ClientFio asks for them)
INTERVAL_MS = 1000


@dataclass(frozen=True)
class CommonWindow:
    """The interval in which every host was running (Unix ms), and the aggregate over it: the
    hosts' IOPS and bandwidth summed second by second inside it, then averaged."""

    start_ms: int
    end_ms: int
    iops: float
    bw_bytes: float
    #: each host's first and last second: (host, start_ms, end_ms)
    spans: tuple[tuple[str, int, int], ...]

    @property
    def seconds(self) -> float:
        return max(0, self.end_ms - self.start_ms) / 1000

    def to_dict(self) -> JSONObject:
        return {"format_version": versions.HOST_TIMING, "start_ms": self.start_ms, "end_ms": self.end_ms, "seconds": self.seconds,
                "iops": self.iops, "bw_bytes": self.bw_bytes, "hosts": [list(s) for s in self.spans]}  # fmt: skip


def common_window(series: Mapping[str, Sequence[tuple[int, float, float]]]) -> CommonWindow | None:
    """Pure: from each host's :func:`storbench.fio.logs.epoch_series` (a row per second: the
    interval's end in Unix ms, IOPS, bytes/s), the window every host ran in and the aggregate over
    it; None without two hosts with logs.  A host's span is from its first interval's start to its
    last interval's end; the window's aggregate counts the seconds wholly inside it."""
    spans = [(h, rows[0][0] - INTERVAL_MS, rows[-1][0]) for h, rows in series.items() if rows]
    if len(spans) < 2:
        return None
    start, end = max(s for _, s, _ in spans), min(e for _, _, e in spans)
    slack = INTERVAL_MS // 10  # the hosts' rows end a few ms apart
    iops = bw = 0.0
    for rows in series.values():
        inside = [(i, b) for t, i, b in rows if t - INTERVAL_MS >= start - slack and t <= end + slack]
        if inside:
            iops += sum(i for i, _ in inside) / len(inside)
            bw += sum(b for _, b in inside) / len(inside)
    return CommonWindow(start_ms=start, end_ms=end, iops=iops, bw_bytes=bw, spans=tuple(sorted(spans, key=lambda s: s[1])))


def window_findings(workload: str, window: CommonWindow | None, fio_sum_iops: float | None) -> list[Finding]:
    """Pure: a ``hosts-not-together`` finding when the hosts' starts or ends differ by more than
    :data:`APART_SHARE` of the runtime (and a logging interval), naming the late hosts and how far
    fio's "All clients" sum is from the aggregate over the window they all ran."""
    if window is None:
        return []
    first_start = min(s for _, s, _ in window.spans)
    last_end = max(e for _, _, e in window.spans)
    runtime_ms = max(e - s for _, s, e in window.spans)
    allowed = max(INTERVAL_MS, APART_SHARE * runtime_ms)
    late = [(h, s - first_start) for h, s, _ in window.spans if s - first_start > allowed]
    early = [(h, last_end - e) for h, _, e in window.spans if last_end - e > allowed]
    if not late and not early:
        return []
    said = [f"{h} started {d / 1000:.1f} s after the first" for h, d in late[:3]]
    said += [f"{h} ended {d / 1000:.1f} s before the last" for h, d in early[:3]]
    more = len(late) + len(early) - len(said)
    if window.seconds <= 0:
        how = "no second had every host running: fio's sum adds up runs that never overlapped"
    else:
        how = f"every host ran together for {window.seconds:.1f} s, in which they did {window.iops:,.0f} IOPS together"
        if fio_sum_iops:
            over = (fio_sum_iops - window.iops) / window.iops * 100 if window.iops else None
            how += f"; fio's sum of each host over its own runtime says {fio_sum_iops:,.0f}" + (f" ({over:+.0f} %)" if over is not None else "")
    return [
        Finding(
            check="hosts-not-together",
            severity="warning",
            message=f"{'; '.join(said)}{f' (and {more} more)' if more > 0 else ''}: {how}",
            fix="start the hosts together (a slow connection, a busy server, a late startdelay), or judge the aggregate over the common window",
            workload=workload,
        )
    ]


def partial_findings(workload: str, measured: int, missing: Mapping[str, str]) -> list[Finding]:
    """Pure: a ``hosts-partial`` finding when the aggregate holds fewer hosts than were asked for
    (left out before the run, lost or failed during it), naming them: it is not the figure of
    the hosts asked for, and compares with runs on all of them only as a partial figure."""
    if not missing:
        return []
    named = sorted(missing.items(), key=lambda kv: host_sort_key(kv[0]))
    said = "; ".join(f"{h}: {why}" for h, why in named[:3]) + (f" (and {len(named) - 3} more)" if len(named) > 3 else "")
    return [
        Finding(
            check="hosts-partial",
            severity="warning",
            message=f"partial aggregate: {measured} of {measured + len(missing)} hosts measured; missing {said}",
            fix="bring the missing hosts back and run again (--hosts-required all stops a run that loses one)",
            workload=workload,
        )
    ]


def straggler_findings(workload: str, headline: str, per_host: Sequence[tuple[str, FioResult]]) -> list[Finding]:
    """Pure: hosts whose headline metric is far below the hosts' median (or, for a
    latency headline, far above it).  Needs at least two hosts with the metric."""
    from ..metrics import headline_metric, headline_value

    values = [(name, headline_value(result, headline)) for name, result in per_host]
    known = [(n, v) for n, v in values if v is not None]
    if len(known) < 2:
        return []
    median = statistics.median(v for _, v in known)
    if median <= 0:
        return []
    lower_is_better = headline_metric(headline) == "lat_mean_ns"
    slow = []
    for name, value in known:
        share = value / median
        if (share > 1 / STRAGGLER_RATIO) if lower_is_better else (share < STRAGGLER_RATIO):
            slow.append((name, share))
    if not slow:
        return []
    metric = {"iops": "IOPS", "bw_bytes": "bandwidth", "lat_mean_ns": "mean latency"}[headline_metric(headline)]
    slow.sort(key=lambda ns: (-ns[1] if lower_is_better else ns[1], host_sort_key(ns[0])))  # the worst first
    parts = ", ".join(f"{n} ({s:.0%} of the median)" for n, s in slow[:STRAGGLERS_NAMED])
    if len(slow) > STRAGGLERS_NAMED:
        parts += f" and {len(slow) - STRAGGLERS_NAMED} more of {len(slow)} hosts (storbench show RUN --hosts lists each)"
    return [
        Finding(
            check="straggler",
            severity="warning",
            message=f"{metric} of {parts} is far {'above' if lower_is_better else 'below'} the median of "
            f"{len(known)} hosts; the aggregate is held back by the slowest host",
            fix="look at that host: its storage, load, network path or fio settings differ from the others",
            workload=workload,
        )
    ]


def host_sort_key(name: str | None) -> tuple:
    """Hosts in the order a person counts them: ``127.0.0.9`` before ``127.0.0.10``."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name or ""))


def format_host_lines(records: Sequence[ResultRecord], each_up_to: int = EACH_HOST_UP_TO,
                      every_host: str | None = None) -> list[str]:  # fmt: skip
    """Pure: per workload and repetition, the aggregate first (with the window every host ran),
    then each host a line, or beyond ``each_up_to`` hosts one line of min/median/max with the
    slowest hosts named (``every_host``: how to see them all, said once)."""
    from ..metrics import direction_figures
    from ..units import fmt_bw, fmt_iops

    def figures(rec: ResultRecord) -> tuple[float, float]:
        per = direction_figures(rec.fio)
        return sum(f["iops"] or 0 for f in per.values()), sum(f["bw_bytes"] or 0 for f in per.values())

    def timing_tail(rec: ResultRecord) -> str:
        timing = (rec.series or {}).get("timing") if isinstance(rec.series, Mapping) else None
        if not timing or timing.get("runtime_ms") is None:
            return ""
        tail = f"  took {timing['runtime_ms'] / 1000:.1f} s"
        if timing.get("behind_first_ms"):
            tail += f" (+{timing['behind_first_ms'] / 1000:.1f} s after the first)"
        return tail

    lines: list[str] = []
    by_key: dict[tuple[str, int], list[ResultRecord]] = {}
    for rec in records:
        if rec.host is not None:
            by_key.setdefault((rec.workload, rec.repetition), []).append(rec)
    summarised = False
    for (workload, repetition), members in by_key.items():
        lines.append(f"{workload}" + (f" #{repetition + 1}" if repetition else "") + ":")
        hosts = sorted((r for r in members if r.host != "all"), key=lambda r: host_sort_key(r.host))
        for rec in (r for r in members if r.host == "all"):
            iops, bw = figures(rec)
            window = (rec.series or {}).get("window") if isinstance(rec.series, Mapping) else None
            tail = timing_tail(rec)
            if window and window.get("seconds", 0) > 0:
                tail += f"  all ran together {window['seconds']:.1f} s: {fmt_iops(window['iops'])} IOPS {fmt_bw(window['bw_bytes'])}"
            elif window:
                tail += "  no second had every host running"
            lines.append(f"  {f'all {len(hosts)} hosts':<24} {fmt_iops(iops):>10} IOPS {fmt_bw(bw):>12}{tail}")
        if len(hosts) <= each_up_to:
            for rec in hosts:
                iops, bw = figures(rec)
                lines.append(f"  {rec.host:<24} {fmt_iops(iops):>10} IOPS {fmt_bw(bw):>12}{timing_tail(rec)}")
            continue
        ranked = sorted(hosts, key=lambda r: figures(r)[0])
        values = [figures(r)[0] for r in ranked]
        slowest = ", ".join(f"{r.host} {fmt_iops(v)}" for r, v in zip(ranked[:3], values[:3], strict=False))
        lines.append(f"  {len(hosts)} hosts, IOPS each: min {fmt_iops(values[0])} · median {fmt_iops(statistics.median(values))} · "
                     f"max {fmt_iops(values[-1])} ({ranked[-1].host}); slowest: {slowest}")  # fmt: skip
        summarised = True
    if summarised and every_host:
        lines.append(f"every host: {every_host}")
    return lines


def fio_lines(text: str) -> list[str]:
    out = []
    for raw in text.replace("\r", "\n").splitlines():
        line = raw.strip()
        m = re.match(r"^(?:<[^>]*>\s*)?fio:\s*(.*)$", line)
        if m and m.group(1):
            out.append(m.group(1))
    return out


def client_lines(text: str) -> list[str]:
    """fio's client notes about a connection: ``client: host=X disconnected``,
    ``client <X>: timeout on SEND_ETA``."""
    return [
        line.strip()
        for line in text.replace("\r", "\n").splitlines()
        if re.match(r"^client(?::| <[^>]*>:) ", line.strip())
    ]
