"""What kind of time keeps a CPU busy, so that the advice fits it. Three kinds are told apart:

- hardware-interrupt time (top's `hi`, Linux): NAPI (Documentation/networking/napi.rst) moves a
  NIC's packet work out of the hard interrupt into softirq, so a loaded router shows `si` and
  little `hi`. Hard-IRQ time adding up to about one CPU is a device interrupting without pause — an
  interrupt storm from a driver or device bug (tobiasBora/MT7630E_3.16#1: ksoftirqd/0 at 100%,
  24.8% `hi` with the Wi-Fi driver loaded and no traffic). Not on FreeBSD/OpenBSD: their
  `interrupt` column is the interrupt threads that carry the network stack itself.
- a process's own time (user and system): a program such as netmap-ipfw's kipfw, one thread that
  cannot use a second CPU (luigirizzo/netmap-ipfw#3: CPU 0 at 31% user + 56% system, the other three
  idle). NIC queues and interrupt affinity do not move that work.
- network stack time (softirq, FreeBSD interrupt threads): what queue and IRQ spreading is for.

Pure: Facts in, evidence text (or None) out; the rules in rules.py word the verdicts.
"""

from __future__ import annotations

import re

from linerate.diagnose.facts import Facts
from linerate.diagnose.verdict import SATURATED_PCT, Verdict

NO_PACKET_WORK_PCT = 1.0  # softirq + interrupt time below this: the CPUs took no packet work while read

IRQ_STORM_CPUS = 0.7  # hardware-interrupt time worth this many CPUs (or one CPU this much of its time)
IRQ_STORM_MIN_TOTAL_PCT = 10.0  # top's all-CPUs hi, CPU count unknown: at least a CPU's worth on <= 10 CPUs
PROCESS_USER_MIN_PCT = 10.0  # a saturated CPU with this much user time runs a program, not only the stack
# kernel threads whose time is the network stack or interrupts, not a program's
KERNEL_THREAD = re.compile(r"^\[?(ksoftirqd|kworker|irq/|napi/|migration|rcu|intr|kernel|if_io_tqg|if_config_tqg|"
                           r"swi[0-9]|netisr|idle|softnet|systq)")
LINUX_FAMILIES = ("linux", "openwrt")


def total_saturated(facts: Facts) -> bool:
    """Only top's all-CPUs line was pasted and it leaves (nearly) nothing idle: every CPU is busy."""
    return not facts.cpus and facts.cpu_total is not None and facts.cpu_total["busy_pct"] >= SATURATED_PCT


def irq_storm(facts: Facts) -> str | None:
    """Evidence that hardware-interrupt time alone is about a CPU's worth (Linux) and that something really
    interrupts: interrupt counts pasted, or a thread pegged beside it; else None (irq_time_only says it)."""
    evidence = _irq_time(facts)
    return evidence if evidence is not None and corroborated(facts) else None


def irq_time_only(facts: Facts) -> str | None:
    """The same hardware-interrupt time with nothing else to show it: CPU accounting alone, which kernels have
    got wrong (MIPS/CI20_linux#35: on 3.18 an idle second CPU's time was charged to irq, 49.8% `hi`)."""
    evidence = _irq_time(facts)
    return evidence if evidence is not None and not corroborated(facts) else None


def corroborated(facts: Facts) -> bool:
    """Something besides the CPU time accounting shows interrupt work: interrupt counts, or a busy thread."""
    thread = facts.threads[0] if facts.threads else None
    return bool(facts.interrupts or facts.irq_cpu) or (thread is not None and thread["pct"] >= 90.0)


def _irq_time(facts: Facts) -> str | None:
    """Evidence that hardware-interrupt time alone is about a CPU's worth (Linux), else None."""
    if facts.os_family not in LINUX_FAMILIES or facts.shared_kernel:
        return None
    hot = max(facts.cpus, key=lambda c: c.get("interrupt_pct", 0.0)) if facts.cpus else None
    if hot is not None and "interrupt_pct" in hot:
        total_cpus = sum(c.get("interrupt_pct", 0.0) for c in facts.cpus) / 100
        if hot["interrupt_pct"] >= IRQ_STORM_CPUS * 100 or total_cpus >= IRQ_STORM_CPUS:
            name = hot.get("cpu_label") or f"CPU {hot['cpu']}"
            return (f"hardware-interrupt time {hot['interrupt_pct']:.0f}% on {name}, {total_cpus:.1f} CPUs' worth "
                    f"over all {len(facts.cpus)} [{facts.cpu_source}]")
        return None
    total = facts.cpu_total
    if facts.cpus or total is None or total.get("interrupt_pct", 0.0) < IRQ_STORM_MIN_TOTAL_PCT:
        return None
    hi, busy = total["interrupt_pct"], total["busy_pct"]
    thread = facts.threads[0] if facts.threads else None
    pegged = thread is not None and thread["pct"] >= 90.0
    if hi < 0.5 * busy and not pegged:
        return None  # a busy box that also spends some time in hard IRQs: cpu-bound/single-core-bound say it
    evidence = (f"top's all-CPUs line: {hi:.1f}% hi (hardware interrupts) of {busy:.1f}% busy — a whole CPU's "
                f"worth on a {100 / hi:.0f}-CPU box (per-CPU lines not pasted)")
    if pegged:
        evidence += f"; {thread['name']} at {thread['pct']:.0f}% of one CPU"
    return evidence


