"""Pure statistics for repeated benchmark runs: summaries, repetition control, comparison.

Nothing here does I/O.  Every figure is computed from the values passed in, and every
method is the textbook one, named in its docstring, so a reader can check it:

* :func:`summarize` - n, mean, median, sample standard deviation, standard error, a
  Student-t 95 % confidence interval for the mean, coefficient of variation, relative
  standard error and Tukey (1.5 x IQR) outlier flags.  Outliers are *flagged*, never
  dropped: a slow run is a measurement, and hiding it would make the result look
  better than the system is.
* :func:`should_repeat` - "run again?" based on the relative standard error of the mean.
* :func:`compare_samples` - Welch's t-test and the 95 % confidence interval of the
  difference of means, with a verdict that is "better"/"worse" only when the test is
  significant, "within noise" when it is not, and "inconclusive" when it cannot decide.
* :func:`mann_whitney` - the non-parametric alternative (Mann-Whitney U).
* :func:`geometric_mean` - the right average for ratios across workloads.

Sums use :func:`math.fsum` (exactly rounded), so a summary does not depend on the
order of the runs and the spread of identical values is exactly zero.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from storbench.jsontypes import JSONMapping, JSONObject

# numpy and scipy are imported where they are used: ``scipy.stats`` alone takes about
# a second to import, which every ``storbench`` command would pay.  Student's t comes
# from ``scipy.special`` (the functions ``scipy.stats.t`` itself calls), or for up to 101
# values from a table of its figures; quartiles are computed as numpy does, in Python;
# only Mann-Whitney needs ``scipy.stats``.

__all__ = [
    "MIN_RUNS_FOR_CI",
    "VERDICT_BETTER",
    "VERDICT_INCONCLUSIVE",
    "VERDICT_NOISE",
    "VERDICT_SINGLE_RUN",
    "VERDICT_WORSE",
    "WELCH_T_TEST",
    "RepeatDecision",
    "SampleComparison",
    "Summary",
    "compare_samples",
    "geometric_mean",
    "mann_whitney",
    "reported_summary_dict",
    "should_repeat",
    "summarize",
    "summary_from_dict",
    "summary_to_dict",
]

#: Name of the test used by :func:`compare_samples` (shown in reports).
WELCH_T_TEST = "Welch's t-test"

#: Verdicts of :func:`compare_samples`.
VERDICT_BETTER = "better"
VERDICT_WORSE = "worse"
VERDICT_NOISE = "within noise"
VERDICT_SINGLE_RUN = "inconclusive (single run)"
#: Only when the test itself produced no usable p-value (should not happen for finite
#: input; kept so that a failure can never be reported as a difference).
VERDICT_INCONCLUSIVE = "inconclusive"

#: Tukey's fence factor and the smallest sample on which quartiles are computed.
_TUKEY_K = 1.5
_TUKEY_MIN_N = 4


# --------------------------------------------------------------------------- input


def _as_floats(values: Sequence[float], name: str = "values") -> tuple[float, ...]:
    """Validate and convert a 1-D sequence of real numbers to a tuple of Python floats."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of numbers, not {type(values).__name__}")
    if getattr(values, "ndim", 1) != 1:  # a numpy array (checked without importing numpy)
        raise ValueError(f"{name} must be one-dimensional, got shape {getattr(values, 'shape', '?')}")
    out: list[float] = []
    for v in values:
        if isinstance(v, (str, bytes)):
            raise TypeError(f"{name} must contain numbers, got {v!r}")
        f = float(v)
        if not math.isfinite(f):
            raise ValueError(f"{name} must be finite, got {f!r}")
        out.append(f)
    if not out:
        raise ValueError(f"{name} is empty: at least one value is needed")
    return tuple(out)


# --------------------------------------------------------------------------- summary


