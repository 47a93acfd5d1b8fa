"""A VM DUT lab as steps: the host side (namespaces, veths, taps, bridges, shaping) as a Plan like
the namespace lab's, and the guest side as fixed commands sent through the agent.

    client [eth0] --veth-- [lan0 + tap-lan: br-lan] ==virtio== guest ==virtio== [br-wan: tap-wan + wan0] --veth-- [eth0] server
                          '---------- the lab's dut namespace: the wire ----------'

The dut namespace holds no IP stack of its own any more: each side is a bridge of a veth end and
the tap of one guest NIC. The emulated link shapes lan0/wan0's egress there, as the namespace lab
shapes its DUT ports — so the shaper sits *after* the guest: shaping before it (on the tap) would
cut the client's GSO super-frames into MTU frames before they reach the guest and take away the
very offload a virtio DUT is measured with (seen here: 339 instead of ~1,500 Mbit/s through one
TCG vCPU). The `offloads` axis: client/server set the veths as in the namespace lab, dut_in /
dut_out / dut the guest's lan0/wan0; `virtio_offloads` sets the virtio devices between (qemu
passes them on to the taps with TUNSETOFFLOAD).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, replace

from linerate.topology.firewall import render_ruleset
from linerate.topology.link import OFFLOAD_FEATURES
from linerate.topology.plan import (ADDR, CLIENT_IF, CLIENT_PORTS, DUT_LAN_IF, DUT_WAN_IF, IFINDEX, SERVER_IF, AddAddress,
                                    CreateNamespace, CreateTap, CreateVeth, LabSpec, LoadRuleset, Plan, RunTool, SetLink,
                                    SetSysctls, Step, WriteSysfs, address_steps, knob_steps)
from linerate.vm.qemu import parse_virtio_offloads

DUT_OSES = ("linux", "openwrt", "opnsense", "pfsense", "freebsd", "openbsd")


@dataclass(frozen=True)
class VmOptions:
    vcpus: int = 1
    memory_mb: int = 256
    accel: str = "auto"  # auto | kvm | tcg
    queues: int = 1
    vhost: bool = False
    virtio_text: str = "on"  # the virtio_offloads value as written
    image: str = ""  # a bring-your-own disk image; "" = the built-in guest
    os: str = "linux"
    ssh_key: str = ""  # an own image's login: vm/image_access.py
    host_keys: str = ""
    ssh_user: str = "root"
    boot_timeout_s: float = 0

    @property
    def virtio(self) -> dict[str, str]:
        """The virtio-net device properties virtio_text asks for."""
        return parse_virtio_offloads(self.virtio_text)


def vm_options(params: dict) -> VmOptions:
    return VmOptions(vcpus=params["dut_vcpus"], memory_mb=params["dut_memory_mb"], accel=params["dut_accel"],
                     queues=params["virtio_queues"], vhost=params["vhost"] == "on",
                     virtio_text=params["virtio_offloads"],
                     image=params["dut_image"], os=params["dut_os"], ssh_key=params["dut_ssh_key"],
                     host_keys=params["dut_host_keys"], ssh_user=params["dut_ssh_user"],
                     boot_timeout_s=params["dut_boot_timeout"])


TAPS = {DUT_LAN_IF: ("tap-lan", "br-lan", 20), DUT_WAN_IF: ("tap-wan", "br-wan", 21)}  # port: tap, bridge, index


def build_vm_plan(spec: LabSpec, queues: int) -> Plan:
    client, dut, server = (spec.netns(role) for role in ("client", "dut", "server"))
    no_dad = (("net.ipv6.conf.all.accept_dad", "0"), ("net.ipv6.conf.default.accept_dad", "0"))
    no_ipv6 = (("net.ipv6.conf.all.disable_ipv6", "1"), ("net.ipv6.conf.default.disable_ipv6", "1"))
    steps: list[Step] = [CreateNamespace(ns) for ns in (client, dut, server)]
    steps += [SetSysctls(client, no_dad + CLIENT_PORTS), SetSysctls(dut, no_ipv6), SetSysctls(server, no_dad)]
    steps += [CreateVeth(client, CLIENT_IF, dut, DUT_LAN_IF, IFINDEX[CLIENT_IF], IFINDEX[DUT_LAN_IF]),
              CreateVeth(server, SERVER_IF, dut, DUT_WAN_IF, IFINDEX[SERVER_IF], IFINDEX[DUT_WAN_IF])]
    steps += [CreateTap(dut, tap, index, queues) for tap, _, index in TAPS.values()]
    steps += address_steps(spec, [(client, CLIENT_IF, "client"), (server, SERVER_IF, "server")])
    for port, (tap, bridge, _) in TAPS.items():
        steps += [SetLink(dut, port, spec.mtu, spec.txqueuelen), SetLink(dut, tap, spec.mtu),
                  RunTool(dut, ("ip", "link", "add", bridge, "mtu", str(spec.mtu), "type", "bridge")),
                  RunTool(dut, ("ip", "link", "set", port, "master", bridge)),
                  RunTool(dut, ("ip", "link", "set", tap, "master", bridge)),
                  RunTool(dut, ("ip", "link", "set", bridge, "up"))]
    steps += knob_steps(spec, offload_roles=("client", "server"), dut_sysctls=False, rps_masks=host_rps_masks(spec))
    return Plan(spec, tuple(steps))


def host_rps_masks(spec: LabSpec) -> dict[tuple[str, str], str]:
    """The veths' receive work stays on their side's CPUs, as in the namespace lab; `dut_rps` is
    the guest's (guest_commands)."""
    return replace(spec, dut_rps_mask=None).rps_masks()


