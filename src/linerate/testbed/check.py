"""`linerate testbed check`: every problem of a testbed at once, before an experiment trusts it.

Reachability and authentication (host keys verified), iperf3 on client and server, the DUT's OS
and its telemetry commands, clock offsets, and the path check: a short UDP burst from client to
server must raise the DUT's forwarded (Linux) or received (BSD) packet counters by about the
burst's size — a testbed whose server is reachable without crossing the DUT measures nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from linerate import counters
from linerate.dut.base import DutDriver, Probe, Snapshot, rx_packets
from linerate.errors import ConfigError, ExecError, LinerateError, ParseError
from linerate.exec import scratch
from linerate.exec.ssh import SshError, SshExecutor
from linerate.lab.signals import terminations_deferred
from linerate.model import TrialParams
from linerate.numbers import is_ascii_int
from linerate.testbed.fingerprint import host_fingerprint
from linerate.testbed.inventory import Inventory
from linerate.testbed.ssh import SERVER_PORT, close_hosts, connect_host, detect_driver
from linerate.testbed.ssh_restore import SCRATCH_KIND, claim_machines, held_journal, start_server, stop_server
from linerate.traffic import iperf3

BURST_PACKETS = 2000
PATH_RATIO = 0.9  # of the burst's datagrams must show up in the DUT's counters
TIMEOUT_S = 15


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    optional: bool = False  # a tool only some tests need: a failure warns, the testbed still passes


# tools only some tests need: (role, binary, version argv, what needs it)
OPTIONAL_TOOLS = (
    ("client", "trafgen", ["trafgen", "--version"], "rfc2544 sends with it (Debian/Ubuntu: netsniff-ng); "
     "without it, with iperf3 UDP (one size per search, no IMIX)"),
    ("client", "fping", ["fping", "--version"], "latency probes use it"),
    ("server", "nft", ["nft", "--version"], "rfc2544 counts frames with it on the server (nftables)"),
    ("client", "h2load", ["h2load", "--version"], "cps opens its connections with it (nghttp2-client)"),
    ("server", "nginx", ["nginx", "-v"], "cps serves its objects with it (nginx-light)"),
)


def tool_checks(executors: dict[str, SshExecutor]) -> list[Check]:
    """Each optional tool on every host of its side (a pool's client2 ... as its client)."""
    checks = []
    for side, binary, argv, purpose in OPTIONAL_TOOLS:
        for role in (r for r in executors if r.rstrip("0123456789") == side):
            result = executors[role].run(argv, timeout_s=TIMEOUT_S, check=False)
            first = next((line.strip() for line in (result.stdout + result.stderr).splitlines() if line.strip()), "")
            found = result.returncode == 0 or first.startswith(binary)  # trafgen --version exits 1
            checks.append(Check(f"{role} {binary}", found, first[:80] if found else f"not found; {purpose}",
                                optional=True))
    return checks


def passed(checks: list[Check]) -> bool:
    return all(c.ok or c.optional for c in checks)


def path_check(inventory: Inventory, executors: dict[str, SshExecutor], driver: DutDriver, family: int,
               port: int, pair: tuple[str, str] = ("client", "server")) -> Check:
    """A UDP burst from a pair's client to its server; the DUT must have forwarded (Linux) / received (BSD) it."""
    client, server = pair
    name = f"path IPv{family}" + (f" {client} -> {server}" if inventory.pooled else "")
    address = inventory.address(family, server)
    dut = executors["dut"]
    before = driver.snapshot(dut).counters
    params = TrialParams(family=family, protocol="udp", udp_bitrate_bps=20_000_000, duration_s=1, omit_s=0, port=port)
    argv = iperf3.client_argv(params, address)
    at = argv.index("--time")
    argv = argv[:at] + argv[at + 2:] + ["--blockcount", str(BURST_PACKETS), "--length", "1000"]
    try:
        result = executors[client].run(argv, timeout_s=30, check=False)
    except LinerateError as exc:
        return Check(name, False, f"the burst to {address} did not finish: {exc}")
    after = driver.snapshot(dut).counters
    try:
        trial = iperf3.parse(result.stdout, params, argv)
    except LinerateError as exc:
        return Check(name, False, f"the burst to {address} failed: {exc}")
    if not trial.ok:
        return Check(name, False, f"the burst to {address} failed: {trial.error}")
    sent = trial.packets_sent or BURST_PACKETS
    delta = counters.delta(before, after)
    seen = delta["forwarded_packets"] if driver.family == "linux" else rx_packets(delta)
    what = "forwarded" if driver.family == "linux" else "received"
    if seen < PATH_RATIO * sent:
        return Check(name, False, f"a burst of {sent} packets from {client} to {address} raised the DUT's "
                     f"{what} counters by only {seen}: test traffic does not cross the DUT (the server is reachable "
                     "another way); fix the routes or the test addresses")
    return Check(name, True, f"{sent} packets sent, DUT {what} {seen}")


def probe_check(dut: SshExecutor, probe: Probe) -> Check:
    """One telemetry command on the DUT: it runs, and linerate can read what it prints."""
    name = f"dut telemetry: {' '.join(probe.argv)}"
    result = dut.run(list(probe.argv), timeout_s=TIMEOUT_S, check=False)
    if result.returncode != 0:
        return Check(name, False, (result.stderr.strip() or "failed")[:200])
    try:
        probe.parse(result.stdout, Snapshot())
    except (ParseError, ValueError, ArithmeticError) as exc:
        return Check(name, False, f"linerate cannot read its output: {str(exc)[:160]}")
    return Check(name, True, "ok")


def run_checks(inventory: Inventory, *, accept_new: bool = False, on_message=lambda m: None) -> tuple[list[Check], dict]:
    """All checks; (checks, environment fingerprint of every reachable host)."""
    checks: list[Check] = []
    executors: dict[str, SshExecutor] = {}
    environment: dict = {}
    try:
        for role, entry in inventory.hosts().items():
            try:  # a host key problem (HostKeyError, exit 2) is not a check result: it stops here
                executors[role] = connect_host(inventory, role, accept_new=accept_new, on_message=on_message)
                whoami = executors[role].run(["id", "-u"], timeout_s=TIMEOUT_S).stdout.strip()
                checks.append(Check(f"{role} ssh", True, f"{entry.target()} (uid {whoami})"))
            except (SshError, ExecError) as exc:
                checks.append(Check(f"{role} ssh", False, str(exc)))
        for role, host in executors.items():
            remote = host.run(["date", "-u", "+%s"], timeout_s=TIMEOUT_S, check=False).stdout.strip()
            if is_ascii_int(remote):
                offset = int(remote) - time.time()
                checks.append(Check(f"{role} clock", abs(offset) < 5, f"offset {offset:+.1f} s"
                                    + ("" if abs(offset) < 5 else "; timestamps of trials will not line up")))
        driver = None
        if "dut" in executors:
            try:
                driver = detect_driver(executors["dut"], inventory.dut.os)
                checks.append(Check("dut os", True, f"{driver.family} driver"))
                for probe in (p for p in driver.probes() if p.required):
                    checks.append(probe_check(executors["dut"], probe))
            except LinerateError as exc:
                checks.append(Check("dut os", False, str(exc)))
        for role, host in executors.items():
            environment[role] = host_fingerprint(host, driver if role == "dut" else None,
                                                 inventory.dut.interfaces if role == "dut" else ())
            if role != "dut":
                version = environment[role]["iperf3_version"]
                checks.append(Check(f"{role} iperf3", version is not None, version or "iperf3 not found"))
        checks += tool_checks(executors)
        if set(inventory.hosts()) <= executors.keys() and driver is not None:
            checks += burst_checks(inventory, executors, driver)
    finally:
        close_hosts(executors)
    return checks, environment


def burst_checks(inventory: Inventory, executors: dict[str, SshExecutor], driver: DutDriver) -> list[Check]:
    """The path check's bursts through the DUT, with the testbed held as a run holds it: never during
    another run's trials (its figures would carry the burst), and the iperf3 server and its directory
    journaled before they exist, so a check killed even by SIGKILL leaves `testbed restore` their removal."""
    try:
        journal = held_journal(inventory)
    except ConfigError as exc:
        return [Check("path", False, f"not run: {exc.problem}")]
    try:
        claim_machines(journal, inventory, executors)
    except ConfigError as exc:
        journal.close()
        return [Check("path", False, f"not run: {exc.problem}")]
    checks: list[Check] = []
    started: list[tuple[str, str, str, int, int]] = []  # (role, workdir, pidfile, its journal entries)
    try:
        for _, role in inventory.pair_roles():
            workdir = scratch.new_scratch_path(inventory.identity_key())
            pidfile = f"{workdir}/iperf3-check.pid"
            started.append((role, workdir, pidfile, journal.add(role, SCRATCH_KIND, workdir, "", None),
                            journal.add(role, "process", pidfile, "", None)))
            executors[role].run(scratch.make_argv(workdir), timeout_s=TIMEOUT_S)
            # not the run's port: a run may hold it
            start_server(executors[role], pidfile, SERVER_PORT + 1, 60)
        for pair in inventory.pair_roles():
            for family in (4, 6):
                if inventory.address(family, pair[1]):
                    checks.append(path_check(inventory, executors, driver, family, SERVER_PORT + 1, pair))
    except LinerateError as exc:
        checks.append(Check("path", False, f"could not run the burst: {exc}"))
    finally:
        with terminations_deferred():  # a signal now waits until every server is stopped and its directory gone
            try:
                for role, workdir, pidfile, made, process in started:
                    server = executors[role]
                    stop_server(server, pidfile)
                    journal.done(process)
                    if server.run(scratch.remove_argv(workdir), timeout_s=TIMEOUT_S, check=False).returncode == 0:
                        journal.done(made)
            finally:
                journal.close()
    return checks

