"""Run an experiment: expand the matrix, shuffle, run, and commit each trial as it ends.

Trials run in *rounds*: each round runs one more repetition of every cell that is still open, in
an order shuffled by a seeded RNG (recorded, so `--seed` repeats it). Rounds spread slow drifts of
the machine (thermal, noisy neighbours) over all cells instead of piling them on one. One lab is
kept alive per distinct combination of lab-scoped axes (firewall, MTU ...), so shuffling costs no
lab rebuilds. A cell closes after `repetitions`, or — with `precision` — once its 95% CI
half-width is within precision × mean (between min_ and max_repetitions).

Resume: the store knows how many repetitions each cell has finished; a resumed run does only what
is missing. A trial interrupted mid-way was never committed, so it is simply run again; a run
killed during a retry's backoff left non-final attempts, and the resumed run numbers its attempts
after them (it never re-inserts an attempt that exists). Cells are identified by the axes the file
declares (store.schema.cell_key), so a newer linerate with more registered axes still resumes.

ETA: before the first trial, the per-trial overhead (connect, result exchange, counters) is the
median of what the store has seen (TRIAL_OVERHEAD_S when it has seen nothing); during a run, the
mean wall time of this run's own trials.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ContextManager, Protocol

from linerate.axes import lab_key, trial_params
from linerate.experiment.config import Experiment
from linerate.experiment.plugins import Event
from linerate.model import Trial, TrialParams
from linerate.stats import relative_half_width
from linerate.store.db import Store, cell_key
from linerate.trial import TRIAL_OVERHEAD_S, window_problem


class TrialRunner(Protocol):
    """The part of a Testbed (testbed/base.py) the scheduler uses."""

    read_cost_s: float | None  # one DUT window read on this testbed, measured when it came up (trial.py)
    state: dict  # what each trial row records of the testbed

    def run_trial(self, params: TrialParams) -> Trial: ...


LabFactory = Callable[[dict[str, Any]], ContextManager[TrialRunner]]


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

    def summary(self, where: str) -> str:
        return (f"{self.trials_run} trials run ({self.failures} failed) into {where}, experiment "
                f"{self.experiment_id}{' (resumed)' if self.resumed else ''}, seed {self.seed}")


def planned_trials(experiment: Experiment) -> int:
    return experiment.n_cells * target_repetitions(experiment)


def target_repetitions(experiment: Experiment) -> int:
    """Repetitions every cell gets for sure (adaptive runs may add up to max_repetitions)."""
    return experiment.min_repetitions if experiment.precision else experiment.repetitions


def learned_overhead_s(timings: list[tuple[float, dict]]) -> float | None:
    """Median of (wall time - duration - omit) over stored trials: what a trial costs beyond its
    traffic on this machine. None without data."""
    extras = sorted(wall - p.get("duration_s", 0) - p.get("omit_s", 0) for wall, p in timings
                    if isinstance(p.get("duration_s"), int) and isinstance(p.get("omit_s"), int))
    extras = [e for e in extras if 0 <= e < 120]
    return extras[len(extras) // 2] if extras else None


def estimate_seconds(experiment: Experiment, trials: int | None = None, overhead_s: float | None = None) -> float:
    count = planned_trials(experiment) if trials is None else trials
    extra = TRIAL_OVERHEAD_S if overhead_s is None else overhead_s
    return count * (experiment.duration_s + experiment.omit_s + extra)


def round_order(open_states: list, rng: random.Random) -> list:
    """One round: every open cell once, in an order shuffled by the run's seeded RNG. The run and
    --dry-run both call this, so the printed order is the order that runs."""
    order = list(open_states)
    rng.shuffle(order)
    return order


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
                 sleep: Callable[[float], None] | None = None,
                 flagger: Callable[[dict[str, Any], Trial], list[str]] = lambda cell, trial: []):
        self.experiment = experiment
        self.store = store
        self.lab_factory = lab_factory
        self.on_event = on_event
        self.sleep = sleep or (lambda seconds: time.sleep(seconds))
        self.flagger = flagger
        self._room_said: set[tuple] = set()

    def run(self, experiment_id: int, seed: int, resumed: bool = False) -> RunResult:
        exp = self.experiment
        states = cell_states(exp, self.store, experiment_id)
        rng = random.Random(seed)
        result = RunResult(experiment_id, 0, 0, resumed, seed, states)
        planned = missing_trials(exp, states)
        self._started = time.monotonic()
        self.on_event(Event("start", planned=planned, message=f"seed {seed}"))
        with contextlib.ExitStack() as stack:
            labs: dict[tuple, TrialRunner] = {}
            while any(s.open for s in states):
                round_cells = round_order([s for s in states if s.open], rng)
                for state in round_cells:
                    key = lab_key(state.params)
                    if key not in labs:
                        labs[key] = stack.enter_context(self.lab_factory(dict(key)))
                    self._say_telemetry_room(labs[key], key, state.params)
                    self._run_repetition(labs[key], state, result, planned)
                for state in round_cells:
                    if _target_reached(exp, state, self.store):
                        state.open = False
                        self.on_event(Event("cell_done", cell=state.params, done=result.trials_run))
                planned = max(planned, result.trials_run + sum(1 for s in states if s.open))
        self.on_event(Event("done", done=result.trials_run, planned=planned))
        return result

    def _say_telemetry_room(self, lab: TrialRunner, key: tuple, cell: dict[str, Any]) -> None:
        """Before the first trial of each trial length on a testbed: whether it leaves room for the
        DUT's two window reads at their measured cost (the trials measure throughput either way)."""
        params = trial_params(cell)
        said = (key, params.duration_s, params.omit_s)
        if said in self._room_said:
            return
        self._room_said.add(said)
        problem = window_problem(params, lab.read_cost_s)
        if problem is not None:
            self.on_event(Event("telemetry", cell=cell, message=problem))

    def _run_repetition(self, lab: TrialRunner, state: CellState, result: RunResult, planned: int) -> None:
        exp = self.experiment
        repetition = state.finished_reps + 1
        params = trial_params(state.params)
        prior = self.store.attempts_made(state.cell_id, repetition)  # left by a run killed mid-retry
        attempts_left = max(1, exp.max_retries + 1 - prior)
        for index in range(attempts_left):
            attempt = prior + index + 1
            started = time.time()
            trial = lab.run_trial(params)
            final = trial.ok or index == attempts_left - 1
            self.store.add_trial(state.cell_id, repetition, attempt, trial, final=final, started_at=started,
                                 flags=self.flagger(state.params, trial), lab_state=lab.state)
            if final:
                break
            self.on_event(Event("retry", cell=state.params, trial=trial, repetition=repetition, attempt=attempt,
                                message=trial.error or ""))
            self.sleep(exp.retry_backoff_s * 2 ** index)
        state.finished_reps = repetition
        result.trials_run += 1
        result.failures += 0 if trial.ok else 1
        planned = max(planned, result.trials_run)
        per_trial = (time.monotonic() - self._started) / result.trials_run
        self.on_event(Event("trial", cell=state.params, trial=trial, repetition=repetition, attempt=attempt,
                            done=result.trials_run, planned=planned,
                            eta_s=per_trial * (planned - result.trials_run)))


