"""Glue between a validated Experiment, the store and labs: start or resume, record the
environment, run the scheduler, mark the experiment done or interrupted."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator
from typing import Any

from linerate.experiment.config import Experiment, experiment_to_json
from linerate.experiment.environment import fingerprint
from linerate.experiment.scheduler import Event, LabFactory, RunResult, Scheduler
from linerate.store.db import Store


@contextlib.contextmanager
def namespace_lab(lab_params: dict[str, Any]) -> Iterator[Any]:
    """The embedded lab: one lab per combination of lab-scoped axes (lab.make_lab)."""
    from linerate.lab.lab import make_lab, new_lab_id

    with make_lab(new_lab_id(), lab_params) as lab:
        yield lab


def run_experiment(experiment: Experiment, store: Store, *, file_text: str | None = None,
                   kind: str = "run", resume: bool = False, seed: int | None = None,
                   lab_factory: LabFactory = namespace_lab,
                   on_event: Callable[[Event], None] = lambda e: None,
                   environment: dict | None = None, use_calibration: bool = True) -> RunResult:
    """Run (or resume) under the experiment's run lock: a second run of the same experiment into
    the same store is refused with the holder's pid instead of interleaving with it."""
    with store.run_lock(experiment.name):
        return _run_locked(experiment, store, file_text=file_text, kind=kind, resume=resume, seed=seed,
                           lab_factory=lab_factory, on_event=on_event, environment=environment,
                           use_calibration=use_calibration)


def _run_locked(experiment: Experiment, store: Store, *, file_text: str | None, kind: str, resume: bool,
                seed: int | None, lab_factory: LabFactory, on_event: Callable[[Event], None],
                environment: dict | None, use_calibration: bool) -> RunResult:
    config_hash = experiment.config_hash()
    existing = store.resumable(experiment.name, config_hash, file_text) if resume else None
    if existing is not None:
        experiment_id, seed = existing.id, existing.seed
    else:
        seed = seed if seed is not None else (experiment.seed if experiment.seed is not None
                                              else random.SystemRandom().randrange(2**31))
        env = environment if environment is not None else fingerprint()
        experiment_id = store.create_experiment(experiment.name, kind, experiment_to_json(experiment),
                                                file_text=file_text, config_hash=config_hash, seed=seed,
                                                environment=env)
    recorded = existing is not None or environment is not None

    @contextlib.contextmanager
    def lab_recording_environment(lab_params: dict[str, Any]) -> Iterator[Any]:
        """The first live lab's read-back offload states (a namespace lab) or every host's
        fingerprint (a real testbed) go into the experiment's environment."""
        nonlocal recorded
        with lab_factory(lab_params) as lab:
            hosts = lab.environment() if hasattr(lab, "environment") else None
            env = store.experiment(experiment_id).environment
            if hosts and "hosts" not in env:
                store.set_environment(experiment_id, {**env, "hosts": hosts, "line_rate": getattr(lab, "line_rate", None)})
            elif not hosts and not recorded and getattr(lab, "state", None):
                recorded = True
                extra = {"offloads": lab.state["offloads"]}
                vm = lab.state.get("vm") or {}
                if vm.get("placement"):  # where the VM's threads and the generator ran, and a read's cost
                    extra["vm_host"] = {"placement": vm["placement"]["note"], "detail": vm["placement"]["detail"],
                                        "disjoint": vm["placement"]["disjoint"],
                                        "telemetry_read_ms": vm.get("telemetry_read_ms")}
                store.set_environment(experiment_id, {**env, **extra})
            yield lab

    from linerate.experiment.ceiling import ceiling_flags

    baselines: dict[str, float] = {}
    if experiment.calibrate and use_calibration:
        from linerate.experiment.calibration import calibrate

        baselines = calibrate(experiment.cells(), store, lab_factory,
                              on_message=lambda m: on_event(Event("calibrate", message=m)))

    def flagger(cell: dict[str, Any], trial) -> list[str]:
        from linerate.experiment.calibration import flags_for, shape_key

        # A real testbed has no baseline (baselines stays empty), but a saturated sender still says so.
        checked = experiment.calibrate or not use_calibration
        rig = flags_for(trial, baselines.get(shape_key(cell))) if checked else []
        return rig + ceiling_flags(cell, trial)
    scheduler = Scheduler(experiment, store, lab_recording_environment, on_event, flagger=flagger)
    try:
        result = scheduler.run(experiment_id, seed, resumed=existing is not None)
    except BaseException:
        store.finish_experiment(experiment_id, "interrupted")
        raise
    store.finish_experiment(experiment_id, "done")
    return result
