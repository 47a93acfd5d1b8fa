"""Every link of a kept lab's namespace, read back against its plan (lab/conform.py): the links themselves
(one added, one gone, another kind, another bridge), what the plan leaves at the kernel's defaults (GSO/GRO
sizes, a bridge's and a bridge port's settings, compared with a veth and a bridge made just now: lab/netns.py
new_links), an XDP program on a link, a link's NAPI deferral and each queue's RPS/XPS masks, a switch's static forwarding entries, and
IPsec (xfrm) policies and states, which the lab has none of. A guest's lab ports: their GSO/GRO sizes against
the kernel's defaults, XDP, NAPI deferral and RPS. `ip link set wan0 gso_max_size 1500` makes every segment leave the DUT
unsegmented by GSO, `bridge link set dev p1 learning off` makes a switch copy every frame to every pair:
each changes what a trial measures, as a qdisc does.

Names are from ip-link(8) (`-details`), bridge(8) and ip-xfrm(8); what a bridge port's flags do:
Documentation/networking/bridge.rst."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from linerate.topology.plan import CreateNamespace, CreateTap, CreateVeth, Plan, RunTool

Reader = Callable[[str, list[str]], str]  # (namespace, argv) -> the command's stdout

LINKS = ["ip", "-d", "-j", "link", "show"]
# a link's NAPI deferral and threaded NAPI (Documentation/networking/napi.rst, Documentation/ABI/testing/
# sysfs-class-net: `threaded`) and each queue's receive/transmit steering
# (Documentation/networking/scaling.rst): 0 unless someone (or the plan's RPS steps) set it; a fixed script, no values
SYSFS = ["sh", "-c", "grep -H . /sys/class/net/*/gro_flush_timeout /sys/class/net/*/napi_defer_hard_irqs "
         "/sys/class/net/*/queues/*/rps_cpus /sys/class/net/*/queues/*/rps_flow_cnt /sys/class/net/*/queues/*/xps_cpus "
         "2>/dev/null; true"]
# read apart (captured fixtures hold the read above): NAPI in a kernel thread instead of softirq, and transmit
# steering by receive queue
SYSFS_MORE = ["sh", "-c", "grep -H . /sys/class/net/*/threaded /sys/class/net/*/queues/*/xps_rxqs 2>/dev/null; true"]
# what the kernel gives every link (include/linux/netdevice.h GSO_LEGACY_MAX_SIZE, GSO_MAX_SEGS, GRO_LEGACY_MAX_SIZE):
# a guest's NICs are compared with these (no new virtio NIC can be made there to compare with)
KERNEL_SIZES = {"gso_max_size": 65536, "gso_max_segs": 65535, "gro_max_size": 65536}
XFRM = (["ip", "xfrm", "policy", "list"], ["ip", "xfrm", "state", "list"])
SIZES = ("gso_max_size", "gso_max_segs", "gro_max_size", "tso_max_size", "tso_max_segs", "gso_ipv4_max_size",
         "gro_ipv4_max_size")
BRIDGE_KEYS = ("forward_delay", "hello_time", "max_age", "ageing_time", "stp_state", "priority", "vlan_filtering",
               "vlan_protocol", "vlan_default_pvid", "group_fwd_mask", "group_addr", "mcast_snooping",
               "no_linklocal_learn", "nf_call_iptables", "nf_call_ip6tables", "nf_call_arptables")
PORT_KEYS = ("priority", "cost", "hairpin", "guard", "root_block", "fastleave", "learning", "flood", "proxy_arp",
             "proxy_arp_wifi", "multicast_router", "mcast_flood", "bcast_flood", "mcast_to_unicast", "neigh_suppress",
             "group_fwd_mask", "vlan_tunnel", "isolated", "locked", "mab")


def planned_links(plan: Plan) -> dict[str, dict[str, dict[str, Any]]]:
    """namespace -> link name -> {"kind": ip's info_kind (None: the loopback), "master": its bridge or None,
    and, for a bridge, "ageing_time" if the plan gives one; "fdb": its static (MAC, port) entries}."""
    links: dict[str, dict[str, dict[str, Any]]] = {}

    def add(ns: str, name: str, kind: str | None) -> dict[str, Any]:
        return links.setdefault(ns, {}).setdefault(name, {"kind": kind, "master": None})

    for step in plan.steps:
        if isinstance(step, CreateNamespace):
            add(step.netns, "lo", None)
        elif isinstance(step, CreateVeth):
            add(step.netns, step.ifname, "veth")
            add(step.peer_netns, step.peer_ifname, "veth")
        elif isinstance(step, CreateTap):
            add(step.netns, step.ifname, "tun")
        elif isinstance(step, RunTool) and step.argv[:3] == ("ip", "link", "add") and "type" in step.argv:
            argv = step.argv
            link = add(step.netns, argv[3], argv[argv.index("type") + 1])
            if "ageing_time" in argv:
                link["ageing_time"] = int(argv[argv.index("ageing_time") + 1])
        elif isinstance(step, RunTool) and step.argv[:3] == ("ip", "link", "set") and "master" in step.argv:
            add(step.netns, step.argv[3], None)["master"] = step.argv[step.argv.index("master") + 1]
        elif isinstance(step, RunTool) and step.argv[:3] == ("bridge", "fdb", "add"):
            argv = step.argv
            link = add(step.netns, argv[argv.index("dev") + 1], None)
            link.setdefault("fdb", set()).add(argv[3].lower())
    return links


def link_drift(ns: str, planned: dict[str, dict[str, Any]], read: Reader, fresh: dict[str, dict]) -> list[str]:
    """What of `ns`'s links differs from `planned` (planned_links(plan)[ns]); `fresh`: a new veth's, bridge's and
    bridge port's settings ({"veth": ..., "bridge": ..., "bridge_slave": ...}), or {} to compare no defaults."""
    held = _by_name(read(ns, LINKS))
    if held is None:
        return [f"the links of {ns} could not be read (ip -d -j link show)"]
    problems = [f"a link {name} ({_kind(link) or 'no kind'}) is in {ns}, and the file's lab has none such"
                for name, link in sorted(held.items()) if name not in planned]
    problems += [f"{ns} lacks the file's link {name}" for name in sorted(set(planned) - set(held))]
    for name, want in sorted(planned.items()):
        link = held.get(name)
        if link is None:
            continue
        if want["kind"] is not None and _kind(link) != want["kind"]:
            problems.append(f"{name} in {ns} is a {_kind(link) or 'link of no kind'}, the file's a {want['kind']}")
        if link.get("master") != want["master"]:
            problems.append(f"{name} in {ns} is a port of {link.get('master') or 'no bridge'}, the file says "
                            f"{want['master'] or 'no bridge'}")
        if "xdp" in link:
            problems.append(f"{name} in {ns} has an XDP program attached, which the file's lab has not")
        info = link.get("linkinfo") if isinstance(link.get("linkinfo"), dict) else {}
        if _kind(link) == "veth":
            problems += _differs(f"{name} in {ns}", link, fresh.get("veth", {}), SIZES, "a new veth's")
        if _kind(link) == "bridge":
            data = _dict(info.get("info_data"))
            if "ageing_time" in want and data.get("ageing_time") != want["ageing_time"]:
                problems.append(f"ageing_time of bridge {name} in {ns} is {data.get('ageing_time')}, the file's is "
                                f"{want['ageing_time']}")
            keys = tuple(key for key in BRIDGE_KEYS if key != "ageing_time" or "ageing_time" not in want)
            problems += _differs(f"bridge {name} in {ns}", data, fresh.get("bridge", {}), keys, "a new bridge's")
        if link.get("master") is not None and info.get("info_slave_kind") == "bridge":
            problems += _differs(f"bridge port {name} in {ns}", _dict(info.get("info_slave_data")),
                                 fresh.get("bridge_slave", {}), PORT_KEYS, "a new bridge port's")
    bridges = sorted(name for name, link in held.items() if _kind(link) == "bridge")
    if bridges:
        problems += _fdb_drift(ns, planned, held, read)
    return problems