def cell_states(experiment: Experiment, store: Store, experiment_id: int, create: bool = True) -> list[CellState]:
    """Every cell of the matrix with its finished repetitions; `open` when it needs more. With
    create=False (--resume --dry-run) nothing is written: cells not stored yet have 0 done."""
    declared = experiment.declared_axes()
    if create:
        ids = store.ensure_cells(experiment_id, experiment.cells(), declared)
    else:
        ids = {row["key"]: row["id"] for row in store.cell_rows(experiment_id)}
    done = store.completed_repetitions(experiment_id)
    states = []
    for cell in experiment.cells():
        cell_id = ids.get(cell_key(cell, declared), 0)
        state = CellState(cell_id, cell, done.get(cell_id, 0))
        state.open = not _target_reached(experiment, state, store)
        states.append(state)
    return states


def missing_trials(experiment: Experiment, states: list[CellState]) -> int:
    return sum(max(0, target_repetitions(experiment) - s.finished_reps) for s in states if s.open)


def first_round(experiment: Experiment, seed: int, states: list[CellState] | None = None) -> list[dict[str, Any]]:
    """The order the first round will run in (all cells, or the open ones of a resumed run)."""
    if states is None:
        states = [CellState(0, cell, 0) for cell in experiment.cells()]
    return [s.params for s in round_order([s for s in states if s.open], random.Random(seed))]
