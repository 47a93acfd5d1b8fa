"""Per-trial overhead of `linerate run` next to a hand-run loop of the same iperf3 commands, in the
same lab, interleaved in one run (issue #9 goal: linerate's wall time per 1-second trial minus
duration + omit <= 0.3 s). linerate's side is the real run path (run lock, scheduler, DUT counters
before and after, store commit per trial); the hand loop runs the identical iperf3 argv.
Run as root: .venv/bin/python bench/trial_overhead.py [TRIALS_PER_BLOCK] [ROUNDS]"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from linerate.experiment.config import parse_experiment
from linerate.experiment.run import run_experiment
from linerate.testbed.fake import FakeTestbeds
from linerate.testbed.base import new_lab_id
from linerate.testbed.namespace import NamespaceTestbed
from linerate.model import TrialParams
from linerate.store import Store
from linerate.topology.plan import LabSpec, server_address
from linerate.traffic import iperf3

DURATION_S, OMIT_S = 1, 0


def hand_loop(lab: NamespaceTestbed, trials: int) -> float:
    params = TrialParams(duration_s=DURATION_S, omit_s=OMIT_S)
    argv = lab.executor("client").wrap(iperf3.client_argv(params, server_address(4)))
    start = time.perf_counter()
    for _ in range(trials):
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) / trials


def linerate_run(lab: NamespaceTestbed, trials: int, db: Path, index: int) -> float:
    text = (f'name = "overhead{index}"\nrepetitions = {trials}\nduration_s = {DURATION_S}\nomit_s = {OMIT_S}\n'
            "calibrate = false\n")

    @contextlib.contextmanager
    def same_lab(_params):
        yield lab

    store = Store(db)
    start = time.perf_counter()
    run_experiment(parse_experiment(text), store, FakeTestbeds(same_lab, {}), file_text=text)
    elapsed = time.perf_counter() - start
    store.close()
    return elapsed / trials


def main(trials: int, rounds: int) -> None:
    hand, ours = [], []
    with tempfile.TemporaryDirectory() as tmp, NamespaceTestbed(LabSpec(new_lab_id())) as lab:
        for index in range(rounds):  # interleaved blocks: drift hits both sides alike
            hand.append(hand_loop(lab, trials))
            ours.append(linerate_run(lab, trials, Path(tmp) / "bench.db", index))
    nominal = DURATION_S + OMIT_S
    h, o = statistics.median(hand), statistics.median(ours)
    print(f"{rounds} rounds x {trials} trials of {DURATION_S} s (omit {OMIT_S} s), medians of the round means:")
    print(f"  hand-run iperf3 loop   {h:.3f} s per trial, overhead {h - nominal:.3f} s")
    print(f"  linerate run           {o:.3f} s per trial, overhead {o - nominal:.3f} s "
          f"(goal <= 0.3 s: {'met' if o - nominal <= 0.3 else 'NOT met'})")
    print(f"  linerate minus hand    {o - h:+.3f} s per trial; ratio {o / h:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8, int(sys.argv[2]) if len(sys.argv) > 2 else 3)
