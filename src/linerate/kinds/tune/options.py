"""The keys of a tune file (test = "tune"), checked before anything runs:

    objective = "throughput"      # the mean Mbit/s of the start cell
    budget_trials = 48            # hard cap on trials (and/or budget_minutes)
    [start]                       # the cell to improve: any axis values the testbed honours
    dut = "vm"
    virtio_offloads = "off"
    [candidates]                  # knob -> values to try; omit to let diagnosis + the catalog propose
    virtio_offloads = ["on"]
    dut_sysctls = ["net.core.somaxconn=4095"]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linerate.axes import AXES
from linerate.experiment.config import axis_value
from linerate.kinds.tune.decide import MIN_EFFECT, MIN_PAIRS
from linerate.trial import TRIAL_OVERHEAD_S

OPTION_KEYS = ("objective", "budget_trials", "budget_minutes", "start", "candidates", "min_effect")
OBJECTIVES = ("throughput",)
MAX_BUDGET = 10_000


@dataclass(frozen=True)
class Candidate:
    knob: str  # a lab-scoped axis: what is changed on the DUT (or the VM that is the DUT)
    value: Any
    proposed_by: str = "the file's [candidates]"


@dataclass(frozen=True)
class TuneOptions:
    objective: str
    budget_trials: int
    start: dict[str, Any]
    candidates: tuple[Candidate, ...] | None  # None: proposed from diagnosis and the catalog
    min_effect: float


def _whole(options: dict, key: str, low: int, high: int) -> int | None:
    value = options.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{key} = {value!r}: use a whole number from {low} to {high}")
    return value


def parse_options(options: dict[str, Any], duration_s: int, omit_s: int) -> TuneOptions:
    """ValueError naming the key and what is allowed."""
    objective = options.get("objective", "throughput")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective = {str(objective)[:40]!r}: this version tunes for {', '.join(OBJECTIVES)} "
                         "(the mean Mbit/s of the start cell)")
    trials = _whole(options, "budget_trials", 2 * MIN_PAIRS, MAX_BUDGET)
    minutes = _whole(options, "budget_minutes", 1, 24 * 60)
    if trials is None and minutes is None:
        raise ValueError("a tune needs a budget: budget_trials = N and/or budget_minutes = M")
    if minutes is not None:  # turned into trials once, so a resumed run makes the same decisions
        by_time = int(minutes * 60 // (duration_s + omit_s + TRIAL_OVERHEAD_S))
        trials = by_time if trials is None else min(trials, by_time)
    if trials < 2 * MIN_PAIRS:
        raise ValueError(f"the budget allows {trials} trials; a decision needs at least {2 * MIN_PAIRS}")
    min_effect = options.get("min_effect", MIN_EFFECT)
    if isinstance(min_effect, bool) or not isinstance(min_effect, (int, float)) or not 0 <= min_effect < 1:
        raise ValueError(f"min_effect = {min_effect!r}: a share from 0 to 1 (0.01 = 1%)")
    start = options.get("start", {})
    if not isinstance(start, dict):
        raise ValueError("start must be a table of axis values ([start])")
    start = {name: axis_value(name, value, "start") for name, value in start.items()}
    candidates = None
    if "candidates" in options:
        table = options["candidates"]
        if not isinstance(table, dict) or not table:
            raise ValueError("candidates must be a table of knob = [values] ([candidates]); omit it to let "
                             "diagnosis propose them")
        candidates = []
        for name, values in table.items():
            if name in AXES and AXES[name].scope != "lab":
                raise ValueError(f"candidates.{name}: changes the traffic, not the box; a tune varies lab axes "
                                 "(DUT knobs, the VM DUT's NIC) and keeps the traffic of [start]")
            if not isinstance(values, list) or not values:
                raise ValueError(f"candidates.{name}: give a list of values to try, e.g. [\"on\"]")
            candidates += [Candidate(name, axis_value(name, value, "candidates")) for value in values]
    return TuneOptions(objective, trials, start, None if candidates is None else tuple(candidates), float(min_effect))
