"""Verdict rules: why a box is (not) at line rate, with the evidence figures and what to do.

A registry of small functions, one per rule, each `Facts -> Verdict | None`, run in order. Codes are
stable (reports, JSON and scripts key on them). Thresholds are named constants. A rule that needs
a kind of evidence the facts lack stays silent — it never guesses. In the namespace lab the DUT is
the generator's own kernel on the same CPUs: no DUT CPU verdict is given there (rule shared-kernel
says so instead).
"""

from __future__ import annotations

from collections.abc import Callable

from linerate.diagnose import busy, coverage, receive
from linerate.diagnose.facts import Facts
from linerate.diagnose.queues import is_usb_host
from linerate.diagnose.state_rules import NEARLY_FULL_SHARE, failures_since_boot, state_verdicts
from linerate.diagnose.verdict import NEGLIGIBLE_DROP_SHARE, SATURATED_PCT, SINCE_BOOT, Verdict
from linerate.dut.state_table import firewall
from linerate.traffic.iperf3 import SENDER_CPU_LIMIT_PCT

AT_LINE_RATE = 0.97  # of the calculated goodput for the link, MTU and family
ALL_BUSY_MIN_PCT = 80.0  # every CPU at least this busy, and on average SATURATED_PCT
PARTIAL_GAP_PCT = 20.0  # single-/partial-cpu-bound: the other CPUs average at least this many points below the saturated ones
# One CPU this busy while every other is close to idle (at most LONE_OTHERS_MAX_PCT) is the one that
# holds the flow back although it reads under SATURATED_PCT: top's interval averages in the moments the
# CPU waits for the next packet (an OPNsense PPPoE box read 87% / 3-7% at its one-core ceiling).
NEAR_SATURATED_PCT = 80.0
LONE_OTHERS_MAX_PCT = 10.0
ONE_CPU_MAX_PCT = 105.0
NO_PACKET_WORK_PCT = 1.0  # softirq + interrupt time below this: the CPUs took no packet work while read
MIN_DROP_RATE = 1.0  # NIC drops per second (sar) below which, packet rate unknown, drops cannot hold a router back  # top's %CPU is per CPU: a process above this (top rounding aside) runs on several CPUs
QUEUE_DELAY_MS = 5.0  # median RTT rising this much under load: a standing queue (bufferbloat)
ETHTOOL_MAN = "ethtool(8) (https://man7.org/linux/man-pages/man8/ethtool.8.html)"
PATHOLOGICAL = 0.05  # under 5% of line rate (Netgate forum, 'Performance Measurments with VirtIO + Offloading on Atom C2358' (https://forum.netgate.com/topic/108187/performance-measurments-with-virtio-offloading-on-atom-c2358-updated): ~5 Mbit/s through a virtio pfSense)


Rule = Callable[[Facts], Verdict | None]
RULES: dict[str, Rule] = {}


def rule(code: str) -> Callable[[Rule], Rule]:
    def register(function: Rule) -> Rule:
        RULES[code] = function
        return function
    return register


def diagnose(facts: Facts) -> list[Verdict]:
    """Every rule that fires, in registry order, then the verdicts about the measurement itself
    (diagnose/coverage.py: host contention, shared host CPUs, partial telemetry) and, for a cell
    below line rate that no rule explained, `unexplained` with the closest evidence. At line rate
    nothing held the box back: only the notes are kept beside that verdict."""
    verdicts = [v for v in (check(facts) for check in RULES.values()) if v is not None]
    verdicts += _state_verdicts(facts)
    verdicts += [v for v in (check(facts, Verdict) for check in (coverage.host_contended, coverage.shared_host_cpus,
                                                                  coverage.telemetry_partial)) if v is not None]
    fallback = coverage.unexplained(facts, verdicts, Verdict, SATURATED_PCT)
    if fallback is not None:
        verdicts.append(fallback)
    if any(v.code == "at-line-rate" for v in verdicts):
        return [v for v in verdicts if v.code == "at-line-rate" or v.kind == "note"]
    return verdicts


def _mbps(bps: float) -> str:
    return f"{bps / 1e6:,.1f} Mbit/s" if bps < 1e8 else f"{bps / 1e6:,.0f} Mbit/s"


def _dut_cpus_usable(facts: Facts) -> bool:
    return bool(facts.cpus) and not facts.shared_kernel


@rule("at-line-rate")
def at_line_rate(facts: Facts) -> Verdict | None:
    fraction = facts.line_rate_fraction
    if fraction is None or fraction < AT_LINE_RATE:
        return None
    return Verdict("at-line-rate", "ok", "at line rate",
                   f"{_mbps(facts.throughput_bps)} = {fraction * 100:.1f}% of the {_mbps(facts.ceiling_bps)} "
                   f"goodput ceiling ({facts.line_rate_source})",
                   "nothing to tune on the DUT for this traffic; to find its limit, test a faster link, "
                   "more streams or smaller packets")


@rule("line-rate-unknown")
def line_rate_unknown(facts: Facts) -> Verdict | None:
    if facts.ceiling_bps:
        return None
    return Verdict("line-rate-unknown", "note", "line rate unknown",
                   "no link rate for this path: no emulated link, no `link` in the inventory, and no "
                   "negotiated NIC speed was read", "set link = \"1g\" (the path's rate) in the inventory, "
                   "or link_rate in a namespace lab, to get % of line rate")


