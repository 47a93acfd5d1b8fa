"""LabSpec -> Plan: the client -> DUT -> server lab as an ordered list of steps.

Addresses come from the benchmarking ranges of RFC 2544 (198.18.0.0/15, appendix C.2.2) and
RFC 5180 (2001:2::/48). Each lab lives in its own three namespaces, so two labs can coexist with
the same addresses; their names carry the lab id.

    client [eth0] 198.18.0.2 ---- 198.18.0.1 [lan0] DUT [wan0] 198.19.0.1 ---- 198.19.0.2 [eth0] server
                  2001:2:0:1::2                                 2001:2:0:2::1          2001:2:0:2::2
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field

from linerate.errors import ConfigError
from linerate.model import MAX_PAIRS, SWITCH_ROLES, FirewallProfile, lab_namespace, pair_roles, validate_lab_name
from linerate.topology.firewall import render_ruleset
from linerate.topology.link import OFFLOAD_FEATURES, LinkSpec, qdisc_argvs

ROLES = ("client", "dut", "server")
# The client opens many short connections in a cps test (h2load): every port of the range, and a
# port in TIME_WAIT reused for a new outgoing connection (tcp_tw_reuse=1; both per namespace since
# Linux 4.11), so the client's own ports do not limit what is measured of the DUT.
CLIENT_PORTS = (("net.ipv4.ip_local_port_range", "1024 65535"), ("net.ipv4.tcp_tw_reuse", "1"))
# Every lab link carries IPv6 too, which needs an MTU of 1280 or more (RFC 8200, section 5): below it the
# kernel takes IPv6 off the interface and the lab's IPv6 routes cannot be added.
MTU_MIN, MTU_MAX = 1280, 9216

CLIENT_IF, DUT_LAN_IF, DUT_WAN_IF, SERVER_IF = "eth0", "lan0", "wan0", "eth0"
IFINDEX = {CLIENT_IF: 10, DUT_LAN_IF: 11, DUT_WAN_IF: 12, "lo": 1}  # per namespace; lo is always 1
UPLINK = "uplink"  # a pooled lab's switch port toward the DUT (topology/pool.py); port p<N> faces pair N


def switch_port(index: int) -> str:
    return f"p{index + 1}"

ADDR = {
    ("client", 4): ("198.18.0.2", 24),
    ("dut_lan", 4): ("198.18.0.1", 24),
    ("dut_wan", 4): ("198.19.0.1", 24),
    ("server", 4): ("198.19.0.2", 24),
    ("client", 6): ("2001:2:0:1::2", 64),
    ("dut_lan", 6): ("2001:2:0:1::1", 64),
    ("dut_wan", 6): ("2001:2:0:2::1", 64),
    ("server", 6): ("2001:2:0:2::2", 64),
}


def server_address(family: int) -> str:
    return ADDR[("server", family)][0]


def split_cpus(cpus: list[int] | tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The lab's two sides: the client side (client, its port, DUT lan0's receive work) on the
    first half of the CPUs, the server side on the second half; one CPU serves both.

    Why: veth queues each packet on the backlog of the CPU that sent it, so a flow sent from two
    CPUs arrives out of order (DSACKs and spurious retransmits: 100-2,000 per 8 s trial here,
    and single-stream goodput on a 1 Gbit/s link 0.95-0.99 of the ceiling). Pinning each side's
    iperf3 and steering each side's receive work (RPS) to its own CPUs, as two hosts would have
    them, removed them: 0-3 retransmits and 0.9991-0.9998 of the ceiling in all four cases
    (IPv4/IPv6 x 1/4 streams, 8 s, two interleaved rounds; hashing RPS over all CPUs instead
    gave 0.96-0.996: it orders packets but costs cross-CPU work)."""
    ordered = tuple(sorted(cpus))
    if len(ordered) < 2:
        return ordered, ordered
    half = len(ordered) // 2
    return ordered[:half], ordered[half:]


def host_cpu_sides() -> tuple[tuple[int, ...], tuple[int, ...]]:
    return split_cpus(tuple(os.sched_getaffinity(0)))


