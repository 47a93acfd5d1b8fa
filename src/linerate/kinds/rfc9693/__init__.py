"""Connection-tracking benchmarks with a stateless generator (test = "rfc9693", and `linerate rfc9693`):
RFC 9693's maximum connection establishment rate and connection-tracking-table capacity, measured
with trafgen frames of unique 4-tuples and a validation phase (search/state_path.py), searched with
MLRsearch and doubling-then-bisection (kinds/rfc9693/search.py), per combination of the lab's axes x
family, `repetitions` times (kinds/rfc9693/run.py), reported with what limited the capacity and the
DUT's state table as read (kinds/rfc9693/report.py). Not measured: the connection tear-down rate.

Modules: options.py (the file's keys), search.py (the searches and the capacity's limit, pure given
a trial function), run.py (rounds, storage, resume), report.py (md, json, csv, html).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from linerate.model import ONE_PAIR
from linerate.errors import ConfigError
from linerate.experiment.config import Experiment
from linerate.experiment.plugins import RunContext
from linerate.kinds.base import plan_lines, refuse_throughput_keys, search_pairs
from linerate.kinds.rfc9693 import report
from linerate.kinds.rfc9693.options import OPTION_KEYS, Rfc9693Options, parse_options
from linerate.kinds.rfc9693.run import Rfc9693Run, run_rfc9693
from linerate.store.db import ExperimentRow, Store
from linerate.traffic import trafgen


def options_of(experiment: Experiment) -> Rfc9693Options:
    return parse_options(experiment.options)


class Rfc9693:
    name = "rfc9693"
    formats = ("md", "json", "csv", "html")
    experiment_fields: tuple[str, ...] = ()
    compared_as = "state-table capacity in connections, mean over repeated searches"
    bit_rate_samples = False
    option_keys = OPTION_KEYS

    def required_features(self, experiment: Experiment) -> set[str]:
        return {"binary trafgen", ONE_PAIR}

    def check(self, experiment: Experiment) -> None:
        refuse_throughput_keys(experiment, "rfc9693", "family")
        options = options_of(experiment)
        for family in {cell["family"] for cell in experiment.cells()}:
            if options.frame_bytes is not None and options.frame_bytes < trafgen.min_frame(family):
                raise ValueError(f"frame_bytes = {options.frame_bytes}: IPv{family} needs at least "
                                 f"{trafgen.min_frame(family)} bytes")

    def cell_settings(self, experiment: Experiment) -> dict[str, Any]:
        return {}  # what every cell carries beyond the file's: nothing

    def cells(self, experiment: Experiment) -> list[dict[str, Any]]:
        return experiment.cells()

    def describe_plan(self, experiment: Experiment, text: str, seed: int | None, store: Store | None, *,
                      resume: bool = False, seed_given: bool = False) -> list[str]:
        options = options_of(experiment)
        pairs = search_pairs(experiment)
        lines = [f"experiment '{experiment.name}' (rfc9693): {len(pairs)} combinations x {experiment.repetitions} "
                 f"repetitions: the establishment rate with {options.connections:,} connections per trial, then the "
                 f"table capacity from {options.start_connections:,} up to {options.max_connections:,} connections "
                 f"at {options.gamma:g} x that rate"]
        return lines + plan_lines(experiment, [(p, f, options.frame_for(f)) for p, f in pairs],
                                  lambda size: f"{size} B frames")

    def run(self, context: RunContext) -> Rfc9693Run:
        options = context.settings if isinstance(context.settings, Rfc9693Options) else options_of(context.experiment)
        return run_rfc9693(context, options)

    def render(self, store: Store, experiment: ExperimentRow, fmt: str) -> str:
        if fmt not in self.formats:
            raise ConfigError("--format", f"rfc9693 experiments report as {', '.join(self.formats)}")
        return report.render(store, experiment, fmt)

    def samples(self, store: Store, experiment: ExperimentRow) -> tuple[list, Callable[[Any], list[float]], str]:
        """For `compare`: every configuration and its searches' capacities."""
        found = report.groups(store, experiment.id)
        return [(key, json.loads(key)) for key in found], (lambda key: report.values(found[key], "capacity")), \
            "connections"

    def plot(self, store: Store, experiment: ExperimentRow, path: str) -> None:
        raise ConfigError("--plot", "an rfc9693 report has no plot; its table (--format md, json, csv or html) has "
                          "the rates, capacities and their intervals")


KIND = Rfc9693()
