"""SshTestbed: client, DUT and server are real hosts from an inventory, reached over SSH.

One SshTestbed serves a whole run: it connects once per host, starts the traffic server on every
server host, and applies each cell's DUT knobs when a trial needs them (`view(lab_params)` is
what the scheduler sees as one "lab"). Real hosts cannot hold two knob sets at once, so views
share the testbed and switch knobs on demand.

Nothing is lost or left changed: before a knob changes (or a server starts), an entry with the
value to put back (or the pid file) is committed to the testbed's journal (testbed/journal.py, in
linerate's state directory, not the results database). Values are restored when the run ends, on
SIGINT/SIGTERM/SIGHUP, and — after a SIGKILL or a lost connection — by `linerate testbed restore`
and automatically when the next run on this testbed starts, whatever --db either uses. A value
read from the DUT is journaled only when it can be written back (journal.value_problem): the
change it belongs to is refused otherwise, before it is made.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from linerate import __version__
from linerate.axes import VM_AXES
from linerate.calc.linerate import parse_rate
from linerate.dut.base import OS_FAMILY, DutDriver, detect_family
from linerate.dut.drivers import driver_for
from linerate.errors import ConfigError, ExecError, LinerateError, RestoreFailed
from linerate.exec import scratch
from linerate.exec.ssh import SshExecutor, SshSession
from linerate.lab.signals import terminations_deferred, terminations_raise
from linerate.model import ONE_PAIR, Trial, TrialParams
from linerate.pool.window import REMOTE_START_TOLERANCE_S
from linerate.store.db import Store
from linerate.testbed.fingerprint import host_fingerprint
from linerate.testbed.inventory import Inventory
from linerate.testbed.journal import HostValueError, Journal, value_problem
from linerate.testbed.knobs import NAMESPACE_ONLY, parse_any_sysctls, parse_dut_offloads, refuse_unsupported
from linerate.testbed.ssh_path import TestbedPath
from linerate.testbed.ssh_restore import (NGINX_KIND, SCRATCH_KIND, claim_machines, held_journal, restore_journal,
                                          start_server, stop_server)
from linerate.traffic.nginx_server import NginxServer, ServerSpec, http_server
from linerate.tuning.catalog import runtime_recommendations
from linerate.trial import PoolPair, measure_read_cost_or_none, run_trial

SERVER_IDLE_TIMEOUT_S = 600  # a server whose controller died exits after this long without a test
SERVER_PORT = 5201
TIMEOUT_S = 15


def connect_host(inventory: Inventory, role: str, *, accept_new: bool = False,
                 on_message: Callable[[str], None] = lambda m: None) -> SshExecutor:
    entry = inventory.hosts()[role]
    session = SshSession(entry.target(), inventory.known_hosts_path(), accept_new=accept_new,
                         on_message=on_message).connect()
    return SshExecutor(session, entry.become_argv())


def connect_hosts(inventory: Inventory, *, accept_new: bool = False,
                  on_message: Callable[[str], None] = lambda m: None) -> dict[str, SshExecutor]:
    """role -> executor, every host verified and connected (SshError/HostKeyError name the host)."""
    executors = {}
    try:
        for role in inventory.hosts():
            executors[role] = connect_host(inventory, role, accept_new=accept_new, on_message=on_message)
    except BaseException:
        close_hosts(executors)
        raise
    return executors


def close_hosts(executors: dict[str, SshExecutor]) -> None:
    for executor in executors.values():
        executor.session.close()


def resolve_line_rate(inventory: Inventory, dut: SshExecutor | None, driver: DutDriver | None) -> dict | None:
    """The path's line rate: the inventory's `link`, else the slowest negotiated speed of the DUT
    interfaces the inventory names; None when neither is known (reports then say 'line rate
    unknown' rather than guess)."""
    if inventory.link is not None:
        return {"bps": parse_rate(inventory.link), "source": f"inventory link = {inventory.link}"}
    if dut is None or driver is None or inventory.dut is None:
        return None
    speeds = {}
    for ifname in inventory.dut.interfaces:
        mbps = driver.link_speed_mbps(dut, ifname)
        if mbps:
            speeds[ifname] = mbps
    if not speeds or len(speeds) < len(inventory.dut.interfaces):
        return None
    slowest = min(speeds, key=speeds.get)
    return {"bps": speeds[slowest] * 1e6, "source": f"negotiated speed of {slowest} on the DUT "
            f"({speeds[slowest]} Mbit/s)"}


def detect_driver(dut: SshExecutor, declared_os: str | None) -> DutDriver:
    name = dut.run(["uname", "-s"], timeout_s=TIMEOUT_S).stdout.strip()
    family = detect_family(name)
    if family is None:
        raise LinerateError(f"DUT runs {name[:40]!r}; linerate has drivers for Linux, FreeBSD and OpenBSD")
    if declared_os is not None and OS_FAMILY[declared_os] != family:
        raise ConfigError("dut.os", f"the inventory says {declared_os}, but the DUT runs {name}")
    return driver_for(family)


def pool_refusal(inventory: Inventory, test: str) -> str:
    return (f"{inventory.name} is a generator pool of {len(inventory.pair_roles())} pairs; on real hosts {test} drives "
            "one client/server pair today (throughput trials, run and tune use the pool): use an inventory of one "
            "[client] and one [server]")


class SshTestbed:

    def __init__(self, inventory: Inventory, store: Store, *, accept_new: bool = False,
                 on_message: Callable[[str], None] = lambda m: None, port: int = SERVER_PORT):
        self.inventory = inventory
        self.store = store
        self.accept_new = accept_new
        self.on_message = on_message
        self.port = port
        self.key = inventory.identity_key()
        self.executors: dict[str, SshExecutor] = {}
        self.driver: DutDriver | None = None
        self.generator_drivers: dict[str, DutDriver] = {}  # clients and servers: their CPUs are read too
        self.line_rate: dict | None = None
        self.active: dict[tuple[str, str], tuple[int, str]] = {}  # (kind, name) -> (journal id, original)
        self.users = 0
        self.environment: dict = {}
        self.applied: tuple[dict, dict] | None = None  # (lab params, read-back) the DUT holds now
        self.read_cost_s: float | None = None  # one window read (DUT and generator hosts), measured once
        self.journal: Journal | None = None  # held (its lock taken) while the testbed is open or reserved
        self._reserved = False
        self.unrestored: list[str] = []  # changes a host refused to take back during a reserved run
        self._http: tuple[NginxServer, int] | None = None  # the cps server and how many views use it

    # --- lifetime -----------------------------------------------------------------------------------

    def open(self) -> None:
        self.executors = connect_hosts(self.inventory, accept_new=self.accept_new, on_message=self.on_message)
        if "dut" in self.executors:
            self.driver = detect_driver(self.executors["dut"], self.inventory.dut.os)
        self.line_rate = resolve_line_rate(self.inventory, self.executors.get("dut"), self.driver)
        if self.journal is None:  # not reserved by the run: taken now (released by close())
            self.journal = held_journal(self.inventory)
        claim_machines(self.journal, self.inventory, self.executors)
        if self.store is not None:
            self.journal.adopt(self.store, self.driver.family if self.driver else None)  # an older linerate's
        self._restore("restored from an earlier run")
        self.environment = {role: host_fingerprint(host, self.driver if role == "dut" else None,
                                                   self.inventory.dut.interfaces if role == "dut" else ())
                            for role, host in self.executors.items()}
        for role in self.inventory.generator_hosts():  # their CPUs are read with the DUT's; family from `uname -s`
            family = detect_family(self.environment[role].get("os") or "")
            if family is not None:
                self.generator_drivers[role] = driver_for(family)
        self._make_scratch()
        self._start_server()
        self._measure_read_cost()

    def generator_hosts(self) -> dict[str, tuple[SshExecutor, DutDriver]]:
        return {role: (self.executors[role], driver) for role, driver in self.generator_drivers.items()}

    def _measure_read_cost(self) -> None:
        """Once per testbed, before any trial: what one window read costs here, which places the
        second read (trial.py) and tells the scheduler whether the trial length leaves room."""
        # once: unreadable now means trials measure anyway and say their telemetry is partial
        self.read_cost_s = measure_read_cost_or_none(self.driver, self.executors.get("dut"),
                                                     hosts=self.generator_hosts())

    @contextlib.contextmanager
    def reserve(self) -> Iterator[None]:
        """Hold this testbed's lock for a whole run, before the run records anything: a second run
        (or `testbed restore`) is refused while it lives, and a refused run has touched nothing —
        no journal restored, no server stopped, no experiment row."""
        self.journal = held_journal(self.inventory)
        self._reserved = True
        self.unrestored = []
        try:
            yield
            if self.unrestored:  # said as they happened; the run is over: now it fails (exit 1)
                raise RestoreFailed(f"testbed {self.inventory.name}: {len(self.unrestored)} change(s) could not be "
                                    "put back (said above); they stay in the journal: run `linerate testbed restore "
                                    "INVENTORY`")
        finally:
            self._reserved = False
            if self.users == 0 and self.journal is not None:
                self.journal.close()
                self.journal = None

    def close(self, *, strict: bool = False) -> None:
        """Restore every journaled change and disconnect. strict (a run that ended normally): a
        change the hosts refused to take back raises after everything is closed (exit 1), and stays
        in the journal for `linerate testbed restore`."""
        problems: list[str] = []
        try:
            with terminations_deferred():  # a signal now waits until every change is put back
                if self.executors and self.journal is not None:
                    problems = self._restore("restored")
        finally:
            close_hosts(self.executors)
            if self.journal is not None and not self._reserved:
                self.journal.close()
                self.journal = None
            self.executors = {}
            self.active = {}
            self.applied = None
        if strict and problems and self._reserved:
            self.unrestored += problems  # raised when the run's reservation ends, after its last trial
        elif strict and problems:
            raise RestoreFailed(f"testbed {self.inventory.name}: {len(problems)} change(s) could not be put back "
                                "(said above); they stay in the journal: run `linerate testbed restore INVENTORY`")

    @contextlib.contextmanager
    def view(self, lab_params: dict[str, Any]) -> Iterator["SshView"]:
        """What the scheduler enters per combination of lab axes; the first opens the testbed, the
        last closes it (restoring every knob)."""
        with terminations_raise():
            if self.users == 0:
                try:
                    self.open()
                except BaseException:
                    self.close()
                    raise
            self.users += 1
            try:
                yield SshView(self, lab_params)
            except BaseException:
                self.users -= 1
                if self.users == 0:
                    self.close()
                raise
            self.users -= 1
            if self.users == 0:
                self.close(strict=True)

    def _restore(self, said: str) -> list[str]:
        problems: list[str] = []
        for line in restore_journal(self.inventory, self.journal, self.executors, self.driver, problems=problems):
            self.on_message(f"{said}: {line}")
        for line in problems:
            self.on_message(f"not restored: {line}")
        return problems

    def _make_scratch(self) -> None:
        """The run's own directory on every client and server (exec/scratch.py): journaled, then made
        fresh; every file linerate writes there lives in it, and a restore removes it whole (the DUT: none)."""
        for role in self.inventory.generator_hosts():
            host = self.executors[role]
            path = scratch.new_scratch_path(self.key)
            self.journal.add(role, SCRATCH_KIND, path, "", None)
            try:
                host.run(scratch.make_argv(path), timeout_s=TIMEOUT_S)
            except ExecError as exc:
                raise LinerateError(f"{role} {host.host}: could not make linerate's directory {path} "
                                    f"({exc.stderr.strip()[:120] or exc})") from None
            host.scratch_dir = path

    def _start_server(self) -> None:
        """An iperf3 server on every server host of a pair, journaled before it starts."""
        for _, role in self.inventory.pair_roles():
            self.journal.add(role, "process", self._server_pidfile(role), "", None)
            self._launch_server(role)

    def _server_pidfile(self, role: str) -> str:
        return f"{self.executors[role].scratch_dir}/iperf3-{self.port}.pid"

    def _launch_server(self, role: str) -> None:
        start_server(self.executors[role], self._server_pidfile(role), self.port, SERVER_IDLE_TIMEOUT_S,
                     pool=self.inventory.pooled)

    # --- knobs --------------------------------------------------------------------------------------

    def activate(self, lab_params: dict[str, Any]) -> dict:
        """Make the DUT hold exactly this cell's knobs (journaled first), return their read-back.
        Nothing else changes the DUT's knobs during a run, so the same cell again costs nothing."""
        if self.applied is not None and self.applied[0] == lab_params:
            return self.applied[1]
        wanted: dict[tuple[str, str], str] = {}
        for name, value in parse_any_sysctls(lab_params.get("dut_sysctls", "default")):
            wanted[("sysctl", name)] = value
        for ifname, feature, state in parse_dut_offloads(lab_params.get("dut_offloads", "default")):
            wanted[("offload", f"{ifname}:{feature}")] = state
        if wanted and self.driver is None:
            raise ConfigError("dut_sysctls", "DUT knobs need a [dut] host in the inventory")
        dut = self.executors.get("dut")
        self.applied = None
        for key in [k for k in self.active if k not in wanted]:
            self._put_back(dut, key)
        readback = {}
        for (kind, name), value in wanted.items():
            if kind == "sysctl" and self.driver.boot_time_only(dut, name):
                raise ConfigError("dut_sysctls", f"{name} is a boot-time tunable (loader.conf): it needs a reboot "
                                  "and is never applied live; see `linerate recommend`")
            current = self._read(dut, kind, name)
            if current != value:
                if (kind, name) not in self.active:
                    problem = value_problem(kind, current)
                    if problem is not None:  # refused before the change: nothing to put back by hand
                        raise HostValueError(f"dut_sysctls: the DUT's current {kind} {name} is not a value linerate "
                                             f"could put back ({problem}); it was left unchanged. Check the DUT's "
                                             f"`{'sysctl' if kind == 'sysctl' else 'ethtool -k / ifconfig'}` output")
                    entry = self.journal.add("dut", kind, name, current, value)
                    self.active[(kind, name)] = (entry, current)
                self._write(dut, kind, name, value)
                current = self._read(dut, kind, name)
                if current != value:
                    raise LinerateError(f"{kind} {name}={value} did not take effect on the DUT (reads {current!r})")
            readback[f"{kind}:{name}"] = current
        self.applied = (dict(lab_params), readback)
        return readback

    def _read(self, dut: SshExecutor, kind: str, name: str) -> str:
        if kind == "sysctl":
            return self.driver.read_sysctl(dut, name)
        ifname, feature = name.split(":", 1)
        return self.driver.read_offloads(dut, ifname).get(feature, "unknown")

    def _write(self, dut: SshExecutor, kind: str, name: str, value: str) -> None:
        if kind == "sysctl":
            self.driver.set_sysctl(dut, name, value)
        else:
            ifname, feature = name.split(":", 1)
            self.driver.set_offload(dut, ifname, feature, value)

    def _put_back(self, dut: SshExecutor, key: tuple[str, str]) -> None:
        entry, original = self.active.pop(key)
        self._write(dut, key[0], key[1], original)
        self.journal.done(entry)

    # --- the HTTP server (cps) -------------------------------------------------------------------------

    @contextlib.contextmanager
    def http_server(self, spec: ServerSpec) -> Iterator[NginxServer]:
        """nginx on the server host in a directory of its own, journaled before it starts (a killed
        run's server is stopped by the next run or `linerate testbed restore`). One server per
        testbed: views of it (combinations of DUT knobs) share it while their spec is the same."""
        if self._http is not None:
            server, users = self._http
            if server.spec != spec:
                raise LinerateError("one HTTP server per testbed: its views asked for different objects or ports")
            self._http = (server, users + 1)
            try:
                yield server
            finally:
                self._http = (server, self._http[1] - 1)
            return
        entries: list[int] = []

        def journal_it(workdir: str) -> None:  # before nginx writes or starts anything there
            entries.append(self.journal.add("server", NGINX_KIND, workdir, "", None))

        addresses = {family: self.inventory.address(family) for family in (4, 6) if self.inventory.address(family)}
        server = http_server(self.executors["server"], addresses, spec, on_workdir=journal_it)
        try:
            with server:
                self._http = (server, 1)
                yield server
        finally:
            self._http = None
            if server.stopped:  # its stop ran to the end; else the journal keeps it for `testbed restore`
                for entry in entries:
                    self.journal.done(entry)

    # --- trials ---------------------------------------------------------------------------------------

    def refuse_pool(self, test: str) -> None:
        if self.inventory.pooled:
            raise ConfigError("--testbed", pool_refusal(self.inventory, test))

    def run_trial(self, params: TrialParams) -> Trial:
        pairs = []
        for client, server in self.inventory.pair_roles():
            address = self.inventory.address(params.family, server)
            if address is None:
                return Trial(status="failed", params=params, argv=(), error=f"the inventory's {server} has no IPv"
                             f"{params.family} test address (test_address{'6' if params.family == 6 else ''})")
            pairs.append(PoolPair(client, server, self.executors[client], address))
        params = dataclasses.replace(params, port=self.port)
        hosts = self.generator_hosts()
        try:
            return run_trial(pairs[0].executor, self.executors.get("dut"), params, pairs[0].address,
                             driver=self.driver, generator_hosts=hosts, read_cost_s=self.read_cost_s,
                             pool=pairs if self.inventory.pooled else None, start_tolerance_s=REMOTE_START_TOLERANCE_S)
        finally:
            if params.congestion:  # iperf3 < 3.18 keeps it for later clients (NamespaceTestbed.forget_congestion)
                with terminations_deferred():
                    for _, role in self.inventory.pair_roles():
                        stop_server(self.executors[role], self._server_pidfile(role))
                        self._launch_server(role)


class SshView:
    """One combination of lab axes on a shared SshTestbed: the Testbed (testbed/base.py) a run
    holds. Its DUT knobs are switched on (journaled) before each trial or search that needs them."""

    shared_kernel = False  # the DUT is another machine

    def __init__(self, testbed: SshTestbed, lab_params: dict[str, Any]):
        self.testbed = testbed
        self.params = lab_params
        self.state: dict = {}

    @property
    def driver(self) -> DutDriver | None:
        return self.testbed.driver

    @property
    def line_rate(self) -> dict | None:
        return self.testbed.line_rate

    @property
    def read_cost_s(self) -> float | None:
        """One telemetry window read on this testbed (measured when it was opened)."""
        return self.testbed.read_cost_s

    @property
    def description(self) -> str:
        rate = self.testbed.line_rate
        return f"testbed {self.testbed.inventory.name}, " + (
            f"line rate {rate['bps'] / 1e9:g} Gbit/s ({rate['source']})" if rate
            else 'line rate unknown (set link = "1g", the path\'s rate, in the inventory)')

    def executor(self, role: str) -> SshExecutor:
        return self.testbed.executors[role]

    def generator_hosts(self) -> dict[str, tuple[SshExecutor, DutDriver]]:
        return self.testbed.generator_hosts()

    def environment(self) -> dict:
        """Every host's fingerprint and the path's line rate."""
        return {"hosts": self.testbed.environment, "line_rate": self.testbed.line_rate}

    def apply_knobs(self) -> dict:
        return self.testbed.activate(self.params)

    def knob_choices(self) -> dict[str, list[tuple]]:
        """The runtime sysctls the catalog recommends for a router on the DUT's OS, and GRO on Linux
        DUT interfaces that have it off (resegmented exactly on forward)."""
        driver = self.testbed.driver
        if driver is None:
            return {}
        choices: dict[str, list[tuple]] = {"dut_sysctls": runtime_recommendations(driver.family)}
        offloads = (self.testbed.environment.get("dut") or {}).get("offloads") or {}
        gro = [(f"{ifname}:gro=on", "catalog: GRO on for a Linux router") for ifname, features in offloads.items()
               if driver.family == "linux" and features.get("gro") == "off"]
        if gro:
            choices["dut_offloads"] = gro
        return choices

    def dut_counters(self) -> dict[str, int]:
        dut = self.testbed.executors.get("dut")
        if dut is None or self.testbed.driver is None:
            return {}
        return self.testbed.driver.path_counters(dut)

    def packet_path(self, family: int, generator: str = "auto") -> TestbedPath:
        self.testbed.refuse_pool("rfc2544")  # SshTestbeds.check said so before the run; never one pair of a pool
        return TestbedPath(self, family, generator)

    def state_path(self, family: int) -> Any:
        raise ConfigError("--testbed", "rfc9693 runs through a namespace lab or the VM DUT (--dut vm) for now: "
                          "on real hosts its phase 2 needs the server's route back through the DUT, not built yet")

    def http_server(self, spec: ServerSpec) -> contextlib.AbstractContextManager[NginxServer]:
        self.testbed.refuse_pool("cps")
        return self.testbed.http_server(spec)

    def run_trial(self, params: TrialParams) -> Trial:
        try:
            self.state = {"testbed": self.testbed.inventory.name, "dut_knobs": self.apply_knobs()}
        except ExecError as exc:
            return Trial(status="failed", params=params, argv=(), error=f"applying DUT knobs: {exc}")
        return self.testbed.run_trial(params)


class SshTestbeds:
    """The Testbeds of a run on real hosts: one SshTestbed (connected once, restored at the end)
    and a view of it per combination of lab axes."""

    calibrates = False  # the rig is real hosts: no baseline lab to measure it against

    def __init__(self, inventory: Inventory, store: Store | None, *, accept_new: bool = False,
                 on_message: Callable[[str], None] = lambda m: None):
        self.inventory = inventory
        self.testbed = SshTestbed(inventory, store, accept_new=accept_new, on_message=on_message)

    def open(self, lab_params: dict[str, Any]) -> contextlib.AbstractContextManager[SshView]:
        return self.testbed.view(lab_params)

    def reserve(self) -> contextlib.AbstractContextManager[None]:
        return self.testbed.reserve()

    def record(self) -> dict:
        """What the experiment row starts with; `axes_not_applied`: the lab axes real hosts cannot
        vary (their own configuration decides them), left out of the parameters reports list."""
        return {"linerate_version": __version__, "testbed": self.inventory.name, "kind": "ssh",
                "axes_not_applied": sorted({*NAMESPACE_ONLY, *VM_AXES})}

    def held_params(self) -> dict[str, Any]:
        return {}  # the DUT's knobs are switched per combination

    def refuse_unsupported(self, cells: list[dict[str, Any]]) -> None:
        refuse_unsupported(cells, "ssh", self.inventory)

    def check(self, cells: list[dict[str, Any]], extra_required: set[str] = frozenset()) -> str:
        """The axes, and a pool against a test that drives one pair; the hosts are checked by
        `linerate testbed check` (it contacts them)."""
        self.refuse_unsupported(cells)
        if ONE_PAIR in extra_required and self.inventory.pooled:
            raise ConfigError("--testbed", pool_refusal(self.inventory, "this test"))
        return f"testbed {self.inventory.name}: axes ok; `linerate testbed check INVENTORY` checks the hosts"
