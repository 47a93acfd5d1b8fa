"""Run one trial through the DUT, given executors for the client and the DUT, a DutDriver and a
Generator. Independent of how the testbed was built: namespace executors, SSH executors on real
hosts, or the FakeExecutor in tests all look the same from here.

Telemetry never costs a measurement (issue #25). Two kinds of DUT read, so that what flows
through the DUT during the measured window is disturbed as little as possible:
- full reads (driver.snapshot: interface, forwarding, qdisc counters ...) just before the generator
  starts and just after it ends, outside the window: their deltas are dut_counters, spanning the
  whole run, warm-up included (cumulative counters lose nothing by being read late);
- two cheap window reads (driver.window_snapshot: per-CPU time, interrupts, backlog — files only,
  read without a fork where the executor can) once iperf3's omit period has passed plus a set-up
  margin and once before the run's end; they give the per-CPU busy split and interrupts per
  source over the window. Host observers (a VM DUT's qemu threads seen from the host, vm/observe.py)
  are sampled at the same moments, and, on a testbed of separate machines, the client and server
  hosts' CPUs.
The second window read is placed by the read's measured cost (`read_cost_s`, measured once per
testbed by measure_read_cost) so both fit. A read that fails or comes too late leaves the trial's
telemetry partial — telemetry["dut"]["partial"] says what is missing and why — and never fails a
trial whose generator measured a figure: the throughput is the measurement, telemetry explains it.

Latency (params.latency): fping probes the server for one second before the load (idle) and
through the same measured window while the load runs (traffic/latency.py); both sets of samples go
to telemetry["latency"], their median/p90/p99/max to the trial's rtt_* columns.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Mapping
from typing import Any, Protocol

from linerate import counters
from linerate.dut.base import DutDriver, Snapshot, cpu_delta, telemetry_delta
from linerate.dut.linux import LinuxDriver
from linerate.errors import ExecError, LinerateError
from linerate.exec import Executor
from linerate.exec.base import CommandResult
from linerate.model import Trial, TrialParams
from linerate.pool.window import START_TOLERANCE_S, Member, pool_trial
from linerate.traffic import latency
from linerate.traffic.base import Generator
from linerate.traffic.iperf3 import IPERF3

SETUP_MARGIN_S = 0.3  # process start + connection set-up before iperf3's own clock starts
END_MARGIN_S = 0.1  # slack after the second read
READ_COST_FACTOR = 1.5  # a read under load takes longer than the idle one measured (latest_second_read then
# moves the second read earlier when the first one, under load, took longer still) ...
LOADED_READ_FACTOR = 1.5  # the second read against the first one's cost under load (latest_second_read)
READ_COST_FLOOR_S = 0.05  # ... and a cheap one can take this much more (VM agent: 2 ms idle, up to 37 ms loaded)
DEFAULT_READ_COST_S = 0.02  # before a testbed has measured its own (a namespace DUT read: ~17 ms)
# a trial's overhead beyond its duration (connect, result exchange, counters), for plans made
# before any trial was stored: measured ~1-1.5 s here in 2025
TRIAL_OVERHEAD_S = 1.5
MIN_WINDOW_S = 0.3  # shorter than this, CPU percentages are a handful of 10 ms ticks: no window reads


class HostObserver(Protocol):
    """Something the testbed sees of the DUT from outside it (a VM's qemu threads from the host):
    `sample()` is cheap and taken with each window read, `delta()` turns two samples into what is
    stored as telemetry[name]."""

    name: str

    def sample(self) -> Any: ...

    def delta(self, before: Any, after: Any, window_s: float) -> dict: ...


def _tail_s(read_cost_s: float | None) -> float:
    """How long before the generator's end the second window read must start."""
    cost = DEFAULT_READ_COST_S if read_cost_s is None else read_cost_s
    return SETUP_MARGIN_S + END_MARGIN_S + max(READ_COST_FACTOR * cost, cost + READ_COST_FLOOR_S)


def window_offsets(params: TrialParams, read_cost_s: float | None = None) -> tuple[float, float]:
    """(first read, second read) in seconds after the generator is launched. The second starts
    early enough that a read slower than the measured one (under load) still ends in time."""
    start = SETUP_MARGIN_S + params.omit_s
    end = start + params.duration_s - min(_tail_s(read_cost_s), params.duration_s / 2)
    return start, max(start, end)


def latest_second_read(params: TrialParams, loaded_cost_s: float) -> float:
    """The latest start (seconds after launch) for the second window read when the first one, under load,
    took `loaded_cost_s`: the second may take half as long again, and its midpoint (the moment it stands
    for) must come before the generator ends. An own image read over SSH under TCG took 0.3-0.5 s idle
    and 0.9-1.55 s while its one vCPU forwarded (a 3 s trial ends 4.0-4.2 s after launch)."""
    end = SETUP_MARGIN_S + params.omit_s + params.duration_s - END_MARGIN_S
    return end - LOADED_READ_FACTOR * loaded_cost_s / 2


def needed_duration_s(read_cost_s: float) -> int:
    """The shortest whole-second duration_s whose window fits two reads of this cost."""
    needed = MIN_WINDOW_S + _tail_s(read_cost_s)
    return max(1, int(needed) + (0 if needed == int(needed) else 1))


def window_problem(params: TrialParams, read_cost_s: float | None) -> str | None:
    """Why this trial length leaves no room for two window reads (None: it does)."""
    cost = DEFAULT_READ_COST_S if read_cost_s is None else read_cost_s
    room = params.duration_s - _tail_s(read_cost_s)
    if room >= MIN_WINDOW_S:
        return None
    return (f"a {params.duration_s} s trial leaves {max(0.0, room):.2f} s between the two DUT reads "
            f"(one read costs {cost * 1000:.0f} ms here); use duration_s >= {needed_duration_s(cost)} for DUT CPU "
            "telemetry — throughput is measured either way")


def measure_read_cost(driver: DutDriver | None, dut: Executor | None, rounds: int = 3,
                      hosts: Mapping[str, tuple[Executor, DutDriver]] | None = None) -> float:
    """The slowest of a few window reads (the DUT's, and the generator hosts' CPUs where they are
    read too, in parallel as in a trial), idle, in seconds, after one untimed read. Raises
    LinerateError when they cannot be read at all."""
    _read_window(driver, dut, hosts or {})  # warm-up, not timed: opens what later reads reuse (SSH shells)
    costs = []
    for _ in range(rounds):
        began = time.monotonic()
        _read_window(driver, dut, hosts or {})
        costs.append(time.monotonic() - began)
    return max(costs)


def measure_read_cost_or_none(driver: DutDriver | None, dut: Executor | None,
                              hosts: Mapping[str, tuple[Executor, DutDriver]] | None = None) -> float | None:
    """measure_read_cost, or None when the reads fail now: a testbed comes up anyway, its trials
    measure and say their telemetry is partial (telemetry never costs a measurement)."""
    try:
        return measure_read_cost(driver, dut, hosts=hosts)
    except LinerateError:
        return None


def _read_window(driver: DutDriver | None, dut: Executor | None,
                 hosts: Mapping[str, tuple[Executor, DutDriver]]) -> tuple[Snapshot | None, dict[str, Snapshot]]:
    """The DUT's window snapshot and each generator host's CPU snapshot, read at the same moment:
    each on its own thread when there are several (an SSH command costs ~0.1 s: in turn, three hosts
    would take 0.3 s of a 1 s trial). Raises the first LinerateError."""
    jobs: dict[str, Any] = {role: (lambda h=host, d=d: d.cpu_snapshot(h)) for role, (host, d) in hosts.items()}
    if dut is not None and driver is not None:
        jobs["dut"] = lambda: driver.window_snapshot(dut)
    results: dict[str, Any] = {}
    if len(jobs) == 1:
        (role, job), = jobs.items()
        results[role] = job()
    elif jobs:
        def work(role: str, job) -> None:
            try:
                results[role] = job()
            except Exception as exc:  # noqa: BLE001 - handed to the caller's thread, raised there as it was
                results[role] = exc
        threads = [threading.Thread(target=work, args=item, daemon=True) for item in jobs.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for value in results.values():
            if isinstance(value, Exception):
                raise value
    return results.pop("dut", None), results


class _Command(threading.Thread):
    """One command on a worker thread: the traffic generator, or the RTT probe beside it."""

    def __init__(self, client: Executor, argv: list[str], timeout_s: float, ended: threading.Event | None = None):
        """ended: set when the command has finished (a pool's commands share one: the first end wakes a wait)."""
        super().__init__(daemon=True)
        self.client, self.argv, self.timeout_s = client, argv, timeout_s
        self.result: CommandResult | None = None
        self.error: ExecError | None = None
        self.started_at: float | None = None  # monotonic, just before the command was launched
        self.ended_at: float | None = None  # monotonic, when the command had finished
        self.ended = ended or threading.Event()

    def run(self) -> None:
        try:
            self.started_at = time.monotonic()
            self.result = self.client.run(self.argv, timeout_s=self.timeout_s, check=False)
        except ExecError as exc:
            self.error = exc
        finally:
            self.ended_at = time.monotonic()
            self.ended.set()


class _Generators:
    """A trial's generator runs (one, or a pool's pairs), launched together: alive while every one of
    them runs — a pool measures only while all its pairs send — and `ended_at` when the first one ended."""

    def __init__(self, client_argvs: list[tuple[Executor, list[str]]], timeout_s: float):
        self.first_ended = threading.Event()  # whichever ends first wakes a waiting window read
        self.commands = [_Command(client, argv, timeout_s, self.first_ended) for client, argv in client_argvs]

    def start(self) -> None:
        for command in self.commands:
            command.start()

    def is_alive(self) -> bool:
        return all(command.is_alive() for command in self.commands)

    def join(self, timeout: float | None = None) -> None:
        """With a timeout: until it passed or a generator ended; without: until all ended."""
        if timeout is not None:
            self.first_ended.wait(timeout)
            return
        for command in self.commands:
            command.join()

    @property
    def ended_at(self) -> float | None:
        ends = [command.ended_at for command in self.commands if command.ended_at is not None]
        return min(ends) if ends else None


@dataclasses.dataclass(frozen=True)
class PoolPair:
    """One client/server pair of a generator pool (topology/pool.py): role names, the client's executor and
    the address its server listens on."""

    client: str
    server: str
    executor: Executor
    address: str


def _sleep_until(deadline: float, generator: _Command | _Generators) -> bool:
    """Wait for the deadline; False when the generator ended first (no traffic left to measure)."""
    generator.join(max(0.0, deadline - time.monotonic()))
    return generator.is_alive()


@dataclasses.dataclass
class _WindowRead:
    at: float  # monotonic midpoint of the read
    cost_s: float
    dut: Snapshot | None
    hosts: dict[str, Snapshot]
    observed: dict[str, Any]


class _Telemetry:
    """The reads of one trial and what went missing; never raises for a read that failed."""

    def __init__(self, dut: Executor | None, driver: DutDriver | None, hosts: Mapping[str, tuple[Executor, DutDriver]],
                 observers: list[HostObserver]):
        self.dut, self.driver, self.hosts, self.observers = dut, driver, dict(hosts), observers
        self.full: dict[str, Snapshot] = {}  # "before" / "after" the run, when read
        self.window: list[_WindowRead] = []
        self.missing: list[str] = []

    @property
    def wanted(self) -> bool:
        return self.dut is not None or bool(self.hosts) or bool(self.observers)

    def full_read(self, when: str) -> None:
        if self.dut is None:
            return
        try:
            self.full[when] = self.driver.snapshot(self.dut)
        except LinerateError as exc:
            self.missing.append(f"DUT counters {when} the run: {exc}")

    def window_read(self, generator: "_Command", name: str) -> bool:
        """One window read; False (and why, in `missing`) when it failed or stands for a moment after the traffic."""
        began = time.monotonic()
        try:
            shot, others = _read_window(self.driver, self.dut, self.hosts)
        except LinerateError as exc:
            self.missing.append(f"window read {len(self.window) + 1}: {exc}")
            return False
        observed = {o.name: o.sample() for o in self.observers}
        ended = time.monotonic()
        # A read stands for its midpoint (`at`): one whose midpoint came after the traffic would span idle time
        stopped = None if generator.is_alive() else generator.ended_at
        if stopped is not None and (began + ended) / 2 > stopped - END_MARGIN_S:
            self.missing.append(f"window read {len(self.window) + 1} took {(ended - began) * 1000:.0f} ms: its "
                                f"midpoint came after {name} ended")
            return False
        self.window.append(_WindowRead((began + ended) / 2, ended - began, shot, others, observed))
        if len(self.window) == 2 and self.window[1].at - self.window[0].at < MIN_WINDOW_S:
            self.missing.append(f"the window reads were {self.window[1].at - self.window[0].at:.2f} s apart "
                                f"(a slow first read); under {MIN_WINDOW_S} s says nothing")
            self.window.pop()
            return False
        return True


def run_trial(client: Executor, dut: Executor | None, params: TrialParams, server_address: str,
              driver: DutDriver | None = None, generator: Generator = IPERF3,
              generator_hosts: Mapping[str, tuple[Executor, DutDriver]] | None = None,
              shared_kernel: bool = False, observers: list[HostObserver] | None = None,
              read_cost_s: float | None = None, pool: list[PoolPair] | None = None,
              start_tolerance_s: float = START_TOLERANCE_S) -> Trial:
    """generator_hosts: {"client": (executor, driver), "server": ...} whose CPUs are read with the
    DUT's (SSH testbeds); shared_kernel: the DUT is the generator's own kernel (namespace lab);
    observers: what the testbed sees of the DUT from outside (a VM's threads); read_cost_s: one
    window read's measured cost on this DUT (measure_read_cost); pool: a generator pool's pairs (the
    first is `client` -> `server_address`), launched together and summed over their common window
    (pool/window.py; start_tolerance_s: how far their set-ups may differ); the DUT's window reads fall within it."""
    pairs = pool or [PoolPair("client", "server", client, server_address)]
    argvs = [generator.pool_client_argv(params, p.address) if pool else generator.client_argv(params, p.address)
             for p in pairs]
    argv = argvs[0]
    if dut is not None and driver is None:
        driver = LinuxDriver()
    telemetry = _Telemetry(dut, driver, generator_hosts or {}, list(observers or []))
    first_at, second_at = window_offsets(params, read_cost_s)
    too_short = window_problem(params, read_cost_s)
    idle: list[float | None] | None = None
    prober = None
    if params.latency:  # idle RTT first, on a quiet path; no load is sent when the probe cannot run
        idle_probe = _rtt_probe(client, params.family, server_address, latency.IDLE_PROBES)
        idle_probe.run()
        try:
            idle = _rtt_samples(idle_probe, server_address)
        except LinerateError as exc:
            return Trial(status="failed", params=params, argv=tuple(argv), error=f"latency probe (idle): {exc}")
        prober = _rtt_probe(client, params.family, server_address, latency.probe_count(second_at - first_at))
    telemetry.full_read("before")
    worker = _Generators([(p.executor, a) for p, a in zip(pairs, argvs)], generator.timeout_s(params))
    launched = time.monotonic()
    worker.start()
    if prober is not None and _sleep_until(launched + first_at, worker):
        prober.start()  # the loaded probes span the measured window, as the DUT reads do
    if telemetry.wanted and too_short:
        telemetry.missing.append(too_short)
    elif telemetry.wanted:
        for offset in (first_at, second_at):
            if telemetry.window:  # the first read ran under load: a second as slow must still stand within it
                offset = min(offset, latest_second_read(params, telemetry.window[0].cost_s))
            if not _sleep_until(launched + offset, worker):
                telemetry.missing.append(f"{generator.name} ended before window read {len(telemetry.window) + 1} "
                                         f"(planned {offset:.2f} s after start)")
                break
            if not telemetry.window_read(worker, generator.name):
                break
    worker.join()
    runs = [Trial(status="failed", params=params, argv=tuple(c.argv), error=str(c.error)) if c.error is not None
            else _parse(c.result, params, c.argv, generator) for c in worker.commands]
    trial = runs[0] if pool is None else pool_trial(
        [Member(p.client, p.server, p.address, c.started_at or launched, run, c.ended_at)
         for p, c, run in zip(pairs, worker.commands, runs)], params, start_tolerance_s)
    if any(c.error is not None for c in worker.commands):
        return trial  # a generator that could not be run at all: nothing was measured
    if prober is not None:
        trial = _with_latency(trial, server_address, idle, prober)
    if not telemetry.wanted:
        return trial
    telemetry.full_read("after")
    return _with_telemetry(trial, telemetry, shared_kernel)


def _with_telemetry(trial: Trial, t: _Telemetry, shared_kernel: bool) -> Trial:
    """The trial with what its reads gave: counter deltas from the full reads, the window's CPU
    split and interrupts, observers' deltas; `partial` names whatever is missing."""
    stored = dict(trial.telemetry)
    raw: dict[str, dict[str, str]] = {}
    dut_counters: dict[str, int] = {}
    dut: dict[str, Any] = {"shared_kernel": shared_kernel, "window_reads": len(t.window)}
    before, after = t.full.get("before"), t.full.get("after")
    shots = [s for s in (before, after, *(r.dut for r in t.window)) if s is not None]
    t.missing.extend(dict.fromkeys(line for shot in shots for line in shot.unreadable))  # one bad probe: its figures
    if before is not None and after is not None:
        delta = telemetry_delta(before, after)
        dut_counters = counters.delta(before.counters, after.counters)
        if delta.get("unavailable"):
            dut["unavailable"] = delta["unavailable"]
        raw["dut"] = {"before": before.raw, "after": after.raw}
    if len(t.window) == 2:
        first, second = t.window
        window_s = round(second.at - first.at, 3)
        dut["window_s"] = window_s
        dut["read_ms"] = [round(r.cost_s * 1000, 1) for r in t.window]
        if first.dut is not None and second.dut is not None:
            window = telemetry_delta(first.dut, second.dut)
            dut["cpu"], dut["interrupts"] = window["cpu"], window["interrupts"]
            dut["window_counters"] = {k: v for k, v in window["counters"].items() if v}
            if window.get("unavailable"):
                dut["unavailable"] = sorted(set(dut.get("unavailable", [])) | set(window["unavailable"]))
            raw["dut_window"] = {"before": first.dut.raw, "after": second.dut.raw}
        for role in second.hosts:
            stored[role] = {"cpu": cpu_delta(first.hosts[role].cpu, second.hosts[role].cpu)}
            raw[role] = {"before": first.hosts[role].raw, "after": second.hosts[role].raw}
        for observer in t.observers:
            stored[observer.name] = observer.delta(first.observed[observer.name], second.observed[observer.name],
                                                   window_s)
    if t.missing and t.dut is not None:
        dut["partial"] = "; ".join(t.missing)
    elif t.missing:  # a testbed without a DUT: only the generator hosts' CPUs were to be read
        stored["hosts_partial"] = "; ".join(t.missing)
    if t.dut is not None:
        stored["dut"] = dut
    return dataclasses.replace(trial, dut_counters=dut_counters or trial.dut_counters, telemetry=stored,
                               telemetry_raw={**trial.telemetry_raw, **raw})


def _rtt_probe(client: Executor, family: int, address: str, count: int) -> _Command:
    return _Command(client, latency.fping_argv(address, family, count), latency.timeout_s(count))


def _rtt_samples(probe: _Command, address: str) -> list[float | None]:
    if probe.error is not None:
        raise probe.error
    return latency.parse_fping(probe.result.stderr, address, int(probe.argv[probe.argv.index("-C") + 1]))


def _with_latency(trial: Trial, address: str, idle: list[float | None], loaded: _Command) -> Trial:
    """The trial with its rtt_* columns and the probes' samples (telemetry["latency"]); a probe
    that could not run fails the trial: latency was asked for, and a trial without it is no answer."""
    if loaded.ident is not None:
        loaded.join()  # never leave a probe running into the next trial
    if not trial.ok:
        return trial
    if loaded.ident is None:
        return dataclasses.replace(trial, status="failed",
                                   error="latency probe: the traffic ended before the measured window began")
    try:
        phases = {"idle": idle, "loaded": _rtt_samples(loaded, address)}
    except LinerateError as exc:
        return dataclasses.replace(trial, status="failed", error=f"latency probe (loaded): {exc}")
    samples = {"tool": "fping", "interval_ms": latency.INTERVAL_MS, **phases}
    return dataclasses.replace(trial, **latency.trial_fields(phases), telemetry={**trial.telemetry, "latency": samples})


def _parse(result: CommandResult, params: TrialParams, argv: list[str], generator: Generator) -> Trial:
    if result.stdout.strip():
        try:
            return generator.parse(result.stdout, params, argv)
        except LinerateError as exc:
            return Trial(status="failed", params=params, argv=tuple(argv), error=str(exc), raw=result.stdout)
    message = result.stderr.strip() or f"{generator.name} exited {result.returncode} with no output"
    return Trial(status="failed", params=params, argv=tuple(argv), error=message)
