"""Run one iperf3 trial through the DUT, given executors for the client and the DUT.

Independent of how the lab was built: works with namespace executors, the FakeExecutor in tests,
and (later) SSH executors on real hosts.
"""

from __future__ import annotations

import dataclasses

from linerate import counters
from linerate.errors import ExecError, LinerateError
from linerate.exec import Executor
from linerate.model import Trial, TrialParams
from linerate.traffic import iperf3

LINK_STATS_ARGV = ["ip", "-j", "-s", "link", "show"]
NSTAT_ARGV = ["nstat", "-a", "-z", "-s", "-j"]  # -s: leave nstat's history file alone
QDISC_STATS_ARGV = ["tc", "-s", "-j", "qdisc", "show"]


def read_dut_counters(dut: Executor) -> dict[str, int]:
    links = dut.run(LINK_STATS_ARGV, timeout_s=10).stdout
    snmp = dut.run(NSTAT_ARGV, timeout_s=10).stdout
    qdiscs = dut.run(QDISC_STATS_ARGV, timeout_s=10).stdout
    return {**counters.parse_link_stats(links), **counters.parse_nstat(snmp), **counters.parse_qdisc_stats(qdiscs)}


def run_trial(client: Executor, dut: Executor | None, params: TrialParams, server_address: str) -> Trial:
    argv = iperf3.client_argv(params, server_address)
    before = read_dut_counters(dut) if dut is not None else {}
    try:
        result = client.run(argv, timeout_s=iperf3.client_timeout_s(params), check=False)
    except ExecError as exc:
        return Trial(status="failed", params=params, argv=tuple(argv), error=str(exc))
    if result.stdout.strip():
        try:
            trial = iperf3.parse(result.stdout, params, argv)
        except LinerateError as exc:
            trial = Trial(status="failed", params=params, argv=tuple(argv), error=str(exc), raw=result.stdout)
    else:
        message = result.stderr.strip() or f"iperf3 exited {result.returncode} with no output"
        trial = Trial(status="failed", params=params, argv=tuple(argv), error=message)
    if dut is not None:
        trial = dataclasses.replace(trial, dut_counters=counters.delta(before, read_dut_counters(dut)))
    return trial
