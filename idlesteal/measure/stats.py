"""Small-sample statistics: mean, standard deviation, Student-t confidence
intervals, Welch's t-test and the ratio of two means with its interval.

The distributions and the test are scipy.stats' (Debian's python3-scipy);
what the harness adds on top: the summary it tabulates, Welch's test when a
side has no spread at all (scipy gives nan), the Welch-Satterthwaite degrees
of freedom it records (scipy 1.10's ttest_ind does not return them), and the
delta-method interval of a ratio of means, and a ratio of medians with a
bootstrap interval and Mann-Whitney's p for samples with outliers (one boot
whose vCPUs the host descheduled can double a mean).

scipy is imported on first use, so the commands that compute nothing start
on an interpreter without it (needs.py says which commands need it).
"""
from __future__ import annotations

import math
import statistics
import warnings
from dataclasses import dataclass
from typing import Any, Sequence


def _scipy_stats() -> Any:
    from scipy import stats as st
    return st


def mean(xs: Sequence[float]) -> float:
    if not xs:
        raise ValueError("mean of no values")
    return statistics.fmean(xs)


def stdev(xs: Sequence[float]) -> float:
    """Sample standard deviation (n-1); 0 for fewer than two values."""
    return statistics.stdev(xs) if len(xs) >= 2 else 0.0


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with df degrees of freedom (df may be fractional)."""
    if not df > 0:
        raise ValueError("df must be positive")
    return float(_scipy_stats().t.cdf(t, df))


def t_ppf(p: float, df: float) -> float:
    """Quantile of Student's t (inverse of t_cdf)."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if not df > 0:
        raise ValueError("df must be positive")
    return float(_scipy_stats().t.ppf(p, df))


@dataclass
class Summary:
    n: int
    mean: float
    stdev: float
    ci95: float      # half-width of the 95% confidence interval of the mean

    def fmt(self, digits: int = 3) -> str:
        return f"{self.mean:.{digits}f} ± {self.ci95:.{digits}f}"


def summarize(xs: Sequence[float], confidence: float = 0.95) -> Summary:
    n = len(xs)
    if any(math.isnan(x) for x in xs):     # not measured (host mode, no /proc/schedstat)
        return Summary(n, math.nan, math.nan, math.nan)
    m = mean(xs)
    s = stdev(xs)
    half = t_ppf(0.5 + confidence / 2.0, n - 1) * s / math.sqrt(n) if n >= 2 else math.nan
    return Summary(n, m, s, half)


@dataclass
class Welch:
    t: float
    df: float
    p: float  # two-sided

    @property
    def significant(self) -> bool:
        return self.p < 0.05


def _welch_df(va: float, vb: float, na: int, nb: int) -> float:
    """Welch-Satterthwaite degrees of freedom from the squared standard errors."""
    return (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))


def welch(a: Sequence[float], b: Sequence[float]) -> Welch:
    """Welch's unequal-variance t-test of mean(a) == mean(b)
    (scipy.stats.ttest_ind(equal_var=False))."""
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return Welch(math.nan, math.nan, math.nan)
    va, vb = stdev(a) ** 2 / na, stdev(b) ** 2 / nb
    diff = mean(a) - mean(b)
    if va + vb == 0:      # no spread on either side: equal or certainly different
        return Welch(math.copysign(math.inf, diff) if diff else 0.0, math.inf,
                     0.0 if diff else 1.0)
    with warnings.catch_warnings():     # nearly constant samples: scipy's precision note
        warnings.simplefilter("ignore", RuntimeWarning)
        res = _scipy_stats().ttest_ind(a, b, equal_var=False)
    return Welch(float(res.statistic), _welch_df(va, vb, na, nb), float(res.pvalue))


