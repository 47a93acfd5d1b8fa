"""Generator: argv builders and a parser for one traffic tool, returning a generator-neutral Trial
(throughput_bps, retransmits, packets_sent/lost ... plus generator and generator_version).
iperf3 is the first (traffic/iperf3.py: IPERF3); a packet generator joins behind the same seam."""

from __future__ import annotations

from typing import Protocol

from linerate.model import Trial, TrialParams


class Generator(Protocol):
    name: str

    def client_argv(self, params: TrialParams, server_address: str) -> list[str]: ...

    def server_daemon_argv(self, port: int, pidfile: str, idle_timeout_s: int) -> list[str]: ...

    def timeout_s(self, params: TrialParams) -> float: ...

    def parse(self, text: str, params: TrialParams, argv: list[str]) -> Trial: ...

    def version_argv(self) -> list[str]: ...
