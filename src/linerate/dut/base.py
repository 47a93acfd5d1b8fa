"""DutDriver: what linerate reads from and changes on a device under test, one driver per OS
family (linux; freebsd for FreeBSD, pfSense and OPNsense; openbsd). A driver only builds argv
lists and parses outputs (dut/parsers.py); the Executor it is handed decides where they run (a
namespace, an SSH session, the FakeExecutor in tests).

A driver declares its commands as Probes (argv + parser). take_snapshot() runs them on a host and
renders their outputs as snapshot text (dut/sections.py); parse_snapshot() reads that text back —
the same path for a live DUT and for a snapshot a user pasted from a firewall's shell. A Snapshot
holds cumulative counters; telemetry_delta() turns the two read around a trial's measured window
into the figures stored with it: counter deltas, per-CPU busy split, interrupts per source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from linerate.dut import sections
from linerate.dut.parsers import CPU_FIELDS
from linerate.errors import ExecBroken, ExecError, ParseError
from linerate.exec import CommandResult, Executor

FAMILIES = ("linux", "freebsd", "openbsd")
OS_FAMILY = {"linux": "linux", "openwrt": "linux", "freebsd": "freebsd", "pfsense": "freebsd",
             "opnsense": "freebsd", "openbsd": "openbsd"}


@dataclass
class Snapshot:
    counters: dict[str, int] = field(default_factory=dict)
    cpu: list[dict[str, int]] = field(default_factory=list)
    interrupts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # telemetry a host could not give
    unreadable: list[str] = field(default_factory=list)  # of those, outputs its parser could not read, and why
    raw: str = ""  # the commands' outputs as snapshot text (dut/sections.py)
    top_cpu: list[dict[str, float]] = field(default_factory=list)  # top's per-CPU % (pasted snapshots)
    threads: list[dict] = field(default_factory=list)  # top's busiest threads {name, cpu, pct}
    interfaces: list[str] = field(default_factory=list)  # from `ifconfig -a` (pasted snapshots)


@dataclass(frozen=True)
class Probe:
    """One fixed command of a driver and how its output lands in a Snapshot. `required` probes
    fail a live snapshot when they fail; the others only add a line to Snapshot.problems."""

    argv: tuple[str, ...]
    parse: Callable[[str, Snapshot], None]
    unavailable: str  # what the problem line says when the output is missing or unreadable
    required: bool = True


def adds_counters(parse: Callable[[str], dict[str, int]]) -> Callable[[str, Snapshot], None]:
    """A Probe parser for a command whose output is counters: they join Snapshot.counters."""
    return lambda text, shot: shot.counters.update(parse(text))


class DutDriver(Protocol):
    family: str
    # an own image as a VM DUT (testbed/vm_image.py): its LAN and WAN virtio NICs' names by PCI order, or
    # None when the OS names them itself (found by MAC); whether linerate sets its addresses, ruleset and
    # knobs with this driver's commands (else the image's own configuration does, and is only checked)
    virtio_nics: tuple[str, str] | None
    configures_guest: bool

    def snapshot(self, host: Executor) -> Snapshot:
        """Every probe: counters, CPU, interrupts (read before and after a trial's run)."""
        ...

    def window_snapshot(self, host: Executor) -> Snapshot:
        """The cheap part read inside the measured window: per-CPU time and interrupts."""
        ...

    def read_sysctl(self, host: Executor, name: str) -> str: ...

    def set_sysctl(self, host: Executor, name: str, value: str) -> None: ...

    def boot_time_only(self, host: Executor, name: str) -> bool: ...

    def read_offloads(self, host: Executor, ifname: str) -> dict[str, str]: ...

    def link_speed_mbps(self, host: Executor, ifname: str) -> int | None: ...

    def cpu_snapshot(self, host: Executor) -> Snapshot: ...

    def state_counters(self, host: Executor) -> dict[str, int]:
        """The firewall's state table (dut/state_parsers.py keys: state_count, state_max, insert and
        drop counters); {} when it has none."""
        ...

    def state_timeouts(self, host: Executor) -> dict[str, int]:
        """Its state timeouts in seconds (conntrack tcp_timeout_time_wait, pf tcp.closed ...)."""
        ...

    def clear_states(self, host: Executor, family: int, src: str, dst: str) -> int | None:
        """Remove the states of connections from src to dst (rfc9693 between trials); how many were
        removed, None when the DUT has no tool for it."""
        ...

    def path_counters(self, host: Executor) -> dict[str, int]:
        """Cumulative counters a packet path reads around a trial: every interface's packets, bytes,
        drops, and IP forwarding where the OS counts it (an rfc2544 search trial's before/after)."""
        ...

    def set_offload(self, host: Executor, ifname: str, feature: str, state: str) -> None: ...

    def probes(self) -> list[Probe]: ...

    def offline_probes(self) -> list[Probe]: ...


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


def detect_family(uname_s: str) -> str | None:
    """`uname -s` -> driver family."""
    return {"Linux": "linux", "FreeBSD": "freebsd", "OpenBSD": "openbsd"}.get(uname_s.strip())


def dut_os_family(environment: Any) -> str | None:
    """The DUT's OS family from a run's recorded environment: its host fingerprint's `uname -s` (an
    SSH testbed's; None where none was recorded: a lab or VM DUT)."""
    hosts = environment.get("hosts") if isinstance(environment, dict) else None
    dut = (hosts or {}).get("dut") or {}
    return detect_family(str(dut.get("os", ""))) if dut else None


def read_parsed(host: Executor, reads: dict[tuple[str, ...], Callable[[str], dict[str, int]]],
                timeout_s: float) -> dict[str, int]:
    """Optional reads in one round trip, merged: a command that fails or prints what its parser does
    not understand adds nothing (a firewall without a state table, a module not loaded)."""
    out: dict[str, int] = {}
    for result, parse in zip(host.run_many([list(argv) for argv in reads], timeout_s=timeout_s), reads.values()):
        if result.returncode == 0:
            try:
                out.update(parse(result.stdout))
            except ParseError:
                continue
    return out


def run_probes(host: Executor, argvs: list[list[str]], timeout_s: float) -> list[CommandResult]:
    """The probes in one round trip; when that answer broke off because of one of them (it printed
    megabytes, or killed the shell they ran in: errors.ExecBroken) or did not come in time (a probe
    flooding slowly enough to reach the read's deadline first), each again on its own, so that only
    the culprit's figures are lost and the others keep theirs. Two probes in a row that get no answer
    on their own mean the host itself stopped answering: the read fails as a whole."""
    try:
        return host.run_many(argvs, timeout_s=timeout_s)
    except ExecBroken:
        if len(argvs) == 1:
            raise
    except ExecError as exc:
        if len(argvs) == 1 or exc.returncode is not None:
            raise
    results: list[CommandResult] = []
    unanswered = 0
    for argv in argvs:
        try:
            results += host.run_many([argv], timeout_s=timeout_s)
            unanswered = 0
        except ExecBroken as exc:
            results.append(CommandResult(tuple(argv), 255, "", str(exc), host.host))
        except ExecError as exc:
            if exc.returncode is not None or unanswered:
                raise
            unanswered += 1
            results.append(CommandResult(tuple(argv), 255, "", str(exc), host.host))
    return results


def take_snapshot(host: Executor, probes: list[Probe], family: str, timeout_s: float) -> Snapshot:
    """Run the probes on host (one round trip over SSH), keep their outputs as snapshot text and
    parse it. One probe that fails or prints what its parser cannot read (binary, a number past
    any counter, a cut line) loses only its own figures: a problem line names it and why. Only a
    read in which every required probe failed raises (the host gave nothing to measure with)."""
    ordered = [p for p in probes if p.required] + [p for p in probes if not p.required]
    results = run_probes(host, [list(p.argv) for p in ordered], timeout_s)
    text = sections.render([(list(p.argv), r.returncode, r.stdout) for p, r in zip(ordered, results)], family)
    shot, failed = _parse_sections(text, ordered)
    required = [(p, r) for p, r in zip(ordered, results) if p.required]
    if required and all(p in failed for p, _ in required):
        first, result = required[0]
        if result.returncode != 0:
            raise ExecError(first.argv, host.host, result.returncode, result.stderr)
        raise ParseError("; ".join(shot.problems)[:300])
    return shot


def parse_snapshot(text: str, probes: list[Probe], strict: bool = False) -> Snapshot:
    """Snapshot text -> Snapshot. A section that is missing, failed or unparseable becomes a
    problem line, "<what is unavailable>: <why>" (strict: a required one raises ParseError);
    nothing is read as zero, and a parser's failure never reaches the caller as anything else."""
    shot, failed = _parse_sections(text, probes)
    if strict and any(p.required for p in failed):
        raise ParseError(failed[next(p for p in failed if p.required)])
    return shot


def _parse_sections(text: str, probes: list[Probe]) -> tuple[Snapshot, dict[Probe, str]]:
    """(the snapshot, each probe that gave nothing -> why)."""
    found = sections.split(text)
    shot = Snapshot(raw=text)
    failed: dict[Probe, str] = {}
    for probe in probes:
        output = found.get(sections.command_line(probe.argv))
        partial = Snapshot()
        try:
            if output is None:
                raise ParseError(f"{sections.command_line(probe.argv)}: no output")
            probe.parse(output, partial)
        except (ParseError, ValueError, ArithmeticError, RecursionError) as exc:  # 1e400: OverflowError
            failed[probe] = str(exc)[:160] or type(exc).__name__
            shot.problems.append(probe.unavailable if output is None else f"{probe.unavailable}: {failed[probe]}")
            if output is not None:
                shot.unreadable.append(f"{sections.command_line(probe.argv)} printed what linerate could not read "
                                       f"({failed[probe]})")
            continue
        _merge(shot, partial)
    return shot, failed


def _merge(shot: Snapshot, part: Snapshot) -> None:
    """What one probe parsed joins the snapshot only when the whole of its output was read."""
    shot.counters.update(part.counters)
    shot.cpu.extend(part.cpu)
    shot.interrupts.update(part.interrupts)
    shot.problems.extend(part.problems)
    shot.top_cpu.extend(part.top_cpu)
    shot.threads.extend(part.threads)
    shot.interfaces.extend(part.interfaces)
