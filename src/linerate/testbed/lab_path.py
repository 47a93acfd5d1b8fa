"""The PacketPath of a namespace or VM testbed (rfc2544): the sender in the client namespace sends
to the DUT's client-side MAC, addressed to the server's test port (the one the lab's firewall
profiles pass, as for iperf3); the server namespace counts (search/frame_path.py), the DUT's
interface counters come from its driver (Testbed.dut_counters). The counting table lives in a
namespace the lab owns, so removing the lab removes it too. LabStatePath: rfc9693's two-phase
path (search/state_path.py) through the same testbed."""

from __future__ import annotations

from typing import Any

from linerate.search.frame_path import FramePath, choose_sender, link_info
from linerate.search.state_path import StatePath
from linerate.topology.plan import ADDR, CLIENT_IF, DUT_LAN_IF, DUT_WAN_IF, SERVER_IF, server_address
from linerate.traffic import trafgen, tuples


def lab_description(lab_params: dict) -> str:
    link = lab_params.get("link_rate", "none")
    pairs, pair_link = lab_params.get("pairs", 1), lab_params.get("pair_link_rate", "none")
    pool = "" if pairs == 1 and pair_link == "none" else (
        f", {pairs} client/server pair{'s' if pairs > 1 else ''}" + (f" on {pair_link} links" if pair_link != "none"
                                                                     else ""))
    return (f"{'emulated ' + str(link) + ' link' if link != 'none' else 'no emulated link (theoretical rate unknown)'}"
            f"{pool}, firewall {lab_params.get('firewall', 'none')}")


class LabPath(FramePath):
    def __init__(self, testbed: Any, family: int, generator: str = "auto"):
        self.testbed, self.family, self.device = testbed, family, CLIENT_IF
        self.client, self.server = testbed.executor("client"), testbed.executor("server")
        # the test port: the one the lab's firewall profiles pass (their pass rule names it)
        self.flow = trafgen.FlowSpec(family, link_info(self.client, CLIENT_IF)["address"],
                                     link_info(testbed.executor("dut"), testbed.dut_ifname(DUT_LAN_IF))["address"],
                                     ADDR[("client", family)][0], server_address(family),
                                     dst_port=testbed.spec.iperf_port)
        self.sender = choose_sender(self.client, generator)
        self.mtu = testbed.mtu
        rate = testbed.line_rate
        self.link_bps = rate["bps"] if rate else None
        self.shared_kernel = testbed.shared_kernel
        # Spaced frames (trafgen.py: a bucket on the client namespace's own interface, which goes with
        # the lab) where the DUT has queues of its own to overflow: the VM. A namespace DUT forwards
        # each frame on the sender's CPU within the send (veth -> backlog -> softirq), so a burst
        # cannot outrun it, and a bucket only takes CPU from it: 64-byte NDR 178,199 frames/s sent
        # in bursts, 153,167 through a bucket, one run each here (README "Packet rate").
        self.paced = not testbed.shared_kernel
        self.description = testbed.description

    def dut_counters(self) -> dict[str, int]:
        return self.testbed.dut_counters()


class LabStatePath(StatePath):
    """rfc9693's path through a namespace or VM testbed: phase 1 from the client namespace to the DUT's
    client-side MAC, phase 2 from the server namespace to the DUT's server-side MAC; the DUT's
    states cleared and read through its driver (the namespace DUT: this kernel's conntrack in the
    DUT namespace; the VM: the guest's, through its agent)."""

    def __init__(self, testbed: Any, family: int):
        self.testbed, self.family = testbed, family
        self.client, self.server = testbed.executor("client"), testbed.executor("server")
        dut = testbed.executor("dut")
        self.client_device, self.server_device = CLIENT_IF, SERVER_IF
        self.forward = tuples.TupleFlow(family, link_info(self.client, CLIENT_IF)["address"],
                                        link_info(dut, testbed.dut_ifname(DUT_LAN_IF))["address"], ADDR[("client", family)][0],
                                        server_address(family), testbed.spec.iperf_port)
        self.reverse = self.forward.reversed_by(link_info(self.server, SERVER_IF)["address"],
                                                link_info(dut, testbed.dut_ifname(DUT_WAN_IF))["address"])
        rate = testbed.line_rate
        self.link_bps = rate["bps"] if rate else None
        self.shared_kernel = testbed.shared_kernel
        self.description = testbed.description

    def clear_states(self) -> int | None:
        return self.testbed.driver.clear_states(self.testbed.executor("dut"), self.family, self.forward.src_ip,
                                                self.forward.dst_ip)

    def state_counters(self) -> dict[str, int]:
        return self.testbed.state_counters()

    def state_timeouts(self) -> dict[str, int]:
        return self.testbed.state_timeouts()

    def dut_counters(self) -> dict[str, int]:
        return self.testbed.dut_counters()
