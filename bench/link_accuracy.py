"""Emulated 1 Gbit/s link at MTU 1500: measured mean goodput / calculated ceiling, per case
(IPv4/IPv6 x 1/4 streams, cubic). Goal (issue 4): never above 1.0, and >= 0.985 (stretch 0.995).
Needs root. Run: .venv/bin/python bench/link_accuracy.py [REPETITIONS] [DURATION_S]"""

from __future__ import annotations

import sys

from linerate.calc import LinkInput, goodput
from linerate.experiment.axes import lab_spec
from linerate.lab.lab import Lab, new_lab_id
from linerate.model import TrialParams
from linerate.stats import summarize


def main(repetitions: int, duration_s: int) -> None:
    spec = lab_spec(new_lab_id(), {"link_rate": "1g"})
    print(f"emulated link 1g, MTU {spec.mtu}, segmenter + per-frame tbf shaper on both DUT ports; {repetitions} x {duration_s} s per case, "
          f"cubic, omit 2 s")
    with Lab(spec) as lab:
        for family in (4, 6):
            for streams in (1, 4):
                ceiling = goodput(LinkInput(1e9, mtu=spec.mtu, family=family)).goodput_bps
                values = []
                for _ in range(repetitions):
                    trial = lab.run_trial(TrialParams(family=family, streams=streams, duration_s=duration_s,
                                                      omit_s=2, congestion="cubic"))
                    if trial.ok:
                        values.append(trial.throughput_bps)
                s = summarize(values)
                over = sum(v > ceiling for v in values)
                print(f"IPv{family} {streams} stream(s): mean {s.mean / 1e6:7.2f} ± {(s.half_width or 0) / 1e6:.2f} "
                      f"Mbit/s, ceiling {ceiling / 1e6:.2f}, measured/theoretical {s.mean / ceiling:.4f} "
                      f"(min {min(values) / ceiling:.4f}, max {max(values) / ceiling:.4f}, "
                      f"{over} of {len(values)} trials above the ceiling)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3, int(sys.argv[2]) if len(sys.argv) > 2 else 8)
