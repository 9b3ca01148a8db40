"""stats: the harness's summaries on top of scipy.stats, against reference
values from published tables and R (each says where it comes from), not
against this module's own earlier output."""
import math

import pytest

from idlesteal.measure import stats

# Two-sided 95% Student t critical values, t(0.975, df): the standard table
# (e.g. NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2, "Critical
# values of the Student's t distribution", column 0.975).
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 9: 2.262, 10: 2.228,
        20: 2.086, 30: 2.042, 120: 1.980}

# R's built-in `sleep` data (Cushny and Peebles 1905): extra hours of sleep,
# drug 1 and drug 2.
SLEEP1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]


@pytest.mark.parametrize("df,want", sorted(T975.items()))
def test_t_quantile_matches_tables(df, want):
    assert stats.t_ppf(0.975, df) == pytest.approx(want, abs=1e-3)


def test_t_quantile_large_df_is_normal():
    # The normal distribution's 97.5% point: 1.959964 (same table, df = infinity).
    assert stats.t_ppf(0.975, 1e7) == pytest.approx(1.95996, abs=1e-4)
    assert stats.t_ppf(0.5, 3) == pytest.approx(0.0, abs=1e-12)
    assert stats.t_ppf(0.025, 4) == pytest.approx(-2.776, abs=1e-3)
    with pytest.raises(ValueError):
        stats.t_ppf(1.0, 3)
    with pytest.raises(ValueError):
        stats.t_ppf(0.9, 0)


def test_t_cdf_symmetry_and_known_value():
    assert stats.t_cdf(0.0, 5) == pytest.approx(0.5)
    # df=1 is the Cauchy distribution: P(T <= 1) = 1/2 + atan(1)/pi = 0.75 exactly.
    assert stats.t_cdf(1.0, 1) == pytest.approx(0.75, abs=1e-10)
    assert stats.t_cdf(-1.0, 1) == pytest.approx(0.25, abs=1e-10)
    # df=2 has a closed form: P(T <= t) = 1/2 + t / (2 sqrt(t^2 + 2)).
    assert stats.t_cdf(1.5, 2) == pytest.approx(0.5 + 1.5 / (2 * math.sqrt(1.5 ** 2 + 2)))


def test_mean_stdev_summary():
    xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]
    assert stats.mean(xs) == 5.0
    assert stats.stdev(xs) == pytest.approx(math.sqrt(32 / 7))
    s = stats.summarize(xs)
    assert s.n == 8
    # t(0.975, 7) = 2.365 (the table above's source)
    assert s.ci95 == pytest.approx(2.365 * math.sqrt(32 / 7) / math.sqrt(8), rel=1e-3)
    assert stats.stdev([3.0]) == 0.0
    assert math.isnan(stats.summarize([3.0]).ci95)
    with pytest.raises(ValueError):
        stats.mean([])


def test_summary_interval_matches_r():
    # R: t.test(sleep$extra[1:10]) -> mean 0.75, 95 percent confidence
    # interval -0.5297804 2.0297804.
    s = stats.summarize(SLEEP1)
    assert s.mean == pytest.approx(0.75)
    assert (s.mean - s.ci95, s.mean + s.ci95) == pytest.approx((-0.5297804, 2.0297804),
                                                                abs=1e-7)


def test_welch_matches_r():
    # R: t.test(extra ~ group, data = sleep) (Welch Two Sample t-test):
    # t = -1.8608, df = 17.776, p-value = 0.07939.
    w = stats.welch(SLEEP1, SLEEP2)
    assert w.t == pytest.approx(-1.8608, abs=1e-4)
    assert w.df == pytest.approx(17.776, abs=1e-3)
    assert w.p == pytest.approx(0.07939, abs=1e-5)
    assert not w.significant


