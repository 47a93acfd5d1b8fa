"""Run one trial through the DUT, given executors for the client and the DUT, a DutDriver and a
Generator. Independent of how the testbed was built: namespace executors, SSH executors on real
hosts, or the FakeExecutor in tests all look the same from here.

Telemetry covers the measured window only. The generator runs on a worker thread; the DUT (and,
on a testbed of separate machines, the client and server hosts' CPUs) is read once after iperf3's
omit period has passed plus a setup margin, and once just before the run's end — two reads while
traffic flows, no sampler on the DUT (a sampler on a saturated DUT is starved and perturbs it).
Counter deltas go to dut_counters, the per-CPU busy split, interrupts per source and the window's
length to telemetry["dut"], the raw outputs of both reads to telemetry_raw (table trial_raw). A DUT that cannot
be read (a dropped SSH connection) fails the trial, which is stored and retried like any other.

Latency (params.latency): fping probes the server for one second before the load (idle) and
through the same measured window while the load runs (traffic/latency.py); both sets of samples go
to telemetry["latency"], their median/p90/p99/max to the trial's rtt_* columns.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Mapping

from linerate import counters
from linerate.dut.base import DutDriver, Snapshot, cpu_delta, telemetry_delta
from linerate.errors import ExecError, LinerateError
from linerate.exec import Executor
from linerate.exec.base import CommandResult
from linerate.model import Trial, TrialParams
from linerate.traffic import latency
from linerate.traffic.base import Generator
from linerate.traffic.iperf3 import IPERF3

SETUP_MARGIN_S = 0.3  # process start + connection set-up before iperf3's own clock starts
END_MARGIN_S = 0.25  # the second read must finish while traffic still flows


def window_offsets(params: TrialParams) -> tuple[float, float]:
    """(first read, second read) in seconds after the generator is launched."""
    start = SETUP_MARGIN_S + params.omit_s
    end = start + params.duration_s - min(END_MARGIN_S + SETUP_MARGIN_S, params.duration_s / 2)
    return start, max(start, end)


class _Command(threading.Thread):
    """One command on a worker thread: the traffic generator, or the RTT probe beside it."""

    def __init__(self, client: Executor, argv: list[str], timeout_s: float):
        super().__init__(daemon=True)
        self.client, self.argv, self.timeout_s = client, argv, timeout_s
        self.result: CommandResult | None = None
        self.error: ExecError | None = None

    def run(self) -> None:
        try:
            self.result = self.client.run(self.argv, timeout_s=self.timeout_s, check=False)
        except ExecError as exc:
            self.error = exc


def _sleep_until(deadline: float, generator: _Command) -> bool:
    """Wait for the deadline; False when the generator ended first (no traffic left to measure)."""
    generator.join(max(0.0, deadline - time.monotonic()))
    return generator.is_alive()


def run_trial(client: Executor, dut: Executor | None, params: TrialParams, server_address: str,
              driver: DutDriver | None = None, generator: Generator = IPERF3,
              generator_hosts: Mapping[str, tuple[Executor, DutDriver]] | None = None,
              shared_kernel: bool = False) -> Trial:
    """generator_hosts: {"client": (executor, driver), "server": ...} whose CPUs are read with the
    DUT's (SSH testbeds); shared_kernel: the DUT is the generator's own kernel (namespace lab)."""
    argv = generator.client_argv(params, server_address)
    if dut is not None and driver is None:
        from linerate.dut.linux import LinuxDriver

        driver = LinuxDriver()
    hosts = dict(generator_hosts or {})
    first_at, second_at = window_offsets(params)
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
    worker = _Command(client, argv, generator.timeout_s(params))
    launched = time.monotonic()
    worker.start()
    if prober is not None and _sleep_until(launched + first_at, worker):
        prober.start()  # the loaded probes span the measured window, as the DUT reads do
    reads: list[tuple[float, Snapshot, dict[str, Snapshot]]] = []
    telemetry_error = None
    if dut is not None:
        for offset in (first_at, second_at):
            if not _sleep_until(launched + offset, worker):
                break
            try:
                taken = time.monotonic()
                shot = driver.snapshot(dut)
                others = {role: d.cpu_snapshot(host) for role, (host, d) in hosts.items()}
                reads.append(((taken + time.monotonic()) / 2, shot, others))
            except LinerateError as exc:
                telemetry_error = f"DUT telemetry: {exc}"
                break
    worker.join()
    if worker.error is not None:
        return Trial(status="failed", params=params, argv=tuple(argv), error=str(worker.error))
    trial = _parse(worker.result, params, argv, generator)
    if prober is not None:
        trial = _with_latency(trial, server_address, idle, prober)
    if dut is None:
        return trial
    if telemetry_error:
        return dataclasses.replace(trial, status="failed", error=telemetry_error)
    if len(reads) < 2:
        message = f"{generator.name} ended before the measured window was read ({len(reads)} of 2 DUT reads)"
        return trial if not trial.ok else dataclasses.replace(trial, status="failed", error=message)
    (t0, before, others0), (t1, after, others1) = reads
    dut_telemetry = telemetry_delta(before, after)
    dut_telemetry.pop("counters")
    dut_telemetry.update(window_s=round(t1 - t0, 3), shared_kernel=shared_kernel)
    telemetry = {**trial.telemetry, "dut": dut_telemetry}
    raw = {"dut": {"before": before.raw, "after": after.raw}}
    for role in others1:
        telemetry[role] = {"cpu": cpu_delta(others0[role].cpu, others1[role].cpu)}
        raw[role] = {"before": others0[role].raw, "after": others1[role].raw}
    return dataclasses.replace(trial, dut_counters=counters.delta(before.counters, after.counters),
                               telemetry=telemetry, telemetry_raw=raw)


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
