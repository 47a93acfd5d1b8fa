"""Every netlink attribute of a namespace's links as the kernel gives them (an RTM_GETLINK dump), so a kept lab
is compared on what the kernel holds, not only on what `ip -d -j link` prints: iproute2 6.1 (Debian 12) prints
nothing of attributes newer than it (a link's IFLA_GSO_IPV4_MAX_SIZE and IFLA_GRO_IPV4_MAX_SIZE, a bridge's
IFLA_BR_FDB_MAX_LEARNED), and each changes what a trial measures. An attribute is compared by its number, whatever
its name; the names below are only for the message.

pyroute2 (0.9.7 here) parses the attributes it knows and keeps only the header of the others, so the dump is read
here with the socket module: nlmsghdr, ifinfomsg and rtattr (include/uapi/linux/netlink.h, rtnetlink.h, if_link.h).

Left out: what the kernel moves by itself (counters, timers, carrier and operational state, learnt-entry counts, the
peer namespace's id, assigned lazily), and what lab/snapshot.py compares its own way (a link's qdisc, XDP program,
promiscuity and allmulti counts, each with its own exceptions)."""

from __future__ import annotations

import os
import socket
import struct
import sys
from collections.abc import Iterable
from typing import Any

NETLINK_ROUTE = 0
RTM_NEWLINK, RTM_GETLINK = 16, 18
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLA_TYPE_MASK = 0x3FFF  # without NLA_F_NESTED and NLA_F_NET_BYTEORDER
HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, seq, pid
IFINFO = struct.Struct("=BxHiII")  # ifinfomsg: family, type, index, flags, change
RTATTR = struct.Struct("=HH")  # length, type

IFLA_IFNAME, IFLA_LINKINFO = 3, 18
IFLA_INFO_KIND, IFLA_INFO_DATA, IFLA_INFO_SLAVE_KIND, IFLA_INFO_SLAVE_DATA = 1, 2, 4, 5
# include/uapi/linux/if_link.h, enum IFLA_*
NAMES = dict(enumerate((
    "UNSPEC", "ADDRESS", "BROADCAST", "IFNAME", "MTU", "LINK", "QDISC", "STATS", "COST", "PRIORITY", "MASTER",
    "WIRELESS", "PROTINFO", "TXQLEN", "MAP", "WEIGHT", "OPERSTATE", "LINKMODE", "LINKINFO", "NET_NS_PID", "IFALIAS",
    "NUM_VF", "VFINFO_LIST", "STATS64", "VF_PORTS", "PORT_SELF", "AF_SPEC", "GROUP", "NET_NS_FD", "EXT_MASK",
    "PROMISCUITY", "NUM_TX_QUEUES", "NUM_RX_QUEUES", "CARRIER", "PHYS_PORT_ID", "CARRIER_CHANGES", "PHYS_SWITCH_ID",
    "LINK_NETNSID", "PHYS_PORT_NAME", "PROTO_DOWN", "GSO_MAX_SEGS", "GSO_MAX_SIZE", "PAD", "XDP", "EVENT",
    "NEW_NETNSID", "TARGET_NETNSID", "CARRIER_UP_COUNT", "CARRIER_DOWN_COUNT", "NEW_IFINDEX", "MIN_MTU", "MAX_MTU",
    "PROP_LIST", "ALT_IFNAME", "PERM_ADDRESS", "PROTO_DOWN_REASON", "PARENT_DEV_NAME", "PARENT_DEV_BUS_NAME",
    "GRO_MAX_SIZE", "TSO_MAX_SIZE", "TSO_MAX_SEGS", "ALLMULTI", "DEVLINK_PORT", "GSO_IPV4_MAX_SIZE",
    "GRO_IPV4_MAX_SIZE", "DPLL_PIN", "MAX_PACING_OFFLOAD_HORIZON", "NETNS_IMMUTABLE", "HEADROOM", "TAILROOM")))
TEXT = frozenset({3, 6, 20, 38, 53, 56, 57})  # IFNAME, QDISC, IFALIAS, PHYS_PORT_NAME, ALT_IFNAME, PARENT_DEV_*
# left out at the top level: QDISC, STATS, XDP, STATS64, AF_SPEC (per-family statistics and timestamps), OPERSTATE,
# CARRIER, CARRIER_CHANGES, LINK_NETNSID, CARRIER_UP_COUNT, CARRIER_DOWN_COUNT, PROMISCUITY, ALLMULTI
MOVING = frozenset({6, 7, 43, 23, 26, 16, 33, 35, 37, 47, 48, 30, 61})
# in a kind's nested data: a bridge's (IFLA_BR_*) topology state and timers, multicast querier state and learnt-entry
# count; a bridge port's (IFLA_BRPORT_*) STP state, timers, pending flags and multicast counts
MOVING_DATA = {"bridge": frozenset({10, 12, 13, 14, 15, 16, 17, 18, 19, 47, 48}),
               "bridge_slave": frozenset({1, 13, 15, 16, 19, 20, 21, 22, 23, 38, 41})}