@dataclass(frozen=True)
class Summary:
    """Descriptive statistics of one sample (the repeated runs of one measurement).

    ``stddev``, ``stderr`` and ``ci95`` need at least two values and are ``None``
    otherwise; ``cv`` and ``rse`` are also ``None`` when the mean is 0 (or so close to
    0 that the ratio overflows a float).  ``rse`` is in percent (it is written
    ``rse_pct`` in :func:`summary_to_dict`); ``cv`` is a plain ratio.  ``outliers``
    holds the *indices* (into the input) of values outside Tukey's fences; every
    statistic is computed over all values, flagged ones included.
    """

    n: int
    mean: float
    median: float
    stddev: float | None
    stderr: float | None
    ci95: tuple[float, float] | None
    cv: float | None
    rse: float | None
    min: float
    max: float
    outliers: tuple[int, ...] = ()

    @property
    def reported_ci95(self) -> tuple[float, float] | None:
        """The 95% interval as storbench reports it in every form (terminal, pages, report, JSON,
        CSV, ``/metrics``): none for fewer than :data:`MIN_RUNS_FOR_CI` runs (Student's t with
        one degree of freedom is 12.7: an interval that wide says nothing) and its lower end
        bounded at 0 (every figure storbench reports, a rate, a size, a time, is never below 0;
        where the t interval reaches below, :attr:`ci95_clipped` says so).  :attr:`ci95` keeps
        the interval as computed."""
        if self.ci95 is None or self.n < MIN_RUNS_FOR_CI:
            return None
        return (max(self.ci95[0], 0.0), self.ci95[1])

    @property
    def ci95_clipped(self) -> bool:
        """Whether :attr:`reported_ci95`'s lower end was raised to 0 (too few or too spread runs)."""
        return self.reported_ci95 is not None and self.ci95 is not None and self.ci95[0] < 0


#: the fewest runs an interval is reported for (:attr:`Summary.reported_ci95`)
MIN_RUNS_FOR_CI = 3


def _mean(xs: Sequence[float]) -> float:
    """Exactly rounded sum divided by n, kept inside [min, max]."""
    lo, hi = min(xs), max(xs)
    if lo == hi:
        return lo
    m = math.fsum(xs) / len(xs)
    return min(max(m, lo), hi)


def _median(xs: Sequence[float]) -> float:
    """Middle value, or the average of the two middle values for an even count."""
    ys = sorted(xs)
    mid = len(ys) // 2
    if len(ys) % 2:
        return ys[mid]
    a, b = ys[mid - 1], ys[mid]
    m = (a + b) / 2
    return m if math.isfinite(m) else a / 2 + b / 2  # a + b overflowed near the float limit


def _sample_stddev(xs: Sequence[float], mean: float) -> float:
    """Sample standard deviation (Bessel's n - 1), two-pass around ``mean``."""
    if min(xs) == max(xs):
        return 0.0
    return math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (len(xs) - 1))


