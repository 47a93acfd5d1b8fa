"""What several test kinds share: the combinations a search kind runs, its refusals of throughput's
keys, its --dry-run lines, its option checks, the DUT's state table read through the testbed's driver,
and a DUT read that fails softly. The seam a kind
plugs into (TestKind, RunContext, Event) is the runner's: experiment/plugins.py.

Imported by kinds/ only."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator
from typing import Any

from linerate.axes import AXES, lab_key, lab_params
from linerate.errors import LinerateError
from linerate.experiment.config import Experiment


def search_pairs(experiment: Experiment) -> list[tuple[dict[str, Any], int]]:
    """(lab params, family) of every combination of a search kind (rfc2544, cps), in declaration order."""
    pairs, seen = [], set()
    for cell in experiment.cells():
        key = (lab_key(cell), cell["family"])
        if key not in seen:
            seen.add(key)
            pairs.append((lab_params(cell), cell["family"]))
    return pairs


@contextlib.contextmanager
def testbeds_open(context: Any, combinations: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """lab key -> the testbed of each lab combination, opened once for the whole run (in declaration
    order) and closed when it ends: a search kind's rounds visit them in any order."""
    with contextlib.ExitStack() as stack:
        beds: dict[str, Any] = {}
        for params in combinations:
            if lab_key(params) not in beds:
                beds[lab_key(params)] = stack.enter_context(context.open_testbed(params))
        yield beds


def rounds(plan: list[Any], repetitions: int, seed: int) -> Iterator[tuple[int, Any]]:
    """(repetition, item) of a search kind's run: repetition r of every item of the plan before
    repetition r+1 of any, each round in an order shuffled from the experiment's seed (recorded, so
    `--seed` repeats it), so that a drift of the machine spreads over the configurations."""
    order = random.Random(seed)
    for repetition in range(1, repetitions + 1):
        round_plan = list(plan)
        order.shuffle(round_plan)
        for item in round_plan:
            yield repetition, item


def refuse_throughput_keys(experiment: Experiment, kind_name: str, varies: str, *, pools: bool = False) -> None:
    """ValueError for what a search kind cannot vary: trial axes other than family (they shape an
    iperf3 trial) and precision (a search is repeated `repetitions` times instead)."""
    trial_axes = sorted(n for n in experiment.declared_axes() if AXES[n].scope == "trial" and n != "family")
    if trial_axes:
        raise ValueError(f"{', '.join(trial_axes)} applies to throughput tests; a {kind_name} experiment varies "
                         f"{varies} and the lab's axes")
    if experiment.precision is not None:
        raise ValueError(f"precision applies to throughput tests; a {kind_name} experiment repeats each search "
                         "`repetitions` times")
    pooled = sorted({cell["pairs"] for cell in experiment.cells() if cell.get("pairs", 1) > 1})
    if pooled and not pools:
        raise ValueError(f"pairs = {pooled[0]}: a generator pool sends throughput trials and rfc2544 frames; a "
                         f"{kind_name} search drives one client/server pair today — remove pairs")


def plan_lines(experiment: Experiment, plan: list[tuple[dict[str, Any], int, Any]],
               label: Callable[[Any], str]) -> list[str]:
    """--dry-run's list of one repetition's searches: 'IPv4 64 B, firewall none ...' (the axes the file names)."""
    shown = [name for name in experiment.declared_axes() if name != "family"]
    return [f"  IPv{family} {label(size)}" + "".join(f", {name} {params[name]}" for name in shown if name in params)
            for params, family, size in plan]


def option_number(options: dict, key: str, default: float, low: float, high: float, *, whole: bool = False,
            low_open: bool = False) -> float:
    """An experiment-file option: ValueError naming the key and the range allowed."""
    value = options.get(key, default)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (not whole or float(value).is_integer())
    if not ok or not (low < value if low_open else low <= value) or value > high:
        kind = "a whole number" if whole else "a number"
        bound = f"above {low:g}" if low_open else f"from {low:g}"
        raise ValueError(f"{key} = {value!r}: use {kind} {bound} to {high:g}")
    return int(value) if whole else float(value)


class ReadOrEmpty:
    """A DUT read whose failure leaves its figures out — counters and timeouts are evidence, not
    the measurement — and says so: `missing` collects what failed and why (a trial stores it as
    partial telemetry). Only a LinerateError is caught: an interruption (errors.Interrupted) and a
    bug pass through."""

    def __init__(self, read: Callable[[], dict], what: str = "DUT telemetry"):
        self.read, self.what = read, what
        self.missing: list[str] = []

    def __call__(self) -> dict:
        try:
            return self.read()
        except LinerateError as exc:
            self.missing.append(f"{self.what}: {str(exc)[:200]}")
            return {}

    def take_missing(self) -> list[str]:
        missing, self.missing = self.missing, []
        return missing


def state_counters(bed: Any) -> Callable[[], dict[str, int]]:
    """A read of the DUT firewall's state table (dut/state_parsers.py keys) through the testbed's own driver
    and DUT executor, the ones every testbed has; a testbed without a DUT host reads {}."""
    return lambda: {} if bed.driver is None else bed.driver.state_counters(bed.executor("dut"))


def state_timeouts(bed: Any) -> Callable[[], dict[str, int]]:
    """A read of the DUT firewall's state timeouts (seconds), as state_counters."""
    return lambda: {} if bed.driver is None else bed.driver.state_timeouts(bed.executor("dut"))


def read_or_empty(read: Callable[[], dict], what: str = "DUT telemetry") -> ReadOrEmpty:
    return ReadOrEmpty(read, what)
