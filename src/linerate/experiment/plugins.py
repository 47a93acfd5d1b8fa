"""The seam the one runner (experiment/run.py) hosts test kinds through: `TestKind`, what a kind
brings (check its experiment file, run, describe its plan, render its reports, give `compare` its
samples); `RunContext`, what the runner hands a kind; `Event`, what a run tells whoever listens
(the progress bar in cli/). A kind is found by name in experiment/registry.py.

Imported by kinds/ (every kind implements TestKind), by experiment/ and by cli/; it imports only
what it names (the Experiment model, the store's rows, a Trial) and nothing of kinds/.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ContextManager, Protocol

from linerate.experiment.config import Experiment
from linerate.model import Trial
from linerate.store.db import ExperimentRow, Store


@dataclass(frozen=True)
class Event:
    type: str  # start | trial | retry | cell_done | done | calibrate | telemetry | message (a test kind's own line)
    cell: dict[str, Any] | None = None
    trial: Trial | None = None
    repetition: int = 0
    attempt: int = 0
    done: int = 0
    planned: int = 0
    message: str = ""
    eta_s: float | None = None


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
    experiment_fields: tuple[str, ...]  # Experiment fields only it reads (config.KIND_FIELDS), refused elsewhere
    compared_as: str  # what `compare` says its samples are: "Mbit/s, mean", "NDR frames/s, mean over ..."
    bit_rate_samples: bool  # its samples are bit rates (bit/s, shown as Mbit/s; `compare --format html` draws them)

    def cells(self, experiment: Experiment) -> list[dict[str, Any]]:
        """Every cell it may run: what the testbeds check before anything runs."""
        ...

    def cell_settings(self, experiment: Experiment) -> dict[str, Any]:
        """What every cell of its experiment carries beyond the file's axes (Experiment.cells)."""
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