#: ``scipy.special.stdtrit(df, 0.975)`` for df = 1 .. 100, exactly as scipy gives them (a test
#: holds every entry to scipy): a summary of up to 101 repetitions, the common case, needs no
#: scipy (numpy and ``scipy.special`` take ~0.25 s to import, paid by ``show`` and at the end of
#: every repeated run).
_T975_TABLE: tuple[float, ...] = (
    12.706204736174694, 4.302652729749462, 3.1824463052837078, 2.7764451051977934, 2.5705818356363146,
    2.4469118511449786, 2.364624251592784, 2.306004135204166, 2.262157162798205, 2.228138851986274,
    2.200985160091639, 2.1788128296672284, 2.1603686564627913, 2.144786687917804, 2.131449545559776,
    2.1199052992212546, 2.1098155778333156, 2.1009220402410382, 2.0930240544083087, 2.085963447265864,
    2.0796138447276795, 2.0738730679040254, 2.0686576104190486, 2.0638985616280245, 2.0595385527532972,
    2.0555294386428735, 2.0518305164802846, 2.0484071417952454, 2.045229642132703, 2.0422724563012378,
    2.039513446396408, 2.0369333434601016, 2.0345152974493383, 2.0322445093177186, 2.030107928250343,
    2.0280940009804502, 2.0261924630291093, 2.0243941639119694, 2.022690920036761, 2.021075390306273,
    2.019540970441376, 2.0180817028184443, 2.016692199227824, 2.0153675744437636, 2.014103388880846,
    2.012895598919429, 2.0117405137297655, 2.010634757624232, 2.0095752371292392, 2.008559112100761,
    2.007583770315836, 2.006646805061688, 2.0057459953178687, 2.0048792881880564, 2.0040447832891455,
    2.003240718847872, 2.002465459291007, 2.0017174841452356, 2.000995378088267, 2.0002978220142604,
    1.999623584994939, 1.9989715170333788, 1.998340542520741, 1.997729654317693, 1.9971379083920038,
    1.9965644189523117, 1.996008354025296, 1.9954689314298435, 1.9949454151072374, 1.994437111771186,
    1.9939433678456255, 1.9934635666618719, 1.992997125889855, 1.992543495180932, 1.9921021540022417,
    1.9916726096446642, 1.9912543953883846, 1.9908470688116906, 1.9904502102301285, 1.990063421254446,
    1.9896863234569029, 1.989318557136572, 1.9889597801751624, 1.9886096669757083, 1.9882679074772216,
    1.98793420623902, 1.9876082815890708, 1.9872898648311692, 1.986978699506281, 1.9866745407037683,
    1.9863771544186177, 1.98608631695113, 1.9858018143458227, 1.985523441866604, 1.9852510035054978,
    1.984984311522457, 1.9847231860139845, 1.9844674545084815, 1.9842169515864174, 1.9839715185235518
)


def _t975(df: float) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom
    (``scipy.stats.t.ppf(0.975, df)``, which is ``scipy.special.stdtrit(df, 0.975)``): from
    :data:`_T975_TABLE` for a whole ``df`` up to 100, else from scipy (Welch's fractional df)."""
    if df == int(df) and 1 <= df <= len(_T975_TABLE):
        return _T975_TABLE[int(df) - 1]
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.975))


def _t_sf(x: float, df: float) -> float:
    """Survival function of Student's t (``scipy.stats.t.sf(x, df)`` = ``stdtr(df, -x)``)."""
    from scipy.special import stdtr

    return float(stdtr(df, -x))


