"""`linerate diagnose --before F --after F --os OS`: snapshots of a firewall or router turned into
Facts. A snapshot is either the output of `linerate diagnose --snapshot-script --os OS` (sections
under `### linerate:` headers, read by the OS driver's own parsers) or raw outputs a user pasted
from a forum thread or a shell (recognised by their content: diagnose/raw.py), or both.

Counter deltas need two readings of the same counters: a --before file, or the same table pasted
twice in one file (first = before, last = after). Otherwise per-CPU load comes from top/mpstat and
interrupts, softnet and drop counters are totals since boot — the facts, and the verdicts, say so.
Nothing is dropped silently: a section that is present but unreadable is reported as "section
present but not understood: <its first line>".
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field

from linerate.diagnose.facts import Facts, cpus_from_threads, drops_from_counters
from linerate.diagnose.raw import Reading, recognise
from linerate.dut.base import OS_FAMILY, Snapshot, cpu_delta
from linerate.dut.drivers import driver_for
from linerate.dut.parsers import ETHTOOL_DROP_COUNTERS
from linerate.dut.sections import FORMAT_HELP, command_line, family_of, outside, shell_line, split
from linerate.errors import ConfigError, ParseError

RAW_HELP = ("or raw output of /proc/interrupts, /proc/net/softnet_stat, /proc/softirqs, top, mpstat -P ALL, "
            "ethtool -S IF (per-queue packet counters, NIC-wide drop counters), ethtool -g IF, ifconfig (Linux), "
            "/sys/class/net/IF/statistics/*, sar -n DEV / -n EDEV, FreeBSD top -P / vmstat -i / sysctl hw.intrs / netstat -Q / "
            "netstat -i, pfctl -si / -sm, conntrack -S / -C, nf_conntrack_count / nf_conntrack_max")
BOM = "\ufeff"
LOG_KINDS = ("conntrack-log",)  # kernel log lines: events, never counters to difference as before and after
PER_CPU_SECTIONS = ("cat /proc/interrupts", "cat /proc/net/softnet_stat")  # also read per CPU


@dataclass
class Pasted:
    shot: Snapshot  # what the driver's parsers read from `### linerate:` sections
    reading: Reading  # what was recognised by content (raw pastes, per-CPU detail of sections)
    headered: bool
    problems: list[str] = field(default_factory=list)  # driver sections missing from a headered snapshot

    @property
    def not_understood(self) -> list[str]:
        return self.reading.not_understood


def snapshot_script(os_name: str) -> str:
    """The one line to paste into the DUT's shell (sh): it writes a uniquely named file and says where."""
    driver = driver_for(OS_FAMILY[os_name])
    return shell_line([list(p.argv) for p in driver.offline_probes()], driver.family)


def read_snapshot(text: str, os_name: str, source: str) -> Pasted:
    # Windows editors (Notepad) save UTF-8 with a byte order mark: read past it, and name it if nothing is read
    bom = text.startswith(BOM)
    text = text.lstrip(BOM)
    family = OS_FAMILY[os_name]
    named = family_of(text)
    if named is not None and named != family:
        raise ConfigError(source, f"is a snapshot of a {named} host, not {os_name} ({family}); pass the right --os")
    found = split(text)
    shot, reading, problems = Snapshot(raw=text), Reading(), []
    for probe in driver_for(family).offline_probes():
        output = found.get(command_line(probe.argv))
        if output is None:
            if found:
                problems.append(probe.unavailable)
            continue
        try:
            probe.parse(output, shot)
        except (ParseError, ValueError):
            fallback = recognise(output)
            if fallback:
                reading.merge(fallback)
            else:
                first = next((line.strip() for line in output.splitlines() if line.strip()), "(empty)")
                reading.not_understood.append(f"{command_line(probe.argv)}: {first[:80]}")
    for name in PER_CPU_SECTIONS:
        if name in found:
            detail = recognise(found[name])
            reading.merge(Reading(irq_tables=detail.irq_tables, softnet=detail.softnet, net_rx=detail.net_rx))
    pasted = recognise(outside(text))
    reading.merge(pasted)
    if not found and not pasted:
        hint = f" (not understood: {pasted.not_understood[0]})" if pasted.not_understood else ""
        if bom:
            hint += " (the file starts with a UTF-8 byte order mark, U+FEFF, which was skipped)"
        raise ConfigError(source, f"has no snapshot sections and no output linerate recognises{hint}; expected "
                          f"{FORMAT_HELP}, {RAW_HELP}")
    kinds = pasted.families
    if kinds and not _compatible(kinds, family):
        raise ConfigError(source, f"holds {'/'.join(sorted(kinds))} output, not {os_name} ({family}); pass the "
                          f"right --os")
    return Pasted(shot, reading, bool(found), problems)


