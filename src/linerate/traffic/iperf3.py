"""iperf3: build client/server argv and parse `iperf3 -J` output into a Trial.

The throughput we report is the *receiver* side (end.sum_received), because that is what crossed
the device under test; the sender side counts bytes that may still be queued or lost. For UDP the
receiver figure also excludes lost datagrams.

iperf3 (seen with 3.12) can exit 0 while its JSON carries an "error" field, e.g. "unable to connect
to server: Connection refused". Such output is a failed trial with that message, never a zero.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from linerate.errors import ParseError
from linerate.model import MAX_BITRATE_BPS, MIN_BITRATE_BPS, Trial, TrialParams

CONNECT_TIMEOUT_MS = 3000
# A sender whose iperf3 reports its host's CPU at or above this measured that host, not the path: the trial is
# flagged generator-bound (kinds/throughput/calibration.py) and a pool's busy hosts are named (diagnose/facts.py).
SENDER_CPU_LIMIT_PCT = 90.0


POOL_INTERVAL_S = 0.5  # a pool's servers report the receiver's bytes this often (pool/window.py)


def server_argv(port: int = 5201, pool: bool = False) -> list[str]:
    """Kept running between trials; -1 would make it exit after one test. A pool's server reports in JSON
    every POOL_INTERVAL_S, which its client fetches (pool_client_argv): the receiver's own intervals."""
    return ["iperf3", "--server", "--port", str(port)] + (["--json", "--interval", str(POOL_INTERVAL_S)] if pool
                                                          else [])


def client_argv(params: TrialParams, server_address: str) -> list[str]:
    argv = [
        "iperf3",
        "--client", server_address,
        "--port", str(params.port),
        "--json",
        "--time", str(params.duration_s),
        "--omit", str(params.omit_s),
        "--parallel", str(params.streams),
        "--connect-timeout", str(CONNECT_TIMEOUT_MS),
        "-4" if params.family == 4 else "-6",
    ]
    if params.direction == "reverse":
        argv.append("--reverse")
    elif params.direction == "bidir":
        argv.append("--bidir")
    if params.protocol == "udp":
        argv += ["--udp", "--bitrate", str(params.udp_bitrate_bps)]
    if params.congestion:
        argv += ["--congestion", params.congestion]
    return argv


def client_timeout_s(params: TrialParams) -> float:
    """Wall-clock bound for one client run: the test, its warm-up, connect and result exchange."""
    return params.duration_s + params.omit_s + CONNECT_TIMEOUT_MS / 1000 + 10


MAX_RATE_BPS = 1e15  # 1 Pbit/s: anything above is a corrupt or crafted file, not a measurement
MAX_COUNT = 2**53  # exactly representable; SQLite INTEGER holds it


def _reject_constant(name: str):
    raise ParseError(f"iperf3 JSON holds {name}, which is not a measurement")


