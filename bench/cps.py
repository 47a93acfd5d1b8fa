"""h2load through linerate (kinds/cps/trial.measure_trial: the client facts, the per-request log,
the DUT's counters and state table read around it) vs the same h2load command run by hand (`ip
netns exec CLIENT h2load ...`), same lab, same nginx, alternating, at one fixed offered rate in one
run. The figure is connections that succeeded per second of the trial's wall time. Goal: ratio >= 0.95.
Run as root: .venv/bin/python bench/cps.py [ROUNDS] [RATE]
"""

from __future__ import annotations

import subprocess
import sys
import time

from linerate.kinds.cps.options import CpsOptions
from linerate.kinds.cps.trial import measure_trial
from linerate.testbed.base import lab_testbed, new_lab_id
from linerate.topology.plan import server_address
from linerate.traffic import h2load
from linerate.traffic.nginx_server import ServerSpec

DURATION_S = 3.0


def by_hand(lab, url: str, rate: float) -> float:
    pace = h2load.pacing(rate)
    connections = max(pace.per_period, round(pace.rate_per_s * DURATION_S))
    argv = ["ip", "netns", "exec", lab.spec.netns("client"),
            *h2load.client_argv([url], connections=connections, pace=pace, threads=1, inactivity_timeout_s=5.0)]
    start = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    return h2load.parse(out.stdout, out.stderr).succeeded / wall


def through_linerate(lab, server, url: str, rate: float) -> float:
    start = time.perf_counter()
    trial = measure_trial(lab.executor("client"), server, url, rate, DURATION_S, CpsOptions(),
                          read_dut=lab.dut_counters, read_state=lab.state_counters)
    return trial.succeeded / (time.perf_counter() - start)


def main(rounds: int, rate: float) -> None:
    lab = lab_testbed(new_lab_id(), {"firewall": "stateful", "mtu": 1500, "link_rate": "1g", "delay_ms": 0.0,
                                     "jitter_ms": 0.0, "loss_pct": 0.0, "offloads": "default"})
    with lab, lab.http_server(ServerSpec((1024,))) as server:
        url = server.url(1024, 4)
        assert server_address(4) in url
        ours, theirs = [], []
        for _ in range(rounds):
            theirs.append(by_hand(lab, url, rate))
            ours.append(through_linerate(lab, server, url, rate))
    mine, base = sum(ours) / rounds, sum(theirs) / rounds
    print(f"{rate:,.0f} connections/s offered for {DURATION_S:g} s, 1 KiB objects, firewall stateful, {rounds} "
          "alternating rounds (succeeded connections per second of wall time, process start included):")
    print(f"  h2load by hand:          {base:,.0f}/s  ({', '.join(f'{v:,.0f}' for v in theirs)})")
    print(f"  h2load through linerate: {mine:,.0f}/s  ({', '.join(f'{v:,.0f}' for v in ours)})")
    print(f"  ratio {mine / base:.3f} (goal >= 0.95: {'met' if mine / base >= 0.95 else 'NOT met'})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5, float(sys.argv[2]) if len(sys.argv) > 2 else 1000)
