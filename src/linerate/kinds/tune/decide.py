"""When a tuning step is decided: a sequential paired test with the family-wise error held.

A candidate knob is measured against the current best *interleaved* — best, candidate, best,
candidate ... — so slow drift of the machine (thermal, a neighbour, the shared host CPUs of a VM
DUT) lands on both arms. Each pair gives d = ln(candidate / best): the log ratio, because the plain
relative difference (candidate - best) / best is biased upwards by noise alone (E[1/best] > 1/E[best],
Jensen: +1% at 10% trial-to-trial noise, enough to "accept" a placebo), while the log ratio of two
equally distributed trials has mean 0. After every pair from `min_pairs` on, a one-sample t-test on
the d's (Student t, n - 1 degrees of freedom) decides, effects reported as exp(d) - 1:

- accepted: the candidate is better, one-sided p <= the per-look level;
- rejected: it is worse (one-sided p <= the per-look level the other way), a trial of it failed,
  or the gain is not worth having (the upper end of its one-sided interval at the per-look level
  is below `min_effect`: futility, which can only stop a decision, never accept one);
- inconclusive: its share of the budget (`max_pairs`) ran out first.

Family-wise error: Bonferroni over every decision the run may make and every look each may take:
per-look level = alpha / decisions / looks, looks = max_pairs - min_pairs + 1. The chance that any
accepted knob is a false acceptance stays <= alpha (5%) whatever the run's length, without assuming
the looks are independent. Conservative: a real but small gain needs more pairs, or ends inconclusive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import mean, stdev

from scipy import stats as sps

ALPHA = 0.05
MIN_PAIRS = 3
MIN_EFFECT = 0.01  # a knob that gains less than 1% is not worth carrying
CORRECTION = "Bonferroni over every decision and every look (sequential paired t-test)"


@dataclass(frozen=True)
class Plan:
    decisions: int  # every decision the run may make (candidates + the final confirmation)
    max_pairs: int  # this decision's share of the budget, in pairs
    min_pairs: int = MIN_PAIRS
    alpha: float = ALPHA
    min_effect: float = MIN_EFFECT

    @property
    def looks(self) -> int:
        return max(1, self.max_pairs - self.min_pairs + 1)

    @property
    def per_look(self) -> float:
        return self.alpha / self.decisions / self.looks


@dataclass(frozen=True)
class Judgement:
    decision: str | None  # accepted | rejected | inconclusive | None (measure another pair)
    why: str
    pairs: int
    effect: float | None = None  # candidate vs best: exp(mean log ratio) - 1 (+0.25: 25% more)
    ci: tuple[float, float] | None = None  # nominal 95% t interval of the effect, on the same scale
    p_better: float | None = None  # one-sided p that the candidate is better
    mean_best: float | None = None
    mean_candidate: float | None = None


def judge(pairs: list[tuple[float, float]], plan: Plan, failed: str | None = None) -> Judgement:
    """pairs: (best, candidate) throughputs of the pairs measured so far, in order."""
    n = len(pairs)
    if failed:
        return Judgement("rejected", f"a trial of it failed ({failed[:120]})", n)
    if n < plan.min_pairs:
        return Judgement(None, "too few pairs", n)
    best, candidate = [a for a, _ in pairs], [b for _, b in pairs]
    logs = [math.log(b / a) for a, b in pairs]
    centre = mean(logs)
    spread = stdev(logs) / math.sqrt(n)
    if spread == 0:  # every pair moved by exactly the same share (none at all: no evidence either way)
        p_better = 0.0 if centre > 0 else (1.0 if centre < 0 else 0.5)
        low = high = upper = centre
    else:
        p_better = float(sps.t.sf(centre / spread, n - 1))
        half = float(sps.t.ppf(0.975, n - 1)) * spread
        low, high = centre - half, centre + half
        upper = centre + float(sps.t.ppf(1 - plan.per_look, n - 1)) * spread
    upper = math.expm1(upper)
    figures = dict(pairs=n, effect=math.expm1(centre), ci=(math.expm1(low), math.expm1(high)), p_better=p_better,
                   mean_best=mean(best), mean_candidate=mean(candidate))
    if p_better <= plan.per_look:
        return Judgement("accepted", f"better: one-sided p {p_better:.2g} <= {plan.per_look:.2g}", **figures)
    if 1 - p_better <= plan.per_look:
        return Judgement("rejected", f"worse: one-sided p {1 - p_better:.2g} <= {plan.per_look:.2g}", **figures)
    if upper < plan.min_effect:
        return Judgement("rejected", f"no gain worth a knob: at most {upper * 100:+.2f}% "
                         f"(< {plan.min_effect * 100:g}%)", **figures)
    if n >= plan.max_pairs:
        return Judgement("inconclusive", f"its share of the budget ({plan.max_pairs} pairs) ran out", **figures)
    return Judgement(None, "undecided", **figures)