def load_json(text: str, source: str = "iperf3 output") -> dict[str, Any]:
    """json.loads that refuses Infinity/NaN and absurd nesting, naming the source."""
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ParseError(f"{source} is not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise ParseError(f"{source} is nested too deeply to be iperf3 output") from None
    except ValueError:  # Python's limit on digits in an integer (a crafted 5,000-digit number)
        raise ParseError(f"{source} holds a number too long to be a measurement") from None
    if not isinstance(doc, dict):
        raise ParseError(f"{source} is JSON but not an object")
    return doc


def _section(doc: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ParseError(f"{where}.{key} is {type(value).__name__}, not an object")
    return value


def _num(section: dict[str, Any], key: str, where: str, *, upper: float = MAX_RATE_BPS,
         integer: bool = False) -> float | int | None:
    """A field that must be a finite, non-negative number (absent: None). ParseError names it."""
    value = section.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(f"{where}.{key} is {type(value).__name__}, not a number")
    # compared before math.isfinite, which cannot take a 401-digit integer (OverflowError)
    if (isinstance(value, float) and not math.isfinite(value)) or value < 0 or value > upper:
        shown = repr(value) if len(repr(value)) <= 30 else f"a {len(str(value))}-digit number"
        raise ParseError(f"{where}.{key} = {shown} is out of range (0 to {upper:g})")
    if integer:
        if value != int(value):
            raise ParseError(f"{where}.{key} = {value!r} is not a whole number")
        return int(value)
    return float(value)


def _check_consistent(section: dict[str, Any], where: str) -> None:
    """bits_per_second must be what bytes over seconds give (iperf3 computes it so): 0 bytes at
    16 Gbit/s, or a rate a thousand times its bytes, is a crafted or corrupt file."""
    rate = _num(section, "bits_per_second", where)
    size = _num(section, "bytes", where, upper=MAX_COUNT, integer=True)
    seconds = _num(section, "seconds", where, upper=1e7)
    if rate is None or size is None or not seconds:
        return
    expected = size * 8 / seconds
    if abs(rate - expected) > 0.1 * max(rate, expected) + 1e3:
        raise ParseError(f"{where}.bits_per_second = {rate:g} does not match its bytes ({size}) over "
                         f"{seconds:g} s: not a measurement")


def udp_loss(sent: dict[str, Any], received: dict[str, Any], blksize: int | None) -> tuple[int | None, int | None]:
    """(datagrams sent, datagrams lost) from packet counts, never from iperf3's lost_percent.

    iperf3 3.12 with --omit counts datagrams of the omitted seconds as lost and reports
    lost_percent > 100 (esnet/iperf#1489; #412 for the negative variant). Sent is the sender's
    count in the measured window (end.sum_sent.packets); received is what the receiver counted in
    its window: bytes / datagram size. Loss is their difference, clipped at 0 (a datagram in flight
    at a window edge can make received exceed sent by a few)."""
    packets = _num(sent, "packets", "end.sum_sent", upper=MAX_COUNT, integer=True)
    got_bytes = _num(received, "bytes", "end.sum_received", upper=MAX_COUNT, integer=True)
    if packets is None:
        return None, None
    if blksize and got_bytes is not None:
        received_packets = got_bytes // blksize
    else:
        total = _num(received, "packets", "end.sum_received", upper=MAX_COUNT, integer=True)
        lost = _num(received, "lost_packets", "end.sum_received", upper=MAX_COUNT, integer=True)
        if total is None or lost is None:
            return packets, None
        received_packets = total - min(lost, total)
    return packets, max(0, packets - received_packets)


@dataclass(frozen=True)
class Interval:
    """One `intervals[]` entry of iperf3 -J: the client's per-interval sum (sender side for a forward
    test, receiver side for --reverse; iperf3 says which in `sender`)."""

    start_s: float
    end_s: float
    bits_per_second: float
    omitted: bool
    sender: bool
    reverse: bool = False  # --bidir: the server -> client half (sum_bidir_reverse)


def intervals(text: str, source: str = "iperf3 output") -> list[Interval]:
    """Per-interval throughput of an `iperf3 -J` run, in time order. ParseError on bad figures."""
    doc = load_json(text, source)
    entries = doc.get("intervals") or []
    if not isinstance(entries, list):
        raise ParseError(f"{source}: intervals is {type(entries).__name__}, not a list")
    out = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ParseError(f"{source}: intervals[{index}] is not an object")
        for key, reverse in (("sum", False), ("sum_bidir_reverse", True)):
            total = _section(entry, key, f"intervals[{index}]")
            where = f"intervals[{index}].{key}"
            rate = _num(total, "bits_per_second", where)
            if rate is None:
                continue
            out.append(Interval(_num(total, "start", where, upper=1e7) or 0.0, _num(total, "end", where, upper=1e7)
                                or 0.0, rate, bool(total.get("omitted")), bool(total.get("sender", True)), reverse))
    return out


def receiver_intervals(text: str, direction: str, source: str = "iperf3 output") -> list[Interval]:
    """The receiver's measured (not omitted) intervals of a run: a forward test's from the server's own
    report (`--get-server-output` against a `--json` server: server_output_json), a reverse test's from
    the client, which received. Their clock starts when the omitted seconds end. [] when the text has none."""
    doc = load_json(text, source)
    if direction == "forward":
        server = doc.get("server_output_json")
        if not isinstance(server, dict):
            return []
        text, source = json.dumps(server), f"{source}: server_output_json"
    return [i for i in intervals(text, source) if not i.omitted and not i.sender and not i.reverse]


def parse(text: str, params: TrialParams, argv: list[str] | tuple[str, ...], source: str = "iperf3 output") -> Trial:
    """Parse `iperf3 -J` output. Raises ParseError, naming the field, when the text is not iperf3
    JSON or a figure in it is not a finite, non-negative number of the right type."""
    doc = load_json(text, source)
    if not ({"start", "end", "error"} & doc.keys()):
        raise ParseError(f"{source} is JSON but has none of start/end/error")
    start = _section(doc, "start", source)
    version = start.get("version")
    if version is not None and not isinstance(version, str):
        raise ParseError(f"{source}: start.version is not text")
    timestamp = _num(_section(start, "timestamp", "start"), "timesecs", "start.timestamp", upper=2**40)
    common = dict(params=params, argv=tuple(argv), generator="iperf3", generator_version=version and version[:40],
                  timestamp=timestamp,
                  raw=text)
    if doc.get("error"):
        return Trial(status="failed", error=str(doc["error"])[:500], **common)
    end = _section(doc, "end", source)
    received = _section(end, "sum_received", "end") or _section(end, "sum", "end")
    sent = _section(end, "sum_sent", "end") or _section(end, "sum", "end")
    throughput = _num(received, "bits_per_second", "end.sum_received")
    if throughput is None:
        return Trial(status="failed", error="iperf3 reported no receiver summary (end.sum_received)", **common)
    _check_consistent(received, "end.sum_received")
    _check_consistent(sent, "end.sum_sent")
    sender_bps = _num(sent, "bits_per_second", "end.sum_sent")
    if sender_bps is not None and throughput > 2 * sender_bps + 1e6:
        raise ParseError(f"end.sum_received.bits_per_second = {throughput:g} is more than twice what the sender "
                         f"sent ({sender_bps:g}): not a measurement")
    cpu = _section(end, "cpu_utilization_percent", "end")
    retransmits = _num(sent, "retransmits", "end.sum_sent", upper=MAX_COUNT, integer=True)
    reverse = _section(end, "sum_received_bidir_reverse", "end")
    if params.direction == "bidir" and "sum_sent_bidir_reverse" in end:
        extra = _num(_section(end, "sum_sent_bidir_reverse", "end"), "retransmits", "end.sum_sent_bidir_reverse",
                     upper=MAX_COUNT, integer=True)
        retransmits = (retransmits or 0) + (extra or 0)
    congestion = end.get("sender_tcp_congestion")
    udp = params.protocol == "udp"
    packets_sent = packets_lost = lost_percent = None
    if udp:
        blksize = _num(_section(start, "test_start", "start"), "blksize", "start.test_start", upper=2**20,
                       integer=True)
        packets_sent, packets_lost = udp_loss(sent, received, blksize)
        if packets_sent and packets_lost is not None:
            lost_percent = 100.0 * packets_lost / packets_sent
        elif packets_sent == 0:
            lost_percent = 0.0
    return Trial(
        status="ok",
        throughput_bps=throughput,
        sender_bps=sender_bps,
        reverse_throughput_bps=_num(reverse, "bits_per_second", "end.sum_received_bidir_reverse"),
        retransmits=retransmits,
        cpu_local_pct=_num(cpu, "host_total", "end.cpu_utilization_percent", upper=10_000),
        cpu_remote_pct=_num(cpu, "remote_total", "end.cpu_utilization_percent", upper=10_000),
        packets_sent=packets_sent,
        packets_lost=packets_lost,
        lost_percent=lost_percent,
        jitter_ms=_num(received, "jitter_ms", "end.sum_received", upper=1e7) if udp else None,
        congestion=congestion[:16] if isinstance(congestion, str) else None,
        **common,
    )


def params_from_json(text: str, source: str = "iperf3 output") -> TrialParams:
    """Recover TrialParams from a hand-run iperf3 -J file (for `linerate import`). ParseError or
    ConfigError (naming the field) when a parameter is missing its type or range."""
    doc = load_json(text, source)
    start = _section(doc, "start", source)
    test = _section(start, "test_start", "start")
    connecting = _section(start, "connecting_to", "start")
    host = str(connecting.get("host", ""))
    end = _section(doc, "end", source)
    if "sum_sent_bidir_reverse" in end:
        direction = "bidir"
    elif test.get("reverse"):
        direction = "reverse"
    else:
        direction = "forward"
    streams = _num(test, "num_streams", "start.test_start", upper=128, integer=True) or 1
    duration = _num(test, "duration", "start.test_start", upper=86_400, integer=True) or 1
    omit = _num(test, "omit", "start.test_start", upper=600, integer=True) or 0
    bitrate = _num(test, "target_bitrate", "start.test_start", upper=MAX_BITRATE_BPS, integer=True)
    port = _num(connecting, "port", "start.connecting_to", upper=65535, integer=True) or 5201
    protocol = test.get("protocol", "TCP")
    if not isinstance(protocol, str):
        raise ParseError("start.test_start.protocol is not text")
    return TrialParams(
        family=6 if ":" in host else 4,
        streams=streams,
        direction=direction,
        duration_s=max(1, duration),
        omit_s=omit,
        protocol="udp" if protocol.upper() == "UDP" else "tcp",
        udp_bitrate_bps=bitrate if bitrate and bitrate >= MIN_BITRATE_BPS else 1_000_000_000,
        port=port,
    )


class Iperf3Generator:
    """iperf3 behind the Generator seam (traffic/base.py)."""

    name = "iperf3"

    def client_argv(self, params: TrialParams, server_address: str) -> list[str]:
        return client_argv(params, server_address)

    def pool_client_argv(self, params: TrialParams, server_address: str) -> list[str]:
        """One pair's run in a pool: the same, with the server's per-interval receiver report attached."""
        return client_argv(params, server_address) + ["--get-server-output"]

    def server_daemon_argv(self, port: int, pidfile: str, idle_timeout_s: int, pool: bool = False) -> list[str]:
        """A server on a remote host that ends by itself: --idle-timeout makes it exit when no test
        came for that long (a controller that died cannot leave it running for ever), --pidfile
        lets `testbed restore` stop it by pid, never by name. A pool's server reports the receiver's
        intervals as server_argv's does."""
        return [*server_argv(port, pool), "--daemon", "--pidfile", pidfile, "--idle-timeout", str(idle_timeout_s)]

    def timeout_s(self, params: TrialParams) -> float:
        return client_timeout_s(params)

    def parse(self, text: str, params: TrialParams, argv: list[str]) -> Trial:
        return parse(text, params, argv)

    def version_argv(self) -> list[str]:
        return ["iperf3", "--version"]


IPERF3 = Iperf3Generator()
