"""A namespace lab with a generator pool: N client and N server namespaces, each pair with its own
addresses, joined to the DUT's two ports by a switch on each side (a Linux bridge in a namespace of
its own), so the DUT is exactly the one-pair lab's: lan0 and wan0, the same addresses, ruleset and
shaping.

    client  [eth0]-[p1]                                  [p1]-[eth0] server
    client2 [eth0]-[p2] lansw [uplink]-[lan0] DUT [wan0]-[uplink] wansw [p2]-[eth0] server2
    ...                                                  ...

Pair N (1-based) has 198.18.0.(N+1) and 2001:2:0:1::(N+1) on its client, 198.19.0.(N+1) and
2001:2:0:2::(N+1) on its server (RFC 2544's and RFC 5180's benchmarking ranges); pair 1 keeps the
one-pair lab's addresses and namespace names. `pair_link` shapes each pair's access link at both
ends (the host's eth0 and the switch port toward it) with the same exact framing as the DUT's link
(topology/link.py qdisc_argvs); `link` stays the DUT's two ports. Every client runs on the client
side's CPUs, every server on the server side's (plan.split_cpus), and so does each switch's receive work.
"""

from __future__ import annotations

import ipaddress

from linerate.model import SWITCH_ROLES
from linerate.topology.firewall import render_ruleset
from linerate.topology.link import qdisc_argvs
from linerate.traffic.trafgen import NOBODY_MAC
from linerate.topology.plan import (ADDR, CLIENT_IF, CLIENT_PORTS, DUT_LAN_IF, DUT_WAN_IF, IFINDEX, SERVER_IF, UPLINK,
                                    AddAddress, AddDefaultRoute, CreateNamespace, CreateVeth, LabSpec, LoadRuleset,
                                    Plan, RunTool, SetLink, SetSysctls, Step, knob_steps, switch_port)

BRIDGE = "br0"
# A switch forgets a MAC this long after its last frame (centiseconds): rfc2544 sends one way for minutes, and
# a switch that forgot the DUT's MAC (300 s by default) would copy every frame to every client
AGEING_CS = 8_640_000
UPLINK_INDEX = 30  # in a switch namespace: the uplink, then p1, p2 ... at 31, 32 ...
NO_DAD = (("net.ipv6.conf.all.accept_dad", "0"), ("net.ipv6.conf.default.accept_dad", "0"))
NO_IPV6 = (("net.ipv6.conf.all.disable_ipv6", "1"), ("net.ipv6.conf.default.disable_ipv6", "1"))


def pair_address(side: str, family: int, index: int) -> tuple[str, int]:
    """(address, prefix length) of pair `index`'s (0-based) client or server: pair 0's is the one-pair lab's."""
    address, prefixlen = ADDR[(side, family)]
    return str(ipaddress.ip_address(address) + index), prefixlen


def build_pool_plan(spec: LabSpec) -> Plan:
    lansw, dut, wansw = (spec.netns(role) for role in (*SWITCH_ROLES[:1], "dut", *SWITCH_ROLES[1:]))
    pairs = spec.pair_roles()
    steps: list[Step] = [CreateNamespace(spec.netns(role)) for role in spec.roles]
    forwarding = (("net.ipv4.ip_forward", "1"), ("net.ipv6.conf.all.forwarding", "1"))
    steps += [SetSysctls(spec.netns(client), NO_DAD + CLIENT_PORTS) for client, _ in pairs]
    steps += [SetSysctls(spec.netns(server), NO_DAD) for _, server in pairs]
    steps += [SetSysctls(dut, NO_DAD + forwarding), SetSysctls(lansw, NO_IPV6), SetSysctls(wansw, NO_IPV6)]
    steps += [CreateVeth(lansw, UPLINK, dut, DUT_LAN_IF, UPLINK_INDEX, IFINDEX[DUT_LAN_IF]),
              CreateVeth(wansw, UPLINK, dut, DUT_WAN_IF, UPLINK_INDEX, IFINDEX[DUT_WAN_IF])]
    for index, (client, server) in enumerate(pairs):
        port, port_index = switch_port(index), UPLINK_INDEX + 1 + index
        # made from the switch's side: a namespace's netlink batch goes out whole, in order of first use
        # (lab/apply.py), so every veth exists before the switch sets its ports and the hosts their addresses
        steps += [CreateVeth(lansw, port, spec.netns(client), CLIENT_IF, port_index, IFINDEX[CLIENT_IF]),
                  CreateVeth(wansw, port, spec.netns(server), SERVER_IF, port_index, IFINDEX[SERVER_IF])]
    for ifname, role in ((DUT_LAN_IF, "dut_lan"), (DUT_WAN_IF, "dut_wan")):
        steps += [AddAddress(dut, ifname, *ADDR[(role, family)]) for family in (4, 6)]
        steps.append(SetLink(dut, ifname, spec.mtu, spec.txqueuelen))
    for index, (client, server) in enumerate(pairs):
        for role, side, ifname, gateway in ((client, "client", CLIENT_IF, "dut_lan"),
                                            (server, "server", SERVER_IF, "dut_wan")):
            ns = spec.netns(role)
            steps += [AddAddress(ns, ifname, *pair_address(side, family, index)) for family in (4, 6)]
            steps += [SetLink(ns, ifname, spec.mtu, spec.txqueuelen), SetLink(ns, "lo")]
            steps += [AddDefaultRoute(ns, ADDR[(gateway, family)][0], family) for family in (4, 6)]
    steps.append(SetLink(dut, "lo"))
    for switch in (lansw, wansw):
        ports = [UPLINK, *(switch_port(index) for index in range(len(pairs)))]
        steps += [SetLink(switch, port, spec.mtu) for port in ports]
        steps.append(RunTool(switch, ("ip", "link", "add", BRIDGE, "mtu", str(spec.mtu), "type", "bridge",
                                      "ageing_time", str(AGEING_CS))))
        steps += [RunTool(switch, ("ip", "link", "set", port, "master", BRIDGE)) for port in ports]
        steps.append(RunTool(switch, ("ip", "link", "set", BRIDGE, "up")))
    # the generator-ceiling probe's frames (to a MAC nobody has) go to the DUT only, as in the one-pair lab
    steps.append(RunTool(lansw, ("bridge", "fdb", "add", NOBODY_MAC, "dev", UPLINK, "master", "static")))
    ruleset = render_ruleset(spec.firewall, DUT_LAN_IF, DUT_WAN_IF, spec.iperf_port, spec.http_port)
    if ruleset is not None:
        steps.append(LoadRuleset(dut, ruleset))
    steps += knob_steps(spec) + pair_link_steps(spec)
    return Plan(spec, tuple(steps))


def pair_link_steps(spec: LabSpec) -> list[Step]:
    """Each pair's access link, shaped at both ends: what its client and server send, and what the
    switches send toward them."""
    if spec.pair_link is None:
        return []
    steps: list[Step] = []
    for index, (client, server) in enumerate(spec.pair_roles()):
        for role, ifname, switch in ((client, CLIENT_IF, SWITCH_ROLES[0]), (server, SERVER_IF, SWITCH_ROLES[1])):
            for ns, dev in ((spec.netns(role), ifname), (spec.netns(switch), switch_port(index))):
                steps += [RunTool(ns, tuple(argv)) for argv in qdisc_argvs(spec.pair_link, dev, spec.mtu)]
    return steps
