"""The tuning loop, free of testbeds and stores: it asks `measure(cell)` for the next trial of a
configuration and decides (decide.py). The run hands it a measure that replays stored trials in
order and runs the rest; the report hands it one that only replays — the same decisions either way,
because they depend on nothing but the trials' results and the file.

Order of work: (when no candidates were given) a baseline of the start cell, from which diagnosis
and the catalog propose the candidates; then one decision per candidate, each against the current
best, best and candidate interleaved; before each, the candidates whose knob is a lever of a limit
verdict of the current best go first. An accepted knob stacks (the best becomes start + every
accepted knob) and every later candidate is measured against that new best. Last, when anything was
accepted, a final confirmation measures start against the final configuration, interleaved: the
before/after cells of the report, and a decision of its own in the family-wise count (when a single
knob was accepted straight against the start, its own decision is that comparison already).

Budget: each decision gets an equal share of the trials still unspent (pairs = share / 2), so the
time a quick decision leaves over goes to later ones; the whole run never exceeds budget_trials.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from linerate.kinds.tune.decide import MIN_PAIRS, Judgement, Plan, judge
from linerate.kinds.tune.options import Candidate
from linerate.kinds.tune.proposals import merge

# verdict code (diagnose/rules.py) -> the lab axes that are its levers
LEVERS = {
    "single-core-bound": {"virtio_queues", "dut_rps", "virtio_offloads", "dut_offloads"},
    "partial-cpu-bound": {"virtio_queues", "dut_rps"},
    "irq-one-queue": {"virtio_queues", "dut_rps"},
    "irq-one-cpu": {"virtio_queues", "dut_rps", "dut_sysctls"},
    "cpu-bound": {"virtio_offloads", "dut_offloads", "vhost"},
    "offload-pathology": {"virtio_offloads", "dut_offloads"},
    "nic-drops": {"dut_sysctls", "dut_offloads"},
    "stack-queue-drops": {"dut_sysctls", "txqueuelen"},
    "retransmits-dut-drops": {"dut_sysctls", "txqueuelen"},
}
FINAL = "final configuration"


@dataclass(frozen=True)
class Outcome:
    throughput_bps: float | None
    error: str | None = None


@dataclass
class Step:
    candidate: Candidate
    judgement: Judgement
    trials: int
    best: dict[str, Any]  # the configuration it was measured against
    cell: dict[str, Any]  # the candidate's configuration


@dataclass
class TuneOutcome:
    start: dict[str, Any]
    final: dict[str, Any]
    steps: list[Step] = field(default_factory=list)
    confirmation: Step | None = None  # start vs final, when anything was accepted
    baseline: list[float] = field(default_factory=list)
    trials: int = 0
    budget: int = 0
    decisions: int = 0
    complete: bool = True  # False: a replay ran out of stored trials (an interrupted run)
    experiment_id: int = 0  # set by the run (kinds/tune)
    resumed: bool = False

    def summary(self, where: str) -> str:
        accepted = ", ".join(f"{s.candidate.knob}={s.candidate.value}" for s in self.accepted) or "none"
        return (f"tune: {len(self.steps)} decisions, accepted: {accepted}; {self.trials} of {self.budget} trials "
                f"into {where}, experiment {self.experiment_id}{' (resumed)' if self.resumed else ''}")

    @property
    def accepted(self) -> list[Step]:
        return [s for s in self.steps if s.judgement.decision == "accepted"]


class OutOfTrials(Exception):
    """A replay-only measure has no stored trial left: the run was interrupted here."""


class Tuner:
    def __init__(self, start: dict[str, Any], candidates: tuple[Candidate, ...] | None, budget_trials: int,
                 measure: Callable[[dict[str, Any]], Outcome], *, min_effect: float,
                 levers_of: Callable[[dict[str, Any]], set[str]] = lambda cell: set(),
                 propose: Callable[[dict[str, Any]], list[Candidate]] = lambda cell: [],
                 on_step: Callable[[Step], None] = lambda step: None):
        self.start, self.candidates, self.budget = dict(start), candidates, budget_trials
        self.measure_cell, self.min_effect = measure, min_effect
        self.levers_of, self.propose, self.on_step = levers_of, propose, on_step
        self.spent = 0

    def _measure(self, cell: dict[str, Any]) -> Outcome:
        outcome = self.measure_cell(cell)
        self.spent += 1
        return outcome

    def run(self) -> TuneOutcome:
        outcome = TuneOutcome(self.start, self.start, budget=self.budget)
        try:
            self._run(outcome)
        except OutOfTrials:
            outcome.complete = False
        outcome.trials = self.spent
        return outcome

    def _run(self, outcome: TuneOutcome) -> None:
        candidates = self.candidates
        if candidates is None:  # a baseline, then what diagnosis and the catalog propose for it
            for _ in range(MIN_PAIRS):
                result = self._measure(self.start)
                if result.throughput_bps is not None:
                    outcome.baseline.append(result.throughput_bps)
            candidates = tuple(self.propose(self.start))
        pending = list(candidates)
        outcome.decisions = len(pending) + 1  # + the final confirmation
        best = dict(self.start)
        while pending:
            levers = self.levers_of(best)
            pending.sort(key=lambda c: c.knob not in levers)  # stable: the file's order otherwise
            candidate = pending.pop(0)
            cell = {**best, candidate.knob: merge(candidate.knob, best.get(candidate.knob), candidate.value)}
            left = len(pending) + 2  # this one, the rest, the final confirmation
            step = self._decide(best, cell, candidate, outcome.decisions, left)
            outcome.steps.append(step)
            self.on_step(step)
            if step.judgement.decision == "accepted":
                best = cell
        outcome.final = best
        accepted = outcome.accepted
        if len(accepted) == 1 and accepted[0].best == self.start:
            outcome.confirmation = accepted[0]  # that decision measured start against the final configuration
        elif best != self.start:
            confirm = Candidate(FINAL, "", "the accepted knobs together")
            outcome.confirmation = self._decide(self.start, best, confirm, outcome.decisions, 1)
            self.on_step(outcome.confirmation)

    def _decide(self, best: dict[str, Any], cell: dict[str, Any], candidate: Candidate, decisions: int,
                left: int) -> Step:
        if cell == best:
            return Step(candidate, Judgement("rejected", "the best configuration has this value already", 0), 0, best, cell)
        share = (self.budget - self.spent) // left // 2
        if share < MIN_PAIRS:
            return Step(candidate, Judgement("inconclusive", "no budget left for it", 0), 0, best, cell)
        plan = Plan(decisions, share, min_effect=self.min_effect)
        pairs: list[tuple[float, float]] = []
        spent_before = self.spent
        while True:
            a, b = self._measure(best), self._measure(cell)
            if b.throughput_bps is None:
                judgement = judge(pairs, plan, failed=b.error or "no result")
                break
            if a.throughput_bps is not None:  # a failed trial of the best is not the candidate's fault
                pairs.append((a.throughput_bps, b.throughput_bps))
            judgement = judge(pairs, plan)
            if judgement.decision is None and (self.spent - spent_before) >= 2 * share:
                judgement = Judgement("inconclusive", f"its share of the budget ({share} pairs) ran out "
                                      "(trials of the best configuration failed)", len(pairs))
            if judgement.decision is not None:
                break
        return Step(candidate, judgement, self.spent - spent_before, best, cell)