def guest_port_drift(host: str, ports: set[str], read: Reader) -> list[str]:
    """A guest's lab ports: the kernel's GSO/GRO sizes and no XDP program (the guest's other links are its own)."""
    problems = []
    for port in sorted(ports):
        link = (_by_name(read(host, [*LINKS, "dev", port])) or {}).get(port)
        if link is None:
            problems.append(f"{port} in {host} could not be read (ip -d -j link show dev {port})")
            continue
        problems += _differs(f"{port} in {host}", link, KERNEL_SIZES, tuple(KERNEL_SIZES), "the kernel's default")
        if "xdp" in link:
            problems.append(f"{port} in {host} has an XDP program attached, which the file's lab has not")
    return problems


def sysfs_drift(ns: str, devices: set[str] | None, planned: set[str], read: Reader) -> list[str]:
    """A link's NAPI deferral, or a queue's RPS mask, flow count or XPS mask, other than 0 where the plan sets
    none (`planned`: the sysfs paths its steps write, compared on their own). devices None: every link of ns; a
    guest's (devices given) XPS masks are its driver's own (virtio-net sets them per queue)."""
    problems = []
    more = read(ns, SYSFS_MORE) if devices is None else ""  # a lab namespace's links; a guest's are its driver's
    for line in (read(ns, SYSFS) + "\n" + more).splitlines():
        path, _, value = line.partition(":")
        parts = path.split("/")  # /sys/class/net/<link>/<key> or /sys/class/net/<link>/queues/<queue>/<key>
        if len(parts) not in (6, 8) or path in planned or (devices is not None and parts[4] not in devices):
            continue
        if devices is not None and parts[-1] in ("xps_cpus", "xps_rxqs"):
            continue
        if value.replace(",", "").strip().strip("0"):
            what = parts[-1] if len(parts) == 6 else f"{parts[6]}/{parts[7]}"
            problems.append(f"{what} of {parts[4]} in {ns} is {value.strip()[:40]}, the kernel's default is 0")
    return problems


