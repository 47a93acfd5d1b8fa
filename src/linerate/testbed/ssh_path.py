"""The PacketPath of an SSH testbed: rfc2544 on real hosts. trafgen on the client sends out of the
interface its route to the server's test address uses, to the MAC of that route's gateway (the
DUT), from the route's source address; the server counts with nftables (search/frame_path.py);
the DUT's counters come from its driver (Linux, FreeBSD, OpenBSD), as for throughput trials.

Both ends must run Linux (trafgen writes to a packet socket; the count is an nftables counter).
The server's counting table is journaled (testbed/journal.py) before it is created, like a DUT knob, so
a run killed mid-search has it removed by the next run or by `linerate testbed restore`. The
cell's DUT knobs are applied (journaled) before its searches, as before its throughput trials.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from linerate.errors import ConfigError, LinerateError, ParseError
from linerate.lab.signals import terminations_deferred
from linerate.search.frame_path import COUNT_TABLE, FramePath, choose_sender, link_info
from linerate.traffic import trafgen

JOURNAL_KIND = "nft-table"  # restore_journal (testbed/ssh.py) deletes such a table
# one echo request to the gateway, with whichever of the two the client has
RESOLVERS = (lambda family: ["ping", f"-{family}", "-c", "1", "-W", "1"],
             lambda family: ["fping", f"-{family}", "-c", "1", "-t", "1000", "-q"])


@dataclass(frozen=True)
class Route:
    dev: str
    gateway: str | None
    prefsrc: str | None


def parse_route(text: str) -> Route:
    """`ip -j route get ADDRESS` -> the interface, gateway (None: on-link) and source address."""
    try:
        entry = json.loads(text)[0]
        return Route(entry["dev"], entry.get("gateway"), entry.get("prefsrc"))
    except (json.JSONDecodeError, IndexError, KeyError, TypeError):
        raise ParseError(f"ip -j route get: no route in the output ({text.strip()[:120]!r})") from None


def parse_neighbour(text: str) -> str | None:
    """`ip -j neigh show to ADDRESS dev IF` -> its MAC, or None while unresolved (INCOMPLETE, FAILED)."""
    try:
        entries = json.loads(text) if text.strip() else []
    except json.JSONDecodeError:
        raise ParseError(f"ip -j neigh: not JSON ({text.strip()[:120]!r})") from None
    for entry in entries:
        if isinstance(entry, dict) and entry.get("lladdr"):
            return str(entry["lladdr"]).lower()
    return None


class TestbedPath(FramePath):
    __test__ = False  # not a pytest class
    shared_kernel = False  # the DUT is another machine

    def __init__(self, view, family: int, generator: str = "auto"):
        testbed = view.testbed
        self.view, self.testbed, self.family = view, testbed, family
        self.client, self.server = testbed.executors["client"], testbed.executors["server"]
        self.dut = testbed.executors.get("dut")
        address, field = testbed.inventory.address(family), f"server.test_address{'6' if family == 6 else ''}"
        if address is None:
            raise ConfigError(field,
                              f"the inventory's server has no IPv{family} test address; add it or search IPv"
                              f"{10 - family} only")
        for role in ("client", "server"):
            system = testbed.environment.get(role, {}).get("os")
            if system != "Linux":
                raise ConfigError(role, f"rfc2544 on a testbed finds its route with iproute2 on the client and "
                                  f"counts with nftables on the server, so both must run Linux; {role} runs "
                                  f"{system or '?'}")
        self.sender = choose_sender(self.client, generator)
        route = parse_route(self.client.run(["ip", "-j", f"-{family}", "route", "get", address], timeout_s=10).stdout)
        if route.gateway is None:
            raise ConfigError(field,
                              f"the client reaches {address} directly on {route.dev} (no gateway), so frames would "
                              "not be routed by the DUT; give the server an address behind the DUT")
        info = link_info(self.client, route.dev)
        self.device, self.mtu = route.dev, int(info["mtu"])
        self.flow = trafgen.FlowSpec(family, info["address"], self._gateway_mac(route, family),
                                     route.prefsrc or testbed.inventory.clients()["client"].test_address, address,
                                     dst_port=testbed.port)
        self.link_bps = testbed.line_rate["bps"] if testbed.line_rate else None
        self.description = view.description
        self.journal_id: int | None = None

    def _gateway_mac(self, route: Route, family: int) -> str:
        argv = ["ip", "-j", "neigh", "show", "to", route.gateway, "dev", route.dev]
        mac = parse_neighbour(self.client.run(argv, timeout_s=10).stdout)
        for probe in RESOLVERS:  # not resolved yet: one echo request to the gateway makes the client ask
            if mac is not None:
                break
            self.client.run([*probe(family), route.gateway], timeout_s=10, check=False)
            mac = parse_neighbour(self.client.run(argv, timeout_s=10).stdout)
        if mac is None:
            raise LinerateError(f"the client {self.client.host} has no MAC address for its gateway {route.gateway} "
                                f"on {route.dev}, even after pinging it: check the DUT answers there")
        return mac

    def __enter__(self) -> "TestbedPath":
        self.view.apply_knobs()
        self.journal_id = self.testbed.journal.add("server", JOURNAL_KIND, COUNT_TABLE, "", None)
        try:
            return super().__enter__()
        except BaseException:
            if not self.table_left:
                self._close_journal()  # the table was not made, or was dropped again
            raise

    def __exit__(self, *exc) -> None:
        with terminations_deferred():  # the table and its journal entry go together
            if self.drop_table():
                self._close_journal()  # else the journal keeps it for the next run or `testbed restore`

    def _close_journal(self) -> None:
        if self.journal_id is not None:
            self.testbed.journal.done(self.journal_id)
            self.journal_id = None

    def dut_counters(self) -> dict[str, int]:
        return self.view.dut_counters()
