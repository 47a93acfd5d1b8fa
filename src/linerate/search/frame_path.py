"""What every PacketPath shares (search/measurer.py's protocol): a sender on the client — trafgen
(traffic/trafgen.py: frames to the next hop's MAC, the DUT's client-side port) or, where trafgen is
missing, iperf3 UDP (traffic/iperf3_udp.py) — addressed to the server's test port; the server
counts them with one nftables counter in a table of its own, in prerouting at raw priority, before
anything answers: trafgen's frames are then dropped (nothing listens for them), iperf3's accepted
(its server must get them). Subclasses find the hosts, interfaces and addresses (a namespace lab:
testbed/lab_path.py; an SSH testbed: testbed/ssh_path.py) and read the DUT's counters.

The counting table is added on entry and deleted on exit, also after a failure.
"""

from __future__ import annotations

import json

from linerate.errors import ConfigError, LabError, LinerateError, ParseError
from linerate.lab.signals import terminations_deferred
from linerate.preflight import parse_iperf3_version
from linerate.search.measurer import SentBy
from linerate.traffic import frames, iperf3_udp, trafgen
from linerate.traffic.base import GENERATORS, FrameSender
from linerate.traffic.iperf3_udp import Iperf3UdpSender

COUNT_TABLE = "linerate_rfc2544"
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


def count_ruleset(family: int, src_ip: str, port: int, verdict: str = "drop", *, table: str = COUNT_TABLE,
                  direction: str = "to") -> str:
    """verdict "drop" (trafgen): every datagram of the flow, down to an empty one (a 66-byte IPv6
    frame carries no payload). "accept" (iperf3): only UDP length >= 24 — its datagrams carry 16
    bytes or more, its 4-byte connect datagram (UDP length 12) is not a test frame. direction "to":
    datagrams to the port (at the server); "from": from it (rfc9693's replies, at the client)."""
    if verdict not in ("drop", "accept") or direction not in ("to", "from"):
        raise ValueError(verdict, direction)
    match = "ip saddr" if family == 4 else "ip6 saddr"
    length = "udp length >= 24 " if verdict == "accept" else ""
    port_match = "udp dport" if direction == "to" else "udp sport"
    return (f"table inet {table} {{\n  chain count {{\n    type filter hook prerouting priority raw; policy accept;\n"
            f"    {match} {src_ip} {port_match} {int(port)} {length}counter {verdict}\n  }}\n}}\n")


def create_count_table(host, table: str, test: str) -> None:
    """`nft create table`: it fails when the table exists — another run counting on this host,
    never merged into. LabError naming the host and why."""
    created = host.run(["nft", "create", "table", "inet", table], timeout_s=30, check=False)
    if created.returncode != 0:
        raise LabError(f"cannot create the counting table inet {table} on {host.host} "
                       f"({(created.stderr.strip() or 'nft failed')[:160]}): another linerate {test} run may be "
                       "counting there, or nftables is missing")


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


def check_frame_for(frame: frames.FrameSize, family: int, generator: str, field: str = "--frame-sizes") -> None:
    """Before any host is contacted: a frame the family takes and, when iperf3 is asked for, one it
    can make (with "auto" the sender is known only on the client: FramePath.check)."""
    trafgen.check_frame_size(frame, family, field)
    if generator == "iperf3":
        iperf3_udp.check_frame(frame, family, field)


def choose_sender(client, generator: str = "auto"):
    """The client's sender: trafgen when asked or, with "auto", when the client has it; else iperf3 UDP."""
    if generator not in GENERATORS:
        raise ConfigError("--generator", f"{generator!r} is not a packet generator; use {', '.join(GENERATORS)}")
    if generator != "iperf3":
        result = client.run(trafgen.version_argv(), timeout_s=10, check=False)  # trafgen 0.6.8 exits 1 here
        version = trafgen.parse_version(result.stdout + result.stderr)
        if version != "unknown":
            return trafgen.TrafgenSender(version)
        if generator == "trafgen":
            raise LinerateError(f"trafgen is not installed on the client {client.host}: install netsniff-ng there, "
                                "or use --generator iperf3")
    result = client.run(["iperf3", "--version"], timeout_s=10, check=False)
    version = parse_iperf3_version(result.stdout + result.stderr) if result.returncode == 0 else None
    if version is None:
        raise LinerateError(f"neither trafgen nor iperf3 runs on the client {client.host}: install netsniff-ng")
    return Iperf3UdpSender(".".join(map(str, version)))


