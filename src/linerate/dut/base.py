"""DutDriver: what linerate reads from and changes on a device under test, one driver per OS
family (linux; freebsd for FreeBSD, pfSense and OPNsense; openbsd). A driver only builds argv
lists and parses outputs (dut/parsers.py); the Executor it is handed decides where they run (a
namespace, an SSH session, the FakeExecutor in tests).

A Snapshot holds cumulative counters; telemetry_delta() turns the two read around a trial into the
figures stored with it: counter deltas, per-CPU busy split, interrupts per source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from linerate.dut.parsers import CPU_FIELDS
from linerate.exec import Executor

FAMILIES = ("linux", "freebsd", "openbsd")
OS_FAMILY = {"linux": "linux", "openwrt": "linux", "freebsd": "freebsd", "pfsense": "freebsd",
             "opnsense": "freebsd", "openbsd": "openbsd"}
OFFLOAD_NAMES = ("rx", "tx", "tso", "gso", "gro", "lro")


@dataclass
class Snapshot:
    counters: dict[str, int] = field(default_factory=dict)
    cpu: list[dict[str, int]] = field(default_factory=list)
    interrupts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # telemetry a host could not give


class DutDriver(Protocol):
    family: str

    def snapshot(self, host: Executor) -> Snapshot: ...

    def read_sysctl(self, host: Executor, name: str) -> str: ...

    def set_sysctl(self, host: Executor, name: str, value: str) -> None: ...

    def boot_time_only(self, host: Executor, name: str) -> bool: ...

    def read_offloads(self, host: Executor, ifname: str) -> dict[str, str]: ...

    def set_offload(self, host: Executor, ifname: str, feature: str, state: str) -> None: ...

    def telemetry_commands(self) -> list[list[str]]: ...


def cpu_delta(before: list[dict[str, int]], after: list[dict[str, int]]) -> list[dict[str, float]]:
    """Per-CPU busy split in percent of the CPU's ticks during the window."""
    out = []
    for index, (old, new) in enumerate(zip(before, after)):
        ticks = {name: max(0, new.get(name, 0) - old.get(name, 0)) for name in CPU_FIELDS}
        total = sum(ticks.values())
        if total == 0:
            continue
        split = {f"{name}_pct": round(100.0 * ticks[name] / total, 1) for name in CPU_FIELDS}
        split["busy_pct"] = round(100.0 - split["idle_pct"], 1)
        out.append({"cpu": index, **split})
    return out


def telemetry_delta(before: Snapshot, after: Snapshot) -> dict:
    """What is stored with a trial: deltas, never raw cumulative values (a saturated DUT would starve
    a sampler; two reads around the window cost it nothing while traffic flows)."""
    counters = {key: after.counters[key] - before.counters.get(key, 0) for key in after.counters}
    interrupts = {key: value - before.interrupts.get(key, 0) for key, value in after.interrupts.items()
                  if value - before.interrupts.get(key, 0) > 0}
    out: dict = {"cpu": cpu_delta(before.cpu, after.cpu), "interrupts": interrupts, "counters": counters}
    problems = sorted(set(before.problems) | set(after.problems))
    if problems:
        out["unavailable"] = problems
    return out


def rx_packets(counters: dict[str, int]) -> int:
    """Packets received on all interfaces but loopback: what the path check compares."""
    return sum(value for key, value in counters.items()
               if key.endswith("_rx_packets") and not key.startswith(("lo_", "lo0_")))


def driver_for(family: str) -> DutDriver:
    from linerate.dut.bsd import FreeBsdDriver, OpenBsdDriver
    from linerate.dut.linux import LinuxDriver

    return {"linux": LinuxDriver, "freebsd": FreeBsdDriver, "openbsd": OpenBsdDriver}[family]()


def detect_family(uname_s: str) -> str | None:
    """`uname -s` -> driver family."""
    return {"Linux": "linux", "FreeBSD": "freebsd", "OpenBSD": "openbsd"}.get(uname_s.strip())


def run_all(host: Executor, argvs: list[list[str]], timeout_s: float, optional: int = 0) -> list:
    """Run fixed telemetry commands, in one round trip where the executor can (SshExecutor.run_many).
    The last `optional` commands may fail; any other failure raises ExecError."""
    from linerate.errors import ExecError

    results = host.run_many(argvs, timeout_s=timeout_s) if hasattr(host, "run_many") else \
        [host.run(argv, timeout_s=timeout_s, check=False) for argv in argvs]
    for argv, result in list(zip(argvs, results))[:len(argvs) - optional]:
        if result.returncode != 0:
            raise ExecError(argv, host.host, result.returncode, result.stderr)
    return results
