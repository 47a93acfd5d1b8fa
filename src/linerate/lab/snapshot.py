"""A kept lab's namespaces as `lab up` left them, and what differs now: the catch-all beside the plan's own
comparisons (lab/conform.py, lab/links.py, lab/routing.py, lab/sysctls.py). Those say what a value should
be; this one says only that a value changed since the lab was built and kept, so a setting nobody listed is
still found: a link's group, alias, MAC, flags or queue counts (ip-link(8) `-details`), every offload
feature a tool can change (ethtool(8) -k, where a tap's follow what qemu and its guest negotiated: a tap with
`tx off` cut a VM DUT's TCP throughput here from ~1,800 to 377 Mbit/s), channels (ethtool -l), every qdisc with its options on
any link (tc(8), a tap's and a bridge's included), address labels (ip-addrlabel(8)), proxy neighbours and
a bridge's multicast database (bridge(8) mdb).

What a running lab changes by itself is left out, by name (EXCLUDED): counters, timers, an interface's
operational state, how many sockets asked for promiscuous or all-multicast mode (a capture in a
generator's namespace is allowed: `promiscuity`, not the PROMISC flag an operator sets), and entries the
kernel learns and ages out (a bridge's multicast groups in state "temp")."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Reader = Callable[[str, list[str]], str]  # (namespace, argv) -> the command's stdout ("" when it failed)

LINKS = ["ip", "-d", "-j", "link", "show"]
PER_NAMESPACE = {"qdiscs": ["tc", "-j", "-d", "qdisc", "show"], "address labels": ["ip", "-j", "addrlabel", "list"],
                 "proxy neighbours": ["ip", "-j", "neigh", "show", "proxy"],
                 "multicast database": ["bridge", "-j", "mdb", "show"]}
PER_LINK = {"offloads": ["ethtool", "-k"], "channels": ["ethtool", "-l"]}
# what changes while a lab runs with nobody touching it: statistics, timers, the state the kernel reports
# (operstate, carrier counts), and counts of sockets in promiscuous/all-multicast mode (a capture)
EXCLUDED = frozenset({"stats", "stats64", "operstate", "linkmode", "carrier_changes", "carrier_up_count",
                      "carrier_down_count", "promiscuity", "allmulti", "refcnt", "ifindex"})


# a link's flags that report its state rather than a setting (ip-link(8): the kernel's IFF_LOWER_UP, IFF_DORMANT,
# and ip's NO-CARRIER, M-DOWN): a bridge shows NO-CARRIER until its first port's carrier settles
STATE_FLAGS = frozenset({"NO-CARRIER", "LOWER_UP", "DORMANT", "M-DOWN"})


def take(namespaces: list[str], read: Reader) -> dict[str, dict[str, Any]]:
    """namespace -> {what: its normalised read}; a read that fails is kept as "" (compared like any other)."""
    snapshot: dict[str, dict[str, Any]] = {}
    for ns in namespaces:
        links = _json(read(ns, LINKS))
        held: dict[str, Any] = {"links": {str(link.get("ifname")): _settings(link) for link in links
                                          if isinstance(link, dict)} if isinstance(links, list) else links}
        for what, argv in PER_NAMESPACE.items():
            held[what] = _keyed(_strip(_json(read(ns, argv))))
        for name in sorted(held["links"]) if isinstance(held["links"], dict) else []:
            if name != "lo":
                for what, argv in PER_LINK.items():
                    held[f"{what} of {name}"] = _features(read(ns, [*argv, name]))
        snapshot[ns] = held
    return snapshot


def drift(kept: dict[str, dict[str, Any]], now: dict[str, dict[str, Any]]) -> list[str]:
    """One phrase per read (a namespace's links, a link's offloads, ...) that differs between the lab as it was
    kept and as it is now, naming up to three of the values that changed."""
    problems: list[str] = []
    for ns in sorted(set(kept) | set(now)):
        for what in sorted(set(kept.get(ns, {})) | set(now.get(ns, {}))):
            changes = _differences(kept.get(ns, {}).get(what), now.get(ns, {}).get(what), [])
            if changes:
                more = f" and {len(changes) - 3} more" if len(changes) > 3 else ""
                problems.append(f"{ns}'s {what} changed since the lab was kept ({'; '.join(changes[:3])}{more})")
    return problems


def _differences(before: Any, after: Any, path: list[str]) -> list[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key in sorted(set(before) | set(after), key=str):
            found += _differences(before.get(key), after.get(key), [*path, str(key)])
        return found
    if before == after:
        return []
    where = ".".join(path) or "the whole read"
    return [f"{where} was {_short(before)}, is {_short(after)}"]


def _short(value: Any) -> str:
    text = "absent" if value is None else json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:57] + "..."


def _strip(value: Any) -> Any:
    """The read without EXCLUDED keys or timers (a key ending in _timer), at any depth, and without an entry
    the kernel learned and ages out by itself (state "temp": a bridge's multicast group a port joined)."""
    if isinstance(value, dict):
        return {key: _strip(item) for key, item in value.items()
                if key not in EXCLUDED and not str(key).endswith("_timer")}
    if isinstance(value, list):
        return [_strip(item) for item in value if not (isinstance(item, dict) and item.get("state") == "temp")]
    return value


def _settings(link: dict) -> dict:
    link = _strip(link)
    if isinstance(link.get("flags"), list):
        link["flags"] = [flag for flag in link["flags"] if flag not in STATE_FLAGS]
    return link


def _keyed(read: Any) -> Any:
    """A list of records -> {its natural key: the rest}, so a difference names the entry (a qdisc by its
    device and parent, a label by its prefix); a list of other things stays a list."""
    if not isinstance(read, list) or not all(isinstance(item, dict) for item in read):
        return read
    keyed: dict[str, Any] = {}
    for item in read:
        key = " ".join(str(item[name]) for name in ("dev", "parent", "address", "prefixlen", "dst", "port")
                       if name in item) + (" root" if item.get("root") else "")
        keyed[key.strip() or json.dumps(item, sort_keys=True)] = item
    return keyed


def _json(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else []
    except (ValueError, RecursionError):
        return text.strip()  # kept as text: compared whole


def _features(text: str) -> dict[str, str] | str:
    """ethtool's "name: value" lines -> {name: value} (under "section name" where a "Section:" line heads
    them, as -l's maximums and current settings); a line marked [fixed] left out (nothing can change it); the
    first line says which device."""
    features: dict[str, str] = {}
    section = ""
    for line in text.splitlines()[1:]:
        name, sep, value = line.partition(":")
        if sep and not value.strip():
            section = name.strip() + " "
        elif sep and "[fixed]" not in value:
            features[section + name.strip()] = value.strip()
    return features if features or not text.strip() else text.strip()