class _NotingArgv:
    """The client's executor as a sender sees it, noting the argv of every command run through it:
    the sender's command line is then stored with the trial (the last one run: the send)."""

    def __init__(self, executor):
        self.executor = executor
        self.host = executor.host
        self.argvs: list[tuple[str, ...]] = []

    def run(self, argv, **kwargs):
        self.argvs.append(tuple(str(a) for a in argv))
        return self.executor.run(argv, **kwargs)

    def run_many(self, argvs, **kwargs):
        self.argvs.extend(tuple(str(a) for a in argv) for argv in argvs)
        return self.executor.run_many(argvs, **kwargs)

    def spawn(self, argv, **kwargs):
        self.argvs.append(tuple(str(a) for a in argv))
        return self.executor.spawn(argv, **kwargs)


class FramePath:
    """Set by subclasses: client, server (executors), device (the client's egress interface),
    flow (trafgen.FlowSpec), mtu (of that interface), family, sender (choose_sender), link_bps
    (None: unknown) and shared_kernel (the DUT forwards on the sender's CPUs: the namespace lab)."""

    client: object
    server: object
    device: str
    flow: trafgen.FlowSpec
    mtu: int
    family: int
    sender: FrameSender
    link_bps: float | None = None
    shared_kernel: bool = False
    paced: bool = False  # the sender may pace through a qdisc on its own interface (the lab's namespaces)
    own_qdisc: tuple[tuple[str, ...], ...] = ()  # tc argv giving that interface back its qdiscs after pacing
    description: str = ""  # for the table's heading: the lab, or the testbed and its line rate

    @property
    def generator(self) -> str:
        return self.sender.name

    def check(self, frame: frames.FrameSize) -> None:
        """ConfigError when the sender cannot make this frame (IMIX or 64-81 B IPv6 with iperf3)."""
        self.sender.check(frame, self.family)

    def default_frame_sizes(self) -> list[int]:
        return trafgen.default_frame_sizes(self.family, self.sender.min_frame(self.family))

    table_left = False  # the table was made and could not be dropped again (a journal keeps it: ssh_path.py)

    def __enter__(self):
        made = False
        try:
            with terminations_deferred():  # made and known together: a signal meanwhile waits, then drops it below
                create_count_table(self.server, COUNT_TABLE, "rfc2544")  # LabError: another run's table is there
                made = True
            self.server.run(["nft", "-f", "-"], timeout_s=30, stdin=count_ruleset(
                self.family, self.flow.src_ip, self.flow.dst_port, self.sender.count_verdict))
        except BaseException:
            if made and not self.drop_table():
                self.table_left = True
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.drop_table()

    def drop_table(self) -> bool:
        with terminations_deferred():  # a signal meanwhile waits until the table is gone
            return self.server.run(["nft", "delete", "table", "inet", COUNT_TABLE], timeout_s=30,
                                   check=False).returncode == 0

    def send(self, frame: frames.FrameSize, rate_pps: int | None, count: int, *, to_dut: bool = True) -> SentBy:
        biggest = frames.largest(frame, self.family)
        if biggest - L2_OVERHEAD > self.mtu:
            raise LabError(f"a {biggest}-byte frame does not fit the MTU {self.mtu} of {self.device} on "
                           f"{self.client.host}; raise it to {biggest - L2_OVERHEAD} (a lab: --mtu)")
        client = _NotingArgv(self.client)
        sent = self.sender.send(client, self.device, self.flow, frame, rate_pps, count, to_dut=to_dut,
                                pace=self.paced, qdisc=self.own_qdisc)
        sender_argv = next((argv for argv in reversed(client.argvs) if argv[:1] != ("tc",)), ())
        return SentBy(sent.packets, sent.bytes, sent.cpu_s, sender_argv)

    def forwarded(self) -> int:
        return parse_count(self.server.run(["nft", "-j", "list", "table", "inet", COUNT_TABLE], timeout_s=10).stdout)

    def dut_counters(self) -> dict[str, int]:
        raise NotImplementedError
