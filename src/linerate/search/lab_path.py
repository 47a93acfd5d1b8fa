"""The PacketPath of a lab (namespace DUT or VM DUT): the sender in the client namespace sends to the
DUT's client-side MAC, addressed to the server's test port (the one the lab's firewall profiles
pass, as for iperf3); the server namespace counts (search/frame_path.py), and the DUT's
interface counters come from `ip -j -s link`. The counting table lives in a namespace the lab
owns, so removing the lab removes it too."""

from __future__ import annotations

from linerate.counters import parse_link_stats
from linerate.experiment.ceiling import link_bps
from linerate.search.frame_path import FramePath, choose_sender, link_info
from linerate.search.table import lab_description
from linerate.topology.plan import ADDR, CLIENT_IF, DUT_LAN_IF, DUT_WAN_IF, server_address
from linerate.traffic import trafgen


class LabPath(FramePath):
    def __init__(self, lab, family: int, generator: str = "auto"):
        self.lab, self.family, self.device = lab, family, CLIENT_IF
        self.client, self.server, self.dut = lab.executor("client"), lab.executor("server"), lab.executor("dut")
        # the test port: the one the lab's firewall profiles pass (their pass rule names it)
        self.flow = trafgen.FlowSpec(family, link_info(self.client, CLIENT_IF)["address"],
                                     link_info(self.dut, DUT_LAN_IF)["address"], ADDR[("client", family)][0],
                                     server_address(family), dst_port=lab.spec.iperf_port)
        self.sender = choose_sender(self.client, generator)
        self.mtu = getattr(lab.spec, "mtu", 1500)
        params = getattr(lab, "params", None) or {}
        self.link_bps = link_bps(params)
        self.shared_kernel = params.get("dut", "namespace") != "vm"  # a VM DUT forwards on its own vCPUs
        self.description = lab_description(params or {"firewall": str(lab.spec.firewall)})

    def dut_counters(self) -> dict[str, int]:
        out = self.dut.run(["ip", "-j", "-s", "link", "show"], timeout_s=10).stdout
        return parse_link_stats(out, (DUT_LAN_IF, DUT_WAN_IF))
