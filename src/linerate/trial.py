"""Run one trial through the DUT, given executors for the client and the DUT, a DutDriver and a
Generator. Independent of how the testbed was built: namespace executors, SSH executors on real
hosts, or the FakeExecutor in tests all look the same from here.

DUT telemetry is read just before and just after the run (two snapshots, no sampler on the
DUT): counter deltas go to dut_counters, the per-CPU busy split and interrupts per source to
telemetry["dut"]. A DUT that cannot be read (a dropped SSH connection) fails the trial, which is
stored and retried like any other failure.
"""

from __future__ import annotations

import dataclasses

from linerate import counters
from linerate.dut.base import DutDriver, telemetry_delta
from linerate.errors import ExecError, LinerateError
from linerate.exec import Executor
from linerate.model import Trial, TrialParams
from linerate.traffic.base import Generator
from linerate.traffic.iperf3 import IPERF3


def run_trial(client: Executor, dut: Executor | None, params: TrialParams, server_address: str,
              driver: DutDriver | None = None, generator: Generator = IPERF3) -> Trial:
    argv = generator.client_argv(params, server_address)
    if dut is not None and driver is None:
        from linerate.dut.linux import LinuxDriver

        driver = LinuxDriver()
    try:
        before = driver.snapshot(dut) if dut is not None else None
    except LinerateError as exc:
        return Trial(status="failed", params=params, argv=tuple(argv), error=f"DUT telemetry: {exc}")
    try:
        result = client.run(argv, timeout_s=generator.timeout_s(params), check=False)
    except ExecError as exc:
        return Trial(status="failed", params=params, argv=tuple(argv), error=str(exc))
    if result.stdout.strip():
        try:
            trial = generator.parse(result.stdout, params, argv)
        except LinerateError as exc:
            trial = Trial(status="failed", params=params, argv=tuple(argv), error=str(exc), raw=result.stdout)
    else:
        message = result.stderr.strip() or f"{generator.name} exited {result.returncode} with no output"
        trial = Trial(status="failed", params=params, argv=tuple(argv), error=message)
    if before is not None:
        try:
            after = driver.snapshot(dut)
        except LinerateError as exc:
            return dataclasses.replace(trial, status="failed", error=f"DUT telemetry after the run: {exc}")
        telemetry = telemetry_delta(before, after)
        telemetry.pop("counters")
        trial = dataclasses.replace(trial, dut_counters=counters.delta(before.counters, after.counters),
                                    telemetry={"dut": telemetry})
    return trial
