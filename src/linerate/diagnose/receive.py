"""Where the network's receive work lands: per CPU (interrupts, softnet_stat, NET_RX softirqs) and
per NIC queue (queue interrupts, ethtool -S per-queue packet counters), and whether piling it on one
CPU did harm (drops, time_squeeze, a saturated CPU). The irq-one-cpu, irq-one-cpu-no-harm and
irq-one-queue rules of rules.py word their verdicts from these.

A skew is one CPU (or queue) taking QUEUE_SHARE of the work, or QUEUE_SKEW_MIN_SHARE and QUEUE_SKEW
times the median of the others; totals under the MIN_* figures say nothing. Pure: Facts in, figures
and evidence text out.
"""

from __future__ import annotations

from linerate.diagnose import busy
from linerate.diagnose.facts import STACK_DROP_KEYS, Facts
from linerate.diagnose.queues import is_network, is_usb_host, queue_of, rx_groups
from linerate.diagnose.verdict import NEGLIGIBLE_DROP_SHARE, SATURATED_PCT, Verdict

MIN_DROP_RATE = 1.0  # NIC drops per second (sar) below which, packet rate unknown, drops cannot hold a router back

QUEUE_SHARE = 0.80  # one queue of a multi-queue NIC (or one CPU of the network interrupts) took this share
QUEUE_SKEW = 3.0  # ... or one queue took this many times the median of its NIC's other queues
QUEUE_SKEW_MIN_SHARE = 0.40  # ... and at least this share (a skew, not noise on idle queues)
MIN_QUEUE_INTERRUPTS = 100
MIN_SOFTNET_PACKETS = 1000  # softnet_stat / NET_RX totals below this say nothing
MIN_TIME_SQUEEZE = 100
# a skew since boot with no harm shown: fewer packets or interrupts than this since boot say the box
# barely carried traffic (netdata/netdata#1076: 46k packets, 6 time_squeeze, no drops — nothing wrong)
MIN_SINCE_BOOT_RECEIVE = 1_000_000


def shares(values: list[int]) -> tuple[int, float, int]:
    """(index of the largest, its share, total)."""
    total = sum(values)
    top = max(range(len(values)), key=lambda i: values[i])
    return top, (values[top] / total if total else 0.0), total