@rule("generator-bound")
def generator_bound(facts: Facts) -> Verdict | None:
    if not facts.generator_bound:
        return None
    if facts.busy_senders:  # a pool: which of its hosts
        hosts = ", ".join(f"{host}'s CPU at {pct:.0f}%" for host, pct in facts.busy_senders)
        return Verdict("generator-bound", "limit", "generator-bound",
                       f"{hosts} (iperf3's figure for the sending host; the limit is {SENDER_CPU_LIMIT_PCT:.0f}%)",
                       "the figure measures that host, not the DUT: give it fewer streams or a faster machine, or "
                       "add a pair on another host")
    return Verdict("generator-bound", "limit", "generator-bound",
                   "the client/server without a firewall or shaper reached about the same rate, or the "
                   f"sender's CPU was >= {SENDER_CPU_LIMIT_PCT:.0f}%", "the figure measures the test hosts, not the DUT: "
                   "use faster or separate client/server hosts, or more streams spread over their CPUs")


@rule("slow-pair")
def slow_pair(facts: Facts) -> Verdict | None:
    """A generator pool's aggregate is the sum of its pairs: a pair far below the others held it back."""
    named = [slow for slow in facts.pool_slow if slow]
    fraction = facts.line_rate_fraction
    if not named or (fraction is not None and fraction >= AT_LINE_RATE):
        return None
    return Verdict("slow-pair", "limit", "one pair of the pool held the aggregate back",
                   f"{'; '.join(named[0])} (named in {len(named)} of {len(facts.pool_slow)} trials)",
                   "the aggregate sums every pair, so look at that pair's own path: its hosts' CPUs and links "
                   "(`linerate testbed check` checks each pair's path), or measure without it (fewer `pairs`, or an "
                   "inventory `pairs` list that leaves it out)")


@rule("shared-kernel")
def shared_kernel(facts: Facts) -> Verdict | None:
    if not facts.shared_kernel:
        return None
    return Verdict("shared-kernel", "note", "DUT shares the generator's kernel and CPUs",
                   "namespace lab: client, DUT and server run on one kernel, so CPU load is the whole "
                   "machine's and no DUT CPU verdict is given", "use an SSH testbed (or a VM DUT) to "
                   "measure a DUT's own CPUs")


def _spread_advice(facts: Facts) -> str:
    cannot = ("it cannot spread when all traffic is one flow or PPPoE (RSS hashes a PPPoE session to "
              "queue 0 — TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' (https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/)): then only a faster core helps")
    if facts.os_family == "freebsd":
        how = ("spread it: more streams (flows hash to different RSS queues); check every queue has its "
               "own interrupt in `vmstat -i` (hw.igb.num_queues, iflib override_nrxqs); "
               "net.isr.dispatch=deferred with net.isr.maxthreads=<CPUs> moves stack work off the "
               "interrupt thread (see linerate explain net.isr.dispatch)")
    elif facts.os_family == "openbsd":
        how = ("spread it: more streams; OpenBSD forwards on few softnet threads (net.if.softnet "
               "tasks), so a faster core helps most")
    else:
        how = ("spread it: more streams; RSS queues (ethtool -L IF combined N) hashing on ports too (ethtool -N "
               "IF rx-flow-hash udp4 sdfn: routed traffic has one MAC pair — openwrt/openwrt#13493); RPS on a "
               "single-queue NIC (/sys/class/net/IF/queues/rx-0/rps_cpus); irqbalance")
    streams = "" if facts.streams != 1 else "this cell is 1 stream: one flow always lands on one queue; "
    return f"{streams}{how}; {cannot}"


def _thread_text(thread: dict) -> str:
    """'ksoftirqd/0 at 99% of one CPU'; a process above 100% is several CPUs (top's %CPU is per CPU);
    BusyBox's figure is a share of all CPUs together."""
    if thread.get("of_all_cpus"):
        return (f"{thread['name']} at {thread['pct']:.0f}% of all CPUs' time together (BusyBox top counts %CPU "
                "against every CPU at once)")
    if thread["pct"] > ONE_CPU_MAX_PCT:
        return f"{thread['name']} at {thread['pct']:.0f}% (about {thread['pct'] / 100:.1f} CPUs: several threads)"
    return f"{thread['name']} at {thread['pct']:.0f}% of one CPU"


def _all_busy(busy: list[float]) -> bool:
    return min(busy) >= ALL_BUSY_MIN_PCT and sum(busy) / len(busy) >= SATURATED_PCT


@rule("irq-storm")
def irq_storm(facts: Facts) -> Verdict | None:
    """Hardware-interrupt time alone about a CPU's worth (Linux `hi`): a device or driver interrupting
    without pause, not traffic (diagnose/busy.py)."""
    evidence = busy.irq_storm(facts)
    if evidence is None:
        return None
    return Verdict("irq-storm", "limit", "interrupt storm: hardware-interrupt time alone is about one CPU (a driver "
                   "or device fault)", evidence, busy.storm_advice())


@rule("irq-time-accounting-only")
def irq_time_accounting_only(facts: Facts) -> Verdict | None:
    """Hardware-interrupt time of about a CPU that nothing else in the paste shows (no interrupt counts, no
    busy thread): not called a storm (busy.irq_time_only)."""
    evidence = busy.irq_time_only(facts)
    if evidence is None:
        return None
    return Verdict("irq-time-accounting-only", "note", "hardware-interrupt time of about one CPU, shown by CPU "
                   "accounting alone", f"{evidence}; no interrupt counts or busy thread pasted to confirm it: the "
                   "evidence is the kernel's time accounting alone", busy.accounting_advice())


