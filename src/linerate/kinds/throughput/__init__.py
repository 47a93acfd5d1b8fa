"""Throughput (and latency): iperf3 trials per cell of the matrix, in shuffled rounds
(scheduler.py here), after the rig's own ceiling is calibrated where the testbed can measure it
(calibration.py here). One trial is the top-level trial.py's (testbeds run it: Testbed.run_trial);
the link-ceiling flags are experiment/ceiling.py's (report/ and tune use them too). Reports: the
mean ± 95% CI table (report/: the throughput table is report/'s own, shared with tune). Found by
name through experiment/registry.py; only cli/ imports it directly."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from linerate.experiment.ceiling import ceiling_flags
from linerate.experiment.config import Experiment
from linerate.experiment.plugins import Event, RunContext
from linerate.kinds.throughput.calibration import calibrate, flags_for, shape_key
from linerate.kinds.throughput.scheduler import (RunResult, Scheduler, cell_states, estimate_seconds,
                                                 first_round, learned_overhead_s, missing_trials, planned_trials)
from linerate.model import Trial
from linerate.report.data import build_report
from linerate.report.exporters import serializer
from linerate.report.html import render_report
from linerate.store.db import ExperimentRow, Store


class Throughput:
    name = "throughput"
    formats = ("md", "csv", "json", "html")
    experiment_fields: tuple[str, ...] = ()
    compared_as = "Mbit/s, mean"
    bit_rate_samples = True

    def required_features(self, experiment: Experiment) -> set[str]:
        return set()  # preflight checks beyond what the cells ask for: none
    option_keys: tuple[str, ...] = ()  # top-level keys of its own (beyond Experiment's fields)

    def cells(self, experiment: Experiment) -> list[dict[str, Any]]:
        """Every cell it may run (what the testbeds check before anything runs)."""
        return experiment.cells()

    def cell_settings(self, experiment: Experiment) -> dict[str, Any]:
        """test = "latency" is throughput with RTT probes in every cell."""
        return {"latency": True} if experiment.test == "latency" else {}

    def describe_plan(self, experiment: Experiment, text: str, seed: int | None, store: Store | None, *,
                      resume: bool = False, seed_given: bool = False) -> list[str]:
        """--dry-run: the cells, the trials still to run and their ETA, and the first round's order."""
        overhead = learned_overhead_s(store.recent_trial_timings()) if store else None
        states = None
        how = "--seed" if seed_given else "the file's seed"
        lines = []
        if resume:
            existing = store.resumable(experiment.name, experiment.config_hash(), text) if store else None
            if existing is None:
                lines.append(f"experiment '{experiment.name}': no earlier run in "
                             f"{store.path if store else 'the store'}; --resume would start afresh")
            else:
                seed, how = existing.seed, "the earlier run's seed"
                states = cell_states(experiment, store, existing.id, create=False)
        if seed is None:
            seed = random.SystemRandom().randrange(2**31)
            how = f"chosen now; pass --seed {seed} to run exactly this order"
        trials = planned_trials(experiment) if states is None else missing_trials(experiment, states)
        lines.append(f"experiment '{experiment.name}': {experiment.n_cells} cells, {trials} trials"
                     f"{' still missing' if states is not None else ''}"
                     f"{' (at least; adaptive)' if experiment.precision else ''}, "
                     f"ETA {estimate_seconds(experiment, trials, overhead) / 60:.1f} min"
                     f" (per-trial overhead {'learned from ' + str(store.path) if overhead is not None else 'assumed'});"
                     f" first round order (seed {seed}, {how}):")
        for index, cell in enumerate(first_round(experiment, seed, states), 1):
            lines.append(f"  {index:3}. {json.dumps({k: cell[k] for k in experiment.axes})}")
        return lines

    def check(self, experiment: Experiment) -> None:
        if experiment.test == "latency" and (experiment.fixed.get("latency") is False
                                             or False in experiment.axes.get("latency", [])):
            raise ValueError('test = "latency" probes every cell; drop latency = false')

    def run(self, context: RunContext) -> RunResult:
        experiment, store = context.experiment, context.store
        calibrated = experiment.calibrate and context.calibrates
        baselines: dict[str, float] = {}
        if calibrated:
            baselines = calibrate(experiment.cells(), store, context.open_testbed,
                                  on_message=lambda m: context.on_event(Event("calibrate", message=m)))

        def flagger(cell: dict[str, Any], trial: Trial) -> list[str]:
            # a testbed without a baseline (real hosts) still says when the sender saturated
            checked = experiment.calibrate or not context.calibrates
            rig = flags_for(trial, baselines.get(shape_key(cell))) if checked else []
            return rig + ceiling_flags(cell, trial)

        scheduler = Scheduler(experiment, store, context.open_testbed, context.on_event, flagger=flagger)
        return scheduler.run(context.experiment_id, context.seed, resumed=context.resumed)

    def render(self, store: Store, experiment: ExperimentRow, fmt: str) -> str:
        if fmt == "html":
            return render_report(store, build_report(store, experiment.id, detail=True))
        return serializer(fmt)(build_report(store, experiment.id))

    def samples(self, store: Store, experiment: ExperimentRow) -> tuple[list, Callable[[Any], list[float]], str]:
        """For `compare`: (cell id, params) of every cell, a cell's throughputs, their unit."""
        cells = [(row["id"], json.loads(row["params"])) for row in store.cell_rows(experiment.id)]
        return cells, store.ok_throughputs, "Mbit/s"

    def plot(self, store: Store, experiment: ExperimentRow, path: str) -> None:
        from linerate.report.plot import write_png  # matplotlib: kept off the start-up path

        write_png(build_report(store, experiment.id), path)


KIND = Throughput()
