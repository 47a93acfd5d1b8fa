"""Generator pools in the namespace lab: what coordinating N pairs costs. For N = 1, 2, 4, 8 pairs on
shaped access links (100 Mbit/s each, so the sum stays below what this host forwards), the aggregate
over the window all pairs sent / (N x the one-pair figure measured in the same run), and the pairs'
measured start skew. The rounds are interleaved (N = 1, 2, 4, 8, then again), so a drift of the
machine falls on every N alike. Needs root.
Run: .venv/bin/python bench/pools.py [ROUNDS] [DURATION_S] [PAIR_LINK]"""

from __future__ import annotations

import statistics
import sys

from linerate.axes import lab_spec
from linerate.model import TrialParams
from linerate.testbed.base import new_lab_id
from linerate.testbed.namespace import NamespaceTestbed

SIZES = (1, 2, 4, 8)


def main(rounds: int, duration_s: int, pair_link: str) -> None:
    params = TrialParams(duration_s=duration_s, omit_s=1)
    figures: dict[int, list[float]] = {n: [] for n in SIZES}
    skews: dict[int, list[float]] = {n: [] for n in SIZES}
    windows: dict[int, list[float]] = {n: [] for n in SIZES}
    failed: dict[int, list[str]] = {n: [] for n in SIZES}
    labs = {n: NamespaceTestbed(lab_spec(new_lab_id(), {"pairs": n, "pair_link_rate": pair_link})) for n in SIZES}
    entered = []
    try:
        for n in SIZES:
            entered.append(labs[n].__enter__())
        for _ in range(rounds):
            for n in SIZES:
                trial = labs[n].run_trial(params)
                if not trial.ok:
                    failed[n].append(trial.error or "?")
                    continue
                figures[n].append(trial.throughput_bps)
                skews[n].append(trial.telemetry["pool"]["start_skew_ms"])
                windows[n].append(trial.telemetry["pool"]["window_s"])
    finally:
        for lab in reversed(entered):
            lab.__exit__(None, None, None)
    one = statistics.fmean(figures[1])
    print(f"{pair_link} access link per pair, {rounds} interleaved rounds of {duration_s} s trials (omit 1 s)")
    print(f"{'pairs':>5}  {'aggregate Mbit/s':>17}  {'/ (N x one pair)':>16}  {'start skew ms (max)':>20}  "
          f"{'common window s (min)':>21}  failed")
    for n in SIZES:
        if not figures[n]:
            print(f"{n:>5}  all failed: {failed[n][:1]}")
            continue
        mean = statistics.fmean(figures[n])
        print(f"{n:>5}  {mean / 1e6:17.2f}  {mean / (n * one):16.4f}  {max(skews[n]):20.1f}  "
              f"{min(windows[n]):21.2f}  {len(failed[n])}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3, int(sys.argv[2]) if len(sys.argv) > 2 else 5,
         sys.argv[3] if len(sys.argv) > 3 else "100m")
