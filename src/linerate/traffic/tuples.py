"""Frames with unique 4-tuples, paced, for RFC 9693 state tests: one UDP frame per connection.

Phase 1 (the initiator, the client) sends frame i from source port PORT_LO + i to the server's test
port, so every frame creates its own state in a stateful DUT; phase 2 (the responder, the server)
sends frame i back from the test port to source port PORT_LO + i, which a stateful ruleset passes
only while that state exists. RFC 9693 limits the ports to ranges so that a stateless generator can
address every connection; here one source-port range against one destination port: PORT_LO ..
65535 (RFC 4814 section 4.5's range for source ports), TUPLE_SPACE connections per address pair.

Pacing. trafgen's `--rate` sends the whole second's frames back to back and then sleeps out the rest
of the second (trafgen.c shaper_delay, netsniff-ng 0.6.8: it counts frames up to the rate, then
sleeps 1 s minus the time spent), so a trial "at 5,000 frames/s" of 2,000 frames is one 2,000-frame
burst at the generator's own speed; `--gap` sleeps after every frame and overshoots by tens of
microseconds per sleep (measured here: 1,062 us per frame for --gap 1000us, 59 us for --gap 20us).
trafgen replays a pcap file at its timestamps instead (`--in FILE.pcap`, its SHAPER_TSTAMP): it
sleeps before a frame for the time its timestamp is ahead of the last one, minus the time spent
since the last sleep. So the frames go out in groups of GROUP_S (one timestamp per group): a
sleep per group, not per frame, whose overshoot is measured from each run and subtracted from the
next (`Pacer`), and the DUT sees bursts of at most rate x GROUP_S frames.

The pcap is built here (classic libpcap format, microsecond timestamps), checksums included:
trafgen sends a pcap's bytes as they are, and conntrack drops a UDP frame with a bad checksum as
invalid (nf_conntrack_checksum=1, the default).
"""

from __future__ import annotations

import ipaddress
import math
import struct
from dataclasses import dataclass

PORT_LO = 1024
TUPLE_SPACE = 65536 - PORT_LO  # one source-port range x one destination port
GROUP_S = 0.002  # frames of one timestamp: 2 ms of the rate (at 10,000/s, 20 frames)
PCAP_MAGIC_US = 0xA1B2C3D4  # microsecond timestamps (trafgen 0.6.8 ignores the nanosecond variant's)
LINKTYPE_ETHERNET = 1
FCS_BYTES = 4
UDP_HEADER = 8


@dataclass(frozen=True)
class TupleFlow:
    """The initiator's side of every connection: frames from src_ip:PORT_LO+i to dst_ip:port, sent
    to dst_mac (the DUT, the next hop) from src_mac. `reversed_by(mac pair)` gives the responder's."""

    family: int
    src_mac: str
    dst_mac: str
    src_ip: str
    dst_ip: str
    port: int  # the server's test port
    reverse: bool = False  # the responder's frames: from dst_ip:port back to src_ip:PORT_LO+i

    def reversed_by(self, src_mac: str, dst_mac: str) -> "TupleFlow":
        return TupleFlow(self.family, src_mac, dst_mac, self.src_ip, self.dst_ip, self.port, reverse=True)


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def frame(flow: TupleFlow, index: int, frame_bytes: int) -> bytes:
    """Connection `index`'s frame (MAC header to payload; the NIC adds the FCS: frame_bytes - 4)."""
    if not 0 <= index < TUPLE_SPACE:
        raise ValueError(f"connection {index} is outside the {TUPLE_SPACE} source ports")
    client_port = PORT_LO + index
    src, dst = (flow.dst_ip, flow.src_ip) if flow.reverse else (flow.src_ip, flow.dst_ip)
    sport, dport = (flow.port, client_port) if flow.reverse else (client_port, flow.port)
    ip_src, ip_dst = ipaddress.ip_address(src).packed, ipaddress.ip_address(dst).packed
    ip_header = 20 if flow.family == 4 else 40
    payload = b"\0" * (frame_bytes - FCS_BYTES - 14 - ip_header - UDP_HEADER)
    if len(payload) < 0:
        raise ValueError(f"a {frame_bytes}-byte frame cannot carry IPv{flow.family} and UDP headers")
    udp_length = UDP_HEADER + len(payload)
    proto = 17
    pseudo = (ip_src + ip_dst + struct.pack("!BBH", 0, proto, udp_length) if flow.family == 4 else
              ip_src + ip_dst + struct.pack("!I3xB", udp_length, proto))
    udp = struct.pack("!HHHH", sport, dport, udp_length, 0) + payload
    udp = udp[:6] + struct.pack("!H", _checksum(pseudo + udp) or 0xFFFF) + udp[8:]
    if flow.family == 4:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_length, 0, 0, 64, proto, 0, ip_src, ip_dst)
        ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
        ethertype = 0x0800
    else:
        ip = struct.pack("!IHBB16s16s", 6 << 28, udp_length, proto, 64, ip_src, ip_dst)
        ethertype = 0x86DD
    src_mac, dst_mac = (bytes.fromhex(m.replace(":", "")) for m in (flow.src_mac, flow.dst_mac))
    return dst_mac + src_mac + struct.pack("!H", ethertype) + ip + udp