def _compatible(kinds: set[str], family: str) -> bool:
    """Refuse only when nothing recognised can come from this OS: one block that merely looks like
    the other family's output must not sink a whole paste."""
    return any(kind == family or (kind == "bsd" and family in ("freebsd", "openbsd")) for kind in kinds)


def _window(before: list, after: list):
    """(earlier, later) readings of one counter kind: --before's last and --after's last, or the
    first and last display of --after; (None, later) when there is only one."""
    if before and after:
        return before[-1], after[-1]
    if len(after) >= 2:
        return after[0], after[-1]
    return None, (after[-1] if after else None)


def _same_counters(old: dict, new: dict) -> bool:
    """Two displays of the same table (a before and an after), not two different views of it
    (`grep eth` then the whole file): most of the later one's names are in the earlier one."""
    return bool(new) and sum(1 for name in new if name in old) >= 0.5 * len(new)


def _irq_displays(tables: list[tuple[int, bool, dict[str, list[int]]]]) -> list:
    """Displays of /proc/interrupts that are different views (a grep, then the whole file) are one
    reading: merged, the later one winning where both have a source."""
    merged: list = []
    for table in tables:
        if merged and not _same_counters(merged[-1][2], table[2]):
            ncpu, header, previous = merged[-1]
            merged[-1] = (max(ncpu, table[0]), header or table[1], {**previous, **table[2]})
        else:
            merged.append(table)
    return merged


def _per_cpu_delta(old: dict[str, list[int]], new: dict[str, list[int]]) -> dict[str, list[int]] | None:
    out = {}
    for name, counts in new.items():
        previous = old.get(name, [0] * len(counts))
        diff = [a - b for a, b in zip(counts, previous)]
        if any(d < 0 for d in diff):
            return None  # a counter went backwards: reboot or driver reload in between
        out[name] = diff
    return out


def _interrupts(facts: Facts, before: Reading | None, after: Reading) -> None:
    old, new = _window(_irq_displays(before.irq_tables) if before else [], _irq_displays(after.irq_tables))
    if old is not None and not _same_counters(old[2], new[2]):
        old = None
    if new is not None:
        ncpu, header, table = new
        delta = _per_cpu_delta(old[2], table) if old is not None else None
        facts.irq_cpu = delta if delta is not None else table
        facts.irq_since_boot = delta is None
        facts.interrupts = {name: sum(counts) for name, counts in facts.irq_cpu.items()}
        how = "" if header else f", no CPU header row: {ncpu} CPUs counted from its columns"
        facts.irq_source = f"/proc/interrupts{' between two readings' if delta is not None else ''}{how}"
        facts.interrupts_source = facts.irq_source
        return
    old_v, new_v = _window(before.vmstat if before else [], after.vmstat)
    if old_v is not None and not _same_counters(old_v, new_v):
        old_v, new_v = None, {**old_v, **new_v}
    if new_v is not None:
        delta = {k: v - old_v.get(k, 0) for k, v in new_v.items()} if old_v is not None else None
        usable = delta is not None and all(v >= 0 for v in delta.values())
        facts.interrupts = delta if usable else dict(new_v)
        facts.irq_since_boot = not usable
        facts.interrupts_source = "vmstat -i" + (" between two readings" if usable else "")
    if after.intr_bindings:
        width = max(cpu for cpu, _ in after.intr_bindings.values()) + 1
        facts.irq_cpu = {name: [count if i == cpu else 0 for i in range(width)]
                         for name, (cpu, count) in after.intr_bindings.items()}
        facts.irq_since_boot = True
        facts.irq_source = "hw.intrs: each source's count at the CPU it is bound to now"
        if not facts.interrupts:
            facts.interrupts = {name: count for name, (_, count) in after.intr_bindings.items()}
            facts.interrupts_source = "hw.intrs"


