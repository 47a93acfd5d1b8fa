"""What DUT telemetry costs the measurement: the same trials with and without it, alternating in
one lab and one run (issue #12 goal: throughput ratio with/without >= 0.99). "With" reads the DUT
twice inside the measured window (trial.py); "without" runs the identical iperf3 with no DUT reads.
Three labs: unshaped (generator-bound; veth TCP there varies by tens of percent between trials, so
its ratio needs many pairs), a DUT walking 1,000 stateless rules per packet (CPU-bound on the shared
cores: any CPU the reads take shows), and a 1 Gbit/s link.
Run as root: .venv/bin/python bench/telemetry_overhead.py [PAIRS] [DURATION_S]"""

from __future__ import annotations

import statistics
import sys

from linerate.lab.lab import Lab, new_lab_id
from linerate.model import FirewallProfile, TrialParams
from linerate.topology.plan import LabSpec, server_address
from linerate.topology.link import LinkSpec
from linerate.trial import run_trial


def measure(spec: LabSpec, pairs: int, params: TrialParams) -> tuple[list[float], list[float]]:
    with_t, without = [], []
    with Lab(spec) as lab:
        client, dut = lab.executor("client"), lab.executor("dut")
        for index in range(pairs):  # alternate, and swap the order every pair: drift hits both alike
            order = (True, False) if index % 2 == 0 else (False, True)
            for telemetry in order:
                trial = run_trial(client, dut if telemetry else None, params, server_address(4), shared_kernel=True)
                if not trial.ok:
                    raise SystemExit(f"trial failed: {trial.error}")
                (with_t if telemetry else without).append(trial.throughput_bps)
    return with_t, without


def main(pairs: int, duration_s: int) -> None:
    params = TrialParams(duration_s=duration_s, omit_s=1)
    print(f"{pairs} alternating pairs of {duration_s}-s trials (omit 1 s) per lab, IPv4 1 stream:")
    for label, spec in (("unshaped veth (generator-bound)", LabSpec(new_lab_id())),
                        ("rules-stateless:1000 (CPU-bound)",
                         LabSpec(new_lab_id(), firewall=FirewallProfile.parse("rules-stateless:1000"))),
                        ("emulated 1 Gbit/s link", LabSpec(new_lab_id(), link=LinkSpec(rate_bps=1e9)))):
        with_t, without = measure(spec, pairs, params)
        a, b = statistics.mean(with_t), statistics.mean(without)
        print(f"  {label:32s} with telemetry {a / 1e6:9,.1f} Mbit/s, without {b / 1e6:9,.1f} Mbit/s, "
              f"ratio {a / b:.4f} (goal >= 0.99: {'met' if a / b >= 0.99 else 'NOT met'}); "
              f"stdev {statistics.stdev(with_t) / 1e6:,.1f} / {statistics.stdev(without) / 1e6:,.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8, int(sys.argv[2]) if len(sys.argv) > 2 else 3)
