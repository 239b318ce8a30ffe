"""Pure: response curves, their knee, and the latency-SLA ceiling.

A **curve** raises the load on one workload step by step and records each step as a
result: throughput (IOPS, bandwidth) against latency (mean, p50, p99, p99.9).  The load is
either outstanding I/O (``--load iodepth=1,2,4,... --load numjobs=1,4``: every combination,
ordered by ``iodepth x numjobs``) or a fixed request rate (``--rate 10%..100%``: fio's
``rate_iops`` at shares of the maximum the unthrottled workload reached, as latency under
load is measured for services).

**Stopping early** (:func:`stop_reason`): once the chosen latency figure exceeds its limit
(``--stop-at p99=20ms``), or once throughput stops growing: :data:`PLATEAU_STEPS`
consecutive steps that each add less than :data:`PLATEAU_GAIN` (2 %).

**The knee** (:func:`find_knee`): walking up the curve, the first step after which the next
one buys less than ``min_gain`` (10 % by default) of extra IOPS while p99 rises by more than
the IOPS did.  Beyond it, load turns into queueing: the latency grows and the throughput
does not.  This is the "hockey stick" of CBT's and diskplorer's latency-versus-throughput
curves, made a rule; the one line says what lies beyond it, up to the last step ("knee at
iodepth=16: 48.2k IOPS, p99 1.10 ms; beyond it +4% IOPS for +210% p99").

**The SLA ceiling** (:func:`sla_bracket`, :func:`next_probe`, :func:`ceiling_verdict`): the
most IOPS at which a latency figure (``--sla p99=2ms``; any percentile, or ``mean``) stays
within its limit.  Between the last step inside the limit and the first outside, the rate is
bisected (each probe a stored result) until the bracket is narrower than
:data:`SLA_RESOLUTION` (2 %) or :data:`SLA_MAX_PROBES` probes were made; the winning rate is
then run again ``repeat`` times, and the ceiling is said to be *within the noise* when the
limit lies inside the repeated p99's mean ± 2 sd.

**Curves side by side** (:func:`iso_latency`, :func:`side_by_side`): several targets or setups
compared at one latency (the SLA limit, or the highest p99 every curve reaches), each curve's
most IOPS within it bracketed as the ceiling is and interpolated towards the next step beyond
it (:func:`iops_at`): "at the same p99 (2.00 ms): xfs 45.0k IOPS, ext4 42.1k (-6%)".

Everything here takes and returns frozen records; running fio is :mod:`storbench.curve.runner`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import UsageError
from ..metrics import summary_jobs
from ..model import FioResult, pct_key
from ..units import parse_duration

__all__ = [
    "Ceiling",
    "CurvePlan",
    "Knee",
    "Point",
    "ceiling_verdict",
    "find_knee",
    "format_ceiling",
    "format_knee",
    "iops_at",
    "iso_latency",
    "next_probe",
    "parse_limit",
    "parse_load",
    "parse_rate",
    "point_of",
    "rate_options",
    "sla_bracket",
    "step_name",
    "stop_reason",
]

#: throughput "stops growing": this many consecutive steps each adding less than PLATEAU_GAIN
PLATEAU_STEPS = 2
PLATEAU_GAIN = 0.02
#: the knee: the next step adds less than this share of IOPS (while p99 rises faster)
KNEE_MIN_GAIN = 0.10
#: the SLA search stops when its bracket is this narrow (share of the upper rate) or after this many probes
SLA_RESOLUTION = 0.02
SLA_MAX_PROBES = 6
#: load options a curve may raise
LOAD_KEYS = ("iodepth", "numjobs")
#: latency figures a limit may name: fio's percentiles and the mean
_FIGURE_RE = re.compile(r"^(mean|p(\d+(?:\.\d+)?))$")


@dataclass(frozen=True)
class Point:
    """One step of a curve: its fio options and what it measured (all directions summed;
    latencies I/O-weighted over directions, percentiles of completion latency)."""

    step: tuple[tuple[str, str], ...]  # the options this step sets: (("iodepth", "8"),) or (("rate_iops", "24000"),)
    iops: float
    bw_bytes: float
    lat_mean_ns: float | None
    percentiles_ns: Mapping[str, float]  # fio's keys: "50.0", "99.0", "99.9", ...
    result_id: int | None = None

    def figure(self, name: str) -> float | None:
        """``"mean"``, ``"p99"``, ``"p99.9"``, ``"p50"``: that latency in ns, None when not measured."""
        if name == "mean":
            return self.lat_mean_ns
        m = _FIGURE_RE.match(name)
        if not m or m.group(2) is None:
            return None
        return self.percentiles_ns.get(pct_key(m.group(2)))

    @property
    def p99_ns(self) -> float | None:
        return self.figure("p99")

    @property
    def label(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.step)


@dataclass(frozen=True)
class Knee:
    index: int  # into the points
    point: Point
    gain_beyond_pct: float  # IOPS from the knee to the last step
    p99_rise_beyond_pct: float | None  # p99 from the knee to the last step


@dataclass(frozen=True)
class Ceiling:
    figure: str  # "p99"
    limit_ns: float
    rate_iops: float | None  # the most IOPS asked for that kept the limit; None: even the lowest step broke it
    point: Point | None  # the winning probe (first run)
    repeated_ns: tuple[float, ...] = ()  # the figure in the repeated runs of the winning rate
    iops_repeated: tuple[float, ...] = ()
    within_noise: bool = False  # the limit lies inside mean ± 2 sd of the repeated figure
    probes: int = 0
    note: str = ""
    #: the limit held at every step: the ceiling is at least ``rate_iops`` (the curve did not reach it)
    open_ended: bool = False

    @property
    def confirmed(self) -> bool:
        """The repeated runs kept the limit on average, or it is within their noise."""
        if not self.repeated_ns:
            return True
        return self.within_noise or sum(self.repeated_ns) / len(self.repeated_ns) <= self.limit_ns


# --------------------------------------------------------------------------- parsing


def parse_load(values: Sequence[str]) -> list[tuple[tuple[str, str], ...]]:
    """``["iodepth=1,2,4", "numjobs=1,4"]`` -> every combination, ordered by iodepth x numjobs
    (then as given); one-line UsageError for anything else."""
    axes: list[tuple[str, list[int]]] = []
    for text in values:
        key, sep, rest = text.partition("=")
        key = key.strip()
        if not sep or key not in LOAD_KEYS:
            raise UsageError(f"--load {text!r}: give OPTION=V1,V2,... with OPTION one of {', '.join(LOAD_KEYS)}, e.g. --load iodepth=1,2,4,8")
        if any(k == key for k, _ in axes):
            raise UsageError(f"--load {key} is given twice")
        try:
            levels = [int(v) for v in rest.split(",") if v.strip()]
        except ValueError:
            raise UsageError(f"--load {text!r}: the values must be whole numbers from 1, e.g. {key}=1,2,4,8") from None
        if not levels or any(v < 1 for v in levels):
            raise UsageError(f"--load {text!r}: the values must be whole numbers from 1, e.g. {key}=1,2,4,8")
        if len(set(levels)) != len(levels):
            raise UsageError(f"--load {text!r}: a value is given twice")
        axes.append((key, levels))
    combos = [tuple((k, str(v)) for (k, _), v in zip(axes, values)) for values in itertools.product(*(lv for _, lv in axes))]

    def outstanding(step: tuple[tuple[str, str], ...]) -> int:
        d = dict(step)
        return int(d.get("iodepth", "1")) * int(d.get("numjobs", "1"))

    return sorted(combos, key=outstanding)  # sorted() is stable: ties keep the given order


def parse_rate(text: str) -> list[float]:
    """``"10%..100%"`` (steps of 10 points), ``"20%..100%/20"`` (steps of 20), ``"25%,50%,100%"``:
    shares of the maximum as fractions, rising; one-line UsageError otherwise."""
    t = text.replace(" ", "")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)%\.\.(\d+(?:\.\d+)?)%(?:/(\d+(?:\.\d+)?))?", t)
    if m:
        lo, hi, step = float(m.group(1)), float(m.group(2)), float(m.group(3) or 10)
        if not 0 < lo <= hi <= 100 or step <= 0:
            raise UsageError(f"--rate {text!r}: give LOW%..HIGH% with 0 < LOW <= HIGH <= 100, e.g. 10%..100%")
        out, x = [], lo
        while x <= hi + 1e-9:
            out.append(round(x, 6) / 100)
            x += step
        return out
    parts = t.split(",")
    if all(re.fullmatch(r"\d+(?:\.\d+)?%", p) for p in parts):
        values = sorted({float(p[:-1]) / 100 for p in parts})
        if values[0] > 0 and values[-1] <= 1:
            return values
    raise UsageError(f"--rate {text!r}: give LOW%..HIGH% (e.g. 10%..100%, or 20%..100%/20) or a list such as 25%,50%,100%")


def parse_limit(text: str, option: str) -> tuple[str, float]:
    """``"p99=20ms"`` -> ("p99", 20e6 ns); the figure is ``mean`` or a percentile ``pN``."""
    figure, sep, value = text.partition("=")
    figure = figure.strip().lower()
    if not sep or not _FIGURE_RE.match(figure):
        raise UsageError(f"{option} {text!r}: give FIGURE=DURATION with FIGURE mean or a percentile such as p99 or p99.9, e.g. {option} p99=2ms")
    m = _FIGURE_RE.match(figure)
    if m and m.group(2) is not None and not 0 < float(m.group(2)) < 100:
        raise UsageError(f"{option} {text!r}: a percentile is between p0 and p100, e.g. p99")
    try:
        seconds = parse_duration(value.strip())
    except UsageError:
        raise UsageError(f"{option} {text!r}: {value!r} is not a duration (give e.g. 2ms, 500us, 1s)") from None
    if seconds <= 0:
        raise UsageError(f"{option} {text!r}: the limit must be above 0")
    return figure, seconds * 1e9


# --------------------------------------------------------------------------- points


def point_of(step: tuple[tuple[str, str], ...], result: FioResult, result_id: int | None = None) -> Point:
    """A curve point from one fio result (every job of the summary, every direction)."""
    dirs = [d for j in summary_jobs(result) for d in j.directions.values()]
    iops = sum(d.iops for d in dirs)
    bw = sum(d.bw_bytes for d in dirs)
    weights = [float(d.total_ios if d.total_ios is not None else d.iops) for d in dirs]
    lats = [(d.lat_ns or d.clat_ns) for d in dirs]
    measured = [x for x in lats if x is not None]
    mean = None
    if dirs and len(measured) == len(lats) and sum(weights) > 0:
        mean = sum(x.mean_ns * w for x, w in zip(measured, weights)) / sum(weights)
    percentiles: dict[str, float] = {}
    sources = [d.clat_ns if d.clat_ns is not None and d.clat_ns.percentiles else d.lat_ns for d in dirs]
    given = [s for s in sources if s is not None and s.percentiles]
    if dirs and len(given) == len(sources):
        keys = set.intersection(*(set(s.percentiles) for s in given))
        for key in keys:
            if sum(weights) > 0:
                # the slowest direction's percentile: what a request waits at worst for its kind
                percentiles[key] = max(s.percentiles[key] for s in given)
    return Point(step=step, iops=iops, bw_bytes=bw, lat_mean_ns=mean, percentiles_ns=percentiles, result_id=result_id)


def stop_reason(points: Sequence[Point], stop_at: tuple[str, float] | None) -> str | None:
    """Why the curve stops after its last point, or None to go on."""
    if not points:
        return None
    last = points[-1]
    if stop_at is not None:
        figure, limit = stop_at
        value = last.figure(figure)
        if value is not None and value > limit:
            return f"{figure} {_ms(value)} is above the limit {_ms(limit)} at {last.label}"
    if len(points) > PLATEAU_STEPS:
        recent = points[-(PLATEAU_STEPS + 1):]
        gains = [(b.iops / a.iops - 1) if a.iops > 0 else 0.0 for a, b in itertools.pairwise(recent)]
        if all(g < PLATEAU_GAIN for g in gains):
            return f"throughput stopped growing: the last {PLATEAU_STEPS} steps added {', '.join(f'{g * 100:+.1f}%' for g in gains)} IOPS"
    return None


def find_knee(points: Sequence[Point], min_gain: float = KNEE_MIN_GAIN) -> Knee | None:
    """The first point after which the next step adds less than ``min_gain`` IOPS while p99
    rises by more than the IOPS do (see the module docstring); None when the curve has no such
    point (it still grows, or p99 was not measured)."""
    for i in range(len(points) - 1):
        a, b = points[i], points[i + 1]
        if a.iops <= 0 or a.p99_ns is None or b.p99_ns is None or a.p99_ns <= 0:
            continue
        gain = b.iops / a.iops - 1
        rise = b.p99_ns / a.p99_ns - 1
        if gain < min_gain and rise > gain:
            last = points[-1]
            beyond = 100.0 * (last.iops / a.iops - 1)
            p99_beyond = 100.0 * (last.p99_ns / a.p99_ns - 1) if last.p99_ns is not None else None
            return Knee(index=i, point=a, gain_beyond_pct=beyond, p99_rise_beyond_pct=p99_beyond)
    return None


def _ms(ns: float | None) -> str:
    from ..units import fmt_ns

    return fmt_ns(ns)


def format_knee(knee: Knee | None, points: Sequence[Point]) -> str:
    from ..units import fmt_iops

    if knee is None:
        if not points:
            return "no points"
        return f"no knee: throughput still grew by {KNEE_MIN_GAIN * 100:.0f}% or more at every step (or p99 was not measured)"
    p = knee.point
    beyond = f"beyond it {knee.gain_beyond_pct:+.0f}% IOPS"
    if knee.p99_rise_beyond_pct is not None:
        beyond += f" for {knee.p99_rise_beyond_pct:+.0f}% p99"
    return f"knee at {p.label}: {fmt_iops(p.iops)} IOPS, p99 {_ms(p.p99_ns)}; {beyond}"


# --------------------------------------------------------------------------- the SLA ceiling


def sla_bracket(points: Sequence[Point], figure: str, limit_ns: float) -> tuple[Point | None, Point | None]:
    """(the highest-IOPS point within the limit, the first point after it, in step order,
    that is beyond the limit); either may be None."""
    inside = [p for p in points if (v := p.figure(figure)) is not None and v <= limit_ns]
    best = max(inside, key=lambda p: p.iops, default=None)
    start = points.index(best) + 1 if best is not None else 0
    after = [p for p in points[start:] if (v := p.figure(figure)) is not None and v > limit_ns]
    return best, (after[0] if after else None)


def next_probe(lo_iops: float, hi_iops: float, probes: int) -> float | None:
    """The next rate to try between a rate that kept the limit and one that broke it, or None
    when the bracket is narrow enough or the probes are used up."""
    if probes >= SLA_MAX_PROBES or hi_iops <= 0 or (hi_iops - lo_iops) / hi_iops < SLA_RESOLUTION:
        return None
    return (lo_iops + hi_iops) / 2


def ceiling_verdict(limit_ns: float, repeated_ns: Sequence[float]) -> bool:
    """True when the limit lies inside mean ± 2 sd of the repeated figure: the ceiling is
    within the noise (another run could land on either side)."""
    if len(repeated_ns) < 2:
        return False
    from ..stats.core import summarize

    s = summarize(list(repeated_ns))
    sd = s.stddev or 0.0
    return s.mean - 2 * sd <= limit_ns <= s.mean + 2 * sd


def format_ceiling(c: Ceiling) -> str:
    from ..units import fmt_iops

    if c.rate_iops is None:
        return f"SLA {c.figure} <= {_ms(c.limit_ns)}: not kept even at the lowest step" + (f" ({c.note})" if c.note else "")
    if c.open_ended:  # one thing said: the curve never broke the limit, so its ceiling lies beyond the last step
        text = (f"SLA {c.figure} <= {_ms(c.limit_ns)}: at least {fmt_iops(c.rate_iops)} IOPS: the limit held at every "
                "step, the ceiling lies beyond the curve (raise the load further)")  # fmt: skip
    else:
        text = f"SLA {c.figure} <= {_ms(c.limit_ns)}: at most {fmt_iops(c.rate_iops)} IOPS"
    if c.repeated_ns:
        from ..stats.core import summarize

        s = summarize(list(c.repeated_ns))
        spread = f" ± {_ms(s.stddev)}" if s.stddev is not None else ""
        text += f" ({c.figure} {_ms(s.mean)}{spread} over {s.n} runs"
        if c.within_noise:
            text += ", within the noise: the limit lies inside mean ± 2 sd)"
        elif not c.confirmed:
            text += ": NOT confirmed, the repeated runs broke the limit; the first run was luck or the load is noisy)"
        else:
            text += ")"
    text += f"; {c.probes} probe{'s' if c.probes != 1 else ''}"
    return text + (f"; {c.note}" if c.note else "")


# --------------------------------------------------------------------------- curves side by side


def iops_at(points: Sequence[tuple[float, float | None]], level_ns: float) -> float | None:
    """The most IOPS a curve gives within the latency ``level_ns``, the way the SLA ceiling
    is bracketed (:func:`sla_bracket`): ``points`` are (IOPS, latency) in step order; of the
    steps at or under the level, the one with the most IOPS, and from it towards the first
    later step above the level, the IOPS interpolated linearly in latency (never below that
    step's own).  ``None`` when no step is within the level; the best step's IOPS when no
    later step goes above it (the curve gives at least that at the level).  A noisy curve
    whose p99 jumps above the level at a light load and back under it at a heavier one is
    judged by the heavier step, as the ceiling is."""
    known = [(i, lat) for i, lat in points if lat is not None]
    inside = [k for k, (_i, lat) in enumerate(known) if lat <= level_ns]
    if not inside:
        return None
    best = max(inside, key=lambda k: known[k][0])
    i0, l0 = known[best]
    beyond = next(((i, lat) for i, lat in known[best + 1:] if lat > level_ns), None)
    if beyond is None:
        return i0
    i1, l1 = beyond
    return max(i0, i0 + (i1 - i0) * (level_ns - l0) / (l1 - l0))


def iso_latency(curves: Sequence[tuple[str, Sequence[tuple[float, float | None]]]], figure: str = "p99",
                level_ns: float | None = None) -> str | None:  # fmt: skip
    """One line comparing curves at the same latency: which gives more IOPS at one ``figure``
    level (by default the highest that every curve reaches, so that no curve is extrapolated),
    most first, each with its share against the first.  ``None`` for fewer than two curves
    with the figure measured."""
    have = [(name, pts) for name, pts in curves if any(lat is not None for _, lat in pts)]
    if len(have) < 2:
        return None
    level = level_ns if level_ns is not None else min(max(lat for _, lat in pts if lat is not None) for _, pts in have)
    at = sorted(((iops_at(pts, level), name) for name, pts in have), key=lambda t: -(t[0] if t[0] is not None else -1))
    lead = at[0][0]
    parts = []
    for i, (iops, name) in enumerate(at):
        if iops is None:
            parts.append(f"{name} above it at every step")
        elif i == 0 or not lead:
            parts.append(f"{name} {_iops(iops)} IOPS")
        else:
            parts.append(f"{name} {_iops(iops)} ({(iops / lead - 1) * 100:+.0f}%)")
    why = "" if level_ns is not None else ", the highest every curve reaches"
    return f"at the same {figure} ({_ms(level)}{why}): " + ", ".join(parts)


def side_by_side(curves: list[dict], limit: tuple[str, float] | None = None) -> str | None:
    """The line comparing stored curves (the dicts ``curve_runner.CurveRunner.run`` returns, as
    a run's metadata keeps them) at the same latency: at the SLA limit when one was given,
    else at the highest p99 every curve reaches."""
    figure, level = limit if limit is not None else ("p99", None)
    key = {"p99": "p99_ns", "p50": "p50_ns", "p99.9": "p99_9_ns", "mean": "lat_mean_ns"}.get(figure)
    if key is None:
        figure, key, level = "p99", "p99_ns", None
    named = [(c.get("setup") or c["target"], [(p["iops"], p.get(key)) for p in c["points"]]) for c in curves]
    return iso_latency(named, figure, level)


def _iops(v: float) -> str:
    return f"{v / 1000:.1f}k" if v >= 10_000 else f"{v:.0f}"


# --------------------------------------------------------------------------- what a study raises


@dataclass(frozen=True)
class CurvePlan:
    """A curve as asked for (``--load``/``--rate``, ``--stop-at``, ``--sla``), kept as given
    so that a study can store it and run it again; :meth:`parsed` checks it (one-line
    UsageError) and gives the steps, rate shares, stop rule and SLA limit."""

    loads: tuple[str, ...] = ()
    rate: str | None = None
    stop_at: str | None = None
    sla: str | None = None

    def parsed(self) -> tuple[list, list[float], tuple[str, float] | None, tuple[str, float] | None]:
        if self.loads and self.rate:
            raise UsageError("give either --load or --rate, not both")
        steps = parse_load(self.loads) if not self.rate else []
        shares = parse_rate(self.rate) if self.rate else []
        stop = parse_limit(self.stop_at, "--stop-at") if self.stop_at else None
        limit = parse_limit(self.sla, "--sla") if self.sla else None
        return steps, shares, stop, limit

    def meta(self) -> dict:
        return {"load": list(self.loads) or None, "rate": self.rate, "stop_at": self.stop_at, "sla": self.sla}

    @classmethod
    def from_meta(cls, meta: Mapping[str, object]) -> CurvePlan:
        return cls(loads=tuple(meta.get("load") or ()), rate=meta.get("rate"), stop_at=meta.get("stop_at"), sla=meta.get("sla"))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- fio options of a step


def step_name(workload: str, step: tuple[tuple[str, str], ...]) -> str:
    """The stored workload name of a step: ``journal-sync@iodepth=8`` (a mixed rate
    ``rate_iops=3500,1500`` is named ``rate_iops=3500:1500``)."""
    return workload + "@" + ",".join(f"{k}={v.replace(',', ':')}" for k, v in step)


def rate_options(options: Mapping[str, str | None], total_iops: float) -> tuple[tuple[str, str], ...]:
    """fio's ``rate_iops`` for a total of ``total_iops`` (the whole job): per job (``numjobs``),
    split by ``rwmixread`` for mixed workloads (``rate_iops=READ,WRITE``)."""
    jobs = int(options.get("numjobs") or 1)
    per_job = max(1.0, total_iops / jobs)
    rw = (options.get("rw") or options.get("readwrite") or "read").lower()
    if rw in ("randrw", "rw", "readwrite"):
        mix = float(options.get("rwmixread") or (100 - float(options.get("rwmixwrite") or 50)))
        r, w = per_job * mix / 100, per_job * (100 - mix) / 100
        return (("rate_iops", f"{max(1, round(r))},{max(1, round(w))}"),)
    return (("rate_iops", str(max(1, round(per_job)))),)
