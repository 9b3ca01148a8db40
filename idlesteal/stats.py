"""Small-sample statistics: mean, standard deviation, Student-t confidence
intervals, Welch's t-test and the ratio of two means with its interval.

The Student t distribution is computed here (regularized incomplete beta by
continued fraction), so no scipy is needed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


def mean(xs: Sequence[float]) -> float:
    if not xs:
        raise ValueError("mean of no values")
    return sum(xs) / len(xs)


def stdev(xs: Sequence[float]) -> float:
    """Sample standard deviation (n-1); 0 for fewer than two values."""
    n = len(xs)
    if n < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-14:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with df degrees of freedom (df may be fractional)."""
    if df <= 0:
        raise ValueError("df must be positive")
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_ppf(p: float, df: float) -> float:
    """Quantile of Student's t (inverse of t_cdf), by bisection."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
        if hi > 1e12:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


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


def welch(a: Sequence[float], b: Sequence[float]) -> Welch:
    """Welch's unequal-variance t-test of mean(a) == mean(b)."""
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return Welch(math.nan, math.nan, math.nan)
    va, vb = stdev(a) ** 2 / na, stdev(b) ** 2 / nb
    diff = mean(a) - mean(b)
    if va + vb == 0:
        return Welch(math.inf if diff else 0.0, math.inf, 0.0 if diff else 1.0)
    t = diff / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
    p = 2.0 * (1.0 - t_cdf(abs(t), df))
    return Welch(t, df, max(0.0, min(1.0, p)))


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
    df = (vn + vd) ** 2 / (vn ** 2 / (nn - 1) + vd ** 2 / (nd - 1)) if vn and vd else \
        (nn - 1 if vn else nd - 1)
    q = t_ppf(0.5 + confidence / 2.0, df)
    return Ratio(r, r * (1 - q * rel), r * (1 + q * rel))
