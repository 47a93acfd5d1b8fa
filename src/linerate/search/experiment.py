"""Experiment files with `test = "rfc2544"`: every combination of the lab's axes x family x frame size
searched `repetitions` times, each repetition a whole, independent MLRsearch (search/rfc2544.py), so
NDR and PDR get a mean and a 95% interval and two configurations can be compared with Welch's test.

Rounds, as the throughput scheduler runs them: repetition r of every search before repetition r+1
of any, in an order shuffled per round from the experiment's seed, with every lab combination up
for the whole run — drift of the machine spreads over the configurations instead of landing on
one. `--resume` finds the same order again; a finished search is replayed from the store (MLRsearch
is deterministic given the same trial results), a half-finished one continues where it stopped.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from linerate.experiment.axes import AXES, lab_key
from linerate.experiment.config import Experiment, experiment_to_json
from linerate.store.db import Store

LabFactory = Callable[[dict[str, Any]], contextlib.AbstractContextManager]


def is_search_experiment(experiment_row: Any) -> bool:
    config = experiment_row.config if isinstance(experiment_row.config, dict) else {}
    return experiment_row.kind == "rfc2544" or config.get("test") == "rfc2544"


def lab_params(cell: dict[str, Any]) -> dict[str, Any]:
    return {name: cell[name] for name, axis in AXES.items() if axis.scope == "lab"}


def search_plan(experiment: Experiment) -> list[tuple[dict[str, Any], int, int]]:
    """(lab params, family, frame size) of every search in one repetition, in declaration order."""
    plan, seen = [], set()
    for cell in experiment.cells():
        key = (lab_key(cell), cell["family"])
        if key in seen:
            continue
        seen.add(key)
        plan += [(lab_params(cell), cell["family"], size) for size in experiment.sizes_for(cell["family"])]
    return plan


@dataclass
class SearchRun:
    experiment_id: int
    seed: int
    resumed: bool
    results: list[Any] = field(default_factory=list)  # FrameResult, in run order

    @property
    def trials_measured(self) -> int:
        return sum(len(r.trials) - r.replayed for r in self.results)


def run_searches(experiment: Experiment, store: Store, *, file_text: str | None = None, resume: bool = False,
                 seed: int | None = None, lab_factory: LabFactory, path_factory: Callable[[Any, int], Any],
                 environment: dict | None = None, on_trial=None, settings=None,
                 on_search: Callable[[int, int, Any], None] = lambda rep, n, result: None) -> SearchRun:
    """path_factory(lab, family) -> a context manager giving the lab's PacketPath (LabPath, or
    TestbedPath for a view of an SSH testbed), which knows its line rate and whether the DUT shares
    the sender's CPUs; settings: SearchSettings, by default the file's duration_s and pdr_loss."""
    from linerate.search.rfc2544 import SearchSettings, search_frame_size

    settings = settings or SearchSettings(float(experiment.duration_s), experiment.pdr_loss)
    with store.run_lock(experiment.name):
        existing = store.resumable(experiment.name, experiment.config_hash(), file_text) if resume else None
        if existing is not None:
            experiment_id, seed = existing.id, existing.seed
        else:
            seed = seed if seed is not None else (experiment.seed if experiment.seed is not None
                                                  else random.SystemRandom().randrange(2**31))
            if environment is None:
                from linerate.experiment.environment import fingerprint

                environment = fingerprint()
            experiment_id = store.create_experiment(experiment.name, "run", experiment_to_json(experiment),
                                                    file_text=file_text, config_hash=experiment.config_hash(),
                                                    seed=seed, environment=environment)
        run = SearchRun(experiment_id, seed, existing is not None)
        plan = search_plan(experiment)
        order = random.Random(seed)
        try:
            with contextlib.ExitStack() as stack:
                labs = {}
                for params, _, _ in plan:
                    key = lab_key(params)
                    if key not in labs:
                        labs[key] = stack.enter_context(lab_factory(params))
                for repetition in range(1, experiment.repetitions + 1):
                    round_plan = list(plan)
                    order.shuffle(round_plan)
                    for params, family, size in round_plan:
                        with path_factory(labs[lab_key(params)], family) as path:
                            result = search_frame_size(
                                path, store, experiment_id,
                                {"frame_bytes": size, "family": family, "repetition": repetition, **params},
                                settings, on_trial=on_trial)
                        run.results.append(result)
                        on_search(repetition, experiment.repetitions, result)
        except BaseException:
            store.finish_experiment(experiment_id, "interrupted")
            raise
        store.finish_experiment(experiment_id, "done")
    return run