def _quantile_linear(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values, interpolated linearly between order statistics
    (Hyndman-Fan type 7), computed as numpy's ``quantile`` computes it, operation for operation
    (index ``(n - 1) q``; ``a + (b - a) t``, or ``b - (b - a)(1 - t)`` when ``t >= 0.5``), so
    the same floats come out (a test holds it to numpy) without importing numpy."""
    index = (len(ordered) - 1) * q
    below = math.floor(index)
    a, b = ordered[below], ordered[min(below + 1, len(ordered) - 1)]
    t = index - below
    diff = b - a
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t


def _tukey_outliers(xs: Sequence[float]) -> tuple[int, ...]:
    """Indices of values below Q1 - 1.5 IQR or above Q3 + 1.5 IQR (n >= 4 only).

    Quartiles are interpolated linearly between order statistics (numpy's default,
    Hyndman-Fan type 7).  With fewer than 4 values the quartiles say nothing useful,
    so nothing is flagged.  When more than half the values are equal the IQR is 0 and
    any different value is flagged - that is Tukey's rule, applied literally.
    """
    if len(xs) < _TUKEY_MIN_N:
        return ()
    ordered = sorted(xs)
    q1, q3 = _quantile_linear(ordered, 0.25), _quantile_linear(ordered, 0.75)
    iqr = q3 - q1
    lo, hi = q1 - _TUKEY_K * iqr, q3 + _TUKEY_K * iqr
    return tuple(i for i, x in enumerate(xs) if x < lo or x > hi)


def summarize(values: Sequence[float]) -> Summary:
    """Describe a sample of repeated measurements.

    * ``stddev`` is the sample standard deviation (divisor n - 1), the unbiased
      estimate of the run-to-run variance.
    * ``stderr`` = stddev / sqrt(n) is the standard error: how far the *mean* is likely
      to be from the true mean.  It shrinks as runs are added; the stddev does not.
    * ``ci95`` = mean +/- t(0.975, n - 1) * stderr.  Student's t (rather than the normal
      1.96) accounts for having estimated the stddev from few runs: with 3 runs the
      factor is 4.30, with 30 it is 2.05.
    * ``cv`` = stddev / |mean| and ``rse`` = 100 * stderr / |mean| (percent) express the
      spread relative to the size of the value; |mean| keeps them non-negative.
    * ``outliers``: indices flagged by Tukey's 1.5 x IQR rule (see
      :func:`_tukey_outliers`); they are reported, not removed.

    Raises ``ValueError`` for an empty sample, a non-finite value, or values so large
    that the arithmetic overflows.
    """
    xs = _as_floats(values)
    n = len(xs)
    try:
        mean = _mean(xs)
        stddev = _sample_stddev(xs, mean) if n >= 2 else None
    except OverflowError:
        raise ValueError("values too large: the mean or standard deviation overflows a float") from None
    median = _median(xs)
    lo, hi = min(xs), max(xs)
    stderr = cv = rse = None
    ci95 = None
    if stddev is not None:
        if not math.isfinite(stddev):
            raise ValueError("values too large: the standard deviation overflows a float")
        stderr = stddev / math.sqrt(n)
        half = _t975(n - 1) * stderr
        ci95 = (mean - half, mean + half)
        if not all(math.isfinite(v) for v in ci95):
            raise ValueError("values too large: the confidence interval overflows a float")
        if mean != 0:
            cv = stddev / abs(mean)
            rse = 100.0 * stderr / abs(mean)
            if not (math.isfinite(cv) and math.isfinite(rse)):  # mean within a hair of 0
                cv = rse = None
    return Summary(
        n=n,
        mean=mean,
        median=median,
        stddev=stddev,
        stderr=stderr,
        ci95=ci95,
        cv=cv,
        rse=rse,
        min=lo,
        max=hi,
        outliers=_tukey_outliers(xs),
    )


_SUMMARY_KEYS = ("n", "mean", "median", "stddev", "stderr", "ci95", "cv", "rse_pct", "min", "max", "outliers")


def summary_to_dict(summary: Summary) -> JSONObject:
    """A JSON-ready dict: plain ints/floats/lists/None, ``ci95`` as ``[lo, hi]``, ``rse`` as ``rse_pct``."""
    return {
        "n": summary.n,
        "mean": summary.mean,
        "median": summary.median,
        "stddev": summary.stddev,
        "stderr": summary.stderr,
        "ci95": None if summary.ci95 is None else [summary.ci95[0], summary.ci95[1]],
        "cv": summary.cv,
        "rse_pct": summary.rse,
        "min": summary.min,
        "max": summary.max,
        "outliers": list(summary.outliers),
    }


def _opt_float(d: JSONMapping, key: str) -> float | None:
    v = d[key]
    return None if v is None else float(v)


def reported_summary_dict(summary: Summary) -> JSONObject:
    """:func:`summary_to_dict` as the exports give it: ``ci95`` the interval storbench reports
    (:attr:`Summary.reported_ci95`: none under 3 runs, never below 0), with ``ci95_clipped``
    where its lower end was raised to 0."""
    out = summary_to_dict(summary)
    ci = summary.reported_ci95
    out["ci95"] = None if ci is None else [ci[0], ci[1]]
    if summary.ci95_clipped:
        out["ci95_clipped"] = True
    return out


def summary_from_dict(data: JSONMapping) -> Summary:
    """Inverse of :func:`summary_to_dict`.

    Raises ``ValueError`` when a key is missing or a value has the wrong shape.  Keys
    it does not know are ignored, so a newer writer can add fields.
    """
    missing = [k for k in _SUMMARY_KEYS if k not in data]
    if missing:
        raise ValueError(f"summary dict is missing {', '.join(missing)}")
    try:
        ci = data["ci95"]
        if ci is not None:
            if len(ci) != 2:
                raise ValueError(f"ci95 must be [lo, hi], got {ci!r}")
            ci = (float(ci[0]), float(ci[1]))
        n = int(data["n"])
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        return Summary(
            n=n,
            mean=float(data["mean"]),
            median=float(data["median"]),
            stddev=_opt_float(data, "stddev"),
            stderr=_opt_float(data, "stderr"),
            ci95=ci,
            cv=_opt_float(data, "cv"),
            rse=_opt_float(data, "rse_pct"),
            min=float(data["min"]),
            max=float(data["max"]),
            outliers=tuple(int(i) for i in data["outliers"]),
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"invalid summary dict: {exc}") from exc


# --------------------------------------------------------------------------- repetition


@dataclass(frozen=True)
class RepeatDecision:
    """Whether to run a measurement again, and why (``reason`` is shown to the user).

    ``converged`` is true when the relative standard error reached the target (or the
    runs were all identical); ``again`` and ``converged`` are both false when
    ``max_runs`` was reached without converging.
    """

    again: bool
    reason: str
    converged: bool


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def _pct_pair(x: float, y: float) -> tuple[str, str]:
    """Format two percentages with one decimal, or more if one decimal would make them look equal
    or show a figure that is not zero as ``0.0`` (a target of 0.001 %)."""

    def shown(v: float, digits: int) -> str:
        text = f"{v:.{digits}f}"
        return f"{v:g}" if v != 0 and float(text) == 0 else text

    for digits in range(1, 7):
        sx, sy = shown(x, digits), shown(y, digits)
        if sx != sy or x == y:
            return sx, sy
    return repr(x), repr(y)


def should_repeat(values: Sequence[float], *, target_rse_pct: float, min_runs: int, max_runs: int) -> RepeatDecision:
    """Decide whether another run is needed, from the runs so far.

    The rule, in order:

    1. Fewer than ``min_runs`` values: run again.
    2. Converged when the relative standard error of the mean
       (100 * stderr / |mean|, see :func:`summarize`) is <= ``target_rse_pct``, or when
       at least two runs are all identical (no spread: more runs cannot change the
       mean, even if it is 0).  Then stop.
    3. Otherwise, fewer than ``max_runs`` values: run again.  This includes an
       undefined RSE (a single run, or a mean of 0 with spread).
    4. Otherwise give up: stop, not converged.

    The RSE targets the precision of the *mean*, so it falls roughly as 1/sqrt(n): noisy
    workloads get more runs, steady ones stop at ``min_runs``.  Raises ``ValueError`` on
    bad limits or non-finite values.
    """
    if not (isinstance(target_rse_pct, (int, float)) and math.isfinite(target_rse_pct) and target_rse_pct > 0):
        raise ValueError(f"target_rse_pct must be a positive number, got {target_rse_pct!r}")
    for name, v in (("min_runs", min_runs), ("max_runs", max_runs)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if max_runs < min_runs:
        raise ValueError(f"max_runs ({max_runs}) must be >= min_runs ({min_runs})")

    n = len(values)
    if n == 0:
        return RepeatDecision(again=True, reason=f"no runs yet (min-runs {min_runs})", converged=False)
    s = summarize(values)
    if n < min_runs:
        return RepeatDecision(again=True, reason=f"{_runs(n)} < min-runs {min_runs}", converged=False)

    if s.rse is not None:
        rse_s, target_s = _pct_pair(s.rse, float(target_rse_pct))
        if s.rse <= target_rse_pct:
            return RepeatDecision(
                again=False, reason=f"rse {rse_s}% <= {target_s}% after {_runs(n)}", converged=True
            )
        status, still = f"rse {rse_s}% > {target_s}%", f"rse {rse_s}% still above {target_s}%"
    elif s.stddev == 0:  # n >= 2, every run identical, mean 0
        return RepeatDecision(
            again=False, reason=f"all {_runs(n)} identical (no spread); rse undefined at mean 0", converged=True
        )
    else:
        why = "single run" if n < 2 else "mean is 0"
        status, still = f"rse undefined ({why})", f"rse still undefined ({why})"
    if n < max_runs:
        return RepeatDecision(again=True, reason=f"{status} after {_runs(n)}", converged=False)
    return RepeatDecision(again=False, reason=f"gave up: {still} after {_runs(n)} (max-runs)", converged=False)


# --------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class SampleComparison:
    """Sample ``b`` (candidate) against sample ``a`` (baseline).

    ``ratio`` = mean_b / mean_a and ``rel_diff_pct`` = 100 * (mean_b - mean_a) / mean_a
    (both ``None`` when mean_a is 0, or so close to 0 that they overflow).  ``diff`` =
    mean_b - mean_a and ``diff_ci95`` is its 95 % Welch confidence interval (always 95 %,
    whatever ``alpha``) with ``df`` Welch-Satterthwaite degrees of freedom.  ``p_value``,
    ``diff_ci95`` and ``df`` are ``None`` when either side has a single run; for two
    constant samples ``diff_ci95`` is the point (diff, diff) and ``df`` is ``None``.  ``note``
    explains any special handling (constant samples, zero baseline, single run).
    """

    a: Summary
    b: Summary
    higher_is_better: bool
    alpha: float
    ratio: float | None
    rel_diff_pct: float | None
    diff: float
    diff_ci95: tuple[float, float] | None
    df: float | None
    test: str
    p_value: float | None
    verdict: str
    note: str | None = None

    @property
    def significant(self) -> bool:
        """True when the verdict is a difference ("better" or "worse")."""
        return self.verdict in (VERDICT_BETTER, VERDICT_WORSE)


def _welch(sa: Summary, sb: Summary) -> tuple[float, float] | None:
    """Standard error of mean_b - mean_a and Welch-Satterthwaite degrees of freedom.

    se = sqrt(se_a^2 + se_b^2) and df = se^4 / (se_a^4 / (n_a - 1) + se_b^4 / (n_b - 1)),
    computed with the standard errors scaled to the larger one so that tiny or huge
    values neither underflow nor overflow.  ``None`` when both standard errors are 0.
    """
    ea, eb = sa.stderr, sb.stderr
    assert ea is not None and eb is not None
    scale = max(ea, eb)
    if scale == 0:
        return None
    ra, rb = ea / scale, eb / scale
    df = (ra * ra + rb * rb) ** 2 / (ra**4 / (sa.n - 1) + rb**4 / (sb.n - 1))
    return math.hypot(ea, eb), df


def compare_samples(
    a: Sequence[float], b: Sequence[float], *, higher_is_better: bool, alpha: float = 0.05
) -> SampleComparison:
    """Compare candidate ``b`` with baseline ``a`` using Welch's t-test.

    Welch's test compares two means without assuming the two samples have the same
    variance (two machines, two kernels, two filesystems rarely do); its degrees of
    freedom come from the Welch-Satterthwaite formula.  The p-value is the two-sided
    p of t = (mean_b - mean_a) / se under Student's t with those degrees of freedom: the
    chance of a difference at least this large if the two setups were really the same.
    It equals ``scipy.stats.ttest_ind(a, b, equal_var=False).pvalue`` but is computed
    from the exactly rounded moments of :func:`summarize`, so it does not depend on the
    order of the runs: scipy's float sums can make a sample differ "significantly" from
    a reordering of itself when the values are nearly constant.  ``diff_ci95`` is
    diff +/- t(0.975, df) * se.

    Verdict: "better" or "worse" (by ``higher_is_better`` and the sign of
    mean_b - mean_a) only when p < ``alpha``; "within noise" when p >= ``alpha``, which
    means the difference is not distinguishable from run-to-run variation with these
    runs - not that there is none.  With a single run on either side the noise cannot
    be estimated, so the verdict is "inconclusive (single run)" and there is no p-value.

    Zero variance: two constant samples with the same value are "within noise"
    (p = 1); with different values the t statistic is infinite, so the difference is
    taken as significant with p = 0 and ``note`` says so.  One constant side is fine
    (its variance term is 0).  No warning is raised and no result field is ever NaN.
    """
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    xa, xb = _as_floats(a, "a"), _as_floats(b, "b")
    sa, sb = summarize(xa), summarize(xb)
    diff = sb.mean - sa.mean
    notes: list[str] = []
    if not math.isfinite(diff):
        raise ValueError("values too large: the difference of means overflows a float")
    ratio: float | None = None
    rel_diff_pct: float | None = None
    if sa.mean != 0:
        ratio, rel_diff_pct = sb.mean / sa.mean, 100.0 * diff / sa.mean
    if ratio is None or rel_diff_pct is None or not (math.isfinite(ratio) and math.isfinite(rel_diff_pct)):
        ratio = rel_diff_pct = None
        notes.append("baseline mean is 0 (or too close to 0): ratio and relative difference are undefined")

    def directional() -> str:
        return VERDICT_BETTER if (diff > 0) == higher_is_better else VERDICT_WORSE

    p_value: float | None = None
    ci: tuple[float, float] | None = None
    df: float | None = None
    if sa.n < 2 or sb.n < 2:
        verdict = VERDICT_SINGLE_RUN
        single = [name for name, s in (("a", sa), ("b", sb)) if s.n < 2]
        who = "a and b each have" if len(single) == 2 else f"{single[0]} has"
        notes.append(f"{who} a single run: at least 2 runs per side are needed to judge noise")
    elif (welch := _welch(sa, sb)) is None:  # zero variance on both sides
        ci = (diff, diff)
        if diff == 0:
            p_value, verdict = 1.0, VERDICT_NOISE
            notes.append("both samples are constant and identical")
        else:
            p_value, verdict = 0.0, directional()
            notes.append(
                "both samples are constant (zero variance) and differ: Welch's t-test is undefined, "
                "treated as a significant difference with p = 0"
            )
    else:
        se, df = welch
        p_value = min(1.0, 2.0 * _t_sf(abs(diff / se), df))
        half = _t975(df) * se
        ci = (diff - half, diff + half)
        if not all(math.isfinite(v) for v in (p_value, df, *ci)):  # defensive: never call NaN a difference
            p_value = ci = df = None
            verdict = VERDICT_INCONCLUSIVE
            notes.append("Welch's t-test gave no usable result for these values")
        else:
            verdict = directional() if p_value < alpha else VERDICT_NOISE
    return SampleComparison(
        a=sa,
        b=sb,
        higher_is_better=higher_is_better,
        alpha=float(alpha),
        ratio=ratio,
        rel_diff_pct=rel_diff_pct,
        diff=diff,
        diff_ci95=ci,
        df=df,
        test=WELCH_T_TEST,
        p_value=p_value,
        verdict=verdict,
        note="; ".join(notes) or None,
    )


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the Mann-Whitney U test (``scipy.stats.mannwhitneyu``).

    The non-parametric option: it compares ranks instead of means, so it assumes no
    normal distribution and a single extreme run cannot dominate it.  It asks whether
    values from one sample tend to be larger than values from the other.  With few
    runs it has little power (3 vs 3 runs can never give p < 0.1), so prefer Welch's
    test unless the runs are clearly skewed or heavy-tailed.  Identical samples give 1.0.
    """
    xa, xb = _as_floats(a, "a"), _as_floats(b, "b")
    if min(xa) == max(xa) == min(xb) == max(xb):
        return 1.0
    from scipy import stats as _sps

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(_sps.mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
    if not math.isfinite(p):  # not expected: every rank tie is handled above
        raise ValueError("Mann-Whitney U gave no p-value for these values")
    return p


# --------------------------------------------------------------------------- across workloads


def geometric_mean(values: Sequence[float]) -> float:
    """The geometric mean, exp(mean(log x)), of positive values.

    Use it to average *ratios* across workloads: a 2x speed-up and a 2x slow-down
    average to 1.0, as they should (the arithmetic mean would say 1.25).  Raises
    ``ValueError`` for an empty sequence, or a value that is not finite and > 0.
    """
    xs = _as_floats(values)
    bad = [x for x in xs if x <= 0]
    if bad:
        raise ValueError(f"geometric mean needs values > 0, got {bad[0]!r}")
    if min(xs) == max(xs):
        return xs[0]
    return math.exp(math.fsum(math.log(x) for x in xs) / len(xs))
