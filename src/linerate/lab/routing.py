"""A kept lab's routing, read back against its plan (lab/conform.py): the addresses, routes (of every table),
policy rules and fixed (permanent or noarp) neighbour entries of each namespace, or of a guest's lab ports. One route
someone added (`ip route add 198.19.0.2/32 dev wan0 mtu lock 576`) clamps every TCP segment of a trial to
536 bytes, as surely as a qdisc or a sysctl changes what a trial measures.

What the kernel adds by itself for each address and link (protocol "kernel" in `ip route show table all`):
an IPv4 address's prefix route (table main), its local and broadcast entries (table local); an IPv6
address's prefix route, its local entry and, with forwarding on, its subnet-router anycast entry; each
IPv6 link's fe80::/64 and ff00::/8. Such a route is accepted only in that exact form, derived from the
addresses held, through the device that holds them, with no gateway and no metrics (net/ipv4/fib_frontend.c
fib_add_ifaddr; net/ipv6/addrconf.c addrconf_prefix_route, addrconf_add_mroute, ipv6_dev_ac_inc).
Every other route must be one of the plan's default routes. Addresses are compared both ways: one the
plan has not is named (its prefix route would be the kernel's too).

Cached exceptions (a path MTU learnt from an ICMP message, a redirect) are routes too: one learnt while a
link's MTU was lowered outlives the MTU put back by ten minutes. This kernel's dump does not list IPv4's
(`ip route show cache` prints nothing), so the path to each of the lab's addresses is asked (`ip route get`
shows the exception's `expires` and `mtu`).

A namespace is the lab's own, so all of it is compared (`whole`). A guest has a life of its own (a
management NIC, its own default route, policy routing): only what can touch the lab's traffic is
compared there: what lies on a lab port or in the lab's own ranges (198.18.0.0/15 and 2001:2::/48,
RFC 2544's and RFC 5180's benchmarking ranges), a route that overlaps them (from whichever table, but
the guest's own default route in its main table), and a policy rule that can select the lab's packets.
Kernel-made noarp entries (the loopback's, multicast and broadcast ones) are not an operator's."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Iterable

from linerate.topology.plan import AddAddress, AddDefaultRoute

Reader = Callable[[str, list[str]], str]  # (namespace, argv) -> the command's stdout

READS = {
    "route4": ["ip", "-j", "-4", "route", "show", "table", "all"],
    "route6": ["ip", "-j", "-6", "route", "show", "table", "all"],
    "addr": ["ip", "-j", "address", "show"],
    "rule4": ["ip", "-j", "-4", "rule", "show"],
    "rule6": ["ip", "-j", "-6", "rule", "show"],
    "neigh": ["ip", "-j", "neigh", "show", "nud", "all"],

}
LAB_RANGES = (ipaddress.ip_network("198.18.0.0/15"), ipaddress.ip_network("2001:2::/48"))
DEFAULT_RULES = {4: {(0, "local"), (32766, "main"), (32767, "default")}, 6: {(0, "local"), (32766, "main")}}
LINK_LOCAL, MULTICAST = ipaddress.ip_network("fe80::/64"), ipaddress.ip_network("ff00::/8")


def paths_argv(addresses: list[str]) -> list[str]:
    """`ip -j route get` of each address, one JSON line each (a fixed script; the addresses are the plan's)."""
    return ["sh", "-c", 'for a; do ip -j route get "$a"; done', "sh", *addresses]


def link_owners(namespaces: Iterable[str], read: Reader) -> dict[str, str]:
    """Each address of the lab's namespaces -> the MAC of the link holding it (`ip -j address show`)."""
    owners = {}
    for ns in namespaces:
        for link in _json_list(read(ns, READS["addr"])) or []:
            mac = str(link.get("address", "")).lower()
            for info in link.get("addr_info") or [] if mac and link.get("link_type") == "ether" else []:
                address = _address(info.get("local")) if isinstance(info, dict) else None
                if address is not None:
                    owners[str(address)] = mac
    return owners


def routing_drift(ns: str, addresses: Iterable[AddAddress], defaults: Iterable[AddDefaultRoute], read: Reader,
                  whole: bool = True, peers: Iterable[str] = (), owners: dict[str, str] | None = None) -> list[str]:
    """What of `ns`'s routing differs from the plan's addresses and default routes, one phrase each; `peers`:
    the lab's addresses, whose paths from `ns` must hold no cached exception; `owners` (link_owners): a neighbour
    entry for one of them must name the MAC of the link that holds it, whatever its state."""
    addresses = [a for a in addresses if a.netns == ns]
    ports = {a.ifname for a in addresses}
    held = _addresses(read(ns, READS["addr"]))
    if held is None:
        return [f"the addresses in {ns} could not be read (ip -j address show)"]

    def counts(dev: object, dst: object) -> bool:
        return whole or dev in ports or _in_lab_ranges(dst)

    planned = {(a.ifname, str(ipaddress.ip_interface(f"{a.address}/{a.prefixlen}"))) for a in addresses}
    got = {(dev, str(iface)) for dev, iface, _ in held if not _kernels_own(dev, iface) and counts(dev, iface.ip)}
    problems = [f"{dev} in {ns} also has the address {iface}, which the file's lab has not"
                for dev, iface in sorted(got - planned)]
    problems += [f"{dev} in {ns} lacks the file's address {iface}" for dev, iface in sorted(planned - got)]
    derived = _kernel_routes(held)
    wanted = {(d.family, ipaddress.ip_address(d.gateway)) for d in defaults if d.netns == ns}
    found = set()
    for family in (4, 6):
        routes = _json_list(read(ns, READS[f"route{family}"]))
        if routes is None:
            problems.append(f"the IPv{family} routes in {ns} could not be read (ip -j -{family} route show table all)")
            continue
        for route in routes:
            dst = _network(route.get("dst"), family)
            if not (counts(route.get("dev"), dst) or _may_take_lab_traffic(route, dst)):
                continue
            if _is_kernel_route(route, dst, derived):
                continue
            plain = set(route) <= {"dst", "gateway", "dev", "protocol", "metric", "flags", "pref", "scope"}
            gateway = _address(route.get("gateway"))
            if plain and dst is not None and dst.prefixlen == 0 and (family, gateway) in wanted \
                    and route.get("flags") in ([], None):
                found.add((family, gateway))
                continue
            problems.append(f"{ns} has a route the file's lab has not: {_route_text(route)}")
        for rule in _json_list(read(ns, READS[f"rule{family}"])) or []:
            if (rule.get("priority"), rule.get("table")) in DEFAULT_RULES[family] and set(rule) == {"priority", "src", "table"} \
                    and rule.get("src") == "all":
                continue
            if whole or _rule_can_match(rule, ports):
                problems.append(f"{ns} has a routing rule the file's lab has not: {_rule_text(rule)}")
    problems += [f"{ns} lacks the file's default route via {gateway}" for _, gateway in sorted(wanted - found, key=str)]
    others = sorted({str(address) for address in peers} - {a.address for a in addresses})
    for line in read(ns, paths_argv(others)).splitlines() if others else []:
        for route in _json_list(line) or []:  # the kernel's exception for that path: a learnt MTU, a redirect
            cache = route.get("cache") if isinstance(route.get("cache"), list) else []
            if "expires" in route or "redirected" in cache:  # a route's own metrics are the route's (named above)
                problems.append(f"{ns} has a cached route the file's lab has not (a learnt path MTU or redirect, "
                                f"for ten minutes): {_route_text(route)}")
    for entry in _json_list(read(ns, READS["neigh"])) or []:
        state = entry.get("state") if isinstance(entry.get("state"), list) else []
        dst = _address(entry.get("dst"))
        flags = [flag for flag in OPERATORS_NEIGHBOUR_FLAGS if flag in entry]
        fixed = "PERMANENT" in state or ("NOARP" in state and _operators_noarp(entry, dst)) or flags
        if fixed and counts(entry.get("dev"), dst):
            problems.append(f"{ns} has a {'/'.join([*state, *flags]).lower()} neighbour entry the file's lab has not: "
                            f"{entry.get('dst')} lladdr {entry.get('lladdr')} dev {entry.get('dev')}"[:200])
            continue
        owner, lladdr = (owners or {}).get(str(dst)), str(entry.get("lladdr", "")).lower()
        if owner and lladdr and lladdr != owner:  # a REACHABLE entry lasts 15-45 s, and is refreshed while used
            problems.append(f"{ns} resolves {entry.get('dst')} to {lladdr} ({'/'.join(state).lower()}), but the "
                            f"lab's link with that address is {owner}"[:200])
    return problems


# entries the kernel never makes nor corrects by itself (ip-neighbour(8)): "extern_learn" is left to whoever added
# it (a wrong MAC stayed REACHABLE here past 20 s and every trial timed out), "managed" is kept resolved for its adder
OPERATORS_NEIGHBOUR_FLAGS = ("extern_learn", "managed")


def _operators_noarp(entry: dict, dst) -> bool:
    """A noarp neighbour entry the kernel does not make by itself: those are the loopback's (any traffic over
    it, as an SSH to a guest's forwarded port, makes one for 0.0.0.0), multicast and broadcast ones."""
    return entry.get("dev") != "lo" and dst is not None and not (dst.is_multicast or dst.is_unspecified) \
        and entry.get("lladdr") != "ff:ff:ff:ff:ff:ff"


def _kernels_own(dev: str, iface) -> bool:
    """An address the kernel gives by itself: a link's IPv6 link-local one, the loopback's 127.0.0.1/8 and ::1.
    Any other, of any scope (`ip addr add 198.19.0.2/32 dev lo scope host` in a client namespace would
    answer the client's trials itself), is compared."""
    if iface.version == 6 and iface.network.prefixlen == 64 and iface.network.subnet_of(LINK_LOCAL):
        return True
    return dev == "lo" and str(iface) in ("127.0.0.1/8", "::1/128")


def _addresses(text: str) -> list[tuple[str, ipaddress.IPv4Interface | ipaddress.IPv6Interface, str]] | None:
    """`ip -j address show` -> (device, address/prefix, scope) of every address."""
    links = _json_list(text)
    if links is None:
        return None
    held = []
    for link in links:
        for info in link.get("addr_info", []) if isinstance(link.get("addr_info"), list) else []:
            try:
                iface = ipaddress.ip_interface(f"{info['local']}/{int(info['prefixlen'])}")
            except (KeyError, TypeError, ValueError):
                continue
            held.append((str(link.get("ifname")), iface, str(info.get("scope"))))
    return held


def _kernel_routes(held) -> set[tuple[str, str, str, str]]:
    """(type, table, dst network, device) of every route the kernel adds for these addresses and links."""
    routes = set()
    for dev, iface, _ in held:
        net, ip = iface.network, iface.ip
        host = ipaddress.ip_network(ip)
        if ip.version == 4:
            routes.add(("local", "local", str(host), dev))
            # the prefix: a route out of the device, or on the loopback the whole prefix is local (127.0.0.0/8)
            routes.add(("local", "local", str(net), dev) if dev == "lo" else ("unicast", "main", str(net), dev))
            if net.prefixlen < 31:
                routes |= {("broadcast", "local", f"{net.broadcast_address}/32", dev),
                           ("broadcast", "local", f"{net.network_address}/32", dev)}  # kernels before 5.x
        else:
            routes |= {("local", "local", str(host), dev), ("unicast", "main", str(net), dev),
                       ("anycast", "local", f"{net.network_address}/128", dev),
                       ("multicast", "local", str(MULTICAST), dev)}
            if ip.is_link_local:
                routes.add(("unicast", "main", str(LINK_LOCAL), dev))
    return routes


def _is_kernel_route(route: dict, dst, derived: set) -> bool:
    if route.get("protocol") != "kernel" or dst is None or {"gateway", "via", "nexthops", "nhid", "metrics"} & set(route):
        return False
    return (route.get("type", "unicast"), route.get("table", "main"), str(dst), route.get("dev")) in derived


def _rule_can_match(rule: dict, ports: set[str]) -> bool:
    """A rule whose selector can take the lab's packets, whatever it does with them (a lookup in a table of
    blackholes takes them as surely as `prohibit`): unless its addresses lie outside the lab's ranges (and
    it is not inverted with `not`) or it names a device that is no lab port."""
    if rule.get("not"):
        return True
    for key, length in (("src", "srclen"), ("dst", "dstlen")):
        if rule.get(key, "all") != "all":
            net = _network(f"{rule[key]}/{rule[length]}" if length in rule else rule[key], 0)
            if net is None or not _overlaps_lab(net):
                return False
    return all(rule.get(key) in (None, *ports) for key in ("iif", "oif"))


def _may_take_lab_traffic(route: dict, dst) -> bool:
    """A guest's route that can take the lab's packets from its connected routes: one that overlaps the lab's
    ranges and is either in another table (the local table is looked up first; another by a rule) or not a
    default route (a guest's own default route, to its management network, is less specific than the lab's)."""
    if dst is None or not _overlaps_lab(dst):
        return False
    return dst.prefixlen > 0 or route.get("table", "main") != "main"


def _overlaps_lab(net) -> bool:
    return any(net.version == r.version and net.overlaps(r) for r in LAB_RANGES)


def _in_lab_ranges(dst) -> bool:
    if isinstance(dst, str):
        dst = _network(dst, 0)
    if isinstance(dst, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        dst = ipaddress.ip_network(dst)
    return dst is not None and dst.prefixlen > 0 and any(
        dst.version == r.version and dst.subnet_of(r) for r in LAB_RANGES)


def _network(text: object, family: int):
    if text == "default":
        return ipaddress.ip_network("0.0.0.0/0" if family == 4 else "::/0")
    try:
        return ipaddress.ip_network(str(text), strict=False) if isinstance(text, str) else None
    except ValueError:
        return None


def _address(text: object):
    try:
        return ipaddress.ip_address(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _json_list(text: str) -> list[dict] | None:
    try:
        doc = json.loads(text or "[]")
    except ValueError:
        return None
    return [item for item in doc if isinstance(item, dict)] if isinstance(doc, list) else None


def _route_text(route: dict) -> str:
    words = [str(route.get("type", "")), str(route.get("dst", ""))]
    words += [f"{key} {route[key]}" for key in ("gateway", "dev", "table", "protocol") if key in route]
    metrics = route.get("metrics")
    if isinstance(metrics, list):
        words += [f"{k} {v}" for item in metrics if isinstance(item, dict) for k, v in item.items()]
    return " ".join(word for word in words if word)[:200]


def _rule_text(rule: dict) -> str:
    return " ".join(f"{key} {value}" for key, value in rule.items())[:200]
