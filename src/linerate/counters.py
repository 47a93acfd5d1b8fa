"""DUT counters: parse `ip -j -s link`, `nstat -j` and `tc -s -j qdisc` output (pure) and take
before/after deltas.

Forwarded packets come from the IP MIB (IpForwDatagrams, Ip6OutForwDatagrams). They count what
the forwarding path handled: with GRO a 64 KB super-packet is *one*, so they are not frames on a
wire. Wire frames come from the root qdiscs of the DUT's ports where a shaper runs (tc counts a
GSO packet as its segments; lab/wire.py). Drops: the interfaces' rx/tx_dropped, the IP layer's
discards, and the qdiscs' drops (an emulated link that is overrun drops there, nowhere else).
"""

from __future__ import annotations

import json

from linerate.errors import ParseError

NSTAT_KEYS = {
    "IpForwDatagrams": "ipv4_forwarded",
    "Ip6OutForwDatagrams": "ipv6_forwarded",
    "IpInDiscards": "ipv4_in_discards",
    "IpOutDiscards": "ipv4_out_discards",
    "Ip6InDiscards": "ipv6_in_discards",
    "Ip6OutDiscards": "ipv6_out_discards",
    "TcpExtTCPBacklogDrop": "tcp_backlog_drops",
}


MAX_COUNTER = 2**64  # a kernel counter is at most 64 bits


def count(value: object, where: str) -> int:
    """A counter as a host printed it: a whole number 0 .. 2^64 (`1e400`, a string, a negative
    number is a ParseError naming where, never an OverflowError)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(f"{where} is {type(value).__name__}, not a counter")
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))
                                     or value != int(value)):
        raise ParseError(f"{where} = {value!r} is not a whole number")
    if not 0 <= value <= MAX_COUNTER:
        shown = repr(value) if len(repr(value)) <= 30 else f"a {len(str(value))}-digit number"
        raise ParseError(f"{where} = {shown} is out of range for a counter (0 to 2^64)")
    return int(value)


def parse_link_stats(text: str, ifnames: tuple[str, ...] | None = None) -> dict[str, int]:
    """`ip -j -s link show` -> {"<if>_rx_packets": n, "<if>_rx_dropped": n, ...}."""
    try:
        links = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"ip -j -s link output is not JSON: {exc.msg}") from None
    except (ValueError, RecursionError):
        raise ParseError("ip -j -s link output is not JSON linerate can read") from None
    if not isinstance(links, list) or not all(isinstance(link, dict) for link in links):
        raise ParseError("ip -j -s link output is not a list of interfaces")
    out: dict[str, int] = {}
    for link in links:
        name = link.get("ifname")
        if not isinstance(name, str):
            raise ParseError("ip -j -s link output has an interface without a name")
        if name == "lo" or (ifnames and name not in ifnames):
            continue
        stats = link.get("stats64") or link.get("stats") or {}
        if not isinstance(stats, dict):
            raise ParseError(f"ip -j -s link: stats of {name[:20]!r} is not an object")
        for direction in ("rx", "tx"):
            section = stats.get(direction) or {}
            if not isinstance(section, dict):
                raise ParseError(f"ip -j -s link: {direction} of {name[:20]!r} is not an object")
            for key in ("packets", "bytes", "dropped", "errors"):
                if key in section:
                    out[f"{name}_{direction}_{key}"] = count(section[key], f"{name[:20]} {direction}_{key}")
    return out


def parse_nstat(text: str) -> dict[str, int]:
    """`nstat -a -z -s -j` -> the IP-layer counters we care about, under readable names."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"nstat output is not JSON: {exc.msg}") from None
    except (ValueError, RecursionError):
        raise ParseError("nstat output is not JSON linerate can read") from None
    kernel = doc.get("kernel", doc) if isinstance(doc, dict) else None
    if not isinstance(kernel, dict):
        raise ParseError("nstat output is not an object of counters")
    return {name: count(kernel[key], f"nstat {key}") for key, name in NSTAT_KEYS.items() if key in kernel}


def parse_qdisc_stats(text: str) -> dict[str, int]:
    """`tc -s -j qdisc show` -> {"qdisc_<dev>_packets": n, "qdisc_<dev>_bytes": n, "qdisc_<dev>_drops": n}
    for each root qdisc that counts (noqueue does not)."""
    try:
        qdiscs = json.loads(text or "[]")
    except json.JSONDecodeError as exc:
        raise ParseError(f"tc -s -j qdisc output is not JSON: {exc.msg}") from None
    except (ValueError, RecursionError):
        raise ParseError("tc -s -j qdisc output is not JSON linerate can read") from None
    if not isinstance(qdiscs, list) or not all(isinstance(q, dict) for q in qdiscs):
        raise ParseError("tc -s -j qdisc output is not a list of qdiscs")
    out: dict[str, int] = {}
    for qdisc in qdiscs:
        dev = qdisc.get("dev")
        if not qdisc.get("root") or qdisc.get("kind") == "noqueue" or not dev or dev == "lo":
            continue
        for key in ("packets", "bytes", "drops"):
            if isinstance(qdisc.get(key), int) and not isinstance(qdisc.get(key), bool):
                out[f"qdisc_{dev}_{key}"] = count(qdisc[key], f"qdisc {str(dev)[:20]} {key}")
    return out


def delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    counters = {key: after[key] - before.get(key, 0) for key in after}
    counters["forwarded_packets"] = counters.get("ipv4_forwarded", 0) + counters.get("ipv6_forwarded", 0)
    counters["shaper_dropped"] = sum(v for k, v in counters.items() if k.startswith("qdisc_") and k.endswith("_drops"))
    wire = [v for k, v in counters.items() if k.startswith("qdisc_") and k.endswith("_packets")]
    if wire:
        counters["wire_frames"] = sum(wire)
    counters["dropped_packets"] = counters["shaper_dropped"] + sum(
        value for key, value in counters.items() if key.endswith("_dropped") and key != "shaper_dropped"
        or key.endswith("discards")
    )
    return counters
