"""Run an experiment: expand the matrix, shuffle, run, and commit each trial as it ends.

Trials run in *rounds*: each round runs one more repetition of every cell that is still open, in
an order shuffled by a seeded RNG (recorded, so `--seed` repeats it). Rounds spread slow drifts of
the machine (thermal, noisy neighbours) over all cells instead of piling them on one. One lab is
kept alive per distinct combination of lab-scoped axes (firewall, MTU ...), so shuffling costs no
lab rebuilds. A cell closes after `repetitions`, or — with `precision` — once its 95% CI
half-width is within precision × mean (between min_ and max_repetitions).

Resume: the store knows how many repetitions each cell has finished; a resumed run does only what
is missing. A trial interrupted mid-way was never committed, so it is simply run again.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ContextManager, Protocol

from linerate.experiment.axes import lab_key, trial_params
from linerate.experiment.config import Experiment
from linerate.model import Trial, TrialParams
from linerate.stats import relative_half_width
from linerate.store.db import Store, cell_key

TRIAL_OVERHEAD_S = 1.5  # connect, result exchange, counters; measured ~1-1.5 s here


class TrialRunner(Protocol):
    def run_trial(self, params: TrialParams) -> Trial: ...


LabFactory = Callable[[dict[str, Any]], ContextManager[TrialRunner]]


@dataclass(frozen=True)
class Event:
    kind: str  # start | trial | retry | cell_done | done
    cell: dict[str, Any] | None = None
    trial: Trial | None = None
    repetition: int = 0
    attempt: int = 0
    done: int = 0
    planned: int = 0
    message: str = ""


@dataclass
class CellState:
    cell_id: int
    params: dict[str, Any]
    finished_reps: int
    open: bool = True


@dataclass
class RunResult:
    experiment_id: int
    trials_run: int
    failures: int
    resumed: bool
    seed: int
    cells: list[CellState] = field(default_factory=list)


def planned_trials(experiment: Experiment) -> int:
    reps = experiment.min_repetitions if experiment.precision else experiment.repetitions
    return experiment.n_cells * reps


def estimate_seconds(experiment: Experiment, trials: int | None = None) -> float:
    count = planned_trials(experiment) if trials is None else trials
    return count * (experiment.duration_s + experiment.omit_s + TRIAL_OVERHEAD_S)


def _target_reached(experiment: Experiment, state: CellState, store: Store) -> bool:
    if experiment.precision is None:
        return state.finished_reps >= experiment.repetitions
    if state.finished_reps >= experiment.max_repetitions:
        return True
    if state.finished_reps < experiment.min_repetitions:
        return False
    rel = relative_half_width(store.ok_throughputs(state.cell_id))
    return rel is not None and rel <= experiment.precision


class Scheduler:
    def __init__(self, experiment: Experiment, store: Store, lab_factory: LabFactory,
                 on_event: Callable[[Event], None] = lambda event: None,
                 sleep: Callable[[float], None] = time.sleep,
                 flagger: Callable[[dict[str, Any], Trial], list[str]] = lambda cell, trial: []):
        self.experiment = experiment
        self.store = store
        self.lab_factory = lab_factory
        self.on_event = on_event
        self.sleep = sleep
        self.flagger = flagger

    def run(self, experiment_id: int, seed: int, resumed: bool = False) -> RunResult:
        exp = self.experiment
        cells = exp.cells()
        ids = self.store.ensure_cells(experiment_id, cells)
        done = self.store.completed_repetitions(experiment_id)
        states = [CellState(ids[cell_key(c)], c, done.get(ids[cell_key(c)], 0)) for c in cells]
        for state in states:
            state.open = not _target_reached(exp, state, self.store)
        rng = random.Random(seed)
        result = RunResult(experiment_id, 0, 0, resumed, seed, states)
        planned = sum(max(0, (exp.min_repetitions if exp.precision else exp.repetitions) - s.finished_reps)
                      for s in states if s.open)
        self.on_event(Event("start", planned=planned, message=f"seed {seed}"))
        with contextlib.ExitStack() as stack:
            labs: dict[tuple, TrialRunner] = {}
            while any(s.open for s in states):
                round_cells = [s for s in states if s.open]
                rng.shuffle(round_cells)
                for state in round_cells:
                    key = lab_key(state.params)
                    if key not in labs:
                        labs[key] = stack.enter_context(self.lab_factory(dict(key)))
                    self._run_repetition(labs[key], state, result, planned)
                for state in round_cells:
                    if _target_reached(exp, state, self.store):
                        state.open = False
                        self.on_event(Event("cell_done", cell=state.params, done=result.trials_run))
                planned = max(planned, result.trials_run + sum(1 for s in states if s.open))
        self.on_event(Event("done", done=result.trials_run, planned=planned))
        return result

    def _run_repetition(self, lab: TrialRunner, state: CellState, result: RunResult, planned: int) -> None:
        exp = self.experiment
        repetition = state.finished_reps + 1
        params = trial_params(state.params)
        attempts = exp.max_retries + 1
        for attempt in range(1, attempts + 1):
            started = time.time()
            trial = lab.run_trial(params)
            final = trial.ok or attempt == attempts
            self.store.add_trial(state.cell_id, repetition, attempt, trial, final=final, started_at=started,
                                 flags=self.flagger(state.params, trial), lab_state=getattr(lab, "state", None))
            if final:
                break
            self.on_event(Event("retry", cell=state.params, trial=trial, repetition=repetition, attempt=attempt,
                                message=trial.error or ""))
            self.sleep(exp.retry_backoff_s * 2 ** (attempt - 1))
        state.finished_reps = repetition
        result.trials_run += 1
        result.failures += 0 if trial.ok else 1
        self.on_event(Event("trial", cell=state.params, trial=trial, repetition=repetition, attempt=attempt,
                            done=result.trials_run, planned=max(planned, result.trials_run)))


def iter_plan(experiment: Experiment, seed: int) -> Iterator[dict[str, Any]]:
    """The first round's order, as --dry-run prints it."""
    cells = experiment.cells()
    random.Random(seed).shuffle(cells)
    yield from cells
