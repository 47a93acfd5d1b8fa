"""iperf3 UDP as the packet generator where trafgen is missing: datagrams of a fixed length (`-l`)
so each makes a frame of the asked size, a count (`-k`) and a rate (`-b`, iperf3's payload bit
rate), to the iperf3 server already running on the server host.

Frame = payload + UDP 8 + IPv4 20 / IPv6 40 + Ethernet 14 + FCS 4. iperf3 refuses a block under 16
bytes ("block size invalid (minimum = 16 bytes ...)", iperf3 3.12), so its smallest frames are
62 -> 64 bytes for IPv4 and 82 for IPv6; it sends one size, so no IMIX. It only talks to its own
server: its ceiling probe crosses the DUT (trafgen's goes to an address nobody answers). Its
end.sum_sent gives the datagrams sent and the seconds the sending took — the same figures
trafgen's summary gives, so "unsent" (sent late) is judged the same way (search/measurer.py).

Counting at the server: the datagrams must reach the iperf3 server (it answers its client's
4-byte connect datagram and reports at the end), so the counting rule accepts instead of dropping,
and it counts only datagrams of 16 bytes or more (UDP length >= 24), never that connect datagram.
"""

from __future__ import annotations

from linerate.errors import ConfigError, ParseError
from linerate.traffic import frames
from linerate.traffic.base import run_sender
from linerate.traffic.iperf3 import load_json
from linerate.traffic.trafgen import FCS_BYTES, HEADERS, FlowSpec, Sent

MIN_PAYLOAD = 16


def payload_bytes(frame_bytes: int, family: int) -> int:
    return frame_bytes - FCS_BYTES - HEADERS[family]


def min_frame(family: int) -> int:
    return max(64, MIN_PAYLOAD + FCS_BYTES + HEADERS[family])


def check_frame(frame: frames.FrameSize, family: int, field: str = "--frame-sizes") -> None:
    if frames.is_mix(frame):
        raise ConfigError(field, f"{frames.label(frame)} mixes frame sizes and iperf3 sends one size; use trafgen "
                          "(install netsniff-ng on the client) or fixed sizes")
    if payload_bytes(frame, family) < MIN_PAYLOAD:
        raise ConfigError(field, f"{frame} B is too small for iperf3 UDP over IPv{family} (its datagrams carry at "
                          f"least {MIN_PAYLOAD} bytes): use {min_frame(family)} B or more, or trafgen")


def send_argv(flow: FlowSpec, frame_bytes: int, rate_pps: int | None, count: int) -> list[str]:
    payload = payload_bytes(frame_bytes, flow.family)
    bitrate = 0 if rate_pps is None else int(rate_pps) * payload * 8  # 0: as fast as it can
    return ["iperf3", "-c", flow.dst_ip, "-p", str(int(flow.dst_port)), f"-{flow.family}", "-u",
            "-l", str(payload), "-b", str(bitrate), "-k", str(int(count)), "-J"]


def parse_send(text: str) -> Sent:
    """iperf3 -J of a UDP client run -> datagrams sent, payload bytes, seconds the sending took."""
    try:
        doc = load_json(text)
    except ParseError:  # iperf3 prints option errors as text even with -J
        first = next((line.strip() for line in text.splitlines() if line.strip()), "no output")
        raise ParseError(f"iperf3 printed no JSON: {first[:200]}") from None
    if doc.get("error"):
        raise ParseError(f"iperf3: {str(doc['error'])[:200]}")
    try:
        sent = doc["end"].get("sum_sent") or doc["end"]["sum"]
        return Sent(int(sent["packets"]), int(sent["bytes"]), float(sent["seconds"]))
    except (KeyError, TypeError, ValueError, AttributeError):
        raise ParseError("iperf3 printed no UDP send summary (end.sum_sent)") from None


class Iperf3UdpSender:
    count_verdict = "accept"  # its server must get them (see the module docstring)

    def __init__(self, version: str):
        self.name = f"iperf3 {version} (UDP)"

    def check(self, frame: frames.FrameSize, family: int) -> None:
        check_frame(frame, family)

    def min_frame(self, family: int) -> int:
        return min_frame(family)

    def send(self, client, device: str, flow: FlowSpec, frame: frames.FrameSize, rate_pps: int | None,
             count: int, *, to_dut: bool = True, pace: bool = False, qdisc=()) -> Sent:
        """to_dut is moot: iperf3 sends only to its server; pace too (and the qdisc it would restore): iperf3
        spaces its datagrams itself (its pacing timer, 1 ms by default) through the device's own qdiscs."""
        self.check(frame, flow.family)
        return run_sender(client, send_argv(flow, frame, rate_pps, count), parse_send, count, rate_pps)
