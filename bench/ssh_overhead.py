"""Per-trial overhead of an SSH testbed next to the namespace lab, for the same 1-second trials,
interleaved in one run (issue #11 goal: the SSH testbed adds at most 0.3 s per trial). Both sides
go through `run_experiment` with the real run path (scheduler, DUT telemetry before and after, a
store commit per trial); the SSH side reaches client, DUT and server through real sshd hosts in
namespaces (tests/privileged/sshbed.py). Run as root:
    .venv/bin/python bench/ssh_overhead.py [TRIALS_PER_BLOCK] [ROUNDS]"""

from __future__ import annotations

import contextlib
import statistics
import sys
import os
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from linerate.experiment.config import parse_experiment  # noqa: E402
from linerate.experiment.run import run_experiment
from linerate.testbed.fake import FakeTestbeds  # noqa: E402
from linerate.testbed.base import new_lab_id  # noqa: E402
from linerate.testbed.namespace import NamespaceTestbed  # noqa: E402
from linerate.store import Store  # noqa: E402
from linerate.testbed.inventory import load_inventory  # noqa: E402
from linerate.testbed.ssh import SshTestbed  # noqa: E402
from linerate.topology.plan import LabSpec  # noqa: E402
from tests.privileged.sshbed import SshBed  # noqa: E402

DURATION_S, OMIT_S = 1, 0


def per_trial(factory, trials: int, db: Path, name: str, calibrate: bool) -> tuple[float, float]:
    """(wall time of the whole run per trial, median wall time of one trial as stored): the first
    includes connecting and starting the server once per run, the second is the steady state."""
    text = f'name = "{name}"\nrepetitions = {trials}\nduration_s = {DURATION_S}\nomit_s = {OMIT_S}\ncalibrate = false\n'
    store = Store(db)
    start = time.perf_counter()
    result = run_experiment(parse_experiment(text), store, FakeTestbeds(factory(store), {}, calibrates=calibrate), file_text=text)
    elapsed = time.perf_counter() - start
    walls = [row["ended_at"] - row["started_at"] for row in store.trial_rows(result.experiment_id)]
    store.close()
    return elapsed / trials, statistics.median(walls)


def main(trials: int, rounds: int) -> None:
    ns_times, ssh_times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LINERATE_JOURNAL_DIR"] = str(Path(tmp) / "journal")  # the bench's own, removed with tmp
        bed = SshBed(Path(tmp))
        try:
            bed.build()
            bed.trust_all()
            inventory = load_inventory(bed.inventory())
            with NamespaceTestbed(LabSpec(new_lab_id())) as lab:
                @contextlib.contextmanager
                def same_lab(_params):
                    yield lab

                for index in range(rounds):  # interleaved blocks: drift hits both sides alike
                    ns_times.append(per_trial(lambda store: same_lab, trials, Path(tmp) / "b.db", f"ns{index}", True))
                    ssh_times.append(per_trial(lambda store: SshTestbed(inventory, store).view, trials,
                                               Path(tmp) / "b.db", f"ssh{index}", False))
        finally:
            bed.teardown()
    nominal = DURATION_S + OMIT_S
    n_run, s_run = (statistics.median(t[0] for t in times) for times in (ns_times, ssh_times))
    n, s = (statistics.median(t[1] for t in times) for times in (ns_times, ssh_times))
    print(f"{trials} trials x {rounds} interleaved rounds, {DURATION_S} s each")
    print(f"one trial (median, as stored): namespace lab {n:.3f} s, SSH testbed {s:.3f} s "
          f"(overheads {n - nominal:.3f} s and {s - nominal:.3f} s)")
    print(f"SSH adds {s - n:+.3f} s per trial; ratio {s / n:.2f}x (goal: at most +0.3 s)")
    print(f"whole runs per trial, incl. once-per-run connect, host fingerprints and server start: "
          f"namespace {n_run:.3f} s, SSH {s_run:.3f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5, int(sys.argv[2]) if len(sys.argv) > 2 else 3)