def _softnet(facts: Facts, before: Reading | None, after: Reading) -> None:
    old, new = _window(before.softnet if before else [], after.softnet)
    if new is not None:
        rows = new
        if old is not None and len(old) == len(new):
            diff = [{"cpu": b["cpu"], **{k: b[k] - a[k] for k in ("processed", "dropped", "time_squeeze")}}
                    for a, b in zip(old, new)]
            if all(r[k] >= 0 for r in diff for k in ("processed", "dropped", "time_squeeze")):
                rows = diff
        facts.softnet_cpu = rows
        facts.irq_since_boot = facts.irq_since_boot or rows is new

    old_n, new_n = _window(before.net_rx if before else [], after.net_rx)
    if new_n is not None:
        diff = [b - a for a, b in zip(old_n, new_n)] if old_n is not None else None
        facts.net_rx_cpu = diff if diff is not None and min(diff) >= 0 else new_n
        facts.irq_since_boot = facts.irq_since_boot or facts.net_rx_cpu is new_n


def _queue_packets(facts: Facts, before: Reading | None, after: Reading) -> None:
    """ethtool -S per-queue receive packet counters per NIC: a window when two readings of the same
    NIC are there (--before, or the same paste twice), else totals since the driver loaded."""
    nics: dict[str, list[dict[tuple[str, int], int]]] = {}
    earlier: dict[str, list[dict[tuple[str, int], int]]] = {}
    for display in after.queue_packets:
        for nic, queues in display.items():
            nics.setdefault(nic, []).append(queues)
    for display in (before.queue_packets if before else []):
        for nic, queues in display.items():
            earlier.setdefault(nic, []).append(queues)
    for nic, displays in nics.items():
        old, new = _window(earlier.get(nic, []), displays)
        rx = {index: count for (direction, index), count in new.items() if direction == "rx"}
        delta = None
        if old is not None:
            delta = {index: count - old.get(("rx", index), 0) for index, count in rx.items()}
            delta = delta if all(v >= 0 for v in delta.values()) else None  # driver reloaded in between
        counts = delta if delta is not None else rx
        if len(counts) >= 2:
            facts.queue_packets[nic] = {f"rx queue {index}": count for index, count in sorted(counts.items())}
            when = ("between two readings" if delta is not None else
                    "totals since boot (one reading; the counters start when the driver loads)")
            facts.queue_packets_source = f"ethtool -S {nic}: packet counters per queue, {when}"


def _nic_counters(facts: Facts, before: Reading | None, after: Reading) -> bool:
    """ethtool -S NIC-wide drop counters (rx_missed_errors, rx_no_buffer_count ...) into the NIC drops,
    with the NIC's packet counters beside them: the difference of two readings of the same NIC when
    there are two, else totals since the driver loaded. True when every NIC had a window."""
    nics: dict[str, list[dict[str, int]]] = {}
    earlier: dict[str, list[dict[str, int]]] = {}
    for display in after.nic_counters:
        for nic, values in display.items():
            nics.setdefault(nic, []).append(values)
    for display in (before.nic_counters if before else []):
        for nic, values in display.items():
            earlier.setdefault(nic, []).append(values)
    windowed = bool(nics)
    for nic, displays in nics.items():
        old, new = _window(earlier.get(nic, []), displays)
        values = dict(new)
        if old is not None:
            delta = {name: value - old.get(name, 0) for name, value in new.items()}
            if all(v >= 0 for v in delta.values()):
                values = delta
            else:
                old = None  # driver reloaded in between
        windowed = windowed and old is not None
        facts.drops_known = True
        for name, value in values.items():
            if name in ETHTOOL_DROP_COUNTERS and value > 0:
                label = f"{nic} {name}"
                facts.nic_drops[label] = facts.nic_drops.get(label, 0) + value
        packets = sum(values.get(name, 0) for name in ("rx_packets", "tx_packets"))
        if packets:
            facts.nic_packets += packets
    return windowed


# rtnl_link_stats64 counters of drops at the NIC itself (include/uapi/linux/if_link.h: rx_missed_errors "the
# device ran out of buffers", rx_fifo_errors / rx_over_errors its FIFO or ring overflowing)
LINK_NIC_DROPS = ("rx_missed_errors", "rx_fifo_errors", "rx_over_errors")


