"""Generator: argv builders and a parser for one traffic tool, returning a generator-neutral Trial
(throughput_bps, retransmits, packets_sent/lost ... plus generator and generator_version).
iperf3 is the first (traffic/iperf3.py: IPERF3).

FrameSender: what sends frames of a size at a rate for the packet-rate search (search/frame_path.py):
trafgen (traffic/trafgen.py: TrafgenSender) and iperf3 UDP (traffic/iperf3_udp.py: Iperf3UdpSender).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from linerate.errors import ExecError, ParseError
from linerate.model import Trial, TrialParams


class Generator(Protocol):
    name: str

    def client_argv(self, params: TrialParams, server_address: str) -> list[str]: ...

    def pool_client_argv(self, params: TrialParams, server_address: str) -> list[str]: ...  # one pair of a pool

    def server_daemon_argv(self, port: int, pidfile: str, idle_timeout_s: int, pool: bool = False) -> list[str]: ...

    def timeout_s(self, params: TrialParams) -> float: ...

    def parse(self, text: str, params: TrialParams, argv: list[str]) -> Trial: ...

    def version_argv(self) -> list[str]: ...


GENERATORS = ("auto", "trafgen", "iperf3")  # frame senders a packet-rate search can use (--generator)


class FrameSender(Protocol):
    name: str  # "trafgen 0.6.8", "iperf3 3.12 (UDP)"
    count_verdict: str  # what the server's counting rule does with the frames: "drop" or "accept"

    def check(self, frame: Any, family: int) -> None: ...  # ConfigError: cannot make this frame

    def min_frame(self, family: int) -> int: ...

    def send(self, client: Any, device: str, flow: Any, frame: Any, rate_pps: int | None, count: int, *,
             to_dut: bool = True, pace: bool = False,
             qdisc: Sequence[Sequence[str]] = ()) -> Any: ...  # trafgen.Sent; pace: space the frames
    # evenly where the sender's own pacing does not (trafgen's --rate sends each second's frames at once);
    # qdisc: the tc argv that give the device back the qdiscs it holds when not pacing (a pool's pair link)


def run_sender(client: Any, argv: Sequence[str], parse: Callable[[str], Any], count: int, rate_pps: int | None,
               stdin: str | None = None, with_stderr: bool = False) -> Any:
    """Run a sender's argv on the client and parse what it printed (stdout, and stderr after it when
    the summary may be there: trafgen's is); a missing or unreadable summary is an ExecError naming
    the command and the host. The timeout allows three times the intended sending time (unpaced: at
    50 kframes/s) plus 30 s."""
    seconds = count / rate_pps if rate_pps else count / 50_000
    result = client.run(list(argv), stdin=stdin, timeout_s=3 * seconds + 30, check=False)
    try:
        return parse(result.stdout + "\n" + result.stderr if with_stderr else result.stdout)
    except ParseError as exc:
        said = next((line.strip() for line in result.stderr.splitlines() if line.strip()), "")
        detail = str(exc) if with_stderr or not said else f"{exc}; stderr: {said[:200]}"
        raise ExecError(tuple(argv), client.host, result.returncode, detail) from None