def cpu_mask(cpus: tuple[int, ...]) -> str:
    """(0, 1) -> "3", as /sys/class/net/*/queues/rx-*/rps_cpus takes it."""
    return format(sum(1 << cpu for cpu in cpus), "x")


@dataclass(frozen=True)
class LabSpec:
    lab_id: str
    firewall: FirewallProfile = field(default_factory=lambda: FirewallProfile("none"))
    mtu: int = 1500
    iperf_port: int = 5201
    http_port: int = 8080  # cps: nginx on the server (traffic/nginx.py DEFAULT_PORT); the rulesets pass it too
    link: LinkSpec = field(default_factory=LinkSpec)
    offloads: tuple[tuple[str, str, str, str], ...] = ()  # (role, ifname, feature, on|off)
    dut_sysctls: tuple[tuple[str, str], ...] = ()
    dut_rps_mask: str | None = None
    txqueuelen: int | None = None
    cpu_sides: tuple[tuple[int, ...], tuple[int, ...]] = field(default_factory=host_cpu_sides)
    pairs: int = 1  # client/server pairs (topology/pool.py); more than one, or a pair_link, joins them by switches
    pair_link: LinkSpec | None = None  # each pair's access link (None: not shaped)

    def __post_init__(self) -> None:
        validate_lab_name(self.lab_id)
        if not isinstance(self.mtu, int) or not MTU_MIN <= self.mtu <= MTU_MAX:
            raise ConfigError("mtu", f"{self.mtu!r} is out of range; use {MTU_MIN} to {MTU_MAX} bytes")
        if isinstance(self.pairs, bool) or not isinstance(self.pairs, int) or not 1 <= self.pairs <= MAX_PAIRS:
            raise ConfigError("pairs", f"{self.pairs!r} is out of range; use 1 to {MAX_PAIRS} client/server pairs")

    @property
    def pooled(self) -> bool:
        """Whether the lab has a generator pool: its pairs reach the DUT through a switch on each side."""
        return self.pairs > 1 or (self.pair_link is not None and self.pair_link.rate_bps is not None)

    def pair_roles(self) -> list[tuple[str, str]]:
        return [pair_roles(index) for index in range(self.pairs)]

    @property
    def roles(self) -> tuple[str, ...]:
        if not self.pooled:
            return ROLES
        clients, servers = zip(*self.pair_roles())
        return (*clients, *SWITCH_ROLES[:1], "dut", *SWITCH_ROLES[1:], *servers)

    def netns(self, role: str) -> str:
        return lab_namespace(self.lab_id, role)

    def hosts_of(self, role: str) -> list[str]:
        """The roles a per-role knob (offloads) reaches: "client" is every client of a pool."""
        if role in ("client", "server") and self.pooled:
            return [pair[0 if role == "client" else 1] for pair in self.pair_roles()]
        return [role]

    @property
    def namespaces(self) -> list[str]:
        return [self.netns(role) for role in self.roles]

    def side(self, role: str) -> int | None:
        """0: the client side (clients, the LAN switch), 1: the server side, None: the DUT."""
        if role.startswith(("client", SWITCH_ROLES[0])):
            return 0
        return 1 if role.startswith(("server", SWITCH_ROLES[1])) else None

    def cpus(self, role: str) -> tuple[int, ...]:
        """Where a role's processes run: every client on the client side, every server on the other."""
        side = self.side(role)
        return () if side is None else self.cpu_sides[side]

    def rps_masks(self) -> dict[tuple[str, str], str]:
        """(role, ifname) -> the RPS mask each receiving port gets: its side's CPUs, or on the DUT
        the user's `dut_rps` mask."""
        client_side, server_side = (cpu_mask(side) for side in self.cpu_sides)
        masks = {("client", CLIENT_IF): client_side, ("dut", DUT_LAN_IF): client_side,
                 ("dut", DUT_WAN_IF): server_side, ("server", SERVER_IF): server_side}
        if self.pooled:
            for index, (client, server) in enumerate(self.pair_roles()):
                masks[(client, CLIENT_IF)] = masks[(SWITCH_ROLES[0], switch_port(index))] = client_side
                masks[(server, SERVER_IF)] = masks[(SWITCH_ROLES[1], switch_port(index))] = server_side
            masks[(SWITCH_ROLES[0], UPLINK)], masks[(SWITCH_ROLES[1], UPLINK)] = client_side, server_side
        if self.dut_rps_mask is not None:
            masks[("dut", DUT_LAN_IF)] = masks[("dut", DUT_WAN_IF)] = self.dut_rps_mask
        return masks


