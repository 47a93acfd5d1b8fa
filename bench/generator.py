"""trafgen through linerate (testbed/lab_path.LabPath.send) vs trafgen alone (`ip netns exec ...
trafgen`, the same packet description on stdin), same lab, same veth pair, alternating, in one
run. Frames go to an unused MAC (the ceiling probe's frames), unpaced. Goal: ratio >= 0.9.
Run as root: .venv/bin/python bench/generator.py [ROUNDS] [FRAMES]"""

from __future__ import annotations

import subprocess
import sys
import time

from linerate.testbed.base import lab_testbed, new_lab_id
from linerate.testbed.lab_path import LabPath
from linerate.topology.plan import CLIENT_IF
from linerate.traffic import trafgen
from linerate.traffic.trafgen import NOBODY_MAC


def alone(lab, config: str, frames: int) -> float:
    argv = ["ip", "netns", "exec", lab.spec.netns("client"), *trafgen.send_argv(CLIENT_IF, None, frames)]
    start = time.perf_counter()
    out = subprocess.run(argv, input=config, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    return trafgen.parse(out.stdout + out.stderr).packets / wall


def through_linerate(path: LabPath, frames: int) -> float:
    start = time.perf_counter()
    sent = path.send(64, None, frames, to_dut=False)
    return sent.packets / (time.perf_counter() - start)


def main(rounds: int, frames: int) -> None:
    lab = lab_testbed(new_lab_id(), {"firewall": "none", "mtu": 1500, "link_rate": "none", "delay_ms": 0.0,
                                  "jitter_ms": 0.0, "loss_pct": 0.0, "offloads": "default"})
    with lab:
        path = LabPath(lab, 4)
        config = trafgen.packet_config(trafgen.FlowSpec(**{**path.flow.__dict__, "dst_mac": NOBODY_MAC}), 64)
        ours, theirs = [], []
        for _ in range(rounds):
            theirs.append(alone(lab, config, frames))
            ours.append(through_linerate(path, frames))
    mine, base = sum(ours) / rounds, sum(theirs) / rounds
    print(f"64-byte frames, {frames:,} per run, {rounds} alternating rounds (wall-clock pps, process start included):")
    print(f"  trafgen alone:           {base:,.0f} pps  ({', '.join(f'{v:,.0f}' for v in theirs)})")
    print(f"  trafgen through linerate: {mine:,.0f} pps  ({', '.join(f'{v:,.0f}' for v in ours)})")
    print(f"  ratio {mine / base:.3f} (goal >= 0.9: {'met' if mine / base >= 0.9 else 'NOT met'})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5, int(sys.argv[2]) if len(sys.argv) > 2 else 500_000)