@rule("single-core-bound")
def single_core_bound(facts: Facts) -> Verdict | None:
    """Exactly one CPU saturated, the others well below it (PARTIAL_GAP_PCT): one queue or one flow.
    Without per-CPU lines, one thread at ~100% of one CPU (not a process above 100%: several CPUs)
    while top's all-CPUs line, when pasted, still shows room."""
    if facts.shared_kernel or busy.irq_storm(facts) is not None:
        return None  # one verdict per cause: irq-storm names what fills that CPU
    hot = max(facts.cpus, key=lambda c: c.get("busy_pct", 0.0)) if facts.cpus else None
    thread = facts.threads[0] if facts.threads else None
    one_cpu_thread = thread is not None and SATURATED_PCT <= thread["pct"] <= ONE_CPU_MAX_PCT
    if not facts.cpus and len(_saturating_threads(facts)) > 1:
        return None  # two threads each filling a CPU: the work is on several CPUs, not one
    others = [c["busy_pct"] for c in facts.cpus if c is not hot]
    near = hot is not None and others and hot["busy_pct"] >= NEAR_SATURATED_PCT and max(others) <= LONE_OTHERS_MAX_PCT
    if hot is not None and len(facts.cpus) >= 2 and (hot["busy_pct"] >= SATURATED_PCT or near):
        if any(b >= SATURATED_PCT for b in others) or _all_busy([hot["busy_pct"], *others]) or \
                hot["busy_pct"] - sum(others) / len(others) < PARTIAL_GAP_PCT:
            return None  # k > 1 saturated (partial-cpu-bound, cpu-bound) or load spread evenly
        split = ", ".join(f"{hot[k]:.0f}% {k[:-4]}" for k in ("interrupt_pct", "softirq_pct", "system_pct",
                                                               "user_pct") if hot.get(k))
        name = hot.get("cpu_label") or f"CPU {hot['cpu']}"
        evidence = (f"{name} {hot['busy_pct']:.0f}% busy{f' ({split})' if split else ''}; the other "
                    f"{len(others)} CPU{'s' if len(others) > 1 else ''} average {sum(others) / len(others):.0f}% "
                    f"[{facts.cpu_source}]")
        if hot["busy_pct"] < SATURATED_PCT:
            evidence += (f"; under {SATURATED_PCT:.0f}%, but alone: a sampled average takes in the moments that CPU "
                         "waits for the next packet, and no other CPU shares the work")
    elif not facts.cpus and thread is not None and thread.get("of_all_cpus"):
        return _one_cpu_of_a_few(facts, thread)
    elif not facts.cpus and one_cpu_thread and not busy.total_saturated(facts):
        total = facts.cpu_total
        evidence = (f"all CPUs together {total['busy_pct']:.0f}% busy (top's all-CPUs line), per-CPU load not "
                    "captured" if total else "CPU count and per-CPU load not captured")
    else:
        return None
    program = busy.program(facts, hot if facts.cpus else None)
    if program is not None:
        return Verdict("single-core-bound", "limit", "one CPU saturated by a single-threaded program, the others idle",
                       f"{evidence}; {program}", busy.program_advice(facts))
    if thread is not None and thread["pct"] >= SATURATED_PCT:
        evidence += f"; busiest thread {_thread_text(thread)}"
    return Verdict("single-core-bound", "limit", "one CPU saturated, the others idle: single flow / single "
                   "queue bound", evidence, _spread_advice(facts))


def _saturating_threads(facts: Facts) -> list[dict]:
    """Threads of the paste each at about a whole CPU (top's per-CPU %CPU; not BusyBox's share of all)."""
    return [t for t in facts.threads if not t.get("of_all_cpus") and SATURATED_PCT <= t["pct"] <= ONE_CPU_MAX_PCT]


# BusyBox top without per-CPU lines: its %CPU is a share of all CPUs together, so a thread at X% is a
# whole CPU only if the box has 100/X CPUs. BusyBox boxes (OpenWrt's SoCs: MT7621 2 cores / 4 threads,
# MT7622 and IPQ40xx 2 or 4 cores) have a few: up to this many, that reading is taken as the likely one;
# a smaller share would need more CPUs than such a box has (a thread at 7% is 14% of one of 2 CPUs).
FEW_CPUS = 4