def read_links() -> dict[str, dict[str, Any]]:
    """Link name -> its settings (settings()) in the calling thread's namespace (lab/netns.py run_in)."""
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC, NETLINK_ROUTE) as sock:
        sock.bind((0, 0))
        request = IFINFO.pack(socket.AF_UNSPEC, 0, 0, 0, 0)
        sock.send(HEADER.pack(HEADER.size + len(request), RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + request)
        return links_from(iter(lambda: sock.recv(1 << 20), b""))


def links_from(datagrams: Iterable[bytes]) -> dict[str, dict[str, Any]]:
    """Link name -> its settings, from an RTM_GETLINK dump's datagrams, read until its NLMSG_DONE."""
    links: dict[str, dict[str, Any]] = {}
    for data in datagrams:
        for kind, body in messages(data):
            if kind == NLMSG_DONE:
                return links
            if kind == NLMSG_ERROR:
                code = -struct.unpack_from("=i", body)[0]
                raise OSError(code, os.strerror(code))
            if kind == RTM_NEWLINK and len(body) >= IFINFO.size:
                attributes = parse(body[IFINFO.size:])
                name = attributes.get(IFLA_IFNAME, b"").rstrip(b"\0").decode(errors="replace")
                links[name] = settings(attributes)
    raise ValueError("the link dump ended before its NLMSG_DONE")


def messages(data: bytes) -> list[tuple[int, bytes]]:
    """(type, body) of each netlink message in one datagram."""
    found, offset = [], 0
    while offset + HEADER.size <= len(data):
        length, kind, _, _, _ = HEADER.unpack_from(data, offset)
        if length < HEADER.size or offset + length > len(data):
            raise ValueError(f"a netlink message of {length} bytes at {offset} of {len(data)}")
        found.append((kind, data[offset + HEADER.size:offset + length]))
        offset += (length + 3) & ~3
    return found


def parse(data: bytes) -> dict[int, bytes]:
    """Attribute number -> its payload (the last of a number given twice)."""
    found, offset = {}, 0
    while offset + RTATTR.size <= len(data):
        length, kind = RTATTR.unpack_from(data, offset)
        if length < RTATTR.size:
            break
        found[kind & NLA_TYPE_MASK] = data[offset + RTATTR.size:offset + length]
        offset += (length + 3) & ~3
    return found


def settings(attributes: dict[int, bytes]) -> dict[str, Any]:
    """What of a link's attributes is set rather than moved by the kernel: {"IFLA_MTU": 1500, ..., and for a kind
    with nested data "IFLA_INFO_DATA": {"attribute 49": 0, ...}}."""
    held = {_name(number): _value(payload, number in TEXT) for number, payload in sorted(attributes.items())
            if number not in MOVING and number != IFLA_LINKINFO}
    info = parse(attributes.get(IFLA_LINKINFO, b""))
    for kind_number, data_number, label in ((IFLA_INFO_KIND, IFLA_INFO_DATA, "IFLA_INFO_DATA"),
                                            (IFLA_INFO_SLAVE_KIND, IFLA_INFO_SLAVE_DATA, "IFLA_INFO_SLAVE_DATA")):
        kind = info.get(kind_number, b"").rstrip(b"\0").decode(errors="replace")
        if data_number in info:
            moving = MOVING_DATA.get(kind if kind_number == IFLA_INFO_KIND else f"{kind}_slave", frozenset())
            held[label] = {f"attribute {number}": _value(payload)
                           for number, payload in sorted(parse(info[data_number]).items()) if number not in moving}
    return held


def _name(number: int) -> str:
    return f"IFLA_{NAMES[number]}" if number in NAMES else f"IFLA attribute {number}"


def _value(payload: bytes, text: bool = False) -> Any:
    """A payload as a reader would say it: a name as a string, 1, 2, 4 or 8 bytes as a number (host order), anything
    else as hex. Only the message depends on it: the bytes decide equality."""
    if text:
        return payload.rstrip(b"\0").decode(errors="replace")
    if len(payload) in (1, 2, 4, 8):
        return int.from_bytes(payload, sys.byteorder)
    return payload.hex()
