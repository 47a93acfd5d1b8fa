"""Theoretical Ethernet line rate: maximum goodput and frames per second.

Every frame on an Ethernet wire costs, besides its payload (IEEE 802.3 clause 3 and 4):
    preamble 7 + SFD 1 = 8 bytes, MAC header 14 (dst 6, src 6, EtherType 2), FCS 4,
    inter-frame gap 12 (96 bit times)                                   -> 38 bytes per frame,
plus 4 bytes per IEEE 802.1Q tag. The MAC frame (header..FCS) is at least 64 bytes (short payloads
are padded), so a frame occupies max(64, 18 + tags + payload) + 20 bytes of wire time.

    frames/s = link_bps / (8 · wire_bytes)                         (RFC 2544 §20 / RFC 1242)
    goodput  = frames/s · 8 · L4 payload bytes per frame

L4 payload per frame = MTU − IP header (20 IPv4, RFC 791; 40 IPv6, RFC 8200) − TCP 20 (RFC 9293)
− TCP timestamp option 12 when on (10 + 2 NOP padding, RFC 7323) − UDP 8 (RFC 768), minus what an
encapsulation adds inside the MTU. Encapsulations:
    PPPoE 8 (RFC 2516: 6 PPPoE + 2 PPP protocol), carried in the Ethernet frame of the same MTU;
    VXLAN 50 / 70 (RFC 7348: outer IPv4 20 or IPv6 40 + UDP 8 + VXLAN 8 + inner Ethernet 14);
    WireGuard 60 / 80 (outer IP 20/40 + UDP 8 + header 16 + Poly1305 tag 16; wireguard.com/protocol);
    GRE 24 / 44 (RFC 2784: outer IP + 4);
    IPsec ESP tunnel mode (RFC 4303): outer IP 20 + SPI/seq 8 + IV + pad + pad-length/next-header 2
    + ICV; the cipher's IV, block size and ICV are stated per profile (esp-aes-gcm: IV 8, block 4,
    ICV 16 — RFC 4106; esp-aes-cbc-sha1: IV 16, block 16, ICV 12 — RFC 3602/2404), and padding is
    computed for the actual inner packet size.

Example ('Network performance tuning on pcengines APU2', its own figures): 1 Gbit/s = 1e9/8/1024/1024 = 119.2 MiB/s of wire time; MTU 1500
without timestamps gives (1500−40)/(38+1500) · 119.2 = 113.2 MiB/s; MTU 9000 gives 118.2 MiB/s.
With timestamps (Linux default) MTU 1500 IPv4 gives 941.48 Mbit/s.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field

PREAMBLE_SFD, MAC_HEADER, FCS, IFG, VLAN_TAG = 8, 14, 4, 12, 4
MIN_MAC_FRAME = 64
IP_HEADER = {4: 20, 6: 40}
TCP_HEADER, TCP_TIMESTAMPS, UDP_HEADER = 20, 12, 8
RFC2544_SIZES = (64, 128, 256, 512, 1024, 1280, 1518)
JUMBO_SIZE = 9018


@dataclass(frozen=True)
class Encapsulation:
    name: str
    fixed_bytes: int  # bytes added inside the outer MTU
    description: str
    esp_iv: int = 0
    esp_block: int = 0
    esp_icv: int = 0

    def overhead(self, inner_packet: int) -> int:
        if not self.esp_block:
            return self.fixed_bytes
        # ESP trailer: pad so that payload + pad + 2 is a multiple of the block size.
        padded = math.ceil((inner_packet + 2) / self.esp_block) * self.esp_block
        return self.fixed_bytes + self.esp_iv + (padded - inner_packet) + self.esp_icv


ENCAPSULATIONS: dict[str, Encapsulation] = {e.name: e for e in (
    Encapsulation("none", 0, "no encapsulation"),
    Encapsulation("pppoe", 8, "PPPoE 6 + PPP 2 (RFC 2516)"),
    Encapsulation("vxlan", 50, "outer IPv4 20 + UDP 8 + VXLAN 8 + inner Ethernet 14 (RFC 7348)"),
    Encapsulation("vxlan6", 70, "outer IPv6 40 + UDP 8 + VXLAN 8 + inner Ethernet 14 (RFC 7348)"),
    Encapsulation("wireguard", 60, "outer IPv4 20 + UDP 8 + WireGuard header 16 + tag 16"),
    Encapsulation("wireguard6", 80, "outer IPv6 40 + UDP 8 + WireGuard header 16 + tag 16"),
    Encapsulation("gre", 24, "outer IPv4 20 + GRE 4 (RFC 2784)"),
    Encapsulation("gre6", 44, "outer IPv6 40 + GRE 4 (RFC 2784)"),
    Encapsulation("esp-aes-gcm", 28, "IPsec ESP tunnel, IPv4 outer 20 + ESP 8, AES-GCM IV 8, ICV 16 (RFC 4106)",
                  esp_iv=8, esp_block=4, esp_icv=16),
    Encapsulation("esp-aes-cbc-sha1", 28, "IPsec ESP tunnel, IPv4 outer 20 + ESP 8, AES-CBC IV 16, "
                  "HMAC-SHA1-96 ICV 12 (RFC 3602, 2404)", esp_iv=16, esp_block=16, esp_icv=12),
)}

_RATE_RE = re.compile(r"(\d+(?:\.\d+)?) ?([kmgt]?)(?:bit|bps|b)?(?:/s)?", re.IGNORECASE | re.ASCII)
_UNITS = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


def parse_rate(text: str | int | float) -> float:
    """'100m', '1g', '2.5g', '10G', '1000000000' -> bit/s. ValueError on anything else."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        match = _RATE_RE.fullmatch(str(text))
        if not match:
            raise ValueError(f"{str(text)[:20]!r} is not a link rate; use e.g. 100m, 1g, 2.5g, 10g or bit/s")
        value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if not 1e3 <= value <= 1e13:
        raise ValueError(f"{value:g} bit/s is out of range (1 kbit/s to 10 Tbit/s)")
    return value