def _link_stats(facts: Facts, before: Reading | None, after: Reading) -> None:
    """ifconfig and /sys/class/net/IF/statistics: NIC drops (rx_missed_errors, rx_fifo_errors) into the NIC
    drops, rx_dropped apart (the kernel's, not the NIC's). ifconfig's drop column is rx_dropped +
    rx_missed_errors (/proc/net/dev, net/core/net-procfs.c): split when either is read, else unclear. A
    window when two readings of a NIC are there, else totals since boot; ethtool -g's ring sizes as read."""
    for nic, rings in after.rings.items():
        if "rx" in rings and rings.get("rx_max"):
            facts.rx_rings[nic] = (rings["rx"], rings["rx_max"])
    nics: dict[str, list[dict[str, int]]] = {}
    earlier: dict[str, list[dict[str, int]]] = {}
    for target, displays in ((nics, after.link_stats), (earlier, before.link_stats if before else [])):
        for display in displays:
            for nic, values in display.items():
                if target.get(nic) and not set(values) & set(target[nic][-1]):
                    target[nic][-1] = {**target[nic][-1], **values}  # another counter of the same reading
                else:
                    target.setdefault(nic, []).append(dict(values))
    ethtool = {nic: values for display in after.nic_counters for nic, values in display.items()}
    for nic, displays in nics.items():
        old, new = _window(earlier.get(nic, []), displays)
        values = new
        if old is not None:
            delta = {name: value - old[name] for name, value in new.items() if name in old}
            values = delta if delta and all(v >= 0 for v in delta.values()) else new
        facts.drops_known = True
        for name in LINK_NIC_DROPS:
            if values.get(name, 0) > 0:
                label = f"{nic} {name}"
                facts.nic_drops[label] = max(facts.nic_drops.get(label, 0), values[name])
        missed = values.get("rx_missed_errors")
        if missed is None:  # ethtool -S of the same NIC (unnamed when no command line was pasted above it)
            shown = ethtool.get(nic) or (ethtool.get("the NIC") if len(nics) == 1 else None) or {}
            missed = shown.get("rx_missed_errors", shown.get("rx_missed"))
        combined = values.get("rx_dropped_missed")
        dropped = values.get("rx_dropped")
        if dropped is None and combined is not None and missed is not None:
            dropped = max(combined - missed, 0)
        if dropped:
            facts.rx_dropped[nic] = dropped
        elif dropped is None and combined:
            facts.rx_dropped_unclear[nic] = combined
        if values.get("rx_packets"):
            facts.rx_packets[nic] = values["rx_packets"]
            if any(label.startswith(f"{nic} ") for label in facts.nic_drops) and not after.nic_counters:
                facts.nic_packets += values["rx_packets"] + values.get("tx_packets", 0)


def _interval_counters(facts: Facts, after: Reading) -> bool:
    """netstat -w tables: each row is already a difference over one interval, so their sums are a
    window. The named interfaces' tables are used; the all-interfaces '(Total)' table only when no
    interface was named (it would count the same drops twice). True when one was read."""
    tables = [(nic, rows) for nic, rows in after.interval_counters if nic != "(Total)"] or after.interval_counters
    for nic, rows in tables:
        label = "all interfaces" if nic == "(Total)" else nic
        sums = {key: sum(row.get(key, 0) for row in rows) for key in rows[0]}
        drops_from_counters({f"{label}_{key}": value for key, value in sums.items()
                             if key in ("rx_errors", "rx_dropped", "tx_errors", "tx_dropped")}, facts)
        facts.nic_packets += sums.get("rx_packets", 0) + sums.get("tx_packets", 0)
    return bool(tables)


def _cpus(facts: Facts, before: Pasted | None, after: Pasted) -> None:
    shot_b, shot_a = (before.shot if before else None), after.shot
    if shot_b is not None and shot_b.cpu and shot_a.cpu and len(shot_b.cpu) == len(shot_a.cpu):
        facts.cpus, facts.cpu_source = cpu_delta(shot_b.cpu, shot_a.cpu), "CPU counters between the two snapshots"
        return
    old, new = _window(before.reading.proc_stat if before else [], after.reading.proc_stat)
    if old is not None and len(old) == len(new):
        facts.cpus, facts.cpu_source = cpu_delta(old, new), "/proc/stat between two readings"
        return
    facts.cpu_total = after.reading.cpu_total
    if shot_a.top_cpu:
        facts.cpus, facts.cpu_source = shot_a.top_cpu, "top's per-CPU lines in the after snapshot"
    elif after.reading.top_cpu:
        facts.cpus, facts.cpu_source = after.reading.top_cpu, after.reading.cpu_source
    elif facts.threads and facts.cpu_total is None and not facts.threads[0].get("of_all_cpus"):
        # threads' time leaves out softirq work run outside ksoftirqd: top's all-CPUs line, when pasted, is the
        # measured load and wins over an estimate from threads
        estimated = cpus_from_threads(facts.threads)
        if len(estimated) >= 2:
            facts.cpus = estimated
            facts.cpu_source = "estimated from top's threads per CPU (top ran without -P)"


