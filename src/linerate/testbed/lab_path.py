"""The PacketPath of a namespace or VM testbed (rfc2544): the sender in the client namespace sends
to the DUT's client-side MAC, addressed to the server's test port (the one the lab's firewall
profiles pass, as for iperf3); the server namespace counts (search/frame_path.py), the DUT's
interface counters come from its driver (Testbed.dut_counters). The counting table lives in a
namespace the lab owns, so removing the lab removes it too. LabStatePath: rfc9693's two-phase
path (search/state_path.py) through the same testbed."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Any

from linerate.lab.apply import programs_in_netns
from linerate.lab.signals import terminations_deferred

from linerate.model import pair_roles
from linerate.search.frame_path import FramePath, choose_sender, link_info
from linerate.search.measurer import SentBy
from linerate.search.state_path import StatePath
from linerate.topology.plan import ADDR, CLIENT_IF, DUT_LAN_IF, DUT_WAN_IF, SERVER_IF, server_address
from linerate.topology.pool import pair_address
from linerate.traffic import trafgen, tuples


def lab_description(lab_params: dict) -> str:
    link = lab_params.get("link_rate", "none")
    pairs, pair_link = lab_params.get("pairs", 1), lab_params.get("pair_link_rate", "none")
    pool = "" if pairs == 1 and pair_link == "none" else (
        f", {pairs} client/server pair{'s' if pairs > 1 else ''}" + (f" on {pair_link} links" if pair_link != "none"
                                                                     else ""))
    shaped = f"emulated {link} link" if link != "none" else "DUT link not emulated" if pair_link != "none" else \
        "no emulated link (theoretical rate unknown)"
    return f"{shaped}{pool}, firewall {lab_params.get('firewall', 'none')}"


class LabPath(FramePath):
    def __init__(self, testbed: Any, family: int, generator: str = "auto", pair: int = 0):
        """pair: which client/server pair of a generator pool (0: the lab's one pair)."""
        self.testbed, self.family, self.device = testbed, family, CLIENT_IF
        client, server = pair_roles(pair)
        self.client_role = client
        self.client, self.server = testbed.executor(client), testbed.executor(server)
        # the test port: the one the lab's firewall profiles pass (their pass rule names it)
        self.flow = trafgen.FlowSpec(family, link_info(self.client, CLIENT_IF)["address"],
                                     link_info(testbed.executor("dut"), testbed.dut_ifname(DUT_LAN_IF))["address"],
                                     pair_address("client", family, pair)[0], pair_address("server", family, pair)[0],
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
        if testbed.spec.pair_link is not None:
            # A pool's pair link shapes the client's own port, whose queue holds 200 ms: a second's burst would
            # overflow it, so the frames are spaced there too, and the port gets its pair link back after each send
            self.paced = True
            self.own_qdisc = tuple(tuple(argv) for argv in testbed.pair_link_argvs())
        self.description = testbed.description

    def dut_counters(self) -> dict[str, int]:
        return self.testbed.dut_counters()

    def stop_sender(self) -> None:
        """SIGKILL this pair's trafgen in its client namespace (nothing else sends frames there): the send that
        runs it returns, and puts its port back (trafgen.TrafgenSender.send's finally)."""
        for pid, program in programs_in_netns(self.testbed.spec.netns(self.client_role)):
            if program == "trafgen":
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


SENDER_STOP_S = 20  # how long an interrupted pool waits for its senders' clean-up


class PoolPath:
    """rfc2544 through a generator pool: every pair's sender sends its share of the load at once (its own
    addresses, so each server's counting table counts its own pair's flow), and the search sees the sums:
    frames sent, frames counted at every server, and the longest send."""

    def __init__(self, paths: list[LabPath]):
        self.paths = paths
        first = paths[0]
        self.family, self.mtu, self.sender, self.link_bps = first.family, first.mtu, first.sender, first.link_bps
        self.shared_kernel, self.paced = first.shared_kernel, first.paced
        self.description = first.description
        self._stack = contextlib.ExitStack()

    @property
    def generator(self) -> str:
        return f"{self.paths[0].generator} on {len(self.paths)} clients"

    def check(self, frame: Any) -> None:
        self.paths[0].check(frame)

    def default_frame_sizes(self) -> list[int]:
        return self.paths[0].default_frame_sizes()

    def __enter__(self) -> "PoolPath":
        with contextlib.ExitStack() as stack:
            for path in self.paths:
                stack.enter_context(path)
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def send(self, frame: Any, rate_pps: int | None, count: int, *, to_dut: bool = True) -> SentBy:
        counts, rates = shares(count, len(self.paths)), shares(rate_pps, len(self.paths)) if rate_pps else None
        results: list[Any] = [None] * len(self.paths)

        def send(index: int) -> None:
            try:
                results[index] = self.paths[index].send(frame, None if rates is None else max(1, rates[index]),
                                                        counts[index], to_dut=to_dut)
            except Exception as exc:  # noqa: BLE001 - raised on the caller's thread below, as it was
                results[index] = exc

        threads = [threading.Thread(target=send, args=(i,), daemon=True) for i in range(len(self.paths)) if counts[i]]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                thread.join()
        except BaseException:  # a signal: each sender's own clean-up (its port's pair link back) finishes first
            with terminations_deferred():
                for path in self.paths:
                    path.stop_sender()
                for thread in threads:
                    thread.join(SENDER_STOP_S)
            raise
        for result in results:
            if isinstance(result, Exception):
                raise result
        sent = [r for r in results if r is not None]
        return SentBy(sum(s.packets for s in sent), sum(s.bytes for s in sent), max(s.cpu_s for s in sent),
                      sent[0].argv)

    def forwarded(self) -> int:
        return sum(path.forwarded() for path in self.paths)

    def dut_counters(self) -> dict[str, int]:
        return self.paths[0].dut_counters()


def shares(total: int, parts: int) -> list[int]:
    """total split into `parts` whole shares as equal as can be (the first ones take the remainder)."""
    base, extra = divmod(total, parts)
    return [base + (1 if index < extra else 0) for index in range(parts)]


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
        return self.testbed.driver.state_counters(self.testbed.executor("dut"))

    def state_timeouts(self) -> dict[str, int]:
        return self.testbed.driver.state_timeouts(self.testbed.executor("dut"))

    def dut_counters(self) -> dict[str, int]:
        return self.testbed.dut_counters()
