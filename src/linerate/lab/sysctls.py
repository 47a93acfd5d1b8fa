"""Every net.* sysctl of a kept lab's namespace, read back against a namespace made just now with the same
values of its plan set in it (lab/netns.py new_namespace_sysctls). A record that leaves a key at its
default says the lab has the default: `sysctl -w net.ipv4.tcp_congestion_control=reno` or a smaller
`net.core.rmem_max` in the client's namespace would otherwise change every later result stored under it.

A key of a device the new namespace has not (the lab's veths) is compared with its namespace-wide
template: `net.ipv4.conf.default.*`, `net.ipv6.conf.default.*` (a device takes these when it is made,
and the plan sets its sysctls before it makes its links), and for neighbour tables the loopback's
(`net.*.neigh.lo.*`: a namespace other than the first has no `neigh.default`). Not compared: a
device's `mtu` against the template (a link's IPv6 MTU is compared with its link's MTU instead), a count traffic changes by itself
(nf_conntrack_count) and the TCP Fast Open key (made at the first use, and a secret). A guest's kernel has no such reference here: its sysctls are compared where its
plan sets them (vm/plan.py guest_plan)."""

from __future__ import annotations

# a count traffic changes by itself; a key the kernel makes at the first TCP Fast Open (and a secret)
DYNAMIC = frozenset({"net.netfilter.nf_conntrack_count", "net.ipv4.tcp_fastopen_key"})
DEVICE_OWN = frozenset({"mtu"})  # a device's own figure, not a template's


def parse_sysctls(text: str | None) -> dict[str, str]:
    """`sysctl -a` -> {key: value, whitespace collapsed}."""
    values = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition(" = ")
        if sep and key.startswith("net."):
            values[key.strip()] = " ".join(value.split())
    return values


def sysctl_drift(ns: str, held_text: str, reference_text: str | None, planned: set[str],
                 mtus: dict[str, int] | None = None) -> list[str]:
    """Keys of `ns` (its `sysctl -a`) that differ from a new namespace's (`reference_text`), except the
    `planned` keys, which the plan's own steps are compared on; a link's IPv6 MTU against the link's own
    (`mtus`: name -> MTU; the kernel sets one from the other, and a smaller IPv6 MTU lowers every IPv6 MSS).
    [] when there is no reference."""
    reference = parse_sysctls(reference_text)
    if not reference:
        return []
    held = parse_sysctls(held_text)
    if not held:
        return [f"the sysctls of {ns} could not be read (sysctl -a)"]
    problems = []
    for key, value in sorted(held.items()):
        if key in DYNAMIC or key in planned:
            continue
        wanted = reference.get(key)
        parts = key.split(".")
        if wanted is None and len(parts) >= 5 and parts[2] in ("conf", "neigh"):
            if parts[2] == "conf" and parts[4] in DEVICE_OWN:
                if parts[1] == "ipv6" and mtus and parts[3] in mtus and value != str(mtus[parts[3]]):
                    problems.append(f"{key} in {ns} is '{value[:20]}', its link's MTU is {mtus[parts[3]]}")
                continue
            template = "default" if parts[2] == "conf" else "lo"
            wanted = reference.get(".".join([*parts[:3], template, *parts[4:]]))
        if wanted is not None and wanted != value:
            problems.append(f"{key} in {ns} is '{value[:60]}', a new namespace's is '{wanted[:60]}' (the file "
                            "sets no value for it)")
    return problems
