"""What every PacketPath with trafgen shares (search/measurer.py's protocol): trafgen on the client
sends frames to the next hop's MAC (the DUT's client-side port), addressed to the server's test
port; the server counts them with one nftables counter in a table of its own that counts and drops
exactly this flow before anything answers it (prerouting, raw priority). Subclasses find the
hosts, interfaces and addresses (a namespace lab: search/lab_path.py; an SSH testbed:
search/testbed_path.py) and read the DUT's counters.

The counting table is added on entry and deleted on exit, also after a failure.
"""

from __future__ import annotations

import json

from linerate.errors import ExecError, LabError, ParseError
from linerate.traffic import frames, trafgen

COUNT_TABLE = "linerate_rfc2544"
NOBODY_MAC = "02:00:00:00:00:01"  # locally administered, unused: frames for the generator's ceiling probe
L2_OVERHEAD = 18  # MAC header + FCS: a frame of N bytes carries an (N - 18)-byte IP packet


def link_info(executor, ifname: str) -> dict:
    """`ip -j link show dev IF` of a host: its "address" (MAC), "mtu", ..."""
    out = executor.run(["ip", "-j", "link", "show", "dev", ifname], timeout_s=10).stdout
    try:
        info = json.loads(out)[0]
    except (json.JSONDecodeError, IndexError, KeyError, TypeError):
        info = None
    if not isinstance(info, dict) or "address" not in info or "mtu" not in info:
        raise ParseError(f"ip -j link show {ifname} on {executor.host}: no MAC address and MTU in the output")
    return info


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


class TrafgenPath:
    """Set by subclasses: client, server (executors), device (the client's egress interface),
    flow (trafgen.FlowSpec), mtu (of that interface), family, link_bps (None: unknown) and
    shared_kernel (the DUT forwards on the sender's CPUs: the namespace lab)."""

    client: object
    server: object
    device: str
    flow: trafgen.FlowSpec
    mtu: int
    family: int
    link_bps: float | None = None
    shared_kernel: bool = False
    description: str = ""  # for the table's heading: the lab, or the testbed and its line rate
    generator: str = "trafgen"

    def _read_generator(self) -> str:
        result = self.client.run(trafgen.version_argv(), timeout_s=10, check=False)
        return "trafgen " + trafgen.parse_version(result.stdout + result.stderr)

    def __enter__(self):
        # `create` fails when the table exists: another run counting on this server, never merged into
        created = self.server.run(["nft", "create", "table", "inet", COUNT_TABLE], timeout_s=30, check=False)
        if created.returncode != 0:
            raise LabError(f"cannot create the counting table inet {COUNT_TABLE} on {self.server.host} "
                           f"({(created.stderr.strip() or 'nft failed')[:160]}): another linerate search may be "
                           "counting there, or nftables is missing")
        try:
            self.server.run(["nft", "-f", "-"], stdin=count_ruleset(self.family, self.flow.src_ip, self.flow.dst_port),
                            timeout_s=30)
        except BaseException:
            self.drop_table()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.drop_table()

    def drop_table(self) -> bool:
        return self.server.run(["nft", "delete", "table", "inet", COUNT_TABLE], timeout_s=30, check=False).returncode == 0

    def send(self, frame: frames.FrameSize, rate_pps: int | None, count: int, *, to_dut: bool = True) -> trafgen.Sent:
        biggest = frames.largest(frame, self.family)
        if biggest - L2_OVERHEAD > self.mtu:
            raise LabError(f"a {biggest}-byte frame does not fit the MTU {self.mtu} of {self.device} on "
                           f"{self.client.host}; raise it to {biggest - L2_OVERHEAD} (a lab: --mtu)")
        flow = self.flow if to_dut else trafgen.FlowSpec(**{**self.flow.__dict__, "dst_mac": NOBODY_MAC})
        argv = trafgen.send_argv(self.device, rate_pps, count)
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
        raise NotImplementedError