@dataclass
class Ratio:
    value: float
    low: float
    high: float

    def fmt(self, digits: int = 3) -> str:
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def ratio(num: Sequence[float], den: Sequence[float], confidence: float = 0.95) -> Ratio:
    """mean(num)/mean(den) with a delta-method interval (Welch degrees of freedom)."""
    mn, md = mean(num), mean(den)
    r = mn / md
    nn, nd = len(num), len(den)
    if nn < 2 or nd < 2 or mn == 0:
        return Ratio(r, math.nan, math.nan)
    vn, vd = stdev(num) ** 2 / nn, stdev(den) ** 2 / nd
    rel = math.sqrt(vn / mn ** 2 + vd / md ** 2)
    if vn + vd == 0:
        return Ratio(r, r, r)
    df = _welch_df(vn, vd, nn, nd) if vn and vd else (nn - 1 if vn else nd - 1)
    q = t_ppf(0.5 + confidence / 2.0, df)
    return Ratio(r, r * (1 - q * rel), r * (1 + q * rel))


@dataclass
class MedianRatio:
    value: float
    low: float
    high: float
    p: float               # Mann-Whitney U, two-sided

    def fmt(self, digits: int = 3) -> str:
        return (f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}] "
                f"(Mann-Whitney p = {self.p:.2g})")


def median_ratio(num: Sequence[float], den: Sequence[float], confidence: float = 0.95,
                 resamples: int = 10000, seed: int = 1) -> MedianRatio:
    """median(num)/median(den), its percentile-bootstrap interval (each side
    resampled on its own; a fixed seed, so a result is reproducible) and the
    two-sided Mann-Whitney U test's p.  Robust where a few samples are far
    off: what `kernels` reports beside the ratio of means."""
    if not num or not den:
        raise ValueError("median ratio of no values")
    md = statistics.median(den)
    if md == 0:
        raise ValueError("median ratio over a zero median")
    r = statistics.median(num) / md
    if len(num) < 2 or len(den) < 2:
        return MedianRatio(r, math.nan, math.nan, math.nan)
    import numpy as np
    rng = np.random.default_rng(seed)
    a, b = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    ma = np.median(rng.choice(a, (resamples, len(a))), axis=1)
    mb = np.median(rng.choice(b, (resamples, len(b))), axis=1)
    ok = mb != 0
    rs = ma[ok] / mb[ok]
    tail = (1 - confidence) / 2 * 100
    low, high = (float(x) for x in np.percentile(rs, [tail, 100 - tail]))
    if len(set(num) | set(den)) == 1:
        p = 1.0
    else:
        p = float(_scipy_stats().mannwhitneyu(num, den, alternative="two-sided").pvalue)
    return MedianRatio(r, low, high, p)


def holm(ps: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values: the adjusted p
    of the k-th smallest is max over j <= k of (m - j + 1) * p_(j), capped
    at 1, so "adjusted p < alpha" controls the family-wise error rate at
    alpha for any dependence between the tests.  A nan p (no test) keeps
    nan and does not count in m."""
    idx = sorted((i for i, p in enumerate(ps) if not math.isnan(p)), key=lambda i: ps[i])
    out = [math.nan] * len(ps)
    running = 0.0
    for rank, i in enumerate(idx):
        running = max(running, min(1.0, (len(idx) - rank) * ps[i]))
        out[i] = running
    return out


@dataclass
class Difference:
    value: float           # mean(a) - mean(b)
    low: float
    high: float
    p: float               # Welch

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def difference(a: Sequence[float], b: Sequence[float], confidence: float = 0.95) -> Difference:
    """mean(a) - mean(b) with its Welch interval and p: what "no difference
    detected" is stated with (the interval's half-width is the resolution)."""
    d = mean(a) - mean(b)
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return Difference(d, math.nan, math.nan, math.nan)
    va, vb = stdev(a) ** 2 / na, stdev(b) ** 2 / nb
    if va + vb == 0:
        return Difference(d, d, d, 0.0 if d else 1.0)
    df = _welch_df(va, vb, na, nb) if va and vb else (na - 1 if va else nb - 1)
    h = t_ppf(0.5 + confidence / 2.0, df) * math.sqrt(va + vb)
    return Difference(d, d - h, d + h, welch(a, b).p)