def not_spread(nics: dict[str, dict[str, int]], minimum: int) -> list[tuple[str, str, dict[str, int]]]:
    """[(nic, hottest queue, queues)] for every NIC with at least `minimum` counts whose hottest queue
    took QUEUE_SHARE of them, or QUEUE_SKEW_MIN_SHARE and QUEUE_SKEW times the median of the others."""
    out = []
    for nic, queues in sorted(nics.items()):
        total = sum(queues.values())
        top = max(queues, key=queues.get)
        others = sorted(v for k, v in queues.items() if k != top)
        median = others[len(others) // 2]
        share = queues[top] / total if total else 0.0
        skewed = share >= QUEUE_SKEW_MIN_SHARE and queues[top] >= QUEUE_SKEW * max(median, 1)
        if total >= minimum and (share >= QUEUE_SHARE or skewed):
            out.append((nic, top, queues))
    return out


def skewed_queues(interrupts: dict[str, int]) -> list[tuple[str, str, dict[str, int]]]:
    """[(nic, hottest queue, queues)] for every NIC whose receive queues' interrupts are not spread."""
    return not_spread(rx_groups(interrupts), MIN_QUEUE_INTERRUPTS)


def network(facts: Facts, name: str) -> bool:
    """A network interrupt source; a USB host controller (xhci-hcd:usbN) only when the paste names a
    USB NIC driver (a USB NIC's interrupts are its host controller's)."""
    return is_network(name, interfaces(facts)) or (bool(facts.usb_nic_driver) and is_usb_host(name))


def interfaces(facts: Facts) -> set[str]:
    """The interface names the paste shows besides the interrupts (ifconfig, ethtool -S/-g, sysfs)."""
    return {*facts.nic_names, *facts.rx_rings, *facts.queue_packets, *facts.rx_packets, *facts.rx_dropped}


def skew(facts: Facts) -> tuple[list[str], int | None, int]:
    """(evidence, hot CPU, volume) of the network's receive work landing on one CPU of several: every
    NIC interrupt on CPU0 (the Linux default without irqbalance; OpenWrt routers), or softnet_stat/NET_RX
    counting nearly all packets (and time_squeeze) on one CPU (a vmxnet3 VM, coreos/bugs#2135)."""
    found, volume = [], 0
    net = {name: counts for name, counts in facts.irq_cpu.items() if network(facts, name) and counts}
    width = max((len(c) for c in net.values()), default=0)
    hot_cpu = None
    if width >= 2:
        per_cpu = [sum(c[i] for c in net.values() if i < len(c)) for i in range(width)]
        cpu, share, total = shares(per_cpu)
        volume = total
        explained = skewed_queues({name: sum(counts) for name, counts in net.items()})
        from_hot_queue = sum(net[top][cpu] for _, top, _ in explained)
        if total >= MIN_QUEUE_INTERRUPTS and share >= QUEUE_SHARE and from_hot_queue < QUEUE_SHARE * per_cpu[cpu]:
            hot_cpu = cpu
            names = [n for n in sorted(net, key=lambda n: -net[n][cpu]) if net[n][cpu]][:4]
            found.append(f"CPU {cpu} took {share * 100:.0f}% of the {total:,} network interrupts on {width} CPUs "
                         f"({', '.join(f'{n} {net[n][cpu]:,}' for n in names)}) [{facts.irq_source}]")
    rows = facts.softnet_cpu
    if len(rows) >= 2:
        cpu, share, total = shares([r["processed"] for r in rows])
        volume = max(volume, total)
        squeezed, squeeze_share, squeezes = shares([r["time_squeeze"] for r in rows])
        parts = []
        if total >= MIN_SOFTNET_PACKETS and share >= QUEUE_SHARE:
            parts.append(f"CPU {rows[cpu]['cpu']} processed {share * 100:.0f}% of {total:,} packets on "
                         f"{len(rows)} CPUs")
        if squeezes >= MIN_TIME_SQUEEZE and squeeze_share >= QUEUE_SHARE:
            own = rows[squeezed]["time_squeeze"]
            parts.append(f"CPU {rows[squeezed]['cpu']} ran out of budget (time_squeeze) {own:,} times against "
                         f"{squeezes - own:,} "
                         f"on the other {len(rows) - 1} CPUs")
        if parts:
            hot_cpu = rows[cpu if share >= QUEUE_SHARE else squeezed]["cpu"] if hot_cpu is None else hot_cpu
            found.append("softnet_stat: " + ", and ".join(parts))
    if len(facts.net_rx_cpu) >= 2:
        cpu, share, total = shares(facts.net_rx_cpu)
        volume = max(volume, total)
        if total >= MIN_SOFTNET_PACKETS and share >= QUEUE_SHARE:
            hot_cpu = cpu if hot_cpu is None else hot_cpu
            found.append(f"/proc/softirqs: CPU {cpu} ran {share * 100:.0f}% of {total:,} NET_RX softirqs")
    return found, hot_cpu, volume


def pinned_nics(facts: Facts) -> list[tuple[str, int, float, int]]:
    """[(interface, its CPU, its share there, interrupts)], busiest first, when the network interrupts come from
    single-vector NICs each served by one CPU (QUEUE_SHARE of its interrupts there) and those carry
    QUEUE_SHARE of them all: the work is spread over NICs but never within one, so one busy NIC is one
    busy CPU (rigacci.org "ksoftirqd": net0's IRQ on CPU1 kept ksoftirqd/1 at 100%). Multi-queue NICs
    are irq-one-queue's; all NICs on one CPU is skew()'s. Empty otherwise."""
    net = {name: counts for name, counts in facts.irq_cpu.items() if network(facts, name) and counts}
    if max((len(c) for c in net.values()), default=0) < 2 or skew(facts)[1] is not None:
        return []
    pinned = []
    for name, counts in net.items():
        cpu, share, total = shares(counts)
        if queue_of(name) is None and total >= MIN_QUEUE_INTERRUPTS and share >= QUEUE_SHARE:
            pinned.append((name, cpu, share, total))
    if sum(p[3] for p in pinned) < QUEUE_SHARE * sum(sum(c) for c in net.values()):
        return []
    return sorted(pinned, key=lambda p: -p[3])


def harmless(facts: Facts, volume: int) -> str | None:
    """Why a skew since boot is not a limit: harm counters were pasted and show none, or so little
    traffic passed that it cannot have limited anything; None when it may be one."""
    harm, clean = harm_shown(facts)
    if not facts.irq_since_boot or harm or not (clean or volume < MIN_SINCE_BOOT_RECEIVE):
        return None
    return ", ".join(clean) if clean else f"only {volume:,} since boot: the box has barely carried traffic"


def harm_shown(facts: Facts) -> tuple[list[str], list[str]]:
    """(harm shown, harm checked and absent) for receive work piled on one CPU: drops (softnet_stat,
    NIC, stack), time_squeeze of MIN_TIME_SQUEEZE or more on one CPU, a saturated CPU or thread."""
    harm, clean = [], []
    rows = facts.softnet_cpu
    dropped = sum(facts.stack_drops.values()) + sum(facts.nic_drops.values())
    if dropped and not (facts.nic_packets and dropped < NEGLIGIBLE_DROP_SHARE * facts.nic_packets):
        harm.append(f"{dropped:,} packets dropped ({listed({**facts.stack_drops, **facts.nic_drops})})")
    elif facts.drops_known or rows:
        clean.append("no drops")
    if rows:
        squeezed = max(rows, key=lambda r: r["time_squeeze"])
        if squeezed["time_squeeze"] >= MIN_TIME_SQUEEZE:
            harm.append(f"time_squeeze {squeezed['time_squeeze']:,} on CPU {squeezed['cpu']}")
        else:
            clean.append(f"time_squeeze at most {squeezed['time_squeeze']:,} per CPU (under {MIN_TIME_SQUEEZE})")
    busiest = max((c["busy_pct"] for c in facts.cpus), default=None)
    thread = facts.threads[0]["pct"] if facts.threads else None
    if (busiest or 0) >= SATURATED_PCT or (thread or 0) >= SATURATED_PCT or busy.total_saturated(facts):
        harm.append("a CPU saturated")
    elif busiest is not None or thread is not None or facts.cpu_total is not None:
        clean.append("no CPU saturated")
    return harm, clean


def skewed_packets(nics: dict[str, dict[str, int]]) -> list[tuple[str, str, dict[str, int]]]:
    """[(nic, hottest queue, queues)] for every NIC whose per-queue receive packet counters (ethtool -S)
    are not spread: the same shares and skew as the interrupts, on packets."""
    return not_spread(nics, MIN_SOFTNET_PACKETS)


def listed(values: dict[str, int]) -> str:
    return ", ".join(f"{name} {count:,}" for name, count in sorted(values.items(), key=lambda kv: -kv[1])[:4])


def drop_rate_trickle(facts: Facts, when: str) -> Verdict | None:
    """NIC drops read as rates (sar -n EDEV) with no packet rate beside them, under MIN_DROP_RATE per
    second: fewer than 1 in 10,000 packets at any rate a router under test carries — a note."""
    total = sum(facts.nic_drops.values())
    if not facts.drop_rates or facts.nic_packets or total >= MIN_DROP_RATE:
        return None
    return Verdict("nic-drops", "note", "a trickle of NIC drops", f"{listed(facts.nic_drops)} {when}: under "
                   f"{MIN_DROP_RATE:.0f} per second, fewer than 1 in 10,000 packets at any rate above "
                   f"{MIN_DROP_RATE / NEGLIGIBLE_DROP_SHARE:,.0f} packets/s", "not a throughput limit; `sar -n DEV` "
                   "beside it gives the packet rate to compare with")


def backlog_drops_few(facts: Facts, when: str) -> Verdict | None:
    """softnet_stat drops under NEGLIGIBLE_DROP_SHARE of the packets the same rows processed (the same
    window, or both since boot): a note to watch under load, not the limit."""
    processed = sum(row.get("processed", 0) for row in facts.softnet_cpu)
    total = sum(facts.stack_drops.values())
    if set(facts.stack_drops) != {STACK_DROP_KEYS["softnet_dropped"]} or not processed or \
            total >= NEGLIGIBLE_DROP_SHARE * processed:
        return None
    return Verdict("stack-queue-drops", "note", "a few drops in the input backlog",
                   f"{listed(facts.stack_drops)} {when} = {100 * total / processed:.4f}% of the {processed:,} "
                   "packets the same counters processed", "not a throughput limit (under 1 in 10,000 packets); "
                   "watch it under load: `cat /proc/net/softnet_stat` before and after a test")