def group_size(rate: float) -> int:
    """Frames per timestamp at this rate: GROUP_S of it, at least one."""
    return max(1, math.floor(rate * GROUP_S))


def pcap(flow: TupleFlow, count: int, frame_bytes: int, rate: float | None, overshoot_s: float = 0.0) -> bytes:
    """`count` connections' frames, paced at `rate` frames/s (None: one timestamp, as fast as the
    generator can). Each group's timestamp is its ideal send time minus `overshoot_s` per sleep
    before it (the Pacer's estimate), never earlier than the group before."""
    if count < 1 or count > TUPLE_SPACE:
        raise ValueError(f"{count} connections: use 1 to {TUPLE_SPACE}")
    out = [struct.pack("<IHHiIII", PCAP_MAGIC_US, 2, 4, 0, 0, 65535, LINKTYPE_ETHERNET)]
    per_group = group_size(rate) if rate else count
    period = per_group / rate if rate else 0.0
    step = max(0.0, period - overshoot_s)
    for index in range(count):
        when = (index // per_group) * step
        seconds = int(when)
        micros = min(999_999, round((when - seconds) * 1e6))
        data = frame(flow, index, frame_bytes)
        out.append(struct.pack("<IIII", seconds, micros, len(data), len(data)) + data)
    return b"".join(out)


def sleeps(count: int, rate: float | None) -> int:
    """How many times trafgen sleeps sending `count` frames at `rate` (one per group after the first)."""
    return 0 if not rate else max(0, math.ceil(count / group_size(rate)) - 1)


class Pacer:
    """What one trafgen sleep overshoots on this host, learnt from every paced run: the time a run
    took beyond its schedule, per sleep. Each run's pcap subtracts the estimate from its groups'
    spacing; the estimate is the median of the last runs (a run slowed by another process does not
    set it alone)."""

    def __init__(self, initial_s: float = 0.0, keep: int = 7):
        self.samples: list[float] = []
        self.initial_s, self.keep = initial_s, keep

    @property
    def overshoot_s(self) -> float:
        if not self.samples:
            return self.initial_s
        ordered = sorted(self.samples)
        return ordered[len(ordered) // 2]

    def learn(self, count: int, rate: float | None, took_s: float, used_s: float) -> None:
        """A run of `count` frames at `rate` built with overshoot `used_s` took `took_s`."""
        n = sleeps(count, rate)
        if not rate or n < 10:
            return  # too few sleeps to say what one costs
        per_group = group_size(rate)
        scheduled = n * max(0.0, per_group / rate - used_s)
        sample = (took_s - scheduled) / n
        if 0 <= sample < per_group / rate:
            self.samples = (self.samples + [sample])[-self.keep:]