# --- steps: each is a small frozen record with a human/`ip`-like description -------------------


@dataclass(frozen=True)
class CreateNamespace:
    netns: str

    def describe(self) -> str:
        return f"ip netns add {self.netns}"


@dataclass(frozen=True)
class CreateVeth:
    netns: str
    ifname: str
    peer_netns: str
    peer_ifname: str
    index: int  # fixed ifindexes for both ends, so later steps need no lookups
    peer_index: int

    def describe(self) -> str:
        return (f"ip -n {self.netns} link add {self.ifname} index {self.index} type veth "
                f"peer name {self.peer_ifname} index {self.peer_index} netns {self.peer_netns}")


@dataclass(frozen=True)
class CreateTap:
    """A TAP device whose other end is a VM DUT's NIC (vm/taps.py); the lab keeps its file
    descriptors for qemu."""

    netns: str
    ifname: str
    index: int
    queues: int = 1

    def describe(self) -> str:
        return (f"ip -n {self.netns} tuntap add {self.ifname} mode tap vnet_hdr"
                f"{' multi_queue' if self.queues > 1 else ''}  # index {self.index}, {self.queues} queue(s)")


@dataclass(frozen=True)
class SetLink:
    netns: str
    ifname: str
    mtu: int | None = None
    txqlen: int | None = None

    def describe(self) -> str:
        mtu = f" mtu {self.mtu}" if self.mtu else ""
        txq = f" txqueuelen {self.txqlen}" if self.txqlen else ""
        return f"ip -n {self.netns} link set {self.ifname}{mtu}{txq} up"


@dataclass(frozen=True)
class RunTool:
    """tc or ethtool inside a namespace: their kernel interfaces are theirs to speak."""

    netns: str
    argv: tuple[str, ...]

    def describe(self) -> str:
        return f"ip netns exec {self.netns} {' '.join(self.argv)}"


@dataclass(frozen=True)
class WriteSysfs:
    netns: str
    path: str
    value: str

    def describe(self) -> str:
        return f"ip netns exec {self.netns} sh -c 'echo {self.value} > {self.path}'"


@dataclass(frozen=True)
class AddAddress:
    netns: str
    ifname: str
    address: str
    prefixlen: int

    def describe(self) -> str:
        return f"ip -n {self.netns} addr add {self.address}/{self.prefixlen} dev {self.ifname} nodad"


@dataclass(frozen=True)
class AddDefaultRoute:
    netns: str
    gateway: str
    family: int

    def describe(self) -> str:
        return f"ip -n {self.netns} -{self.family} route add default via {self.gateway}"


@dataclass(frozen=True)
class SetSysctls:
    netns: str
    values: tuple[tuple[str, str], ...]

    def describe(self) -> str:
        pairs = " ".join(shlex.quote(f"{key}={value}") for key, value in self.values)
        return f"ip netns exec {self.netns} sysctl -q -w {pairs}"


@dataclass(frozen=True)
class LoadRuleset:
    netns: str
    ruleset: str

    def describe(self) -> str:
        return f"ip netns exec {self.netns} nft -f - <<< ({self.ruleset.count(chr(10))} lines)"


Step = (CreateNamespace | CreateVeth | CreateTap | SetLink | AddAddress | AddDefaultRoute | SetSysctls | LoadRuleset
        | RunTool | WriteSysfs)


@dataclass(frozen=True)
class Plan:
    spec: LabSpec
    steps: tuple[Step, ...]

    def describe(self) -> str:
        return "\n".join(step.describe() for step in self.steps)


