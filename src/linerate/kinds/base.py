"""The TestKind protocol: what a kind brings to the one runner (experiment/run.py) and to reports."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ContextManager, Protocol

from linerate.errors import LinerateError
from linerate.experiment.axes import AXES, lab_key, lab_params
from linerate.experiment.config import Experiment
from linerate.experiment.scheduler import Event
from linerate.store.db import ExperimentRow, Store


def search_pairs(experiment: Experiment) -> list[tuple[dict[str, Any], int]]:
    """(lab params, family) of every combination of a search kind (rfc2544, cps), in declaration order."""
    pairs, seen = [], set()
    for cell in experiment.cells():
        key = (lab_key(cell), cell["family"])
        if key not in seen:
            seen.add(key)
            pairs.append((lab_params(cell), cell["family"]))
    return pairs


def refuse_throughput_keys(experiment: Experiment, kind_name: str, varies: str) -> None:
    """ValueError for what a search kind cannot vary: trial axes other than family (they shape an
    iperf3 trial) and precision (a search is repeated `repetitions` times instead)."""
    trial_axes = sorted(n for n in experiment.declared_axes() if AXES[n].scope == "trial" and n != "family")
    if trial_axes:
        raise ValueError(f"{', '.join(trial_axes)} applies to throughput tests; a {kind_name} experiment varies "
                         f"{varies} and the lab's axes")
    if experiment.precision is not None:
        raise ValueError(f"precision applies to throughput tests; a {kind_name} experiment repeats each search "
                         "`repetitions` times")


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


def read_or_empty(read: Callable[[], dict], what: str = "DUT telemetry") -> ReadOrEmpty:
    return ReadOrEmpty(read, what)


@dataclass
class RunContext:
    """What the runner hands a kind: the experiment (started or resumed, its environment recorded),
    the store it commits every trial to, and how to open a testbed for a combination of lab axes
    (the first one opened records its environment)."""

    experiment: Experiment
    store: Store
    experiment_id: int
    seed: int
    resumed: bool
    open_testbed: Callable[[dict[str, Any]], ContextManager[Any]]
    calibrates: bool  # the testbeds can measure the rig's own ceiling (the namespace lab)
    on_event: Callable[[Event], None] = lambda event: None
    settings: Any = None  # kind-specific overrides (e.g. rfc2544 SearchSettings from `linerate rfc2544`)
    extra: dict = field(default_factory=dict)


class TestKind(Protocol):
    name: str
    formats: tuple[str, ...]  # what `linerate report --format` can give for it
    option_keys: tuple[str, ...]  # top-level keys of its own in an experiment file (Experiment.options)

    def cells(self, experiment: Experiment) -> list[dict[str, Any]]:
        """Every cell it may run: what the testbeds check before anything runs."""
        ...

    def required_features(self, experiment: Experiment) -> set[str]:
        """Preflight checks (preflight.py names) this experiment needs beyond what its cells ask for."""
        ...

    def describe_plan(self, experiment: Experiment, text: str, seed: int | None, store: Store | None, *,
                      resume: bool = False, seed_given: bool = False) -> list[str]:
        """--dry-run's lines."""
        ...

    def samples(self, store: Store, experiment: ExperimentRow) -> tuple[list, Callable[[Any], list[float]], str]:
        """For `compare`: (key, params) of every configuration, a configuration's sample, its unit."""
        ...

    def check(self, experiment: Experiment) -> None:
        """ValueError naming what in the file does not fit this kind (experiment/config.py turns it
        into the file's ConfigError)."""
        ...

    def run(self, context: RunContext) -> Any:
        """Measure what is missing, committing each trial as it ends; a result with summary()."""
        ...

    def render(self, store: Store, experiment: ExperimentRow, fmt: str) -> str: ...

    def plot(self, store: Store, experiment: ExperimentRow, path: str) -> None: ...
