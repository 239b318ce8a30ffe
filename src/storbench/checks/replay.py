"""A replay of a stored trace (``storbench run --replay``): how faithfully fio followed it, and
what a block trace cannot say.

Checks (ids):

* ``replay-fidelity`` (info) -- every replay: its wall time against the trace's span, operations
  per direction against the trace's, the per-second IOPS error (timed), the depth reached against
  the depth recorded (:mod:`storbench.trace.fidelity`).
* ``replay-drift`` (warning) -- a timed replay took 5 % (and 50 ms) longer than the trace's span:
  the candidate, or fio, did not keep the trace's pace (fio #1537, #772: fio's timed replay falls
  behind on its own too), so its figures are those of a lighter load than recorded.
* ``replay-incomplete`` (warning; invalid below 90 %) -- operations or bytes replayed differ from
  the trace's.
* ``replay-fio-version`` (info) -- a defect of the fio that replayed, with the release that fixes
  it: timed replay at queue depth above 1 inflates latency (before 3.36), trims in a text iolog are
  ignored (before 3.34; storbench leaves them out and says so), disk use reads 0 (before 3.37).
* ``trace-dropped-events`` (warning) -- the capture lost events: the trace holds fewer requests
  than the application issued.
* ``trace-cache-blind`` (info) -- a block trace holds only what reached the device: reads the page
  cache answered are not in it, writes are the kernel's writeback, not the application's calls.
* ``trace-open-loop`` (info) -- a timed replay keeps the recorded arrival times: on a faster
  candidate the application would have sent more, on a slower one less.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from storbench.model import Finding

from ._common import CheckInfo, finding, fix_of, integer

if TYPE_CHECKING:  # pragma: no cover
    from .context import CheckContext

DRIFT_PCT = 5.0
DRIFT_MIN_S = 0.05
INCOMPLETE_INVALID_SHARE = 0.9

INFO = {
    "replay-fidelity": CheckInfo(
        title="How faithfully the replay followed its trace",
        explanation="A replay is only as good as its likeness to the trace: the same requests, at the same pace, as deep. This line sets fio's own figures beside the trace's.",
        evidence="Every replay of a stored trace.",
        fix="Read the figures as a replay of this trace; where they stray, see replay-drift and replay-incomplete.",
        severities=("info",),
    ),
    "replay-drift": CheckInfo(
        title="The timed replay fell behind its trace",
        explanation="A timed replay issues each request at its recorded time; this one took longer than the trace's span, so the candidate (or fio itself: its timed replay falls behind on its own, fio #1537, #772) did not keep the recorded pace, and its figures are those of a lighter load than the application's.",
        evidence="A timed replay whose wall time exceeds the trace's span by 5 % and 50 ms or more.",
        fix="Take the replay as a sign the candidate cannot carry this workload at its recorded rate; compare the as-fast-as-it-can replay's headroom, and fio's own drift on a fast device.",
        severities=("warning",),
    ),
    "replay-incomplete": CheckInfo(
        title="The replay did not issue the trace's requests",
        explanation="fio replayed fewer (or more) operations or bytes than the trace holds: a request fio could not place (beyond the target's end), an error, or a runtime that cut it short.",
        evidence="Operations or bytes of a direction differ from the trace's; below 90 % the figure is not a replay of the trace.",
        fix="Give the replay a target at least as large as the trace's extent, and no runtime of its own.",
        severities=("warning", "invalid"),
    ),
    "replay-fio-version": CheckInfo(
        title="A defect of this fio's replay",
        explanation="fio's replay has known defects fixed in later releases: before 3.36 a timed replay at a queue depth above 1 inflates completion latency (b85c01f7); before 3.34 a text iolog's trims are ignored (#769); before 3.37 disk use reads 0 during a replay (#1735).",
        evidence="A replay by a fio older than the release that fixes a defect its workload meets.",
        fix="Read the named figure with the defect in mind, or replay with a fio of the fixing release.",
        severities=("info",),
    ),
    "trace-dropped-events": CheckInfo(
        title="The capture lost events",
        explanation="The kernel's trace buffer overflowed while the trace was recorded: the trace holds fewer requests than the application issued, and a replay of it is a lighter load.",
        evidence="A capture that counted lost events (the tracing buffer's overrun and dropped counters, or LOST EVENTS lines).",
        fix="Capture again with a larger --buffer-kb, or for a shorter time.",
        severities=("warning",),
    ),
    "trace-cache-blind": CheckInfo(
        title="A block trace does not see the page cache",
        explanation="A block trace holds what reached the device: reads the page cache answered are not in it, and writes are the kernel's writeback and journal, timed by the source's kernel, not the application's own calls. A replay measures the candidate under the source's cache, not under its own.",
        evidence="Every replay of a block trace.",
        fix="Compare candidates with the same amount of memory for the cache, or also run the application itself on them (pgbench, dbench).",
        severities=("info",),
    ),
    "trace-open-loop": CheckInfo(
        title="A timed replay keeps the recorded arrivals",
        explanation="A timed replay issues each request when it was recorded, whatever the candidate answers: on a faster candidate the application would have sent more requests, on a slower one fewer. Its latency is the candidate's under the recorded load; its rate is the trace's.",
        evidence="Every timed replay.",
        fix="Judge a timed replay by its latency and drift; the as-fast-as-it-can replay says how much faster the candidate could go.",
        severities=("info",),
    ),
}

_VERSION = re.compile(r"(\d+)\.(\d+)")


def _fio_version(ctx: CheckContext) -> tuple[int, int] | None:
    text = ctx.results[-1].fio_version or ""
    m = _VERSION.search(text)
    return (int(m[1]), int(m[2])) if m else None


def _n(value: float) -> str:
    return f"{value:,.0f}"


def _fidelity_line(ref: object, fid: dict[str, object]) -> str:
    assert isinstance(ref, dict)
    ops = fid["ops"]
    assert isinstance(ops, dict)
    parts = [f"{k} {_n(got)}/{_n(want)}" for k, (got, want) in ops.items() if want or got]
    head = f"{fid['mode']} replay of trace {ref.get('label')!r} ({_n(int(ref.get('events') or 0))} requests over {float(ref.get('span_s') or 0):.2f} s)"
    wall = fid.get("wall_s")
    if isinstance(wall, float):
        if fid["mode"] == "timed" and isinstance(fid.get("drift_pct"), float):
            head += f": took {wall:.2f} s ({fid['drift_pct']:+.1f} %)"
        elif isinstance(fid.get("speedup"), float):
            head += f": took {wall:.2f} s, {fid['speedup']:.1f}x the trace's pace"
    line = head + "; operations replayed/recorded: " + ", ".join(parts)
    per = fid.get("per_second_error_pct")
    if isinstance(per, dict):
        line += f"; per-second IOPS off by {per['mean']:.1f} % on average, {per['worst']:.1f} % in the worst of {per['seconds']} s"
    depth = fid.get("depth")
    if isinstance(depth, list) and depth[1]:
        line += f"; replayed at queue depth {depth[0] or 1}, {depth[1]} the deepest recorded"
    scaled = ref.get("scaled_by")
    if isinstance(scaled, int) and scaled > 1:
        line += f"; offsets divided by {scaled} (replay_scale: the target is smaller than the trace's {_n(int(ref.get('extent_bytes') or 0))} bytes)"
    return line


def check(ctx: CheckContext) -> list[Finding]:
    ref = ctx.replay
    if not ref:
        return []
    from storbench.trace.fidelity import fidelity, missing_share  # numpy's 0.1 s import: replays only

    result = ctx.results[-1]
    series = ctx.series[-1] if len(ctx.series) == len(ctx.results) else None
    depth = integer(ctx.options, "iodepth") or 1
    fid = fidelity(ref, result, series, depth)
    out = [finding("replay-fidelity", "info", _fidelity_line(ref, fid), fix_of(INFO["replay-fidelity"]))]
    mode = ref.get("mode")
    drift = fid.get("drift_pct")
    wall, span = fid.get("wall_s"), float(ref.get("span_s") or 0.0)
    if mode == "timed" and isinstance(drift, float) and isinstance(wall, float) and drift >= DRIFT_PCT and wall - span >= DRIFT_MIN_S:
        out.append(finding(
            "replay-drift", "warning",
            f"the timed replay took {wall:.2f} s for a trace of {span:.2f} s ({drift:+.1f} %): it fell behind the recorded pace",
            "compare the as-fast-as-it-can replay's headroom; a candidate that cannot keep the pace is too slow for this workload",
        ))  # fmt: skip
    missing = missing_share(fid)
    if missing is not None:
        what, got, want = missing
        severity = "invalid" if want and got < INCOMPLETE_INVALID_SHARE * want else "warning"
        out.append(finding(
            "replay-incomplete", severity, f"fio replayed {_n(got)} {what} of the trace's {_n(want)}",
            "give the replay a target at least as large as the trace's extent and no runtime of its own",
        ))  # fmt: skip
    version = _fio_version(ctx)
    left = ref.get("left_out") or {}
    capped = ref.get("depth_capped")
    if version is not None and version < (3, 36) and mode == "timed":
        if isinstance(capped, int):
            out.append(finding("replay-fio-version", "info", f"replayed at queue depth 1, not the {capped} the trace reached: fio {version[0]}.{version[1]}'s timed replay inflates completion latency above depth 1 (fixed in 3.36, b85c01f7); where the trace had requests in parallel, the replay may fall behind (replay-drift says)", "replay with fio 3.36 or later"))
        elif depth > 1:
            out.append(finding("replay-fio-version", "info", f"fio {version[0]}.{version[1]} inflates the completion latency of a timed replay at queue depth {depth} (fixed in 3.36, b85c01f7): read this replay's latency as an upper bound", "replay with fio 3.36 or later"))
    if version is not None and left.get("trim") and version < (3, 34):
        out.append(finding("replay-fio-version", "info", f"fio {version[0]}.{version[1]} ignores trims in a text iolog (#769, fixed in 3.34): the trace's {_n(int(left['trim']))} trims were left out", "replay with fio 3.34 or later"))
    lost = ref.get("lost_events")
    if isinstance(lost, int) and lost > 0:
        out.append(finding("trace-dropped-events", "warning", f"the capture lost {_n(lost)} events: the trace holds fewer requests than the application issued", "capture again with a larger --buffer-kb, or for a shorter time"))
    if ref.get("source") in ("tracefs", "blktrace", "msr-cambridge", "alibaba"):
        out.append(finding("trace-cache-blind", "info", "a block trace holds what reached the device: page-cache hits are not in it, writes are the source kernel's writeback", fix_of(INFO["trace-cache-blind"])))
    if mode == "timed":
        out.append(finding("trace-open-loop", "info", "a timed replay issues each request at its recorded time, whatever the candidate answers: its latency is the candidate's under the recorded load", fix_of(INFO["trace-open-loop"])))
    if left.get("write") and ref.get("reads_only"):
        out.append(finding("replay-fidelity", "info", f"reads only: the trace's {_n(int(left['write']))} writes were left out (--reads-only)", "drop --reads-only and name the target with --destroy-data to replay them"))
    return out
