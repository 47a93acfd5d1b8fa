"""`test = "tune"`: find the knobs that really help this box, prove it, restore the rest.

From the start cell, each candidate knob (the file's [candidates], or what diagnosis of the start
and the knowledge catalog propose for this testbed) is measured against the current best,
interleaved, until a sequential test decides (decide.py: family-wise error held at 5% by
Bonferroni over every decision and look); accepted knobs stack, a final confirmation measures start
against the final configuration (engine.py). Every trial is a row of its configuration's cell,
committed when it ends; a resumed tune replays them in order and measures only what is missing, and
the report replays them to rebuild the decisions; each decision is also recorded as it is made, with
the axes and proposals the tune fixed at its start (storage.py: the tune's own tables). DUT knobs go through the testbed (journaled
before they change on real hosts, restored at the end, on signals and by `testbed restore`); a VM
DUT's knobs are its own VM, removed when the decision no longer needs it.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from typing import Any

from linerate.axes import AXES, lab_key, trial_params
from linerate.diagnose.facts import cell_facts
from linerate.diagnose.rules import diagnose
from linerate.experiment.ceiling import ceiling_flags
from linerate.experiment.config import Experiment, experiment_from_dict, parse_experiment
from linerate.errors import ConfigError
from linerate.experiment.plugins import Event, RunContext
from linerate.kinds.tune import storage
from linerate.kinds.tune.engine import FINAL, LEVERS, OutOfTrials, Outcome, Step, Tuner, TuneOutcome
from linerate.kinds.tune.options import OPTION_KEYS, Candidate, TuneOptions, parse_options
from linerate.kinds.tune.proposals import propose
from linerate.kinds.tune.report import render
from linerate.report.data import line_rate
from linerate.report.layout import format_mbps
from linerate.stats import summarize
from linerate.store.db import ExperimentRow, Store, cell_key

def declared_axes(store: Store, experiment_id: int) -> list[str]:
    """The axes a tune's cells are keyed by: every axis this linerate has when the tune starts
    (candidates may add any lab axis), recorded, so that a later linerate with more axes still
    finds the same cells on resume and in reports."""
    recorded = storage.state(store, experiment_id).get("axes")
    if recorded is None:
        return list(storage.record(store, experiment_id, axes=sorted(AXES))["axes"])
    return list(recorded)


def stored_experiment(row: ExperimentRow) -> Experiment:
    """The Experiment a stored tune ran: its file again, or (built from options) its config."""
    if row.file_text:
        return parse_experiment(row.file_text, row.name)
    config = {k: v for k, v in row.config.items() if k in Experiment.model_fields
              and v != Experiment.model_fields[k].get_default(call_default_factory=True)}
    return experiment_from_dict(config, row.name)


def options_of(experiment: Experiment) -> TuneOptions:
    return parse_options(experiment.options, experiment.duration_s, experiment.omit_s)


def start_cell(experiment: Experiment, options: TuneOptions) -> dict[str, Any]:
    return {**experiment.cells()[0], **options.start}


class Trials:
    """The trials of each configuration, in order: stored ones first (replayed), then, with a
    `run` given, new ones measured and committed as they end."""

    def __init__(self, store: Store, experiment_id: int, declared: list[str],
                 run: Callable[[dict[str, Any], int], Any] | None = None):
        self.store, self.experiment_id, self.run, self.declared = store, experiment_id, run, declared
        self.seen: dict[str, int] = {}
        self.stored: dict[str, list] = {}
        self._load()

    def _load(self) -> None:
        cells = {row["id"]: row["key"] for row in self.store.cell_rows(self.experiment_id)}
        for row in self.store.trial_rows(self.experiment_id):
            if row["final"]:
                self.stored.setdefault(cells[row["cell_id"]], []).append(row)
        for rows in self.stored.values():
            rows.sort(key=lambda row: row["repetition"])

    def measure(self, cell: dict[str, Any]) -> Outcome:
        key = cell_key(cell, self.declared)
        index = self.seen.get(key, 0)
        rows = self.stored.get(key, [])
        if index < len(rows):
            row = rows[index]
        elif self.run is None:
            raise OutOfTrials(key)
        else:
            row = self.run(cell, index + 1)
            rows.append(row)
            self.stored[key] = rows
        self.seen[key] = index + 1
        if row["status"] == "ok" and not (row["throughput_bps"] or 0) > 0:
            return Outcome(None, "the trial measured 0 bit/s")  # nothing got through: no ratio to take
        return Outcome(row["throughput_bps"] if row["status"] == "ok" else None, row["error"])

    def seen_rows(self, cell: dict[str, Any]) -> list:
        """The trials of a configuration the tuner has seen so far (a replay sees the same)."""
        key = cell_key(cell, self.declared)
        return self.stored.get(key, [])[:self.seen.get(key, 0)]


def levers(trials: Trials, environment: Callable[[], dict]) -> Callable[[dict[str, Any]], set[str]]:
    """The lab axes that are levers of the limit verdicts of a configuration's trials seen so far
    (environment: the experiment's, read when asked: a testbed's line rate joins it when it opens)."""
    def of(cell: dict[str, Any]) -> set[str]:
        rows = [row for row in trials.seen_rows(cell) if row["status"] == "ok"]
        if not rows:
            return set()
        summary = summarize([row["throughput_bps"] for row in rows], [row["retransmits"] for row in rows])
        ceiling, source = line_rate(cell, environment())
        telemetry = [{"telemetry": json.loads(row["telemetry"]), "dut_counters": json.loads(row["dut_counters"])}
                     for row in rows]
        flags = tuple(sorted({flag for row in rows for flag in json.loads(row["flags"])}))
        facts = cell_facts(cell, telemetry, mean_bps=summary.mean, retransmits=summary.retransmits_mean,
                           ceiling_bps=ceiling, line_rate_source=source, flags=flags)
        return {axis for verdict in diagnose(facts) if verdict.kind == "limit" for axis in LEVERS.get(verdict.code, ())}
    return of


class Tune:
    name = "tune"
    formats = ("md", "json", "html")
    experiment_fields: tuple[str, ...] = ()
    compared_as = "Mbit/s, mean"
    bit_rate_samples = True

    def required_features(self, experiment: Experiment) -> set[str]:
        return set()
    option_keys = OPTION_KEYS

    def check(self, experiment: Experiment) -> None:
        if experiment.axes:
            raise ValueError("a tune has no [axes]: its start goes in [start], what it may change in [candidates]")
        if experiment.precision is not None:
            raise ValueError("precision applies to throughput tests; a tune decides each knob by its own test")
        options_of(experiment)

    def cell_settings(self, experiment: Experiment) -> dict[str, Any]:
        return {}  # what every cell carries beyond the file's: nothing

    def cells(self, experiment: Experiment) -> list[dict[str, Any]]:
        """The start and every candidate on it (proposed candidates are knobs the testbed offers)."""
        options = options_of(experiment)
        start = start_cell(experiment, options)
        return [start] + [{**start, c.knob: c.value} for c in options.candidates or ()]

    def describe_plan(self, experiment: Experiment, text: str, seed: int | None, store: Store | None, *,
                      resume: bool = False, seed_given: bool = False) -> list[str]:
        options = options_of(experiment)
        start = {k: v for k, v in start_cell(experiment, options).items() if k in options.start}
        lines = [f"tune '{experiment.name}': start {json.dumps(start)}, objective {options.objective}, at most "
                 f"{options.budget_trials} trials of {experiment.duration_s} s"]
        if options.candidates is None:
            lines.append("  candidates: proposed after a baseline of the start, from its diagnosis and the catalog")
        lines += [f"  candidate {c.knob} = {c.value!r}" for c in options.candidates or ()]
        return lines

    def run(self, context: RunContext) -> TuneOutcome:
        experiment, store = context.experiment, context.store
        options = options_of(experiment)
        start = start_cell(experiment, options)
        open_beds: dict[tuple, tuple[contextlib.AbstractContextManager, Any]] = {}

        def testbed(cell: dict[str, Any]):
            key = lab_key(cell)
            if key not in open_beds:
                manager = context.open_testbed(dict(key))
                open_beds[key] = (manager, manager.__enter__())
            return open_beds[key][1]

        def close_except(*cells: dict[str, Any]) -> None:
            """Close every testbed but these; one that fails to close does not keep the others open."""
            keep = {lab_key(cell) for cell in cells}
            failure: BaseException | None = None
            for key in [k for k in open_beds if k not in keep]:
                manager, _ = open_beds.pop(key)
                try:
                    manager.__exit__(None, None, None)
                except BaseException as exc:  # noqa: BLE001 - re-raised once the rest are closed
                    failure = failure or exc
            if failure is not None:
                raise failure

        declared = declared_axes(store, context.experiment_id)

        def run_trial(cell: dict[str, Any], repetition: int):
            cell_id = store.ensure_cells(context.experiment_id, [cell], declared)[cell_key(cell, declared)]
            bed = testbed(cell)
            prior = store.attempts_made(cell_id, repetition)  # left by a run killed between two attempts
            last = prior + max(1, experiment.max_retries + 1 - prior)
            for attempt in range(prior + 1, last + 1):
                started = time.time()
                trial = bed.run_trial(trial_params(cell))
                final = trial.ok or attempt == last
                trial_id = store.add_trial(cell_id, repetition, attempt, trial, final=final, started_at=started,
                                           flags=ceiling_flags(cell, trial), lab_state=bed.state)
                if final:
                    break
            label = ", ".join(f"{k}={cell[k]}" for k in sorted(cell) if cell[k] != start.get(k)) or "start"
            figure = f"{format_mbps(trial.throughput_bps)} Mbit/s" if trial.ok else f"FAILED: {trial.error}"
            context.on_event(Event("message", message=f"  {label} #{repetition}: {figure}"))
            return store.trial_rows(context.experiment_id, trial_id)[0]

        trials = Trials(store, context.experiment_id, declared, run_trial)

        decided = 0

        def on_step(step: Step) -> None:
            nonlocal decided
            storage.record_decision(store, context.experiment_id, decided, step)
            decided += 1
            j = step.judgement
            effect = "" if j.effect is None else f", effect {j.effect * 100:+.1f}%"
            what = (f"{step.candidate.knob} = {step.candidate.value}" if step.candidate.knob != FINAL else
                    "final configuration vs start")
            context.on_event(Event("message", message=f"{what}: {j.decision} ({j.why}{effect}, {step.trials} trials)"))
            final = step.cell if j.decision == "accepted" else step.best
            close_except(final)  # a rejected candidate's VM (or knobs) go now, not at the end
            if lab_key(final) in open_beds:  # real hosts: the best's knobs back at once
                open_beds[lab_key(final)][1].apply_knobs()

        def proposals(cell: dict[str, Any]) -> list[Candidate]:
            """Proposed once, recorded, so a resumed run and the report use the same list."""
            recorded = storage.state(store, context.experiment_id).get("candidates")
            if recorded is None:
                environment = store.experiment(context.experiment_id).environment
                found = propose(cell, testbed(cell).knob_choices(), levers(trials, lambda: environment)(cell))
                recorded = storage.record(store, context.experiment_id,
                                          candidates=[c.__dict__ for c in found])["candidates"]
            return [Candidate(**c) for c in recorded]

        try:
            tuner = Tuner(start, options.candidates, options.budget_trials, trials.measure,
                          min_effect=options.min_effect,
                          levers_of=levers(trials, lambda: store.experiment(context.experiment_id).environment),
                          propose=proposals, on_step=on_step)
            outcome = tuner.run()
        finally:
            close_except()
        outcome.experiment_id, outcome.resumed = context.experiment_id, context.resumed
        return outcome

    def outcome(self, store: Store, experiment: ExperimentRow) -> TuneOutcome:
        """The decisions again, from the stored trials alone (the same, trial for trial)."""
        exp = stored_experiment(experiment)
        options = options_of(exp)
        recorded_state = storage.state(store, experiment.id)
        trials = Trials(store, experiment.id, list(recorded_state.get("axes") or sorted(AXES)))
        recorded = recorded_state.get("candidates")

        def proposed(cell: dict[str, Any]) -> list[Candidate]:
            if recorded is None:  # interrupted before the proposals were recorded
                raise OutOfTrials("proposals")
            return [Candidate(**c) for c in recorded]

        tuner = Tuner(start_cell(exp, options), options.candidates, options.budget_trials, trials.measure,
                      min_effect=options.min_effect, levers_of=levers(trials, lambda: experiment.environment),
                      propose=proposed)
        return tuner.run()

    def render(self, store: Store, experiment: ExperimentRow, fmt: str) -> str:
        return render(experiment, self.outcome(store, experiment), fmt)

    def samples(self, store: Store, experiment: ExperimentRow) -> tuple[list, Callable[[Any], list[float]], str]:
        cells = [(row["id"], json.loads(row["params"])) for row in store.cell_rows(experiment.id)]
        return cells, store.ok_throughputs, "Mbit/s"

    def plot(self, store: Store, experiment: ExperimentRow, path: str) -> None:
        raise ConfigError("--plot", "a tune's report is its decision table; plot the before/after cells with "
                          "`linerate compare` instead")


KIND = Tune()
