"""Summaries and comparisons of repeated throughput measurements.

Confidence interval: Student's t interval for the mean, mean ± t(0.975, n-1) · s/√n, which is
what scipy.stats.t.interval(0.95, n-1, loc=mean, scale=sem) gives; for n = 1 it is undefined
(None), never a zero-width interval. Comparison: Welch's unequal-variance t-test
(scipy.stats.ttest_ind(equal_var=False)), because two firewall configurations have no reason to
share a variance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

CONFIDENCE = 0.95
ALPHA = 0.05


RTT_FIGURES = ("rtt_idle_p50_ms", "rtt_loaded_p50_ms", "rtt_loaded_p99_ms")


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float | None
    stdev: float | None
    ci_low: float | None
    ci_high: float | None
    median: float | None
    min: float | None
    max: float | None
    retransmits_mean: float | None = None
    cpu_local_mean: float | None = None
    cpu_remote_mean: float | None = None
    failures: int = 0
    lost_percent_mean: float | None = None
    jitter_ms_mean: float | None = None
    rtt_idle_p50_ms_mean: float | None = None  # latency trials: mean over trials of each one's median RTT
    rtt_loaded_p50_ms_mean: float | None = None
    rtt_loaded_p99_ms_mean: float | None = None

    @property
    def half_width(self) -> float | None:
        return None if self.ci_high is None or self.mean is None else self.ci_high - self.mean

    @property
    def relative_half_width(self) -> float | None:
        """CI half-width as a fraction of the mean: what an adaptive run's `precision` targets."""
        half = self.half_width
        return None if half is None or not self.mean else half / abs(self.mean)

    def to_dict(self) -> dict:
        return {**asdict(self), "ci_half_width": self.half_width}


def _t_interval(values: np.ndarray) -> tuple[float | None, float | None]:
    n = len(values)
    if n < 2:
        return None, None
    sem = float(np.std(values, ddof=1)) / math.sqrt(n)
    if sem == 0.0:
        mean = float(values.mean())
        return mean, mean
    from scipy import stats as sps  # here, not at import: ~1 s that `lab status` or `lab down` never needs

    low, high = sps.t.interval(CONFIDENCE, n - 1, loc=float(values.mean()), scale=sem)
    return float(low), float(high)


def _mean_or_none(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def summarize(throughputs: Sequence[float], retransmits: Sequence[float | None] = (),
              cpu_local: Sequence[float | None] = (), cpu_remote: Sequence[float | None] = (),
              failures: int = 0, lost_percent: Sequence[float | None] = (),
              jitter_ms: Sequence[float | None] = (), rtt: Mapping[str, Sequence[float | None]] | None = None) -> Summary:
    """Throughput is never negative, so the interval's lower end is clipped at 0 (with n = 2 the
    t interval is often wider than the mean: t(0.975, 1) = 12.7). Reports mark n < 3.
    rtt: {"rtt_idle_p50_ms": [per trial], ...} for latency trials (RTT_FIGURES)."""
    values = np.asarray(throughputs, dtype=float)
    n = len(values)
    if n == 0:
        return Summary(0, None, None, None, None, None, None, None, failures=failures)
    low, high = _t_interval(values)
    return Summary(
        n=n, mean=float(values.mean()), stdev=float(np.std(values, ddof=1)) if n > 1 else None,
        ci_low=None if low is None else max(0.0, low), ci_high=high, median=float(np.median(values)),
        min=float(values.min()), max=float(values.max()),
        retransmits_mean=_mean_or_none(retransmits), cpu_local_mean=_mean_or_none(cpu_local),
        cpu_remote_mean=_mean_or_none(cpu_remote), failures=failures,
        lost_percent_mean=_mean_or_none(lost_percent), jitter_ms_mean=_mean_or_none(jitter_ms),
        **{f"{name}_mean": _mean_or_none((rtt or {}).get(name, ())) for name in RTT_FIGURES},
    )


def relative_half_width(values: Sequence[float]) -> float | None:
    """CI half-width as a fraction of the mean: the adaptive-repetition stopping criterion."""
    arr = np.asarray(values, dtype=float)
    low, high = _t_interval(arr)
    if high is None or arr.mean() == 0:
        return None
    return (high - float(arr.mean())) / abs(float(arr.mean()))


@dataclass(frozen=True)
class Comparison:
    label_a: str
    label_b: str
    mean_a: float
    mean_b: float
    difference: float  # b - a
    relative: float  # (b - a) / a
    p_value: float | None
    significant: bool
    difference_ci: tuple[float, float] | None = None  # 95% Welch interval of mean_b - mean_a

    def verdict(self) -> str:
        if self.p_value is None:
            return "not enough trials for a test (need at least 2 per side)"
        if not self.significant:
            return f"no significant difference (p={self.p_value:.3g})"
        faster = "faster" if self.difference > 0 else "slower"
        return f"{self.label_b} is {abs(self.relative) * 100:.1f}% {faster} than {self.label_a}, p={self.p_value:.3g}"


def compare(a: Sequence[float], b: Sequence[float], label_a: str = "A", label_b: str = "B") -> Comparison:
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(xa) == 0 or len(xb) == 0:
        raise ValueError("both sides need at least one successful trial")
    mean_a, mean_b = float(xa.mean()), float(xb.mean())
    p_value, interval = None, None
    if len(xa) >= 2 and len(xb) >= 2:
        if np.std(xa) == 0 and np.std(xb) == 0:
            p_value = 1.0 if mean_a == mean_b else 0.0
            interval = (mean_b - mean_a, mean_b - mean_a)
        else:
            from scipy import stats as sps

            test = sps.ttest_ind(xb, xa, equal_var=False)  # b first: the interval is of mean_b - mean_a
            p_value = float(test.pvalue)
            low, high = test.confidence_interval(CONFIDENCE)
            interval = (float(low), float(high))
    return Comparison(label_a, label_b, mean_a, mean_b, mean_b - mean_a,
                      (mean_b - mean_a) / mean_a if mean_a else math.inf, p_value,
                      p_value is not None and p_value < ALPHA, interval)


def percentiles(values: Sequence[float], at: Sequence[float] = (50, 90, 99)) -> dict[str, float]:
    """{"p50": ..., ...}: linear interpolation between closest ranks (numpy.percentile's default);
    {} without values."""
    if not values:
        return {}
    found = np.percentile(np.asarray(values, dtype=float), list(at))
    return {f"p{p:g}": float(v) for p, v in zip(at, found)}
