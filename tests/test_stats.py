import math

import pytest

from idlesteal import stats

# Two-sided 95% Student t critical values from standard tables.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 9: 2.262, 10: 2.228,
        20: 2.086, 30: 2.042, 120: 1.980}


@pytest.mark.parametrize("df,want", sorted(T975.items()))
def test_t_quantile_matches_tables(df, want):
    assert stats.t_ppf(0.975, df) == pytest.approx(want, abs=1e-3)


def test_t_quantile_large_df_is_normal():
    assert stats.t_ppf(0.975, 1e7) == pytest.approx(1.95996, abs=1e-4)
    assert stats.t_ppf(0.5, 3) == 0.0
    assert stats.t_ppf(0.025, 4) == pytest.approx(-2.776, abs=1e-3)


def test_t_cdf_symmetry_and_known_value():
    assert stats.t_cdf(0.0, 5) == pytest.approx(0.5)
    # df=1 is Cauchy: P(T <= 1) = 0.75
    assert stats.t_cdf(1.0, 1) == pytest.approx(0.75, abs=1e-10)
    assert stats.t_cdf(-1.0, 1) == pytest.approx(0.25, abs=1e-10)


def test_mean_stdev_summary():
    xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]
    assert stats.mean(xs) == 5.0
    assert stats.stdev(xs) == pytest.approx(math.sqrt(32 / 7))
    s = stats.summarize(xs)
    assert s.n == 8
    assert s.ci95 == pytest.approx(2.365 * math.sqrt(32 / 7) / math.sqrt(8), rel=1e-3)
    assert stats.stdev([3.0]) == 0.0
    assert math.isnan(stats.summarize([3.0]).ci95)


def test_welch_against_hand_computation():
    a = [1.0, 2.0, 3.0, 4.0]
    b = [2.0, 3.0, 4.0, 5.5]
    w = stats.welch(a, b)
    va, vb = stats.stdev(a) ** 2 / 4, stats.stdev(b) ** 2 / 4
    assert w.t == pytest.approx((2.5 - 3.625) / math.sqrt(va + vb))
    assert w.df == pytest.approx((va + vb) ** 2 / (va ** 2 / 3 + vb ** 2 / 3))
    assert w.p == pytest.approx(0.2986, abs=1e-3)
    assert not w.significant


def test_welch_detects_clear_difference():
    a = [10.0, 10.1, 9.9, 10.05, 9.95]
    b = [12.0, 12.1, 11.9, 12.05, 11.95]
    w = stats.welch(a, b)
    assert w.p < 1e-6 and w.significant


def test_welch_identical_constant_samples():
    assert stats.welch([1.0, 1.0], [1.0, 1.0]).p == 1.0


def test_ratio_interval_contains_value():
    r = stats.ratio([10.0, 10.5, 9.5], [5.0, 5.2, 4.8])
    assert r.value == pytest.approx(2.0)
    assert r.low < 2.0 < r.high
    exact = stats.ratio([4.0, 4.0], [2.0, 2.0])
    assert (exact.low, exact.value, exact.high) == (2.0, 2.0, 2.0)