@dataclass(frozen=True)
class LinkInput:
    link_bps: float
    mtu: int = 1500
    family: int = 4
    timestamps: bool = True
    protocol: str = "tcp"
    vlan_tags: int = 0
    encap: str = "none"

    def __post_init__(self) -> None:
        if self.family not in (4, 6):
            raise ValueError("family must be 4 or 6")
        if self.protocol not in ("tcp", "udp"):
            raise ValueError("protocol must be tcp or udp")
        if self.vlan_tags not in (0, 1, 2):
            raise ValueError("vlan tags must be 0, 1 or 2")
        if self.encap not in ENCAPSULATIONS:
            raise ValueError(f"unknown encapsulation '{self.encap}'; use one of {', '.join(ENCAPSULATIONS)}")
        if not 68 <= self.mtu <= 65535:
            raise ValueError("mtu must be 68..65535")


@dataclass(frozen=True)
class Goodput:
    goodput_bps: float
    frames_per_s: float
    payload_bytes: int
    wire_bytes: int
    efficiency: float
    overhead: dict[str, int] = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)

    @property
    def megabytes_per_s(self) -> float:
        return self.goodput_bps / 8 / 1e6

    @property
    def mebibytes_per_s(self) -> float:
        return self.goodput_bps / 8 / 1024 / 1024

    def to_dict(self) -> dict:
        return {**asdict(self), "goodput_MBps": self.megabytes_per_s, "goodput_MiBps": self.mebibytes_per_s}


def goodput(link: LinkInput) -> Goodput:
    encap = ENCAPSULATIONS[link.encap]
    l4 = TCP_HEADER + (TCP_TIMESTAMPS if link.timestamps and link.protocol == "tcp" else 0) \
        if link.protocol == "tcp" else UDP_HEADER
    ip = IP_HEADER[link.family]
    # The encapsulation's own overhead may depend on the inner packet (ESP padding): solve for the
    # largest inner packet that fits the MTU.
    inner = link.mtu - encap.fixed_bytes
    while inner > 0 and inner + encap.overhead(inner) > link.mtu:
        inner -= 1
    tunnel = link.mtu - inner
    payload = inner - ip - l4
    if payload <= 0:
        raise ValueError(f"MTU {link.mtu} leaves no payload after headers ({ip + l4 + tunnel} bytes)")
    mac_frame = max(MIN_MAC_FRAME, MAC_HEADER + VLAN_TAG * link.vlan_tags + link.mtu + FCS)
    wire = mac_frame + PREAMBLE_SFD + IFG
    fps = link.link_bps / (8 * wire)
    breakdown = {
        "preamble_sfd": PREAMBLE_SFD, "mac_header": MAC_HEADER, "vlan_tags": VLAN_TAG * link.vlan_tags,
        "fcs": FCS, "inter_frame_gap": IFG, "padding": mac_frame - (MAC_HEADER + VLAN_TAG * link.vlan_tags
                                                                   + link.mtu + FCS),
        "tunnel": tunnel, "ip": ip, "transport": TCP_HEADER if link.protocol == "tcp" else UDP_HEADER,
        "tcp_options": l4 - TCP_HEADER if link.protocol == "tcp" else 0,
    }
    return Goodput(fps * payload * 8, fps, payload, wire, payload / wire, breakdown, asdict(link))


@dataclass(frozen=True)
class FrameRate:
    frame_bytes: int
    frames_per_s: float
    frame_bps: float  # bit/s of the MAC frames themselves (what RFC 2544 tables list)
    wire_bytes: int


def frame_rate(link_bps: float, frame_bytes: int) -> FrameRate:
    """RFC 2544 view: a frame size counts header+payload+FCS; the wire adds preamble, SFD and IFG."""
    if frame_bytes < MIN_MAC_FRAME:
        raise ValueError(f"an Ethernet frame is at least {MIN_MAC_FRAME} bytes")
    wire = frame_bytes + PREAMBLE_SFD + IFG
    fps = link_bps / (8 * wire)
    return FrameRate(frame_bytes, fps, fps * frame_bytes * 8, wire)


def rfc2544_table(link_bps: float, jumbo: bool = True) -> list[FrameRate]:
    sizes = RFC2544_SIZES + ((JUMBO_SIZE,) if jumbo else ())
    return [frame_rate(link_bps, size) for size in sizes]