def build_plan(spec: LabSpec) -> Plan:
    """The one-pair lab (a generator pool's is topology/pool.py; topology.lab_plan picks)."""
    if spec.pooled:
        raise ValueError("plan bug: a pooled lab's plan is topology.pool.build_pool_plan")
    client, dut, server = (spec.netns(role) for role in ROLES)
    steps: list[Step] = [CreateNamespace(ns) for ns in (client, dut, server)]
    # DAD would hold IPv6 addresses "tentative" for ~1 s; the lab has no duplicates to detect.
    no_dad = (("net.ipv6.conf.all.accept_dad", "0"), ("net.ipv6.conf.default.accept_dad", "0"))
    forwarding = (("net.ipv4.ip_forward", "1"), ("net.ipv6.conf.all.forwarding", "1"))
    steps += [SetSysctls(client, no_dad + CLIENT_PORTS), SetSysctls(dut, no_dad + forwarding),
              SetSysctls(server, no_dad)]
    steps += [
        CreateVeth(client, CLIENT_IF, dut, DUT_LAN_IF, IFINDEX[CLIENT_IF], IFINDEX[DUT_LAN_IF]),
        CreateVeth(server, SERVER_IF, dut, DUT_WAN_IF, IFINDEX[SERVER_IF], IFINDEX[DUT_WAN_IF]),
    ]
    steps += address_steps(spec, [(client, CLIENT_IF, "client"), (dut, DUT_LAN_IF, "dut_lan"),
                                  (dut, DUT_WAN_IF, "dut_wan"), (server, SERVER_IF, "server")])
    ruleset = render_ruleset(spec.firewall, DUT_LAN_IF, DUT_WAN_IF, spec.iperf_port, spec.http_port)
    if ruleset is not None:
        steps.append(LoadRuleset(dut, ruleset))
    steps += knob_steps(spec)
    return Plan(spec, tuple(steps))


def address_steps(spec: LabSpec, ends: list[tuple[str, str, str]]) -> list[Step]:
    """Addresses and MTU of each (namespace, ifname, ADDR role) end, loopbacks up, and the client's
    and server's default routes through the DUT."""
    steps: list[Step] = []
    for ns, ifname, role in ends:
        for family in (4, 6):
            address, prefixlen = ADDR[(role, family)]
            steps.append(AddAddress(ns, ifname, address, prefixlen))
        steps.append(SetLink(ns, ifname, spec.mtu, spec.txqueuelen))
    steps += [SetLink(spec.netns(role), "lo") for role in ROLES]
    for family in (4, 6):
        steps.append(AddDefaultRoute(spec.netns("client"), ADDR[("dut_lan", family)][0], family))
        steps.append(AddDefaultRoute(spec.netns("server"), ADDR[("dut_wan", family)][0], family))
    return steps


def knob_steps(spec: LabSpec, offload_roles: tuple[str, ...] = ROLES, dut_sysctls: bool = True,
               rps_masks: dict[tuple[str, str], str] | None = None) -> list[Step]:
    """Link shaping, offloads, DUT sysctls and RPS: the per-interface knobs experiments vary, and
    the receive steering that keeps the lab's two sides on their own CPUs (split_cpus). A VM DUT
    (vm/plan.py) takes the offloads of its client and server only, and sets its own sysctls and RPS."""
    steps: list[Step] = []
    dut = spec.netns("dut")
    for ifname in (DUT_WAN_IF, DUT_LAN_IF):  # the DUT's two ports; each shapes what it sends
        steps += [RunTool(dut, tuple(argv)) for argv in qdisc_argvs(spec.link, ifname, spec.mtu)]
    by_interface: dict[tuple[str, str], list[str]] = {}
    for role, ifname, feature, state in spec.offloads:
        if role in offload_roles:
            by_interface.setdefault((role, ifname), []).extend([OFFLOAD_FEATURES[feature][0], state])
    for (role, ifname), args in by_interface.items():
        steps += [RunTool(spec.netns(host), ("ethtool", "-K", ifname, *args)) for host in spec.hosts_of(role)]
    if dut_sysctls and spec.dut_sysctls:
        steps.append(SetSysctls(dut, spec.dut_sysctls))
    for (role, ifname), mask in (spec.rps_masks() if rps_masks is None else rps_masks).items():
        steps.append(WriteSysfs(spec.netns(role), rps_path(ifname), mask))
    return steps


def rps_path(ifname: str) -> str:
    return f"/sys/class/net/{ifname}/queues/rx-0/rps_cpus"
