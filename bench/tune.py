"""`linerate tune` vs the full grid of the same knob space, on the VM DUT, in one run: every
combination measured as its own experiment (one VM up at a time, REPETITIONS trials each, the same
trial length), then one tune from the worst-looking start. Prints tune's final mean / the grid's best
mean and tune's trials / the grid's trials (goals: >= 0.95 and <= 0.5), and the tune's decisions.
Needs root and qemu. Run: .venv/bin/python bench/tune.py [REPETITIONS]
"""

from __future__ import annotations

import itertools
import sys
import tempfile
import time
from pathlib import Path

from linerate.experiment.config import parse_experiment
from linerate.experiment.registry import kind
from linerate.experiment.run import run_experiment
from linerate.report.data import build_report
from linerate.store import Store
from linerate.testbed.base import LabTestbeds

COMMON = 'duration_s = 3\nomit_s = 1\n'
FIXED = {"dut": "vm", "dut_accel": "tcg", "link_rate": "1g", "streams": 1, "dut_vcpus": 2}
SPACE = {  # the start's value first
    "virtio_offloads": ["off", "on"],
    "virtio_queues": [1, 2],
    "dut_sysctls": ["default", "net.core.somaxconn=4095", "net.core.netdev_budget=600"],
}


def toml_value(value) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def grid(tmp: Path, repetitions: int) -> tuple[float, dict, int, float]:
    best_mean, best_cell, trials, started = 0.0, {}, 0, time.perf_counter()
    for index, combo in enumerate(itertools.product(*SPACE.values())):
        cell = {**FIXED, **dict(zip(SPACE, combo))}
        text = (f'name = "grid{index}"\nrepetitions = {repetitions}\ncalibrate = false\n{COMMON}'
                + "".join(f"{k} = {toml_value(v)}\n" for k, v in cell.items()))
        store = Store(tmp / "grid.db")
        result = run_experiment(parse_experiment(text), store, LabTestbeds(), file_text=text)
        mean = build_report(store, result.experiment_id).cells[0].summary.mean or 0.0
        trials += result.trials_run
        print(f"grid {dict(zip(SPACE, combo))}: {mean / 1e6:,.1f} Mbit/s ({result.trials_run} trials)", flush=True)
        if mean > best_mean:
            best_mean, best_cell = mean, dict(zip(SPACE, combo))
    return best_mean, best_cell, trials, time.perf_counter() - started


def tune(tmp: Path, budget: int) -> tuple[float, dict, int, float, str]:
    start = {**FIXED, **{k: v[0] for k, v in SPACE.items()}}
    text = (f'name = "tune"\ntest = "tune"\nbudget_trials = {budget}\n{COMMON}[start]\n'
            + "".join(f"{k} = {toml_value(v)}\n" for k, v in start.items()) + "[candidates]\n"
            + "".join(f"{k} = [{', '.join(toml_value(v) for v in values[1:])}]\n" for k, values in SPACE.items()))
    store = Store(tmp / "tune.db")
    started = time.perf_counter()
    outcome = run_experiment(parse_experiment(text), store, LabTestbeds(), file_text=text)
    elapsed = time.perf_counter() - started
    final = outcome.confirmation.judgement.mean_candidate if outcome.confirmation else None
    if final is None:  # nothing accepted: the start is the final configuration
        final = outcome.steps[0].judgement.mean_best if outcome.steps else 0.0
    report = kind("tune").render(store, store.experiment("tune"), "md")
    changed = {k: outcome.final[k] for k in SPACE if outcome.final[k] != start[k]}
    return final, changed, outcome.trials, elapsed, report


def main() -> None:
    repetitions = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    cells = 1
    for values in SPACE.values():
        cells *= len(values)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        best, best_cell, grid_trials, grid_s = grid(tmp, repetitions)
        final, changed, tune_trials, tune_s, report = tune(tmp, cells * repetitions // 2)
    print(report)
    print(f"grid: {cells} cells x {repetitions} = {grid_trials} trials in {grid_s:.0f} s; best {best_cell} "
          f"{best / 1e6:,.1f} Mbit/s")
    print(f"tune: {tune_trials} trials in {tune_s:.0f} s; changed {changed}; final {final / 1e6:,.1f} Mbit/s")
    print(f"tune final / grid best = {final / best:.3f} (goal >= 0.95); "
          f"tune trials / grid trials = {tune_trials / grid_trials:.2f} (goal <= 0.50)")


if __name__ == "__main__":
    main()
