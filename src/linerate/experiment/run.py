"""The one experiment runner, for every test kind: take the run lock, start or resume, choose and
record the seed, record the environment (the controller's, then the first live testbed's: host
fingerprints, read-back offloads, where a VM's threads ran), hand the kind its RunContext, and mark
the experiment done or interrupted. What is measured, and how, is the kind's (kinds/)."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator
from typing import Any

from linerate.experiment.config import Experiment, experiment_to_json
from linerate.experiment.plugins import Event, RunContext
from linerate.errors import RestoreFailed
from linerate.experiment.registry import kind
from linerate.lab.signals import terminations_raise
from linerate.store.db import Store


def run_experiment(experiment: Experiment, store: Store, testbeds: Any, *, file_text: str | None = None,
                   kind_label: str = "run", resume: bool = False, seed: int | None = None,
                   on_event: Callable[[Event], None] = lambda e: None, settings: Any = None,
                   config_extra: dict | None = None) -> Any:
    """Run (or resume) under the experiment's run lock: a second run of the same experiment into
    the same store is refused with the holder's pid instead of interleaving with it. testbeds: a
    Testbeds (testbed/base.py). kind_label: how the run was started (run, demo, rfc2544), as
    `linerate list` shows it; the kind itself is the file's `test`."""
    # the testbed first: a run refused there (another run holds it) records nothing, changes nothing.
    # A change a host refused to take back is raised when the reservation ends (RestoreFailed): the run
    # itself is done, every trial stored; its environment says what was not restored.
    done: list[int] = []
    try:
        return _run(experiment, store, testbeds, file_text, kind_label, resume, seed, on_event, settings,
                    config_extra, done)
    except RestoreFailed as exc:
        for experiment_id in done:
            store.set_environment(experiment_id, {**store.experiment(experiment_id).environment,
                                                  "restore_failed": str(exc)})
        raise


def _dropped(store: Store, experiment_id: int) -> bool:
    try:
        return store.drop_unmeasured(experiment_id)
    except Exception:  # the store itself failing: the row is marked interrupted as before, if it can be
        return False


def _run(experiment: Experiment, store: Store, testbeds: Any, file_text: str | None, kind_label: str, resume: bool,
         seed: int | None, on_event: Callable[[Event], None], settings: Any, config_extra: dict | None,
         done: list[int]) -> Any:
    with testbeds.reserve(), store.run_lock(experiment.name):
        existing = (store.resumable(experiment.name, experiment.config_hash(), file_text, kind=kind_label)
                    if resume else None)
        if existing is not None:
            experiment_id, seed = existing.id, existing.seed
        else:
            if resume:
                on_event(Event("message", message=f"--resume: {store.path} holds no earlier run of experiment "
                               f"'{experiment.name}' ({kind_label}); this run starts afresh"))
            for left in store.unfinished(experiment.name, kind_label):  # we hold its run lock: nobody runs it
                store.finish_experiment(left.id, "interrupted")
                on_event(Event("message", message=f"experiment '{experiment.name}' (id {left.id}) was left "
                               "unfinished by an earlier run, now marked interrupted: `--resume` would have "
                               "continued it; this run starts afresh"))
            seed = seed if seed is not None else (experiment.seed if experiment.seed is not None
                                                  else random.SystemRandom().randrange(2**31))
            experiment_id = store.create_experiment(
                experiment.name, kind_label, {**experiment_to_json(experiment), **(config_extra or {})},
                file_text=file_text, config_hash=experiment.config_hash(), seed=seed, environment=testbeds.record())
        recorded = False

        @contextlib.contextmanager
        def open_testbed(lab_params: dict[str, Any]) -> Iterator[Any]:
            """The first live testbed's environment joins the experiment's (a resumed run adds only
            what the first attempt did not get to record)."""
            nonlocal recorded
            with testbeds.open(lab_params) as testbed:
                if not recorded:
                    recorded = True
                    environment = store.experiment(experiment_id).environment
                    store.set_environment(experiment_id, {**testbed.environment(), **environment})
                yield testbed

        context = RunContext(experiment, store, experiment_id, seed, existing is not None, open_testbed,
                             testbeds.calibrates, on_event, settings)
        try:
            with terminations_raise():  # SIGTERM/SIGHUP unwind every testbed, in any order they close
                result = kind(experiment.test).run(context)
        except BaseException:
            # a new run that stopped before its first trial leaves no row behind (nothing to resume or
            # report: the database is as it was); one that measured anything is kept, to resume
            if existing is not None or not _dropped(store, experiment_id):
                store.finish_experiment(experiment_id, "interrupted")
            raise
        store.finish_experiment(experiment_id, "done")
        done.append(experiment_id)
        return result
