"""The PacketPath of a lab (namespace DUT or VM DUT): trafgen in the client namespace sends frames
to the DUT's client-side MAC, addressed to the server's test port (the one the lab's firewall
profiles pass, as for iperf3); the server counts them with one nftables
counter (a table of its own, in the server namespace, that counts and drops exactly this flow
before anything answers it), and the DUT's interface counters come from `ip -j -s link`.

The counting table is added on entry and deleted on exit, also after a failure; it lives in a
namespace the lab owns, so removing the lab removes it too.
"""

from __future__ import annotations

import json

from linerate.counters import parse_link_stats
from linerate.errors import ExecError, LabError, ParseError
from linerate.topology.plan import ADDR, CLIENT_IF, DUT_LAN_IF, DUT_WAN_IF, server_address
from linerate.traffic import frames, trafgen

COUNT_TABLE = "linerate_rfc2544"
NOBODY_MAC = "02:00:00:00:00:01"  # locally administered, unused: frames for the generator's ceiling probe


def _mac(executor, ifname: str) -> str:
    out = executor.run(["ip", "-j", "link", "show", "dev", ifname], timeout_s=10).stdout
    try:
        return json.loads(out)[0]["address"]
    except (json.JSONDecodeError, IndexError, KeyError, TypeError):
        raise ParseError(f"ip -j link show {ifname} on {executor.host}: no MAC address in the output") from None


def count_ruleset(family: int, src_ip: str, port: int) -> str:
    match = "ip saddr" if family == 4 else "ip6 saddr"
    return (f"table inet {COUNT_TABLE} {{\n  chain count {{\n    type filter hook prerouting priority raw; policy accept;\n"
            f"    {match} {src_ip} udp dport {int(port)} counter drop\n  }}\n}}\n")


def parse_count(text: str) -> int:
    """`nft -j list table inet linerate_rfc2544` -> the counter's packets."""
    try:
        for item in json.loads(text)["nftables"]:
            for expr in (item.get("rule") or {}).get("expr", []):
                if "counter" in expr:
                    return int(expr["counter"]["packets"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        pass
    raise ParseError("nft -j list table: no counter in the counting table")


class LabPath:
    def __init__(self, lab, family: int):
        self.lab, self.family = lab, family
        self.client, self.server, self.dut = lab.executor("client"), lab.executor("server"), lab.executor("dut")
        src_ip = ADDR[("client", family)][0]
        # the test port: the one the lab's firewall profiles pass (their pass rule names it)
        self.flow = trafgen.FlowSpec(family, _mac(self.client, CLIENT_IF), _mac(self.dut, DUT_LAN_IF), src_ip,
                                     server_address(family), dst_port=lab.spec.iperf_port)
        self.generator = "trafgen " + trafgen.parse_version(self.client.run(trafgen.version_argv(), timeout_s=10,
                                                                            check=False).stdout)
        self.mtu = getattr(lab.spec, "mtu", 1500)

    def __enter__(self) -> "LabPath":
        self.server.run(["nft", "-f", "-"], stdin=count_ruleset(self.family, self.flow.src_ip, self.flow.dst_port),
                        timeout_s=30)
        return self

    def __exit__(self, *exc) -> None:
        self.server.run(["nft", "delete", "table", "inet", COUNT_TABLE], timeout_s=30, check=False)

    def send(self, frame: frames.FrameSize, rate_pps: int | None, count: int, *, to_dut: bool = True) -> trafgen.Sent:
        biggest = frames.largest(frame, self.family)
        if biggest - 18 > self.mtu:
            raise LabError(f"a {biggest}-byte frame does not fit the lab's MTU {self.mtu}; "
                           f"build the lab with --mtu {biggest - 18}")
        flow = self.flow if to_dut else trafgen.FlowSpec(**{**self.flow.__dict__, "dst_mac": NOBODY_MAC})
        argv = trafgen.send_argv(CLIENT_IF, rate_pps, count)
        if biggest > 2048:
            argv.append("--jumbo-support")
        seconds = count / rate_pps if rate_pps else count / 50_000
        result = self.client.run(argv, stdin=trafgen.packet_config(flow, frame), timeout_s=3 * seconds + 30,
                                 check=False)
        try:
            return trafgen.parse(result.stdout + "\n" + result.stderr)
        except ParseError as exc:
            raise ExecError(tuple(argv), self.client.host, result.returncode, str(exc)) from None

    def forwarded(self) -> int:
        return parse_count(self.server.run(["nft", "-j", "list", "table", "inet", COUNT_TABLE], timeout_s=10).stdout)

    def dut_counters(self) -> dict[str, int]:
        out = self.dut.run(["ip", "-j", "-s", "link", "show"], timeout_s=10).stdout
        return parse_link_stats(out, (DUT_LAN_IF, DUT_WAN_IF))
