"""iperf3: build client/server argv and parse `iperf3 -J` output into a Trial.

The throughput we report is the *receiver* side (end.sum_received), because that is what crossed
the device under test; the sender side counts bytes that may still be queued or lost. For UDP the
receiver figure also excludes lost datagrams.

iperf3 (seen with 3.12) can exit 0 while its JSON carries an "error" field, e.g. "unable to connect
to server: Connection refused". Such output is a failed trial with that message, never a zero.
"""

from __future__ import annotations

import json
from typing import Any

from linerate.errors import ParseError
from linerate.model import Trial, TrialParams

CONNECT_TIMEOUT_MS = 3000


def server_argv(port: int = 5201) -> list[str]:
    # Kept running between trials; -1 would make it exit after one test.
    return ["iperf3", "--server", "--port", str(port)]


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


def _num(section: dict[str, Any], key: str) -> float | None:
    value = section.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def parse(text: str, params: TrialParams, argv: list[str] | tuple[str, ...]) -> Trial:
    """Parse `iperf3 -J` output. Raises ParseError when the text is not iperf3 JSON at all."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"iperf3 output is not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(doc, dict) or not ({"start", "end", "error"} & doc.keys()):
        raise ParseError("iperf3 output is JSON but has none of start/end/error")
    start = doc.get("start") or {}
    version = start.get("version")
    timestamp = (start.get("timestamp") or {}).get("timesecs")
    common = dict(params=params, argv=tuple(argv), iperf3_version=version, timestamp=timestamp, raw=text)
    if doc.get("error"):
        return Trial(status="failed", error=str(doc["error"]), **common)
    end = doc.get("end") or {}
    received = end.get("sum_received") or end.get("sum") or {}
    sent = end.get("sum_sent") or end.get("sum") or {}
    throughput = _num(received, "bits_per_second")
    if throughput is None:
        return Trial(status="failed", error="iperf3 reported no receiver summary (end.sum_received)", **common)
    cpu = end.get("cpu_utilization_percent") or {}
    retransmits = sent.get("retransmits")
    reverse = end.get("sum_received_bidir_reverse") or {}
    if params.direction == "bidir" and "sum_sent_bidir_reverse" in end:
        retransmits = (retransmits or 0) + (end["sum_sent_bidir_reverse"].get("retransmits") or 0)
    udp = params.protocol == "udp"
    return Trial(
        status="ok",
        throughput_bps=throughput,
        sender_bps=_num(sent, "bits_per_second"),
        reverse_throughput_bps=_num(reverse, "bits_per_second"),
        retransmits=int(retransmits) if retransmits is not None else None,
        cpu_local_pct=_num(cpu, "host_total"),
        cpu_remote_pct=_num(cpu, "remote_total"),
        lost_percent=_num(received, "lost_percent") if udp else None,
        jitter_ms=_num(received, "jitter_ms") if udp else None,
        congestion=end.get("sender_tcp_congestion"),
        **common,
    )


def params_from_json(text: str) -> TrialParams:
    """Recover TrialParams from a hand-run iperf3 -J file (for `linerate import`)."""
    doc = json.loads(text)
    test = (doc.get("start") or {}).get("test_start") or {}
    connecting = (doc.get("start") or {}).get("connecting_to") or {}
    host = str(connecting.get("host", ""))
    end = doc.get("end") or {}
    if "sum_sent_bidir_reverse" in end:
        direction = "bidir"
    elif test.get("reverse"):
        direction = "reverse"
    else:
        direction = "forward"
    return TrialParams(
        family=6 if ":" in host else 4,
        streams=int(test.get("num_streams") or 1),
        direction=direction,
        duration_s=max(1, int(test.get("duration") or 1)),
        omit_s=int(test.get("omit") or 0),
        protocol="udp" if str(test.get("protocol", "TCP")).upper() == "UDP" else "tcp",
        udp_bitrate_bps=int(test.get("target_bitrate") or 1_000_000_000) or 1_000_000_000,
        port=int(connecting.get("port") or 5201),
    )
