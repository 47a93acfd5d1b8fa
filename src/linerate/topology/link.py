"""Link profiles and per-interface knobs, as pure values and the tc/ethtool argv that apply them.

Rate emulation that never beats the wire. tc counts what the kernel hands it: a 64 KB GSO
super-packet is one packet, and no qdisc sees preamble, SFD, FCS or inter-frame gap — so a naive
`tbf rate 1gbit` let 956 Mbit/s of TCP through here, above the 941.5 Mbit/s a real gigabit wire
carries. What we measured (bench/link_accuracy.py, cubic, 2-core VM) and why the choice below:
  * tbf `overhead 24 mpu 84`: the rate table adds FCS 4 + preamble/SFD 8 + IFG 12 to each packet
    (skb->len already holds the 14-byte MAC header) and pads to the 64-byte minimum frame;
  * tbf segments any GSO packet larger than its burst before queueing (tbf_segment), and the
    overhead is then charged per segment = per wire frame. A GSO packet *smaller* than the burst
    is charged once, so the burst must stay below TCP's GSO size at that rate (tcp_tso_autosize
    sizes GSO packets to ~1 ms of data): burst = min(60000, rate · 0.5 ms), at least 2 frames;
  * htb charges a GSO packet once (overhead not per segment) and over-reports; `tc stab` likewise
    adds its overhead once per skb; both rejected;
  * shaping every egress (client, DUT, server) and gso_max_segs=1 on the sender both cost this
    2-core machine enough CPU to lose 2-10% more than shaping only the DUT egress;
  * latency 200 ms of queue: shorter queues dropped bursts (hundreds of retransmits per second)
    and cost 1-3%.
The shaper sits on both DUT egress interfaces (toward server and toward client), i.e. it models
the DUT's two gigabit ports. netem (delay/jitter/loss) is a child of tbf, or root without a rate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from linerate.calc import parse_rate
from linerate.calc.linerate import FCS, IFG, MIN_MAC_FRAME, PREAMBLE_SFD

WIRE_OVERHEAD = FCS + PREAMBLE_SFD + IFG  # added to skb->len, which already has the MAC header
MIN_WIRE_FRAME = MIN_MAC_FRAME + PREAMBLE_SFD + IFG
QUEUE_LATENCY = "200ms"
MAX_BURST = 60000

OFFLOAD_FEATURES = {  # our short name -> (ethtool -K name, ethtool -k long name)
    "rx": ("rx", "rx-checksumming"),
    "tx": ("tx", "tx-checksumming"),
    "tso": ("tso", "tcp-segmentation-offload"),
    "gso": ("gso", "generic-segmentation-offload"),
    "gro": ("gro", "generic-receive-offload"),
    "lro": ("lro", "large-receive-offload"),
}
OFFLOAD_TARGETS = {  # where: [(role, ifname)]
    "client": [("client", "eth0")],
    "dut_in": [("dut", "lan0")],
    "dut_out": [("dut", "wan0")],
    "dut": [("dut", "lan0"), ("dut", "wan0")],
    "server": [("server", "eth0")],
    "all": [("client", "eth0"), ("dut", "lan0"), ("dut", "wan0"), ("server", "eth0")],
}
SYSCTL_NAME_RE = re.compile(r"^net\.[a-z0-9_]+(\.[a-z0-9_-]+)+$")
SYSCTL_VALUE_RE = re.compile(r"^[0-9a-z_ \t-]{1,64}$")


@dataclass(frozen=True)
class LinkSpec:
    rate_bps: float | None = None
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    loss_pct: float = 0.0

    @property
    def needs_netem(self) -> bool:
        return bool(self.delay_ms or self.jitter_ms or self.loss_pct)

    @property
    def shaped(self) -> bool:
        return self.rate_bps is not None or self.needs_netem


def burst_bytes(rate_bps: float, mtu: int) -> int:
    return int(max(2 * (mtu + 14 + WIRE_OVERHEAD), min(MAX_BURST, rate_bps / 8 * 0.0005)))


def qdisc_argvs(link: LinkSpec, ifname: str, mtu: int) -> list[list[str]]:
    """tc argv lists for one egress interface."""
    netem = []
    if link.delay_ms or link.jitter_ms:
        netem += ["delay", f"{link.delay_ms:g}ms"] + ([f"{link.jitter_ms:g}ms"] if link.jitter_ms else [])
    if link.loss_pct:
        netem += ["loss", f"{link.loss_pct:g}%"]
    if link.rate_bps is None:
        return [["tc", "qdisc", "replace", "dev", ifname, "root", "netem", *netem]] if netem else []
    argvs = [["tc", "qdisc", "replace", "dev", ifname, "root", "handle", "1:", "tbf",
              "rate", f"{int(link.rate_bps)}bit", "burst", str(burst_bytes(link.rate_bps, mtu)),
              "latency", QUEUE_LATENCY, "overhead", str(WIRE_OVERHEAD), "mpu", str(MIN_WIRE_FRAME)]]
    if netem:
        argvs.append(["tc", "qdisc", "add", "dev", ifname, "parent", "1:1", "handle", "10:", "netem", *netem])
    return argvs


def parse_link_rate(value: str) -> float | None:
    if str(value).strip().lower() in ("none", ""):
        return None
    return parse_rate(value)


def parse_offloads(text: str) -> tuple[tuple[str, str, str, str], ...]:
    """'default' or 'dut:tso=off,gso=off;client:gro=on' -> ((role, ifname, feature, on|off), ...)."""
    text = text.strip()
    if text in ("", "default"):
        return ()
    settings: dict[tuple[str, str, str], str] = {}
    for group in filter(None, (g.strip() for g in text.split(";"))):
        where, sep, features = group.partition(":")
        if not sep or where not in OFFLOAD_TARGETS:
            raise ValueError(f"'{group}' needs WHERE:feature=on|off with WHERE one of {', '.join(OFFLOAD_TARGETS)}")
        for item in filter(None, (f.strip() for f in features.split(","))):
            name, eq, state = item.partition("=")
            if not eq or name not in OFFLOAD_FEATURES or state not in ("on", "off"):
                raise ValueError(f"'{item}' needs feature=on|off with feature one of {', '.join(OFFLOAD_FEATURES)}")
            for role, ifname in OFFLOAD_TARGETS[where]:
                settings[(role, ifname, name)] = state
    return tuple((role, ifname, name, state) for (role, ifname, name), state in sorted(settings.items()))


def parse_sysctls(text: str) -> tuple[tuple[str, str], ...]:
    """'default' or 'net.core.netdev_budget=600;net.core.netdev_max_backlog=5000'. Only namespaced
    net.* sysctls: the DUT is a namespace, and anything else would change the host."""
    text = text.strip()
    if text in ("", "default"):
        return ()
    pairs = []
    for item in filter(None, (i.strip() for i in text.split(";"))):
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not SYSCTL_NAME_RE.match(key):
            raise ValueError(f"'{item}' is not net.NAME=VALUE (only net.* sysctls exist per namespace)")
        if not SYSCTL_VALUE_RE.match(value):
            raise ValueError(f"'{value}' is not a sysctl value (digits, letters, spaces)")
        pairs.append((key, value))
    return tuple(pairs)


def parse_cpu_mask(text: str) -> str:
    value = str(text).strip().lower().removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{1,16}", value):
        raise ValueError(f"'{text}' is not a hexadecimal CPU mask such as 0, 1 or 3")
    return value
