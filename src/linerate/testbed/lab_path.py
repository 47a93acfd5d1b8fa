"""The PacketPath of a namespace or VM testbed (rfc2544): the sender in the client namespace sends
to the DUT's client-side MAC, addressed to the server's test port (the one the lab's firewall
profiles pass, as for iperf3); the server namespace counts (search/frame_path.py), the DUT's
interface counters come from its driver (Testbed.dut_counters). The counting table lives in a
namespace the lab owns, so removing the lab removes it too."""

from __future__ import annotations

from typing import Any

from linerate.search.frame_path import FramePath, choose_sender, link_info
from linerate.topology.plan import ADDR, CLIENT_IF, DUT_LAN_IF, server_address
from linerate.traffic import trafgen


def lab_description(lab_params: dict) -> str:
    link = lab_params.get("link_rate", "none")
    return (f"{'emulated ' + str(link) + ' link' if link != 'none' else 'no emulated link (theoretical rate unknown)'}, "
            f"firewall {lab_params.get('firewall', 'none')}")


class LabPath(FramePath):
    def __init__(self, testbed: Any, family: int, generator: str = "auto"):
        self.testbed, self.family, self.device = testbed, family, CLIENT_IF
        self.client, self.server = testbed.executor("client"), testbed.executor("server")
        # the test port: the one the lab's firewall profiles pass (their pass rule names it)
        self.flow = trafgen.FlowSpec(family, link_info(self.client, CLIENT_IF)["address"],
                                     link_info(testbed.executor("dut"), DUT_LAN_IF)["address"],
                                     ADDR[("client", family)][0], server_address(family),
                                     dst_port=testbed.spec.iperf_port)
        self.sender = choose_sender(self.client, generator)
        self.mtu = testbed.mtu
        rate = testbed.line_rate
        self.link_bps = rate["bps"] if rate else None
        self.shared_kernel = testbed.shared_kernel
        self.description = testbed.description

    def dut_counters(self) -> dict[str, int]:
        return self.testbed.dut_counters()
