"""`linerate diagnose --before F --after F --os OS`: two pasted snapshots of a firewall (the output
of `linerate diagnose --snapshot-script --os OS`, run while a test runs and again before it ends)
turned into Facts. Counter deltas need both snapshots; with only --after, per-CPU load comes from
top and drop counters are totals since boot — the facts say so."""

from __future__ import annotations

from linerate.diagnose.facts import Facts, cpus_from_threads, drops_from_counters
from linerate.dut.base import OS_FAMILY, Snapshot, cpu_delta, driver_for, parse_snapshot
from linerate.dut.sections import family_of, shell_script
from linerate.errors import ConfigError


def snapshot_script(os_name: str) -> str:
    driver = driver_for(OS_FAMILY[os_name])
    return shell_script([list(p.argv) for p in driver.offline_probes()], driver.family)


def read_snapshot(text: str, os_name: str, source: str) -> Snapshot:
    from linerate.dut.sections import FORMAT_HELP, split

    family = OS_FAMILY[os_name]
    named = family_of(text)
    if named is not None and named != family:
        raise ConfigError(source, f"is a snapshot of a {named} host, not {os_name} ({family}); pass the right --os")
    if not split(text):
        raise ConfigError(source, f"has no snapshot sections; expected {FORMAT_HELP}")
    return parse_snapshot(text, driver_for(family).offline_probes())


def snapshot_facts(before: Snapshot | None, after: Snapshot, os_name: str) -> Facts:
    facts = Facts(os_family=OS_FAMILY[os_name])
    facts.threads = sorted((t for t in after.threads if not t["name"].startswith("idle")),
                           key=lambda t: -t["pct"])
    if before is not None and before.cpu and after.cpu and len(before.cpu) == len(after.cpu):
        facts.cpus = cpu_delta(before.cpu, after.cpu)
        facts.cpu_source = "CPU counters between the two snapshots"
    if not facts.cpus and after.top_cpu:
        facts.cpus, facts.cpu_source = after.top_cpu, "top's per-CPU lines in the after snapshot"
    if not facts.cpus and facts.threads:
        facts.cpus = cpus_from_threads(facts.threads)
        facts.cpu_source = "estimated from top's threads per CPU (top ran without -P)"
        if len(facts.cpus) < 2:
            facts.cpus = []
    usable_before = before is not None and before.counters and not _went_backwards(before, after)
    if usable_before:
        facts.interrupts = {k: v - before.interrupts.get(k, 0) for k, v in after.interrupts.items()}
        drops_from_counters({k: v - before.counters.get(k, 0) for k, v in after.counters.items()}, facts)
    else:
        facts.since_boot = True
        facts.interrupts = dict(after.interrupts)
        drops_from_counters(after.counters, facts)
    facts.nic_names = sorted(set(facts.nic_names) | set(after.interfaces))
    return facts


def _went_backwards(before: Snapshot, after: Snapshot) -> bool:
    """A counter that shrank means a reboot or a driver reload between the snapshots."""
    return any(after.counters.get(k, v) < v for k, v in before.counters.items())