def _per_cpu_shares(facts: Facts) -> None:
    """BusyBox top's %CPU is a share of every CPU together: with the CPU count known (per-CPU lines or
    counters), each thread's figure becomes a share of one CPU like procps'; else it stays marked."""
    if facts.cpus and any(t.get("of_all_cpus") for t in facts.threads):
        count = len(facts.cpus)
        facts.threads = [{**{k: v for k, v in t.items() if k != "of_all_cpus"}, "pct": _one_cpu_share(t, count)}
                         if t.get("of_all_cpus") else t for t in facts.threads]


def _one_cpu_share(thread: dict, count: int) -> float:
    """A BusyBox share of all CPUs as a share of one. A kernel thread bound to one CPU (ksoftirqd/N,
    kworker/N:M, migration/N) never runs on two at once: top's sampling can round it past a whole CPU
    (28% of 4 CPUs read as 112%), which is one CPU, not several."""
    pct = round(thread["pct"] * count, 1)
    pinned = re.fullmatch(r"\[?(ksoftirqd|kworker|migration|cpuhp|irq)/[0-9][^\s\]]*\]?", thread["name"].split()[0])
    return min(pct, 100.0) if pinned else pct


def _state(facts: Facts, before: Reading | None, after: Reading) -> None:
    """Connection-state counters from raw pfctl/conntrack pastes: the last output of each kind is the
    after; the --before file's, or the first of a kind pasted twice, the before (else since boot)."""
    earlier: dict[str, int] = {}
    for kind, displays in after.state.items():
        if kind in LOG_KINDS:  # each excerpt holds other events (another host, another hour): all count
            for key in displays[-1]:
                facts.state[key] = sum(display.get(key, 0) for display in displays)
            continue
        facts.state.update(displays[-1])
        old = before.state.get(kind, []) if before else []
        if old:
            earlier.update(old[-1])
        elif len(displays) >= 2:
            earlier.update(displays[0])
    facts.state_before = earlier or None


def snapshot_facts(before: Pasted | None, after: Pasted, os_name: str) -> Facts:
    facts = Facts(os_family=OS_FAMILY[os_name])
    threads = after.shot.threads or after.reading.threads
    facts.threads = sorted((t for t in threads if not t["name"].startswith("idle")), key=lambda t: -t["pct"])
    _cpus(facts, before, after)
    _per_cpu_shares(facts)
    counters_a = {**after.reading.counters, **after.shot.counters}
    counters_b = {**before.reading.counters, **before.shot.counters} if before else {}
    usable_before = bool(counters_b) and not any(counters_a.get(k, v) < v for k, v in counters_b.items())
    if usable_before:
        drops_from_counters({k: v - counters_b.get(k, 0) for k, v in counters_a.items()}, facts)
    else:
        facts.since_boot = True
        drops_from_counters(counters_a, facts)
    if after.shot.interrupts:
        if before is not None and before.shot.interrupts and usable_before:
            facts.interrupts = {k: v - before.shot.interrupts.get(k, 0) for k, v in after.shot.interrupts.items()}
        else:
            facts.interrupts, facts.irq_since_boot = dict(after.shot.interrupts), True
        facts.interrupts_source = "vmstat -i" if facts.os_family != "linux" else "/proc/interrupts"
    reading_b = before.reading if before else None
    saved = dict(facts.interrupts), facts.interrupts_source, facts.irq_since_boot
    _interrupts(facts, reading_b, after.reading)
    if not facts.interrupts and saved[0]:
        facts.interrupts, facts.interrupts_source, facts.irq_since_boot = saved
    _softnet(facts, reading_b, after.reading)
    _queue_packets(facts, reading_b, after.reading)
    windowed = _nic_counters(facts, reading_b, after.reading)
    _link_stats(facts, reading_b, after.reading)
    intervals = _interval_counters(facts, after.reading)
    facts.drop_rates = after.reading.drop_rates
    if (windowed or intervals) and not counters_a:
        facts.since_boot = False
    if facts.softnet_cpu and "softnet_dropped" not in counters_a:  # raw softnet_stat: its drops too
        drops_from_counters({"softnet_dropped": sum(r["dropped"] for r in facts.softnet_cpu)}, facts)
    _state(facts, reading_b, after.reading)
    facts.usb_nic_driver = after.reading.usb_nic_driver or (before.reading.usb_nic_driver if before else "")
    facts.nic_names = sorted(set(facts.nic_names) | set(after.shot.interfaces))
    return facts
