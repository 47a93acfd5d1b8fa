"""Emulated 1 Gbit/s link at MTU 1500: measured mean goodput / calculated ceiling, per case
(IPv4/IPv6 x 1/4 streams, cubic). Goal (issue 4): never above 1.0, and >= 0.985 (stretch 0.995).
Also prints what the link itself carried in each trial's steady part (lab/wire.py), as bounds.
Needs root. Run: .venv/bin/python bench/link_accuracy.py [REPETITIONS] [DURATION_S]"""

from __future__ import annotations

import sys

from linerate.axes import lab_spec
from linerate.calc import LinkInput, goodput
from linerate.testbed.base import new_lab_id
from linerate.testbed.namespace import NamespaceTestbed
from linerate.lab.wire import WireMeter, measure_during
from linerate.model import TrialParams
from linerate.stats import summarize
from linerate.topology.link import burst_allowance_bps, shaper_burst


def main(repetitions: int, duration_s: int) -> None:
    spec = lab_spec(new_lab_id(), {"link_rate": "1g"})
    allowance = burst_allowance_bps(1e9, spec.mtu, duration_s)
    print(f"emulated link 1g, MTU {spec.mtu}, segmenter + per-frame tbf shaper on both DUT ports "
          f"(bucket {shaper_burst(1e9, spec.mtu)} B: a {duration_s} s window may carry {allowance / 1e6:.2f} Mbit/s "
          f"more); {repetitions} x {duration_s} s per case, cubic, omit 2 s")
    with NamespaceTestbed(spec) as lab:
        meter = WireMeter(lab.executor("dut"), "wan0")
        for family in (4, 6):
            for streams in (1, 4):
                ceiling = goodput(LinkInput(1e9, mtu=spec.mtu, family=family)).goodput_bps
                values, retransmits, wire = [], [], []
                for _ in range(repetitions):
                    params = TrialParams(family=family, streams=streams, duration_s=duration_s, omit_s=2,
                                         congestion="cubic")
                    trial, rate = measure_during(lambda: lab.run_trial(params), meter, (2.5, 1.5 + duration_s))
                    if trial.ok:
                        values.append(trial.throughput_bps)
                        retransmits.append(trial.retransmits)
                        wire.append(rate)
                s = summarize(values)
                over = sum(v > ceiling for v in values)
                print(f"IPv{family} {streams} stream(s): mean {s.mean / 1e6:7.2f} ± {(s.half_width or 0) / 1e6:.2f} "
                      f"Mbit/s, ceiling {ceiling / 1e6:.2f}, measured/theoretical {s.mean / ceiling:.4f} "
                      f"(min {min(values) / ceiling:.4f}, max {max(values) / ceiling:.4f}, "
                      f"{over} of {len(values)} trials above the ceiling; retransmits {retransmits})")
                print("    wire (DUT wan0 qdisc counters + 24 B/frame) / 1 Gbit/s while metered: "
                      + " ".join(f"{r.low_bps / 1e9:.4f}-{r.high_bps / 1e9:.4f}" for r in wire))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3, int(sys.argv[2]) if len(sys.argv) > 2 else 8)
