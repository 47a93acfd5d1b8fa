"""Adaptive repetitions vs a fixed 20, on the same live lab, in one run: wall time for each and
the ratio, plus the CI half-width each reached. Needs root. Run: .venv/bin/python bench/adaptive.py"""

from __future__ import annotations

import contextlib
import tempfile
import time
from pathlib import Path

from linerate.experiment.config import parse_experiment
from linerate.experiment.run import run_experiment
from linerate.testbed.fake import FakeTestbeds
from linerate.testbed.base import new_lab_id
from linerate.testbed.namespace import NamespaceTestbed
from linerate.model import FirewallProfile
from linerate.report.data import build_report
from linerate.store import Store
from linerate.topology.plan import LabSpec

# Two cells: TCP on the unshaped lab (noisy: CI of a few %), and UDP paced at 200 Mbit/s (quiet).
COMMON = 'duration_s = 1\nomit_s = 0\nudp_bitrate_bps = 200000000\n[axes]\nprotocol = ["tcp", "udp"]\n'


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, NamespaceTestbed(LabSpec(new_lab_id(), FirewallProfile("stateful"))) as lab:
        @contextlib.contextmanager
        def same_lab(_params):
            yield lab

        results = {}
        for name, head in (("fixed20", "repetitions = 20\n"),
                           ("adaptive", "precision = 0.01\nmin_repetitions = 3\nmax_repetitions = 20\n")):
            store = Store(Path(tmp) / f"{name}.db")
            exp = parse_experiment(f'name = "{name}"\n{head}{COMMON}')
            start = time.perf_counter()
            run_experiment(exp, store, FakeTestbeds(same_lab, {}))
            elapsed = time.perf_counter() - start
            results[name] = elapsed
            print(f"{name}: wall {elapsed:.1f} s")
            for cell in build_report(store, name).cells:
                s = cell.summary
                print(f"  {cell.params['protocol']}: n={s.n:2}  mean {s.mean / 1e6:8.0f} Mbit/s  "
                      f"CI half-width {100 * s.half_width / s.mean:.2f}% of mean")
        print(f"ratio adaptive/fixed20 wall time: {results['adaptive'] / results['fixed20']:.2f}")


if __name__ == "__main__":
    main()
