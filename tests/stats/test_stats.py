"""Tests for storbench.stats.core.

Every figure is checked against a value obtained another way: numbers worked out by
hand and written here, closed forms (Student's t with 1 and 2 degrees of freedom has
an exact quantile), the ``statistics`` module, numpy, and scipy functions other than
the one the module calls.  Any warning raised inside a test is an error.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys

import numpy as np
import pytest
import scipy.stats
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from storbench.stats.core import (
    VERDICT_BETTER,
    VERDICT_NOISE,
    VERDICT_SINGLE_RUN,
    VERDICT_WORSE,
    WELCH_T_TEST,
    RepeatDecision,
    SampleComparison,
    Summary,
    compare_samples,
    geometric_mean,
    mann_whitney,
    reported_summary_dict,
    should_repeat,
    summarize,
    summary_from_dict,
    summary_to_dict,
)

pytestmark = pytest.mark.filterwarnings("error")

#: Exact 0.975 quantiles of Student's t: df=1 is the Cauchy distribution, tan(pi (p - 1/2));
#: df=2 has t_p = (2p - 1) / sqrt(2 p (1 - p)).
T975_DF1 = math.tan(math.pi * 0.475)  # 12.7062047361747
T975_DF2 = 0.95 / math.sqrt(2 * 0.975 * 0.025)  # 4.30265272974946
#: From a printed t table (4 degrees of freedom).
T975_DF4_TABLE = 2.776


def approx(x, rel=1e-12, abs=0.0):
    return pytest.approx(x, rel=rel, abs=abs)


# --------------------------------------------------------------------------- summarize: worked examples


def test_one_to_five_by_hand():
    s = summarize([1, 2, 3, 4, 5])
    # mean 3; squared deviations 4+1+0+1+4 = 10; sample variance 10/4 = 2.5
    assert s.n == 5
    assert s.mean == 3.0
    assert s.median == 3.0
    assert s.stddev == approx(math.sqrt(2.5))
    assert s.stderr == approx(math.sqrt(2.5 / 5))  # sqrt(0.5)
    assert s.cv == approx(math.sqrt(2.5) / 3)
    assert s.rse == approx(100 * math.sqrt(0.5) / 3)  # 23.5702...%
    assert (s.min, s.max) == (1.0, 5.0)
    assert s.outliers == ()
    lo, hi = s.ci95
    assert lo == pytest.approx(3 - T975_DF4_TABLE * math.sqrt(0.5), abs=1e-3)
    assert hi == pytest.approx(3 + T975_DF4_TABLE * math.sqrt(0.5), abs=1e-3)


def test_two_values_exact_t_quantile():
    s = summarize([10.0, 12.0])
    # mean 11, deviations +-1, variance 2/1, stddev sqrt 2, stderr sqrt(2)/sqrt(2) = 1
    assert s.mean == 11.0
    assert s.median == 11.0
    assert s.stddev == approx(math.sqrt(2))
    assert s.stderr == approx(1.0)
    assert s.ci95 == (approx(11 - T975_DF1), approx(11 + T975_DF1))
    assert s.rse == approx(100 / 11)


def test_three_values_exact_t_quantile():
    s = summarize([4.0, 6.0, 8.0])
    # variance (4+0+4)/2 = 4, stddev 2, stderr 2/sqrt 3
    assert s.stddev == approx(2.0)
    assert s.stderr == approx(2 / math.sqrt(3))
    assert s.ci95 == (approx(6 - T975_DF2 * 2 / math.sqrt(3)), approx(6 + T975_DF2 * 2 / math.sqrt(3)))
    assert s.cv == approx(2 / 6)


def test_the_reported_interval_is_none_under_three_runs_and_never_below_zero():
    """The one rule every form reports (:attr:`Summary.reported_ci95`): none at n = 2 (t = 12.7),
    the lower end bounded at 0 and said clipped where the t interval reaches below it, else the
    interval as computed."""
    from storbench.units import fmt_interval, fmt_measure

    two = summarize([10.0, 12.0])
    assert two.ci95 is not None and two.reported_ci95 is None and not two.ci95_clipped
    assert reported_summary_dict(two)["ci95"] is None and summary_to_dict(two)["ci95"] == list(two.ci95)
    spread = summarize([1.0, 2.0, 30.0])  # mean 11, stderr 9.5: t(2) 4.30 reaches to -30
    assert spread.ci95[0] < 0 and spread.reported_ci95 == (0.0, spread.ci95[1]) and spread.ci95_clipped
    assert reported_summary_dict(spread)["ci95"] == [0.0, spread.ci95[1]] and reported_summary_dict(spread)["ci95_clipped"] is True
    tight = summarize([4.0, 6.0, 8.0])
    assert tight.reported_ci95 == tight.ci95 and not tight.ci95_clipped and "ci95_clipped" not in reported_summary_dict(tight)
    # printed: the same rule for fio's figures and another benchmark's (its own unit)
    assert fmt_interval(*two.ci95, "tps", two.n, fmt_measure) == "none (n < 3)"
    assert fmt_interval(*spread.ci95, "tps", spread.n, fmt_measure) == f"0 … {fmt_measure(spread.ci95[1])} (clipped at 0: too few or too spread runs)"
    assert fmt_interval(*tight.ci95, "iops", tight.n) == f"{tight.ci95[0]:.0f} … {tight.ci95[1]:.0f} IOPS"


def test_even_count_median_and_textbook_stddev():
    s = summarize([2, 4, 4, 4, 5, 5, 7, 9])
    # mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32; sample variance 32/7
    assert s.mean == 5.0
    assert s.median == 4.5
    assert s.stddev == approx(math.sqrt(32 / 7))


def test_agrees_with_independent_implementations():
    values = [101.3, 98.7, 100.2, 99.9, 102.4, 97.8, 100.0]
    s = summarize(values)
    arr = np.asarray(values)
    assert s.mean == approx(statistics.fmean(values))
    assert s.median == statistics.median(values)
    assert s.stddev == approx(float(np.std(arr, ddof=1)))
    assert s.stddev == approx(statistics.stdev(values))
    assert s.stderr == approx(float(scipy.stats.sem(arr)))
    lo, hi = scipy.stats.t.interval(0.95, len(values) - 1, loc=statistics.fmean(values), scale=scipy.stats.sem(arr))
    assert s.ci95 == (approx(lo), approx(hi))
    assert s.cv == approx(float(scipy.stats.variation(arr, ddof=1)))
    assert s.rse == approx(100 * float(scipy.stats.sem(arr)) / statistics.fmean(values))
    assert (s.min, s.max) == (min(values), max(values))


# --------------------------------------------------------------------------- summarize: edges


def test_single_value():
    s = summarize([42.5])
    assert s == Summary(
        n=1, mean=42.5, median=42.5, stddev=None, stderr=None, ci95=None, cv=None, rse=None,
        min=42.5, max=42.5, outliers=(),
    )


def test_identical_values_have_exactly_zero_spread():
    s = summarize([0.1, 0.1, 0.1])  # 0.1 + 0.1 + 0.1 != 0.3 in floating point
    assert s.mean == 0.1
    assert s.stddev == 0.0
    assert s.stderr == 0.0
    assert s.ci95 == (0.1, 0.1)
    assert s.cv == 0.0
    assert s.rse == 0.0


def test_zero_mean_leaves_relative_figures_undefined():
    s = summarize([-1.0, 1.0])
    assert s.mean == 0.0
    assert s.stddev == approx(math.sqrt(2))
    assert s.ci95 == (approx(-T975_DF1), approx(T975_DF1))
    assert s.cv is None
    assert s.rse is None


def test_all_zero():
    s = summarize([0.0, 0.0, 0.0])
    assert (s.mean, s.stddev, s.ci95, s.cv, s.rse) == (0.0, 0.0, (0.0, 0.0), None, None)


def test_negative_mean_relative_figures_are_positive():
    s = summarize([-4.0, -6.0, -8.0])
    assert s.cv == approx(2 / 6)
    assert s.rse == approx(100 * (2 / math.sqrt(3)) / 6)


def test_outlier_flagged_and_kept():
    values = [10.0, 11.0, 12.0, 13.0, 100.0]
    s = summarize(values)
    # sorted 10 11 12 13 100: Q1 = 11, Q3 = 13 (linear interpolation), IQR 2,
    # fences 11 - 3 = 8 and 13 + 3 = 16: only 100 (index 4) is outside.
    assert s.outliers == (4,)
    assert s.n == 5
    assert s.mean == approx(146 / 5)  # the outlier is in the mean
    assert s.max == 100.0


def test_outliers_are_indices_into_the_input_both_sides():
    values = [50.0, 1.0, 10.0, 11.0, 12.0, 13.0, 10.5, 11.5]
    # sorted 1 10 10.5 11 11.5 12 13 50: Q1 at position 1.75 = 10.375, Q3 at 5.25 = 12.25,
    # IQR 1.875, fences 7.5625 and 15.0625.
    q1, q3 = np.percentile(values, [25, 75])
    assert (q1, q3) == (10.375, 12.25)
    assert summarize(values).outliers == (0, 1)


def test_value_on_the_fence_is_not_an_outlier():
    # sorted 0 1 2 3 4 ... : for [0, 1, 2, 3, 7.5]: Q1 = 1, Q3 = 3, IQR 2, upper fence 6
    assert summarize([0, 1, 2, 3, 6]).outliers == ()
    assert summarize([0, 1, 2, 3, 6.5]).outliers == (4,)


def test_no_outliers_below_four_values():
    assert summarize([1.0, 1.0, 1000.0]).outliers == ()
    assert summarize([1.0, 1.0, 1.0, 1000.0]).outliers == (3,)


def _numpy_outliers(values):
    """Tukey's fences from numpy's own (type 7) quartiles: what the module computed before it
    computed them in Python."""
    q1, q3 = (float(q) for q in np.quantile(np.sort(np.asarray(values, dtype=float)), [0.25, 0.75]))
    lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    return tuple(i for i, x in enumerate(values) if x < lo or x > hi)


@given(st.lists(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), min_size=4, max_size=40))
def test_prop_outliers_are_numpys_quartile_fences(values):
    assert summarize(values).outliers == _numpy_outliers(values)


def test_outliers_on_the_fence_as_numpy_puts_it():
    # quartiles that fall between order statistics at t < 0.5, t = 0.5 and t > 0.5 (n = 5, 7, 6, 8)
    for values in ([0, 1, 2, 3, 6], [0, 1, 2, 3, 6.5], [0.1, 0.2, 0.3, 0.7, 2.0, 0.4, 0.5], [1, 2, 3, 4, 5, 40],
                   [1e-3, 2e-3, 3e-3, 4e-3, 5e-3, 6e-3, 7e-3, 1.0], [5.0] * 6 + [5.0000001]):
        assert summarize(values).outliers == _numpy_outliers(values), values


def test_t_quantile_for_every_repetition_count_up_to_101():
    # the confidence interval's factor is scipy's t.ppf(0.975, n - 1) for n = 2 .. 101 (a table of
    # scipy's figures in the module) and beyond (scipy itself)
    for n in (*range(2, 102), 150):
        values = [float(i % 3) for i in range(n)]
        s = summarize(values)
        half = scipy.stats.t.ppf(0.975, n - 1) * s.stderr
        assert s.ci95 == (approx(s.mean - half, rel=1e-15), approx(s.mean + half, rel=1e-15)), n


def test_summaries_import_neither_numpy_nor_scipy():
    # show and the end of a repeated run summarise results: ~0.25 s of imports they no longer pay
    code = ("import sys; from storbench.stats.core import summarize; "
            "s = summarize([1.0, 2.0, 3.0, 4.0, 50.0] * 4); assert s.outliers and s.ci95; "
            "print(sorted(m for m in ('numpy', 'scipy') if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf")], [1.0, -math.inf]])
def test_rejects_empty_and_non_finite(bad):
    with pytest.raises(ValueError):
        summarize(bad)


@pytest.mark.parametrize("huge", [[1e308, -1e308], [1e308, 1e308, 1e307], [1e200, -1e200, 0.0]])
def test_rejects_overflowing_values(huge):
    with pytest.raises(ValueError):
        summarize(huge)


def test_identical_huge_values_are_fine():
    s = summarize([1.7e308, 1.7e308])
    assert (s.mean, s.median, s.stddev, s.ci95) == (1.7e308, 1.7e308, 0.0, (1.7e308, 1.7e308))


def test_rejects_strings():
    with pytest.raises(TypeError):
        summarize("123")
    with pytest.raises(TypeError):
        summarize(["1", "2"])


def test_accepts_numpy_and_ints():
    s = summarize(np.array([1, 2, 3], dtype=np.int64))
    assert s.mean == 2.0
    assert type(s.mean) is float and type(s.stddev) is float and type(s.ci95[0]) is float


# --------------------------------------------------------------------------- dict round trip


def test_dict_shape_and_json_round_trip():
    s = summarize([10.0, 11.0, 12.0, 13.0, 100.0])
    d = summary_to_dict(s)
    assert list(d) == ["n", "mean", "median", "stddev", "stderr", "ci95", "cv", "rse_pct", "min", "max", "outliers"]
    assert d["ci95"] == [s.ci95[0], s.ci95[1]]
    assert d["rse_pct"] == s.rse
    assert d["outliers"] == [4]
    text = json.dumps(d, allow_nan=False)
    assert summary_from_dict(json.loads(text)) == s


def test_dict_round_trip_single_value():
    s = summarize([3.0])
    d = json.loads(json.dumps(summary_to_dict(s), allow_nan=False))
    assert d["stddev"] is None and d["ci95"] is None and d["rse_pct"] is None
    assert summary_from_dict(d) == s


def test_from_dict_rejects_missing_and_malformed():
    d = summary_to_dict(summarize([1.0, 2.0]))
    del d["median"]
    with pytest.raises(ValueError, match="median"):
        summary_from_dict(d)
    d = summary_to_dict(summarize([1.0, 2.0]))
    d["ci95"] = [1.0]
    with pytest.raises(ValueError):
        summary_from_dict(d)


def test_from_dict_ignores_unknown_keys():
    s = summarize([1.0, 2.0])
    d = summary_to_dict(s) | {"added_later": 1}
    assert summary_from_dict(d) == s


# --------------------------------------------------------------------------- should_repeat

#: [99, 101]: mean 100, stddev sqrt 2, stderr exactly 1, so rse is exactly 1.0 %.
RSE_ONE = [99.0, 101.0]
#: [90, 110] x 5: mean 100, stddev sqrt(1000/9), stderr sqrt(100/9) = 10/3: rse 3.33 %.
RSE_3_3 = [90.0, 110.0] * 5


def test_rse_examples_are_what_the_comments_say():
    assert summarize(RSE_ONE).rse == 1.0
    assert summarize(RSE_3_3).rse == approx(10 / 3)


def test_repeat_below_min_runs_even_when_precise():
    d = should_repeat(RSE_ONE, target_rse_pct=2.0, min_runs=3, max_runs=10)
    assert d == RepeatDecision(again=True, reason="2 runs < min-runs 3", converged=False)


def test_no_runs_yet():
    d = should_repeat([], target_rse_pct=2.0, min_runs=3, max_runs=10)
    assert d.again and not d.converged


def test_converged_exactly_at_target():
    d = should_repeat(RSE_ONE, target_rse_pct=1.0, min_runs=2, max_runs=10)
    assert d == RepeatDecision(again=False, reason="rse 1.0% <= 1.0% after 2 runs", converged=True)


def test_just_above_target_repeats_and_shows_enough_digits():
    d = should_repeat(RSE_ONE, target_rse_pct=0.999, min_runs=2, max_runs=10)
    assert d == RepeatDecision(again=True, reason="rse 1.000% > 0.999% after 2 runs", converged=False)


def test_noisy_repeats_until_max_then_gives_up():
    d = should_repeat(RSE_3_3[:9] + [110.0], target_rse_pct=2.0, min_runs=3, max_runs=11)
    assert d == RepeatDecision(again=True, reason="rse 3.3% > 2.0% after 10 runs", converged=False)
    d = should_repeat(RSE_3_3, target_rse_pct=2.0, min_runs=3, max_runs=10)
    assert d == RepeatDecision(
        again=False, reason="gave up: rse 3.3% still above 2.0% after 10 runs (max-runs)", converged=False
    )


def test_converged_on_the_last_allowed_run_is_converged():
    d = should_repeat(RSE_3_3, target_rse_pct=3.5, min_runs=3, max_runs=10)
    assert d == RepeatDecision(again=False, reason="rse 3.3% <= 3.5% after 10 runs", converged=True)


def test_single_run_allowed_by_min_runs_one():
    d = should_repeat([5.0], target_rse_pct=2.0, min_runs=1, max_runs=5)
    assert d == RepeatDecision(again=True, reason="rse undefined (single run) after 1 run", converged=False)
    d = should_repeat([5.0], target_rse_pct=2.0, min_runs=1, max_runs=1)
    assert d.again is False and d.converged is False
    assert d.reason == "gave up: rse still undefined (single run) after 1 run (max-runs)"


def test_zero_mean_with_spread_never_converges():
    d = should_repeat([-1.0, 1.0, 0.0], target_rse_pct=2.0, min_runs=3, max_runs=5)
    assert d == RepeatDecision(again=True, reason="rse undefined (mean is 0) after 3 runs", converged=False)
    d = should_repeat([-1.0, 1.0, 0.0, 1.0, -1.0], target_rse_pct=2.0, min_runs=3, max_runs=5)
    assert not d.again and not d.converged and d.reason.startswith("gave up")


def test_identical_runs_converge_even_at_zero():
    assert should_repeat([7.0, 7.0, 7.0], target_rse_pct=1.0, min_runs=3, max_runs=9).converged
    d = should_repeat([0.0, 0.0, 0.0], target_rse_pct=1.0, min_runs=3, max_runs=9)
    assert d.converged and not d.again
    assert "identical" in d.reason


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(target_rse_pct=0.0, min_runs=3, max_runs=10),
        dict(target_rse_pct=-1.0, min_runs=3, max_runs=10),
        dict(target_rse_pct=math.nan, min_runs=3, max_runs=10),
        dict(target_rse_pct=2.0, min_runs=0, max_runs=10),
        dict(target_rse_pct=2.0, min_runs=5, max_runs=4),
        dict(target_rse_pct=2.0, min_runs=2.5, max_runs=4),
    ],
)
def test_repeat_rejects_bad_limits(kwargs):
    with pytest.raises(ValueError):
        should_repeat([1.0, 2.0], **kwargs)


# --------------------------------------------------------------------------- compare_samples

A = [1.0, 2.0, 3.0, 4.0, 5.0]  # mean 3, variance 2.5
B = [2.0, 4.0, 6.0, 8.0, 10.0]  # mean 6, variance 10


def test_welch_by_hand():
    c = compare_samples(A, B, higher_is_better=True)
    # se^2 = 2.5/5 + 10/5 = 2.5; t = 3 / sqrt(2.5)
    # Welch-Satterthwaite df = 2.5^2 / ((0.5^2)/4 + (2^2)/4) = 6.25 / 1.0625 = 100/17
    t_stat, df = 3 / math.sqrt(2.5), 100 / 17
    assert c.test == WELCH_T_TEST == "Welch's t-test"
    assert c.ratio == 2.0
    assert c.rel_diff_pct == 100.0
    assert c.diff == 3.0
    assert c.df == approx(df)
    assert c.p_value == approx(2 * scipy.stats.t.sf(t_stat, df), rel=1e-9)
    half = scipy.stats.t.ppf(0.975, df) * math.sqrt(2.5)
    assert c.diff_ci95 == (approx(3 - half), approx(3 + half))
    assert c.p_value > 0.05
    assert c.verdict == VERDICT_NOISE
    assert not c.significant
    assert c.note is None


def test_welch_agrees_with_scipy_ttest_ind():
    a = [100.0, 102.0, 98.0, 101.0, 99.5]
    b = [110.0, 112.5, 108.0, 111.0, 109.0, 113.0]
    c = compare_samples(a, b, higher_is_better=True)
    ref = scipy.stats.ttest_ind(a, b, equal_var=False)  # a - b: the CI flips sign
    assert c.p_value == approx(float(ref.pvalue), rel=1e-9)
    lo, hi = ref.confidence_interval(0.95)
    assert c.diff_ci95 == (approx(-float(hi)), approx(-float(lo)))
    assert c.df == approx(float(ref.df))


def test_clearly_better_higher_is_better():
    c = compare_samples([100.0, 101.0, 99.0, 100.5], [120.0, 121.0, 119.0, 120.5], higher_is_better=True)
    assert c.verdict == VERDICT_BETTER and c.significant
    assert c.p_value < 1e-6
    assert c.rel_diff_pct == approx(100 * 20 / 100.125)  # means 100.125 and 120.125
    assert c.diff_ci95[0] > 0


def test_clearly_worse_higher_is_better():
    c = compare_samples([120.0, 121.0, 119.0, 120.5], [100.0, 101.0, 99.0, 100.5], higher_is_better=True)
    assert c.verdict == VERDICT_WORSE
    assert c.diff_ci95[1] < 0


def test_lower_is_better_flips_direction():
    # latency went down: better
    c = compare_samples([120.0, 121.0, 119.0, 120.5], [100.0, 101.0, 99.0, 100.5], higher_is_better=False)
    assert c.verdict == VERDICT_BETTER
    c = compare_samples([100.0, 101.0, 99.0, 100.5], [120.0, 121.0, 119.0, 120.5], higher_is_better=False)
    assert c.verdict == VERDICT_WORSE


def test_overlapping_noise_is_within_noise():
    c = compare_samples([100.0, 110.0, 90.0, 105.0], [102.0, 95.0, 108.0, 99.0], higher_is_better=True)
    assert c.verdict == VERDICT_NOISE
    assert c.p_value >= 0.05
    assert c.diff_ci95[0] < 0 < c.diff_ci95[1]


def test_alpha_is_respected():
    c05 = compare_samples(A, B, higher_is_better=True, alpha=0.05)
    c20 = compare_samples(A, B, higher_is_better=True, alpha=0.2)  # p = 0.1075
    assert c05.verdict == VERDICT_NOISE
    assert c20.verdict == VERDICT_BETTER
    assert c05.p_value == c20.p_value


@pytest.mark.parametrize("a,b", [([100.0], [200.0, 201.0]), ([100.0, 101.0], [200.0]), ([1.0], [2.0])])
def test_single_run_is_inconclusive(a, b):
    c = compare_samples(a, b, higher_is_better=True)
    assert c.verdict == VERDICT_SINGLE_RUN == "inconclusive (single run)"
    assert c.p_value is None and c.diff_ci95 is None and c.df is None
    assert not c.significant
    assert "single run" in c.note
    assert c.ratio == approx(b[0] / a[0], rel=1e-2)


def test_identical_constants_are_within_noise():
    c = compare_samples([5.0, 5.0, 5.0], [5.0, 5.0], higher_is_better=True)
    assert c.verdict == VERDICT_NOISE
    assert c.p_value == 1.0
    assert c.diff == 0.0 and c.diff_ci95 == (0.0, 0.0)
    assert c.ratio == 1.0 and c.rel_diff_pct == 0.0
    assert "constant" in c.note


def test_different_constants_are_a_significant_difference():
    c = compare_samples([5.0, 5.0, 5.0], [6.0, 6.0, 6.0], higher_is_better=True)
    assert c.verdict == VERDICT_BETTER
    assert c.p_value == 0.0
    assert c.diff_ci95 == (1.0, 1.0)
    assert "zero variance" in c.note and "p = 0" in c.note
    assert compare_samples([6.0, 6.0], [5.0, 5.0], higher_is_better=True).verdict == VERDICT_WORSE


def test_one_constant_side_uses_welch_without_warnings():
    # scipy's ttest_ind warns about precision loss here; no warning may come out of
    # compare_samples (this module turns warnings into errors).  Welch with var_a = 0:
    # se^2 = var_b/n_b, df = n_b - 1.
    a, b = [1.0, 1.0, 1.0], [2.0, 2.1, 2.0]
    c = compare_samples(a, b, higher_is_better=False)
    se = statistics.stdev(b) / math.sqrt(3)
    t_stat = (statistics.fmean(b) - 1.0) / se
    assert c.df == approx(2.0)
    assert c.p_value == approx(2 * scipy.stats.t.sf(t_stat, 2), rel=1e-9)
    assert c.diff_ci95 == (approx(c.diff - T975_DF2 * se), approx(c.diff + T975_DF2 * se))
    assert c.verdict == VERDICT_WORSE


def test_nearly_constant_samples_give_finite_results():
    c = compare_samples([1.0, 1.0, 1.0 + 2.2e-16], [1.0, 1.0 + 2.2e-16, 1.0], higher_is_better=True)
    for v in (c.p_value, c.df, *c.diff_ci95, c.ratio, c.rel_diff_pct, c.diff):
        assert math.isfinite(v)
    assert c.verdict == VERDICT_NOISE


def test_sample_against_a_reordering_of_itself_is_within_noise():
    # Found by Hypothesis: with scipy's order-dependent float sums, these two orderings
    # of the same five values got p = 0.036 and the verdict "worse".
    a = [0.9999999999999999] * 4 + [1.0]
    b = [0.9999999999999999] * 3 + [1.0, 0.9999999999999999]
    c = compare_samples(a, b, higher_is_better=True)
    assert c.diff == 0.0
    assert c.p_value == 1.0
    assert c.verdict == VERDICT_NOISE


def test_zero_baseline_has_no_ratio():
    c = compare_samples([-1.0, 1.0], [5.0, 6.0], higher_is_better=True)
    assert c.ratio is None and c.rel_diff_pct is None
    assert "baseline mean is 0" in c.note
    assert c.p_value is not None


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 2.0])
def test_compare_rejects_bad_alpha(alpha):
    with pytest.raises(ValueError):
        compare_samples([1.0, 2.0], [1.0, 2.0], higher_is_better=True, alpha=alpha)


def test_compare_rejects_empty_and_non_finite():
    with pytest.raises(ValueError):
        compare_samples([], [1.0], higher_is_better=True)
    with pytest.raises(ValueError):
        compare_samples([1.0, 2.0], [1.0, math.nan], higher_is_better=True)


def test_comparison_is_frozen():
    c = compare_samples(A, B, higher_is_better=True)
    assert isinstance(c, SampleComparison)
    with pytest.raises(AttributeError):
        c.verdict = VERDICT_BETTER  # type: ignore[misc]


# --------------------------------------------------------------------------- mann_whitney


def test_mann_whitney_exact_small_samples():
    # Complete separation: U = 0.  Of the C(6,3) = 20 equally likely rank splits, one is
    # this extreme in each direction, so the two-sided p is 2/20.
    assert mann_whitney([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == approx(2 / 20)
    assert mann_whitney([5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0]) == approx(2 / 70)


def test_mann_whitney_identical_and_tied():
    assert mann_whitney([3.0, 3.0, 3.0], [3.0, 3.0]) == 1.0
    assert mann_whitney([1.0], [1.0]) == 1.0
    p = mann_whitney([1.0] * 10, [1.0] * 9 + [2.0])
    assert 0 < p <= 1


def test_mann_whitney_rejects_empty():
    with pytest.raises(ValueError):
        mann_whitney([], [1.0])


# --------------------------------------------------------------------------- geometric_mean


def test_geometric_mean_by_hand():
    assert geometric_mean([2.0, 8.0]) == approx(4.0)
    assert geometric_mean([0.5, 2.0]) == approx(1.0)  # a 2x gain and a 2x loss cancel
    assert geometric_mean([1.0, 10.0, 100.0]) == approx(10.0)
    assert geometric_mean([3.0]) == 3.0
    assert geometric_mean([0.7, 0.7]) == 0.7


def test_geometric_mean_matches_statistics():
    values = [1.12, 0.87, 1.03, 0.99, 1.41]
    assert geometric_mean(values) == approx(statistics.geometric_mean(values))


@pytest.mark.parametrize("bad", [[], [1.0, 0.0], [2.0, -1.0], [math.inf]])
def test_geometric_mean_rejects(bad):
    with pytest.raises(ValueError):
        geometric_mean(bad)


# --------------------------------------------------------------------------- properties

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
samples = st.lists(finite, min_size=1, max_size=40)
positive_samples = st.lists(positive, min_size=2, max_size=40)


@given(samples)
def test_prop_ci_contains_mean_and_mean_within_range(values):
    s = summarize(values)
    assert s.n == len(values)
    assert s.min <= s.mean <= s.max
    assert s.min <= s.median <= s.max
    if s.n < 2:
        assert s.ci95 is None and s.stddev is None and s.stderr is None
    else:
        lo, hi = s.ci95
        assert lo <= s.mean <= hi
        assert hi - lo == pytest.approx(2 * scipy.stats.t.ppf(0.975, s.n - 1) * s.stderr, rel=1e-9, abs=1e-9)


@given(samples)
def test_prop_matches_numpy_and_statistics(values):
    s = summarize(values)
    tol = 1e-9 * max(1.0, max(abs(v) for v in values))
    assert s.mean == pytest.approx(statistics.fmean(values), rel=1e-12, abs=tol)
    assert s.median == statistics.median(values)
    if s.n >= 2:
        assert s.stddev == pytest.approx(float(np.std(values, ddof=1)), rel=1e-9, abs=tol)
        assert s.stderr == pytest.approx(s.stddev / math.sqrt(s.n), rel=1e-12)


@given(samples, st.randoms(use_true_random=False))
def test_prop_invariant_to_order(values, rnd):
    shuffled = list(values)
    rnd.shuffle(shuffled)
    s, t = summarize(values), summarize(shuffled)
    assert (s.n, s.mean, s.median, s.stddev, s.stderr, s.ci95, s.cv, s.rse, s.min, s.max) == (
        t.n, t.mean, t.median, t.stddev, t.stderr, t.ci95, t.cv, t.rse, t.min, t.max,
    )
    assert sorted(values[i] for i in s.outliers) == sorted(shuffled[i] for i in t.outliers)


@given(positive_samples)
def test_prop_rse_is_stderr_over_mean(values):
    s = summarize(values)
    assert s.rse == pytest.approx(100 * s.stderr / s.mean, rel=1e-12)
    assert s.rse == pytest.approx(100 * s.cv / math.sqrt(s.n), rel=1e-12)
    assert s.rse >= 0


@given(samples)
def test_prop_outliers_flagged_never_dropped(values):
    s = summarize(values)
    assert s.n == len(values)
    assert list(s.outliers) == sorted(set(s.outliers))
    assert all(0 <= i < len(values) for i in s.outliers)
    if len(values) >= 4:
        q1, q3 = np.percentile(values, [25, 75])
        lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
        assert set(s.outliers) == {i for i, v in enumerate(values) if v < lo or v > hi}
    else:
        assert s.outliers == ()


@given(samples)
def test_prop_dict_round_trip(values):
    s = summarize(values)
    assert summary_from_dict(json.loads(json.dumps(summary_to_dict(s), allow_nan=False))) == s


@given(
    st.lists(positive, min_size=0, max_size=12),
    st.floats(min_value=0.1, max_value=20),
    st.integers(min_value=1, max_value=5),
    st.integers(min_value=0, max_value=6),
)
def test_prop_repeat_decision_is_consistent(values, target, min_runs, extra):
    max_runs = min_runs + extra
    d = should_repeat(values, target_rse_pct=target, min_runs=min_runs, max_runs=max_runs)
    n = len(values)
    assert not (d.again and d.converged)
    if n < min_runs:
        assert d.again
    elif n >= max_runs:
        assert not d.again
    if d.converged:
        s = summarize(values)
        assert s.rse is not None and s.rse <= target
    elif not d.again:
        assert d.reason.startswith("gave up") and n >= max_runs


@settings(max_examples=200)
@given(st.lists(positive, min_size=1, max_size=10), st.lists(positive, min_size=1, max_size=10), st.booleans())
def test_prop_comparison_never_nan_and_verdict_follows_p(a, b, hib):
    c = compare_samples(a, b, higher_is_better=hib)
    numbers = [c.diff, c.ratio, c.rel_diff_pct, c.p_value, c.df]
    numbers += list(c.diff_ci95 or ())
    assert all(v is None or math.isfinite(v) for v in numbers)
    if len(a) < 2 or len(b) < 2:
        assert c.verdict == VERDICT_SINGLE_RUN and c.p_value is None
    else:
        assert 0.0 <= c.p_value <= 1.0
        lo, hi = c.diff_ci95
        assert lo <= c.diff <= hi
        if c.p_value < c.alpha:
            up = c.diff > 0
            assert c.verdict == (VERDICT_BETTER if up == hib else VERDICT_WORSE)
        else:
            assert c.verdict == VERDICT_NOISE
        # swapping baseline and candidate swaps better and worse, and keeps p
        r = compare_samples(b, a, higher_is_better=hib)
        assert r.p_value == pytest.approx(c.p_value, rel=1e-9, abs=1e-12)
        swap = {VERDICT_BETTER: VERDICT_WORSE, VERDICT_WORSE: VERDICT_BETTER, VERDICT_NOISE: VERDICT_NOISE}
        if abs(c.p_value - c.alpha) > 1e-9:
            assert r.verdict == swap[c.verdict]


tie_heavy = st.sampled_from([1.0, 1.0 + 2.0**-52, 1.0 - 2.0**-53, 3.0, 0.1, 0.3, 0.0, 1e-300])


@settings(max_examples=300)
@given(st.lists(tie_heavy, min_size=2, max_size=12), st.randoms(use_true_random=False))
def test_prop_sample_vs_its_reordering_is_within_noise(values, rnd):
    shuffled = list(values)
    rnd.shuffle(shuffled)
    c = compare_samples(values, shuffled, higher_is_better=True)
    assert c.verdict == VERDICT_NOISE and c.p_value == 1.0


@settings(max_examples=300)
@given(st.lists(tie_heavy, min_size=1, max_size=8), st.lists(tie_heavy, min_size=1, max_size=8), st.booleans())
def test_prop_degenerate_samples_never_nan(a, b, hib):
    c = compare_samples(a, b, higher_is_better=hib)
    numbers = [c.diff, c.ratio, c.rel_diff_pct, c.p_value, c.df, *(c.diff_ci95 or ())]
    assert all(v is None or math.isfinite(v) for v in numbers)
    assert not (c.significant and c.diff == 0)


@given(st.lists(positive, min_size=2, max_size=15), st.lists(positive, min_size=2, max_size=15))
def test_prop_p_value_agrees_with_scipy_ttest_ind(a, b):
    sa, sb = summarize(a), summarize(b)
    assume(sa.cv > 1e-6 and sb.cv > 1e-6)  # away from scipy's precision-loss zone
    c = compare_samples(a, b, higher_is_better=True)
    ref = scipy.stats.ttest_ind(a, b, equal_var=False)
    assert c.p_value == pytest.approx(float(ref.pvalue), rel=1e-6, abs=1e-12)
    assert c.df == pytest.approx(float(ref.df), rel=1e-6)
