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
from linerate.traffic.base import Generator
from linerate.traffic.iperf3 import IPERF3

SETUP_MARGIN_S = 0.3  # process start + connection set-up before iperf3's own clock starts
END_MARGIN_S = 0.25  # the second read must finish while traffic still flows


def window_offsets(params: TrialParams) -> tuple[float, float]:
    """(first read, second read) in seconds after the generator is launched."""
    start = SETUP_MARGIN_S + params.omit_s
    end = start + params.duration_s - min(END_MARGIN_S + SETUP_MARGIN_S, params.duration_s / 2)
    return start, max(start, end)


class _Generator(threading.Thread):
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


def _sleep_until(deadline: float, generator: _Generator) -> bool:
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
    worker = _Generator(client, argv, generator.timeout_s(params))
    launched = time.monotonic()
    worker.start()
    first_at, second_at = window_offsets(params)
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
    telemetry = {"dut": dut_telemetry}
    raw = {"dut": {"before": before.raw, "after": after.raw}}
    for role in others1:
        telemetry[role] = {"cpu": cpu_delta(others0[role].cpu, others1[role].cpu)}
        raw[role] = {"before": others0[role].raw, "after": others1[role].raw}
    return dataclasses.replace(trial, dut_counters=counters.delta(before.counters, after.counters),
                               telemetry=telemetry, telemetry_raw=raw)


def _parse(result: CommandResult, params: TrialParams, argv: list[str], generator: Generator) -> Trial:
    if result.stdout.strip():
        try:
            return generator.parse(result.stdout, params, argv)
        except LinerateError as exc:
            return Trial(status="failed", params=params, argv=tuple(argv), error=str(exc), raw=result.stdout)
    message = result.stderr.strip() or f"{generator.name} exited {result.returncode} with no output"
    return Trial(status="failed", params=params, argv=tuple(argv), error=message)
