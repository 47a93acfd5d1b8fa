"""Lab up+down time: linerate (netlink via pyroute2) vs the equivalent shell script of `ip`
commands, measured side by side in the same run, alternating, and printed as a ratio.

The script is generated from the very same Plan (each step's `ip`/`sysctl`/`nft` form), so both
build the identical lab. The iperf3 server start is left out of both: it is not lab plumbing.
Goal (issue 2): linerate takes at most 1/4 of the script's time.
Run as root: .venv/bin/python bench/lab_setup.py [ROUNDS]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from linerate.lab.apply import apply_plan, remove_namespaces
from linerate.testbed.base import new_lab_id
from linerate.model import FirewallProfile
from linerate.topology.plan import LoadRuleset, LabSpec, build_plan


def shell_script(spec: LabSpec) -> str:
    lines = ["set -e"]
    for step in build_plan(spec).steps:
        if isinstance(step, LoadRuleset):
            lines.append(f"ip netns exec {step.netns} nft -f - <<'RULES'\n{step.ruleset}RULES")
        else:
            lines.append(step.describe())
    lines += [f"ip netns del {ns}" for ns in spec.namespaces]
    return "\n".join(lines) + "\n"


def time_linerate(spec: LabSpec) -> float:
    made: list[str] = []
    start = time.perf_counter()
    try:
        apply_plan(build_plan(spec), on_namespace=made.append)
    finally:
        remove_namespaces(made)
    return time.perf_counter() - start


def time_script(spec: LabSpec) -> float:
    script = shell_script(spec)
    start = time.perf_counter()
    try:
        subprocess.run(["bash", "-c", script], check=True, capture_output=True, text=True)
    finally:
        elapsed = time.perf_counter() - start
        remove_namespaces(spec.namespaces)  # only if the script failed half-way
    return elapsed


def main(rounds: int) -> None:
    ours, theirs = [], []
    for _ in range(rounds):
        spec = LabSpec(new_lab_id(), FirewallProfile("stateful"))
        ours.append(time_linerate(spec))
        spec = LabSpec(new_lab_id(), FirewallProfile("stateful"))
        theirs.append(time_script(spec))
    m_ours, m_theirs = statistics.median(ours), statistics.median(theirs)
    print(f"lab up+down, {rounds} rounds alternating, median (stateful firewall profile):")
    print(f"  linerate (in-process netlink): {m_ours * 1000:7.1f} ms")
    print(f"  shell script of ip commands: {m_theirs * 1000:7.1f} ms "
          f"({len(shell_script(spec).splitlines())} lines)")
    ratio = m_ours / m_theirs
    print(f"  ratio linerate/script: {ratio:.3f}  (goal <= 0.25: {'met' if ratio <= 0.25 else 'NOT met'})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