def guest_commands(spec: LabSpec, lan: str = DUT_LAN_IF, wan: str = DUT_WAN_IF,
                   dut_offloads: tuple[tuple[str, str, str], ...] = ()) -> list[tuple[list[str], str | None]]:
    """(argv, stdin) run in a Linux guest, in order: addresses, forwarding, MTU, the ruleset, the
    guest-side offloads, DUT sysctls and RPS masks. `lan`/`wan`: the guest's names of its LAN and
    WAN NICs (the built-in guest's lan0/wan0; an own image's, found by MAC); `dut_offloads`:
    (interface, feature, state) by the guest's own interface names."""
    commands: list[tuple[list[str], str | None]] = []
    sysctls = ["net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv6.conf.all.accept_dad=0",
               "net.ipv6.conf.default.accept_dad=0", f"net.ipv6.conf.{lan}.accept_dad=0",
               f"net.ipv6.conf.{wan}.accept_dad=0"]
    commands.append((["sysctl", "-q", "-w", *sysctls], None))
    for ifname, role in ((lan, "dut_lan"), (wan, "dut_wan")):
        for family in (4, 6):
            address, prefixlen = ADDR[(role, family)]
            nodad = ["nodad"] if family == 6 else []
            commands.append((["ip", "addr", "add", f"{address}/{prefixlen}", "dev", ifname, *nodad], None))
        link = ["ip", "link", "set", ifname, "mtu", str(spec.mtu)]
        commands.append((link + (["txqueuelen", str(spec.txqueuelen)] if spec.txqueuelen else []) + ["up"], None))
    ruleset = render_ruleset(spec.firewall, lan, wan, spec.iperf_port, spec.http_port)
    if ruleset is not None:
        commands.append((["nft", "-f", "-"], ruleset))
    by_interface: dict[str, list[str]] = {}
    for role, ifname, feature, state in spec.offloads:
        if role == "dut":
            by_interface.setdefault({DUT_LAN_IF: lan, DUT_WAN_IF: wan}[ifname], []).extend(
                [OFFLOAD_FEATURES[feature][0], state])
    for ifname, feature, state in dut_offloads:
        by_interface.setdefault(ifname, []).extend([OFFLOAD_FEATURES[feature][0], state])
    commands += [(["ethtool", "-K", ifname, *args], None) for ifname, args in by_interface.items()]
    if spec.dut_sysctls:
        commands.append((["sysctl", "-q", "-w", *(f"{k}={v}" for k, v in spec.dut_sysctls)], None))
    if spec.dut_rps_mask is not None:
        for ifname in (lan, wan):
            commands.append((["sh", "-c", 'for q in "$1"/queues/rx-*; do echo "$2" > "$q/rps_cpus"; done', "rps",
                              f"/sys/class/net/{ifname}", spec.dut_rps_mask], None))
    return commands


GUEST = "guest"  # where guest_plan's steps run: the guest, read through its own executor (lab/conform.py)


def guest_plan(spec: LabSpec, lan: str = DUT_LAN_IF, wan: str = DUT_WAN_IF,
               dut_offloads: tuple[tuple[str, str, str], ...] = (), rx_queues: int = 1) -> Plan:
    """guest_commands as the plan steps they leave a trace of, for a kept lab's read-back (lab/conform.py):
    every sysctl, each NIC's addresses (and so the routes through it: lab/routing.py), MTU and queue length,
    the ruleset, the offloads set with ethtool and the RPS mask of each of its `rx_queues` receive queues."""
    steps: list[Step] = []
    for argv, stdin in guest_commands(spec, lan, wan, dut_offloads):
        if argv[:3] == ["sysctl", "-q", "-w"]:
            steps.append(SetSysctls(GUEST, tuple(tuple(pair.split("=", 1)) for pair in argv[3:])))
        elif argv[:3] == ["ip", "addr", "add"]:
            interface = ipaddress.ip_interface(argv[3])
            steps.append(AddAddress(GUEST, argv[5], str(interface.ip), interface.network.prefixlen))
        elif argv[:3] == ["ip", "link", "set"]:
            txqlen = int(argv[argv.index("txqueuelen") + 1]) if "txqueuelen" in argv else None
            steps.append(SetLink(GUEST, argv[3], int(argv[argv.index("mtu") + 1]), txqlen))
        elif argv[:2] == ["nft", "-f"]:
            steps.append(LoadRuleset(GUEST, stdin or ""))
        elif argv[:2] == ["ethtool", "-K"]:
            steps.append(RunTool(GUEST, tuple(argv)))
    if spec.dut_rps_mask is not None:
        steps += [WriteSysfs(GUEST, f"/sys/class/net/{ifname}/queues/rx-{queue}/rps_cpus", spec.dut_rps_mask)
                  for ifname in (lan, wan) for queue in range(rx_queues)]
    return Plan(spec, tuple(steps))
