"""Verdicts about the measurement itself and the fallback that keeps no slow cell silent.

- host-contended: a VM DUT's vCPU threads waited for a host CPU (runnable, not running: schedstat,
  vm/observe.py) for a large share of the window. The guest cannot see that time (TCG has no steal
  accounting): its own CPU figures then understate how much CPU it needed.
- shared-host-cpus: the generator and the VM DUT run on the same host CPUs (vm/placement.py) — the
  figures measure both together; said for every such cell, also at line rate.
- telemetry-partial: how many of a cell's trials lack the DUT window reads, and why; a trial keeps
  its throughput either way (trial.py).
- unexplained: a cell below UNEXPLAINED_BELOW of line rate for which no rule named a limit. It names
  the closest evidence there is (busiest CPU and its split — "just under the threshold" when it is
  within NEAR_PCT of it — drops, retransmits, host contention) and what to measure next. A user
  never sees a slow cell with nothing said about it.
"""

from __future__ import annotations

from linerate.diagnose.facts import Facts

HOST_CONTENDED_WAIT_PCT = 20.0  # a vCPU thread runnable-but-waiting this share of the window
UNEXPLAINED_BELOW = 0.90  # of line rate: a cell under this with no limit verdict gets `unexplained`
NEAR_PCT = 10.0  # a figure within this many points under a rule's threshold is "near the edge"


def host_contended(facts: Facts, verdict) -> object | None:
    if facts.vcpu_wait_pct is None or facts.vcpu_wait_pct < HOST_CONTENDED_WAIT_PCT:
        return None
    return verdict(
        "host-contended", "limit", "the VM DUT waited for host CPUs",
        f"its busiest vCPU thread was runnable but waiting for a host CPU {facts.vcpu_wait_pct:.0f}% of the "
        f"measured window (mean over {facts.vm_host_trials} trial(s), host schedstat)",
        "the figure is partly the host's: give the VM host CPUs of its own (fewer vCPUs, a host with more "
        "cores, generator elsewhere) before reading it as the DUT's capacity")


def shared_host_cpus(facts: Facts, verdict) -> object | None:
    if not facts.host_placement or facts.host_disjoint:
        return None
    evidence = facts.host_placement + (f": {facts.host_placement_detail}" if facts.host_placement_detail else "")
    return verdict("shared-host-cpus", "note", "generator and DUT share host CPUs", evidence,
                   "read the figures as the DUT's on this host, contended; on a host with enough CPUs linerate "
                   "pins the VM's threads apart from the generator")


def telemetry_partial(facts: Facts, verdict) -> object | None:
    if not facts.trials_without_window:
        return None
    reasons = "; ".join(sorted(facts.partial_reasons)[:2])
    return verdict("telemetry-partial", "note", "DUT telemetry missing for some trials",
                   f"{facts.trials_without_window} of {facts.trials_with_dut} trial(s) lack the DUT's window reads "
                   f"(CPU split, interrupts): {reasons}. Their throughput is measured and counted",
                   "the verdicts that need DUT CPU figures rest on the other trials; a longer duration_s leaves "
                   "room for both reads")


def _closest_evidence(facts: Facts, saturated_pct: float) -> list[str]:
    out = []
    if facts.cpus:
        busiest = max(facts.cpus, key=lambda c: c.get("busy_pct", 0.0))
        split = ", ".join(f"{busiest[k]:.0f}% {k[:-4]}" for k in ("softirq_pct", "system_pct", "interrupt_pct",
                                                                  "user_pct") if round(busiest.get(k) or 0.0))
        label = busiest.get("cpu_label") or f"CPU {busiest.get('cpu')}"
        busy = busiest.get("busy_pct", 0.0)
        edge = (f" — just under the {saturated_pct:.0f}% saturation threshold: likely bound by that CPU"
                if saturated_pct - NEAR_PCT <= busy < saturated_pct else "")
        out.append(f"busiest DUT CPU: {label}, {busy:.1f}% busy ({split or 'no split'}){edge}")
    elif facts.shared_kernel:
        out.append("no DUT CPU figures (the DUT shares the generator's kernel)")
    else:
        out.append("no DUT CPU figures over the window")
    if facts.nic_drops or facts.stack_drops:
        drops = {**facts.nic_drops, **facts.stack_drops}
        out.append("drops " + ", ".join(f"{k} {v:,}" for k, v in sorted(drops.items(), key=lambda kv: -kv[1])[:3]))
    elif facts.drops_known:
        out.append("no DUT drops")
    if facts.retransmits:
        out.append(f"{facts.retransmits:,.0f} retransmits per trial")
    if facts.vcpu_wait_pct is not None:
        out.append(f"vCPU threads waited for the host {facts.vcpu_wait_pct:.0f}% of the window")
    return out


def unexplained(facts: Facts, verdicts: list, verdict, saturated_pct: float) -> object | None:
    fraction = facts.line_rate_fraction
    if fraction is None or fraction >= UNEXPLAINED_BELOW or any(v.kind in ("limit", "ok") for v in verdicts):
        return None
    evidence = "; ".join(_closest_evidence(facts, saturated_pct))
    return verdict(
        "unexplained", "limit", "below line rate, no rule found the limit",
        f"{fraction * 100:.1f}% of line rate; closest evidence: {evidence}",
        "measure next: the same cell with more streams (does it scale?), a DUT snapshot while it runs "
        "(`linerate diagnose --snapshot-script`), the generator alone (`--dut namespace`, no shaper) to rule "
        "out the rig, and per-queue interrupts")
