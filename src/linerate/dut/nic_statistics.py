"""Interface statistics as users paste them: net-tools `ifconfig` RX/TX lines (both its styles, net-tools
lib/interface.c), the kernel's per-interface counters under /sys/class/net/IF/statistics/ (one file per
counter: `cat` or `grep .` of the directory) and `ethtool -g` ring sizes (ethtool(8): "Pre-set maximums"
and "Current hardware settings"). Pure parsers, text in, numbers out, each tested on real pastes; the
diagnosis of pasted outputs (diagnose/raw.py) uses them."""

from __future__ import annotations

import re

from linerate.errors import ParseError
from linerate.numbers import ascii_int, is_ascii_int


def _int(text: str, what: str) -> int:
    value = ascii_int(text)
    if value is None:
        raise ParseError(f"{what}: {text[:30]!r} is not a counter")
    return value


IFCONFIG_HEADER = re.compile(r"^(?P<nic>[A-Za-z0-9_.:@-]+?):? +(?:flags=[0-9]+<|Link encap:)")
IFCONFIG_STATS = re.compile(r"^\s+(?P<dir>RX|TX) (?P<rest>(?:packets|errors)[: ][0-9].*)$")
_IFCONFIG_NAMES = {"dropped": "dropped_missed", "overruns": "fifo_errors", "carrier": "carrier_errors"}


def parse_ifconfig(text: str, nic: str = "the NIC") -> dict[str, dict[str, int]]:
    """Linux `ifconfig` (either net-tools style, or a grep of its RX/TX lines) -> {nic: counters} named
    like rtnl_link_stats64: rx_packets, rx_errors, rx_dropped_missed (the drop column), rx_fifo_errors ..."""
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        header = IFCONFIG_HEADER.match(line)
        if header:
            nic = header.group("nic")
            continue
        stats = IFCONFIG_STATS.match(line)
        if not stats:
            continue
        direction = stats.group("dir").lower()
        for word, value in re.findall(r"([a-z]+)[: ]([0-9]+)\b", stats.group("rest")):
            if word in ("packets", "errors", "dropped", "overruns", "frame", "carrier"):
                name = _IFCONFIG_NAMES.get(word, word) if direction == "rx" or word != "dropped" else word
                out.setdefault(nic, {})[f"{direction}_{name}"] = _int(value, "ifconfig")
    if not out:
        raise ParseError("ifconfig: no 'RX packets'/'RX errors' counter lines")
    return out


# `cat /sys/class/net/IF/statistics/NAME` (one number under the command) or `grep . .../statistics/*` lines
SYSFS_STAT = re.compile(r"/sys/class/net/(?P<nic>[^/\s]+)/statistics/(?P<name>[a-z_]+)")
SYSFS_STAT_LINE = re.compile(r"^\s*/sys/class/net/[^/\s]+/statistics/[a-z_]+:\s*[0-9]+\s*$")


def parse_sysfs_stat_lines(text: str) -> dict[str, dict[str, int]]:
    """`grep . /sys/class/net/IF/statistics/*` -> {nic: {name: value}}."""
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        match = SYSFS_STAT.search(line)
        value = line.rsplit(":", 1)[-1].strip()
        if match and is_ascii_int(value):
            out.setdefault(match.group("nic"), {})[match.group("name")] = int(value)
    if not out:
        raise ParseError("/sys/class/net/IF/statistics: no 'PATH:value' lines")
    return out


# ethtool.c dump_ring (and netlink/rings.c): "Ring parameters for IF:", "Pre-set maximums:", "Current hardware
# settings:", then "RX:\t\t4096" ... ("n/a" where the driver does not report one)
ETHTOOL_RING_HEADER = re.compile(r"^Ring parameters for (?P<nic>\S+?):\s*$")
ETHTOOL_RING_LINE = re.compile(r"^(Pre-set maximums:|Current hardware settings:|"
                               r"[A-Z][A-Za-z ]*:\s+(?:[0-9]+|n/a|on|off)\s*$)")


def parse_ethtool_rings(text: str) -> dict[str, dict[str, int]]:
    """`ethtool -g IF` -> {nic: {"rx_max", "rx", "tx_max", "tx", ...}} (entries; names lower-cased)."""
    nic, section, out = "the NIC", "", {}
    for line in text.splitlines():
        header = ETHTOOL_RING_HEADER.match(line.strip())
        if header:
            nic = header.group("nic")
        elif line.startswith("Pre-set maximums"):
            section = "_max"
        elif line.startswith("Current hardware"):
            section = ""
        elif ":" in line:
            name, _, value = line.partition(":")
            if is_ascii_int(value.strip()):
                out.setdefault(nic, {})[name.strip().lower().replace(" ", "_") + section] = int(value.strip())
    if not any("rx" in rings and "rx_max" in rings for rings in out.values()):
        raise ParseError("ethtool -g: no RX ring size under both 'Pre-set maximums' and 'Current hardware settings'")
    return out