def link_mtus(ns: str, read: Reader) -> dict[str, int]:
    """link name -> its MTU, as `ip -d -j link show` gives it."""
    return {name: link["mtu"] for name, link in (_by_name(read(ns, LINKS)) or {}).items() if isinstance(link.get("mtu"), int)}


def xfrm_drift(ns: str, read: Reader) -> list[str]:
    """IPsec policies or states in a lab namespace (the lab makes none; a policy can drop or divert its traffic)."""
    return [f"{ns} has IPsec {argv[2]} entries (`{' '.join(argv)}`), which the file's lab has not"
            for argv in XFRM if read(ns, argv).strip()]


def fresh_links(shown: str | None) -> dict[str, dict]:
    """`ip -d -j link show` of a namespace holding a new veth pair one end of which is a port of a new bridge
    (lab/netns.py new_links) -> {"veth": its sizes, "bridge": the bridge's info_data, "bridge_slave": the port's}."""
    fresh: dict[str, dict] = {}
    for link in (_by_name(shown or "") or {}).values():
        info = _dict(link.get("linkinfo"))
        if _kind(link) == "veth" and "veth" not in fresh:
            fresh["veth"] = {key: link[key] for key in SIZES if key in link}
        if _kind(link) == "bridge":
            fresh["bridge"] = _dict(info.get("info_data"))
        if info.get("info_slave_kind") == "bridge":
            fresh["bridge_slave"] = _dict(info.get("info_slave_data"))
    return fresh


def _fdb_drift(ns: str, planned: dict[str, dict[str, Any]], held: dict[str, dict], read: Reader) -> list[str]:
    """A bridge's forwarding entries that someone added: static ones the plan has not, and permanent ones for a
    MAC that is none of the namespace's own links' (the kernel's own are those)."""
    try:
        entries = json.loads(read(ns, ["bridge", "-j", "fdb", "show"]) or "[]")
    except ValueError:
        return [f"the forwarding entries of {ns} could not be read (bridge -j fdb show)"]
    own = {str(link.get("address", "")).lower() for link in held.values()}
    problems, found = [], set()
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or "self" in (entry.get("flags") or []) or not entry.get("master"):
            continue
        mac, port, state = str(entry.get("mac", "")).lower(), entry.get("ifname"), entry.get("state")
        ours = mac in planned.get(str(port), {}).get("fdb", set())
        # a learned entry that learning cannot move (sticky) or that was put there from outside (extern_learn):
        # bridge(8) fdb add's flags, never the bridge's own
        marked = sorted(set(entry.get("flags") or []) & {"sticky", "extern_learn"})
        if (state == "static" and not ours) or (state == "permanent" and mac not in own and not ours) or marked:
            suffix = f" marked {', '.join(marked)}" if marked else ""
            problems.append(f"bridge {entry.get('master')} in {ns} has a {state or 'dynamic'} entry {mac} on {port}"
                            f"{suffix}, which the file's lab has not"[:200])
        elif ours and state == "static":
            found.add((mac, port))
    problems += [f"{port} in {ns} lacks the file's static forwarding entry {mac}"
                 for port, link in sorted(planned.items()) for mac in sorted(link.get("fdb", ())) if (mac, port) not in found]
    return problems


def _differs(what: str, held: dict, wanted: dict, keys: tuple[str, ...], whose: str) -> list[str]:
    return [f"{key} of {what} is {held.get(key)}, {whose} is {wanted[key]}"[:200]
            for key in keys if key in wanted and held.get(key) != wanted[key]]


def _kind(link: dict) -> str | None:
    return _dict(link.get("linkinfo")).get("info_kind")


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _by_name(text: str) -> dict[str, dict] | None:
    try:
        doc = json.loads(text or "[]")
    except ValueError:
        return None
    if not isinstance(doc, list):
        return None
    return {str(link.get("ifname")): link for link in doc if isinstance(link, dict)}