def storm_advice() -> str:
    return ("find the interrupt: `grep . /proc/interrupts; sleep 1; grep . /proc/interrupts` — the line that grows by "
            "tens of thousands a second with little traffic — and `dmesg | grep -i 'nobody cared'`; it is the device or "
            "its driver (a driver bug, firmware, a shared level-triggered line nobody acknowledges): update or replace the "
            "driver/firmware and test with the module unloaded (modprobe -r) to confirm; "
            "spreading queues or IRQ affinity only moves the storm to another CPU")


def accounting_advice() -> str:
    return ("check that the interrupts are real before chasing a device: `grep . /proc/interrupts; sleep 1; grep . "
            "/proc/interrupts` - a storm is a line growing by tens of thousands a second - and whether that CPU "
            "runs anything (`top -H`, a pegged ksoftirqd or irq/ thread); if nothing interrupts that often, the time "
            "is mis-accounted: kernels have charged an idle CPU's time to irq (MIPS/CI20_linux#35, Linux 3.18, fixed "
            "by later patches) - update the kernel, and judge the load from /proc/interrupts and throughput instead")


def program(facts: Facts, hot: dict[str, float] | None) -> str | None:
    """The saturated CPU runs a program (user/system time), not the network stack: its description,
    naming the busiest userland thread when the paste has a thread table; else None."""
    thread = next((t for t in facts.threads if not KERNEL_THREAD.match(t["name"])), None)
    if hot is not None:
        own = hot.get("user_pct", 0.0) + hot.get("system_pct", 0.0)
        stack = hot.get("interrupt_pct", 0.0) + hot.get("softirq_pct", 0.0)
        if hot.get("user_pct", 0.0) < PROCESS_USER_MIN_PCT or own <= stack:
            return None
        what = f"its time is a program's ({hot.get('user_pct', 0.0):.0f}% user, {hot.get('system_pct', 0.0):.0f}% system, " \
               f"{stack:.0f}% interrupt/softirq)"
    elif thread is not None and facts.threads[0] is thread and thread["pct"] >= 90.0:
        what = "the busiest thread is a program, not a kernel network thread"
    else:
        return None
    if thread is not None and thread["pct"] >= 50.0:
        return f"{what}: {thread['name']} at {thread['pct']:.0f}%"
    return f"{what}; which program is not in the paste ({_thread_command(facts)} names it)"


def _thread_command(facts: Facts) -> str:
    return "`top -H`" if facts.os_family in LINUX_FAMILIES else "`top -SH`"


def program_advice(facts: Facts) -> str:
    return ("the work is one program's own CPU time, and a single-threaded program runs on one CPU however many the box "
            "has: NIC queues, RSS, interrupt affinity or netisr settings will not move it. Check its threads "
            f"({_thread_command(facts)}); run several instances or workers on separate CPUs where the program allows it (one per "
            "interface pair or per queue), use its multi-threaded mode if it has one, or give it a faster core")


def userspace_only(facts: Facts, evidence: str) -> Verdict | None:
    """Every CPU busy, but with user-space programs and no packet work at all (softirq and interrupts
    under NO_PACKET_WORK_PCT): nothing was forwarded through these CPUs while the paste was read (a box
    that forwards in hardware, or was idle), so it is a note, not the limit of a throughput test."""
    shares = facts.cpu_total if total_saturated(facts) else {
        key: sum(c.get(key, 0.0) for c in facts.cpus) / len(facts.cpus)
        for key in ("softirq_pct", "interrupt_pct", "user_pct", "busy_pct")}
    packet_work = shares.get("softirq_pct", 0.0) + shares.get("interrupt_pct", 0.0)
    if packet_work >= NO_PACKET_WORK_PCT or shares.get("user_pct", 0.0) < shares.get("busy_pct", 0.0) / 2:
        return None
    programs = ", ".join(sorted({t["name"].split()[0] for t in facts.threads[:4]})) or "user-space programs"
    return Verdict("cpu-bound", "note", "all DUT CPUs busy with user-space programs, none with packet work",
                   f"{evidence}; softirq and interrupts {packet_work:.0f}%: no packet went through these CPUs while "
                   f"this was read", f"{programs} hold the CPUs: a limit only for traffic that passes through them "
                   "(a VPN, an IPS, a proxy); read the box under load to see what forwarding costs")
