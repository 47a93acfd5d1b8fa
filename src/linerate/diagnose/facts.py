"""Facts: what the verdict rules read, gathered from one place — a cell's stored trials, or two
snapshots a user pasted from a firewall. Pure: dictionaries in, a Facts out.

Per-CPU load comes, in order of preference, from cumulative CPU counters over a window (trial
telemetry, or kern.cp_times / /proc/stat in both snapshots), from top's per-CPU lines, or — when
top was run without -P — estimated by adding up the busiest threads per CPU they ran on (top's C
column). Interrupts, NIC drops and stack-queue drops are deltas when both snapshots hold them;
with one snapshot they are totals since boot and the facts say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from linerate.traffic.iperf3 import SENDER_CPU_LIMIT_PCT

VIRTIO_NIC = re.compile(r"^(vtnet\d+|virtio\d+)")
STACK_DROP_KEYS = {"softnet_dropped": "Linux input backlog (softnet_stat dropped)",
                   "tcp_backlog_drops": "TCP socket backlog"}


@dataclass
class Facts:
    throughput_bps: float | None = None
    ceiling_bps: float | None = None
    line_rate_source: str | None = None
    streams: int | None = None
    protocol: str = "tcp"
    generator_bound: bool = False
    busy_senders: list[tuple[str, float]] = field(default_factory=list)  # a pool's (host, CPU %) at the limit
    pool_slow: list[list[str]] = field(default_factory=list)  # per pooled trial: its pairs named slow (pool/window.py)
    shared_kernel: bool = False
    os_family: str | None = None
    cpus: list[dict[str, float]] = field(default_factory=list)  # {"cpu", "busy_pct", "interrupt_pct", ...}
    cpu_source: str = ""
    # the all-CPUs line of a top screen (%Cpu(s) / BusyBox 'CPU:'), when no per-CPU lines were pasted
    cpu_total: dict[str, float] | None = None
    # connection-state counters (linerate.dut.state_parsers keys) read from raw pfctl/conntrack pastes
    state: dict[str, int] = field(default_factory=dict)
    state_before: dict[str, int] | None = None
    threads: list[dict] = field(default_factory=list)  # {"name", "cpu", "pct"}, busiest first
    interrupts: dict[str, int] = field(default_factory=dict)
    nic_drops: dict[str, int] = field(default_factory=dict)  # "igb2 rx errors" -> n
    stack_drops: dict[str, int] = field(default_factory=dict)  # "netisr ip queue" -> n
    shaper_drops: int = 0
    drops_known: bool = False  # some drop counter was read over the window
    since_boot: bool = False  # counters are totals since boot (one snapshot), not a window
    retransmits: float | None = None
    nic_names: list[str] = field(default_factory=list)
    checksum_offload: str | None = None  # "on" | "off" | None (not known)
    pppoe: bool = False
    rtt_idle_p50_ms: float | None = None  # latency trials: mean of the trials' idle / loaded RTT medians
    rtt_loaded_p50_ms: float | None = None
    # Per-CPU receive evidence (pasted snapshots): interrupts per source per CPU (/proc/interrupts,
    # FreeBSD hw.intrs), softnet_stat rows, /proc/softirqs NET_RX per CPU. A total since boot when
    # it comes from one snapshot (irq_since_boot), else the difference of two.
    irq_cpu: dict[str, list[int]] = field(default_factory=dict)
    irq_source: str = ""
    softnet_cpu: list[dict[str, int]] = field(default_factory=list)  # {"cpu", "processed", "dropped", "time_squeeze"}
    net_rx_cpu: list[int] = field(default_factory=list)
    irq_since_boot: bool = False
    # ethtool -S per-queue receive packet counters: NIC -> {"rx queue 0": packets}; a total since the
    # driver loaded (one reading) or the difference of two
    queue_packets: dict[str, dict[str, int]] = field(default_factory=dict)
    queue_packets_source: str = ""
    nic_packets: int = 0  # packets of the NICs whose ethtool -S drop counters were read (same window)
    drop_rates: bool = False  # nic_drops and nic_packets are per-second rates (sar -n EDEV / DEV), not counts
    # ethtool -g: NIC -> (RX ring entries now, the most the NIC allows)
    rx_rings: dict[str, tuple[int, int]] = field(default_factory=dict)
    # rtnl rx_dropped (sysfs, or ifconfig's drop column less rx_missed_errors): packets the kernel discarded after
    # the NIC delivered them; "unclear" when only ifconfig's column (rx_dropped + rx_missed_errors) was read
    rx_dropped: dict[str, int] = field(default_factory=dict)
    rx_dropped_unclear: dict[str, int] = field(default_factory=dict)
    rx_packets: dict[str, int] = field(default_factory=dict)  # the same NICs' received packets (same window)
    usb_nic_driver: str = ""  # a USB NIC driver named in the paste: its host controller's IRQ is network
    interrupts_source: str = ""  # where facts.interrupts came from, for the verdict text
    # the measurement itself (experiment cells): DUT window telemetry per trial, a VM DUT seen from the host
    trials_with_dut: int = 0
    trials_without_window: int = 0  # trials whose DUT window reads are missing (telemetry["dut"]["partial"])
    partial_reasons: set[str] = field(default_factory=set)
    vcpu_wait_pct: float | None = None  # mean over trials of the busiest-waiting vCPU thread's run-queue wait
    vm_host_trials: int = 0
    host_placement: str | None = None  # vm/placement.py's note: where the VM's threads and the generator ran
    host_placement_detail: str = ""
    host_disjoint: bool = False

    @property
    def line_rate_fraction(self) -> float | None:
        if not self.ceiling_bps or self.throughput_bps is None:
            return None
        return self.throughput_bps / self.ceiling_bps

    @property
    def emulated_path(self) -> bool:
        """Every link of the path is emulated on one host (the namespace lab, or the VM DUT between
        its namespaces): no cable, switch or NIC of its own between client, DUT and server."""
        return (self.shared_kernel or self.vm_host_trials > 0
                or (self.line_rate_source or "").startswith("emulated link"))

    @property
    def virtio_nics(self) -> list[str]:
        return [name for name in self.nic_names if VIRTIO_NIC.match(name)]


def drops_from_counters(values: dict[str, int], facts: Facts) -> None:
    """Sort counter deltas (dut_counters, or snapshot deltas) into NIC and stack drops."""
    for key, value in values.items():
        match = re.match(r"^(.+)_(rx|tx)_(dropped|errors)$", key)
        if match and not match.group(1).startswith(("lo", "qdisc")):
            facts.drops_known = True
            if value > 0:
                label = f"{match.group(1)} {match.group(2)} {match.group(3).replace('dropped', 'drops')}"
                facts.nic_drops[label] = facts.nic_drops.get(label, 0) + value
        elif key.startswith("netisr_") and key.endswith("_qdrops"):
            facts.drops_known = True
            if value > 0:
                label = f"netisr {key[len('netisr_'):-len('_qdrops')]} queue"
                facts.stack_drops[label] = facts.stack_drops.get(label, 0) + value
        elif key in STACK_DROP_KEYS:
            facts.drops_known = True
            if value > 0:
                facts.stack_drops[STACK_DROP_KEYS[key]] = facts.stack_drops.get(STACK_DROP_KEYS[key], 0) + value
        elif key == "shaper_dropped":
            facts.shaper_drops += max(0, value)
        if match and match.group(1) not in facts.nic_names and not match.group(1).startswith(("lo", "qdisc")):
            facts.nic_names.append(match.group(1))


def mean_cpus(windows: list[list[dict[str, float]]]) -> list[dict[str, float]]:
    """Average per-CPU splits over trials by rank: each trial's busiest CPU with the other trials'
    busiest, and so on. Which CPU a single flow or queue lands on changes from trial to trial (RSS
    hashes each run's ports anew), so averaging by CPU number would turn 'one CPU at 96%' in every
    trial into 'two CPUs at 60%'. `cpu` is the number seen most often at that rank; `cpu_label`
    says when it varied."""
    windows = [sorted(w, key=lambda c: -c.get("busy_pct", 0.0)) for w in windows if w]
    if not windows:
        return []
    out = []
    for index in range(min(len(w) for w in windows)):
        rows = [w[index] for w in windows]
        keys = [k for k in rows[0] if k.endswith("_pct")]
        ids = [r.get("cpu", index) for r in rows]
        common = max(set(ids), key=ids.count)
        label = f"CPU {common}" if len(set(ids)) == 1 else \
            f"CPU {'/'.join(str(i) for i in sorted(set(ids)))} (the busiest one changed between trials)"
        out.append({"cpu": common, "cpu_label": label, **{k: round(mean(r.get(k, 0.0) for r in rows), 1) for k in keys}})
    return out


def cpus_from_threads(threads: list[dict]) -> list[dict[str, float]]:
    """top without -P: per-CPU busy estimated from the threads shown, by the CPU each last ran on. Threads
    move between CPUs inside top's interval, so a CPU can collect more than 100%: no CPU runs more than all
    of its time, so the excess ran on others — it is moved to the least busy CPUs seen, the total kept
    (BSDRP's X540 lab: CPU 0's threads add up to 143% while every CPU was near 95%)."""
    busy: dict[int, float] = {}
    for thread in threads:
        if thread.get("cpu") is not None and not thread["name"].startswith("idle"):
            busy[thread["cpu"]] = busy.get(thread["cpu"], 0.0) + thread["pct"]
    excess = sum(max(0.0, pct - 100.0) for pct in busy.values())
    busy = {cpu: min(100.0, pct) for cpu, pct in busy.items()}
    while excess > 0.05 and any(pct < 100.0 for pct in busy.values()):
        cpu = min(busy, key=busy.get)
        moved = min(excess, 100.0 - busy[cpu])
        busy[cpu] += moved
        excess -= moved
    return [{"cpu": cpu, "busy_pct": round(pct, 1)} for cpu, pct in sorted(busy.items())]


def cell_facts(params: dict[str, Any], trials: list[dict[str, Any]], *, mean_bps: float | None,
               retransmits: float | None, ceiling_bps: float | None, line_rate_source: str | None,
               flags: tuple[str, ...], os_family: str | None = None, rtt_idle_p50_ms: float | None = None,
               rtt_loaded_p50_ms: float | None = None) -> Facts:
    """A cell of an experiment: its summary figures and flags, and the telemetry of its ok trials
    (dicts with "telemetry" and "dut_counters")."""
    facts = Facts(throughput_bps=mean_bps, ceiling_bps=ceiling_bps, line_rate_source=line_rate_source,
                  rtt_idle_p50_ms=rtt_idle_p50_ms, rtt_loaded_p50_ms=rtt_loaded_p50_ms,
                  streams=params.get("streams"), protocol=str(params.get("protocol", "tcp")),
                  generator_bound="generator-bound" in flags, retransmits=retransmits, os_family=os_family)
    windows, waits = [], []
    for trial in trials:
        dut = (trial.get("telemetry") or {}).get("dut") or {}
        facts.shared_kernel = facts.shared_kernel or bool(dut.get("shared_kernel"))
        windows.append(dut.get("cpu") or [])
        for source, count in (dut.get("interrupts") or {}).items():
            facts.interrupts[source] = facts.interrupts.get(source, 0) + count
        drops_from_counters(trial.get("dut_counters") or {}, facts)
        wait = _measurement_facts(trial.get("telemetry") or {}, facts)
        if wait is not None:
            waits.append(wait)
    if waits:
        facts.vcpu_wait_pct, facts.vm_host_trials = round(mean(waits), 1), len(waits)
    facts.cpus = mean_cpus(windows)
    facts.cpu_source = "DUT CPU counters over the measured window" if facts.cpus else ""
    offloads = str(params.get("dut_offloads", "")) + " " + str(params.get("offloads", ""))
    if re.search(r"\b(tx|rx)=off\b", offloads) or "csum-off" in offloads:
        facts.checksum_offload = "off"
    elif re.search(r"\b(tx|rx)=on\b", offloads):
        facts.checksum_offload = "on"
    facts.pppoe = "pppoe" in str(params.get("encap", ""))
    facts.busy_senders = busy_senders(str(params.get("direction", "forward")), trials)
    facts.pool_slow = [[str(line) for line in (pool.get("slow") or []) if isinstance(line, str)]
                       for pool in ((trial.get("telemetry") or {}).get("pool") for trial in trials)
                       if isinstance(pool, dict) and pool.get("pairs", 0) > 1]
    return facts


def busy_senders(direction: str, trials: list[dict[str, Any]]) -> list[tuple[str, float]]:
    """A generator pool's sending hosts whose iperf3 put their CPU at SENDER_CPU_LIMIT_PCT or more (each host's
    highest of the trials, busiest first): which of several hosts was the limit. The sender is the client
    forward, the server in reverse, both bidir; a trial without pairs (one generator host) names none."""
    sides = {"forward": ("client",), "reverse": ("server",)}.get(direction, ("client", "server"))
    highest: dict[str, float] = {}
    for trial in trials:
        pairs = (trial.get("telemetry") or {}).get("pairs")
        for pair in pairs if isinstance(pairs, list) else []:
            for side in sides:
                host, pct = (pair.get(side), pair.get(f"cpu_{side}_pct")) if isinstance(pair, dict) else (None, None)
                if isinstance(host, str) and isinstance(pct, (int, float)) and not isinstance(pct, bool):
                    highest[host] = max(highest.get(host, 0.0), float(pct))
    return sorted(((host, pct) for host, pct in highest.items() if pct >= SENDER_CPU_LIMIT_PCT),
                  key=lambda item: (-item[1], item[0]))


def _measurement_facts(telemetry: dict[str, Any], facts: Facts) -> float | None:
    """How complete a trial's DUT telemetry is, and what the host saw of a VM DUT (trial.py,
    vm/observe.py); returns the trial's largest vCPU run-queue wait (%), if a VM was observed."""
    dut = telemetry.get("dut")
    if isinstance(dut, dict):
        facts.trials_with_dut += 1
        if dut.get("window_reads", 2) < 2 or not dut.get("cpu"):
            facts.trials_without_window += 1
            reason = str(dut.get("partial") or "no CPU figures in the window reads")
            facts.partial_reasons.add(reason.split(": ")[0] if len(reason) > 160 else reason)
    host = telemetry.get("vm_host")
    if not isinstance(host, dict):
        return None
    placement = host.get("placement") or {}
    if placement.get("note"):
        facts.host_placement, facts.host_disjoint = placement["note"], bool(placement.get("disjoint"))
        facts.host_placement_detail = str(placement.get("detail") or "")
    wait = host.get("vcpu_wait_pct_max")
    return float(wait) if isinstance(wait, (int, float)) else None
