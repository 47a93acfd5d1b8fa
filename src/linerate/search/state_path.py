"""One RFC 9693 trial through a stateful DUT: C connections opened at a rate, then validated.

Phase 1 (preliminary): the client sends C frames, each from its own source port
(traffic/tuples.py), at `rate` frames/s through the DUT to the server, which counts them (an
nftables counter in prerouting at raw priority, in a table of its own, dropped there: nothing
answers). Each frame creates one state in a stateful DUT. Phase 2 (validation): the server sends one
frame back for every connection, at the same rate (siitperf's cttc.sh: validation rate = rate x
alpha, alpha 1); the DUT passes a reply only while its connection's state exists, and the client
counts what arrives. A trial passes when all C frames reached the server, all C replies reached the
client, and the generator sent on time.

Between trials the DUT removes this client's states (DutDriver.clear_states: conntrack -D, pfctl -k),
as siitperf empties the table between trials, so each trial starts from the same table. The DUT's
state table is read before phase 1, between the phases and after phase 2 (the telemetry reports
quote: count, limit, insert failures, drops, early drops).

Subclasses (testbed/lab_path.py) set the hosts, devices, MACs and addresses and say how to clear
and read the DUT's states. The counting tables are created on entry and deleted on exit, also
after a failure; the pcap files on the client and server likewise.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from linerate.errors import LabError, LinerateError
from linerate.exec.scratch import make_temp
from linerate.lab.signals import terminations_deferred
from linerate.search.frame_path import count_ruleset, create_count_table, parse_count
from linerate.search.measurer import disturbed, unsent_frames
from linerate.traffic import trafgen, tuples

COUNT_TABLE = "linerate_rfc9693"
PACED_TOLERANCE = 0.02  # a paced send may finish 2% late (a sleep's overshoot varies) before frames count as unsent
# (search/measurer.py's unsent_frames, with this tolerance instead of a busy-waiting sender's 0.1%)
# one trafgen sleep overshoots by about this much on this kind of host (measured here: 40-45 us); the
# Pacer replaces it with what the runs measure
INITIAL_OVERSHOOT_S = 40e-6
SETTLE_S = 0.25  # after each phase, for frames still in the DUT's queues (RFC 2544 section 23's wait, shorter:
# one frame per connection, no queue builds up at a rate the DUT keeps up with)


@dataclass(frozen=True)
class StateTrial:
    purpose: str  # "rate" (the establishment-rate search), "capacity", "ceiling" (the generator alone)
    connections: int
    rate: float | None  # intended, connections/s; None: as fast as the generator can
    sent: int
    send_s: float  # phase 1's sending time (trafgen's worker)
    forwarded: int  # phase 1 frames counted at the server
    validated: int  # phase 2 replies counted at the client
    reverse_sent: int
    reverse_s: float
    unsent: int  # phase 1 frames not sent on time (the generator fell behind)
    cleared: int | None = None  # states the DUT removed before the trial (None: it could not)
    state_before: dict[str, int] = field(default_factory=dict)
    state_between: dict[str, int] = field(default_factory=dict)  # after phase 1: the table at its fullest
    state_after: dict[str, int] = field(default_factory=dict)
    dut_counters: dict[str, int] = field(default_factory=dict)  # interface counter deltas over the trial
    overshoot_s: float = 0.0  # the pacing correction the pcap was built with
    argv: tuple[str, ...] = ()
    started_at: float | None = None
    ended_at: float | None = None

    @property
    def achieved_rate(self) -> float | None:
        """Connections/s phase 1 really offered (sent over its sending time)."""
        return self.sent / self.send_s if self.send_s > 0 else None

    @property
    def lost(self) -> int:
        """Connections that did not complete: not forwarded, or forwarded but their reply not passed."""
        offered = self.connections - self.unsent
        return offered - min(self.forwarded, self.validated, offered)

    @property
    def passed(self) -> bool:
        return self.unsent == 0 and self.forwarded >= self.connections and self.validated >= self.connections

    def to_record(self) -> dict[str, Any]:
        """A search_trials row: connections as frames (store/db.py add_search_trial's columns)."""
        return {"intended_duration_s": (self.connections / self.rate) if self.rate else self.send_s,
                "intended_load_fps": self.rate, "intended_count": self.connections, "sent": self.sent,
                "forwarded": min(self.forwarded, self.validated), "dut_loss": self.lost, "unsent": self.unsent,
                "send_s": self.send_s, "dut_counters": self.dut_counters, "started_at": self.started_at,
                "ended_at": self.ended_at, "argv": list(self.argv)}

    def figures(self) -> dict[str, Any]:
        """What the row has no column for (a row of the kind's own table: store/schema.py rfc9693_trials)."""
        return {k: v for k, v in asdict(self).items()
                if k in ("forwarded", "validated", "reverse_sent", "reverse_s", "cleared", "state_before",
                         "state_between", "state_after", "overshoot_s")}

    @classmethod
    def from_stored(cls, row: Any, figures: dict[str, Any]) -> "StateTrial":
        return cls(purpose=row["purpose"], connections=row["intended_count"], rate=row["intended_load_fps"],
                   sent=row["sent"], send_s=row["send_s"], forwarded=figures["forwarded"],
                   validated=figures["validated"], reverse_sent=figures["reverse_sent"], reverse_s=figures["reverse_s"],
                   unsent=row["unsent"], cleared=figures.get("cleared"), state_before=figures.get("state_before") or {},
                   state_between=figures.get("state_between") or {}, state_after=figures.get("state_after") or {},
                   dut_counters=json.loads(row["dut_counters"] or "{}"), overshoot_s=figures.get("overshoot_s", 0.0),
                   argv=tuple(json.loads(row["argv"] or "[]")), started_at=row["started_at"], ended_at=row["ended_at"])


class StatePath:
    """Set by subclasses: client, server (executors), client_device, server_device, forward
    (tuples.TupleFlow from the client), reverse (the server's), family, description, shared_kernel."""

    client: Any
    server: Any
    client_device: str
    server_device: str
    forward: tuples.TupleFlow
    reverse: tuples.TupleFlow
    family: int
    description: str = ""
    shared_kernel: bool = False
    link_bps: float | None = None
    generator: str = "trafgen"

    def clear_states(self) -> int | None:
        raise NotImplementedError

    def state_counters(self) -> dict[str, int]:
        raise NotImplementedError

    def state_timeouts(self) -> dict[str, int]:
        raise NotImplementedError

    def dut_counters(self) -> dict[str, int]:
        raise NotImplementedError

    # --- entry and exit ------------------------------------------------------------------------------

    def __enter__(self) -> "StatePath":
        self.pacer = tuples.Pacer(INITIAL_OVERSHOOT_S)
        self._made: list[tuple[Any, str]] = []  # (host, "table") or (host, pcap path)
        version = trafgen.parse_version(self.client.run(trafgen.version_argv(), timeout_s=10, check=False).stdout)
        if version == "unknown":
            raise LabError(f"trafgen is not installed on the client {self.client.host}: rfc9693 sends with it "
                           "(Debian netsniff-ng)")
        self.generator = f"trafgen {version}"
        try:
            for host, src, direction in ((self.server, self.forward.src_ip, "to"), (self.client, self.forward.dst_ip, "from")):
                with terminations_deferred():  # made and recorded together: a signal waits, then __exit__ drops it
                    create_count_table(host, COUNT_TABLE, "rfc9693")
                    self._made.append((host, "table"))
                host.run(["nft", "-f", "-"], timeout_s=30, stdin=count_ruleset(
                    self.family, src, self.forward.port, table=COUNT_TABLE, direction=direction))
            self.client_pcap = self._temp_pcap(self.client)
            self.server_pcap = self._temp_pcap(self.server)
        except BaseException:
            self.__exit__()
            raise
        return self

    def _temp_pcap(self, host: Any) -> str:
        with terminations_deferred():  # made and recorded together (a signal waits until __exit__ can remove it)
            path = make_temp(host, "rfc9693", suffix=".pcap")  # in the run's scratch directory
            self._made.append((host, path))
        return path

    def __exit__(self, *exc) -> None:
        """Remove what this path made, newest first; a signal meanwhile waits until all of it is gone."""
        with terminations_deferred():
            made = getattr(self, "_made", [])
            while made:
                host, what = made[-1]
                if what == "table":
                    host.run(["nft", "delete", "table", "inet", COUNT_TABLE], timeout_s=30, check=False)
                else:
                    host.run(["rm", "-f", "--", what], timeout_s=10, check=False)
                made.pop()

    # --- one trial ---------------------------------------------------------------------------------

    def _count(self, host: Any) -> int:
        return parse_count(host.run(["nft", "-j", "list", "table", "inet", COUNT_TABLE], timeout_s=10).stdout)

    def _send(self, host: Any, device: str, path: str, flow: tuples.TupleFlow, count: int, rate: float | None,
              frame_bytes: int) -> tuple[trafgen.Sent, tuple[str, ...], float]:
        """Write the pcap on the host (base64 through stdin: the executor carries text) and replay it."""
        overshoot = self.pacer.overshoot_s
        data = tuples.pcap(flow, count, frame_bytes, rate, overshoot)
        host.run(["sh", "-c", 'base64 -d > "$1"', "sh", path], timeout_s=120,
                 stdin=base64.b64encode(data).decode("ascii"))
        argv = ("trafgen", "--dev", device, "--in", path, "--cpus", "1")
        seconds = count / rate if rate else count / 50_000
        result = host.run(list(argv), timeout_s=3 * seconds + 30, check=False)
        sent = trafgen.parse(result.stdout + "\n" + result.stderr)
        self.pacer.learn(count, rate, sent.cpu_s, overshoot)
        return sent, argv, overshoot

    def trial(self, purpose: str, connections: int, rate: float | None, frame_bytes: int,
              settle_s: float = SETTLE_S) -> StateTrial:
        """Clear, phase 1, read, phase 2, read. rate None: the generator's own ceiling (sent to no one:
        the frames go to an unused MAC, so the DUT does no work and nothing is validated)."""
        if rate is None:
            return self._ceiling(purpose, connections, frame_bytes)
        cleared = self.clear_states()
        started = time.time()
        fwd_before, back_before = self._count(self.server), self._count(self.client)
        state_before, counters_before = self.state_counters(), self.dut_counters()
        sent, argv, overshoot = self._send(self.client, self.client_device, self.client_pcap, self.forward, connections,
                                           rate, frame_bytes)
        time.sleep(settle_s)
        forwarded = self._count(self.server) - fwd_before
        state_between = self.state_counters()
        back, _, _ = self._send(self.server, self.server_device, self.server_pcap, self.reverse, connections, rate,
                                frame_bytes)
        time.sleep(settle_s)
        validated = self._count(self.client) - back_before
        state_after, counters_after = self.state_counters(), self.dut_counters()
        deltas = {k: counters_after[k] - counters_before[k] for k in counters_after if k in counters_before}
        if forwarded > sent.packets or validated > back.packets:
            raise LinerateError(disturbed("server", forwarded, sent.packets) if forwarded > sent.packets else
                                disturbed("client", validated, back.packets))
        unsent = unsent_frames(connections, sent, connections / rate, PACED_TOLERANCE)
        return StateTrial(purpose, connections, rate, sent.packets, sent.cpu_s, forwarded, validated, back.packets,
                          back.cpu_s, unsent, cleared, state_before, state_between, state_after, deltas, overshoot,
                          argv, started, time.time())

    def _ceiling(self, purpose: str, connections: int, frame_bytes: int) -> StateTrial:
        """The generator alone: phase 1's frames as fast as it can, to an unused MAC (the DUT does no work)."""
        started = time.time()
        nobody = tuples.TupleFlow(**{**self.forward.__dict__, "dst_mac": trafgen.NOBODY_MAC})
        sent, argv, overshoot = self._send(self.client, self.client_device, self.client_pcap, nobody, connections,
                                           None, frame_bytes)
        return StateTrial(purpose, connections, None, sent.packets, sent.cpu_s, 0, 0, 0, 0.0, 0, None,
                          overshoot_s=overshoot, argv=argv, started_at=started, ended_at=time.time())