def test_welch_matches_the_published_example():
    # Welch's t-test, Wikipedia (article "Welch's t-test", Examples, example
    # 1, equal sample sizes, unequal variances): t = -2.46, df = 25.0, p = 0.021.
    a1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
          21.4]
    a2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
          24.4]
    w = stats.welch(a1, a2)
    assert (round(w.t, 2), round(w.df, 0), round(w.p, 3)) == (-2.46, 25.0, 0.021)
    assert w.significant


def test_welch_detects_clear_difference():
    a = [10.0, 10.1, 9.9, 10.05, 9.95]
    b = [12.0, 12.1, 11.9, 12.05, 11.95]
    w = stats.welch(a, b)
    assert w.p < 1e-6 and w.significant


def test_welch_without_spread():
    # scipy gives nan for two constant samples; the harness calls them equal
    # (p = 1) or certainly different (p = 0).
    assert stats.welch([1.0, 1.0], [1.0, 1.0]).p == 1.0
    w = stats.welch([1.0, 1.0], [2.0, 2.0])
    assert (w.p, w.t) == (0.0, -math.inf)
    assert math.isnan(stats.welch([1.0], [1.0, 2.0]).p)


def test_ratio_interval_contains_value():
    r = stats.ratio([10.0, 10.5, 9.5], [5.0, 5.2, 4.8])
    assert r.value == pytest.approx(2.0)
    assert r.low < 2.0 < r.high
    exact = stats.ratio([4.0, 4.0], [2.0, 2.0])
    assert (exact.low, exact.value, exact.high) == (2.0, 2.0, 2.0)


def test_ratio_interval_is_the_delta_method():
    # Delta method by hand: r (1 +- t(0.975, df_Welch) sqrt(se_n^2/m_n^2 + se_d^2/m_d^2)),
    # df_Welch = 17.776 for the sleep data (R above); t(0.975, 17.776) = 2.1030
    # (between the table's 2.110 at 17 and 2.101 at 18).
    num = [x + 10 for x in SLEEP2]
    den = [x + 10 for x in SLEEP1]
    r = stats.ratio(num, den)
    mn, md = stats.mean(num), stats.mean(den)
    rel = math.sqrt(stats.stdev(num) ** 2 / 10 / mn ** 2 + stats.stdev(den) ** 2 / 10 / md ** 2)
    assert r.value == pytest.approx(mn / md)
    assert r.high == pytest.approx(mn / md * (1 + 2.1030 * rel), rel=1e-4)
    assert r.low == pytest.approx(mn / md * (1 - 2.1030 * rel), rel=1e-4)


def test_median_ratio_value_and_exact_mann_whitney():
    r = stats.median_ratio([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert r.value == pytest.approx(3 / 8)
    # no overlap, 5 and 5: the exact two-sided p is 2 / C(10, 5) = 2/252
    assert r.p == pytest.approx(2 / 252)
    assert r.low <= r.value <= r.high < 1


def test_median_ratio_shrugs_off_one_descheduled_boot():
    base = [200.0, 210, 190, 205, 195, 215, 185, 200]
    slow = [*base[:7], 2100.0]                  # one boot the host starved
    mean_r = stats.ratio(slow, base)
    med_r = stats.median_ratio(slow, base)
    assert mean_r.value > 1.9 and mean_r.high - mean_r.low > 1
    assert med_r.value == pytest.approx(1.0, abs=0.03)
    assert med_r.high - med_r.low < 0.2 and med_r.p > 0.5


def test_median_ratio_is_reproducible_and_checks_its_input():
    a, b = [1.0, 1.2, 0.9, 1.1], [1.0, 1.05, 0.95, 1.0]
    assert stats.median_ratio(a, b) == stats.median_ratio(a, b)
    one = stats.median_ratio([2.0], [1.0])
    assert one.value == 2.0 and math.isnan(one.low) and math.isnan(one.p)
    assert stats.median_ratio([1.0, 1.0], [1.0, 1.0]).p == 1.0
    with pytest.raises(ValueError):
        stats.median_ratio([], [1.0])
    with pytest.raises(ValueError):
        stats.median_ratio([1.0], [0.0])