def _one_cpu_of_a_few(facts: Facts, thread: dict) -> Verdict | None:
    """BusyBox top without per-CPU lines: a thread's %CPU is a share of every CPU together, and one thread
    fills at most one CPU, so X% bounds the CPU count at 100/X; at that count the thread is a whole CPU."""
    most = int(100 // thread["pct"]) if thread["pct"] > 0 else 0
    if not 2 <= most <= FEW_CPUS or thread["pct"] * most < SATURATED_PCT or busy.total_saturated(facts):
        return None
    evidence = (f"{_thread_text(thread)}: one thread fills at most one CPU, so the box has at most {most} CPUs, and "
                f"with {most} this thread is a whole CPU; the CPU count is not in the paste (BusyBox top's per-CPU "
                "lines, key 1 where it is built with SMP support, or /proc/stat decide it)")
    return Verdict("single-core-bound", "limit", f"one CPU saturated if the box has {most} CPUs (the most this "
                   "figure allows): single flow / single queue bound", evidence, _spread_advice(facts))


@rule("cpu-bound")
def cpu_bound(facts: Facts) -> Verdict | None:
    if facts.shared_kernel:
        return None
    if busy.total_saturated(facts):
        total = facts.cpu_total
        split = ", ".join(f"{total[k]:.0f}% {k[:-4]}" for k in ("softirq_pct", "interrupt_pct", "system_pct",
                                                                  "user_pct") if total.get(k))
        evidence = (f"all CPUs together {total['busy_pct']:.0f}% busy, {total['idle_pct']:.1f}% idle ({split}) "
                    "[top's all-CPUs line: the average over every CPU, whatever their number]")
        thread = facts.threads[0] if facts.threads else None
        if thread is not None:
            evidence += f"; busiest thread {_thread_text(thread)}"
    elif facts.cpus:
        loads = [c["busy_pct"] for c in facts.cpus]
        if not _all_busy(loads):
            return None
        evidence = (f"{len(loads)} CPU{'s' if len(loads) > 1 else ''} {min(loads):.0f}-{max(loads):.0f}% busy, "
                    f"{sum(loads) / len(loads):.0f}% on average [{facts.cpu_source}]")
    else:
        return None
    userspace = busy.userspace_only(facts, evidence)
    if userspace is not None:
        return userspace
    return Verdict("cpu-bound", "limit", "all DUT CPUs busy: CPU-bound", evidence,
                   "the work is spread and there is no CPU left: fewer or simpler rules (a stateless rule "
                   "list is walked per packet), keep checksum offload on, larger MTU where both ends allow, "
                   "or faster hardware; see linerate recommend")


@rule("partial-cpu-bound")
def partial_cpu_bound(facts: Facts) -> Verdict | None:
    """k of n CPUs saturated while the others have room: the work runs on as many CPUs as there are
    NIC queues or netisr threads taking it (the OPNsense DEC850 of opnsense/core#7661: some cores
    at 100%, 8.8 of 10 Gbit/s, fixed by turning RSS on)."""
    if not _dut_cpus_usable(facts) or len(facts.cpus) < 2:
        return None
    busy = [c["busy_pct"] for c in facts.cpus]
    hot = [c for c in facts.cpus if c["busy_pct"] >= SATURATED_PCT]
    if not 1 < len(hot) < len(busy):
        return None  # one CPU alone: single-core-bound; all of them: cpu-bound
    rest = [c["busy_pct"] for c in facts.cpus if c["busy_pct"] < SATURATED_PCT]
    if _all_busy(busy):
        return None  # cpu-bound
    hot_mean = sum(c["busy_pct"] for c in hot) / len(hot)
    if hot_mean - sum(rest) / len(rest) < PARTIAL_GAP_PCT:
        return None  # load spread evenly (redis/redis#5825: 76-95% on all 4 CPUs): no k-of-n split
    labelled = [c["cpu_label"] for c in hot if c.get("cpu_label")]  # cells: "CPU 0/1 (the busiest one changed ...)"
    names = ", ".join(labelled) if len(labelled) == len(hot) else "CPU " + ", ".join(str(c["cpu"]) for c in hot)
    evidence = (f"{len(hot)} of {len(busy)} CPUs >= {SATURATED_PCT:.0f}% busy ({names}); the other "
                f"{len(rest)} average {sum(rest) / len(rest):.0f}% [{facts.cpu_source}]")
    thread = facts.threads[0] if facts.threads else None
    if thread is not None and thread["pct"] >= SATURATED_PCT:
        evidence += f"; busiest thread {_thread_text(thread)}"
    if facts.os_family == "freebsd":
        how = ("the saturated CPUs are the ones the NIC queues or netisr threads run on (top -HSP names them: "
               "intr{irqN: ix0:rxqK}, if_io_tqg_K): give the NIC as many queues as CPUs "
               "(dev.X.N.iflib.override_nrxqs/override_ntxqs), turn RSS on where the kernel has it (OPNsense: "
               "net.inet.rss.enabled=1, net.isr.bindthreads=1, net.isr.maxthreads=-1 — opnsense/src#126; it fixed "
               "opnsense/core#7661) and offer more flows")
    else:
        how = ("the saturated CPUs are the ones taking the NIC queues' interrupts and softirqs: as many queues as "
               "CPUs (ethtool -L IF combined N), their IRQs on distinct CPUs (irqbalance or /proc/irq/N/smp_affinity), "
               "hash on ports (ethtool -N IF rx-flow-hash udp4 sdfn), RPS for the rest")
    return Verdict("partial-cpu-bound", "limit", "some CPUs saturated, the others have room: queue/thread bound",
                   evidence, f"{how}; more streams only help once the flows spread over more queues")


def _when_irq(facts: Facts) -> str:
    return f" {SINCE_BOOT}" if facts.irq_since_boot else ""


@rule("no-network-irq")
def no_network_irq(facts: Facts) -> Verdict | None:
    """Interrupts were read but none of them is recognisably a NIC's: say so and list what was seen,
    rather than 'no interrupts piled on one CPU'."""
    seen = [name for name, counts in facts.irq_cpu.items() if any(counts)]
    if not seen or any(receive.network(facts, name) for name in facts.irq_cpu):
        return None
    busiest = sorted(seen, key=lambda n: -sum(facts.irq_cpu[n]))[:6]
    usb = any(is_usb_host(name) for name in seen)
    advice = ("name the NIC's interrupt: `grep -i -e eth -e enp -e wlan /proc/interrupts`, and `ethtool -i IF` for "
              "its driver")
    if usb:
        advice += ("; a USB NIC's interrupts are its USB host controller's (xhci-hcd): paste `ethtool -i IF` or "
                   "`lsusb -t` with it and the xhci line counts as network")
    return Verdict("no-network-irq", "note", "no network interrupt source recognised",
                   f"{_count_sources(len(seen))} seen: {', '.join(busiest)} [{facts.irq_source}]", advice)


def _count_sources(n: int) -> str:
    return f"{n} interrupt source{'' if n == 1 else 's'}"


@rule("irq-one-cpu")
def irq_one_cpu(facts: Facts) -> Verdict | None:
    """Receive work on one CPU (receive.skew) over a window, or since boot with harm shown (drops,
    time_squeeze, a saturated CPU) or with a volume and no harm counters pasted to judge it by."""
    found, hot_cpu, volume = receive.skew(facts)
    if not found or receive.harmless(facts, volume) is not None:
        return None
    when = _when_irq(facts)
    if facts.irq_since_boot:
        harm = receive.harm_shown(facts)[0]
        when += (f"; harm: {', '.join(harm)}" if harm else
                 "; whether it hurt is not in the paste (no drop, time_squeeze or CPU load figures)")
    if facts.os_family == "freebsd":
        how = ("bind each queue's interrupt to its own CPU (iflib does by default: check `sysctl hw.intrs`), as "
               "many queues as CPUs (dev.X.N.iflib.override_nrxqs), net.isr.dispatch=deferred with "
               "net.isr.maxthreads=<CPUs> (see linerate explain net.isr.dispatch)")
    else:
        how = ("give each NIC and queue interrupt its own CPU (irqbalance, or echo MASK > /proc/irq/N/smp_affinity); "
               "a single-queue NIC or Wi-Fi radio: RPS (echo MASK > /sys/class/net/IF/queues/rx-0/rps_cpus; "
               "OpenWrt: option packet_steering '1' in /etc/config/network) or threaded NAPI "
               "(echo 1 > /sys/class/net/IF/threaded); a VM: more virtual NIC queues (virtio queues=N, vmxnet3 RSS) "
               "and ethtool -L IF combined N")
    return Verdict("irq-one-cpu", "limit", f"network receive work on one CPU (CPU {hot_cpu})",
                   "; ".join(found) + when, f"spread it: {how}")


@rule("irq-one-cpu-no-harm")
def irq_one_cpu_no_harm(facts: Facts) -> Verdict | None:
    """The same skew since boot with no harm shown (netdata/netdata#1076: 46k packets, 95% on one CPU,
    6 time_squeeze, no drops): a note, not a limit."""
    found, hot_cpu, volume = receive.skew(facts)
    shown = receive.harmless(facts, volume) if found else None
    if shown is None:
        return None
    return Verdict("irq-one-cpu-no-harm", "note", f"receive work mostly on one CPU (CPU {hot_cpu}), no harm shown",
                   "; ".join(found) + f"{_when_irq(facts)}; {shown}",
                   "not a limit by itself: a skew with no drops and a handful of time_squeeze events is normal at "
                   "low load (netdata/netdata#1076); judge it under load: two readings of /proc/net/softnet_stat (or "
                   "/proc/interrupts) a few seconds apart, with top's per-CPU lines")


@rule("irq-one-cpu-per-nic")
def irq_one_cpu_per_nic(facts: Facts) -> Verdict | None:
    """Each single-vector NIC's interrupts on one CPU of its own (receive.pinned_nics): a note, since
    the same picture is also a healthy box (coolsnowwolf/lede#10394: eth0 on CPU3, eth3 on CPU2, the
    limit was a driver regression); the CPU of a busy NIC is the one to watch."""
    pinned = receive.pinned_nics(facts)
    if not pinned:
        return None
    harm = receive.harm_shown(facts)[0]
    hurt = (f"; harm: {', '.join(harm)}" if harm else
            "; whether it hurt is not in the paste (no drop, time_squeeze or CPU load figures)")
    listed = ", ".join(f"{name} on CPU {cpu}" for name, cpu, _, _ in pinned)
    return Verdict("irq-one-cpu-per-nic", "note", f"each NIC's receive work on one CPU ({listed})",
                   "; ".join(f"{name}: {count:,} interrupts, {share * 100:.0f}% on CPU {cpu}"
                             for name, cpu, share, count in pinned)
                   + f" [{facts.irq_source}]{_when_irq(facts)}{hurt}",
                   "a NIC with one interrupt vector is received by one CPU whatever irqbalance does: if that CPU "
                   "(its ksoftirqd/N) is saturated under load, spread the NIC's work with RPS (echo MASK > "
                   "/sys/class/net/IF/queues/rx-0/rps_cpus) or threaded NAPI (echo 1 > /sys/class/net/IF/threaded); "
                   "check under load with top's per-CPU lines (press 1) and two readings of /proc/interrupts")


@rule("irq-one-queue")
def irq_one_queue(facts: Facts) -> Verdict | None:
    """One receive queue of a multi-queue NIC takes the traffic: from the queues' interrupt counts, or
    from the driver's per-queue packet counters (ethtool -S: rx_queue_0_packets, rx-0.packets ...)."""
    skewed = receive.skewed_queues(facts.interrupts)
    by_packets = receive.skewed_packets(facts.queue_packets)
    if not skewed and not by_packets:
        return None
    parts = []
    for nic, top, queues in skewed:
        total = sum(queues.values())
        parts.append(f"{top} took {queues[top]:,} of {total:,} interrupts ({queues[top] / total * 100:.0f}%) "
                     f"across {len(queues)} queues")
    if parts:
        source = f" [{facts.interrupts_source}]" if facts.interrupts_source else ""
        when = f" {SINCE_BOOT}" if facts.irq_since_boot else ""
        parts = ["; ".join(parts) + f": RSS is not spreading this traffic{when}{source}"]
    for nic, top, queues in by_packets:
        total = sum(queues.values())
        parts.append(f"{nic} {top} received {queues[top]:,} of {total:,} packets ({queues[top] / total * 100:.0f}%) "
                     f"across {len(queues)} receive queues: RSS is not spreading this traffic "
                     f"[{facts.queue_packets_source}]")
    nic = skewed[0][0] if skewed else by_packets[0][0]
    what = "interrupts" if skewed else "received packets"
    if facts.cpus and _all_busy([c["busy_pct"] for c in facts.cpus]):
        # every CPU is full: spreading the queues further frees nothing (cpu-bound names the limit)
        return Verdict("irq-one-queue", "note", f"{what} uneven across the queues of {nic}, every CPU busy anyway",
                       "; ".join(parts), "not the limit while every CPU is saturated; see cpu-bound")
    return Verdict("irq-one-queue", "limit", f"{what} concentrated on one queue of {nic}", "; ".join(parts),
                   _spread_advice(facts))


@rule("nic-drops")
def nic_drops(facts: Facts) -> Verdict | None:
    if not facts.nic_drops:
        return None
    total = sum(facts.nic_drops.values())
    if facts.nic_packets and total < NEGLIGIBLE_DROP_SHARE * facts.nic_packets:
        return None  # nic-drops-negligible says so
    when = ("per second (sar's mean rate over the intervals pasted)" if facts.drop_rates else
            "since boot (one snapshot: not necessarily during this test)" if facts.since_boot else "during the test")
    trickle = receive.drop_rate_trickle(facts, when)
    if trickle is not None:
        return trickle
    if facts.os_family == "freebsd":
        advice = ("larger rings (hw.igb.rxd/txd, iflib override_nrxds), flow control off (dev.igb.N.fc=0); a "
                  "saturated queue's CPU also drops at the ring — check single-core-bound")
    else:
        advice = ("larger rings (ethtool -G IF rx 4096), see ethtool -S IF for rx_missed/fifo errors, "
                  "interrupt coalescing (ethtool -C); a saturated CPU also drops at the ring")
    evidence = f"{receive.listed(facts.nic_drops)} {when}"
    if facts.nic_packets:
        evidence += f" = {total / facts.nic_packets * 100:.2f}% of {facts.nic_packets:,} packets"
    rings = {nic: ring for nic, ring in facts.rx_rings.items() if any(k.startswith(f"{nic} ") for k in facts.nic_drops)}
    small = {nic: ring for nic, ring in rings.items() if ring[0] < ring[1]}
    if small:
        evidence += "; " + ", ".join(f"{nic} RX ring {now:,} of a possible {most:,} entries (ethtool -g)"
                                     for nic, (now, most) in small.items())
        advice = ("the NIC ran out of receive descriptors: give it its largest ring, "
                  + ", ".join(f"`ethtool -G {nic} rx {most}`" for nic, (_, most) in small.items())
                  + f" ({ETHTOOL_MAN}: -G/--set-ring rx N sets the RX ring's entries; the link flaps while the "
                  "driver resets); then watch the counter under load; if it still grows, a CPU is not emptying the "
                  "ring fast enough: interrupt coalescing (ethtool -C), more queues (ethtool -L) on more CPUs")
    elif rings:
        evidence += "; " + ", ".join(f"{nic} RX ring already at its maximum {most:,}"
                                     for nic, (_, most) in rings.items())
        advice = ("the ring is as large as the NIC allows: the CPUs do not empty it fast enough — spread the queues "
                  "over more CPUs (ethtool -L IF combined N, irqbalance), interrupt coalescing (ethtool -C); a saturated "
                  "CPU also drops at the ring")
    return Verdict("nic-drops", "limit", "drops or errors at the NIC", evidence, advice)


@rule("rx-dropped-not-nic")
def rx_dropped_not_nic(facts: Facts) -> Verdict | None:
    """rtnl rx_dropped (ifconfig's drop column, /sys/class/net/IF/statistics/rx_dropped) counts packets the
    kernel discarded after the NIC delivered them - "due to lack of resources or unsupported protocol ... should
    not include packets dropped by the device due to buffer exhaustion which are counted separately in
    rx_missed_errors" (include/uapi/linux/if_link.h); netdata/netdata#4536: 11,723 dropped, NIC clean."""
    if not facts.rx_dropped and not facts.rx_dropped_unclear:
        return None
    parts = [f"{nic} rx_dropped {count:,}" + (f" of {facts.rx_packets[nic]:,} received" if facts.rx_packets.get(nic)
                                              else "") for nic, count in facts.rx_dropped.items()]
    parts += [f"{nic} ifconfig dropped {count:,} (rx_dropped + rx_missed_errors together: /proc/net/dev adds them)"
              for nic, count in facts.rx_dropped_unclear.items()]
    when = SINCE_BOOT if facts.since_boot else "during the window"
    nic_clean = facts.drops_known and not facts.nic_drops
    evidence = "; ".join(parts) + f" {when}" + ("; the NIC's own drop counters are 0" if nic_clean else "")
    if facts.rx_dropped_unclear and not facts.rx_dropped:
        title = "packets dropped on receive: the NIC or the kernel (ifconfig does not say which)"
        advice = ("tell them apart: `cat /sys/class/net/IF/statistics/rx_missed_errors` (the NIC ran out of buffers) "
                  "and `.../rx_dropped` (the kernel discarded them), or `ip -s -s link show IF`")
    else:
        title = "packets dropped by the kernel after the NIC (rx_dropped), not by the NIC"
        advice = ("not NIC or ring drops: frames nothing on the host accepted (a protocol with no handler - LLDP, STP, "
                  "IPv6 where it is off, an unconfigured VLAN - or L2 filtering), or no memory / a full input backlog "
                  "(compare /proc/net/softnet_stat's dropped column); `tcpdump -e -i IF` shows foreign frames; "
                  "harmless to throughput unless softnet_stat drops grow with them")
    return Verdict("rx-dropped-not-nic", "note", title, evidence, advice)


@rule("nic-drops-negligible")
def nic_drops_negligible(facts: Facts) -> Verdict | None:
    """NIC drops that are a tiny share of the same NIC's packets (netdata/netdata#988: 5,481 of 7.4 G
    packets): reported, but not a limit."""
    total = sum(facts.nic_drops.values())
    if not total or not facts.nic_packets or total >= NEGLIGIBLE_DROP_SHARE * facts.nic_packets:
        return None
    when = "since boot (one snapshot)" if facts.since_boot else "during the test"
    return Verdict("nic-drops-negligible", "note", "NIC drops too few to limit throughput",
                   f"{receive.listed(facts.nic_drops)}: {total:,} of {facts.nic_packets:,} packets "
                   f"({100 * total / facts.nic_packets:.5f}%) {when}",
                   "under 1 in 10,000 packets: not what holds the rate back; watch whether the counters grow "
                   "under load (two readings of ethtool -S IF)")


@rule("stack-queue-drops")
def stack_queue_drops(facts: Facts) -> Verdict | None:
    if not facts.stack_drops:
        return None
    when = "since boot (one snapshot: not necessarily during this test)" if facts.since_boot else "during the test"
    if any(name.startswith("netisr") for name in facts.stack_drops):
        advice = ("the netisr queue overflowed: raise net.isr.defaultqlimit / net.route.netisr_maxqlen "
                  "(boot-time) and net.inet.ip.intr_queue_maxlen (TekLager, 'How to fine-tune pfSense for 1Gbit throughput on APU2/APU3/APU4' (https://teklager.se/en/knowledge-base/apu2-1-gigabit-throughput-pfsense/): 3000); see linerate explain "
                  "net.inet.ip.intr_queue_maxlen")
    else:
        advice = ("the input backlog overflowed: raise net.core.netdev_max_backlog (and netdev_budget if "
                  "time_squeeze grows); see linerate explain net.core.netdev_max_backlog")
    few = receive.backlog_drops_few(facts, when)
    if few is not None:
        return few
    return Verdict("stack-queue-drops", "limit", "drops in a network stack queue",
                   f"{receive.listed(facts.stack_drops)} {when}", advice)


@rule("retransmits-path-loss")
def retransmits_path_loss(facts: Facts) -> Verdict | None:
    if not facts.retransmits or not facts.drops_known or facts.since_boot:
        return None
    if facts.nic_drops or facts.stack_drops or facts.shaper_drops:
        return None
    if facts.emulated_path:  # no cable or switch here: every link is a veth/tap on this host
        advice = ("on this emulated path the loss is on the host: the generator's CPUs (iperf3 at 100% drops "
                  "in its own socket buffers: see the client/server CPU in the trial's telemetry), the link "
                  "shaper's queue (`tc -s qdisc show` in the lab's namespaces: drops, overlimits), or, with a VM "
                  "DUT, qemu's I/O thread falling behind (the report's host-placement and vCPU-wait notes); "
                  "rerun with fewer streams or a slower link_rate to tell them apart")
    else:
        advice = ("loss is elsewhere on the path: client/server NICs, a switch, cabling, or the receiver; "
                  "check their counters")
    return Verdict("retransmits-path-loss", "limit", "TCP retransmits without DUT drops",
                   f"{facts.retransmits:,.0f} retransmits per trial while the DUT's NIC, stack and shaper "
                   "counters show no drops", advice)


@rule("retransmits-dut-drops")
def retransmits_dut_drops(facts: Facts) -> Verdict | None:
    dropped = sum(facts.nic_drops.values()) + sum(facts.stack_drops.values()) + facts.shaper_drops
    if not facts.retransmits or not dropped or facts.since_boot:
        return None
    where = "the emulated link's shaper queue" if facts.shaper_drops and not (facts.nic_drops or facts.stack_drops) \
        else "the DUT"
    return Verdict("retransmits-dut-drops", "limit", "TCP retransmits with drops at the DUT",
                   f"{facts.retransmits:,.0f} retransmits per trial; {dropped:,} packets dropped by {where}",
                   "the retransmits are the DUT's drops; see the drop verdicts for where")


@rule("offload-pathology")
def offload_pathology(facts: Facts) -> Verdict | None:
    fraction = facts.line_rate_fraction
    if fraction is None or fraction >= PATHOLOGICAL or not facts.virtio_nics or facts.checksum_offload == "off":
        return None
    if facts.os_family == "freebsd":
        how = "hw.vtnet.csum_disable=1 (loader) or ifconfig vtnetN -rxcsum -txcsum; see linerate explain hw.vtnet.csum_disable"
    else:
        how = "ethtool -K IF rx off tx off in the guest, or csum=off on the host's virtio device"
    return Verdict("offload-pathology", "limit", "checksum offload on a virtio DUT",
                   f"{fraction * 100:.1f}% of line rate through virtio NICs {', '.join(facts.virtio_nics)} with "
                   f"checksum offload {facts.checksum_offload or 'not known to be off'} (Netgate forum, 'Performance Measurments with VirtIO + Offloading on Atom C2358' (https://forum.netgate.com/topic/108187/performance-measurments-with-virtio-offloading-on-atom-c2358-updated): ~5 Mbit/s)",
                   f"disable checksum offload on the DUT's virtio NICs: {how}")


@rule("queue-under-load")
def queue_under_load(facts: Facts) -> Verdict | None:
    if facts.rtt_idle_p50_ms is None or facts.rtt_loaded_p50_ms is None:
        return None
    added = facts.rtt_loaded_p50_ms - facts.rtt_idle_p50_ms
    if added < QUEUE_DELAY_MS:
        return None
    queued = f" — about {added / 1e3 * facts.throughput_bps / 8 / 1e6:,.1f} MB standing at " \
             f"{_mbps(facts.throughput_bps)}" if facts.throughput_bps else ""
    return Verdict("queue-under-load", "note", "latency under load (a standing queue)",
                   f"median RTT {facts.rtt_idle_p50_ms:.2f} ms idle, {facts.rtt_loaded_p50_ms:.1f} ms under load: "
                   f"+{added:.1f} ms of queueing{queued}",
                   "the bottleneck's queue fills (bufferbloat): give it an AQM — fq_codel or cake on Linux/OpenWrt "
                   "(SQM), FQ-CoDel limiters on pfSense/OPNsense, `flows` queues in OpenBSD pf — or shape a little "
                   "below the line rate so the queue forms where the AQM is; on an emulated link it is the "
                   "shaper's tbf queue")


def _state_verdicts(facts: Facts) -> list[Verdict]:
    """The connection-state table judged from raw pfctl/conntrack pastes (diagnose/state_rules.py): full or
    refusing states, insert failures, evictions; when none fires, a note that says how full it is."""
    if not facts.state:
        return []
    os_name = facts.os_family or ""
    found = state_verdicts(facts.state_before, facts.state, os_name, None)
    if not found and facts.state_before is None:
        found = [v for v in (failures_since_boot(facts.state, os_name),) if v is not None]
    if found:
        return found
    count, size = facts.state.get("state_count"), facts.state.get("state_max")
    share = count / size if count is not None and size else None
    fill = (f"{count:,} of {size:,} states in use ({share * 100:.1f}%)" if share is not None else
            f"{count:,} states in use, limit not pasted" if count is not None else "table fill not pasted")
    failures = ("insert_failed", "drop", "early_drop") if firewall(os_name, facts.state) == "conntrack" else \
        ("memory_failures", "state_limit_hits", "state_insert_failures")
    read = [f"{name} {facts.state[name]:,}" for name in failures if name in facts.state]
    counted = sum(max(facts.state.get(name, 0), 0) for name in failures)
    when = "since boot (one reading)" if facts.state_before is None else "during the window"
    evidence = fill + (f"; {', '.join(read)} {when}" if read else "; no failure counter pasted")
    if share is None:
        # a non-zero failure counter is never "no failures": here only a window's negligible rise reaches this
        title = "connection-state table read, its fill unknown" + (
            ": no failures counted" if read and not counted else f": {counted:,} failures counted" if counted else "")
        advice = ("paste the table's size and count together (pfctl -si and pfctl -sm; conntrack -C and "
                  "/proc/sys/net/netfilter/nf_conntrack_max) and its failure counters (pfctl -si, conntrack -S) to "
                  "judge it")
    elif share >= NEARLY_FULL_SHARE:
        title = f"connection-state table nearly full ({share * 100:.0f}%)"
        advice = ("no state refused yet, but a burst of new connections will fill it: raise the limit (pf: `set "
                  "limit states N`; Linux: net.netfilter.nf_conntrack_max) and watch the failure counters")
    else:
        title = f"connection-state table not full ({share * 100:.1f}% in use)"
        advice = "the state table is not what holds the rate back"
    return [Verdict("state-table-ok" if share is not None and share < NEARLY_FULL_SHARE else "state-table-fill",
                    "note", title, evidence, advice)]
